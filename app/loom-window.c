/*
 * LoomWindow shows one LoomDocument: the palette, the 3D grid view, the
 * inspector of the selected layer, the remote links and the network's
 * totals. Widgets never change the network themselves: their signals become
 * LoomCommands on the document's undo stack, and every change of the
 * document refreshes every view (loom_window_refresh). Actions live in
 * loom-window-actions.c and loom-window-files.c.
 */
#include <glib/gi18n.h>

#include "loom-window-private.h"

G_DEFINE_FINAL_TYPE(LoomWindow, loom_window, ADW_TYPE_APPLICATION_WINDOW)

#define INSPECTOR_MIN_WIDTH 280 /* the schema's minimum of inspector-width */

enum { PROP_0, PROP_DOCUMENT, N_PROPS };
static GParamSpec *properties[N_PROPS];

void loom_window_show_error(LoomWindow *self, const char *heading, const GError *error) {
  AdwMessageDialog *dialog = ADW_MESSAGE_DIALOG(adw_message_dialog_new(GTK_WINDOW(self), heading, error->message));
  adw_message_dialog_add_response(dialog, "close", _("_Close"));
  gtk_window_present(GTK_WINDOW(dialog));
}

void loom_window_toast(LoomWindow *self, const char *message) {
  AdwToast *toast = adw_toast_new(message);
  adw_toast_set_timeout(toast, 5);
  adw_toast_overlay_add_toast(self->toast_overlay, toast);
}

static void update_title(LoomWindow *self) {
  const char *name = loom_document_get_title(self->document);
  gboolean dirty = loom_document_get_dirty(self->document);
  /* The bullet marks unsaved changes, as in GNOME's editors. */
  g_autofree char *title = dirty ? g_strdup_printf("• %s", name) : g_strdup(name);
  adw_window_title_set_subtitle(self->window_title, title);
  /* Translators: the window title: a file name, then the application's name. */
  g_autofree char *window_title = g_strdup_printf(_("%s — Loom Workbench"), title);
  gtk_window_set_title(GTK_WINDOW(self), window_title);
}

/* A screen reader reads the grid's description when the view gets the focus
 * and again when it changes: the selected slot and what it holds, a link
 * waiting for its destination, then how to use the keys. */
static void update_grid_description(LoomWindow *self) {
  const loom_net *net = loom_document_get_net(self->document);
  g_autoptr(GString) text = g_string_new(NULL);
  loom_coord sel;
  char where[64];
  if (loom_window_get_selected_slot(self, &sel)) {
    loom_coord_format(sel, where, sizeof where);
    const loom_layer *layer = loom_net_layer_at(net, sel);
    if (layer)
      /* Translators: announced by screen readers: the selected slot's
       * coordinates (z,y,x,l), then the label of the layer it holds. */
      g_string_append_printf(text, _("Slot %s selected: %s."), where,
                             loom_layer_type_label(loom_layer_get_type(layer)));
    else
      /* Translators: announced by screen readers: the selected slot's coordinates (z,y,x,l). */
      g_string_append_printf(text, _("Slot %s selected: empty."), where);
  } else {
    g_string_append(text, _("No slot selected."));
  }
  if (self->has_link_source) {
    loom_coord_format(self->link_source, where, sizeof where);
    g_string_append_c(text, ' ');
    /* Translators: announced by screen readers; %s is the slot the new link starts at. */
    g_string_append_printf(text, _("A link from %s waits for its destination: select it and press Ctrl+Shift+Enter."),
                           where);
  }
  g_string_append_c(text, ' ');
  g_string_append(text, _("Arrow keys, Page Up and Page Down move the selected slot; Enter places a layer; "
                          "Delete clears the slot; Ctrl+Shift+L starts a link."));
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->grid_view), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text->str, -1);
}

