/*
 * The window's side of training (docs/workbench.md, "Training"): it owns the
 * LoomTrainingSession of its document, polls it at frame time while it is
 * busy, keeps the document and the worker in step, installs the win.train-*
 * actions and feeds the slot monitor. The pane (LoomTrainingPane) only shows.
 *
 * The rules: while training runs, the network cannot be edited (every
 * command but new settings is refused, and the editing actions are off);
 * settings changed while it runs reach the worker at the next step. When
 * training pauses, finishes or stops, its weights and trainer state come
 * back into the document as one undoable command; Save while it runs first
 * takes the newest weights the worker published. Any edit while paused
 * reloads the worker from the document.
 */
#include <glib/gi18n.h>

#include "loom-csv-dialog.h"
#include "loom-window-private.h"

static gboolean training_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data) {
  LoomWindow *self = LOOM_WINDOW(widget);
  loom_training_session_poll(self->training);
  if (loom_training_session_get_busy(self->training)) return G_SOURCE_CONTINUE;
  self->training_tick = 0;
  return G_SOURCE_REMOVE;
}

/* The UI never waits on the worker: it looks into the mailbox each frame,
 * and only while the worker may have something to say. */
static void watch_session(LoomWindow *self) {
  if (!self->training_tick)
    self->training_tick = gtk_widget_add_tick_callback(GTK_WIDGET(self), training_tick, NULL, NULL);
}

gboolean loom_window_training_locked(LoomWindow *self) {
  return self->training && loom_training_session_get_running(self->training);
}

static void load_session(LoomWindow *self) {
  const LoomTrainingExtras *t = loom_document_get_training(self->document);
  loom_document_clear_live_training(self->document);
  self->loaded_revision = loom_command_stack_get_revision(loom_document_get_commands(self->document));
  loom_training_session_load(self->training, loom_document_get_net(self->document), t->settings, t->state, t->steps);
  self->weights_pending = FALSE;
  watch_session(self);
}

void loom_window_training_document_set(LoomWindow *self) {
  g_clear_pointer(&self->newest_weights, loom_training_snapshot_unref);
  loom_training_pane_clear(self->training_pane);
  self->loaded_revision = G_MAXUINT64;
  loom_window_training_document_changed(self);
}

void loom_window_training_document_changed(LoomWindow *self) {
  const LoomTrainingExtras *t = loom_document_get_training(self->document);
  loom_training_pane_set_net(self->training_pane, loom_document_get_net(self->document));
  loom_training_pane_set_settings(self->training_pane, t->settings);
  guint64 revision = loom_command_stack_get_revision(loom_document_get_commands(self->document));
  /* Saving changes nothing the worker has; the worker's own weights coming
   * back need no reload either. */
  if (revision == self->loaded_revision) return;
  if (self->pushing_result) {
    self->loaded_revision = revision;
    return;
  }
  if (loom_window_training_locked(self)) {
    /* Only settings can change while training runs. */
    self->loaded_revision = revision;
    loom_training_session_set_settings(self->training, t->settings);
    watch_session(self);
    return;
  }
  load_session(self);
}

/* The worker's weights into the document: one undoable step. */
static gboolean push_result(LoomWindow *self, LoomTrainingSnapshot *snap, const char *label) {
  const LoomTrainingExtras *t = loom_document_get_training(self->document);
  if (!snap || !snap->net || (snap->net_step == t->steps && !label && !self->weights_pending)) return TRUE;
  g_autoptr(GError) error = NULL;
  gint64 run = snap->net_step - t->steps;
  LoomCommand *cmd =
      loom_command_new_training_result(snap->net, snap->train_state, snap->net_step, MAX(run, 0), label);
  /* Steps add up to one undo step; a played run is one of its own. */
  if (cmd && !label && !self->run_played) loom_command_set_continues(cmd);
  /* The document is about to hold these weights itself. */
  loom_document_clear_live_training(self->document);
  self->pushing_result = TRUE;
  gboolean ok = loom_document_execute(self->document, cmd, &error);
  self->pushing_result = FALSE;
  if (!ok) loom_window_toast(self, error->message);
  return ok;
}

void loom_window_training_flush(LoomWindow *self) {
  if (self->newest_weights && loom_window_training_locked(self)) push_result(self, self->newest_weights, NULL);
}

