/*
 * Training in the real workbench window: Play draws the curves and paints
 * the heatmap and the decision boundary; Pause hands the weights back as one
 * undoable command; Step runs exactly one step; Reset draws the seeded
 * weights; a learning rate changed while running reaches the worker; a
 * refused hyperparameter stays at its field; a network that cannot train on
 * the data says why and cannot play; a huge learning rate stops training
 * with a toast naming the slot; Save while training saves the newest
 * weights, and so does autosave's recovery copy; the exported settings
 * make `loom train --config` draw the same curve; the systolic feedback
 * example ticks and trains (backprop through time); a Vulkan device trains
 * a step and refuses what it cannot run; closing the window while training
 * joins the worker. The cases run
 * in order on one window.
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "gui-test.h"
#include "loom-application.h"
#include "loom-recovery.h"
#include "loom-training-form.h"
#include "loom-training-pane-private.h"
#include "loom-window-private.h"

#define TIMEOUT_MS 60000

static LoomApplication *app;
static LoomWindow *window;
static char *tmp_dir;
static GArray *epochs; /* LoomTrainingEpoch of every snapshot, in order */
static GArray *points; /* LoomTrainingPoint */

static LoomDocument *doc(void) { return loom_window_get_document(window); }
static LoomTrainingSession *session(void) { return window->training; }
static LoomTrainingPane *pane(void) { return window->training_pane; }
static LoomTrainingForm *form(void) {
  return LOOM_TRAINING_FORM(gui_test_find_child(GTK_WIDGET(pane()), LOOM_TYPE_TRAINING_FORM));
}

static void activate(const char *action) {
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window), action, NULL));
}

static gboolean state_is(gpointer state) {
  return !loom_training_session_get_busy(session()) &&
         loom_training_session_get_state(session()) == (LoomTrainingState)GPOINTER_TO_INT(state);
}

static void wait_state(LoomTrainingState state, const char *what) {
  gui_test_wait(state_is, GINT_TO_POINTER(state), TIMEOUT_MS, what);
}

static gint64 doc_steps(void) { return loom_document_get_training(doc())->steps; }

static gboolean settled(gpointer data) {
  return loom_training_session_get_running(window->training) || !loom_training_session_get_busy(window->training);
}

/* Types a value into a field, as the user would, and waits until the worker
 * took it (a paused worker reloads from the document). */
static void set_field(const char *name, const char *value) {
  g_autoptr(GError) error = NULL;
  loom_training_form_set_field(form(), name, value, &error);
  g_assert_no_error(error);
  gui_test_wait(settled, NULL, TIMEOUT_MS, "the worker to take the settings");
}

static char *net_json(const loom_net *net) {
  loom_error err = {0};
  char *json = loom_model_to_json(net, NULL, &err);
  g_assert_nonnull(json);
  return json;
}

static void on_snapshot(LoomTrainingSession *s, LoomTrainingSnapshot *snap, gpointer data) {
  g_array_append_vals(epochs, snap->epoch_rows->data, snap->epoch_rows->len);
  g_array_append_vals(points, snap->points->data, snap->points->len);
}

/* The Play button follows win.train-toggle's enabled state. */
static gboolean play_enabled(void) { return gtk_widget_is_sensitive(GTK_WIDGET(pane()->play_button)); }

static gboolean is_mapped(gpointer widget) { return gtk_widget_get_mapped(widget); }

static void test_setup(void) {
  window = LOOM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
  g_assert_true(LOOM_IS_WINDOW(window));
  gui_test_wait(is_mapped, window, TIMEOUT_MS, "the window to map");
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window), "win.open-example", "s", "xor"));
  wait_state(LOOM_TRAINING_PAUSED, "the xor example to be ready to train");
  g_signal_connect(session(), "snapshot", G_CALLBACK(on_snapshot), NULL);
  /* Every example opens ready: Play is the only click. */
  g_assert_true(play_enabled());
}

static gsize plot_points(const char *which) {
  return loom_plot_get_n_points(loom_training_pane_get_plot(pane(), which), 0);
}

static gboolean enough_points(gpointer n) { return plot_points("loss") >= GPOINTER_TO_SIZE(n); }

