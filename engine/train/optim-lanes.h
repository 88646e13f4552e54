/*
 * Internal to the optimizers' vector loops (optim-adam.c, optim-sgd.c):
 * keeping float32 multiplies, divides and roots away from subnormals
 * without changing a bit.
 *
 * On the Zen 5 cores this was measured on, a float multiply, divide or
 * square root with a subnormal operand or result takes about 60 ns instead
 * of 1 (a microcode assist, for the whole vector: one lane is enough),
 * while adds, compares, conversions and results that underflow to 0 take no
 * such penalty. Optimizers make subnormals as a matter of course: a state
 * that a weight's zero gradient (an input that is always 0, a dead unit)
 * multiplies by a decay every step sinks into the subnormal range within a
 * few hundred steps and stays there for good (k · 2^-149 times 0.9 rounds
 * back to k · 2^-149 for k ≤ 4), and tiny gradients square to subnormals.
 *
 * A loop tests a vector's operands from their bits before the operations
 * that take them: a lane is at risk where 0 < |x| < limit, the limit making
 * every product with the coefficient at hand at least 2^-125 (twice the
 * smallest normal: a margin for the rounding) and x itself normal. The test
 * is conservative: a lane wrongly thought at risk costs time, never a bit.
 * A vector at risk does its risky operations through double and rounds
 * back to float32 (the *_exact functions; subnormals are normal doubles,
 * and the conversions take no assist), which gives the float32 result
 * exactly: a product of two floats is exact in double, so one rounding to
 * float32 is the float32 multiply's; a double quotient or square root of
 * floats, rounded to float32, is the float32 operation's (double rounding is
 * harmless for / and √ when the wider format has at least 2p + 2 bits, 53 ≥
 * 50; for a subnormal result, whose grid is coarser, a quotient of floats
 * that is not a midpoint lies at least 2^-48 relative from one, beyond
 * double's 2^-53). Adds stay float32 adds.
 */
#pragma once
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "kernels/cpu.h"

/* The bits of the smallest float ≥ limit (+inf's bits beyond FLT_MAX). */
static inline uint32_t limit_bits(double limit) {
  if (!(limit < (double)FLT_MAX)) return 0x7f800000u;
  float f = (float)limit;
  if ((double)f < limit) f = nextafterf(f, INFINITY);
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

/* The smallest |x| whose product with each of c[0..n) reaches 2^-125. */
static inline double product_limit(const float *c, int n) {
  double limit = 0x1p-125;
  for (int i = 0; i < n; i++) {
    double a = fabs((double)c[i]);
    if (a > 0 && 0x1p-125 / a > limit) limit = 0x1p-125 / a;
  }
  return limit;
}

/* [lo, hi) of |x| (as bits) where c · x · x is subnormal, with margins
 * either side: below lo the square underflows to 0, which takes no assist. */
static inline void square_band(float c, uint32_t *lo, uint32_t *hi) {
  const double a = fabs((double)c);
  *lo = a > 0 ? limit_bits(sqrt(0x1p-153 / a)) : 0;
  *hi = a > 0 ? limit_bits(sqrt(0x1p-124 / a)) : 0;
  if (*hi < *lo) *hi = *lo;
}

/* The largest K < 2^23 such that rne(j · b) = j for every j in [1, K]: a
 * subnormal j · 2^-149 times b rounds to j' · 2^-149, j' the integer nearest
 * j · b (exact in double), so those values are fixed points of x → x · b.
 * They are j with j · |1 − b| < 1/2 (at 1/2 the tie goes to the even one),
 * so K is about 1 / (2 |1 − b|), settled by the rounding itself. */
static inline uint32_t fixed_points(float b) {
  const uint32_t top = 0x7fffff;
  const double d = fabs(1.0 - (double)b), guess = d > 0 ? floor(0.5 / d) : (double)top;
  uint32_t k = guess < (double)top ? (uint32_t)guess : top;
  while (k > 0 && nearbyint((double)k * (double)b) != (double)k) k--;
  while (k < top && nearbyint((double)(k + 1) * (double)b) == (double)(k + 1)) k++;
  return k;
}

#if defined(LOOM_KERNELS_X86)
/* Included before any target pragma: its intrinsics then carry their own
 * targets, so each function below can use those of its level. */
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")

/* Lanes with 0 < |x| < limit (the bits of |x| minus one, unsigned). */
static inline __mmask16 tiny512(__m512 x, uint32_t limit) {
  const __m512i a = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
  return _mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, _mm512_set1_epi32(1)), _mm512_set1_epi32((int)(limit - 1)));
}