static void alert(LoomWindow *self, LoomTrainingSnapshot *snap) {
  if (!snap->message) return;
  /* Ahead of any other toast: training stopped. */
  AdwToast *toast = adw_toast_new(snap->message);
  adw_toast_set_timeout(toast, 10);
  adw_toast_set_priority(toast, ADW_TOAST_PRIORITY_HIGH);
  adw_toast_overlay_add_toast(self->toast_overlay, toast);
  if (snap->has_alert) {
    loom_grid_view_set_selection(self->grid_view, &snap->alert_at);
  }
}

static void update_monitor(LoomWindow *self, LoomTrainingSnapshot *snap);

static void on_snapshot(LoomWindow *self, LoomTrainingSnapshot *snap) {
  if (snap->net) {
    g_clear_pointer(&self->newest_weights, loom_training_snapshot_unref);
    self->newest_weights = loom_training_snapshot_ref(snap);
    /* Autosave keeps what the worker has learnt while it runs. */
    if (loom_window_training_locked(self))
      loom_document_set_live_training(self->document, snap->net, snap->train_state, snap->net_step,
                                      loom_training_snapshot_ref(snap), (GDestroyNotify)loom_training_snapshot_unref);
  }
  LoomTrainingState state = loom_training_session_get_state(self->training);
  gboolean answered = !loom_training_session_get_busy(self->training);
  if (answered && self->weights_pending && snap->net &&
      (state == LOOM_TRAINING_PAUSED || state == LOOM_TRAINING_FINISHED || state == LOOM_TRAINING_STOPPED)) {
    const char *label = self->reset_pending ? _("Reset Weights") : NULL;
    if (push_result(self, snap, label)) self->weights_pending = self->reset_pending = self->run_played = FALSE;
  }
  if (state == LOOM_TRAINING_STOPPED && answered && snap->serial != self->alerted_serial) {
    self->alerted_serial = snap->serial;
    alert(self, snap);
  }
  update_monitor(self, snap);
  loom_window_dna_training_snapshot(self, snap);
  loom_window_systolic_training_snapshot(self, snap);
}

static void on_state(LoomWindow *self) {
  loom_window_update_actions(self);
  loom_window_update_labels(self);
}

/* ---- the slot monitor: the selected slot while it trains ---- */

enum { MON_ACT_MEAN, MON_ACT_STD, MON_GRAD, MON_UPDATE, N_MON };

void loom_window_training_selection_changed(LoomWindow *self) {
  loom_coord at;
  const loom_net *net = loom_document_get_net(self->document);
  gboolean sel = loom_window_get_selected_slot(self, &at) && loom_net_layer_at(net, at);
  char where[64];
  g_autofree char *title = NULL;
  if (sel)
    /* Translators: the slot monitor's title: the layer's label, then its coordinates (z,y,x,l). */
    title = g_strdup_printf(_("%s at %s"), loom_layer_type_label(loom_layer_get_type(loom_net_layer_at(net, at))),
                            loom_coord_format(at, where, sizeof where));
  loom_slot_monitor_reset(self->slot_monitor, title);
  gtk_widget_set_visible(GTK_WIDGET(self->slot_monitor), FALSE);
  if (sel) {
    loom_slot_monitor_add_series(self->slot_monitor, _("Activation mean"));
    loom_slot_monitor_add_series(self->slot_monitor, _("Activation std"));
    loom_slot_monitor_add_series(self->slot_monitor, _("Gradient norm"));
    loom_slot_monitor_add_series(self->slot_monitor, _("Update ratio"));
  }
  loom_training_session_watch(self->training, sel ? &at : NULL);
  watch_session(self);
}

