/*
 * Designing a network in the real workbench window: placing layers through
 * actions and through the view's picking on projected coordinates, keyboard
 * selection, the inspector's dtype drop-down, drawing links, undo/redo back
 * to the saved state, save → close → reopen giving the same model file, the
 * "save changes?" question, hostile files, examples and image export.
 * Assertions read the document and GL pixels. Cases run in order on one window.
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <loom/model.h>
#include <stdlib.h>
#include <string.h>

#include "gui-test.h"
#include "loom-application.h"
#include "loom-example-gallery.h"
#include "loom-grid-view-private.h"
#include "loom-grid-view.h"
#include "loom-inspector-private.h"
#include "loom-link-list.h"
#include "loom-new-dialog.h"
#include "loom-palette.h"
#include "loom-window.h"

#define TIMEOUT_MS 20000

static LoomApplication *app;
static LoomWindow *window;
static char *tmp_dir;

static LoomGridView *grid_view(void) {
  return LOOM_GRID_VIEW(gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_GRID_VIEW));
}

static LoomDocument *doc(void) {
  return loom_window_get_document(window);
}

static const loom_net *net(void) {
  return loom_document_get_net(doc());
}

static char *doc_json(void) {
  loom_error err = {0};
  char *json = loom_model_to_json(net(), NULL, &err);
  if (!json) g_error("to_json: %s", err.message);
  return json;
}

static GtkWindow *find_toplevel(GType type) {
  GListModel *toplevels = gtk_window_get_toplevels();
  for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
    g_autoptr(GtkWindow) w = g_list_model_get_item(toplevels, i);
    if (G_TYPE_CHECK_INSTANCE_TYPE(w, type) && gtk_widget_get_visible(GTK_WIDGET(w))) return w;
  }
  return NULL;
}

static gboolean toplevel_shown(gpointer type) {
  return find_toplevel((GType)GPOINTER_TO_SIZE(type)) != NULL;
}

static gboolean is_mapped(gpointer widget) {
  return gtk_widget_get_mapped(widget);
}

/* What a click on a dialog's response button does: the response, then the dialog closes. */
static void respond(gpointer dialog, const char *response) {
  adw_message_dialog_response(ADW_MESSAGE_DIALOG(dialog), response);
  gtk_window_destroy(GTK_WINDOW(dialog));
}

static void activate(const char *action, GVariant *param) {
  g_assert_true(gtk_widget_activate_action_variant(GTK_WIDGET(window), action, param));
}

static void select_slot(int z, int y, int x, int l) {
  loom_coord c = {z, y, x, l};
  loom_grid_view_set_selection(grid_view(), &c);
}

static void assert_selected(int z, int y, int x, int l) {
  loom_coord c;
  g_assert_true(loom_grid_view_get_selection(grid_view(), &c));
  g_assert_cmpint(c.z, ==, z);
  g_assert_cmpint(c.y, ==, y);
  g_assert_cmpint(c.x, ==, x);
  g_assert_cmpint(c.l, ==, l);
}

static const char *type_at(int z, int y, int x, int l) {
  loom_layer *layer = loom_net_layer_at(net(), (loom_coord){z, y, x, l});
  return layer ? loom_layer_type_name(loom_layer_get_type(layer)) : NULL;
}

/* ---- setup ---- */

