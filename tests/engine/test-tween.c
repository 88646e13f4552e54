/* Target propagation ("tween"): learning bars on circles and xor (float32
 * and a ternary hidden layer), the chain-rule variant, the budget threshold,
 * explosion damping and recovery, determinism, statistics and links. */
#include "train-test-util.h"
#include "train/trainer-internal.h"

static loom_train_config tween_config(bool chain) {
  loom_train_config cfg = loom_train_config_default();
  cfg.method = LOOM_TRAIN_TWEEN;
  cfg.loss.kind = LOOM_LOSS_BCE_LOGITS;
  cfg.schedule = loom_schedule_constant(1.0);
  cfg.epochs = 30;
  cfg.batch_size = 16;
  cfg.seed = 5;
  cfg.tween.chain_rule = chain;
  return cfg;
}

static double chain_lr = 1.0;

static double tween_accuracy(const char *data, loom_dtype hidden_dtype, bool chain, int threads, double **losses) {
  loom_error err = {0};
  loom_dataset *all = strcmp(data, "circles") == 0 ? loom_gen_circles(800, 0.5, 0.05, 1, &err)
                                                   : loom_gen_xor(800, 0.02, 1, &err);
  g_assert_nonnull(all);
  loom_dataset *train = NULL, *test = NULL;
  g_assert_cmpint(loom_dataset_split(all, 0.25, 7, &train, &test, &err), ==, 0);
  int64_t hidden[1] = {16};
  loom_dtype dt[1] = {hidden_dtype};
  loom_net *net = tt_mlp(2, hidden, 1, "tanh", 1, dt, 3);
  loom_train_config cfg = tween_config(chain);
  if (chain) cfg.schedule.base_lr = chain_lr;
  tt_result r = tt_train(net, train, test, &cfg, threads);
  if (losses) *losses = r.losses;
  else g_free(r.losses);
  loom_net_free(net);
  loom_dataset_free(train);
  loom_dataset_free(test);
  loom_dataset_free(all);
  return r.test_accuracy;
}

static void test_circles_xor(void) {
  const char *sets[2] = {"circles", "xor"};
  loom_dtype dts[2] = {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_TERNARY};
  for (int s = 0; s < 2; s++)
    for (int d = 0; d < 2; d++) {
      double acc = tween_accuracy(sets[s], dts[d], false, 1, NULL);
      g_test_message("tween %s, %s hidden layer: test accuracy %.4f", sets[s], loom_dtype_name(dts[d]), acc);
      g_assert_cmpfloat(acc, >=, 0.90);
    }
}

static void test_binary_hidden(void) {
  double acc = tween_accuracy("circles", LOOM_DTYPE_BINARY, false, 1, NULL);
  g_test_message("tween circles, binary hidden layer: test accuracy %.4f", acc);
  g_assert_cmpfloat(acc, >=, 0.85);
}

static void test_chain_rule(void) {
  chain_lr = 0.1; /* the chain-rule gaps are gradients (with momentum 0.9): a smaller η */
  double c = tween_accuracy("circles", LOOM_DTYPE_FLOAT32, true, 1, NULL);
  double x = tween_accuracy("xor", LOOM_DTYPE_TERNARY, true, 1, NULL);
  g_test_message("chain-rule tween: circles %.4f, xor (ternary) %.4f", c, x);
  g_assert_cmpfloat(c, >=, 0.90);
  g_assert_cmpfloat(x, >=, 0.90);
}

static void test_deterministic(void) {
  static const int threads[] = {1, 2, 7};
  double *losses[3], acc[3];
  for (int t = 0; t < 3; t++) acc[t] = tween_accuracy("xor", LOOM_DTYPE_FLOAT32, false, threads[t], &losses[t]);
  for (int t = 1; t < 3; t++) {
    g_assert_cmpfloat(acc[t], ==, acc[0]);
    g_assert_cmpmem(losses[0], 38 * 30 * sizeof(double), losses[t], 38 * 30 * sizeof(double));
  }
  for (int t = 0; t < 3; t++) g_free(losses[t]);
}

static loom_trainer *small_trainer(loom_net **net, loom_dataset **ds, loom_train_config *cfg) {
  loom_error err = {0};
  int64_t hidden[1] = {6};
  *net = tt_mlp(2, hidden, 1, "tanh", 1, NULL, 4);
  *ds = cfg->loss.kind == LOOM_LOSS_MSE ? loom_gen_sine(64, 2, 0.0, 2, &err) : loom_gen_circles(64, 0.5, 0.05, 2, &err);
  loom_trainer *tr = loom_trainer_new(*net, *ds, NULL, cfg, NULL, &err);
  if (!tr) g_error("%s", err.message);
  return tr;
}

/* Threshold 1 is above every budget but a perfect one: weighted layers skip and stay unchanged. */
static void test_budget_threshold(void) {
  loom_error err = {0};
  loom_net *net;
  loom_dataset *ds;
  loom_train_config cfg = tween_config(false);
  cfg.tween.threshold = 1.0;
  loom_trainer *tr = small_trainer(&net, &ds, &cfg);
  loom_weights *w = loom_layer_weights(loom_net_layer_at(net, (loom_coord){0, 0, 0, 0}), 0);
  float before[12];
  memcpy(before, loom_weights_master(w), sizeof before);
  loom_step_stats st;
  g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, 0);
  g_assert_cmpint(st.layers_skipped, ==, 2);
  for (int k = 0; k < 3; k++) {
    g_assert_true(st.layers[k].has_target);
    g_assert_cmpfloat(st.layers[k].budget, <, 1.0);
    g_assert_cmpfloat(st.layers[k].budget, >, -1.0);
    g_assert_cmpfloat(st.layers[k].gap_rms, >, 0.0);
  }
  g_assert_true(st.layers[0].skipped && st.layers[2].skipped);
  g_assert_false(st.layers[1].skipped); /* tanh: nothing to update */
  g_assert_cmpfloat(st.layers[0].update_norm, ==, 0.0);
  g_assert_true(memcmp(before, loom_weights_master(w), sizeof before) == 0);
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
}

