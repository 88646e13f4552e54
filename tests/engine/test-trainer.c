/* The step-based trainer: learning bars, determinism across thread counts
 * (1, 2 and 7: the spiral MLP, the digits CNN and the mixture of experts),
 * QAT at int4, the mixture of experts, NaN reports, early stopping,
 * checkpoints, step/epoch semantics and mismatched data. */
#include <glib/gstdio.h>
#include <stdio.h>

#include "train-test-util.h"
#include "train/trainer-internal.h"

static loom_dataset *split_part(loom_dataset *all, double fraction, bool want_test) {
  loom_dataset *train = NULL, *test = NULL;
  loom_error err = {0};
  g_assert_cmpint(loom_dataset_split(all, fraction, 7, &train, &test, &err), ==, 0);
  if (want_test) {
    loom_dataset_free(train);
    return test;
  }
  loom_dataset_free(test);
  return train;
}

static loom_train_config spiral_config(void) {
  loom_train_config cfg = loom_train_config_default();
  cfg.loss.kind = LOOM_LOSS_CROSS_ENTROPY;
  cfg.schedule = loom_schedule_constant(0.02);
  cfg.epochs = 20;
  cfg.batch_size = 16;
  cfg.seed = 11;
  return cfg;
}

static double spiral_accuracy(const loom_dtype *dtypes, int threads, double **losses, int64_t *steps) {
  loom_dataset *all = loom_gen_spiral(300, 2, 0.02, 1, NULL);
  loom_dataset *train = split_part(all, 0.25, false), *test = split_part(all, 0.25, true);
  int64_t hidden[2] = {16, 16};
  loom_net *net = tt_mlp(2, hidden, 2, "relu", 2, dtypes, 3);
  loom_train_config cfg = spiral_config();
  tt_result r = tt_train(net, train, test, &cfg, threads);
  if (losses) *losses = r.losses;
  else g_free(r.losses);
  if (steps) *steps = r.steps;
  loom_net_free(net);
  loom_dataset_free(train);
  loom_dataset_free(test);
  loom_dataset_free(all);
  return r.test_accuracy;
}

static void test_spiral_deterministic(void) {
  static const int threads[] = {1, 2, 7};
  double *losses[3] = {NULL, NULL, NULL}, acc[3];
  int64_t n[3] = {0, 0, 0};
  for (int t = 0; t < 3; t++) acc[t] = spiral_accuracy(NULL, threads[t], &losses[t], &n[t]);
  g_test_message("spiral MLP 2-16-16-2: test accuracy %.4f (1 thread) %.4f (2 threads) %.4f (7 threads)", acc[0],
                 acc[1], acc[2]);
  g_assert_cmpfloat(acc[0], >=, 0.97);
  g_assert_cmpint(n[0], ==, 20 * 29);
  for (int t = 1; t < 3; t++) {
    g_assert_cmpint(n[t], ==, n[0]);
    g_assert_cmpmem(losses[0], (size_t)n[0] * sizeof(double), losses[t], (size_t)n[t] * sizeof(double));
    g_assert_cmpfloat(acc[t], ==, acc[0]);
  }
  double first = 0, last = 0; /* mean batch loss of the first and the last epoch */
  for (int i = 0; i < 29; i++) {
    first += losses[0][i] / 29;
    last += losses[0][n[0] - 29 + i] / 29;
  }
  g_assert_cmpfloat(last, <, first / 5);
  for (int t = 0; t < 3; t++) g_free(losses[t]);
}

static void test_spiral_int4(void) {
  loom_dtype dt[2] = {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT4};
  double f32 = spiral_accuracy(NULL, 1, NULL, NULL), q4 = spiral_accuracy(dt, 1, NULL, NULL);
  g_test_message("spiral: float32 %.4f, int4 hidden layer %.4f", f32, q4);
  g_assert_cmpfloat(q4, >=, f32 - 0.02);
  g_assert_cmpfloat(q4, >=, 0.95);
}