static void test_setup(void) {
  window = LOOM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
  g_assert_true(LOOM_IS_WINDOW(window));
  gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
  gui_test_wait(is_mapped, window, TIMEOUT_MS, "the main window to map");

  /* New through its dialog: 1 × 2 × 3 cells of 2 slots, 8 input features. */
  activate("win.new", NULL);
  gui_test_wait(toplevel_shown, GSIZE_TO_POINTER(LOOM_TYPE_NEW_DIALOG), TIMEOUT_MS, "the New dialog");
  LoomNewDialog *dialog = LOOM_NEW_DIALOG(find_toplevel(LOOM_TYPE_NEW_DIALOG));
  loom_new_dialog_set_size(dialog, (int[]){1, 2, 3, 2});
  loom_new_dialog_set_input_text(dialog, "3 × 4");
  g_assert_true(adw_message_dialog_get_response_enabled(ADW_MESSAGE_DIALOG(dialog), "create"));
  loom_new_dialog_set_input_text(dialog, "eight");
  g_assert_false(adw_message_dialog_get_response_enabled(ADW_MESSAGE_DIALOG(dialog), "create"));
  loom_new_dialog_set_input_text(dialog, "8");
  LoomDocument *before = doc();
  respond(dialog, "create");
  g_assert_true(doc() != before);
  g_assert_cmpint(loom_net_depth(net()), ==, 1);
  g_assert_cmpint(loom_net_rows(net()), ==, 2);
  g_assert_cmpint(loom_net_cols(net()), ==, 3);
  g_assert_cmpint(loom_net_layers_per_cell(net()), ==, 2);
  loom_shape in = loom_net_input_shape(net());
  g_assert_cmpint(in.rank, ==, 1);
  g_assert_cmpint(in.d[0], ==, 8);
  g_assert_false(loom_document_get_dirty(doc()));
  g_assert_cmpuint(loom_grid_view_get_cols(grid_view()), ==, 3);
}

/* ---- placing ---- */

static void test_place_by_action(void) {
  gtk_widget_grab_focus(GTK_WIDGET(grid_view()));
  select_slot(0, 0, 0, 0);
  activate("win.place-layer", g_variant_new_string("dense"));
  g_assert_cmpstr(type_at(0, 0, 0, 0), ==, "dense");
  /* Shape inference proposed the input size: the network's 8 features. */
  g_assert_cmpint(loom_layer_get_int(loom_net_layer_at(net(), (loom_coord){0, 0, 0, 0}), "in_features"), ==, 8);
  g_assert_true(loom_document_get_dirty(doc()));
  g_assert_true(g_str_has_prefix(gtk_window_get_title(GTK_WINDOW(window)), "• "));
  /* The inspector follows the selection. */
  LoomInspector *inspector = LOOM_INSPECTOR(gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_INSPECTOR));
  g_assert_true(loom_inspector_get_layer(inspector) == loom_net_layer_at(net(), (loom_coord){0, 0, 0, 0}));
  g_assert_cmpint(loom_inspector_get_n_param_rows(inspector), >, 0);

  /* An occupied slot refuses a second layer and keeps the first. */
  activate("win.place-layer", g_variant_new_string("relu"));
  g_assert_cmpstr(type_at(0, 0, 0, 0), ==, "dense");
  g_assert_cmpint(loom_net_n_layers(net()), ==, 1);
}

static void test_keyboard_selection(void) {
  gtk_widget_grab_focus(GTK_WIDGET(grid_view()));
  activate("win.select-right", NULL);
  assert_selected(0, 0, 1, 0);
  activate("win.place-again", NULL); /* the last type used: dense */
  g_assert_cmpstr(type_at(0, 0, 1, 0), ==, "dense");
  activate("win.select-next-slot", NULL);
  assert_selected(0, 0, 1, 1);
  activate("win.select-next-slot", NULL); /* stays inside the cell */
  assert_selected(0, 0, 1, 1);
  activate("win.select-previous-slot", NULL);
  activate("win.select-down", NULL);
  assert_selected(0, 1, 1, 0);
  activate("win.select-deeper", NULL); /* depth 1: nowhere to go */
  assert_selected(0, 1, 1, 0);
  activate("win.select-up", NULL);
  activate("win.select-left", NULL);
  activate("win.select-left", NULL);
  assert_selected(0, 0, 0, 0);

  /* Delete clears; undo brings the same layer back. */
  select_slot(0, 0, 1, 0);
  g_autofree char *with = doc_json();
  activate("win.clear-slot", NULL);
  g_assert_null(type_at(0, 0, 1, 0));
  activate("win.undo", NULL);
  g_autofree char *back = doc_json();
  g_assert_cmpstr(with, ==, back);

  /* With the focus elsewhere the arrows belong to that widget: nothing moves. */
  GtkWidget *palette = gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_PALETTE);
  activate("win.focus-palette", NULL);
  g_assert_true(gtk_widget_is_ancestor(gtk_root_get_focus(GTK_ROOT(window)), palette) ||
                gtk_root_get_focus(GTK_ROOT(window)) == palette);
  gtk_widget_activate_action(GTK_WIDGET(window), "win.select-right", NULL);
  assert_selected(0, 0, 1, 0);
  gtk_widget_grab_focus(GTK_WIDGET(grid_view()));
}

