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

/* The low and high halves of v's floats in double. In registers: split
 * through memory (a memcpy to an array of halves), each half's load waited
 * on the store of the whole (the ternary morph's Σ |x|). */
static inline void halves_to_double(vf v, vdn out[2]) {
#if VBYTES == 64
  out[0] = (vdn)_mm512_cvtps_pd(_mm512_castps512_ps256((__m512)v));
  out[1] = (vdn)_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd((__m512)v), 1)));
#else
  out[0] = (vdn)_mm256_cvtps_pd(_mm256_castps256_ps128((__m256)v));
  out[1] = (vdn)_mm256_cvtps_pd(_mm256_extractf128_ps((__m256)v, 1));
#endif
}

static const uint32_t lane_index[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
static inline vu iota(void) {
  vu v;
  memcpy(&v, lane_index, sizeof v);
  return v;
}

static inline vu sel_u(vi m, vu a, vu b) {
#if VBYTES == 32
  /* Every m here is a comparison's result (lanes all ones or all zeros),
   * so blendv's reading of each lane's top bit selects alike; GCC made
   * three logic operations of the expression below at this level. */
  return (vu)_mm256_blendv_ps((__m256)b, (__m256)a, (__m256)m);
#else
  return ((vu)m & a) | (~(vu)m & b);
#endif
}
/* A non-temporal store of one vector at an address aligned to its width. */
#if VBYTES == 32
#define STREAM_F(p, v) _mm256_stream_ps((p), (__m256)(v))
#else
#define STREAM_F(p, v) _mm512_stream_ps((p), (__m512)(v))
#endif
/* Macros, not functions, for the double-width vectors: under AVX2 a function
 * returning a 64-byte vector would draw GCC's ABI note (-Wpsabi). */
#define sel_q(m, a, b) (((m) & (a)) | (~(m) & (b)))

/* The 32-bit formats' decode (and codec-wide-avx2.c's 64-bit one) fetch
 * their codes 1 KiB ahead at the AVX2 level: on Zen 3 their decode and the
 * stream from memory overlapped poorly without it (docs/kernels.md; float64
 * measured slower with it). */
#if VBYTES == 32
#define DECODE_PREFETCH(p) _mm_prefetch((const char *)(p) + 1024, _MM_HINT_T0)
#else
#define DECODE_PREFETCH(p) ((void)0)
#endif
#define sel_dn(m, a, b) ((vdn)sel_q((m), (vqn)(a), (vqn)(b)))

static inline vf load_f(const float *p) {
  vf v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* The first n floats at p (none where n ≤ 0), zeros in the other lanes;
 * nothing past them is read. */
static inline vf load_f_first(const float *p, int64_t n) {
  if (n <= 0) return (vf){0};
#if VBYTES == 64
  return (vf)_mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1u), p);
#else
  const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  return (vf)_mm256_maskload_ps(p, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), lanes));
#endif
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
  case 16: /* as the 8-bit case: GCC made two half loads, a byte shift, two widenings and an insert of it */
#if VBYTES == 64
    return (vu)_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)src));
#else
    return (vu)_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)src));
#endif
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

/* VL 8- or 16-bit two's complement codes at src, sign-extended by the load
 * (load_codes, then a shift left and an arithmetic shift right, gives the
 * same lanes in two operations more). */
static inline vi load_codes_signed(int bits, const uint8_t *src) {
#if VBYTES == 64
  return bits == 16 ? (vi)_mm512_cvtepi16_epi32(_mm256_loadu_si256((const __m256i *)(const void *)src))
                    : (vi)_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)src));
#else
  return bits == 16 ? (vi)_mm256_cvtepi16_epi32(_mm_loadu_si128((const __m128i *)(const void *)src))
                    : (vi)_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)(const void *)src));
#endif
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
 * its |bits| are below 0x7f800000. With `stream` (quantize_row_finite_stream)
 * the vectors go out through non-temporal stores, the values before dst's
 * first 64-byte boundary through ordinary ones. */
