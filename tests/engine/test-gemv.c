/*
 * The packed GEMV (kernels/gemv.h) at every dtype and kernel level: every
 * level gives the reference level's bits (the same fixed order of fused
 * multiply-adds), any thread count gives the same bits, and the result is the
 * dot product of the dequantized weights within float32 summation error:
 *
 *   |y − y_exact| ≤ (cols / 64 + 8) · 2^-24 · Σ_c |W[r,c] · x[c]|  (+ 2^-140)
 *
 * for every dtype alike (the weights enter exactly as dequantize gives them;
 * each of the 64 lanes sums about cols / 64 fused terms, then 6 tree levels).
 * Shapes are odd: 1, 3, 17 rows; 1, 3, 17, 63, 64, 65, 511, 512, 513, 4095
 * columns (partial lanes, partial blocks, partial bytes).
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/gemv.h"
#include "loom/loom.h"
#include "test-levels.h"

static const int64_t row_counts[] = {1, 3, 17};
static const int64_t col_counts[] = {1, 3, 17, 63, 64, 65, 511, 512, 513, 4095};

static uint32_t xorshift(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (uint32_t)(*s >> 32);
}

static float uniform(uint64_t *s) { return (float)((double)xorshift(s) / 4294967296.0 * 2.0 - 1.0); }

static void check_shape(loom_dtype d, int64_t rows, int64_t cols, bool per_tensor, loom_pool **pools, int npools,
                        uint64_t *seed) {
  float *w = g_new(float, rows * cols), *x = g_new(float, cols), *deq = g_new(float, rows * cols);
  for (int64_t i = 0; i < rows * cols; i++) w[i] = uniform(seed) * (1.0f + (float)(i % 7));
  for (int64_t i = 0; i < cols; i++) x[i] = uniform(seed);
  const int64_t nscales = loom_dtype_traits_get(d)->scaled ? (per_tensor ? 1 : rows) : 0;
  float *scales = g_new0(float, rows);
  for (int64_t r = 0; r < nscales; r++)
    scales[r] = loom_dtype_compute_scale(d, per_tensor ? w : w + r * cols, per_tensor ? rows * cols : cols);
  size_t nbytes;
  g_assert_cmpint(loom_dtype_packed_bytes(d, rows, cols, &nbytes, NULL), ==, 0);
  uint8_t *packed = g_malloc(nbytes + 1);
  g_assert_cmpint(loom_dtype_quantize(d, w, rows, cols, scales, nscales, packed, NULL), ==, 0);
  g_assert_cmpint(loom_dtype_dequantize(d, packed, rows, cols, scales, nscales, deq, NULL), ==, 0);

  float *ref = g_new(float, rows), *y = g_new(float, rows);
  g_assert_true(loom_kernels_force(LOOM_KERNELS_REF));
  g_assert_cmpint(loom_gemv_packed(NULL, d, packed, rows, cols, scales, nscales, x, ref, NULL), ==, 0);
  for (int64_t r = 0; r < rows; r++) {
    double exact = 0, mag = 0;
    for (int64_t c = 0; c < cols; c++) {
      exact += (double)deq[r * cols + c] * (double)x[c];
      mag += fabs((double)deq[r * cols + c] * (double)x[c]);
    }
    const double tol = ((double)cols / 64 + 8) * 0x1p-24 * mag + 0x1p-140;
    if (!(fabs((double)ref[r] - exact) <= tol))
      g_error("%s %lld×%lld row %lld: %.9g, exact %.9g, tolerance %.3g", loom_dtype_name(d), (long long)rows,
              (long long)cols, (long long)r, (double)ref[r], exact, tol);
  }
  for (int l = 0; l <= test_top_level(); l++) {
    g_assert_true(loom_kernels_force((loom_kernel_level)l));
    for (int p = 0; p < npools; p++) {
      memset(y, 0xff, (size_t)rows * sizeof *y);
      g_assert_cmpint(loom_gemv_packed(pools[p], d, packed, rows, cols, scales, nscales, x, y, NULL), ==, 0);
      if (memcmp(y, ref, (size_t)rows * sizeof *y) != 0)
        g_error("%s %lld×%lld at level %s, %d threads: not the reference's bits", loom_dtype_name(d),
                (long long)rows, (long long)cols, loom_kernel_level_name(l), pools[p] ? loom_pool_size(pools[p]) : 1);
    }
  }
  g_free(w);
  g_free(x);
  g_free(deq);
  g_free(scales);
  g_free(packed);
  g_free(ref);
  g_free(y);
}

static void test_every_dtype(void) {
  loom_pool *pools[3] = {NULL, loom_pool_new(2, NULL), loom_pool_new(7, NULL)};
  g_assert_nonnull(pools[1]);
  g_assert_nonnull(pools[2]);
  const loom_kernel_level was = loom_kernels_get()->level;
  uint64_t seed = 424242;
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++)
    for (size_t ri = 0; ri < G_N_ELEMENTS(row_counts); ri++)
      for (size_t ci = 0; ci < G_N_ELEMENTS(col_counts); ci++)
        check_shape((loom_dtype)d, row_counts[ri], col_counts[ci], ci % 3 == 1, pools, 3, &seed);
  /* Many rows: the ranges the pool splits into must not matter either. */
  check_shape(LOOM_DTYPE_INT4, 300, 100, false, pools, 3, &seed);
  check_shape(LOOM_DTYPE_FP8_E4M3, 257, 1030, false, pools, 3, &seed);
  g_assert_true(loom_kernels_force(was));
  loom_pool_free(pools[1]);
  loom_pool_free(pools[2]);
}

