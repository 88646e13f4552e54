/*
 * The scans of the morph (finiteness, the scales' statistics), compiled per
 * level with the codecs: included by codec-simd.h, whose types and SIMD(name)
 * they use. Not a normal header.
 */
#ifndef SIMD
#error "codec-scan-simd.h is included by codec-simd.h only"
#endif

/* GCC turns a compare-and-select into compare, mask and blend: say max and
 * min directly. */
#if VBYTES == 64
#define MAX_U(a, b) ((vu)_mm512_max_epu32((__m512i)(a), (__m512i)(b)))
#define MIN_U(a, b) ((vu)_mm512_min_epu32((__m512i)(a), (__m512i)(b)))
#define MAX_I(a, b) ((vi)_mm512_max_epi32((__m512i)(a), (__m512i)(b)))
#else
#define MAX_U(a, b) ((vu)_mm256_max_epu32((__m256i)(a), (__m256i)(b)))
#define MIN_U(a, b) ((vu)_mm256_min_epu32((__m256i)(a), (__m256i)(b)))
#define MAX_I(a, b) ((vi)_mm256_max_epi32((__m256i)(a), (__m256i)(b)))
#endif

/* The largest lane. The scans' accumulators are first combined into one
 * vector by MAX_U/MAX_I with constant indices: reduced lane by lane from
 * arrays indexed in a loop, they were kept in memory and zeroed there by
 * `rep stos`, which cost more than the whole scan of a row of 32 values
 * (the integer product's activation rows, kernels/qgemm.c). */
static inline uint32_t lanes_max_u(vu a) {
  uint32_t m = 0;
  for (int l = 0; l < VL; l++) m = a[l] > m ? a[l] : m;
  return m;
}

static inline int32_t lanes_max_i(vi a, int32_t m) {
  for (int l = 0; l < VL; l++) m = a[l] > m ? a[l] : m;
  return m;
}

static bool SIMD(any_nonfinite)(const float *values, int64_t n) {
  vu acc = {0};
  int64_t i = 0;
  for (; i + VL <= n; i += VL) {
    vu u;
    memcpy(&u, values + i, sizeof u);
    acc |= (vu)((u & 0x7f800000u) == 0x7f800000u);
  }
  uint32_t bad = 0;
  for (int l = 0; l < VL; l++) bad |= acc[l];
  for (; i < n; i++) bad |= !isfinite(values[i]);
  return bad != 0;
}

static float SIMD(abs_max)(const float *v, int64_t n) {
  vu acc = {0}; /* max of |v| as bit patterns: ordered like the values for non-negative floats */
  int64_t i = 0;
  /* Four independent maxima first: one chain of compare-and-select per
   * vector ran at a quarter of the load rate. A maximum has no order. */
  vu a4[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; k++) a4[k] = (vu){0};
  for (; i + 4 * VL <= n; i += 4 * VL)
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
      vu u;
      memcpy(&u, v + i + k * VL, sizeof u);
      u &= 0x7fffffffu;
      u = sel_u((vi)(u > 0x7f800000u), (vu){0}, u);
      a4[k] = sel_u((vi)(u > a4[k]), u, a4[k]);
    }
#pragma GCC unroll 4
  for (int k = 0; k < 4; k++) acc = sel_u((vi)(a4[k] > acc), a4[k], acc);
  for (; i + VL <= n; i += VL) {
    vu u;
    memcpy(&u, v + i, sizeof u);
    u &= 0x7fffffffu;
    u = sel_u((vi)(u > 0x7f800000u), (vu){0}, u); /* NaN is skipped, as in the reference */
    acc = sel_u((vi)(u > acc), u, acc);
  }
  uint32_t m = 0;
  for (int l = 0; l < VL; l++) m = acc[l] > m ? acc[l] : m;
  for (; i < n; i++) {
    uint32_t u;
    memcpy(&u, v + i, sizeof u);
    u &= 0x7fffffffu;
    m = u > m && u <= 0x7f800000u ? u : m;
  }
  float f;
  memcpy(&f, &m, sizeof f);
  return f;
}

