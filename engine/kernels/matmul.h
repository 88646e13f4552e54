/*
 * Matrix products for the layers. Row-major float32 with leading dimensions:
 *
 *   C[m×n] = (accumulate ? C : 0) + op(A)·op(B)
 *
 * op(A) is m×k (A itself is k×m with lda >= m when trans_a), op(B) is k×n
 * (B is n×k with ldb >= k when trans_b).
 *
 * The order of every sum is fixed: each element of C is one chain of fused
 * multiply-adds over k in ascending order, c = fma(a_ip, b_pj, c), starting
 * from 0 (or from C when accumulating). It depends on nothing but k: not on
 * m or n (a sample gives the same bits alone or inside any batch), not on
 * the tiling, the thread count or the kernel level (LOOM_KERNELS). See
 * docs/sgemm.md.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/pool.h"

void loom_sgemm(loom_pool *pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float *a,
                int64_t lda, const float *b, int64_t ldb, bool accumulate, float *c, int64_t ldc);

/* The plain C kernel for rows [row_begin, row_end) of C, with B already in
 * k×n form (ldb >= n): the reference every level is tested against. Exposed
 * for tests and benchmarks. */
void loom_sgemm_ref_rows(bool trans_a, int64_t row_begin, int64_t row_end, int64_t n, int64_t k, const float *a,
                         int64_t lda, const float *b, int64_t ldb, bool accumulate, float *c, int64_t ldc);

/* Sends loom_sgemm to single-threaded OpenBLAS per tile instead of the
 * engine's kernels (off by default: OpenBLAS's summation order depends on the
 * shape, so a sample's bits would depend on its batch). For benchmarks and
 * tests that compare the two. Not thread-safe with concurrent loom_sgemm
 * calls; set it up front. */
void loom_sgemm_use_blas(bool use);
bool loom_sgemm_blas_available(void);

/* B given as rows to decode rather than in memory: a weight store at rest
 * (layers/layer-product.c). decode writes rows [r0, r0 + n) of the n_B × k
 * matrix into dst, row r at dst + (r − r0) · k; it is called from the
 * pool's threads, each for rows of its own, and must not fail (the caller
 * checks what could fail first). Embed it first in a struct of your own. */
typedef struct loom_sgemm_b_rows {
  void (*decode)(const struct loom_sgemm_b_rows *rows, int64_t r0, int64_t n, float *dst);
} loom_sgemm_b_rows;

/* C[m×n] = A·Bᵀ (A m×k, lda >= k; B's n rows of k from `rows`), each block
 * of B's rows decoded once per thread into a buffer that stays in cache
 * while every panel of A passes over it. The same bits as loom_sgemm(pool,
 * false, true, …) on the decoded B: the same fused multiply-add chains.
 * False, C untouched, where the level has no such path, would rather lay
 * its lanes along B's rows (A of many more rows than B), or A's panels and
 * a block do not fit its buffer (docs/sgemm.md): decode B yourself then. */
bool loom_sgemm_decoded_b(loom_pool *pool, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
                          const loom_sgemm_b_rows *rows, float *c, int64_t ldc);

/* ---- internal: the vector levels (sgemm-simd.h) ------------------------------ */

typedef struct loom_sgemm_args {
  bool trans_a, trans_b, accumulate;
  int64_t m, n, k; /* all > 0 */
  const float *a;
  int64_t lda;
  const float *b; /* NULL when b_rows gives B (trans_b, no accumulate) */
  int64_t ldb;
  float *c;
  int64_t ldc;
  const loom_sgemm_b_rows *b_rows;
} loom_sgemm_args;

/* The packed product of one level, on the pool; false (C untouched) when the
 * packing buffer cannot be had. */
bool loom_sgemm_level_avx2(loom_pool *pool, const loom_sgemm_args *a);
bool loom_sgemm_level_avx512(loom_pool *pool, const loom_sgemm_args *a);
/* Products of at most 2 rows (a->m), reading B in place (sgemm-rows-simd.h);
 * the level functions above call them. */
void loom_sgemm_rows_avx2(loom_pool *pool, const loom_sgemm_args *a);
void loom_sgemm_rows_avx512(loom_pool *pool, const loom_sgemm_args *a);
