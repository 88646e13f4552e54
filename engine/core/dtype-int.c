/*
 * Scaled formats: signed and unsigned integers of 2..64 bits, ternary and
 * binary. A value is code × scale; the code is q = clamp(rne(w / s), lo, qmax),
 * lo = -qmax (signed, symmetric) or 0 (unsigned: negatives clamp to 0, never
 * folded, never wrapped). rne is round to nearest, ties to even.
 *
 * Exactness of rne(w / s). For codes below 2^28 a double quotient is enough:
 * with w = mw·2^ew, s = ms·2^es (mw, ms 24-bit integers), a quotient that is
 * not itself a half-integer lies at least 2^-25 (relative to its size for
 * quotients below 1) from every half-integer, far more than the error of a
 * correctly rounded double quotient below 2^28, so rounding the double gives
 * the exact result. The 32- and 64-bit formats need more: their quotient is
 * computed by integer long division (loom_rne_div_exact).
 */
#include <float.h>
#include <math.h>

#include "core/dtype-internal.h"
#include "kernels/cpu.h"

/* f > 0 finite: f = m · 2^e with m in [2^23, 2^24). */
static void decompose(float f, uint32_t *m, int *e) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  u &= UINT32_C(0x7fffffff);
  if (u >= UINT32_C(0x00800000)) {
    *m = (u & UINT32_C(0x7fffff)) | UINT32_C(0x800000);
    *e = (int)(u >> 23) - 150;
    return;
  }
  int ex = -149;
  while (!(u & UINT32_C(0x800000))) {
    u <<= 1;
    ex--;
  }
  *m = u;
  *e = ex;
}

uint64_t loom_rne_div_exact(float w, float s, uint64_t qmax, bool allow_negative, bool *neg) {
  *neg = w < 0;
  if (w == 0 || (*neg && !allow_negative)) return 0;
  if (isinf(w)) return qmax;
  uint32_t mw, ms;
  int ew, es;
  decompose(w, &mw, &ew);
  decompose(s, &ms, &es);
  /* w / s = (mw / ms) · 2^d, and mw / ms lies in (1/2, 2). */
  const int d = ew - es;
  if (d <= -2) return 0;    /* quotient < 1/2 */
  if (d >= 65) return qmax; /* quotient > 2^64 */
  uint64_t q, r, den;
  if (d == -1) {
    den = 2 * (uint64_t)ms;
    q = mw / den;
    r = mw % den;
  } else {
    /* Long division of mw · 2^d by ms in chunks of 39 bits: the remainder
     * stays below 2^24, so remainder << 39 fits in 64 bits. */
    den = ms;
    q = mw / den;
    r = mw % den;
    for (int k = d; k > 0;) {
      const int step = k < 39 ? k : 39;
      if (q >> (64 - step)) return qmax;
      const uint64_t num = r << step;
      q = (q << step) + num / den;
      r = num % den;
      k -= step;
    }
  }
  if (2 * r > den || (2 * r == den && (q & 1))) {
    if (q == UINT64_MAX) return qmax;
    q++;
  }
  return q > qmax ? qmax : q;
}

uint64_t loom_rne_div_fast(float w, float s, uint64_t qmax, bool allow_negative, bool *neg) {
  double x = (double)w / (double)s;
  *neg = x < 0;
  if (*neg) {
    if (!allow_negative) return 0;
    x = -x;
  }
  if (x >= (double)qmax) return qmax; /* also inf */
  return (uint64_t)nearbyint(x);      /* default rounding mode: ties to even */
}

static uint64_t code_of(const loom_dtype_traits *t, uint64_t mag, bool neg) {
  return (neg ? (UINT64_C(0) - mag) : mag) & loom_code_mask(t->bits);
}

/* Scale 0 is what compute_scale gives a row of zeros (or, unsigned, of values
 * <= 0): every code is then 0. */
