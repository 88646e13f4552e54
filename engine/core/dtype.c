/*
 * The dtype traits table: the only list of dtypes in the project. Everything
 * else (menus, estimates, serializers, the CLI, tests) iterates over it.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>

#include "core/dtype-internal.h"
#include "core/i18n.h"

#define FLOAT_ENTRY(ID, NAME, BITS, MAXV, EB, MB, BIAS, INF, NAN_, SAT, FN)                                  \
  [ID] = {.id = ID, .name = NAME, .bits = BITS, .kind = LOOM_DTYPE_KIND_FLOAT, .scaled = false,              \
          .min_value = -(MAXV), .max_value = (MAXV), .exp_bits = EB, .man_bits = MB, .exp_bias = BIAS,       \
          .has_inf = INF, .has_nan = NAN_, .saturates = SAT, .qmax = 0,                                      \
          .encode = loom_dtype_encode_##FN, .decode = loom_dtype_decode_##FN}

#define SCALED_ENTRY(ID, NAME, BITS, KIND, QMIN, QMAX, FN)                                                   \
  [ID] = {.id = ID, .name = NAME, .bits = BITS, .kind = KIND, .scaled = true,                                \
          .min_value = (double)(QMIN), .max_value = (double)(QMAX), .qmax = (QMAX),                          \
          .encode = loom_dtype_encode_##FN, .decode = loom_dtype_decode_##FN}

static const loom_dtype_traits table[LOOM_DTYPE_COUNT] = {
  FLOAT_ENTRY(LOOM_DTYPE_FLOAT64, "float64", 64, DBL_MAX, 11, 52, 1023, true, true, false, float64),
  FLOAT_ENTRY(LOOM_DTYPE_FLOAT32, "float32", 32, FLT_MAX, 8, 23, 127, true, true, false, float32),
  FLOAT_ENTRY(LOOM_DTYPE_FLOAT16, "float16", 16, 65504.0, 5, 10, 15, true, true, false, float16),
  /* bfloat16 max: (2 - 2^-7) · 2^127 */
  FLOAT_ENTRY(LOOM_DTYPE_BFLOAT16, "bfloat16", 16, 0x1.fep127, 8, 7, 127, true, true, false, bfloat16),
  FLOAT_ENTRY(LOOM_DTYPE_FP8_E4M3, "fp8-e4m3", 8, 448.0, 4, 3, 7, false, true, true, fp8_e4m3),
  FLOAT_ENTRY(LOOM_DTYPE_FP8_E5M2, "fp8-e5m2", 8, 57344.0, 5, 2, 15, true, true, true, fp8_e5m2),
  FLOAT_ENTRY(LOOM_DTYPE_FP4, "fp4", 4, 6.0, 2, 1, 1, false, false, true, fp4),
  SCALED_ENTRY(LOOM_DTYPE_INT64, "int64", 64, LOOM_DTYPE_KIND_SIGNED, -INT64_MAX, INT64_MAX, int64),
  SCALED_ENTRY(LOOM_DTYPE_INT32, "int32", 32, LOOM_DTYPE_KIND_SIGNED, -INT32_MAX, INT32_MAX, int32),
  SCALED_ENTRY(LOOM_DTYPE_INT16, "int16", 16, LOOM_DTYPE_KIND_SIGNED, -INT16_MAX, INT16_MAX, int16),
  SCALED_ENTRY(LOOM_DTYPE_INT8, "int8", 8, LOOM_DTYPE_KIND_SIGNED, -INT8_MAX, INT8_MAX, int8),
  SCALED_ENTRY(LOOM_DTYPE_INT4, "int4", 4, LOOM_DTYPE_KIND_SIGNED, -7, 7, int4),
  SCALED_ENTRY(LOOM_DTYPE_INT2, "int2", 2, LOOM_DTYPE_KIND_SIGNED, -1, 1, int2),
  SCALED_ENTRY(LOOM_DTYPE_UINT64, "uint64", 64, LOOM_DTYPE_KIND_UNSIGNED, 0, UINT64_MAX, uint64),
  SCALED_ENTRY(LOOM_DTYPE_UINT32, "uint32", 32, LOOM_DTYPE_KIND_UNSIGNED, 0, UINT32_MAX, uint32),
  SCALED_ENTRY(LOOM_DTYPE_UINT16, "uint16", 16, LOOM_DTYPE_KIND_UNSIGNED, 0, UINT16_MAX, uint16),
  SCALED_ENTRY(LOOM_DTYPE_UINT8, "uint8", 8, LOOM_DTYPE_KIND_UNSIGNED, 0, UINT8_MAX, uint8),
  SCALED_ENTRY(LOOM_DTYPE_UINT4, "uint4", 4, LOOM_DTYPE_KIND_UNSIGNED, 0, 15, uint4),
  SCALED_ENTRY(LOOM_DTYPE_UINT2, "uint2", 2, LOOM_DTYPE_KIND_UNSIGNED, 0, 3, uint2),
  SCALED_ENTRY(LOOM_DTYPE_TERNARY, "ternary", 2, LOOM_DTYPE_KIND_TERNARY, -1, 1, ternary),
  SCALED_ENTRY(LOOM_DTYPE_BINARY, "binary", 1, LOOM_DTYPE_KIND_BINARY, -1, 1, binary),
};

