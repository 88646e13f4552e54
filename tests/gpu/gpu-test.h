/*
 * Shared by the Vulkan tests: open the device or skip (no Vulkan device:
 * TAP plan "1..0 # SKIP" under --tap, else the automake code 77), buffers
 * from host arrays, and the comparison used by every parity check.
 */
#pragma once
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu-internal.h"

static inline loom_gpu *gpu_test_init(int *argc, char ***argv) {
  gboolean tap = FALSE;
  for (int i = 1; i < *argc; i++)
    if (strcmp((*argv)[i], "--tap") == 0) tap = TRUE;
  g_test_init(argc, argv, NULL);
  loom_error err = {0};
  loom_gpu *g = loom_gpu_new(-1, &err);
  if (!g) {
    if (tap) {
      printf("1..0 # SKIP no Vulkan device: %s\n", err.message);
      fflush(stdout);
      exit(0);
    }
    fprintf(stderr, "SKIP: no Vulkan device: %s\n", err.message);
    exit(77);
  }
  g_test_message("device %d: %s (%s)", loom_gpu_info(g)->index, loom_gpu_info(g)->name,
                 loom_gpu_kind_name(loom_gpu_info(g)->kind));
  return g;
}

static inline void gpu_test_buf(loom_gpu *g, gpu_buf *b, const float *values, int64_t n) {
  loom_error err = {0};
  if (gpu_buf_new(g, (size_t)(n > 0 ? n : 1) * sizeof(float), "test buffer", b, &err)) g_error("%s", err.message);
  if (values) memcpy(b->map, values, (size_t)n * sizeof(float));
}

/* Asserts |got − want| ≤ tol[i] for every i (tol NULL: exact, bit for bit),
 * naming the first failure; returns the worst |got − want| / tol. */
static inline double gpu_test_compare(const char *what, const float *got, const float *want, const double *tol,
                                      int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!tol) {
      if (memcmp(&got[i], &want[i], sizeof(float)))
        g_error("%s: entry %lld is %.9g on the device, %.9g on the CPU (expected bit-identical)", what, (long long)i,
                got[i], want[i]);
      continue;
    }
    double d = fabs((double)got[i] - (double)want[i]);
    if (!(d <= tol[i]))
      g_error("%s: entry %lld is %.9g on the device, %.9g on the CPU: |difference| %.3g exceeds the tolerance %.3g",
              what, (long long)i, got[i], want[i], d, tol[i]);
    if (tol[i] > 0 && d / tol[i] > worst) worst = d / tol[i];
  }
  return worst;
}

/* Deterministic values in [lo, hi) from a small LCG (no dependence on libc's rand). */
static inline void gpu_test_fill(float *v, int64_t n, double lo, double hi, uint64_t seed) {
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = (float)(lo + (hi - lo) * (double)(s >> 11) / 9007199254740992.0);
  }
}
