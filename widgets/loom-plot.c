/* LoomPlot: the widget — properties, series and markers, hover, snapshot. */
#include "loom-chart-private.h"
#include "loom-plot-private.h"

#include <math.h>
#include <string.h>

enum { PROP_0, PROP_TITLE, PROP_X_LABEL, PROP_Y_LABEL, PROP_SMOOTHING, PROP_LOG_SCALE, PROP_Y_MIN, PROP_Y_MAX, N_PROPS };

static GParamSpec *properties[N_PROPS];

G_DEFINE_FINAL_TYPE(LoomPlot, loom_plot, GTK_TYPE_WIDGET)

GtkWidget *loom_plot_new(void) {
  return g_object_new(LOOM_TYPE_PLOT, NULL);
}

static gboolean update_summary(gpointer data) {
  LoomPlot *self = data;
  self->summary_idle = 0;
  g_autofree char *summary = loom_plot_summary(self);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL, summary, -1);
  return G_SOURCE_REMOVE;
}

/* Points may arrive thousands at a time: the redraw waits for the frame
 * clock, the accessible summary up to LOOM_CHART_ACCESSIBLE_DELAY_MS. */
static void changed(LoomPlot *self) {
  gtk_widget_queue_draw(GTK_WIDGET(self));
  if (self->summary_idle == 0)
    self->summary_idle = g_timeout_add(LOOM_CHART_ACCESSIBLE_DELAY_MS, update_summary, self);
}

static LoomPlotSeries *get_series(LoomPlot *self, int series) {
  if (series < 0 || (guint)series >= self->series->len) return NULL;
  return g_ptr_array_index(self->series, series);
}

int loom_plot_add_series(LoomPlot *self, const char *label, const GdkRGBA *color, gboolean dashed) {
  g_return_val_if_fail(LOOM_IS_PLOT(self), -1);
  GdkRGBA c;
  if (color) {
    c = *color;
  } else {
    float rgb[3];
    loom_chart_class_color((int)self->series->len, rgb);
    c = (GdkRGBA){rgb[0], rgb[1], rgb[2], 1};
  }
  g_ptr_array_add(self->series, loom_plot_series_new(label, &c, dashed));
  self->chrome_serial++;
  changed(self);
  return (int)self->series->len - 1;
}

int loom_plot_get_n_series(LoomPlot *self) {
  g_return_val_if_fail(LOOM_IS_PLOT(self), 0);
  return (int)self->series->len;
}

void loom_plot_append(LoomPlot *self, int series, double x, double y) {
  g_return_if_fail(LOOM_IS_PLOT(self));
  LoomPlotSeries *s = get_series(self, series);
  g_return_if_fail(s != NULL);
  if (!loom_plot_series_append(s, x, y, self->smoothing))
    g_warning("LoomPlot: point (%g, %g) of series %d dropped: x not finite or series full", x, y, series);
  changed(self);
}

void loom_plot_append_many(LoomPlot *self, int series, const double *x, const double *y, gsize n) {
  g_return_if_fail(LOOM_IS_PLOT(self));
  LoomPlotSeries *s = get_series(self, series);
  g_return_if_fail(s != NULL);
  g_return_if_fail(n == 0 || (x && y));
  gsize dropped = 0;
  for (gsize i = 0; i < n; i++)
    if (!loom_plot_series_append(s, x[i], y[i], self->smoothing)) dropped++;
  if (dropped > 0)
    g_warning("LoomPlot: %" G_GSIZE_FORMAT " points of series %d dropped: x not finite or series full", dropped,
              series);
  changed(self);
}

void loom_plot_clear(LoomPlot *self) {
  g_return_if_fail(LOOM_IS_PLOT(self));
  for (guint i = 0; i < self->series->len; i++) loom_plot_series_clear(g_ptr_array_index(self->series, i));
  g_array_set_size(self->markers, 0);
  self->chrome_serial++;
  changed(self);
}

gsize loom_plot_get_n_points(LoomPlot *self, int series) {
  g_return_val_if_fail(LOOM_IS_PLOT(self), 0);
  LoomPlotSeries *s = get_series(self, series);
  g_return_val_if_fail(s != NULL, 0);
  return s->x.len;
}

static void clear_marker(gpointer data) {
  g_free(((LoomPlotMarker *)data)->label);
}

void loom_plot_add_marker(LoomPlot *self, double x, LoomPlotMarkerKind kind, const char *label) {
  g_return_if_fail(LOOM_IS_PLOT(self));
  g_return_if_fail(isfinite(x));
  if ((int)kind < LOOM_PLOT_MARKER_RESTART || kind > LOOM_PLOT_MARKER_OTHER) kind = LOOM_PLOT_MARKER_OTHER;
  LoomPlotMarker m = {x, kind, g_strdup(label)};
  g_array_append_val(self->markers, m);
  self->chrome_serial++;
  changed(self);
}

gsize loom_plot_get_n_markers(LoomPlot *self) {
  g_return_val_if_fail(LOOM_IS_PLOT(self), 0);
  return self->markers->len;
}

