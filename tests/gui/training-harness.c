/* The shared part of the training GUI tests (training-harness.h). */
#include "training-harness.h"

LoomApplication *app;
LoomWindow *window;
char *tmp_dir;
GArray *epochs; /* LoomTrainingEpoch of every snapshot, in order */
GArray *points; /* LoomTrainingPoint */

LoomDocument *doc(void) { return loom_window_get_document(window); }
LoomTrainingSession *session(void) { return loom_training_controller_get_session(window->training); }
LoomTrainingPane *pane(void) { return window->training_pane; }
LoomTrainingForm *form(void) {
  return LOOM_TRAINING_FORM(gui_test_find_child(GTK_WIDGET(pane()), LOOM_TYPE_TRAINING_FORM));
}

void activate(const char *action) {
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window), action, NULL));
}

gboolean state_is(gpointer state) {
  return !loom_training_session_get_busy(session()) &&
         loom_training_session_get_state(session()) == (LoomTrainingState)GPOINTER_TO_INT(state);
}

void wait_state(LoomTrainingState state, const char *what) {
  gui_test_wait(state_is, GINT_TO_POINTER(state), TIMEOUT_MS, what);
}

gint64 doc_steps(void) { return loom_document_get_training(doc())->steps; }

gboolean settled(gpointer data) {
  return loom_training_session_get_running(session()) || !loom_training_session_get_busy(session());
}

/* Types a value into a field, as the user would, and waits until the worker
 * took it (a paused worker reloads from the document). */
void set_field(const char *name, const char *value) {
  g_autoptr(GError) error = NULL;
  loom_training_form_set_field(form(), name, value, &error);
  g_assert_no_error(error);
  gui_test_wait(settled, NULL, TIMEOUT_MS, "the worker to take the settings");
}

char *net_json(const loom_net *net) {
  loom_error err = {0};
  char *json = loom_model_to_json(net, NULL, &err);
  g_assert_nonnull(json);
  return json;
}

void on_snapshot(LoomTrainingSession *s, LoomTrainingSnapshot *snap, gpointer data) {
  g_array_append_vals(epochs, snap->epoch_rows->data, snap->epoch_rows->len);
  g_array_append_vals(points, snap->points->data, snap->points->len);
}

/* The Play button follows win.train-toggle's enabled state. */
gboolean play_enabled(void) { return gtk_widget_is_sensitive(GTK_WIDGET(pane()->play_button)); }

gboolean is_mapped(gpointer widget) { return gtk_widget_get_mapped(widget); }

void test_setup(void) {
  window = LOOM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
  g_assert_true(LOOM_IS_WINDOW(window));
  gui_test_wait(is_mapped, window, TIMEOUT_MS, "the window to map");
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window), "win.open-example", "s", "xor"));
  wait_state(LOOM_TRAINING_PAUSED, "the xor example to be ready to train");
  g_signal_connect(session(), "snapshot", G_CALLBACK(on_snapshot), NULL);
  /* Every example opens ready: Play is the only click. */
  g_assert_true(play_enabled());
}

gsize plot_points(const char *which) {
  return loom_plot_get_n_points(loom_training_pane_get_plot(pane(), which), 0);
}

gboolean enough_points(gpointer n) { return plot_points("loss") >= GPOINTER_TO_SIZE(n); }

GBytes *boundary_pixels(void) {
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

gsize differing_bytes(GBytes *a, GBytes *b) {
  gsize na, nb, n = 0;
  const guint8 *pa = g_bytes_get_data(a, &na), *pb = g_bytes_get_data(b, &nb);
  g_assert_cmpuint(na, ==, nb);
  for (gsize i = 0; i < na; i++) n += pa[i] != pb[i];
  return n;
}

GBytes *grid_pixels(void) {
  LoomGridView *view = window->grid_view;
  gui_test_wait_frame(GTK_GL_AREA(view), TIMEOUT_MS);
  int w = 0, h = 0;
  g_autoptr(GError) error = NULL;
  GBytes *bytes = loom_grid_view_read_pixels(view, &w, &h, &error);
  g_assert_no_error(error);
  return bytes;
}

gboolean doc_steps_are(gpointer n) { return doc_steps() == (gint64)GPOINTER_TO_SIZE(n); }

static void remove_tree(const char *dir) {
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  for (const char *name; d && (name = g_dir_read_name(d));) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    g_remove(path);
  }
  g_rmdir(dir);
}

int training_harness_run(int argc, char **argv, void (*add_cases)(void)) {
  gui_test_init(&argc, &argv);
  g_autoptr(GError) error = NULL;
  /* The files the tests save and reopen live here: without it they cannot run. */
  tmp_dir = g_dir_make_tmp("loom-training-XXXXXX", &error);
  g_assert_no_error(error);
  epochs = g_array_new(FALSE, FALSE, sizeof(LoomTrainingEpoch));
  points = g_array_new(FALSE, FALSE, sizeof(LoomTrainingPoint));
  app = loom_application_new();
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, &error));
  g_application_activate(G_APPLICATION(app));

  g_test_add_func("/training/setup", test_setup);
  add_cases();
  int status = g_test_run();

  while (g_main_context_iteration(NULL, FALSE)) {}
  g_object_unref(app);
  g_array_unref(epochs);
  g_array_unref(points);
  remove_tree(tmp_dir);
  g_free(tmp_dir);
  return status;
}
