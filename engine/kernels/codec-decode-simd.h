/*
 * The minifloat decoders of the row codecs (float16, fp8, fp4): the generic
 * decode and the F16C and table paths that give its bits faster, used by
 * the dequantize and by the fused GEMV (gemv-simd.h). Included by
 * codec-simd.h only, whose types and SIMD(name) they use. Not a normal
 * header.
 */
#ifndef SIMD
#error "codec-decode-simd.h is included by codec-simd.h only"
#endif

/*
 * Decoding: the magnitude bits moved to a float32's exponent and mantissa
 * with the exponent rebiased; subnormal codes as mantissa × quantum. Both
 * exact (every value of these formats is a normal float32). Infinity and NaN codes get the reference's
 * values: float16 keeps the NaN payload (core's half_to_float), the 8-bit
 * formats give the canonical quiet NaN with the code's sign (their table is
 * built from a double NAN).
 */
typedef struct {
  int man_bits, sign_shift;
  uint32_t mag_mask, special_at, nan_mag, rebias, min_normal;
  float sub_quantum;
  bool has_inf, has_nan, keep_payload;
  /* fp4: its 8 magnitudes decoded (fp4_magnitudes), twice at 16 lanes */
  _Alignas(64) float fp4[16];
} mf_dec_params;

static mf_dec_params mf_dec(const loom_dtype_traits *t) {
  mf_dec_params p = {
    .man_bits = t->man_bits,
    .sign_shift = t->exp_bits + t->man_bits,
    .mag_mask = (UINT32_C(1) << (t->exp_bits + t->man_bits)) - 1,
    .special_at = ((UINT32_C(1) << t->exp_bits) - 1) << t->man_bits,
    .nan_mag = loom_minifloat_nan_code(t),
    .rebias = (uint32_t)(127 - t->exp_bias) << 23,
    .min_normal = UINT32_C(1) << t->man_bits,
    .sub_quantum = ldexpf(1.0f, 1 - t->exp_bias - t->man_bits),
    .has_inf = t->has_inf,
    .has_nan = t->has_nan,
    .keep_payload = t->id == LOOM_DTYPE_FLOAT16,
  };
  return p;
}

static inline vu mf_decode_vec(const mf_dec_params *p, vu c) {
  const vu mag = c & p->mag_mask;
  const vu sign = ((c >> p->sign_shift) & 1u) << 31;
  /* Normal codes: rebias the exponent in the integer bits. Subnormal codes
   * (exponent field 0): mantissa × 2^(emin − M) in float32, both operands
   * normal. (Building a float32 subnormal and scaling it would be exact too,
   * but a subnormal operand costs a microcode assist on many Intel cores.) */
  const vu normal = (mag << (23 - p->man_bits)) + p->rebias;
  const vu subnormal = (vu)(__builtin_convertvector((vi)mag, vf) * p->sub_quantum);
  vu v = sel_u((vi)(mag < p->min_normal), subnormal, normal);
  if (p->has_inf) {
    const vu man = mag & ((1u << p->man_bits) - 1);
    const vu special = p->keep_payload ? 0x7f800000u | (man << (23 - p->man_bits))
                                       : sel_u((vi)(man != 0), (vu){0} + 0x7fc00000u, (vu){0} + 0x7f800000u);
    v = sel_u((vi)(mag >= p->special_at), special, v);
  } else if (p->has_nan) {
    v = sel_u((vi)(mag == p->nan_mag), (vu){0} + 0x7fc00000u, v);
  }
  return sign | v;
}

/* VL float16 codes at p through F16C's conversion, which is exact for every
 * finite half and infinity (each is a float32) and keeps a NaN's sign and
 * payload but sets the quiet bit; mf_decode_vec keeps a signalling NaN's
 * bits as they are, so the lanes whose half has an all-ones exponent and
 * the quiet bit (0x200) clear get that bit cleared again: signalling NaNs,
 * and infinities, whose float32 has it clear anyway. The same bits as
 * mf_decode_vec in a third of its operations. */
