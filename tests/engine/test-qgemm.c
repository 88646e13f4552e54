/*
 * The integer product (kernels/qgemm.h) at every dtype it serves and every
 * kernel level: every level and thread count gives the reference level's
 * bits (exact integer sums), and the reference is the float product of the
 * dequantized weights within the documented tolerance of quantizing the
 * activations to int8 (docs/qgemm.md):
 *
 *   |y − y_exact| ≤ s_x · Σ_c |W[r,c]| · (1/2 + 2^-20) + 2^-22 · Σ_c |W[r,c] · x[c]|  (+ 2^-140)
 *
 * with s_x = max|x| / 127 and W the dequantized weights. Activations that
 * lie on the int8 grid are multiplied exactly. Shapes are odd: 1, 3, 17 rows;
 * 1 … 4095 columns and one past a 4096-byte chunk of codes; batches 1, 3, 5
 * (partial blocks of 4 rows and 4 activation rows, partial 64-byte blocks
 * of codes, partial bytes). The GEMV (batch 1) also on 203 and 130 rows:
 * several spans of 64 rows, groups of 4 or 8 rows with a short last one,
 * short rows that prefetch groups ahead and long ones that prefetch within
 * the row; and constant weights and activations at their largest codes
 * over several 4096-byte chunks, the largest sums the int32 lanes hold.
 * The 8-bit and 4-bit codes' panel GEMM (qgemm-vnni-panel.c, from batch
 * LOOM_QGEMM_PANEL_MIN_BATCH) on every batch from 1 to 70 (tiles of 8
 * activation rows and short ones of 4, 2, 1), rows that fill no panel of 32
 * or end inside one, columns that end inside a group of 4 and inside a
 * 64-byte block, past a 4096-column slice, more rows than one range of the
 * pool, and its zero and non-finite activation rows.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu.h"
#include "kernels/qgemm.h"
#include "loom/loom.h"

#include "under-tsan.h"

static const int64_t row_counts[] = {1, 3, 17};
/* 200: 100 bytes of 4-bit codes, a row's rest of 65 to 127 bytes after the
 * GEMV's 128-byte steps (qgemm-avx2.c) */
static const int64_t col_counts[] = {1, 3, 17, 63, 64, 65, 200, 255, 256, 257, 511, 513, 4095};
static const int64_t batches[] = {1, 3, 5};

static uint32_t xorshift(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (uint32_t)(*s >> 32);
}

static float uniform(uint64_t *s) { return (float)((double)xorshift(s) / 4294967296.0 * 2.0 - 1.0); }

typedef struct {
  loom_dtype d;
  int64_t rows, cols, batch, nscales;
  float *w, *deq, *scales, *x, *ref, *y;
  uint8_t *packed;
} problem;

static void problem_make(problem *p, loom_dtype d, int64_t rows, int64_t cols, int64_t batch, bool per_tensor,
                         bool grid_x, uint64_t *seed) {
  const bool scaled = loom_dtype_traits_get(d)->scaled; /* fp4 has no scales */
  *p = (problem){.d = d, .rows = rows, .cols = cols, .batch = batch, .nscales = !scaled ? 0 : per_tensor ? 1 : rows};
  p->w = g_new(float, rows * cols);
  p->deq = g_new(float, rows * cols);
  p->scales = g_new0(float, rows);
  p->x = g_new(float, batch * cols);
  p->ref = g_new(float, batch * rows);
  p->y = g_new(float, batch * rows);
  for (int64_t i = 0; i < rows * cols; i++) p->w[i] = uniform(seed) * (1.0f + (float)(i % 7));
  for (int64_t i = 0; i < batch * cols; i++)
    p->x[i] = grid_x ? (float)((int)(xorshift(seed) % 255) - 127) : uniform(seed) * (float)(1 + i % 5);
  if (grid_x) /* 127 present in every row: s_x = 1, every x is its own code */
    for (int64_t b = 0; b < batch; b++) p->x[b * cols] = 127.0f;
  for (int64_t r = 0; r < p->nscales; r++)
    p->scales[r] = loom_dtype_compute_scale(d, per_tensor ? p->w : p->w + r * cols, per_tensor ? rows * cols : cols);
  size_t nbytes;
  g_assert_cmpint(loom_dtype_packed_bytes(d, rows, cols, &nbytes, NULL), ==, 0);
  p->packed = g_malloc(nbytes + 1);
  g_assert_cmpint(loom_dtype_quantize(d, p->w, rows, cols, p->scales, p->nscales, p->packed, NULL), ==, 0);
  g_assert_cmpint(loom_dtype_dequantize(d, p->packed, rows, cols, p->scales, p->nscales, p->deq, NULL), ==, 0);
}

