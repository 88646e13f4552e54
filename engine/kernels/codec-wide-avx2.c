/*
 * The wide formats' morph at the AVX2 level, in intrinsics: int32 and
 * uint32, whose codes go beyond a float's mantissa, and int64 and uint64,
 * beyond a double's; and the 64-bit decode. The generic codecs of
 * codec-simd.h computed these through GCC's vector extensions (32-bit
 * morph: 0.41 of memcpy; 64-bit decode: 0.66) or not at all (64-bit morph:
 * the reference's integer division, 0.02); codec-scaled-avx512.c's
 * encoders need AVX-512DQ's conversions between doubles and 64-bit
 * integers, which AVX2 lacks, so here every integer is read from the bits
 * of a double instead (below). Same bits as the reference (core/dtype-int.c:
 * the double quotient, and for 32 and 64 bits loom_rne_div_exact's long
 * division); why each step is exact is said where it is taken.
 * docs/kernels.md has the figures.
 */
#include <math.h>
#include <stdint.h>

#include "core/dtype-internal.h"
#include "kernels/cpu.h"

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c,bmi,bmi2")
#include <immintrin.h>

#include "kernels/codec-wide-shared.h"

/* The codec-simd.h versions, for the scales handled there. */
static loom_quantize_row_fn fallback_quantize[LOOM_DTYPE_COUNT];

/* ---- 32-bit codes ---- */

/*
 * q = clamp(rne(x / s), lo, hi) with |q| < 2^32. w = clamp(x · (1/s)) is
 * within 2^32 · 2^-52 = 2^-20 of x / s wherever the clamp leaves it alone
 * (and where it does not, w = lo or hi is the code: x / s lies beyond it or
 * within 2^-20 of it). So where w lies farther than 2^-19 from a
 * half-integer, rne(w), the add of 1.5 · 2^52, is the code, read from the
 * sum's low 32 bits in two's complement; w − rne(w) is exact. Nearer lanes
 * (about one in 2^18 at the top of the range, exact ties included) are
 * settled out of line. The clamp is max(lo, w) then min(hi, ·), which pass
 * a NaN on (they return their second operand when one is NaN), so a NaN
 * lane fails the distance test and is told there too.
 */
typedef struct {
  __m256d s, inv, lo, hi;
} wide32_params;

static inline __attribute__((always_inline)) __m256d clamped_quotient(const float *in, const wide32_params *p) {
  const __m256d w = _mm256_mul_pd(_mm256_cvtps_pd(_mm_loadu_ps(in)), p->inv);
  return _mm256_min_pd(p->hi, _mm256_max_pd(p->lo, w));
}

/* The sums with 1.5 · 2^52 of 8 values, and whether every lane is clear of
 * a half-integer. */
