/*
 * The encoders of the saturating minifloats, fp8-e4m3, fp8-e5m2 and fp4, in
 * the vector codecs (codec-simd.h, which includes this after the generic
 * minifloat encoder and codec-scan-simd.h, whose mf_encode_vec, MAX_U and
 * MIN_U it uses). Not a normal header.
 */
#ifndef SIMD
#error "codec-fp8-simd.h is included by codec-simd.h only"
#endif

/* mf_encode_vec's constants as vectors, made once a row (the shifts are
 * the functions' constants: by a count in a register, each of the three
 * shifts a vector cost two operations on Zen 3). */
typedef struct {
  vu round_rebias; /* round_half − (rebias << shift), modulo 2^32 */
  vu magic_bits, max_code;
  vf magic;
  vi subnormal_below;
} mf_sat_consts;

static inline mf_sat_consts mf_sat_consts_of(const mf_vec_params *p) {
  return (mf_sat_consts){
    .round_rebias = (vu){0} + (p->round_half - (p->rebias << p->shift)),
    .magic_bits = (vu){0} + p->magic_bits,
    .max_code = (vu){0} + p->max_code,
    .magic = (vf){0} + p->magic,
    .subnormal_below = (vi){0} + (int32_t)p->subnormal_below,
  };
}

/*
 * mf_encode_vec for a format whose overflow code is its largest finite one
 * (infinity's too), for lanes without NaN: the overflow by one unsigned
 * minimum instead of a compare and a select, no NaN select, the rebias
 * folded into the rounding constant (the difference wraps only below the
 * smallest normal, where the subnormal branch is taken), the subnormal test
 * a signed compare (|x|'s bits are below 2^31). 15 operations a vector
 * against about 20. *amax collects |x|'s bits: at least infinity's where a
 * lane was not finite, and the caller then encodes the block again through
 * mf_encode_vec.
 */
static ALWAYS_INLINE vu mf_encode_sat(const int bits, const int man_bits, const mf_sat_consts *c, vu u, vu *amax) {
  const int shift = 23 - man_bits;
  const vu a = u & 0x7fffffffu;
  *amax = MAX_U(a, *amax);
  const vu normal = (a + c->round_rebias + ((a >> shift) & 1u)) >> shift;
  const vu subnormal = (vu)((vf)a + c->magic) - c->magic_bits;
  const vu mag = MIN_U(sel_u((vi)a < c->subnormal_below, subnormal, normal), c->max_code);
  return mag | ((u >> 31) << (bits - 1));
}

/*
 * Rows of fp8 (bits 8) or fp4 (bits 4) in blocks of HALF_BLOCK values,
 * encoded by mf_encode_sat; a block that held a NaN or an infinity is
 * encoded again by mf_encode_vec, which gives the format's NaN code, or
 * stops the row where the format has none (fp4, at its first NaN: the
 * blocks before had none). finite_only (the morph's check: cpu.h,
 * quantize_row_finite) stops at the first NaN or infinity instead.
 */
static ALWAYS_INLINE int quantize_minifloat_sat(const int bits, const int man_bits, const bool finite_only,
                                                const loom_dtype_traits *t, const float *src, int64_t n, uint8_t *dst,
                                                int64_t *bad) {
  const mf_vec_params p = mf_params(t);
  const mf_sat_consts c = mf_sat_consts_of(&p);
  int64_t i = 0;
  for (; i + HALF_BLOCK <= n; i += HALF_BLOCK) {
    vu amax = {0};
    for (int j = 0; j < HALF_BLOCK; j += 4 * VL) {
      vu codes[4];
#pragma GCC unroll 4
      for (int k = 0; k < 4; k++) {
        vu u;
        memcpy(&u, src + i + j + k * VL, sizeof u);
        codes[k] = mf_encode_sat(bits, man_bits, &c, u, &amax);
      }
#if VBYTES == 32
      store_codes4(bits, codes, dst + (i + j) * bits / 8);
#else
#pragma GCC unroll 4
      for (int k = 0; k < 4; k++) store_codes(bits, codes[k], dst + (i + j + k * VL) * bits / 8);
#endif
    }
    if (__builtin_expect(any_lane((vi)amax >= 0x7f800000), 0)) {
      if (finite_only) break; /* found below */
      int64_t at;
      if (!t->has_nan && find_nan(src + i, HALF_BLOCK, &at)) {
        *bad = i + at;
        return LOOM_ERR_NONFINITE;
      }
      quantize_minifloat_bits(bits, &p, src + i, HALF_BLOCK, dst + i * bits / 8);
    }
  }
  if (finite_only)
    for (int64_t j = i; j < n; j++)
      if (!isfinite(src[j])) {
        *bad = j;
        return LOOM_ERR_NONFINITE;
      }
  int64_t at;
  if (!t->has_nan && find_nan(src + i, n - i, &at)) {
    *bad = i + at;
    return LOOM_ERR_NONFINITE;
  }
  quantize_minifloat_bits(bits, &p, src + i, n - i, dst + i * bits / 8);
  return 0;
}

/* One function per format (bits, mantissa bits): fp8-e4m3, fp8-e5m2, fp4. */
#define QUANTIZE_MINIFLOAT_SAT(NAME, BITS, MAN_BITS, FINITE_ONLY)                                          \
  static int SIMD(NAME)(const loom_dtype_traits *t, const float *src, int64_t n, float scale, uint8_t *dst, \
                        int64_t *bad) {                                                                     \
    (void)scale;                                                                                            \
    return quantize_minifloat_sat(BITS, MAN_BITS, FINITE_ONLY, t, src, n, dst, bad);                        \
  }
QUANTIZE_MINIFLOAT_SAT(quantize_e4m3, 8, 3, false)
QUANTIZE_MINIFLOAT_SAT(quantize_e4m3_finite, 8, 3, true)
QUANTIZE_MINIFLOAT_SAT(quantize_e5m2, 8, 2, false)
QUANTIZE_MINIFLOAT_SAT(quantize_e5m2_finite, 8, 2, true)
QUANTIZE_MINIFLOAT_SAT(quantize_fp4, 4, 1, false)
QUANTIZE_MINIFLOAT_SAT(quantize_fp4_finite, 4, 1, true)
#undef QUANTIZE_MINIFLOAT_SAT

/* The functions above for a saturating format t, NULL for any other. */
static loom_quantize_row_fn SIMD(minifloat_sat_encoder)(const loom_dtype_traits *t, bool finite_only) {
  if (!t->saturates || t->exp_bits + t->man_bits != t->bits - 1) return NULL;
  if (t->bits == 8 && t->man_bits == 3) return finite_only ? SIMD(quantize_e4m3_finite) : SIMD(quantize_e4m3);
  if (t->bits == 8 && t->man_bits == 2) return finite_only ? SIMD(quantize_e5m2_finite) : SIMD(quantize_e5m2);
  if (t->bits == 4 && t->man_bits == 1) return finite_only ? SIMD(quantize_fp4_finite) : SIMD(quantize_fp4);
  return NULL;
}