/* QAT: after a step the packed int4 copy is the quantization of the updated master. */
static void test_qat_remorph(void) {
  loom_error err = {0};
  loom_dtype dt[1] = {LOOM_DTYPE_INT4};
  int64_t hidden[1] = {5};
  loom_net *net = tt_mlp(2, hidden, 1, "tanh", 2, dt, 5);
  loom_dataset *ds = loom_gen_spiral(10, 2, 0.0, 1, NULL);
  loom_train_config cfg = spiral_config();
  cfg.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
  cfg.schedule = loom_schedule_constant(0.5);
  loom_trainer *tr = loom_trainer_new(net, ds, NULL, &cfg, NULL, &err);
  g_assert_nonnull(tr);
  loom_weights *w = loom_layer_weights(loom_net_layer_at(net, (loom_coord){0, 0, 0, 0}), 0);
  float before[10];
  memcpy(before, loom_weights_master(w), sizeof before);
  loom_step_stats st;
  g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, 0);
  g_assert_true(memcmp(before, loom_weights_master(w), sizeof before) != 0);
  size_t nbytes = 0;
  const uint8_t *packed = loom_weights_packed(w, &nbytes);
  g_assert_nonnull(packed); /* re-morphed, not stale */
  int64_t ns = 0;
  const float *scales = loom_weights_scales(w, &ns);
  g_assert_cmpint(ns, ==, 5);
  uint8_t expect[16];
  g_assert_cmpuint(nbytes, <=, sizeof expect);
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_INT4, loom_weights_master(w), 5, 2, scales, 5, expect, &err), ==, 0);
  g_assert_true(memcmp(packed, expect, nbytes) == 0);
  g_assert_cmpfloat(st.layers[0].update_ratio, >, 0.0);
  g_assert_cmpint(st.layers[0].dtype, ==, LOOM_DTYPE_INT4);
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
}

static void test_digits_cnn(void) {
  loom_error err = {0};
  char *path = g_build_filename(g_getenv("LOOM_SOURCE_DIR"), "data",
                                "datasets", "optdigits-8x8.csv.gz", NULL);
  loom_dataset *all = loom_dataset_load_digits(path, true, &err);
  g_assert_nonnull(all);
  loom_dataset *train = split_part(all, 0.2, false), *test = split_part(all, 0.2, true);
  loom_net *net = NULL;
  g_assert_cmpint(loom_example_build("cnn", &net, &err), ==, 0);
  loom_train_config cfg = loom_train_config_default();
  g_assert_cmpint(loom_train_pick_loss(net, train, &cfg.loss, &err), ==, 0);
  g_assert_cmpint(cfg.loss.kind, ==, LOOM_LOSS_CROSS_ENTROPY);
  cfg.schedule = loom_schedule_constant(0.01);
  cfg.epochs = 5;
  tt_result r = tt_train(net, train, test, &cfg, 2);
  g_test_message("digits CNN: test accuracy %.4f after %lld epochs", r.test_accuracy, (long long)r.epochs);
  g_assert_cmpfloat(r.test_accuracy, >=, 0.95);
  g_free(r.losses);
  loom_net_free(net);
  loom_dataset_free(train);
  loom_dataset_free(test);
  loom_dataset_free(all);
  g_free(path);
}

/* Piecewise-linear regimes: the quadrant of (x0, x1) picks one of four linear
 * maps R⁴ → R³. A gate can route each quadrant to an expert; one expert
 * behind the same shared layers has to bend a single map around all four. */
