/*
 * The vector parts of the packed GEMV (kernels/gemv.h),
 * compiled per level with the codecs: included by codec-simd.h, whose types,
 * decoders and SIMD(name) they use. Not a normal header.
 */
#ifndef SIMD
#error "gemv-simd.h is included by codec-simd.h only"
#endif

/* The packed GEMV's dot step (cpu.h): 64 lanes as 64 / VL vectors. */
static void SIMD(dot_acc64)(float *acc, const float *w, const float *x, int64_t n) {
  enum { NV = 64 / VL };
  vf a[NV];
  memcpy(a, acc, sizeof a);
  int64_t j = 0;
  for (; j + 64 <= n; j += 64)
#pragma GCC unroll 8 /* the accumulators stay in registers */
    for (int v = 0; v < NV; v++) a[v] = VFMA(load_f(w + j + v * VL), load_f(x + j + v * VL), a[v]);
  if (j < n) {
    float wt[64] = {0}, xt[64] = {0};
    memcpy(wt, w + j, (size_t)(n - j) * sizeof *wt);
    memcpy(xt, x + j, (size_t)(n - j) * sizeof *xt);
    for (int v = 0; v < NV; v++) a[v] = VFMA(load_f(wt + v * VL), load_f(xt + v * VL), a[v]);
  }
  memcpy(acc, a, sizeof a);
}

/*
 * The packed GEMV's inner loop fused with decoding (cpu.h, gemv_acc64): the
 * codes of 64 columns decoded in registers, exactly as the row codecs above
 * decode them, and fed to the same 64 fused multiply-add lanes in the same
 * order as dequantize-then-dot_acc64, so the bits are the same.
 */
static ALWAYS_INLINE vf decode_block(const int bits, const int kind, const uint8_t *p, float scale,
                                     const mf_dec_params *mf) {
  if (kind < 0) { /* float formats */
    if (kind == -2) return (vf)(load_codes(16, p) << 16);
    if (kind == -3) return load_f((const float *)(const void *)p);
    /* -11 float16, -12 fp8-e5m2, -13 fp8-e4m3 through F16C's conversion,
     * -14 fp4 from its table of magnitudes */
    if (kind == -11) return half_decode(p);
    if (kind == -12 || kind == -13) return fp8_decode(kind == -13, p);
    return fp4_lookup(mf, load_codes(4, p));
  }
  const vu c = load_codes(bits, p);
  if (kind == LOOM_DTYPE_KIND_BINARY) return __builtin_convertvector(1 - 2 * (vi)c, vf) * scale;
  const int ext = 32 - bits;
  const vi q = kind != LOOM_DTYPE_KIND_UNSIGNED ? ((vi)(c << ext)) >> ext : (vi)c;
  return __builtin_convertvector(q, vf) * scale;
}

/* nr rows at once (a constant: 1, or 4 where the registers hold 4 rows'
 * accumulators): each activation vector is loaded once for all of them,
 * and each row's lanes take their terms in the one-row order. */
static ALWAYS_INLINE void gemv_groups(const int bits, const int kind, const int nr, const uint8_t *row,
                                      size_t row_bytes, int64_t groups, const float *scales, const mf_dec_params *mf,
                                      const float *x, float *acc) {
  enum { NV = 64 / VL };
  vf a[LOOM_GEMV_ROWS][NV];
  memcpy(a, acc, (size_t)nr * sizeof a[0]);
  for (int64_t g = 0; g < groups; g++)
#pragma GCC unroll 8 /* the accumulators stay in registers */
    for (int v = 0; v < NV; v++) {
      const int64_t j = g * 64 + v * VL;
      const vf xv = load_f(x + j);
#pragma GCC unroll 4
      for (int r = 0; r < nr; r++)
        a[r][v] = VFMA(decode_block(bits, kind, row + (size_t)r * row_bytes + j * bits / 8, scales[r], mf), xv, a[r][v]);
    }
  memcpy(acc, a, (size_t)nr * sizeof a[0]);
}

/* Four rows together at the AVX-512 level (16 accumulators of 32
 * registers); AVX2's 16 registers hold one row's 8. */
#define GEMV_TOGETHER (VL == 16 ? LOOM_GEMV_ROWS : 1)

static ALWAYS_INLINE void gemv_rows_of(const int bits, const int kind, const uint8_t *row, size_t row_bytes,
                                       int nrows, int64_t groups, const float *scales, const mf_dec_params *mf,
                                       const float *x, float *acc) {
  if (GEMV_TOGETHER > 1 && nrows == GEMV_TOGETHER) {
    gemv_groups(bits, kind, GEMV_TOGETHER, row, row_bytes, groups, scales, mf, x, acc);
    return;
  }
  for (int r = 0; r < nrows; r++)
    gemv_groups(bits, kind, 1, row + (size_t)r * row_bytes, row_bytes, groups, scales + r, mf, x, acc + 64 * r);
}

#define GEMV_CASE(B, KIND) gemv_rows_of(B, KIND, row, row_bytes, nrows, groups, scales, &mf, x, acc)

static void SIMD(gemv_acc64)(const loom_dtype_traits *t, const uint8_t *row, size_t row_bytes, int nrows,
                             int64_t groups, const float *scales, const float *x, float *acc) {
  mf_dec_params mf = {0};
  if (!t->scaled && t->bits <= 16) mf = mf_dec(t);
  if (t->id == LOOM_DTYPE_FP4) fp4_magnitudes(&mf);
  const bool uns = t->kind == LOOM_DTYPE_KIND_UNSIGNED;
  switch (t->id) {
  case LOOM_DTYPE_FLOAT32: GEMV_CASE(32, -3); break;
  case LOOM_DTYPE_BFLOAT16: GEMV_CASE(16, -2); break;
  case LOOM_DTYPE_FLOAT16: GEMV_CASE(16, -11); break;
  case LOOM_DTYPE_FP8_E5M2: GEMV_CASE(8, -12); break;
  case LOOM_DTYPE_FP8_E4M3: GEMV_CASE(8, -13); break;
  case LOOM_DTYPE_FP4: GEMV_CASE(4, -14); break;
  case LOOM_DTYPE_BINARY: GEMV_CASE(1, LOOM_DTYPE_KIND_BINARY); break;
  default:
    switch (t->bits) {
    case 2: uns ? GEMV_CASE(2, LOOM_DTYPE_KIND_UNSIGNED) : GEMV_CASE(2, LOOM_DTYPE_KIND_SIGNED); break;
    case 4: uns ? GEMV_CASE(4, LOOM_DTYPE_KIND_UNSIGNED) : GEMV_CASE(4, LOOM_DTYPE_KIND_SIGNED); break;
    case 8: uns ? GEMV_CASE(8, LOOM_DTYPE_KIND_UNSIGNED) : GEMV_CASE(8, LOOM_DTYPE_KIND_SIGNED); break;
    default: uns ? GEMV_CASE(16, LOOM_DTYPE_KIND_UNSIGNED) : GEMV_CASE(16, LOOM_DTYPE_KIND_SIGNED); break;
    }
  }
}

