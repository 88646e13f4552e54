/*
 * The window's side of training (docs/workbench.md, "Training"): its
 * LoomTrainingController keeps the document and the worker in step (and
 * states the rules for edits while training runs); here the win.train-*
 * actions call it, what it reports becomes toasts, the DNA timeline and
 * the systolic pane's input (LoomSlotWatch feeds the slot monitor), and
 * the pane (LoomTrainingPane) shows the document's network and settings.
 */
#include "loom-window-private.h"

gboolean loom_window_training_locked(LoomWindow *self) {
  return self->training && loom_training_controller_get_locked(self->training);
}

static void show_document(LoomWindow *self) {
  const LoomTrainingExtras *t = loom_document_get_training(self->document);
  loom_training_pane_set_net(self->training_pane, loom_document_get_net(self->document));
  loom_training_pane_set_settings(self->training_pane, t->settings);
}

void loom_window_training_document_set(LoomWindow *self) {
  loom_training_pane_clear(self->training_pane);
  show_document(self);
  loom_training_controller_set_document(self->training, self->document);
}

void loom_window_training_document_changed(LoomWindow *self) {
  show_document(self);
  loom_training_controller_document_changed(self->training);
}

void loom_window_training_flush(LoomWindow *self) { loom_training_controller_flush(self->training); }

/* Ahead of any other toast: training stopped. */
static void on_stopped(LoomWindow *self, LoomTrainingSnapshot *snap) {
  AdwToast *toast = adw_toast_new(snap->message);
  adw_toast_set_timeout(toast, 10);
  adw_toast_set_priority(toast, ADW_TOAST_PRIORITY_HIGH);
  adw_toast_overlay_add_toast(self->toast_overlay, toast);
  if (snap->has_alert) loom_grid_view_set_selection(self->grid_view, &snap->alert_at);
}

static void on_failed(LoomWindow *self, const char *message) { loom_window_toast(self, message); }

static void on_snapshot(LoomWindow *self, LoomTrainingSnapshot *snap) {
  loom_window_dna_training_snapshot(self, snap);
  loom_window_systolic_training_snapshot(self, snap);
}

static void on_state(LoomWindow *self) {
  loom_window_update_actions(self);
  loom_window_update_labels(self);
}

/* The selected slot, for its live statistics (LoomSlotWatch). */
void loom_window_training_selection_changed(LoomWindow *self) {
  loom_coord at;
  gboolean sel = loom_window_get_selected_slot(self, &at);
  loom_slot_watch_select(self->slot_watch, loom_document_get_net(self->document), sel ? &at : NULL);
}

/* ---- actions ---- */

static void win_train_play(GtkWidget *widget, const char *action, GVariant *param) {
  loom_training_controller_play(LOOM_WINDOW(widget)->training);
}

static void win_train_pause(GtkWidget *widget, const char *action, GVariant *param) {
  loom_training_controller_pause(LOOM_WINDOW(widget)->training);
}

static void win_train_toggle(GtkWidget *widget, const char *action, GVariant *param) {
  if (loom_window_training_locked(LOOM_WINDOW(widget))) win_train_pause(widget, action, param);
  else win_train_play(widget, action, param);
}

static void win_train_step(GtkWidget *widget, const char *action, GVariant *param) {
  loom_training_controller_step(LOOM_WINDOW(widget)->training);
}

static void win_train_step_epoch(GtkWidget *widget, const char *action, GVariant *param) {
  loom_training_controller_step_epoch(LOOM_WINDOW(widget)->training);
}

/* Where the steps run (-1 the CPU, else a Vulkan device index); the pane's
 * device list activates it. Not while a run is under way. */
static void win_train_device(GtkWidget *widget, const char *action, GVariant *param) {
  loom_training_controller_set_device(LOOM_WINDOW(widget)->training, g_variant_get_int32(param));
}

/* Draws the weights anew from the training seed: the run starts over. */
static void win_train_reset(GtkWidget *widget, const char *action, GVariant *param) {
  loom_training_controller_reset(LOOM_WINDOW(widget)->training);
}

static void on_pane_settings(LoomWindow *self, const loom_train_settings *settings) {
  g_autoptr(GError) error = NULL;
  /* Not through loom_window_execute: settings may change while training runs. */
  if (!loom_document_execute(self->document, loom_command_new_set_training_settings(settings), &error))
    loom_window_toast(self, error->message);
}