static GBytes *boundary_pixels(void) {
  LoomBoundaryView *view = LOOM_BOUNDARY_VIEW(gui_test_find_child(GTK_WIDGET(pane()), LOOM_TYPE_BOUNDARY_VIEW));
  g_autoptr(GdkTexture) texture = loom_boundary_view_render_texture(view, 240, 240);
  g_assert_nonnull(texture);
  static int n;
  g_autofree char *png = g_strdup_printf("%s/boundary-%d.png", g_get_tmp_dir(), n++);
  gdk_texture_save_to_png(texture, png);
  gsize stride = 240 * 4;
  guint8 *data = g_malloc(stride * 240);
  gdk_texture_download(texture, data, stride);
  return g_bytes_new_take(data, stride * 240);
}

static gsize differing_bytes(GBytes *a, GBytes *b) {
  gsize na, nb, n = 0;
  const guint8 *pa = g_bytes_get_data(a, &na), *pb = g_bytes_get_data(b, &nb);
  g_assert_cmpuint(na, ==, nb);
  for (gsize i = 0; i < na; i++) n += pa[i] != pb[i];
  return n;
}

static GBytes *grid_pixels(void) {
  LoomGridView *view = window->grid_view;
  gui_test_wait_frame(GTK_GL_AREA(view), TIMEOUT_MS);
  int w = 0, h = 0;
  g_autoptr(GError) error = NULL;
  GBytes *bytes = loom_grid_view_read_pixels(view, &w, &h, &error);
  g_assert_no_error(error);
  return bytes;
}

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

static gboolean doc_steps_are(gpointer n) { return doc_steps() == (gint64)GPOINTER_TO_SIZE(n); }

static gboolean monitor_has_values(gpointer n) {
  return loom_slot_monitor_get_n_values(window->slot_monitor, 0) >= GPOINTER_TO_UINT(n);
}

/* The selected slot's statistics appear in the inspector while it trains:
 * hidden before any data, then sparklines that grow with the steps. */
static void test_slot_monitor(void) {
  loom_coord at = loom_net_layer_coord(loom_document_get_net(doc()), 0);
  loom_grid_view_set_selection(window->grid_view, &at);
  gui_test_spin(50);
  g_assert_false(gtk_widget_get_visible(GTK_WIDGET(window->slot_monitor)));
  g_assert_true(gtk_widget_is_ancestor(GTK_WIDGET(window->slot_monitor), GTK_WIDGET(window->inspector)));
  activate("win.train-play");
  gui_test_wait(monitor_has_values, GUINT_TO_POINTER(5), TIMEOUT_MS, "the slot monitor to fill");
  g_assert_true(gtk_widget_get_mapped(GTK_WIDGET(window->slot_monitor)));
  activate("win.train-pause");
  wait_state(LOOM_TRAINING_PAUSED, "the pause");
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
  return window->newest_weights && window->newest_weights->net_step > doc_steps() + 50;
}

static gboolean document_clean(gpointer data) { return !loom_document_get_dirty(doc()); }

/* Save while training: the file holds the newest weights the worker published. */
static void test_save_while_training(void) {
  activate("win.train-play");
  gui_test_wait(has_newer_weights, NULL, TIMEOUT_MS, "newer weights from the worker");
  LoomTrainingSnapshot *snap = loom_training_snapshot_ref(window->newest_weights);
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

/* ---- the DNA pane ---- */

static int shift_pixels(GBytes *pixels) {
  gsize len;
  const guint8 *px = g_bytes_get_data(pixels, &len);
  int n = 0;
  for (gsize i = 0; i + 3 < len; i += 4)
    n += gui_test_pixel_near(px + i, LOOM_GRID_VIEW_SHIFT_R, LOOM_GRID_VIEW_SHIFT_G, LOOM_GRID_VIEW_SHIFT_B, 30);
  return n;
}

/* The timeline filled while training; the first snapshot against the
 * newest shows a matrix of the network's slots. */
static void test_dna_timeline(void) {
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window), "win.show-dna", NULL));
  g_assert_cmpuint(loom_dna_pane_get_n_snapshots(window->dna_pane), >=, 2);
  g_assert_true(loom_dna_pane_set_source(window->dna_pane, FALSE, LOOM_DNA_SOURCE_SNAPSHOT, 0));
  guint last = loom_dna_pane_get_n_snapshots(window->dna_pane) - 1;
  g_assert_true(loom_dna_pane_set_source(window->dna_pane, TRUE, LOOM_DNA_SOURCE_SNAPSHOT, last));
  const loom_dna_result *r = loom_dna_pane_get_result(window->dna_pane);
  g_assert_nonnull(r);
  g_assert_cmpint(loom_dna_result_n_a(r), ==, loom_net_n_layers(loom_document_get_net(doc())));
  double s = loom_dna_result_similarity(r);
  g_assert_true(s > 0 && s < 1); /* trained: alike, not the same */
  g_autofree char *csv = g_build_filename(tmp_dir, "matrix.csv", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(loom_dna_pane_export_matrix(window->dna_pane, csv, &error));
  g_autofree char *text = NULL;
  g_assert_true(g_file_get_contents(csv, &text, NULL, NULL));
  g_auto(GStrv) lines = g_strsplit(text, "\n", -1);
  g_assert_cmpuint(g_strv_length(lines), >=, (guint)loom_dna_result_n_a(r) + 1);
}

