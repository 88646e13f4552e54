/*
 * Reading the committed PyTorch reference vectors (tests/parity/vectors/).
 * parity_load("dense", "case1_x") reads vectors/dense/case1_x.npy or fails
 * the test naming the file.
 *
 * Every comparison with a reference goes through parity_assert_matches():
 *
 *     |got − ref| ≤ PARITY_RTOL·|ref| + PARITY_ATOL_SCALE·max|ref|
 *
 * The references are computed in float64 and stored as float32; our float32
 * results carry 2⁻²⁴ relative rounding per operation, so a result of a
 * reduction over k terms is off by about k·2⁻²⁴ of the largest terms — of the
 * order of the largest value of the array, not of the entry itself, which may
 * be a near-cancellation. Hence a relative term of 1e-5 (the specification
 * for float32) and an absolute term scaled to the array's magnitude
 * (1e-6·max|ref|, i.e. ~16 ulp of the largest value). Results that are
 * computed in float64 and rounded once (activations, schedules) may be held
 * tighter with parity_assert_matches_tol(); never looser.
 */
#pragma once
#include <glib.h>
#include <math.h>

#include "loom/npy.h"
#include "loom/schedule.h"

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

/* Asserts |a-b| <= atol + rtol·|b| elementwise, reporting the first failure.
 * For comparing two of our own float32 computations (e.g. two kernels with
 * different summation orders); a PyTorch reference uses
 * parity_assert_matches(). */
static inline void parity_assert_close(const char *what, const float *a, const float *b, int64_t n, double rtol,
                                       double atol) {
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)a[i] - (double)b[i]);
    if (!(d <= atol + rtol * fabs((double)b[i])))
      g_error("%s: element %lld is %.9g, reference %.9g (|diff| %.3g > %.3g)", what, (long long)i, (double)a[i],
              (double)b[i], d, atol + rtol * fabs((double)b[i]));
  }
}

#define PARITY_RTOL 1e-5
#define PARITY_ATOL_SCALE 1e-6

static inline double parity_max_abs(const float *ref, int64_t n) {
  double m = 0.0;
  for (int64_t i = 0; i < n; i++)
    if (fabs((double)ref[i]) > m) m = fabs((double)ref[i]);
  return m;
}

/* Asserts |got − ref| ≤ rtol·|ref| + atol_scale·max|ref| elementwise. */
static inline void parity_assert_matches_tol(const char *what, const float *got, const float *ref, int64_t n,
                                             double rtol, double atol_scale) {
  g_assert_true(rtol <= PARITY_RTOL && atol_scale <= PARITY_ATOL_SCALE);
  double max_ref = parity_max_abs(ref, n), atol = atol_scale * max_ref;
  for (int64_t i = 0; i < n; i++) {
    double d = fabs((double)got[i] - (double)ref[i]);
    double allowed = atol + rtol * fabs((double)ref[i]);
    if (!(d <= allowed))
      g_error("%s: element %lld is %.9g, reference %.9g (|diff| %.3g > %.3g = %.0e·|ref| + %.0e·max|ref| %.3g)", what,
              (long long)i, (double)got[i], (double)ref[i], d, allowed, rtol, atol_scale, max_ref);
  }
}

/* The parity criterion of every PyTorch comparison (see the top). */
static inline void parity_assert_matches(const char *what, const float *got, const float *ref, int64_t n) {
  parity_assert_matches_tol(what, got, ref, n, PARITY_RTOL, PARITY_ATOL_SCALE);
}

/* The stored configs are float32; printing with 7 digits and reading back
 * recovers the decimal torch was given (0.999, 1e-08). */
static inline double parity_decimal(float v) {
  char buf[32];
  g_snprintf(buf, sizeof buf, "%.7g", (double)v);
  return g_ascii_strtod(buf, NULL);
}

/* The schedule of a stored sched_*_config (9 values: kind, base rate,
 * step_size, gamma, t_0, t_mult, eta_min, warmup steps and start factor),
 * with the base rate given. */
static inline loom_schedule parity_schedule(const float *v, double base_lr) {
  return (loom_schedule){
    .kind = (loom_schedule_kind)v[0],
    .base_lr = base_lr,
    .step_size = (int64_t)v[2],
    .gamma = parity_decimal(v[3]),
    .t_0 = (int64_t)v[4],
    .t_mult = (int64_t)v[5],
    .eta_min = parity_decimal(v[6]),
    .warmup_steps = (int64_t)v[7],
    .warmup_start_factor = parity_decimal(v[8]),
  };
}
