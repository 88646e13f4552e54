/*
 * loom_sgemm against the reference kernel (loom_sgemm_ref_rows) at every
 * kernel level: the same bits on odd shapes, every transposition and
 * accumulate combination, leading dimensions wider than the matrices (the
 * padding around C must stay untouched); the same bits for any thread count;
 * and a row of a product, or of a dense or swiglu layer's forward, gives the
 * same bits alone as inside batches of 3, 64 and 100 (matmul.h's fixed order).
 *
 * The test runs once at the best level, forcing every level the machine has
 * in turn with loom_kernels_force, and again with LOOM_KERNELS=ref and avx2
 * (tests/engine/meson.build), which then tests that level alone.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "layers/layer-impl.h"
#include "loom/loom.h"
#include "test-levels.h"

/* Marks the padding of a strided matrix; any write there is caught. */
static const float GUARD = -12345.5f;

typedef struct mats {
  bool ta, tb, acc;
  int64_t m, n, k, lda, ldb, ldc;
  float *a, *b, *c0; /* c0: C before the product (with the guard padding) */
} mats;

static float *guarded(int64_t rows, int64_t cols, int64_t ld, uint64_t seed) {
  float *v = g_new(float, rows * ld);
  for (int64_t i = 0; i < rows * ld; i++) v[i] = GUARD;
  float *row = g_new(float, cols);
  for (int64_t r = 0; r < rows; r++) {
    gradcheck_fill_uniform(row, cols, -1, 1, seed * 7919 + (uint64_t)r);
    memcpy(v + r * ld, row, (size_t)cols * sizeof *v);
  }
  g_free(row);
  return v;
}

/* Leading dimensions pad by `pad` (0 for tight). */
static mats mats_new(bool ta, bool tb, bool acc, int64_t m, int64_t n, int64_t k, int64_t pad, uint64_t seed) {
  mats x = {.ta = ta, .tb = tb, .acc = acc, .m = m, .n = n, .k = k};
  x.lda = (ta ? m : k) + pad;
  x.ldb = (tb ? k : n) + pad;
  x.ldc = n + pad;
  x.a = guarded(ta ? k : m, ta ? m : k, x.lda, seed);
  x.b = guarded(tb ? n : k, tb ? k : n, x.ldb, seed + 1);
  x.c0 = guarded(m, n, x.ldc, seed + 2);
  return x;
}

static void mats_free(mats *x) {
  g_free(x->a);
  g_free(x->b);
  g_free(x->c0);
}

/* The truth: the reference kernel on the whole of C, B transposed by hand. */
static float *reference(const mats *x) {
  float *c = g_memdup2(x->c0, (gsize)(x->m * x->ldc) * sizeof(float));
  const float *b = x->b;
  int64_t ldb = x->ldb;
  float *bt = NULL;
  if (x->tb) {
    bt = g_new(float, x->k * x->n);
    for (int64_t p = 0; p < x->k; p++)
      for (int64_t j = 0; j < x->n; j++) bt[p * x->n + j] = x->b[j * x->ldb + p];
    b = bt;
    ldb = x->n;
  }
  loom_sgemm_ref_rows(x->ta, 0, x->m, x->n, x->k, x->a, x->lda, b, ldb, x->acc, c, x->ldc);
  g_free(bt);
  return c;
}

static float *product(const mats *x, loom_pool *pool) {
  float *c = g_memdup2(x->c0, (gsize)(x->m * x->ldc) * sizeof(float));
  loom_sgemm(pool, x->ta, x->tb, x->m, x->n, x->k, x->a, x->lda, x->b, x->ldb, x->acc, c, x->ldc);
  return c;
}

static void assert_same(const mats *x, const float *want, const float *got, const char *level) {
  if (memcmp(want, got, (size_t)(x->m * x->ldc) * sizeof(float)) == 0) return;
  for (int64_t i = 0; i < x->m * x->ldc; i++)
    if (memcmp(&want[i], &got[i], sizeof(float)) != 0)
      g_error("%s: ta %d tb %d acc %d m %lld n %lld k %lld ldc %lld: C[%lld][%lld] = %.9g, reference %.9g", level,
              x->ta, x->tb, x->acc, (long long)x->m, (long long)x->n, (long long)x->k, (long long)x->ldc,
              (long long)(i / x->ldc), (long long)(i % x->ldc), got[i], want[i]);
}