static loom_dataset *regimes(int64_t n, uint64_t seed) {
  static const float maps[4][3][4] = {
    {{1, 0.5f, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}},
    {{-1, 0, 0.5f, 0}, {0, 1, 0, -1}, {0.5f, 0, 1, 0}},
    {{0, -1, 0, 0.5f}, {1, 0, -1, 0}, {0, 0.5f, 0, -1}},
    {{0, 0, -1, 1}, {-0.5f, 1, 0, 0}, {1, 0, 0, 0.5f}}};
  loom_shape s = loom_shape_1d(4);
  loom_dataset *ds = loom_dataset_new(n, &s, LOOM_TARGET_VECTOR, 3, 0, NULL);
  g_assert_nonnull(ds);
  GRand *rng = g_rand_new_with_seed((guint32)seed);
  for (int64_t i = 0; i < n; i++) {
    float *x = ds->inputs + 4 * i;
    for (int j = 0; j < 4; j++) x[j] = (float)g_rand_double_range(rng, -1, 1);
    int r = (x[0] > 0) * 2 + (x[1] > 0);
    for (int o = 0; o < 3; o++) {
      float acc = 0;
      for (int j = 0; j < 4; j++) acc += maps[r][o][j] * x[j];
      ds->targets[3 * i + o] = acc;
    }
  }
  g_rand_free(rng);
  return ds;
}

static double regime_mse(bool mixture) {
  loom_error err = {0};
  loom_net *net = NULL;
  g_assert_cmpint(loom_example_build("moe", &net, &err), ==, 0);
  loom_coord at = {0, 1, 0, 0};
  g_assert_cmpstr(loom_layer_type_name(loom_layer_get_type(loom_net_layer_at(net, at))), ==, "parallel");
  if (!mixture) { /* the same network with one expert in place of the mixture */
    loom_layer_free(loom_net_take(net, at, NULL, NULL));
    loom_layer *d = loom_layer_new_by_name("dense", &err);
    g_assert_cmpint(loom_layer_set_int(d, "in_features", 8, &err), ==, 0);
    g_assert_cmpint(loom_layer_set_int(d, "out_features", 8, &err), ==, 0);
    g_assert_cmpint(loom_net_place(net, at, d, &err), ==, 0);
    loom_diag *diags = NULL;
    g_assert_cmpint(loom_net_infer_shapes(net, 20240611, &diags), ==, 0);
    free(diags);
  }
  loom_dataset *train = regimes(1000, 1), *test = regimes(400, 2);
  loom_train_config cfg = loom_train_config_default();
  g_assert_cmpint(loom_train_pick_loss(net, train, &cfg.loss, &err), ==, 0);
  g_assert_cmpint(cfg.loss.kind, ==, LOOM_LOSS_MSE);
  cfg.schedule = loom_schedule_constant(0.01);
  cfg.epochs = 100;
  tt_result r = tt_train(net, train, test, &cfg, 1);
  g_free(r.losses);
  loom_net_free(net);
  loom_dataset_free(train);
  loom_dataset_free(test);
  return r.test_loss;
}

static void test_moe_needs_experts(void) {
  double moe = regime_mse(true), single = regime_mse(false);
  g_test_message("regimes: test MSE mixture %.4f, one expert %.4f", moe, single);
  g_assert_cmpfloat(moe, <, 0.4 * single);
  g_assert_cmpfloat(moe, <, 0.03);
}

/* Every trainable value of the net, in layer order (children and gates included). */
static float *net_weights(loom_net *net, int64_t *n_out) {
  GArray *all = g_array_new(FALSE, FALSE, sizeof(float));
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, i));
    for (int w = 0; w < loom_layer_n_weights(l); w++) {
      loom_weights *wt = loom_layer_weights(l, w);
      g_array_append_vals(all, loom_weights_master(wt), (guint)loom_weights_count(wt));
    }
  }
  *n_out = all->len;
  return (float *)g_array_free(all, FALSE);
}

/* A few dozen steps of an example network on 1, 2 and 7 threads: the losses
 * of every step and the weights at the end are bit-identical. */