/* A copy of the network with its last layer moved to the free slot: the
 * move is the one logic shift, and selecting it draws its arrow. */
static void test_dna_shift_arrow(void) {
  loom_net *moved = loom_net_clone(loom_document_get_net(doc()), NULL);
  loom_coord from = {0, 1, 1, 0}, to = {0, 1, 2, 0};
  g_assert_nonnull(loom_net_layer_at(moved, from));
  g_assert_null(loom_net_layer_at(moved, to));
  g_assert_cmpint(loom_net_move(moved, from, to, NULL), ==, LOOM_OK);
  g_autofree char *path = g_build_filename(tmp_dir, "moved.loom.json", NULL);
  g_assert_cmpint(loom_model_save(moved, path, NULL), ==, LOOM_OK);
  loom_net_free(moved);
  g_autoptr(GError) error = NULL;
  g_assert_true(loom_dna_pane_set_source(window->dna_pane, FALSE, LOOM_DNA_SOURCE_CURRENT, 0));
  g_assert_true(loom_dna_pane_add_file(window->dna_pane, path, &error));
  const loom_dna_result *r = loom_dna_pane_get_result(window->dna_pane);
  g_assert_nonnull(r);
  g_assert_cmpint(loom_dna_result_n_shifts(r), ==, 1);
  loom_dna_shift shift = loom_dna_result_shift(r, 0);
  g_assert_cmpint(loom_net_flat_index(loom_document_get_net(doc()), shift.from), ==,
                  loom_net_flat_index(loom_document_get_net(doc()), from));
  g_assert_cmpint(loom_net_flat_index(loom_document_get_net(doc()), shift.to), ==,
                  loom_net_flat_index(loom_document_get_net(doc()), to));
  g_autoptr(GBytes) before = grid_pixels();
  g_assert_cmpint(shift_pixels(before), <, 20);
  loom_dna_pane_select_shift(window->dna_pane, 0);
  g_autoptr(GBytes) after = grid_pixels();
  g_test_message("shift arrow pixels: %d", shift_pixels(after));

  g_assert_cmpint(shift_pixels(after), >, 200);
  loom_dna_pane_select_shift(window->dna_pane, -1);
  g_autoptr(GBytes) cleared = grid_pixels();
  g_assert_cmpint(shift_pixels(cleared), <, 20);
  /* A file that does not load names itself and the reason. */
  g_autoptr(GError) bad = NULL;
  g_autofree char *missing = g_build_filename(tmp_dir, "missing.loom.json", NULL);
  g_assert_false(loom_dna_pane_add_file(window->dna_pane, missing, &bad));
  g_assert_nonnull(strstr(bad->message, "missing.loom.json"));
}

/* The live heatmap: every slot by its best match against the baseline,
 * changing while training runs. */