static int scaled_encode(const loom_dtype_traits *t, float x, float s, uint64_t *code) {
  if (isnan(x)) return LOOM_ERR_NONFINITE;
  if (!(s >= 0) || isinf(s)) return LOOM_ERR_INVALID;
  if (t->kind == LOOM_DTYPE_KIND_BINARY) {
    *code = x < 0 ? 1 : 0; /* sign(w), sign(0) = +1 */
    return 0;
  }
  const bool allow_negative = t->kind != LOOM_DTYPE_KIND_UNSIGNED;
  bool neg = false;
  uint64_t mag = 0;
  if (s > 0)
    mag = t->qmax < (UINT64_C(1) << 28) ? loom_rne_div_fast(x, s, t->qmax, allow_negative, &neg)
                                         : loom_rne_div_exact(x, s, t->qmax, allow_negative, &neg);
  *code = code_of(t, mag, neg);
  return 0;
}

int64_t loom_scaled_code_value_signed(const loom_dtype_traits *t, uint64_t code) {
  code &= loom_code_mask(t->bits);
  switch (t->kind) {
  case LOOM_DTYPE_KIND_BINARY: return code ? -1 : 1;
  case LOOM_DTYPE_KIND_UNSIGNED: return (int64_t)code; /* callers use the unsigned value for uint64 */
  default:
    if (t->bits < 64 && (code >> (t->bits - 1))) return (int64_t)(code | ~loom_code_mask(t->bits));
    return (int64_t)code;
  }
}

bool loom_scaled_code_valid(const loom_dtype_traits *t, uint64_t code) {
  if (code & ~loom_code_mask(t->bits)) return false;
  if (t->kind == LOOM_DTYPE_KIND_SIGNED || t->kind == LOOM_DTYPE_KIND_TERNARY)
    return code != (UINT64_C(1) << (t->bits - 1));
  return true;
}

/* value = code × scale, as double(q) · double(s): exact for codes below 2^29,
 * and for the wider formats a fixed, portable rounding. */
static double scaled_decode(const loom_dtype_traits *t, uint64_t code, float s) {
  if (t->kind == LOOM_DTYPE_KIND_UNSIGNED) return (double)(code & loom_code_mask(t->bits)) * (double)s;
  return (double)loom_scaled_code_value_signed(t, code) * (double)s;
}

#define SCALED_FNS(name, id)                                                         \
  int loom_dtype_encode_##name(float x, float s, uint64_t *code) {                   \
    return scaled_encode(loom_dtype_traits_get(id), x, s, code);                     \
  }                                                                                  \
  double loom_dtype_decode_##name(uint64_t code, float s) {                          \
    return scaled_decode(loom_dtype_traits_get(id), code, s);                        \
  }
SCALED_FNS(int64, LOOM_DTYPE_INT64)
SCALED_FNS(int32, LOOM_DTYPE_INT32)
SCALED_FNS(int16, LOOM_DTYPE_INT16)
SCALED_FNS(int8, LOOM_DTYPE_INT8)
SCALED_FNS(int4, LOOM_DTYPE_INT4)
SCALED_FNS(int2, LOOM_DTYPE_INT2)
SCALED_FNS(uint64, LOOM_DTYPE_UINT64)
SCALED_FNS(uint32, LOOM_DTYPE_UINT32)
SCALED_FNS(uint16, LOOM_DTYPE_UINT16)
SCALED_FNS(uint8, LOOM_DTYPE_UINT8)
SCALED_FNS(uint4, LOOM_DTYPE_UINT4)
SCALED_FNS(uint2, LOOM_DTYPE_UINT2)
SCALED_FNS(ternary, LOOM_DTYPE_TERNARY)
SCALED_FNS(binary, LOOM_DTYPE_BINARY)
#undef SCALED_FNS

LOOM_API float loom_dtype_compute_scale(loom_dtype d, const float *values, int64_t n) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  if (!t || !t->scaled) return 1.0f;
  const loom_kernels *k = loom_kernels_get();
  double stat = 0; /* a fixed summation order keeps the scale deterministic */
  switch (t->kind) {
  case LOOM_DTYPE_KIND_SIGNED: /* max |w|: order-free, so the vector kernels give the same value */
    stat = (double)k->abs_max(values, n);
    break;
  case LOOM_DTYPE_KIND_UNSIGNED: /* max(0, max w) */
    stat = (double)k->pos_max(values, n);
    break;
  default: /* ternary, binary: mean |w|, the sum in index order (the kernel proves when another order is exact) */
    stat = k->abs_sum(values, n);
    break;
  }
  return loom_scaled_scale_of_stat(t, stat, n);
}