static void check_example_deterministic(const char *example, loom_dataset *train, int steps) {
  static const int threads[] = {1, 2, 7};
  double *losses[3];
  float *weights[3];
  int64_t n_weights[3];
  for (int t = 0; t < 3; t++) {
    loom_error err = {0};
    loom_net *net = NULL;
    g_assert_cmpint(loom_example_build(example, &net, &err), ==, 0);
    loom_pool *pool = loom_pool_new(threads[t], &err);
    g_assert_nonnull(pool);
    loom_train_config cfg = loom_train_config_default();
    g_assert_cmpint(loom_train_pick_loss(net, train, &cfg.loss, &err), ==, 0);
    cfg.schedule = loom_schedule_constant(0.01);
    cfg.batch_size = 16;
    cfg.seed = 9;
    loom_trainer *tr = loom_trainer_new(net, train, NULL, &cfg, pool, &err);
    if (!tr) g_error("%s: %s", example, err.message);
    losses[t] = g_new(double, steps);
    for (int s = 0; s < steps; s++) {
      loom_step_stats st;
      if (loom_trainer_step(tr, &st, &err)) g_error("%s, step %d: %s", example, s + 1, err.message);
      losses[t][s] = st.loss;
    }
    weights[t] = net_weights(net, &n_weights[t]);
    loom_trainer_free(tr);
    loom_pool_free(pool);
    loom_net_free(net);
  }
  g_test_message("%s: loss %.6f → %.6f over %d steps, %lld weights", example, losses[0][0], losses[0][steps - 1],
                 steps, (long long)n_weights[0]);
  g_assert_cmpfloat(losses[0][steps - 1], <, losses[0][0]); /* it did train */
  for (int t = 1; t < 3; t++) {
    g_assert_cmpmem(losses[0], (size_t)steps * sizeof(double), losses[t], (size_t)steps * sizeof(double));
    g_assert_cmpmem(weights[0], (size_t)n_weights[0] * sizeof(float), weights[t],
                    (size_t)n_weights[t] * sizeof(float));
  }
  for (int t = 0; t < 3; t++) {
    g_free(losses[t]);
    g_free(weights[t]);
  }
}

static void test_examples_deterministic(void) {
  loom_error err = {0};
  char *path = g_build_filename(g_getenv("LOOM_SOURCE_DIR"), "data", "datasets", "optdigits-8x8.csv.gz", NULL);
  loom_dataset *digits = loom_dataset_load_digits(path, true, &err);
  g_assert_nonnull(digits);
  loom_dataset *train = split_part(digits, 0.5, false);
  check_example_deterministic("cnn", train, 30);
  loom_dataset *moe = regimes(480, 3);
  check_example_deterministic("moe", moe, 30);
  loom_dataset_free(moe);
  loom_dataset_free(train);
  loom_dataset_free(digits);
  g_free(path);
}

static loom_dataset *tiny_set(void) {
  loom_shape s = loom_shape_1d(2);
  loom_dataset *ds = loom_dataset_new(4, &s, LOOM_TARGET_CLASS, 1, 2, NULL);
  const float x[8] = {0.1f, 0.1f, 1, 1, -1, 0.5f, 0.2f, -0.3f};
  memcpy(ds->inputs, x, sizeof x);
  ds->labels[1] = ds->labels[3] = 1;
  return ds;
}

static void test_nan_activation_report(void) {
  loom_error err = {0};
  loom_net *net = tt_mlp(2, NULL, 0, "relu", 1, NULL, 1);
  loom_weights *w = loom_layer_weights(loom_net_layer_at(net, (loom_coord){0, 0, 0, 0}), 0);
  loom_weights_master(w)[0] = loom_weights_master(w)[1] = 3e38f;
  loom_weights_touch(w);
  loom_dataset *ds = tiny_set();
  loom_train_config cfg = loom_train_config_default();
  cfg.loss.kind = LOOM_LOSS_BCE_LOGITS;
  cfg.shuffle = false;
  cfg.batch_size = 4;
  loom_trainer *tr = loom_trainer_new(net, ds, NULL, &cfg, NULL, &err);
  g_assert_nonnull(tr);
  loom_step_stats st;
  g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==,
                  "training stopped at step 1 (epoch 1, batch 1): NaN or infinity first appeared in the output of "
                  "layer dense at (0,0,0,0) (sample 1, element 0)");
  const loom_step_stats *last = loom_trainer_last_step(tr);
  g_assert_cmpint(last->nonfinite, ==, LOOM_NONFINITE_ACTIVATION);
  g_assert_true(last->nonfinite_has_coord);
  g_assert_cmpint(last->nonfinite_at.x, ==, 0);
  g_assert_true(loom_trainer_finished(tr));
  g_assert_cmpint(loom_trainer_steps(tr), ==, 0);
  g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, LOOM_ERR_CANCELLED);
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
}

