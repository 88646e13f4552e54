/*
 * The editing widgets on their own, under a display: the palette lists and
 * filters the registry, the inspector builds one validated control per
 * parameter and never applies invalid text, the dtype drop-down covers the
 * traits table, the link list and the summary read a real network.
 */
#include <loom/dtype.h>
#include <loom/net.h>
#include <string.h>

#include "gui-test.h"
#include "loom-inspector-private.h"
#include "loom-link-list.h"
#include "loom-net-summary.h"
#include "loom-palette.h"
#include "loom-param-row.h"
#include "loom-wheel-guard.h"

static loom_coord at(int z, int y, int x, int l) {
  return (loom_coord){z, y, x, l};
}

static loom_layer *new_layer(const char *type) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  if (!l) g_error("%s: %s", type, err.message);
  return l;
}

/* Shows @widget in a window so that it is realized and styled like in use. */
static GtkWidget *present(GtkWidget *widget) {
  GtkWidget *window = gtk_window_new();
  gtk_window_set_default_size(GTK_WINDOW(window), 360, 600);
  gtk_window_set_child(GTK_WINDOW(window), widget);
  gtk_window_present(GTK_WINDOW(window));
  return window;
}

/* ---- palette ---------------------------------------------------------- */

static gboolean contains_folded(const char *haystack, const char *needle) {
  g_autofree char *h = g_utf8_casefold(haystack ? haystack : "", -1);
  g_autofree char *n = g_utf8_casefold(needle, -1);
  return strstr(h, n) != NULL;
}

static void test_palette_lists_all(void) {
  GtkWidget *palette = loom_palette_new();
  GtkWidget *window = present(palette);
  g_auto(GStrv) names = loom_palette_dup_visible_types(LOOM_PALETTE(palette));
  int n = loom_layer_type_count();
  g_assert_cmpint(n, >, 0);
  g_assert_cmpuint(g_strv_length(names), ==, (guint)n);
  GtkIconTheme *theme = gtk_icon_theme_get_for_display(gtk_widget_get_display(palette));
  for (int i = 0; i < n; i++) {
    const loom_layer_type *t = loom_layer_type_at(i);
    g_assert_true(g_strv_contains((const char *const *)names, loom_layer_type_name(t)));
    const char *icon = loom_palette_group_icon_name(loom_layer_type_group(t));
    g_assert_true(gtk_icon_theme_has_icon(theme, icon));
  }
  g_assert_true(gtk_icon_theme_has_icon(theme, loom_palette_group_icon_name("no such group")));
  /* Rows of one group are together. */
  for (int i = 2; names[i]; i++) {
    const char *g0 = loom_layer_type_group(loom_layer_type_find(names[i - 2]));
    const char *g1 = loom_layer_type_group(loom_layer_type_find(names[i - 1]));
    const char *g2 = loom_layer_type_group(loom_layer_type_find(names[i]));
    g_assert_false(g_str_equal(g0, g2) && !g_str_equal(g0, g1));
  }
  gtk_window_destroy(GTK_WINDOW(window));
}

static gboolean search_applied(gpointer palette) {
  return g_str_equal(loom_palette_get_search_text(palette), "SOFTMAX");
}