static void problem_free(problem *p) {
  g_free(p->w);
  g_free(p->deq);
  g_free(p->scales);
  g_free(p->x);
  g_free(p->ref);
  g_free(p->y);
  g_free(p->packed);
}

static int run(const problem *p, loom_pool *pool, float *y) {
  return loom_qgemm_packed(pool, p->d, p->packed, p->rows, p->cols, p->scales, p->nscales, p->batch, p->x, y, NULL);
}

/* The reference against float math on the dequantized weights. */
static void check_tolerance(const problem *p, bool grid_x) {
  for (int64_t b = 0; b < p->batch; b++) {
    const float *x = p->x + b * p->cols;
    double amax = 0;
    for (int64_t c = 0; c < p->cols; c++) amax = fmax(amax, fabs((double)x[c]));
    const double sx = amax / 127;
    for (int64_t r = 0; r < p->rows; r++) {
      const float *w = p->deq + r * p->cols;
      double exact = 0, mag = 0, wabs = 0;
      for (int64_t c = 0; c < p->cols; c++) {
        exact += (double)w[c] * (double)x[c];
        mag += fabs((double)w[c] * (double)x[c]);
        wabs += fabs((double)w[c]);
      }
      const double got = p->ref[b * p->rows + r];
      const double tol = grid_x ? 0x1p-22 * mag + 0x1p-140 : sx * wabs * (0.5 + 0x1p-20) + 0x1p-22 * mag + 0x1p-140;
      if (!(fabs(got - exact) <= tol))
        g_error("%s %lld×%lld batch %lld (%s): y[%lld,%lld] = %.9g, exact %.9g, tolerance %.3g",
                loom_dtype_name(p->d), (long long)p->rows, (long long)p->cols, (long long)p->batch,
                grid_x ? "grid activations" : "random activations", (long long)b, (long long)r, got, exact, tol);
    }
  }
}

static void check(loom_dtype d, int64_t rows, int64_t cols, int64_t batch, bool per_tensor, bool grid_x,
                  loom_pool **pools, int npools, uint64_t *seed) {
  if (UNDER_TSAN && npools == 1) return; /* serial only */
  problem p;
  problem_make(&p, d, rows, cols, batch, per_tensor, grid_x, seed);
  g_assert_true(loom_kernels_force(LOOM_KERNELS_REF));
  g_assert_cmpint(run(&p, NULL, p.ref), ==, 0);
  if (!UNDER_TSAN) check_tolerance(&p, grid_x); /* serial arithmetic */
  for (int l = 0; l <= (int)loom_kernels_best_level(); l++) {
    g_assert_true(loom_kernels_force((loom_kernel_level)l));
    for (int i = UNDER_TSAN; i < npools; i++) {
      memset(p.y, 0xff, (size_t)(batch * rows) * sizeof *p.y);
      g_assert_cmpint(run(&p, pools[i], p.y), ==, 0);
      if (memcmp(p.y, p.ref, (size_t)(batch * rows) * sizeof *p.y) != 0)
        g_error("%s %lld×%lld batch %lld at level %s, %d threads: not the reference's bits", loom_dtype_name(d),
                (long long)rows, (long long)cols, (long long)batch, loom_kernel_level_name(l),
                pools[i] ? loom_pool_size(pools[i]) : 1);
    }
  }
  problem_free(&p);
}

static loom_pool *pools[3];

static void test_shapes(gconstpointer data) {
  const loom_dtype d = (loom_dtype)GPOINTER_TO_INT(data);
  uint64_t seed = 0x9e3779b97f4a7c15u ^ (uint64_t)d;
  for (size_t ri = 0; ri < G_N_ELEMENTS(row_counts); ri++)
    for (size_t ci = 0; ci < G_N_ELEMENTS(col_counts); ci++)
      for (size_t bi = 0; bi < G_N_ELEMENTS(batches); bi++)
        for (int per_tensor = 0; per_tensor < 2; per_tensor++)
          check(d, row_counts[ri], col_counts[ci], batches[bi], per_tensor, false, pools, 3, &seed);
  /* Past one 4096-byte chunk of codes, and 9 activation rows (two blocks of
   * 4 and one of 1). */
  const int64_t long_cols = 4096 * 8 / loom_dtype_traits_get(d)->bits + 37;
  check(d, 5, long_cols, 9, false, false, pools, 3, &seed);
  /* More activation rows than the kernel's group of 256. */
  check(d, 7, 130, 261, false, false, pools, 3, &seed);
  /* Enough rows that the pool splits them into several ranges. */
  check(d, 203, long_cols, 3, false, false, pools, 3, &seed);
  /* The GEMV over several spans of rows, short rows and long ones. */
  check(d, 203, 1000, 1, false, false, pools, 3, &seed);
  check(d, 130, long_cols, 1, true, false, pools, 3, &seed);
  check(d, 67, 4 * long_cols, 1, false, true, pools, 1, &seed);
  for (size_t ci = 0; ci < G_N_ELEMENTS(col_counts); ci++)
    check(d, 6, col_counts[ci], 2, false, true, pools, 1, &seed);
  check(d, 3, long_cols, 1, true, true, pools, 1, &seed);
  /* Weights beyond 4 MiB: the GEMV that prefetches into L2 rather than L1
   * (qgemm-vnni-gemv.c), 9 rows (a group of 8 and a short one); 8- and 4-bit
   * codes, few enough to check quickly. */
  const int bits = loom_dtype_traits_get(d)->bits;
  if (!g_getenv("LOOM_TEST_SANITIZED") && bits >= 4)
    check(d, 9, (INT64_C(4) << 20) / 8 * 8 / bits + 77, 1, false, false, pools, 2, &seed);
}

