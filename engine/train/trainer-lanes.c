/*
 * The lanes of the trainer's statistics (trainer-check.c): sixteen float32
 * lanes, element i of a block into lane i % 16, and the double fallback's
 * eight, element i into lane i % 8, at the kernel level in use
 * (kernels/cpu.h). Multiplies and adds are correctly rounded and never
 * fused (the engine is built with -std=c17, which keeps GCC from
 * contracting them; the intrinsics below are separate multiplies and adds),
 * and min/max follow `x < lo ? x : lo` exactly as vminps does, so every
 * level gives the plain loop's lanes bit for bit
 * (tests/engine/test-trainer-stats.c checks each level against it). The
 * plain loops are what GCC vectorizes at the build's baseline (SSE2, four
 * floats or two doubles a vector); AVX-512 takes the sixteen, or the
 * eight, in one register, AVX2 in two. (A float's square is exact in double, so there a
 * fused multiply-add would not even change a bit; a difference's square is
 * not.)
 */
#include "train/trainer-internal.h"

#include "kernels/cpu.h"
#include "train/optim-lanes.h"

static void sq_ref(const float *v, int64_t n16, float a[16]) {
  for (int64_t i = 0; i < n16; i += 16)
    for (int j = 0; j < 16; j++) a[j] += v[i + j] * v[i + j];
}

static void sq_diff_ref(const float *w, const float *b, int64_t n16, float aw[16], float ad[16]) {
  for (int64_t i = 0; i < n16; i += 16)
    for (int j = 0; j < 16; j++) {
      float x = w[i + j], d = x - b[i + j];
      aw[j] += x * x;
      ad[j] += d * d;
    }
}

static void moments_ref(const float *v, int64_t n16, float s[16], float q[16], float lo[16], float hi[16]) {
  for (int64_t i = 0; i < n16; i += 16)
    for (int j = 0; j < 16; j++) {
      float x = v[i + j];
      s[j] += x;
      q[j] += x * x;
      lo[j] = x < lo[j] ? x : lo[j];
      hi[j] = x > hi[j] ? x : hi[j];
    }
}

/* The double fallback's lanes: element i into lane i % 8, n8 a multiple of 8. */
static void sq_exact_ref(const float *v, int64_t n8, double a[8]) {
  for (int64_t i = 0; i < n8; i += 8)
    for (int j = 0; j < 8; j++) a[j] += (double)v[i + j] * (double)v[i + j];
}

static void sq_diff_exact_ref(const float *w, const float *b, int64_t n8, double a[8]) {
  for (int64_t i = 0; i < n8; i += 8)
    for (int j = 0; j < 8; j++) {
      const double d = (double)w[i + j] - (double)b[i + j];
      a[j] += d * d;
    }
}

#if defined(LOOM_KERNELS_X86)
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")

/* x · x, through double where a lane's square would be subnormal or x is
 * (optim-lanes.h: either costs an assist of ~60 ns, and the gradients of a
 * trained network are often that small): the same bits. One test, 0 < |x|
 * < 2^-62, also takes the squares below 2^-152, which round to 0 without an
 * assist, the exact way: cheaper than a second test in this loop, which
 * waits on its adds. */
static inline __m512 square512(__m512 x) {
  if (tiny512(x, 0x20800000u /* 2^-62 */)) return mul_exact512(x, x);
  return _mm512_mul_ps(x, x);
}

static void sq_avx512(const float *v, int64_t n16, float a[16]) {
  __m512 acc = _mm512_loadu_ps(a);
  for (int64_t i = 0; i < n16; i += 16) {
    const __m512 x = _mm512_loadu_ps(v + i);
    acc = _mm512_add_ps(acc, square512(x));
  }
  _mm512_storeu_ps(a, acc);
}

static void sq_diff_avx512(const float *w, const float *b, int64_t n16, float aw[16], float ad[16]) {
  __m512 accw = _mm512_loadu_ps(aw), accd = _mm512_loadu_ps(ad);
  for (int64_t i = 0; i < n16; i += 16) {
    const __m512 x = _mm512_loadu_ps(w + i), d = _mm512_sub_ps(x, _mm512_loadu_ps(b + i));
    accw = _mm512_add_ps(accw, square512(x));
    accd = _mm512_add_ps(accd, square512(d));
  }
  _mm512_storeu_ps(aw, accw);
  _mm512_storeu_ps(ad, accd);
}

/* vminps(x, lo) is x < lo ? x : lo, lo whenever either is NaN or both are
 * zeros: the plain loop's expression, operand for operand. */