static void test_palette_search(void) {
  GtkWidget *palette = loom_palette_new();
  GtkWidget *window = present(palette);
  int n = loom_layer_type_count();

  loom_palette_set_search_text(LOOM_PALETTE(palette), "softmax");
  g_auto(GStrv) some = loom_palette_dup_visible_types(LOOM_PALETTE(palette));
  g_assert_cmpuint(g_strv_length(some), >, 0);
  g_assert_cmpuint(g_strv_length(some), <, (guint)n);
  for (int i = 0; some[i]; i++) {
    const loom_layer_type *t = loom_layer_type_find(some[i]);
    g_assert_true(contains_folded(loom_layer_type_label(t), "softmax") ||
                  contains_folded(loom_layer_type_name(t), "softmax") ||
                  contains_folded(loom_layer_type_group(t), "softmax") ||
                  contains_folded(loom_layer_type_description(t), "softmax"));
  }
  g_assert_false(g_strv_contains((const char *const *)some, "dense"));

  /* Matching the description, not only names: dense says "Fully connected". */
  loom_palette_set_search_text(LOOM_PALETTE(palette), "fully CONNECTED");
  g_auto(GStrv) by_description = loom_palette_dup_visible_types(LOOM_PALETTE(palette));
  g_assert_true(g_strv_contains((const char *const *)by_description, "dense"));

  loom_palette_set_search_text(LOOM_PALETTE(palette), "no layer is called this");
  g_auto(GStrv) none = loom_palette_dup_visible_types(LOOM_PALETTE(palette));
  g_assert_cmpuint(g_strv_length(none), ==, 0);

  loom_palette_set_search_text(LOOM_PALETTE(palette), "");
  g_auto(GStrv) all = loom_palette_dup_visible_types(LOOM_PALETTE(palette));
  g_assert_cmpuint(g_strv_length(all), ==, (guint)n);

  /* Typing into the entry reaches the filter. */
  GtkWidget *entry = gui_test_find_child(palette, GTK_TYPE_SEARCH_ENTRY);
  gtk_editable_set_text(GTK_EDITABLE(entry), "SOFTMAX");
  gui_test_wait(search_applied, palette, 5000, "the search entry to filter");
  g_auto(GStrv) typed = loom_palette_dup_visible_types(LOOM_PALETTE(palette));
  g_assert_cmpstrv(typed, some);
  gtk_window_destroy(GTK_WINDOW(window));
}

static void on_layer_activated(LoomPalette *palette, const char *name, char **out) {
  g_free(*out);
  *out = g_strdup(name);
}