/* Every level the machine has, each forced in turn; the level the process
 * started with is restored afterwards. Under LOOM_KERNELS (the suite's runs
 * per level) only the level it chose: the plain run covers the others. */
static void for_each_level(void (*fn)(const char *level, void *data), void *data) {
  loom_kernel_level start = loom_kernels_get()->level;
  if (g_getenv("LOOM_KERNELS")) {
    fn(loom_kernel_level_name(start), data);
    return;
  }
  for (int l = 0; l <= TEST_LAST_LEVEL; l++) {
    if (!loom_kernels_force((loom_kernel_level)l)) continue;
    fn(loom_kernel_level_name((loom_kernel_level)l), data);
  }
  g_assert_true(loom_kernels_force(start));
}

typedef struct shape {
  int64_t m, n, k;
} shape;

static void check_shapes(const char *level, void *data) {
  const GArray *shapes = data;
  for (guint s = 0; s < shapes->len; s++) {
    shape sh = g_array_index(shapes, shape, s);
    for (int combo = 0; combo < 8; combo++) {
      bool ta = combo & 1, tb = combo & 2, acc = combo & 4;
      int64_t pad = (s + (guint)combo) % 3 == 0 ? 0 : 5; /* tight and strided leading dimensions */
      mats x = mats_new(ta, tb, acc, sh.m, sh.n, sh.k, pad, 10 + s);
      float *want = reference(&x), *got = product(&x, NULL);
      assert_same(&x, want, got, level);
      g_free(want);
      g_free(got);
      mats_free(&x);
    }
  }
}

/* Every (m, n, k) from the odd sizes, then larger products that cross the
 * kernels' panel, block and tile edges (64 lanes, 128 or 512 steps of k, 48
 * or 96 columns per tile), and long k. */
static void test_matches_reference(void) {
  static const int64_t odd[] = {1, 3, 17, 64, 65};
  GArray *shapes = g_array_new(FALSE, FALSE, sizeof(shape));
  for (size_t i = 0; i < G_N_ELEMENTS(odd); i++)
    for (size_t j = 0; j < G_N_ELEMENTS(odd); j++)
      for (size_t p = 0; p < G_N_ELEMENTS(odd); p++) g_array_append_val(shapes, ((shape){odd[i], odd[j], odd[p]}));
  static const shape big[] = {{255, 97, 129}, {97, 255, 513}, {130, 200, 17}, {1, 4095, 3}, {4095, 1, 5},
                              {3, 17, 4095}, {200, 49, 300}};
  for (size_t i = 0; i < G_N_ELEMENTS(big); i++) g_array_append_val(shapes, big[i]);
  for_each_level(check_shapes, shapes);
  g_array_free(shapes, TRUE);
}

/* x's product on a pool of each thread count gives `want`'s bits. */
static void assert_pools_give(const mats *x, const float *want, const int *threads, size_t n_threads,
                              const char *level) {
  for (size_t t = 0; t < n_threads; t++) {
    loom_pool *pool = loom_pool_new(threads[t], NULL);
    g_assert_nonnull(pool);
    float *c = product(x, pool);
    assert_same(x, want, c, level);
    g_free(c);
    loom_pool_free(pool);
  }
}

/* The same bits without a pool and with 1, 2 and 7 threads, on products that
 * split into many tiles in each orientation. */
static void check_threads(const char *level, void *data) {
  (void)data;
  static const shape shapes[] = {{64, 500, 130}, {300, 260, 40}, {150, 33, 500}, {7, 300, 300}};
  static const int threads[] = {1, 2, 7};
  for (size_t s = 0; s < G_N_ELEMENTS(shapes); s++)
    for (int combo = 0; combo < 8; combo++) {
      mats x = mats_new(combo & 1, combo & 2, combo & 4, shapes[s].m, shapes[s].n, shapes[s].k, 3, 40 + s);
      float *alone = product(&x, NULL);
      assert_pools_give(&x, alone, threads, G_N_ELEMENTS(threads), level);
      g_free(alone);
      mats_free(&x);
    }
}

static void test_thread_counts(void) { for_each_level(check_threads, NULL); }

/* Each thread packs into a panel of its own, which bounds k per pass
 * (sgemm-simd.h, PACK_BUDGET): with 2 and 7 threads a long k goes in
 * passes, each going on from C. The reference's bits, accumulating or not,
 * in every orientation. */