/* Lanes where 0 < |a| < limit or 0 < |b| < limit: the smaller of |a| − 1
 * and |b| − 1, unsigned, below limit − 1 (zeros wrap to the top). */
static inline __mmask16 tiny_pair512(__m512 a, __m512 b, uint32_t limit) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), one = _mm512_set1_epi32(1);
  const __m512i da = _mm512_sub_epi32(_mm512_and_si512(_mm512_castps_si512(a), abs_mask), one);
  const __m512i db = _mm512_sub_epi32(_mm512_and_si512(_mm512_castps_si512(b), abs_mask), one);
  return _mm512_cmplt_epu32_mask(_mm512_min_epu32(da, db), _mm512_set1_epi32((int)(limit - 1)));
}

/* Lanes with lo ≤ |x| < hi. */
static inline __mmask16 band512(__m512 x, uint32_t lo, uint32_t hi) {
  const __m512i a = _mm512_and_si512(_mm512_castps_si512(x), _mm512_set1_epi32(0x7fffffff));
  return _mm512_cmplt_epu32_mask(_mm512_sub_epi32(a, _mm512_set1_epi32((int)lo)), _mm512_set1_epi32((int)(hi - lo)));
}

/* Lanes of num / den (num ≠ 0) with a subnormal operand or a quotient that
 * might fall below 2^-125: a quotient is at least 2^(e_num − e_den − 1) for
 * the biased exponents e of normal operands. */
static inline __mmask16 tiny_quotient512(__m512 num, __m512 den) {
  const __m512i e_mask = _mm512_set1_epi32(0xff), zero = _mm512_setzero_si512();
  const __m512i en = _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(num), 23), e_mask);
  const __m512i ed = _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(den), 23), e_mask);
  const __mmask16 nonzero = _mm512_test_epi32_mask(_mm512_castps_si512(num), _mm512_set1_epi32(0x7fffffff));
  return _mm512_mask_cmplt_epi32_mask(nonzero, _mm512_sub_epi32(en, ed), _mm512_set1_epi32(-123)) |
         _mm512_mask_cmpeq_epi32_mask(nonzero, _mm512_min_epi32(en, ed), zero);
}

/* One float32 operation through double (no assist), rounded once more. */
static inline __m512 mul_exact512(__m512 a, __m512 b) {
  const __m512d blo = _mm512_cvtps_pd(_mm512_castps512_ps256(b)), bhi = _mm512_cvtps_pd(_mm512_extractf32x8_ps(b, 1));
  const __m512d r_lo = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(a)), blo);
  const __m512d r_hi = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(a, 1)), bhi);
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(r_lo)), _mm512_cvtpd_ps(r_hi), 1);
}

static inline __m512 div_exact512(__m512 a, __m512 b) {
  const __m512d blo = _mm512_cvtps_pd(_mm512_castps512_ps256(b)), bhi = _mm512_cvtps_pd(_mm512_extractf32x8_ps(b, 1));
  const __m512d r_lo = _mm512_div_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(a)), blo);
  const __m512d r_hi = _mm512_div_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(a, 1)), bhi);
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(r_lo)), _mm512_cvtpd_ps(r_hi), 1);
}

static inline __m512 sqrt_exact512(__m512 a) {
  const __m512d r_lo = _mm512_sqrt_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(a)));
  const __m512d r_hi = _mm512_sqrt_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(a, 1)));
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(r_lo)), _mm512_cvtpd_ps(r_hi), 1);
}

/* x · c, through double (c_d: c as doubles) when a lane of x is at risk
 * (0 < |x| < limit). */
static inline __m512 mul_c512(__m512 x, __m512 c, __m512d c_d, uint32_t limit) {
  if (!tiny512(x, limit)) return _mm512_mul_ps(x, c);
  const __m512d r_lo = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(x)), c_d);
  const __m512d r_hi = _mm512_mul_pd(_mm512_cvtps_pd(_mm512_extractf32x8_ps(x, 1)), c_d);
  return _mm512_insertf32x8(_mm512_castps256_ps512(_mm512_cvtpd_ps(r_lo)), _mm512_cvtpd_ps(r_hi), 1);
}

#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx2,fma")

