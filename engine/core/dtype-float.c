/*
 * Floating formats: float64, float32, IEEE binary16, bfloat16, OCP FP8 E4M3FN,
 * OCP FP8 E5M2, OCP FP4 E2M1. One generic encoder serves the five small
 * formats; it works on the integer bits of the float32 input, so rounding is
 * exact (no double rounding through wider floats) and independent of the FPU
 * rounding mode.
 */
#include <math.h>
#include <pthread.h>

#include "core/dtype-internal.h"

uint32_t loom_minifloat_max_code(const loom_dtype_traits *t) {
  uint32_t all = (UINT32_C(1) << (t->exp_bits + t->man_bits)) - 1;
  if (t->has_inf) return (((UINT32_C(1) << t->exp_bits) - 1) << t->man_bits) - 1; /* below the inf exponent */
  if (t->has_nan) return all - 1; /* E4M3FN: S.1111.111 is NaN, S.1111.110 the max */
  return all;                     /* fp4: every code is finite */
}

uint32_t loom_minifloat_nan_code(const loom_dtype_traits *t) {
  if (!t->has_nan) return 0;
  if (t->has_inf) /* IEEE-like: all-ones exponent, quiet bit (the top mantissa bit) */
    return (((UINT32_C(1) << t->exp_bits) - 1) << t->man_bits) | (UINT32_C(1) << (t->man_bits - 1));
  return (UINT32_C(1) << (t->exp_bits + t->man_bits)) - 1;
}

static uint32_t inf_code(const loom_dtype_traits *t) {
  return ((UINT32_C(1) << t->exp_bits) - 1) << t->man_bits;
}

/* The constants of one format and overflow rule, computed once per row. */
typedef struct {
  int man_bits, sign_shift, emin;
  uint32_t max_code, overflow_code, nan_code;
  bool has_nan;
} mf_params;

static mf_params params_of(const loom_dtype_traits *t, bool saturate) {
  mf_params p = {
    .man_bits = t->man_bits,
    .sign_shift = t->exp_bits + t->man_bits,
    .emin = 1 - t->exp_bias,
    .max_code = loom_minifloat_max_code(t),
    .nan_code = loom_minifloat_nan_code(t),
    .has_nan = t->has_nan,
  };
  p.overflow_code = saturate || !t->has_inf ? p.max_code : inf_code(t);
  return p;
}

static inline uint32_t mf_encode(const mf_params *p, float x) {
  const int M = p->man_bits;
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  const uint32_t sign = (u >> 31) << p->sign_shift;
  const uint32_t a = u & UINT32_C(0x7fffffff);
  if (a > UINT32_C(0x7f800000)) return p->has_nan ? sign | p->nan_code : 0;
  if (a == UINT32_C(0x7f800000)) return sign | p->overflow_code;
  if (a == 0) return sign;

  /* |x| = m * 2^(e - 23) with m in [2^23, 2^24): subnormal inputs normalised. */
  int e;
  uint32_t m;
  if (a >= UINT32_C(0x00800000)) {
    e = (int)(a >> 23) - 127;
    m = (a & UINT32_C(0x7fffff)) | UINT32_C(0x800000);
  } else {
    e = -126;
    m = a;
    while (!(m & UINT32_C(0x800000))) {
      m <<= 1;
      e--;
    }
  }
  /* The target's quantum at this magnitude is 2^(te - M), te = max(e, emin):
   * below emin the spacing stays that of the subnormals. */
  const int te = e < p->emin ? p->emin : e;
  const int shift = te - M - (e - 23); /* >= 23 - M > 0 for every format here */
  uint64_t q;
  if (shift >= 26) {
    q = 0; /* |x| < quantum / 4: rounds to zero */
  } else if (shift <= 0) {
    q = (uint64_t)m << -shift;
  } else {
    q = m >> shift;
    const uint32_t rem = m & ((UINT32_C(1) << shift) - 1), half = UINT32_C(1) << (shift - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
  }
  /* Exponent field and mantissa add up: q >= 2^M carries into the exponent,
   * which also handles a round-up from the largest subnormal to the smallest
   * normal, and from the largest mantissa to the next binade. */
  const uint64_t mag = ((uint64_t)(te - p->emin) << M) + q;
  if (mag > p->max_code) return sign | p->overflow_code;
  return sign | (uint32_t)mag;
}

uint32_t loom_minifloat_encode(const loom_dtype_traits *t, float x, bool saturate) {
  const mf_params p = params_of(t, saturate);
  return mf_encode(&p, x);
}

double loom_minifloat_decode(const loom_dtype_traits *t, uint32_t code) {
  const int M = t->man_bits;
  const bool negative = (code >> (t->exp_bits + M)) & 1;
  const uint32_t mag = code & ((UINT32_C(1) << (t->exp_bits + M)) - 1);
  const uint32_t ef = mag >> M, f = mag & ((UINT32_C(1) << M) - 1);
  double v;
  if (t->has_inf && ef == (UINT32_C(1) << t->exp_bits) - 1)
    v = f ? NAN : INFINITY;
  else if (!t->has_inf && t->has_nan && mag == loom_minifloat_nan_code(t))
    v = NAN;
  else if (ef == 0)
    v = ldexp((double)f, 1 - t->exp_bias - M);
  else
    v = ldexp((double)(f | (UINT32_C(1) << M)), (int)ef - t->exp_bias - M);
  return negative ? -v : v;
}

/* ---- per-dtype entries of the traits table ---- */

int loom_dtype_encode_float64(float x, float s, uint64_t *code) {
  double d = x;
  memcpy(code, &d, sizeof d);
  return 0;
}

double loom_dtype_decode_float64(uint64_t code, float s) {
  double d;
  memcpy(&d, &code, sizeof d);
  return d;
}

int loom_dtype_encode_float32(float x, float s, uint64_t *code) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  *code = u;
  return 0;
}