static void moments_avx512(const float *v, int64_t n16, float s[16], float q[16], float lo[16], float hi[16]) {
  __m512 as = _mm512_loadu_ps(s), aq = _mm512_loadu_ps(q), alo = _mm512_loadu_ps(lo), ahi = _mm512_loadu_ps(hi);
  for (int64_t i = 0; i < n16; i += 16) {
    const __m512 x = _mm512_loadu_ps(v + i);
    as = _mm512_add_ps(as, x);
    aq = _mm512_add_ps(aq, square512(x));
    alo = _mm512_min_ps(x, alo);
    ahi = _mm512_max_ps(x, ahi);
  }
  _mm512_storeu_ps(s, as);
  _mm512_storeu_ps(q, aq);
  _mm512_storeu_ps(lo, alo);
  _mm512_storeu_ps(hi, ahi);
}

/* Widening is exact; the multiply and the add are the plain loop's. */
static void sq_exact_avx512(const float *v, int64_t n8, double a[8]) {
  __m512d acc = _mm512_loadu_pd(a);
  for (int64_t i = 0; i < n8; i += 8) {
    const __m512d x = _mm512_cvtps_pd(_mm256_loadu_ps(v + i));
    acc = _mm512_add_pd(acc, _mm512_mul_pd(x, x));
  }
  _mm512_storeu_pd(a, acc);
}

static void sq_diff_exact_avx512(const float *w, const float *b, int64_t n8, double a[8]) {
  __m512d acc = _mm512_loadu_pd(a);
  for (int64_t i = 0; i < n8; i += 8) {
    const __m512d d = _mm512_sub_pd(_mm512_cvtps_pd(_mm256_loadu_ps(w + i)), _mm512_cvtps_pd(_mm256_loadu_ps(b + i)));
    acc = _mm512_add_pd(acc, _mm512_mul_pd(d, d));
  }
  _mm512_storeu_pd(a, acc);
}

#pragma GCC pop_options

/* The same at the AVX2 level: the sixteen float lanes in two registers
 * (lanes 0-7, 8-15), the eight double lanes likewise. The plain loops, which
 * GCC vectorizes at the build's baseline four lanes a vector, had taken 3-4 %
 * of a bench-train run at this level. */
#pragma GCC push_options
#pragma GCC target("avx2,fma")

static inline __m256 square256(__m256 x) {
  if (tiny256(x, 0x20800000u /* 2^-62, as square512 */)) return mul_exact256(x, x);
  return _mm256_mul_ps(x, x);
}

static void sq_avx2(const float *v, int64_t n16, float a[16]) {
  __m256 a0 = _mm256_loadu_ps(a), a1 = _mm256_loadu_ps(a + 8);
  for (int64_t i = 0; i < n16; i += 16) {
    a0 = _mm256_add_ps(a0, square256(_mm256_loadu_ps(v + i)));
    a1 = _mm256_add_ps(a1, square256(_mm256_loadu_ps(v + i + 8)));
  }
  _mm256_storeu_ps(a, a0);
  _mm256_storeu_ps(a + 8, a1);
}

static void sq_diff_avx2(const float *w, const float *b, int64_t n16, float aw[16], float ad[16]) {
  __m256 w0 = _mm256_loadu_ps(aw), w1 = _mm256_loadu_ps(aw + 8);
  __m256 d0 = _mm256_loadu_ps(ad), d1 = _mm256_loadu_ps(ad + 8);
  for (int64_t i = 0; i < n16; i += 16) {
    const __m256 x0 = _mm256_loadu_ps(w + i), x1 = _mm256_loadu_ps(w + i + 8);
    w0 = _mm256_add_ps(w0, square256(x0));
    w1 = _mm256_add_ps(w1, square256(x1));
    d0 = _mm256_add_ps(d0, square256(_mm256_sub_ps(x0, _mm256_loadu_ps(b + i))));
    d1 = _mm256_add_ps(d1, square256(_mm256_sub_ps(x1, _mm256_loadu_ps(b + i + 8))));
  }
  _mm256_storeu_ps(aw, w0);
  _mm256_storeu_ps(aw + 8, w1);
  _mm256_storeu_ps(ad, d0);
  _mm256_storeu_ps(ad + 8, d1);
}

