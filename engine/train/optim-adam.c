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
 *   exp_avg on a fixed point, whose weight and exp_avg the update leaves
 *   exactly as they are and whose exp_avg_sq it only multiplies by beta2;
 *   the vector is computed as usual with those lanes on zeros, and they are
 *   put back, exp_avg_sq · beta2 taken through double; or
 * - goes through careful_lanes512: the same operations, those with a lane
 *   at risk through double.
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
   * again; they are done apart instead, only for Adam without weight decay
   * (AdamW and L2 decay change the weight). */
  r.skip = !k->decoupled && k->wd == 0.0f && k->eps > 0.0f;
  r.m1_fixed = r.skip ? fixed_points(k->b1) : 0;
  if (r.skip && (double)r.m1_fixed * (double)k->step_size > 0.5) r.skip = false;
  const float for_w[2] = {k->decoupled ? k->decay : 1.0f, !k->decoupled ? k->wd : 1.0f};
  r.w = limit_bits(product_limit(for_w, 2));
  r.m1 = limit_bits(product_limit(&k->b1, 1));
  r.m2 = limit_bits(product_limit(&k->b2, 1));
  r.moments = r.m1 > r.m2 ? r.m1 : r.m2;
  /* grad meets one_b1 and one_b2, and one_b2 · grad meets grad again */
  r.grad = limit_bits(product_limit((const float[]){k->one_b1, k->one_b2}, 2));
  const double b2 = fabs((double)k->one_b2);
  r.grad_lo = b2 > 0 ? limit_bits(sqrt(0x1p-153 / b2)) : 0;
  r.grad_hi = b2 > 0 ? limit_bits(sqrt(0x1p-124 / b2)) : 0;
  if (r.grad_hi < r.grad_lo) r.grad_hi = r.grad_lo; /* an empty band; overlap with grad is harmless */
  r.grad_all = r.grad > r.grad_hi ? r.grad : r.grad_hi;
  const float neg_step = -k->step_size;
  r.m = limit_bits(product_limit(&neg_step, 1));
  r.v = limit_bits(0x1p-125); /* √v, then divided by bias2_sqrt ≤ 1 */
  return r;
}

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")

typedef struct {
  __m512 b1, b2, one_b1, one_b2, wd, decay, bias2_sqrt, eps, neg_step, sign;
  /* the multipliers again as doubles, for mul_c512 */
  __m512d b1_d, b2_d, one_b1_d, one_b2_d, wd_d, decay_d, neg_step_d;
  bool decoupled, add_wd, maximize;
} coef512;

/* The lanes risk_limits_of says are left as they are but for exp_avg_sq:
 * a gradient of ±0, |exp_avg| ≤ m1_fixed (as bits, not −0), +0 ≤ exp_avg_sq
 * ≤ +inf, a weight that is neither −0 nor NaN. */
static inline __mmask16 stuck_lanes512(__m512 g, __m512 s1, __m512 s2, __m512 w, const risk_limits *lim) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), neg_zero = _mm512_set1_epi32(INT32_MIN);
  const __m512i gi = _mm512_castps_si512(g), s1i = _mm512_castps_si512(s1), wi = _mm512_castps_si512(w);
  __mmask16 k = _mm512_testn_epi32_mask(gi, abs_mask);
  k = _mm512_mask_cmple_epu32_mask(k, _mm512_and_si512(s1i, abs_mask), _mm512_set1_epi32((int)lim->m1_fixed));
  k = _mm512_mask_cmpneq_epi32_mask(k, s1i, neg_zero);
  k = _mm512_mask_cmple_epu32_mask(k, _mm512_castps_si512(s2), _mm512_set1_epi32(0x7f800000));
  k = _mm512_mask_cmpneq_epi32_mask(k, wi, neg_zero);
  return _mm512_mask_cmple_epu32_mask(k, _mm512_and_si512(wi, abs_mask), _mm512_set1_epi32(0x7f800000));
}

