/*
 * The trainer on systolic networks (docs/trainer.md "Systolic networks"):
 * backprop through loom_train_config.ticks ticks. The gradient the trainer
 * computes equals central differences of the loss that loom_evaluate_ticks
 * reports; the reported loss is that loss; a feed-forward network put into
 * systolic mode trains bit for bit like its feed-forward self with one tick
 * per slot; training is bit-identical for 1, 2 and 7 threads; the tick count
 * changes the gradient (a feedback loop needs more ticks than slots to
 * matter); tween and bad tick counts are refused with the reason; a
 * checkpoint of a systolic run resumes exactly.
 */
#include <glib.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loom/model.h"
#include "loom/net.h"
#include "loom/pool.h"
#include "loom/train.h"
#include "train/trainer-internal.h"

static loom_net *example(const char *name) {
  loom_net *net = NULL;
  loom_error err = {0};
  if (loom_example_build(name, &net, &err)) g_error("%s: %s", name, err.message);
  return net;
}

/* 4 features, 2 classes: what the feedback example takes and gives. */
static loom_dataset *clusters(int64_t n, uint64_t seed) {
  loom_error err = {0};
  loom_dataset *ds = loom_gen_clusters(n, 2, 4, 0.4, seed, &err);
  if (!ds) g_error("clusters: %s", err.message);
  return ds;
}

static loom_train_config sgd_config(double lr, int64_t batch, int64_t ticks) {
  loom_train_config c = loom_train_config_default();
  c.loss.kind = LOOM_LOSS_CROSS_ENTROPY;
  c.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
  c.schedule = loom_schedule_constant(lr);
  c.batch_size = batch;
  c.shuffle = false;
  c.epochs = 1000;
  c.ticks = ticks;
  return c;
}

static loom_trainer *trainer(loom_net *net, const loom_dataset *ds, const loom_train_config *c, loom_pool *pool) {
  loom_error err = {0};
  loom_trainer *tr = loom_trainer_new(net, ds, NULL, c, pool, &err);
  if (!tr) g_error("trainer: %s", err.message);
  return tr;
}

static void step(loom_trainer *tr, loom_step_stats *st) {
  loom_error err = {0};
  if (loom_trainer_step(tr, st, &err)) g_error("step: %s", err.message);
}

static double eval_loss(loom_net *net, const loom_dataset *ds, const loom_loss_spec *spec, int64_t ticks) {
  loom_eval_result r;
  loom_error err = {0};
  if (loom_evaluate_ticks(net, NULL, ds, spec, ds->n, ticks, &r, &err)) g_error("evaluate: %s", err.message);
  return r.loss;
}

/* Every weight's gradient from one trainer step (learning rate 0: the weights
 * stay) against central differences of the evaluated loss. Returns the L2
 * norm of the gradient of the first layer's weight matrix. */
static double check_gradient(int64_t ticks, int64_t effective_ticks) {
  loom_net *net = example("feedback");
  loom_dataset *ds = clusters(24, 5);
  loom_train_config c = sgd_config(0.0, ds->n, ticks);
  loom_trainer *tr = trainer(net, ds, &c, NULL);
  loom_step_stats st;
  step(tr, &st);
  /* the loss the step saw is the loss evaluation reports for these weights */
  double before = eval_loss(net, ds, &c.loss, effective_ticks);
  g_assert_cmpfloat(fabs(st.loss - before), <=, 1e-12 * fabs(before));
  double first_norm = -1.0, worst = 0.0;
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, i));
    for (int t = 0; t < loom_layer_n_weights(l); t++) {
      loom_weights *w = loom_layer_weights(l, t);
      float *m = loom_weights_master(w);
      const float *g = loom_layer_grad(l, t);
      double sq = 0.0;
      for (int64_t j = 0; j < loom_weights_count(w); j++) {
        const float h = 1e-2f, keep = m[j];
        m[j] = keep + h;
        loom_weights_touch(w);
        double up = eval_loss(net, ds, &c.loss, effective_ticks);
        m[j] = keep - h;
        loom_weights_touch(w);
        double down = eval_loss(net, ds, &c.loss, effective_ticks);
        m[j] = keep;
        loom_weights_touch(w);
        double fd = (up - down) / (2.0 * h), err = fabs(fd - g[j]) / (1e-3 + fabs(fd));
        if (err > worst) worst = err;
        if (err > 2e-2) g_error("layer %lld tensor %d element %lld: gradient %.8g, central difference %.8g", (long long)i, t, (long long)j, (double)g[j], fd);
        sq += (double)g[j] * g[j];
      }
      if (first_norm < 0) first_norm = sqrt(sq);
    }
  }
  g_test_message("ticks %lld: worst relative gradient error %.3g", (long long)effective_ticks, worst);
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
  return first_norm;
}

