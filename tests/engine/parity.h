/*
 * Reading the committed PyTorch reference vectors (tests/parity/vectors/).
 * parity_load("dense", "case1_x") reads vectors/dense/case1_x.npy or fails
 * the test naming the file.
 */
#pragma once
#include <glib.h>
#include <math.h>

#include "loom/npy.h"

static inline loom_npy parity_load(const char *family, const char *name) {
  const char *src = g_getenv("LOOM_SOURCE_DIR");
  g_assert_nonnull(src);
  char *file = g_strdup_printf("%s.npy", name);
  char *path = g_build_filename(src, "tests", "parity", "vectors", family, file, NULL);
  loom_npy a;
  loom_error err = {0};
  if (loom_npy_read(path, &a, &err) != LOOM_OK) g_error("%s", err.message);
  g_free(file);
  g_free(path);
  return a;
}

/* Asserts |a-b| <= atol + rtol·|b| elementwise, reporting the first failure. */
static inline void parity_assert_close(const char *what, const float *a, const float *b, int64_t n, double rtol,
                                       double atol) {
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (!(d <= atol + rtol * fabs((double)b[i])))
      g_error("%s: element %lld is %.9g, reference %.9g (|diff| %.3g > %.3g)", what, (long long)i, (double)a[i],
              (double)b[i], d, atol + rtol * fabs((double)b[i]));
  }
}