/* The panel GEMM of 8-bit and 4-bit codes (and the kernels below its batch
 * threshold) against the reference on odd shapes. */
static void test_panel(gconstpointer data) {
  const loom_dtype d = (loom_dtype)GPOINTER_TO_INT(data);
  uint64_t seed = 0x2545f4914f6cdd1du ^ (uint64_t)d;
  /* Sanitized builds (LOOM_TEST_SANITIZED) look for memory errors and
   * races, not for more shapes: every batch to just past the threshold and
   * its first tiles, then a few. */
  const bool sanitized = g_getenv("LOOM_TEST_SANITIZED") != NULL;
  /* Rows the VNNI level gives the panel GEMM from its batch threshold
   * (loom_qgemm_takes_short): the narrower codes' rows end inside a byte. */
  const int bits = loom_dtype_traits_get(d)->bits;
  const int64_t panel_cols = bits == 8 ? 129 : 265;
  const loom_kernels *avx512 = loom_kernels_for(LOOM_KERNELS_AVX512);
  if (avx512 && avx512->qgemm_tiles && bits < 4) g_assert_false(loom_qgemm_takes_panel(avx512, bits, 4096, 64));
  if (avx512 && avx512->qgemm_tiles && bits >= 4) { /* the thresholds this test crosses */
    g_assert_false(loom_qgemm_takes_panel(avx512, bits, panel_cols, LOOM_QGEMM_PANEL_MIN_BATCH - 1));
    g_assert_true(loom_qgemm_takes_panel(avx512, bits, panel_cols, LOOM_QGEMM_PANEL_MIN_BATCH));
    g_assert_false(loom_qgemm_takes_short(avx512, bits, panel_cols, LOOM_QGEMM_PANEL_MIN_BATCH));
    g_assert_true(loom_qgemm_takes_panel(avx512, bits, 4096 + 37, 20) == (bits == 8));
    g_assert_true(loom_qgemm_takes_panel(avx512, bits, 4096 + 37, LOOM_QGEMM_PANEL4_LONG_MIN_BATCH));
    g_assert_false(loom_qgemm_takes_panel(avx512, 2, 4096, 64));
  }
  g_assert_false(loom_qgemm_takes_panel(loom_kernels_for(LOOM_KERNELS_REF), bits, 4096, 64));
  const loom_kernels *amx = loom_kernels_for(LOOM_KERNELS_AMX);
  if (amx) { /* AMX tiles from LOOM_QGEMM_AMX_MIN_BATCH, short rows sooner */
    g_assert_true(amx->qgemm_tiles == LOOM_QGEMM_TILES_AMX);
    g_assert_false(loom_qgemm_takes_panel(amx, bits, LOOM_QGEMM_AMX_SHORT_COLS + 1, LOOM_QGEMM_AMX_MIN_BATCH - 1));
    g_assert_true(loom_qgemm_takes_panel(amx, bits, LOOM_QGEMM_AMX_SHORT_COLS + 1, LOOM_QGEMM_AMX_MIN_BATCH));
    g_assert_true(loom_qgemm_takes_panel(amx, bits, 4096 + 37, LOOM_QGEMM_AMX_MIN_BATCH));
    g_assert_false(loom_qgemm_takes_panel(amx, bits, 200, LOOM_QGEMM_AMX_SHORT_MIN_BATCH - 1));
    g_assert_true(loom_qgemm_takes_panel(amx, bits, 200, LOOM_QGEMM_AMX_SHORT_MIN_BATCH));
    g_assert_true(loom_qgemm_takes_panel(amx, bits, LOOM_QGEMM_AMX_SHORT_COLS, LOOM_QGEMM_AMX_SHORT_MIN_BATCH));
    g_assert_false(loom_qgemm_takes_short(amx, bits, 200, LOOM_QGEMM_AMX_SHORT_MIN_BATCH));
    g_assert_true(loom_qgemm_takes_panel(amx, 2, 4096, 64));
    g_assert_false(loom_qgemm_takes_panel(amx, 1, LOOM_QGEMM_AMX_SHORT_COLS / 2, 64));
    g_assert_true(loom_qgemm_takes_panel(amx, 1, LOOM_QGEMM_AMX_SHORT_COLS / 2 + 1, LOOM_QGEMM_AMX_SHORT_MIN_BATCH));
  }
  for (int64_t batch = 1; batch <= 70; batch++) {
    if (sanitized && batch > 26 && batch != 31 && batch != 33 && batch != 64 && batch != 70) continue;
    check(d, batch % 3 == 0 ? 33 : 37, panel_cols + batch % 4, batch, batch % 5 == 0, false, pools,
          batch % 7 == 0 ? 3 : 1, &seed);
  }
  static const int64_t cols[] = {1, 3, 5, 61, 63, 65, 4095, 4096 + 37};
  static const int64_t rows[] = {1, 16, 31, 45};
  for (size_t ci = 0; ci < G_N_ELEMENTS(cols); ci++)
    for (size_t ri = 0; ri < G_N_ELEMENTS(rows); ri++) {
      if (sanitized && (ci % 3 != 2 || ri == 1)) continue; /* 5, 65 and 4133 columns; 1, 31 and 45 rows */
      check(d, rows[ri], cols[ci], ci % 2 ? 17 : LOOM_QGEMM_PANEL_MIN_BATCH, ri == 2, false, pools, 3, &seed);
    }
  check(d, 203, 1000, 70, false, false, pools, 3, &seed);
  /* AMX (qgemm-amx.c) reads 8-bit rows in place in blocks of 32 whose
   * last tile stays inside the matrix, else from a copy: a last full
   * block whose rows end inside a tile, and rows shorter than a tile */
  check(d, 64, 129, 20, false, false, pools, 3, &seed);
  check(d, 96, 10, 33, true, false, pools, 3, &seed);
  /* ranges of 32 rows, the last short; 4-bit codes' long rows from their
   * own threshold on, and below it (the row kernels) */
  check(d, 150, 4096 + 37, bits == 8 ? 20 : LOOM_QGEMM_PANEL4_LONG_MIN_BATCH + 1, false, false, pools, 3, &seed);
  check(d, 45, 2 * 4096 + 1, 23, false, true, pools, 3, &seed);
  if (bits == 4) check(d, 45, 2 * 4096 + 1, LOOM_QGEMM_PANEL4_LONG_MIN_BATCH, false, true, pools, 3, &seed);
  if (!sanitized) check(d, 11, 4096 * 3 + 5, 64, true, true, pools, 1, &seed);
}