static inline __attribute__((always_inline)) bool sums8(const float *in, const wide32_params *p, __m256d y[2]) {
  const __m256d magic = _mm256_set1_pd(0x1.8p52), abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
  const __m256d far = _mm256_set1_pd(0.5 - 0x1p-19);
  __m256d clear[2];
#pragma GCC unroll 2
  for (int h = 0; h < 2; h++) {
    const __m256d w = clamped_quotient(in + 4 * h, p);
    y[h] = _mm256_add_pd(w, magic);
    /* w's distance from its nearest integer by vroundpd: 3 cycles off the
     * chain of y − magic, then − w (w is 2^31 at most: the round is y − magic) */
    const __m256d q0 = _mm256_round_pd(w, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __m256d dist = _mm256_and_pd(_mm256_sub_pd(w, q0), abs_mask);
    clear[h] = _mm256_cmp_pd(dist, far, _CMP_LT_OQ); /* NaN: false */
  }
  return _mm256_movemask_pd(_mm256_and_pd(clear[0], clear[1])) == 15;
}

/* The low 32 bits of each lane of y[0] then y[1]: 8 codes in order. */
static inline __attribute__((always_inline)) __m256i codes32_of(const __m256d y[2]) {
  const __m256 packed = _mm256_shuffle_ps(_mm256_castpd_ps(y[0]), _mm256_castpd_ps(y[1]), _MM_SHUFFLE(2, 0, 2, 0));
  return _mm256_permute4x64_epi64(_mm256_castps_si256(packed), _MM_SHUFFLE(3, 1, 2, 0));
}

/* Eight values with a lane near a tie (or NaN), or a row's last few (len <
 * 8, the rest of `in` zero), out of line: q0 = rne(w) is off by at most one,
 * and the signs of (q0 ± 1/2)·s − x from one fma each (its single rounding
 * keeps the sign and zero-ness of the exact value) settle each lane, ties
 * going to the even code; the clamp follows. Returns true when a lane is
 * NaN. */
static __attribute__((noinline)) bool encode8_32_rest(const float *in, int64_t len, const wide32_params *p,
                                                      uint8_t *dst) {
  const __m256d magic = _mm256_set1_pd(0x1.8p52), half = _mm256_set1_pd(0.5), zero = _mm256_setzero_pd();
  __m256d y[2];
  bool nan = false;
  for (int h = 0; h < 2; h++) {
    const __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(in + 4 * h));
    nan |= _mm256_movemask_pd(_mm256_cmp_pd(x, x, _CMP_UNORD_Q)) != 0;
    const __m256d q0 = _mm256_sub_pd(_mm256_add_pd(clamped_quotient(in + 4 * h, p), magic), magic);
    const __m256d t_hi = _mm256_fmsub_pd(_mm256_add_pd(q0, half), p->s, x);
    const __m256d t_lo = _mm256_fmsub_pd(_mm256_sub_pd(q0, half), p->s, x);
    /* q0 is odd where q0 / 2 is not an integer */
    const __m256d hq = _mm256_mul_pd(q0, half);
    const __m256d odd = _mm256_cmp_pd(_mm256_round_pd(hq, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC), hq, _CMP_NEQ_OQ);
    const __m256d up = _mm256_or_pd(_mm256_cmp_pd(t_hi, zero, _CMP_LT_OQ),
                                    _mm256_and_pd(_mm256_cmp_pd(t_hi, zero, _CMP_EQ_OQ), odd));
    const __m256d down = _mm256_or_pd(_mm256_cmp_pd(t_lo, zero, _CMP_GT_OQ),
                                      _mm256_and_pd(_mm256_cmp_pd(t_lo, zero, _CMP_EQ_OQ), odd));
    const __m256d one = _mm256_set1_pd(1.0);
    __m256d q = _mm256_add_pd(q0, _mm256_sub_pd(_mm256_and_pd(up, one), _mm256_and_pd(down, one)));
    q = _mm256_min_pd(p->hi, _mm256_max_pd(p->lo, q));
    y[h] = _mm256_add_pd(q, magic);
  }
  uint32_t code[8];
  _mm256_storeu_si256((__m256i *)(void *)code, codes32_of(y));
  memcpy(dst, code, (size_t)len * sizeof *code);
  return nan;
}

/* The codes of a row; with `scan`, the next row's scale_scan in the same
 * loop (8 of its values beside each 8 encoded), as quantize64 below. */