static void test_nan_weights_report(void) {
  loom_error err = {0};
  int64_t hidden[1] = {3};
  loom_net *net = tt_mlp(2, hidden, 1, "tanh", 1, NULL, 1);
  loom_dataset *ds = tiny_set();
  loom_train_config cfg = loom_train_config_default();
  cfg.loss.kind = LOOM_LOSS_BCE_LOGITS;
  cfg.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
  cfg.schedule = loom_schedule_constant(1e300);
  cfg.shuffle = false;
  cfg.batch_size = 4;
  loom_trainer *tr = loom_trainer_new(net, ds, NULL, &cfg, NULL, &err);
  g_assert_nonnull(tr);
  g_assert_cmpint(loom_trainer_step(tr, NULL, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_true(g_str_has_prefix(err.message, "training stopped at step 1 (epoch 1, batch 1): NaN or infinity first "
                                              "appeared in the updated ‘weight’ of layer dense at (0,0,0,0) (element "));
  g_assert_cmpint(loom_trainer_last_step(tr)->nonfinite, ==, LOOM_NONFINITE_WEIGHTS);
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
}

static void test_steps_and_epochs(void) {
  loom_error err = {0};
  int64_t hidden[1] = {4};
  loom_net *net = tt_mlp(2, hidden, 1, "tanh", 2, NULL, 2);
  loom_dataset *ds = loom_gen_spiral(5, 2, 0.0, 1, NULL); /* 10 samples */
  loom_train_config cfg = spiral_config();
  cfg.batch_size = 4;
  cfg.epochs = 2;
  loom_trainer *tr = loom_trainer_new(net, ds, ds, &cfg, NULL, &err);
  g_assert_nonnull(tr);
  g_assert_cmpint(loom_trainer_batches_per_epoch(tr), ==, 3);
  g_assert_null(loom_trainer_last_epoch(tr));
  int64_t sizes[3] = {4, 4, 2};
  for (int e = 0; e < 2; e++)
    for (int i = 0; i < 3; i++) {
      loom_step_stats st;
      g_assert_false(loom_trainer_finished(tr));
      g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, 0);
      g_assert_cmpint(st.step, ==, e * 3 + i + 1);
      g_assert_cmpint(st.epoch, ==, e);
      g_assert_cmpint(st.batch_index, ==, i);
      g_assert_cmpint(st.batch_size, ==, sizes[i]);
      g_assert_cmpint(st.epoch_end, ==, i == 2);
      g_assert_cmpint(st.n_layers, ==, 3);
      g_assert_cmpint(st.layers[2].at.x, ==, 2);
      g_assert_cmpstr(st.layers[1].type_name, ==, "tanh");
      g_assert_false(st.layers[1].weighted);
      g_assert_cmpfloat(st.layers[0].weight_norm, >, 0.0);
      g_assert_cmpfloat(st.layers[2].out_grad_norm, >, 0.0);
    }
  const loom_epoch_stats *e = loom_trainer_last_epoch(tr);
  g_assert_nonnull(e);
  g_assert_cmpint(e->epoch, ==, 1);
  g_assert_cmpint(e->train.samples, ==, 10);
  g_assert_true(e->has_test);
  g_assert_cmpint(e->test.samples, ==, 10);
  g_assert_true(e->stop);
  g_assert_true(loom_trainer_finished(tr));
  g_assert_cmpint(loom_trainer_step(tr, NULL, &err), ==, LOOM_ERR_CANCELLED);
  g_assert_cmpstr(err.message, ==, "training has finished after 6 steps (epoch 2)");
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
}

static void test_early_stopping_and_checkpoint(void) {
  loom_error err = {0};
  int64_t hidden[1] = {8};
  loom_net *net = tt_mlp(2, hidden, 1, "tanh", 2, NULL, 2);
  loom_dataset *all = loom_gen_spiral(40, 2, 0.3, 1, NULL);
  loom_dataset *train = split_part(all, 0.5, false), *test = split_part(all, 0.5, true);
  loom_train_config cfg = spiral_config();
  cfg.schedule = loom_schedule_constant(0.5); /* far too fast: the test loss stops improving */
  cfg.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
  cfg.epochs = 200;
  cfg.patience = 3;
  cfg.restore_best = true;
  loom_trainer *tr = loom_trainer_new(net, train, test, &cfg, NULL, &err);
  g_assert_nonnull(tr);
  loom_epoch_stats e;
  double best = INFINITY;
  int64_t epochs = 0;
  while (!loom_trainer_finished(tr)) {
    g_assert_cmpint(loom_trainer_run_epoch(tr, &e, &err), ==, 0);
    if (e.test.loss < best) best = e.test.loss;
    epochs++;
  }
  g_assert_cmpint(epochs, <, 200);
  g_assert_cmpint(loom_trainer_best_epoch(tr), ==, epochs - 1 - 3);
  loom_eval_result now;
  g_assert_cmpint(loom_evaluate(net, NULL, test, &cfg.loss, 7, &now, &err), ==, 0);
  g_assert_cmpfloat(fabs(now.loss - best), <, 1e-6 * fmax(1.0, best)); /* best weights restored */
  char *dir = g_dir_make_tmp("loom-trainer-XXXXXX", NULL);
  char *path = g_build_filename(dir, "ckpt.loom", NULL);
  g_assert_cmpint(loom_trainer_save_checkpoint(tr, path, &err), ==, 0);
  loom_net *back = NULL;
  g_assert_cmpint(loom_model_load(path, LOOM_MODEL_STRICT, &back, &err), ==, 0);
  loom_eval_result again;
  g_assert_cmpint(loom_evaluate(back, NULL, test, &cfg.loss, 7, &again, &err), ==, 0);
  g_assert_cmpfloat(again.loss, ==, now.loss);
  g_assert_cmpint(again.correct, ==, now.correct);
  loom_net_free(back);
  g_remove(path);
  g_rmdir(dir);
  g_free(path);
  g_free(dir);
  loom_trainer_free(tr);
  loom_dataset_free(train);
  loom_dataset_free(test);
  loom_dataset_free(all);
  loom_net_free(net);
}

static void test_mismatched_data(void) {
  loom_error err = {0};
  int64_t hidden[1] = {4};
  loom_dataset *xor = loom_gen_xor(20, 0.0, 1, NULL);
  loom_net *three = tt_mlp(2, hidden, 1, "tanh", 3, NULL, 1);
  loom_loss_spec spec;
  g_assert_cmpint(loom_train_pick_loss(three, xor, &spec, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==,
                  "the model gives 3 outputs per sample but the data has 2 classes (expected 2 outputs, or 1 for two "
                  "classes)");
  loom_train_config cfg = loom_train_config_default();
  g_assert_null(loom_trainer_new(three, xor, NULL, &cfg, NULL, &err));
  g_assert_cmpstr(err.message, ==,
                  "training data: the model gives 3 outputs per sample but the data has 2 classes (expected 2 outputs "
                  "for cross_entropy)");
  loom_net *wide = tt_mlp(3, hidden, 1, "tanh", 2, NULL, 1);
  g_assert_null(loom_trainer_new(wide, xor, NULL, &cfg, NULL, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==,
                  "training data: the model takes inputs of shape [3] (3 values) but the data's samples have shape "
                  "[2] (2 values)");
  loom_dataset *sine = loom_gen_sine(10, 2, 0.0, 1, NULL);
  loom_net *two = tt_mlp(2, hidden, 1, "tanh", 2, NULL, 1);
  g_assert_null(loom_trainer_new(two, sine, NULL, &cfg, NULL, &err));
  g_assert_cmpstr(err.message, ==,
                  "training data: the loss cross_entropy needs class labels but the data has target vectors (use mse)");
  cfg.batch_size = 0;
  g_assert_null(loom_trainer_new(two, xor, NULL, &cfg, NULL, &err));
  g_assert_cmpstr(err.message, ==, "batch_size must be at least 1, got 0");
  loom_net_free(three);
  loom_net_free(wide);
  loom_net_free(two);
  loom_dataset_free(sine);
  loom_dataset_free(xor);
}

/* dense 2→2, then `last` (a type name, with kmeans' output mode when given). */
static loom_net *ending_in(const char *last, const char *kmeans_output) {
  loom_error err = {0};
  loom_net *net = tt_mlp(2, NULL, 0, "tanh", 2, NULL, 1);
  g_assert_cmpint(loom_net_resize(net, 1, 1, 2, 1, &err), ==, 0);
  loom_layer *l = loom_layer_new_by_name(last, &err);
  g_assert_nonnull(l);
  if (kmeans_output) {
    g_assert_cmpint(loom_layer_set_int(l, "n_clusters", 2, &err), ==, 0);
    g_assert_cmpint(loom_layer_set_enum(l, "output", kmeans_output, &err), ==, 0);
  }
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 1, 0}, l, &err), ==, 0);
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(net, 1, &diags), ==, 0);
  free(diags);
  loom_shape out = loom_net_output_shape(net);
  g_assert_cmpint(loom_shape_numel(&out), ==, 2);
  return net;
}