/* 9 ticks: the feedback link carries gradient through several loop turns. 0:
 * one tick per slot (3). The two differ: the loop acts only with more ticks. */
static void test_gradient_check(void) {
  double nine = check_gradient(9, 9), three = check_gradient(0, 3);
  g_assert_cmpfloat(fabs(nine - three), >, 1e-4);
}

/* The xor example run systolically with one tick per slot trains exactly like
 * its feed-forward self: each layer sees the input in exactly one tick. */
static void test_feed_forward_equivalence(void) {
  loom_error err = {0};
  loom_net *ff = example("xor"), *sy = example("xor");
  g_assert_cmpint(loom_net_set_execution(sy, LOOM_EXEC_SYSTOLIC, &err), ==, LOOM_OK);
  loom_dataset *ds = loom_gen_xor(64, 0.1, 3, &err);
  loom_train_config c = sgd_config(0.1, 16, 0);
  c.loss.kind = LOOM_LOSS_BCE_LOGITS;
  c.shuffle = true;
  loom_trainer *a = trainer(ff, ds, &c, NULL), *b = trainer(sy, ds, &c, NULL);
  for (int s = 0; s < 12; s++) {
    loom_step_stats sa, sb;
    step(a, &sa);
    step(b, &sb);
    g_assert_cmpfloat(sa.loss, ==, sb.loss);
    g_assert_cmpfloat(sa.grad_norm, ==, sb.grad_norm);
    for (int k = 0; k < sa.n_layers; k++) {
      g_assert_cmpfloat(sa.layers[k].act_rms, ==, sb.layers[k].act_rms);
      g_assert_cmpfloat(sa.layers[k].out_grad_norm, ==, sb.layers[k].out_grad_norm);
    }
  }
  for (int64_t i = 0; i < loom_net_n_layers(ff); i++) {
    loom_layer *la = loom_net_layer_at(ff, loom_net_layer_coord(ff, i)), *lb = loom_net_layer_at(sy, loom_net_layer_coord(sy, i));
    for (int t = 0; t < loom_layer_n_weights(la); t++)
      g_assert_true(memcmp(loom_weights_master(loom_layer_weights(la, t)), loom_weights_master(loom_layer_weights(lb, t)),
                           (size_t)loom_weights_count(loom_layer_weights(la, t)) * sizeof(float)) == 0);
  }
  loom_trainer_free(a);
  loom_trainer_free(b);
  loom_dataset_free(ds);
  loom_net_free(ff);
  loom_net_free(sy);
}

/* 40 Adam steps of the feedback example over 8 ticks; returns the weights. */
static float *train_feedback(int threads, double *loss) {
  loom_error err = {0};
  loom_pool *pool = loom_pool_new(threads, &err);
  g_assert_nonnull(pool);
  loom_net *net = example("feedback");
  loom_dataset *ds = clusters(96, 9);
  loom_train_config c = loom_train_config_default();
  c.batch_size = 16;
  c.ticks = 8;
  c.schedule = loom_schedule_constant(0.01);
  loom_trainer *tr = trainer(net, ds, &c, pool);
  loom_step_stats st = {0};
  for (int s = 0; s < 40; s++) step(tr, &st);
  *loss = st.loss;
  int64_t total = 0;
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, i));
    for (int t = 0; t < loom_layer_n_weights(l); t++) total += loom_weights_count(loom_layer_weights(l, t));
  }
  float *all = g_new(float, total), *p = all;
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, i));
    for (int t = 0; t < loom_layer_n_weights(l); t++) {
      int64_t n = loom_weights_count(loom_layer_weights(l, t));
      memcpy(p, loom_weights_master(loom_layer_weights(l, t)), (size_t)n * sizeof(float));
      p += n;
    }
  }
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
  loom_pool_free(pool);
  return all;
}

static void test_threads(void) {
  double l1, l2, l7;
  float *a = train_feedback(1, &l1), *b = train_feedback(2, &l2), *c = train_feedback(7, &l7);
  g_assert_cmpfloat(l1, ==, l2);
  g_assert_cmpfloat(l1, ==, l7);
  /* the feedback example has 4·4+4 + 4·2+2 = 30 weights */
  g_assert_true(memcmp(a, b, 30 * sizeof(float)) == 0);
  g_assert_true(memcmp(a, c, 30 * sizeof(float)) == 0);
  g_free(a);
  g_free(b);
  g_free(c);
}