static inline __attribute__((always_inline)) bool quantize32(const loom_dtype_traits *t, const bool is_unsigned,
                                                              const float *src, int64_t n, float scale, uint8_t *dst,
                                                              const float *scan, bool *scan_nonfinite,
                                                              double *scan_stat, const bool stream) {
  (void)t;
  const double hi = is_unsigned ? (double)UINT32_MAX : (double)INT32_MAX;
  const wide32_params p = {
    .s = _mm256_set1_pd(scale),
    .inv = _mm256_set1_pd(1.0 / (double)scale),
    .lo = _mm256_set1_pd(is_unsigned ? 0.0 : -hi),
    .hi = _mm256_set1_pd(hi),
  };
  scan_maxima sm = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  bool nan = false;
  /* Streamed (cpu.h, quantize_row_scan_stream), as quantize64 below: the
   * values before dst's first 64-byte boundary out of line, the next row's
   * scan at its own index j = i − h. */
  const int64_t h = stream ? loom_stream_head(dst, 4, n) : 0;
  const bool nt = stream && !((uintptr_t)dst & 3) && n - h >= 8;
  for (int64_t k = 0; nt && k < h; k += 8)
    nan |= encode8_32_rest(src + k, h - k < 8 ? h - k : 8, &p, dst + 4 * k);
  int64_t i = nt ? h : 0;
  const int64_t lead = i;
  /* the next row, which a morph scans next (as codec-simd.h's encoders) */
  const uintptr_t next = (uintptr_t)(src + n);
  for (; i + 8 <= n; i += 8) {
    const int64_t j = i - lead;
    if (scan) {
      sm = scan8(sm, _mm256_loadu_si256((const __m256i *)(const void *)(scan + j)));
      if (!(j & 8)) _mm_prefetch((const char *)((uintptr_t)scan + sizeof *scan * (uintptr_t)(j + 1024)), _MM_HINT_T0);
    } else if (!(i & 8)) {
      _mm_prefetch((const char *)(next + sizeof *src * (uintptr_t)i), _MM_HINT_T0);
    }
    __m256d y[2];
    if (__builtin_expect(sums8(src + i, &p, y), 1)) {
      if (nt)
        _mm256_stream_si256((__m256i *)(void *)(dst + 4 * i), codes32_of(y));
      else
        _mm256_storeu_si256((__m256i *)(void *)(dst + 4 * i), codes32_of(y));
    } else {
      nan |= encode8_32_rest(src + i, 8, &p, dst + 4 * i);
    }
  }
  if (scan) *scan_nonfinite = scan_result(sm, scan, i - lead, n, is_unsigned, scan_stat);
  if (i < n) {
    float tail[8] = {0};
    memcpy(tail, src + i, (size_t)(n - i) * sizeof *tail);
    nan |= encode8_32_rest(tail, n - i, &p, dst + 4 * i);
  }
  return nan;
}

static int quantize_scaled32(const loom_dtype_traits *t, const float *src, int64_t n, float scale, uint8_t *dst,
                             int64_t *bad) {
  /* Invalid and zero scales as before. */
  if (!(scale > 0) || isinf(scale)) return fallback_quantize[t->id](t, src, n, scale, dst, bad);
  const bool nan = t->kind == LOOM_DTYPE_KIND_UNSIGNED
                     ? quantize32(t, true, src, n, scale, dst, NULL, NULL, NULL, false)
                     : quantize32(t, false, src, n, scale, dst, NULL, NULL, NULL, false);
  return nan_answer(nan, src, n, bad);
}

WIDE_QUANTIZE_SCAN64(quantize_scan32, quantize32, quantize_scaled32, false)
WIDE_QUANTIZE_SCAN64(quantize_scan32_stream, quantize32, quantize_scaled32, true)

/* ---- 64-bit codes ---- */

/*
 * rne(x / s) in two parts, each small enough for a double. z = x · (2^-32 /
 * s) + 1.5 · 2^52 (one fma; the product in it is exact) rounds x / s / 2^32
 * to an integer h, within a few units of the last place: x / s − h · 2^32
 * lies within 2^31 + 2^13 of 0. Its numerator r = x − h · (2^32 · s) is
 * exact from one fma (x and h · 2^32 · s are multiples of a power of two
 * that |r| exceeds by less than 2^27; h = 0 leaves r = x). Then rne(x / s)
 * = h · 2^32 + rne(r / s), and r / s, below 2^32, is the 32-bit formats'
 * problem: w = r · (1/s) is within 2^-20 of it, so where w lies farther
 * than 2^-19 from a half-integer, rne(w) (the add of 1.5 · 2^52) is
 * rne(r / s); nearer lanes (about one in 2^18, exact ties included) are
 * settled out of line by the signs of two fmas.
 *
 * Both integers are read from the bits of their sums with 1.5 · 2^52, whose
 * low 51 bits hold them in two's complement: bits(z) << 32 is h · 2^32
 * (the constant's low 32 bits are zero), so the code is (bits(z) << 32) +
 * bits(y) − bits(1.5 · 2^52) modulo 2^64, for either sign. Everything is odd
 * in x (rne and the products are symmetric), so signed codes need no sign
 * handling; unsigned ones clamp negatives to 0 first. A lane with |h| ≥
 * 2^31 (signed) or h ≥ 2^32 (unsigned), a quotient within about 2^31 of
 * qmax + 1 or beyond, might reach the clamp; below, the code is at most
 * qmax − 2^30. Those lanes (a row's largest values, ±inf, NaN, quotients of
 * a tiny scale) go through the reference's integer division, one lane at a
 * time, which also tells the NaN lanes. The AVX-512 level
 * (codec-scaled-avx512.c) converts Q = rne(x · (1/s)) in one instruction
 * and corrects it; AVX2 has no such conversion, and this way takes 17
 * vector operations per four values where a port of that one took 27.
 */
