/*
 * Vector row codecs, written once with GCC vector extensions and
 * compiled once per kernel level: codec-avx2.c and codec-avx512.c include
 * this file under their own `#pragma GCC target`, defining VBYTES (the
 * register width: 8 or 16 lanes) and SIMD(name) to give each copy its own
 * names. Not a normal header.
 *
 * Every function computes the same bits as the reference codec of core/ (the
 * tests compare them on every code and on random and edge values): each
 * algorithm below is the reference's, restated branch-free per lane, and the
 * vector extensions never reassociate or contract floating-point operations.
 * Two conditions are assumed, as everywhere in the engine: round to nearest
 * even and no flush-to-zero / denormals-are-zero in MXCSR.
 */
#ifndef SIMD
#error "codec-simd.h is included by codec-avx2.c / codec-avx512.c only"
#endif

#include <math.h>

#include "core/dtype-internal.h"
#include "kernels/cpu.h"

/* VBYTES, the register width (32 or 64), is defined by the including file. */
#define VL (VBYTES / 4)
typedef float vf __attribute__((vector_size(VBYTES)));
typedef int32_t vi __attribute__((vector_size(VBYTES)));
typedef uint32_t vu __attribute__((vector_size(VBYTES)));
typedef double vd __attribute__((vector_size(2 * VBYTES)));
typedef int64_t vq __attribute__((vector_size(2 * VBYTES)));
typedef uint8_t vb __attribute__((vector_size(VL)));
typedef uint16_t vh __attribute__((vector_size(2 * VL)));
/* Register-wide doubles (VL / 2 lanes) and the half-width vectors they
 * convert from: GCC lowers comparisons of double-width vectors lane by lane,
 * so the double arithmetic runs on halves. */
typedef double vdn __attribute__((vector_size(VBYTES)));
typedef int64_t vqn __attribute__((vector_size(VBYTES)));
typedef float vfh __attribute__((vector_size(VBYTES / 2)));
typedef int32_t vih __attribute__((vector_size(VBYTES / 2)));

static const uint32_t lane_index[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static inline vu iota(void) {
  vu v;
  memcpy(&v, lane_index, sizeof v);
  return v;
}

static inline vu sel_u(vi m, vu a, vu b) { return ((vu)m & a) | (~(vu)m & b); }
/* Macros, not functions, for the double-width vectors: under AVX2 a function
 * returning a 64-byte vector would draw GCC's ABI note (-Wpsabi). */
#define sel_q(m, a, b) (((m) & (a)) | (~(m) & (b)))
#define sel_dn(m, a, b) ((vdn)sel_q((m), (vqn)(a), (vqn)(b)))

static inline vf load_f(const float *p) {
  vf v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* ---- packing VL codes (low bits of each lane) to bytes and back ---- */

/* VL codes (each < 2^16) narrowed to 16 or 8 bits. GCC lowers these
 * narrowing conversions lane by lane under AVX2: say them directly. */
static inline void narrow16(vu codes, uint8_t *dst) {
#if VBYTES == 64
  _mm256_storeu_si256((__m256i *)dst, _mm512_cvtepi32_epi16((__m512i)codes));
#else
  const __m256i v = (__m256i)codes;
  _mm_storeu_si128((__m128i *)dst, _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1)));
#endif
}

static inline vb narrow8(vu codes) { /* codes < 2^8 */
#if VBYTES == 64
  return (vb)_mm512_cvtepi32_epi8((__m512i)codes);
#else
  const __m256i v = (__m256i)codes;
  const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  const __m128i b = _mm_packus_epi16(w, w);
  vb out;
  memcpy(&out, &b, sizeof out);
  return out;
#endif
}