void loom_window_update_labels(LoomWindow *self) {
  const loom_net *net = loom_document_get_net(self->document);
  int depth = loom_net_depth(net), rows = loom_net_rows(net), cols = loom_net_cols(net);
  int per_cell = loom_net_layers_per_cell(net);
  /* Translators: the size of the network's grid: depth × rows × columns,
   * then the number of layer slots in each cell. */
  g_autofree char *grid = g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%d × %d × %d cells, %d layer per cell",
                                                   "%d × %d × %d cells, %d layers per cell", per_cell),
                                          depth, rows, cols, per_cell);
  int n_diags = 0;
  loom_document_get_diagnostics(self->document, &n_diags);
  loom_coord sel;
  g_autofree char *where = NULL;
  if (loom_window_get_selected_slot(self, &sel)) {
    char buf[64];
    /* Translators: the selected slot's coordinates (z,y,x,l). */
    where = g_strdup_printf(_("selected %s"), loom_coord_format(sel, buf, sizeof buf));
  }
  g_autofree char *problems = n_diags ? g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%d problem", "%d problems", n_diags), n_diags)
                                      : NULL;
  g_autofree char *text = g_strjoin(" · ", grid, where ? where : problems, where ? problems : NULL, NULL);
  gtk_label_set_text(self->grid_label, text);

  const char *hint = NULL;
  g_autoptr(GVariant) link_tool = g_action_group_get_action_state(G_ACTION_GROUP(self), "link-tool");
  if (link_tool && g_variant_get_boolean(link_tool))
    hint = _("Link tool: drag from a layer to the layer its output should reach");
  else if (loom_net_n_layers(net) == 0)
    hint = _("Select a slot, then press Enter on a palette entry — or drag one onto the grid");
  gtk_label_set_text(self->hint_label, hint ? hint : "");
  gtk_widget_set_visible(GTK_WIDGET(self->hint_label), hint != NULL);
  update_grid_description(self);
}

gboolean loom_window_get_selected_slot(LoomWindow *self, loom_coord *out) {
  return loom_grid_view_get_selection(self->grid_view, out);
}

static void refresh_inspector(LoomWindow *self) {
  const loom_net *net = loom_document_get_net(self->document);
  int n_diags = 0;
  const loom_diag *diags = loom_document_get_diagnostics(self->document, &n_diags);
  loom_coord sel = {0};
  gboolean selected = loom_window_get_selected_slot(self, &sel);
  loom_inspector_set_layer(self->inspector, selected ? loom_net_layer_at(net, sel) : NULL, sel);
  loom_inspector_set_diagnostics(self->inspector, diags, n_diags);
}

void loom_window_refresh(LoomWindow *self) {
  const loom_net *net = loom_document_get_net(self->document);
  int n_diags = 0;
  const loom_diag *diags = loom_document_get_diagnostics(self->document, &n_diags);
  loom_grid_view_net_changed(self->grid_view);
  loom_grid_view_set_diagnostics(self->grid_view, diags, n_diags);
  refresh_inspector(self);
  loom_link_list_set_net(self->link_list, net, diags, n_diags);
  loom_grid_view_set_selected_link(self->grid_view, loom_link_list_get_selected(self->link_list));
  loom_net_summary_set_net(self->net_summary, net);
  loom_window_update_labels(self);
  loom_window_update_actions(self);
}

static void on_document_changed(LoomWindow *self) {
  loom_window_refresh(self);
  loom_window_training_document_changed(self);
  loom_window_dna_document_changed(self);
  loom_window_systolic_document_changed(self);
}

gboolean loom_window_execute(LoomWindow *self, LoomCommand *cmd) {
  g_autoptr(GError) error = NULL;
  if (!cmd) return FALSE;
  if (loom_window_training_locked(self)) {
    /* The worker trains a copy: an edit now would be lost or break it. */
    loom_command_free(cmd);
    loom_window_toast(self, _("Pause training (F5) to edit the network"));
    refresh_inspector(self);
    return FALSE;
  }
  if (loom_document_execute(self->document, cmd, &error)) return TRUE;
  loom_window_toast(self, error->message);
  /* Editors may show a value the network refused: show the real one again. */
  refresh_inspector(self);
  return FALSE;
}

LoomDocument *loom_window_get_document(LoomWindow *self) {
  g_return_val_if_fail(LOOM_IS_WINDOW(self), NULL);
  return self->document;
}

