/*
 * The Adam/AdamW update of one tensor (optim.c), at the kernel level in use
 * (kernels/cpu.h): the plain loop, or AVX2 / AVX-512 with the same float32
 * operations per element in the same order. Multiplies, adds, divides and
 * square roots are correctly rounded in every form, and the file is built
 * with -std=c17, which keeps GCC from fusing a multiply and an add, so every
 * level gives the plain loop's bits (tests/engine/test-optim.c checks each
 * level against it). The plain loop ran one element at a time with its
 * branches inside (GCC 12 at -O2 vectorizes neither): 45 % of the
 * 784-256-10 training step of bench-train, 10 % after.
 *
 * Subnormals (optim-lanes.h says what they cost and how a vector at risk is
 * computed exactly). Adam meets them all the time: exp_avg of a weight whose
 * gradient stays 0 sinks to a subnormal fixed point of beta1, exp_avg_sq
 * likewise, and tiny gradients square to subnormals. Training a 64-2048-10
 * MLP on the digits for 100 epochs took 7.1–7.7 s, 4.2–4.6 s with what
 * follows. The loops test each stage's operands before the multiplies,
 * divides and roots that take them (risk_limits); a vector with a lane at
 * risk either
 * - has only stuck lanes at risk (stuck_lanes512): a zero gradient and
 *   exp_avg on a fixed point, whose weight (AdamW: but for its decay) and
 *   exp_avg the update leaves exactly as they are and whose exp_avg_sq it
 *   only multiplies by beta2; the vector is computed as usual with those
 *   lanes' state on zeros, and they are put back, exp_avg_sq · beta2 taken
 *   through double; or
 * - goes through careful_lanes (optim-adam-simd.h, the loop written once
 *   for both levels): the same operations, those with a lane at risk
 *   through double.
 * tests/engine/test-optim.c (adam-subnormal-levels) holds both to the plain
 * loop's bits.
 */
#include "train/optim-internal.h"

#include <math.h>

#include "kernels/cpu.h"
#include "train/optim-lanes.h"

/* The reference: torch's _single_tensor_adam, one element at a time. */
static void adam_ref(const optim_adam_coef *k, int64_t begin, int64_t n, float *p, const float *g, float *m1,
                     float *m2, float *vmax) {
  for (int64_t i = begin; i < n; i++) {
    float grad = k->maximize ? -g[i] : g[i];
    if (k->decoupled)
      p[i] = p[i] * k->decay;
    else if (k->wd != 0.0f)
      grad = grad + k->wd * p[i];
    float m = m1[i] * k->b1 + k->one_b1 * grad;
    float v = m2[i] * k->b2 + k->one_b2 * grad * grad;
    m1[i] = m;
    m2[i] = v;
    if (vmax) {
      if (vmax[i] < v || isnan(v)) vmax[i] = v;
      v = vmax[i];
    }
    float denom = sqrtf(v) / k->bias2_sqrt + k->eps;
    p[i] = p[i] + -k->step_size * m / denom;
  }
}

/*
 * The magnitudes below which a lane is at risk, as the bits of |x| (at
 * risk when 0 < |x| < limit): where x is multiplied by a
 * coefficient c, the product must reach 2^-125 (twice the smallest normal:
 * a margin for the products' rounding), and x must itself be normal. A limit
 * of +inf's bits puts every nonzero finite value at risk (a coefficient so
 * small that any product would be subnormal).
 */
typedef struct {
  uint32_t w, m1, m2, grad, m, v;
  uint32_t moments; /* the larger of m1 and m2, to test both at once */
  /* grad also where (1 − beta2) · grad · grad would be subnormal: grad_lo ≤
   * |grad| < grad_hi (below that band the square underflows to 0, which
   * takes no assist) */
  uint32_t grad_lo, grad_hi;
  uint32_t grad_all; /* one limit covering both: the AVX2 level's test (the band cost it 10 %) */
  /* Lanes left as they are (see stuck_lanes512): the largest subnormal
   * exp_avg, as bits, that beta1 leaves unchanged. */
  bool skip;
  uint32_t m1_fixed;
} risk_limits;

