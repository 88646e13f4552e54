/*
 * Training in the real workbench window: Play draws the curves and paints
 * the heatmap and the decision boundary; Pause hands the weights back as one
 * undoable command; Step runs exactly one step (Steps add up to one undo
 * step); Reset draws the seeded weights; a learning rate changed while
 * running reaches the worker; a refused hyperparameter stays at its field;
 * a network that cannot train on the data says why and cannot play; a huge
 * learning rate stops training with a toast naming the slot; Save while
 * training saves the newest weights, and so does autosave's recovery copy;
 * the exported settings make `loom train --config` draw the same curve;
 * closing the window while training joins the worker. The cases run in
 * order on one window (test-training-views.c has the DNA, export, systolic,
 * import and device cases).
 */
#include "training-harness.h"

/* Play: curves grow, the heatmap and the boundary change; Pause: one undo
 * step brings the untrained weights back. */
static void test_play_pause(void) {
  set_field("epochs", "100000"); /* no case reaches the end */
  g_autofree char *before_json = net_json(loom_document_get_net(doc()));
  loom_training_pane_set_heatmap_metric(pane(), "activation-rms");
  g_assert_cmpint(loom_grid_view_get_color_mode(window->grid_view), ==, LOOM_GRID_VIEW_COLOR_LAYER_TYPE);
  g_autoptr(GBytes) grid_before = grid_pixels();
  g_autoptr(GBytes) boundary_before = boundary_pixels();

  activate("win.train-toggle");
  g_assert_true(loom_window_training_locked(window));
  gui_test_wait(enough_points, GSIZE_TO_POINTER(300), TIMEOUT_MS, "300 steps on the loss plot");
  /* Editing is refused while training runs; the network stays. */
  g_assert_false(gtk_widget_is_sensitive(window->undo_button));
  activate("win.train-toggle");
  wait_state(LOOM_TRAINING_PAUSED, "the pause");

  g_assert_cmpint(loom_grid_view_get_color_mode(window->grid_view), ==, LOOM_GRID_VIEW_COLOR_METRIC);
  g_autoptr(GBytes) grid_after = grid_pixels();
  g_assert_cmpuint(differing_bytes(grid_before, grid_after), >, 1000);
  g_autoptr(GBytes) boundary_after = boundary_pixels();
  g_assert_cmpuint(differing_bytes(boundary_before, boundary_after), >, 500);
  g_assert_cmpuint(plot_points("accuracy"), ==, plot_points("loss"));

  /* The weights came back as one command named after the steps. */
  LoomCommandStack *stack = loom_document_get_commands(doc());
  g_assert_true(g_str_has_prefix(loom_command_stack_get_undo_label(stack), "Training: "));
  g_assert_cmpint(doc_steps(), ==, loom_training_session_get_latest(session())->step);
  g_autofree char *trained_json = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(trained_json, !=, before_json);
  activate("win.undo");
  g_autofree char *undone_json = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(undone_json, ==, before_json);
  activate("win.redo");
  g_autofree char *redone_json = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(redone_json, ==, trained_json);
  wait_state(LOOM_TRAINING_PAUSED, "the worker to reload the redone weights");
  loom_training_pane_set_heatmap_metric(pane(), "none");
  g_assert_cmpint(loom_grid_view_get_color_mode(window->grid_view), ==, LOOM_GRID_VIEW_COLOR_LAYER_TYPE);
}


static gboolean monitor_has_values(gpointer n) {
  return loom_slot_monitor_get_n_values(window->slot_monitor, 0) >= GPOINTER_TO_UINT(n);
}

static gint64 monitor_steps_from;

static gboolean monitor_has_every_step(gpointer data) {
  return (gint64)loom_slot_monitor_get_n_values(window->slot_monitor, 0) == doc_steps() - monitor_steps_from;
}

/* The selected slot's statistics appear in the inspector while it trains:
 * hidden before any data, then sparklines that grow with the steps, every
 * step (a snapshot carries all of them: a fast run publishes only a few). */