static inline vf half_decode(const uint8_t *p) {
#if VBYTES == 64
  const __m256i h = _mm256_loadu_si256((const __m256i *)(const void *)p);
  const __m512i f = _mm512_castps_si512(_mm512_cvtph_ps(h));
  const __mmask16 quiet_clear =
      _mm256_cmpeq_epi16_mask(_mm256_and_si256(h, _mm256_set1_epi16(0x7e00)), _mm256_set1_epi16(0x7c00));
  return (vf)_mm512_mask_and_epi32(f, quiet_clear, f, _mm512_set1_epi32(~0x00400000));
#else
  const __m128i h = _mm_loadu_si128((const __m128i *)(const void *)p);
  const __m256i f = _mm256_castps_si256(_mm256_cvtph_ps(h));
  const __m256i quiet_clear = _mm256_cvtepi16_epi32(
      _mm_cmpeq_epi16(_mm_and_si128(h, _mm_set1_epi16(0x7e00)), _mm_set1_epi16(0x7c00)));
  return (vf)_mm256_andnot_si256(_mm256_and_si256(quiet_clear, _mm256_set1_epi32(0x00400000)), f);
#endif
}

/* VL float16 codes at p with F16C's conversion alone: a signalling NaN
 * comes out quiet (its sign and payload kept). For the GEMV, whose fused
 * multiply-add quiets a signalling NaN operand anyway and keeps the same
 * sign and payload, so its results have half_decode's bits; and for codes
 * known to hold no NaN (dequantize_via_half). */
static inline vf half_decode_quieted(const uint8_t *p) {
#if VBYTES == 64
  return (vf)_mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(const void *)p));
#else
  return (vf)_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)p));
#endif
}

/* VL fp8 codes at p through the same conversion. An fp8-e5m2 code is the
 * top byte of the float16 of the same value; an fp8-e4m3 code's magnitude
 * moved 7 bits up reads as a float16 of 2^-8 times its value, normal or
 * subnormal alike (both formats carry 3 fraction bits there; e4m3's bias 7
 * is float16's 15 less 8), so the conversion times 256 is exact. NaN codes
 * (e5m2 magnitudes above 0x7c, e4m3's 0x7f) give the canonical quiet NaN
 * with the code's sign, as mf_decode_vec does. */
static inline vf fp8_decode(const bool e4m3, const bool times256, const uint8_t *p) {
#if VBYTES == 64
  const __m256i c = _mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p));
  /* e4m3: the code shifted 7 bits has the magnitude in place and the sign
   * at bit 14; adding bit 14 to itself moves it to bit 15. */
  const __m256i c7 = _mm256_slli_epi16(c, 7);
  const __m256i h = e4m3 ? _mm256_add_epi16(c7, _mm256_and_si256(c7, _mm256_set1_epi16(0x4000)))
                         : _mm256_slli_epi16(c, 8);
  const __mmask16 nan = e4m3 ? _mm256_cmpeq_epi16_mask(_mm256_and_si256(c, _mm256_set1_epi16(0x7f)),
                                                       _mm256_set1_epi16(0x7f))
                             : _mm256_cmpgt_epu16_mask(_mm256_and_si256(c, _mm256_set1_epi16(0x7f)),
                                                       _mm256_set1_epi16(0x7c));
  __m512 f = _mm512_cvtph_ps(h);
  if (e4m3 && times256) f = _mm512_mul_ps(f, _mm512_set1_ps(256.0f));
  if (__builtin_expect(nan == 0, 1)) return (vf)f; /* weights are finite: NaN codes are rare */
  const __m512i bits = _mm512_castps_si512(f);
  const __m512i quiet = _mm512_or_si512(_mm512_and_si512(bits, _mm512_set1_epi32((int)0x80000000u)),
                                        _mm512_set1_epi32(0x7fc00000));
  return (vf)_mm512_mask_mov_epi32(bits, nan, quiet);
#else
  const __m128i c = _mm_cvtepu8_epi16(_mm_loadl_epi64((const __m128i *)(const void *)p));
  const __m128i mag = _mm_and_si128(c, _mm_set1_epi16(0x7f));
  const __m128i c7 = _mm_slli_epi16(c, 7); /* as above: bit 14 added to itself */
  const __m128i h = e4m3 ? _mm_add_epi16(c7, _mm_and_si128(c7, _mm_set1_epi16(0x4000))) : _mm_slli_epi16(c, 8);
  const __m128i nan16 = e4m3 ? _mm_cmpeq_epi16(mag, _mm_set1_epi16(0x7f)) : _mm_cmpgt_epi16(mag, _mm_set1_epi16(0x7c));
  __m256 f = _mm256_cvtph_ps(h);
  if (e4m3 && times256) f = _mm256_mul_ps(f, _mm256_set1_ps(256.0f));
  if (__builtin_expect(_mm_movemask_epi8(nan16) == 0, 1)) return (vf)f;
  const __m256 quiet = _mm256_or_ps(_mm256_and_ps(f, _mm256_castsi256_ps(_mm256_set1_epi32((int)0x80000000u))),
                                    _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)));
  return (vf)_mm256_blendv_ps(f, quiet, _mm256_castsi256_ps(_mm256_cvtepi16_epi32(nan16)));