static float SIMD(pos_max)(const float *v, int64_t n) {
  vf acc = {0};
  int64_t i = 0;
  vf a4[4]; /* independent chains, as in abs_max */
#pragma GCC unroll 4
  for (int k = 0; k < 4; k++) a4[k] = (vf){0};
  for (; i + 4 * VL <= n; i += 4 * VL)
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) {
      const vf x = load_f(v + i + k * VL);
      a4[k] = (vf)sel_u((vi)(x > a4[k]), (vu)x, (vu)a4[k]);
    }
#pragma GCC unroll 4
  for (int k = 0; k < 4; k++) acc = (vf)sel_u((vi)(a4[k] > acc), (vu)a4[k], (vu)acc);
  for (; i + VL <= n; i += VL) {
    const vf x = load_f(v + i);
    acc = (vf)sel_u((vi)(x > acc), (vu)x, (vu)acc);
  }
  float m = 0;
  for (int l = 0; l < VL; l++) m = acc[l] > m ? acc[l] : m;
  for (; i < n; i++) m = v[i] > m ? v[i] : m;
  return m;
}

/* abs_sum_scan's result from its vector statistics over v[0, i) (the
 * largest and smallest nonzero |v| bit patterns lane by lane, the lanes'
 * sums): the values from i on added in order, then the vector sum where it
 * is exact, the sum in index order where not. */
static double abs_sum_finish(const float *v, int64_t n, int64_t i, vu maxbits, vu minbits, vdn lanes,
                             bool *nonfinite) {
  uint32_t mx = 0, mn = UINT32_MAX;
  for (int l = 0; l < VL; l++) {
    mx = maxbits[l] > mx ? maxbits[l] : mx;
    mn = minbits[l] < mn ? minbits[l] : mn;
  }
  double sum = 0;
  for (int l = 0; l < VL / 2; l++) sum += lanes[l];
  for (; i < n; i++) {
    uint32_t u;
    memcpy(&u, v + i, sizeof u);
    u &= 0x7fffffffu;
    mx = u > mx ? u : mx;
    mn = u != 0 && u < mn ? u : mn;
    sum += fabs((double)v[i]);
  }
  *nonfinite = mx >= 0x7f800000u;
  if (mx == 0 || *nonfinite) return 0.0;
  const int me = mn < 0x00800000u ? 1 : (int)(mn >> 23);
  float maxf;
  memcpy(&maxf, &mx, sizeof maxf);
  if ((double)n * (double)maxf < ldexp(1.0, 53 + me - 150)) return sum;
  double seq = 0;
  for (int64_t j = 0; j < n; j++) seq += fabs((double)v[j]);
  return seq;
}

/*
 * Σ |v| in double, the same bits as the reference's sum in index order,
 * which is a chain of dependent adds (the ternary and binary scales). Every
 * |v| is a multiple of the smallest ulp among them, u; when n · max|v| <
 * 2^53 · u, every partial sum in any order is a multiple of u below 2^53 · u,
 * hence exact in double, and the sums of all orders agree. Then the vector
 * sum (four independent chains) is returned; otherwise (a tiny value beside
 * large ones) the sum in index order. A NaN or ±inf sets *nonfinite and
 * returns 0. The smallest ulp is that of the smallest nonzero |v|: the bit
 * patterns of magnitudes order like the magnitudes.
 */