/* The short-row product (qgemm-short.c, loom_qgemm_takes_short) against
 * the reference: tiles of 16 weight rows in panels of 8 (rows that fill
 * none, end inside one or inside the second), groups of 4 columns (columns
 * that end inside a group, inside a 32-column chunk of the panel's decode,
 * a last row whose chunk would read past the codes), 1 to 7 activation rows
 * (tiles of 3 and short ones of 1 and 2),
 * rows of several blocks of 1024 columns (sums carried from block to block,
 * a last block of 1 group or of a partial one) in chunks of 64 activation
 * rows, both split over the pool, both sides of the AVX2 level's
 * thresholds, and binary codes' GEMV. */
static void test_short(gconstpointer data) {
  const loom_dtype d = (loom_dtype)GPOINTER_TO_INT(data);
  uint64_t seed = 0x51ed27c3a8b1f00du ^ (uint64_t)d;
  const int bits = loom_dtype_traits_get(d)->bits;
  const bool sanitized = g_getenv("LOOM_TEST_SANITIZED") != NULL;
  /* The thresholds of the level that has the product (no vector level:
   * only the reference's bits are compared below). */
  const loom_kernels *avx2 = loom_kernels_for(LOOM_KERNELS_AVX2);
  g_assert_false(loom_qgemm_takes_short(loom_kernels_for(LOOM_KERNELS_REF), bits, 32, 64));
  if (avx2) {
    g_assert_true(avx2->qgemm_short != NULL);
    g_assert_true(loom_qgemm_takes_short(avx2, bits, 128, 1) == (bits == 1));
    g_assert_false(loom_qgemm_takes_short(avx2, bits, 129, 1));
    g_assert_false(loom_qgemm_takes_short(avx2, bits, 257, 7));
    g_assert_true(loom_qgemm_takes_short(avx2, bits, 384, 8));
    g_assert_false(loom_qgemm_takes_short(avx2, bits, 513, 8));
    g_assert_false(loom_qgemm_takes_short(avx2, bits, 4096, 15));
    g_assert_true(loom_qgemm_takes_short(avx2, bits, 512, 16));
    g_assert_true(loom_qgemm_takes_short(avx2, bits, 1024, 16) == (bits != 2));
    g_assert_true(loom_qgemm_takes_short(avx2, bits, 4096, 16) == (bits == 1 || bits == 4));
    g_assert_true(loom_qgemm_takes_short(avx2, bits, LOOM_QGEMM_SHORT_MAX_COLS, 32));
    g_assert_false(loom_qgemm_takes_short(avx2, bits, LOOM_QGEMM_SHORT_MAX_COLS + 1, 64));
  }
  const loom_kernels *avx512 = loom_kernels_for(LOOM_KERNELS_AVX512);
  if (avx512 && avx512->qgemm_tiles) { /* the VNNI level's panel GEMM from batch 16 */
    g_assert_true(loom_qgemm_takes_short(avx512, bits, 64, 15) == true);
    g_assert_true(loom_qgemm_takes_short(avx512, bits, 64, 16) == (bits != 8 && bits != 4));
    g_assert_true(loom_qgemm_takes_short(avx512, bits, 200, 16) == (bits != 8 && bits != 4));
    g_assert_false(loom_qgemm_takes_short(avx512, bits, 512, 16));
  }
  static const int64_t rows[] = {1, 7, 8, 9, 16, 17, 42};
  static const int64_t cols[] = {1, 2, 3, 4, 5, 31, 32, 33, 42, 100, 127, 128};
  for (size_t ri = 0; ri < G_N_ELEMENTS(rows); ri++)
    for (size_t ci = 0; ci < G_N_ELEMENTS(cols); ci++) {
      if (sanitized && (ri + ci) % 3 != 0) continue;
      const int64_t batch = 2 + (int64_t)((ri + ci) % 6);
      if (avx2) g_assert_true(loom_qgemm_takes_short(avx2, bits, cols[ci], batch));
      check(d, rows[ri], cols[ci], batch, (ri + ci) % 2 == 0, false, pools, 1, &seed);
    }
  /* the wider rows: one block, then two (the second of 1 group), five
   * (the last partial) */
  static const int64_t wide[] = {129, 200, 255, 511, 512, 1025, 4096 + 37};
  for (size_t ci = 0; ci < G_N_ELEMENTS(wide); ci++) {
    const int64_t batch = (wide[ci] > 512 ? 32 : 16) + (int64_t)ci;
    if (avx2) g_assert_true(loom_qgemm_takes_short(avx2, bits, wide[ci], batch));
    check(d, 17 + 8 * (int64_t)ci, wide[ci], batch, ci % 2 == 1, ci % 3 == 2, pools, 3, &seed);
  }
  /* either side of the thresholds: the row kernels there */
  check(d, 9, 257, 7, false, false, pools, 1, &seed);
  check(d, 9, 513, 8, false, false, pools, 1, &seed);
  /* binary's GEMV of short rows: the short-row product too */
  check(d, 19, 128, 1, false, false, pools, 1, &seed);
  check(d, 9, 5, 1, true, false, pools, 1, &seed);
  /* several chunks of activation rows and tiles of weight rows over the
   * pool, with one block and with three */
  check(d, 50, 64, 200, false, false, pools, 3, &seed);
  check(d, 33, 512, 131, true, true, pools, 3, &seed);
  check(d, 33, 2050, 131, false, false, pools, 3, &seed);
}

