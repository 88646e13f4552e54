/*
 * The scaled formats' row codecs at the AVX-512 level, in intrinsics: the
 * morph of every integer dtype (2 to 64 bits, ternary, binary) and the
 * decode of the 64-bit ones. They replace codec-simd.h's versions in the
 * AVX-512 table (which stay for scales below 2^-125, where they take the
 * reference's double quotient). Same bits as the reference codecs of
 * core/dtype-int.c; why each shortcut is exact is said where it is taken.
 * docs/kernels.md has the figures.
 */
#include <math.h>
#include <stdint.h>

#include "core/dtype-internal.h"
#include "kernels/cpu.h"

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi,bmi2,avx512f,avx512bw,avx512vl,avx512dq")
#include <immintrin.h>

#include "kernels/codec-wide-shared.h"

/* The codec-simd.h versions, for the cases handled there. */
static loom_quantize_row_fn fallback_quantize[LOOM_DTYPE_COUNT];

/* ---- codes of up to 16 bits: float32 arithmetic ---- */

typedef struct {
  __m512 s, inv, lo, hi, far;
  __m512i qlo, qhi;
} small_params;

/*
 * q = clamp(rne(x / s), lo, hi) without a division, as codec-simd.h's
 * scaled_codes_float: v = x · (1/s) is within |x/s| · 2^-23 of x / s, so
 * q0 = rne(clamp(v)) is off by at most one, and only near a half-integer.
 * Lanes farther than `far` from one are exact as they are; the others are
 * settled by the sign of (q0 ± 1/2) · s − x from one fma each (a single
 * rounding keeps the sign and the zero-ness of the exact value for
 * s ≥ 2^-125), ties going to the even code.
 */
static inline __m512 rounded_quotient(__m512 x, const small_params *p, __mmask16 *near) {
  __m512 v = _mm512_mul_ps(x, p->inv);
  v = _mm512_min_ps(_mm512_max_ps(v, p->lo), p->hi);
  const __m512 q0 = _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  *near = _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_sub_ps(v, q0)), p->far, _CMP_GE_OQ);
  return q0;
}

static inline __m512i settle_ties(__m512 x, __m512 q0, const small_params *p) {
  const __m512 half = _mm512_set1_ps(0.5f), zero = _mm512_setzero_ps();
  const __m512i one = _mm512_set1_epi32(1);
  const __m512 t_hi = _mm512_fmsub_ps(_mm512_add_ps(q0, half), p->s, x);
  const __m512 t_lo = _mm512_fmsub_ps(_mm512_sub_ps(q0, half), p->s, x);
  __m512i q = _mm512_cvtps_epi32(q0); /* q0 is an integer: exact */
  const __mmask16 odd = _mm512_test_epi32_mask(q, one);
  const __mmask16 up = _mm512_cmp_ps_mask(t_hi, zero, _CMP_LT_OQ) | (_mm512_cmp_ps_mask(t_hi, zero, _CMP_EQ_OQ) & odd);
  const __mmask16 down =
    _mm512_cmp_ps_mask(t_lo, zero, _CMP_GT_OQ) | (_mm512_cmp_ps_mask(t_lo, zero, _CMP_EQ_OQ) & odd);
  q = _mm512_mask_add_epi32(q, up, q, one);
  q = _mm512_mask_sub_epi32(q, down, q, one);
  return _mm512_min_epi32(_mm512_max_epi32(q, p->qlo), p->qhi);
}

/*
 * The 16-bit codes, branch-free: their quotients reach 2^16, where v = x ·
 * (1/s) is off by up to 2^-7 and a lane lies that close to a half-integer
 * about once a block, so the tie test above would nearly always run. Here
 * one fma settles every lane. q0 = rne(clamp(v)) by the add of 1.5 · 2^23
 * (|v| < 2^22; the sum's low bit is q0's), and d = v − q0 (exact) points to
 * the only half-integer that x / s can have crossed, m = q0 ± 1/2 (2^-7 is
 * far below 1/2). t = m · s − x from one fma, its sign flipped when d < 0:
 * the code moves from q0 to m ± 1/2 when t < 0, or t = 0 (a tie) and q0 is
 * odd. t is a multiple of the smallest subnormal (s ≥ 2^-125, m a multiple
 * of 1/2), so its single rounding keeps its sign and zero-ness, and "t < 0,
 * or t ≤ 0 if odd" is t < (q0 odd ? the smallest subnormal : +0), the bits
 * of the threshold being q0's low bit. The clamp: q0 = lo has d ≥ 0 (v ≥
 * lo; d = −0 only for v = −0, where x / s > −1/2) and never moves down;
 * q0 = hi may move to hi + 1, which store16's saturating pack brings back.
 */