gboolean loom_plot_get_readout(LoomPlot *self, double widget_x, double *x, double *values, int n_values) {
  g_return_val_if_fail(LOOM_IS_PLOT(self), FALSE);
  g_return_val_if_fail(n_values == 0 || values, FALSE);
  /* The layout of the widget as it is now, whether or not it was drawn. */
  LoomPlotFrame frame;
  loom_plot_layout(self, gtk_widget_get_width(GTK_WIDGET(self)), gtk_widget_get_height(GTK_WIDGET(self)), &frame);
  return loom_plot_readout_in(self, &frame, widget_x, x, values, n_values);
}

gsize loom_plot_get_drawn_vertices(LoomPlot *self) {
  g_return_val_if_fail(LOOM_IS_PLOT(self), 0);
  return self->drawn_vertices;
}

const double *loom_plot_get_drawn_line(LoomPlot *self, int series, gsize *n) {
  g_return_val_if_fail(LOOM_IS_PLOT(self), NULL);
  LoomPlotSeries *s = get_series(self, series);
  g_return_val_if_fail(s != NULL, NULL);
  *n = 0;
  if (!s->line_key[0].valid) return NULL;
  *n = s->line[0]->len / 2;
  return (const double *)s->line[0]->data;
}

/* ---- properties ---- */

static void set_string(LoomPlot *self, char **field, const char *value, int prop) {
  if (g_strcmp0(*field, value) == 0) return;
  g_free(*field);
  *field = g_strdup(value);
  self->chrome_serial++;
  changed(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[prop]);
}

static void set_smoothing(LoomPlot *self, double smoothing) {
  smoothing = CLAMP(smoothing, 0.0, 0.999);
  if (self->smoothing == smoothing) return;
  self->smoothing = smoothing;
  for (guint i = 0; i < self->series->len; i++)
    loom_plot_series_resmooth(g_ptr_array_index(self->series, i), smoothing);
  gtk_widget_queue_draw(GTK_WIDGET(self));
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SMOOTHING]);
}

static void set_log_scale(LoomPlot *self, gboolean log_scale) {
  log_scale = !!log_scale;
  if (self->log_scale == log_scale) return;
  self->log_scale = log_scale;
  gtk_widget_queue_draw(GTK_WIDGET(self));
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_LOG_SCALE]);
}

/* NaN compares unequal to itself: "automatic" stays automatic without a notify. */
static void set_limit(LoomPlot *self, double *field, double value, int prop) {
  if ((isnan(*field) && isnan(value)) || *field == value) return;
  *field = value;
  gtk_widget_queue_draw(GTK_WIDGET(self));
  g_object_notify_by_pspec(G_OBJECT(self), properties[prop]);
}

static void loom_plot_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomPlot *self = LOOM_PLOT(object);
  switch (prop_id) {
  case PROP_TITLE: g_value_set_string(value, self->title); break;
  case PROP_X_LABEL: g_value_set_string(value, self->x_label); break;
  case PROP_Y_LABEL: g_value_set_string(value, self->y_label); break;
  case PROP_SMOOTHING: g_value_set_double(value, self->smoothing); break;
  case PROP_LOG_SCALE: g_value_set_boolean(value, self->log_scale); break;
  case PROP_Y_MIN: g_value_set_double(value, self->y_min); break;
  case PROP_Y_MAX: g_value_set_double(value, self->y_max); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_plot_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  LoomPlot *self = LOOM_PLOT(object);
  switch (prop_id) {
  case PROP_TITLE: set_string(self, &self->title, g_value_get_string(value), PROP_TITLE); break;
  case PROP_X_LABEL: set_string(self, &self->x_label, g_value_get_string(value), PROP_X_LABEL); break;
  case PROP_Y_LABEL: set_string(self, &self->y_label, g_value_get_string(value), PROP_Y_LABEL); break;
  case PROP_SMOOTHING: set_smoothing(self, g_value_get_double(value)); break;
  case PROP_LOG_SCALE: set_log_scale(self, g_value_get_boolean(value)); break;
  case PROP_Y_MIN: set_limit(self, &self->y_min, g_value_get_double(value), PROP_Y_MIN); break;
  case PROP_Y_MAX: set_limit(self, &self->y_max, g_value_get_double(value), PROP_Y_MAX); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

/* ---- drawing and hover ---- */

typedef struct {
  LoomPlot *self;
  int w, h;
  const GdkRGBA *fg;
  LoomPlotParts parts;
  gsize vertices;
} PlotDraw;

static void plot_draw(cairo_t *cr, gpointer data) {
  PlotDraw *d = data;
  LoomPlotFrame frame;
  d->vertices = loom_plot_draw(d->self, cr, d->w, d->h, d->fg, d->self->hover_x, &frame, d->parts);
  if (d->parts & LOOM_PLOT_PART_LINES) d->self->frame = frame;
}

static void loom_plot_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
  LoomPlot *self = LOOM_PLOT(widget);
  int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  if (w <= 0 || h <= 0) return;
  GdkRGBA fg;
  loom_chart_foreground(widget, &fg);
  LoomPlotFrame frame;
  loom_plot_layout(self, w, h, &frame);
  struct LoomPlotChromeKey key;
  memset(&key, 0, sizeof key); /* compared with memcmp: no stray padding */
  key.w = w;
  key.h = h;
  key.fg = fg;
  key.frame = frame;
  key.serial = self->chrome_serial;
  if (!self->chrome || memcmp(&key, &self->chrome_key, sizeof key) != 0) {
    g_clear_pointer(&self->chrome, gsk_render_node_unref);
    PlotDraw d = {self, w, h, &fg, LOOM_PLOT_PART_CHROME, 0};
    self->chrome = loom_chart_texture_node(widget, w, h, plot_draw, &d);
    self->chrome_key = key;
  }
  if (self->chrome) gtk_snapshot_append_node(snapshot, self->chrome);
  PlotDraw d = {self, w, h, &fg, LOOM_PLOT_PART_LINES | LOOM_PLOT_PART_READOUT, 0};
  GskRenderNode *lines = loom_chart_texture_node(widget, w, h, plot_draw, &d);
  self->drawn_vertices = d.vertices;
  if (lines) {
    gtk_snapshot_append_node(snapshot, lines);
    gsk_render_node_unref(lines);
  }
}

static void loom_plot_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum, int *natural,
                              int *minimum_baseline, int *natural_baseline) {
  (void)widget;
  (void)for_size;
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 160 : 100;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 480 : 240;
  *minimum_baseline = *natural_baseline = -1;
}