/* Stores VL codes as VL·bits/8 bytes (bits 1, 2, 4, 8, 16, 32). */
static inline void store_codes(int bits, vu codes, uint8_t *dst) {
  switch (bits) {
  case 32: memcpy(dst, &codes, sizeof codes); return;
  case 16: narrow16(codes, dst); return;
  case 8: {
    const vb b = narrow8(codes);
    memcpy(dst, &b, sizeof b);
    return;
  }
  default: {
    /* Pairs of bytes merged by multiply-add (pmaddubsw: lo·1 + hi·2^k is
     * lo | hi << k for codes of k bits), halving the width per step. */
    const vb b = narrow8(codes);
    __m128i v = _mm_setzero_si128();
    memcpy(&v, &b, sizeof b);
    if (bits == 1) {
      const uint32_t m = (uint32_t)_mm_movemask_epi8(_mm_slli_epi16(v, 7)); /* bit 7 of each byte: codes are 0/1 */
      memcpy(dst, &m, VL / 8);
      return;
    }
    for (int k = bits; k < 8; k *= 2) {
      v = _mm_maddubs_epi16(v, _mm_set1_epi16((short)(1 | (1 << (8 + k)))));
      v = _mm_packus_epi16(v, v);
    }
    memcpy(dst, &v, (size_t)(VL * bits / 8));
    return;
  }
  }
}

/* Loads VL codes of `bits` (1, 2, 4, 8, 16, 32) from VL·bits/8 bytes. */
static inline vu load_codes(int bits, const uint8_t *src) {
  switch (bits) {
  case 32: {
    vu v;
    memcpy(&v, src, sizeof v);
    return v;
  }
  case 16: {
    vh h;
    memcpy(&h, src, sizeof h);
    return __builtin_convertvector(h, vu);
  }
  case 8: /* GCC lowers this widening conversion lane by lane: say it directly */
#if VBYTES == 64
    return (vu)_mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)src));
#else
    return (vu)_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)src));
#endif
  default: {
    /* Sub-byte: the VL·bits bits (at most 64) broadcast as 32-bit words, each
     * lane shifting its own code down (one variable shift per block). */
    const vu lane = iota();
    vu w;
    if (VL * bits <= 32) {
      uint32_t x = 0;
      memcpy(&x, src, (size_t)(VL * bits / 8));
      w = (vu){0} + x;
    } else {
      uint32_t lo, hi;
      memcpy(&lo, src, 4);
      memcpy(&hi, src + 4, 4);
      w = sel_u((vi)(lane * (uint32_t)bits >= 32u), (vu){0} + hi, (vu){0} + lo);
    }
    return (w >> ((lane * (uint32_t)bits) & 31u)) & ((1u << bits) - 1u);
  }
  }
}

/* A row's tail (fewer than VL values) goes through zero-padded buffers. Zero
 * encodes to code 0 in every format, so the padding bits come out zero. */

/* True when some value is NaN; *first its index. */
static bool find_nan(const float *src, int64_t n, int64_t *first) {
  vi acc = {0};
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    vf x = load_f(src + i);
    acc |= (vi)(x != x);
  }
  bool any = false;
  for (int l = 0; l < VL; l++) any |= acc[l] != 0;
  for (; i < n; i++) any |= isnan(src[i]);
  if (!any) return false;
  for (int64_t j = 0; j < n; j++)
    if (isnan(src[j])) {
      *first = j;
      return true;
    }
  return false;
}

/* ---- floating formats ---- */

typedef struct {
  int shift;                      /* 23 - man_bits */
  uint32_t round_half, rebias;    /* 2^(shift-1) - 1; (127 - bias) << man_bits */
  uint32_t subnormal_below;       /* float bits of 2^emin */
  float magic;                    /* 2^(emin - man_bits + 23): its ulp is the target's subnormal quantum */
  uint32_t magic_bits, max_code, overflow_code, nan_code;
  int sign_shift;
} mf_vec_params;

static mf_vec_params mf_params(const loom_dtype_traits *t) {
  const int M = t->man_bits, emin = 1 - t->exp_bias;
  mf_vec_params p = {
    .shift = 23 - M,
    .round_half = (UINT32_C(1) << (22 - M)) - 1,
    .rebias = (uint32_t)(127 - t->exp_bias) << M,
    .subnormal_below = (uint32_t)(emin + 127) << 23,
    .magic = ldexpf(1.0f, emin - M + 23),
    .max_code = loom_minifloat_max_code(t),
    .nan_code = t->has_nan ? loom_minifloat_nan_code(t) : 0,
    .sign_shift = t->exp_bits + M,
  };
  memcpy(&p.magic_bits, &p.magic, sizeof p.magic_bits);
  p.overflow_code = t->saturates || !t->has_inf ? p.max_code : ((UINT32_C(1) << t->exp_bits) - 1) << M;
  return p;
}