void loom_window_set_document(LoomWindow *self, LoomDocument *document) {
  g_return_if_fail(LOOM_IS_WINDOW(self));
  g_return_if_fail(LOOM_IS_DOCUMENT(document));
  if (!g_set_object(&self->document, document)) return;
  g_signal_group_set_target(self->document_signals, document);
  loom_grid_view_set_net(self->grid_view, loom_document_get_net(document));
  loom_grid_view_set_selection(self->grid_view, NULL);
  loom_link_list_set_selected(self->link_list, -1);
  self->has_link_source = FALSE;
  loom_grid_view_reset_camera(self->grid_view);
  update_title(self);
  loom_window_refresh(self);
  loom_window_training_document_set(self);
  loom_window_dna_document_set(self);
  loom_window_systolic_document_changed(self);
  loom_window_training_selection_changed(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_DOCUMENT]);
}

/* ---- widget signals → commands ---- */

static void on_selection_changed(LoomWindow *self) {
  refresh_inspector(self);
  loom_window_training_selection_changed(self);
  loom_window_update_labels(self);
  loom_window_update_actions(self);
}

static void on_layer_activated(LoomWindow *self, const char *type_name) {
  gtk_widget_activate_action(GTK_WIDGET(self), "win.place-layer", "s", type_name);
}

static void on_slot_activated(LoomWindow *self, int z, int y, int x, int l) {
  loom_coord at = {z, y, x, l};
  loom_grid_view_set_selection(self->grid_view, &at);
  if (!loom_net_layer_at(loom_document_get_net(self->document), at))
    loom_window_place_layer(self, self->last_layer_type, at);
}

static void on_layer_dropped(LoomWindow *self, const char *type_name, int z, int y, int x, int l) {
  loom_coord at = {z, y, x, l};
  loom_grid_view_set_selection(self->grid_view, &at);
  loom_window_place_layer(self, type_name, at);
}

gboolean loom_window_add_link(LoomWindow *self, loom_coord src, loom_coord dst) {
  g_autoptr(GVariant) state = g_action_group_get_action_state(G_ACTION_GROUP(self), "link-merge");
  loom_link link = {.src = src, .dst = dst, .merge = LOOM_MERGE_REPLACE};
  if (state) loom_merge_from_name(g_variant_get_string(state, NULL), &link.merge, NULL);
  if (!loom_window_execute(self, loom_command_new_add_link(&link))) return FALSE;
  int index = loom_net_n_links(loom_document_get_net(self->document)) - 1;
  loom_link_list_set_selected(self->link_list, index);
  loom_grid_view_set_selected_link(self->grid_view, index);
  loom_window_update_actions(self);
  return TRUE;
}

static void on_link_drawn(LoomWindow *self, int sz, int sy, int sx, int sl, int dz, int dy, int dx, int dl) {
  loom_window_add_link(self, (loom_coord){sz, sy, sx, sl}, (loom_coord){dz, dy, dx, dl});
}

static void on_param_changed(LoomWindow *self, guint index, const loom_param_value *value) {
  loom_coord at;
  if (loom_window_get_selected_slot(self, &at)) loom_window_execute(self, loom_command_new_set_param(at, index, value));
}

static void on_floats_changed(LoomWindow *self, guint index, GBytes *values) {
  loom_coord at;
  if (!loom_window_get_selected_slot(self, &at)) return;
  gsize size = 0;
  const float *data = g_bytes_get_data(values, &size);
  loom_window_execute(self, loom_command_new_set_floats(at, index, data, (int64_t)(size / sizeof(float))));
}

static void on_dtype_changed(LoomWindow *self, int dtype) {
  loom_coord at;
  const loom_net *net = loom_document_get_net(self->document);
  if (!loom_window_get_selected_slot(self, &at) || !loom_net_layer_at(net, at)) return;
  if ((int)loom_layer_get_dtype(loom_net_layer_at(net, at)) == dtype) return;
  loom_window_execute(self, loom_command_new_set_dtype(at, (loom_dtype)dtype));
}

static void on_link_selected(LoomWindow *self, int index) {
  loom_grid_view_set_selected_link(self->grid_view, index);
  loom_window_update_actions(self);
}

static void on_merge_changed(LoomWindow *self, int index, int merge) {
  loom_window_execute(self, loom_command_new_set_link_merge(index, (loom_merge)merge));
}

static void on_link_delete_requested(LoomWindow *self, int index) {
  if (loom_window_execute(self, loom_command_new_remove_link(index))) {
    loom_link_list_set_selected(self->link_list, -1);
    loom_grid_view_set_selected_link(self->grid_view, -1);
    loom_window_update_actions(self);
  }
}

