/*
 * The vector activations of kernels/act.h, for one level: the including file
 * sets the target, VL (doubles a vector), VFMA (a·b + c, one rounding) and
 * SIMD(name). GCC vector extensions hold the lanes; comparisons give masks
 * of all-ones lanes.
 *
 * exp and expm1 in double: a = k·ln2 + r with k = round(a / ln2) (the
 * 1.5·2^52 trick, which also leaves k in the low bits), r by two FMAs with
 * ln2 split in two doubles (the first is exact for |a| ≥ 1: both terms are
 * multiples of 2^-53 and r is smaller than 1/2), |r| ≤ 0.35; expm1(r) by
 * its Taylor series to r^13 (truncation below 10^-17 relative), Horner with
 * FMAs; then exp(a) = 2^k + 2^k·expm1(r) and expm1(a) = (2^k − 1) +
 * 2^k·expm1(r), each one FMA (2^k − 1 is exact for the k used here). The
 * error is a few units of the double's last place, far inside
 * LOOM_ACT_WINDOW.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

typedef double vd __attribute__((vector_size(VL * 8)));
typedef int64_t vi __attribute__((vector_size(VL * 8)));
typedef float vf __attribute__((vector_size(VL * 4)));

#define BCAST(T, v) ((T){0} + (v))

static inline vd sel(vi m, vd a, vd b) { return (vd)((m & (vi)a) | (~m & (vi)b)); }
static inline vd vmin(vd a, vd b) { return sel(a < b, a, b); }
static inline vd vmax(vd a, vd b) { return sel(a > b, a, b); }
static inline vd vabs(vd a) { return (vd)((vi)a & BCAST(vi, INT64_MAX)); }

/* 2^k in *s and expm1(r) in *q, for a in [−708, 708]. */
static inline void exp_parts(vd a, vd *s, vd *q) {
  const double shift = 0x1.8p52, inv_ln2 = 0x1.71547652b82fep0;
  const double ln2_hi = 0x1.62e42fefa39efp-1, ln2_lo = 0x1.abc9e3b39803fp-56;
  vd t = a * inv_ln2 + shift;
  vd k = t - shift;
  vi ki = (vi)t - (vi)BCAST(vd, shift);
  vd r = VFMA(-k, BCAST(vd, ln2_hi), a);
  r = VFMA(-k, BCAST(vd, ln2_lo), r);
  /* expm1(r) = r + r²·P(r), P(r) = Σ r^i / (i + 2)! for i = 0 .. 11, by
   * Estrin's scheme (pairs, then r² and r⁴): a third of Horner's chain
   * of dependent FMAs. */
  const vd r2 = r * r, r4 = r2 * r2;
#define C(n) BCAST(vd, 1.0 / (n))
  const vd p01 = VFMA(C(6.0), r, C(2.0)), p23 = VFMA(C(120.0), r, C(24.0));
  const vd p45 = VFMA(C(5040.0), r, C(720.0)), p67 = VFMA(C(362880.0), r, C(40320.0));
  const vd p89 = VFMA(C(39916800.0), r, C(3628800.0)), p1011 = VFMA(C(6227020800.0), r, C(479001600.0));
#undef C
  const vd p03 = VFMA(p23, r2, p01), p47 = VFMA(p67, r2, p45), p811 = VFMA(p1011, r2, p89);
  const vd p = VFMA(VFMA(p811, r4, p47), r4, p03);
  *q = VFMA(p, r2, r);
  *s = (vd)((ki + 1023) << 52);
}

static inline vd v_exp(vd a) {
  vd s, q;
  exp_parts(a, &s, &q);
  return VFMA(s, q, s);
}

static inline vd v_expm1(vd a) {
  vd s, q;
  exp_parts(a, &s, &q);
  return VFMA(s, q, s - 1.0);
}

static inline vd v_sigmoid(vd a) { return 1.0 / (1.0 + v_exp(vmin(vmax(-a, BCAST(vd, -708.0)), BCAST(vd, 708.0)))); }

/* tanh(|a|) for |a| clamped to 22, where tanh rounds to 1 in double (as
 * libm returns it). */
static inline vd v_tanh_abs(vd ax) {
  vd u = v_expm1(2.0 * vmin(ax, BCAST(vd, 22.0)));
  return u / (u + 2.0);
}

/* Lanes whose double y does not round to float32 safely: not a normal float
 * (zero, subnormal, overflow, NaN) or within the window of a midpoint. The
 * 29 bits float32 drops are compared with the midpoint 2^28; the window is
 * 2^17 of them, 2^-35 of the binade's lowest value. */
static inline vi unsafe(vd y) {
  vi b = (vi)y;
  vi e = (b >> 52) & 0x7ff;
  vi low = (b & ((INT64_C(1) << 29) - 1)) - (INT64_C(1) << 28);
  vi near = (low < (INT64_C(1) << 17)) & (low > -(INT64_C(1) << 17));
  return near | (e < 1023 - 126) | (e > 1023 + 127);
}