/* NaN and infinite codes of the float formats, one a row (two NaNs in one
 * sum would leave the choice of their payloads to the order of the
 * operands, which the levels need not share): every level gives the
 * reference's bits. The vector levels decode float16 without restoring a
 * signalling NaN's quiet bit (gemv-simd.h): the fused multiply-add quiets
 * it anyway, keeping its sign and payload. */
static void test_specials(void) {
  static const struct {
    loom_dtype d;
    uint16_t codes[6];
  } cases[] = {
    {LOOM_DTYPE_FLOAT16, {0x7c01, 0xfd55, 0x7e2a, 0x7c00, 0xfc00, 0x7d00}},
    {LOOM_DTYPE_BFLOAT16, {0x7f81, 0xffd5, 0x7fc3, 0x7f80, 0xff80, 0x7fa0}},
    {LOOM_DTYPE_FP8_E5M2, {0x7d, 0xfe, 0x7f, 0x7c, 0xfc, 0x7d}},
    {LOOM_DTYPE_FP8_E4M3, {0x7f, 0xff, 0x7f, 0xff, 0x7f, 0xff}},
  };
  enum { ROWS = 8, COLS = 200 };
  loom_pool *pool = loom_pool_new(2, NULL);
  g_assert_nonnull(pool);
  const loom_kernel_level was = loom_kernels_get()->level;
  uint64_t seed = 77;
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    const loom_dtype d = cases[i].d;
    const int bytes = loom_dtype_traits_get(d)->bits / 8;
    float w[ROWS * COLS], x[COLS], ref[ROWS], y[ROWS];
    for (int k = 0; k < ROWS * COLS; k++) w[k] = uniform(&seed);
    for (int k = 0; k < COLS; k++) x[k] = uniform(&seed);
    uint8_t packed[ROWS * COLS * 2];
    g_assert_cmpint(loom_dtype_quantize(d, w, ROWS, COLS, NULL, 0, packed, NULL), ==, 0);
    for (int r = 0; r < 6; r++) { /* row 6: a signalling NaN times 0; row 7: finite */
      const int c = (37 * r + 11) % COLS;
      const uint16_t code = cases[i].codes[r];
      memcpy(packed + (size_t)(r * COLS + c) * (size_t)bytes, &code, (size_t)bytes); /* little-endian */
    }
    memcpy(packed + (size_t)(6 * COLS + 5) * (size_t)bytes, &cases[i].codes[0], (size_t)bytes);
    x[5] = 0.0f;
    g_assert_true(loom_kernels_force(LOOM_KERNELS_REF));
    g_assert_cmpint(loom_gemv_packed(NULL, d, packed, ROWS, COLS, NULL, 0, x, ref, NULL), ==, 0);
    for (int r = 0; r < 7; r++)
      if (!isnan(ref[r]) && !isinf(ref[r]))
        g_error("%s row %d: %g, expected a NaN or an infinity", loom_dtype_name(d), r, (double)ref[r]);
    for (int l = 0; l <= test_top_level(); l++) {
      g_assert_true(loom_kernels_force((loom_kernel_level)l));
      for (int p = 0; p < 2; p++) {
        memset(y, 0, sizeof y);
        g_assert_cmpint(loom_gemv_packed(p ? pool : NULL, d, packed, ROWS, COLS, NULL, 0, x, y, NULL), ==, 0);
        for (int r = 0; r < ROWS; r++) {
          uint32_t a, b;
          memcpy(&a, &y[r], 4);
          memcpy(&b, &ref[r], 4);
          if (a != b)
            g_error("%s row %d at level %s: %08x, the reference %08x", loom_dtype_name(d), r,
                    loom_kernel_level_name(l), a, b);
        }
      }
    }
  }
  g_assert_true(loom_kernels_force(was));
  loom_pool_free(pool);
}

