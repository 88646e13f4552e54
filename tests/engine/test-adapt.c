/* The adaptation tracker (loom/adapt.h) on synthetic runs: a steady run
 * flags nothing, an accuracy drop flags exactly one task change within the
 * short window after it and one recovery after the accuracy comes back,
 * the regression path (no accuracy) works on the loss alone, and bad
 * configurations are refused naming the field. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "loom/loom.h"

/* A deterministic wobble so that the windows never see a constant. */
static double wobble(int64_t step) { return 0.01 * sin(0.7 * (double)step); }

typedef struct events {
  int changes, recoveries;
  int64_t change_step, recover_step;
} events;

static void push(loom_adapt_tracker *t, int64_t step, double loss, double acc, events *ev) {
  loom_adapt_event e = loom_adapt_tracker_push(t, step, loss, acc, 1000.0 + step);
  if (e == LOOM_ADAPT_TASK_CHANGE) {
    ev->changes++;
    ev->change_step = step;
  } else if (e == LOOM_ADAPT_RECOVERED) {
    ev->recoveries++;
    ev->recover_step = step;
  } else {
    g_assert_cmpint(e, ==, LOOM_ADAPT_NONE);
  }
}

static void test_steady(void) {
  loom_error err = {0};
  loom_adapt_tracker *t = loom_adapt_tracker_new(NULL, &err);
  g_assert_nonnull(t);
  events ev = {0};
  for (int64_t s = 0; s < 1000; s++) push(t, s, 0.3 + wobble(s), 0.9 + wobble(s), &ev);
  g_assert_cmpint(ev.changes, ==, 0);
  g_assert_cmpint(ev.recoveries, ==, 0);
  loom_adapt_summary sum;
  loom_adapt_tracker_summary(t, &sum);
  g_assert_cmpint(sum.pushes, ==, 1000);
  g_assert_false(sum.in_change);
  g_assert_cmpint(sum.last_change_step, ==, -1);
  g_assert_cmpfloat(fabs(sum.short_accuracy - 0.9), <, 0.02);
  g_assert_cmpfloat(fabs(sum.long_loss - 0.3), <, 0.02);
  /* throughput means: the short window holds steps 990..999 */
  g_assert_cmpfloat(fabs(sum.short_throughput - 1994.5), <, 1e-9);
  g_assert_cmpfloat(fabs(sum.long_throughput - 1939.5), <, 1e-9);
  loom_adapt_tracker_free(t);
}

/* 300 steps at 0.9, a drop to 0.3 at step 300, a climb back over 100 steps. */
static double drop_run(int64_t s) {
  if (s < 300) return 0.9 + wobble(s);
  if (s < 400) return 0.3 + 0.6 * (double)(s - 300) / 100.0 + wobble(s);
  return 0.9 + wobble(s);
}

static void test_drop_and_recovery(void) {
  loom_error err = {0};
  loom_adapt_config cfg = loom_adapt_config_default();
  loom_adapt_tracker *t = loom_adapt_tracker_new(&cfg, &err);
  g_assert_nonnull(t);
  events ev = {0};
  for (int64_t s = 0; s < 300; s++) push(t, s, 0.3, drop_run(s), &ev);
  g_assert_cmpint(ev.changes, ==, 0);
  for (int64_t s = 300; s < 700; s++) {
    push(t, s, 0.3, drop_run(s), &ev);
    if (s == 300 + cfg.short_window - 1) g_assert_cmpint(ev.changes, ==, 1); /* within the short window */
  }
  g_assert_cmpint(ev.changes, ==, 1);
  g_assert_cmpint(ev.recoveries, ==, 1);
  g_assert_cmpint(ev.change_step, >=, 300);
  g_assert_cmpint(ev.change_step, <, 300 + cfg.short_window);
  /* back within 0.02 of 0.9 only once the short window holds the last of the climb */
  g_assert_cmpint(ev.recover_step, >, 390);
  g_assert_cmpint(ev.recover_step, <=, 400 + cfg.short_window);
  loom_adapt_summary sum;
  loom_adapt_tracker_summary(t, &sum);
  g_assert_false(sum.in_change);
  g_assert_cmpint(sum.changes, ==, 1);
  g_assert_cmpint(sum.recoveries, ==, 1);
  g_assert_cmpint(sum.last_change_step, ==, ev.change_step);
  g_assert_cmpint(sum.last_recovery_steps, ==, ev.recover_step - ev.change_step);
  g_assert_cmpfloat(fabs(sum.level_before - 0.9), <, 0.01);

  /* the same values again after a reset: the same events */
  loom_adapt_tracker_reset(t);
  loom_adapt_tracker_summary(t, &sum);
  g_assert_cmpint(sum.pushes, ==, 0);
  g_assert_true(isnan(sum.short_accuracy));
  events again = {0};
  for (int64_t s = 0; s < 700; s++) push(t, s, 0.3, drop_run(s), &again);
  g_assert_cmpint(again.change_step, ==, ev.change_step);
  g_assert_cmpint(again.recover_step, ==, ev.recover_step);
  loom_adapt_tracker_free(t);
}