/*
 * The reference's mf_encode per lane. Target-normal magnitudes round the
 * float32 bits directly (adding half an ulp minus one plus the kept lsb is
 * round-half-even on the bits; a carry moves into the exponent as in the
 * reference). Target-subnormal magnitudes (|x| < 2^emin) are added to a float
 * whose ulp is the subnormal quantum, so the one rounding of the float add
 * (ties to even) leaves the code in the low bits of the sum.
 */
static inline vu mf_encode_vec(const mf_vec_params *p, vu u) {
  const vu a = u & 0x7fffffffu;
  const vu sign = (u >> 31) << p->sign_shift;
  const vu normal = ((a + p->round_half + ((a >> p->shift) & 1u)) >> p->shift) - p->rebias;
  const vf sum = (vf)a + p->magic;
  const vu subnormal = (vu)sum - p->magic_bits;
  vu mag = sel_u((vi)(a < p->subnormal_below), subnormal, normal);
  mag = sel_u((vi)(mag > p->max_code), (vu){0} + p->overflow_code, mag);
  mag = sel_u((vi)(a > 0x7f800000u), (vu){0} + p->nan_code, mag);
  return sign | mag;
}

/* Row loops take `bits` as a constant: each dtype gets its own copy, with
 * fixed-size loads and stores (a variable size would call memcpy). */
#define ALWAYS_INLINE inline __attribute__((always_inline))

static ALWAYS_INLINE void quantize_minifloat_bits(const int bits, const mf_vec_params *p, const float *src,
                                                  int64_t n, uint8_t *dst) {
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    vu u;
    memcpy(&u, src + i, sizeof u);
    store_codes(bits, mf_encode_vec(p, u), dst + i * bits / 8);
  }
  if (i < n) {
    float tail[VL] = {0};
    uint8_t out[64];
    memcpy(tail, src + i, (size_t)(n - i) * sizeof *tail);
    vu u;
    memcpy(&u, tail, sizeof u);
    store_codes(bits, mf_encode_vec(p, u), out);
    memcpy(dst + i * bits / 8, out, (size_t)(((n - i) * bits + 7) / 8));
  }
}

static int SIMD(quantize_minifloat)(const loom_dtype_traits *t, const float *src, int64_t n, float scale,
                                    uint8_t *dst, int64_t *bad) {
  if (!t->has_nan && find_nan(src, n, bad)) return LOOM_ERR_NONFINITE;
  const mf_vec_params p = mf_params(t);
  switch (t->bits) {
  case 16: quantize_minifloat_bits(16, &p, src, n, dst); break;
  case 8: quantize_minifloat_bits(8, &p, src, n, dst); break;
  default: quantize_minifloat_bits(4, &p, src, n, dst); break;
  }
  return 0;
}

/* The minifloat decoders: the generic one, F16C's, fp4's table. */
#include "kernels/codec-decode-simd.h"

/* bfloat16 and float64 are simpler than the generic path. */
static int SIMD(quantize_float64)(const loom_dtype_traits *t, const float *src, int64_t n, float scale, uint8_t *dst,
                                  int64_t *bad) {
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    const vd d = __builtin_convertvector(load_f(src + i), vd);
    memcpy(dst + 8 * i, &d, sizeof d);
  }
  for (; i < n; i++) {
    const double d = src[i];
    memcpy(dst + 8 * i, &d, sizeof d);
  }
  return 0;
}

/* The morph's float64 row: quantize_float64 and the row's finiteness check
 * in one pass (cpu.h, quantize_row_finite). A value is finite exactly when
 * its |bits| are below 0x7f800000. */
static int SIMD(quantize_float64_finite)(const loom_dtype_traits *t, const float *src, int64_t n, float scale,
                                         uint8_t *dst, int64_t *bad) {
  const vi magnitude = (vi){0} + 0x7fffffff;
  vi bad_lanes = {0};
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    const vf x = load_f(src + i);
    vi bits;
    memcpy(&bits, &x, sizeof bits);
    bad_lanes |= (bits & magnitude) >= 0x7f800000;
    const vd d = __builtin_convertvector(x, vd);
    memcpy(dst + 8 * i, &d, sizeof d);
  }
  bool finite = true;
  for (int l = 0; l < VL; l++) finite &= bad_lanes[l] == 0;
  for (; i < n; i++) {
    finite &= isfinite(src[i]);
    const double d = src[i];
    memcpy(dst + 8 * i, &d, sizeof d);
  }
  if (finite) return 0;
  for (int64_t j = 0; j < n; j++)
    if (!isfinite(src[j])) {
      *bad = j;
      break;
    }
  (void)t;
  (void)scale;
  return LOOM_ERR_NONFINITE;
}

