/*
 * The weight store: float32 master, one cached packed copy, invalidation,
 * dequantized effective values, exact byte accounting, non-finite reports
 * with the layer's label, and loading packed data from a model file.
 */
#include <float.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "core/dtype-internal.h"
#include "core/weights-internal.h"
#include "loom/pool.h"
#include "kernels/cpu.h"
#include "loom/loom.h"
#include "test-levels.h"

static loom_weights *random_weights(int64_t rows, int64_t cols, guint32 seed) {
  loom_weights *w = loom_weights_new(rows, cols, NULL);
  g_assert_nonnull(w);
  GRand *rng = g_rand_new_with_seed(seed);
  float *m = loom_weights_master(w);
  for (int64_t i = 0; i < rows * cols; i++) m[i] = (float)g_rand_double_range(rng, -1, 1) * (float)(1 + i / cols);
  loom_weights_touch(w);
  g_rand_free(rng);
  return w;
}

static void test_new_and_sizes(void) {
  loom_error err;
  loom_weights *w = loom_weights_new(3, 5, &err);
  g_assert_nonnull(w);
  g_assert_cmpint(loom_weights_rows(w), ==, 3);
  g_assert_cmpint(loom_weights_cols(w), ==, 5);
  g_assert_cmpint(loom_weights_count(w), ==, 15);
  g_assert_cmpint(loom_weights_dtype(w), ==, LOOM_DTYPE_FLOAT32);
  g_assert_cmpint(loom_weights_scale_mode(w), ==, LOOM_SCALE_PER_ROW);
  for (int i = 0; i < 15; i++) g_assert_cmpfloat(loom_weights_master_const(w)[i], ==, 0);
  g_assert_cmpuint(loom_weights_bytes(w), ==, 60);
  loom_weights_free(w);

  g_assert_null(loom_weights_new(0, 5, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "invalid weight shape 0 × 5");
  /* Absurd sizes are refused before anything is allocated. */
  g_assert_null(loom_weights_new(INT64_MAX, 2, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_NOMEM);
  g_assert_cmpstr(err.message, ==, "weights of 9223372036854775807 × 2 values are too large");
  g_assert_null(loom_weights_new(1 << 30, 1 << 30, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_NOMEM);
  /* Sizes that overcommit would hand out lazily are refused by the limit. */
  g_assert_null(loom_weights_new(1 << 20, (1 << 10) + 1, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_NOMEM);
  g_assert_cmpstr(err.message, ==,
                  "weights of 1048576 × 1025 values exceed the limit of 1073741824 values per tensor");
}

static void test_byte_accounting(void) {
  loom_weights *w = random_weights(3, 5, 1);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    for (int mode = 0; mode < 2; mode++) {
      const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
      g_assert_cmpint(loom_weights_set_dtype(w, (loom_dtype)d, NULL), ==, 0);
      g_assert_cmpint(loom_weights_set_scale_mode(w, (loom_scale_mode)mode, NULL), ==, 0);
      g_assert_cmpint(loom_weights_morph(w, NULL), ==, 0);
      size_t nbytes;
      int64_t nscales;
      g_assert_nonnull(loom_weights_packed(w, &nbytes));
      const float *scales = loom_weights_scales(w, &nscales);
      /* Rows padded separately; 4 bytes a scale. */
      const size_t expect_packed = 3 * (((size_t)5 * (size_t)t->bits + 7) / 8);
      const int64_t expect_scales = t->scaled ? (mode ? 1 : 3) : 0;
      g_assert_cmpuint(nbytes, ==, expect_packed);
      g_assert_cmpint(nscales, ==, expect_scales);
      g_assert_true((scales != NULL) == t->scaled);
      const size_t total = expect_packed + 4 * (size_t)expect_scales;
      g_assert_cmpuint(loom_weights_bytes(w), ==, total);
      g_assert_cmpuint(loom_weights_bytes_at(w, (loom_dtype)d), ==, total);
      /* What the store says is what it allocated. */
      g_assert_cmpuint(loom_weights_allocated_cache_bytes(w), ==, total);
    }
  }
  /* Concrete numbers: int4 3×5 per row = 3·3 + 3·4 = 21; binary per tensor = 3 + 4. */
  g_assert_cmpint(loom_weights_set_scale_mode(w, LOOM_SCALE_PER_ROW, NULL), ==, 0);
  g_assert_cmpuint(loom_weights_bytes_at(w, LOOM_DTYPE_INT4), ==, 21);
  g_assert_cmpuint(loom_weights_bytes_at(w, LOOM_DTYPE_FLOAT64), ==, 120);
  g_assert_cmpint(loom_weights_set_scale_mode(w, LOOM_SCALE_PER_TENSOR, NULL), ==, 0);
  g_assert_cmpuint(loom_weights_bytes_at(w, LOOM_DTYPE_BINARY), ==, 7);
  loom_weights_free(w);
}

static void test_cache_and_touch(void) {
  loom_weights *w = random_weights(4, 9, 2);
  g_assert_cmpint(loom_weights_set_dtype(w, LOOM_DTYPE_INT8, NULL), ==, 0);
  g_assert_null(loom_weights_packed(w, NULL)); /* stale until morph */
  const float *eff = loom_weights_effective(w, NULL);
  g_assert_nonnull(eff);
  size_t nbytes;
  const uint8_t *p = loom_weights_packed(w, &nbytes);
  g_assert_nonnull(p);
  uint8_t before[64];
  memcpy(before, p, nbytes);
  /* Effective = dequantize(packed, scales), row by row. */
  int64_t ns;
  const float *sc = loom_weights_scales(w, &ns);
  g_assert_cmpint(ns, ==, 4);
  for (int64_t r = 0; r < 4; r++) {
    g_assert_cmpfloat(sc[r], ==, loom_dtype_compute_scale(LOOM_DTYPE_INT8, loom_weights_master_const(w) + r * 9, 9));
    for (int64_t c = 0; c < 9; c++)
      g_assert_cmpfloat(eff[r * 9 + c], ==, (float)loom_dtype_decode(LOOM_DTYPE_INT8, p[r * 9 + c], sc[r]));
  }
  /* Cached: morph again is a no-op, even if the master was written without touch. */
  float *m = loom_weights_master(w);
  m[0] = 100.0f;
  g_assert_cmpint(loom_weights_morph(w, NULL), ==, 0);
  g_assert_true(loom_weights_effective(w, NULL) == eff);
  g_assert_cmpmem(loom_weights_packed(w, NULL), nbytes, before, nbytes);
  /* touch invalidates: the new value is the row's max, code 127. */
  loom_weights_touch(w);
  g_assert_null(loom_weights_packed(w, NULL));
  g_assert_null(loom_weights_scales(w, &ns));
  g_assert_cmpint(ns, ==, 0);
  eff = loom_weights_effective(w, NULL);
  g_assert_cmphex(loom_weights_packed(w, NULL)[0], ==, 0x7f);
  g_assert_cmpfloat(eff[0], ==, 100.0f);
  /* float32 and float64 compute with the master itself. */
  g_assert_cmpint(loom_weights_set_dtype(w, LOOM_DTYPE_FLOAT64, NULL), ==, 0);
  g_assert_true(loom_weights_effective(w, NULL) == loom_weights_master_const(w));
  g_assert_cmpint(loom_weights_set_dtype(w, LOOM_DTYPE_FLOAT32, NULL), ==, 0);
  g_assert_true(loom_weights_effective(w, NULL) == loom_weights_master_const(w));
  g_assert_true((const float *)(const void *)loom_weights_packed(w, &nbytes) == loom_weights_master_const(w));
  g_assert_cmpuint(nbytes, ==, 36 * 4);
  /* Switching the scale mode rebuilds with one scale. */
  g_assert_cmpint(loom_weights_set_dtype(w, LOOM_DTYPE_UINT4, NULL), ==, 0);
  g_assert_cmpint(loom_weights_set_scale_mode(w, LOOM_SCALE_PER_TENSOR, NULL), ==, 0);
  g_assert_nonnull(loom_weights_effective(w, NULL));
  sc = loom_weights_scales(w, &ns);
  g_assert_cmpint(ns, ==, 1);
  g_assert_cmpfloat(sc[0], ==, 100.0f / 15);
  loom_error err;
  g_assert_cmpint(loom_weights_set_dtype(w, LOOM_DTYPE_COUNT, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "weights: invalid dtype 21");
  g_assert_cmpint(loom_weights_set_scale_mode(w, (loom_scale_mode)2, &err), ==, LOOM_ERR_INVALID);
  loom_weights_free(w);
}

static void test_nonfinite(void) {
  loom_weights *w = random_weights(3, 4, 3);
  loom_weights_set_label(w, "layer (0,1,2,0) weight");
  g_assert_cmpstr(loom_weights_label(w), ==, "layer (0,1,2,0) weight");
  loom_weights_master(w)[1 * 4 + 2] = NAN;
  loom_weights_touch(w);
  const loom_dtype dts[] = {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT64, LOOM_DTYPE_FP4, LOOM_DTYPE_FP8_E4M3,
                            LOOM_DTYPE_INT8};
  for (size_t k = 0; k < G_N_ELEMENTS(dts); k++) {
    loom_error err = {0};
    g_assert_cmpint(loom_weights_set_dtype(w, dts[k], NULL), ==, 0);
    g_assert_null(loom_weights_effective(w, &err));
    g_assert_cmpint(err.code, ==, LOOM_ERR_NONFINITE);
    g_assert_cmpstr(err.message, ==, "layer (0,1,2,0) weight: weight at row 1, column 2 is NaN");
    g_assert_cmpint(loom_weights_morph(w, NULL), ==, LOOM_ERR_NONFINITE);
    g_assert_null(loom_weights_packed(w, NULL));
  }
  loom_weights_master(w)[1 * 4 + 2] = 0;
  loom_weights_master(w)[2 * 4 + 3] = -INFINITY;
  loom_weights_touch(w);
  loom_error err;
  g_assert_cmpint(loom_weights_morph(w, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "layer (0,1,2,0) weight: weight at row 2, column 3 is -inf");
  loom_weights_master(w)[2 * 4 + 3] = 1;
  loom_weights_touch(w);
  g_assert_nonnull(loom_weights_effective(w, &err));
  loom_weights_free(w);
}

/* loom_weights_touch_finite (the trainer's, after its own pass over the
 * updated masters): the float32 morph takes the writer's word and skips its
 * check; a later plain touch brings the check back; rows scaled one by one
 * are still checked as they are encoded. */
static void test_touch_finite(void) {
  loom_weights *w = random_weights(3, 4, 5);
  loom_weights_set_label(w, "w");
  loom_error err = {0};
  loom_weights_touch_finite(w);
  g_assert_cmpint(loom_weights_morph(w, &err), ==, 0);
  /* a writer that broke its word: the morph does not look (that is the point) */
  loom_weights_master(w)[1 * 4 + 2] = INFINITY;
  loom_weights_touch_finite(w);
  g_assert_cmpint(loom_weights_morph(w, &err), ==, 0);
  loom_weights_touch(w);
  g_assert_cmpint(loom_weights_morph(w, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "w: weight at row 1, column 2 is +inf");
  g_assert_cmpint(loom_weights_set_dtype(w, LOOM_DTYPE_INT8, NULL), ==, 0);
  loom_weights_touch_finite(w);
  g_assert_cmpint(loom_weights_morph(w, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "w: weight at row 1, column 2 is +inf");
  loom_weights_free(w);
}

/* A value placed in the master and the report the morph must give for it. */
typedef struct {
  int64_t at;
  float v;
  const char *message;
} bad_value;

/* w labelled as the messages below expect, set to dtype d and morphed at
 * the reference level, whose bytes the tests hold every level to (the
 * reference level stays forced: each test goes through the levels next). */
static void morph_at_reference(loom_weights *w, loom_dtype d) {
  loom_weights_set_label(w, "layer (0,0,0,0) weight");
  g_assert_cmpint(loom_weights_set_dtype(w, d, NULL), ==, 0);
  g_assert_true(loom_kernels_force(LOOM_KERNELS_REF));
  g_assert_cmpint(loom_weights_morph(w, NULL), ==, 0);
}

/* Each bad value in turn: the morph fails with its message and leaves no
 * packed copy; the master is put back after each. */
static void assert_morph_reports(loom_weights *w, const bad_value *bad, gsize n) {
  float *m = loom_weights_master(w);
  for (gsize k = 0; k < n; k++) {
    const float keep = m[bad[k].at];
    m[bad[k].at] = bad[k].v;
    loom_weights_touch(w);
    loom_error err = {0};
    g_assert_cmpint(loom_weights_morph(w, &err), ==, LOOM_ERR_NONFINITE);
    g_assert_cmpstr(err.message, ==, bad[k].message);
    g_assert_null(loom_weights_packed(w, NULL));
    m[bad[k].at] = keep;
  }
  loom_weights_touch(w);
}

/* A float64, int64, uint64, int32 or uint32 store whose packed copy is
 * beyond the caches (16 MiB: cpu.h, LOOM_STREAM_MIN_BYTES) is morphed
 * through non-temporal stores where the level can (float64's
 * quantize_row_finite_stream, the wide integers' quantize_row_scan_stream): at every level the
 * reference's bytes and scales, on one thread and on a pool of 2 (each
 * range fences its own stores), and a NaN or infinity reported as the
 * whole-row check does. Rows of 1023 values, so most rows start off a
 * 64-byte boundary (the values before it stored apart, the next row's scan
 * then at an index of its own). */
static void test_wide_beyond_caches(void) {
  /* rows 1023 codes apart: every place in a line a code can start at */
  const int64_t cols = 1023;
  const loom_dtype dts[] = {LOOM_DTYPE_FLOAT64, LOOM_DTYPE_INT64, LOOM_DTYPE_UINT64, LOOM_DTYPE_INT32,
                            LOOM_DTYPE_UINT32};
  loom_pool *pool = loom_pool_new(2, NULL);
  g_assert_nonnull(pool);
  for (gsize d = 0; d < G_N_ELEMENTS(dts); d++) {
    const int64_t code_bytes = loom_dtype_traits_get(dts[d])->bits / 8;
    const int64_t rows = ((int64_t)16 << 20) / (cols * code_bytes) + 3;
    char *nan_text = g_strdup_printf("layer (0,0,0,0) weight: weight at row %lld, column 1022 is NaN",
                                     (long long)(rows - 1));
    const bad_value bad[] = {
        {(rows - 1) * cols + 1022, NAN, nan_text},
        {7 * cols + 3, -INFINITY, "layer (0,0,0,0) weight: weight at row 7, column 3 is -inf"},
    };
    loom_weights *w = random_weights(rows, cols, 31);
    morph_at_reference(w, dts[d]);
    size_t nbytes;
    int64_t ns = 0;
    g_autofree uint8_t *ref = g_memdup2(loom_weights_packed(w, &nbytes), rows * cols * code_bytes);
    const float *sc = loom_weights_scales(w, &ns);
    g_autofree float *ref_scales = ns ? g_memdup2(sc, (gsize)ns * sizeof *sc) : NULL;
    g_assert_cmpuint(nbytes, ==, (size_t)(rows * cols * code_bytes));
    g_assert_cmpuint(nbytes, >=, (size_t)16 << 20);
    bool streamed = false;
    for (int level = 0; level <= test_top_level(); level++) {
      if (!loom_kernels_force((loom_kernel_level)level)) continue;
      const loom_kernels *k = loom_kernels_get();
      streamed |= dts[d] == LOOM_DTYPE_FLOAT64 ? k->quantize_row_finite_stream[dts[d]] != NULL
                                               : k->quantize_row_scan_stream[dts[d]] != NULL;
      for (int on_pool = 0; on_pool < 2; on_pool++) {
        loom_weights_touch(w);
        g_assert_cmpint(on_pool ? loom_weights_morph_on(w, pool, NULL) : loom_weights_morph(w, NULL), ==, 0);
        g_assert_cmpmem(loom_weights_packed(w, NULL), nbytes, ref, nbytes);
        if (ns) g_assert_cmpmem(loom_weights_scales(w, NULL), ns * sizeof(float), ref_scales, ns * sizeof(float));
      }
      assert_morph_reports(w, bad, G_N_ELEMENTS(bad));
    }
    loom_kernels_force(loom_kernels_best_level());
    if (loom_kernels_best_level() >= LOOM_KERNELS_AVX2) g_assert_true(streamed);
    loom_weights_free(w);
    g_free(nan_text);
  }
  loom_pool_free(pool);
}

/* The morphs of float64, float16, bfloat16, fp8 and fp4 check and encode a
 * row in one pass where a kernel level has that (quantize_row_finite): at
 * every level a NaN or infinity in a block of 64 values, in the vectors
 * after the blocks or in the tail of a row gives the whole-row check's
 * report, and a finite master the reference's bytes (a float16 value
 * beyond its range among them, which encodes to infinity; bfloat16's
 * largest value, which rounds to it; both saturate fp8 and fp4). */
static void test_checked_in_one_pass(void) {
  const int64_t rows = 4, cols = 150; /* 2 blocks of 64, vectors of 8 or 16 lanes, then a tail */
  const loom_dtype dts[] = {LOOM_DTYPE_FLOAT64,  LOOM_DTYPE_FLOAT16,  LOOM_DTYPE_BFLOAT16,
                            LOOM_DTYPE_FP8_E4M3, LOOM_DTYPE_FP8_E5M2, LOOM_DTYPE_FP4};
  const bad_value bad[] = {
      {2 * cols + 5, INFINITY, "layer (0,0,0,0) weight: weight at row 2, column 5 is +inf"},
      {0 * cols + 100, NAN, "layer (0,0,0,0) weight: weight at row 0, column 100 is NaN"},
      {1 * cols + 149, NAN, "layer (0,0,0,0) weight: weight at row 1, column 149 is NaN"},
      {3 * cols + 130, -INFINITY, "layer (0,0,0,0) weight: weight at row 3, column 130 is -inf"},
  };
  for (gsize d = 0; d < G_N_ELEMENTS(dts); d++) {
    loom_weights *w = random_weights(rows, cols, 11);
    loom_weights_master(w)[cols + 70] = 1e6f;             /* float16: +inf */
    loom_weights_master(w)[cols + 71] = -FLT_MAX;         /* bfloat16: -inf */
    loom_weights_touch(w);
    morph_at_reference(w, dts[d]);
    size_t nbytes;
    const size_t expect_bytes = (size_t)(rows * cols) * loom_dtype_traits_get(dts[d])->bits / 8;
    g_autofree uint8_t *ref = g_memdup2(loom_weights_packed(w, &nbytes), expect_bytes);
    g_assert_cmpuint(nbytes, ==, expect_bytes);
    for (int level = 0; level <= test_top_level(); level++) {
      if (!loom_kernels_force((loom_kernel_level)level)) continue;
      loom_weights_touch(w);
      g_assert_cmpint(loom_weights_morph(w, NULL), ==, 0);
      g_assert_cmpmem(loom_weights_packed(w, NULL), expect_bytes, ref, expect_bytes);
      assert_morph_reports(w, bad, G_N_ELEMENTS(bad));
    }
    loom_kernels_force(loom_kernels_best_level());
    loom_weights_free(w);
  }
}

/* Where a level has quantize_row_scan (the 64-bit formats at both vector
 * levels, the signed and unsigned formats of 2 to 16 bits at AVX2), the
 * morph scans row r + 1 inside the encode of row r. At every level: the
 * reference level's codes and scales for a finite master (rows of mixed
 * magnitudes, a row of zeros, a tail after the vectors); a NaN or infinity
 * in the first row (scanned alone), in a later row's vector part or tail,
 * and in the last row gives the whole-row check's report. A kernel that
 * scanned the wrong row, missed lanes or misread a statistic fails here. */
static void test_scan_rides_on_encode(void) {
  /* 45 columns: at the AVX2 level 4 vectors at a time (0-31), one vector
   * (32-39) and a tail (40-44). Rows 0, 1, 2 and 4 hold a huge value beside
   * small ones: their Σ |x| (ternary, binary) is not exact in double, so
   * the sum in index order is taken; row 5's is, the vector sum. Row 6's
   * is not, and differs by order: 2^60 first absorbs each later value
   * (below half its ulp of 256) in index order, not their sums by lane;
   * with only the tail's 2^60s, its smallest value would make it look
   * exact. */
  const int64_t rows = 7, cols = 45;
  const loom_dtype dts[] = {LOOM_DTYPE_INT64, LOOM_DTYPE_UINT64, LOOM_DTYPE_INT8,    LOOM_DTYPE_UINT4,
                            LOOM_DTYPE_INT2,  LOOM_DTYPE_UINT8,  LOOM_DTYPE_INT16,   LOOM_DTYPE_UINT16,
                            LOOM_DTYPE_INT4,  LOOM_DTYPE_UINT2,  LOOM_DTYPE_TERNARY, LOOM_DTYPE_BINARY,
                            LOOM_DTYPE_INT32, LOOM_DTYPE_UINT32};
  const bad_value bad[] = {
      {0 * cols + 3, NAN, "layer (0,0,0,0) weight: weight at row 0, column 3 is NaN"},
      {2 * cols + 5, INFINITY, "layer (0,0,0,0) weight: weight at row 2, column 5 is +inf"},
      {1 * cols + 36, NAN, "layer (0,0,0,0) weight: weight at row 1, column 36 is NaN"},
      {4 * cols + 17, -INFINITY, "layer (0,0,0,0) weight: weight at row 4, column 17 is -inf"},
      {1 * cols + 42, INFINITY, "layer (0,0,0,0) weight: weight at row 1, column 42 is +inf"},
      {4 * cols + 44, NAN, "layer (0,0,0,0) weight: weight at row 4, column 44 is NaN"},
  };
  bool fused_seen = false;
  for (gsize d = 0; d < G_N_ELEMENTS(dts); d++) {
    loom_weights *w = random_weights(rows, cols, 5 + (guint32)d);
    float *m = loom_weights_master(w);
    for (int64_t c = 0; c < cols; c++) m[3 * cols + c] = 0; /* scale 0 */
    m[2 * cols + 7] = -1e30f;                               /* a row's largest value, negative */
    m[1 * cols + 32] = 3e29f;                               /* one in the vector after the groups of 4 */
    m[4 * cols + 41] = -2e29f;                              /* one in the tail, negative */
    m[0 * cols + 43] = 5e28f;                               /* one in the tail, positive */
    for (int64_t c = 0; c < cols; c++) m[6 * cols + c] = c && c < 40 ? 100.0f + (float)(c % 20) : 0x1p60f;
    loom_weights_touch(w);
    morph_at_reference(w, dts[d]);
    size_t nbytes;
    int64_t ns;
    const uint8_t *p = loom_weights_packed(w, &nbytes);
    g_autofree uint8_t *ref = g_memdup2(p, nbytes);
    g_autofree float *ref_scales = g_memdup2(loom_weights_scales(w, &ns), rows * sizeof(float));
    g_assert_cmpint(ns, ==, rows);
    for (int level = 0; level <= test_top_level(); level++) {
      if (!loom_kernels_force((loom_kernel_level)level)) continue;
      fused_seen |= loom_kernels_get()->quantize_row_scan[dts[d]] != NULL;
      loom_weights_touch(w);
      g_assert_cmpint(loom_weights_morph(w, NULL), ==, 0);
      g_assert_cmpmem(loom_weights_packed(w, NULL), nbytes, ref, nbytes);
      g_assert_cmpmem(loom_weights_scales(w, NULL), rows * sizeof(float), ref_scales, rows * sizeof(float));
      assert_morph_reports(w, bad, G_N_ELEMENTS(bad));
    }
    loom_weights_free(w);
  }
  loom_kernels_force(loom_kernels_best_level());
  if (loom_kernels_best_level() >= LOOM_KERNELS_AVX2) g_assert_true(fused_seen);
}

/* loom_weights_morph_on and loom_weights_effective_on split the rows over a
 * pool: for 1, 2 and 3 threads, the packed bytes, the scales and the
 * effective values are the serial ones at every kind of morph (a scan
 * riding on the encode, a checked encode, the generic encode, a per-tensor
 * scale); a NaN or infinity in a later range and one in an earlier range
 * give the serial report of the first. 1000 rows of 64 values are 4
 * ranges of the pool's morph. */
static void test_morph_on_pool(void) {
  const int64_t rows = 1000, cols = 64;
  const loom_dtype dts[] = {LOOM_DTYPE_INT8, LOOM_DTYPE_UINT4, LOOM_DTYPE_TERNARY, LOOM_DTYPE_FLOAT16,
                            LOOM_DTYPE_FP8_E4M3, LOOM_DTYPE_INT64, LOOM_DTYPE_BINARY};
  const bad_value bad[] = {
      {900 * cols + 5, NAN, "layer (0,0,0,0) weight: weight at row 900, column 5 is NaN"},
      {256 * cols + 63, -INFINITY, "layer (0,0,0,0) weight: weight at row 256, column 63 is -inf"},
  };
  for (int threads = 1; threads <= 3; threads++) {
    loom_pool *pool = loom_pool_new(threads, NULL);
    g_assert_nonnull(pool);
    for (gsize d = 0; d < G_N_ELEMENTS(dts); d++)
      for (int mode = 0; mode < 2; mode++) {
        const loom_scale_mode m = mode ? LOOM_SCALE_PER_TENSOR : LOOM_SCALE_PER_ROW;
        loom_weights *w = random_weights(rows, cols, 21 + (guint32)d);
        loom_weights_set_label(w, "layer (0,0,0,0) weight");
        g_assert_cmpint(loom_weights_set_dtype(w, dts[d], NULL), ==, 0);
        g_assert_cmpint(loom_weights_set_scale_mode(w, m, NULL), ==, 0);
        g_assert_cmpint(loom_weights_morph(w, NULL), ==, 0);
        size_t nbytes = 0;
        int64_t ns = 0;
        const uint8_t *p = loom_weights_packed(w, &nbytes);
        g_autofree uint8_t *ref = g_memdup2(p, nbytes);
        const float *sc = loom_weights_scales(w, &ns);
        g_autofree float *ref_scales = sc && ns ? g_memdup2(sc, (gsize)ns * sizeof(float)) : NULL;
        g_autofree float *ref_values = g_memdup2(loom_weights_effective(w, NULL), rows * cols * sizeof(float));
        loom_weights_free(w);
        /* a fresh store: no buffer left from the serial pass */
        w = random_weights(rows, cols, 21 + (guint32)d);
        loom_weights_set_label(w, "layer (0,0,0,0) weight");
        g_assert_cmpint(loom_weights_set_dtype(w, dts[d], NULL), ==, 0);
        g_assert_cmpint(loom_weights_set_scale_mode(w, m, NULL), ==, 0);
        g_assert_cmpint(loom_weights_morph_on(w, pool, NULL), ==, 0);
        g_assert_cmpmem(loom_weights_packed(w, NULL), nbytes, ref, nbytes);
        if (ns) g_assert_cmpmem(loom_weights_scales(w, NULL), ns * sizeof(float), ref_scales, ns * sizeof(float));
        const float *v = loom_weights_effective_on(w, pool, NULL);
        g_assert_nonnull(v);
        g_assert_cmpmem(v, rows * cols * sizeof(float), ref_values, rows * cols * sizeof(float));
        float *master = loom_weights_master(w);
        for (gsize k = 0; k < G_N_ELEMENTS(bad); k++) {
          master[bad[k].at] = bad[k].v;
          loom_weights_touch(w);
          loom_error err = {0};
          g_assert_cmpint(loom_weights_morph_on(w, pool, &err), ==, LOOM_ERR_NONFINITE);
          g_assert_cmpstr(err.message, ==, bad[k].message);
          g_assert_null(loom_weights_packed(w, NULL));
          g_assert_null(loom_weights_effective_on(w, pool, NULL));
        }
        loom_weights_free(w);
      }
    loom_pool_free(pool);
  }
}

static void test_load_packed(void) {
  loom_weights *w = loom_weights_new(2, 3, NULL);
  loom_weights_set_label(w, "layer (1,0,0,0) weight");
  const uint8_t p8[6] = {0x01, 0x7f, 0x81, 0x00, 0xff, 0x02};
  const float scales[2] = {0.5f, 0.25f};
  loom_error err;
  g_assert_cmpint(loom_weights_load_packed(w, LOOM_DTYPE_INT8, p8, 6, scales, 2, &err), ==, 0);
  g_assert_cmpint(loom_weights_dtype(w), ==, LOOM_DTYPE_INT8);
  const float want[6] = {0.5f, 63.5f, -63.5f, 0, -0.25f, 0.5f};
  g_assert_cmpmem(loom_weights_master_const(w), sizeof want, want, sizeof want);
  size_t nbytes;
  g_assert_cmpmem(loom_weights_packed(w, &nbytes), 6, p8, 6);
  g_assert_cmpmem(loom_weights_effective(w, NULL), sizeof want, want, sizeof want);
  /* The clone keeps the loaded copy and its scales. */
  loom_weights *c = loom_weights_clone(w, NULL);
  g_assert_cmpmem(loom_weights_packed(c, NULL), 6, p8, 6);
  int64_t ns;
  g_assert_cmpmem(loom_weights_scales(c, &ns), 8, scales, 8);
  g_assert_cmpstr(loom_weights_label(c), ==, "layer (1,0,0,0) weight");
  loom_weights_free(c);
  /* One scale: per tensor. */
  g_assert_cmpint(loom_weights_load_packed(w, LOOM_DTYPE_INT8, p8, 6, scales, 1, &err), ==, 0);
  g_assert_cmpint(loom_weights_scale_mode(w), ==, LOOM_SCALE_PER_TENSOR);
  g_assert_cmpfloat(loom_weights_master_const(w)[4], ==, -0.5f);

  /* Failures name the layer and leave the store unchanged. */
  float before[6];
  memcpy(before, loom_weights_master_const(w), sizeof before);
  g_assert_cmpint(loom_weights_load_packed(w, LOOM_DTYPE_INT8, p8, 5, scales, 2, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "layer (1,0,0,0) weight: int8 data of 5 bytes, expected 6 for 2 × 3 values");
  g_assert_cmpint(loom_weights_load_packed(w, LOOM_DTYPE_INT8, p8, 6, scales, 3, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "layer (1,0,0,0) weight: int8 takes 2 scales (one per row) or 1, got 3");
  const uint8_t bad8[6] = {0x01, 0x80, 0, 0, 0, 0};
  g_assert_cmpint(loom_weights_load_packed(w, LOOM_DTYPE_INT8, bad8, 6, scales, 2, &err), ==, LOOM_ERR_FORMAT);
  g_assert_cmpstr(err.message, ==, "layer (1,0,0,0) weight: invalid int8 code 0x80 at row 0, column 1");
  const uint8_t int4_pad[4] = {0x21, 0x03, 0x21, 0x13};
  g_assert_cmpint(loom_weights_load_packed(w, LOOM_DTYPE_INT4, int4_pad, 4, scales, 2, &err), ==, LOOM_ERR_FORMAT);
  g_assert_cmpstr(err.message, ==, "layer (1,0,0,0) weight: padding bits of row 1 are not zero");
  const uint8_t ternary_bad[2] = {0x08, 0x00};
  g_assert_cmpint(loom_weights_load_packed(w, LOOM_DTYPE_TERNARY, ternary_bad, 2, scales, 2, &err), ==,
                  LOOM_ERR_FORMAT);
  g_assert_cmpstr(err.message, ==, "layer (1,0,0,0) weight: invalid ternary code 0x2 at row 0, column 1");
  const uint8_t e4m3_nan[6] = {0x38, 0x38, 0x38, 0x38, 0x38, 0xff};
  g_assert_cmpint(loom_weights_load_packed(w, LOOM_DTYPE_FP8_E4M3, e4m3_nan, 6, NULL, 0, &err), ==,
                  LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "layer (1,0,0,0) weight: weight at row 1, column 2 is NaN");
  const float neg_scale[2] = {1, -0.5f};
  g_assert_cmpint(loom_weights_load_packed(w, LOOM_DTYPE_INT8, p8, 6, neg_scale, 2, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "layer (1,0,0,0) weight: scale 1 is -0.5; scales must be finite and >= 0");
  g_assert_cmpint(loom_weights_load_packed(w, LOOM_DTYPE_FLOAT16, p8, 12, scales, 2, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "layer (1,0,0,0) weight: float16 takes no scales, got 2");
  g_assert_cmpmem(loom_weights_master_const(w), sizeof before, before, sizeof before);
  g_assert_cmpint(loom_weights_dtype(w), ==, LOOM_DTYPE_INT8);

  /* float16 and float32 files. */
  const uint16_t h[6] = {0x3c00, 0xc000, 0x0001, 0x7bff, 0x8000, 0x3555};
  g_assert_cmpint(loom_weights_load_packed(w, LOOM_DTYPE_FLOAT16, h, 12, NULL, 0, &err), ==, 0);
  const float hw[6] = {1, -2, 0x1p-24f, 65504, -0.0f, 0x1.554p-2f};
  g_assert_cmpmem(loom_weights_master_const(w), sizeof hw, hw, sizeof hw);
  g_assert_cmpint(loom_weights_load_packed(w, LOOM_DTYPE_FLOAT32, hw, 24, NULL, 0, &err), ==, 0);
  g_assert_cmpmem(loom_weights_packed(w, NULL), 24, hw, 24);
  g_assert_cmpuint(loom_weights_allocated_cache_bytes(w), ==, 24);
  loom_weights_free(w);
}

/* morph -> packed -> load_packed into a fresh store reproduces the master
 * exactly as effective() computed it, for every dtype. */
static void test_morph_load_round_trip(void) {
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    loom_weights *w = random_weights(4, 7, 40 + (guint32)d);
    g_assert_cmpint(loom_weights_set_dtype(w, (loom_dtype)d, NULL), ==, 0);
    const float *eff = loom_weights_effective(w, NULL);
    g_assert_nonnull(eff);
    size_t nbytes;
    int64_t ns;
    const uint8_t *p = loom_weights_packed(w, &nbytes);
    const float *sc = loom_weights_scales(w, &ns);
    loom_weights *v = loom_weights_new(4, 7, NULL);
    g_assert_cmpint(loom_weights_load_packed(v, (loom_dtype)d, p, nbytes, sc, ns, NULL), ==, 0);
    g_assert_cmpmem(loom_weights_master_const(v), 28 * 4, eff, 28 * 4);
    g_assert_cmpmem(loom_weights_effective(v, NULL), 28 * 4, eff, 28 * 4);
    g_assert_cmpuint(loom_weights_bytes(v), ==, loom_weights_bytes(w));
    loom_weights_free(v);
    loom_weights_free(w);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/weights/new-and-sizes", test_new_and_sizes);
  g_test_add_func("/weights/byte-accounting", test_byte_accounting);
  g_test_add_func("/weights/cache-and-touch", test_cache_and_touch);
  g_test_add_func("/weights/nonfinite", test_nonfinite);
  g_test_add_func("/weights/touch-finite", test_touch_finite);
  g_test_add_func("/weights/checked-in-one-pass", test_checked_in_one_pass);
  g_test_add_func("/weights/wide-beyond-caches", test_wide_beyond_caches);
  g_test_add_func("/weights/scan-rides-on-encode", test_scan_rides_on_encode);
  g_test_add_func("/weights/morph-on-pool", test_morph_on_pool);
  g_test_add_func("/weights/load-packed", test_load_packed);
  g_test_add_func("/weights/morph-load-round-trip", test_morph_load_round_trip);
  return g_test_run();
}
