/* Learning-rate schedules against torch.optim.lr_scheduler for 50 steps. */
#include <glib.h>
#include <math.h>

#include "loom/loom.h"
#include "parity.h"

static const char *const schedules[] = {
  "constant", "step", "exponential", "cosine", "cosine_t1", "warmup_cosine", "warmup_step", "warmup_constant",
  "warmup_exponential",
};

static void check_schedule(const char *name) {
  char key[96];
  g_snprintf(key, sizeof key, "sched_%s_config", name);
  loom_npy c = parity_load("train", key);
  g_snprintf(key, sizeof key, "sched_%s_lr", name);
  loom_npy ref = parity_load("train", key);
  loom_schedule s = parity_schedule(c.data, parity_decimal(c.data[1]));
  loom_error err = {0};
  if (loom_schedule_validate(&s, &err)) g_error("%s: %s", name, err.message);
  int64_t n = loom_npy_numel(&ref);
  g_assert_cmpint(n, ==, 50);
  float lr[50];
  for (int64_t i = 0; i < n; i++) lr[i] = (float)loom_schedule_lr(&s, i);
  parity_assert_matches_tol(name, lr, ref.data, n, 1e-6, 1e-8);
  loom_npy_clear(&c);
  loom_npy_clear(&ref);
}

static void test_parity(void) {
  for (size_t i = 0; i < G_N_ELEMENTS(schedules); i++) check_schedule(schedules[i]);
}

static void test_closed_forms(void) {
  loom_schedule s = loom_schedule_constant(0.2);
  s.kind = LOOM_SCHEDULE_COSINE_RESTARTS;
  s.t_0 = 3;
  s.t_mult = 2;
  s.eta_min = 0.0;
  /* Cycles of 3, 6, 12, ...: restarts at steps 0, 3, 9, 21. */
  g_assert_cmpfloat(loom_schedule_lr(&s, 0), ==, 0.2);
  g_assert_cmpfloat(loom_schedule_lr(&s, 3), ==, 0.2);
  g_assert_cmpfloat(loom_schedule_lr(&s, 9), ==, 0.2);
  g_assert_cmpfloat(loom_schedule_lr(&s, 21), ==, 0.2);
  g_assert_cmpfloat_with_epsilon(loom_schedule_lr(&s, 6), 0.1, 1e-15); /* halfway through the cycle of 6 */
  g_assert_cmpfloat_with_epsilon(loom_schedule_lr(&s, 12), 0.1 * (1.0 + cos(M_PI / 4.0)), 1e-15);
  /* Far steps stay finite and inside [eta_min, base]. */
  double far = loom_schedule_lr(&s, INT64_MAX / 2);
  g_assert_true(far >= 0.0 && far <= 0.2);
  s.kind = LOOM_SCHEDULE_STEP;
  s.step_size = 10;
  s.gamma = 0.5;
  s.warmup_steps = 4;
  s.warmup_start_factor = 0.5;
  g_assert_cmpfloat(loom_schedule_lr(&s, 0), ==, 0.1);
  g_assert_cmpfloat_with_epsilon(loom_schedule_lr(&s, 2), 0.15, 1e-15);
  g_assert_cmpfloat(loom_schedule_lr(&s, 4), ==, 0.2);
  g_assert_cmpfloat(loom_schedule_lr(&s, 13), ==, 0.2);
  g_assert_cmpfloat(loom_schedule_lr(&s, 14), ==, 0.1);
}

static void test_validation(void) {
  loom_error err = {0};
  loom_schedule s = loom_schedule_constant(0.1);
  g_assert_cmpint(loom_schedule_validate(&s, &err), ==, LOOM_OK);
  s.kind = LOOM_SCHEDULE_STEP;
  g_assert_cmpint(loom_schedule_validate(&s, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "schedule: step_size is 0, expected an integer >= 1");
  s.step_size = 3;
  g_assert_cmpint(loom_schedule_validate(&s, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "schedule: gamma is 0, expected a finite value > 0");
  s.gamma = 0.5;
  s.warmup_steps = 5;
  g_assert_cmpint(loom_schedule_validate(&s, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "schedule: warmup_start_factor is 0, expected a value in (0, 1]");
  s = loom_schedule_constant(0.1);
  s.kind = LOOM_SCHEDULE_COSINE_RESTARTS;
  s.t_0 = 2;
  g_assert_cmpint(loom_schedule_validate(&s, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "schedule: t_mult is 0, expected an integer >= 1");
  s = loom_schedule_constant(NAN);
  g_assert_cmpint(loom_schedule_validate(&s, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "schedule: base_lr is nan, expected a finite value >= 0");
  loom_schedule_kind k;
  g_assert_cmpint(loom_schedule_from_name("onecycle", &k, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "unknown schedule 'onecycle' (expected constant, step, exponential or cosine_restarts)");
  for (int i = 0; i < 4; i++) {
    g_assert_cmpint(loom_schedule_from_name(loom_schedule_name((loom_schedule_kind)i), &k, NULL), ==, LOOM_OK);
    g_assert_cmpint(k, ==, i);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/train/schedule/parity-50-steps", test_parity);
  g_test_add_func("/train/schedule/closed-forms", test_closed_forms);
  g_test_add_func("/train/schedule/validation", test_validation);
  return g_test_run();
}
