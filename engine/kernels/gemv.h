/*
 * Matrix-vector products that read a weight tensor in its packed dtype
 * directly (issue 13, item 2): y[r] = Σ_c W[r, c] · x[c], W being the
 * dequantized weights, without ever holding a float32 copy of W.
 *
 * Each row is decoded a block of columns at a time into an L1-resident buffer
 * by the level's row codec (the same bits as the reference dequantize, see
 * docs/kernels.md) and multiplied into 64 fused multiply-add lanes
 * (loom_kernels.dot_acc64), which are then added in a fixed tree. The order
 * of every operation depends only on the column count, so the result is
 * bit-identical at every kernel level (ref, avx2, avx512) and for any number
 * of threads; against float32 math in another order it differs by float32
 * rounding only (docs/kernels.md gives the bound the tests use).
 */
#pragma once
#include <stdint.h>

#include "loom/dtype.h"
#include "loom/error.h"
#include "loom/pool.h"

/* Columns decoded at a time: 2 KiB of floats, a multiple of 64 (the lanes)
 * and of 8 (whole bytes at every packed width). */
#define LOOM_GEMV_BLOCK 512

/* `packed` rows of loom_dtype_row_bytes(d, cols) bytes; scales as in
 * loom_dtype_dequantize (one per row, one per tensor, or none). The pool may
 * be NULL (one thread). */
int loom_gemv_packed(loom_pool *pool, loom_dtype d, const uint8_t *packed, int64_t rows, int64_t cols,
                     const float *scales, int64_t nscales, const float *x, float *y, loom_error *err);
/* The same for m activation vectors (x: m × cols, y: m × rows), each
 * output the bits loom_gemv_packed gives for its vector alone; the vectors
 * go LOOM_GEMV_INPUTS at a time, so that a level can decode each row once
 * for several of them. */
int loom_gemv_packed_batch(loom_pool *pool, loom_dtype d, const uint8_t *packed, int64_t rows, int64_t cols,
                           const float *scales, int64_t nscales, int64_t m, const float *x, float *y,
                           loom_error *err);

/* The fixed reduction of the 64 lanes: pairs (k, k + w) for w = 32, 16, ..., 1. */
float loom_gemv_reduce64(float *acc);
