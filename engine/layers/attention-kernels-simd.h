/*
 * The vector levels of the attention kernels (attention-kernels.h), written
 * once with GCC vector extensions and compiled per level by
 * attention-kernels-avx2.c and -avx512.c (VBYTES, SIMD(name) and the target
 * pragma come from there). Each loop is the reference's (attention-kernels.c)
 * with independent chains side by side in the lanes: the same fmas in the
 * same order, so the same bits. The project builds with -std=c17, hence
 * -ffp-contract=off: a vector a·b + c stays a multiply and an add, as in the
 * reference. Not a normal header.
 */
#ifndef SIMD
#error "attention-kernels-simd.h is included by attention-kernels-avx2.c / -avx512.c only"
#endif

#include <math.h>
#include <string.h>

#define VL (VBYTES / 4)
#define NL (ATT_LANES / VL) /* vectors per 16 lanes */
typedef float vf __attribute__((vector_size(VBYTES)));
typedef int32_t vi __attribute__((vector_size(VBYTES)));
typedef uint32_t vu __attribute__((vector_size(VBYTES)));
typedef uint8_t vb __attribute__((vector_size(VL)));

#if VBYTES == 64
#define VFMA(a, b, c) ((vf)_mm512_fmadd_ps((a), (b), (c)))
#define VSPLAT(x) ((vf)_mm512_set1_ps(x))
#else
#define VFMA(a, b, c) ((vf)_mm256_fmadd_ps((a), (b), (c)))
#define VSPLAT(x) ((vf)_mm256_set1_ps(x))
#endif