static risk_limits risk_limits_of(const optim_adam_coef *k) {
  risk_limits r;
  /* A weight whose gradient is 0 and whose exp_avg is a subnormal that
   * beta1 leaves unchanged keeps its weight and exp_avg bit for bit:
   * exp_avg · beta1 + (1 − beta1) · ±0 is exp_avg (never −0: those lanes
   * are excluded), and −step_size · exp_avg rounds to ±0 when |exp_avg| ≤
   * m1_fixed · 2^-149 and m1_fixed · step_size ≤ 1/2, which divided by a
   * denominator ≥ eps > 0 (finite or not: exp_avg_sq is not NaN) and added
   * to a weight that is not −0 (nor NaN) leaves it as it was; exp_avg_sq
   * becomes exp_avg_sq · beta2 + (+0), that product (exp_avg_sq ≥ +0). Such
   * an exp_avg stays subnormal for good (about 2^-149 · 4 for beta1 = 0.9),
   * and exp_avg_sq takes some 10,000 steps of beta2 = 0.999 to sink through
   * the subnormals, so each step would take these lanes the careful way
   * again; they are done apart instead, for Adam without L2 decay (which
   * adds to the gradient). With AdamW's decoupled decay the weight becomes
   * weight · (1 − lr · wd) + ±0, that product (the weight not −0 and not at
   * risk, so not 0 unless +0), which the loop computes as usual. */
  r.skip = (k->decoupled || k->wd == 0.0f) && k->eps > 0.0f;
  r.m1_fixed = r.skip ? fixed_points(k->b1) : 0;
  if (r.skip && (double)r.m1_fixed * (double)k->step_size > 0.5) r.skip = false;
  const float for_w[2] = {k->decoupled ? k->decay : 1.0f, !k->decoupled ? k->wd : 1.0f};
  r.w = limit_bits(product_limit(for_w, 2));
  r.m1 = limit_bits(product_limit(&k->b1, 1));
  r.m2 = limit_bits(product_limit(&k->b2, 1));
  r.moments = r.m1 > r.m2 ? r.m1 : r.m2;
  /* grad meets one_b1 and one_b2, and one_b2 · grad meets grad again */
  r.grad = limit_bits(product_limit((const float[]){k->one_b1, k->one_b2}, 2));
  square_band(k->one_b2, &r.grad_lo, &r.grad_hi); /* overlap with grad is harmless */
  r.grad_all = r.grad > r.grad_hi ? r.grad : r.grad_hi;
  const float neg_step = -k->step_size;
  r.m = limit_bits(product_limit(&neg_step, 1));
  r.v = limit_bits(0x1p-125); /* √v, then divided by bias2_sqrt ≤ 1 */
  return r;
}

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")

/* The lanes risk_limits_of says are left as they are but for exp_avg_sq
 * (and AdamW's decayed weight): a gradient of ±0, |exp_avg| ≤ m1_fixed (as
 * bits, not −0), +0 ≤ exp_avg_sq ≤ +inf, a weight that is neither −0 nor
 * NaN, nor with `decoupled` at risk in its product with the decay. */
static inline __mmask16 stuck_lanes512(__m512 g, __m512 s1, __m512 s2, __m512 w, const risk_limits *lim,
                                       bool decoupled) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), neg_zero = _mm512_set1_epi32(INT32_MIN);
  const __m512i gi = _mm512_castps_si512(g), s1i = _mm512_castps_si512(s1), wi = _mm512_castps_si512(w);
  __mmask16 k = _mm512_testn_epi32_mask(gi, abs_mask);
  k = _mm512_mask_cmple_epu32_mask(k, _mm512_and_si512(s1i, abs_mask), _mm512_set1_epi32((int)lim->m1_fixed));
  k = _mm512_mask_cmpneq_epi32_mask(k, s1i, neg_zero);
  k = _mm512_mask_cmple_epu32_mask(k, _mm512_castps_si512(s2), _mm512_set1_epi32(0x7f800000));
  k = _mm512_mask_cmpneq_epi32_mask(k, wi, neg_zero);
  if (decoupled) k &= (__mmask16)~tiny512(w, lim->w);
  return _mm512_mask_cmple_epu32_mask(k, _mm512_and_si512(wi, abs_mask), _mm512_set1_epi32(0x7f800000));
}

#define OPTIM_LEVEL 512
#include "train/optim-level.h"
#define MASK __mmask16
#define TINY_PAIR tiny_pair512
#define GRAD_RISK(x, lim) tiny512((x), (lim)->grad)
#define STUCK_T __mmask16
#define STUCK_NONE 0
#define STUCK_LANES stuck_lanes512
#define STUCK_BITS(st) (st)
#define ZERO_WHERE(st, x) _mm512_maskz_mov_ps((__mmask16)~(st), (x))
#define PUT_BACK(st, orig, x) _mm512_mask_blend_ps((st), (x), (orig))
#define SQUARE_BAND 1
#define AMS_MAX(vm, v) \
  _mm512_mask_blend_ps(_mm512_cmp_ps_mask((vm), (v), _CMP_LT_OQ) | _mm512_cmp_ps_mask((v), (v), _CMP_UNORD_Q), (vm), (v))