static void test_palette_activate_and_drag(void) {
  GtkWidget *palette = loom_palette_new();
  GtkWidget *window = present(palette);
  g_autofree char *activated = NULL;
  g_signal_connect(palette, "layer-activated", G_CALLBACK(on_layer_activated), &activated);
  GtkListBox *list = GTK_LIST_BOX(gui_test_find_child(palette, GTK_TYPE_LIST_BOX));
  GtkListBoxRow *row = gtk_list_box_get_row_at_index(list, 0);
  g_auto(GStrv) names = loom_palette_dup_visible_types(LOOM_PALETTE(palette));
  gtk_widget_activate(GTK_WIDGET(row));
  g_assert_cmpstr(activated, ==, names[0]);

  /* The row's drag source offers the type name as a string. */
  GListModel *controllers = gtk_widget_observe_controllers(GTK_WIDGET(row));
  GtkDragSource *source = NULL;
  for (guint i = 0; i < g_list_model_get_n_items(controllers) && !source; i++) {
    g_autoptr(GObject) c = g_list_model_get_item(controllers, i);
    if (GTK_IS_DRAG_SOURCE(c)) source = GTK_DRAG_SOURCE(c);
  }
  g_object_unref(controllers);
  g_assert_nonnull(source);
  GdkContentProvider *content = NULL;
  g_signal_emit_by_name(source, "prepare", 1.0, 1.0, &content);
  g_assert_nonnull(content);
  GValue value = G_VALUE_INIT;
  g_value_init(&value, G_TYPE_STRING);
  g_assert_true(gdk_content_provider_get_value(content, &value, NULL));
  g_assert_cmpstr(g_value_get_string(&value), ==, names[0]);
  g_value_unset(&value);
  g_object_unref(content);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* ---- inspector -------------------------------------------------------- */

typedef struct {
  int count;
  guint index;
  loom_param_value value;
  int dtype;
  gsize n_floats;
} Emitted;

static void on_param_changed(LoomInspector *insp, guint index, const loom_param_value *v, Emitted *e) {
  e->count++;
  e->index = index;
  e->value = *v;
}

static void on_floats_changed(LoomInspector *insp, guint index, GBytes *floats, Emitted *e) {
  e->count++;
  e->index = index;
  e->n_floats = g_bytes_get_size(floats) / sizeof(float);
}

static void on_dtype_changed(LoomInspector *insp, int dtype, Emitted *e) {
  e->count++;
  e->dtype = dtype;
}

static void test_inspector_controls(void) {
  GtkWidget *insp = loom_inspector_new();
  GtkWidget *window = present(insp);
  for (int i = 0; i < loom_layer_type_count(); i++) {
    const loom_layer_type *t = loom_layer_type_at(i);
    loom_error err = {0};
    loom_layer *layer = loom_layer_new(t, &err);
    g_assert_nonnull(layer);
    loom_inspector_set_layer(LOOM_INSPECTOR(insp), layer, at(0, 0, i, 0));
    g_assert_true(loom_inspector_get_layer(LOOM_INSPECTOR(insp)) == layer);
    int n = loom_layer_type_n_params(t);
    g_assert_cmpint(loom_inspector_get_n_param_rows(LOOM_INSPECTOR(insp)), ==, n);
    for (int p = 0; p < n; p++) {
      LoomParamRow *row = loom_inspector_get_param_row(LOOM_INSPECTOR(insp), p);
      const loom_param_spec *spec = loom_layer_type_param(t, p);
      g_assert_true(loom_param_row_get_spec(row) == spec);
      GtkWidget *e = loom_param_row_get_editor(row, 0);
      switch (spec->kind) {
      case LOOM_PARAM_INT: g_assert_true(GTK_IS_SPIN_BUTTON(e)); break;
      case LOOM_PARAM_INTS:
        for (int k = 0; k < spec->count; k++) g_assert_true(GTK_IS_SPIN_BUTTON(loom_param_row_get_editor(row, k)));
        g_assert_null(loom_param_row_get_editor(row, spec->count));
        break;
      case LOOM_PARAM_FLOAT:
      case LOOM_PARAM_FLOATS: g_assert_true(GTK_IS_ENTRY(e)); break;
      case LOOM_PARAM_BOOL: g_assert_true(GTK_IS_SWITCH(e)); break;
      case LOOM_PARAM_ENUM: {
        g_assert_true(GTK_IS_DROP_DOWN(e));
        guint choices = g_strv_length((char **)spec->choices);
        g_assert_cmpuint(g_list_model_get_n_items(gtk_drop_down_get_model(GTK_DROP_DOWN(e))), ==, choices);
        g_assert_cmpuint(gtk_drop_down_get_selected(GTK_DROP_DOWN(e)), ==,
                         (guint)loom_layer_get_value(layer, p).i[0]);
        break;
      }
      }
      g_assert_null(loom_param_row_get_error(row));
    }
    loom_inspector_set_layer(LOOM_INSPECTOR(insp), NULL, at(0, 0, 0, 0));
    loom_layer_free(layer);
  }
  gtk_window_destroy(GTK_WINDOW(window));
}

static GtkEventController *wheel_guard(GtkWidget *widget) {
  GListModel *controllers = gtk_widget_observe_controllers(widget);
  GtkEventController *found = NULL;
  for (guint i = 0; i < g_list_model_get_n_items(controllers) && !found; i++) {
    GtkEventController *c = g_list_model_get_item(controllers, i);
    if (g_strcmp0(gtk_event_controller_get_name(c), LOOM_WHEEL_GUARD_NAME) == 0) found = c;
    g_object_unref(c);
  }
  g_object_unref(controllers);
  return found;
}

/* The wheel over a parameter's spin button scrolls the inspector instead
 * of changing the value, unless the spin button has the focus (scrolling
 * the inspector used to edit the layers the pointer passed over). */
static void test_inspector_wheel(void) {
  GtkWidget *insp = loom_inspector_new();
  GtkWidget *window = present(insp);
  gtk_window_set_default_size(GTK_WINDOW(window), 360, 160); /* short: the page scrolls */
  loom_error err = {0};
  loom_layer *layer = loom_layer_new_by_name("dense", &err);
  g_assert_nonnull(layer);
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), layer, at(0, 0, 0, 0));
  gui_test_spin(100);
  GtkWidget *spin = loom_param_row_get_editor(loom_inspector_get_param_row(LOOM_INSPECTOR(insp), 0), 0);
  g_assert_true(GTK_IS_SPIN_BUTTON(spin));
  double value = gtk_spin_button_get_value(GTK_SPIN_BUTTON(spin));
  GtkScrolledWindow *page = GTK_SCROLLED_WINDOW(gtk_widget_get_ancestor(spin, GTK_TYPE_SCROLLED_WINDOW));
  g_assert_nonnull(page);
  GtkAdjustment *adj = gtk_scrolled_window_get_vadjustment(page);
  g_assert_cmpfloat(gtk_adjustment_get_upper(adj), >, gtk_adjustment_get_page_size(adj));
  double top = gtk_adjustment_get_value(adj);
  GtkEventController *guard = wheel_guard(spin);
  g_assert_nonnull(guard);
  gboolean handled = FALSE;
  g_signal_emit_by_name(guard, "scroll", 0.0, 1.0, &handled);
  g_assert_true(handled); /* the spin button's own handler never sees it */
  g_assert_cmpfloat(gtk_adjustment_get_value(adj), >, top);
  g_assert_cmpfloat(gtk_spin_button_get_value(GTK_SPIN_BUTTON(spin)), ==, value);
  /* Focused, it is the user's to edit: the wheel goes on to it. */
  g_assert_true(gtk_widget_grab_focus(spin));
  double scrolled = gtk_adjustment_get_value(adj);
  handled = TRUE;
  g_signal_emit_by_name(guard, "scroll", 0.0, 1.0, &handled);
  g_assert_false(handled);
  g_assert_cmpfloat(gtk_adjustment_get_value(adj), ==, scrolled);
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), NULL, at(0, 0, 0, 0));
  loom_layer_free(layer);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* Enter in the widget's text field: what a user's key press does. */