static void SIMD(dequantize_float64)(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                     const float *lut, float *dst) {
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    vd d;
    memcpy(&d, src + 8 * i, sizeof d);
    const vf f = __builtin_convertvector(d, vf);
    memcpy(dst + i, &f, sizeof f);
  }
  for (; i < n; i++) {
    double d;
    memcpy(&d, src + 8 * i, sizeof d);
    dst[i] = (float)d;
  }
}

static void SIMD(dequantize_bfloat16)(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                      const float *lut, float *dst) {
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    const vu v = load_codes(16, src + 2 * i) << 16;
    memcpy(dst + i, &v, sizeof v);
  }
  for (; i < n; i++) {
    uint16_t h;
    memcpy(&h, src + 2 * i, sizeof h);
    const uint32_t u = (uint32_t)h << 16;
    memcpy(dst + i, &u, sizeof u);
  }
}

/* ---- scaled formats ---- */

/* rne by the magic constant 1.5 · 2^52, as core's rne_small. */
#define rne_vec(v) (((v) + 0x1.8p52) - 0x1.8p52)

/*
 * q = clamp(rne(x / s), lo, qmax) for qmax < 2^28, on VL / 2 lanes: the
 * reference's double quotient, clamp and rne (dtype-int.c explains why the
 * double quotient is exact enough there).
 */
static inline vih scaled_code_small(vfh x, double s, double lo, double hi) {
  vdn v = __builtin_convertvector(x, vdn) / s;
  v = sel_dn((vqn)(v > lo), v, (vdn){0} + lo);
  v = sel_dn((vqn)(v < hi), v, (vdn){0} + hi);
  return __builtin_convertvector(rne_vec(v), vih);
}

/*
 * The 32-bit formats need rne(x / s) exactly where the double quotient is
 * not enough (quotients up to 2^32: see dtype-int.c). Its rne, q0, is off by
 * at most one; the sign of (q0 ± 1/2)·s − x, computed by one fma whose
 * single rounding keeps the sign and zero-ness of the exact value, says
 * whether x / s lies above, at or below each half-way point.
 */
static inline vih scaled_code_wide(vfh x, double s, double lo, double hi) {
  const vdn xd = __builtin_convertvector(x, vdn);
  vdn v = xd / s;
  v = sel_dn((vqn)(v > lo), v, (vdn){0} + lo);
  v = sel_dn((vqn)(v < hi), v, (vdn){0} + hi);
  const vdn q0 = rne_vec(v);
  vdn t_hi, t_lo;
  for (int l = 0; l < VL / 2; l++) {
    t_hi[l] = __builtin_fma(q0[l] + 0.5, s, -xd[l]);
    t_lo[l] = __builtin_fma(q0[l] - 0.5, s, -xd[l]);
  }
  vqn q = __builtin_convertvector(q0, vqn);
  const vqn odd = (q & 1) != 0;
  const vqn up = (t_hi < 0) | ((t_hi == 0) & odd);
  const vqn down = (t_lo > 0) | ((t_lo == 0) & odd);
  q = q - up + down; /* masks are -1: subtracting adds one */
  const vqn qlo = (vqn){0} + (int64_t)lo, qhi = (vqn){0} + (int64_t)hi;
  q = sel_q(q < qlo, qlo, q);
  q = sel_q(q > qhi, qhi, q);
  return __builtin_convertvector(q, vih); /* two's complement: the low 32 bits */
}

/*
 * The 32-bit formats without a division (the AVX-512 level's code32 in
 * codec-scaled-avx512.c, restated): v = x · (1/s) in double is within
 * |x/s| · 2^-52 ≤ (hi + 1) · 2^-52 of x / s, so where every lane of v lies
 * farther than `far` = (hi + 1) · 2^-51 from a half-integer, rne(clamp(v)) is
 * the code (no half-integer between v and x / s; hi is an integer, so the
 * clamp agrees). Only a half with a lane that close (about one in 2^18)
 * takes scaled_code_wide's exact quotient and fma signs.
 */
