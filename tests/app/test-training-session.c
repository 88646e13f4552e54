/*
 * The training worker behind the workbench, without a window: commands take
 * effect between steps, snapshots coalesce without losing a step, Step is
 * one step, the worker's weights equal a headless run of the same settings
 * bit for bit, Reset draws the seeded weights, a checkpoint resumes
 * exactly, and disposing a running session joins its thread.
 */
#include <math.h>
#include <string.h>

#include "loom-training-session.h"

#define TIMEOUT_US (60 * G_USEC_PER_SEC)

typedef struct {
  LoomTrainingSession *session;
  loom_net *net;
  loom_train_settings *settings;
  GArray *points; /* every LoomTrainingPoint seen, in order */
  guint snapshots;
} Fixture;

static void on_snapshot(LoomTrainingSession *session, LoomTrainingSnapshot *snap, Fixture *f) {
  g_array_append_vals(f->points, snap->points->data, snap->points->len);
  f->snapshots++;
}

static void fixture_set_up(Fixture *f, gconstpointer data) {
  const char *example = data ? data : "xor";
  loom_error err = {0};
  g_assert_cmpint(loom_example_build(example, &f->net, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_example_settings(example, &f->settings, &err), ==, LOOM_OK);
  /* Long enough that no case reaches the last epoch. */
  /* Far more than any case runs: the worker trains tens of thousands of steps
   * a second, and a run that reached its last epoch would stop "running"
   * while a loaded machine's main loop is still catching up. */
  g_assert_cmpint(loom_train_settings_set_field(f->settings, "epochs", "1000000", &err), ==, LOOM_OK);
  f->points = g_array_new(FALSE, FALSE, sizeof(LoomTrainingPoint));
  f->session = loom_training_session_new(NULL);
  g_signal_connect(f->session, "snapshot", G_CALLBACK(on_snapshot), f);
}

static void fixture_tear_down(Fixture *f, gconstpointer data) {
  g_object_unref(f->session);
  g_array_unref(f->points);
  loom_net_free(f->net);
  loom_train_settings_free(f->settings);
}

typedef gboolean (*Condition)(Fixture *f, gpointer data);

/* Polls as the UI does at frame time until @cond holds. */
static void poll_until(Fixture *f, Condition cond, gpointer data, const char *what) {
  gint64 deadline = g_get_monotonic_time() + TIMEOUT_US;
  while (!cond(f, data)) {
    if (g_get_monotonic_time() > deadline) g_error("timed out waiting for %s", what);
    if (!loom_training_session_poll(f->session)) g_usleep(2000);
  }
}

static gboolean state_is(Fixture *f, gpointer state) {
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(f->session);
  return snap && loom_training_session_get_state(f->session) == (LoomTrainingState)GPOINTER_TO_INT(state) &&
         snap->state == (LoomTrainingState)GPOINTER_TO_INT(state);
}

static gboolean steps_at_least(Fixture *f, gpointer n) {
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(f->session);
  return snap && snap->step >= GPOINTER_TO_INT(n);
}

static void load_and_wait(Fixture *f) {
  loom_training_session_load(f->session, f->net, f->settings, NULL, 0);
  poll_until(f, state_is, GINT_TO_POINTER(LOOM_TRAINING_PAUSED), "the trainer to be ready");
}

/* Waits until the worker has run every command posted and is paused. */
static void settle(Fixture *f) {
  poll_until(f, state_is, GINT_TO_POINTER(LOOM_TRAINING_PAUSED), "a pause");
  g_usleep(20000);
  while (loom_training_session_poll(f->session)) {}
}

static GArray *weights_of(const loom_net *net) {
  GArray *all = g_array_new(FALSE, FALSE, sizeof(float));
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, i));
    for (int k = 0; k < loom_layer_n_weights(l); k++) {
      loom_weights *w = loom_layer_weights(l, k);
      g_array_append_vals(all, loom_weights_master_const(w), (guint)loom_weights_count(w));
    }
  }
  return all;
}

static void assert_same_weights(const loom_net *a, const loom_net *b) {
  g_autoptr(GArray) wa = weights_of(a);
  g_autoptr(GArray) wb = weights_of(b);
  g_assert_cmpuint(wa->len, ==, wb->len);
  g_assert_cmpmem(wa->data, wa->len * sizeof(float), wb->data, wb->len * sizeof(float));
}