static void test_dna_live_heatmap(void) {
  wait_state(LOOM_TRAINING_PAUSED, "the reset");
  g_assert_true(loom_dna_pane_set_source(window->dna_pane, FALSE, LOOM_DNA_SOURCE_CURRENT, 0));
  loom_dna_pane_set_live_heatmap(window->dna_pane, TRUE);
  g_assert_cmpstr(loom_training_pane_get_heatmap_metric(pane()), ==, "none");
  activate("win.train-play");
  gui_test_wait(enough_points, GSIZE_TO_POINTER(plot_points("loss") + 50), TIMEOUT_MS, "training to run");
  g_assert_cmpint(loom_grid_view_get_color_mode(window->grid_view), ==, LOOM_GRID_VIEW_COLOR_METRIC);
  g_autoptr(GBytes) early = grid_pixels();
  gui_test_wait(enough_points, GSIZE_TO_POINTER(plot_points("loss") + 1500), TIMEOUT_MS, "more training");
  g_autoptr(GBytes) later = grid_pixels();
  g_assert_cmpuint(differing_bytes(early, later), >, 500);
  activate("win.train-pause");
  wait_state(LOOM_TRAINING_PAUSED, "the pause");
  /* The training pane's heatmap takes the grid back. */
  loom_training_pane_set_heatmap_metric(pane(), "weight-norm");
  g_assert_false(loom_dna_pane_get_live_heatmap(window->dna_pane));
  loom_training_pane_set_heatmap_metric(pane(), "none");
}

/* ---- export ---- */

/* The export dialog shows the weights' size at the chosen dtype; each
 * format writes a file that reads back (ONNX: a protobuf). */
static void test_export(void) {
  LoomExportDialog *dialog = loom_window_show_export(window);
  loom_export_dialog_set_dtype(dialog, FALSE, LOOM_DTYPE_FLOAT32);
  g_autofree char *own = g_strdup(loom_export_dialog_get_size_text(dialog));
  loom_export_dialog_set_dtype(dialog, TRUE, LOOM_DTYPE_INT4);
  g_autofree char *int4 = g_strdup(loom_export_dialog_get_size_text(dialog));
  g_test_message("export sizes: %s / %s", own, int4);
  g_assert_cmpstr(own, !=, int4);
  g_assert_nonnull(strstr(int4, "float32"));
  gtk_window_destroy(GTK_WINDOW(dialog));

  const loom_net *net = loom_document_get_net(doc());
  g_autofree char *want = net_json(net);
  const LoomExportFormat formats[] = {LOOM_EXPORT_JSON, LOOM_EXPORT_SAFETENSORS, LOOM_EXPORT_ONNX};
  for (gsize i = 0; i < G_N_ELEMENTS(formats); i++) {
    g_autofree char *name = g_strconcat("export", loom_export_format_extension(formats[i]), NULL);
    g_autofree char *path = g_build_filename(tmp_dir, name, NULL);
    g_autoptr(GError) error = NULL;
    g_assert_true(loom_export_write(net, formats[i], FALSE, LOOM_DTYPE_FLOAT32, path, &error));
    g_assert_no_error(error);
    if (formats[i] == LOOM_EXPORT_ONNX) {
      gsize len = 0;
      g_autofree char *bytes = NULL;
      g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
      g_assert_cmpuint(len, >, 100);
      continue;
    }
    loom_net *back = NULL;
    g_assert_cmpint(loom_model_load(path, 0, &back, NULL), ==, LOOM_OK);
    g_autofree char *got = net_json(back);
    g_assert_cmpstr(got, ==, want);
    loom_net_free(back);
  }
  /* int4 for every layer: smaller, and the document keeps its dtypes. */
  g_autofree char *f32 = g_build_filename(tmp_dir, "f32.safetensors", NULL);
  g_autofree char *q4 = g_build_filename(tmp_dir, "int4.safetensors", NULL);
  g_assert_true(loom_export_write(net, LOOM_EXPORT_SAFETENSORS, FALSE, LOOM_DTYPE_FLOAT32, f32, NULL));
  g_assert_true(loom_export_write(net, LOOM_EXPORT_SAFETENSORS, TRUE, LOOM_DTYPE_INT4, q4, NULL));
  GStatBuf a, b;
  g_assert_cmpint(g_stat(f32, &a), ==, 0);
  g_assert_cmpint(g_stat(q4, &b), ==, 0);
  g_assert_cmpint(b.st_size, <, a.st_size);
  g_autofree char *after = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(after, ==, want);
  /* A file that cannot be written names itself. */
  g_autoptr(GError) error = NULL;
  g_assert_false(loom_export_write(net, LOOM_EXPORT_JSON, FALSE, LOOM_DTYPE_FLOAT32, "/nonexistent/dir/x.loom.json",
                                   &error));
  g_assert_nonnull(strstr(error->message, "/nonexistent/dir/x.loom.json"));
}

