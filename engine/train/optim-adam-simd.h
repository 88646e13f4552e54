/*
 * The Adam/AdamW vector loop, written once and compiled once per kernel
 * level: optim-adam.c includes this file under each level's `#pragma GCC
 * target`, after defining VL (lanes), SIMD(name), the operations of
 * optim-sgd.c's loops and the lane masks below for that level. Not a normal
 * header. What the loop does is said at the top of optim-adam.c.
 *
 * MASK: lanes at risk (TINY, TINY_PAIR, GRAD_RISK give one; 0 is none).
 * AMS_MAX(vmax, v): amsgrad's `vmax < v || isnan(v) ? v : vmax` per lane.
 * STUCK_T: the stuck lanes, which STUCK_BITS turns into a MASK, ZERO_WHERE
 * and PUT_BACK use; SQUARE_BAND: 1 where the loop tests every vector for
 * squares in the band of risk; 0 where GRAD_RISK takes that band in and the
 * loop sets it apart only once a vector is at risk (the AVX2 level: a test
 * of its own in every vector cost it 10 %).
 */
#ifndef SIMD
#error "optim-adam-simd.h is included by optim-adam.c only"
#endif

typedef struct {
  VF b1, b2, one_b1, one_b2, wd, decay, bias2_sqrt, eps, neg_step, sign;
  /* the multipliers again as doubles, for MUL_C */
  VD b1_d, b2_d, one_b1_d, one_b2_d, wd_d, decay_d, neg_step_d;
  bool decoupled, add_wd, maximize;
} SIMD(coef);

/* (one_b2 · grad) · grad, through double where grad has a lane at risk. */
static inline VF SIMD(square)(const SIMD(coef) *c, VF grad, const risk_limits *lim) {
  if (TINY(grad, lim->grad)) return MUL_EXACT(MUL_EXACT(c->one_b2, grad), grad);
  const VF g_b2 = VMUL(c->one_b2, grad);
  return BAND(grad, lim->grad_lo, lim->grad_hi) ? MUL_EXACT(g_b2, grad) : VMUL(g_b2, grad);
}

/* VL elements with a lane at risk: the same operations, each multiply,
 * divide and root through double where one of its lanes is at risk; a
 * weight whose gradient stays 0 needs four of the eleven. √v / bias2_sqrt
 * never does: √v is normal for any v ≠ 0, and bias2_sqrt = √(1 − beta2^t)
 * lies in (0, 1]. */
static __attribute__((noinline)) void SIMD(careful_lanes)(const SIMD(coef) *c, const risk_limits *lim, float *p,
                                                           const float *g, float *m1, float *m2, float *vmax) {
  VF grad = VLOAD(g), w = VLOAD(p);
  if (c->maximize) grad = VXOR(grad, c->sign);
  if (c->decoupled) w = MUL_C(w, c->decay, c->decay_d, lim->w);
  if (c->add_wd) grad = VADD(grad, MUL_C(w, c->wd, c->wd_d, lim->w));
  const VF m = VADD(MUL_C(VLOAD(m1), c->b1, c->b1_d, lim->m1), MUL_C(grad, c->one_b1, c->one_b1_d, lim->grad));
  const VF v = VADD(MUL_C(VLOAD(m2), c->b2, c->b2_d, lim->m2), SIMD(square)(c, grad, lim));
  VSTORE(m1, m);
  VSTORE(m2, v);
  VF v_used = v;
  if (vmax) { /* amsgrad: the largest exp_avg_sq so far (a NaN taken) */
    v_used = AMS_MAX(VLOAD(vmax), v);
    VSTORE(vmax, v_used);
  }
  const VF root = TINY(v_used, lim->v) ? SQRT_EXACT(v_used) : VSQRT(v_used);
  const VF denom = VADD(VDIV(root, c->bias2_sqrt), c->eps);
  const VF num = MUL_C(m, c->neg_step, c->neg_step_d, lim->m);
  VSTORE(p, VADD(w, TINY_QUOTIENT(num, denom) ? DIV_EXACT(num, denom) : VDIV(num, denom)));
}

/* The same operations as adam_ref, VL lanes at a time (vmax: amsgrad's
 * max_exp_avg_sq, or NULL); the tail goes through adam_ref. Each stage's
 * operands are checked before the multiplies, divides or roots that take
 * them. */
