/*
 * Accessibility of the real workbench window and its dialogs.
 *
 * Names: every widget a keyboard user can land on (buttons, menu buttons,
 * spin buttons, entries, switches, drop-downs, check and toggle buttons,
 * activatable list rows, the grid view) must carry an accessible name. GTK
 * 4.8 has no public getter for the computed name, but its test API
 * (gtk_test_accessible_has_property / _has_relation, gtktestatcontext.h) reads
 * the widget's own AT context, so the check needs no help from the code it
 * checks: a name is a LABEL property or a LABELLED_BY relation. That is also
 * all GTK 4.8 exposes as the AT-SPI name: a tooltip becomes the description
 * only, so an icon-only button with a tooltip and nothing else is nameless.
 * GTK's own composite widgets (the toggle inside a GtkMenuButton, the text
 * inside a GtkSpinButton) are checked as the composite, not their parts.
 *
 * Keyboard: the grid is in the Tab chain between palette and inspector, its
 * selection is announced through its description, and a link can be drawn
 * and undone without a pointer (win.link-from-selection, win.link-to-selection).
 */
#include <adwaita.h>
#include <loom/model.h>
#include <string.h>

#include "gui-test.h"
#include "loom-application.h"
#include "loom-example-gallery.h"
#include "loom-grid-view.h"
#include "loom-inspector.h"
#include "loom-link-list.h"
#include "loom-new-dialog.h"
#include "loom-palette.h"
#include "loom-recovery-dialog.h"
#include "loom-window.h"

#define TIMEOUT_MS 20000

static LoomApplication *app;
static LoomWindow *window;

static LoomGridView *grid_view(void) {
  return LOOM_GRID_VIEW(gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_GRID_VIEW));
}

static const loom_net *net(void) {
  return loom_document_get_net(loom_window_get_document(window));
}

static void activate(const char *action, GVariant *param) {
  g_assert_true(gtk_widget_activate_action_variant(GTK_WIDGET(window), action, param));
}

static gboolean is_mapped(gpointer widget) {
  return gtk_widget_get_mapped(widget);
}

static void select_slot(int z, int y, int x, int l) {
  loom_coord c = {z, y, x, l};
  loom_grid_view_set_selection(grid_view(), &c);
}

/* ---- the name walk ---- */

static gboolean needs_name(GtkWidget *w) {
  if (LOOM_IS_GRID_VIEW(w)) return TRUE;
  if (GTK_IS_LIST_BOX_ROW(w)) return gtk_list_box_row_get_activatable(GTK_LIST_BOX_ROW(w));
  return GTK_IS_BUTTON(w) || GTK_IS_MENU_BUTTON(w) || ADW_IS_SPLIT_BUTTON(w) || GTK_IS_SPIN_BUTTON(w) ||
         GTK_IS_ENTRY(w) || GTK_IS_SEARCH_ENTRY(w) || GTK_IS_SWITCH(w) || GTK_IS_DROP_DOWN(w) ||
         GTK_IS_CHECK_BUTTON(w);
}

/* GTK's composites: their insides are GTK's business, the composite is ours. */
static gboolean is_composite(GtkWidget *w) {
  return GTK_IS_MENU_BUTTON(w) || ADW_IS_SPLIT_BUTTON(w) || GTK_IS_SPIN_BUTTON(w) || GTK_IS_ENTRY(w) ||
         GTK_IS_SEARCH_ENTRY(w) || GTK_IS_DROP_DOWN(w) || GTK_IS_SWITCH(w) || GTK_IS_CHECK_BUTTON(w);
}

static gboolean has_name(GtkWidget *w) {
  GtkAccessible *a = GTK_ACCESSIBLE(w);
  return gtk_test_accessible_has_property(a, GTK_ACCESSIBLE_PROPERTY_LABEL) ||
         gtk_test_accessible_has_relation(a, GTK_ACCESSIBLE_RELATION_LABELLED_BY);
}

static void describe(GtkWidget *w, GString *out) {
  g_string_append_printf(out, "\n  %s", G_OBJECT_TYPE_NAME(w));
  const char *tooltip = gtk_widget_get_tooltip_text(w);
  if (tooltip) g_string_append_printf(out, " tooltip=“%s”", tooltip);
  for (GtkWidget *p = gtk_widget_get_parent(w); p; p = gtk_widget_get_parent(p))
    g_string_append_printf(out, " < %s", G_OBJECT_TYPE_NAME(p));
}