static ALWAYS_INLINE vih scaled_code_wide_fast(vfh x, double s, double inv, double lo, double hi, double far) {
  const vdn xd = __builtin_convertvector(x, vdn);
  vdn v = xd * inv;
  v = sel_dn((vqn)(v > lo), v, (vdn){0} + lo);
  v = sel_dn((vqn)(v < hi), v, (vdn){0} + hi);
  const vdn y = v + 0x1.8p52, q0 = y - 0x1.8p52; /* rne_vec, keeping the sum */
  const vdn dist = (vdn)((vqn)(v - q0) & INT64_MAX); /* exact: q0 is the integer nearest v */
  const vqn near = (vqn)(dist >= 0.5 - far);
#if VBYTES == 64
  if (_mm512_test_epi64_mask((__m512i)near, (__m512i)near)) return scaled_code_wide(x, s, lo, hi);
#else
  if (_mm256_movemask_pd((__m256d)near)) return scaled_code_wide(x, s, lo, hi);
#endif
  /* |q0| < 2^51: y's low 32 bits are q0's two's complement ones (a
   * conversion of q0 would go through 64-bit integers lane by lane here) */
  return __builtin_convertvector((vqn)y, vih);
}

static ALWAYS_INLINE vu scaled_codes_double(vf x, bool wide, double s, double lo, double hi) {
  vfh half[2];
  vih code[2];
  memcpy(half, &x, sizeof x);
  const double inv = 1.0 / s, far = (hi + 1) * 0x1p-51;
  for (int h = 0; h < 2; h++)
    code[h] = wide ? scaled_code_wide_fast(half[h], s, inv, lo, hi, far) : scaled_code_small(half[h], s, lo, hi);
  vu c;
  memcpy(&c, code, sizeof c);
  return c;
}

#if VBYTES == 64
#define VFMA(a, b, c) ((vf)_mm512_fmadd_ps((a), (b), (c)))
#else
#define VFMA(a, b, c) ((vf)_mm256_fmadd_ps((a), (b), (c)))
#endif

/*
 * The same q for codes of up to 16 bits without a division (the hot loop of
 * int8, int4, ternary...): v = x · (1/s) in float32 is within 2^-7 of x / s
 * there, so its rne, q0, is off by at most one, and the sign of
 * (q0 ± 1/2)·s − x from one fma decides, as in scaled_code_wide. That sign
 * is exact while every nonzero value of it is at least the smallest
 * subnormal, which holds for s >= 2^-125; smaller scales take the double
 * quotient. Bounds of at most 2^16 keep q0 ± 1/2 exact in float32.
 */
/* True when any lane of the mask m (lanes 0 or -1) is set. */
static inline bool any_lane(vi m) {
#if VBYTES == 64
  return _mm512_movepi32_mask((__m512i)m) != 0;
#else
  return _mm256_movemask_ps((__m256)m) != 0;
#endif
}

/*
 * Most lanes need no correction: |v − x/s| ≤ |x/s| · 2^-23 (two float32
 * roundings), which is below `near` = (hi + 1) · 2^-22 wherever the clamp
 * leaves v unchanged, so when v is farther than `near` from every
 * half-integer, rne(v) = rne(x / s) — no half-integer lies between them.
 * v − q0 is exact (q0 is the integer nearest v; Sterbenz), so the test is
 * too. Only a vector with a lane that close to a tie (rare outside
 * exact ties) takes the fma correction above. This halves the work of the
 * integer morph's hot loop.
 */
