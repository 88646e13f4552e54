/*
 * Smoke test of the real workbench (app/ linked as a library): the window
 * maps, the grid view draws the floor (pixels read back from GL), the menu's
 * actions exist with accelerators, About and the shortcuts window open
 * through their actions, New/Save/Open work, and the window's size is
 * remembered. The cases run in order on one application instance.
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <stdlib.h>
#include <string.h>

#include "gui-test.h"
#include "loom-application.h"
#include "loom-grid-view-private.h"
#include "loom-grid-view.h"
#include "loom-new-dialog.h"
#include "loom-palette.h"
#include "loom-window-private.h"
#include "loom-window.h"

#define TIMEOUT_MS 20000

static LoomApplication *app;
static LoomWindow *window;

static LoomGridView *grid_view(void) {
  GtkWidget *view = gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_GRID_VIEW);
  g_assert_nonnull(view);
  return LOOM_GRID_VIEW(view);
}

/* The toplevel of `type` that is mapped, if any. */
static GtkWindow *find_toplevel(GType type) {
  GListModel *toplevels = gtk_window_get_toplevels();
  for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
    g_autoptr(GtkWindow) w = g_list_model_get_item(toplevels, i);
    if (G_TYPE_CHECK_INSTANCE_TYPE(w, type) && gtk_widget_get_mapped(GTK_WIDGET(w))) return w;
  }
  return NULL;
}

static gboolean is_mapped(gpointer widget) {
  return gtk_widget_get_mapped(widget);
}

static gboolean toplevel_shown(gpointer type) {
  return find_toplevel((GType)GPOINTER_TO_SIZE(type)) != NULL;
}

static void test_window_maps(void) {
  window = LOOM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
  g_assert_true(LOOM_IS_WINDOW(window));
  gui_test_wait(is_mapped, window, TIMEOUT_MS, "the main window to map");
  g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(window)), ==, "Untitled network — Loom Workbench");
  g_assert_true(gtk_widget_get_mapped(GTK_WIDGET(grid_view())));
}

/* ---- the grid floor in pixels ---- */

static void test_grid_floor_drawn(void) {
  LoomGridView *view = grid_view();
  g_assert_cmpuint(loom_grid_view_get_depth(view), ==, 4);
  g_assert_cmpuint(loom_grid_view_get_rows(view), ==, 4);
  g_assert_cmpuint(loom_grid_view_get_cols(view), ==, 4);

  gui_test_wait_frame(GTK_GL_AREA(view), TIMEOUT_MS);

  /* meson runs this program once per GL API (LOOM_TEST_GL_API=gl|gles). */
  GdkGLAPI api = gdk_gl_context_get_api(gtk_gl_area_get_context(GTK_GL_AREA(view)));
  const char *expected = g_getenv("LOOM_TEST_GL_API");
  g_test_message("GL API: %s", api == GDK_GL_API_GLES ? "gles" : "gl");
  if (expected) g_assert_cmpstr(api == GDK_GL_API_GLES ? "gles" : "gl", ==, expected);

  int width = 0, height = 0;
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = loom_grid_view_read_pixels(view, &width, &height, &error);
  g_assert_no_error(error);
  g_assert_cmpint(width, >, 100);
  g_assert_cmpint(height, >, 100);
  gsize len;
  const guint8 *pixels = g_bytes_get_data(bytes, &len);
  g_assert_cmpuint(len, ==, (gsize)width * height * 4);

  gsize n_clear = 0, n_border = 0;
  for (gsize i = 0; i < len; i += 4) {
    if (gui_test_pixel_near(pixels + i, LOOM_GRID_VIEW_CLEAR_R, LOOM_GRID_VIEW_CLEAR_G, LOOM_GRID_VIEW_CLEAR_B, 3))
      n_clear++;
    else if (gui_test_pixel_near(pixels + i, LOOM_GRID_VIEW_BORDER_R, LOOM_GRID_VIEW_BORDER_G,
                                 LOOM_GRID_VIEW_BORDER_B, 40))
      n_border++;
  }
  gsize total = (gsize)width * height;
  g_test_message("%dx%d pixels: %zu background, %zu floor border", width, height, n_clear, n_border);
  /* The camera frames the volume, so the corners show the background... */
  g_assert_true(gui_test_pixel_near(pixels, LOOM_GRID_VIEW_CLEAR_R, LOOM_GRID_VIEW_CLEAR_G, LOOM_GRID_VIEW_CLEAR_B, 3));
  g_assert_true(
      gui_test_pixel_near(pixels + len - 4, LOOM_GRID_VIEW_CLEAR_R, LOOM_GRID_VIEW_CLEAR_G, LOOM_GRID_VIEW_CLEAR_B, 3));
  /* ...and the floor covers a good part of the view, outlined by its border. */
  g_assert_cmpuint(total - n_clear, >, total / 20);
  g_assert_cmpuint(n_border, >, (gsize)(width + height) / 4);
}