/* ---- picking and pixels ---- */

static void wait_frame(void) {
  gui_test_wait_frame(GTK_GL_AREA(grid_view()), TIMEOUT_MS);
}

static int highlight_pixels_at(double x, double y) {
  return gui_test_highlight_pixels_at(grid_view(), x, y);
}

static void test_pick_and_place(void) {
  LoomGridView *view = grid_view();
  loom_grid_view_reset_camera(view);
  wait_frame();

  /* Where the empty cell (0,1,2) projects, picking finds it (slot 0)... */
  loom_coord target = {0, 1, 2, 0}, picked = {-1, -1, -1, -1};
  double x, y;
  g_assert_true(loom_grid_view_project(view, &target, &x, &y));
  g_assert_cmpfloat(x, >, 0);
  g_assert_cmpfloat(y, >, 0);
  g_assert_cmpfloat(x, <, gtk_widget_get_width(GTK_WIDGET(view)));
  g_assert_cmpfloat(y, <, gtk_widget_get_height(GTK_WIDGET(view)));
  g_assert_true(loom_grid_view_pick(view, x, y, &picked));
  g_assert_cmpint(picked.z, ==, 0);
  g_assert_cmpint(picked.y, ==, 1);
  g_assert_cmpint(picked.x, ==, 2);
  g_assert_cmpint(picked.l, ==, 0);

  /* ...and a click there (what the view's click gesture does with a pick)
   * selects it; a palette activation places into the selection. */
  loom_grid_view_set_selection(view, &picked);
  activate("win.place-layer", g_variant_new_string("relu"));
  g_assert_cmpstr(type_at(0, 1, 2, 0), ==, "relu");

  /* The selected slot shows the highlight colour where it projects; the
   * first layer's slot, not selected, does not. */
  wait_frame();
  g_assert_cmpint(highlight_pixels_at(x, y), >=, 5);
  loom_coord other = {0, 0, 0, 0};
  double ox, oy;
  g_assert_true(loom_grid_view_project(view, &other, &ox, &oy));
  g_assert_cmpint(highlight_pixels_at(ox, oy), ==, 0);

  /* The picked coordinates of an occupied slot come back exactly too. */
  g_assert_true(loom_grid_view_project(view, &other, &ox, &oy));
  g_assert_true(loom_grid_view_pick(view, ox, oy, &picked));
  g_assert_cmpint(picked.x, ==, 0);
  g_assert_cmpint(picked.y, ==, 0);
}

/* ---- inspector ---- */