/* 16 elements with a lane at risk: the same operations, each multiply,
 * divide and root through double where one of its lanes is at risk (see the
 * top of the file); a weight whose gradient stays 0 needs four of the
 * eleven. √v / bias2_sqrt never does: √v is normal for any v ≠ 0, and
 * bias2_sqrt = √(1 − beta2^t) lies in (0, 1]. */
static __attribute__((noinline)) void careful_lanes512(const coef512 *c, const risk_limits *lim, float *p,
                                                       const float *g, float *m1, float *m2) {
  __m512 grad = _mm512_loadu_ps(g), w = _mm512_loadu_ps(p);
  if (c->maximize) grad = _mm512_xor_ps(grad, c->sign);
  if (c->decoupled) w = mul_c512(w, c->decay, c->decay_d, lim->w);
  if (c->add_wd) grad = _mm512_add_ps(grad, mul_c512(w, c->wd, c->wd_d, lim->w));
  const __m512 m = _mm512_add_ps(mul_c512(_mm512_loadu_ps(m1), c->b1, c->b1_d, lim->m1),
                                 mul_c512(grad, c->one_b1, c->one_b1_d, lim->grad));
  const __m512 v = _mm512_add_ps(mul_c512(_mm512_loadu_ps(m2), c->b2, c->b2_d, lim->m2),
                                 tiny512(grad, lim->grad) ? mul_exact512(mul_exact512(c->one_b2, grad), grad)
                                 : band512(grad, lim->grad_lo, lim->grad_hi)
                                   ? mul_exact512(_mm512_mul_ps(c->one_b2, grad), grad)
                                                          : _mm512_mul_ps(_mm512_mul_ps(c->one_b2, grad), grad));
  _mm512_storeu_ps(m1, m);
  _mm512_storeu_ps(m2, v);
  const __m512 root = tiny512(v, lim->v) ? sqrt_exact512(v) : _mm512_sqrt_ps(v);
  const __m512 denom = _mm512_add_ps(_mm512_div_ps(root, c->bias2_sqrt), c->eps);
  const __m512 num = mul_c512(m, c->neg_step, c->neg_step_d, lim->m);
  const __m512 step = tiny_quotient512(num, denom) ? div_exact512(num, denom) : _mm512_div_ps(num, denom);
  _mm512_storeu_ps(p, _mm512_add_ps(w, step));
}

/* The same operations as adam_ref, sixteen lanes at a time; the tail and the
 * amsgrad variant go through adam_ref. Each stage's operands are checked
 * before the multiplies, divides or roots that take them. */