/* Regression (mse, so the output gap is unbounded): after 30 calm steps the
 * output layer's weights are scaled ×60, the next gap explodes; the
 * explosion is counted, the layer damped and skipped, and once the gaps
 * settle the damping recovers to 1. */
static void test_explosion_recovery(void) {
  loom_error err = {0};
  loom_net *net;
  loom_dataset *ds;
  loom_train_config cfg = tween_config(false);
  cfg.loss.kind = LOOM_LOSS_MSE;
  cfg.schedule = loom_schedule_constant(0.05);
  cfg.batch_size = 8;
  cfg.epochs = 100;
  loom_trainer *tr = small_trainer(&net, &ds, &cfg);
  loom_step_stats st;
  int64_t first_explosion = -1;
  for (int i = 0; i < 30; i++) g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, 0);
  g_assert_cmpint(st.explosions, ==, 0);
  loom_weights *w = loom_layer_weights(loom_net_layer_at(net, (loom_coord){0, 0, 2, 0}), 0);
  for (int64_t i = 0; i < loom_weights_count(w); i++) loom_weights_master(w)[i] *= 60.0f;
  loom_weights_touch(w);
  double min_scale = 1.0;
  for (int i = 0; i < 400; i++) {
    g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, 0);
    if (st.explosions > 0 && first_explosion < 0) first_explosion = st.step;
    for (int k = 0; k < st.n_layers; k++) min_scale = fmin(min_scale, st.layers[k].rate_scale);
  }
  g_test_message("first explosion at step %lld, explosions %lld, recoveries %lld, lowest rate scale %g",
                 (long long)first_explosion, (long long)st.explosions, (long long)st.recoveries, min_scale);
  g_assert_cmpint(first_explosion, ==, 31);
  g_assert_cmpint(st.explosions, >=, 1);
  g_assert_cmpfloat(min_scale, <, 1.0);
  g_assert_cmpint(st.recoveries, >=, 1);
  for (int k = 0; k < st.n_layers; k++) g_assert_cmpfloat(st.layers[k].rate_scale, ==, 1.0);
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
}

/* Links: targets flow back through an add link into both producers. */
static void test_links_get_targets(void) {
  loom_error err = {0};
  loom_net *net = NULL;
  g_assert_cmpint(loom_example_build("hop", &net, &err), ==, 0);
  loom_dataset *ds = loom_gen_clusters(64, 4, 8, 0.1, 3, &err);
  loom_train_config cfg = tween_config(false);
  cfg.loss.kind = LOOM_LOSS_CROSS_ENTROPY;
  cfg.epochs = 30;
  cfg.schedule = loom_schedule_constant(0.05);
  loom_trainer *tr = loom_trainer_new(net, ds, ds, &cfg, NULL, &err);
  g_assert_nonnull(tr);
  loom_step_stats st;
  g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, 0);
  for (int k = 0; k < st.n_layers; k++) g_assert_true(st.layers[k].has_target);
  loom_epoch_stats e;
  while (!loom_trainer_finished(tr)) g_assert_cmpint(loom_trainer_run_epoch(tr, &e, &err), ==, 0);
  g_test_message("hop network on clusters, tween: accuracy %.4f", e.test.accuracy);
  g_assert_cmpfloat(e.test.accuracy, >=, 0.9);
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
}

static void test_config_validation(void) {
  loom_error err = {0};
  loom_train_config cfg = tween_config(false);
  cfg.tween.momentum = 1.0;
  g_assert_cmpint(loom_train_config_validate(&cfg, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "tween.momentum must lie in [0, 1), got 1");
  cfg = tween_config(false);
  cfg.tween.explosion_factor = 1.0;
  g_assert_cmpint(loom_train_config_validate(&cfg, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "tween.explosion_factor must be above 1, got 1");
  loom_train_method m;
  g_assert_cmpint(loom_train_method_from_name("tween", &m, &err), ==, 0);
  g_assert_cmpint(m, ==, LOOM_TRAIN_TWEEN);
  g_assert_cmpint(loom_train_method_from_name("hebb", &m, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "unknown training method “hebb” (expected backprop or tween)");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  /* These tests compare thread counts on small networks: the pool even for
   * steps a trainer would otherwise run on its calling thread. */
  train_set_serial_step_flops(0);
  g_test_add_func("/train/tween/circles-xor", test_circles_xor);
  g_test_add_func("/train/tween/binary-hidden", test_binary_hidden);
  g_test_add_func("/train/tween/chain-rule", test_chain_rule);
  g_test_add_func("/train/tween/deterministic", test_deterministic);
  g_test_add_func("/train/tween/budget-threshold", test_budget_threshold);
  g_test_add_func("/train/tween/explosion-recovery", test_explosion_recovery);
  g_test_add_func("/train/tween/links", test_links_get_targets);
  g_test_add_func("/train/tween/config", test_config_validation);
  return g_test_run();
}