static void test_dtype(void) {
  select_slot(0, 0, 0, 0);
  LoomInspector *inspector = LOOM_INSPECTOR(gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_INSPECTOR));
  GtkDropDown *drop = loom_inspector_get_dtype_drop_down(inspector);
  g_assert_nonnull(drop);
  size_t before = loom_net_bytes(net());
  gtk_drop_down_set_selected(drop, LOOM_DTYPE_INT8);
  g_assert_cmpint(loom_layer_get_dtype(loom_net_layer_at(net(), (loom_coord){0, 0, 0, 0})), ==, LOOM_DTYPE_INT8);
  g_assert_cmpuint(loom_net_bytes(net()), <, before);
  g_assert_cmpuint(gtk_drop_down_get_selected(loom_inspector_get_dtype_drop_down(inspector)), ==, LOOM_DTYPE_INT8);

  /* A parameter edit through the inspector's signal is undoable too. */
  int index = loom_layer_type_param_index(loom_layer_get_type(loom_net_layer_at(net(), (loom_coord){0, 0, 0, 0})),
                                          "out_features");
  g_assert_cmpint(index, >=, 0);
  loom_param_value v = {.i = {5}};
  g_signal_emit_by_name(inspector, "param-changed", (guint)index, &v);
  g_assert_cmpint(loom_layer_get_int(loom_net_layer_at(net(), (loom_coord){0, 0, 0, 0}), "out_features"), ==, 5);
}

/* ---- links ---- */

static void test_links(void) {
  LoomGridView *view = grid_view();
  GtkWidget *list = gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_LINK_LIST);
  g_action_group_change_action_state(G_ACTION_GROUP(window), "link-merge", g_variant_new_string("concat"));
  activate("win.link-tool", NULL);
  g_autoptr(GVariant) tool = g_action_group_get_action_state(G_ACTION_GROUP(window), "link-tool");
  g_assert_true(g_variant_get_boolean(tool));

  /* What the view emits when a link-tool drag ends on another slot. */
  g_signal_emit_by_name(view, "link-drawn", 0, 0, 0, 0, 0, 1, 2, 0);
  g_assert_cmpint(loom_net_n_links(net()), ==, 1);
  const loom_link *link = loom_net_link(net(), 0);
  g_assert_cmpint(link->dst.x, ==, 2);
  g_assert_cmpint(link->merge, ==, LOOM_MERGE_CONCAT);
  g_assert_cmpint(loom_link_list_get_n_links(LOOM_LINK_LIST(list)), ==, 1);
  g_assert_cmpint(loom_link_list_get_selected(LOOM_LINK_LIST(list)), ==, 0);

  /* A feedback link is refused in feed-forward mode; nothing changes. */
  g_signal_emit_by_name(view, "link-drawn", 0, 1, 2, 0, 0, 0, 0, 0);
  g_assert_cmpint(loom_net_n_links(net()), ==, 1);

  /* Merge mode from the list, then delete through the action, then undo. */
  g_signal_emit_by_name(list, "merge-changed", 0, (int)LOOM_MERGE_REPLACE);
  g_assert_cmpint(loom_net_link(net(), 0)->merge, ==, LOOM_MERGE_REPLACE);
  loom_link_list_set_selected(LOOM_LINK_LIST(list), 0);
  g_signal_emit_by_name(list, "link-selected", 0);
  activate("win.delete-link", NULL);
  g_assert_cmpint(loom_net_n_links(net()), ==, 0);
  activate("win.undo", NULL);
  g_assert_cmpint(loom_net_n_links(net()), ==, 1);
  activate("win.link-tool", NULL);
}

/* ---- undo / redo ---- */

static void test_undo_redo_to_clean(void) {
  g_autofree char *edited = doc_json();
  LoomCommandStack *stack = loom_document_get_commands(doc());
  int n = 0;
  while (loom_command_stack_get_can_undo(stack)) {
    activate("win.undo", NULL);
    n++;
  }
  g_assert_cmpint(n, ==, 7); /* 8 edits, one of them already undone and replaced */
  g_assert_cmpint(loom_net_n_layers(net()), ==, 0);
  g_assert_false(loom_document_get_dirty(doc()));
  g_assert_false(g_str_has_prefix(gtk_window_get_title(GTK_WINDOW(window)), "• "));
  for (int i = 0; i < n; i++) activate("win.redo", NULL);
  g_assert_true(loom_command_stack_get_can_redo(stack)); /* the link deletion undone in /editing/links */
  g_autofree char *again = doc_json();
  g_assert_cmpstr(edited, ==, again);
  g_assert_true(loom_document_get_dirty(doc()));
}