static inline __m512i code16(__m512 x, const small_params *p) {
  const __m512 magic = _mm512_set1_ps(0x1.8p23f), half = _mm512_set1_ps(0.5f);
  const __m512i sign = _mm512_set1_epi32(INT32_MIN);
  __m512 v = _mm512_mul_ps(x, p->inv);
  v = _mm512_min_ps(_mm512_max_ps(v, p->lo), p->hi);
  const __m512 y = _mm512_add_ps(v, magic);
  const __m512 q0 = _mm512_sub_ps(y, magic);
  const __m512i d = _mm512_castps_si512(_mm512_sub_ps(v, q0));
  /* ±1/2 with the sign of d: (d & sign) | 1/2 */
  const __m512 h = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(d, sign, _mm512_castps_si512(half), 0xea));
  const __m512 m = _mm512_add_ps(q0, h);
  /* t ^ (d & sign) */
  const __m512 t =
    _mm512_castsi512_ps(_mm512_ternarylogic_epi32(_mm512_castps_si512(_mm512_fmsub_ps(m, p->s, x)), d, sign, 0x78));
  const __m512 odd = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(y), _mm512_set1_epi32(1)));
  const __mmask16 move = _mm512_cmp_ps_mask(t, odd, _CMP_LT_OQ);
  return _mm512_cvtps_epi32(_mm512_mask_add_ps(q0, move, m, h)); /* an integer: exact */
}

/* 64 int32 codes (each in range for `bits`) to 64 bytes in column order.
 * The packs interleave the four vectors per 128-bit lane; the permutation
 * puts each vector's 16 bytes back together. */
static inline __m512i bytes_of(__m512i q0, __m512i q1, __m512i q2, __m512i q3, bool is_unsigned) {
  const __m512i w01 = _mm512_packs_epi32(q0, q1), w23 = _mm512_packs_epi32(q2, q3);
  const __m512i b = is_unsigned ? _mm512_packus_epi16(w01, w23) : _mm512_packs_epi16(w01, w23);
  return _mm512_permutexvar_epi32(_mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15), b);
}

/* 64 codes of `bits` (1 < bits ≤ 8) stored LSB first: 8 · bits bytes. */
static inline void store_narrow(const int bits, __m512i bytes, uint8_t *dst) {
  if (bits == 8) {
    _mm512_storeu_si512(dst, bytes);
    return;
  }
  bytes = _mm512_and_si512(bytes, _mm512_set1_epi8((char)((1 << bits) - 1)));
  /* Neighbouring codes merged by multiply-add: lo + hi · 2^bits. */
  __m512i w = _mm512_maddubs_epi16(bytes, _mm512_set1_epi16((short)(1 | (1 << (8 + bits)))));
  if (bits == 4) {
    _mm256_storeu_si256((__m256i *)dst, _mm512_cvtepi16_epi8(w));
    return;
  }
  w = _mm512_madd_epi16(w, _mm512_set1_epi32(1 | (1 << 20))); /* four 2-bit codes in each 32-bit lane */
  _mm_storeu_si128((__m128i *)dst, _mm512_cvtepi32_epi8(w));
}

/* 32 codes of 16 bits (a code of qmax + 1 saturates to qmax). */
static inline void store16(__m512i q0, __m512i q1, bool is_unsigned, uint8_t *dst) {
  const __m512i w = is_unsigned ? _mm512_packus_epi32(q0, q1) : _mm512_packs_epi32(q0, q1);
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi64(_mm512_setr_epi64(0, 2, 4, 6, 1, 3, 5, 7), w));
}