/* The same settings trained headless for @steps steps. */
static loom_net *headless(Fixture *f, gint64 steps, GArray *losses) {
  loom_error err = {0};
  loom_net *net = loom_net_clone(f->net, &err);
  g_assert_cmpint(loom_net_infer_shapes(net, loom_net_seed(net), NULL), ==, 0);
  loom_dataset *train = NULL, *test = NULL;
  loom_train_config cfg;
  g_assert_cmpint(loom_train_settings_make_data(f->settings, net, NULL, &train, &test, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_train_settings_make_config(f->settings, net, train, &cfg, &err), ==, LOOM_OK);
  loom_trainer *tr = loom_trainer_new(net, train, test, &cfg, NULL, &err);
  g_assert_nonnull(tr);
  loom_step_stats st;
  for (gint64 i = 0; i < steps; i++) {
    g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, LOOM_OK);
    if (losses) g_array_append_val(losses, st.loss);
  }
  loom_trainer_free(tr);
  loom_dataset_free(train);
  loom_dataset_free(test);
  return net;
}

static void test_step_is_one_step(Fixture *f, gconstpointer data) {
  load_and_wait(f);
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(f->session);
  g_assert_nonnull(snap->net);
  g_assert_nonnull(snap->data);
  g_assert_cmpint(snap->step, ==, 0);
  for (int i = 1; i <= 3; i++) {
    loom_training_session_step(f->session);
    poll_until(f, steps_at_least, GINT_TO_POINTER(i), "one step");
    settle(f);
    g_assert_cmpint(loom_training_session_get_latest(f->session)->step, ==, i);
  }
  g_assert_cmpuint(f->points->len, ==, 3);
}

/* Play, pause: every step is in the snapshots exactly once, in order, and
 * the weights equal a headless run of as many steps. */
static void test_play_pause_matches_headless(Fixture *f, gconstpointer data) {
  load_and_wait(f);
  loom_training_session_play(f->session);
  g_assert_true(loom_training_session_get_running(f->session));
  poll_until(f, steps_at_least, GINT_TO_POINTER(150), "150 steps");
  loom_training_session_pause(f->session);
  settle(f);
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(f->session);
  g_assert_nonnull(snap->net);
  g_assert_nonnull(snap->train_state);
  gint64 steps = snap->step;
  g_assert_cmpuint(f->points->len, ==, (guint)steps);
  for (guint i = 0; i < f->points->len; i++)
    g_assert_cmpint(g_array_index(f->points, LoomTrainingPoint, i).step, ==, (gint64)i + 1);
  /* At most 30 publications a second (plus the forced ones): fewer than steps. */
  g_assert_cmpuint(f->snapshots, <, (guint)steps);

  g_autoptr(GArray) losses = g_array_new(FALSE, FALSE, sizeof(double));
  loom_net *reference = headless(f, steps, losses);
  assert_same_weights(snap->net, reference);
  for (guint i = 0; i < losses->len; i++)
    g_assert_cmpfloat(g_array_index(f->points, LoomTrainingPoint, i).loss, ==, g_array_index(losses, double, i));
  loom_net_free(reference);
}

/* A checkpoint (weights + state) loaded into a new session trains on
 * exactly like an uninterrupted run. */
static void test_resume_from_checkpoint(Fixture *f, gconstpointer data) {
  load_and_wait(f);
  for (int i = 1; i <= 7; i++) {
    loom_training_session_step(f->session);
    poll_until(f, steps_at_least, GINT_TO_POINTER(i), "a step");
  }
  settle(f);
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(f->session);
  g_assert_cmpint(snap->step, ==, 7);
  /* Through the model file's text, as a save and reopen does. */
  loom_model_extras extras = {.settings = f->settings};
  gsize len = 0;
  extras.train_state = (void *)g_bytes_get_data(snap->train_state, &len);
  extras.train_state_len = len;
  extras.train_steps = snap->step;
  loom_error err = {0};
  size_t json_len = 0;
  char *json = loom_model_to_json_ex(snap->net, &extras, &json_len, &err);
  g_assert_nonnull(json);
  loom_net *reopened = NULL;
  loom_model_extras back = {0};
  g_assert_cmpint(loom_model_load_data_ex(json, json_len, "checkpoint", LOOM_MODEL_STRICT, &reopened, &back, &err),
                  ==, LOOM_OK);
  free(json);
  g_autoptr(GBytes) state = g_bytes_new(back.train_state, back.train_state_len);

  g_object_unref(f->session);
  f->session = loom_training_session_new(NULL);
  g_signal_connect(f->session, "snapshot", G_CALLBACK(on_snapshot), f);
  loom_training_session_load(f->session, reopened, back.settings, state, back.train_steps);
  poll_until(f, state_is, GINT_TO_POINTER(LOOM_TRAINING_PAUSED), "the reopened trainer");
  for (int i = 8; i <= 12; i++) {
    loom_training_session_step(f->session);
    poll_until(f, steps_at_least, GINT_TO_POINTER(i), "a step");
  }
  settle(f);
  snap = loom_training_session_get_latest(f->session);
  g_assert_cmpint(snap->step, ==, 12);
  loom_net *reference = headless(f, 12, NULL);
  assert_same_weights(snap->net, reference);
  loom_net_free(reference);
  loom_net_free(reopened);
  loom_model_extras_clear(&back);
}

