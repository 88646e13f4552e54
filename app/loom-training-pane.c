/*
 * LoomTrainingPane: layout, the session it observes, the status line and
 * the transport's look. The plots, the heatmap and the decision boundary
 * are in loom-training-pane-views.c.
 */
#include <glib/gi18n.h>
#include <math.h>

#include "loom-format-private.h"
#include "loom-training-pane-private.h"

G_DEFINE_FINAL_TYPE(LoomTrainingPane, loom_training_pane, GTK_TYPE_WIDGET)

enum { PROP_0, PROP_SESSION, PROP_HEATMAP_METRIC, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_SETTINGS_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static char *format_duration(double seconds) {
  gint64 s = (gint64)floor(seconds);
  if (s >= 3600) return g_strdup_printf("%lld:%02lld:%02lld", (long long)(s / 3600), (long long)(s / 60 % 60), (long long)(s % 60));
  return g_strdup_printf("%lld:%02lld", (long long)(s / 60), (long long)(s % 60));
}

static const char *state_text(LoomTrainingState state) {
  switch (state) {
  case LOOM_TRAINING_IDLE: return _("Preparing");
  case LOOM_TRAINING_PAUSED: return _("Paused");
  case LOOM_TRAINING_RUNNING: return _("Training");
  case LOOM_TRAINING_FINISHED: return _("Finished");
  case LOOM_TRAINING_STOPPED: return _("Stopped");
  case LOOM_TRAINING_INVALID: return _("Cannot train");
  }
  return "";
}

/* "Training · 0:12 · epoch 3 of 10 · step 1,200 · 18,400 samples/s"; tween
 * runs add their explosions and recoveries. The time comes early: where the
 * pane is narrow the line is cut at its end (wrapping it instead cost a
 * relayout of the window with every snapshot, 3 ms against 0.35). */
static void update_status(LoomTrainingPane *self) {
  LoomTrainingSnapshot *snap = self->session ? loom_training_session_get_latest(self->session) : NULL;
  LoomTrainingState state = self->session ? loom_training_session_get_state(self->session) : LOOM_TRAINING_IDLE;
  gboolean running = state == LOOM_TRAINING_RUNNING;
  gtk_widget_set_sensitive(GTK_WIDGET(self->device_dropdown), !running); /* chosen between runs */
  /* Only when it changes: setting the same icon again still replaces the
   * button's image and looks the icon up anew, 30 times a second
   * (bench-responsive's snapshot handling: median 1.2 -> 0.8 ms). */
  if (self->play_shows_pause != running) {
    self->play_shows_pause = running;
    gtk_button_set_icon_name(GTK_BUTTON(self->play_button),
                             running ? "media-playback-pause-symbolic" : "media-playback-start-symbolic");
    gtk_widget_set_tooltip_text(GTK_WIDGET(self->play_button), running ? _("Pause (F5)") : _("Play (F5)"));
  }
  g_autoptr(GString) text = g_string_new(state_text(state));
  if (snap && state != LOOM_TRAINING_INVALID && snap->epochs > 0) {
    gint64 epoch = MIN(snap->epoch + 1, snap->epochs);
    g_autofree char *step = loom_format_count(snap->step);
    g_autofree char *elapsed = format_duration(snap->elapsed);
    g_string_append_printf(text, " · %s", elapsed);
    /* Translators: the status line: "epoch 3 of 10", then the update count. */
    g_string_append_printf(text, _(" · epoch %lld of %lld · step %s"), (long long)epoch, (long long)snap->epochs, step);
    if (snap->samples_per_second > 0) {
      g_autofree char *rate = loom_format_count((gint64)llround(snap->samples_per_second));
      g_string_append_printf(text, _(" · %s samples/s"), rate);
    }
    if (snap->explosions > 0 || snap->recoveries > 0) {
      g_string_append(text, " · ");
      g_string_append_printf(text, g_dngettext(GETTEXT_PACKAGE, "%lld explosion", "%lld explosions", (gulong)snap->explosions),
                             (long long)snap->explosions);
      g_string_append(text, ", ");
      g_string_append_printf(text, g_dngettext(GETTEXT_PACKAGE, "%lld recovery", "%lld recoveries", (gulong)snap->recoveries),
                             (long long)snap->recoveries);
    }
    double done = ((double)snap->epoch + (double)snap->batch_index / (double)MAX(snap->batches_per_epoch, 1)) /
                  (double)snap->epochs;
    gtk_progress_bar_set_fraction(self->progress, state == LOOM_TRAINING_FINISHED ? 1.0 : CLAMP(done, 0.0, 1.0));
  } else {
    gtk_progress_bar_set_fraction(self->progress, 0.0);
  }
  gtk_label_set_text(self->status_label, text->str);
  gboolean show_message = snap && snap->message && (state == LOOM_TRAINING_INVALID || state == LOOM_TRAINING_STOPPED);
  gtk_label_set_text(self->message_label, show_message ? snap->message : "");
  gtk_widget_set_visible(GTK_WIDGET(self->message_label), show_message);
}

static void on_snapshot(LoomTrainingPane *self, LoomTrainingSnapshot *snap) {
  loom_training_pane_views_snapshot(self, snap);
  update_status(self);
}

static void on_form_changed(LoomTrainingPane *self) {
  g_signal_emit(self, signals[SIGNAL_SETTINGS_CHANGED], 0, loom_training_form_get_settings(self->form));
}

GtkWidget *loom_training_pane_new(void) { return g_object_new(LOOM_TYPE_TRAINING_PANE, NULL); }

void loom_training_pane_set_session(LoomTrainingPane *self, LoomTrainingSession *session) {
  g_return_if_fail(LOOM_IS_TRAINING_PANE(self));
  if (!g_set_object(&self->session, session)) return;
  g_signal_group_set_target(self->session_signals, session);
  update_status(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SESSION]);
}

