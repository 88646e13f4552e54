/*
 * Shared by test-conv.c and test-conv-transpose.c: a compact description of
 * a convolution configuration, PyTorch parity from tests/parity/vectors/conv,
 * gradient checks, determinism over thread counts and the quantized-equals-
 * dequantized check.
 */
#pragma once
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "layer-test-util.h"
#include "kernels/cpu.h"
#include "layers/conv-core.h"
#include "test-levels.h"

typedef struct conv_cfg {
  int dims;
  bool transposed;
  int64_t cin, cout, groups;
  bool bias;
  int64_t in[3], kernel[3], stride[3], padding[3], dilation[3], output_padding[3];
} conv_cfg;

static inline loom_layer *conv_cfg_layer(const conv_cfg *c, uint64_t seed) {
  char type[32];
  snprintf(type, sizeof type, "%s%dd", c->transposed ? "conv_transpose" : "conv", c->dims);
  loom_layer *l = lt_new(type);
  lt_set_int(l, "in_channels", c->cin);
  lt_set_int(l, "out_channels", c->cout);
  lt_set_int(l, "groups", c->groups);
  lt_set_bool(l, "bias", c->bias);
  lt_set_ints(l, "kernel", c->kernel, c->dims);
  lt_set_ints(l, "stride", c->stride, c->dims);
  lt_set_ints(l, "padding", c->padding, c->dims);
  lt_set_ints(l, "dilation", c->dilation, c->dims);
  if (c->transposed) lt_set_ints(l, "output_padding", c->output_padding, c->dims);
  int64_t shape[4] = {c->cin, c->in[0], c->in[1], c->in[2]};
  lt_build(l, c->dims + 1, shape, seed);
  return l;
}

/* Reads CASE_params (layout in tests/parity/gen_conv.py). */
static inline conv_cfg conv_cfg_from_params(const char *name, int64_t *batch) {
  char file[96];
  snprintf(file, sizeof file, "%s_params", name);
  loom_npy p = parity_load("conv", file);
  g_assert_cmpint(loom_npy_numel(&p), ==, 25);
  const float *v = p.data;
  conv_cfg c = {.dims = (int)v[0], .transposed = v[1] != 0, .cin = (int64_t)v[3], .cout = (int64_t)v[4],
                .groups = (int64_t)v[5], .bias = v[6] != 0};
  *batch = (int64_t)v[2];
  for (int i = 0; i < 3; i++) {
    c.in[i] = (int64_t)v[7 + i];
    c.kernel[i] = (int64_t)v[10 + i];
    c.stride[i] = (int64_t)v[13 + i];
    c.padding[i] = (int64_t)v[16 + i];
    c.dilation[i] = (int64_t)v[19 + i];
    c.output_padding[i] = (int64_t)v[22 + i];
  }
  loom_npy_clear(&p);
  return c;
}

static inline loom_npy conv_load(const char *name, const char *what) {
  char file[96];
  snprintf(file, sizeof file, "%s_%s", name, what);
  return parity_load("conv", file);
}

