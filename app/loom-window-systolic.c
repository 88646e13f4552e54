/*
 * The window's side of the systolic pane: the document's network, the first
 * training sample as the held input, the win.systolic-* actions and the
 * stateful win.systolic-execution (the network's execution mode, changed
 * through an undoable command). The grid
 * shows the mesh while its page is in front; leaving it gives the layer
 * colours back.
 */
#include <glib/gi18n.h>

#include "loom-window-private.h"

/* The action's state follows the document (undo, another file). */
static void sync_execution(LoomWindow *self) {
  GAction *action = g_action_map_lookup_action(G_ACTION_MAP(self), "systolic-execution");
  if (!action) return;
  gboolean systolic = loom_net_execution(loom_document_get_net(self->document)) == LOOM_EXEC_SYSTOLIC;
  g_simple_action_set_state(G_SIMPLE_ACTION(action), g_variant_new_boolean(systolic));
}

void loom_window_systolic_document_changed(LoomWindow *self) {
  loom_systolic_pane_set_net(self->systolic_pane, loom_document_get_net(self->document));
  sync_execution(self);
}

/* A refusal (a feedback link keeps the network systolic) is a toast naming
 * the link; the state then stays what the network is. */
static void change_execution(GSimpleAction *action, GVariant *value, gpointer data) {
  LoomWindow *self = data;
  loom_execution mode = g_variant_get_boolean(value) ? LOOM_EXEC_SYSTOLIC : LOOM_EXEC_FEED_FORWARD;
  if (loom_net_execution(loom_document_get_net(self->document)) != mode)
    loom_window_execute(self, loom_command_new_set_execution(mode));
  sync_execution(self);
}

static void toggle_execution(GSimpleAction *action, GVariant *param, gpointer data) {
  g_autoptr(GVariant) state = g_action_get_state(G_ACTION(action));
  g_action_change_state(G_ACTION(action), g_variant_new_boolean(!g_variant_get_boolean(state)));
}

static const GActionEntry systolic_actions[] = {
  {.name = "systolic-execution", .activate = toggle_execution, .state = "false", .change_state = change_execution},
};

void loom_window_systolic_training_snapshot(LoomWindow *self, LoomTrainingSnapshot *snap) {
  if (!snap->data || snap->data == self->systolic_data) return;
  loom_training_data_unref(self->systolic_data);
  self->systolic_data = loom_training_data_ref(snap->data);
  const loom_dataset *train = snap->data->train;
  if (train && train->n > 0)
    loom_systolic_pane_set_input(self->systolic_pane, train->inputs, (gsize)train->input_numel);
}

static gboolean systolic_in_front(LoomWindow *self) {
  return g_strcmp0(gtk_stack_get_visible_child_name(self->bottom_stack), "systolic") == 0;
}

static void on_page(LoomWindow *self) {
  if (systolic_in_front(self)) {
    loom_training_pane_set_heatmap_metric(self->training_pane, "none");
    loom_dna_pane_set_live_heatmap(self->dna_pane, FALSE);
    return;
  }
  loom_systolic_pane_set_playing(self->systolic_pane, FALSE);
  if (loom_grid_view_get_color_mode(self->grid_view) == LOOM_GRID_VIEW_COLOR_METRIC &&
      g_str_equal(loom_training_pane_get_heatmap_metric(self->training_pane), "none") &&
      !loom_dna_pane_get_live_heatmap(self->dna_pane)) {
    loom_grid_view_set_slot_values(self->grid_view, NULL, 0, NULL);
    loom_grid_view_set_color_mode(self->grid_view, LOOM_GRID_VIEW_COLOR_LAYER_TYPE);
  }
}

static void show_systolic(LoomWindow *self) {
  g_action_group_change_action_state(G_ACTION_GROUP(self), "show-training", g_variant_new_boolean(TRUE));
  gtk_stack_set_visible_child_name(self->bottom_stack, "systolic");
}

static void win_systolic_tick(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  show_systolic(self);
  loom_systolic_pane_tick(self->systolic_pane);
}

static void win_systolic_play(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  show_systolic(self);
  loom_systolic_pane_set_playing(self->systolic_pane, !loom_systolic_pane_get_playing(self->systolic_pane));
}

static void win_systolic_reset(GtkWidget *widget, const char *action, GVariant *param) {
  loom_systolic_pane_reset(LOOM_WINDOW(widget)->systolic_pane);
}

void loom_window_systolic_class_init(GtkWidgetClass *widget_class) {
  gtk_widget_class_install_action(widget_class, "win.systolic-tick", NULL, win_systolic_tick);
  gtk_widget_class_install_action(widget_class, "win.systolic-play", NULL, win_systolic_play);
  gtk_widget_class_install_action(widget_class, "win.systolic-reset", NULL, win_systolic_reset);
}

void loom_window_systolic_init(LoomWindow *self) {
  g_action_map_add_action_entries(G_ACTION_MAP(self), systolic_actions, G_N_ELEMENTS(systolic_actions), self);
  if (self->document) sync_execution(self);
  loom_systolic_pane_set_grid_view(self->systolic_pane, self->grid_view);
  g_signal_connect_swapped(self->bottom_stack, "notify::visible-child-name", G_CALLBACK(on_page), self);
}

void loom_window_systolic_dispose(LoomWindow *self) {
  g_clear_pointer(&self->systolic_data, loom_training_data_unref);
}