static ALWAYS_INLINE int quantize_float64_checked(const bool stream, const float *src, int64_t n, uint8_t *dst,
                                                  int64_t *bad) {
  const vi magnitude = (vi){0} + 0x7fffffff;
  vi bad_lanes = {0};
  bool finite = true;
  int64_t i = 0;
  if (stream)
    for (; i < n && ((uintptr_t)(dst + 8 * i) & 63) != 0; i++) {
      finite &= isfinite(src[i]);
      const double d = src[i];
      memcpy(dst + 8 * i, &d, sizeof d);
    }
  for (; i + VL <= n; i += VL) {
    const vf x = load_f(src + i);
    vi bits;
    memcpy(&bits, &x, sizeof bits);
    bad_lanes |= (bits & magnitude) >= 0x7f800000;
    const vd d = __builtin_convertvector(x, vd);
    if (stream) {
      vdn half[2]; /* register-wide halves: one non-temporal store each */
      memcpy(half, &d, sizeof d);
#if VBYTES == 64
      _mm512_stream_pd((double *)(void *)(dst + 8 * i), (__m512d)half[0]);
      _mm512_stream_pd((double *)(void *)(dst + 8 * i + 64), (__m512d)half[1]);
#else
      _mm256_stream_pd((double *)(void *)(dst + 8 * i), (__m256d)half[0]);
      _mm256_stream_pd((double *)(void *)(dst + 8 * i + 32), (__m256d)half[1]);
#endif
    } else {
      memcpy(dst + 8 * i, &d, sizeof d);
    }
  }
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
  return LOOM_ERR_NONFINITE;
}

static int SIMD(quantize_float64_finite)(const loom_dtype_traits *t, const float *src, int64_t n, float scale,
                                         uint8_t *dst, int64_t *bad) {
  (void)t;
  (void)scale;
  return quantize_float64_checked(false, src, n, dst, bad);
}

static int SIMD(quantize_float64_finite_stream)(const loom_dtype_traits *t, const float *src, int64_t n,
                                                float scale, uint8_t *dst, int64_t *bad) {
  (void)t;
  (void)scale;
  return quantize_float64_checked(true, src, n, dst, bad);
}

static ALWAYS_INLINE void dequantize_float64_rows(const bool stream, const uint8_t *src, int64_t n, float *dst) {
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    vd d;
    memcpy(&d, src + 8 * i, sizeof d);
    const vf f = __builtin_convertvector(d, vf);
    if (stream)
      STREAM_F(dst + i, f);
    else
      memcpy(dst + i, &f, sizeof f);
  }
  for (; i < n; i++) {
    double d;
    memcpy(&d, src + 8 * i, sizeof d);
    dst[i] = (float)d;
  }
}

static void SIMD(dequantize_float64)(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                     const float *lut, float *dst) {
  dequantize_float64_rows(false, src, n, dst);
}

/* cpu.h, dequantize_row_stream; the loop aligned to 64 bytes as
 * codec-wide-avx2.c's dequantize64_stream */
__attribute__((optimize("align-loops=64"))) static void SIMD(dequantize_float64_stream)(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                            const float *lut, float *dst) {
  /* up to dst's first 64-byte boundary through ordinary stores */
  const int64_t h = loom_stream_head(dst, sizeof(float), n);
  dequantize_float64_rows(false, src, h, dst);
  dequantize_float64_rows(true, src + 8 * h, n - h, dst + h);
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

#include "kernels/codec-scaled-simd.h"

#include "kernels/codec-scan-simd.h"
#include "kernels/gemv-simd.h"

/* The integer product's activation rows (cpu.h, qgemm_quantize): the
 * morph's row scan, the int8 scale and the int8 encoder of this file, with
 * no call between them. Called a row at a time through the table, they cost
 * a row of 32 values about 60 ns, four times its encoding (a transformer
 * of width 32 at rest, docs/qgemm.md). */
/* Σ of len int8 codes, len a multiple of 64: vpsadbw of the codes + 128. */
static inline int64_t code_sum(const int8_t *q, int64_t len) {
#if VBYTES == 32
  const __m256i bias = _mm256_set1_epi8((char)0x80);
  __m256i s = _mm256_setzero_si256();
  for (int64_t c = 0; c < len; c += 32)
    s = _mm256_add_epi64(s, _mm256_sad_epu8(_mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(q + c)),
                                                             bias),
                                            _mm256_setzero_si256()));
  const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  return _mm_cvtsi128_si64(s2) + _mm_extract_epi64(s2, 1) - 128 * len;
#else
  const __m512i bias = _mm512_set1_epi8((char)0x80);
  __m512i s = _mm512_setzero_si512();
  for (int64_t c = 0; c < len; c += 64)
    s = _mm512_add_epi64(s, _mm512_sad_epu8(_mm512_xor_si512(_mm512_loadu_si512(q + c), bias), _mm512_setzero_si512()));
  return _mm512_reduce_add_epi64(s) - 128 * len;
#endif
}

