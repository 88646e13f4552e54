/*
 * LoomTrainingPane's views: the loss and accuracy plots (steps or epochs,
 * smoothing, log scale, event markers), the heatmap the grid view shows
 * (one table of live statistics), link flows, alert slots, and the decision
 * boundary with the data's points.
 */
#include <glib/gi18n.h>
#include <math.h>

#include "loom-format-private.h"
#include "loom-training-pane-private.h"

/* ---- the heatmap's statistics: one table ---- */

typedef struct {
  const char *name;  /* stable: the "heatmap-metric" property and tests */
  const char *label; /* N_() */
  double (*value)(const loom_layer_stats *s); /* NaN: nothing to show for this slot */
} Metric;

static double m_act_mean(const loom_layer_stats *s) { return s->act_mean; }
static double m_act_std(const loom_layer_stats *s) { return s->act_std; }
static double m_act_rms(const loom_layer_stats *s) { return s->act_rms; }
static double m_dead(const loom_layer_stats *s) { return s->dead_fraction; }
static double m_grad(const loom_layer_stats *s) { return s->has_weights_stats ? s->grad_norm : NAN; }
static double m_weight(const loom_layer_stats *s) { return s->has_weights_stats ? s->weight_norm : NAN; }
static double m_update(const loom_layer_stats *s) { return s->has_weights_stats ? s->update_ratio : NAN; }
static double m_gap(const loom_layer_stats *s) { return s->has_target ? s->gap_rms : NAN; }
static double m_budget(const loom_layer_stats *s) { return s->has_target ? s->budget : NAN; }
static double m_skipped(const loom_layer_stats *s) { return s->has_target ? (s->skipped ? 1.0 : 0.0) : NAN; }
static double m_quant(const loom_layer_stats *s) { return s->has_weights_stats ? s->quant_error : NAN; }

static const Metric metrics[] = {
    {"none", N_("None (layer colours)"), NULL},
    {"activation-mean", N_("Activation mean"), m_act_mean},
    {"activation-std", N_("Activation std"), m_act_std},
    {"activation-rms", N_("Activation RMS"), m_act_rms},
    {"dead-fraction", N_("Dead fraction"), m_dead},
    {"gradient-norm", N_("Gradient norm"), m_grad},
    {"weight-norm", N_("Weight norm"), m_weight},
    {"update-ratio", N_("Update ratio"), m_update},
    {"gap", N_("Target gap (tween)"), m_gap},
    {"budget", N_("Link budget (tween)"), m_budget},
    {"skipped", N_("Skipped (tween)"), m_skipped},
    {"quant-error", N_("Quantization error"), m_quant},
};

int loom_training_pane_metric_count(void) { return (int)G_N_ELEMENTS(metrics); }
const char *loom_training_pane_metric_label(int index) { return _(metrics[index].label); }

const char *const *loom_training_pane_metric_names(void) {
  static const char *names[G_N_ELEMENTS(metrics)];
  if (!names[0])
    for (gsize i = 1; i < G_N_ELEMENTS(metrics); i++) names[i - 1] = metrics[i].name;
  return names;
}

