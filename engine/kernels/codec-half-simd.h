/*
 * The float16 and bfloat16 encoders of the vector codecs (codec-simd.h,
 * which includes this after the generic minifloat encoder and the scaled
 * codecs, whose mf_encode_vec, narrow16 and any_lane they use). Not a
 * normal header.
 */
#ifndef SIMD
#error "codec-half-simd.h is included by codec-simd.h only"
#endif

/* float16 and bfloat16 rows in blocks of HALF_BLOCK values. A block
 * without a NaN takes the format's fast encode, which has the bits of
 * mf_encode_vec for every value but NaN; a block with one goes through
 * mf_encode_vec, which gives the format's NaN code, or (finite_only, for
 * the morph's check: cpu.h, quantize_row_finite) a NaN or infinity
 * anywhere stops the row.
 *
 * float16: F16C's vcvtps2ph, rounding to nearest even by its immediate,
 * overflowing to infinity as IEEE does and keeping subnormals; it keeps a
 * NaN's payload where the reference gives its one NaN code. 3 operations a
 * vector for the block test and the conversion against about 18.
 *
 * bfloat16: (u + 0x7fff + the kept lsb) >> 16 on the float32 bits is round
 * half to even for every value but NaN, float32 subnormals included
 * (bfloat16 has float32's exponent range, so its subnormal quantum is 2^16
 * float32 ones), and carries the largest finite magnitudes into infinity
 * as the reference's overflow does; the sign bit stays in place (no
 * magnitude plus 0x8000 reaches bit 31). 3.9 cycles a vector in L1 on
 * Zen 3 against 8.5. */
static inline void half_encode(const float *src, uint8_t *dst) {
#if VBYTES == 64
  _mm256_storeu_si256((__m256i *)(void *)dst, _mm512_cvtps_ph(_mm512_loadu_ps(src), _MM_FROUND_TO_NEAREST_INT));
#else
  _mm_storeu_si128((__m128i *)(void *)dst, _mm256_cvtps_ph(_mm256_loadu_ps(src), _MM_FROUND_TO_NEAREST_INT));
#endif
}

static inline void bf16_encode(const float *src, uint8_t *dst) {
  vu u;
  memcpy(&u, src, sizeof u);
  narrow16((u + 0x7fffu + ((u >> 16) & 1u)) >> 16, dst);
}

static ALWAYS_INLINE int quantize_float16s(const bool bf16, const bool finite_only, const float *src, int64_t n,
                                           uint8_t *dst, int64_t *bad) {
  const mf_vec_params p = mf_params(loom_dtype_traits_get(bf16 ? LOOM_DTYPE_BFLOAT16 : LOOM_DTYPE_FLOAT16));
  int64_t i = 0;
  for (; i + HALF_BLOCK <= n; i += HALF_BLOCK) {
    vi odd = {0};
    for (int j = 0; j < HALF_BLOCK; j += VL) {
      const vf x = load_f(src + i + j);
      if (finite_only)
        odd |= ((vi)x & 0x7fffffff) >= 0x7f800000;
      else
        odd |= (vi)(x != x);
    }
    if (__builtin_expect(any_lane(odd), 0)) {
      if (finite_only) break; /* found below */
      quantize_minifloat_bits(16, &p, src + i, HALF_BLOCK, dst + 2 * i);
      continue;
    }
    for (int j = 0; j < HALF_BLOCK; j += VL) {
      if (bf16)
        bf16_encode(src + i + j, dst + 2 * (i + j));
      else
        half_encode(src + i + j, dst + 2 * (i + j));
    }
  }
  if (finite_only)
    for (int64_t j = i; j < n; j++)
      if (!isfinite(src[j])) {
        *bad = j;
        return LOOM_ERR_NONFINITE;
      }
  quantize_minifloat_bits(16, &p, src + i, n - i, dst + 2 * i);
  return 0;
}

#define QUANTIZE_FLOAT16S(NAME, BF16, FINITE_ONLY)                                                          \
  static int SIMD(NAME)(const loom_dtype_traits *t, const float *src, int64_t n, float scale, uint8_t *dst, \
                        int64_t *bad) {                                                                     \
    (void)t;                                                                                                \
    (void)scale;                                                                                            \
    return quantize_float16s(BF16, FINITE_ONLY, src, n, dst, bad);                                          \
  }
QUANTIZE_FLOAT16S(quantize_half, false, false)
QUANTIZE_FLOAT16S(quantize_half_finite, false, true)
QUANTIZE_FLOAT16S(quantize_bf16, true, false)
QUANTIZE_FLOAT16S(quantize_bf16_finite, true, true)
#undef QUANTIZE_FLOAT16S