/* vminps(x, lo) is x < lo ? x : lo, as at the AVX-512 level. */
static void moments_avx2(const float *v, int64_t n16, float s[16], float q[16], float lo[16], float hi[16]) {
  __m256 as[2], aq[2], alo[2], ahi[2];
  for (int h = 0; h < 2; h++) {
    as[h] = _mm256_loadu_ps(s + 8 * h);
    aq[h] = _mm256_loadu_ps(q + 8 * h);
    alo[h] = _mm256_loadu_ps(lo + 8 * h);
    ahi[h] = _mm256_loadu_ps(hi + 8 * h);
  }
  for (int64_t i = 0; i < n16; i += 16)
#pragma GCC unroll 2
    for (int h = 0; h < 2; h++) {
      const __m256 x = _mm256_loadu_ps(v + i + 8 * h);
      as[h] = _mm256_add_ps(as[h], x);
      aq[h] = _mm256_add_ps(aq[h], square256(x));
      alo[h] = _mm256_min_ps(x, alo[h]);
      ahi[h] = _mm256_max_ps(x, ahi[h]);
    }
  for (int h = 0; h < 2; h++) {
    _mm256_storeu_ps(s + 8 * h, as[h]);
    _mm256_storeu_ps(q + 8 * h, aq[h]);
    _mm256_storeu_ps(lo + 8 * h, alo[h]);
    _mm256_storeu_ps(hi + 8 * h, ahi[h]);
  }
}

static void sq_exact_avx2(const float *v, int64_t n8, double a[8]) {
  __m256d a0 = _mm256_loadu_pd(a), a1 = _mm256_loadu_pd(a + 4);
  for (int64_t i = 0; i < n8; i += 8) {
    const __m256d x0 = _mm256_cvtps_pd(_mm_loadu_ps(v + i)), x1 = _mm256_cvtps_pd(_mm_loadu_ps(v + i + 4));
    a0 = _mm256_add_pd(a0, _mm256_mul_pd(x0, x0));
    a1 = _mm256_add_pd(a1, _mm256_mul_pd(x1, x1));
  }
  _mm256_storeu_pd(a, a0);
  _mm256_storeu_pd(a + 4, a1);
}

static void sq_diff_exact_avx2(const float *w, const float *b, int64_t n8, double a[8]) {
  __m256d a0 = _mm256_loadu_pd(a), a1 = _mm256_loadu_pd(a + 4);
  for (int64_t i = 0; i < n8; i += 8) {
    const __m256d d0 = _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(w + i)), _mm256_cvtps_pd(_mm_loadu_ps(b + i)));
    const __m256d d1 =
      _mm256_sub_pd(_mm256_cvtps_pd(_mm_loadu_ps(w + i + 4)), _mm256_cvtps_pd(_mm_loadu_ps(b + i + 4)));
    a0 = _mm256_add_pd(a0, _mm256_mul_pd(d0, d0));
    a1 = _mm256_add_pd(a1, _mm256_mul_pd(d1, d1));
  }
  _mm256_storeu_pd(a, a0);
  _mm256_storeu_pd(a + 4, a1);
}

#pragma GCC pop_options
#endif

/* One set of the lane functions per level. */
typedef struct lanes {
  void (*sq)(const float *v, int64_t n16, float a[16]);
  void (*sq_diff)(const float *w, const float *b, int64_t n16, float aw[16], float ad[16]);
  void (*moments)(const float *v, int64_t n16, float s[16], float q[16], float lo[16], float hi[16]);
  void (*sq_exact)(const float *v, int64_t n8, double a[8]);
  void (*sq_diff_exact)(const float *w, const float *b, int64_t n8, double a[8]);
} lanes;

static const lanes lanes_ref = {sq_ref, sq_diff_ref, moments_ref, sq_exact_ref, sq_diff_exact_ref};
#if defined(LOOM_KERNELS_X86)
static const lanes lanes_avx512 = {sq_avx512, sq_diff_avx512, moments_avx512, sq_exact_avx512, sq_diff_exact_avx512};
static const lanes lanes_avx2 = {sq_avx2, sq_diff_avx2, moments_avx2, sq_exact_avx2, sq_diff_exact_avx2};
#endif

static const lanes *lanes_in_use(void) {
#if defined(LOOM_KERNELS_X86)
  const loom_kernel_level level = loom_kernels_get()->level;
  if (level >= LOOM_KERNELS_AVX512) return &lanes_avx512;
  if (level >= LOOM_KERNELS_AVX2) return &lanes_avx2;
#endif
  return &lanes_ref;
}

void train_lanes_sq(const float *v, int64_t n16, float a[16]) { lanes_in_use()->sq(v, n16, a); }

void train_lanes_sq_diff(const float *w, const float *b, int64_t n16, float aw[16], float ad[16]) {
  lanes_in_use()->sq_diff(w, b, n16, aw, ad);
}

void train_lanes_moments(const float *v, int64_t n16, float s[16], float q[16], float lo[16], float hi[16]) {
  lanes_in_use()->moments(v, n16, s, q, lo, hi);
}

void train_lanes_sq_exact(const float *v, int64_t n8, double a[8]) { lanes_in_use()->sq_exact(v, n8, a); }

void train_lanes_sq_diff_exact(const float *w, const float *b, int64_t n8, double a[8]) {
  lanes_in_use()->sq_diff_exact(w, b, n8, a);
}