static int64_t adam_avx512(const optim_adam_coef *k, int64_t n, float *p, const float *g, float *m1, float *m2) {
  const coef512 c = {.b1 = _mm512_set1_ps(k->b1),
                     .b2 = _mm512_set1_ps(k->b2),
                     .one_b1 = _mm512_set1_ps(k->one_b1),
                     .one_b2 = _mm512_set1_ps(k->one_b2),
                     .wd = _mm512_set1_ps(k->wd),
                     .decay = _mm512_set1_ps(k->decay),
                     .bias2_sqrt = _mm512_set1_ps(k->bias2_sqrt),
                     .eps = _mm512_set1_ps(k->eps),
                     .neg_step = _mm512_set1_ps(-k->step_size),
                     .sign = _mm512_set1_ps(-0.0f),
                     .b1_d = _mm512_set1_pd(k->b1),
                     .b2_d = _mm512_set1_pd(k->b2),
                     .one_b1_d = _mm512_set1_pd(k->one_b1),
                     .one_b2_d = _mm512_set1_pd(k->one_b2),
                     .wd_d = _mm512_set1_pd(k->wd),
                     .decay_d = _mm512_set1_pd(k->decay),
                     .neg_step_d = _mm512_set1_pd(-k->step_size),
                     .decoupled = k->decoupled,
                     .add_wd = !k->decoupled && k->wd != 0.0f,
                     .maximize = k->maximize};
  const risk_limits lim = risk_limits_of(k);
  const bool check_w = c.decoupled || c.add_wd;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 grad = _mm512_loadu_ps(g + i), w = _mm512_loadu_ps(p + i);
    const __m512 s1o = _mm512_loadu_ps(m1 + i), s2o = _mm512_loadu_ps(m2 + i), wo = w;
    __m512 s1 = s1o, s2 = s2o;
    __mmask16 risk = tiny_pair512(s1, s2, lim.moments);
    if (check_w) risk |= tiny512(w, lim.w);
    if (!c.add_wd) risk |= tiny512(grad, lim.grad); /* grad is ±g */
    __mmask16 keep = 0xffff;
    if (__builtin_expect(risk != 0, 0)) {
      const __mmask16 stuck = lim.skip ? stuck_lanes512(grad, s1, s2, w, &lim) : 0;
      if (risk & ~stuck) goto exact;
      /* the rest of the vector as usual, its stuck lanes on zeros (no
       * subnormal), then put back as they were */
      keep = (__mmask16)~stuck;
      grad = _mm512_maskz_mov_ps(keep, grad);
      s1 = _mm512_maskz_mov_ps(keep, s1);
      s2 = _mm512_maskz_mov_ps(keep, s2);
    }
    if (c.maximize) grad = _mm512_xor_ps(grad, c.sign);
    if (c.decoupled) w = _mm512_mul_ps(w, c.decay);
    if (c.add_wd) {
      grad = _mm512_add_ps(grad, _mm512_mul_ps(c.wd, w));
      if (__builtin_expect(tiny512(grad, lim.grad) != 0, 0)) goto exact;
    }
    __m512 m = _mm512_add_ps(_mm512_mul_ps(s1, c.b1), _mm512_mul_ps(c.one_b1, grad));
    /* a gradient whose square would be subnormal (about 1e-20: late in
     * training), through double on the spot */
    const __m512 g_b2 = _mm512_mul_ps(c.one_b2, grad);
    const __m512 sq = __builtin_expect(band512(grad, lim.grad_lo, lim.grad_hi) != 0, 0) ? mul_exact512(g_b2, grad)
                                                                                        : _mm512_mul_ps(g_b2, grad);
    __m512 v = _mm512_add_ps(_mm512_mul_ps(s2, c.b2), sq);
    if (__builtin_expect((tiny512(m, lim.m) | tiny512(v, lim.v)) != 0, 0)) goto exact;
    const __m512 denom = _mm512_add_ps(_mm512_div_ps(_mm512_sqrt_ps(v), c.bias2_sqrt), c.eps);
    const __m512 num = _mm512_mul_ps(c.neg_step, m);
    if (__builtin_expect(tiny_quotient512(num, denom) != 0, 0)) goto exact;
    __m512 w_new = _mm512_add_ps(w, _mm512_div_ps(num, denom));
    if (__builtin_expect(risk != 0, 0)) { /* the stuck lanes as they were, exp_avg_sq · beta2 */
      m = _mm512_mask_blend_ps(keep, s1o, m);
      v = _mm512_mask_blend_ps(keep, mul_exact512(s2o, c.b2), v);
      w_new = _mm512_mask_blend_ps(keep, wo, w_new);
    }
    _mm512_storeu_ps(m1 + i, m);
    _mm512_storeu_ps(m2 + i, v);
    _mm512_storeu_ps(p + i, w_new);
    continue;
  exact:
    careful_lanes512(&c, &lim, p + i, g + i, m1 + i, m2 + i);
  }
  return i;
}

#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx2,fma")

typedef struct {
  __m256 b1, b2, one_b1, one_b2, wd, decay, bias2_sqrt, eps, neg_step, sign;
  __m256d b1_d, b2_d, one_b1_d, one_b2_d, wd_d, decay_d, neg_step_d;
  bool decoupled, add_wd, maximize;
} coef256;

