/*
 * The scaled formats' row codecs (integer, ternary, binary) of codec-simd.h,
 * included by it where they stood: the same per-level copy, the same
 * definitions in scope (VL, the vector types, sel_u, ALWAYS_INLINE, ...).
 * Not a normal header. The encoders here serve codes of up to 16 bits (the
 * 32- and 64-bit formats have their own: codec-wide-avx2.c at the AVX2
 * level, codec-scaled-avx512.c at the AVX-512 level, which also replaces
 * these for scales of at least 2^-125).
 */

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

/* The halves split and joined in registers at the AVX2 level: through
 * memory (a memcpy of the array of halves) the joined vector's load waits on
 * two narrower stores it cannot be forwarded from. */
static ALWAYS_INLINE vu scaled_codes_double(vf x, double s, double lo, double hi) {
#if VBYTES == 32
  const vfh half[2] = {(vfh)_mm256_castps256_ps128((__m256)x), (vfh)_mm256_extractf128_ps((__m256)x, 1)};
  vih code[2];
#pragma GCC unroll 2
  for (int h = 0; h < 2; h++) code[h] = scaled_code_small(half[h], s, lo, hi);
  return (vu)_mm256_set_m128i((__m128i)code[1], (__m128i)code[0]);
#else
  vfh half[2];
  vih code[2];
  memcpy(half, &x, sizeof x);
  for (int h = 0; h < 2; h++) code[h] = scaled_code_small(half[h], s, lo, hi);
  vu c;
  memcpy(&c, code, sizeof c);
  return c;
#endif
}

/* The clamps: maxps(v, lo) is v > lo ? v : lo lane by lane, NaN giving lo,
 * and minps(v, hi) v < hi ? v : hi: the selects' bits in one operation
 * where a select (sel_u, a blend) took a compare and a blend. */
#if VBYTES == 64
#define VFMA(a, b, c) ((vf)_mm512_fmadd_ps((a), (b), (c)))
#define VMAX_F(a, b) ((vf)_mm512_max_ps((a), (b)))
#define VMIN_F(a, b) ((vf)_mm512_min_ps((a), (b)))
#define VMIN_I(a, b) ((vi)_mm512_min_epi32((__m512i)(a), (__m512i)(b)))
#define VMAX_I(a, b) ((vi)_mm512_max_epi32((__m512i)(a), (__m512i)(b)))
#else
#define VFMA(a, b, c) ((vf)_mm256_fmadd_ps((a), (b), (c)))
#define VMAX_F(a, b) ((vf)_mm256_max_ps((a), (b)))
#define VMIN_F(a, b) ((vf)_mm256_min_ps((a), (b)))
#define VMIN_I(a, b) ((vi)_mm256_min_epi32((__m256i)(a), (__m256i)(b)))
#define VMAX_I(a, b) ((vi)_mm256_max_epi32((__m256i)(a), (__m256i)(b)))
#endif

/*
 * The same q for codes of up to 16 bits without a division (the hot loop of
 * int8, int4, ternary...): v = x · (1/s) in float32 is within 2^-7 of x / s
 * there, so its rne, q0, is off by at most one, and the sign of
 * (q0 ± 1/2)·s − x from one fma decides (as for the wide formats, in
 * codec-wide-avx2.c and codec-scaled-avx512.c). That sign
 * is exact while every nonzero value of it is at least the smallest
 * subnormal, which holds for s >= 2^-125; smaller scales take the double
 * quotient. Bounds of at most 2^16 keep q0 ± 1/2 exact in float32.
 */
/* The float32 encoders' constants, made once a row: built inside the
 * loop from scalars, GCC recomputed and broadcast them every vector (half
 * the 16-bit morph's instructions). */
typedef struct {
  vf s, inv, lo, hi, far;
  vi qlo, qhi;
} float_consts;

