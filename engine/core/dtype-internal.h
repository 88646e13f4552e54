/*
 * Internals of the dtype module, shared by dtype.c (the table), dtype-float.c
 * (floating formats), dtype-int.c (scaled formats), pack.c (bulk packing) and
 * the tests. Not installed.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "loom/dtype.h"

/* The packed layout is defined little-endian; multi-byte codes are copied with
 * memcpy, which is that layout only on little-endian hosts. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#  error "loom: the packed dtype layout is implemented for little-endian hosts only"
#endif

/* ---- floating formats (dtype-float.c) ---- */

/*
 * float32 -> float16 / bfloat16 / fp8 / fp4 code, round to nearest, ties to
 * even, subnormals kept. `saturate` picks the overflow rule: ±max, or ±inf for
 * formats that have it. NaN becomes the format's canonical quiet NaN with the
 * sign kept; formats without NaN (fp4) must be given no NaN (returns +0 then,
 * the callers check first).
 */
uint32_t loom_minifloat_encode(const loom_dtype_traits *t, float x, bool saturate);
double loom_minifloat_decode(const loom_dtype_traits *t, uint32_t code);
/* Magnitude codes of the format: largest finite, and NaN (0 if none). */
uint32_t loom_minifloat_max_code(const loom_dtype_traits *t);
uint32_t loom_minifloat_nan_code(const loom_dtype_traits *t);

int loom_dtype_encode_float64(float x, float s, uint64_t *code);
int loom_dtype_encode_float32(float x, float s, uint64_t *code);
int loom_dtype_encode_float16(float x, float s, uint64_t *code);
int loom_dtype_encode_bfloat16(float x, float s, uint64_t *code);
int loom_dtype_encode_fp8_e4m3(float x, float s, uint64_t *code);
int loom_dtype_encode_fp8_e5m2(float x, float s, uint64_t *code);
int loom_dtype_encode_fp4(float x, float s, uint64_t *code);
double loom_dtype_decode_float64(uint64_t code, float s);
double loom_dtype_decode_float32(uint64_t code, float s);
double loom_dtype_decode_float16(uint64_t code, float s);
double loom_dtype_decode_bfloat16(uint64_t code, float s);
double loom_dtype_decode_fp8_e4m3(uint64_t code, float s);
double loom_dtype_decode_fp8_e5m2(uint64_t code, float s);
double loom_dtype_decode_fp4(uint64_t code, float s);

/* Bulk: one row of float values to codes in `dst` (packed row) and back. */
int loom_float_quantize_row(const loom_dtype_traits *t, const float *src, int64_t n, uint8_t *dst, int64_t *bad);
/* lut: for formats of <= 8 bits, the decoded values of all 2^bits codes. */
void loom_float_build_lut(const loom_dtype_traits *t, float *lut);
/* The same table of an unscaled dtype of <= 8 bits, built once for the process. */
const float *loom_float_lut(const loom_dtype_traits *t);
void loom_float_dequantize_row(const loom_dtype_traits *t, const uint8_t *src, int64_t n, const float *lut, float *dst);

/* Rows [r0, r1) of loom_dtype_dequantize(d, src, rows, cols, ...): src and
 * dst are the whole tensor's, and whether the rows are written around the
 * caches follows the whole's size, so ranges of one dequantize on a pool
 * (core/weights.c) write as the whole would. */
int loom_dtype_dequantize_part(loom_dtype d, const uint8_t *src, int64_t rows, int64_t cols, int64_t r0, int64_t r1,
                               const float *scales, int64_t nscales, float *dst, loom_error *err);

/* ---- scaled formats (dtype-int.c) ---- */

/*
 * The exact q = clamp(rne(w / s), lo, qmax) for finite w and s > 0, lo being
 * -qmax (signed) or 0 (unsigned), computed with integers so that it is exact
 * for every qmax up to 2^64 - 1. Returns the magnitude; *neg the sign.
 */
uint64_t loom_rne_div_exact(float w, float s, uint64_t qmax, bool allow_negative, bool *neg);
/* The same through a double quotient: exact while qmax < 2^28 (see dtype-int.c). */
uint64_t loom_rne_div_fast(float w, float s, uint64_t qmax, bool allow_negative, bool *neg);

#define LOOM_DTYPE_SCALED_FNS(name)                                    \
  int loom_dtype_encode_##name(float x, float s, uint64_t *code);      \
  double loom_dtype_decode_##name(uint64_t code, float s);
