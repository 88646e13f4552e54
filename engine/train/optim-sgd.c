/*
 * The SGD and RMSprop updates of one tensor (optim.c), at the kernel level
 * in use (kernels/cpu.h): the plain loops, which are torch's
 * _single_tensor_sgd and _single_tensor_rmsprop element by element, or
 * AVX2 / AVX-512 with the same float32 operations per element in the same
 * order (optim-sgd-simd.h), never fused (the engine is built with -std=c17),
 * so every level gives the plain loop's bits (tests/engine/test-optim.c
 * checks each level against it). The plain loops ran one element at a time
 * (GCC 12 at -O2 vectorizes neither), and with a weight whose gradient stays
 * 0 their momentum and square average sank to subnormals, where each
 * multiply costs ~60 ns (optim-lanes.h): a quarter of training a 64-2048-10
 * MLP with SGD and momentum, almost half with RMSprop.
 */
#include "train/optim-internal.h"

#include <math.h>

#include "kernels/cpu.h"
#include "train/optim-lanes.h"

static void sgd_ref(const optim_sgd_coef *k, int64_t begin, int64_t n, float *p, const float *g, float *buf1) {
  for (int64_t i = begin; i < n; i++) {
    float d = k->maximize ? -g[i] : g[i];
    if (k->wd != 0.0f) d = d + k->wd * p[i];
    if (k->mom != 0.0f) {
      float buf = k->first ? d : buf1[i] * k->mom + k->damp1 * d;
      buf1[i] = buf;
      d = k->nesterov ? d + k->mom * buf : buf;
    }
    p[i] = p[i] + k->neg_lr * d;
  }
}

static void rmsprop_ref(const optim_rmsprop_coef *k, int64_t begin, int64_t n, float *p, const float *g,
                        float *buf1, float *buf2, float *buf3) {
  for (int64_t i = begin; i < n; i++) {
    float grad = k->maximize ? -g[i] : g[i];
    if (k->wd != 0.0f) grad = grad + k->wd * p[i];
    float sq = buf2[i] * k->a + k->one_a * grad * grad;
    buf2[i] = sq;
    float avg;
    if (k->centered) {
      float ga = buf3[i] * k->a + k->one_a * grad;
      buf3[i] = ga;
      avg = sqrtf(sq + -1.0f * ga * ga);
    } else {
      avg = sqrtf(sq);
    }
    avg = avg + k->eps;
    if (k->mom > 0.0f) {
      float buf = buf1[i] * k->mom + grad / avg;
      buf1[i] = buf;
      p[i] = p[i] + k->neg_lr * buf;
    } else {
      p[i] = p[i] + k->neg_lr * grad / avg;
    }
  }
}

/* The magnitudes at risk (optim-lanes.h), as bits: each variable against
 * the coefficients it is multiplied by. */
typedef struct {
  uint32_t p, buf, d_damp, d_lr;
} sgd_limits;

typedef struct {
  uint32_t p, avg, grad, buf, buf_lr;
  uint32_t sq_lo, sq_hi;     /* grad where (1 − alpha) · grad · grad is subnormal */
  uint32_t self_lo, self_hi; /* grad_avg where its square is subnormal */
} rmsprop_limits;

static const uint32_t lim_normal = 0x00800000u; /* FLT_MIN: subnormal below */

static sgd_limits sgd_limits_of(const optim_sgd_coef *k) {
  const float neg_lr = k->neg_lr;
  return (sgd_limits){.p = limit_bits(product_limit(&k->wd, 1)),
                      .buf = limit_bits(product_limit(&k->mom, 1)),
                      .d_damp = limit_bits(product_limit(&k->damp1, 1)),
                      .d_lr = limit_bits(product_limit(&neg_lr, 1))};
}

static rmsprop_limits rmsprop_limits_of(const optim_rmsprop_coef *k) {
  rmsprop_limits r;
  r.p = limit_bits(product_limit(&k->wd, 1));
  r.avg = limit_bits(product_limit(&k->a, 1));
  const float for_grad[2] = {k->one_a, k->mom > 0.0f ? 1.0f : k->neg_lr};
  r.grad = limit_bits(product_limit(for_grad, 2));
  r.buf = limit_bits(product_limit(&k->mom, 1));
  r.buf_lr = limit_bits(product_limit(&k->neg_lr, 1));
  square_band(k->one_a, &r.sq_lo, &r.sq_hi);
  square_band(1.0f, &r.self_lo, &r.self_hi);
  return r;
}

#if defined(LOOM_KERNELS_X86)
#pragma GCC push_options
#pragma GCC target("avx2,fma,avx512f,avx512bw,avx512vl,avx512dq")
#define OPTIM_LEVEL 512
#include "train/optim-level.h"
#include "train/optim-sgd-simd.h"
#define OPTIM_LEVEL_END
#include "train/optim-level.h"
#undef OPTIM_LEVEL
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
#define OPTIM_LEVEL 256
#include "train/optim-level.h"
#include "train/optim-sgd-simd.h"
#define OPTIM_LEVEL_END
#include "train/optim-level.h"
#undef OPTIM_LEVEL
#pragma GCC pop_options
#endif

void optim_sgd_update(const optim_sgd_coef *k, loom_kernel_level level, int64_t n, float *p, const float *g,
                      float *buf1) {
  int64_t done = 0;
#if defined(LOOM_KERNELS_X86)
  if (level >= LOOM_KERNELS_AVX2 && n >= 8) { /* a tensor shorter than a vector: no limits to work out */
    const sgd_limits lim = sgd_limits_of(k);
    done = level >= LOOM_KERNELS_AVX512 ? sgd_avx512(k, &lim, n, p, g, buf1) : sgd_avx2(k, &lim, n, p, g, buf1);
  }
#else
  (void)level;
#endif
  sgd_ref(k, done, n, p, g, buf1);
}

void optim_rmsprop_update(const optim_rmsprop_coef *k, loom_kernel_level level, int64_t n, float *p, const float *g,
                          float *buf1, float *buf2, float *buf3) {
  int64_t done = 0;
#if defined(LOOM_KERNELS_X86)
  if (level >= LOOM_KERNELS_AVX2 && n >= 8) {
    const rmsprop_limits lim = rmsprop_limits_of(k);
    done = level >= LOOM_KERNELS_AVX512 ? rmsprop_avx512(k, &lim, n, p, g, buf1, buf2, buf3)
                                        : rmsprop_avx2(k, &lim, n, p, g, buf1, buf2, buf3);
  }
#else
  (void)level;
#endif
  rmsprop_ref(k, done, n, p, g, buf1, buf2, buf3);
}