#include "train/optim-adam-simd.h"
#undef AMS_MAX
#undef MASK
#undef TINY_PAIR
#undef GRAD_RISK
#undef STUCK_T
#undef STUCK_NONE
#undef STUCK_LANES
#undef STUCK_BITS
#undef ZERO_WHERE
#undef PUT_BACK
#undef SQUARE_BAND
#define OPTIM_LEVEL_END
#include "train/optim-level.h"
#undef OPTIM_LEVEL
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")

/* stuck_lanes512 for 8 lanes, as a vector mask. */
static inline __m256i stuck_lanes256v(__m256 g, __m256 s1, __m256 s2, __m256 w, const risk_limits *lim,
                                      bool decoupled) {
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), neg_zero = _mm256_set1_epi32(INT32_MIN),
                zero = _mm256_setzero_si256();
  const __m256i gi = _mm256_castps_si256(g), s1i = _mm256_castps_si256(s1), wi = _mm256_castps_si256(w);
  const __m256i ok_g = _mm256_cmpeq_epi32(_mm256_and_si256(gi, abs_mask), zero);
  /* |s1| ≤ m1_fixed and +0 ≤ s2 ≤ +inf: below 2^31 as bits, so signed compares serve */
  const __m256i ok_s1 =
    _mm256_andnot_si256(_mm256_or_si256(_mm256_cmpgt_epi32(_mm256_and_si256(s1i, abs_mask),
                                                           _mm256_set1_epi32((int)lim->m1_fixed)),
                                        _mm256_cmpeq_epi32(s1i, neg_zero)),
                        ok_g);
  const __m256i s2i = _mm256_castps_si256(s2);
  const __m256i bad_s2 = _mm256_or_si256(_mm256_cmpgt_epi32(zero, s2i),
                                         _mm256_cmpgt_epi32(s2i, _mm256_set1_epi32(0x7f800000)));
  const __m256i bad_w = _mm256_or_si256(_mm256_cmpeq_epi32(wi, neg_zero),
                                        _mm256_cmpgt_epi32(_mm256_and_si256(wi, abs_mask),
                                                           _mm256_set1_epi32(0x7f800000)));
  const __m256i bad = _mm256_or_si256(bad_s2, bad_w);
  return _mm256_andnot_si256(decoupled ? _mm256_or_si256(bad, tiny256v(w, lim->w)) : bad, ok_s1);
}

#define OPTIM_LEVEL 256
#include "train/optim-level.h"
#define MASK int
#define TINY_PAIR(a, b, limit) _mm256_movemask_epi8(tiny_pair256v((a), (b), (limit)))
#define GRAD_RISK(x, lim) tiny256((x), (lim)->grad_all)
#define STUCK_T __m256
#define STUCK_NONE _mm256_setzero_ps()
#define STUCK_LANES(g, s1, s2, w, lim, decoupled) \
  _mm256_castsi256_ps(stuck_lanes256v((g), (s1), (s2), (w), (lim), (decoupled)))
#define STUCK_BITS(st) _mm256_movemask_epi8(_mm256_castps_si256(st))
#define ZERO_WHERE(st, x) _mm256_andnot_ps((st), (x))
#define PUT_BACK(st, orig, x) _mm256_blendv_ps((x), (orig), (st))
#define SQUARE_BAND 0
#define AMS_MAX(vm, v) \
  _mm256_blendv_ps((vm), (v), _mm256_or_ps(_mm256_cmp_ps((vm), (v), _CMP_LT_OQ), _mm256_cmp_ps((v), (v), _CMP_UNORD_Q)))
#include "train/optim-adam-simd.h"
#pragma GCC pop_options
#endif

void optim_adam_update(const optim_adam_coef *k, loom_kernel_level level, int64_t n, float *p, const float *g,
                       float *m1, float *m2, float *vmax) {
  int64_t done = 0;
#if defined(LOOM_KERNELS_X86)
  /* a tensor shorter than a vector (a bias) has no limits to work out */
  if (level >= LOOM_KERNELS_AVX512 && n >= 16)
    done = adam_avx512(k, n, p, g, m1, m2, vmax);
  else if (level >= LOOM_KERNELS_AVX2 && n >= 8)
    done = adam_avx2(k, n, p, g, m1, m2, vmax);
#else
  (void)level;
#endif
  adam_ref(k, done, n, p, g, m1, m2, vmax);
}