/* ---- the systolic mesh ---- */

static gboolean ticks_are(gpointer n) { return loom_systolic_pane_get_ticks(window->systolic_pane) == GPOINTER_TO_INT(n); }

static int lit_slots(void) {
  gsize n = 0;
  const loom_slot_trace *t = loom_systolic_pane_get_trace(window->systolic_pane, &n);
  int lit = 0;
  for (gsize i = 0; i < n; i++) lit += t[i].norm > 0;
  return lit;
}

/* The feedback example, one tick at a time: the trace and the grid's
 * colours advance with every tick; the signal reaches one more slot each
 * tick until every slot carries it. */
static void test_systolic(void) {
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) feedback = loom_document_new_for_example("feedback", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, feedback);
  g_assert_cmpint(loom_net_execution(loom_document_get_net(doc())), ==, LOOM_EXEC_SYSTOLIC);
  /* The training data (whose first sample the mesh holds) arrives first. */
  gui_test_wait(settled, NULL, TIMEOUT_MS, "the example's data");
  activate("win.systolic-tick");
  gui_test_wait(ticks_are, GINT_TO_POINTER(1), TIMEOUT_MS, "tick 1");
  g_assert_null(loom_systolic_pane_get_error(window->systolic_pane));
  g_assert_cmpstr(gtk_stack_get_visible_child_name(window->bottom_stack), ==, "systolic");
  g_assert_cmpint(loom_grid_view_get_color_mode(window->grid_view), ==, LOOM_GRID_VIEW_COLOR_METRIC);
  int lit1 = lit_slots();
  g_autoptr(GBytes) one = grid_pixels();
  activate("win.systolic-tick");
  gui_test_wait(ticks_are, GINT_TO_POINTER(2), TIMEOUT_MS, "tick 2");
  int lit2 = lit_slots();
  g_autoptr(GBytes) two = grid_pixels();
  g_test_message("slots reached: %d after one tick, %d after two", lit1, lit2);
  g_assert_cmpint(lit1, >=, 1);
  g_assert_cmpint(lit2, ==, lit1 + 1);
  g_assert_cmpuint(differing_bytes(one, two), >, 200);
  activate("win.systolic-reset");
  g_assert_cmpint(loom_systolic_pane_get_ticks(window->systolic_pane), ==, 0);
  gtk_stack_set_visible_child_name(window->bottom_stack, "training");
  g_assert_cmpint(loom_grid_view_get_color_mode(window->grid_view), ==, LOOM_GRID_VIEW_COLOR_LAYER_TYPE);
}

/* The feedback example trains in the workbench: the worker runs the engine's
 * trainer, which backpropagates through the 8 ticks the example opens with;
 * three Steps give the losses the engine gives for the same settings. */
static void test_systolic_train(void) {
  const loom_train_settings *settings = loom_document_get_training(doc())->settings;
  g_assert_cmpint(settings->ticks, ==, 8);
  wait_state(LOOM_TRAINING_PAUSED, "the feedback example to be ready to train");
  g_assert_true(play_enabled());
  gint64 steps = doc_steps();
  guint before = points->len;
  for (gint64 i = 1; i <= 3; i++) {
    activate("win.train-step");
    gui_test_wait(doc_steps_are, GSIZE_TO_POINTER(steps + i), TIMEOUT_MS, "a step of the feedback example");
    wait_state(LOOM_TRAINING_PAUSED, "the step to end");
  }
  gui_test_spin(100);
  g_assert_cmpuint(points->len, ==, before + 3);

  loom_error err = {0};
  loom_net *net = NULL;
  loom_dataset *train = NULL, *test = NULL;
  loom_train_config cfg;
  g_assert_cmpint(loom_example_build("feedback", &net, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_train_settings_make_data(settings, net, NULL, &train, &test, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_train_settings_make_config(settings, net, train, &cfg, &err), ==, LOOM_OK);
  loom_trainer *tr = loom_trainer_new(net, train, test, &cfg, NULL, &err);
  g_assert_nonnull(tr);
  for (guint i = 0; i < 3; i++) {
    loom_step_stats st;
    g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, LOOM_OK);
    g_assert_cmpfloat(g_array_index(points, LoomTrainingPoint, before + i).loss, ==, st.loss);
  }
  loom_trainer_free(tr);
  loom_dataset_free(train);
  loom_dataset_free(test);
  loom_net_free(net);
  /* the next case opens a file into a clean window */
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) fresh = loom_document_new_for_example("feedback", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, fresh);
  gui_test_wait(settled, NULL, TIMEOUT_MS, "the fresh example");
}