/* Every weight at its largest code of one sign and every activation at
 * ±127, over several 4096-byte chunks of codes: the largest partial sums. */
static void test_extremes(void) {
  const bool sanitized = g_getenv("LOOM_TEST_SANITIZED") != NULL;
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    if (!loom_qgemm_supports((loom_dtype)d)) continue;
    const int64_t long_cols = 4096 * 8 / loom_dtype_traits_get((loom_dtype)d)->bits * 3 + 5;
    for (int sw = -1; sw <= 1; sw += 2)
      for (int sx = -1; sx <= 1; sx += 2)
        for (int64_t batch = 1; batch <= 17; batch += batch == 1 ? 4 : 12)
          for (int shape = 0; shape < 3; shape++) {
          /* 17: the panel GEMMs (VNNI: 8-bit and 4-bit codes; AMX:
           * all; the 1-bit and 2-bit rows are long, so not in sanitized
           * builds);
           * shape 1: the short-row product's widest rows (qgemm-short.c),
           * whose 32-bit sums come nearest 2^31 (2-bit codes take it from
           * a batch of 32 at that width) */
          const int bits = loom_dtype_traits_get((loom_dtype)d)->bits;
          if (batch == 17 && shape == 0 && bits < 4 && sanitized) continue;
          if (shape == 1 && batch < 17) continue;
          /* shape 2: the AMX tiles' int32 sums over 65,536 columns at
           * most, then widened (qgemm-amx.c): rows of two such spans and
           * a bit */
          if (shape == 2 && (batch < 17 || bits < 4 || sanitized)) continue;
          /* (sanitized builds: rows of 5 blocks, for memory errors) */
          const int64_t cols = shape == 2 ? 2 * 65536 + 5
                               : shape    ? (sanitized ? 4096 + 5 : LOOM_QGEMM_SHORT_MAX_COLS)
                                          : long_cols;
          const int64_t nx = shape == 1 && bits == 2 ? 33 : batch;
          uint64_t seed = 1;
          problem p;
          problem_make(&p, (loom_dtype)d, 9, cols, nx, false, false, &seed);
          /* the largest code: 1 at a row's scale, fp4's largest value */
          const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
          const float top = t->scaled ? 1.0f : (float)t->max_value;
          for (int64_t i = 0; i < p.rows * cols; i++) p.w[i] = (float)sw * top;
          for (int64_t i = 0; i < nx * cols; i++) p.x[i] = (float)sx;
          for (int64_t r = 0; r < p.nscales; r++) p.scales[r] = loom_dtype_compute_scale(p.d, p.w + r * cols, cols);
          g_assert_cmpint(loom_dtype_quantize(p.d, p.w, p.rows, cols, p.scales, p.nscales, p.packed, NULL), ==, 0);
          g_assert_cmpint(loom_dtype_dequantize(p.d, p.packed, p.rows, cols, p.scales, p.nscales, p.deq, NULL), ==, 0);
          g_assert_true(loom_kernels_force(LOOM_KERNELS_REF));
          g_assert_cmpint(run(&p, NULL, p.ref), ==, 0);
          check_tolerance(&p, true);
          for (int l = 0; l <= (int)loom_kernels_best_level(); l++) {
            g_assert_true(loom_kernels_force((loom_kernel_level)l));
            memset(p.y, 0xff, (size_t)(nx * p.rows) * sizeof *p.y);
            g_assert_cmpint(run(&p, NULL, p.y), ==, 0);
            if (memcmp(p.y, p.ref, (size_t)(nx * p.rows) * sizeof *p.y) != 0)
              g_error("%s constant %+d × %+d, batch %lld at level %s: not the reference's bits",
                      loom_dtype_name(p.d), sw, sx, (long long)nx, loom_kernel_level_name(l));
          }
          problem_free(&p);
        }
  }
}