#endif
}

/* Whether none of the fp8 codes of groups × 64 bytes at p is a NaN code
 * (e4m3 magnitude 0x7f, e5m2 magnitudes above 0x7c): the largest magnitude
 * tells. The GEMV tests a row first (gemv-simd.h) and decodes a row
 * without NaN codes, every row of finite weights, by fp8_decode_finite. */
static inline bool fp8_codes_finite(const bool e4m3, const uint8_t *p, int64_t groups) {
#if VBYTES == 64
  const __m512i m = _mm512_set1_epi8(0x7f);
  __m512i top = _mm512_setzero_si512();
  for (int64_t g = 0; g < groups; g++) top = _mm512_max_epu8(top, _mm512_and_si512(_mm512_loadu_si512((const void *)(p + 64 * g)), m));
  const __m256i t = _mm256_max_epu8(_mm512_castsi512_si256(top), _mm512_extracti64x4_epi64(top, 1));
#else
  const __m256i m = _mm256_set1_epi8(0x7f);
  __m256i t = _mm256_setzero_si256();
  for (int64_t g = 0; g < groups; g++) {
    t = _mm256_max_epu8(t, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + 64 * g)), m));
    t = _mm256_max_epu8(t, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + 64 * g + 32)), m));
  }
#endif
  /* bytes at most 0x7f: a signed compare is the unsigned one */
  const __m256i nan = e4m3 ? _mm256_cmpeq_epi8(t, _mm256_set1_epi8(0x7f)) : _mm256_cmpgt_epi8(t, _mm256_set1_epi8(0x7c));
  return _mm256_testz_si256(nan, nan);
}

/* fp8_decode for codes without a NaN code, for the GEMV: an e4m3 code's
 * float16 reading without the × 256 (the GEMV takes 256 times the
 * activations instead, gemv.c). The code moves to the top byte of a 16-bit
 * lane (an e5m2 code is then its float16); for e4m3 an arithmetic shift
 * right by one puts the magnitude 7 bits up and copies the sign into bit
 * 14, which the mask clears: fp8_decode's half, in one operation fewer. */
static inline vf fp8_decode_finite(const bool e4m3, const uint8_t *p) {
#if VBYTES == 64
  const __m256i u = _mm256_slli_epi16(_mm256_cvtepu8_epi16(_mm_loadu_si128((const __m128i *)(const void *)p)), 8);
  const __m256i h = e4m3 ? _mm256_and_si256(_mm256_srai_epi16(u, 1), _mm256_set1_epi16((short)0xbfff)) : u;
  return (vf)_mm512_cvtph_ps(h);
#else
  const __m128i u = _mm_unpacklo_epi8(_mm_setzero_si128(), _mm_loadl_epi64((const __m128i *)(const void *)p));
  const __m128i h = e4m3 ? _mm_and_si128(_mm_srai_epi16(u, 1), _mm_set1_epi16((short)0xbfff)) : u;
  return (vf)_mm256_cvtph_ps(h);
#endif
}

/* fp4 (e2m1: a sign bit and 8 magnitudes, no infinity or NaN): the 8
 * magnitudes decoded once by mf_decode_vec into p->fp4, then a vector of
 * codes picks its values with one permute and takes its sign bit; the same
 * bits as mf_decode_vec on every code. */
static inline void fp4_magnitudes(mf_dec_params *p) {
  const vu v = mf_decode_vec(p, iota() & 7u);
  memcpy(p->fp4, &v, sizeof v);
  if (VL == 8) memcpy(p->fp4 + 8, &v, sizeof v);
}

static inline vf fp4_lookup(const mf_dec_params *p, vu c) {
#if VBYTES == 64
  const vu m = (vu)_mm512_permutexvar_ps((__m512i)(c & 7u), _mm512_load_ps(p->fp4));
#else
  const vu m = (vu)_mm256_permutevar8x32_ps(_mm256_load_ps(p->fp4), (__m256i)(c & 7u));
#endif
  return (vf)(m | (c & 8u) << 28);
}