static int64_t SIMD(adam)(const optim_adam_coef *k, int64_t n, float *p, const float *g, float *m1, float *m2,
                          float *vmax) {
  const SIMD(coef) c = {.b1 = VSET1(k->b1),
                        .b2 = VSET1(k->b2),
                        .one_b1 = VSET1(k->one_b1),
                        .one_b2 = VSET1(k->one_b2),
                        .wd = VSET1(k->wd),
                        .decay = VSET1(k->decay),
                        .bias2_sqrt = VSET1(k->bias2_sqrt),
                        .eps = VSET1(k->eps),
                        .neg_step = VSET1(-k->step_size),
                        .sign = VSET1(-0.0f),
                        .b1_d = VSET1D(k->b1),
                        .b2_d = VSET1D(k->b2),
                        .one_b1_d = VSET1D(k->one_b1),
                        .one_b2_d = VSET1D(k->one_b2),
                        .wd_d = VSET1D(k->wd),
                        .decay_d = VSET1D(k->decay),
                        .neg_step_d = VSET1D(-k->step_size),
                        .decoupled = k->decoupled,
                        .add_wd = !k->decoupled && k->wd != 0.0f,
                        .maximize = k->maximize};
  const risk_limits lim = risk_limits_of(k);
  const bool check_w = c.decoupled || c.add_wd, skip = lim.skip && !vmax; /* amsgrad's max moves on */
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF grad = VLOAD(g + i), w = VLOAD(p + i);
    const VF s1o = VLOAD(m1 + i), s2o = VLOAD(m2 + i), wo = w;
    VF s1 = s1o, s2 = s2o;
    MASK risk = TINY_PAIR(s1, s2, lim.moments);
    if (check_w) risk |= TINY(w, lim.w);
    if (!c.add_wd) risk |= GRAD_RISK(grad, &lim); /* grad is ±g */
    STUCK_T stuck = STUCK_NONE;
    bool square_exact = false; /* where SQUARE_BAND is 0 */
    if (!SQUARE_BAND && __builtin_expect(risk != 0, 0) && !c.add_wd) {
      /* GRAD_RISK took the band of subnormal squares in: set those lanes
       * apart, their square through double below */
      square_exact = BAND(grad, lim.grad_lo, lim.grad_hi) != 0;
      risk = TINY_PAIR(s1, s2, lim.moments) | TINY(grad, lim.grad);
      if (check_w) risk |= TINY(w, lim.w);
    }
    if (__builtin_expect(risk != 0, 0)) {
      if (skip) stuck = STUCK_LANES(grad, s1, s2, w, &lim, c.decoupled);
      if (risk & ~STUCK_BITS(stuck)) goto careful;
      /* the rest of the vector as usual, its stuck lanes on zeros (no
       * subnormal), then put back */
      grad = ZERO_WHERE(stuck, grad);
      s1 = ZERO_WHERE(stuck, s1);
      s2 = ZERO_WHERE(stuck, s2);
    }
    if (c.maximize) grad = VXOR(grad, c.sign);
    if (c.decoupled) w = VMUL(w, c.decay);
    if (c.add_wd) {
      grad = VADD(grad, VMUL(c.wd, w));
      if (__builtin_expect(GRAD_RISK(grad, &lim) != 0, 0)) goto careful;
    }
    VF m = VADD(VMUL(s1, c.b1), VMUL(c.one_b1, grad));
    /* a gradient whose square would be subnormal (about 1e-20: late in
     * training), through double on the spot */
    const VF g_b2 = VMUL(c.one_b2, grad);
    const VF sq = __builtin_expect(SQUARE_BAND ? BAND(grad, lim.grad_lo, lim.grad_hi) != 0 : square_exact, 0)
                    ? MUL_EXACT(g_b2, grad)
                    : VMUL(g_b2, grad);
    VF v = VADD(VMUL(s2, c.b2), sq);
    const VF v_used = vmax ? AMS_MAX(VLOAD(vmax + i), v) : v;
    if (__builtin_expect((TINY(m, lim.m) | TINY(v_used, lim.v)) != 0, 0)) goto careful;
    const VF denom = VADD(VDIV(VSQRT(v_used), c.bias2_sqrt), c.eps);
    const VF num = VMUL(c.neg_step, m);
    if (__builtin_expect(TINY_QUOTIENT(num, denom) != 0, 0)) goto careful;
    VF w_new = VADD(w, VDIV(num, denom));
    if (__builtin_expect(risk != 0, 0)) { /* the stuck lanes as they were, exp_avg_sq · beta2 */
      m = PUT_BACK(stuck, s1o, m);
      v = PUT_BACK(stuck, MUL_EXACT(s2o, c.b2), v);
      if (!c.decoupled) w_new = PUT_BACK(stuck, wo, w_new); /* AdamW's: w · decay + (−0), as computed */
    }
    VSTORE(m1 + i, m);
    VSTORE(m2 + i, v);
    if (vmax) VSTORE(vmax + i, v_used);
    VSTORE(p + i, w_new);
    continue;
  careful:
    SIMD(careful_lanes)(&c, &lim, p + i, g + i, m1 + i, m2 + i, vmax ? vmax + i : NULL);
  }
  return i;
}