/* One block of 64 values: codes of bits 2..16 (binary apart). Returns the
 * NaN lanes' mask, ORed over the four vectors. */
static inline __mmask16 encode_block64(const int bits, const bool is_unsigned, const float *src, const small_params *p,
                                       uint8_t *dst) {
  __m512 x[4], q0[4];
  __mmask16 near = 0, nan = 0;
  if (bits == 16) {
    __m512i q[4];
    for (int k = 0; k < 4; k++) {
      x[k] = _mm512_loadu_ps(src + 16 * k);
      nan |= _mm512_cmp_ps_mask(x[k], x[k], _CMP_UNORD_Q);
      q[k] = code16(x[k], p);
    }
    store16(q[0], q[1], is_unsigned, dst);
    store16(q[2], q[3], is_unsigned, dst + 64);
    return nan;
  }
  for (int k = 0; k < 4; k++) {
    x[k] = _mm512_loadu_ps(src + 16 * k);
    nan |= _mm512_cmp_ps_mask(x[k], x[k], _CMP_UNORD_Q);
    __mmask16 nk;
    q0[k] = rounded_quotient(x[k], p, &nk);
    near |= nk;
  }
  __m512i q[4];
  if (near) {
    for (int k = 0; k < 4; k++) q[k] = settle_ties(x[k], q0[k], p);
  } else {
    for (int k = 0; k < 4; k++) q[k] = _mm512_cvtps_epi32(q0[k]);
  }
  store_narrow(bits, bytes_of(q[0], q[1], q[2], q[3], is_unsigned), dst);
  return nan;
}

static inline __mmask16 encode_binary64(const float *src, uint8_t *dst) {
  uint64_t bits = 0;
  __mmask16 nan = 0;
  for (int k = 0; k < 4; k++) {
    const __m512 x = _mm512_loadu_ps(src + 16 * k);
    nan |= _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
    /* sign(w), sign(0) = +1: the code is x < 0, -0 included as +1 */
    bits |= (uint64_t)_mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ) << (16 * k);
  }
  memcpy(dst, &bits, sizeof bits);
  return nan;
}

static inline __attribute__((always_inline)) bool quantize_small_rows(const int bits, const bool is_unsigned,
                                                                      const float *src, int64_t n,
                                                                      const small_params *p, uint8_t *dst) {
  __mmask16 nan = 0;
  int64_t i = 0;
  /* A morph scans the next row as soon as this one is encoded: fetching it
   * now keeps memory busy while this row is encoded from the cache (a row
   * beyond the array only costs a prefetch, which never faults). Measured a
   * gain for the 16-bit codes (and the 32-bit ones, quantize32) on Zen 5,
   * where the narrower formats measured the same or slower with it; on a
   * Sapphire Rapids VM those gained 25-40 % (int8 morph 1.0 -> 1.25 of
   * memcpy, ternary 0.73 -> 0.95), as the AVX2 level's on Zen 3, so every
   * width but binary's takes it (docs/kernels.md). */
  const uintptr_t next = (uintptr_t)(src + n);
  for (; i + 64 <= n; i += 64) {
    if (bits > 1)
      for (int k = 0; k < 4; k++)
        _mm_prefetch((const char *)(next + sizeof *src * (uintptr_t)(i + 16 * k)), _MM_HINT_T0);
    nan |= bits == 1 ? encode_binary64(src + i, dst + i / 8)
                     : encode_block64(bits, is_unsigned, src + i, p, dst + i * bits / 8);
  }
  if (i < n) { /* zero-padded: zero encodes to code 0, so the padding bits come out zero */
    float tail[64] = {0};
    uint8_t out[128];
    memcpy(tail, src + i, (size_t)(n - i) * sizeof *tail);
    nan |= bits == 1 ? encode_binary64(tail, out) : encode_block64(bits, is_unsigned, tail, p, out);
    memcpy(dst + i * bits / 8, out, (size_t)(((n - i) * bits + 7) / 8));
  }
  return nan != 0;
}

/* ---- 32-bit codes: double arithmetic ---- */

typedef struct {
  __m512d s, inv, lo, hi, far;
} wide_params;

