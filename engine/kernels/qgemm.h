/*
 * Integer products of packed weights and activations quantized on the fly
 * (issue 13, item 2): Y = X · Wᵀ for W a rows × cols tensor packed at int8,
 * uint8, int4, uint4, int2, uint2, ternary, binary or fp4, and X a batch ×
 * cols float32 matrix. batch = 1 is the GEMV. fp4's sixteen values are the
 * halves of integers (0, ±0.5 … ±6): its q is twice the value
 * (LOOM_QGEMM_FP4_TWICE) and its s_w is 1/2, a scale the format does not
 * store.
 *
 * Each activation row b is quantized exactly as a weight row at int8 is
 * (docs/dtypes.md: s_x = max|x| / 127, xq = clamp(rne(x / s_x), ±127)), the
 * codes are multiplied as integers and summed exactly in 64 bits, and
 *
 *   Y[b, r] = float32(double(Σ_c q[r, c] · xq[b, c]) · (double(s_w[r]) · double(s_x[b])))
 *
 * An integer sum does not depend on its order, so every kernel level (the
 * plain C reference, AVX-512 VNNI) and every thread count give the same bits.
 * Against the float product of the dequantized weights the result differs by
 * the activation quantization: at most s_w · s_x · Σ_c |q[r, c]| / 2, plus
 * float32 rounding (docs/qgemm.md, tests/engine/test-qgemm.c). An
 * activation row holding NaN or ±inf has no int8 scale: its outputs are NaN.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loom/dtype.h"
#include "loom/error.h"
#include "loom/pool.h"

/* What a level's loom_qgemm_rows_fn (kernels/cpu.h) reads. */
typedef struct loom_qgemm_job {
  const loom_dtype_traits *t;
  const uint8_t *packed; /* rows of row_bytes */
  size_t row_bytes;
  int64_t rows, cols, batch;
  const float *scales; /* one per row, or one for all (nscales == 1) */
  int64_t nscales;
  /* Quantized activations, batch rows of xstride bytes each (cols rounded up
   * to whole 64-byte blocks of codes, zero beyond cols), twice: xq in column
   * order, xp permuted so that a vector kernel pairs the bit fields of 64
   * code bytes with 64 consecutive activation bytes: within the block of
   * m = 8 / bits · 64 columns that starts at c0, xp[c0 + k·64 + j] =
   * xq[c0 + j·m + k] (field k of byte j holds column c0 + j·m + k). */
  const int8_t *xq, *xp;
  /* NULL, or (where the level asks for it: loom_kernels.qgemm_tiles) xq
   * once more in tiles of activation rows: the tile of nb rows from row b0
   * holds at xt[b0 · xstride + (g · nb + i) · 4 + k] the byte
   * xq[(b0 + i) · xstride + 4g + k], so the 4 codes of one group of columns
   * of every row of a tile lie together. LOOM_QGEMM_TILES_VNNI: tiles of
   * LOOM_QGEMM_TILE_ROWS rows from row 0, the last rows in tiles of 4, 2
   * and 1; LOOM_QGEMM_TILES_AMX: tiles of LOOM_QGEMM_AMX_TILE_ROWS rows, the
   * last one's rows past the batch zero (xt then holds the batch rounded up
   * to whole tiles). */
  const int8_t *xt;
  int64_t xstride;
  const float *sx;      /* per batch row; 0 for a row of zeros */
  const int64_t *xsum;  /* Σ_c xq[b, c] per batch row */
  const uint8_t *bad;   /* per batch row: 1 when x held NaN or ±inf */
  float *y;             /* batch × rows */
} loom_qgemm_job;

/* q of fp4 code c (sign, 2 exponent bits, 1 mantissa bit): twice its value,
 * in code order, as the bytes of a 16-entry vpshufb table (the vector
 * levels add LOOM_QGEMM_FP4_OFFSET to make them unsigned operands, as the
 * XOR of a signed code does). test-qgemm checks it against the codec. */