/* ---- lifecycle ---- */

static gboolean settle_panes(gpointer data) {
  LoomWindow *self = data;
  self->settle_panes = 0;
  /* A set position keeps the column's width when the window is resized
   * (resize-end-child is false): the grid view takes the difference. */
  gtk_paned_set_position(self->inner_paned, gtk_paned_get_position(self->inner_paned));
  gtk_widget_set_size_request(self->inspector_column, INSPECTOR_MIN_WIDTH, -1);
  /* The panes below the view as high as the user left them; the view keeps
   * at least a third of the height. */
  int panes = g_settings_get_int(self->settings, "panes-height");
  int total = gtk_widget_get_height(GTK_WIDGET(self->center_paned));
  if (panes > 0 && total > 0) gtk_paned_set_position(self->center_paned, MAX(total - panes, total / 3));
  /* The links and totals as high as the user dragged them (else their
   * natural height); the inspector keeps at least a quarter. */
  int split = g_settings_get_int(self->settings, "inspector-split");
  int column = gtk_widget_get_height(GTK_WIDGET(self->inspector_paned));
  if (split > 0 && column > 0) gtk_paned_set_position(self->inspector_paned, MAX(column - split, column / 4));
  return G_SOURCE_REMOVE;
}

static void on_inner_paned_laid_out(LoomWindow *self) {
  if (self->panes_settled || gtk_widget_get_width(GTK_WIDGET(self->inner_paned)) <= 0) return;
  self->panes_settled = TRUE;
  self->settle_panes = g_idle_add(settle_panes, self);
}

static void save_pane_sizes(LoomWindow *self) {
  if (gtk_widget_get_width(GTK_WIDGET(self->outer_paned)) <= 0) return; /* never laid out */
  g_settings_set_int(self->settings, "palette-width", CLAMP(gtk_paned_get_position(self->outer_paned), 160, 800));
  g_settings_set_int(self->settings, "inspector-width",
                     CLAMP(gtk_widget_get_width(self->inspector_column), INSPECTOR_MIN_WIDTH, 900));
  /* Hidden panes (Ctrl+T) keep the height they had. What is shown of them
   * (the paned may clip them below their minimum height). */
  int total = gtk_widget_get_height(GTK_WIDGET(self->center_paned));
  if (gtk_widget_get_visible(self->bottom_box) && total > 0)
    g_settings_set_int(self->settings, "panes-height",
                       CLAMP(total - gtk_paned_get_position(self->center_paned), 1, 4000));
  /* Only a split the user made: the natural height follows the links. */
  int column = gtk_widget_get_height(GTK_WIDGET(self->inspector_paned));
  gboolean dragged = FALSE;
  g_object_get(self->inspector_paned, "position-set", &dragged, NULL);
  if (column > 0)
    g_settings_set_int(self->settings, "inspector-split",
                       dragged ? CLAMP(column - gtk_paned_get_position(self->inspector_paned), 1, 4000) : 0);
}

static gboolean loom_window_close_request(GtkWindow *window) {
  LoomWindow *self = LOOM_WINDOW(window);
  if (loom_window_files_close_request(self)) return TRUE; /* asked first */
  g_cancellable_cancel(self->cancellable);

  /* Saved on close rather than on every resize (as gnome-text-editor does):
   * the default size is the unmaximized size even while maximized. */
  int width, height;
  gtk_window_get_default_size(window, &width, &height);
  g_settings_set_int(self->settings, "window-width", width);
  g_settings_set_int(self->settings, "window-height", height);
  g_settings_set_boolean(self->settings, "window-maximized", gtk_window_is_maximized(window));
  save_pane_sizes(self);
  return GTK_WINDOW_CLASS(loom_window_parent_class)->close_request(window);
}

/* Until the user has sized the window, the schema's default (room for the
 * grid view between palette and inspector) shrunk to fit the monitor. */
static void default_window_size(LoomWindow *self, int *width, int *height) {
  GListModel *monitors = gdk_display_get_monitors(gtk_widget_get_display(GTK_WIDGET(self)));
  g_autoptr(GdkMonitor) monitor = g_list_model_get_n_items(monitors) ? g_list_model_get_item(monitors, 0) : NULL;
  if (!monitor) return;
  GdkRectangle area;
  gdk_monitor_get_geometry(monitor, &area);
  /* Leave room for panels and the title bar's shadow. */
  if (area.width > 0) *width = MIN(*width, area.width * 9 / 10);
  if (area.height > 0) *height = MIN(*height, area.height * 9 / 10);
}

