/*
 * The inner loops of the attention core (attention-core.c), per kernel level:
 * plain C, AVX2 and AVX-512, chosen with the engine's level (kernels/cpu.h,
 * LOOM_KERNELS). Every level computes the same bits: each product is a chain
 * of fused multiply-adds in a fixed order (lanes only ever hold independent
 * chains), a row sum goes through 16 lanes added in a fixed tree, and the
 * exponential is one formula written for scalars and vectors alike.
 *
 * Rows of keys are padded to ATT_LANES (zeros), head vectors to ATT_LANES
 * columns, so the vector loops have no tails. See docs/layers.md, attention.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu.h"

#define ATT_LANES 16
/* Rows (or columns) one call of a block kernel serves. */
#define ATT_BLOCK 4

static inline int64_t att_pad16(int64_t n) { return (n + ATT_LANES - 1) / ATT_LANES * ATT_LANES; }

typedef struct att_kernels {
  /* s[r·lds + j] = Σ_d q[r·ldq + d] · kt[d·ldk + j] for r < rows ≤ ATT_BLOCK
   * and j < n (a multiple of 16): per element a chain of fmas over d
   * ascending from 0. */
  void (*scores)(const float *q, int64_t ldq, int rows, const float *kt, int64_t ldk, int64_t hd, int64_t n,
                 float *s, int64_t lds);
  /* The masked softmax of one row: t_j = s_j·scale; the keys j < vis not
   * marked in pad (NULL: none) take part; p_j = e_j / Σ e with
   * e_j = att_exp(t_j − max t), 0 for the others, for every j < pad16(vis).
   * A row with no finite maximum gives zeros. */
  void (*softmax)(const float *s, int64_t vis, const uint8_t *pad, float scale, float *p);
  /* Its backward in place: dp_j ← p_j·(dp_j − D)·scale, D = Σ p_j·dp_j over
   * j < pad16(vis) (fmas into 16 lanes, j mod 16). */
  void (*softmax_backward)(const float *p, float *dp, int64_t vis, float scale);
  /* o[r·ldo + e] = Σ_{j < n[r]} a[r·lda + j] · x[j·ldx + e] for r < rows ≤
   * ATT_BLOCK and e < w (a multiple of 16): fmas over j ascending from 0. */
  void (*mix)(const float *a, int64_t lda, int rows, const int64_t *n, const float *x, int64_t ldx, int64_t w,
              float *o, int64_t ldo);
  /* The transposed mix: o[c·ldo + e] = (accumulate ? o[c·ldo + e] : 0) +
   * Σ_{lo[c] ≤ i < hi} a[i·lda + c] · x[i·ldx + e] for c < cols ≤ ATT_BLOCK
   * and e < w (a multiple of 16): fmas over i ascending. */
  void (*mix_t)(const float *a, int64_t lda, int cols, const int64_t *lo, int64_t hi, const float *x, int64_t ldx,
                int64_t w, float *o, int64_t ldo, bool accumulate);
} att_kernels;

/* The table of the engine's current kernel level. */
const att_kernels *att_kernels_get(void);
/* The table of one level, or NULL where the CPU or the build lacks it. */
const att_kernels *att_kernels_for(loom_kernel_level level);

/* e^x for x ≤ 0 (the softmax's argument): 0 below −87 (where e^x nears the
 * smallest normal float), otherwise 2^n · P(r) with n = rint(x·log2 e),
 * r = x − n·ln 2 in two fused steps and P a degree-7 Taylor polynomial by
 * Horner's rule; within 2 ulp of e^x. NaN stays NaN. */
float att_exp(float x);
#define ATT_EXP_MIN (-87.0f)
#define ATT_LOG2E 1.44269504f
#define ATT_ROUNDER 12582912.0f /* 1.5·2^23: adding it rounds to an integer */
#define ATT_ROUNDER_BITS 0x4b400000u
#define ATT_LN2_HI 0.693147182f /* ln 2 = ATT_LN2_HI + ATT_LN2_LO */
#define ATT_LN2_LO (-1.90465421e-09f)
#define ATT_EXP_C3 (1.0f / 6.0f)
#define ATT_EXP_C4 (1.0f / 24.0f)
#define ATT_EXP_C5 (1.0f / 120.0f)
#define ATT_EXP_C6 (1.0f / 720.0f)
#define ATT_EXP_C7 (1.0f / 5040.0f)

#if defined(LOOM_KERNELS_X86)
void att_kernels_fill_avx2(att_kernels *k);
void att_kernels_fill_avx512(att_kernels *k);
#endif
