/*
 * What the wide formats' encoders of the AVX2 and AVX-512 levels
 * (codec-wide-avx2.c, codec-scaled-avx512.c) share: scale_scan's statistic
 * (cpu.h) gathered 8 values at a time inside the encode loop (the 64-bit
 * encoders scan the next row of a morph while they encode this one), the
 * lanes they hand to the reference's division, the NaN search. AVX2
 * integer operations only; included by files compiled for AVX2 or above,
 * inside their target pragma and after <immintrin.h>.
 */
#ifndef LOOM_KERNELS_CODEC_WIDE_SHARED_H
#define LOOM_KERNELS_CODEC_WIDE_SHARED_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/dtype-internal.h"

/* The first NaN's column, -1 for none. */
static int64_t first_nan(const float *src, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (isnan(src[i])) return i;
  return -1;
}

/* An encoder's answer for a row: LOOM_ERR_NONFINITE, *bad its first NaN's
 * column, when the row held a NaN (its codes then do not matter). */
static int nan_answer(bool nan, const float *src, int64_t n, int64_t *bad) {
  if (!nan) return 0;
  *bad = first_nan(src, n);
  return LOOM_ERR_NONFINITE;
}

/* The 64-bit codes of the lanes of `slow` (bit l: in[l]) by the reference's
 * division; the NaN lanes' mask is returned (the row fails: their codes do
 * not matter). */
static unsigned settle64_lanes(const loom_dtype_traits *t, const bool is_unsigned, const float *in, float scale,
                               unsigned slow, uint64_t *code) {
  unsigned nan = 0;
  for (unsigned bits = slow; bits; bits &= bits - 1) {
    const int l = __builtin_ctz(bits);
    if (isnan(in[l])) {
      nan |= 1u << l;
      continue;
    }
    bool negative;
    const uint64_t mag = loom_rne_div_exact(in[l], scale, t->qmax, !is_unsigned, &negative);
    code[l] = negative ? UINT64_C(0) - mag : mag;
  }
  return nan;
}

/* scale_scan's two maxima (cpu.h) over 8 values of a row being scanned:
 * max |bits| (NaN and ±inf included: at least 0x7f800000 exactly when one
 * is there) and max bits as signed integers (max(0, max v) for floats). */
typedef struct {
  __m256i amax, pmax;
} scan_maxima;

/* By value, not through a pointer: the maxima then stay in registers
 * across the encode loop instead of making a chain of stores and loads
 * (the AVX2 encoder's loop had spilled them, at a store-forwarding latency
 * an iteration). */
static inline __attribute__((always_inline)) scan_maxima scan8(scan_maxima m, __m256i u) {
  m.amax = _mm256_max_epu32(m.amax, _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)));
  m.pmax = _mm256_max_epi32(m.pmax, u);
  return m;
}

/* The maxima as scale_scan reports them: true when the row is not finite. */
static bool scan_result(const scan_maxima m, const float *v, int64_t from, int64_t n, bool is_unsigned,
                        double *stat) {
  uint32_t a[8], q[8], am = 0;
  int32_t pm = 0;
  _mm256_storeu_si256((__m256i *)a, m.amax);
  _mm256_storeu_si256((__m256i *)q, m.pmax);
  for (int l = 0; l < 8; l++) {
    am = a[l] > am ? a[l] : am;
    pm = (int32_t)q[l] > pm ? (int32_t)q[l] : pm;
  }
  for (int64_t i = from; i < n; i++) {
    uint32_t u;
    memcpy(&u, v + i, sizeof u);
    am = (u & 0x7fffffffu) > am ? u & 0x7fffffffu : am;
    pm = (int32_t)u > pm ? (int32_t)u : pm;
  }
  if (am >= 0x7f800000u) return true;
  const uint32_t bits = is_unsigned ? (uint32_t)pm : am;
  float f;
  memcpy(&f, &bits, sizeof f);
  *stat = f;
  return false;
}

/* The next row's scan on its own, for the scales the fused encoders hand
 * to an encoder without it. */
static bool scan_alone(const float *next, int64_t n, bool is_unsigned, double *stat) {
  const scan_maxima none = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  return scan_result(none, next, 0, n, is_unsigned, stat);
}

/* cpu.h, quantize_row_scan for the 64-bit formats (and at the AVX2 level
 * the 32-bit ones) over a level's own (static) QUANTIZE64(t, is_unsigned,
 * src, n, scale, dst, next, next_nonfinite, next_stat, stream): the encode
 * with the next row's scan riding along; STREAM true for
 * quantize_row_scan_stream. Scales the fast path does not take go through SLOW, the level's
 * whole-row encoder, and a scan of their own. */
#define WIDE_QUANTIZE_SCAN64(NAME, QUANTIZE64, SLOW, STREAM)                                                   \
  static int NAME(const loom_dtype_traits *t, const float *src, int64_t n, float scale, uint8_t *dst, int64_t *bad, \
                  const float *next, bool *next_nonfinite, double *next_stat) {                                \
    const bool is_unsigned = t->kind == LOOM_DTYPE_KIND_UNSIGNED;                                              \
    if (!(scale > 0) || isinf(scale)) {                                                                        \
      const int rc = SLOW(t, src, n, scale, dst, bad);                                                         \
      *next_nonfinite = scan_alone(next, n, is_unsigned, next_stat);                                           \
      return rc;                                                                                               \
    }                                                                                                          \
    const bool nan = is_unsigned                                                                               \
                       ? QUANTIZE64(t, true, src, n, scale, dst, next, next_nonfinite, next_stat, STREAM)      \
                       : QUANTIZE64(t, false, src, n, scale, dst, next, next_nonfinite, next_stat, STREAM);    \
    return nan_answer(nan, src, n, bad);                                                                       \
  }

#endif