static inline __m256i grad_risk256v(__m256 grad, const risk_limits *lim) { return tiny256v(grad, lim->grad_all); }

/* stuck_lanes512 for 8 lanes, as a vector mask. */
static inline __m256i stuck_lanes256v(__m256 g, __m256 s1, __m256 s2, __m256 w, const risk_limits *lim) {
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
  return _mm256_andnot_si256(_mm256_or_si256(bad_s2, bad_w), ok_s1);
}

/* careful_lanes512 for 8 lanes. */
static __attribute__((noinline)) void careful_lanes256(const coef256 *c, const risk_limits *lim, float *p,
                                                       const float *g, float *m1, float *m2) {
  __m256 grad = _mm256_loadu_ps(g), w = _mm256_loadu_ps(p);
  if (c->maximize) grad = _mm256_xor_ps(grad, c->sign);
  if (c->decoupled) w = mul_c256(w, c->decay, c->decay_d, lim->w);
  if (c->add_wd) grad = _mm256_add_ps(grad, mul_c256(w, c->wd, c->wd_d, lim->w));
  const __m256 m = _mm256_add_ps(mul_c256(_mm256_loadu_ps(m1), c->b1, c->b1_d, lim->m1),
                                 mul_c256(grad, c->one_b1, c->one_b1_d, lim->grad));
  const __m256 v = _mm256_add_ps(mul_c256(_mm256_loadu_ps(m2), c->b2, c->b2_d, lim->m2),
                                 _mm256_movemask_epi8(grad_risk256v(grad, lim))
                                   ? mul_exact256(mul_exact256(c->one_b2, grad), grad)
                                                          : _mm256_mul_ps(_mm256_mul_ps(c->one_b2, grad), grad));
  _mm256_storeu_ps(m1, m);
  _mm256_storeu_ps(m2, v);
  const __m256 root = tiny256(v, lim->v) ? sqrt_exact256(v) : _mm256_sqrt_ps(v);
  const __m256 denom = _mm256_add_ps(_mm256_div_ps(root, c->bias2_sqrt), c->eps);
  const __m256 num = mul_c256(m, c->neg_step, c->neg_step_d, lim->m);
  const __m256 step = tiny_quotient256(num, denom) ? div_exact256(num, denom) : _mm256_div_ps(num, denom);
  _mm256_storeu_ps(p, _mm256_add_ps(w, step));
}