static void test_reset_draws_seeded_weights(Fixture *f, gconstpointer data) {
  load_and_wait(f);
  loom_training_session_play(f->session);
  poll_until(f, steps_at_least, GINT_TO_POINTER(20), "20 steps");
  loom_training_session_reset(f->session, 99);
  poll_until(f, state_is, GINT_TO_POINTER(LOOM_TRAINING_PAUSED), "the reset");
  settle(f);
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(f->session);
  g_assert_cmpint(snap->step, ==, 0);
  loom_error err = {0};
  loom_net *expected = loom_net_clone(f->net, &err);
  g_assert_cmpint(loom_net_reinit_weights(expected, 99, &err), ==, LOOM_OK);
  assert_same_weights(snap->net, expected);
  /* The example's own seed gives its initial weights back. */
  loom_net *again = loom_net_clone(f->net, &err);
  g_assert_cmpint(loom_net_reinit_weights(again, loom_net_seed(f->net), &err), ==, LOOM_OK);
  assert_same_weights(again, f->net);
  loom_net_free(again);
  loom_net_free(expected);
}

static gboolean last_lr_is(Fixture *f, gpointer lr) {
  return f->points->len > 0 && g_array_index(f->points, LoomTrainingPoint, f->points->len - 1).lr == *(double *)lr;
}

/* A learning rate changed while running applies from the next step on. */
static void test_live_learning_rate(Fixture *f, gconstpointer data) {
  load_and_wait(f);
  loom_training_session_play(f->session);
  poll_until(f, steps_at_least, GINT_TO_POINTER(10), "10 steps");
  loom_train_settings *changed = loom_train_settings_copy(f->settings);
  loom_error err = {0};
  g_assert_cmpint(loom_train_settings_set_field(changed, "lr", "0.0125", &err), ==, LOOM_OK);
  loom_training_session_set_settings(f->session, changed);
  loom_train_settings_free(changed);
  poll_until(f, last_lr_is, &(double){0.0125}, "the new learning rate");
  guint changed_at = f->points->len - 1;
  gint64 at = loom_training_session_get_latest(f->session)->step;
  poll_until(f, steps_at_least, GINT_TO_POINTER((int)at + 50), "50 more steps");
  g_assert_true(loom_training_session_get_running(f->session));
  /* Not a restart: the steps go on, each at the new rate from then on. */
  for (guint i = changed_at; i < f->points->len; i++) {
    const LoomTrainingPoint *p = &g_array_index(f->points, LoomTrainingPoint, i);
    g_assert_cmpfloat(p->lr, ==, 0.0125);
    g_assert_cmpint(p->step, ==, (gint64)i + 1);
  }
  loom_training_session_pause(f->session);
  settle(f);
}

/* Data that do not fit the network: INVALID, naming both sizes. */
static void test_invalid_data(Fixture *f, gconstpointer data) {
  loom_error err = {0};
  g_assert_cmpint(loom_train_settings_set_field(f->settings, "data.source", "digits", &err), ==, LOOM_OK);
  loom_training_session_load(f->session, f->net, f->settings, NULL, 0);
  poll_until(f, state_is, GINT_TO_POINTER(LOOM_TRAINING_INVALID), "the refusal");
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(f->session);
  g_assert_nonnull(snap->message);
  g_test_message("%s", snap->message);
  /* It names the sizes that disagree (the net's one output, the ten digits). */
  g_assert_true(strstr(snap->message, "10") != NULL);
}

/* Disposing a running session joins the worker (ASan/LSan watch this). */
static void test_dispose_while_running(Fixture *f, gconstpointer data) {
  load_and_wait(f);
  loom_training_session_play(f->session);
  poll_until(f, steps_at_least, GINT_TO_POINTER(5), "5 steps");
  g_clear_object(&f->session);
  f->session = loom_training_session_new(NULL);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
#define ADD(path, fn) g_test_add(path, Fixture, NULL, fixture_set_up, fn, fixture_tear_down)
  ADD("/training-session/step-is-one-step", test_step_is_one_step);
  ADD("/training-session/play-pause-matches-headless", test_play_pause_matches_headless);
  ADD("/training-session/resume-from-checkpoint", test_resume_from_checkpoint);
  ADD("/training-session/reset-draws-seeded-weights", test_reset_draws_seeded_weights);
  ADD("/training-session/live-learning-rate", test_live_learning_rate);
  ADD("/training-session/invalid-data", test_invalid_data);
  ADD("/training-session/dispose-while-running", test_dispose_while_running);
  return g_test_run();
}
