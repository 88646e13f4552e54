#include "loom-slot-watch.h"

#include <glib/gi18n.h>
#include <math.h>

struct _LoomSlotWatch {
  GObject parent_instance;

  LoomTrainingController *training;
  LoomSlotMonitor *monitor;
  gboolean has_slot;
  loom_coord at;
  gboolean weighted; /* the slot has weights: their histogram and the last two series */
};

G_DEFINE_FINAL_TYPE(LoomSlotWatch, loom_slot_watch, G_TYPE_OBJECT)

/* The monitor's series, in this order; the last two only with weights. */
enum { SERIES_ACT_MEAN, SERIES_ACT_STD, SERIES_GRAD, SERIES_UPDATE, N_SERIES };

void loom_slot_watch_select(LoomSlotWatch *self, const loom_net *net, const loom_coord *at) {
  g_return_if_fail(LOOM_IS_SLOT_WATCH(self));
  loom_layer *layer = at && net ? loom_net_layer_at(net, *at) : NULL;
  char where[64];
  g_autofree char *title = NULL;
  if (layer)
    /* Translators: the slot monitor's title: the layer's label, then its coordinates (z,y,x,l). */
    title = g_strdup_printf(_("%s at %s"), loom_layer_type_label(loom_layer_get_type(layer)),
                            loom_coord_format(*at, where, sizeof where));
  self->has_slot = layer != NULL;
  if (layer) self->at = *at;
  self->weighted = layer && loom_layer_n_weights(layer) > 0;
  /* Hidden until training has data for it. */
  loom_slot_monitor_reset(self->monitor, title);
  gtk_widget_set_visible(GTK_WIDGET(self->monitor), FALSE);
  loom_slot_monitor_set_show_weights(self->monitor, self->weighted);
  if (layer) {
    loom_slot_monitor_add_series(self->monitor, _("Activation mean"));
    loom_slot_monitor_add_series(self->monitor, _("Activation std"));
    if (self->weighted) {
      loom_slot_monitor_add_series(self->monitor, _("Gradient norm"));
      loom_slot_monitor_add_series(self->monitor, _("Update ratio"));
    }
  }
  loom_training_controller_watch(self->training, layer ? at : NULL);
}

/* Every step's statistics of the slot (the snapshot carries them all), in
 * one push per series. */
static void push_steps(LoomSlotWatch *self, const GArray *points) {
  guint n = 0, len = points->len;
  g_autofree double *values = g_new(double, (gsize)len * N_SERIES);
  for (guint k = 0; k < len; k++) {
    const LoomWatchPoint *p = &g_array_index(points, LoomWatchPoint, k);
    if (!loom_coord_equal(p->at, self->at)) continue; /* recorded before the selection changed */
    values[SERIES_ACT_MEAN * len + n] = p->act_mean;
    values[SERIES_ACT_STD * len + n] = p->act_std;
    values[SERIES_GRAD * len + n] = p->has_weights_stats ? p->grad_norm : NAN;
    values[SERIES_UPDATE * len + n] = p->has_weights_stats ? p->update_ratio : NAN;
    n++;
  }
  if (n == 0) return;
  gtk_widget_set_visible(GTK_WIDGET(self->monitor), TRUE);
  for (int series = 0; series < (self->weighted ? N_SERIES : SERIES_GRAD); series++)
    loom_slot_monitor_push_values(self->monitor, series, values + (gsize)series * len, n);
}

static void on_snapshot(LoomSlotWatch *self, LoomTrainingSnapshot *snap) {
  if (!self->has_slot) return;
  push_steps(self, snap->watch_points);
  if (snap->net && self->weighted) {
    loom_layer *layer = loom_net_layer_at(snap->net, self->at);
    if (layer && loom_layer_n_weights(layer) > 0) {
      loom_weights *w = loom_layer_weights(layer, 0);
      loom_slot_monitor_set_weights(self->monitor, loom_weights_master_const(w), (gsize)loom_weights_count(w));
    }
  }
  if (snap->watch && loom_coord_equal(snap->watch_at, self->at))
    loom_slot_monitor_set_activations(self->monitor, snap->watch, (gsize)snap->n_watch);
}

LoomSlotWatch *loom_slot_watch_new(LoomTrainingController *training, LoomSlotMonitor *monitor) {
  g_return_val_if_fail(LOOM_IS_TRAINING_CONTROLLER(training), NULL);
  g_return_val_if_fail(LOOM_IS_SLOT_MONITOR(monitor), NULL);
  LoomSlotWatch *self = g_object_new(LOOM_TYPE_SLOT_WATCH, NULL);
  self->training = g_object_ref(training);
  self->monitor = g_object_ref(monitor);
  g_signal_connect_object(training, "snapshot", G_CALLBACK(on_snapshot), self, G_CONNECT_SWAPPED);
  loom_slot_monitor_reset(monitor, NULL);
  gtk_widget_set_visible(GTK_WIDGET(monitor), FALSE);
  return self;
}

static void loom_slot_watch_dispose(GObject *object) {
  LoomSlotWatch *self = LOOM_SLOT_WATCH(object);
  if (self->training) g_signal_handlers_disconnect_by_data(self->training, self);
  g_clear_object(&self->training);
  g_clear_object(&self->monitor);
  G_OBJECT_CLASS(loom_slot_watch_parent_class)->dispose(object);
}

static void loom_slot_watch_class_init(LoomSlotWatchClass *klass) {
  G_OBJECT_CLASS(klass)->dispose = loom_slot_watch_dispose;
}

static void loom_slot_watch_init(LoomSlotWatch *self) {}