static void press_enter(GtkWidget *editable) {
  GtkWidget *text = gui_test_find_child(editable, GTK_TYPE_TEXT);
  g_assert_nonnull(text);
  g_signal_emit_by_name(text, "activate");
}

static void type_text(GtkWidget *editable, const char *text) {
  gtk_editable_set_text(GTK_EDITABLE(editable), text);
  press_enter(editable);
}

static void test_inspector_rejects_invalid(void) {
  GtkWidget *insp = loom_inspector_new();
  GtkWidget *window = present(insp);
  loom_layer *dense = new_layer("dense");
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), dense, at(0, 0, 0, 0));
  Emitted e = {0};
  g_signal_connect(insp, "param-changed", G_CALLBACK(on_param_changed), &e);

  int index = loom_layer_type_param_index(loom_layer_get_type(dense), "out_features");
  const loom_param_spec *spec = loom_layer_type_param(loom_layer_get_type(dense), index);
  LoomParamRow *row = loom_inspector_get_param_row(LOOM_INSPECTOR(insp), index);
  GtkWidget *spin = loom_param_row_get_editor(row, 0);
  int64_t before = loom_layer_get_int(dense, "out_features");

  g_autofree char *too_big = g_strdup_printf("%" G_GINT64_FORMAT, (gint64)spec->max + 1);
  gtk_editable_set_text(GTK_EDITABLE(spin), too_big);
  g_assert_nonnull(loom_param_row_get_error(row));
  g_assert_true(gtk_widget_has_css_class(spin, "error"));
  press_enter(spin);
  g_assert_cmpint(e.count, ==, 0);
  g_assert_cmpint(gtk_spin_button_get_value_as_int(GTK_SPIN_BUTTON(spin)), ==, before);

  const char *bad[] = {"3.5", "twelve", "", "0"};
  for (gsize i = 0; i < G_N_ELEMENTS(bad); i++) {
    if (spec->min <= 0 && g_str_equal(bad[i], "0")) continue;
    type_text(spin, bad[i]);
    g_assert_cmpint(e.count, ==, 0);
  }

  type_text(spin, "12");
  g_assert_null(loom_param_row_get_error(row));
  g_assert_false(gtk_widget_has_css_class(spin, "error"));
  g_assert_cmpint(e.count, ==, 1);
  g_assert_cmpuint(e.index, ==, (guint)index);
  g_assert_cmpint(e.value.i[0], ==, 12);
  /* The inspector reports; the layer itself is untouched. */
  g_assert_cmpint(loom_layer_get_int(dense, "out_features"), ==, before);

  /* A FLOAT parameter is an entry, validated the same way. */
  loom_layer *temp = new_layer("softmax_temperature");
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), temp, at(0, 0, 1, 0));
  int t_index = loom_layer_type_param_index(loom_layer_get_type(temp), "temperature");
  LoomParamRow *t_row = loom_inspector_get_param_row(LOOM_INSPECTOR(insp), t_index);
  GtkWidget *entry = loom_param_row_get_editor(t_row, 0);
  e.count = 0;
  type_text(entry, "warm");
  g_assert_nonnull(loom_param_row_get_error(t_row));
  g_assert_cmpint(e.count, ==, 0);
  const loom_param_spec *t_spec = loom_layer_type_param(loom_layer_get_type(temp), t_index);
  g_autofree char *above = g_strdup_printf("%g", t_spec->max * 2 + 1);
  type_text(entry, above);
  g_assert_nonnull(loom_param_row_get_error(t_row));
  g_assert_cmpint(e.count, ==, 0);
  type_text(entry, "0.5");
  g_assert_null(loom_param_row_get_error(t_row));
  g_assert_cmpint(e.count, ==, 1);
  g_assert_cmpfloat(e.value.f, ==, 0.5);

  loom_inspector_set_layer(LOOM_INSPECTOR(insp), NULL, at(0, 0, 0, 0));
  loom_layer_free(temp);
  loom_layer_free(dense);
  gtk_window_destroy(GTK_WINDOW(window));
}