typedef struct {
  __m256d s, s32, inv, inv32, hmax;
} wide64_params;

typedef struct {
  __m256d r, w;  /* r as above; w = r · (1/s) */
  __m256i z, y;  /* the bits of the two sums */
  __m256i in_range, fast; /* lanes in range; and clear of a tie */
} quotients4;

static inline __attribute__((always_inline)) quotients4 quotients64(const bool is_unsigned, const float *in,
                                                                     const wide64_params *p) {
  const __m256d magic = _mm256_set1_pd(0x1.8p52), abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(INT64_MAX));
  quotients4 b;
  const __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(in));
  /* unsigned: negatives clamp to 0, as an input of 0; max(0, x) returns x
   * when x is NaN, so a NaN goes on to the slow lanes */
  const __m256d a = is_unsigned ? _mm256_max_pd(_mm256_setzero_pd(), x) : x;
  const __m256d z = _mm256_fmadd_pd(a, p->inv32, magic);
  const __m256d h = _mm256_sub_pd(z, magic);
  b.r = _mm256_fnmadd_pd(h, p->s32, a);
  b.w = _mm256_mul_pd(b.r, p->inv);
  const __m256d y = _mm256_add_pd(b.w, magic);
  /* as sums8: rne(w) by vroundpd, off the chain of y (|w| < 2^31) */
  const __m256d q0 = _mm256_round_pd(b.w, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __m256d dist = _mm256_and_pd(_mm256_sub_pd(b.w, q0), abs_mask); /* exact */
  /* NaN: false */
  const __m256d in_range = _mm256_cmp_pd(is_unsigned ? h : _mm256_and_pd(h, abs_mask), p->hmax, _CMP_LT_OQ);
  b.in_range = _mm256_castpd_si256(in_range);
  b.fast = _mm256_castpd_si256(_mm256_and_pd(in_range, _mm256_cmp_pd(dist, _mm256_set1_pd(0.5 - 0x1p-19), _CMP_LT_OQ)));
  b.z = _mm256_castpd_si256(z);
  b.y = _mm256_castpd_si256(y);
  return b;
}

/* h · 2^32 + rne(w) */
static inline __attribute__((always_inline)) __m256i code_of(const quotients4 *b) {
  return _mm256_add_epi64(_mm256_slli_epi64(b->z, 32),
                          _mm256_sub_epi64(b->y, _mm256_set1_epi64x(INT64_C(0x4338000000000000))));
}

/* Four values with a lane near a tie or out of the fast range, or a row's
 * last few (len < 4, the rest of `in` zero), computed again out of line.
 * c0 = rne(w) is off by at most one, and the signs of (c0 ± 1/2)·s − r from
 * one fma each (a single rounding keeps the sign and zero-ness of the exact
 * value) settle every lane, ties going to the even code, as for the narrow
 * codes. Returns the NaN lanes' mask. */