static void dequantize_fp4(const mf_dec_params *p, const uint8_t *src, int64_t n, float *dst) {
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    const vf v = fp4_lookup(p, load_codes(4, src + i / 2));
    memcpy(dst + i, &v, sizeof v);
  }
  if (i < n) {
    uint8_t in[VL / 2] = {0};
    memcpy(in, src + i / 2, (size_t)((n - i + 1) / 2));
    const vf v = fp4_lookup(p, load_codes(4, in));
    memcpy(dst + i, &v, (size_t)(n - i) * sizeof *dst);
  }
}

/* Whether none of the HALF_BLOCK float16 codes at p is a NaN (a magnitude
 * above infinity's 0x7c00): the largest magnitude tells, in 2 operations a
 * 16 codes. */
#define HALF_BLOCK 64
static inline bool half_codes_no_nan(const uint8_t *p) {
  const __m256i m = _mm256_set1_epi16(0x7fff);
  __m256i t = _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)p), m);
  for (int g = 1; g < HALF_BLOCK / 16; g++)
    t = _mm256_max_epu16(t, _mm256_and_si256(_mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * g)), m));
  /* magnitudes at most 0x7fff: a signed compare is the unsigned one */
  const __m256i nan = _mm256_cmpgt_epi16(t, _mm256_set1_epi16(0x7c00));
  return _mm256_testz_si256(nan, nan);
}

/* float16 (bytes 2) and fp8 (bytes 1, e4m3 or e5m2) rows through the
 * conversions above; the last partial vector from a zero-padded copy.
 * float16 in blocks of HALF_BLOCK codes: a block without a NaN code (every
 * block of finite weights) through F16C's conversion alone, which then has
 * half_decode's bits, in half its operations at the AVX2 level. */
static ALWAYS_INLINE void dequantize_via_half(const int bytes, const bool e4m3, const uint8_t *src, int64_t n,
                                              float *dst) {
  int64_t i = 0;
  if (bytes == 2)
    for (; i + HALF_BLOCK <= n; i += HALF_BLOCK) {
      if (__builtin_expect(half_codes_no_nan(src + 2 * i), 1))
        for (int j = 0; j < HALF_BLOCK; j += VL) {
          const vf v = half_decode_quieted(src + 2 * (i + j));
          memcpy(dst + i + j, &v, sizeof v);
        }
      else
        for (int j = 0; j < HALF_BLOCK; j += VL) {
          const vf v = half_decode(src + 2 * (i + j));
          memcpy(dst + i + j, &v, sizeof v);
        }
    }
  for (; i + VL <= n; i += VL) {
    const vf v = bytes == 2 ? half_decode(src + 2 * i) : fp8_decode(e4m3, true, src + i);
    memcpy(dst + i, &v, sizeof v);
  }
  if (i < n) {
    uint8_t in[2 * VL] = {0};
    memcpy(in, src + bytes * i, (size_t)((n - i) * bytes));
    const vf v = bytes == 2 ? half_decode(in) : fp8_decode(e4m3, true, in);
    memcpy(dst + i, &v, (size_t)(n - i) * sizeof *dst);
  }
}

static ALWAYS_INLINE void dequantize_minifloat_bits(const int bits, const mf_dec_params *p, const uint8_t *src,
                                                    int64_t n, float *dst) {
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    const vu v = mf_decode_vec(p, load_codes(bits, src + i * bits / 8));
    memcpy(dst + i, &v, sizeof v);
  }
  if (i < n) {
    uint8_t in[64] = {0};
    memcpy(in, src + i * bits / 8, (size_t)(((n - i) * bits + 7) / 8));
    const vu v = mf_decode_vec(p, load_codes(bits, in));
    memcpy(dst + i, &v, (size_t)(n - i) * sizeof *dst);
  }
}

static void SIMD(dequantize_minifloat)(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                       const float *lut, float *dst) {
  switch (t->id) {
  case LOOM_DTYPE_FLOAT16: dequantize_via_half(2, false, src, n, dst); return;
  case LOOM_DTYPE_FP8_E4M3: dequantize_via_half(1, true, src, n, dst); return;
  case LOOM_DTYPE_FP8_E5M2: dequantize_via_half(1, false, src, n, dst); return;
  default: break;
  }
  mf_dec_params p = mf_dec(t);
  if (t->id == LOOM_DTYPE_FP4) {
    fp4_magnitudes(&p);
    dequantize_fp4(&p, src, n, dst);
    return;
  }
  switch (t->bits) {
  case 16: dequantize_minifloat_bits(16, &p, src, n, dst); break;
  case 8: dequantize_minifloat_bits(8, &p, src, n, dst); break;
  default: dequantize_minifloat_bits(4, &p, src, n, dst); break;
  }
}
