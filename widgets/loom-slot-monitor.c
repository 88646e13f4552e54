#include "loom-slot-monitor.h"

#include <glib/gi18n-lib.h>

#include "loom-histogram.h"
#include "loom-sparkline.h"

#define HISTOGRAM_BINS 32

enum { PROP_0, PROP_SHOW_WEIGHTS, N_PROPS };
static GParamSpec *properties[N_PROPS];

struct _LoomSlotMonitor {
  GtkWidget parent_instance;

  GtkWidget *box;
  GtkWidget *title;
  GtkWidget *hint;
  GtkWidget *content;
  GtkWidget *weights_heading;
  LoomHistogram *weights;
  LoomHistogram *activations;
  GtkWidget *series_box;
  GPtrArray *sparklines; /* LoomSparkline*, one per series */
  GArray *counts;        /* guint per series */
};

G_DEFINE_FINAL_TYPE(LoomSlotMonitor, loom_slot_monitor, GTK_TYPE_WIDGET)

static GtkWidget *heading(const char *text) {
  GtkWidget *label = gtk_label_new(text);
  gtk_label_set_xalign(GTK_LABEL(label), 0);
  gtk_widget_add_css_class(label, "caption-heading");
  return label;
}

GtkWidget *loom_slot_monitor_new(void) { return g_object_new(LOOM_TYPE_SLOT_MONITOR, NULL); }

void loom_slot_monitor_reset(LoomSlotMonitor *self, const char *title) {
  g_return_if_fail(LOOM_IS_SLOT_MONITOR(self));
  gtk_label_set_text(GTK_LABEL(self->title), title ? title : "");
  gtk_widget_set_visible(self->content, title != NULL);
  gtk_widget_set_visible(self->hint, title == NULL);
  loom_histogram_set_values(self->weights, NULL, 0, HISTOGRAM_BINS);
  loom_histogram_set_values(self->activations, NULL, 0, HISTOGRAM_BINS);
  for (guint i = 0; i < self->sparklines->len; i++) {
    loom_sparkline_clear(g_ptr_array_index(self->sparklines, i));
    g_array_index(self->counts, guint, i) = 0;
  }
}

int loom_slot_monitor_add_series(LoomSlotMonitor *self, const char *label) {
  g_return_val_if_fail(LOOM_IS_SLOT_MONITOR(self), -1);
  GtkWidget *row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
  GtkWidget *name = gtk_label_new(label);
  gtk_label_set_xalign(GTK_LABEL(name), 0);
  gtk_widget_set_size_request(name, 96, -1);
  gtk_widget_add_css_class(name, "caption");
  GtkWidget *spark = g_object_new(LOOM_TYPE_SPARKLINE, NULL);
  gtk_widget_set_hexpand(spark, TRUE);
  gtk_widget_set_size_request(spark, -1, 22);
  gtk_accessible_update_property(GTK_ACCESSIBLE(spark), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
  gtk_box_append(GTK_BOX(row), name);
  gtk_box_append(GTK_BOX(row), spark);
  gtk_box_append(GTK_BOX(self->series_box), row);
  g_ptr_array_add(self->sparklines, spark);
  guint zero = 0;
  g_array_append_val(self->counts, zero);
  return (int)self->sparklines->len - 1;
}

void loom_slot_monitor_push(LoomSlotMonitor *self, int series, double value) {
  loom_slot_monitor_push_values(self, series, &value, 1);
}

void loom_slot_monitor_push_values(LoomSlotMonitor *self, int series, const double *values, gsize n) {
  g_return_if_fail(LOOM_IS_SLOT_MONITOR(self));
  g_return_if_fail(series >= 0 && (guint)series < self->sparklines->len);
  loom_sparkline_push_values(g_ptr_array_index(self->sparklines, series), values, n);
  g_array_index(self->counts, guint, series) += (guint)n;
}

guint loom_slot_monitor_get_n_values(LoomSlotMonitor *self, int series) {
  g_return_val_if_fail(LOOM_IS_SLOT_MONITOR(self), 0);
  g_return_val_if_fail(series >= 0 && (guint)series < self->counts->len, 0);
  return g_array_index(self->counts, guint, series);
}

void loom_slot_monitor_set_show_weights(LoomSlotMonitor *self, gboolean show) {
  g_return_if_fail(LOOM_IS_SLOT_MONITOR(self));
  show = !!show;
  if (loom_slot_monitor_get_show_weights(self) == show) return;
  gtk_widget_set_visible(self->weights_heading, show);
  gtk_widget_set_visible(GTK_WIDGET(self->weights), show);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SHOW_WEIGHTS]);
}

gboolean loom_slot_monitor_get_show_weights(LoomSlotMonitor *self) {
  g_return_val_if_fail(LOOM_IS_SLOT_MONITOR(self), FALSE);
  return gtk_widget_get_visible(GTK_WIDGET(self->weights));
}