void loom_training_pane_update_heatmap(LoomTrainingPane *self, LoomTrainingSnapshot *snap) {
  LoomGridView *view = self->grid_view;
  const loom_net *net = self->net;
  if (!view || !net) return;
  gboolean alert = snap && snap->has_alert;
  if (alert || self->alert_shown) loom_grid_view_set_alert_slots(view, alert ? &snap->alert_at : NULL, alert);
  self->alert_shown = alert;
  if (!snap || snap->n_layers == 0) return;
  /* Link arcs: the RMS of what their source sends. Networks without links
   * leave the legend as it is. */
  int n_links = loom_net_n_links(net);
  if (n_links > 0) {
    g_autofree float *flows = g_new0(float, n_links);
    for (int i = 0; i < n_links; i++)
      for (int k = 0; k < snap->n_layers; k++)
        if (loom_coord_equal(snap->layers[k].at, loom_net_link(net, i)->src)) flows[i] = (float)snap->layers[k].act_rms;
    loom_grid_view_set_link_values(view, flows, (gsize)n_links);
  }
  if (self->metric == 0) return;
  int64_t n = loom_net_n_slots(net);
  g_autofree float *values = g_new(float, (gsize)MAX(n, 1));
  for (int64_t i = 0; i < n; i++) values[i] = NAN;
  for (int k = 0; k < snap->n_layers; k++) {
    const loom_layer_stats *s = &snap->layers[k];
    if (!loom_net_contains(net, s->at)) continue;
    values[loom_net_flat_index(net, s->at)] = (float)metrics[self->metric].value(s);
  }
  loom_grid_view_set_color_mode(view, LOOM_GRID_VIEW_COLOR_METRIC);
  loom_grid_view_set_slot_values(view, values, (gsize)n, _(metrics[self->metric].label));
}

/* ---- plots ---- */

enum { SERIES_TRAIN, SERIES_TEST };

static LoomPlotMarkerKind marker_kind(LoomTrainingEventKind kind) {
  switch (kind) {
  case LOOM_TRAINING_EVENT_RESTART: return LOOM_PLOT_MARKER_RESTART;
  case LOOM_TRAINING_EVENT_EXPLOSION: return LOOM_PLOT_MARKER_EXPLOSION;
  case LOOM_TRAINING_EVENT_TASK_CHANGE: return LOOM_PLOT_MARKER_TASK_CHANGE;
  case LOOM_TRAINING_EVENT_RECOVERED: return LOOM_PLOT_MARKER_RECOVERED;
  default: return LOOM_PLOT_MARKER_OTHER;
  }
}

/* An event's place on the x axis: its step, or the epoch of the nearest
 * point at or before it. */
static double event_x(LoomTrainingPane *self, gint64 step) {
  if (!self->by_epoch) return (double)step;
  double x = 0;
  for (gsize i = 0; i < self->points.len; i++) {
    const LoomTrainingPoint *p = &loom_big_array_index(&self->points, LoomTrainingPoint, i);
    if (p->step > step) break;
    x = p->epoch;
  }
  return x;
}

static void append_points(LoomTrainingPane *self, const LoomTrainingPoint *pts, guint n) {
  if (n == 0) return;
  g_autofree double *x = g_new(double, n);
  g_autofree double *loss = g_new(double, n);
  g_autofree double *acc = g_new(double, n);
  for (guint i = 0; i < n; i++) {
    x[i] = self->by_epoch ? pts[i].epoch : (double)pts[i].step;
    loss[i] = pts[i].loss;
    acc[i] = pts[i].accuracy;
  }
  loom_plot_append_many(self->loss_plot, SERIES_TRAIN, x, loss, n);
  loom_plot_append_many(self->accuracy_plot, SERIES_TRAIN, x, acc, n);
}

static void append_epoch(LoomTrainingPane *self, const LoomTrainingEpoch *e) {
  if (!e->has_test) return;
  double x = self->by_epoch ? (double)e->epoch : (double)e->step;
  loom_plot_append(self->loss_plot, SERIES_TEST, x, e->test_loss);
  if (isfinite(e->test_accuracy)) loom_plot_append(self->accuracy_plot, SERIES_TEST, x, e->test_accuracy);
}

static void add_marker(LoomTrainingPane *self, const LoomTrainingEvent *e) {
  double x = event_x(self, e->step);
  loom_plot_add_marker(self->loss_plot, x, marker_kind(e->kind), e->label);
  loom_plot_add_marker(self->accuracy_plot, x, marker_kind(e->kind), e->label);
}