static int64_t adam_avx2(const optim_adam_coef *k, int64_t n, float *p, const float *g, float *m1, float *m2) {
  const coef256 c = {.b1 = _mm256_set1_ps(k->b1),
                     .b2 = _mm256_set1_ps(k->b2),
                     .one_b1 = _mm256_set1_ps(k->one_b1),
                     .one_b2 = _mm256_set1_ps(k->one_b2),
                     .wd = _mm256_set1_ps(k->wd),
                     .decay = _mm256_set1_ps(k->decay),
                     .bias2_sqrt = _mm256_set1_ps(k->bias2_sqrt),
                     .eps = _mm256_set1_ps(k->eps),
                     .neg_step = _mm256_set1_ps(-k->step_size),
                     .sign = _mm256_set1_ps(-0.0f),
                     .b1_d = _mm256_set1_pd(k->b1),
                     .b2_d = _mm256_set1_pd(k->b2),
                     .one_b1_d = _mm256_set1_pd(k->one_b1),
                     .one_b2_d = _mm256_set1_pd(k->one_b2),
                     .wd_d = _mm256_set1_pd(k->wd),
                     .decay_d = _mm256_set1_pd(k->decay),
                     .neg_step_d = _mm256_set1_pd(-k->step_size),
                     .decoupled = k->decoupled,
                     .add_wd = !k->decoupled && k->wd != 0.0f,
                     .maximize = k->maximize};
  const risk_limits lim = risk_limits_of(k);
  const bool check_w = c.decoupled || c.add_wd;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 grad = _mm256_loadu_ps(g + i), w = _mm256_loadu_ps(p + i);
    const __m256 s1o = _mm256_loadu_ps(m1 + i), s2o = _mm256_loadu_ps(m2 + i), wo = w;
    __m256 s1 = s1o, s2 = s2o;
    int risk = _mm256_movemask_epi8(tiny_pair256v(s1, s2, lim.moments));
    if (check_w) risk |= tiny256(w, lim.w);
    if (!c.add_wd) risk |= _mm256_movemask_epi8(grad_risk256v(grad, &lim));
    __m256 stuck = _mm256_setzero_ps();
    if (__builtin_expect(risk != 0, 0)) {
      const __m256i st = lim.skip ? stuck_lanes256v(grad, s1, s2, w, &lim) : _mm256_setzero_si256();
      if (risk & ~_mm256_movemask_epi8(st)) goto exact; /* a lane at risk that is not stuck */
      stuck = _mm256_castsi256_ps(st);
      grad = _mm256_andnot_ps(stuck, grad);
      s1 = _mm256_andnot_ps(stuck, s1);
      s2 = _mm256_andnot_ps(stuck, s2);
    }
    if (c.maximize) grad = _mm256_xor_ps(grad, c.sign);
    if (c.decoupled) w = _mm256_mul_ps(w, c.decay);
    if (c.add_wd) {
      grad = _mm256_add_ps(grad, _mm256_mul_ps(c.wd, w));
      if (__builtin_expect(_mm256_movemask_epi8(grad_risk256v(grad, &lim)) != 0, 0)) goto exact;
    }
    __m256 m = _mm256_add_ps(_mm256_mul_ps(s1, c.b1), _mm256_mul_ps(c.one_b1, grad));
    __m256 v = _mm256_add_ps(_mm256_mul_ps(s2, c.b2), _mm256_mul_ps(_mm256_mul_ps(c.one_b2, grad), grad));
    if (__builtin_expect((tiny256(m, lim.m) | tiny256(v, lim.v)) != 0, 0)) goto exact;
    const __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(v), c.bias2_sqrt), c.eps);
    const __m256 num = _mm256_mul_ps(c.neg_step, m);
    if (__builtin_expect(tiny_quotient256(num, denom) != 0, 0)) goto exact;
    __m256 w_new = _mm256_add_ps(w, _mm256_div_ps(num, denom));
    if (__builtin_expect(risk != 0, 0)) { /* the stuck lanes as they were, exp_avg_sq · beta2 */
      m = _mm256_blendv_ps(m, s1o, stuck);
      v = _mm256_blendv_ps(v, mul_exact256(s2o, c.b2), stuck);
      w_new = _mm256_blendv_ps(w_new, wo, stuck);
    }
    _mm256_storeu_ps(m1 + i, m);
    _mm256_storeu_ps(m2 + i, v);
    _mm256_storeu_ps(p + i, w_new);
    continue;
  exact:
    careful_lanes256(&c, &lim, p + i, g + i, m1 + i, m2 + i);
  }
  return i;
}

#pragma GCC pop_options
#endif

void optim_adam_update(const optim_adam_coef *k, loom_kernel_level level, int64_t n, float *p, const float *g,
                       float *m1, float *m2, float *vmax) {
  int64_t done = 0;
#if defined(LOOM_KERNELS_X86)
  if (!vmax && level >= LOOM_KERNELS_AVX512)
    done = adam_avx512(k, n, p, g, m1, m2);
  else if (!vmax && level == LOOM_KERNELS_AVX2)
    done = adam_avx2(k, n, p, g, m1, m2);
#else
  (void)level;
#endif
  adam_ref(k, done, n, p, g, m1, m2, vmax);
}