/* Forward and backward of one committed case against PyTorch (float64 reference). */
static inline void conv_check_parity(const char *name, loom_pool *pool) {
  int64_t batch;
  conv_cfg c = conv_cfg_from_params(name, &batch);
  loom_layer *l = conv_cfg_layer(&c, 1);
  loom_npy x = conv_load(name, "x"), w = conv_load(name, "weight"), y = conv_load(name, "y"),
           dy = conv_load(name, "dy"), dx = conv_load(name, "dx"), dw = conv_load(name, "dweight");
  lt_set_master(l, 0, w.data, loom_npy_numel(&w));
  g_assert_cmpint(loom_npy_numel(&x), ==, batch * lt_in_numel(l));
  g_assert_cmpint(loom_npy_numel(&y), ==, batch * lt_out_numel(l));
  loom_npy b = {0}, db = {0};
  if (c.bias) {
    b = conv_load(name, "bias");
    db = conv_load(name, "dbias");
    lt_set_master(l, 1, b.data, loom_npy_numel(&b));
  }
  float *got_y = g_new(float, loom_npy_numel(&y)), *got_dx = g_new(float, loom_npy_numel(&x));
  lt_forward(l, pool, x.data, got_y, batch);
  char what[128];
  snprintf(what, sizeof what, "%s y", name);
  lt_assert_parity(what, got_y, &y);
  lt_backward(l, pool, x.data, got_y, dy.data, got_dx, batch);
  snprintf(what, sizeof what, "%s dx", name);
  lt_assert_parity(what, got_dx, &dx);
  snprintf(what, sizeof what, "%s dweight", name);
  lt_assert_parity(what, loom_layer_grad(l, 0), &dw);
  if (c.bias) {
    snprintf(what, sizeof what, "%s dbias", name);
    lt_assert_parity(what, loom_layer_grad(l, 1), &db);
  }
  /* backward accumulates: a second call doubles the parameter gradients. */
  loom_error err = {0};
  loom_ctx ctx = {.pool = pool, .training = true};
  g_assert_cmpint(layer_backward(l, &ctx, x.data, got_y, dy.data, NULL, batch, &err), ==, LOOM_OK);
  const float *g = loom_layer_grad(l, 0);
  for (int64_t i = 0; i < loom_npy_numel(&dw); i++)
    g_assert_cmpfloat_with_epsilon(g[i], 2.0 * dw.data[i], 4e-5 + 2e-5 * fabs(dw.data[i]));
  loom_npy *all[] = {&x, &w, &y, &dy, &dx, &dw, &b, &db};
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) loom_npy_clear(all[i]);
  g_free(got_y);
  g_free(got_dx);
  loom_layer_free(l);
}

/* conv_check_parity on every case: single-threaded, on a pool of 3 threads,
 * and on the pool with OpenBLAS's tiles (builds with BLAS; elsewhere the
 * request changes nothing). The engine's kernels are left in use: later
 * tests hold them to their summation order. */
static inline void conv_check_parity_cases(const char *const *cases, size_t n) {
  for (size_t i = 0; i < n; i++) conv_check_parity(cases[i], NULL);
  loom_pool *pool = lt_pool(3);
  for (size_t i = 0; i < n; i++) conv_check_parity(cases[i], pool);
  conv_set_use_blas(true);
  for (size_t i = 0; i < n; i++) conv_check_parity(cases[i], pool);
  conv_set_use_blas(false);
  loom_pool_free(pool);
}

static inline void conv_check_gradients(const conv_cfg *c, int64_t batch, uint64_t seed) {
  loom_layer *l = conv_cfg_layer(c, seed);
  int64_t n = batch * lt_in_numel(l);
  float *x = g_new(float, n);
  gradcheck_fill_uniform(x, n, -1.0, 1.0, seed + 11);
  gradcheck_options o = {.tolerance = 2e-3, .seed = seed};
  gradcheck_report rep;
  char what[256];
  loom_layer_describe(l, what, sizeof what);
  lt_assert_gradcheck(what, gradcheck_layer_measure(l, x, batch, &o, &rep), &rep, 2e-3);
  g_free(x);
  loom_layer_free(l);
}

typedef struct conv_run {
  float *y, *dx, *dw, *db;
} conv_run;

static inline conv_run conv_run_once(loom_layer *l, loom_pool *pool, const float *x, const float *dy, int64_t batch) {
  conv_run r = {.y = g_new(float, batch * lt_out_numel(l)), .dx = g_new(float, batch * lt_in_numel(l))};
  lt_forward(l, pool, x, r.y, batch);
  lt_backward(l, pool, x, r.y, dy, r.dx, batch);
  int64_t nw = loom_weights_count(loom_layer_weights(l, 0));
  r.dw = g_memdup2(loom_layer_grad(l, 0), (gsize)nw * sizeof(float));
  if (loom_layer_n_weights(l) > 1)
    r.db = g_memdup2(loom_layer_grad(l, 1), (gsize)loom_weights_count(loom_layer_weights(l, 1)) * sizeof(float));
  return r;
}

static inline void conv_run_free(conv_run *r) {
  g_free(r->y);
  g_free(r->dx);
  g_free(r->dw);
  g_free(r->db);
}