#define LOOM_QGEMM_FP4_TWICE 0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12
enum { LOOM_QGEMM_FP4_OFFSET = 12 };
extern const int8_t loom_qgemm_fp4_twice[16];

/* The one place an exact integer sum becomes a float (every level calls it). */
static inline float loom_qgemm_finish(const loom_qgemm_job *j, int64_t b, int64_t r, int64_t isum) {
  const float sw = j->scales[j->nscales == 1 ? 0 : r];
  return (float)((double)isum * ((double)sw * (double)j->sx[b]));
}

/* The smallest batch the VNNI level multiplies 8-bit and 4-bit codes from
 * weight panels (qgemm-vnni-panel.c); 4-bit rows longer than
 * LOOM_QGEMM_PANEL4_SHORT_COLS from LOOM_QGEMM_PANEL4_LONG_MIN_BATCH, as
 * the row kernels multiply those fields in place faster below it
 * (docs/qgemm.md). tests/engine/test-qgemm.c covers both sides. */
enum {
  LOOM_QGEMM_PANEL_MIN_BATCH = 16,
  LOOM_QGEMM_PANEL4_SHORT_COLS = 1024,
  LOOM_QGEMM_PANEL4_LONG_MIN_BATCH = 32,
  LOOM_QGEMM_TILE_ROWS = 8,
  LOOM_QGEMM_AMX_TILE_ROWS = 16,
  LOOM_QGEMM_AMX_MIN_BATCH = 16,
  LOOM_QGEMM_AMX_SHORT_COLS = 256,
  LOOM_QGEMM_AMX_SHORT_MIN_BATCH = 8,
  LOOM_QGEMM_PANEL_ROWS = 32
};

/* Which products go to the short-row product (loom_kernels.qgemm_short,
 * qgemm-short.c) at level k: false where k has none. The shapes where it
 * measured faster than the row kernels (and, at the VNNI level, the 8-bit
 * panel GEMM) on CPUs of each level (docs/qgemm.md): at the AVX2 level
 * (Zen 3, and a Xeon forced to it) from a batch of 16 at any width, of 8 at
 * most 512 columns, of 2 for short rows (binary codes from 1); at the
 * AVX-512 level (the Xeon) for shorter rows only. At most
 * LOOM_QGEMM_SHORT_MAX_COLS columns: its 32-bit sums stay exact up to
 * 66,052. */
enum { LOOM_QGEMM_SHORT_MAX_COLS = 65536 };
struct loom_kernels;
bool loom_qgemm_takes_short(const struct loom_kernels *k, int bits, int64_t cols, int64_t batch);
/* Which products go to the panel GEMM at level k (loom_kernels.qgemm_tiles;
 * the short-row product's shapes excepted): false where k has none. The
 * AMX level's tiles (qgemm-amx.c) take every dtype from batch
 * LOOM_QGEMM_AMX_MIN_BATCH, rows of at most LOOM_QGEMM_AMX_SHORT_COLS
 * columns from LOOM_QGEMM_AMX_SHORT_MIN_BATCH, but binary rows of at most
 * half that (docs/qgemm.md). */
bool loom_qgemm_takes_panel(const struct loom_kernels *k, int bits, int64_t cols, int64_t batch);

/* The reference's qgemm_prepare (kernels/cpu.h), one byte at a time. */
void loom_qgemm_prepare_ref(int bits, const int8_t *xq, int8_t *xp, int64_t len, int64_t *xsum);

/* True for the dtypes above. */
bool loom_qgemm_supports(loom_dtype d);

/* `packed`: rows of loom_dtype_row_bytes(d, cols) bytes; scales: rows of
 * them or 1 (none for fp4: NULL and 0). x: batch × cols, y: batch × rows,
 * both row-major. The pool may be NULL (one thread). */
int loom_qgemm_packed(loom_pool *pool, loom_dtype d, const uint8_t *packed, int64_t rows, int64_t cols,
                      const float *scales, int64_t nscales, int64_t batch, const float *x, float *y, loom_error *err);