static void check_long_k(const char *level, void *data) {
  (void)data;
  static const int threads[] = {2, 7};
  for (int combo = 0; combo < 8; combo++) {
    mats x = mats_new(combo & 1, combo & 2, combo & 4, 3, 20, 40000, 1, 70 + (uint64_t)combo);
    float *want = reference(&x);
    assert_pools_give(&x, want, threads, G_N_ELEMENTS(threads), level);
    g_free(want);
    mats_free(&x);
  }
}

static void test_long_k(void) { for_each_level(check_long_k, NULL); }

/* Each row of X·Wᵀ (and of X·W) computed alone equals the same row inside
 * batches of 3, 64 and 100, at every level. */
static void check_batches(const char *level, void *data) {
  (void)data;
  enum { K = 300, N = 130, MAXB = 100 };
  static const int64_t batches[] = {3, 64, 100};
  float *x = g_new(float, MAXB * K), *w = g_new(float, N * K), *y = g_new(float, MAXB * N), row[N];
  gradcheck_fill_uniform(x, MAXB * K, -1, 1, 3);
  gradcheck_fill_uniform(w, N * K, -1, 1, 4);
  for (int tb = 0; tb < 2; tb++)
    for (size_t b = 0; b < G_N_ELEMENTS(batches); b++) {
      loom_sgemm(NULL, false, tb, batches[b], N, K, x, K, w, tb ? K : N, false, y, N);
      for (int64_t r = 0; r < batches[b]; r++) {
        loom_sgemm(NULL, false, tb, 1, N, K, x + r * K, K, w, tb ? K : N, false, row, N);
        if (memcmp(row, y + r * N, sizeof row) != 0)
          g_error("%s: row %lld of a batch of %lld differs from the row alone", level, (long long)r,
                  (long long)batches[b]);
      }
    }
  g_free(x);
  g_free(w);
  g_free(y);
}

static void test_batch_independent(void) { for_each_level(check_batches, NULL); }

/* Products of one and two rows of C, which read B in place
 * (sgemm-rows-simd.h): columns around the vectors' and tasks' edges, k
 * around a block of steps, every transposition and accumulation, padded
 * leading dimensions; the operands hold exact zeros of both signs, and C
 * starts at −0 in places, so that a multiply-add the chain does not have
 * (a padded step, fma(x, 0, −0) = +0) changes a bit. Then a pool of 2 and 7
 * threads on wide products, and wider ones on one thread. */
static void signed_zeros(float *v, int64_t rows, int64_t cols, int64_t ld, uint64_t seed) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      uint64_t h = (seed * 31 + (uint64_t)r) * 131 + (uint64_t)c;
      if (h % 7 == 0) v[r * ld + c] = h % 2 ? -0.0f : 0.0f;
    }
}

static void check_few_rows(const char *level, void *data) {
  (void)data;
  static const int64_t ns[] = {1, 7, 15, 16, 17, 33, 64, 65, 200};
  static const int64_t ks[] = {1, 5, 15, 16, 17, 40, 257, 1024}; /* 1024: rows 4 KiB apart */
  static const int threads[] = {2, 7};
  for (int64_t m = 1; m <= 2; m++)
    for (size_t ni = 0; ni < G_N_ELEMENTS(ns); ni++)
      for (size_t ki = 0; ki < G_N_ELEMENTS(ks); ki++)
        for (int combo = 0; combo < 8; combo++) {
          int64_t n = ns[ni], k = ks[ki], pad = (ni + ki + (size_t)combo) % 2 ? 3 : 0;
          mats x = mats_new(combo & 1, combo & 2, combo & 4, m, n, k, pad, 90 + ni * 11 + ki);
          signed_zeros(x.a, x.ta ? k : m, x.ta ? m : k, x.lda, 1);
          signed_zeros(x.b, x.tb ? n : k, x.tb ? k : n, x.ldb, 2);
          for (int64_t i = 0; i < m; i++)
            for (int64_t j = 0; j < n; j += 3) x.c0[i * x.ldc + j] = -0.0f;
          float *want = reference(&x), *got = product(&x, NULL);
          assert_same(&x, want, got, level);
          g_free(want);
          g_free(got);
          mats_free(&x);
        }
  for (int64_t m = 1; m <= 2; m++)
    for (int combo = 0; combo < 8; combo++) {
      mats x = mats_new(combo & 1, combo & 2, combo & 4, m, 3000, 301, 5, 120 + (uint64_t)combo);
      float *want = reference(&x);
      assert_pools_give(&x, want, threads, G_N_ELEMENTS(threads), level);
      g_free(want);
      mats_free(&x);
    }
  /* Wider than one task of the dy·W form (ROWS_AXPY_FLOATS / m columns,
   * whose block fills its whole stack buffer) on one thread, and a short
   * last task. */
  for (int64_t m = 1; m <= 2; m++)
    for (int combo = 0; combo < 8; combo++) {
      mats x = mats_new(combo & 1, combo & 2, combo & 4, m, 2 * 4096 + 37, 17, combo % 2 ? 3 : 0, 140 + (uint64_t)combo);
      float *want = reference(&x), *got = product(&x, NULL);
      assert_same(&x, want, got, level);
      g_free(want);
      g_free(got);
      mats_free(&x);
    }
}