static __attribute__((noinline)) unsigned encode4_64_rest(const loom_dtype_traits *t, const bool is_unsigned,
                                                          const float *in, int64_t len, float scale,
                                                          const wide64_params *p, uint8_t *dst) {
  const quotients4 b = quotients64(is_unsigned, in, p);
  const __m256d half = _mm256_set1_pd(0.5), zero = _mm256_setzero_pd();
  const __m256d c0 = _mm256_sub_pd(_mm256_castsi256_pd(b.y), _mm256_set1_pd(0x1.8p52));
  __m256i m = code_of(&b);
  const __m256d t_hi = _mm256_fmsub_pd(_mm256_add_pd(c0, half), p->s, b.r);
  const __m256d t_lo = _mm256_fmsub_pd(_mm256_sub_pd(c0, half), p->s, b.r);
  const __m256i one = _mm256_set1_epi64x(1);
  const __m256d odd = _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(m, one), one));
  const __m256d up = _mm256_or_pd(_mm256_cmp_pd(t_hi, zero, _CMP_LT_OQ),
                                  _mm256_and_pd(_mm256_cmp_pd(t_hi, zero, _CMP_EQ_OQ), odd));
  const __m256d down = _mm256_or_pd(_mm256_cmp_pd(t_lo, zero, _CMP_GT_OQ),
                                    _mm256_and_pd(_mm256_cmp_pd(t_lo, zero, _CMP_EQ_OQ), odd));
  /* the masks are −1 where set */
  m = _mm256_add_epi64(_mm256_sub_epi64(m, _mm256_castpd_si256(up)), _mm256_castpd_si256(down));
  uint64_t code[4];
  _mm256_storeu_si256((__m256i *)(void *)code, m);
  const unsigned slow = 15u & ~(unsigned)_mm256_movemask_pd(_mm256_castsi256_pd(b.in_range));
  const unsigned nan = slow ? settle64_lanes(t, is_unsigned, in, scale, slow, code) : 0;
  memcpy(dst, code, (size_t)len * sizeof *code);
  return nan;
}

/* The codes of a row; with `scan`, the next row's scale_scan in the same
 * loop (8 of its values beside each 8 encoded), as codec-scaled-avx512.c's
 * quantize64 does. */
static inline __attribute__((always_inline)) bool quantize64(const loom_dtype_traits *t, const bool is_unsigned,
                                                              const float *src, int64_t n, float scale, uint8_t *dst,
                                                              const float *scan, bool *scan_nonfinite,
                                                              double *scan_stat, const bool stream) {
  const wide64_params p = {
    .s = _mm256_set1_pd(scale),
    .s32 = _mm256_set1_pd((double)scale * 0x1p32),
    .inv = _mm256_set1_pd(1.0 / (double)scale),
    .inv32 = _mm256_set1_pd(0x1p-32 / (double)scale),
    .hmax = _mm256_set1_pd(is_unsigned ? 0x1p32 - 0.5 : 0x1p31 - 0.5),
  };
  const __m256i ones = _mm256_set1_epi64x(-1);
  scan_maxima sm = {_mm256_setzero_si256(), _mm256_setzero_si256()};
  unsigned nan = 0;
  /* Streamed (cpu.h, quantize_row_scan_stream), as codec-scaled-avx512.c's
   * quantize64: the values before dst's first 64-byte boundary out of
   * line, the next row's scan at its own index j = i − h. */
  const int64_t h = stream ? loom_stream_head(dst, 8, n) : 0;
  const bool nt = stream && !((uintptr_t)dst & 7) && n - h >= 8;
  for (int64_t k = 0; nt && k < h; k += 4)
    nan |= encode4_64_rest(t, is_unsigned, src + k, h - k < 4 ? h - k : 4, scale, &p, dst + 8 * k);
  int64_t i = nt ? h : 0;
  const int64_t lead = i;
  const uintptr_t next = (uintptr_t)(src + n);
  for (; i + 8 <= n; i += 8) {
    const int64_t j = i - lead;
    if (scan) {
      sm = scan8(sm, _mm256_loadu_si256((const __m256i *)(const void *)(scan + j)));
      if (!(j & 8)) _mm_prefetch((const char *)((uintptr_t)scan + sizeof *scan * (uintptr_t)(j + 1024)), _MM_HINT_T0);
    } else if (!(i & 8)) {
      _mm_prefetch((const char *)(next + sizeof *src * (uintptr_t)i), _MM_HINT_T0);
    }
    const quotients4 b0 = quotients64(is_unsigned, src + i, &p), b1 = quotients64(is_unsigned, src + i + 4, &p);
    const bool fast = _mm256_testc_si256(_mm256_and_si256(b0.fast, b1.fast), ones);
    if (nt) { /* a line streamed once, only when both halves are settled */
      if (__builtin_expect(fast, 1)) {
        _mm256_stream_si256((__m256i *)(void *)(dst + 8 * i), code_of(&b0));
        _mm256_stream_si256((__m256i *)(void *)(dst + 8 * (i + 4)), code_of(&b1));
        continue;
      }
    } else {
      /* both halves stored, then one test for the 8: a half with a slow
       * lane is encoded again (one branch where two had been) */
      _mm256_storeu_si256((__m256i *)(void *)(dst + 8 * i), code_of(&b0));
      _mm256_storeu_si256((__m256i *)(void *)(dst + 8 * (i + 4)), code_of(&b1));
      if (__builtin_expect(fast, 1)) continue;
    }
    nan |= encode4_64_rest(t, is_unsigned, src + i, 4, scale, &p, dst + 8 * i);
    nan |= encode4_64_rest(t, is_unsigned, src + i + 4, 4, scale, &p, dst + 8 * (i + 4));
  }
  if (scan) *scan_nonfinite = scan_result(sm, scan, i - lead, n, is_unsigned, scan_stat);
  for (; i < n; i += 4) {
    float tail[4] = {0};
    const int64_t len = n - i < 4 ? n - i : 4;
    memcpy(tail, src + i, (size_t)len * sizeof *tail);
    nan |= encode4_64_rest(t, is_unsigned, tail, len, scale, &p, dst + 8 * i);
  }
  return nan != 0;
}