void loom_training_pane_set_grid_view(LoomTrainingPane *self, LoomGridView *view) {
  g_return_if_fail(LOOM_IS_TRAINING_PANE(self));
  g_set_weak_pointer(&self->grid_view, view);
}

void loom_training_pane_set_net(LoomTrainingPane *self, const loom_net *net) {
  g_return_if_fail(LOOM_IS_TRAINING_PANE(self));
  self->net = net;
  if (self->session) loom_training_pane_update_heatmap(self, loom_training_session_get_latest(self->session));
}

void loom_training_pane_set_settings(LoomTrainingPane *self, const loom_train_settings *settings) {
  g_return_if_fail(LOOM_IS_TRAINING_PANE(self));
  loom_training_form_set_settings(self->form, settings);
}

const loom_train_settings *loom_training_pane_get_settings(LoomTrainingPane *self) {
  g_return_val_if_fail(LOOM_IS_TRAINING_PANE(self), NULL);
  return loom_training_form_get_settings(self->form);
}

LoomPlot *loom_training_pane_get_plot(LoomTrainingPane *self, const char *which) {
  g_return_val_if_fail(LOOM_IS_TRAINING_PANE(self), NULL);
  if (g_strcmp0(which, "loss") == 0) return self->loss_plot;
  if (g_strcmp0(which, "accuracy") == 0) return self->accuracy_plot;
  return NULL;
}

void loom_training_pane_clear(LoomTrainingPane *self) {
  g_return_if_fail(LOOM_IS_TRAINING_PANE(self));
  loom_training_pane_clear_views(self);
  update_status(self);
}

static void loom_training_pane_dispose(GObject *object) {
  LoomTrainingPane *self = LOOM_TRAINING_PANE(object);
  if (self->session_signals) g_signal_group_set_target(self->session_signals, NULL);
  g_clear_weak_pointer(&self->grid_view);
  gtk_widget_dispose_template(GTK_WIDGET(self), LOOM_TYPE_TRAINING_PANE);
  G_OBJECT_CLASS(loom_training_pane_parent_class)->dispose(object);
}