static inline vu scaled_codes_float(vf x, float s, float inv, float lo, float hi, float near) {
  vf v = x * inv;
  v = (vf)sel_u((vi)(v > lo), (vu)v, (vu)((vf){0} + lo));
  v = (vf)sel_u((vi)(v < hi), (vu)v, (vu)((vf){0} + hi));
  const vf q0 = (v + 0x1.8p23f) - 0x1.8p23f;
  const vu dist = (vu)(v - q0) & 0x7fffffffu;
  if (!any_lane((vi)((vf)dist >= 0.5f - near))) return (vu)__builtin_convertvector(q0, vi);
  const vf sv = (vf){0} + s;
  const vf t_hi = VFMA(q0 + 0.5f, sv, -x), t_lo = VFMA(q0 - 0.5f, sv, -x);
  vi q = __builtin_convertvector(q0, vi);
  const vi odd = (q & 1) != 0;
  q = q - ((t_hi < 0) | ((t_hi == 0) & odd)) + ((t_lo > 0) | ((t_lo == 0) & odd));
  const vi qlo = (vi){0} + (int32_t)lo, qhi = (vi){0} + (int32_t)hi;
  q = (vi)sel_u(q < qlo, (vu)qlo, (vu)q);
  q = (vi)sel_u(q > qhi, (vu)qhi, (vu)q);
  return (vu)q;
}

/*
 * The 16-bit codes, branch-free (the AVX-512 level's code16 in
 * codec-scaled-avx512.c, restated): their quotients reach 2^16, where v is
 * off by up to 2^-7 and a lane lies within `near` of a half-integer about
 * once a vector, so scaled_codes_float's correction would nearly always
 * run. q0 = rne(clamp(v)) by the add of 1.5 · 2^23 (the sum's low bit is
 * q0's), and d = v − q0 (exact) points to the only half-integer that x / s
 * can have crossed, m = q0 ± 1/2. t = m · s − x from one fma, its sign
 * flipped when d < 0: the code moves to m ± 1/2 when t < 0, or t = 0 (a tie)
 * and q0 is odd. t is a multiple of the smallest subnormal (s ≥ 2^-125, m a
 * multiple of 1/2), so its single rounding keeps its sign and zero-ness, and
 * "t < 0, or t ≤ 0 if odd" is t < (q0 odd ? the smallest subnormal : +0),
 * the threshold's bits being q0's low bit. q0 = hi may move to hi + 1: the
 * clamp after brings it back.
 */
static inline vu scaled_codes16(vf x, float s, float inv, float lo, float hi) {
  vf v = x * inv;
  v = (vf)sel_u((vi)(v > lo), (vu)v, (vu)((vf){0} + lo));
  v = (vf)sel_u((vi)(v < hi), (vu)v, (vu)((vf){0} + hi));
  const vf y = v + 0x1.8p23f;
  const vf q0 = y - 0x1.8p23f;
  const vu sign = (vu)(v - q0) & 0x80000000u;
  const vf h = (vf)(sign | (vu)((vf){0} + 0.5f)); /* ±1/2 with the sign of d */
  const vf m = q0 + h;
  const vf t = (vf)((vu)VFMA(m, (vf){0} + s, -x) ^ sign);
  const vf odd = (vf)((vu)y & 1u);
  const vf q = (vf)sel_u((vi)(t < odd), (vu)(m + h), (vu)q0);
  vi c = __builtin_convertvector(q, vi); /* an integer: exact */
  const vi qhi = (vi){0} + (int32_t)hi;
  return (vu)sel_u(c > qhi, (vu)qhi, (vu)c);
}

typedef enum { SCALED_BINARY, SCALED_FLOAT, SCALED_DOUBLE, SCALED_WIDE } scaled_path;

/* Returns true when the row holds a NaN: the check rides along with the
 * encoding (the codes are then not used) instead of a pass of its own. */