/* One vector of lanes: f or dy · f' of a, marks in the returned mask. */
static inline __attribute__((always_inline)) vi act_vector(const loom_act_fn fn, const bool backward,
                                                            const double alpha, const vf xf, const vf df, vf *out) {
  const vd a = __builtin_convertvector(xf, vd), ax = vabs(a);
  vi bad = ~(ax <= 1e30); /* NaN and infinities */
  vd y;
  switch (fn) {
  case LOOM_ACT_SIGMOID: {
    vd s = v_sigmoid(a);
    /* s·(1 − s): 1 − s cancels where s nears 1 */
    y = backward ? s * (1.0 - s) : s;
    if (backward) bad |= a > 6.0;
    break;
  }
  case LOOM_ACT_SILU: {
    vd s = v_sigmoid(a);
    if (backward) {
      vd inner = 1.0 + a * (1.0 - s);
      /* a root of the derivative near −1.28; above 88 s is 1 */
      bad |= (vabs(inner) < vmax(BCAST(vd, 1.0), ax) * 0x1p-8) | (a > 88.0);
      y = s * inner;
    } else {
      y = a * s;
    }
    break;
  }
  case LOOM_ACT_TANH: {
    vd t = v_tanh_abs(ax);
    if (backward) {
      y = 1.0 - t * t; /* cancels as t nears 1 */
      bad |= ax > 4.0;
    } else {
      y = (vd)(((vi)t & BCAST(vi, INT64_MAX)) | ((vi)a & BCAST(vi, INT64_MIN)));
    }
    break;
  }
  case LOOM_ACT_ELU:
  default: {
    vd neg = backward ? alpha * v_exp(vmax(a, BCAST(vd, -708.0))) : alpha * v_expm1(vmax(a, BCAST(vd, -708.0)));
    y = sel(a > 0.0, backward ? BCAST(vd, 1.0) : a, neg);
    break;
  }
  }
  if (backward) {
    /* dy = 0 gives ±0 with the sign of dy · f'(x) wherever f'(x) is a
     * normal double's relative neighbour of the reference's */
    const vd d = y, dyd = __builtin_convertvector(df, vd);
    const vi de = ((vi)d >> 52) & 0x7ff;
    y = dyd * d;
    bad |= unsafe(y) & ~((dyd == 0.0) & (de > 0) & (de < 0x7ff));
  } else {
    /* f(±0), exact: tanh ±0, silu ±0 · 1/2, elu alpha · ±0, sigmoid 1/2 */
    const vd zero_out = fn == LOOM_ACT_TANH   ? a
                        : fn == LOOM_ACT_SILU ? a * 0.5
                        : fn == LOOM_ACT_ELU  ? alpha * a
                                              : BCAST(vd, 0.5);
    const vi zero_in = a == 0.0;
    y = sel(zero_in, zero_out, y);
    bad |= unsafe(y) & ~zero_in;
  }
  *out = __builtin_convertvector(y, vf);
  return bad;
}

static inline __attribute__((always_inline)) int64_t act_loop(const loom_act_fn fn, const bool backward,
                                                               double alpha, const float *x, const float *dy,
                                                               float *out, int64_t n, uint64_t *redo) {
  memset(redo, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
  int64_t count = 0;
  for (int64_t i = 0; i < n; i += VL) {
    vf xf = {0}, df = {0}, yf;
    const bool full = n - i >= VL;
    if (full) {
      memcpy(&xf, x + i, sizeof xf);
      if (backward) memcpy(&df, dy + i, sizeof df);
    } else {
      for (int64_t l = 0; l < n - i; l++) {
        xf[l] = x[i + l];
        if (backward) df[l] = dy[i + l];
      }
    }
    uint64_t bad = MOVEMASK(act_vector(fn, backward, alpha, xf, df, &yf));
    if (full) {
      memcpy(out + i, &yf, sizeof yf);
    } else {
      for (int64_t l = 0; l < n - i; l++) out[i + l] = yf[l];
      bad &= (UINT64_C(1) << (n - i)) - 1;
    }
    if (bad) {
      redo[i / 64] |= bad << (i % 64);
      count += __builtin_popcountll(bad);
    }
  }
  return count;
}

static int64_t SIMD(act)(loom_act_fn fn, double alpha, const float *x, const float *dy, float *out, int64_t n,
                         uint64_t *redo) {
#define ACT_CASE(F)                                                                                          \
  case F: return dy ? act_loop(F, true, alpha, x, dy, out, n, redo) : act_loop(F, false, alpha, x, NULL, out, n, redo);
  switch (fn) {
    ACT_CASE(LOOM_ACT_SIGMOID)
    ACT_CASE(LOOM_ACT_SILU)
    ACT_CASE(LOOM_ACT_TANH)
    ACT_CASE(LOOM_ACT_ELU)
  default: break;
  }
#undef ACT_CASE
  memset(redo, 0xff, sizeof(uint64_t) * (size_t)((n + 63) / 64));
  return n;
}