/* fp8-e4m3's fused GEMV multiplies 256 · x (cpu.h): with activations above
 * 2^120, where that would overflow, gemv.c decodes a block at a time, and
 * every level keeps the reference's bits, one vector or three at once. */
static void test_e4m3_large_activations(void) {
  enum { ROWS = 5, COLS = 300, M = 3 };
  const loom_dtype d = LOOM_DTYPE_FP8_E4M3;
  loom_pool *pool = loom_pool_new(2, NULL);
  g_assert_nonnull(pool);
  const loom_kernel_level was = loom_kernels_get()->level;
  uint64_t seed = 99;
  float w[ROWS * COLS], x[M * COLS], ref[M * ROWS], y[M * ROWS];
  uint8_t packed[ROWS * COLS];
  for (int k = 0; k < ROWS * COLS; k++) w[k] = uniform(&seed) * 4.0f;
  g_assert_cmpint(loom_dtype_quantize(d, w, ROWS, COLS, NULL, 0, packed, NULL), ==, 0);
  for (int large = 0; large < 2; large++) {
    for (int k = 0; k < M * COLS; k++) x[k] = uniform(&seed);
    if (large) {
      x[7] = 0x1.8p121f; /* 256 · x is infinite; w · x is not */
      x[COLS + 100] = -0x1p122f;
      x[2 * COLS + 299] = 0x1p124f;
    }
    g_assert_true(loom_kernels_force(LOOM_KERNELS_REF));
    g_assert_cmpint(loom_gemv_packed_batch(NULL, d, packed, ROWS, COLS, NULL, 0, M, x, ref, NULL), ==, 0);
    for (int i = 0; i < M * ROWS; i++) g_assert_true(isfinite(ref[i]));
    for (int l = 0; l <= test_top_level(); l++) {
      g_assert_true(loom_kernels_force((loom_kernel_level)l));
      for (int p = 0; p < 2; p++) {
        memset(y, 0, sizeof y);
        g_assert_cmpint(loom_gemv_packed_batch(p ? pool : NULL, d, packed, ROWS, COLS, NULL, 0, M, x, y, NULL), ==, 0);
        if (memcmp(y, ref, sizeof y) != 0)
          g_error("fp8-e4m3 %s activations at level %s: not the reference's bits", large ? "large" : "plain",
                  loom_kernel_level_name(l));
        memset(y, 0, sizeof y);
        g_assert_cmpint(loom_gemv_packed(p ? pool : NULL, d, packed, ROWS, COLS, NULL, 0, x, y, NULL), ==, 0);
        if (memcmp(y, ref, ROWS * sizeof *y) != 0)
          g_error("fp8-e4m3 %s activations, one vector, at level %s: not the reference's bits",
                  large ? "large" : "plain", loom_kernel_level_name(l));
      }
    }
  }
  g_assert_true(loom_kernels_force(was));
  loom_pool_free(pool);
}

/* Several activation vectors (loom_gemv_packed_batch): each output vector
 * gets the bits of loom_gemv_packed on its vector alone, at every dtype and
 * level, for 2, 3, 5 and 7 vectors (groups of 3 and their rest), rows in
 * a group of 4 and a rest, columns with a partial group of 64. */
