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
#pragma GCC unroll 8 /* a vector at a time: see gemv_reduce64 */
  for (int v = 0; v < NV; v++) a[v] = load_f(acc + v * VL);
  int64_t j = 0;
  for (; j + 64 <= n; j += 64)
#pragma GCC unroll 8 /* the accumulators stay in registers */
    for (int v = 0; v < NV; v++) a[v] = VFMA(load_f(w + j + v * VL), load_f(x + j + v * VL), a[v]);
  if (j < n) { /* the last group, padded with zeros by masked loads (copies into zeroed buffers missed the
                 store forwarding at every vector) */
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) {
      const int64_t left = n - j - v * VL;
      const vf wv = left >= VL ? load_f(w + j + v * VL) : load_f_first(w + j + v * VL, left);
      const vf xv = left >= VL ? load_f(x + j + v * VL) : load_f_first(x + j + v * VL, left);
      a[v] = VFMA(wv, xv, a[v]);
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < NV; v++) memcpy(acc + v * VL, &a[v], sizeof a[v]);
}

/* loom_gemv_reduce64's pairs in registers: the first stages a vector at a
 * time (w = 32 floats pairs vector v with v + 32 / VL, down to w = VL), then
 * halves of a vector (w = 8, 4), then the last two pairs: the same additions
 * in the same pairs. In a GEMV of 512-column rows the scalar tree had been
 * a quarter of the time, and a vector tree finished through memory (the
 * store of a vector read back as floats) still a sixth. */
static float SIMD(gemv_reduce64)(float *acc) {
  typedef float f8 __attribute__((vector_size(32)));
  typedef float f4 __attribute__((vector_size(16)));
  enum { NV = 64 / VL };
  vf a[NV];
  /* a vector at a time: one memcpy of the array became 16-byte moves, and
   * the vectors read back from their halves' stores missed the store
   * forwarding (a fifth of a 1024-column fp8 GEMV, perf) */
#pragma GCC unroll 8
  for (int v = 0; v < NV; v++) a[v] = load_f(acc + v * VL);
#pragma GCC unroll 4
  for (int n = NV / 2; n >= 1; n /= 2)
#pragma GCC unroll 4
    for (int v = 0; v < n; v++) a[v] = a[v] + a[v + n];
#if VL == 16
  const f8 h = __builtin_shufflevector(a[0], a[0], 0, 1, 2, 3, 4, 5, 6, 7) +
               __builtin_shufflevector(a[0], a[0], 8, 9, 10, 11, 12, 13, 14, 15);
#elif VL == 8
  const f8 h = a[0];
#else
#error "gemv_reduce64 expects 8 or 16 lanes"
#endif
  const f4 q = __builtin_shufflevector(h, h, 0, 1, 2, 3) + __builtin_shufflevector(h, h, 4, 5, 6, 7);
  return (q[0] + q[2]) + (q[1] + q[3]);
}

/*
 * The packed GEMV's inner loop fused with decoding (cpu.h, gemv_acc64): the
 * codes of 64 columns decoded in registers, exactly as the row codecs above
 * decode them, and fed to the same 64 fused multiply-add lanes in the same
 * order as dequantize-then-dot_acc64, so the bits are the same. (fp8-e4m3
 * decodes to w / 256 against 256 · x: the same exact products.)
 */
static ALWAYS_INLINE vf decode_block(const int bits, const int kind, const uint8_t *p, float scale,
                                     const mf_dec_params *mf, const bool finite) {
  if (kind < 0) { /* float formats */
    if (kind == -2) return (vf)(load_codes(16, p) << 16);
    if (kind == -3) return load_f((const float *)(const void *)p);
    if (kind == -4) { /* float64: rounded to float32, as its row codec */
      vd d;
      memcpy(&d, p, sizeof d);
      return __builtin_convertvector(d, vf);
    }
    /* -11 float16, -12 fp8-e5m2, -13 fp8-e4m3 through F16C's conversion,
     * -14 fp4 from its table of magnitudes; `finite`: an fp8 group without
     * NaN codes (gemv_groups) */
    if (kind == -11) return half_decode_quieted(p);
    if (kind == -12 || kind == -13) return finite ? fp8_decode_finite(kind == -13, p) : fp8_decode(kind == -13, false, p);
    return fp4_lookup(mf, load_codes(4, p));
  }
  if (bits == 32) return decode_scaled32(kind != LOOM_DTYPE_KIND_UNSIGNED, load_codes(32, p), scale); /* int32, uint32 */
  if ((bits == 8 || bits == 16) && kind == LOOM_DTYPE_KIND_SIGNED)
    return __builtin_convertvector(load_codes_signed(bits, p), vf) * scale;
  const vu c = load_codes(bits, p);
  if (kind == LOOM_DTYPE_KIND_BINARY) return __builtin_convertvector(1 - 2 * (vi)c, vf) * scale;
  const int ext = 32 - bits;
  const vi q = kind != LOOM_DTYPE_KIND_UNSIGNED ? ((vi)(c << ext)) >> ext : (vi)c;
  return __builtin_convertvector(q, vf) * scale;
}