static void SIMD(qgemm_quantize)(const float *x, int64_t batch, int64_t cols, int8_t *xq, int64_t xstride, float *sx,
                                 uint8_t *bad, int64_t *xsum) {
  const loom_dtype_traits *i8 = loom_dtype_traits_get(LOOM_DTYPE_INT8);
  /* the scales of all rows first: each row's chain of scan, division and
   * encoding then overlaps with the next row's */
  for (int64_t b = 0; b < batch; b++) {
    double stat;
    bad[b] = SIMD(scale_scan)(x + b * cols, cols, LOOM_DTYPE_KIND_SIGNED, &stat);
    sx[b] = bad[b] ? 0.0f : loom_scaled_scale_of_stat(i8, stat, cols);
  }
  for (int64_t b = 0; b < batch; b++) {
    const float *row = x + b * cols;
    int8_t *q = xq + b * xstride;
    if (sx[b] == 0) { /* all zeros, or not finite */
      memset(q, 0, (size_t)xstride);
      xsum[b] = 0;
      continue;
    }
    if (sx[b] >= 0x1p-125f)
      quantize_scaled_bits(8, SCALED_FLOAT, row, cols, sx[b], -127.0, 127.0, (uint8_t *)q);
    else
      quantize_scaled_bits(8, SCALED_DOUBLE, row, cols, sx[b], -127.0, 127.0, (uint8_t *)q);
    memset(q + cols, 0, (size_t)(xstride - cols));
    xsum[b] = code_sum(q, xstride);
  }
}

#include "kernels/codec-half-simd.h"
#include "kernels/codec-fp8-simd.h"

/* Outputs beyond the caches at the formats of at most 16 bits (cpu.h,
 * dequantize_row_stream): STREAM_CHUNK values at a time decoded by the
 * level's decoder into a buffer in L1, then copied out through
 * non-temporal stores. Their codes are at most half the output, so writing
 * around the caches (no read of each destination line first) is most of
 * the traffic saved; a decoder of its own per format storing straight out
 * would save only the copy from L1. Zen 3, a private driver, 4096 × 4096
 * (ratio to memcpy): int8 1.6–1.8 → 2.4–2.5, float16 1.4–1.6 → 1.9–2.1;
 * the same copy with a store fence after each chunk fell to 1.1–1.2, one
 * after each row of 4096 to 1.7–1.9, hence a fence only at the end of the
 * caller's loop (loom_stream_fence). */
#define STREAM_CHUNK 1024
static ALWAYS_INLINE void dequantize_via_l1(const loom_dequantize_row_fn decode, const loom_dtype_traits *t,
                                            const uint8_t *src, int64_t n, float scale, const float *lut,
                                            float *dst) {
  /* Decoded at buf + off, the values sit where they will in dst's lines:
   * the ones before dst's first 64-byte boundary are copied ordinarily,
   * the rest streamed from aligned loads. Chunks are 4 KiB of output, so
   * every chunk starts at the same place in a line. Any dst a float can
   * have: pack.c's head of a row before the boundary would start mid-byte
   * for binary codes in an output 16 bytes past one (malloc's), and those
   * rows went through ordinary stores (0.94-0.97 of memcpy against 1.5 on a
   * Xeon with AMX, 2026-12-08). */
  float buf[STREAM_CHUNK + 16] __attribute__((aligned(64)));
  int64_t off = (int64_t)(((uintptr_t)dst & 63) / sizeof(float));
  int64_t lead = off ? 16 - off : 0;
  if (lead && lead * t->bits % 8 == 0) {
    /* The head's codes end on a byte: decoded straight into dst, the rest
     * from an aligned buffer. A decoder's vector stores into buf + off
     * split lines in L1, and cost int2 and int16 a tenth of their speed. */
    const int64_t h = lead < n ? lead : n;
    decode(t, src, h, scale, lut, dst);
    src += h * t->bits / 8;
    dst += h;
    n -= h;
    off = lead = 0;
  }
  for (int64_t i = 0; i < n; i += STREAM_CHUNK) {
    const int64_t len = n - i < STREAM_CHUNK ? n - i : STREAM_CHUNK;
    /* i is a multiple of STREAM_CHUNK, so its codes start on a byte */
    decode(t, src + i * t->bits / 8, len, scale, lut, buf + off);
    int64_t j = lead < len ? lead : len;
    memcpy(dst + i, buf + off, (size_t)j * sizeof *buf);
    for (; j + VL <= len; j += VL) STREAM_F(dst + i + j, load_f(buf + off + j));
    memcpy(dst + i + j, buf + off + j, (size_t)(len - j) * sizeof *buf);
  }
}
static void SIMD(dequantize_minifloat_stream)(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                              const float *lut, float *dst) {
  dequantize_via_l1(SIMD(dequantize_minifloat), t, src, n, scale, lut, dst);
}
static void SIMD(dequantize_bfloat16_stream)(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                             const float *lut, float *dst) {
  dequantize_via_l1(SIMD(dequantize_bfloat16), t, src, n, scale, lut, dst);
}
static void SIMD(dequantize_scaled_stream)(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                           const float *lut, float *dst) {
  if (t->bits < 32) {
    dequantize_via_l1(SIMD(dequantize_scaled), t, src, n, scale, lut, dst);
    return;
  }
  /* int32 and uint32 read as many bytes as they write: streamed straight
   * from the decoder, without the copy through L1 */
  const int64_t h = loom_stream_head(dst, sizeof(float), n);
  SIMD(dequantize_scaled)(t, src, h, scale, lut, dst);
  if (t->kind == LOOM_DTYPE_KIND_UNSIGNED)
    dequantize_scaled_bits(32, false, false, src + 4 * h, n - h, scale, dst + h, true);
  else
    dequantize_scaled_bits(32, true, false, src + 4 * h, n - h, scale, dst + h, true);
}