LOOM_API const loom_dtype_traits *loom_dtype_traits_get(loom_dtype d) {
  if ((int)d < 0 || d >= LOOM_DTYPE_COUNT) return NULL;
  return &table[d];
}

LOOM_API const char *loom_dtype_name(loom_dtype d) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  return t ? t->name : NULL;
}

LOOM_API int loom_dtype_from_name(const char *name, loom_dtype *out, loom_error *err) {
  for (int i = 0; name && i < LOOM_DTYPE_COUNT; i++) {
    if (strcmp(name, table[i].name) == 0) {
      *out = (loom_dtype)i;
      return 0;
    }
  }
  char names[512];
  size_t len = 0;
  names[0] = '\0';
  for (int i = 0; i < LOOM_DTYPE_COUNT; i++) {
    int n = snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", table[i].name);
    if (n < 0 || (size_t)n >= sizeof names - len) break;
    len += (size_t)n;
  }
  return loom_error_set(err, LOOM_ERR_INVALID, _("unknown dtype '%s'; valid dtypes: %s"), name ? name : "", names);
}

LOOM_API size_t loom_dtype_row_bytes(loom_dtype d, int64_t n) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  if (!t || n < 0 || n > INT64_MAX / 64) return SIZE_MAX;
  uint64_t bytes = ((uint64_t)n * (uint64_t)t->bits + 7) / 8;
  return bytes > SIZE_MAX - 1 ? SIZE_MAX : (size_t)bytes;
}

LOOM_API int loom_dtype_packed_bytes(loom_dtype d, int64_t rows, int64_t cols, size_t *nbytes, loom_error *err) {
  if (!loom_dtype_traits_get(d)) return loom_error_set(err, LOOM_ERR_INVALID, _("invalid dtype %d"), (int)d);
  size_t row = loom_dtype_row_bytes(d, cols);
  if (rows < 0 || row == SIZE_MAX || (row > 0 && (uint64_t)rows > (SIZE_MAX - 1) / row))
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%lld × %lld values at %s do not fit in memory"), (long long)rows,
                          (long long)cols, table[d].name);
  *nbytes = row * (size_t)rows;
  return 0;
}

LOOM_API int64_t loom_dtype_scale_count(loom_dtype d, int64_t rows, loom_scale_mode mode) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  if (!t || !t->scaled) return 0;
  return mode == LOOM_SCALE_PER_TENSOR ? 1 : rows;
}

LOOM_API int loom_dtype_encode(loom_dtype d, float value, float scale, uint64_t *code, loom_error *err) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  if (!t) return loom_error_set(err, LOOM_ERR_INVALID, _("invalid dtype %d"), (int)d);
  int rc = t->encode(value, scale, code);
  if (rc == LOOM_ERR_NONFINITE) return loom_error_set(err, rc, _("%s has no code for NaN"), t->name);
  if (rc) return loom_error_set(err, rc, _("scale %g is not a finite value >= 0"), (double)scale);
  return 0;
}

LOOM_API double loom_dtype_decode(loom_dtype d, uint64_t code, float scale) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  return t ? t->decode(code, scale) : NAN;
}

LOOM_API uint64_t loom_dtype_code_get(loom_dtype d, const uint8_t *row, int64_t i) {
  return loom_pack_get(table[d].bits, row, i);
}

LOOM_API void loom_dtype_code_set(loom_dtype d, uint8_t *row, int64_t i, uint64_t code) {
  const int bits = table[d].bits;
  code &= loom_code_mask(bits);
  if (bits < 8) {
    uint64_t bit = (uint64_t)i * (uint64_t)bits;
    row[bit >> 3] &= (uint8_t) ~(loom_code_mask(bits) << (bit & 7));
  }
  loom_pack_put(bits, row, i, code);
}