static int quantize_scaled64(const loom_dtype_traits *t, const float *src, int64_t n, float scale, uint8_t *dst,
                             int64_t *bad) {
  /* Invalid and zero scales as before. */
  if (!(scale > 0) || isinf(scale)) return fallback_quantize[t->id](t, src, n, scale, dst, bad);
  const bool is_unsigned = t->kind == LOOM_DTYPE_KIND_UNSIGNED;
  const bool nan = is_unsigned ? quantize64(t, true, src, n, scale, dst, NULL, NULL, NULL, false)
                               : quantize64(t, false, src, n, scale, dst, NULL, NULL, NULL, false);
  return nan_answer(nan, src, n, bad);
}

WIDE_QUANTIZE_SCAN64(quantize_scan64, quantize64, quantize_scaled64, false)
WIDE_QUANTIZE_SCAN64(quantize_scan64_stream, quantize64, quantize_scaled64, true)

/* ---- 64-bit decode: (float)((double)q · s), as the reference ---- */

/*
 * (double)q, correctly rounded as the reference's cast, without AVX-512DQ's
 * conversion: q's high half goes into the mantissa of 2^84 (its value then
 * 2^84 + hi · 2^32) and its low half into that of 2^52 (2^52 + lo); taking
 * 2^84 + 2^52 off the first is exact (a multiple of 2^32 below 2^64), and
 * adding the second gives hi · 2^32 + lo with the sum's one rounding. A
 * signed q is made unsigned by flipping its top bit (q + 2^63), and 2^63
 * comes off with the constant. Five or six operations for four codes where
 * the generic decode took about twelve.
 */
static inline __attribute__((always_inline)) __m256d double_of(__m256i q, const bool is_signed) {
  if (is_signed) q = _mm256_xor_si256(q, _mm256_set1_epi64x(INT64_MIN));
  const __m256i hi = _mm256_or_si256(_mm256_srli_epi64(q, 32), _mm256_castpd_si256(_mm256_set1_pd(0x1p84)));
  const __m256i lo = _mm256_blend_epi32(q, _mm256_castpd_si256(_mm256_set1_pd(0x1p52)), 0xaa);
  const __m256d off = _mm256_set1_pd(is_signed ? 0x1p84 + 0x1p63 + 0x1p52 : 0x1p84 + 0x1p52);
  return _mm256_add_pd(_mm256_sub_pd(_mm256_castsi256_pd(hi), off), _mm256_castsi256_pd(lo));
}