static void test_refusals(void) {
  loom_error err = {0};
  loom_net *net = example("feedback");
  loom_dataset *ds = clusters(16, 1);
  loom_train_config c = sgd_config(0.1, 8, 4);
  c.method = LOOM_TRAIN_TWEEN;
  g_assert_null(loom_trainer_new(net, ds, NULL, &c, NULL, &err));
  g_assert_nonnull(strstr(err.message, "systolic"));
  c = sgd_config(0.1, 8, -1);
  err = (loom_error){0};
  g_assert_null(loom_trainer_new(net, ds, NULL, &c, NULL, &err));
  g_assert_nonnull(strstr(err.message, "ticks"));
  c.ticks = LOOM_TRAIN_MAX_TICKS + 1;
  g_assert_null(loom_trainer_new(net, ds, NULL, &c, NULL, &err));
  loom_eval_result r;
  g_assert_cmpint(loom_evaluate_ticks(net, NULL, ds, &c.loss, 8, -3, &r, &err), !=, LOOM_OK);
  g_assert_nonnull(strstr(err.message, "ticks"));
  loom_dataset_free(ds);
  loom_net_free(net);
}

/* A checkpoint taken mid-run resumes bit for bit: ticks is part of it. */
static void test_checkpoint(void) {
  loom_error err = {0};
  loom_net *net = example("feedback");
  loom_dataset *ds = clusters(64, 2);
  loom_train_config c = loom_train_config_default();
  c.batch_size = 16;
  c.ticks = 6;
  loom_trainer *tr = trainer(net, ds, &c, NULL);
  loom_step_stats st;
  for (int s = 0; s < 5; s++) step(tr, &st);
  void *blob = NULL;
  size_t len = 0;
  g_assert_cmpint(loom_trainer_export_state(tr, &blob, &len, &err), ==, LOOM_OK);
  loom_net *copy = loom_net_clone(net, &err);
  loom_trainer *again = trainer(copy, ds, &c, NULL);
  g_assert_cmpint(loom_trainer_import_state(again, blob, len, &err), ==, LOOM_OK);
  for (int s = 0; s < 6; s++) {
    loom_step_stats a, b;
    step(tr, &a);
    step(again, &b);
    g_assert_cmpfloat(a.loss, ==, b.loss);
  }
  /* a different tick count is a live change: the next step uses it */
  c.ticks = 2;
  g_assert_cmpint(loom_trainer_set_config(again, &c, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_trainer_config(again)->ticks, ==, 2);
  free(blob);
  loom_trainer_free(tr);
  loom_trainer_free(again);
  loom_dataset_free(ds);
  loom_net_free(net);
  loom_net_free(copy);
}

/* loom_trainer_activation (the workbench's watched slot): NULL before the
 * first step and away from any layer; after a step every slot's output over
 * the batch, the very values its statistics were computed from (the
 * runner's last tick, which the network's plan never holds for a systolic
 * network). */
static void test_activation_view(void) {
  loom_net *net = example("feedback");
  loom_dataset *ds = clusters(24, 5);
  loom_train_config c = sgd_config(0.05, 8, 9);
  loom_trainer *tr = trainer(net, ds, &c, NULL);
  int64_t batch = -1;
  g_assert_null(loom_trainer_activation(tr, loom_net_layer_coord(net, 0), &batch));
  g_assert_cmpint(batch, ==, 0);
  loom_step_stats st;
  step(tr, &st);
  g_assert_null(loom_trainer_activation(tr, (loom_coord){99, 0, 0, 0}, &batch));
  g_assert_cmpint(st.n_layers, >, 0);
  for (int k = 0; k < st.n_layers; k++) {
    const loom_layer_stats *ls = &st.layers[k];
    const float *a = loom_trainer_activation(tr, ls->at, &batch);
    g_assert_nonnull(a);
    g_assert_cmpint(batch, ==, 8);
    loom_shape out = loom_layer_out_shape(loom_net_layer_at(net, ls->at));
    int64_t n = batch * loom_shape_numel(&out);
    double sq = 0, lo = INFINITY, hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
      sq += (double)a[i] * a[i];
      lo = fmin(lo, a[i]);
      hi = fmax(hi, a[i]);
    }
    g_assert_cmpfloat(fabs(sqrt(sq / (double)n) - ls->act_rms), <=, 1e-9 * (1 + ls->act_rms));
    g_assert_cmpfloat(lo, ==, ls->act_min);
    g_assert_cmpfloat(hi, ==, ls->act_max);
  }
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  /* These tests compare thread counts on small networks: the pool even for
   * steps a trainer would otherwise run on its calling thread. */
  train_set_serial_step_flops(0);
  g_test_add_func("/trainer-systolic/gradient-check", test_gradient_check);
  g_test_add_func("/trainer-systolic/feed-forward-equivalence", test_feed_forward_equivalence);
  g_test_add_func("/trainer-systolic/threads", test_threads);
  g_test_add_func("/trainer-systolic/refusals", test_refusals);
  g_test_add_func("/trainer-systolic/checkpoint", test_checkpoint);
  g_test_add_func("/trainer-systolic/activation-view", test_activation_view);
  return g_test_run();
}
