/*
 * The gallery's examples train with the settings they open with
 * (loom_example_settings), as the workbench's Play does: every example runs
 * a few steps without an error or a non-finite loss, and the three
 * Playground examples, the systolic feedback example, the multi-agent and
 * the multi-modal example reach a fixed accuracy within their configured
 * epochs, the same for every run of the seed (docs/training-settings.md "The
 * Playground examples").
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "loom/model.h"
#include "loom/settings.h"
#include "loom/train.h"

static char *datasets_dir(void) {
  return g_build_filename(g_getenv("LOOM_SOURCE_DIR") ? g_getenv("LOOM_SOURCE_DIR") : ".", "data", "datasets", NULL);
}

typedef struct {
  loom_net *net;
  loom_train_settings *settings;
  loom_dataset *train, *test;
  loom_trainer *trainer;
} run;

/* The example with its settings, ready to step, exactly as the workbench opens it. */
static void run_open(run *r, const char *name) {
  loom_error err = {0};
  char *dir = datasets_dir();
  loom_train_config cfg;
  memset(r, 0, sizeof *r);
  if (loom_example_build(name, &r->net, &err) || loom_example_settings(name, &r->settings, &err) ||
      loom_train_settings_validate(r->settings, &err) ||
      loom_train_settings_make_data(r->settings, r->net, dir, &r->train, &r->test, &err) ||
      loom_train_settings_make_config(r->settings, r->net, r->train, &cfg, &err))
    g_error("example %s: %s", name, err.message);
  r->trainer = loom_trainer_new(r->net, r->train, r->test, &cfg, NULL, &err);
  if (!r->trainer) g_error("example %s: %s", name, err.message);
  g_free(dir);
}

static void run_close(run *r) {
  loom_trainer_free(r->trainer);
  loom_dataset_free(r->train);
  loom_dataset_free(r->test);
  loom_train_settings_free(r->settings);
  loom_net_free(r->net);
}

/* Every example, systolic ones too (backprop through their ticks): the first
 * steps succeed and every loss is finite. */
static void test_every_example_steps(void) {
  for (int i = 0; i < loom_example_count(); i++) {
    const char *name = loom_example_name(i);
    run r;
    run_open(&r, name);
    for (int s = 0; s < 5 && !loom_trainer_finished(r.trainer); s++) {
      loom_step_stats st;
      loom_error err = {0};
      int rc = loom_trainer_step(r.trainer, &st, &err);
      if (rc) g_error("example %s, step %d: %s", name, s + 1, err.message);
      if (!isfinite(st.loss)) g_error("example %s, step %d: the loss is %g", name, s + 1, st.loss);
    }
    g_assert_cmpint(loom_trainer_steps(r.trainer), ==, 5);
    run_close(&r);
  }
}

typedef struct {
  double loss, test_accuracy, train_accuracy;
  int64_t steps;
} outcome;

static outcome run_to_end(run *r, const char *name) {
  loom_epoch_stats e = {0};
  loom_error err = {0};
  while (!loom_trainer_finished(r->trainer))
    if (loom_trainer_run_epoch(r->trainer, &e, &err)) g_error("example %s: %s", name, err.message);
  g_assert_true(e.has_test);
  return (outcome){e.test.loss, e.test.accuracy, e.train.accuracy, loom_trainer_steps(r->trainer)};
}

static outcome train_to_end(const char *name) {
  run r;
  run_open(&r, name);
  outcome o = run_to_end(&r, name);
  /* Playground: 250 training points on batches of 10, for the configured epochs */
  g_assert_cmpint(r.settings->batch, ==, 10);
  g_assert_cmpfloat(r.settings->lr, ==, 0.03);
  g_assert_cmpstr(r.settings->optimizer, ==, "sgd");
  g_assert_cmpint(r.train->n, ==, 250);
  g_assert_cmpint(r.test->n, ==, 250);
  g_assert_cmpint(o.steps, ==, 25 * r.settings->epochs);
  run_close(&r);
  return o;
}

static void check_playground(const char *name, double min_test_accuracy) {
  outcome a = train_to_end(name), b = train_to_end(name);
  g_test_message("%s: test accuracy %.4f, test loss %.4f, train accuracy %.4f after %lld steps", name,
                 a.test_accuracy, a.loss, a.train_accuracy, (long long)a.steps);
  /* deterministic for the seed: a second run is the same to the bit */
  g_assert_true(memcmp(&a, &b, sizeof a) == 0);
  if (!(a.test_accuracy >= min_test_accuracy))
    g_error("%s reaches a test accuracy of %g, expected at least %g", name, a.test_accuracy, min_test_accuracy);
}

/* The thresholds sit well below what each net reaches (see the test log)
 * and far above chance (0.5): the net has learnt the circles. */
static void test_playground(void) { check_playground("playground", 0.95); }
static void test_playground_int4(void) { check_playground("playground-int4", 0.95); }
static void test_playground_skip(void) { check_playground("playground-skip", 0.95); }

/* Trains the example to the end of its configured epochs twice (the same to
 * the bit) and checks its test accuracy. */
static outcome check_trains(const char *name, double min_test_accuracy, loom_loss_kind loss) {
  outcome o[2];
  for (int i = 0; i < 2; i++) {
    run r;
    run_open(&r, name);
    g_assert_cmpint(loom_trainer_config(r.trainer)->loss.kind, ==, loss);
    o[i] = run_to_end(&r, name);
    run_close(&r);
  }
  g_test_message("%s: test accuracy %.4f, test loss %.4f after %lld steps", name, o[0].test_accuracy, o[0].loss,
                 (long long)o[0].steps);
  g_assert_true(memcmp(&o[0], &o[1], sizeof o[0]) == 0);
  if (!(o[0].test_accuracy >= min_test_accuracy))
    g_error("%s reaches a test accuracy of %g, expected at least %g", name, o[0].test_accuracy, min_test_accuracy);
  return o[0];
}

/* The feedback example trains by backprop through its 8 ticks (its settings)
 * on two clusters, far above chance (0.5). */
static void test_feedback(void) {
  run r;
  run_open(&r, "feedback");
  g_assert_cmpint(loom_trainer_config(r.trainer)->ticks, ==, 8);
  run_close(&r);
  check_trains("feedback", 0.9, LOOM_LOSS_CROSS_ENTROPY);
}

/* Three agents × four actions on the recall task: the grid softmax's rows
 * train through the multi-head NLL (chance per head: 0.25). */
static void test_multi_agent(void) { check_trains("multi-agent", 0.9, LOOM_LOSS_MULTI_HEAD_NLL); }

/* The conv2d, LSTM and attention views of a digit, concatenated (chance: 0.1). */
static void test_multi_modal(void) { check_trains("multi-modal", 0.9, LOOM_LOSS_CROSS_ENTROPY); }

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/examples/every-example-steps", test_every_example_steps);
  g_test_add_func("/examples/playground", test_playground);
  g_test_add_func("/examples/playground-int4", test_playground_int4);
  g_test_add_func("/examples/playground-skip", test_playground_skip);
  g_test_add_func("/examples/feedback", test_feedback);
  g_test_add_func("/examples/multi-agent", test_multi_agent);
  g_test_add_func("/examples/multi-modal", test_multi_modal);
  return g_test_run();
}