static inline void conv_assert_same_run(const conv_run *a, const conv_run *b, loom_layer *l, int64_t batch,
                                        const char *what) {
  int64_t nw = loom_weights_count(loom_layer_weights(l, 0));
  if (memcmp(a->y, b->y, (size_t)(batch * lt_out_numel(l)) * sizeof(float))) g_error("%s: y differs", what);
  if (memcmp(a->dx, b->dx, (size_t)(batch * lt_in_numel(l)) * sizeof(float))) g_error("%s: dx differs", what);
  if (memcmp(a->dw, b->dw, (size_t)nw * sizeof(float))) g_error("%s: dweight differs", what);
  if (a->db && memcmp(a->db, b->db, (size_t)loom_weights_count(loom_layer_weights(l, 1)) * sizeof(float)))
    g_error("%s: dbias differs", what);
}

/* y, dx, dweight and dbias are bit-identical on 1, 2 and 7 threads and
 * without a pool. */
/* Uniform inputs and output gradients in [-1, 1) for `batch` samples of l. */
static inline void conv_random_io(loom_layer *l, int64_t batch, uint64_t seed, float **x, float **dy) {
  int64_t nx = batch * lt_in_numel(l), ny = batch * lt_out_numel(l);
  *x = g_new(float, nx);
  *dy = g_new(float, ny);
  gradcheck_fill_uniform(*x, nx, -1.0, 1.0, seed);
  gradcheck_fill_uniform(*dy, ny, -1.0, 1.0, seed + 1);
}

static inline void conv_check_determinism(const conv_cfg *c, int64_t batch) {
  loom_layer *l = conv_cfg_layer(c, 5);
  float *x, *dy;
  conv_random_io(l, batch, 21, &x, &dy);
  conv_run ref = conv_run_once(l, NULL, x, dy, batch);
  const int threads[] = {1, 2, 7};
  for (size_t i = 0; i < 3; i++) {
    loom_pool *pool = lt_pool(threads[i]);
    conv_run r = conv_run_once(l, pool, x, dy, batch);
    char what[64];
    snprintf(what, sizeof what, "%d threads", threads[i]);
    conv_assert_same_run(&ref, &r, l, batch, what);
    conv_run_free(&r);
    loom_pool_free(pool);
  }
  conv_run_free(&ref);
  g_free(x);
  g_free(dy);
  loom_layer_free(l);
}

/* The short rows' offset lists (conv-table.c) give the bits of the row
 * copies (conv-core.c): y, dx, dweight and dbias, without a pool and on 3
 * threads. */
/* At every kernel level (the AVX-512 level serves the lists from chunks,
 * conv-table.h), serial and on 3 threads. */
static inline void conv_check_table_matches_rows(const conv_cfg *c, int64_t batch) {
  loom_layer *l = conv_cfg_layer(c, 9);
  float *x, *dy;
  conv_random_io(l, batch, 31, &x, &dy);
  loom_pool *pool = lt_pool(3);
  loom_pool *pools[2] = {NULL, pool};
  const loom_kernel_level saved = loom_kernels_get()->level;
  for (int level = 0; level <= TEST_LAST_LEVEL; level++) {
    if (!loom_kernels_force((loom_kernel_level)level)) continue;
    char what[320];
    loom_layer_describe(l, what, 256);
    g_strlcat(what, ": offset lists against row copies at ", sizeof what);
    g_strlcat(what, loom_kernel_level_name((loom_kernel_level)level), sizeof what);
    for (int p = 0; p < 2; p++) {
      conv_run lists = conv_run_once(l, pools[p], x, dy, batch);
      conv_set_use_table(false);
      conv_run rows = conv_run_once(l, pools[p], x, dy, batch);
      conv_set_use_table(true);
      conv_assert_same_run(&lists, &rows, l, batch, what);
      conv_run_free(&lists);
      conv_run_free(&rows);
    }
  }
  g_assert_true(loom_kernels_force(saved));
  loom_pool_free(pool);
  g_free(x);
  g_free(dy);
  loom_layer_free(l);
}

/* Samples side by side (conv-core.c): a batch gives each sample the bits it
 * gets alone, y and dx; the weight gradient of the batch equals the
 * samples' gradients accumulated one after another (one chain over the
 * samples, then the positions). `batch` should exceed what the products put
 * side by side, so that groups of samples and a partial last group both
 * run; without a pool and on 3 threads. */