static void test_few_rows(void) { for_each_level(check_few_rows, NULL); }

/* A layer's forward (dense: X·Wᵀ + bias; swiglu: three products and the
 * gating between them, all through loom_sgemm): a sample gives the same
 * output alone as inside a batch. */
static loom_layer *layer_new(const char *type, const char *in_name, int64_t in, const char *out_name, int64_t out) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  g_assert_nonnull(l);
  g_assert_cmpint(loom_layer_set_int(l, in_name, in, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_int(l, out_name, out, &err), ==, 0);
  loom_shape in_shape = loom_shape_1d(in);
  g_assert_cmpint(loom_layer_build(l, &in_shape, 5, &err), ==, 0);
  return l;
}

static void check_layer(const char *level, const char *name, loom_layer *l, int64_t in, int64_t out) {
  enum { MAXB = 100 };
  static const int64_t batches[] = {3, 64, 100};
  loom_error err = {0};
  float *x = g_new(float, MAXB * in), *y = g_new(float, MAXB * out), *alone = g_new(float, out);
  gradcheck_fill_uniform(x, MAXB * in, -1, 1, 6);
  loom_pool *pool = loom_pool_new(2, NULL);
  loom_ctx ctx = {.pool = pool};
  for (size_t b = 0; b < G_N_ELEMENTS(batches); b++) {
    g_assert_cmpint(layer_forward(l, &ctx, x, y, batches[b], &err), ==, 0);
    for (int64_t r = 0; r < batches[b]; r += (r < 5 ? 1 : 17)) {
      g_assert_cmpint(layer_forward(l, &ctx, x + r * in, alone, 1, &err), ==, 0);
      if (memcmp(alone, y + r * out, (size_t)out * sizeof(float)) != 0)
        g_error("%s: %s sample %lld alone differs from inside a batch of %lld", level, name,
                (long long)r, (long long)batches[b]);
    }
  }
  loom_pool_free(pool);
  g_free(x);
  g_free(y);
  g_free(alone);
}

static void check_layers(const char *level, void *data) {
  (void)data;
  loom_layer *dense = layer_new("dense", "in_features", 1024, "out_features", 1000);
  check_layer(level, "dense", dense, 1024, 1000);
  loom_layer_free(dense);
  loom_layer *swiglu = layer_new("swiglu", "d_model", 96, "hidden", 250);
  check_layer(level, "swiglu", swiglu, 96, 96);
  loom_layer_free(swiglu);
}

static void test_layers_batch_independent(void) { for_each_level(check_layers, NULL); }

/* B from a decoder (loom_sgemm_decoded_b): rows handed out in blocks, never
 * beyond B, and the reference's bits with 0, 1, 2 and 7 threads. Where the
 * level declines (the reference, two rows or fewer, A's panels and a block
 * too large for its buffer, A of many more rows than B) C is untouched. */
typedef struct {
  loom_sgemm_b_rows base;
  const mats *x;
  int64_t n;
  int asked_out_of_range; /* atomic: called from the pool's threads */
} test_rows;

