/*
 * The SGD and RMSprop vector loops, written once and compiled once per
 * kernel level: optim-sgd.c includes this file under each level's `#pragma
 * GCC target`, after defining VL (lanes), SIMD(name) and the operations
 * below for that level (the optim-lanes.h helpers and plain intrinsics).
 * Not a normal header.
 *
 * Each element takes the plain loop's float32 operations in its order
 * (optim-sgd.c); every multiply, divide and root whose variable operand has
 * a lane at risk of meeting a subnormal goes through double instead
 * (optim-lanes.h), which gives the same bits.
 */
#ifndef SIMD
#error "optim-sgd-simd.h is included by optim-sgd.c only"
#endif

static int64_t SIMD(sgd)(const optim_sgd_coef *k, const sgd_limits *lim, int64_t n, float *p, const float *g,
                         float *buf1) {
  const VF wd = VSET1(k->wd), mom = VSET1(k->mom), damp1 = VSET1(k->damp1), neg_lr = VSET1(k->neg_lr),
           sign = VSET1(-0.0f);
  const VD wd_d = VSET1D(k->wd), mom_d = VSET1D(k->mom), damp1_d = VSET1D(k->damp1), neg_lr_d = VSET1D(k->neg_lr);
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF d = VLOAD(g + i), w = VLOAD(p + i);
    if (k->maximize) d = VXOR(d, sign);
    if (k->wd != 0.0f) d = VADD(d, MUL_C(w, wd, wd_d, lim->p));
    if (k->mom != 0.0f) {
      const VF buf =
        k->first ? d : VADD(MUL_C(VLOAD(buf1 + i), mom, mom_d, lim->buf), MUL_C(d, damp1, damp1_d, lim->d_damp));
      VSTORE(buf1 + i, buf);
      d = k->nesterov ? VADD(d, MUL_C(buf, mom, mom_d, lim->buf)) : buf;
    }
    VSTORE(p + i, VADD(w, MUL_C(d, neg_lr, neg_lr_d, lim->d_lr)));
  }
  return i;
}

/* (c · x) · x, through double where x has a lane at risk in either product. */
static inline VF SIMD(square_c)(VF x, VF c, const rmsprop_limits *lim, uint32_t limit) {
  if (TINY(x, limit)) return MUL_EXACT(MUL_EXACT(c, x), x);
  const VF cx = VMUL(c, x);
  return BAND(x, lim->sq_lo, lim->sq_hi) ? MUL_EXACT(cx, x) : VMUL(cx, x);
}

static inline VF SIMD(sqrt_c)(VF x) { return TINY(x, lim_normal) ? SQRT_EXACT(x) : VSQRT(x); }
static inline VF SIMD(div_c)(VF a, VF b) { return TINY_QUOTIENT(a, b) ? DIV_EXACT(a, b) : VDIV(a, b); }

static int64_t SIMD(rmsprop)(const optim_rmsprop_coef *k, const rmsprop_limits *lim, int64_t n, float *p,
                             const float *g, float *buf1, float *buf2, float *buf3) {
  const VF a = VSET1(k->a), one_a = VSET1(k->one_a), eps = VSET1(k->eps), wd = VSET1(k->wd), mom = VSET1(k->mom),
           neg_lr = VSET1(k->neg_lr), sign = VSET1(-0.0f);
  const VD a_d = VSET1D(k->a), one_a_d = VSET1D(k->one_a), wd_d = VSET1D(k->wd), mom_d = VSET1D(k->mom),
           neg_lr_d = VSET1D(k->neg_lr);
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    VF grad = VLOAD(g + i), w = VLOAD(p + i);
    if (k->maximize) grad = VXOR(grad, sign);
    if (k->wd != 0.0f) grad = VADD(grad, MUL_C(w, wd, wd_d, lim->p));
    const VF sq = VADD(MUL_C(VLOAD(buf2 + i), a, a_d, lim->avg), SIMD(square_c)(grad, one_a, lim, lim->grad));
    VSTORE(buf2 + i, sq);
    VF avg;
    if (k->centered) {
      const VF ga = VADD(MUL_C(VLOAD(buf3 + i), a, a_d, lim->avg), MUL_C(grad, one_a, one_a_d, lim->grad));
      VSTORE(buf3 + i, ga);
      /* −1 · ga is −ga (a NaN aside, whose payload nothing checks), and so is
       * (−1 · ga) · ga a product of ga with itself */
      const VF neg_ga = VXOR(ga, sign);
      const VF ga2 = TINY(ga, lim_normal) || BAND(ga, lim->self_lo, lim->self_hi) ? MUL_EXACT(neg_ga, ga)
                                                                                : VMUL(neg_ga, ga);
      avg = SIMD(sqrt_c)(VADD(sq, ga2));
    } else {
      avg = SIMD(sqrt_c)(sq);
    }
    avg = VADD(avg, eps);
    if (k->mom > 0.0f) {
      const VF buf = VADD(MUL_C(VLOAD(buf1 + i), mom, mom_d, lim->buf), SIMD(div_c)(grad, avg));
      VSTORE(buf1 + i, buf);
      VSTORE(p + i, VADD(w, MUL_C(buf, neg_lr, neg_lr_d, lim->buf_lr)));
    } else {
      VSTORE(p + i, VADD(w, SIMD(div_c)(MUL_C(grad, neg_lr, neg_lr_d, lim->grad), avg)));
    }
  }
  return i;
}