/* A converged classifier: accuracy steady near 1, loss tiny and noisy (it
 * doubles and halves). Loss spikes are not task changes when accuracies
 * exist; only the accuracy rule speaks. */
static void test_classifier_loss_noise(void) {
  loom_error err = {0};
  loom_adapt_tracker *t = loom_adapt_tracker_new(NULL, &err);
  g_assert_nonnull(t);
  events ev = {0};
  for (int64_t s = 0; s < 2000; s++) {
    double loss = (s / 7) % 5 == 0 ? 0.05 : 0.005; /* the short mean up to 2.6× the long one */
    push(t, s, loss, 0.98 + 0.01 * wobble(s), &ev);
  }
  g_assert_cmpint(ev.changes, ==, 0);
  g_assert_cmpint(ev.recoveries, ==, 0);
  /* The same losses without accuracies do flag (the regression rule). */
  loom_adapt_tracker_reset(t);
  events reg = {0};
  for (int64_t s = 0; s < 2000; s++) push(t, s, (s / 7) % 5 == 0 ? 0.05 : 0.005, NAN, &reg);
  g_assert_cmpint(reg.changes, >, 0);
  loom_adapt_tracker_free(t);
}

static void test_regression_loss(void) {
  loom_error err = {0};
  loom_adapt_config cfg = loom_adapt_config_default();
  cfg.short_window = 5;
  cfg.long_window = 50;
  loom_adapt_tracker *t = loom_adapt_tracker_new(&cfg, &err);
  g_assert_nonnull(t);
  events ev = {0};
  for (int64_t s = 0; s < 200; s++) push(t, s, 0.1 + wobble(s) * 0.1, NAN, &ev);
  g_assert_cmpint(ev.changes, ==, 0);
  /* the loss jumps to 1.0 and decays back to 0.1 */
  for (int64_t s = 200; s < 400; s++) {
    double loss = s < 300 ? 1.0 - 0.9 * (double)(s - 200) / 100.0 : 0.1;
    push(t, s, loss, NAN, &ev);
  }
  g_assert_cmpint(ev.changes, ==, 1);
  g_assert_cmpint(ev.change_step, >=, 200);
  g_assert_cmpint(ev.change_step, <, 200 + cfg.short_window);
  g_assert_cmpint(ev.recoveries, ==, 1);
  g_assert_cmpint(ev.recover_step, >, 290);
  loom_adapt_summary sum;
  loom_adapt_tracker_summary(t, &sum);
  g_assert_true(isnan(sum.short_accuracy));
  g_assert_cmpfloat(fabs(sum.level_before - 0.1), <, 0.01);
  loom_adapt_tracker_free(t);

  /* loss_jump 0: the loss rule is off, so a regression run flags nothing */
  cfg.loss_jump = 0.0;
  t = loom_adapt_tracker_new(&cfg, &err);
  events none = {0};
  for (int64_t s = 0; s < 400; s++) push(t, s, s < 200 ? 0.1 : 5.0, NAN, &none);
  g_assert_cmpint(none.changes, ==, 0);
  loom_adapt_tracker_free(t);
}

static void expect_refused(loom_adapt_config c, const char *field) {
  loom_error err = {0};
  g_assert_null(loom_adapt_tracker_new(&c, &err));
  g_assert_cmpint(err.code, ==, LOOM_ERR_INVALID);
  if (!strstr(err.message, field)) g_error("“%s” does not name %s", err.message, field);
}

static void test_bad_config(void) {
  loom_adapt_config d = loom_adapt_config_default(), c;
  c = d, c.short_window = 0, expect_refused(c, "short_window");
  c = d, c.long_window = -3, expect_refused(c, "long_window");
  c = d, c.drop = 0.0, expect_refused(c, "drop");
  c = d, c.drop = NAN, expect_refused(c, "drop");
  c = d, c.loss_jump = 1.0, expect_refused(c, "loss_jump");
  c = d, c.recover_tolerance = -0.1, expect_refused(c, "recover_tolerance");
  c = d, c.recover_tolerance = 0.1, expect_refused(c, "recover_tolerance");
  c = d, c.loss_jump = 1.01, expect_refused(c, "loss_jump");
  loom_error err = {0};
  loom_adapt_tracker *t = loom_adapt_tracker_new(NULL, &err);
  g_assert_nonnull(t);
  loom_adapt_tracker_free(t);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/adapt/steady", test_steady);
  g_test_add_func("/adapt/drop-and-recovery", test_drop_and_recovery);
  g_test_add_func("/adapt/regression", test_regression_loss);
  g_test_add_func("/adapt/classifier-loss-noise", test_classifier_loss_noise);
  g_test_add_func("/adapt/bad-config", test_bad_config);
  return g_test_run();
}
