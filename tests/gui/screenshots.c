/*
 * Writes PNGs of the workbench's main states into the directory given as
 * the first argument (default: ./screenshots): the empty grid, an example
 * network, a selection with the inspector, the link tool with a selected
 * link, shape-inference errors shown at their slots, the spiral example
 * training with a heatmap and its decision boundary, and the DNA pane with
 * a logic shift's arrow. Run by
 * `ninja screenshots` and, as a check that every state renders, by the gui
 * suite; a second argument sets the window's size (default 1600x1000).
 * Without a display it skips like the tests (exit 77 / TAP skip).
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <loom/model.h>
#include <stdio.h>
#include <stdlib.h>

#include "gui-test.h"
#include "loom-application.h"
#include "loom-grid-view.h"
#include "loom-link-list.h"
#include "loom-window-private.h"
#include "loom-window.h"

/* The window's size unless a second argument says otherwise ("1280x800"). */
#define WIDTH 1600
#define HEIGHT 1000

static LoomApplication *app;
static LoomWindow *window;
static const char *out_dir;

static gboolean is_mapped(gpointer widget) {
  return gtk_widget_get_mapped(widget);
}

static LoomGridView *grid_view(void) {
  return LOOM_GRID_VIEW(gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_GRID_VIEW));
}

/* Renders the whole window, the GL view included, the way the compositor would. */
static void shoot(const char *name) {
  gtk_gl_area_queue_render(GTK_GL_AREA(grid_view()));
  gui_test_spin(700); /* a few frames: layout, GL, the inspector's rows */
  int w = 0, h = 0;
  g_autoptr(GskRenderNode) node = NULL;
  /* A loaded machine may not have drawn the window yet: wait for its first frame. */
  for (int tries = 0; !node && tries < 50; tries++) {
    if (tries) gui_test_spin(200);
    w = gtk_widget_get_width(GTK_WIDGET(window));
    h = gtk_widget_get_height(GTK_WIDGET(window));
    g_autoptr(GdkPaintable) paintable = gtk_widget_paintable_new(GTK_WIDGET(window));
    GtkSnapshot *snapshot = gtk_snapshot_new();
    gdk_paintable_snapshot(paintable, snapshot, w, h);
    node = gtk_snapshot_free_to_node(snapshot);
  }
  g_assert_nonnull(node);
  GskRenderer *renderer = gtk_native_get_renderer(GTK_NATIVE(window));
  g_autoptr(GdkTexture) texture = gsk_renderer_render_texture(renderer, node, &GRAPHENE_RECT_INIT(0, 0, w, h));
  g_autofree char *path = g_build_filename(out_dir, name, NULL);
  g_assert_true(gdk_texture_save_to_png(texture, path));
  g_test_message("wrote %s (%dx%d)", path, w, h);
}

static void select_slot(int z, int y, int x, int l) {
  loom_coord c = {z, y, x, l};
  loom_grid_view_set_selection(grid_view(), &c);
}

static void test_empty(void) {
  shoot("01-empty-grid.png");
}

static void test_example(void) {
  g_autoptr(GError) error = NULL;
  g_assert_true(loom_window_open_example(window, "hop", &error));
  shoot("02-example-hop.png");
}

static void test_selection(void) {
  const loom_net *net = loom_document_get_net(loom_window_get_document(window));
  loom_coord c = loom_net_layer_coord(net, 0);
  select_slot(c.z, c.y, c.x, c.l);
  gtk_widget_grab_focus(GTK_WIDGET(grid_view()));
  shoot("03-selection-inspector.png");
}

static void test_links(void) {
  gtk_widget_activate_action(GTK_WIDGET(window), "win.link-tool", NULL);
  LoomLinkList *list = LOOM_LINK_LIST(gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_LINK_LIST));
  g_assert_cmpint(loom_link_list_get_n_links(list), >, 0);
  loom_link_list_set_selected(list, 0);
  g_signal_emit_by_name(list, "link-selected", 0);
  shoot("04-link-tool.png");
  gtk_widget_activate_action(GTK_WIDGET(window), "win.link-tool", NULL);
}

static void test_errors(void) {
  /* A dense layer whose output no longer fits what follows it. */
  LoomDocument *doc = loom_window_get_document(window);
  const loom_net *net = loom_document_get_net(doc);
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_coord c = loom_net_layer_coord(net, i);
    const loom_layer_type *t = loom_layer_get_type(loom_net_layer_at(net, c));
    int index = loom_layer_type_param_index(t, "out_features");
    if (index < 0) continue;
    loom_param_value v = loom_layer_get_value(loom_net_layer_at(net, c), index);
    v.i[0] += 3;
    g_autoptr(GError) error = NULL;
    g_assert_true(loom_document_execute(doc, loom_command_new_set_param(c, index, &v), &error));
    break;
  }
  int n = 0;
  const loom_diag *diags = loom_document_get_diagnostics(doc, &n);
  g_assert_cmpint(n, >, 0);
  /* The inspector explains the problem of the selected slot. */
  select_slot(diags[0].at.z, diags[0].at.y, diags[0].at.x, diags[0].at.l);
  shoot("05-errors.png");
}