static void update_monitor(LoomWindow *self, LoomTrainingSnapshot *snap) {
  loom_coord at;
  if (!loom_window_get_selected_slot(self, &at)) return;
  for (int k = 0; k < snap->n_layers; k++) {
    const loom_layer_stats *s = &snap->layers[k];
    if (s->at.z != at.z || s->at.y != at.y || s->at.x != at.x || s->at.l != at.l) continue;
    if (snap->points->len == 0) break; /* no new step */
    gtk_widget_set_visible(GTK_WIDGET(self->slot_monitor), TRUE);
    loom_slot_monitor_push(self->slot_monitor, MON_ACT_MEAN, s->act_mean);
    loom_slot_monitor_push(self->slot_monitor, MON_ACT_STD, s->act_std);
    loom_slot_monitor_push(self->slot_monitor, MON_GRAD, s->has_weights_stats ? s->grad_norm : NAN);
    loom_slot_monitor_push(self->slot_monitor, MON_UPDATE, s->has_weights_stats ? s->update_ratio : NAN);
  }
  if (snap->net) {
    loom_layer *layer = loom_net_layer_at(snap->net, at);
    if (layer && loom_layer_n_weights(layer) > 0) {
      loom_weights *w = loom_layer_weights(layer, 0);
      loom_slot_monitor_set_weights(self->slot_monitor, loom_weights_master_const(w), (gsize)loom_weights_count(w));
    }
  }
  if (snap->watch && snap->watch_at.z == at.z && snap->watch_at.y == at.y && snap->watch_at.x == at.x &&
      snap->watch_at.l == at.l)
    loom_slot_monitor_set_activations(self->slot_monitor, snap->watch, (gsize)snap->n_watch);
}

/* ---- actions ---- */

static void win_train_play(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  self->weights_pending = self->run_played = TRUE;
  loom_training_session_play(self->training);
  watch_session(self);
}

static void win_train_pause(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  loom_training_session_pause(self->training);
  watch_session(self);
}

static void win_train_toggle(GtkWidget *widget, const char *action, GVariant *param) {
  if (loom_window_training_locked(LOOM_WINDOW(widget))) win_train_pause(widget, action, param);
  else win_train_play(widget, action, param);
}

static void win_train_step(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  self->weights_pending = TRUE;
  loom_training_session_step(self->training);
  watch_session(self);
}

static void win_train_step_epoch(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  self->weights_pending = TRUE;
  loom_training_session_step_epoch(self->training);
  watch_session(self);
}

/* Where the steps run (-1 the CPU, else a Vulkan device index); the pane's
 * device list activates it. Not while a run is under way. */
static void win_train_device(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  loom_training_session_set_device(self->training, g_variant_get_int32(param));
  watch_session(self);
}

/* Draws the weights anew from the training seed: the run starts over. */
static void win_train_reset(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  const LoomTrainingExtras *t = loom_document_get_training(self->document);
  self->weights_pending = self->reset_pending = TRUE;
  loom_training_session_reset(self->training, t->settings ? t->settings->seed : 1);
  watch_session(self);
}

static void on_pane_settings(LoomWindow *self, const loom_train_settings *settings) {
  g_autoptr(GError) error = NULL;
  /* Not through loom_window_execute: settings may change while training runs. */
  if (!loom_document_execute(self->document, loom_command_new_set_training_settings(settings), &error))
    loom_window_toast(self, error->message);
}

void loom_window_training_update_actions(LoomWindow *self) {
  LoomTrainingState state = loom_training_session_get_state(self->training);
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
  self->training = loom_training_session_new(NULL);
  /* The selected slot's live statistics live in the inspector, beside the
   * slot's own facts; hidden until training has data for it. */
  self->slot_monitor = LOOM_SLOT_MONITOR(loom_slot_monitor_new());
  gtk_widget_set_visible(GTK_WIDGET(self->slot_monitor), FALSE);
  loom_inspector_set_live_widget(self->inspector, GTK_WIDGET(self->slot_monitor));
  loom_training_pane_set_session(self->training_pane, self->training);
  loom_training_pane_set_grid_view(self->training_pane, self->grid_view);
  g_signal_connect_swapped(self->training, "snapshot", G_CALLBACK(on_snapshot), self);
  g_signal_connect_swapped(self->training, "notify::state", G_CALLBACK(on_state), self);
  g_signal_connect_swapped(self->training_pane, "settings-changed", G_CALLBACK(on_pane_settings), self);
  loom_slot_monitor_reset(self->slot_monitor, NULL);
}

void loom_window_training_dispose(LoomWindow *self) {
  if (self->training_tick) gtk_widget_remove_tick_callback(GTK_WIDGET(self), self->training_tick);
  self->training_tick = 0;
  if (self->training) g_signal_handlers_disconnect_by_data(self->training, self);
  if (self->training_pane) {
    g_signal_handlers_disconnect_by_data(self->training_pane, self);
    loom_training_pane_set_session(self->training_pane, NULL);
  }
  if (self->document) loom_document_clear_live_training(self->document);
  /* Joins the worker: closing the window cancels training cleanly. */
  g_clear_object(&self->training);
  g_clear_pointer(&self->newest_weights, loom_training_snapshot_unref);
}