void loom_window_training_update_actions(LoomWindow *self) {
  LoomTrainingState state = loom_training_session_get_state(loom_training_controller_get_session(self->training));
  gboolean ready = state != LOOM_TRAINING_INVALID && state != LOOM_TRAINING_IDLE;
  gboolean running = state == LOOM_TRAINING_RUNNING;
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.train-toggle", ready);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.train-play", ready && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.train-pause", running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.train-step", ready && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.train-step-epoch", ready && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.train-reset", ready && !running);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "win.train-device", !running);
}

void loom_window_training_class_init(GtkWidgetClass *widget_class) {
  gtk_widget_class_install_action(widget_class, "win.train-toggle", NULL, win_train_toggle);
  gtk_widget_class_install_action(widget_class, "win.train-play", NULL, win_train_play);
  gtk_widget_class_install_action(widget_class, "win.train-pause", NULL, win_train_pause);
  gtk_widget_class_install_action(widget_class, "win.train-step", NULL, win_train_step);
  gtk_widget_class_install_action(widget_class, "win.train-step-epoch", NULL, win_train_step_epoch);
  gtk_widget_class_install_action(widget_class, "win.train-reset", NULL, win_train_reset);
  gtk_widget_class_install_action(widget_class, "win.train-device", "i", win_train_device);
  loom_window_training_files_class_init(widget_class);
}

static void toggle_bool(GSimpleAction *action, GVariant *param, gpointer data) {
  g_autoptr(GVariant) state = g_action_get_state(G_ACTION(action));
  g_action_change_state(G_ACTION(action), g_variant_new_boolean(!g_variant_get_boolean(state)));
}

static void change_show_training(GSimpleAction *action, GVariant *value, gpointer data) {
  LoomWindow *self = data;
  g_simple_action_set_state(action, value);
  gtk_widget_set_visible(self->bottom_box, g_variant_get_boolean(value));
}

static const GActionEntry training_state_actions[] = {
  {.name = "show-training", .activate = toggle_bool, .state = "true", .change_state = change_show_training},
};

void loom_window_training_init(LoomWindow *self) {
  g_action_map_add_action_entries(G_ACTION_MAP(self), training_state_actions, G_N_ELEMENTS(training_state_actions),
                                  self);
  self->training = loom_training_controller_new(GTK_WIDGET(self));
  LoomTrainingSession *session = loom_training_controller_get_session(self->training);
  /* The selected slot's live statistics live in the inspector, beside the
   * slot's own facts; hidden until training has data for it. */
  self->slot_monitor = LOOM_SLOT_MONITOR(loom_slot_monitor_new());
  loom_inspector_set_live_widget(self->inspector, GTK_WIDGET(self->slot_monitor));
  self->slot_watch = loom_slot_watch_new(self->training, self->slot_monitor);
  loom_training_pane_set_session(self->training_pane, session);
  loom_training_pane_set_grid_view(self->training_pane, self->grid_view);
  g_signal_connect_swapped(self->training, "snapshot", G_CALLBACK(on_snapshot), self);
  g_signal_connect_swapped(self->training, "stopped", G_CALLBACK(on_stopped), self);
  g_signal_connect_swapped(self->training, "failed", G_CALLBACK(on_failed), self);
  g_signal_connect_swapped(session, "notify::state", G_CALLBACK(on_state), self);
  g_signal_connect_swapped(self->training_pane, "settings-changed", G_CALLBACK(on_pane_settings), self);
}

void loom_window_training_dispose(LoomWindow *self) {
  if (self->training) {
    g_signal_handlers_disconnect_by_data(self->training, self);
    g_signal_handlers_disconnect_by_data(loom_training_controller_get_session(self->training), self);
  }
  if (self->training_pane) {
    g_signal_handlers_disconnect_by_data(self->training_pane, self);
    loom_training_pane_set_session(self->training_pane, NULL);
  }
  g_clear_object(&self->slot_watch);
  /* Joins the worker: closing the window cancels training cleanly. */
  if (self->training) loom_training_controller_shutdown(self->training);
  g_clear_object(&self->training);
}