static inline void conv_check_samples_side_by_side(const conv_cfg *c, int64_t batch) {
  loom_layer *l = conv_cfg_layer(c, 13);
  float *x, *dy;
  conv_random_io(l, batch, 41, &x, &dy);
  const int64_t nin = lt_in_numel(l), nout = lt_out_numel(l), nw = loom_weights_count(loom_layer_weights(l, 0));
  float *y1 = g_new(float, nout), *dx1 = g_new(float, nin);
  loom_pool *pool = lt_pool(3);
  loom_pool *pools[2] = {NULL, pool};
  char what[256];
  loom_layer_describe(l, what, 200);
  for (int p = 0; p < 2; p++) {
    conv_run all = conv_run_once(l, pools[p], x, dy, batch);
    layer_zero_grad(l);
    for (int64_t n = 0; n < batch; n++) {
      loom_error err = {0};
      loom_ctx ctx = {.pool = pools[p], .training = true};
      lt_forward(l, pools[p], x + n * nin, y1, 1);
      if (memcmp(y1, all.y + n * nout, (size_t)nout * sizeof(float)))
        g_error("%s: sample %lld of %lld: y differs from the sample alone", what, (long long)n, (long long)batch);
      /* the gradients accumulate: no zeroing between samples */
      if (layer_backward(l, &ctx, x + n * nin, y1, dy + n * nout, dx1, 1, &err)) g_error("backward: %s", err.message);
      if (memcmp(dx1, all.dx + n * nin, (size_t)nin * sizeof(float)))
        g_error("%s: sample %lld of %lld: dx differs from the sample alone", what, (long long)n, (long long)batch);
    }
    if (memcmp(loom_layer_grad(l, 0), all.dw, (size_t)nw * sizeof(float)))
      g_error("%s: dweight differs from the samples' gradients accumulated in order", what);
    conv_run_free(&all);
  }
  loom_pool_free(pool);
  g_free(y1);
  g_free(dx1);
  g_free(x);
  g_free(dy);
  loom_layer_free(l);
}

/* At a quantized dtype the layer equals float32 math on the dequantized
 * weights: a float32 clone whose master holds those values gives the same
 * bits for y and dx (and the weight gradient passes straight through). */
static inline void conv_check_quantized(const conv_cfg *c, int64_t batch, loom_dtype dtype) {
  loom_error err = {0};
  loom_layer *q = conv_cfg_layer(c, 9);
  loom_layer *f = loom_layer_clone(q, &err);
  g_assert_nonnull(f);
  g_assert_cmpint(loom_layer_set_dtype(q, dtype, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_weights_dtype(loom_layer_weights(q, 0)), ==, dtype);
  if (c->bias) g_assert_cmpint(loom_weights_dtype(loom_layer_weights(q, 1)), ==, LOOM_DTYPE_FLOAT32);
  loom_weights *qw = loom_layer_weights(q, 0);
  const float *deq = loom_weights_effective(qw, &err);
  g_assert_nonnull(deq);
  int64_t nw = loom_weights_count(qw);
  int64_t changed = 0;
  for (int64_t i = 0; i < nw; i++) changed += deq[i] != loom_weights_master_const(qw)[i];
  g_assert_cmpint(changed, >, nw / 2); /* the dtype really rounds */
  lt_set_master(f, 0, deq, nw);

  int64_t nx = batch * lt_in_numel(q), ny = batch * lt_out_numel(q);
  float *x = g_new(float, nx), *dy = g_new(float, ny);
  gradcheck_fill_uniform(x, nx, -1.0, 1.0, 31);
  gradcheck_fill_uniform(dy, ny, -1.0, 1.0, 32);
  conv_run rq = conv_run_once(q, NULL, x, dy, batch), rf = conv_run_once(f, NULL, x, dy, batch);
  conv_assert_same_run(&rq, &rf, q, batch, loom_dtype_name(dtype));
  conv_run_free(&rq);
  conv_run_free(&rf);
  g_free(x);
  g_free(dy);
  loom_layer_free(q);
  loom_layer_free(f);
}