static ALWAYS_INLINE bool quantize_scaled_bits(const int bits, const scaled_path path, const float *src, int64_t n,
                                               float scale, double lo, double hi, uint8_t *dst) {
  const uint32_t mask = (uint32_t)loom_code_mask(bits);
  const float inv = 1.0f / scale, near = (float)((hi + 1) * 0x1p-22);
  float tail[VL] = {0};
  vi nan = {0};
  /* A morph scans the next row as soon as this one is encoded: fetching it
   * now keeps memory busy meanwhile (as the AVX-512 level's
   * quantize_small_rows does for 16- and 32-bit codes; a prefetch beyond the
   * array never faults). At the AVX2 level on Zen 3 it raised every width's
   * morph (docs/kernels.md, *The AVX2 level's morph*). */
  const char *next = (const char *)(src + n);
  for (int64_t i = 0; i < n; i += VL) {
    const bool last = i + VL > n;
    if ((i * 4) % 64 == 0) _mm_prefetch(next + 4 * i, _MM_HINT_T0);
    vf x;
    if (last) {
      memcpy(tail, src + i, (size_t)(n - i) * sizeof *tail);
      x = load_f(tail);
    } else {
      x = load_f(src + i);
    }
    nan |= (vi)(x != x);
    vu codes;
    switch (path) {
    case SCALED_BINARY: codes = (vu)(x < 0.0f); break; /* sign(w), sign(0) = +1 */
    case SCALED_FLOAT:
      codes = bits == 16 ? scaled_codes16(x, scale, inv, (float)lo, (float)hi)
                         : scaled_codes_float(x, scale, inv, (float)lo, (float)hi, near);
      break;
    default: codes = scaled_codes_double(x, path == SCALED_WIDE, scale, lo, hi); break;
    }
    codes &= mask;
    uint8_t *out = dst + i * bits / 8;
    if (last) {
      uint8_t buf[64];
      store_codes(bits, codes, buf);
      memcpy(out, buf, (size_t)(((n - i) * bits + 7) / 8));
    } else {
      store_codes(bits, codes, out);
    }
  }
  int any = 0;
  for (int l = 0; l < VL; l++) any |= nan[l];
  return any != 0;
}

#define QUANTIZE_SCALED_CASE(B)                                                  \
  case B:                                                                        \
    if (path == SCALED_FLOAT)                                                    \
      nan = quantize_scaled_bits(B, SCALED_FLOAT, src, n, scale, lo, hi, dst);   \
    else                                                                         \
      nan = quantize_scaled_bits(B, SCALED_DOUBLE, src, n, scale, lo, hi, dst);  \
    break;

static int SIMD(quantize_scaled)(const loom_dtype_traits *t, const float *src, int64_t n, float scale, uint8_t *dst,
                                 int64_t *bad) {
  if (!(scale >= 0) || isinf(scale)) {
    *bad = 0;
    return LOOM_ERR_INVALID;
  }
  const int bits = t->bits;
  const bool binary = t->kind == LOOM_DTYPE_KIND_BINARY;
  if (!binary && scale == 0) {
    if (find_nan(src, n, bad)) return LOOM_ERR_NONFINITE;
    memset(dst, 0, ((size_t)n * (size_t)bits + 7) / 8);
    return 0;
  }
  bool nan;
  const double hi = (double)t->qmax, lo = t->kind == LOOM_DTYPE_KIND_UNSIGNED ? 0.0 : -hi;
  const scaled_path path = t->qmax <= 65535 && scale >= 0x1p-125f ? SCALED_FLOAT : SCALED_DOUBLE;
  switch (bits) {
  case 1: nan = quantize_scaled_bits(1, SCALED_BINARY, src, n, scale, lo, hi, dst); break;
  QUANTIZE_SCALED_CASE(2)
  QUANTIZE_SCALED_CASE(4)
  QUANTIZE_SCALED_CASE(8)
  QUANTIZE_SCALED_CASE(16)
  default: nan = quantize_scaled_bits(32, SCALED_WIDE, src, n, scale, lo, hi, dst); break;
  }
  return nan && find_nan(src, n, bad) ? LOOM_ERR_NONFINITE : 0;
}

/*
 * value = (float)(q · s in double). For |q| <= 2^24, q·s in float32 is the
 * same single rounding of the exact product (the double product is exact),
 * so codes of up to 16 bits multiply in float32; 32-bit codes go through
 * double as the reference does.
 */