static void restore_window_state(LoomWindow *self) {
  int width = g_settings_get_int(self->settings, "window-width");
  int height = g_settings_get_int(self->settings, "window-height");
  g_autoptr(GVariant) user_width = g_settings_get_user_value(self->settings, "window-width");
  if (!user_width) default_window_size(self, &width, &height);
  if (width > 0 && height > 0) gtk_window_set_default_size(GTK_WINDOW(self), width, height);
  if (g_settings_get_boolean(self->settings, "window-maximized")) gtk_window_maximize(GTK_WINDOW(self));

  gtk_paned_set_position(self->outer_paned, g_settings_get_int(self->settings, "palette-width"));
  /* Without a position, GtkPaned gives the inspector column (which does not
   * resize) its natural width, here the remembered one, and the grid view the
   * rest, maximized or not. After the first layout settle_panes() fixes the
   * position and lets the column be dragged narrower again. */
  int column = g_settings_get_int(self->settings, "inspector-width");
  /* In a small window the grid view keeps the larger share. */
  if (width > 0) column = MIN(column, MAX(INSPECTOR_MIN_WIDTH, width * 3 / 10));
  gtk_widget_set_size_request(self->inspector_column, column, -1);
}

static void loom_window_constructed(GObject *object) {
  LoomWindow *self = LOOM_WINDOW(object);
  G_OBJECT_CLASS(loom_window_parent_class)->constructed(object);
  /* After the template, whose default size this overrides. */
  restore_window_state(self);
  loom_window_files_init(self);
  if (!self->document) {
    g_autoptr(GError) error = NULL;
    g_autoptr(LoomDocument) document = loom_document_new(&error);
    if (document)
      loom_window_set_document(self, document);
    else
      g_critical("Cannot create an empty network: %s", error->message);
  }
}

static void loom_window_dispose(GObject *object) {
  LoomWindow *self = LOOM_WINDOW(object);
  g_cancellable_cancel(self->cancellable);
  g_clear_handle_id(&self->settle_panes, g_source_remove);
  loom_window_files_dispose(self);
  loom_window_training_dispose(self);
  loom_window_systolic_dispose(self);
  /* Children emit while they are torn down; nothing of this window may answer. */
  g_signal_group_set_target(self->document_signals, NULL);
  gpointer children[] = {self->grid_view, self->palette,      self->inspector,
                         self->link_list, self->inner_paned, self->training_pane, self->dna_pane,
                         self->systolic_pane, self->bottom_stack};
  for (gsize i = 0; i < G_N_ELEMENTS(children); i++)
    if (children[i]) g_signal_handlers_disconnect_by_data(children[i], self);
  gtk_widget_dispose_template(GTK_WIDGET(self), LOOM_TYPE_WINDOW);
  G_OBJECT_CLASS(loom_window_parent_class)->dispose(object);
}

static void loom_window_finalize(GObject *object) {
  LoomWindow *self = LOOM_WINDOW(object);
  g_clear_object(&self->document_signals);
  g_clear_object(&self->settings);
  g_clear_object(&self->document);
  g_clear_object(&self->cancellable);
  g_free(self->last_layer_type);
  G_OBJECT_CLASS(loom_window_parent_class)->finalize(object);
}

