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
 */
#include "train/optim-internal.h"

#include <math.h>

#include "kernels/cpu.h"

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

#if defined(LOOM_KERNELS_X86)
/* Included before any target pragma: its intrinsics then carry their own
 * targets, so each function below can use those of its level. */
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")

/* The same operations as adam_ref, sixteen lanes at a time; the tail and the
 * amsgrad variant go through adam_ref. */
static int64_t adam_avx512(const optim_adam_coef *k, int64_t n, float *p, const float *g, float *m1, float *m2) {
  const __m512 b1 = _mm512_set1_ps(k->b1), b2 = _mm512_set1_ps(k->b2), one_b1 = _mm512_set1_ps(k->one_b1),
               one_b2 = _mm512_set1_ps(k->one_b2), wd = _mm512_set1_ps(k->wd), decay = _mm512_set1_ps(k->decay),
               bias2_sqrt = _mm512_set1_ps(k->bias2_sqrt), eps = _mm512_set1_ps(k->eps),
               neg_step = _mm512_set1_ps(-k->step_size), sign = _mm512_set1_ps(-0.0f);
  const bool decoupled = k->decoupled, add_wd = !k->decoupled && k->wd != 0.0f, maximize = k->maximize;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 grad = _mm512_loadu_ps(g + i), w = _mm512_loadu_ps(p + i);
    if (maximize) grad = _mm512_xor_ps(grad, sign);
    if (decoupled) w = _mm512_mul_ps(w, decay);
    if (add_wd) grad = _mm512_add_ps(grad, _mm512_mul_ps(wd, w));
    __m512 m = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(m1 + i), b1), _mm512_mul_ps(one_b1, grad));
    __m512 v = _mm512_add_ps(_mm512_mul_ps(_mm512_loadu_ps(m2 + i), b2),
                             _mm512_mul_ps(_mm512_mul_ps(one_b2, grad), grad));
    _mm512_storeu_ps(m1 + i, m);
    _mm512_storeu_ps(m2 + i, v);
    __m512 denom = _mm512_add_ps(_mm512_div_ps(_mm512_sqrt_ps(v), bias2_sqrt), eps);
    _mm512_storeu_ps(p + i, _mm512_add_ps(w, _mm512_div_ps(_mm512_mul_ps(neg_step, m), denom)));
  }
  return i;
}

#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx2,fma")

static int64_t adam_avx2(const optim_adam_coef *k, int64_t n, float *p, const float *g, float *m1, float *m2) {
  const __m256 b1 = _mm256_set1_ps(k->b1), b2 = _mm256_set1_ps(k->b2), one_b1 = _mm256_set1_ps(k->one_b1),
               one_b2 = _mm256_set1_ps(k->one_b2), wd = _mm256_set1_ps(k->wd), decay = _mm256_set1_ps(k->decay),
               bias2_sqrt = _mm256_set1_ps(k->bias2_sqrt), eps = _mm256_set1_ps(k->eps),
               neg_step = _mm256_set1_ps(-k->step_size), sign = _mm256_set1_ps(-0.0f);
  const bool decoupled = k->decoupled, add_wd = !k->decoupled && k->wd != 0.0f, maximize = k->maximize;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 grad = _mm256_loadu_ps(g + i), w = _mm256_loadu_ps(p + i);
    if (maximize) grad = _mm256_xor_ps(grad, sign);
    if (decoupled) w = _mm256_mul_ps(w, decay);
    if (add_wd) grad = _mm256_add_ps(grad, _mm256_mul_ps(wd, w));
    __m256 m = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(m1 + i), b1), _mm256_mul_ps(one_b1, grad));
    __m256 v = _mm256_add_ps(_mm256_mul_ps(_mm256_loadu_ps(m2 + i), b2),
                             _mm256_mul_ps(_mm256_mul_ps(one_b2, grad), grad));
    _mm256_storeu_ps(m1 + i, m);
    _mm256_storeu_ps(m2 + i, v);
    __m256 denom = _mm256_add_ps(_mm256_div_ps(_mm256_sqrt_ps(v), bias2_sqrt), eps);
    _mm256_storeu_ps(p + i, _mm256_add_ps(w, _mm256_div_ps(_mm256_mul_ps(neg_step, m), denom)));
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
