/*
 * Each product of the dense 1024→1024 batch-64 workload (forward X·Wᵀ, input
 * gradient dY·W, weight gradient dW += dYᵀ·X), of the conv2d workload per
 * sample through its im2col shapes (conv-core.c: forward A·cols, input
 * gradient Aᵀ·dpos, weight gradient dA += dpos·colsᵀ), of bench-train's
 * mlp784 and of one or two samples through a 1024 → 1024 layer, timed
 * through loom_sgemm on one thread and through cblas_sgemm (OpenBLAS pinned
 * to one thread) on the same operands. Runs alternate between the two, so a
 * busy machine slows both alike; the figure is the median time per call,
 * and loom/BLAS is the ratio of speeds (above 1: loom is faster).
 */
#include "bench-products.h"

#include <glib.h>
#include <stdio.h>

#include "bench-util.h"
#include "kernels/matmul.h"

#ifdef LOOM_HAVE_BLAS
#include <cblas.h>
#endif

typedef struct product {
  const char *name;
  bool trans_a, trans_b, accumulate;
  int64_t m, n, k;
} product;

static const product products[] = {
  {"dense fwd   Y = X·Wᵀ", false, true, false, 64, 1024, 1024},
  {"dense dx    dX = dY·W", false, false, false, 64, 1024, 1024},
  {"dense dW    dW += dYᵀ·X", true, false, true, 1024, 1024, 64},
  {"conv fwd    A·cols", false, false, false, 64, 4096, 288},
  {"conv dx     Aᵀ·dpos", true, false, false, 288, 4096, 64},
  {"conv dW     dA += dpos·colsᵀ", false, true, true, 64, 288, 4096},
  {"mlp784 fwd  X·W1ᵀ", false, true, false, 64, 256, 784},
  {"mlp784 dW   dW1 += dYᵀ·X", true, false, true, 256, 784, 64},
  {"single row  x·Wᵀ (1024²)", false, true, false, 1, 1024, 1024},
  {"single row  dy·W (1024²)", false, false, false, 1, 1024, 1024},
  {"two rows    X·Wᵀ (1024²)", false, true, false, 2, 1024, 1024},
};

typedef struct operands {
  const product *p;
  float *a, *b, *c;
  int64_t lda, ldb, ldc;
  loom_pool *pool;
} operands;

static void run_loom(const operands *o) {
  const product *p = o->p;
  loom_sgemm(o->pool, p->trans_a, p->trans_b, p->m, p->n, p->k, o->a, o->lda, o->b, o->ldb, p->accumulate, o->c,
             o->ldc);
}

#ifdef LOOM_HAVE_BLAS
static void run_blas(const operands *o) {
  const product *p = o->p;
  cblas_sgemm(CblasRowMajor, p->trans_a ? CblasTrans : CblasNoTrans, p->trans_b ? CblasTrans : CblasNoTrans,
              (blasint)p->m, (blasint)p->n, (blasint)p->k, 1.0f, o->a, (blasint)o->lda, o->b, (blasint)o->ldb,
              p->accumulate ? 1.0f : 0.0f, o->c, (blasint)o->ldc);
}
#endif

/* Milliseconds per call over one run of at least 20 ms. */
static double one_run(void (*fn)(const operands *), const operands *o) {
  long calls = 0;
  double start = bench_now_s(), elapsed;
  do {
    fn(o);
    calls++;
    elapsed = bench_now_s() - start;
  } while (elapsed < 0.02);
  return elapsed / (double)calls * 1e3;
}

static void fill(float *v, int64_t n, uint32_t seed) {
  GRand *r = g_rand_new_with_seed(seed);
  for (int64_t i = 0; i < n; i++) v[i] = (float)g_rand_double_range(r, -1.0, 1.0);
  g_rand_free(r);
}

void bench_products(loom_pool *pool1, loom_pool *pool2, int runs) {
#ifdef LOOM_HAVE_BLAS
  openblas_set_num_threads(1);
#endif
  printf("\n%-30s %5s %5s %5s %9s %9s %9s %9s\n", "product (m n k)", "m", "n", "k", "loom ms", "BLAS ms",
         "loom/BLAS", pool2 ? "2thr/1thr" : "");
  for (size_t i = 0; i < G_N_ELEMENTS(products); i++) {
    const product *p = &products[i];
    operands o = {.p = p, .pool = pool1};
    o.lda = p->trans_a ? p->m : p->k;
    o.ldb = p->trans_b ? p->k : p->n;
    o.ldc = p->n;
    o.a = g_new(float, p->m * p->k);
    o.b = g_new(float, p->k * p->n);
    o.c = g_new0(float, p->m * p->n);
    fill(o.a, p->m * p->k, 1);
    fill(o.b, p->k * p->n, 2);
    double tl[64], tb[64], t2[64];
    run_loom(&o);
    for (int r = 0; r < runs; r++) {
      o.pool = pool1;
      tl[r] = one_run(run_loom, &o);
#ifdef LOOM_HAVE_BLAS
      tb[r] = one_run(run_blas, &o);
#else
      tb[r] = 0.0;
#endif
      if (pool2) {
        o.pool = pool2;
        t2[r] = one_run(run_loom, &o);
      }
    }
    double ml = bench_median(tl, runs), mb = bench_median(tb, runs);
    char ratio[32] = "-", scale[32] = "";
    if (mb > 0) snprintf(ratio, sizeof ratio, "%.2f", mb / ml);
    if (pool2) snprintf(scale, sizeof scale, "%.2f", ml / bench_median(t2, runs));
    printf("%-30s %5lld %5lld %5lld %9.4f %9.4f %9s %9s\n", p->name, (long long)p->m, (long long)p->n,
           (long long)p->k, ml, mb, ratio, scale);
    g_free(o.a);
    g_free(o.b);
    g_free(o.c);
  }
  printf("(loom/BLAS: OpenBLAS time over loom's, one thread each, above 1 loom is faster;\n"
         " 2thr/1thr: loom's 1-thread time over its 2-thread time)\n");
}