static gboolean trained_enough(gpointer data) {
  LoomTrainingSnapshot *snap = loom_training_session_get_latest(loom_training_controller_get_session(window->training));
  return snap && snap->step >= GPOINTER_TO_INT(data);
}

static gboolean paused(gpointer data) {
  return !loom_training_session_get_busy(loom_training_controller_get_session(window->training)) &&
         loom_training_session_get_state(loom_training_controller_get_session(window->training)) != LOOM_TRAINING_RUNNING;
}

/* The spiral example trained for a while: curves, the activation heatmap on
 * the grid, the decision boundary, a slot's live statistics. */
static void test_training(void) {
  g_autoptr(GError) error = NULL;
  /* The errors case left unsaved edits: no "Save Changes?" here. */
  g_autoptr(LoomDocument) spiral = loom_document_new_for_example("spiral", &error);
  g_assert_no_error(error);
  loom_window_set_document(window, spiral);
  gui_test_wait(paused, NULL, 20000, "the example to be ready");
  /* A hidden layer selected: the inspector shows its live statistics. */
  loom_coord hidden = loom_net_layer_coord(loom_document_get_net(spiral), 2);
  loom_grid_view_set_selection(grid_view(), &hidden);
  loom_training_pane_set_heatmap_metric(window->training_pane, "activation-rms");
  gtk_widget_activate_action(GTK_WIDGET(window), "win.train-play", NULL);
  gui_test_wait(trained_enough, GINT_TO_POINTER(1), 20000, "training to start");
  /* The example's 40 epochs take a few seconds. */
  gui_test_wait(paused, NULL, 60000, "the end of training");
  shoot("06-training.png");
}

/* The DNA pane: the network against a copy whose last layer moved to the
 * free slot; the shift is selected, its arrow drawn in the grid. */
static void test_dna(void) {
  loom_training_pane_set_heatmap_metric(window->training_pane, "none");
  loom_net *moved = loom_net_clone(loom_document_get_net(loom_window_get_document(window)), NULL);
  g_assert_cmpint(loom_net_move(moved, (loom_coord){0, 1, 1, 0}, (loom_coord){0, 1, 2, 0}, NULL), ==, LOOM_OK);
  g_autofree char *path = g_build_filename(g_get_tmp_dir(), "loom-screenshot-moved.loom.json", NULL);
  g_assert_cmpint(loom_model_save(moved, path, NULL), ==, LOOM_OK);
  loom_net_free(moved);
  gtk_widget_activate_action(GTK_WIDGET(window), "win.show-dna", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(loom_dna_pane_set_source(window->dna_pane, FALSE, LOOM_DNA_SOURCE_CURRENT, 0));
  g_assert_true(loom_dna_pane_add_file(window->dna_pane, path, &error));
  loom_dna_pane_select_shift(window->dna_pane, 0);
  shoot("07-dna-shift.png");
  g_remove(path);
}

int main(int argc, char **argv) {
  gui_test_init(&argc, &argv);
  out_dir = argc > 1 ? argv[1] : "screenshots";
  int width = WIDTH, height = HEIGHT;
  if (argc > 2 && sscanf(argv[2], "%dx%d", &width, &height) != 2) g_error("bad size “%s”, expected WxH", argv[2]);
  g_mkdir_with_parents(out_dir, 0755);

  /* The screenshots show the default (dark) style and the English strings. */
  app = loom_application_new();
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, &error));
  g_application_activate(G_APPLICATION(app));
  window = LOOM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
  gtk_window_unmaximize(GTK_WINDOW(window));
  gtk_window_set_default_size(GTK_WINDOW(window), width, height);
  gui_test_wait(is_mapped, window, 20000, "the main window to map");

  g_test_add_func("/screenshots/empty", test_empty);
  g_test_add_func("/screenshots/example", test_example);
  g_test_add_func("/screenshots/selection", test_selection);
  g_test_add_func("/screenshots/links", test_links);
  g_test_add_func("/screenshots/errors", test_errors);
  g_test_add_func("/screenshots/training", test_training);
  g_test_add_func("/screenshots/dna", test_dna);
  int status = g_test_run();

  /* Drop the edit so quitting asks nothing. */
  loom_document_undo(loom_window_get_document(window), NULL);
  g_action_group_activate_action(G_ACTION_GROUP(app), "quit", NULL);
  while (g_main_context_iteration(NULL, FALSE)) {}
  g_object_unref(app);
  return status;
}
