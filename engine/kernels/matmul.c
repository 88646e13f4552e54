/*
 * Dispatch of loom_sgemm: splits the rows of C over the pool and runs either
 * the reference kernel or single-threaded OpenBLAS on each range. The ranges
 * depend only on the problem size, and OpenBLAS is pinned to one thread, so
 * a range computes the same bits whichever thread runs it.
 */
#include "kernels/matmul.h"

#include <stdlib.h>
#include <string.h>

#ifdef LOOM_HAVE_BLAS
#include <cblas.h>
#include <pthread.h>
#endif

#ifdef LOOM_HAVE_BLAS
static bool use_blas = true;
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

bool loom_sgemm_blas_available(void) {
#ifdef LOOM_HAVE_BLAS
  return true;
#else
  return false;
#endif
}

typedef struct {
  bool trans_a;
  int64_t n, k;
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

static void gemm_range(void *arg, int64_t begin, int64_t end) {
  const gemm_job *j = arg;
#ifdef LOOM_HAVE_BLAS
  if (j->blas) {
    const float *a = j->trans_a ? j->a + begin : j->a + begin * j->lda;
    cblas_sgemm(CblasRowMajor, j->trans_a ? CblasTrans : CblasNoTrans, j->trans_b ? CblasTrans : CblasNoTrans,
                (blasint)(end - begin), (blasint)j->n, (blasint)j->k, 1.0f, a, (blasint)j->lda, j->b,
                (blasint)j->ldb, j->accumulate ? 1.0f : 0.0f, j->c + begin * j->ldc, (blasint)j->ldc);
    return;
  }
#endif
  loom_sgemm_ref_rows(j->trans_a, begin, end, j->n, j->k, j->a, j->lda, j->b, j->ldb, j->accumulate, j->c, j->ldc);
}

/* Rows per range: about a million multiply-adds each, at least 16 rows (so
 * BLAS gets blocks it can run efficiently), so small products stay on one
 * thread and large ones still split into many ranges. Depends only on the
 * problem size. */
static int64_t row_grain(int64_t n, int64_t k) {
  int64_t per_row = n * (k > 0 ? k : 1);
  if (per_row < 1) per_row = 1;
  int64_t g = ((int64_t)1 << 20) / per_row;
  return g < 16 ? 16 : g;
}

void loom_sgemm(loom_pool *pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float *a,
                int64_t lda, const float *b, int64_t ldb, bool accumulate, float *c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    if (!accumulate)
      for (int64_t i = 0; i < m; i++) memset(c + i * ldc, 0, (size_t)n * sizeof *c);
    return;
  }
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
            acc += aip * b[jj * ldb + p];
          }
          crow[jj] = acc;
        }
      }
      return;
    }
  }
  loom_pool_for(pool, m, row_grain(n, k), gemm_range, &job);
  free(packed);
}