/* ---- actions ---- */

static gboolean window_has_action(const char *name) {
  GtkWidgetClass *klass = GTK_WIDGET_GET_CLASS(window);
  GType owner;
  const char *action_name, *property;
  const GVariantType *param_type;
  for (guint i = 0; gtk_widget_class_query_action(klass, i, &owner, &action_name, &param_type, &property); i++)
    if (g_str_equal(action_name, name)) return TRUE;
  /* Actions GtkApplicationWindow adds itself (show-help-overlay). */
  return g_str_has_prefix(name, "win.") && g_action_group_has_action(G_ACTION_GROUP(window), name + 4);
}

/* The header bar's primary menu button (F10), among the other menu buttons. */
static GtkMenuButton *find_primary_menu_button(GtkWidget *root) {
  if (GTK_IS_MENU_BUTTON(root) && gtk_menu_button_get_primary(GTK_MENU_BUTTON(root))) return GTK_MENU_BUTTON(root);
  for (GtkWidget *child = gtk_widget_get_first_child(root); child; child = gtk_widget_get_next_sibling(child)) {
    GtkMenuButton *found = find_primary_menu_button(child);
    if (found) return found;
  }
  return NULL;
}

static void test_menu_actions(void) {
  GtkMenuButton *button = find_primary_menu_button(GTK_WIDGET(window));
  g_assert_nonnull(button);
  GMenuModel *menu = gtk_menu_button_get_menu_model(button);
  g_assert_nonnull(menu);

  guint n_items = 0;
  for (int s = 0; s < g_menu_model_get_n_items(menu); s++) {
    GMenuModel *section = g_menu_model_get_item_link(menu, s, G_MENU_LINK_SECTION);
    g_assert_nonnull(section);
    for (int i = 0; i < g_menu_model_get_n_items(section); i++) {
      g_autofree char *action = NULL;
      g_autoptr(GMenuModel) submenu = g_menu_model_get_item_link(section, i, G_MENU_LINK_SUBMENU);
      if (submenu) continue; /* Open Recent: filled from the recent-files setting */
      g_assert_true(g_menu_model_get_item_attribute(section, i, G_MENU_ATTRIBUTE_ACTION, "s", &action));
      /* No dead UI: every item leads to an installed action... */
      if (g_str_has_prefix(action, "app."))
        g_assert_true(g_action_group_has_action(G_ACTION_GROUP(app), action + 4));
      else
        g_assert_true(window_has_action(action));
      /* ...and all but About have a keyboard accelerator. */
      g_auto(GStrv) accels = gtk_application_get_accels_for_action(GTK_APPLICATION(app), action);
      if (!g_str_equal(action, "app.about")) g_assert_cmpuint(g_strv_length(accels), >=, 1);
      n_items++;
    }
    g_object_unref(section);
  }
  g_assert_cmpuint(n_items, ==, 14);

  g_auto(GStrv) accels = gtk_application_get_accels_for_action(GTK_APPLICATION(app), "win.new");
  g_assert_cmpstr(accels[0], ==, "<Control>n");
}