static void test_slot_monitor(void) {
  const loom_net *net = loom_document_get_net(doc());
  loom_coord at = loom_net_layer_coord(net, 0);
  g_assert_cmpint(loom_layer_n_weights(loom_net_layer_at(net, at)), >, 0);
  loom_grid_view_set_selection(window->grid_view, &at);
  gui_test_spin(50);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(window->slot_monitor)));
  g_assert_true(gtk_widget_is_ancestor(GTK_WIDGET(window->slot_monitor), GTK_WIDGET(window->inspector)));
  g_assert_true(loom_slot_monitor_get_show_weights(window->slot_monitor));
  monitor_steps_from = doc_steps();
  activate("win.train-play");
  gui_test_wait(monitor_has_values, GUINT_TO_POINTER(5), TIMEOUT_MS, "the slot monitor to fill");
  g_assert_true(gtk_widget_get_mapped(GTK_WIDGET(window->slot_monitor)));
  activate("win.train-pause");
  wait_state(LOOM_TRAINING_PAUSED, "the pause");
  gui_test_wait(monitor_has_every_step, NULL, TIMEOUT_MS, "a value for every step of the run");
  guint n = loom_slot_monitor_get_n_values(window->slot_monitor, 0);
  g_assert_cmpuint(n, >, 5);
  for (int series = 1; series < 4; series++) /* std, gradient norm, update ratio */
    g_assert_cmpuint(loom_slot_monitor_get_n_values(window->slot_monitor, series), ==, n);
  /* A slot without weights: no weight histogram, no gradient or update series. */
  loom_coord act = {0};
  gboolean found = FALSE;
  for (int64_t i = 0; i < loom_net_n_layers(net) && !found; i++) {
    act = loom_net_layer_coord(net, i);
    found = loom_layer_n_weights(loom_net_layer_at(net, act)) == 0;
  }
  g_assert_true(found);
  loom_grid_view_set_selection(window->grid_view, &act);
  gui_test_spin(50);
  g_assert_false(loom_slot_monitor_get_show_weights(window->slot_monitor));
  monitor_steps_from = doc_steps();
  activate("win.train-play");
  gui_test_wait(monitor_has_values, GUINT_TO_POINTER(3), TIMEOUT_MS, "the weightless slot's values");
  activate("win.train-pause");
  wait_state(LOOM_TRAINING_PAUSED, "the pause");
  gui_test_wait(monitor_has_every_step, NULL, TIMEOUT_MS, "a value for every step of the second run");
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(window->slot_monitor)));
  /* Another slot starts empty and hidden again. */
  loom_grid_view_set_selection(window->grid_view, NULL);
  gui_test_spin(50);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(window->slot_monitor)));
  g_assert_cmpuint(loom_slot_monitor_get_n_values(window->slot_monitor, 0), ==, 0);
}

static void test_step(void) {
  gint64 steps = doc_steps();
  gsize n = plot_points("loss");
  activate("win.train-step");
  gui_test_wait(doc_steps_are, GSIZE_TO_POINTER(steps + 1), TIMEOUT_MS, "one step");
  wait_state(LOOM_TRAINING_PAUSED, "the step to end");
  gui_test_spin(100);
  g_assert_cmpint(doc_steps(), ==, steps + 1);
  g_assert_cmpuint(plot_points("loss"), ==, n + 1);
  g_assert_cmpstr(loom_command_stack_get_undo_label(loom_document_get_commands(doc())), ==, "Training: 1 step");

  /* A second Step joins the first: one undo step takes both back. */
  g_autofree char *before = NULL;
  LoomCommandStack *stack = loom_document_get_commands(doc());
  g_assert_true(loom_document_undo(doc(), NULL));
  before = net_json(loom_document_get_net(doc()));
  g_assert_true(loom_document_redo(doc(), NULL));
  gui_test_wait(settled, NULL, TIMEOUT_MS, "the worker to reload");
  activate("win.train-step");
  gui_test_wait(doc_steps_are, GSIZE_TO_POINTER(steps + 2), TIMEOUT_MS, "a second step");
  wait_state(LOOM_TRAINING_PAUSED, "the second step to end");
  g_assert_cmpstr(loom_command_stack_get_undo_label(stack), ==, "Training: 2 steps");
  g_assert_true(loom_document_undo(doc(), NULL));
  g_assert_cmpint(doc_steps(), ==, steps);
  g_autofree char *after_undo = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(after_undo, ==, before);
  g_assert_true(loom_document_redo(doc(), NULL));
  g_assert_cmpint(doc_steps(), ==, steps + 2);
  gui_test_wait(settled, NULL, TIMEOUT_MS, "the worker to reload");
}