static inline float_consts float_consts_of(float s, float inv, float lo, float hi, float near) {
  return (float_consts){
    .s = (vf){0} + s,
    .inv = (vf){0} + inv,
    .lo = (vf){0} + lo,
    .hi = (vf){0} + hi,
    .far = (vf){0} + (0.5f - near),
    .qlo = (vi){0} + (int32_t)lo,
    .qhi = (vi){0} + (int32_t)hi,
  };
}

/* True when any lane of the mask m (lanes 0 or -1) is set. */
static inline bool any_lane(vi m) {
#if VBYTES == 64
  return _mm512_movepi32_mask((__m512i)m) != 0;
#else
  return _mm256_movemask_ps((__m256)m) != 0;
#endif
}

/* The integers nearest v, ties to even (|v| < 2^22 here): one rounding
 * instruction, where (v + 1.5 · 2^23) − 1.5 · 2^23 gives the same in two
 * dependent adds. */
static inline vf round_even(vf v) {
#if VBYTES == 64
  return (vf)_mm512_roundscale_ps((__m512)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
#else
  return (vf)_mm256_round_ps((__m256)v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
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
static inline vu scaled_codes_float(vf x, const float_consts *c) {
  const vf v = VMIN_F(VMAX_F(x * c->inv, c->lo), c->hi);
  const vf q0 = round_even(v);
  const vu dist = (vu)(v - q0) & 0x7fffffffu;
  if (!any_lane((vi)((vf)dist >= c->far))) return (vu)__builtin_convertvector(q0, vi);
  const vf t_hi = VFMA(q0 + 0.5f, c->s, -x), t_lo = VFMA(q0 - 0.5f, c->s, -x);
  vi q = __builtin_convertvector(q0, vi);
  const vi odd = (q & 1) != 0;
  q = q - ((t_hi < 0) | ((t_hi == 0) & odd)) + ((t_lo > 0) | ((t_lo == 0) & odd));
  return (vu)VMIN_I(VMAX_I(q, c->qlo), c->qhi);
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
static inline vu scaled_codes16(vf x, const float_consts *c) {
  const vf v = VMIN_F(VMAX_F(x * c->inv, c->lo), c->hi);
  const vf y = v + 0x1.8p23f;
  const vf q0 = y - 0x1.8p23f;
  const vu sign = (vu)(v - q0) & 0x80000000u;
  const vf h = (vf)(sign | (vu)((vf){0} + 0.5f)); /* ±1/2 with the sign of d */
  const vf m = q0 + h;
  const vf t = (vf)((vu)VFMA(m, c->s, -x) ^ sign);
  const vf odd = (vf)((vu)y & 1u);
  const vf q = (vf)sel_u((vi)(t < odd), (vu)(m + h), (vu)q0);
  const vi code = __builtin_convertvector(q, vi); /* an integer: exact */
  return (vu)VMIN_I(code, c->qhi);
}

#if VBYTES == 32
/* 4 vectors of codes of 2 to 8 or 16 bits (each < 2^bits) stored as
 * 4·VL·bits/8 bytes. 16 bits: two packs of dwords, each pair's words put
 * back in order by a permute. Narrower: the 32 codes narrowed to bytes
 * together (two packs of dwords, one of words, a permute putting the
 * lanes' dwords back in order), then pairs merged as store_codes does.
 * store_codes narrows each vector alone: an extract and two packs a
 * vector, and for narrower codes a merge and a store of 4 or 2 bytes each
 * (docs/kernels.md, *The morph in cache*). */
static inline void store_codes4(int bits, const vu codes[4], uint8_t *dst) {
  const __m256i w01 = _mm256_packus_epi32((__m256i)codes[0], (__m256i)codes[1]);
  const __m256i w23 = _mm256_packus_epi32((__m256i)codes[2], (__m256i)codes[3]);
  if (bits == 16) { /* the words of each pair back in order: one permute a pair, no extract */
    _mm256_storeu_si256((__m256i *)(void *)dst, _mm256_permute4x64_epi64(w01, 0xd8));
    _mm256_storeu_si256((__m256i *)(void *)(dst + 32), _mm256_permute4x64_epi64(w23, 0xd8));
    return;
  }
  const __m256i b =
    _mm256_permutevar8x32_epi32(_mm256_packus_epi16(w01, w23), _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  if (bits == 8) {
    _mm256_storeu_si256((__m256i *)(void *)dst, b);
    return;
  }
  const __m256i v = _mm256_maddubs_epi16(b, _mm256_set1_epi16((short)(1 | (1 << (8 + bits)))));
  __m128i h = _mm_packus_epi16(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
  if (bits == 4) {
    _mm_storeu_si128((__m128i *)(void *)dst, h);
    return;
  }
  h = _mm_maddubs_epi16(h, _mm_set1_epi16((short)(1 | (1 << 12))));
  h = _mm_packus_epi16(h, h);
  _mm_storel_epi64((__m128i *)(void *)dst, h);
}
#endif

typedef enum { SCALED_BINARY, SCALED_FLOAT, SCALED_DOUBLE } scaled_path;

/* The codes of one vector of values. */
static ALWAYS_INLINE vu scaled_codes(const int bits, const scaled_path path, vf x, const float_consts *c,
                                     float scale, double lo, double hi) {
  switch (path) {
  case SCALED_BINARY: return (vu)(x < 0.0f); /* sign(w), sign(0) = +1 */
  case SCALED_FLOAT: return bits == 16 ? scaled_codes16(x, c) : scaled_codes_float(x, c);
  default: return scaled_codes_double(x, scale, lo, hi);
  }
}

/* The next row's scan riding on an encode (quantize_scaled_scan): the
 * statistics of scale_scan (codec-scan-simd.h) over the values seen so far.
 * The maxima serve the signed and unsigned formats; amax, amin and sum,
 * abs_sum_scan's, the ternary and binary ones (`sums`). */
typedef struct {
  vu amax; /* of |x| as bit patterns, NaN and infinities included */
  vi pmax; /* of the bit patterns as signed integers */
  vu amin; /* of the nonzero |x| as bit patterns */
  vdn sum[2]; /* Σ |x| in double, low and high halves of the vectors */
} scan_acc;

static inline scan_acc scan_acc_empty(void) {
  return (scan_acc){.amax = {0}, .pmax = {0}, .amin = (vu){0} - 1u, .sum = {{0}, {0}}};
}

static ALWAYS_INLINE void scan_add(const bool sums, scan_acc *acc, const float *p) {
  vu u;
  memcpy(&u, p, sizeof u);
  const vu a = u & 0x7fffffffu;
#if VBYTES == 64
  acc->amax = (vu)_mm512_max_epu32((__m512i)a, (__m512i)acc->amax);
  if (!sums) acc->pmax = (vi)_mm512_max_epi32((__m512i)u, (__m512i)acc->pmax);
  if (sums) acc->amin = (vu)_mm512_min_epu32((__m512i)(a | (vu)(a == 0)), (__m512i)acc->amin);
#else
  acc->amax = (vu)_mm256_max_epu32((__m256i)a, (__m256i)acc->amax);
  if (!sums) acc->pmax = (vi)_mm256_max_epi32((__m256i)u, (__m256i)acc->pmax);
  if (sums) acc->amin = (vu)_mm256_min_epu32((__m256i)(a | (vu)(a == 0)), (__m256i)acc->amin);
#endif
  if (sums) {
    vdn d[2];
    halves_to_double((vf)a, d);
    acc->sum[0] += d[0];
    acc->sum[1] += d[1];
  }
}

/* Returns true when the row holds a NaN: the check rides along with the
 * encoding (the codes are then not used) instead of a pass of its own.
 * With `next` (a constant NULL everywhere but quantize_scaled_scan), the
 * vectors of the next row at the same columns go into *acc as well. */
static ALWAYS_INLINE bool quantize_scaled_bits_scan(const int bits, const scaled_path path, const float *src,
                                                    int64_t n, float scale, double lo, double hi, uint8_t *dst,
                                                    const float *next, const bool sums, scan_acc *acc,
                                                    int64_t *scanned) {
  const vu mask = (vu){0} + (uint32_t)loom_code_mask(bits);
  const float_consts c =
    float_consts_of(scale, 1.0f / scale, (float)lo, (float)hi, (float)((hi + 1) * 0x1p-22));
  vi nan = {0};
  /* A morph scans the next row as soon as this one is encoded: fetching it
   * now keeps memory busy meanwhile (as the AVX-512 level's
   * quantize_small_rows does for 16- and 32-bit codes; a prefetch beyond the
   * array never faults). At the AVX2 level on Zen 3 it raised every width's
   * morph (docs/kernels.md, *The AVX2 level's morph*). */
  const char *ahead = (const char *)(src + n);
  scan_acc a = next ? *acc : scan_acc_empty();
  int64_t i = 0;
#if VBYTES == 32
  if (bits >= 2)
    for (; i + 4 * VL <= n; i += 4 * VL) {
      if (!next) {
        _mm_prefetch(ahead + 4 * i, _MM_HINT_T0);
        _mm_prefetch(ahead + 4 * i + 64, _MM_HINT_T0);
      }
      vu codes[4];
#pragma GCC unroll 4
      for (int k = 0; k < 4; k++) {
        const vf x = load_f(src + i + k * VL);
        nan |= (vi)(x != x);
        codes[k] = scaled_codes(bits, path, x, &c, scale, lo, hi) & mask;
        if (next) scan_add(sums, &a, next + i + k * VL);
      }
      store_codes4(bits, codes, dst + i * bits / 8);
    }
#endif
  for (; i + VL <= n; i += VL) {
    if (!next && (i * 4) % 64 == 0) _mm_prefetch(ahead + 4 * i, _MM_HINT_T0);
    const vf x = load_f(src + i);
    nan |= (vi)(x != x);
    store_codes(bits, scaled_codes(bits, path, x, &c, scale, lo, hi) & mask, dst + i * bits / 8);
    if (next) scan_add(sums, &a, next + i);
  }
  if (next) {
    *acc = a;
    *scanned = i;
  }
  if (i < n) {
    float tail[VL] = {0};
    uint8_t buf[64];
    memcpy(tail, src + i, (size_t)(n - i) * sizeof *tail);
    const vf x = load_f(tail);
    nan |= (vi)(x != x);
    store_codes(bits, scaled_codes(bits, path, x, &c, scale, lo, hi) & mask, buf);
    memcpy(dst + i * bits / 8, buf, (size_t)(((n - i) * bits + 7) / 8));
  }
  int any = 0;
  for (int l = 0; l < VL; l++) any |= nan[l];
  return any != 0;
}

static ALWAYS_INLINE bool quantize_scaled_bits(const int bits, const scaled_path path, const float *src, int64_t n,
                                               float scale, double lo, double hi, uint8_t *dst) {
  return quantize_scaled_bits_scan(bits, path, src, n, scale, lo, hi, dst, NULL, false, NULL, NULL);
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
  default: QUANTIZE_SCALED_CASE(16) /* fill_codecs installs this for codes of at most 16 bits */
  }
  return nan && find_nan(src, n, bad) ? LOOM_ERR_NONFINITE : 0;
}

/*
 * value = (float)(q · s in double). For |q| <= 2^24, q·s in float32 is the
 * same single rounding of the exact product (the double product is exact),
 * so codes of up to 16 bits multiply in float32; 32-bit codes go through
 * double as the reference does.
 */
#if VBYTES == 64
#define LUT_ARG , lut
#define LUT_PARAM , __m512 lut
#else
#define LUT_ARG
#define LUT_PARAM
#endif

/* 32-bit codes c: the product in double, rounded to float after, as the
 * reference (also the packed GEMV's decode, gemv-simd.h). */
static ALWAYS_INLINE vf decode_scaled32(const bool is_signed, vu c, float scale) {
  const vd q = is_signed ? __builtin_convertvector((vi)c, vd) : __builtin_convertvector(c, vd);
  return __builtin_convertvector(q * (double)scale, vf);
}

/* The values of one vector of codes c. */
static ALWAYS_INLINE vf decode_scaled(const int bits, const bool is_signed, const bool binary, vu c, float scale,
                                      int ext LUT_PARAM) {
#if VBYTES == 64
  if (bits <= 4) return (vf)_mm512_permutexvar_ps((__m512i)c, lut);
#endif
  if (binary) return __builtin_convertvector(1 - 2 * (vi)c, vf) * scale;
  if (bits == 32) return decode_scaled32(is_signed, c, scale);
  const vi q = is_signed ? ((vi)(c << ext)) >> ext : (vi)c;
  return __builtin_convertvector(q, vf) * scale;
}

/* The values of the VL codes at p: decode_scaled's, 8- and 16-bit signed
 * codes sign-extended by their load. */
static ALWAYS_INLINE vf decode_scaled_at(const int bits, const bool is_signed, const bool binary, const uint8_t *p,
                                         float scale, int ext LUT_PARAM) {
  if ((bits == 8 || bits == 16) && is_signed && !binary)
    return __builtin_convertvector(load_codes_signed(bits, p), vf) * scale;
  return decode_scaled(bits, is_signed, binary, load_codes(bits, p), scale, ext LUT_ARG);
}

static ALWAYS_INLINE void dequantize_scaled_bits(const int bits, const bool is_signed, const bool binary,
                                                 const uint8_t *src, int64_t n, float scale, float *dst,
                                                 const bool stream) {
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
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    /* Streamed, the 32-bit codes are fetched ahead at every level: at the
     * AVX-512 level int32 dequantized at 0.98-1.02 of memcpy without,
     * 1.08-1.19 with (a Xeon with AMX; 4 KiB ahead the same) */
    if (bits == 32 && (4 * i) % 64 == 0) {
      if (stream)
        _mm_prefetch((const char *)(src + 4 * i) + 1024, _MM_HINT_T0);
      else
        DECODE_PREFETCH(src + 4 * i);
    }
    const vf v = decode_scaled_at(bits, is_signed, binary, src + i * bits / 8, scale, ext LUT_ARG);
    if (stream)
      STREAM_F(dst + i, v);
    else
      memcpy(dst + i, &v, sizeof v);
  }
  if (i < n) { /* the tail out of the loop: its copies are calls */
    memcpy(in, src + i * bits / 8, (size_t)(((n - i) * bits + 7) / 8));
    const vf v = decode_scaled_at(bits, is_signed, binary, in, scale, ext LUT_ARG);
    memcpy(dst + i, &v, (size_t)(n - i) * sizeof *dst);
  }
}

#define DEQUANTIZE_SCALED_CASE(B)                                                \
  case B:                                                                        \
    if (is_signed)                                                               \
      dequantize_scaled_bits(B, true, false, src, n, scale, dst, false);         \
    else                                                                         \
      dequantize_scaled_bits(B, false, false, src, n, scale, dst, false);        \
    break;

static void SIMD(dequantize_scaled)(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                    const float *lut, float *dst) {
  const bool is_signed = t->kind != LOOM_DTYPE_KIND_UNSIGNED; /* ternary decodes as int2 */
  switch (t->bits) {
  case 1: dequantize_scaled_bits(1, true, true, src, n, scale, dst, false); break;
  DEQUANTIZE_SCALED_CASE(2)
  DEQUANTIZE_SCALED_CASE(4)
  DEQUANTIZE_SCALED_CASE(8)
  DEQUANTIZE_SCALED_CASE(16)
  default: DEQUANTIZE_SCALED_CASE(32)
  }
}
