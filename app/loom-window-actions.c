/*
 * The window's editing, selection and view actions. Keys without a modifier
 * (arrows, Page Up/Down, +/−, Enter, Delete) belong to the grid: their
 * actions are enabled only while the grid view has the keyboard focus, so
 * the same keys keep working in the palette's search, the inspector's
 * fields and the link list (a disabled action lets the key through).
 */
#include <glib/gi18n.h>

#include "loom-window-private.h"

/* Actions bound to keys without modifiers: only while the grid has focus. */
static const char *const grid_key_actions[] = {
  "win.select-left", "win.select-right", "win.select-up", "win.select-down", "win.select-deeper",
  "win.select-shallower", "win.select-next-slot", "win.select-previous-slot", "win.place-again",
};

static gboolean grid_has_focus(LoomWindow *self) {
  GtkWidget *focus = gtk_root_get_focus(GTK_ROOT(self));
  return focus && (focus == GTK_WIDGET(self->grid_view) || gtk_widget_is_ancestor(focus, GTK_WIDGET(self->grid_view)));
}

void loom_window_update_actions(LoomWindow *self) {
  /* Focus moves while the window is disposed, after its children are gone. */
  if (!self->document || !self->grid_view || !self->link_list) return;
  LoomCommandStack *stack = loom_document_get_commands(self->document);
  gboolean grid = grid_has_focus(self);
  for (gsize i = 0; i < G_N_ELEMENTS(grid_key_actions); i++)
    gtk_widget_action_set_enabled(GTK_WIDGET(self), grid_key_actions[i], grid);

  loom_coord sel;
  gboolean occupied = loom_window_get_selected_slot(self, &sel) &&
                      loom_net_layer_at(loom_document_get_net(self->document), sel) != NULL;
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.link-from-selection", occupied);

  /* While training runs the network stays as the worker copied it. */
  gboolean editable = !loom_window_training_locked(self);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.clear-slot", editable && grid && occupied);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.place-again", editable && grid);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.place-layer", editable);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.link-to-selection",
                                editable && occupied && self->has_link_source);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.delete-link",
                                editable && loom_link_list_get_selected(self->link_list) >= 0);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.undo", editable && loom_command_stack_get_can_undo(stack));
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.redo", editable && loom_command_stack_get_can_redo(stack));
  loom_window_training_update_actions(self);
  const char *undo = loom_command_stack_get_undo_label(stack), *redo = loom_command_stack_get_redo_label(stack);
  /* Translators: a tooltip naming the edit Undo takes back, e.g. "Undo Place Layer". */
  g_autofree char *undo_tip = undo ? g_strdup_printf(_("Undo %s"), undo) : g_strdup(_("Undo"));
  /* Translators: a tooltip naming the edit Redo repeats, e.g. "Redo Place Layer". */
  g_autofree char *redo_tip = redo ? g_strdup_printf(_("Redo %s"), redo) : g_strdup(_("Redo"));
  gtk_widget_set_tooltip_text(self->undo_button, undo_tip);
  gtk_widget_set_tooltip_text(self->redo_button, redo_tip);
}

gboolean loom_window_place_layer(LoomWindow *self, const char *type_name, loom_coord at) {
  const loom_net *net = loom_document_get_net(self->document);
  char where[64];
  loom_coord_format(at, where, sizeof where);
  if (!loom_net_contains(net, at)) return FALSE;
  const loom_layer *occupant = loom_net_layer_at(net, at);
  if (occupant) {
    /* Refused rather than replaced silently (docs/workbench.md); the toast
     * names the slot, what it holds and how to replace it. */
    /* Translators: the first %s is the slot's coordinates (z,y,x,l), the
     * second the label of the layer type it holds, e.g. "Dense". */
    g_autofree char *message = g_strdup_printf(_("Slot %s already holds %s. To replace it, select the slot, press "
                                                 "Delete to clear it, then place the new layer."),
                                               where, loom_layer_type_label(loom_layer_get_type(occupant)));
    loom_window_toast(self, message);
    return FALSE;
  }
  g_autoptr(GError) error = NULL;
  loom_layer *layer = loom_document_make_layer(self->document, type_name, at, &error);
  if (!layer) {
    loom_window_toast(self, error->message);
    return FALSE;
  }
  /* type_name may be last_layer_type itself (win.place-again). */
  char *last = g_strdup(type_name);
  g_free(self->last_layer_type);
  self->last_layer_type = last;
  return loom_window_execute(self, loom_command_new_place_layer(at, layer));
}

static void win_place_layer(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  loom_coord at;
  if (!loom_window_get_selected_slot(self, &at)) {
    loom_window_toast(self, _("Select a slot in the grid first"));
    return;
  }
  loom_window_place_layer(self, g_variant_get_string(param, NULL), at);
}

static void win_place_again(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  loom_coord at;
  if (loom_window_get_selected_slot(self, &at)) loom_window_place_layer(self, self->last_layer_type, at);
}