/* Activations so small that their int8 scale is below 2^-125 (the
 * encoder's double path) or subnormal, on the short-row product and the
 * row kernels: every level gives the reference's bits. */
static void test_tiny_activations(void) {
  static const float magnitudes[] = {1e-36f, 3e-39f, 1e-44f};
  static const int64_t cols[] = {42, 300};
  for (size_t mi = 0; mi < G_N_ELEMENTS(magnitudes); mi++)
    for (size_t ci = 0; ci < G_N_ELEMENTS(cols); ci++)
      for (int64_t batch = 1; batch <= 17; batch += 16) {
        uint64_t seed = 11 + mi;
        problem p;
        problem_make(&p, LOOM_DTYPE_INT4, 19, cols[ci], batch, false, false, &seed);
        for (int64_t i = 0; i < batch * p.cols; i++) p.x[i] *= magnitudes[mi];
        g_assert_true(loom_kernels_force(LOOM_KERNELS_REF));
        g_assert_cmpint(run(&p, NULL, p.ref), ==, 0);
        for (int l = 0; l <= (int)loom_kernels_best_level(); l++) {
          g_assert_true(loom_kernels_force((loom_kernel_level)l));
          memset(p.y, 0xff, (size_t)(batch * p.rows) * sizeof *p.y);
          g_assert_cmpint(run(&p, NULL, p.y), ==, 0);
          if (memcmp(p.y, p.ref, (size_t)(batch * p.rows) * sizeof *p.y) != 0)
            g_error("activations of %g, %lld columns, batch %lld at level %s: not the reference's bits",
                    (double)magnitudes[mi], (long long)cols[ci], (long long)batch, loom_kernel_level_name(l));
        }
        problem_free(&p);
      }
}

/* fp4's table of q (qgemm.h) is twice the codec's value of every code,
 * and a bad argument for its missing scales is refused. */
static void test_fp4_table(void) {
  for (uint8_t c = 0; c < 16; c++) {
    float v;
    g_assert_cmpint(loom_dtype_dequantize(LOOM_DTYPE_FP4, &c, 1, 1, NULL, 0, &v, NULL), ==, 0);
    g_assert_cmpfloat(2.0f * v, ==, (float)loom_qgemm_fp4_twice[c]);
  }
  const uint8_t packed[1] = {0x21};
  const float x[2] = {1, 1}, one = 1;
  float y;
  loom_error err;
  g_assert_cmpint(loom_qgemm_packed(NULL, LOOM_DTYPE_FP4, packed, 1, 2, &one, 1, 1, x, &y, &err), ==, LOOM_ERR_SHAPE);
  g_assert_nonnull(strstr(err.message, "fp4"));
  g_assert_cmpint(loom_qgemm_packed(NULL, LOOM_DTYPE_FP4, packed, 1, 2, NULL, 0, 1, x, &y, NULL), ==, 0);
  g_assert_cmpfloat(y, ==, 1.5f); /* codes 1 and 2: 0.5 + 1, exact with x on the int8 grid */
}