static void test_rows_decode(const loom_sgemm_b_rows *rows, int64_t r0, int64_t n, float *dst) {
  test_rows *t = (test_rows *)(void *)rows;
  if (r0 < 0 || n <= 0 || r0 + n > t->n) g_atomic_int_inc(&t->asked_out_of_range);
  for (int64_t r = 0; r < n; r++)
    memcpy(dst + r * t->x->k, t->x->b + (r0 + r) * t->x->ldb, (size_t)t->x->k * sizeof *dst);
}

static void check_decoded(const char *level, void *data) {
  (void)data;
  static const shape shapes[] = {{3, 5, 7},      {4, 47, 64},   {16, 48, 1000}, {17, 49, 333},
                                 {33, 200, 129}, {64, 96, 1024}, {80, 130, 1024}, {16, 20, 8000},
                                 {2, 30, 30},    {96, 64, 2048}, {300, 7, 40}};
  static const int threads[] = {0, 1, 2, 7};
  const bool vector_level = strcmp(level, "ref") != 0;
  int took = 0;
  for (size_t s = 0; s < G_N_ELEMENTS(shapes); s++) {
    mats x = mats_new(false, true, false, shapes[s].m, shapes[s].n, shapes[s].k, s % 2 ? 3 : 0, 90 + s);
    float *want = reference(&x);
    for (size_t ti = 0; ti < G_N_ELEMENTS(threads); ti++) {
      loom_pool *pool = threads[ti] ? loom_pool_new(threads[ti], NULL) : NULL;
      test_rows rows = {.base = {test_rows_decode}, .x = &x, .n = x.n};
      float *c = g_memdup2(x.c0, (gsize)(x.m * x.ldc) * sizeof(float));
      const bool ok = loom_sgemm_decoded_b(pool, x.m, x.n, x.k, x.a, x.lda, &rows.base, c, x.ldc);
      g_assert_cmpint(g_atomic_int_get(&rows.asked_out_of_range), ==, 0);
      if (ok) {
        assert_same(&x, want, c, level);
        took++;
      } else {
        g_assert_cmpmem(c, (gsize)(x.m * x.ldc) * sizeof(float), x.c0, (gsize)(x.m * x.ldc) * sizeof(float));
      }
      if (!vector_level || x.m <= 2 || x.m > 40 * x.n) g_assert_false(ok);
      g_free(c);
      loom_pool_free(pool);
    }
    g_free(want);
    mats_free(&x);
  }
  /* every vector level takes the shapes that fit, up to 1024 columns at
   * batch 64, at each of the 4 thread counts: the first five above (16 ×
   * 20 × 8000 never fits the resident budget; 80 × 130 × 1024 fits the
   * AVX2 level's panels of 16 rows, not the AVX-512 level's of 64, which
   * pad its 80 rows to 128: that level declined it on a Xeon, 20 taken) */
  if (vector_level) g_assert_cmpint(took, >=, 5 * 4);
}

static void test_decoded_b(void) { for_each_level(check_decoded, NULL); }

/* The reference itself against a double-precision sum: the order is a
 * choice, the values must still be the product. */
static void test_reference_is_the_product(void) {
  mats x = mats_new(false, false, false, 7, 9, 1000, 0, 77);
  float *c = reference(&x);
  for (int64_t i = 0; i < x.m; i++)
    for (int64_t j = 0; j < x.n; j++) {
      double exact = 0, mag = 0;
      for (int64_t p = 0; p < x.k; p++) {
        exact += (double)x.a[i * x.lda + p] * x.b[p * x.ldb + j];
        mag += fabs((double)x.a[i * x.lda + p] * x.b[p * x.ldb + j]);
      }
      /* k roundings of at most half an ulp of a partial sum each */
      g_assert_cmpfloat(fabs(c[i * x.ldc + j] - exact), <=, (double)x.k * 0x1p-24 * mag);
    }
  g_free(c);
  mats_free(&x);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sgemm/reference-is-the-product", test_reference_is_the_product);
  g_test_add_func("/sgemm/matches-reference", test_matches_reference);
  g_test_add_func("/sgemm/thread-counts", test_thread_counts);
  g_test_add_func("/sgemm/long-k-in-passes", test_long_k);
  g_test_add_func("/sgemm/few-rows", test_few_rows);
  g_test_add_func("/sgemm/batch-independent", test_batch_independent);
  g_test_add_func("/sgemm/layers-batch-independent", test_layers_batch_independent);
  g_test_add_func("/sgemm/decoded-b", test_decoded_b);
  return g_test_run();
}