static double abs_sum_scan(const float *v, int64_t n, bool *nonfinite) {
  vdn sum4[4] = {{0}, {0}, {0}, {0}};
  vu maxbits[2] = {{0}, {0}}, minbits[2] = {(vu){0} - 1u, (vu){0} - 1u};
  int64_t i = 0;
  for (; i + 2 * VL <= n; i += 2 * VL)
#pragma GCC unroll 2 /* the accumulators stay in registers */
    for (int k = 0; k < 2; k++) {
      vu u;
      memcpy(&u, v + i + k * VL, sizeof u);
      u &= 0x7fffffffu;
      maxbits[k] = MAX_U(u, maxbits[k]);
      const vu nonzero = u | (vu)(u == 0); /* zero: all ones, never the minimum */
      minbits[k] = MIN_U(nonzero, minbits[k]);
      vdn d[2];
      halves_to_double((vf)u, d);
      sum4[2 * k] += d[0];
      sum4[2 * k + 1] += d[1];
    }
  const vu mx = MAX_U(maxbits[0], maxbits[1]), mn = MIN_U(minbits[0], minbits[1]);
  const vdn s = (sum4[0] + sum4[1]) + (sum4[2] + sum4[3]);
  return abs_sum_finish(v, n, i, mx, mn, s, nonfinite);
}

static double SIMD(abs_sum)(const float *v, int64_t n) {
  bool nonfinite;
  const double sum = abs_sum_scan(v, n, &nonfinite);
  if (!nonfinite) return sum;
  double seq = 0; /* inf or NaN, as the reference's sum makes it */
  for (int64_t j = 0; j < n; j++) seq += fabs((double)v[j]);
  return seq;
}

/* The morph's single pass over a row (cpu.h, scale_scan): the finiteness
 * check and the scale's statistic together. max |v| over all values, NaN and
 * ±inf included, is below 0x7f800000 exactly when every value is finite, and
 * is then the reference's abs_max; max(0, max v) is the maximum of the bit
 * patterns as signed integers (negative values are negative patterns). */
static bool SIMD(scale_scan)(const float *v, int64_t n, loom_dtype_kind kind, double *stat) {
  if (kind != LOOM_DTYPE_KIND_SIGNED && kind != LOOM_DTYPE_KIND_UNSIGNED) {
    bool nonfinite;
    *stat = abs_sum_scan(v, n, &nonfinite);
    return nonfinite;
  }
  vu amax[4];
  vi pmax[4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; k++) {
    amax[k] = (vu){0};
    pmax[k] = (vi){0};
  }
  int64_t i = 0;
  for (; i + 4 * VL <= n; i += 4 * VL)
#pragma GCC unroll 4 /* the accumulators stay in registers */
    for (int k = 0; k < 4; k++) {
      vu u;
      memcpy(&u, v + i + k * VL, sizeof u);
      const vu a = u & 0x7fffffffu;
      amax[k] = MAX_U(a, amax[k]);
      pmax[k] = MAX_I(u, pmax[k]);
    }
  for (; i + VL <= n; i += VL) {
    vu u;
    memcpy(&u, v + i, sizeof u);
    const vu a = u & 0x7fffffffu;
    amax[0] = MAX_U(a, amax[0]);
    pmax[0] = MAX_I(u, pmax[0]);
  }
  uint32_t am = lanes_max_u(MAX_U(MAX_U(amax[0], amax[1]), MAX_U(amax[2], amax[3])));
  int32_t pm = lanes_max_i(MAX_I(MAX_I(pmax[0], pmax[1]), MAX_I(pmax[2], pmax[3])), 0);
  for (; i < n; i++) {
    uint32_t u;
    memcpy(&u, v + i, sizeof u);
    am = (u & 0x7fffffffu) > am ? u & 0x7fffffffu : am;
    pm = (int32_t)u > pm ? (int32_t)u : pm;
  }
  if (am >= 0x7f800000u) return true;
  const uint32_t bits = kind == LOOM_DTYPE_KIND_SIGNED ? am : (uint32_t)pm;
  float f;
  memcpy(&f, &bits, sizeof f);
  *stat = f;
  return false;
}

#if VBYTES == 32
/* cpu.h, quantize_row_scan for the scaled formats of 1 to 16 bits at the
 * AVX2 level: quantize_scaled's encode, with the next row's scan
 * (scale_scan's finiteness and statistic: the maxima of the signed and
 * unsigned formats, abs_sum_scan's Σ |x| of ternary and binary) riding
 * along on the same columns; the columns after the last whole vector
 * scanned alone. The separate scan read each row from L2 or L3 while no
 * encode ran; here those reads overlap the encode of the row before
 * (docs/kernels.md, *The morph in cache*). Scales the fast path does not
 * take (0, not finite) go through quantize_scaled and a scan of their own. */