static gboolean undo_label_is(gpointer label) {
  return g_strcmp0(loom_command_stack_get_undo_label(loom_document_get_commands(doc())), label) == 0;
}

static void test_reset(void) {
  loom_net *expected = loom_net_clone(loom_document_get_net(doc()), NULL);
  g_assert_cmpint(loom_net_reinit_weights(expected, loom_document_get_training(doc())->settings->seed, NULL), ==,
                  LOOM_OK);
  activate("win.train-reset");
  gui_test_wait(undo_label_is, "Reset Weights", TIMEOUT_MS, "the reset weights");
  g_autofree char *got = net_json(loom_document_get_net(doc()));
  g_autofree char *want = net_json(expected);
  g_assert_cmpstr(got, ==, want);
  g_assert_cmpint(doc_steps(), ==, 0);
  g_assert_cmpuint(plot_points("loss"), ==, 0); /* the curves start over */
  loom_net_free(expected);
  wait_state(LOOM_TRAINING_PAUSED, "the reset to settle");
}

static gboolean saw_lr(gpointer lr) {
  for (guint i = 0; i < points->len; i++)
    if (g_array_index(points, LoomTrainingPoint, i).lr == *(double *)lr) return TRUE;
  return FALSE;
}

/* A new learning rate reaches the running worker at its next step. */
static void test_learning_rate_live(void) {
  activate("win.train-play");
  gui_test_wait(enough_points, GSIZE_TO_POINTER(plot_points("loss") + 20), TIMEOUT_MS, "training to run");
  g_array_set_size(points, 0);
  set_field("optimizer.lr", "0.0123");
  g_assert_true(loom_window_training_locked(window)); /* still running */
  double lr = 0.0123;
  gui_test_wait(saw_lr, &lr, TIMEOUT_MS, "a step at the new learning rate");
  g_assert_cmpfloat(loom_document_get_training(doc())->settings->lr, ==, 0.0123);
  activate("win.train-pause");
  wait_state(LOOM_TRAINING_PAUSED, "the pause");
}