static void test_inspector_floats(void) {
  GtkWidget *insp = loom_inspector_new();
  GtkWidget *window = present(insp);
  loom_layer *masked = new_layer("masked_softmax");
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), masked, at(0, 0, 0, 0));
  Emitted e = {0};
  g_signal_connect(insp, "floats-changed", G_CALLBACK(on_floats_changed), &e);
  int index = loom_layer_type_param_index(loom_layer_get_type(masked), "mask");
  LoomParamRow *row = loom_inspector_get_param_row(LOOM_INSPECTOR(insp), index);
  GtkWidget *entry = loom_param_row_get_editor(row, 0);
  type_text(entry, "1, 0, x");
  g_assert_nonnull(loom_param_row_get_error(row));
  g_assert_cmpint(e.count, ==, 0);
  type_text(entry, "1, 0, 1, 1");
  g_assert_null(loom_param_row_get_error(row));
  g_assert_cmpint(e.count, ==, 1);
  g_assert_cmpuint(e.n_floats, ==, 4);
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), NULL, at(0, 0, 0, 0));
  loom_layer_free(masked);
  gtk_window_destroy(GTK_WINDOW(window));
}

static void test_inspector_dtypes(void) {
  GtkWidget *insp = loom_inspector_new();
  GtkWidget *window = present(insp);
  loom_layer *dense = new_layer("dense");
  loom_error err = {0};
  loom_shape in = loom_shape_1d(loom_layer_get_int(dense, "in_features"));
  g_assert_cmpint(loom_layer_build(dense, &in, 1, &err), ==, 0);
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), dense, at(0, 0, 0, 0));
  Emitted e = {0};
  g_signal_connect(insp, "dtype-changed", G_CALLBACK(on_dtype_changed), &e);

  GtkDropDown *drop = loom_inspector_get_dtype_drop_down(LOOM_INSPECTOR(insp));
  g_assert_cmpuint(g_list_model_get_n_items(gtk_drop_down_get_model(drop)), ==, LOOM_DTYPE_COUNT);
  g_assert_cmpuint(gtk_drop_down_get_selected(drop), ==, LOOM_DTYPE_FLOAT32);
  g_assert_true(gtk_widget_get_sensitive(GTK_WIDGET(drop)));
  gtk_drop_down_set_selected(drop, LOOM_DTYPE_INT8);
  g_assert_cmpint(e.count, ==, 1);
  g_assert_cmpint(e.dtype, ==, LOOM_DTYPE_INT8);
  g_assert_cmpint(loom_layer_get_dtype(dense), ==, LOOM_DTYPE_FLOAT32);

  /* Showing the layer again (as after an undo) selects its dtype without emitting. */
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), dense, at(0, 0, 0, 0));
  g_assert_cmpuint(gtk_drop_down_get_selected(drop), ==, LOOM_DTYPE_FLOAT32);
  g_assert_cmpint(e.count, ==, 1);

  /* The memory row: the engine's resident, at-rest and training bytes; at
   * rest the layer keeps only its packed codes. */
  g_autofree char *now = g_format_size(loom_layer_resident_bytes(dense));
  g_autofree char *rest = g_format_size(loom_layer_inference_bytes(dense));
  g_autofree char *training = g_format_size(loom_layer_training_bytes(dense));
  g_autofree char *want = g_strdup_printf("%s now · %s at rest · %s training", now, rest, training);
  g_assert_cmpstr(loom_inspector_get_memory_text(LOOM_INSPECTOR(insp)), ==, want);
  g_assert_cmpint(loom_layer_to_inference(dense, &err), ==, LOOM_OK);
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), dense, at(0, 0, 0, 0));
  g_autofree char *now_at_rest = g_format_size(loom_layer_resident_bytes(dense));
  g_assert_true(g_str_has_prefix(loom_inspector_get_memory_text(LOOM_INSPECTOR(insp)), now_at_rest));
  g_assert_cmpuint(loom_layer_resident_bytes(dense), <=, loom_layer_inference_bytes(dense));

  /* A layer without weights has nothing to store at another dtype. */
  loom_layer *relu = new_layer("relu");
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), relu, at(0, 0, 1, 0));
  g_assert_false(gtk_widget_get_sensitive(GTK_WIDGET(drop)));
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), NULL, at(0, 0, 0, 0));
  loom_layer_free(relu);
  loom_layer_free(dense);
  gtk_window_destroy(GTK_WINDOW(window));
}

