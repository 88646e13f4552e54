/* Helpers for the trainer tests: small networks in a row of grid cells and a
 * complete training run. */
#pragma once
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"

#define TT_MAX_LAYERS 16

/* in → hidden[0] → act → … → out, one layer per cell along x. hidden layer
 * i (0-based) gets dtypes[i] when dtypes is not NULL. */
static inline loom_net *tt_mlp(int64_t in, const int64_t *hidden, int n_hidden, const char *act, int64_t out,
                               const loom_dtype *dtypes, uint64_t seed) {
  loom_error err = {0};
  int n_layers = 2 * n_hidden + 1;
  loom_net *net = loom_net_new(1, 1, n_layers, 1, &err);
  g_assert_nonnull(net);
  loom_shape s = loom_shape_1d(in);
  g_assert_cmpint(loom_net_set_input_shape(net, &s, &err), ==, 0);
  int64_t prev = in;
  int x = 0;
  for (int i = 0; i <= n_hidden; i++) {
    int64_t width = i < n_hidden ? hidden[i] : out;
    loom_layer *d = loom_layer_new_by_name("dense", &err);
    g_assert_nonnull(d);
    g_assert_cmpint(loom_layer_set_int(d, "in_features", prev, &err), ==, 0);
    g_assert_cmpint(loom_layer_set_int(d, "out_features", width, &err), ==, 0);
    if (dtypes && i < n_hidden) g_assert_cmpint(loom_layer_set_dtype(d, dtypes[i], &err), ==, 0);
    g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, x++, 0}, d, &err), ==, 0);
    if (i < n_hidden) {
      loom_layer *a = loom_layer_new_by_name(act, &err);
      g_assert_nonnull(a);
      g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, x++, 0}, a, &err), ==, 0);
    }
    prev = width;
  }
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(net, seed, &diags), ==, 0);
  free(diags);
  return net;
}

typedef struct tt_result {
  double test_accuracy, test_loss, train_loss;
  int64_t steps, epochs;
  double *losses; /* per step (g_free) */
} tt_result;

/* Trains to the end (or early stop) and evaluates; asserts success. */
static inline tt_result tt_train(loom_net *net, const loom_dataset *train, const loom_dataset *test,
                                 const loom_train_config *cfg, int threads) {
  loom_error err = {0};
  loom_pool *pool = threads > 1 ? loom_pool_new(threads, &err) : NULL;
  if (threads > 1) g_assert_nonnull(pool);
  loom_trainer *tr = loom_trainer_new(net, train, test, cfg, pool, &err);
  if (!tr) g_error("trainer: %s", err.message);
  int64_t cap = cfg->epochs * loom_trainer_batches_per_epoch(tr);
  tt_result r = {0};
  r.losses = g_new0(double, cap > 0 ? cap : 1);
  loom_step_stats st;
  while (!loom_trainer_finished(tr)) {
    if (loom_trainer_step(tr, &st, &err)) g_error("step: %s", err.message);
    r.losses[r.steps++] = st.loss;
  }
  const loom_epoch_stats *e = loom_trainer_last_epoch(tr);
  r.epochs = e->epoch + 1;
  r.train_loss = e->train.loss;
  r.test_loss = e->test.loss;
  r.test_accuracy = e->test.accuracy;
  loom_trainer_free(tr);
  loom_pool_free(pool);
  return r;
}