static inline vf SIMD(load)(const float *p) {
  vf v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline void SIMD(store)(float *p, vf v) { memcpy(p, &v, sizeof v); }

static inline vf SIMD(select)(vi m, vf a, vf b) { return (vf)((m & (vi)a) | (~m & (vi)b)); }

/* The reference's lane_tree on NL vectors holding lanes 0…15 in order:
 * pairs (k, k + w) for w = 8, 4, 2, 1, as halves of registers. */
static inline float SIMD(lane_tree)(const vf acc[NL]) {
#if VBYTES == 64
  const __m512 a = (__m512)acc[0];
  const __m256 h8 = _mm256_add_ps(_mm512_castps512_ps256(a), _mm512_extractf32x8_ps(a, 1));
#else
  const __m256 h8 = _mm256_add_ps((__m256)acc[0], (__m256)acc[1]);
#endif
  const __m128 h4 = _mm_add_ps(_mm256_castps256_ps128(h8), _mm256_extractf128_ps(h8, 1));
  const __m128 h2 = _mm_add_ps(h4, _mm_movehl_ps(h4, h4));
  return _mm_cvtss_f32(_mm_add_ss(h2, _mm_shuffle_ps(h2, h2, 1)));
}

/* att_exp lane by lane. */
static inline vf SIMD(exp)(vf x) {
  const vi below = x < ATT_EXP_MIN;
  const vf k = x * ATT_LOG2E + ATT_ROUNDER, n = k - ATT_ROUNDER;
  vf r = VFMA(n, VSPLAT(-ATT_LN2_HI), x);
  r = VFMA(n, VSPLAT(-ATT_LN2_LO), r);
  vf p = VSPLAT(ATT_EXP_C7);
  p = VFMA(p, r, VSPLAT(ATT_EXP_C6));
  p = VFMA(p, r, VSPLAT(ATT_EXP_C5));
  p = VFMA(p, r, VSPLAT(ATT_EXP_C4));
  p = VFMA(p, r, VSPLAT(ATT_EXP_C3));
  p = VFMA(p, r, VSPLAT(0.5f));
  p = VFMA(p, r, VSPLAT(1.0f));
  p = VFMA(p, r, VSPLAT(1.0f));
  const vu bits = ((vu)k - ATT_ROUNDER_BITS + 127u) << 23;
  return SIMD(select)(below, VSPLAT(0.0f), p * (vf)bits);
}

/* ---- scores: rows × (nv·VL) keys, chains over d ---- */

static inline __attribute__((always_inline)) void SIMD(scores_tile)(const float *q, int64_t ldq, const int rows,
                                                                    const float *kt, int64_t ldk, int64_t hd,
                                                                    const int nv, float *s, int64_t lds) {
  vf acc[ATT_BLOCK][4] = {{{0}}};
  for (int64_t d = 0; d < hd; d++) {
    vf k[4];
#pragma GCC unroll 4
    for (int v = 0; v < nv; v++) k[v] = SIMD(load)(kt + d * ldk + v * VL);
#pragma GCC unroll 4
    for (int r = 0; r < rows; r++) {
      const vf qb = VSPLAT(q[r * ldq + d]);
#pragma GCC unroll 4
      for (int v = 0; v < nv; v++) acc[r][v] = VFMA(qb, k[v], acc[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 4
    for (int v = 0; v < nv; v++) SIMD(store)(s + r * lds + v * VL, acc[r][v]);
}

/* The widest tile keeps rows × wide accumulators and the loads in registers. */
#if VBYTES == 64
#define SCORES_WIDE 4
#else
#define SCORES_WIDE 2
#endif

static inline __attribute__((always_inline)) void SIMD(scores_rows)(const float *q, int64_t ldq, const int rows,
                                                                    const float *kt, int64_t ldk, int64_t hd,
                                                                    int64_t n, float *s, int64_t lds) {
  int64_t j = 0;
  for (; j + SCORES_WIDE * VL <= n; j += SCORES_WIDE * VL)
    SIMD(scores_tile)(q, ldq, rows, kt + j, ldk, hd, SCORES_WIDE, s + j, lds);
  for (; j < n; j += NL * VL) SIMD(scores_tile)(q, ldq, rows, kt + j, ldk, hd, NL, s + j, lds);
}

static void SIMD(scores)(const float *q, int64_t ldq, int rows, const float *kt, int64_t ldk, int64_t hd, int64_t n,
                         float *s, int64_t lds) {
  switch (rows) {
  case 4: SIMD(scores_rows)(q, ldq, 4, kt, ldk, hd, n, s, lds); break;
  case 3: SIMD(scores_rows)(q, ldq, 3, kt, ldk, hd, n, s, lds); break;
  case 2: SIMD(scores_rows)(q, ldq, 2, kt, ldk, hd, n, s, lds); break;
  default: SIMD(scores_rows)(q, ldq, 1, kt, ldk, hd, n, s, lds); break;
  }
}

/* ---- softmax and its backward ---- */

/* Lanes of keys j … j + VL − 1 that take part: j < vis and not padding. */
static inline vi SIMD(visible)(int64_t j, int64_t vis, const uint8_t *pad) {
  static const int32_t lanes[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  const int64_t left = vis - j < 0 ? 0 : vis - j < VL ? vis - j : VL;
  vi lane;
  memcpy(&lane, lanes, sizeof lane);
  vi m = lane < (int32_t)left;
  if (pad) {
    uint8_t bytes[VL] = {0};
    memcpy(bytes, pad + j, (size_t)left);
    vb b;
    memcpy(&b, bytes, sizeof b);
    m &= __builtin_convertvector(b, vi) == 0;
  }
  return m;
}

/* The largest lane of mv (no NaN there: the selects keep them out). Any
 * order gives the same value; a zero's sign may differ, which no e_j sees. */
static inline float SIMD(lane_max)(vf mv) {
#if VBYTES == 64
  return _mm512_reduce_max_ps((__m512)mv);
#else
  __m128 m = _mm_max_ps(_mm256_castps256_ps128((__m256)mv), _mm256_extractf128_ps((__m256)mv, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  return _mm_cvtss_f32(_mm_max_ss(m, _mm_shuffle_ps(m, m, 1)));
#endif
}

/* Rows of up to this many vectors keep their exponentials in registers. */
#define SOFTMAX_REGS 8

/*
 * Keys that do not take part hold −∞ after the scale, so e^(t − max) is
 * att_exp(−∞) = +0, the reference's 0 for them. Rows of up to SOFTMAX_REGS
 * vectors keep t and e in registers: one pass over memory each way.
 */
static void SIMD(softmax)(const float *s, int64_t vis, const uint8_t *pad, float scale, float *p) {
  const int64_t n = att_pad16(vis);
  const vf ninf = VSPLAT(-INFINITY);
  if (n <= SOFTMAX_REGS * VL) {
    vf t[SOFTMAX_REGS] = {{0}}, mv = ninf;
    const int nv = (int)(n / VL);
#pragma GCC unroll 8
    for (int v = 0; v < SOFTMAX_REGS; v++)
      if (v < nv) {
        t[v] = SIMD(select)(SIMD(visible)(v * VL, vis, pad), SIMD(load)(s + v * VL) * scale, ninf);
        mv = SIMD(select)(t[v] > mv, t[v], mv);
      }
    const float mx = SIMD(lane_max)(mv);
    if (mx == -INFINITY) {
      memset(p, 0, (size_t)n * sizeof *p);
      return;
    }
    vf acc[NL] = {{0}};
#pragma GCC unroll 8
    for (int v = 0; v < SOFTMAX_REGS; v++)
      if (v < nv) {
        t[v] = SIMD(exp)(t[v] - mx);
        acc[v % NL] += t[v];
      }
    const float inv = 1.0f / SIMD(lane_tree)(acc);
#pragma GCC unroll 8
    for (int v = 0; v < SOFTMAX_REGS; v++)
      if (v < nv) SIMD(store)(p + v * VL, t[v] * inv);
    return;
  }
  vf mv = ninf;
  for (int64_t j = 0; j < n; j += VL) {
    const vf t = SIMD(select)(SIMD(visible)(j, vis, pad), SIMD(load)(s + j) * scale, ninf);
    mv = SIMD(select)(t > mv, t, mv);
  }
  const float mx = SIMD(lane_max)(mv);
  if (mx == -INFINITY) {
    memset(p, 0, (size_t)n * sizeof *p);
    return;
  }
  vf acc[NL] = {{0}};
  for (int64_t j = 0; j < n; j += ATT_LANES)
    for (int v = 0; v < NL; v++) {
      const int64_t jj = j + v * VL;
      const vf t = SIMD(select)(SIMD(visible)(jj, vis, pad), SIMD(load)(s + jj) * scale, ninf);
      const vf e = SIMD(exp)(t - mx);
      SIMD(store)(p + jj, e);
      acc[v] += e;
    }
  const float inv = 1.0f / SIMD(lane_tree)(acc);
  for (int64_t j = 0; j < n; j += VL) SIMD(store)(p + j, SIMD(load)(p + j) * inv);
}

static void SIMD(softmax_backward)(const float *p, float *dp, int64_t vis, float scale) {
  const int64_t n = att_pad16(vis);
  vf acc[NL] = {{0}};
  for (int64_t j = 0; j < n; j += ATT_LANES)
    for (int v = 0; v < NL; v++) acc[v] = VFMA(SIMD(load)(p + j + v * VL), SIMD(load)(dp + j + v * VL), acc[v]);
  const float dot = SIMD(lane_tree)(acc);
  for (int64_t j = 0; j < n; j += VL) SIMD(store)(dp + j, SIMD(load)(p + j) * (SIMD(load)(dp + j) - dot) * scale);
}

/* ---- mix: rows of a times rows of x, chains over j ---- */

/* Columns per tile of the mixes: the accumulators of ATT_BLOCK rows, the
 * loads and a broadcast fit the registers. */
#define MIX_WIDE 2

static inline __attribute__((always_inline)) void SIMD(mix_tile)(const float *a, int64_t lda, const int rows,
                                                                 const int64_t *n, const float *x, int64_t ldx,
                                                                 const int nv, float *o, int64_t ldo) {
  vf acc[ATT_BLOCK][MIX_WIDE] = {{{0}}};
  int64_t lo = n[0], hi = n[0];
  for (int r = 1; r < rows; r++) {
    lo = n[r] < lo ? n[r] : lo;
    hi = n[r] > hi ? n[r] : hi;
  }
  for (int64_t j = 0; j < lo; j++) {
    vf xv[MIX_WIDE];
#pragma GCC unroll 2
    for (int v = 0; v < nv; v++) xv[v] = SIMD(load)(x + j * ldx + v * VL);
#pragma GCC unroll 4
    for (int r = 0; r < rows; r++) {
      const vf ab = VSPLAT(a[r * lda + j]);
#pragma GCC unroll 2
      for (int v = 0; v < nv; v++) acc[r][v] = VFMA(ab, xv[v], acc[r][v]);
    }
  }
  for (int64_t j = lo; j < hi; j++) /* the rows with more terms finish alone */
#pragma GCC unroll 4
    for (int r = 0; r < rows; r++)
      if (j < n[r])
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++)
          acc[r][v] = VFMA(VSPLAT(a[r * lda + j]), SIMD(load)(x + j * ldx + v * VL), acc[r][v]);
#pragma GCC unroll 4
  for (int r = 0; r < rows; r++)
#pragma GCC unroll 2
    for (int v = 0; v < nv; v++) SIMD(store)(o + r * ldo + v * VL, acc[r][v]);
}

static inline __attribute__((always_inline)) void SIMD(mix_rows)(const float *a, int64_t lda, const int rows,
                                                                 const int64_t *n, const float *x, int64_t ldx,
                                                                 int64_t w, float *o, int64_t ldo) {
  int64_t e = 0;
  for (; e + MIX_WIDE * VL <= w; e += MIX_WIDE * VL) SIMD(mix_tile)(a, lda, rows, n, x + e, ldx, MIX_WIDE, o + e, ldo);
  for (; e < w; e += NL * VL) SIMD(mix_tile)(a, lda, rows, n, x + e, ldx, NL, o + e, ldo);
}

static void SIMD(mix)(const float *a, int64_t lda, int rows, const int64_t *n, const float *x, int64_t ldx, int64_t w,
                      float *o, int64_t ldo) {
  switch (rows) {
  case 4: SIMD(mix_rows)(a, lda, 4, n, x, ldx, w, o, ldo); break;
  case 3: SIMD(mix_rows)(a, lda, 3, n, x, ldx, w, o, ldo); break;
  case 2: SIMD(mix_rows)(a, lda, 2, n, x, ldx, w, o, ldo); break;
  default: SIMD(mix_rows)(a, lda, 1, n, x, ldx, w, o, ldo); break;
  }
}

/* ---- the transposed mix: columns of a times rows of x, chains over i ---- */

static inline __attribute__((always_inline)) void SIMD(mix_t_tile)(const float *a, int64_t lda, const int cols,
                                                                   const int64_t *lo, int64_t hi, const float *x,
                                                                   int64_t ldx, const int nv, float *o, int64_t ldo,
                                                                   bool accumulate) {
  vf acc[ATT_BLOCK][MIX_WIDE] = {{{0}}};
  int64_t first = lo[0], all = lo[0];
#pragma GCC unroll 4
  for (int c = 0; c < cols; c++) {
    first = lo[c] < first ? lo[c] : first;
    all = lo[c] > all ? lo[c] : all;
    if (accumulate)
#pragma GCC unroll 2
      for (int v = 0; v < nv; v++) acc[c][v] = SIMD(load)(o + c * ldo + v * VL);
  }
  if (all > hi) all = hi;
  for (int64_t i = first; i < all; i++) /* the columns that start earlier begin alone */
#pragma GCC unroll 4
    for (int c = 0; c < cols; c++)
      if (i >= lo[c])
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++)
          acc[c][v] = VFMA(VSPLAT(a[i * lda + c]), SIMD(load)(x + i * ldx + v * VL), acc[c][v]);
  for (int64_t i = all; i < hi; i++) {
    vf xv[MIX_WIDE];
#pragma GCC unroll 2
    for (int v = 0; v < nv; v++) xv[v] = SIMD(load)(x + i * ldx + v * VL);
#pragma GCC unroll 4
    for (int c = 0; c < cols; c++) {
      const vf ab = VSPLAT(a[i * lda + c]);
#pragma GCC unroll 2
      for (int v = 0; v < nv; v++) acc[c][v] = VFMA(ab, xv[v], acc[c][v]);
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < cols; c++)
#pragma GCC unroll 2
    for (int v = 0; v < nv; v++) SIMD(store)(o + c * ldo + v * VL, acc[c][v]);
}

static inline __attribute__((always_inline)) void SIMD(mix_t_cols)(const float *a, int64_t lda, const int cols,
                                                                   const int64_t *lo, int64_t hi, const float *x,
                                                                   int64_t ldx, int64_t w, float *o, int64_t ldo,
                                                                   bool accumulate) {
  int64_t e = 0;
  for (; e + MIX_WIDE * VL <= w; e += MIX_WIDE * VL)
    SIMD(mix_t_tile)(a, lda, cols, lo, hi, x + e, ldx, MIX_WIDE, o + e, ldo, accumulate);
  for (; e < w; e += NL * VL) SIMD(mix_t_tile)(a, lda, cols, lo, hi, x + e, ldx, NL, o + e, ldo, accumulate);
}

static void SIMD(mix_t)(const float *a, int64_t lda, int cols, const int64_t *lo, int64_t hi, const float *x,
                        int64_t ldx, int64_t w, float *o, int64_t ldo, bool accumulate) {
  switch (cols) {
  case 4: SIMD(mix_t_cols)(a, lda, 4, lo, hi, x, ldx, w, o, ldo, accumulate); break;
  case 3: SIMD(mix_t_cols)(a, lda, 3, lo, hi, x, ldx, w, o, ldo, accumulate); break;
  case 2: SIMD(mix_t_cols)(a, lda, 2, lo, hi, x, ldx, w, o, ldo, accumulate); break;
  default: SIMD(mix_t_cols)(a, lda, 1, lo, hi, x, ldx, w, o, ldo, accumulate); break;
  }
}

static void SIMD(fill)(att_kernels *k) {
  k->scores = SIMD(scores);
  k->softmax = SIMD(softmax);
  k->softmax_backward = SIMD(softmax_backward);
  k->mix = SIMD(mix);
  k->mix_t = SIMD(mix_t);
}