static void test_inspector_diagnostics(void) {
  GtkWidget *insp = loom_inspector_new();
  GtkWidget *window = present(insp);
  loom_layer *dense = new_layer("dense");
  loom_diag diags[3] = {
    {.at = at(0, 0, 1, 0), .code = LOOM_ERR_SHAPE, .message = "dense at (0,0,1,0) expects 4 inputs, gets 8"},
    {.at = at(0, 0, 2, 0), .has_other = true, .other = at(0, 0, 1, 0), .code = LOOM_ERR_SHAPE,
     .message = "link (0,0,1,0) → (0,0,2,0): add needs equal shapes"},
    {.at = at(0, 0, 3, 0), .code = LOOM_ERR_SHAPE, .message = "elsewhere"},
  };
  loom_inspector_set_diagnostics(LOOM_INSPECTOR(insp), diags, 3);
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), dense, at(0, 0, 1, 0));
  g_assert_cmpint(loom_inspector_get_n_shown_diagnostics(LOOM_INSPECTOR(insp)), ==, 2);
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), dense, at(0, 0, 0, 0));
  g_assert_cmpint(loom_inspector_get_n_shown_diagnostics(LOOM_INSPECTOR(insp)), ==, 0);
  loom_inspector_set_layer(LOOM_INSPECTOR(insp), NULL, at(0, 0, 0, 0));
  loom_layer_free(dense);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* ---- link list and summary -------------------------------------------- */

