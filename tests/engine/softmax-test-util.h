/*
 * Helpers shared by test-softmax.c, test-sparsemax-entmax.c and
 * test-kmeans.c: building layers, running the committed PyTorch cases of
 * tests/parity/vectors/softmax, and checking that results do not depend on
 * the thread count.
 */
#pragma once
#include <glib.h>
#include <string.h>

#include "layers/layer-impl.h"
#include "loom/loom.h"
#include "loom/weights.h"
#include "parity.h"


static inline loom_layer *st_layer(const char *type) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  if (!l) g_error("%s", err.message);
  return l;
}

static inline void st_build(loom_layer *l, loom_shape s) {
  loom_error err = {0};
  if (loom_layer_build(l, &s, 7, &err) != LOOM_OK) g_error("build: %s", err.message);
}

/* Forward of a built layer; returns a new output buffer (g_free it). */
static inline float *st_forward(loom_layer *l, const loom_ctx *ctx, const float *x, int64_t batch) {
  loom_shape out = loom_layer_out_shape(l);
  float *y = g_new0(float, batch * loom_shape_numel(&out));
  loom_error err = {0};
  if (layer_forward(l, ctx, x, y, batch, &err) != LOOM_OK) g_error("forward: %s", err.message);
  return y;
}

static inline float *st_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                                 int64_t batch) {
  loom_shape in = loom_layer_in_shape(l);
  float *dx = g_new0(float, batch * loom_shape_numel(&in));
  loom_error err = {0};
  if (layer_backward(l, ctx, x, y, dy, dx, batch, &err) != LOOM_OK) g_error("backward: %s", err.message);
  return dx;
}

/* Asserts every row of n entries sums to 1 within tol and has no negative entry. */
static inline void st_assert_rows_sum_to_one(const float *y, int64_t rows, int64_t n, double tol) {
  for (int64_t r = 0; r < rows; r++) {
    double s = 0.0;
    for (int64_t i = 0; i < n; i++) {
      g_assert_cmpfloat(y[r * n + i], >=, 0.0f);
      s += y[r * n + i];
    }
    if (fabs(s - 1.0) > tol) g_error("row %lld sums to %.9g", (long long)r, s);
  }
}

/* A committed parity case: x, y, dy, dx and the per-sample shape of x. */
typedef struct st_case {
  char name[64];
  loom_npy x, y, dy, dx;
  int64_t batch;
  loom_shape shape;
} st_case;

static inline st_case st_case_load(const char *name) {
  st_case c;
  memset(&c, 0, sizeof c);
  g_strlcpy(c.name, name, sizeof c.name);
  const char *parts[] = {"x", "y", "dy", "dx"};
  loom_npy *arrays[] = {&c.x, &c.y, &c.dy, &c.dx};
  for (int i = 0; i < 4; i++) {
    char *file = g_strdup_printf("%s_%s", name, parts[i]);
    *arrays[i] = parity_load("softmax", file);
    g_free(file);
  }
  g_assert_cmpint(c.x.ndim, >=, 2);
  c.batch = c.x.shape[0];
  c.shape.rank = c.x.ndim - 1;
  for (int i = 1; i < c.x.ndim; i++) c.shape.d[i - 1] = c.x.shape[i];
  return c;
}

static inline void st_case_free(st_case *c) {
  loom_npy_clear(&c->x);
  loom_npy_clear(&c->y);
  loom_npy_clear(&c->dy);
  loom_npy_clear(&c->dx);
}

/* Loads an extra array of a case, e.g. "mask" or "centres". */
static inline loom_npy st_case_extra(const st_case *c, const char *what) {
  char *file = g_strdup_printf("%s_%s", c->name, what);
  loom_npy a = parity_load("softmax", file);
  g_free(file);
  return a;
}

/* Forward and backward of a built layer against the case's references. */
static inline void st_case_check(loom_layer *l, const st_case *c) {
  loom_ctx ctx = {.training = true};
  loom_shape out = loom_layer_out_shape(l);
  g_assert_cmpint(c->batch * loom_shape_numel(&out), ==, loom_npy_numel(&c->y));
  float *y = st_forward(l, &ctx, c->x.data, c->batch);
  char what[128];
  g_snprintf(what, sizeof what, "%s forward", c->name);
  parity_assert_matches(what, y, c->y.data, loom_npy_numel(&c->y));
  float *dx = st_backward(l, &ctx, c->x.data, y, c->dy.data, c->batch);
  g_snprintf(what, sizeof what, "%s backward", c->name);
  parity_assert_matches(what, dx, c->dx.data, loom_npy_numel(&c->dx));
  g_free(y);
  g_free(dx);
}

/* Forward and backward without a pool and on pools of 1, 2 and 7 threads
 * give identical bits, every parameter gradient included. */
static inline void st_assert_thread_independent(loom_layer *l, const float *x, const float *dy, int64_t batch) {
  static const int threads[] = {0, 1, 2, 7}; /* 0: no pool */
  enum { RUNS = G_N_ELEMENTS(threads) };
  loom_shape out = loom_layer_out_shape(l), in = loom_layer_in_shape(l);
  int64_t n_out = batch * loom_shape_numel(&out);
  int64_t n_in = batch * loom_shape_numel(&in);
  float *ys[RUNS], *dxs[RUNS], *grads[RUNS][LOOM_LAYER_MAX_WEIGHTS] = {{NULL}};
  for (int run = 0; run < RUNS; run++) {
    loom_error err = {0};
    loom_pool *pool = threads[run] ? loom_pool_new(threads[run], &err) : NULL;
    if (threads[run]) g_assert_nonnull(pool);
    loom_ctx ctx = {.pool = pool, .training = true, .seed = 3};
    layer_zero_grad(l);
    ys[run] = st_forward(l, &ctx, x, batch);
    dxs[run] = st_backward(l, &ctx, x, ys[run], dy, batch);
    for (int w = 0; w < l->n_weights; w++)
      grads[run][w] = g_memdup2(l->grad[w], (gsize)loom_weights_count(l->weights[w]) * sizeof(float));
    loom_pool_free(pool);
  }
  for (int run = 1; run < RUNS; run++) {
    g_test_message("%s: %d threads against no pool", l->type->name, threads[run]);
    g_assert_cmpmem(ys[0], n_out * sizeof(float), ys[run], n_out * sizeof(float));
    g_assert_cmpmem(dxs[0], n_in * sizeof(float), dxs[run], n_in * sizeof(float));
    for (int w = 0; w < l->n_weights; w++) {
      gsize bytes = (gsize)loom_weights_count(l->weights[w]) * sizeof(float);
      g_assert_cmpmem(grads[0][w], bytes, grads[run][w], bytes);
    }
  }
  for (int run = 0; run < RUNS; run++) {
    g_free(ys[run]);
    g_free(dxs[run]);
    for (int w = 0; w < l->n_weights; w++) g_free(grads[run][w]);
  }
}