static void test_about(void) {
  g_assert_null(find_toplevel(ADW_TYPE_ABOUT_WINDOW));
  g_action_group_activate_action(G_ACTION_GROUP(app), "about", NULL);
  gui_test_wait(toplevel_shown, GSIZE_TO_POINTER(ADW_TYPE_ABOUT_WINDOW), TIMEOUT_MS, "the about window");
  AdwAboutWindow *about = ADW_ABOUT_WINDOW(find_toplevel(ADW_TYPE_ABOUT_WINDOW));
  g_assert_cmpstr(adw_about_window_get_application_name(about), ==, "Loom Workbench");
  g_assert_cmpstr(adw_about_window_get_version(about), ==, PACKAGE_VERSION);
  g_assert_true(gtk_window_get_transient_for(GTK_WINDOW(about)) == GTK_WINDOW(window));
  gtk_window_destroy(GTK_WINDOW(about));
}

static void collect_shortcuts(GtkWidget *root, GPtrArray *out) {
  if (GTK_IS_SHORTCUTS_SHORTCUT(root)) g_ptr_array_add(out, root);
  for (GtkWidget *child = gtk_widget_get_first_child(root); child; child = gtk_widget_get_next_sibling(child))
    collect_shortcuts(child, out);
}

/* Whether the space-separated accelerators of a shortcut include @accel. */
static gboolean accelerators_include(const char *list, const char *accel) {
  guint key = 0;
  GdkModifierType mods = 0;
  if (!list || !gtk_accelerator_parse(accel, &key, &mods)) return FALSE;
  g_auto(GStrv) parts = g_strsplit(list, " ", -1);
  for (guint i = 0; parts[i]; i++) {
    guint k = 0;
    GdkModifierType m = 0;
    if (*parts[i] && gtk_accelerator_parse(parts[i], &k, &m) && k == key && m == mods) return TRUE;
  }
  return FALSE;
}

static void test_shortcuts(void) {
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window), "win.show-help-overlay", NULL));
  GtkShortcutsWindow *overlay = gtk_application_window_get_help_overlay(GTK_APPLICATION_WINDOW(window));
  g_assert_nonnull(overlay);
  gui_test_wait(is_mapped, overlay, TIMEOUT_MS, "the shortcuts window");
  g_autoptr(GPtrArray) shortcuts = g_ptr_array_new();
  collect_shortcuts(GTK_WIDGET(overlay), shortcuts);
  g_assert_cmpuint(shortcuts->len, >, 10);

  /* Every action the window lists exists and has a key (else its row is empty). */
  for (guint i = 0; i < shortcuts->len; i++) {
    g_autofree char *action = NULL, *accelerator = NULL, *title = NULL;
    g_object_get(shortcuts->pdata[i], "action-name", &action, "accelerator", &accelerator, "title", &title, NULL);
    if (!action) continue;
    g_test_message("shortcut “%s”: %s (%s)", title, action, accelerator ? accelerator : "");
    char *name = NULL;
    g_autoptr(GVariant) target = NULL;
    g_assert_true(g_action_parse_detailed_name(action, &name, &target, NULL));
    g_autofree char *plain = name;
    if (g_str_has_prefix(plain, "app."))
      g_assert_true(g_action_group_has_action(G_ACTION_GROUP(app), plain + 4));
    else if (!window_has_action(plain))
      g_error("the shortcuts window lists %s (“%s”), which the window does not have", action, title);
    g_auto(GStrv) accels = gtk_application_get_accels_for_action(GTK_APPLICATION(app), action);
    if (g_strv_length(accels) == 0) g_error("the shortcuts window lists %s (“%s”) without a key", action, title);
  }

  /* Every accelerator the application sets appears in the window, either as
   * a shortcut for its action or as the accelerator of a shortcut. */
  g_auto(GStrv) described = gtk_application_list_action_descriptions(GTK_APPLICATION(app));
  g_assert_cmpuint(g_strv_length(described), >, 20);
  for (guint d = 0; described[d]; d++) {
    g_auto(GStrv) accels = gtk_application_get_accels_for_action(GTK_APPLICATION(app), described[d]);
    for (guint a = 0; accels[a]; a++) {
      gboolean shown = FALSE;
      for (guint i = 0; i < shortcuts->len && !shown; i++) {
        g_autofree char *action = NULL, *accelerator = NULL;
        g_object_get(shortcuts->pdata[i], "action-name", &action, "accelerator", &accelerator, NULL);
        shown = g_strcmp0(action, described[d]) == 0 || accelerators_include(accelerator, accels[a]);
      }
      if (!shown) g_error("%s (%s) is missing from the shortcuts window", accels[a], described[d]);
    }
  }
  gtk_window_close(GTK_WINDOW(overlay));
}