static void test_refused_value(void) {
  loom_train_settings *before = loom_train_settings_copy(loom_document_get_training(doc())->settings);
  g_autoptr(GError) error = NULL;
  g_assert_false(loom_training_form_set_field(form(), "batch", "0", &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA);
  g_assert_nonnull(strstr(error->message, "batch"));
  g_assert_cmpstr(loom_training_form_get_field_error(form(), "batch"), ==, error->message);
  g_assert_true(loom_train_settings_equal(before, loom_document_get_training(doc())->settings));
  g_assert_true(loom_train_settings_equal(before, loom_training_form_get_settings(form())));
  set_field("batch", "32"); /* mends it */
  g_assert_null(loom_training_form_get_field_error(form(), "batch"));
  /* Knobs of another optimizer are hidden. */
  set_field("optimizer.name", "sgd");
  g_assert_true(loom_training_form_get_field_visible(form(), "optimizer.momentum"));
  g_assert_false(loom_training_form_get_field_visible(form(), "optimizer.beta1"));
  g_assert_false(loom_training_form_get_field_visible(form(), "tween.threshold"));
  loom_train_settings_free(before);
}

static void collect_labels(GtkWidget *root, GString *out) {
  if (GTK_IS_LABEL(root) && gtk_widget_get_visible(root)) g_string_append_printf(out, "%s\n", gtk_label_get_text(GTK_LABEL(root)));
  for (GtkWidget *c = gtk_widget_get_first_child(root); c; c = gtk_widget_get_next_sibling(c)) collect_labels(c, out);
}

static char *label_text(GtkWidget *root) {
  GString *out = g_string_new(NULL);
  collect_labels(root, out);
  return g_string_free(out, FALSE);
}

/* Data of 64 features for a network of 2 inputs: the sizes are named and
 * Play is off until the data fits. */
static void test_size_mismatch(void) {
  set_field("data.source", "digits");
  wait_state(LOOM_TRAINING_INVALID, "the mismatch");
  g_assert_false(play_enabled());
  const char *message = loom_training_session_get_latest(session())->message;
  g_assert_nonnull(message);
  g_test_message("mismatch: %s", message);
  g_assert_nonnull(strstr(message, "10 classes"));
  g_autofree char *shown = label_text(GTK_WIDGET(pane()));
  g_assert_nonnull(strstr(shown, message));
  set_field("data.source", "xor");
  wait_state(LOOM_TRAINING_PAUSED, "the xor data again");
  g_assert_true(play_enabled());
}

static char *toast_text(void) {
  GString *out = g_string_new(NULL);
  GType toast_widget = g_type_from_name("AdwToastWidget");
  if (!toast_widget) return g_string_free(out, FALSE);
  GtkWidget *overlay = gui_test_find_child(GTK_WIDGET(window), ADW_TYPE_TOAST_OVERLAY);
  for (GtkWidget *child = gtk_widget_get_first_child(overlay); child; child = gtk_widget_get_next_sibling(child))
    if (G_TYPE_CHECK_INSTANCE_TYPE(child, toast_widget)) {
      g_autofree char *t = label_text(child);
      g_string_append(out, t);
    }
  return g_string_free(out, FALSE);
}

/* A huge learning rate: training stops, a toast names the step and the
 * slot, and the slot is selected (drawn red in the grid). */
static void test_explosion_stops(void) {
  /* ReLU layers let a huge step overflow (xor's tanh would saturate). */
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) spiral = loom_document_new_for_example("spiral", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, spiral);
  wait_state(LOOM_TRAINING_PAUSED, "the spiral example");
  set_field("optimizer.name", "sgd");
  set_field("optimizer.lr", "1e6");
  activate("win.train-play");
  wait_state(LOOM_TRAINING_STOPPED, "the stop");
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(session());
  g_assert_true(snap->has_alert);
  char where[64];
  loom_coord_format(snap->alert_at, where, sizeof where);
  g_autofree char *toasts = toast_text();
  g_test_message("toast: %s", toasts);
  g_assert_nonnull(strstr(toasts, where));
  g_assert_nonnull(strstr(toasts, "step"));
  loom_coord sel;
  g_assert_true(loom_grid_view_get_selection(window->grid_view, &sel));
  g_assert_cmpint(loom_net_flat_index(loom_document_get_net(doc()), sel), ==,
                  loom_net_flat_index(loom_document_get_net(doc()), snap->alert_at));
  /* A stopped run stays stopped until Play starts a new one from these
   * weights; these are far gone, so draw them anew. */
  set_field("optimizer.lr", "0.01");
  set_field("epochs", "100000");
  g_assert_cmpint(loom_training_session_get_state(session()), !=, LOOM_TRAINING_INVALID);
  activate("win.train-reset");
  gui_test_wait(undo_label_is, "Reset Weights", TIMEOUT_MS, "fresh weights");
}

static gboolean has_newer_weights(gpointer data) {
  return loom_training_controller_get_newest_weights(window->training) && loom_training_controller_get_newest_weights(window->training)->net_step > doc_steps() + 50;
}

static gboolean document_clean(gpointer data) { return !loom_document_get_dirty(doc()); }