/* One group of 64 columns of gemv_groups. */
static ALWAYS_INLINE void gemv_group(const int bits, const int kind, const int nr, const int nx, const uint8_t *row,
                                     size_t row_bytes, int64_t g, const float *scales, const mf_dec_params *mf,
                                     const float *x, int64_t x_stride, vf (*a)[64 / VL], const bool finite) {
  enum { NV = 64 / VL };
  if (kind == -12 || kind == -13) /* the next rows' codes, which their NaN test reads first (gemv_groups) */
#pragma GCC unroll 4
    for (int r = 0; r < nr; r++) _mm_prefetch((const char *)row + (size_t)(nr + r) * row_bytes + g * 64, _MM_HINT_T0);
#pragma GCC unroll 8 /* the accumulators stay in registers */
  for (int v = 0; v < NV; v++) {
    const int64_t j = g * 64 + v * VL;
    vf xv[LOOM_GEMV_INPUTS];
#pragma GCC unroll 4
    for (int k = 0; k < nx; k++) xv[k] = load_f(x + k * x_stride + j);
#pragma GCC unroll 4
    for (int r = 0; r < nr; r++) {
      const vf w = decode_block(bits, kind, row + (size_t)r * row_bytes + j * bits / 8, scales[r], mf, finite);
#pragma GCC unroll 4
      for (int k = 0; k < nx; k++) a[r * nx + k][v] = VFMA(w, xv[k], a[r * nx + k][v]);
    }
  }
}

/* nr rows against nx activation vectors at once (constants: 1 × 1, 4 × 1
 * or 1 × 2-3, as the registers hold their accumulators): each activation
 * vector is loaded once for all the rows, each row decoded once for all the
 * vectors, and the lanes of every (row, vector) take their terms in the
 * order of one row against one vector. */
static ALWAYS_INLINE void gemv_groups(const int bits, const int kind, const int nr, const int nx, const uint8_t *row,
                                      size_t row_bytes, int64_t groups, const float *scales, const mf_dec_params *mf,
                                      const float *x, int64_t x_stride, float *acc) {
  enum { NV = 64 / VL };
  vf a[LOOM_GEMV_ROWS * LOOM_GEMV_INPUTS][NV];
#pragma GCC unroll 16
  for (int i = 0; i < nr * nx; i++)
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) a[i][v] = load_f(acc + i * 64 + v * VL);
  /* fp8: the rows' codes tested for NaN codes first, 64 at a time, so that
   * rows without any (weights are finite) decode with no test a vector */
  bool finite = kind == -12 || kind == -13;
  for (int r = 0; r < nr && finite; r++) finite = fp8_codes_finite(kind == -13, row + (size_t)r * row_bytes, groups);
  if (finite)
    for (int64_t g = 0; g < groups; g++) gemv_group(bits, kind, nr, nx, row, row_bytes, g, scales, mf, x, x_stride, a, true);
  else
    for (int64_t g = 0; g < groups; g++) gemv_group(bits, kind, nr, nx, row, row_bytes, g, scales, mf, x, x_stride, a, false);
#pragma GCC unroll 16
  for (int i = 0; i < nr * nx; i++)
#pragma GCC unroll 8
    for (int v = 0; v < NV; v++) memcpy(acc + i * 64 + v * VL, &a[i][v], sizeof a[i][v]);
}

/* At the AVX-512 level four rows or three vectors together (12-16
 * accumulators of 32 registers); AVX2's 16 registers hold one row's 8
 * against one vector. */
#define GEMV_TOGETHER (VL == 16)

static ALWAYS_INLINE void gemv_rows_of(const int bits, const int kind, const uint8_t *row, size_t row_bytes,
                                       int nrows, int64_t groups, const float *scales, const mf_dec_params *mf,
                                       const float *x, int64_t x_stride, int nx, float *acc) {
  if (GEMV_TOGETHER && nx == 1 && nrows == LOOM_GEMV_ROWS) {
    gemv_groups(bits, kind, LOOM_GEMV_ROWS, 1, row, row_bytes, groups, scales, mf, x, x_stride, acc);
    return;
  }
  for (int r = 0; r < nrows; r++) {
    const uint8_t *rr = row + (size_t)r * row_bytes;
    float *ar = acc + 64 * r * nx;
    if (GEMV_TOGETHER && nx == 3)
      gemv_groups(bits, kind, 1, 3, rr, row_bytes, groups, scales + r, mf, x, x_stride, ar);
    else if (GEMV_TOGETHER && nx == 2)
      gemv_groups(bits, kind, 1, 2, rr, row_bytes, groups, scales + r, mf, x, x_stride, ar);
    else
      for (int k = 0; k < nx; k++)
        gemv_groups(bits, kind, 1, 1, rr, row_bytes, groups, scales + r, mf, x + k * x_stride, x_stride, ar + 64 * k);
  }
}

#define GEMV_CASE(B, KIND) gemv_rows_of(B, KIND, row, row_bytes, nrows, groups, scales, &mf, x, x_stride, nx, acc)

static void SIMD(gemv_acc64)(const loom_dtype_traits *t, const uint8_t *row, size_t row_bytes, int nrows,
                             int64_t groups, const float *scales, const float *x, int64_t x_stride, int nx,
                             float *acc) {
  mf_dec_params mf = {0};
  if (!t->scaled && t->bits <= 16) mf = mf_dec(t);
  if (t->id == LOOM_DTYPE_FP4) fp4_magnitudes(&mf);
  const bool uns = t->kind == LOOM_DTYPE_KIND_UNSIGNED;
  switch (t->id) {
  case LOOM_DTYPE_FLOAT64: GEMV_CASE(64, -4); break;
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
    case 16: uns ? GEMV_CASE(16, LOOM_DTYPE_KIND_UNSIGNED) : GEMV_CASE(16, LOOM_DTYPE_KIND_SIGNED); break;
    default: uns ? GEMV_CASE(32, LOOM_DTYPE_KIND_UNSIGNED) : GEMV_CASE(32, LOOM_DTYPE_KIND_SIGNED); break;
    }
  }
}