/*
 * q = clamp(rne(x / s), lo, hi) for the 32-bit formats, eight lanes: v = x ·
 * (1/s) in double is within |x/s| · 2^-52 ≤ 2^-20 of x / s, so rne(clamp(v))
 * is off by at most one and only within 2^-20 of a half-integer; such lanes
 * (about one in 2^18) are settled by the fma signs as above, in double, where
 * (q0 ± 1/2) is exact and no product underflows.
 */
static inline __m256i code32(__m256 xf, const wide_params *p, bool is_unsigned) {
  const __m512d x = _mm512_cvtps_pd(xf);
  __m512d v = _mm512_mul_pd(x, p->inv);
  v = _mm512_min_pd(_mm512_max_pd(v, p->lo), p->hi);
  __m512d q = _mm512_roundscale_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  if (_mm512_cmp_pd_mask(_mm512_abs_pd(_mm512_sub_pd(v, q)), p->far, _CMP_GE_OQ)) {
    const __m512d half = _mm512_set1_pd(0.5), zero = _mm512_setzero_pd(), one = _mm512_set1_pd(1.0);
    const __m512d t_hi = _mm512_fmsub_pd(_mm512_add_pd(q, half), p->s, x);
    const __m512d t_lo = _mm512_fmsub_pd(_mm512_sub_pd(q, half), p->s, x);
    /* q is an integer of at most 33 bits: q / 2 is exact, and odd when it has a fraction */
    const __m512d h = _mm512_mul_pd(q, half);
    const __mmask8 odd = _mm512_cmp_pd_mask(h, _mm512_roundscale_pd(h, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC),
                                            _CMP_NEQ_OQ);
    const __mmask8 up = _mm512_cmp_pd_mask(t_hi, zero, _CMP_LT_OQ) | (_mm512_cmp_pd_mask(t_hi, zero, _CMP_EQ_OQ) & odd);
    const __mmask8 down =
      _mm512_cmp_pd_mask(t_lo, zero, _CMP_GT_OQ) | (_mm512_cmp_pd_mask(t_lo, zero, _CMP_EQ_OQ) & odd);
    q = _mm512_mask_add_pd(q, up, q, one);
    q = _mm512_mask_sub_pd(q, down, q, one);
    q = _mm512_min_pd(_mm512_max_pd(q, p->lo), p->hi);
  }
  /* integers in range: the conversions are exact; negative codes are two's complement */
  return is_unsigned ? _mm512_cvtpd_epu32(q) : _mm512_cvtpd_epi32(q);
}

static bool quantize32(bool is_unsigned, const float *src, int64_t n, const wide_params *p, uint8_t *dst) {
  __mmask8 nan = 0;
  int64_t i = 0;
  const uintptr_t next = (uintptr_t)(src + n); /* as in quantize_small_rows (measured: a gain here too) */
  for (; i + 16 <= n; i += 16) {
    _mm_prefetch((const char *)(next + sizeof *src * (uintptr_t)i), _MM_HINT_T0);
    const __m512 x = _mm512_loadu_ps(src + i);
    nan |= (__mmask8)(_mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q) != 0);
    _mm256_storeu_si256((__m256i *)(dst + 4 * i), code32(_mm512_castps512_ps256(x), p, is_unsigned));
    _mm256_storeu_si256((__m256i *)(dst + 4 * i + 32), code32(_mm512_extractf32x8_ps(x, 1), p, is_unsigned));
  }
  for (; i < n; i += 8) {
    float tail[8] = {0};
    uint32_t out[8];
    const int64_t len = n - i < 8 ? n - i : 8;
    memcpy(tail, src + i, (size_t)len * sizeof *tail);
    const __m256 x = _mm256_loadu_ps(tail);
    nan |= (__mmask8)(_mm256_cmp_ps_mask(x, x, _CMP_UNORD_Q) != 0);
    _mm256_storeu_si256((__m256i *)out, code32(x, p, is_unsigned));
    memcpy(dst + 4 * i, out, (size_t)len * sizeof *out);
  }
  return nan != 0;
}

/* ---- 64-bit codes ---- */