/* Save while training: the file holds the newest weights the worker published. */
static void test_save_while_training(void) {
  activate("win.train-play");
  gui_test_wait(has_newer_weights, NULL, TIMEOUT_MS, "newer weights from the worker");
  LoomTrainingSnapshot *snap = loom_training_snapshot_ref(loom_training_controller_get_newest_weights(window->training));
  g_autofree char *path = g_build_filename(tmp_dir, "saved-while-training.loom.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path(path);
  loom_window_save_to_file(window, file);
  gui_test_wait(document_clean, NULL, TIMEOUT_MS, "the save");
  g_assert_true(loom_window_training_locked(window)); /* it still runs */
  loom_net *saved = NULL;
  g_assert_cmpint(loom_model_load(path, 0, &saved, NULL), ==, LOOM_OK);
  g_autofree char *a = net_json(saved);
  g_autofree char *b = net_json(snap->net);
  g_assert_cmpstr(a, ==, b);
  loom_net_free(saved);
  loom_training_snapshot_unref(snap);
  activate("win.train-pause");
  wait_state(LOOM_TRAINING_PAUSED, "the pause");
}

static gboolean document_clean_copy_gone(gpointer data) {
  LoomRecovery *recovery = loom_application_get_recovery(app);
  g_autofree char *copy = loom_recovery_get_copy_path(recovery, doc());
  return !loom_document_get_dirty(doc()) && !copy && !loom_recovery_get_busy(recovery);
}

/* The newest recovery copy's training steps, or -1 while there is none. */
static gint64 copy_steps(void) {
  LoomRecovery *recovery = loom_application_get_recovery(app);
  g_autofree char *copy = loom_recovery_get_copy_path(recovery, doc());
  if (!copy || loom_recovery_get_busy(recovery) || !g_file_test(copy, G_FILE_TEST_EXISTS)) return -1;
  loom_net *net = NULL;
  loom_model_extras extras = {0};
  if (loom_model_load_ex(copy, 0, &net, &extras, NULL) != LOOM_OK) return -1;
  gint64 steps = extras.train_steps;
  g_assert_nonnull(extras.train_state); /* resuming from a copy continues the optimizer */
  loom_net_free(net);
  loom_model_extras_clear(&extras);
  return steps;
}

static gboolean copy_ahead(gpointer saved_steps) { return copy_steps() > (gint64)GPOINTER_TO_SIZE(saved_steps); }

/* Autosave while training runs: the document itself stays clean (the
 * weights are not a command yet), but the recovery copy takes the worker's
 * newest weights and optimizer state, so a crash loses at most an interval. */
static void test_autosave_while_training(void) {
  LoomRecovery *recovery = loom_application_get_recovery(app);
  guint interval = loom_recovery_get_interval(recovery);
  g_autofree char *path = g_build_filename(tmp_dir, "autosaved.loom.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path(path);
  loom_window_save_to_file(window, file);
  gui_test_wait(document_clean_copy_gone, NULL, TIMEOUT_MS, "the save and no recovery copy");
  gint64 saved = doc_steps();
  loom_recovery_set_interval(recovery, 1);
  activate("win.train-play");
  gui_test_wait(copy_ahead, GSIZE_TO_POINTER((gsize)saved), TIMEOUT_MS, "a recovery copy of the running weights");
  g_assert_true(loom_window_training_locked(window));
  g_assert_false(loom_document_get_dirty(doc()));
  g_assert_cmpint(doc_steps(), ==, saved);
  activate("win.train-pause");
  wait_state(LOOM_TRAINING_PAUSED, "the pause");
  /* Paused, the weights are the document's: dirty, and the copy stays. */
  g_assert_true(loom_document_get_dirty(doc()));
  g_assert_cmpint(doc_steps(), >, saved);
  loom_recovery_set_interval(recovery, interval);
}

static gboolean finished_run(gpointer data) {
  return state_is(GINT_TO_POINTER(LOOM_TRAINING_FINISHED));
}

/* The same settings through `loom train --config` give the same curve,
 * epoch for epoch and bit for bit. */
static void test_settings_parity(void) {
  set_field("epochs", "3");
  activate("win.train-reset");
  gui_test_wait(undo_label_is, "Reset Weights", TIMEOUT_MS, "fresh weights");
  wait_state(LOOM_TRAINING_PAUSED, "the reset");
  g_autofree char *model = g_build_filename(tmp_dir, "parity.loom.json", NULL);
  g_autofree char *settings = g_build_filename(tmp_dir, "parity.settings.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path(model);
  loom_window_save_to_file(window, file);
  gui_test_wait(document_clean, NULL, TIMEOUT_MS, "the save");
  g_autoptr(GError) error = NULL;
  g_assert_true(loom_window_export_training_settings(window, settings, &error));
  g_array_set_size(epochs, 0);
  activate("win.train-play");
  gui_test_wait(finished_run, NULL, TIMEOUT_MS, "three epochs");
  g_assert_cmpuint(epochs->len, ==, 3);

  g_autofree char *loom = g_build_filename(g_getenv("LOOM_BUILD_DIR"), "cli", "loom", NULL);
  const char *argv[] = {loom, "train", model, "--config", settings, "--json", NULL};
  g_autofree char *out = NULL;
  int status = 0;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, NULL, &status, &error));
  g_assert_no_error(error);
  g_assert_true(g_spawn_check_wait_status(status, NULL));
  g_auto(GStrv) lines = g_strsplit(out, "\n", -1);
  for (guint e = 0; e < 3; e++) {
    const LoomTrainingEpoch *row = &g_array_index(epochs, LoomTrainingEpoch, e);
    double loss = NAN, test_loss = NAN, acc = NAN, test_acc = NAN;
    const char *l = lines[e];
    g_assert_nonnull(l);
    g_assert_nonnull(strstr(l, "\"loss\": "));
    loss = g_ascii_strtod(strstr(l, "\"loss\": ") + 8, NULL);
    test_loss = g_ascii_strtod(strstr(l, "\"test_loss\": ") + 13, NULL);
    acc = g_ascii_strtod(strstr(l, "\"train_accuracy\": ") + 18, NULL);
    test_acc = g_ascii_strtod(strstr(l, "\"test_accuracy\": ") + 17, NULL);
    g_test_message("epoch %u: workbench %.17g / cli %.17g", e + 1, row->train_loss, loss);
    g_assert_cmpfloat(row->train_loss, ==, loss);
    g_assert_cmpfloat(row->test_loss, ==, test_loss);
    g_assert_cmpfloat(row->train_accuracy, ==, acc);
    g_assert_cmpfloat(row->test_accuracy, ==, test_acc);
  }
  set_field("epochs", "100000");
  wait_state(LOOM_TRAINING_PAUSED, "more epochs");
}

static void test_close_while_training(void) {
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) spiral = loom_document_new_for_example("spiral", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, spiral);
  wait_state(LOOM_TRAINING_PAUSED, "the spiral example");
  set_field("epochs", "100000");
  activate("win.train-play");
  gui_test_wait(enough_points, GSIZE_TO_POINTER(plot_points("loss") + 10), TIMEOUT_MS, "training to run");
  g_assert_true(loom_window_training_locked(window));
  gtk_window_destroy(GTK_WINDOW(window));
  window = NULL;
  while (g_main_context_iteration(NULL, FALSE)) {}
}