static void test_new(void) {
  LoomGridView *view = grid_view();
  /* Disturb the view so New has something to put right. */
  loom_grid_view_set_rows(view, 2);
  loom_grid_view_set_cols(view, 7);
  LoomDocument *before = loom_window_get_document(window);

  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window), "win.new", NULL));
  /* The document is clean, so the size dialog comes without a question. */
  gui_test_wait(toplevel_shown, GSIZE_TO_POINTER(LOOM_TYPE_NEW_DIALOG), TIMEOUT_MS, "the New dialog");
  GtkWindow *dialog = find_toplevel(LOOM_TYPE_NEW_DIALOG);
  adw_message_dialog_response(ADW_MESSAGE_DIALOG(dialog), "create");
  gtk_window_destroy(dialog); /* a button click closes it after the response */
  LoomDocument *after = loom_window_get_document(window);
  g_assert_true(LOOM_IS_DOCUMENT(after));
  g_assert_true(after != before);
  g_assert_null(loom_document_get_file(after));
  g_assert_false(loom_document_get_dirty(after));
  const loom_net *net = loom_document_get_net(after);
  g_assert_cmpint(loom_net_depth(net), ==, 4);
  g_assert_cmpint(loom_net_rows(net), ==, 4);
  g_assert_cmpint(loom_net_cols(net), ==, 4);
  g_assert_cmpint(loom_net_layers_per_cell(net), ==, 1);
  g_assert_cmpuint(loom_grid_view_get_rows(view), ==, 4);
  g_assert_cmpuint(loom_grid_view_get_cols(view), ==, 4);
}

/* ---- save and open ---- */

static gboolean has_file(gpointer data) {
  return loom_document_get_file(loom_window_get_document(window)) != NULL || find_toplevel(ADW_TYPE_MESSAGE_DIALOG);
}

static gboolean document_replaced(gpointer before) {
  return loom_window_get_document(window) != before || find_toplevel(ADW_TYPE_MESSAGE_DIALOG);
}