/*
 * rne(x / s) for the 64-bit formats, whose codes go beyond the 53 bits of a
 * double. With Q = rne(x · (1/s)) in double (within |x/s| · 2^-51 of the
 * quotient: a few units of its last place), the remainder r = x − Q·s is
 * exact in double (an fma gives it): x and Q·s are multiples of a common
 * power of two, and |r| is below 2^26 of them. Then x / s = Q + r/s with Q
 * an integer, so rne(x / s) = Q + c, c the integer nearest r / s, ties going
 * to the even sum: d = r · (1/s) is within 2^-39 of r / s (|r/s| < 2^13), so
 * c0 = rne(d) is c unless d lies within 2^-30 of a half-integer (ties: rare
 * beyond 2^23, impossible beyond 2^24); there the signs of (c0 ± 1/2)·s − r
 * from one fma each settle it, as for the narrow codes. Q + c is formed in
 * 64-bit integers. Everything here is odd in x (rne and the products are
 * symmetric), so signed codes need no sign handling of their own.
 *
 * The hot path is bound by the two FP ports (docs/kernels.md): c0 is read
 * from the bits of one more fma (quotients64) instead of rounded and
 * converted, and the near-tie and out-of-range lanes share one test, whose
 * blocks are settled out of line (encode8_64_rest). Lanes with |Q| at or above qmax + 1 −
 * 2^14 might reach the clamp (|c| ≤ 2^13 + 1 below it): those (a row's
 * largest values, ±inf, NaN, quotients of a tiny scale) go through the
 * reference's integer division, one lane at a time, which also tells the
 * NaN lanes.
 */
typedef struct {
  __m512d s, inv, limit;
} wide64_params;

typedef struct {
  __m512d r;
  __m512i q, m;
  __mmask8 slow, near;
} block64;

/* The hot path: Q + c of 8 values, and which lanes need more. c comes from
 * t = rne(r · (1/s) · 2^30), read out of the bits of one fma, y = r · (1/s) +
 * 1.5 · 2^22 (|r/s| < 2^13 + 1 keeps y in [2^22, 2^23), where its last place
 * is 2^-30): t / 2^30 is within 2^-31 + 2^-39 of r / s (the fma's rounding,
 * and 1/s's relative error 2^-53). c0 = floor((t + 2^29) / 2^30) is then c
 * whenever t lies farther than 2 from an odd multiple of 2^29: no
 * half-integer lies between t / 2^30 and r / s. The nearer lanes (about one
 * in 2^28, ties included) are settled out of line. All of it is integer work
 * beside the fma, which leaves the two FP ports to the quotient. */