static void win_clear_slot(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  loom_coord at;
  if (loom_window_get_selected_slot(self, &at)) loom_window_execute(self, loom_command_new_clear_slot(at));
}

static void win_undo(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  g_autoptr(GError) error = NULL;
  if (!loom_document_undo(self->document, &error)) loom_window_toast(self, error->message);
}

static void win_redo(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  g_autoptr(GError) error = NULL;
  if (!loom_document_redo(self->document, &error)) loom_window_toast(self, error->message);
}

/* Moves the selection by (dz, dy, dx) cells or dl slots, staying inside the
 * grid; with nothing selected, selects the first slot. */
static void move_selection(LoomWindow *self, int dz, int dy, int dx, int dl) {
  const loom_net *net = loom_document_get_net(self->document);
  loom_coord c = {0, 0, 0, 0};
  if (loom_window_get_selected_slot(self, &c)) {
    c.z = CLAMP(c.z + dz, 0, loom_net_depth(net) - 1);
    c.y = CLAMP(c.y + dy, 0, loom_net_rows(net) - 1);
    c.x = CLAMP(c.x + dx, 0, loom_net_cols(net) - 1);
    c.l = CLAMP(c.l + dl, 0, loom_net_layers_per_cell(net) - 1);
  }
  loom_grid_view_set_selection(self->grid_view, &c);
  g_autoptr(GVariant) slice = g_action_group_get_action_state(G_ACTION_GROUP(self), "z-slice");
  if (slice && g_variant_get_boolean(slice)) loom_grid_view_set_z_slice(self->grid_view, c.z);
}

#define SELECT_ACTION(name, dz, dy, dx, dl)                                                                    \
  static void win_select_##name(GtkWidget *widget, const char *action, GVariant *param) {                     \
    move_selection(LOOM_WINDOW(widget), dz, dy, dx, dl);                                                        \
  }
SELECT_ACTION(left, 0, 0, -1, 0)
SELECT_ACTION(right, 0, 0, 1, 0)
SELECT_ACTION(up, 0, -1, 0, 0)
SELECT_ACTION(down, 0, 1, 0, 0)
SELECT_ACTION(deeper, 1, 0, 0, 0)
SELECT_ACTION(shallower, -1, 0, 0, 0)
SELECT_ACTION(next_slot, 0, 0, 0, 1)
SELECT_ACTION(previous_slot, 0, 0, 0, -1)

static void win_delete_link(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  int index = loom_link_list_get_selected(self->link_list);
  if (index >= 0 && loom_window_execute(self, loom_command_new_remove_link(index))) {
    loom_link_list_set_selected(self->link_list, -1);
    loom_grid_view_set_selected_link(self->grid_view, -1);
    loom_window_update_actions(self);
  }
}

/* The link tool without a pointer: mark the selected layer as the source,
 * move the selection, finish at the destination. One undo step, as a drag. */
static void win_link_from_selection(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  loom_coord at;
  if (!loom_window_get_selected_slot(self, &at)) return;
  self->has_link_source = TRUE;
  self->link_source = at;
  char where[64];
  loom_coord_format(at, where, sizeof where);
  /* Translators: %s is the slot (z,y,x,l) where the new link starts. */
  g_autofree char *message = g_strdup_printf(_("Link from %s: select the destination, then press Ctrl+Shift+Enter"),
                                             where);
  loom_window_toast(self, message);
  loom_window_update_labels(self);
  loom_window_update_actions(self);
}

static void win_link_to_selection(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  loom_coord at;
  if (!self->has_link_source || !loom_window_get_selected_slot(self, &at)) return;
  /* A refused link keeps its source, so another destination can be tried. */
  if (!loom_window_add_link(self, self->link_source, at)) return;
  self->has_link_source = FALSE;
  loom_window_update_labels(self);
  loom_window_update_actions(self);
}

static void win_reset_camera(GtkWidget *widget, const char *action, GVariant *param) {
  loom_grid_view_reset_camera(LOOM_WINDOW(widget)->grid_view);
}

static void win_view_preset(GtkWidget *widget, const char *action, GVariant *param) {
  const char *name = g_variant_get_string(param, NULL);
  LoomGridViewPreset preset = LOOM_GRID_VIEW_PRESET_ISO;
  if (g_str_equal(name, "front")) preset = LOOM_GRID_VIEW_PRESET_FRONT;
  else if (g_str_equal(name, "top")) preset = LOOM_GRID_VIEW_PRESET_TOP;
  loom_grid_view_set_preset(LOOM_WINDOW(widget)->grid_view, preset);
}

static void win_focus_palette(GtkWidget *widget, const char *action, GVariant *param) {
  /* The palette's first focusable child is its search entry. */
  gtk_widget_child_focus(GTK_WIDGET(LOOM_WINDOW(widget)->palette), GTK_DIR_TAB_FORWARD);
}

static void win_focus_grid(GtkWidget *widget, const char *action, GVariant *param) {
  gtk_widget_grab_focus(GTK_WIDGET(LOOM_WINDOW(widget)->grid_view));
}

/* ---- stateful actions (a GActionMap beside the class actions) ---- */