/* Zero and non-finite activation rows, and what is refused. */
static void test_edges(void) {
  uint64_t seed = 7;
  problem p;
  /* 5 rows: the first 4 make a tile of the AVX2 GEMM, finished 4 at once */
  problem_make(&p, LOOM_DTYPE_INT4, 5, 70, 5, false, false, &seed);
  for (int64_t c = 0; c < p.cols; c++) p.x[c] = 0.0f; /* row 0: zeros */
  p.x[p.cols + 9] = NAN;                              /* row 1: a NaN */
  for (int l = 0; l <= (int)loom_kernels_best_level(); l++) {
    g_assert_true(loom_kernels_force((loom_kernel_level)l));
    g_assert_cmpint(run(&p, NULL, p.y), ==, 0);
    for (int64_t r = 0; r < p.rows; r++) {
      g_assert_cmpfloat(p.y[r], ==, 0.0f);
      g_assert_true(isnan(p.y[p.rows + r]));
      g_assert_true(isfinite(p.y[2 * p.rows + r]));
    }
    p.x[p.cols + 9] = INFINITY;
    g_assert_cmpint(run(&p, NULL, p.y), ==, 0);
    for (int64_t r = 0; r < p.rows; r++) g_assert_true(isnan(p.y[p.rows + r]));
    p.x[p.cols + 9] = NAN;
  }
  /* The GEMV alone: a row of zeros, a NaN, ±inf. */
  for (int l = 0; l <= (int)loom_kernels_best_level(); l++) {
    g_assert_true(loom_kernels_force((loom_kernel_level)l));
    const float *x1 = p.x + p.cols; /* the row holding the NaN */
    g_assert_cmpint(loom_qgemm_packed(NULL, p.d, p.packed, p.rows, p.cols, p.scales, p.rows, 1, x1, p.y, NULL), ==, 0);
    for (int64_t r = 0; r < p.rows; r++) g_assert_true(isnan(p.y[r]));
    g_assert_cmpint(loom_qgemm_packed(NULL, p.d, p.packed, p.rows, p.cols, p.scales, p.rows, 1, p.x, p.y, NULL), ==, 0);
    for (int64_t r = 0; r < p.rows; r++) g_assert_cmpfloat(p.y[r], ==, 0.0f);
    p.x[p.cols + 9] = -INFINITY;
    g_assert_cmpint(loom_qgemm_packed(NULL, p.d, p.packed, p.rows, p.cols, p.scales, p.rows, 1, x1, p.y, NULL), ==, 0);
    for (int64_t r = 0; r < p.rows; r++) g_assert_true(isnan(p.y[r]));
    p.x[p.cols + 9] = NAN;
  }
  problem_free(&p);
  /* The panel GEMM (int8, a batch past its threshold): zeros, NaN, ±inf. */
  /* (170 columns: the short-row product below VNNI, the panel GEMM there) */
  problem_make(&p, LOOM_DTYPE_INT8, 35, 170, LOOM_QGEMM_PANEL_MIN_BATCH + 3, false, false, &seed);
  for (int64_t c = 0; c < p.cols; c++) p.x[c] = 0.0f;
  p.x[p.cols + 9] = NAN;
  p.x[5 * p.cols + 169] = INFINITY;
  p.x[9 * p.cols] = -INFINITY;
  g_assert_true(loom_kernels_force(LOOM_KERNELS_REF));
  g_assert_cmpint(run(&p, NULL, p.ref), ==, 0);
  for (int l = 0; l <= (int)loom_kernels_best_level(); l++) {
    g_assert_true(loom_kernels_force((loom_kernel_level)l));
    g_assert_cmpint(run(&p, pools[2], p.y), ==, 0);
    for (int64_t b = 0; b < p.batch; b++)
      for (int64_t r = 0; r < p.rows; r++) {
        const float y = p.y[b * p.rows + r];
        if (b == 0) g_assert_cmpfloat(y, ==, 0.0f);
        else if (b == 1 || b == 5 || b == 9) g_assert_true(isnan(y));
        else g_assert_true(memcmp(&y, &p.ref[b * p.rows + r], sizeof y) == 0);
      }
  }
  problem_free(&p);
  problem_make(&p, LOOM_DTYPE_INT4, 5, 70, 3, false, false, &seed);
  loom_error err;
  g_assert_cmpint(loom_qgemm_packed(NULL, LOOM_DTYPE_FLOAT32, p.packed, 1, 1, NULL, 0, 1, p.x, p.y, &err), ==,
                  LOOM_ERR_UNSUPPORTED);
  g_assert_cmpint(loom_qgemm_packed(NULL, LOOM_DTYPE_INT4, p.packed, p.rows, p.cols, p.scales, 2, 1, p.x, p.y, &err),
                  ==, LOOM_ERR_SHAPE);
  g_assert_false(loom_qgemm_supports(LOOM_DTYPE_INT16));
  g_assert_true(loom_qgemm_supports(LOOM_DTYPE_TERNARY));
  problem_free(&p);
}