static void on_motion(GtkEventControllerMotion *motion, double x, double y, gpointer data) {
  (void)motion;
  (void)y;
  LoomPlot *self = data;
  self->hover_x = x;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void on_leave(GtkEventControllerMotion *motion, gpointer data) {
  (void)motion;
  LoomPlot *self = data;
  self->hover_x = NAN;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

static void loom_plot_dispose(GObject *object) {
  LoomPlot *self = LOOM_PLOT(object);
  g_clear_handle_id(&self->summary_idle, g_source_remove);
  G_OBJECT_CLASS(loom_plot_parent_class)->dispose(object);
}

static void loom_plot_finalize(GObject *object) {
  LoomPlot *self = LOOM_PLOT(object);
  g_ptr_array_unref(self->series);
  g_array_unref(self->markers);
  g_clear_pointer(&self->chrome, gsk_render_node_unref);
  g_free(self->title);
  g_free(self->x_label);
  g_free(self->y_label);
  G_OBJECT_CLASS(loom_plot_parent_class)->finalize(object);
}

static void loom_plot_class_init(LoomPlotClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->get_property = loom_plot_get_property;
  object_class->set_property = loom_plot_set_property;
  object_class->dispose = loom_plot_dispose;
  object_class->finalize = loom_plot_finalize;
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  widget_class->snapshot = loom_plot_snapshot;
  widget_class->measure = loom_plot_measure;
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_IMG);
  gtk_widget_class_set_css_name(widget_class, "loom-plot");

  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  properties[PROP_TITLE] = g_param_spec_string("title", NULL, NULL, NULL, rw);
  properties[PROP_X_LABEL] = g_param_spec_string("x-label", NULL, NULL, NULL, rw);
  properties[PROP_Y_LABEL] = g_param_spec_string("y-label", NULL, NULL, NULL, rw);
  /* The EMA weight of the previous value, as TensorBoard's slider. */
  properties[PROP_SMOOTHING] = g_param_spec_double("smoothing", NULL, NULL, 0.0, 0.999, 0.0, rw);
  properties[PROP_LOG_SCALE] = g_param_spec_boolean("log-scale", NULL, NULL, FALSE, rw);
  /* NaN means "from the data". g_param_spec_double refuses a NaN default
   * (it fails its range check), so the default is patched in afterwards;
   * validation keeps NaN values as they are. */
  properties[PROP_Y_MIN] = g_param_spec_double("y-min", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0.0, rw);
  properties[PROP_Y_MAX] = g_param_spec_double("y-max", NULL, NULL, -G_MAXDOUBLE, G_MAXDOUBLE, 0.0, rw);
  G_PARAM_SPEC_DOUBLE(properties[PROP_Y_MIN])->default_value = NAN;
  G_PARAM_SPEC_DOUBLE(properties[PROP_Y_MAX])->default_value = NAN;
  g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void loom_plot_init(LoomPlot *self) {
  self->series = g_ptr_array_new_with_free_func((GDestroyNotify)loom_plot_series_free);
  self->markers = g_array_new(FALSE, FALSE, sizeof(LoomPlotMarker));
  g_array_set_clear_func(self->markers, clear_marker);
  self->y_min = self->y_max = NAN;
  self->hover_x = NAN;
  GtkEventController *motion = gtk_event_controller_motion_new();
  g_signal_connect(motion, "motion", G_CALLBACK(on_motion), self);
  g_signal_connect(motion, "leave", G_CALLBACK(on_leave), self);
  gtk_widget_add_controller(GTK_WIDGET(self), motion);
  update_summary(self);
}