void loom_slot_monitor_set_weights(LoomSlotMonitor *self, const float *values, gsize n) {
  g_return_if_fail(LOOM_IS_SLOT_MONITOR(self));
  loom_histogram_set_values(self->weights, values, n, HISTOGRAM_BINS);
}

void loom_slot_monitor_set_activations(LoomSlotMonitor *self, const float *values, gsize n) {
  g_return_if_fail(LOOM_IS_SLOT_MONITOR(self));
  loom_histogram_set_values(self->activations, values, n, HISTOGRAM_BINS);
}

guint64 loom_slot_monitor_get_n_activations(LoomSlotMonitor *self) {
  g_return_val_if_fail(LOOM_IS_SLOT_MONITOR(self), 0);
  gsize n_bins = 0;
  const guint64 *bins = loom_histogram_get_bin_counts(self->activations, &n_bins);
  guint64 n_nan = 0, n_inf = 0, total = 0;
  loom_histogram_get_nonfinite(self->activations, &n_nan, &n_inf);
  for (gsize i = 0; bins && i < n_bins; i++) total += bins[i];
  return total + n_nan + n_inf;
}

static void loom_slot_monitor_dispose(GObject *object) {
  LoomSlotMonitor *self = LOOM_SLOT_MONITOR(object);
  g_clear_pointer(&self->box, gtk_widget_unparent);
  G_OBJECT_CLASS(loom_slot_monitor_parent_class)->dispose(object);
}

static void loom_slot_monitor_finalize(GObject *object) {
  LoomSlotMonitor *self = LOOM_SLOT_MONITOR(object);
  g_ptr_array_unref(self->sparklines);
  g_array_unref(self->counts);
  G_OBJECT_CLASS(loom_slot_monitor_parent_class)->finalize(object);
}

static void loom_slot_monitor_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomSlotMonitor *self = LOOM_SLOT_MONITOR(object);
  switch (prop_id) {
  case PROP_SHOW_WEIGHTS: g_value_set_boolean(value, loom_slot_monitor_get_show_weights(self)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_slot_monitor_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  LoomSlotMonitor *self = LOOM_SLOT_MONITOR(object);
  switch (prop_id) {
  case PROP_SHOW_WEIGHTS: loom_slot_monitor_set_show_weights(self, g_value_get_boolean(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_slot_monitor_class_init(LoomSlotMonitorClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->dispose = loom_slot_monitor_dispose;
  object_class->finalize = loom_slot_monitor_finalize;
  object_class->get_property = loom_slot_monitor_get_property;
  object_class->set_property = loom_slot_monitor_set_property;
  /* A slot without weights (an activation, a pooling) has no weight histogram. */
  properties[PROP_SHOW_WEIGHTS] =
      g_param_spec_boolean("show-weights", NULL, NULL, TRUE,
                           G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  gtk_widget_class_set_layout_manager_type(widget_class, GTK_TYPE_BIN_LAYOUT);
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_GROUP);
}

static void loom_slot_monitor_init(LoomSlotMonitor *self) {
  self->sparklines = g_ptr_array_new();
  self->counts = g_array_new(FALSE, TRUE, sizeof(guint));
  self->box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
  gtk_widget_set_parent(self->box, GTK_WIDGET(self));
  self->title = gtk_label_new(NULL);
  gtk_label_set_xalign(GTK_LABEL(self->title), 0);
  gtk_widget_add_css_class(self->title, "heading");
  gtk_box_append(GTK_BOX(self->box), self->title);
  self->hint = gtk_label_new(_("Select a slot to watch it train."));
  gtk_label_set_wrap(GTK_LABEL(self->hint), TRUE);
  gtk_label_set_xalign(GTK_LABEL(self->hint), 0);
  gtk_widget_add_css_class(self->hint, "dim-label");
  gtk_box_append(GTK_BOX(self->box), self->hint);

  self->content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
  gtk_box_append(GTK_BOX(self->box), self->content);
  self->weights_heading = heading(_("Weights"));
  gtk_box_append(GTK_BOX(self->content), self->weights_heading);
  self->weights = g_object_new(LOOM_TYPE_HISTOGRAM, NULL);
  gtk_widget_set_size_request(GTK_WIDGET(self->weights), -1, 70);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->weights), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                 _("Weight histogram"), -1);
  gtk_box_append(GTK_BOX(self->content), GTK_WIDGET(self->weights));
  gtk_box_append(GTK_BOX(self->content), heading(_("Activations")));
  self->activations = g_object_new(LOOM_TYPE_HISTOGRAM, NULL);
  gtk_widget_set_size_request(GTK_WIDGET(self->activations), -1, 70);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->activations), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                 _("Activation histogram"), -1);
  gtk_box_append(GTK_BOX(self->content), GTK_WIDGET(self->activations));
  self->series_box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 2);
  gtk_box_append(GTK_BOX(self->content), self->series_box);
  gtk_widget_set_visible(self->content, FALSE);
}