static void test_save_and_open(void) {
  g_autoptr(GError) error = NULL;
  g_autofree char *dir = g_dir_make_tmp("loom-gui-XXXXXX", &error);
  g_assert_no_error(error);
  g_autofree char *path = g_build_filename(dir, "grid.loom.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path(path);

  loom_window_save_to_file(window, file);
  gui_test_wait(has_file, NULL, TIMEOUT_MS, "the save to finish");
  g_assert_null(find_toplevel(ADW_TYPE_MESSAGE_DIALOG));
  LoomDocument *saved = loom_window_get_document(window);
  g_assert_true(g_file_equal(loom_document_get_file(saved), file));
  g_assert_cmpstr(loom_document_get_title(saved), ==, "grid.loom.json");
  g_assert_cmpstr(gtk_window_get_title(GTK_WINDOW(window)), ==, "grid.loom.json — Loom Workbench");
  g_assert_true(g_file_test(path, G_FILE_TEST_IS_REGULAR));

  g_auto(GStrv) recent = g_settings_get_strv(loom_application_get_settings(app), "recent-files");
  g_autofree char *uri = g_file_get_uri(file);
  g_assert_cmpstr(recent[0], ==, uri);
  /* ...and the Open Recent submenu offers it. */
  GMenuModel *menu = gtk_menu_button_get_menu_model(find_primary_menu_button(GTK_WIDGET(window)));
  g_autoptr(GMenuModel) files = g_menu_model_get_item_link(menu, 0, G_MENU_LINK_SECTION);
  gboolean offered = FALSE;
  for (int i = 0; i < g_menu_model_get_n_items(files); i++) {
    g_autoptr(GMenuModel) submenu = g_menu_model_get_item_link(files, i, G_MENU_LINK_SUBMENU);
    if (!submenu) continue;
    g_assert_cmpint(g_menu_model_get_n_items(submenu), >=, 1);
    g_autofree char *target = NULL;
    g_assert_true(g_menu_model_get_item_attribute(submenu, 0, G_MENU_ATTRIBUTE_TARGET, "s", &target));
    offered = g_str_equal(target, uri);
  }
  g_assert_true(offered);

  loom_window_open_file(window, file);
  gui_test_wait(document_replaced, saved, TIMEOUT_MS, "the file to open");
  g_assert_null(find_toplevel(ADW_TYPE_MESSAGE_DIALOG));
  LoomDocument *opened = loom_window_get_document(window);
  g_assert_true(g_file_equal(loom_document_get_file(opened), file));
  g_assert_cmpint(loom_net_depth(loom_document_get_net(opened)), ==, 4);

  /* A broken file leaves the document alone and says why. */
  g_autofree char *bad_path = g_build_filename(dir, "broken.loom.json", NULL);
  g_assert_true(g_file_set_contents(bad_path, "{ not json", -1, NULL));
  g_autoptr(GFile) bad = g_file_new_for_path(bad_path);
  loom_window_open_file(window, bad);
  gui_test_wait(toplevel_shown, GSIZE_TO_POINTER(ADW_TYPE_MESSAGE_DIALOG), TIMEOUT_MS, "the error dialog");
  g_assert_true(loom_window_get_document(window) == opened);
  AdwMessageDialog *dialog = ADW_MESSAGE_DIALOG(find_toplevel(ADW_TYPE_MESSAGE_DIALOG));
  g_assert_cmpstr(adw_message_dialog_get_heading(dialog), ==, "Cannot Open the Network");
  g_assert_nonnull(strstr(adw_message_dialog_get_body(dialog), "broken.loom.json"));
  gtk_window_destroy(GTK_WINDOW(dialog));

  g_unlink(bad_path);
  g_unlink(path);
  g_rmdir(dir);
}

/* ---- window state ---- */

static LoomGridView *window_grid_view(void) {
  return LOOM_GRID_VIEW(gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_GRID_VIEW));
}

/* What is shown of the panes below the grid view. */
static int panes_shown(void) {
  return gtk_widget_get_height(GTK_WIDGET(window->center_paned)) - gtk_paned_get_position(window->center_paned);
}

static int expected_panes_height;

/* The height of the links and totals under the inspector. */
static int split_shown(void) {
  return gtk_widget_get_height(GTK_WIDGET(window->inspector_paned)) - gtk_paned_get_position(window->inspector_paned);
}

static gboolean panes_restored(gpointer data) {
  (void)data;
  return window && gtk_widget_get_height(GTK_WIDGET(window->center_paned)) > 0 &&
         panes_shown() == expected_panes_height && split_shown() == 90;
}