double loom_dtype_decode_float32(uint64_t code, float s) {
  uint32_t u = (uint32_t)code;
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

#define MINIFLOAT_FNS(name, id)                                                          \
  int loom_dtype_encode_##name(float x, float s, uint64_t *code) {                       \
    const loom_dtype_traits *t = loom_dtype_traits_get(id);                              \
    if (isnan(x) && !t->has_nan) return LOOM_ERR_NONFINITE;                              \
    *code = loom_minifloat_encode(t, x, t->saturates);                                   \
    return 0;                                                                            \
  }                                                                                      \
  double loom_dtype_decode_##name(uint64_t code, float s) {                              \
    return loom_minifloat_decode(loom_dtype_traits_get(id), (uint32_t)code);             \
  }
MINIFLOAT_FNS(float16, LOOM_DTYPE_FLOAT16)
MINIFLOAT_FNS(bfloat16, LOOM_DTYPE_BFLOAT16)
MINIFLOAT_FNS(fp8_e4m3, LOOM_DTYPE_FP8_E4M3)
MINIFLOAT_FNS(fp8_e5m2, LOOM_DTYPE_FP8_E5M2)
MINIFLOAT_FNS(fp4, LOOM_DTYPE_FP4)
#undef MINIFLOAT_FNS

/* ---- bulk rows ---- */

int loom_float_quantize_row(const loom_dtype_traits *t, const float *src, int64_t n, uint8_t *dst, int64_t *bad) {
  switch (t->id) {
  case LOOM_DTYPE_FLOAT32:
    memcpy(dst, src, (size_t)n * sizeof *src);
    return 0;
  case LOOM_DTYPE_FLOAT64:
    for (int64_t i = 0; i < n; i++) {
      double d = src[i];
      memcpy(dst + 8 * i, &d, sizeof d);
    }
    return 0;
  default:
    break;
  }
  const mf_params p = params_of(t, t->saturates);
  for (int64_t i = 0; i < n; i++) {
    if (!p.has_nan && isnan(src[i])) {
      *bad = i;
      return LOOM_ERR_NONFINITE;
    }
    const uint32_t code = mf_encode(&p, src[i]);
    if (t->bits == 16) {
      const uint16_t h = (uint16_t)code;
      memcpy(dst + 2 * i, &h, sizeof h);
    } else if (t->bits == 8) {
      dst[i] = (uint8_t)code;
    } else {
      loom_pack_put(t->bits, dst, i, code);
    }
  }
  return 0;
}

void loom_float_build_lut(const loom_dtype_traits *t, float *lut) {
  for (uint32_t c = 0; c < (UINT32_C(1) << t->bits); c++) lut[c] = (float)loom_minifloat_decode(t, c);
}

/* Every table built once: a GEMV or a dequantize of a single row (an
 * embedding's token at rest) had rebuilt its 256 entries on every call. */
static float luts[LOOM_DTYPE_COUNT][256];
static pthread_once_t luts_once = PTHREAD_ONCE_INIT;

static void build_luts(void) {
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    if (t && !t->scaled && t->bits <= 8) loom_float_build_lut(t, luts[d]);
  }
}

const float *loom_float_lut(const loom_dtype_traits *t) {
  pthread_once(&luts_once, build_luts);
  return luts[t->id];
}

/* float16 -> float32 by bit manipulation: every float16 is a float32, so this
 * is exact; the only branchy case is a subnormal, normalised here. */
static float half_to_float(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16, e = (h >> 10) & 0x1f, m = h & 0x3ff, u;
  if (e == 0x1f) {
    u = sign | 0x7f800000u | (m << 13);
  } else if (e != 0) {
    u = sign | ((e + 112) << 23) | (m << 13);
  } else if (m == 0) {
    u = sign;
  } else {
    int shift = 0;
    while (!(m & 0x400)) {
      m <<= 1;
      shift++;
    }
    u = sign | ((uint32_t)(113 - shift) << 23) | ((m & 0x3ff) << 13);
  }
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

void loom_float_dequantize_row(const loom_dtype_traits *t, const uint8_t *src, int64_t n, const float *lut, float *dst) {
  switch (t->id) {
  case LOOM_DTYPE_FLOAT32:
    memcpy(dst, src, (size_t)n * sizeof *dst);
    return;
  case LOOM_DTYPE_FLOAT64:
    for (int64_t i = 0; i < n; i++) {
      double d;
      memcpy(&d, src + 8 * i, sizeof d);
      dst[i] = (float)d;
    }
    return;
  case LOOM_DTYPE_FLOAT16:
    for (int64_t i = 0; i < n; i++) {
      uint16_t h;
      memcpy(&h, src + 2 * i, sizeof h);
      dst[i] = half_to_float(h);
    }
    return;
  case LOOM_DTYPE_BFLOAT16:
    /* A bfloat16 is the top half of a float32. */
    for (int64_t i = 0; i < n; i++) {
      uint16_t h;
      memcpy(&h, src + 2 * i, sizeof h);
      uint32_t u = (uint32_t)h << 16;
      memcpy(dst + i, &u, sizeof u);
    }
    return;
  case LOOM_DTYPE_FP8_E4M3:
  case LOOM_DTYPE_FP8_E5M2:
    for (int64_t i = 0; i < n; i++) dst[i] = lut[src[i]];
    return;
  default: /* fp4: two codes per byte, low nibble first */
    for (int64_t i = 0; i < n; i++) dst[i] = lut[loom_pack_get(4, src, i)];
    return;
  }
}
