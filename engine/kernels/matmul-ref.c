/*
 * Reference matrix product. Each row of C is built as a sum of scaled rows of
 * B (i-k-j order): every C element takes its k terms in ascending order, one
 * fused multiply-add each (fmaf: a single rounding per term), independent of
 * any blocking. That chain is the order matmul.h fixes for every level; the
 * vector kernels (sgemm-simd.h) compute exactly it, so they are tested for
 * the same bits. fmaf is a libm call where the build's baseline has no FMA
 * instruction: this level is the truth, not the fast path.
 */
#include "kernels/matmul.h"

#include <math.h>
#include <string.h>

/* Columns of C handled together, so the C strip stays in L1 while k runs. */
#define COL_BLOCK 512

void loom_sgemm_ref_rows(bool trans_a, int64_t row_begin, int64_t row_end, int64_t n, int64_t k, const float *a,
                         int64_t lda, const float *b, int64_t ldb, bool accumulate, float *c, int64_t ldc) {
  for (int64_t i = row_begin; i < row_end; i++) {
    float *restrict crow = c + i * ldc;
    if (!accumulate) memset(crow, 0, (size_t)n * sizeof *crow);
    for (int64_t j0 = 0; j0 < n; j0 += COL_BLOCK) {
      int64_t j1 = j0 + COL_BLOCK < n ? j0 + COL_BLOCK : n;
      for (int64_t p = 0; p < k; p++) {
        const float aip = trans_a ? a[p * lda + i] : a[i * lda + p];
        const float *restrict brow = b + p * ldb;
        for (int64_t j = j0; j < j1; j++) crow[j] = fmaf(aip, brow[j], crow[j]);
      }
    }
  }
}