static void test_window_state_remembered(void) {
  GSettings *settings = loom_application_get_settings(app);
  /* The legend can be hidden (View menu); the grid view follows at once. */
  g_assert_true(loom_grid_view_get_show_legend(window_grid_view()));
  g_action_group_activate_action(G_ACTION_GROUP(window), "show-legend", NULL);
  g_assert_false(g_settings_get_boolean(settings, "show-legend"));
  g_assert_false(loom_grid_view_get_show_legend(window_grid_view()));
  GtkWidget *palette = gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_PALETTE);
  int palette_width = gtk_widget_get_width(palette);
  g_assert_cmpint(palette_width, >, 0);

  /* The panes below the view, dragged to another height. */
  int total = gtk_widget_get_height(GTK_WIDGET(window->center_paned));
  g_assert_cmpint(total, >, 400);
  gtk_paned_set_position(window->center_paned, total - 250);
  int panes_height = panes_shown();
  g_assert_cmpint(panes_height, ==, 250);
  /* Not dragged, the links and totals keep their natural height: nothing
   * is remembered. Dragged (the inspector's live statistics want room), it is. */
  g_assert_cmpint(g_settings_get_int(settings, "inspector-split"), ==, 0);
  int column = gtk_widget_get_height(GTK_WIDGET(window->inspector_paned));
  g_assert_cmpint(column, >, 300);
  gtk_paned_set_position(window->inspector_paned, column - 90);
  g_assert_cmpint(split_shown(), ==, 90);

  gtk_window_set_default_size(GTK_WINDOW(window), 900, 640);
  g_object_add_weak_pointer(G_OBJECT(window), (gpointer *)&window);
  gtk_window_close(GTK_WINDOW(window));
  g_assert_null(window); /* closing destroys it: nothing asked to keep it */
  g_assert_cmpint(g_settings_get_int(settings, "window-width"), ==, 900);
  g_assert_cmpint(g_settings_get_int(settings, "window-height"), ==, 640);
  g_assert_false(g_settings_get_boolean(settings, "window-maximized"));
  g_assert_cmpint(g_settings_get_int(settings, "palette-width"), ==, palette_width);
  g_assert_cmpint(g_settings_get_int(settings, "inspector-width"), >=, 280);
  g_assert_cmpint(g_settings_get_int(settings, "panes-height"), ==, panes_height);
  g_assert_cmpint(g_settings_get_int(settings, "inspector-split"), ==, 90);

  g_application_activate(G_APPLICATION(app));
  window = LOOM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
  g_assert_nonnull(window);
  int width, height;
  gtk_window_get_default_size(GTK_WINDOW(window), &width, &height);
  g_assert_cmpint(width, ==, 900);
  g_assert_cmpint(height, ==, 640);
  gui_test_wait(is_mapped, window, TIMEOUT_MS, "the new window to map");
  expected_panes_height = panes_height;
  gui_test_wait(panes_restored, NULL, TIMEOUT_MS, "the panes below the view and the inspector's split to come back");
  g_assert_false(loom_grid_view_get_show_legend(window_grid_view()));
  g_action_group_activate_action(G_ACTION_GROUP(window), "show-legend", NULL);
  g_assert_true(loom_grid_view_get_show_legend(window_grid_view()));
}

int main(int argc, char **argv) {
  gui_test_init(&argc, &argv);

  app = loom_application_new();
  /* No single-instance handover: parallel test runs must not find each other. */
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, &error));
  g_assert_no_error(error);
  g_application_activate(G_APPLICATION(app));

  g_test_add_func("/workbench/window-maps", test_window_maps);
  g_test_add_func("/workbench/grid-floor-drawn", test_grid_floor_drawn);
  g_test_add_func("/workbench/menu-actions", test_menu_actions);
  g_test_add_func("/workbench/about", test_about);
  g_test_add_func("/workbench/shortcuts", test_shortcuts);
  g_test_add_func("/workbench/new", test_new);
  g_test_add_func("/workbench/save-and-open", test_save_and_open);
  g_test_add_func("/workbench/window-state-remembered", test_window_state_remembered);
  int status = g_test_run();

  /* Tear down like a quit: every window closes, then the app goes. */
  g_action_group_activate_action(G_ACTION_GROUP(app), "quit", NULL);
  while (g_main_context_iteration(NULL, FALSE)) {}
  g_object_unref(app);
  return status;
}