static loom_net *linked_net(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 4, 1, &err);
  g_assert_nonnull(net);
  loom_shape in = loom_shape_1d(4);
  g_assert_cmpint(loom_net_set_input_shape(net, &in, &err), ==, 0);
  const int64_t sizes[][2] = {{4, 8}, {8, 8}, {8, 3}, {3, 3}};
  for (int x = 0; x < 4; x++) {
    loom_layer *l = new_layer("dense");
    loom_layer_set_int(l, "in_features", sizes[x][0], &err);
    loom_layer_set_int(l, "out_features", sizes[x][1], &err);
    g_assert_cmpint(loom_net_place(net, at(0, 0, x, 0), l, &err), ==, 0);
  }
  /* A valid skip (8 + 8) and one whose add cannot match (8 + 3). */
  loom_link ok = {at(0, 0, 0, 0), at(0, 0, 2, 0), LOOM_MERGE_ADD};
  loom_link bad = {at(0, 0, 1, 0), at(0, 0, 3, 0), LOOM_MERGE_ADD};
  g_assert_cmpint(loom_net_add_link(net, &ok, &err), ==, 0);
  g_assert_cmpint(loom_net_add_link(net, &bad, &err), ==, 0);
  return net;
}

typedef struct {
  int selected, merge_index, merge, deleted;
} LinkEvents;

static void on_link_selected(LoomLinkList *list, int index, LinkEvents *ev) {
  ev->selected = index;
}

static void on_merge_changed(LoomLinkList *list, int index, int merge, LinkEvents *ev) {
  ev->merge_index = index;
  ev->merge = merge;
}

static void on_delete(LoomLinkList *list, int index, LinkEvents *ev) {
  ev->deleted = index;
}

static void test_link_list(void) {
  loom_net *net = linked_net();
  loom_diag *diags = NULL;
  int n_diags = loom_net_infer_shapes(net, 1, &diags);
  g_assert_cmpint(n_diags, >, 0);

  GtkWidget *list = loom_link_list_new();
  GtkWidget *window = present(list);
  LinkEvents ev = {-2, -2, -2, -2};
  g_signal_connect(list, "link-selected", G_CALLBACK(on_link_selected), &ev);
  g_signal_connect(list, "merge-changed", G_CALLBACK(on_merge_changed), &ev);
  g_signal_connect(list, "link-delete-requested", G_CALLBACK(on_delete), &ev);
  loom_link_list_set_net(LOOM_LINK_LIST(list), net, diags, n_diags);
  g_assert_cmpint(loom_link_list_get_n_links(LOOM_LINK_LIST(list)), ==, 2);
  g_assert_null(loom_link_list_get_link_error(LOOM_LINK_LIST(list), 0));
  g_assert_nonnull(loom_link_list_get_link_error(LOOM_LINK_LIST(list), 1));

  GtkListBox *box = GTK_LIST_BOX(gui_test_find_child(list, GTK_TYPE_LIST_BOX));
  GtkListBoxRow *row1 = gtk_list_box_get_row_at_index(box, 1);
  gtk_list_box_select_row(box, row1);
  g_assert_cmpint(ev.selected, ==, 1);
  g_assert_cmpint(loom_link_list_get_selected(LOOM_LINK_LIST(list)), ==, 1);

  GtkWidget *merge = gui_test_find_child(GTK_WIDGET(row1), GTK_TYPE_DROP_DOWN);
  g_assert_cmpuint(gtk_drop_down_get_selected(GTK_DROP_DOWN(merge)), ==, LOOM_MERGE_ADD);
  gtk_drop_down_set_selected(GTK_DROP_DOWN(merge), LOOM_MERGE_CONCAT);
  g_assert_cmpint(ev.merge_index, ==, 1);
  g_assert_cmpint(ev.merge, ==, LOOM_MERGE_CONCAT);
  g_assert_cmpint(loom_net_link(net, 1)->merge, ==, LOOM_MERGE_ADD);

  GtkWidget *del = gtk_widget_get_last_child(gtk_list_box_row_get_child(row1));
  g_assert_true(GTK_IS_BUTTON(del));
  g_assert_cmpstr(gtk_button_get_icon_name(GTK_BUTTON(del)), ==, "user-trash-symbolic");
  g_signal_emit_by_name(del, "clicked");
  g_assert_cmpint(ev.deleted, ==, 1);

  /* Refreshing keeps the selection quietly; an empty net clears it. */
  ev.selected = -2;
  loom_link_list_set_net(LOOM_LINK_LIST(list), net, diags, n_diags);
  g_assert_cmpint(loom_link_list_get_selected(LOOM_LINK_LIST(list)), ==, 1);
  g_assert_cmpint(ev.selected, ==, -2);
  loom_link_list_set_net(LOOM_LINK_LIST(list), NULL, NULL, 0);
  g_assert_cmpint(loom_link_list_get_n_links(LOOM_LINK_LIST(list)), ==, 0);
  g_assert_cmpint(loom_link_list_get_selected(LOOM_LINK_LIST(list)), ==, -1);

  free(diags);
  loom_net_free(net);
  gtk_window_destroy(GTK_WINDOW(window));
}