/* ---- import of PyTorch weights ---- */

static loom_layer *dense(int64_t in, int64_t out) {
  loom_layer *l = loom_layer_new_by_name("dense", NULL);
  g_assert_nonnull(l);
  g_assert_cmpint(loom_layer_set_int(l, "in_features", in, NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_int(l, "out_features", out, NULL), ==, LOOM_OK);
  return l;
}

static gboolean titled(gpointer title) { return g_strcmp0(loom_document_get_title(doc()), title) == 0; }

/* torch's nn.Sequential(Linear(4, 8), ReLU(), Linear(8, 3)) saved as
 * safetensors (tests/io/make_state_dict.py) into the same network in the
 * window: its forward gives torch's output; one undo puts the weights back;
 * a file named otherwise is refused until a mapping says where it goes. */
static void test_import_weights(void) {
  loom_net *net = loom_net_new(1, 1, 3, 1, NULL);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 0}, dense(4, 8), NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 1, 0}, loom_layer_new_by_name("relu", NULL), NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 2, 0}, dense(8, 3), NULL), ==, LOOM_OK);
  loom_shape in = loom_shape_1d(4);
  g_assert_cmpint(loom_net_set_input_shape(net, &in, NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_net_infer_shapes(net, 7, NULL), ==, 0);
  g_autofree char *model = g_build_filename(tmp_dir, "mlp.loom.json", NULL);
  g_assert_cmpint(loom_model_save(net, model, NULL), ==, LOOM_OK);
  loom_net_free(net);
  g_assert_false(loom_document_get_dirty(doc()));
  g_autoptr(GFile) file = g_file_new_for_path(model);
  loom_window_open_file(window, file);
  gui_test_wait(titled, "mlp.loom.json", TIMEOUT_MS, "the MLP to open");
  g_autofree char *before = net_json(loom_document_get_net(doc()));

  const char *src = g_getenv("G_TEST_SRCDIR");
  g_autofree char *dir = g_build_filename(src, "io", "state-dict", NULL);
  g_autofree char *weights = g_build_filename(dir, "mlp-f32.safetensors", NULL);
  g_autofree char *input = g_build_filename(dir, "input.npy", NULL);
  g_autofree char *expected = g_build_filename(dir, "expected-f32.npy", NULL);
  g_autoptr(GError) error = NULL;
  loom_window_import_weights(window, weights, NULL, &error);
  g_assert_no_error(error);
  g_assert_cmpstr(loom_command_stack_get_undo_label(loom_document_get_commands(doc())), ==, "Import Weights");

  loom_npy x = {0}, want = {0};
  g_assert_cmpint(loom_npy_read(input, &x, NULL), ==, LOOM_OK);
  g_assert_cmpint(loom_npy_read(expected, &want, NULL), ==, LOOM_OK);
  loom_net *copy = loom_net_clone(loom_document_get_net(doc()), NULL);
  loom_diag *diags = NULL;
  loom_net_infer_shapes(copy, loom_net_seed(copy), &diags);
  free(diags);
  int64_t batch = loom_npy_numel(&x) / 4;
  g_autofree float *y = g_new(float, (gsize)batch * 3);
  loom_ctx ctx = {0};
  g_assert_cmpint(loom_net_forward(copy, &ctx, x.data, batch, y, NULL), ==, LOOM_OK);
  double scale = 0;
  for (int64_t i = 0; i < batch * 3; i++) scale = fmax(scale, fabs(want.data[i]));
  for (int64_t i = 0; i < batch * 3; i++) g_assert_cmpfloat(fabs(y[i] - want.data[i]), <=, 1e-5 * scale);
  loom_net_free(copy);
  loom_npy_clear(&x);
  loom_npy_clear(&want);

  activate("win.undo");
  g_autofree char *undone = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(undone, ==, before);

  /* fc1/fc2 names: no nn.Sequential order to follow; with the mapping it goes. */
  g_autofree char *named = g_build_filename(dir, "mlp-named.safetensors", NULL);
  g_autofree char *map = g_build_filename(dir, "mlp-named.map.json", NULL);
  g_autoptr(GError) refused = NULL;
  g_assert_false(loom_window_import_weights(window, named, NULL, &refused));
  g_test_message("refused: %s", refused->message);
  g_assert_nonnull(strstr(refused->message, "mapping"));
  g_autofree char *unchanged = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(unchanged, ==, before);
  g_autoptr(GError) mapped = NULL;
  g_assert_true(loom_window_import_weights(window, named, map, &mapped));
}