static inline __attribute__((always_inline)) block64 quotients64(const bool is_unsigned, const float *in,
                                                                 const wide64_params *p) {
  const __m512d magic = _mm512_set1_pd(0x1.8p22);
  const __m512i half_bits = _mm512_set1_epi64(INT64_C(0x4158000000000000) - (INT64_C(1) << 29));
  const __m512i low = _mm512_set1_epi64((INT64_C(1) << 30) - 1);
  block64 b;
  const __m512d x = _mm512_cvtps_pd(_mm256_loadu_ps(in));
  /* unsigned: negatives clamp to 0, as an input of 0; max(0, x) returns x
   * when either is NaN, so a NaN goes on to the slow lanes */
  const __m512d a = is_unsigned ? _mm512_max_pd(_mm512_setzero_pd(), x) : x;
  const __m512d q = _mm512_roundscale_pd(_mm512_mul_pd(a, p->inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  b.slow = _mm512_cmp_pd_mask(_mm512_abs_pd(q), p->limit, _CMP_NLT_UQ); /* NaN too */
  b.r = _mm512_fnmadd_pd(q, p->s, a);                                   /* a − q·s, exact */
  /* u = t + 2^29 (the bits of 1.5 · 2^22 are 0x4158000000000000) */
  const __m512i u = _mm512_sub_epi64(_mm512_castpd_si512(_mm512_fmadd_pd(b.r, p->inv, magic)), half_bits);
  b.near = _mm512_cmple_epu64_mask(_mm512_and_si512(_mm512_add_epi64(u, _mm512_set1_epi64(2)), low),
                                   _mm512_set1_epi64(4));
  /* Q is in range in the lanes that are kept (the others are replaced): exact */
  b.q = is_unsigned ? _mm512_cvtpd_epu64(q) : _mm512_cvtpd_epi64(q);
  b.m = _mm512_add_epi64(b.q, _mm512_srai_epi64(u, 30));
  return b;
}

/* A block with a lane near a tie or out of the fast range, or a row's last
 * few values (len < 8, the rest of `in` zero): computed again out of line, so
 * that the hot loop keeps nothing for it. c0 = rne(r · (1/s)) in double is off
 * by at most one (|r/s| < 2^13 + 1, the product within 2^-39), and the signs
 * of (c0 ± 1/2)·s − r from one fma each settle every lane, as for the narrow
 * codes. Returns the NaN lanes' mask. */
static __attribute__((noinline)) __mmask8 encode8_64_rest(const loom_dtype_traits *t, const bool is_unsigned,
                                                         const float *in, int64_t len, float scale,
                                                         const wide64_params *p, uint8_t *dst) {
  const block64 b = quotients64(is_unsigned, in, p);
  const __m512d half = _mm512_set1_pd(0.5), zero = _mm512_setzero_pd();
  const __m512d c0 = _mm512_roundscale_pd(_mm512_mul_pd(b.r, p->inv), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512i m = _mm512_add_epi64(b.q, _mm512_cvtpd_epi64(c0));
  const __m512d t_hi = _mm512_fmsub_pd(_mm512_add_pd(c0, half), p->s, b.r);
  const __m512d t_lo = _mm512_fmsub_pd(_mm512_sub_pd(c0, half), p->s, b.r);
  const __m512i one = _mm512_set1_epi64(1);
  const __mmask8 odd = _mm512_test_epi64_mask(m, one);
  const __mmask8 up = _mm512_cmp_pd_mask(t_hi, zero, _CMP_LT_OQ) | (_mm512_cmp_pd_mask(t_hi, zero, _CMP_EQ_OQ) & odd);
  const __mmask8 down = _mm512_cmp_pd_mask(t_lo, zero, _CMP_GT_OQ) | (_mm512_cmp_pd_mask(t_lo, zero, _CMP_EQ_OQ) & odd);
  m = _mm512_mask_add_epi64(m, up, m, one);
  m = _mm512_mask_sub_epi64(m, down, m, one);
  uint64_t code[8];
  _mm512_storeu_si512(code, m);
  const __mmask8 nan = b.slow ? (__mmask8)settle64_lanes(t, is_unsigned, in, scale, b.slow, code) : 0;
  memcpy(dst, code, (size_t)len * sizeof *code);
  return nan;
}

/* The codes of a row; with `scan`, the next row's scale_scan in the same
 * loop (8 of its values beside each 8 encoded: the scan's loads go to
 * memory while this row's arithmetic runs, instead of a pass of their own). */
static inline __attribute__((always_inline)) bool quantize64(const loom_dtype_traits *t, const bool is_unsigned,
                                                              const float *src, int64_t n, float scale, uint8_t *dst,
                                                              const float *scan, bool *scan_nonfinite,
                                                              double *scan_stat, const bool stream) {
  const wide64_params p = {
    .s = _mm512_set1_pd(scale),
    .inv = _mm512_set1_pd(1.0 / (double)scale),
    .limit = _mm512_set1_pd(is_unsigned ? 0x1p64 - 0x1p14 : 0x1p63 - 0x1p14),
  };
  scan_maxima sm = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  __mmask8 nan = 0;
  /* Streamed (cpu.h, quantize_row_scan_stream), the h values before dst's
   * first 64-byte boundary go through the out-of-line encoder and its
   * ordinary stores, and the scan of the next row keeps its own index,
   * j = i − h, from its first value. */
  const int64_t h = stream ? loom_stream_head(dst, 8, n) : 0;
  const bool nt = stream && !((uintptr_t)dst & 7) && n - h >= 8;
  if (nt && h) nan |= encode8_64_rest(t, is_unsigned, src, h, scale, &p, dst);
  int64_t i = nt ? h : 0;
  const int64_t lead = i;
  const uintptr_t next = (uintptr_t)(src + n); /* as in quantize_small_rows */
  for (; i + 8 <= n; i += 8) {
    const int64_t j = i - lead;
    if (scan) {
      sm = scan8(sm, _mm256_loadu_si256((const __m256i *)(const void *)(scan + j)));
      /* 4 KiB ahead in the scanned row (and on into the row after it, which
       * the next call scans): 9.3–9.7 → 9.0–9.1 ms a morph of 4096 × 4096 */
      if (!(j & 8)) _mm_prefetch((const char *)((uintptr_t)scan + sizeof *scan * (uintptr_t)(j + 1024)), _MM_HINT_T0);
    } else if (!(i & 8)) {
      _mm_prefetch((const char *)(next + sizeof *src * (uintptr_t)i), _MM_HINT_T0);
    }
    const block64 b = quotients64(is_unsigned, src + i, &p);
    /* one kortest for both masks (GCC otherwise moves each to a register to OR them) */
    if (__builtin_expect(_kortestz_mask8_u8(b.slow, b.near), 1)) {
      if (nt)
        _mm512_stream_si512((void *)(dst + 8 * i), b.m);
      else
        _mm512_storeu_si512(dst + 8 * i, b.m);
    } else {
      nan |= encode8_64_rest(t, is_unsigned, src + i, 8, scale, &p, dst + 8 * i);
    }
  }
  if (scan) *scan_nonfinite = scan_result(sm, scan, i - lead, n, is_unsigned, scan_stat);
  if (i < n) {
    float tail[8] = {0};
    memcpy(tail, src + i, (size_t)(n - i) * sizeof *tail);
    nan |= encode8_64_rest(t, is_unsigned, tail, n - i, scale, &p, dst + 8 * i);
  }
  return nan != 0;
}

static int quantize_scaled(const loom_dtype_traits *t, const float *src, int64_t n, float scale, uint8_t *dst,
                           int64_t *bad) {
  const bool binary = t->kind == LOOM_DTYPE_KIND_BINARY;
  /* Invalid and zero scales, and scales too small for the fma signs, as before. */
  if (!(scale > 0) || isinf(scale) || (!binary && t->bits <= 16 && scale < 0x1p-125f))
    return fallback_quantize[t->id](t, src, n, scale, dst, bad);
  const bool is_unsigned = t->kind == LOOM_DTYPE_KIND_UNSIGNED;
  const double hi = (double)t->qmax, lo = is_unsigned ? 0.0 : -hi;
  bool nan;
  if (t->bits <= 16) {
    const small_params p = {
      .s = _mm512_set1_ps(scale),
      .inv = _mm512_set1_ps(1.0f / scale),
      .lo = _mm512_set1_ps((float)lo),
      .hi = _mm512_set1_ps((float)hi),
      .far = _mm512_set1_ps(0.5f - (float)((hi + 1) * 0x1p-22)),
      .qlo = _mm512_set1_epi32((int32_t)lo),
      .qhi = _mm512_set1_epi32((int32_t)hi),
    };
#define SMALL_CASE(B)                                                                                 \
  nan = is_unsigned ? quantize_small_rows(B, true, src, n, &p, dst) : quantize_small_rows(B, false, src, n, &p, dst)
    switch (t->bits) {
    case 1: nan = quantize_small_rows(1, false, src, n, &p, dst); break;
    case 2: SMALL_CASE(2); break;
    case 4: SMALL_CASE(4); break;
    case 8: SMALL_CASE(8); break;
    default: SMALL_CASE(16); break;
    }
#undef SMALL_CASE
  } else if (t->bits == 32) {
    const wide_params p = {
      .s = _mm512_set1_pd(scale),
      .inv = _mm512_set1_pd(1.0 / (double)scale),
      .lo = _mm512_set1_pd(lo),
      .hi = _mm512_set1_pd(hi),
      .far = _mm512_set1_pd(0.5 - 0x1p-19),
    };
    nan = quantize32(is_unsigned, src, n, &p, dst);
  } else {
    nan = is_unsigned ? quantize64(t, true, src, n, scale, dst, NULL, NULL, NULL, false)
                      : quantize64(t, false, src, n, scale, dst, NULL, NULL, NULL, false);
  }
  return nan_answer(nan, src, n, bad);
}

WIDE_QUANTIZE_SCAN64(quantize_scan64, quantize64, quantize_scaled, false)
WIDE_QUANTIZE_SCAN64(quantize_scan64_stream, quantize64, quantize_scaled, true)

/* ---- 64-bit decode: (float)(double(q) · s), eight lanes ---- */

/* The first cnt ≤ 8 values at src, nothing past them read or written. */
static inline __attribute__((always_inline)) void dequantize64_part(const bool is_unsigned, __m512d s,
                                                                    const uint8_t *src, int64_t cnt, float *dst) {
  const __mmask8 m = (__mmask8)((1u << cnt) - 1);
  const __m512i c = _mm512_maskz_loadu_epi64(m, src);
  const __m512d q = is_unsigned ? _mm512_cvtepu64_pd(c) : _mm512_cvtepi64_pd(c);
  _mm256_mask_storeu_ps(dst, m, _mm512_cvtpd_ps(_mm512_mul_pd(q, s)));
}

static inline __attribute__((always_inline)) void dequantize64_rows(const bool stream, const loom_dtype_traits *t,
                                                                    const uint8_t *src, int64_t n, float scale,
                                                                    float *dst) {
  const bool is_unsigned = t->kind == LOOM_DTYPE_KIND_UNSIGNED;
  const __m512d s = _mm512_set1_pd(scale);
  int64_t i = 0;
  /* The integer-to-double conversions round to nearest, as C's casts do in
   * the default rounding mode; the product and the narrowing likewise.
   * Streamed, the values before dst's first 64-byte boundary are stored
   * ordinarily (cpu.h). */
  if (stream) {
    const int64_t head = loom_stream_head(dst, sizeof(float), n);
    for (; i < head; i += 8) dequantize64_part(is_unsigned, s, src + 8 * i, head - i < 8 ? head - i : 8, dst + i);
    i = head;
  }
  for (; i + 8 <= n; i += 8) {
    const __m512i c = _mm512_loadu_si512(src + 8 * i);
    const __m512d q = is_unsigned ? _mm512_cvtepu64_pd(c) : _mm512_cvtepi64_pd(c);
    if (stream)
      _mm256_stream_ps(dst + i, _mm512_cvtpd_ps(_mm512_mul_pd(q, s)));
    else
      _mm256_storeu_ps(dst + i, _mm512_cvtpd_ps(_mm512_mul_pd(q, s)));
  }
  if (i < n) dequantize64_part(is_unsigned, s, src + 8 * i, n - i, dst + i);
}

static void dequantize64(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale, const float *lut,
                         float *dst) {
  (void)lut;
  dequantize64_rows(false, t, src, n, scale, dst);
}

/* cpu.h, dequantize_row_stream; the loop aligned to 64 bytes as
 * codec-wide-avx2.c's (measured there only) */
__attribute__((optimize("align-loops=64"))) static void dequantize64_stream(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                const float *lut, float *dst) {
  (void)lut;
  dequantize64_rows(true, t, src, n, scale, dst);
}

void loom_kernels_fill_scaled_avx512(loom_kernels *k) {
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    if (!t->scaled) continue;
    fallback_quantize[d] = k->quantize_row[d];
    k->quantize_row[d] = quantize_scaled;
    /* Not the AVX2 level's encoder with the next row's scan inside
     * (codec-scan-simd.h), which this table starts with: on a Xeon with
     * AMX (2026-12-07) the scan of a row of its own and this level's
     * encoder, which prefetches the next row, morphed the 1- to 16-bit
     * formats 1.3-2.8 times faster (ternary 16.7 -> 5.9 ms at 4096 x
     * 4096; docs/kernels.md). */
    if (t->bits <= 16) k->quantize_row_scan[d] = NULL;
    if (t->bits == 64) {
      k->dequantize_row[d] = dequantize64;
      k->dequantize_row_stream[d] = dequantize64_stream;
      k->quantize_row_scan[d] = quantize_scan64;
      k->quantize_row_scan_stream[d] = quantize_scan64_stream;
    }
  }
}
#pragma GCC pop_options
#endif