static void test_batch(void) {
  loom_pool *pool = loom_pool_new(3, NULL);
  g_assert_nonnull(pool);
  const loom_kernel_level was = loom_kernels_get()->level;
  uint64_t seed = 77;
  const int64_t rows = 9, cols = 577, ms[] = {2, 3, 5, 7};
  float *w = g_new(float, rows * cols), *x = g_new(float, 7 * cols), *y = g_new(float, 7 * rows);
  float *alone = g_new(float, rows), *scales = g_new(float, rows);
  for (int64_t i = 0; i < rows * cols; i++) w[i] = uniform(&seed) * (1.0f + (float)(i % 5));
  for (int64_t i = 0; i < 7 * cols; i++) x[i] = uniform(&seed);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const int64_t nscales = loom_dtype_traits_get((loom_dtype)d)->scaled ? rows : 0;
    for (int64_t r = 0; r < nscales; r++) scales[r] = loom_dtype_compute_scale((loom_dtype)d, w + r * cols, cols);
    size_t nbytes;
    g_assert_cmpint(loom_dtype_packed_bytes((loom_dtype)d, rows, cols, &nbytes, NULL), ==, 0);
    uint8_t *packed = g_malloc(nbytes + 1);
    g_assert_cmpint(loom_dtype_quantize((loom_dtype)d, w, rows, cols, scales, nscales, packed, NULL), ==, 0);
    for (int l = 0; l <= test_top_level(); l++) {
      g_assert_true(loom_kernels_force((loom_kernel_level)l));
      for (size_t mi = 0; mi < G_N_ELEMENTS(ms); mi++) {
        memset(y, 0xff, (size_t)(7 * rows) * sizeof *y);
        g_assert_cmpint(loom_gemv_packed_batch(mi % 2 ? pool : NULL, (loom_dtype)d, packed, rows, cols, scales,
                                               nscales, ms[mi], x, y, NULL), ==, 0);
        for (int64_t k = 0; k < ms[mi]; k++) {
          g_assert_cmpint(loom_gemv_packed(NULL, (loom_dtype)d, packed, rows, cols, scales, nscales, x + k * cols,
                                           alone, NULL), ==, 0);
          if (memcmp(y + k * rows, alone, (size_t)rows * sizeof *y) != 0)
            g_error("%s at level %s, %lld vectors: vector %lld differs from the GEMV of it alone",
                    loom_dtype_name((loom_dtype)d), loom_kernel_level_name(l), (long long)ms[mi], (long long)k);
        }
      }
    }
    g_free(packed);
  }
  g_assert_true(loom_kernels_force(was));
  g_free(w), g_free(x), g_free(y), g_free(alone), g_free(scales);
  loom_pool_free(pool);
}

static void test_errors(void) {
  loom_error err;
  float x[4] = {0}, y[2], s[2] = {1, 1};
  uint8_t p[8] = {0};
  g_assert_cmpint(loom_gemv_packed(NULL, LOOM_DTYPE_COUNT, p, 2, 4, NULL, 0, x, y, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpint(loom_gemv_packed(NULL, LOOM_DTYPE_INT8, p, 2, 4, s, 3, x, y, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "int8 needs 2 scales (one per row) or 1, got 3");
  g_assert_cmpint(loom_gemv_packed(NULL, LOOM_DTYPE_FP8_E4M3, p, 2, 4, s, 2, x, y, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpint(loom_gemv_packed(NULL, LOOM_DTYPE_INT4, p, -1, 4, s, 1, x, y, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpint(loom_gemv_packed_batch(NULL, LOOM_DTYPE_INT4, p, 2, 4, s, 1, -1, x, y, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "invalid shape -1 × 4");
  g_assert_cmpint(loom_gemv_packed_batch(NULL, LOOM_DTYPE_INT4, p, 2, 4, s, 1, 0, x, y, &err), ==, 0);
  g_assert_cmpint(loom_gemv_packed(NULL, LOOM_DTYPE_INT4, p, 2, 4, s, 1, x, y, &err), ==, 0);
  g_assert_cmpfloat(y[0], ==, 0);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/gemv/batch", test_batch);
  g_test_add_func("/gemv/every-dtype", test_every_dtype);
  g_test_add_func("/gemv/errors", test_errors);
  g_test_add_func("/gemv/specials", test_specials);
  g_test_add_func("/gemv/e4m3-large-activations", test_e4m3_large_activations);
  return g_test_run();
}