/* ---- files ---- */

static gboolean document_clean(gpointer data) {
  return !loom_document_get_dirty(doc()) || find_toplevel(ADW_TYPE_MESSAGE_DIALOG);
}

static gboolean document_replaced(gpointer before) {
  return doc() != before || find_toplevel(ADW_TYPE_MESSAGE_DIALOG);
}

static void test_save_close_reopen(void) {
  g_autofree char *path = g_build_filename(tmp_dir, "designed.loom.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path(path);
  g_autofree char *before = doc_json();
  loom_window_save_to_file(window, file);
  gui_test_wait(document_clean, NULL, TIMEOUT_MS, "the save to finish");
  GtkWindow *error_dialog = find_toplevel(ADW_TYPE_MESSAGE_DIALOG);
  if (error_dialog) g_error("save failed: %s", adw_message_dialog_get_body(ADW_MESSAGE_DIALOG(error_dialog)));
  g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(window)), ==, "designed.loom.json — Loom Workbench");

  /* Clean: closing asks nothing. */
  g_object_add_weak_pointer(G_OBJECT(window), (gpointer *)&window);
  gtk_window_close(GTK_WINDOW(window));
  g_assert_null(window);

  g_application_activate(G_APPLICATION(app));
  window = LOOM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
  gui_test_wait(is_mapped, window, TIMEOUT_MS, "the new window to map");
  LoomDocument *empty = doc();
  loom_window_open_file(window, file);
  gui_test_wait(document_replaced, empty, TIMEOUT_MS, "the file to open");
  g_assert_null(find_toplevel(ADW_TYPE_MESSAGE_DIALOG));
  g_autofree char *after = doc_json();
  g_assert_cmpstr(before, ==, after);
  g_assert_false(loom_document_get_dirty(doc()));
  g_assert_cmpint(loom_net_n_links(net()), ==, 1);
}

static void open_hostile(const char *name, const char *contents) {
  g_autofree char *path = g_build_filename(tmp_dir, name, NULL);
  g_assert_true(g_file_set_contents(path, contents, -1, NULL));
  g_autoptr(GFile) file = g_file_new_for_path(path);
  LoomDocument *before = doc();
  g_autofree char *json = doc_json();
  loom_window_open_file(window, file);
  gui_test_wait(toplevel_shown, GSIZE_TO_POINTER(ADW_TYPE_MESSAGE_DIALOG), TIMEOUT_MS, "the error dialog");
  AdwMessageDialog *dialog = ADW_MESSAGE_DIALOG(find_toplevel(ADW_TYPE_MESSAGE_DIALOG));
  g_assert_cmpstr(adw_message_dialog_get_heading(dialog), ==, "Cannot Open the Network");
  g_assert_nonnull(strstr(adw_message_dialog_get_body(dialog), name));
  gtk_window_destroy(GTK_WINDOW(dialog));
  g_assert_true(doc() == before);
  g_autofree char *json_after = doc_json();
  g_assert_cmpstr(json, ==, json_after);
}

static void test_hostile_files(void) {
  open_hostile("huge.loom.json",
               "{\"format\": \"loom-model\", \"version\": 1, \"grid\": {\"depth\": 2000000000, \"rows\": 2000000000, "
               "\"cols\": 2000000000, \"layers_per_cell\": 16}, \"input_shape\": [2], \"slots\": [], \"links\": []}");
  GString *deep = g_string_new(NULL);
  for (int i = 0; i < 100000; i++) g_string_append_c(deep, '[');
  open_hostile("deep.loom.json", deep->str);
  g_string_free(deep, TRUE);
  g_autofree char *json = doc_json();
  json[strlen(json) / 2] = '\0'; /* truncated in the middle */
  open_hostile("truncated.loom.json", json);
}