static ALWAYS_INLINE void dequantize_scaled_bits(const int bits, const bool is_signed, const bool binary,
                                                 const uint8_t *src, int64_t n, float scale, float *dst) {
  const int ext = 32 - bits; /* sign extension by shifting up and back */
  uint8_t in[64] = {0};
#if VBYTES == 64
  /* Codes of at most 4 bits have at most 16 values: each one's float (the
   * same product as below) is computed once per row, and a code picks its
   * lane of that table (vpermps) instead of being sign-extended, converted
   * and multiplied. Signed int4 dequantized at 0.84–0.89 × memcpy this way
   * round and uint4, without the sign extension, at 1.15–1.2 (bench-dtype
   * on a Sapphire Rapids). */
  _Alignas(64) float table[16] = {0};
  if (bits <= 4) {
    for (int k = 0; k < (1 << bits); k++) {
      const int q = binary ? 1 - 2 * k : is_signed && k >= (1 << (bits - 1)) ? k - (1 << bits) : k;
      table[k] = (float)q * scale;
    }
  }
  const __m512 lut = _mm512_load_ps(table);
#endif
  for (int64_t i = 0; i < n; i += VL) {
    const bool last = i + VL > n;
    const uint8_t *p = src + i * bits / 8;
    if (last) {
      memcpy(in, p, (size_t)(((n - i) * bits + 7) / 8));
      p = in;
    }
    const vu c = load_codes(bits, p);
    vf v;
#if VBYTES == 64
    if (bits <= 4) {
      v = (vf)_mm512_permutexvar_ps((__m512i)c, lut);
    } else
#endif
    if (binary) {
      v = __builtin_convertvector(1 - 2 * (vi)c, vf) * scale;
    } else if (bits == 32) {
      const vd q = is_signed ? __builtin_convertvector((vi)c, vd) : __builtin_convertvector(c, vd);
      v = __builtin_convertvector(q * (double)scale, vf);
    } else {
      const vi q = is_signed ? ((vi)(c << ext)) >> ext : (vi)c;
      v = __builtin_convertvector(q, vf) * scale;
    }
    if (last)
      memcpy(dst + i, &v, (size_t)(n - i) * sizeof *dst);
    else
      memcpy(dst + i, &v, sizeof v);
  }
}

#define DEQUANTIZE_SCALED_CASE(B)                                                \
  case B:                                                                        \
    if (is_signed)                                                               \
      dequantize_scaled_bits(B, true, false, src, n, scale, dst);                \
    else                                                                         \
      dequantize_scaled_bits(B, false, false, src, n, scale, dst);               \
    break;

static void SIMD(dequantize_scaled)(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                    const float *lut, float *dst) {
  const bool is_signed = t->kind != LOOM_DTYPE_KIND_UNSIGNED; /* ternary decodes as int2 */
  switch (t->bits) {
  case 1: dequantize_scaled_bits(1, true, true, src, n, scale, dst); break;
  DEQUANTIZE_SCALED_CASE(2)
  DEQUANTIZE_SCALED_CASE(4)
  DEQUANTIZE_SCALED_CASE(8)
  DEQUANTIZE_SCALED_CASE(16)
  default: DEQUANTIZE_SCALED_CASE(32)
  }
}

#include "kernels/codec-scan-simd.h"
#include "kernels/gemv-simd.h"

static void SIMD(fill_codecs)(loom_kernels *k) {
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    switch ((loom_dtype)d) {
    case LOOM_DTYPE_FLOAT32:
      break; /* a memcpy already */
    case LOOM_DTYPE_FLOAT64:
      k->quantize_row[d] = SIMD(quantize_float64);
      k->quantize_row_finite[d] = SIMD(quantize_float64_finite);
      k->dequantize_row[d] = SIMD(dequantize_float64);
      break;
    case LOOM_DTYPE_BFLOAT16:
      k->quantize_row[d] = SIMD(quantize_minifloat);
      k->dequantize_row[d] = SIMD(dequantize_bfloat16);
      break;
    case LOOM_DTYPE_FLOAT16:
    case LOOM_DTYPE_FP8_E4M3:
    case LOOM_DTYPE_FP8_E5M2:
    case LOOM_DTYPE_FP4:
      k->quantize_row[d] = SIMD(quantize_minifloat);
      k->dequantize_row[d] = SIMD(dequantize_minifloat);
      break;
    default:
      if (t->bits == 64) break; /* codes beyond 2^52: the reference's integer division stays */
      k->quantize_row[d] = SIMD(quantize_scaled);
      k->dequantize_row[d] = SIMD(dequantize_scaled);
      break;
    }
  }
  k->any_nonfinite = SIMD(any_nonfinite);
  k->abs_max = SIMD(abs_max);
  k->pos_max = SIMD(pos_max);
  k->dot_acc64 = SIMD(dot_acc64);
  k->gemv_reduce64 = SIMD(gemv_reduce64);
  k->abs_sum = SIMD(abs_sum);
  k->scale_scan = SIMD(scale_scan);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    if (d != LOOM_DTYPE_FLOAT64 && t->bits <= (t->scaled ? 16 : 32)) k->gemv_acc64[d] = SIMD(gemv_acc64);
  }
}