static void test_net_summary(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 2, 1, &err);
  loom_shape in = loom_shape_1d(4);
  loom_net_set_input_shape(net, &in, &err);
  loom_layer *l = new_layer("dense");
  loom_layer_set_int(l, "in_features", 4, &err);
  loom_layer_set_int(l, "out_features", 8, &err);
  g_assert_cmpint(loom_net_place(net, at(0, 0, 0, 0), l, &err), ==, 0);
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(net, 1, &diags), ==, 0);
  free(diags);

  GtkWidget *summary = loom_net_summary_new();
  GtkWidget *window = present(summary);
  g_assert_cmpstr(loom_net_summary_get_memory_text(LOOM_NET_SUMMARY(summary)), ==, "—");
  loom_net_summary_set_net(LOOM_NET_SUMMARY(summary), net);
  g_assert_cmpstr(loom_net_summary_get_parameters_text(LOOM_NET_SUMMARY(summary)), ==, "40");
  g_assert_null(strstr(loom_net_summary_get_memory_text(LOOM_NET_SUMMARY(summary)), "float32"));
  g_assert_nonnull(strstr(loom_net_summary_get_flops_text(LOOM_NET_SUMMARY(summary)), "FLOP"));

  g_assert_cmpint(loom_layer_set_dtype(loom_net_layer_at(net, at(0, 0, 0, 0)), LOOM_DTYPE_INT8, &err), ==, 0);
  loom_net_summary_set_net(LOOM_NET_SUMMARY(summary), net);
  const char *memory = loom_net_summary_get_memory_text(LOOM_NET_SUMMARY(summary));
  g_assert_nonnull(strstr(memory, "float32"));
  g_assert_nonnull(strstr(memory, "smaller"));
  loom_net_summary_set_net(LOOM_NET_SUMMARY(summary), NULL);
  g_assert_cmpstr(loom_net_summary_get_parameters_text(LOOM_NET_SUMMARY(summary)), ==, "—");
  loom_net_free(net);
  gtk_window_destroy(GTK_WINDOW(window));
}

int main(int argc, char **argv) {
  gui_test_init(&argc, &argv);
  g_test_add_func("/widgets/palette/lists-all", test_palette_lists_all);
  g_test_add_func("/widgets/palette/search", test_palette_search);
  g_test_add_func("/widgets/palette/activate-and-drag", test_palette_activate_and_drag);
  g_test_add_func("/widgets/inspector/controls", test_inspector_controls);
  g_test_add_func("/widgets/inspector/rejects-invalid", test_inspector_rejects_invalid);
  g_test_add_func("/widgets/inspector/wheel", test_inspector_wheel);
  g_test_add_func("/widgets/inspector/floats", test_inspector_floats);
  g_test_add_func("/widgets/inspector/dtypes", test_inspector_dtypes);
  g_test_add_func("/widgets/inspector/diagnostics", test_inspector_diagnostics);
  g_test_add_func("/widgets/link-list", test_link_list);
  g_test_add_func("/widgets/net-summary", test_net_summary);
  return g_test_run();
}