static void toggle_bool(GSimpleAction *action, GVariant *param, gpointer data) {
  g_autoptr(GVariant) state = g_action_get_state(G_ACTION(action));
  g_action_change_state(G_ACTION(action), g_variant_new_boolean(!g_variant_get_boolean(state)));
}

static void change_link_tool(GSimpleAction *action, GVariant *value, gpointer data) {
  LoomWindow *self = data;
  g_simple_action_set_state(action, value);
  loom_grid_view_set_link_tool(self->grid_view, g_variant_get_boolean(value));
  loom_window_update_labels(self);
}

static void change_color_by_dtype(GSimpleAction *action, GVariant *value, gpointer data) {
  LoomWindow *self = data;
  g_simple_action_set_state(action, value);
  loom_grid_view_set_color_mode(self->grid_view, g_variant_get_boolean(value) ? LOOM_GRID_VIEW_COLOR_DTYPE
                                                                               : LOOM_GRID_VIEW_COLOR_LAYER_TYPE);
}

static void change_z_slice(GSimpleAction *action, GVariant *value, gpointer data) {
  LoomWindow *self = data;
  g_simple_action_set_state(action, value);
  loom_coord sel = {0};
  gboolean selected = loom_window_get_selected_slot(self, &sel);
  loom_grid_view_set_z_slice(self->grid_view, g_variant_get_boolean(value) ? (selected ? sel.z : 0) : -1);
}

static void change_link_merge(GSimpleAction *action, GVariant *value, gpointer data) {
  loom_merge merge;
  if (loom_merge_from_name(g_variant_get_string(value, NULL), &merge, NULL) == LOOM_OK)
    g_simple_action_set_state(action, value);
}

static const GActionEntry state_actions[] = {
  {.name = "link-tool", .activate = toggle_bool, .state = "false", .change_state = change_link_tool},
  {.name = "color-by-dtype", .activate = toggle_bool, .state = "false", .change_state = change_color_by_dtype},
  {.name = "z-slice", .activate = toggle_bool, .state = "false", .change_state = change_z_slice},
  {.name = "link-merge", .parameter_type = "s", .state = "'add'", .change_state = change_link_merge},
};

static void on_focus_changed(LoomWindow *self) {
  loom_window_update_actions(self);
}

void loom_window_actions_init(LoomWindow *self) {
  g_action_map_add_action_entries(G_ACTION_MAP(self), state_actions, G_N_ELEMENTS(state_actions), self);
  /* The legend can hide blocks in a small view; whether it shows is remembered. */
  g_autoptr(GAction) legend = g_settings_create_action(self->settings, "show-legend");
  g_action_map_add_action(G_ACTION_MAP(self), legend);
  g_settings_bind(self->settings, "show-legend", self->grid_view, "show-legend", G_SETTINGS_BIND_GET);
  g_signal_connect(self, "notify::focus-widget", G_CALLBACK(on_focus_changed), NULL);
}

void loom_window_actions_class_init(GtkWidgetClass *widget_class) {
  gtk_widget_class_install_action(widget_class, "win.undo", NULL, win_undo);
  gtk_widget_class_install_action(widget_class, "win.redo", NULL, win_redo);
  gtk_widget_class_install_action(widget_class, "win.place-layer", "s", win_place_layer);
  gtk_widget_class_install_action(widget_class, "win.place-again", NULL, win_place_again);
  gtk_widget_class_install_action(widget_class, "win.clear-slot", NULL, win_clear_slot);
  gtk_widget_class_install_action(widget_class, "win.select-left", NULL, win_select_left);
  gtk_widget_class_install_action(widget_class, "win.select-right", NULL, win_select_right);
  gtk_widget_class_install_action(widget_class, "win.select-up", NULL, win_select_up);
  gtk_widget_class_install_action(widget_class, "win.select-down", NULL, win_select_down);
  gtk_widget_class_install_action(widget_class, "win.select-deeper", NULL, win_select_deeper);
  gtk_widget_class_install_action(widget_class, "win.select-shallower", NULL, win_select_shallower);
  gtk_widget_class_install_action(widget_class, "win.select-next-slot", NULL, win_select_next_slot);
  gtk_widget_class_install_action(widget_class, "win.select-previous-slot", NULL, win_select_previous_slot);
  gtk_widget_class_install_action(widget_class, "win.delete-link", NULL, win_delete_link);
  gtk_widget_class_install_action(widget_class, "win.link-from-selection", NULL, win_link_from_selection);
  gtk_widget_class_install_action(widget_class, "win.link-to-selection", NULL, win_link_to_selection);
  gtk_widget_class_install_action(widget_class, "win.reset-camera", NULL, win_reset_camera);
  gtk_widget_class_install_action(widget_class, "win.view-preset", "s", win_view_preset);
  gtk_widget_class_install_action(widget_class, "win.focus-palette", NULL, win_focus_palette);
  gtk_widget_class_install_action(widget_class, "win.focus-grid", NULL, win_focus_grid);
}
