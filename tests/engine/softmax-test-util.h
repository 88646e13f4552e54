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

#define ST_RTOL 1e-5
#define ST_ATOL 1e-6

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
  parity_assert_close(what, y, c->y.data, loom_npy_numel(&c->y), ST_RTOL, ST_ATOL);
  float *dx = st_backward(l, &ctx, c->x.data, y, c->dy.data, c->batch);
  g_snprintf(what, sizeof what, "%s backward", c->name);
  parity_assert_close(what, dx, c->dx.data, loom_npy_numel(&c->dx), ST_RTOL, ST_ATOL);
  g_free(y);
  g_free(dx);
}

/* Forward and backward on 1 thread and on a pool of 4 give identical bits,
 * parameter gradients included. */
static inline void st_assert_thread_independent(loom_layer *l, const float *x, const float *dy, int64_t batch) {
  loom_error err = {0};
  loom_pool *pool = loom_pool_new(4, &err);
  g_assert_nonnull(pool);
  loom_ctx serial = {.training = true, .seed = 3}, parallel = {.pool = pool, .training = true, .seed = 3};
  loom_shape out = loom_layer_out_shape(l), in = loom_layer_in_shape(l);
  int64_t n_out = batch * loom_shape_numel(&out);
  int64_t n_in = batch * loom_shape_numel(&in);
  float *grads[2] = {NULL, NULL};
  float *ys[2], *dxs[2];
  for (int run = 0; run < 2; run++) {
    const loom_ctx *ctx = run ? &parallel : &serial;
    layer_zero_grad(l);
    ys[run] = st_forward(l, ctx, x, batch);
    dxs[run] = st_backward(l, ctx, x, ys[run], dy, batch);
    if (l->n_weights > 0)
      grads[run] = g_memdup2(l->grad[0], (gsize)loom_weights_count(l->weights[0]) * sizeof(float));
  }
  g_assert_cmpmem(ys[0], n_out * sizeof(float), ys[1], n_out * sizeof(float));
  g_assert_cmpmem(dxs[0], n_in * sizeof(float), dxs[1], n_in * sizeof(float));
  if (l->n_weights > 0) {
    gsize bytes = (gsize)loom_weights_count(l->weights[0]) * sizeof(float);
    g_assert_cmpmem(grads[0], bytes, grads[1], bytes);
  }
  for (int run = 0; run < 2; run++) {
    g_free(ys[run]);
    g_free(dxs[run]);
    g_free(grads[run]);
  }
  loom_pool_free(pool);
}
