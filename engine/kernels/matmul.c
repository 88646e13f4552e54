/*
 * Dispatch of loom_sgemm: the packed kernels of the vector level in use
 * (sgemm-simd.h), or the reference kernel on tiles of C (the reference level,
 * other architectures, or no memory for packing). Both compute the order
 * matmul.h fixes, so they give the same bits. OpenBLAS, single-threaded per
 * tile, only when a benchmark or test asks for it (loom_sgemm_use_blas).
 */
#include "kernels/matmul.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu.h"

#ifdef LOOM_HAVE_BLAS
#include <cblas.h>
#endif

#ifdef LOOM_HAVE_BLAS
static bool use_blas = false;
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
/* The engine threads itself; OpenBLAS's own threads would make the result of
 * one call depend on how OpenBLAS splits it. */
static void blas_init(void) { openblas_set_num_threads(1); }
#endif

void loom_sgemm_use_blas(bool use) {
#ifdef LOOM_HAVE_BLAS
  use_blas = use;
#else
  (void)use;
#endif
}

static inline bool use_blas_now(void) {
#ifdef LOOM_HAVE_BLAS
  return use_blas;
#else
  return false;
#endif
}

bool loom_sgemm_blas_available(void) {
#ifdef LOOM_HAVE_BLAS
  return true;
#else
  return false;
#endif
}

typedef struct {
  bool trans_a;
  int64_t m, n, k;
  const float *a;
  int64_t lda;
  const float *b; /* k×n (packed if the caller's B was transposed) unless BLAS takes B as given */
  int64_t ldb;
  bool trans_b;   /* only for the BLAS path, which transposes by itself */
  bool accumulate;
  float *c;
  int64_t ldc;
  bool blas;
} gemm_job;

/*
 * C is cut into tiles of rows × columns. A tile reads its rows of A and its
 * columns of B once, so a short-and-wide product (a batch of 64 through a
 * 1024×1024 dense layer) splits over columns instead of re-reading all of B
 * for every slice of rows. The tiling is a function of (m, n, k) only.
 */
typedef struct {
  gemm_job job;
  int64_t tile_rows, tile_cols, col_tiles;
} gemm_tiling;

static void gemm_tiles(void *arg, int64_t begin, int64_t end) {
  const gemm_tiling *t = arg;
  const gemm_job *j = &t->job;
  for (int64_t tile = begin; tile < end; tile++) {
    int64_t r0 = (tile / t->col_tiles) * t->tile_rows;
    int64_t c0 = (tile % t->col_tiles) * t->tile_cols;
    int64_t r1 = r0 + t->tile_rows;
    int64_t c1 = c0 + t->tile_cols;
    if (r1 > j->m) r1 = j->m;
    if (c1 > j->n) c1 = j->n;
#ifdef LOOM_HAVE_BLAS
    if (j->blas) {
      const float *a = j->trans_a ? j->a + r0 : j->a + r0 * j->lda;
      const float *b = j->trans_b ? j->b + c0 * j->ldb : j->b + c0;
      cblas_sgemm(CblasRowMajor, j->trans_a ? CblasTrans : CblasNoTrans, j->trans_b ? CblasTrans : CblasNoTrans,
                  (blasint)(r1 - r0), (blasint)(c1 - c0), (blasint)j->k, 1.0f, a, (blasint)j->lda, b,
                  (blasint)j->ldb, j->accumulate ? 1.0f : 0.0f, j->c + r0 * j->ldc + c0, (blasint)j->ldc);
      continue;
    }
#endif
    loom_sgemm_ref_rows(j->trans_a, r0, r1, c1 - c0, j->k, j->a, j->lda, j->b + c0, j->ldb, j->accumulate, j->c + c0,
                        j->ldc);
  }
}

/* About 16M multiply-adds per tile: big enough for BLAS to run at full speed,
 * small enough that large products spread over the threads. Tiles are whole
 * rows unless a row band alone would exceed that, then columns in multiples
 * of 64. Small products stay one tile, on one thread. */