#define QUANTIZE_SCAN_CASE(B, SUMS)                                                                             \
  case B:                                                                                                       \
    if (path == SCALED_FLOAT)                                                                                   \
      nan = quantize_scaled_bits_scan(B, SCALED_FLOAT, src, n, scale, lo, hi, dst, next, SUMS, &acc, &scanned); \
    else                                                                                                        \
      nan = quantize_scaled_bits_scan(B, SCALED_DOUBLE, src, n, scale, lo, hi, dst, next, SUMS, &acc,           \
                                      &scanned);                                                                \
    break;

static int SIMD(quantize_scaled_scan)(const loom_dtype_traits *t, const float *src, int64_t n, float scale,
                                      uint8_t *dst, int64_t *bad, const float *next, bool *next_nonfinite,
                                      double *next_stat) {
  if (!next || !(scale > 0) || isinf(scale)) {
    const int rc = SIMD(quantize_scaled)(t, src, n, scale, dst, bad);
    if (next) *next_nonfinite = SIMD(scale_scan)(next, n, t->kind, next_stat);
    return rc;
  }
  const double hi = (double)t->qmax, lo = t->kind == LOOM_DTYPE_KIND_UNSIGNED ? 0.0 : -hi;
  const scaled_path path = t->qmax <= 65535 && scale >= 0x1p-125f ? SCALED_FLOAT : SCALED_DOUBLE;
  scan_acc acc = scan_acc_empty();
  int64_t scanned = 0;
  bool nan;
  if (t->kind == LOOM_DTYPE_KIND_BINARY) {
    nan = quantize_scaled_bits_scan(1, SCALED_BINARY, src, n, scale, lo, hi, dst, next, true, &acc, &scanned);
  } else if (t->kind == LOOM_DTYPE_KIND_TERNARY) { /* 2-bit codes */
    nan = path == SCALED_FLOAT
            ? quantize_scaled_bits_scan(2, SCALED_FLOAT, src, n, scale, lo, hi, dst, next, true, &acc, &scanned)
            : quantize_scaled_bits_scan(2, SCALED_DOUBLE, src, n, scale, lo, hi, dst, next, true, &acc, &scanned);
  } else {
    switch (t->bits) {
    QUANTIZE_SCAN_CASE(2, false)
    QUANTIZE_SCAN_CASE(4, false)
    QUANTIZE_SCAN_CASE(8, false)
    default: QUANTIZE_SCAN_CASE(16, false) /* fill_codecs installs this for codes of 1 to 16 bits */
    }
  }
  if (t->kind == LOOM_DTYPE_KIND_BINARY || t->kind == LOOM_DTYPE_KIND_TERNARY) {
    *next_stat = abs_sum_finish(next, n, scanned, acc.amax, acc.amin, acc.sum[0] + acc.sum[1], next_nonfinite);
  } else {
    uint32_t am = lanes_max_u(acc.amax);
    int32_t pm = lanes_max_i(acc.pmax, 0);
    for (int64_t j = scanned; j < n; j++) {
      uint32_t u;
      memcpy(&u, next + j, sizeof u);
      am = (u & 0x7fffffffu) > am ? u & 0x7fffffffu : am;
      pm = (int32_t)u > pm ? (int32_t)u : pm;
    }
    /* as scale_scan: finite exactly when max |x| is below infinity's bits */
    *next_nonfinite = am >= 0x7f800000u;
    if (!*next_nonfinite) {
      const uint32_t bits = t->kind == LOOM_DTYPE_KIND_SIGNED ? am : (uint32_t)pm;
      float f;
      memcpy(&f, &bits, sizeof f);
      *next_stat = f;
    }
  }
  return nan && find_nan(src, n, bad) ? LOOM_ERR_NONFINITE : 0;
}
#undef QUANTIZE_SCAN_CASE
#endif