/* Steps of fewer than TRAIN_SERIAL_STEP_FLOPS forward operations leave the
 * pool unused (trainer.c); larger ones use it; 0 (what this file's main sets)
 * keeps it for every step. */
static void test_small_step_serial(void) {
  loom_dataset *train = loom_gen_spiral(256, 2, 0.02, 1, NULL);
  loom_error err = {0};
  loom_pool *pool = loom_pool_new(2, &err);
  g_assert_nonnull(pool);
  int64_t small_hidden[1] = {8}, large_hidden[2] = {256, 256};
  loom_net *small = tt_mlp(2, small_hidden, 1, "relu", 2, NULL, 3);
  loom_net *large = tt_mlp(2, large_hidden, 2, "relu", 2, NULL, 3);
  loom_train_config cfg = spiral_config();
  cfg.batch_size = 64;
  /* forward a step at batch 64: 2-8-2 about 7 kFLOP, 2-256-256-2 about 8.5 MFLOP */
  g_assert_cmpfloat((double)loom_net_flops(small) * 64, <, TRAIN_SERIAL_STEP_FLOPS);
  g_assert_cmpfloat((double)loom_net_flops(large) * 64, >=, TRAIN_SERIAL_STEP_FLOPS);
  const double thresholds[2] = {TRAIN_SERIAL_STEP_FLOPS, 0};
  for (int i = 0; i < 2; i++) {
    train_set_serial_step_flops(thresholds[i]);
    loom_trainer *ts = loom_trainer_new(small, train, NULL, &cfg, pool, &err);
    loom_trainer *tl = loom_trainer_new(large, train, NULL, &cfg, pool, &err);
    g_assert_nonnull(ts);
    g_assert_nonnull(tl);
    g_assert_true(train_step_pool(ts) == (i == 0 ? NULL : pool));
    g_assert_true(train_step_pool(tl) == pool);
    loom_step_stats st;
    g_assert_cmpint(loom_trainer_step(ts, &st, &err), ==, LOOM_OK);
    loom_trainer_free(ts);
    loom_trainer_free(tl);
  }
  train_set_serial_step_flops(0);
  loom_net_free(small);
  loom_net_free(large);
  loom_pool_free(pool);
  loom_dataset_free(train);
}