/* Lanes (all ones) with lo ≤ |x| < hi: unsigned compares as signed ones
 * with both sides offset by 2^31. */
static inline __m256i band256v(__m256 x, uint32_t lo, uint32_t hi) {
  const __m256i bias = _mm256_set1_epi32(INT32_MIN);
  const __m256i a = _mm256_and_si256(_mm256_castps_si256(x), _mm256_set1_epi32(0x7fffffff));
  const __m256i d = _mm256_xor_si256(_mm256_sub_epi32(a, _mm256_set1_epi32((int)lo)), bias);
  return _mm256_cmpgt_epi32(_mm256_xor_si256(_mm256_set1_epi32((int)(hi - lo)), bias), d);
}

/* tiny_pair512 for 8 lanes. */
static inline __m256i tiny_pair256v(__m256 a, __m256 b, uint32_t limit) {
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), one = _mm256_set1_epi32(1),
                bias = _mm256_set1_epi32(INT32_MIN);
  const __m256i da = _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(a), abs_mask), one);
  const __m256i db = _mm256_sub_epi32(_mm256_and_si256(_mm256_castps_si256(b), abs_mask), one);
  const __m256i d = _mm256_xor_si256(_mm256_min_epu32(da, db), bias);
  return _mm256_cmpgt_epi32(_mm256_xor_si256(_mm256_set1_epi32((int)(limit - 1)), bias), d);
}

/* Lanes with 0 < |x| < limit. */
static inline __m256i tiny256v(__m256 x, uint32_t limit) { return band256v(x, 1, limit); }
static inline int tiny256(__m256 x, uint32_t limit) { return _mm256_movemask_epi8(tiny256v(x, limit)); }
static inline int band256(__m256 x, uint32_t lo, uint32_t hi) { return _mm256_movemask_epi8(band256v(x, lo, hi)); }

static inline int tiny_quotient256(__m256 num, __m256 den) {
  const __m256i e_mask = _mm256_set1_epi32(0xff), zero = _mm256_setzero_si256();
  const __m256i en = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(num), 23), e_mask);
  const __m256i ed = _mm256_and_si256(_mm256_srli_epi32(_mm256_castps_si256(den), 23), e_mask);
  const __m256i is_zero =
    _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(num), _mm256_set1_epi32(0x7fffffff)), zero);
  const __m256i risk = _mm256_or_si256(_mm256_cmpgt_epi32(_mm256_set1_epi32(-123), _mm256_sub_epi32(en, ed)),
                                       _mm256_cmpeq_epi32(_mm256_min_epi32(en, ed), zero));
  return _mm256_movemask_epi8(_mm256_andnot_si256(is_zero, risk));
}

static inline __m256 mul_exact256(__m256 a, __m256 b) {
  const __m256d r_lo =
    _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(a)), _mm256_cvtps_pd(_mm256_castps256_ps128(b)));
  const __m256d r_hi =
    _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)), _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1)));
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(r_lo)), _mm256_cvtpd_ps(r_hi), 1);
}

static inline __m256 div_exact256(__m256 a, __m256 b) {
  const __m256d r_lo =
    _mm256_div_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(a)), _mm256_cvtps_pd(_mm256_castps256_ps128(b)));
  const __m256d r_hi =
    _mm256_div_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)), _mm256_cvtps_pd(_mm256_extractf128_ps(b, 1)));
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(r_lo)), _mm256_cvtpd_ps(r_hi), 1);
}

static inline __m256 sqrt_exact256(__m256 a) {
  const __m256d r_lo = _mm256_sqrt_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(a)));
  const __m256d r_hi = _mm256_sqrt_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(a, 1)));
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(r_lo)), _mm256_cvtpd_ps(r_hi), 1);
}

static inline __m256 mul_c256(__m256 x, __m256 c, __m256d c_d, uint32_t limit) {
  if (!tiny256(x, limit)) return _mm256_mul_ps(x, c);
  const __m256d r_lo = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_castps256_ps128(x)), c_d);
  const __m256d r_hi = _mm256_mul_pd(_mm256_cvtps_pd(_mm256_extractf128_ps(x, 1)), c_d);
  return _mm256_insertf128_ps(_mm256_castps128_ps256(_mm256_cvtpd_ps(r_lo)), _mm256_cvtpd_ps(r_hi), 1);
}

#pragma GCC pop_options
#endif