LOOM_DTYPE_SCALED_FNS(int64)
LOOM_DTYPE_SCALED_FNS(int32)
LOOM_DTYPE_SCALED_FNS(int16)
LOOM_DTYPE_SCALED_FNS(int8)
LOOM_DTYPE_SCALED_FNS(int4)
LOOM_DTYPE_SCALED_FNS(int2)
LOOM_DTYPE_SCALED_FNS(uint64)
LOOM_DTYPE_SCALED_FNS(uint32)
LOOM_DTYPE_SCALED_FNS(uint16)
LOOM_DTYPE_SCALED_FNS(uint8)
LOOM_DTYPE_SCALED_FNS(uint4)
LOOM_DTYPE_SCALED_FNS(uint2)
LOOM_DTYPE_SCALED_FNS(ternary)
LOOM_DTYPE_SCALED_FNS(binary)
#undef LOOM_DTYPE_SCALED_FNS

/* Signed value of an n-bit code of a scaled kind (two's complement for signed
 * and ternary; 0 -> +1, 1 -> -1 for binary). */
int64_t loom_scaled_code_value_signed(const loom_dtype_traits *t, uint64_t code);
/* True when a code may appear in a valid packed tensor (the symmetric formats
 * never produce -2^(n-1); ternary never 0b10). */
bool loom_scaled_code_valid(const loom_dtype_traits *t, uint64_t code);

/* The morph's scale of one row in one pass with its finiteness check:
 * returns true (leaving *scale alone) when the row holds NaN or ±inf, else
 * sets *scale to loom_dtype_compute_scale's value. */
bool loom_scaled_row_scale(const loom_dtype_traits *t, const float *row, int64_t n, float *scale);
/* The scale of n values from the kernels' scale_scan statistic (the same
 * function loom_scaled_row_scale applies): max |w| / qmax (signed),
 * max(0, max w) / qmax (unsigned), mean |w| (ternary, binary), in double,
 * rounded to float, and a positive statistic never gives a scale of 0.
 * Inline: the integer product's activations take one per row
 * (kernels/qgemm.c), where a call cost a tenth of their quantization. */
static inline float loom_scaled_scale_of_stat(const loom_dtype_traits *t, double stat, int64_t n) {
  switch (t->kind) {
  case LOOM_DTYPE_KIND_SIGNED:
  case LOOM_DTYPE_KIND_UNSIGNED: stat /= (double)t->qmax; break;
  default: if (n > 0) stat /= (double)n; break; /* ternary, binary: mean |w| */
  }
  float s = (float)stat;
  if (stat > 0 && s == 0) s = 0x1p-149f; /* FLT_TRUE_MIN */
  return s;
}

int loom_scaled_quantize_row(const loom_dtype_traits *t, const float *src, int64_t n, float scale, uint8_t *dst,
                             int64_t *bad);
void loom_scaled_dequantize_row(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale, float *dst);

/* ---- packing (pack.c) ---- */

/* Stores code i of a row whose bytes were zeroed beforehand (sub-byte widths OR in). */
static inline void loom_pack_put(int bits, uint8_t *row, int64_t i, uint64_t code) {
  switch (bits) {
  case 1: case 2: case 4: {
    uint64_t bit = (uint64_t)i * (uint64_t)bits;
    row[bit >> 3] |= (uint8_t)(code << (bit & 7));
    break;
  }
  case 8: row[i] = (uint8_t)code; break;
  case 16: { uint16_t v = (uint16_t)code; memcpy(row + 2 * i, &v, 2); break; }
  case 32: { uint32_t v = (uint32_t)code; memcpy(row + 4 * i, &v, 4); break; }
  default: memcpy(row + 8 * i, &code, 8); break;
  }
}

static inline uint64_t loom_pack_get(int bits, const uint8_t *row, int64_t i) {
  switch (bits) {
  case 1: case 2: case 4: {
    uint64_t bit = (uint64_t)i * (uint64_t)bits;
    return (uint64_t)(row[bit >> 3] >> (bit & 7)) & ((1u << bits) - 1u);
  }
  case 8: return row[i];
  case 16: { uint16_t v; memcpy(&v, row + 2 * i, 2); return v; }
  case 32: { uint32_t v; memcpy(&v, row + 4 * i, 4); return v; }
  default: { uint64_t v; memcpy(&v, row + 8 * i, 8); return v; }
  }
}

/* Mask of the n low bits, n in 1..64. */
static inline uint64_t loom_code_mask(int bits) { return bits >= 64 ? UINT64_MAX : ((UINT64_C(1) << bits) - 1); }
