/*
 * Element-wise activations in vector registers (layers/activation.c is the
 * reference and the caller). The layer computes every value in double through
 * libm and rounds it once to float32; a vector level computes the same
 * formula in double with its own exp and expm1, whose results differ from
 * libm's in the last bits of the double. Rounded to float32 the two agree
 * unless a rounding boundary of float32 (a midpoint between two floats) lies
 * between them, so every lane whose double lies within LOOM_ACT_WINDOW
 * (relative) of such a midpoint, or whose output is not a normal float, or
 * whose input lies where the formula amplifies the difference (cancellation
 * near 1 − tanh², a derivative's root), is marked for the caller to compute
 * again through the reference. The marked lanes are about 2^-13 of the
 * others; the results are the reference's bits at every level (tested
 * against it, and checked over every float32 input by tests/bench/bench-act).
 * See docs/kernels.md, "Activations".
 */
#pragma once
#include <stdint.h>

typedef enum loom_act_fn {
  LOOM_ACT_SIGMOID,
  LOOM_ACT_SILU,
  LOOM_ACT_TANH,
  LOOM_ACT_ELU, /* alpha: its factor */
  LOOM_ACT_FN_COUNT
} loom_act_fn;

/* Elements a call takes at most: redo has LOOM_ACT_BLOCK / 64 words. */
#define LOOM_ACT_BLOCK 1024

/* Forward (dy NULL: out = f(x)) or backward (out = dy · f'(x)) of n ≤
 * LOOM_ACT_BLOCK elements; bit i of redo set where out[i] must be computed
 * again by the reference (out[i] then holds garbage). Returns the number of
 * such lanes. */
typedef int64_t (*loom_act_fn_kernel)(loom_act_fn fn, double alpha, const float *x, const float *dy, float *out,
                                      int64_t n, uint64_t *redo);