static inline __attribute__((always_inline)) __m256 decode8(const uint8_t *src, __m256d s, const bool is_signed) {
  const __m128 a = _mm256_cvtpd_ps(_mm256_mul_pd(double_of(_mm256_loadu_si256((const __m256i *)(const void *)src),
                                                           is_signed), s));
  const __m128 b = _mm256_cvtpd_ps(
    _mm256_mul_pd(double_of(_mm256_loadu_si256((const __m256i *)(const void *)(src + 32)), is_signed), s));
  return _mm256_set_m128(b, a);
}

/* The first cnt ≤ 8 values at src, nothing past them read or written. */
static inline __attribute__((always_inline)) void dequantize64_part(const bool is_signed, __m256d s,
                                                                    const uint8_t *src, int64_t cnt, float *dst) {
  uint64_t in[8] = {0};
  float out[8];
  memcpy(in, src, (size_t)cnt * sizeof *in);
  _mm256_storeu_ps(out, decode8((const uint8_t *)in, s, is_signed));
  memcpy(dst, out, (size_t)cnt * sizeof *out);
}

static inline __attribute__((always_inline)) void dequantize64_rows(const bool stream, const bool is_signed,
                                                                    const uint8_t *src, int64_t n, float scale,
                                                                    float *dst) {
  const __m256d s = _mm256_set1_pd(scale);
  int64_t i = 0;
  if (stream) { /* up to dst's first 64-byte boundary ordinarily (cpu.h) */
    const int64_t head = loom_stream_head(dst, sizeof(float), n);
    for (; i < head; i += 8) dequantize64_part(is_signed, s, src + 8 * i, head - i < 8 ? head - i : 8, dst + i);
    i = head;
  }
  for (; i + 8 <= n; i += 8) {
    /* as codec-simd.h's DECODE_PREFETCH; streaming, 4 KiB ahead measured
     * best (int64 0.93–0.96 → 1.03–1.05 of memcpy; none 0.82–0.87) */
    _mm_prefetch((const char *)(src + 8 * i + (stream ? 4096 : 1024)), _MM_HINT_T0);
    if (stream)
      _mm256_stream_ps(dst + i, decode8(src + 8 * i, s, is_signed));
    else
      _mm256_storeu_ps(dst + i, decode8(src + 8 * i, s, is_signed));
  }
  if (i < n) dequantize64_part(is_signed, s, src + 8 * i, n - i, dst + i);
}

static void dequantize64(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale, const float *lut,
                         float *dst) {
  (void)lut;
  if (t->kind == LOOM_DTYPE_KIND_UNSIGNED)
    dequantize64_rows(false, false, src, n, scale, dst);
  else
    dequantize64_rows(false, true, src, n, scale, dst);
}

/* cpu.h, dequantize_row_stream. The loop starts on a
 * 64-byte boundary: where the program's layout put the unsigned loop 16
 * bytes past one (3 of the op cache's 64-byte windows instead of 2), uint64
 * dequantized at 0.71 of memcpy instead of 1.07 on Zen 3 (two builds of a
 * private driver differing only in code never run); aligned, 0.93–1.11
 * in both. */
__attribute__((optimize("align-loops=64"))) static void dequantize64_stream(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                const float *lut, float *dst) {
  (void)lut;
  if (t->kind == LOOM_DTYPE_KIND_UNSIGNED)
    dequantize64_rows(true, false, src, n, scale, dst);
  else
    dequantize64_rows(true, true, src, n, scale, dst);
}

void loom_kernels_fill_wide_avx2(loom_kernels *k) {
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    if (!t->scaled || t->bits < 32) continue;
    fallback_quantize[d] = k->quantize_row[d];
    if (t->bits == 32) {
      k->quantize_row[d] = quantize_scaled32;
      k->quantize_row_scan[d] = quantize_scan32;
      k->quantize_row_scan_stream[d] = quantize_scan32_stream;
      continue;
    }
    k->quantize_row[d] = quantize_scaled64;
    k->quantize_row_scan[d] = quantize_scan64;
    k->quantize_row_scan_stream[d] = quantize_scan64_stream;
    k->dequantize_row[d] = dequantize64;
    k->dequantize_row_stream[d] = dequantize64_stream;
  }
}
#pragma GCC pop_options
#endif