/* A file dropped on the window opens (what GtkDropTarget::drop receives from a file manager). */
static void test_file_drop(void) {
  GtkDropTarget *target = NULL;
  g_autoptr(GListModel) controllers = gtk_widget_observe_controllers(GTK_WIDGET(window));
  for (guint i = 0; i < g_list_model_get_n_items(controllers); i++) {
    g_autoptr(GObject) c = g_list_model_get_item(controllers, i);
    if (GTK_IS_DROP_TARGET(c)) target = GTK_DROP_TARGET(c);
  }
  g_assert_nonnull(target);
  gsize n_types = 0;
  const GType *types = gtk_drop_target_get_gtypes(target, &n_types);
  gboolean lists = FALSE;
  for (gsize i = 0; i < n_types; i++) lists |= types[i] == GDK_TYPE_FILE_LIST;
  g_assert_true(lists);

  g_autofree char *path = g_build_filename(tmp_dir, "designed.loom.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path(path);
  g_autoptr(GError) error = NULL;
  g_assert_true(loom_window_open_example(window, "xor", &error)); /* something else to replace */
  LoomDocument *before = doc();
  GSList *files = g_slist_append(NULL, file);
  GValue value = G_VALUE_INIT;
  g_value_init(&value, GDK_TYPE_FILE_LIST);
  g_value_take_boxed(&value, gdk_file_list_new_from_list(files));
  g_slist_free(files);
  gboolean accepted = FALSE;
  g_signal_emit_by_name(target, "drop", &value, 10.0, 10.0, &accepted);
  g_value_unset(&value);
  g_assert_true(accepted);
  gui_test_wait(document_replaced, before, TIMEOUT_MS, "the dropped file to open");
  g_assert_null(find_toplevel(ADW_TYPE_MESSAGE_DIALOG));
  g_assert_true(g_file_equal(loom_document_get_file(doc()), file));
}

static AdwMessageDialog *wait_question(void) {
  gui_test_wait(toplevel_shown, GSIZE_TO_POINTER(ADW_TYPE_MESSAGE_DIALOG), TIMEOUT_MS, "the question");
  AdwMessageDialog *dialog = ADW_MESSAGE_DIALOG(find_toplevel(ADW_TYPE_MESSAGE_DIALOG));
  g_assert_cmpstr(adw_message_dialog_get_heading(dialog), ==, "Save Changes?");
  return dialog;
}

static void test_confirm_discard(void) {
  gtk_widget_grab_focus(GTK_WIDGET(grid_view()));
  select_slot(0, 1, 0, 1);
  activate("win.place-layer", g_variant_new_string("tanh"));
  g_assert_true(loom_document_get_dirty(doc()));
  LoomDocument *edited = doc();

  /* Cancel keeps everything. */
  activate("win.open-example", g_variant_new_string("xor"));
  respond(wait_question(), "cancel");
  g_assert_true(doc() == edited);

  /* Discard goes ahead: an untitled copy of the example. */
  activate("win.open-example", g_variant_new_string("xor"));
  respond(wait_question(), "discard");
  g_assert_true(doc() != edited);
  g_assert_null(loom_document_get_file(doc()));
  g_assert_false(loom_document_get_dirty(doc()));
  g_assert_cmpint(loom_net_n_layers(net()), >, 0);

  /* Closing a changed window asks too; Cancel keeps it open. */
  select_slot(0, 0, 3, 0);
  activate("win.clear-slot", NULL);
  activate("win.place-layer", g_variant_new_string("relu"));
  g_assert_true(loom_document_get_dirty(doc()));
  gtk_window_close(GTK_WINDOW(window));
  respond(wait_question(), "cancel");
  g_assert_true(gtk_widget_get_visible(GTK_WIDGET(window)));
}

static void test_example_gallery(void) {
  activate("win.undo", NULL);
  activate("win.undo", NULL);
  g_assert_false(loom_document_get_dirty(doc()));
  activate("win.show-examples", NULL);
  gui_test_wait(toplevel_shown, GSIZE_TO_POINTER(LOOM_TYPE_EXAMPLE_GALLERY), TIMEOUT_MS, "the example gallery");
  LoomExampleGallery *gallery = LOOM_EXAMPLE_GALLERY(find_toplevel(LOOM_TYPE_EXAMPLE_GALLERY));
  int hop = -1;
  for (int i = 0; i < loom_example_count(); i++)
    if (g_str_equal(loom_example_name(i), "hop")) hop = i;
  g_assert_cmpint(hop, >=, 0);
  loom_example_gallery_choose(gallery, hop);
  g_assert_null(find_toplevel(LOOM_TYPE_EXAMPLE_GALLERY));
  /* An untitled copy shows the example's title, not "Untitled network". */
  g_assert_null(loom_document_get_file(doc()));
  g_assert_cmpstr(loom_document_get_title(doc()), ==, loom_example_title(hop));
  g_autofree char *title = g_strdup_printf("%s — Loom Workbench", loom_example_title(hop));
  g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(window)), ==, title);
  g_assert_cmpint(loom_net_n_links(net()), >, 0);
  g_assert_cmpint(loom_net_depth(net()), ==, 2);
  int n_diags = -1;
  loom_document_get_diagnostics(doc(), &n_diags);
  g_assert_cmpint(n_diags, ==, 0);
}