static int walk(GtkWidget *w, GString *missing) {
  int checked = 0;
  if (!gtk_widget_get_visible(w)) return 0;
  if (needs_name(w)) {
    checked++;
    if (!has_name(w)) describe(w, missing);
    if (is_composite(w)) return checked;
  }
  for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) checked += walk(c, missing);
  return checked;
}

static void assert_all_named(GtkWidget *root, int at_least) {
  g_autoptr(GString) missing = g_string_new(NULL);
  int checked = walk(root, missing);
  g_test_message("%s: %d interactive widgets checked", G_OBJECT_TYPE_NAME(root), checked);
  if (missing->len) g_error("widgets without an accessible name in %s:%s", G_OBJECT_TYPE_NAME(root), missing->str);
  g_assert_cmpint(checked, >=, at_least);
}

/* The value of an accessible property as GTK's test API prints it. */
static char *property_text(GtkWidget *w, GtkAccessibleProperty property) {
  return gtk_test_accessible_check_property(GTK_ACCESSIBLE(w), property, "\x01 (no such value)");
}

/* ---- cases ---- */

static void test_setup(void) {
  window = LOOM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
  g_assert_true(LOOM_IS_WINDOW(window));
  gtk_window_set_default_size(GTK_WINDOW(window), 1280, 800);
  gui_test_wait(is_mapped, window, TIMEOUT_MS, "the main window to map");
  /* Two layers the keyboard link can join. */
  select_slot(0, 0, 0, 0);
  activate("win.place-layer", g_variant_new_string("dense"));
  select_slot(0, 0, 1, 0);
  activate("win.place-layer", g_variant_new_string("dense"));
  g_assert_cmpint(loom_net_n_layers(net()), ==, 2);
}

static void test_keyboard_link(void) {
  const char *const actions[] = {"win.link-from-selection", "win.link-to-selection"};
  for (gsize i = 0; i < G_N_ELEMENTS(actions); i++) {
    g_auto(GStrv) accels = gtk_application_get_accels_for_action(GTK_APPLICATION(app), actions[i]);
    g_assert_nonnull(accels);
    g_assert_nonnull(accels[0]);
  }
  activate("win.focus-grid", NULL);
  /* Nothing pending: finishing does nothing. */
  activate("win.link-to-selection", NULL);
  g_assert_cmpint(loom_net_n_links(net()), ==, 0);

  activate("win.select-left", NULL); /* (0,0,0,0), the first layer */
  activate("win.link-from-selection", NULL);
  g_autofree char *pending = property_text(GTK_WIDGET(grid_view()), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);
  g_assert_nonnull(strstr(pending, "(0,0,0,0)"));

  activate("win.select-right", NULL); /* (0,0,1,0), the second */
  activate("win.link-to-selection", NULL);
  g_assert_cmpint(loom_net_n_links(net()), ==, 1);
  const loom_link *link = loom_net_link(net(), 0);
  g_assert_cmpint(link->src.x, ==, 0);
  g_assert_cmpint(link->dst.x, ==, 1);
  GtkWidget *list = gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_LINK_LIST);
  g_assert_cmpint(loom_link_list_get_n_links(LOOM_LINK_LIST(list)), ==, 1);
  /* The link is made: nothing is pending any more. */
  g_autofree char *done = property_text(GTK_WIDGET(grid_view()), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);
  g_assert_null(strstr(done, "(0,0,0,0)"));

  activate("win.undo", NULL);
  g_assert_cmpint(loom_net_n_links(net()), ==, 0);
  activate("win.redo", NULL); /* kept for the name walk: the link list has a row */
  g_assert_cmpint(loom_net_n_links(net()), ==, 1);

  /* A link the network refuses (a feedback link) changes nothing. */
  activate("win.link-from-selection", NULL);
  activate("win.select-left", NULL);
  activate("win.link-to-selection", NULL);
  g_assert_cmpint(loom_net_n_links(net()), ==, 1);
}

static void test_grid_announces_selection(void) {
  GtkWidget *view = GTK_WIDGET(grid_view());
  gtk_test_accessible_assert_role(GTK_ACCESSIBLE(view), GTK_ACCESSIBLE_ROLE_GROUP);
  g_assert_true(has_name(view));
  g_assert_true(gtk_widget_get_focusable(view));

  select_slot(0, 0, 1, 0);
  g_autofree char *occupied = property_text(view, GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);
  g_assert_nonnull(strstr(occupied, "(0,0,1,0)"));
  g_assert_nonnull(strstr(occupied, "Dense"));

  select_slot(0, 1, 2, 0);
  g_autofree char *empty = property_text(view, GTK_ACCESSIBLE_PROPERTY_DESCRIPTION);
  g_assert_nonnull(strstr(empty, "(0,1,2,0)"));
  g_assert_null(strstr(empty, "Dense"));
}