/* Every level's qgemm_prepare gives the reference's Σ xq and, for codes of
 * 1, 2 and 4 bits, its permuted copy xp, byte for byte: random codes over
 * lengths of one and of several 512-column blocks (the longest layout unit,
 * binary's), extremes included. */
static void test_prepare(void) {
  static const int64_t lengths[] = {512, 1024, 4608};
  static const int bits[] = {1, 2, 4, 8};
  uint64_t seed = 77;
  int8_t *xq = g_malloc(4608), *want = g_malloc(4608), *got = g_malloc(4608);
  for (size_t li = 0; li < G_N_ELEMENTS(lengths); li++) {
    const int64_t len = lengths[li];
    for (int64_t c = 0; c < len; c++) xq[c] = (int8_t)(xorshift(&seed) % 255 - 127);
    xq[0] = -127;
    xq[len - 1] = 127;
    for (size_t bi = 0; bi < G_N_ELEMENTS(bits); bi++) {
      int64_t sum_want = 0;
      memset(want, 0x5a, (size_t)len);
      loom_qgemm_prepare_ref(bits[bi], xq, want, len, &sum_want);
      for (int l = 0; l <= (int)loom_kernels_best_level(); l++) {
        const loom_kernels *k = loom_kernels_for((loom_kernel_level)l);
        if (!k->qgemm_prepare) continue;
        int64_t sum_got = 0;
        memset(got, 0x5a, (size_t)len);
        k->qgemm_prepare(bits[bi], xq, got, len, &sum_got);
        g_assert_cmpint(sum_got, ==, sum_want);
        if (bits[bi] < 8 && memcmp(got, want, (size_t)len) != 0)
          g_error("%d-bit codes, %lld columns, level %s: xp is not the reference's", bits[bi], (long long)len, k->name);
      }
    }
  }
  g_free(xq);
  g_free(want);
  g_free(got);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  pools[0] = NULL;
  pools[1] = loom_pool_new(2, NULL);
  pools[2] = loom_pool_new(3, NULL);
  g_assert_nonnull(pools[1]);
  g_assert_nonnull(pools[2]);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    if (!loom_qgemm_supports((loom_dtype)d)) continue;
    char *path = g_strdup_printf("/qgemm/shapes/%s", loom_dtype_name((loom_dtype)d));
    g_test_add_data_func(path, GINT_TO_POINTER(d), test_shapes);
    g_free(path);
  }
  /* (the 2-bit and binary codes take the AMX tiles, not the VNNI panels) */
  static const loom_dtype panel_dtypes[] = {LOOM_DTYPE_INT8, LOOM_DTYPE_UINT8, LOOM_DTYPE_INT4,    LOOM_DTYPE_UINT4,
                                            LOOM_DTYPE_FP4,  LOOM_DTYPE_INT2,  LOOM_DTYPE_UINT2,   LOOM_DTYPE_TERNARY,
                                            LOOM_DTYPE_BINARY};
  for (size_t i = 0; i < G_N_ELEMENTS(panel_dtypes); i++) {
    char *path = g_strdup_printf("/qgemm/panel/%s", loom_dtype_name(panel_dtypes[i]));
    g_test_add_data_func(path, GINT_TO_POINTER(panel_dtypes[i]), test_panel);
    g_free(path);
  }
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    if (!loom_qgemm_supports((loom_dtype)d)) continue;
    char *path = g_strdup_printf("/qgemm/short/%s", loom_dtype_name((loom_dtype)d));
    g_test_add_data_func(path, GINT_TO_POINTER(d), test_short);
    g_free(path);
  }
  g_test_add_func("/qgemm/prepare", test_prepare);
  g_test_add_func("/qgemm/edges", test_edges);
  g_test_add_func("/qgemm/fp4-table", test_fp4_table);
  g_test_add_func("/qgemm/tiny-activations", test_tiny_activations);
  if (!UNDER_TSAN) g_test_add_func("/qgemm/extremes", test_extremes); /* serial only */
  const int rc = g_test_run();
  loom_pool_free(pools[1]);
  loom_pool_free(pools[2]);
  return rc;
}