static void test_export_png(void) {
  g_autofree char *path = g_build_filename(tmp_dir, "view.png", NULL);
  g_autoptr(GFile) file = g_file_new_for_path(path);
  g_autoptr(GError) error = NULL;
  g_assert_true(loom_window_export_png(window, file, 320, 200, &error));
  g_assert_no_error(error);
  g_autoptr(GdkTexture) texture = gdk_texture_new_from_file(file, &error);
  g_assert_no_error(error);
  g_assert_cmpint(gdk_texture_get_width(texture), ==, 320);
  g_assert_cmpint(gdk_texture_get_height(texture), ==, 200);
}

static void remove_tree(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name(d))) {
    g_autofree char *p = g_build_filename(dir, name, NULL);
    g_unlink(p);
  }
  if (d) g_dir_close(d);
  g_rmdir(dir);
}

int main(int argc, char **argv) {
  gui_test_init(&argc, &argv);
  tmp_dir = g_dir_make_tmp("loom-edit-XXXXXX", NULL);
  g_assert_nonnull(tmp_dir);

  app = loom_application_new();
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, &error));
  g_application_activate(G_APPLICATION(app));

  g_test_add_func("/editing/setup", test_setup);
  g_test_add_func("/editing/place-by-action", test_place_by_action);
  g_test_add_func("/editing/keyboard-selection", test_keyboard_selection);
  g_test_add_func("/editing/pick-and-place", test_pick_and_place);
  g_test_add_func("/editing/dtype-and-params", test_dtype);
  g_test_add_func("/editing/links", test_links);
  g_test_add_func("/editing/undo-redo-to-clean", test_undo_redo_to_clean);
  g_test_add_func("/editing/save-close-reopen", test_save_close_reopen);
  g_test_add_func("/editing/hostile-files", test_hostile_files);
  g_test_add_func("/editing/file-drop", test_file_drop);
  g_test_add_func("/editing/confirm-discard", test_confirm_discard);
  g_test_add_func("/editing/example-gallery", test_example_gallery);
  g_test_add_func("/editing/export-png", test_export_png);
  int status = g_test_run();

  /* The document is clean again (see example-gallery), so quitting asks nothing. */
  g_action_group_activate_action(G_ACTION_GROUP(app), "quit", NULL);
  while (g_main_context_iteration(NULL, FALSE)) {}
  g_object_unref(app);
  remove_tree(tmp_dir);
  g_free(tmp_dir);
  return status;
}