static void choose_tiling(gemm_tiling *t, int64_t m, int64_t n, int64_t k) {
  const int64_t target = (int64_t)1 << 24;
  int64_t kk = k > 0 ? k : 1;
  int64_t rows = target / (n * kk);
  if (rows >= m) {
    t->tile_rows = m;
  } else if (rows >= 16) {
    t->tile_rows = rows;
  } else {
    t->tile_rows = m < 64 ? m : 64;
  }
  t->tile_cols = n;
  if (t->tile_rows * n * kk > target && n > 64) {
    int64_t cols = target / (t->tile_rows * kk);
    cols = cols < 64 ? 64 : cols / 64 * 64;
    if (cols < n) t->tile_cols = cols;
  }
  t->col_tiles = (n + t->tile_cols - 1) / t->tile_cols;
}

bool loom_sgemm_decoded_b(loom_pool *pool, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                          const loom_sgemm_b_rows *rows, float *c, int64_t ldc) {
#ifdef LOOM_KERNELS_X86
  if (m <= 0 || n <= 0 || k <= 0 || use_blas_now()) return false;
  loom_sgemm_args args = {.trans_b = true, .m = m, .n = n, .k = k, .a = a, .lda = lda, .c = c, .ldc = ldc,
                          .b_rows = rows};
  loom_kernel_level level = loom_kernels_get()->level;
  if (level >= LOOM_KERNELS_AVX512) return loom_sgemm_level_avx512(pool, &args);
  if (level == LOOM_KERNELS_AVX2) return loom_sgemm_level_avx2(pool, &args);
#else
  (void)pool, (void)m, (void)n, (void)k, (void)a, (void)lda, (void)rows, (void)c, (void)ldc;
#endif
  return false;
}

void loom_sgemm(loom_pool *pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float *a,
                int64_t lda, const float *b, int64_t ldb, bool accumulate, float *c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; i++) memset(c + i * ldc, 0, (size_t)n * sizeof *c);
    return;
  }
#ifdef LOOM_KERNELS_X86
  if (!use_blas_now()) {
    loom_sgemm_args args = {.trans_a = trans_a, .trans_b = trans_b, .accumulate = accumulate, .m = m, .n = n,
                            .k = k, .a = a, .lda = lda, .b = b, .ldb = ldb, .c = c, .ldc = ldc};
    loom_kernel_level level = loom_kernels_get()->level;
    if (level >= LOOM_KERNELS_AVX512 && loom_sgemm_level_avx512(pool, &args)) return;
    if (level == LOOM_KERNELS_AVX2 && loom_sgemm_level_avx2(pool, &args)) return;
  }
#endif
  gemm_job job = {.trans_a = trans_a, .n = n, .k = k, .a = a, .lda = lda, .b = b, .ldb = ldb,
                  .trans_b = trans_b, .accumulate = accumulate, .c = c, .ldc = ldc};
  float *packed = NULL;
#ifdef LOOM_HAVE_BLAS
  if (use_blas && m <= INT32_MAX && n <= INT32_MAX && k <= INT32_MAX && lda <= INT32_MAX && ldb <= INT32_MAX &&
      ldc <= INT32_MAX) {
    pthread_once(&blas_once, blas_init);
    job.blas = true;
  }
#endif
  if (!job.blas && trans_b) {
    /* The reference kernel wants B as k×n rows; transpose once, shared read-only. */
    packed = malloc((size_t)k * (size_t)n * sizeof *packed);
    if (packed) {
      for (int64_t p = 0; p < k; p++)
        for (int64_t jj = 0; jj < n; jj++) packed[p * n + jj] = b[jj * ldb + p];
      job.b = packed;
      job.ldb = n;
    } else {
      /* No memory for the copy: fall back to an element-wise strided walk,
       * same summation order, so the same bits. */
      for (int64_t i = 0; i < m; i++) {
        float *crow = c + i * ldc;
        for (int64_t jj = 0; jj < n; jj++) {
          float acc = accumulate ? crow[jj] : 0.0f;
          for (int64_t p = 0; p < k; p++) {
            float aip = trans_a ? a[p * lda + i] : a[i * lda + p];
            acc = fmaf(aip, b[jj * ldb + p], acc);
          }
          crow[jj] = acc;
        }
      }
      return;
    }
  }
  job.m = m;
  gemm_tiling tiling = {.job = job};
  choose_tiling(&tiling, m, n, k);
  int64_t row_tiles = (m + tiling.tile_rows - 1) / tiling.tile_rows;
  loom_pool_for(pool, row_tiles * tiling.col_tiles, 1, gemm_tiles, &tiling);
  free(packed);
}
