/*
 * Matrix products for the layers. Row-major float32 with leading dimensions:
 *
 *   C[m×n] = (accumulate ? C : 0) + op(A)·op(B)
 *
 * op(A) is m×k (A itself is k×m with lda >= m when trans_a), op(B) is k×n
 * (B is n×k with ldb >= k when trans_b). Rows of C are split into ranges
 * whose size depends only on (m, n, k); every element of C is summed over k
 * in ascending order by exactly one range, so results are bit-identical for
 * any thread count (and any pool).
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "loom/pool.h"

void loom_sgemm(loom_pool *pool, bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float *a,
                int64_t lda, const float *b, int64_t ldb, bool accumulate, float *c, int64_t ldc);

/* The plain C kernel for rows [row_begin, row_end) of C, with B already in
 * k×n form (ldb >= n). Exposed for tests and benchmarks. */
void loom_sgemm_ref_rows(bool trans_a, int64_t row_begin, int64_t row_end, int64_t n, int64_t k, const float *a,
                         int64_t lda, const float *b, int64_t ldb, bool accumulate, float *c, int64_t ldc);

/* Forces the reference kernel even where BLAS is available (benchmarks, tests).
 * Not thread-safe with concurrent loom_sgemm calls; set it up front. */
void loom_sgemm_use_blas(bool use);
bool loom_sgemm_blas_available(void);