/* ---- the controller alone, without the window ---- */

typedef struct {
  LoomTrainingController *controller;
  LoomDocument *document;
  LoomTrainingState state;
  gint64 steps;
} ControllerWait;

static gboolean controller_at(gpointer data) {
  ControllerWait *w = data;
  LoomTrainingSession *s = loom_training_controller_get_session(w->controller);
  /* A running worker always has more to say. */
  gboolean answered = w->state == LOOM_TRAINING_RUNNING || !loom_training_session_get_busy(s);
  return answered && loom_training_session_get_state(s) == w->state &&
         (w->steps < 0 || loom_document_get_training(w->document)->steps == w->steps);
}

static void count_live_change(guint *n) { (*n)++; }

static gboolean controller_stopped(gpointer c) {
  LoomTrainingSession *s = loom_training_controller_get_session(c);
  LoomTrainingState state = loom_training_session_get_state(s);
  return !loom_training_session_get_busy(s) && (state == LOOM_TRAINING_PAUSED || state == LOOM_TRAINING_FINISHED);
}

static gboolean worker_past_step_20(gpointer c) {
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(loom_training_controller_get_session(c));
  return snap && snap->step > 20;
}
static gboolean nonzero(gpointer n) { return *(guint *)n > 0; }

/* A document and a controller paced by a bare window: steps come back as
 * one undoable command that later steps join, a played run is one of its
 * own, the live weights reach autosave while it runs, and shutting down
 * mid-run joins the worker and takes the live weights off the document. */