static void add_series(LoomTrainingPane *self) {
  GdkRGBA train = {0.21f, 0.52f, 0.89f, 1}, test = {0.90f, 0.38f, 0.0f, 1};
  loom_plot_add_series(self->loss_plot, _("Train"), &train, FALSE);
  loom_plot_add_series(self->loss_plot, _("Test"), &test, TRUE);
  loom_plot_add_series(self->accuracy_plot, _("Train"), &train, FALSE);
  loom_plot_add_series(self->accuracy_plot, _("Test"), &test, TRUE);
}

void loom_training_pane_redraw_plots(LoomTrainingPane *self) {
  loom_plot_clear(self->loss_plot);
  loom_plot_clear(self->accuracy_plot);
  const char *x_label = self->by_epoch ? _("Epoch") : _("Step");
  g_object_set(self->loss_plot, "x-label", x_label, NULL);
  g_object_set(self->accuracy_plot, "x-label", x_label, NULL);
  append_points(self, (const LoomTrainingPoint *)(void *)self->points.data, self->points.len);
  for (guint i = 0; i < self->epochs->len; i++) append_epoch(self, &g_array_index(self->epochs, LoomTrainingEpoch, i));
  for (guint i = 0; i < self->events->len; i++) add_marker(self, &g_array_index(self->events, LoomTrainingEvent, i));
}

static void clear_events(LoomTrainingPane *self) {
  for (guint i = 0; i < self->events->len; i++) g_free(g_array_index(self->events, LoomTrainingEvent, i).label);
  g_array_set_size(self->events, 0);
}

void loom_training_pane_clear_views(LoomTrainingPane *self) {
  loom_big_array_set_size(&self->points, 0);
  g_array_set_size(self->epochs, 0);
  clear_events(self);
  g_clear_pointer(&self->data, loom_training_data_unref);
  if (self->loss_plot) loom_training_pane_redraw_plots(self);
}

/* ---- the decision boundary ---- */

static void set_points(LoomTrainingPane *self, const loom_dataset *ds, gboolean test) {
  if (!ds || ds->input_numel != 2) {
    loom_boundary_view_set_points(self->boundary_view, NULL, NULL, 0, test);
    return;
  }
  g_autofree float *value = g_new(float, (gsize)MAX(ds->n, 1));
  for (int64_t i = 0; i < ds->n; i++)
    value[i] = ds->labels ? (float)ds->labels[i * ds->target_width] : ds->targets[i * ds->target_width];
  loom_boundary_view_set_points(self->boundary_view, ds->inputs, value, (gsize)ds->n, test);
}

static void show_data(LoomTrainingPane *self, LoomTrainingData *data) {
  if (self->data == data) return;
  g_clear_pointer(&self->data, loom_training_data_unref);
  self->data = loom_training_data_ref(data);
  const loom_dataset *train = data->train;
  gboolean plane = train->input_numel == 2;
  loom_boundary_view_set_mode(self->boundary_view, train->labels ? LOOM_BOUNDARY_MODE_CLASSES
                                                                 : LOOM_BOUNDARY_MODE_REGRESSION);
  set_points(self, train, FALSE);
  set_points(self, data->test, TRUE);
  gtk_widget_set_visible(GTK_WIDGET(self->boundary_view), plane);
  g_autofree char *n_train = loom_format_count(train->n);
  g_autofree char *n_test = loom_format_count(data->test ? data->test->n : 0);
  g_autofree char *text = NULL;
  if (train->labels)
    /* Translators: a data set's size: train and test samples, input features, classes. Two
     * short lines: the column under the decision boundary is narrow. */
    text = g_strdup_printf(_("%s train and %s test samples\n%lld features, %lld classes"), n_train, n_test,
                           (long long)train->input_numel, (long long)train->n_classes);
  else
    /* Translators: a data set's size: train and test samples, input features, target values.
     * Two short lines, as above. */
    text = g_strdup_printf(_("%s train and %s test samples\n%lld features, %lld target values"), n_train, n_test,
                           (long long)train->input_numel, (long long)train->target_width);
  if (!plane) {
    /* Translators: two short lines, as above. */
    g_autofree char *more = g_strconcat(text, "\n", _("The decision boundary is drawn\nfor data of two features."), NULL);
    gtk_label_set_text(self->data_label, more);
  } else {
    gtk_label_set_text(self->data_label, text);
  }
}