bool loom_scaled_row_scale(const loom_dtype_traits *t, const float *row, int64_t n, float *scale) {
  double stat = 0;
  if (loom_kernels_get()->scale_scan(row, n, t->kind, &stat)) return true;
  *scale = loom_scaled_scale_of_stat(t, stat, n);
  return false;
}

/* ---- bulk rows ---- */

/* rne for |v| <= 2^51 in the default rounding mode: adding 1.5 · 2^52 leaves
 * no fraction bits, so the addition itself rounds (ties to even). */
static inline double rne_small(double v) {
  const double magic = 0x1.8p52;
  return (v + magic) - magic;
}

int loom_scaled_quantize_row(const loom_dtype_traits *t, const float *src, int64_t n, float scale, uint8_t *dst,
                             int64_t *bad) {
  if (!(scale >= 0) || isinf(scale)) {
    *bad = 0;
    return LOOM_ERR_INVALID;
  }
  for (int64_t i = 0; i < n; i++) {
    if (isnan(src[i])) {
      *bad = i;
      return LOOM_ERR_NONFINITE;
    }
  }
  const uint64_t mask = loom_code_mask(t->bits);
  if (t->kind == LOOM_DTYPE_KIND_BINARY) {
    for (int64_t i = 0; i < n; i++) loom_pack_put(1, dst, i, src[i] < 0);
  } else if (scale == 0) {
    for (int64_t i = 0; i < n; i++) loom_pack_put(t->bits, dst, i, 0);
  } else if (t->qmax < (UINT64_C(1) << 28)) {
    /* The double quotient is exact enough here (see the top of this file);
     * clamping before rounding is the same as after, the bounds being integers. */
    const double s = scale, hi = (double)t->qmax, lo = t->kind == LOOM_DTYPE_KIND_UNSIGNED ? 0.0 : -hi;
    for (int64_t i = 0; i < n; i++) {
      double v = (double)src[i] / s;
      v = v > lo ? v : lo; /* this form compiles to maxsd/minsd: no branch to mispredict */
      v = v < hi ? v : hi;
      loom_pack_put(t->bits, dst, i, (uint64_t)(int64_t)rne_small(v) & mask);
    }
  } else {
    const bool allow_negative = t->kind != LOOM_DTYPE_KIND_UNSIGNED;
    for (int64_t i = 0; i < n; i++) {
      bool neg;
      const uint64_t mag = loom_rne_div_exact(src[i], scale, t->qmax, allow_negative, &neg);
      loom_pack_put(t->bits, dst, i, code_of(t, mag, neg));
    }
  }
  return 0;
}

void loom_scaled_dequantize_row(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale, float *dst) {
  const double s = scale;
  const bool is_signed = t->kind != LOOM_DTYPE_KIND_UNSIGNED;
  switch (t->bits) {
  case 16:
    for (int64_t i = 0; i < n; i++) {
      uint16_t u;
      memcpy(&u, src + 2 * i, sizeof u);
      dst[i] = (float)((is_signed ? (double)(int16_t)u : (double)u) * s);
    }
    return;
  case 32:
    for (int64_t i = 0; i < n; i++) {
      uint32_t u;
      memcpy(&u, src + 4 * i, sizeof u);
      dst[i] = (float)((is_signed ? (double)(int32_t)u : (double)u) * s);
    }
    return;
  case 64:
    for (int64_t i = 0; i < n; i++) {
      uint64_t u;
      memcpy(&u, src + 8 * i, sizeof u);
      dst[i] = (float)((is_signed ? (double)(int64_t)u : (double)u) * s);
    }
    return;
  default: {
    /* At most 256 codes: decode each once per row. */
    float lut[256];
    for (uint64_t c = 0; c < (UINT64_C(1) << t->bits); c++) lut[c] = (float)scaled_decode(t, c, scale);
    if (t->bits == 8)
      for (int64_t i = 0; i < n; i++) dst[i] = lut[src[i]];
    else
      for (int64_t i = 0; i < n; i++) dst[i] = lut[loom_pack_get(t->bits, src, i)];
    return;
  }
  }
}