static void test_controller_alone(void) {
  GtkWidget *clock = gtk_window_new();
  gtk_window_present(GTK_WINDOW(clock));
  g_autoptr(GError) error = NULL;
  LoomDocument *d = loom_document_new_for_example("xor", &error);
  g_assert_no_error(error);
  /* Long enough that no run reaches the end. */
  loom_train_settings *settings = loom_train_settings_copy(loom_document_get_training(d)->settings);
  settings->epochs = 100000;
  g_assert_true(loom_document_execute(d, loom_command_new_set_training_settings(settings), NULL));
  loom_train_settings_free(settings);
  LoomTrainingController *c = loom_training_controller_new(clock);
  loom_training_controller_set_document(c, d);
  ControllerWait w = {c, d, LOOM_TRAINING_PAUSED, 0};
  gui_test_wait(controller_at, &w, TIMEOUT_MS, "the worker to load the document");
  LoomCommandStack *stack = loom_document_get_commands(d);
  g_autofree char *settings_label = g_strdup(loom_command_stack_get_undo_label(stack));

  loom_training_controller_step(c);
  w.steps = 1;
  gui_test_wait(controller_at, &w, TIMEOUT_MS, "one step into the document");
  g_assert_cmpstr(loom_command_stack_get_undo_label(stack), ==, "Training: 1 step");
  loom_training_controller_step(c);
  w.steps = 2;
  gui_test_wait(controller_at, &w, TIMEOUT_MS, "a second step into the document");
  g_assert_cmpstr(loom_command_stack_get_undo_label(stack), ==, "Training: 2 steps");
  g_assert_true(loom_document_undo(d, NULL));
  g_assert_cmpint(loom_document_get_training(d)->steps, ==, 0);
  g_assert_cmpstr(loom_command_stack_get_undo_label(stack), ==, settings_label);
  g_assert_true(loom_document_redo(d, NULL));
  w.steps = 2;
  gui_test_wait(controller_at, &w, TIMEOUT_MS, "the worker to reload");

  /* Play: the network is locked; Pause brings the run back on its own. */
  loom_training_controller_play(c);
  g_assert_true(loom_training_controller_get_locked(c));
  w.state = LOOM_TRAINING_RUNNING;
  w.steps = -1;
  gui_test_wait(controller_at, &w, TIMEOUT_MS, "the run to start");
  gui_test_wait(worker_past_step_20, c, TIMEOUT_MS, "the run to take 20 steps");
  loom_training_controller_pause(c);
  /* (or to finish first: a short example may end before the pause) */
  gui_test_wait(controller_stopped, c, TIMEOUT_MS, "the run to pause");
  gui_test_spin(100);
  g_assert_false(loom_training_controller_get_locked(c));
  gint64 after_run = loom_document_get_training(d)->steps;
  g_assert_cmpint(after_run, >, 2);
  LoomTrainingSnapshot *newest = loom_training_controller_get_newest_weights(c);
  g_assert_nonnull(newest);
  g_assert_cmpint(newest->net_step, ==, after_run);
  g_assert_true(loom_document_undo(d, NULL));
  g_assert_cmpint(loom_document_get_training(d)->steps, ==, 2);
  g_assert_true(loom_document_redo(d, NULL));

  /* The live weights reach the document while it runs; shut down then. */
  guint live_changes = 0;
  g_signal_connect_swapped(d, "live-changed", G_CALLBACK(count_live_change), &live_changes);
  loom_training_controller_play(c);
  gui_test_wait(nonzero, &live_changes, TIMEOUT_MS, "live weights in the document");
  g_assert_true(loom_training_controller_get_locked(c));
  loom_training_controller_shutdown(c);
  g_assert_null(loom_training_controller_get_session(c));
  g_assert_false(loom_training_controller_get_locked(c));
  /* No live weights left: only the document's own changes need recovery. */
  g_assert_cmpint(loom_document_get_needs_recovery(d), ==, loom_document_get_dirty(d));
  g_signal_handlers_disconnect_by_data(d, &live_changes);
  g_object_unref(c);
  g_object_unref(d);
  gtk_window_destroy(GTK_WINDOW(clock));
}

static void add_cases(void) {
  g_test_add_func("/training/play-pause", test_play_pause);
  g_test_add_func("/training/slot-monitor", test_slot_monitor);
  g_test_add_func("/training/step", test_step);
  g_test_add_func("/training/reset", test_reset);
  g_test_add_func("/training/learning-rate-live", test_learning_rate_live);
  g_test_add_func("/training/refused-value", test_refused_value);
  g_test_add_func("/training/size-mismatch", test_size_mismatch);
  g_test_add_func("/training/save-while-training", test_save_while_training);
  g_test_add_func("/training/autosave-while-training", test_autosave_while_training);
  g_test_add_func("/training/settings-parity", test_settings_parity);
  g_test_add_func("/training/explosion-stops", test_explosion_stops);
  g_test_add_func("/training/close-while-training", test_close_while_training);
  g_test_add_func("/training/controller-alone", test_controller_alone);
}

int main(int argc, char **argv) { return training_harness_run(argc, argv, add_cases); }