void loom_training_pane_views_snapshot(LoomTrainingPane *self, LoomTrainingSnapshot *snap) {
  for (guint i = 0; i < snap->events->len; i++) {
    if (g_array_index(snap->events, LoomTrainingEvent, i).kind != LOOM_TRAINING_EVENT_RESET) continue;
    /* Curves start over with new weights. */
    loom_big_array_set_size(&self->points, 0);
    g_array_set_size(self->epochs, 0);
    clear_events(self);
    loom_training_pane_redraw_plots(self);
    break;
  }
  loom_big_array_append(&self->points, snap->points->data, snap->points->len);
  append_points(self, (const LoomTrainingPoint *)(void *)snap->points->data, snap->points->len);
  for (guint i = 0; i < snap->epoch_rows->len; i++) {
    const LoomTrainingEpoch *e = &g_array_index(snap->epoch_rows, LoomTrainingEpoch, i);
    g_array_append_val(self->epochs, *e);
    append_epoch(self, e);
  }
  for (guint i = 0; i < snap->events->len; i++) {
    LoomTrainingEvent e = g_array_index(snap->events, LoomTrainingEvent, i);
    if (e.kind == LOOM_TRAINING_EVENT_RESET) continue;
    e.label = g_strdup(e.label);
    g_array_append_val(self->events, e);
    add_marker(self, &e);
  }
  if (snap->data) show_data(self, snap->data);
  if (snap->field)
    loom_boundary_view_set_field(self->boundary_view, snap->field_res, snap->field_res, snap->field,
                                 snap->field_channels, snap->field_bounds[0], snap->field_bounds[1],
                                 snap->field_bounds[2], snap->field_bounds[3]);
  loom_training_pane_update_heatmap(self, snap);
}

/* ---- plot options ---- */

static void on_axis(LoomTrainingPane *self) {
  gboolean by_epoch = gtk_drop_down_get_selected(self->axis_dropdown) == 1;
  if (by_epoch == self->by_epoch) return;
  self->by_epoch = by_epoch;
  loom_training_pane_redraw_plots(self);
}

static void on_smoothing(LoomTrainingPane *self) {
  double v = gtk_range_get_value(GTK_RANGE(self->smoothing_scale));
  g_object_set(self->loss_plot, "smoothing", v, NULL);
  g_object_set(self->accuracy_plot, "smoothing", v, NULL);
}

static void on_log(LoomTrainingPane *self) {
  g_object_set(self->loss_plot, "log-scale", gtk_toggle_button_get_active(self->log_button), NULL);
}

static void on_metric_log(LoomTrainingPane *self) {
  if (self->grid_view)
    loom_grid_view_set_metric_log(self->grid_view, gtk_toggle_button_get_active(self->metric_log_button));
}

void loom_training_pane_views_init(LoomTrainingPane *self) {
  const char *axes[] = {_("Steps"), _("Epochs"), NULL};
  g_autoptr(GtkStringList) model = gtk_string_list_new(axes);
  gtk_drop_down_set_model(self->axis_dropdown, G_LIST_MODEL(model));
  g_signal_connect_swapped(self->axis_dropdown, "notify::selected", G_CALLBACK(on_axis), self);
  g_signal_connect_swapped(self->smoothing_scale, "value-changed", G_CALLBACK(on_smoothing), self);
  g_signal_connect_swapped(self->log_button, "toggled", G_CALLBACK(on_log), self);
  g_signal_connect_swapped(self->metric_log_button, "toggled", G_CALLBACK(on_metric_log), self);
  g_object_set(self->accuracy_plot, "y-label", _("Accuracy"), NULL);
  g_object_set(self->loss_plot, "y-label", _("Loss"), NULL);
  add_series(self);
  loom_training_pane_redraw_plots(self);
  on_smoothing(self);
}
