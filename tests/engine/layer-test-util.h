/*
 * Small helpers for layer tests (conv, conv_transpose, embedding, norms):
 * building layers with asserted parameter setters, loading weights into the
 * float32 master, and running forward/backward on a given pool.
 */
#pragma once
#include <glib.h>
#include <string.h>

#include "gradcheck.h"
#include "layers/layer-impl.h"
#include "loom/layer.h"
#include "loom/pool.h"
#include "loom/weights.h"
#include "parity.h"


static inline loom_layer *lt_new(const char *type) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  if (!l) g_error("new %s: %s", type, err.message);
  return l;
}

static inline void lt_set_int(loom_layer *l, const char *name, int64_t v) {
  loom_error err = {0};
  if (loom_layer_set_int(l, name, v, &err)) g_error("set %s: %s", name, err.message);
}

static inline void lt_set_ints(loom_layer *l, const char *name, const int64_t *v, int n) {
  loom_error err = {0};
  if (loom_layer_set_ints(l, name, v, n, &err)) g_error("set %s: %s", name, err.message);
}

static inline void lt_set_bool(loom_layer *l, const char *name, bool v) {
  loom_error err = {0};
  if (loom_layer_set_bool(l, name, v, &err)) g_error("set %s: %s", name, err.message);
}

static inline void lt_set_float(loom_layer *l, const char *name, double v) {
  loom_error err = {0};
  if (loom_layer_set_float(l, name, v, &err)) g_error("set %s: %s", name, err.message);
}

static inline void lt_set_enum(loom_layer *l, const char *name, const char *v) {
  loom_error err = {0};
  if (loom_layer_set_enum(l, name, v, &err)) g_error("set %s: %s", name, err.message);
}

static inline void lt_build(loom_layer *l, int rank, const int64_t *dims, uint64_t seed) {
  loom_error err = {0};
  loom_shape s = loom_shape_make(rank, dims);
  if (loom_layer_build(l, &s, seed, &err)) g_error("build: %s", err.message);
}

/* The error of building for `dims`; asserts that it fails with `code`. */
static inline void lt_build_fails(loom_layer *l, int rank, const int64_t *dims, loom_status code,
                                  const char *message) {
  loom_error err = {0};
  loom_shape s = loom_shape_make(rank, dims);
  g_assert_cmpint(loom_layer_build(l, &s, 1, &err), ==, code);
  g_assert_cmpstr(err.message, ==, message);
}

/* Copies v into the master of weight `index` (checking its size). */
static inline void lt_set_master(loom_layer *l, int index, const float *v, int64_t n) {
  loom_weights *w = loom_layer_weights(l, index);
  g_assert_nonnull(w);
  g_assert_cmpint(loom_weights_count(w), ==, n);
  memcpy(loom_weights_master(w), v, (size_t)n * sizeof *v);
  loom_weights_touch(w);
}

/* Fills every weight of l with uniform values in [-a, a], norm weights in
 * [0.5, 1.5] (around their identity 1). */
static inline void lt_randomize(loom_layer *l, double a, uint64_t seed) {
  for (int i = 0; i < loom_layer_n_weights(l); i++) {
    loom_weights *w = loom_layer_weights(l, i);
    bool norm = strstr(loom_layer_weights_name(l, i), "norm") != NULL;
    gradcheck_fill_uniform(loom_weights_master(w), loom_weights_count(w), norm ? 0.5 : -a, norm ? 1.5 : a,
                           seed + (uint64_t)i);
    loom_weights_touch(w);
  }
}

static inline int64_t lt_in_numel(const loom_layer *l) {
  loom_shape s = loom_layer_in_shape(l);
  return loom_shape_numel(&s);
}

static inline int64_t lt_out_numel(const loom_layer *l) {
  loom_shape s = loom_layer_out_shape(l);
  return loom_shape_numel(&s);
}

static inline void lt_forward(loom_layer *l, loom_pool *pool, const float *x, float *y, int64_t batch) {
  loom_error err = {0};
  loom_ctx ctx = {.pool = pool, .training = true};
  if (layer_forward(l, &ctx, x, y, batch, &err)) g_error("forward: %s", err.message);
}

/* Zeroes the gradients, then runs backward (dx may be NULL). */
static inline void lt_backward(loom_layer *l, loom_pool *pool, const float *x, const float *y, const float *dy,
                               float *dx, int64_t batch) {
  loom_error err = {0};
  loom_ctx ctx = {.pool = pool, .training = true};
  layer_zero_grad(l);
  if (layer_backward(l, &ctx, x, y, dy, dx, batch, &err)) g_error("backward: %s", err.message);
}

static inline loom_pool *lt_pool(int threads) {
  loom_error err = {0};
  loom_pool *p = loom_pool_new(threads, &err);
  if (!p) g_error("pool: %s", err.message);
  return p;
}

/* Fails unless a gradient check stayed within tolerance with few kinks. */
static inline void lt_assert_gradcheck(const char *what, int rc, const gradcheck_report *rep, double tolerance) {
  if (rc) g_error("gradcheck %s: the layer failed to run (status %d)", what, rc);
  if (rep->n_checked == 0) g_error("gradcheck %s: nothing was checked", what);
  if (rep->worst > tolerance)
    g_error("gradcheck %s: error %.3g > %.3g at %s[%lld]: analytic %.9g, numeric %.9g", what, rep->worst, tolerance,
            rep->tensor, (long long)rep->index, rep->analytic, rep->numeric);
  if (rep->n_skipped * 20 > rep->n_checked)
    g_error("gradcheck %s: %lld of %lld entries sat on kinks", what, (long long)rep->n_skipped,
            (long long)rep->n_checked);
  g_test_message("gradcheck %s: worst %.3g over %lld entries", what, rep->worst, (long long)rep->n_checked);
}

static inline void lt_assert_parity(const char *what, const float *got, const loom_npy *ref) {
  parity_assert_matches(what, got, ref->data, loom_npy_numel(ref));
}