static void loom_training_pane_finalize(GObject *object) {
  LoomTrainingPane *self = LOOM_TRAINING_PANE(object);
  loom_training_pane_clear_views(self);
  loom_big_array_release(&self->points);
  g_array_unref(self->epochs);
  g_array_unref(self->events);
  g_array_unref(self->device_indices);
  g_clear_object(&self->session_signals);
  g_clear_object(&self->session);
  G_OBJECT_CLASS(loom_training_pane_parent_class)->finalize(object);
}

static void loom_training_pane_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomTrainingPane *self = LOOM_TRAINING_PANE(object);
  switch (prop_id) {
  case PROP_SESSION: g_value_set_object(value, self->session); break;
  case PROP_HEATMAP_METRIC: g_value_set_string(value, loom_training_pane_get_heatmap_metric(self)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_training_pane_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  LoomTrainingPane *self = LOOM_TRAINING_PANE(object);
  switch (prop_id) {
  case PROP_SESSION: loom_training_pane_set_session(self, g_value_get_object(value)); break;
  case PROP_HEATMAP_METRIC: loom_training_pane_set_heatmap_metric(self, g_value_get_string(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void on_metric_selected(LoomTrainingPane *self) {
  guint k = gtk_drop_down_get_selected(self->metric_dropdown);
  if (k == GTK_INVALID_LIST_POSITION || (int)k == self->metric) return;
  loom_training_pane_set_heatmap_metric(self, k == 0 ? "none" : loom_training_pane_metric_names()[k - 1]);
}

void loom_training_pane_set_heatmap_metric(LoomTrainingPane *self, const char *name) {
  g_return_if_fail(LOOM_IS_TRAINING_PANE(self));
  int index = 0;
  const char *const *names = loom_training_pane_metric_names();
  for (int i = 0; name && names[i]; i++)
    if (g_str_equal(names[i], name)) index = i + 1;
  if (index == self->metric) return;
  if (self->grid_view && self->metric == 0) {
    LoomGridViewColorMode mode = loom_grid_view_get_color_mode(self->grid_view);
    /* Another heatmap (the DNA pane's) is not what to go back to. */
    self->color_mode_before = mode == LOOM_GRID_VIEW_COLOR_METRIC ? LOOM_GRID_VIEW_COLOR_LAYER_TYPE : mode;
  }
  self->metric = index;
  gtk_drop_down_set_selected(self->metric_dropdown, (guint)index);
  if (self->grid_view && index == 0) {
    loom_grid_view_set_slot_values(self->grid_view, NULL, 0, NULL);
    loom_grid_view_set_color_mode(self->grid_view, self->color_mode_before);
  }
  loom_training_pane_update_heatmap(self, self->session ? loom_training_session_get_latest(self->session) : NULL);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_HEATMAP_METRIC]);
}

const char *loom_training_pane_get_heatmap_metric(LoomTrainingPane *self) {
  g_return_val_if_fail(LOOM_IS_TRAINING_PANE(self), NULL);
  return self->metric == 0 ? "none" : loom_training_pane_metric_names()[self->metric - 1];
}

/* ---- the device: the CPU or a Vulkan device (docs/gpu.md) ---- */

static void on_device_selected(LoomTrainingPane *self) {
  if (self->device_updating) return;
  guint selected = gtk_drop_down_get_selected(self->device_dropdown);
  /* Entry 0 is the CPU. */
  int device = selected == GTK_INVALID_LIST_POSITION || selected == 0 || selected > self->device_indices->len
                   ? -1
                   : g_array_index(self->device_indices, int, selected - 1);
  gtk_widget_activate_action(GTK_WIDGET(self), "win.train-device", "i", device);
}

/* Lists the devices once: without a Vulkan device there is no choice. */
static void build_device_list(LoomTrainingPane *self) {
  g_autoptr(GtkStringList) model = gtk_string_list_new(NULL);
  gtk_string_list_append(model, _("CPU"));
  loom_gpu_device_info *devices = NULL;
  int n = 0;
  if (loom_gpu_compiled() && loom_gpu_list_devices(&devices, &n, NULL) == LOOM_OK) {
    for (int i = 0; i < n; i++) {
      if (!devices[i].has_compute) continue;
      g_array_append_val(self->device_indices, devices[i].index);
      /* Translators: an entry of the training device list: the Vulkan device's name. */
      g_autofree char *label = g_strdup_printf(_("Vulkan: %s"), devices[i].name);
      gtk_string_list_append(model, label);
    }
  }
  free(devices);
  self->device_updating = TRUE;
  gtk_drop_down_set_model(self->device_dropdown, G_LIST_MODEL(model));
  gtk_drop_down_set_selected(self->device_dropdown, 0);
  self->device_updating = FALSE;
  gtk_widget_set_visible(GTK_WIDGET(self->device_dropdown), self->device_indices->len > 0);
  g_signal_connect_swapped(self->device_dropdown, "notify::selected", G_CALLBACK(on_device_selected), self);
}

static void loom_training_pane_class_init(LoomTrainingPaneClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->dispose = loom_training_pane_dispose;
  object_class->finalize = loom_training_pane_finalize;
  object_class->get_property = loom_training_pane_get_property;
  object_class->set_property = loom_training_pane_set_property;

  properties[PROP_SESSION] = g_param_spec_object("session", NULL, NULL, LOOM_TYPE_TRAINING_SESSION,
                                                 G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  properties[PROP_HEATMAP_METRIC] = g_param_spec_string(
      "heatmap-metric", NULL, NULL, "none", G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  /* The user changed a setting: (const loom_train_settings *) the form's. */
  signals[SIGNAL_SETTINGS_CHANGED] = g_signal_new("settings-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0,
                                                  NULL, NULL, NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);

  g_type_ensure(LOOM_TYPE_TRAINING_FORM);
  g_type_ensure(LOOM_TYPE_PLOT);
  g_type_ensure(LOOM_TYPE_BOUNDARY_VIEW);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_template_from_resource(widget_class, "/org/loomworkbench/Workbench/loom-training-pane.ui");
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, paned);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, form);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, status_label);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, device_dropdown);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, message_label);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, progress);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, play_button);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, loss_plot);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, accuracy_plot);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, axis_dropdown);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, smoothing_scale);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, log_button);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, metric_dropdown);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, metric_log_button);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, boundary_view);
  gtk_widget_class_bind_template_child(widget_class, LoomTrainingPane, data_label);
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void loom_training_pane_init(LoomTrainingPane *self) {
  gtk_widget_init_template(GTK_WIDGET(self));
  loom_big_array_init(&self->points, sizeof(LoomTrainingPoint));
  self->epochs = g_array_new(FALSE, FALSE, sizeof(LoomTrainingEpoch));
  self->events = g_array_new(FALSE, FALSE, sizeof(LoomTrainingEvent));
  self->color_mode_before = LOOM_GRID_VIEW_COLOR_LAYER_TYPE;
  self->play_shows_pause = -1;
  self->session_signals = g_signal_group_new(LOOM_TYPE_TRAINING_SESSION);
  g_signal_group_connect_swapped(self->session_signals, "snapshot", G_CALLBACK(on_snapshot), self);
  g_signal_group_connect_swapped(self->session_signals, "notify::state", G_CALLBACK(update_status), self);
  g_signal_connect_swapped(self->form, "changed", G_CALLBACK(on_form_changed), self);

  g_autoptr(GtkStringList) metrics = gtk_string_list_new(NULL);
  for (int i = 0; i < loom_training_pane_metric_count(); i++)
    gtk_string_list_append(metrics, loom_training_pane_metric_label(i));
  gtk_drop_down_set_model(self->metric_dropdown, G_LIST_MODEL(metrics));
  g_signal_connect_swapped(self->metric_dropdown, "notify::selected", G_CALLBACK(on_metric_selected), self);
  loom_training_pane_views_init(self);
  self->device_indices = g_array_new(FALSE, FALSE, sizeof(int));
  build_device_list(self);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, _("Training"), -1);
  update_status(self);
}
