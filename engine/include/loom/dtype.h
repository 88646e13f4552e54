/*
 * Numeric types. Every weight store computes at one of 21 dtypes; this header
 * holds the one table that describes them (loom_dtype_traits) and the
 * reference conversions. Menus, estimates, serializers and tests read the
 * table; nothing else lists dtypes. The rules are written in docs/dtypes.md.
 *
 * Codes. A value of a dtype is stored as an n-bit code (n = traits->bits):
 * float kinds use their standard bit pattern, signed kinds n-bit two's
 * complement, unsigned kinds the plain integer, ternary the 2-bit two's
 * complement of -1/0/+1, binary one bit (0 = +1, 1 = -1).
 *
 * Packing (one definition for memory, disk and GPU): the codes of one row are
 * laid out LSB-first in little-endian bytes; code i of a row occupies bits
 * [i*n, i*n + n) of the row, bit k of the row being bit (k % 8) of byte k / 8.
 * Each row is padded with zero bits to a whole byte.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stable numeric IDs: they are written into model files. Never renumber. */
typedef enum loom_dtype {
  LOOM_DTYPE_FLOAT64 = 0,
  LOOM_DTYPE_FLOAT32 = 1,
  LOOM_DTYPE_FLOAT16 = 2,
  LOOM_DTYPE_BFLOAT16 = 3,
  LOOM_DTYPE_FP8_E4M3 = 4,
  LOOM_DTYPE_FP8_E5M2 = 5,
  LOOM_DTYPE_FP4 = 6,
  LOOM_DTYPE_INT64 = 7,
  LOOM_DTYPE_INT32 = 8,
  LOOM_DTYPE_INT16 = 9,
  LOOM_DTYPE_INT8 = 10,
  LOOM_DTYPE_INT4 = 11,
  LOOM_DTYPE_INT2 = 12,
  LOOM_DTYPE_UINT64 = 13,
  LOOM_DTYPE_UINT32 = 14,
  LOOM_DTYPE_UINT16 = 15,
  LOOM_DTYPE_UINT8 = 16,
  LOOM_DTYPE_UINT4 = 17,
  LOOM_DTYPE_UINT2 = 18,
  LOOM_DTYPE_TERNARY = 19,
  LOOM_DTYPE_BINARY = 20,
  LOOM_DTYPE_COUNT = 21
} loom_dtype;

typedef enum loom_dtype_kind {
  LOOM_DTYPE_KIND_FLOAT,
  LOOM_DTYPE_KIND_SIGNED,
  LOOM_DTYPE_KIND_UNSIGNED,
  LOOM_DTYPE_KIND_TERNARY,
  LOOM_DTYPE_KIND_BINARY
} loom_dtype_kind;

/* Where the scales of a scaled dtype apply: one per output row, or one for all. */
typedef enum { LOOM_SCALE_PER_ROW = 0, LOOM_SCALE_PER_TENSOR = 1 } loom_scale_mode;

typedef struct loom_dtype_traits {
  loom_dtype id;
  const char *name;      /* canonical, e.g. "fp8-e4m3" */
  int bits;              /* bits per value (packed) */
  loom_dtype_kind kind;
  bool scaled;           /* value = code × scale (integer, ternary, binary kinds) */
  /* Float kinds: the largest finite values. Scaled kinds: the code range, in
   * units of the scale (int8: -127..127, uint8: 0..255, binary: -1..1). */
  double min_value, max_value;
  /* Float kinds: layout of the code. */
  int exp_bits, man_bits, exp_bias;
  bool has_inf, has_nan;
  /* Float kinds: finite overflow and ±inf saturate to ±max when converting
   * weights (fp8, fp4); otherwise they become ±inf (float16, bfloat16). */
  bool saturates;
  /* Scaled kinds: the largest code magnitude (int8 127, uint64 2^64-1). */
  uint64_t qmax;
  /*
   * Reference conversion of one value. encode: float32 value (and scale, for
   * scaled kinds; unscaled kinds ignore it) to an n-bit code; returns 0,
   * LOOM_ERR_NONFINITE when the dtype has no code for the value (NaN in fp4
   * and in the scaled kinds), or LOOM_ERR_INVALID for a scale that is not
   * finite and >= 0 (scale 0: every code is 0). decode: code to its value (code × scale for
   * scaled kinds); the float32 value a layer computes with is (float)decode().
   */
  int (*encode)(float value, float scale, uint64_t *code);
  double (*decode)(uint64_t code, float scale);
} loom_dtype_traits;

LOOM_API const loom_dtype_traits *loom_dtype_traits_get(loom_dtype d); /* NULL if out of range */
LOOM_API const char *loom_dtype_name(loom_dtype d);                   /* NULL if out of range */
/* Canonical names only; the error message lists the valid ones. */
LOOM_API int loom_dtype_from_name(const char *name, loom_dtype *out, loom_error *err);

/* Packed bytes for one row of n values; SIZE_MAX if n < 0, d is invalid or the size overflows. */
LOOM_API size_t loom_dtype_row_bytes(loom_dtype d, int64_t n);
/* Packed bytes of a rows × cols tensor (rows padded separately), overflow-checked. */
LOOM_API int loom_dtype_packed_bytes(loom_dtype d, int64_t rows, int64_t cols, size_t *nbytes, loom_error *err);
/* Number of scales of a rows × cols tensor: rows, 1, or 0 for unscaled dtypes. */
LOOM_API int64_t loom_dtype_scale_count(loom_dtype d, int64_t rows, loom_scale_mode mode);

/* One value through the traits, with a message when there is no code. */
LOOM_API int loom_dtype_encode(loom_dtype d, float value, float scale, uint64_t *code, loom_error *err);
LOOM_API double loom_dtype_decode(loom_dtype d, uint64_t code, float scale);

/* The code at index i of a packed row, and storing one (other bits untouched); d must be valid. */
LOOM_API uint64_t loom_dtype_code_get(loom_dtype d, const uint8_t *row, int64_t i);
LOOM_API void loom_dtype_code_set(loom_dtype d, uint8_t *row, int64_t i, uint64_t code);

/*
 * The scale rule of a scaled dtype over n values (a row, or a whole tensor):
 * signed s = max|w| / qmax; unsigned s = max(w, 0) / qmax; ternary and binary
 * s = mean|w|; computed in double, rounded to float32; 0 when every value
 * maps to 0; raised to the smallest positive float32 when it would underflow
 * to 0 although some value is not. Values must be finite. 1 for unscaled dtypes.
 */
LOOM_API float loom_dtype_compute_scale(loom_dtype d, const float *values, int64_t n);

/*
 * Bulk conversion of a row-major rows × cols tensor to / from its packed form
 * (loom_dtype_packed_bytes bytes). nscales is rows (per-row scales) or 1 (one
 * for the tensor) for scaled dtypes; unscaled dtypes take scales = NULL and
 * nscales = 0. quantize fails with LOOM_ERR_NONFINITE, naming the element,
 * when a value has no code (NaN for fp4 and the scaled kinds).
 */
LOOM_API int loom_dtype_quantize(loom_dtype d, const float *src, int64_t rows, int64_t cols, const float *scales,
                                 int64_t nscales, uint8_t *dst, loom_error *err);
LOOM_API int loom_dtype_dequantize(loom_dtype d, const uint8_t *src, int64_t rows, int64_t cols,
                                   const float *scales, int64_t nscales, float *dst, loom_error *err);

#ifdef __cplusplus
}
#endif