static void test_tab_order(void) {
  GtkWidget *view = GTK_WIDGET(grid_view());
  GtkWidget *palette = gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_PALETTE);
  GtkWidget *inspector = gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_INSPECTOR);
  select_slot(0, 0, 0, 0); /* the inspector shows a layer with editors */

  /* Ctrl+F: the palette's search. */
  activate("win.focus-palette", NULL);
  GtkWidget *focus = gtk_root_get_focus(GTK_ROOT(window));
  g_assert_nonnull(focus);
  g_assert_nonnull(gtk_widget_get_ancestor(focus, GTK_TYPE_SEARCH_ENTRY));

  /* Tab from the grid goes on into the inspector; Shift+Tab back into the palette. */
  activate("win.focus-grid", NULL);
  g_assert_true(gtk_widget_has_focus(view));
  g_assert_true(gtk_widget_child_focus(GTK_WIDGET(window), GTK_DIR_TAB_FORWARD));
  focus = gtk_root_get_focus(GTK_ROOT(window));
  g_assert_true(gtk_widget_is_ancestor(focus, inspector));

  activate("win.focus-grid", NULL);
  g_assert_true(gtk_widget_child_focus(GTK_WIDGET(window), GTK_DIR_TAB_BACKWARD));
  focus = gtk_root_get_focus(GTK_ROOT(window));
  g_assert_true(gtk_widget_is_ancestor(focus, palette));
  activate("win.focus-grid", NULL);
}

static void test_window_names(void) {
  select_slot(0, 0, 0, 0); /* the inspector shows a layer's editors */
  GtkWidget *list = gui_test_find_child(GTK_WIDGET(window), LOOM_TYPE_LINK_LIST);
  g_assert_cmpint(loom_link_list_get_n_links(LOOM_LINK_LIST(list)), >=, 1);
  assert_all_named(GTK_WIDGET(window), 20);
}

static void check_dialog(GtkWindow *dialog, int at_least) {
  gtk_window_present(dialog);
  gui_test_wait(is_mapped, dialog, TIMEOUT_MS, "a dialog to map");
  assert_all_named(GTK_WIDGET(dialog), at_least);
  gtk_window_destroy(dialog);
}

static void test_dialog_names(void) {
  check_dialog(GTK_WINDOW(loom_new_dialog_new(GTK_WINDOW(window))), 7);
  check_dialog(GTK_WINDOW(loom_example_gallery_new(GTK_WINDOW(window))), 2);

  g_autoptr(GPtrArray) items = g_ptr_array_new_with_free_func((GDestroyNotify)loom_recovery_item_free);
  for (int i = 0; i < 2; i++) {
    LoomRecoveryItem *item = g_new0(LoomRecoveryItem, 1);
    item->id = g_strdup_printf("00000000-0000-0000-0000-00000000000%d", i);
    item->copy_path = g_strdup("/nonexistent/copy.loom.json");
    item->sidecar_path = g_strdup("/nonexistent/copy.json");
    item->title = g_strdup_printf("Network %d", i);
    item->original_path = i ? g_strdup("/nonexistent/net.loom.json") : NULL;
    item->modified = g_date_time_new_now_local();
    g_ptr_array_add(items, item);
  }
  LoomRecoveryDialog *recovery = loom_recovery_dialog_new(app, GTK_WINDOW(window), items);
  check_dialog(GTK_WINDOW(recovery), 7);
}

int main(int argc, char **argv) {
  gui_test_init(&argc, &argv);
  app = loom_application_new();
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, &error));
  g_application_activate(G_APPLICATION(app));

  g_test_add_func("/a11y/setup", test_setup);
  g_test_add_func("/a11y/keyboard-link", test_keyboard_link);
  g_test_add_func("/a11y/grid-announces-selection", test_grid_announces_selection);
  g_test_add_func("/a11y/tab-order", test_tab_order);
  g_test_add_func("/a11y/window-names", test_window_names);
  g_test_add_func("/a11y/dialog-names", test_dialog_names);
  int status = g_test_run();

  /* Dirty, but the test does not care: discard without asking. */
  GList *windows = g_list_copy(gtk_application_get_windows(GTK_APPLICATION(app)));
  for (GList *l = windows; l; l = l->next) gtk_window_destroy(l->data);
  g_list_free(windows);
  while (g_main_context_iteration(NULL, FALSE)) {}
  g_object_unref(app);
  return status;
}