static void test_pick_loss(void) {
  loom_error err = {0};
  loom_net *xor_net = NULL, *spiral_net = NULL;
  g_assert_cmpint(loom_example_build("xor", &xor_net, &err), ==, 0);
  g_assert_cmpint(loom_example_build("spiral", &spiral_net, &err), ==, 0);
  loom_dataset *xor = loom_gen_xor(8, 0.0, 1, NULL), *sp = loom_gen_spiral(4, 2, 0.0, 1, NULL);
  loom_loss_spec s;
  g_assert_cmpint(loom_train_pick_loss(xor_net, xor, &s, &err), ==, 0);
  g_assert_cmpint(s.kind, ==, LOOM_LOSS_MSE); /* ends in a sigmoid: outputs are probabilities */
  g_assert_cmpint(loom_train_pick_loss(spiral_net, sp, &s, &err), ==, 0);
  g_assert_cmpint(s.kind, ==, LOOM_LOSS_CROSS_ENTROPY);
  int64_t hidden[1] = {3};
  loom_net *logit = tt_mlp(2, hidden, 1, "tanh", 1, NULL, 1);
  g_assert_cmpint(loom_train_pick_loss(logit, xor, &s, &err), ==, 0);
  g_assert_cmpint(s.kind, ==, LOOM_LOSS_BCE_LOGITS);
  /* Outputs that are already distributions get mse: the registry says which
   * (every softmax-family type; kmeans only with output = probabilities). */
  static const struct { const char *type, *kmeans_output; loom_loss_kind kind; } ends[] = {
    {"softmax", NULL, LOOM_LOSS_MSE},          {"sparsemax", NULL, LOOM_LOSS_MSE},
    {"gumbel_softmax", NULL, LOOM_LOSS_MSE},   {"kmeans", "probabilities", LOOM_LOSS_MSE},
    {"kmeans", "features", LOOM_LOSS_CROSS_ENTROPY}, {"tanh", NULL, LOOM_LOSS_CROSS_ENTROPY},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(ends); i++) {
    loom_net *net = ending_in(ends[i].type, ends[i].kmeans_output);
    g_assert_cmpint(loom_train_pick_loss(net, sp, &s, &err), ==, 0);
    g_test_message("ending in %s %s: %s", ends[i].type, ends[i].kmeans_output ? ends[i].kmeans_output : "",
                   loom_loss_name(s.kind));
    g_assert_cmpint(s.kind, ==, ends[i].kind);
    loom_net_free(net);
  }
  loom_net_free(xor_net);
  loom_net_free(spiral_net);
  loom_net_free(logit);
  loom_dataset_free(xor);
  loom_dataset_free(sp);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  /* These tests compare thread counts on small networks: the pool even for
   * steps a trainer would otherwise run on its calling thread. */
  train_set_serial_step_flops(0);
  g_test_add_func("/train/trainer/spiral-deterministic", test_spiral_deterministic);
  g_test_add_func("/train/trainer/spiral-int4", test_spiral_int4);
  g_test_add_func("/train/trainer/qat-remorph", test_qat_remorph);
  g_test_add_func("/train/trainer/digits-cnn", test_digits_cnn);
  g_test_add_func("/train/trainer/moe-needs-experts", test_moe_needs_experts);
  g_test_add_func("/train/trainer/examples-deterministic", test_examples_deterministic);
  g_test_add_func("/train/trainer/nan-activation", test_nan_activation_report);
  g_test_add_func("/train/trainer/nan-weights", test_nan_weights_report);
  g_test_add_func("/train/trainer/steps-and-epochs", test_steps_and_epochs);
  g_test_add_func("/train/trainer/early-stopping-checkpoint", test_early_stopping_and_checkpoint);
  g_test_add_func("/train/trainer/mismatched-data", test_mismatched_data);
  g_test_add_func("/train/trainer/pick-loss", test_pick_loss);
  g_test_add_func("/train/trainer/small-step-serial", test_small_step_serial);
  return g_test_run();
}