static void loom_window_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomWindow *self = LOOM_WINDOW(object);
  switch (prop_id) {
  case PROP_DOCUMENT: g_value_set_object(value, self->document); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_window_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  LoomWindow *self = LOOM_WINDOW(object);
  switch (prop_id) {
  case PROP_DOCUMENT:
    if (g_value_get_object(value)) loom_window_set_document(self, g_value_get_object(value));
    break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_window_class_init(LoomWindowClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS(klass);

  object_class->constructed = loom_window_constructed;
  object_class->dispose = loom_window_dispose;
  object_class->finalize = loom_window_finalize;
  object_class->get_property = loom_window_get_property;
  object_class->set_property = loom_window_set_property;
  window_class->close_request = loom_window_close_request;

  properties[PROP_DOCUMENT] = g_param_spec_object("document", NULL, NULL, LOOM_TYPE_DOCUMENT,
                                                  G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                                    G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  g_type_ensure(LOOM_TYPE_GRID_VIEW);
  g_type_ensure(LOOM_TYPE_PALETTE);
  g_type_ensure(LOOM_TYPE_INSPECTOR);
  g_type_ensure(LOOM_TYPE_LINK_LIST);
  g_type_ensure(LOOM_TYPE_NET_SUMMARY);
  g_type_ensure(LOOM_TYPE_TRAINING_PANE);
  g_type_ensure(LOOM_TYPE_DNA_PANE);
  g_type_ensure(LOOM_TYPE_SYSTOLIC_PANE);
  gtk_widget_class_set_template_from_resource(widget_class, "/org/loomworkbench/Workbench/loom-window.ui");
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, window_title);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, toast_overlay);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, outer_paned);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, inner_paned);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, inspector_column);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, inspector_paned);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, center_paned);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, grid_view);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, training_pane);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, bottom_box);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, bottom_stack);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, dna_pane);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, systolic_pane);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, grid_label);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, hint_label);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, palette);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, inspector);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, link_list);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, net_summary);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, undo_button);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, redo_button);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, recent_menu);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, recent_submenu);

  loom_window_files_class_init(widget_class);
  loom_window_actions_class_init(widget_class);
  loom_window_training_class_init(widget_class);
  loom_window_dna_class_init(widget_class);
  loom_window_systolic_class_init(widget_class);
  loom_window_export_class_init(widget_class);
  loom_window_import_class_init(widget_class);
}

static void loom_window_init(LoomWindow *self) {
  gtk_widget_init_template(GTK_WIDGET(self));
  self->cancellable = g_cancellable_new();
  self->settings = g_settings_new(APPLICATION_ID);
  self->last_layer_type = g_strdup("dense");

  self->document_signals = g_signal_group_new(LOOM_TYPE_DOCUMENT);
  g_signal_group_connect_swapped(self->document_signals, "notify::title", G_CALLBACK(update_title), self);
  g_signal_group_connect_swapped(self->document_signals, "notify::dirty", G_CALLBACK(update_title), self);
  g_signal_group_connect_swapped(self->document_signals, "changed", G_CALLBACK(on_document_changed), self);

  g_signal_connect_swapped(self->grid_view, "selection-changed", G_CALLBACK(on_selection_changed), self);
  g_signal_connect_swapped(self->grid_view, "slot-activated", G_CALLBACK(on_slot_activated), self);
  g_signal_connect_swapped(self->grid_view, "layer-dropped", G_CALLBACK(on_layer_dropped), self);
  g_signal_connect_swapped(self->grid_view, "link-drawn", G_CALLBACK(on_link_drawn), self);
  g_signal_connect_swapped(self->palette, "layer-activated", G_CALLBACK(on_layer_activated), self);
  g_signal_connect_swapped(self->inspector, "param-changed", G_CALLBACK(on_param_changed), self);
  g_signal_connect_swapped(self->inspector, "floats-changed", G_CALLBACK(on_floats_changed), self);
  g_signal_connect_swapped(self->inspector, "dtype-changed", G_CALLBACK(on_dtype_changed), self);
  g_signal_connect_swapped(self->link_list, "link-selected", G_CALLBACK(on_link_selected), self);
  g_signal_connect_swapped(self->link_list, "merge-changed", G_CALLBACK(on_merge_changed), self);
  g_signal_connect_swapped(self->link_list, "link-delete-requested", G_CALLBACK(on_link_delete_requested), self);
  g_signal_connect_swapped(self->inner_paned, "notify::max-position", G_CALLBACK(on_inner_paned_laid_out), self);

  /* The description follows the selection (update_grid_description). */
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->grid_view), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                 _("Network grid"), -1);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->link_list), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Remote links"),
                                 -1);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->net_summary), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                 _("Network totals"), -1);
  loom_window_training_init(self);
  loom_window_dna_init(self);
  loom_window_systolic_init(self);
  loom_window_actions_init(self);
}

LoomWindow *loom_window_new(LoomApplication *application) {
  return g_object_new(LOOM_TYPE_WINDOW, "application", application, NULL);
}