static void SIMD(fill_codecs)(loom_kernels *k) {
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    switch ((loom_dtype)d) {
    case LOOM_DTYPE_FLOAT32:
      break; /* a memcpy already */
    case LOOM_DTYPE_FLOAT64:
      k->quantize_row[d] = SIMD(quantize_float64);
      k->quantize_row_finite[d] = SIMD(quantize_float64_finite);
      k->quantize_row_finite_stream[d] = SIMD(quantize_float64_finite_stream);
      k->dequantize_row[d] = SIMD(dequantize_float64);
      k->dequantize_row_stream[d] = SIMD(dequantize_float64_stream);
      break;
    case LOOM_DTYPE_BFLOAT16:
      k->quantize_row[d] = SIMD(quantize_bf16);
      k->quantize_row_finite[d] = SIMD(quantize_bf16_finite);
      k->dequantize_row[d] = SIMD(dequantize_bfloat16);
      k->dequantize_row_stream[d] = SIMD(dequantize_bfloat16_stream);
      break;
    case LOOM_DTYPE_FLOAT16:
      k->quantize_row[d] = SIMD(quantize_half);
      k->quantize_row_finite[d] = SIMD(quantize_half_finite);
      k->dequantize_row[d] = SIMD(dequantize_minifloat);
      k->dequantize_row_stream[d] = SIMD(dequantize_minifloat_stream);
      break;
    case LOOM_DTYPE_FP8_E4M3:
    case LOOM_DTYPE_FP8_E5M2:
    case LOOM_DTYPE_FP4:
      k->quantize_row[d] = SIMD(minifloat_sat_encoder)(t, false); /* every one of them: codec-fp8-simd.h */
      k->quantize_row_finite[d] = SIMD(minifloat_sat_encoder)(t, true);
      if (!k->quantize_row[d]) k->quantize_row[d] = SIMD(quantize_minifloat);
      k->dequantize_row[d] = SIMD(dequantize_minifloat);
      k->dequantize_row_stream[d] = SIMD(dequantize_minifloat_stream);
      break;
    default:
      /* The 32- and 64-bit formats' encoders and the 64-bit decode are
       * each level's own (codec-wide-avx2.c, codec-scaled-avx512.c),
       * filled after these into a table that starts as the level below's
       * (cpu.c). */
      if (t->bits <= 32) {
        k->dequantize_row[d] = SIMD(dequantize_scaled);
        /* int32 and uint32 read as many bytes as they write, so the read
         * of each destination line that streaming saves is a third of
         * their traffic: bench-dtype at the AVX-512 level on a Xeon with
         * AMX, int32 0.81-0.91 -> 1.08-1.19 of memcpy, uint32 0.79-0.88
         * -> 1.14-1.16 (docs/kernels.md) */
        k->dequantize_row_stream[d] = SIMD(dequantize_scaled_stream);
      }
      if (t->bits <= 16) k->quantize_row[d] = SIMD(quantize_scaled);
#if VBYTES == 32
      if (t->bits <= 16) k->quantize_row_scan[d] = SIMD(quantize_scaled_scan);
#endif
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
  k->qgemm_quantize = SIMD(qgemm_quantize);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    if (t->bits <= 32 || d == LOOM_DTYPE_FLOAT64) k->gemv_acc64[d] = SIMD(gemv_acc64);
  }
}