/* Closing the window while the worker trains cancels it and joins it. */
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

static gboolean state_settled(gpointer data) { return !loom_training_session_get_busy(session()); }

/* Training on a Vulkan device (lavapipe here): the device list offers it,
 * Step runs there and hands the weights back as ever; a network the device
 * cannot run is refused with its slot named, and the CPU takes it again. */
static void test_device(void) {
  loom_gpu_device_info *devices = NULL;
  int n = 0;
  if (!loom_gpu_compiled() || loom_gpu_list_devices(&devices, &n, NULL) != LOOM_OK || n == 0) {
    free(devices);
    g_test_skip("no Vulkan device");
    return;
  }
  free(devices);
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(pane()->device_dropdown)));
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) xor = loom_document_new_for_example("xor", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, xor);
  wait_state(LOOM_TRAINING_PAUSED, "the xor example");
  gtk_drop_down_set_selected(pane()->device_dropdown, 1); /* as the user picks it */
  gui_test_wait(state_settled, NULL, TIMEOUT_MS, "the trainer on the device");
  g_assert_cmpint(loom_training_session_get_state(session()), ==, LOOM_TRAINING_PAUSED);
  gint64 steps = doc_steps();
  g_autofree char *before = net_json(loom_document_get_net(doc()));
  activate("win.train-step");
  gui_test_wait(doc_steps_are, GSIZE_TO_POINTER(steps + 1), TIMEOUT_MS, "a step on the device");
  g_autofree char *after = net_json(loom_document_get_net(doc()));
  g_assert_cmpstr(before, !=, after);

  /* The CNN's convolutions do not run there: refused, naming the slot. */
  g_autoptr(LoomDocument) cnn = loom_document_new_for_example("cnn", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, cnn);
  wait_state(LOOM_TRAINING_INVALID, "the refusal");
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(session());
  g_assert_nonnull(snap->message);
  g_test_message("refused: %s", snap->message);
  g_assert_nonnull(strstr(snap->message, "(0,"));
  g_assert_false(play_enabled());
  gtk_drop_down_set_selected(pane()->device_dropdown, 0);
  wait_state(LOOM_TRAINING_PAUSED, "the CPU to take the CNN");
  g_assert_true(play_enabled());
}

static void remove_tree(const char *dir) {
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  for (const char *name; d && (name = g_dir_read_name(d));) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_remove(path);
  }
  g_rmdir(dir);
}

int main(int argc, char **argv) {
  gui_test_init(&argc, &argv);
  tmp_dir = g_dir_make_tmp("loom-training-XXXXXX", NULL);
  epochs = g_array_new(FALSE, FALSE, sizeof(LoomTrainingEpoch));
  points = g_array_new(FALSE, FALSE, sizeof(LoomTrainingPoint));
  app = loom_application_new();
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, &error));
  g_application_activate(G_APPLICATION(app));

  g_test_add_func("/training/setup", test_setup);
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
  g_test_add_func("/training/dna-live-heatmap", test_dna_live_heatmap);
  g_test_add_func("/training/dna-timeline", test_dna_timeline);
  g_test_add_func("/training/dna-shift-arrow", test_dna_shift_arrow);
  g_test_add_func("/training/export", test_export);
  g_test_add_func("/training/systolic", test_systolic);
  g_test_add_func("/training/systolic-train", test_systolic_train);
  g_test_add_func("/training/import-weights", test_import_weights);
  g_test_add_func("/training/device", test_device);
  g_test_add_func("/training/close-while-training", test_close_while_training);
  int status = g_test_run();

  while (g_main_context_iteration(NULL, FALSE)) {}
  g_object_unref(app);
  g_array_unref(epochs);
  g_array_unref(points);
  remove_tree(tmp_dir);
  g_free(tmp_dir);
  return status;
}
