/* LoomSparkline: a ring buffer of values drawn as one cairo polyline. */
#include "loom-sparkline.h"

#include <math.h>

#include "loom-chart-private.h"

enum { PROP_0, PROP_CAPACITY, PROP_SHOW_VALUE, N_PROPS };
static GParamSpec *properties[N_PROPS];

struct _LoomSparkline {
  GtkWidget parent_instance;

  double *ring;
  guint capacity;
  guint start; /* index of the oldest value */
  guint len;
  gboolean show_value;
};

G_DEFINE_FINAL_TYPE(LoomSparkline, loom_sparkline, GTK_TYPE_WIDGET)

GtkWidget *loom_sparkline_new(void) {
  return g_object_new(LOOM_TYPE_SPARKLINE, NULL);
}

static double value_at(const LoomSparkline *self, guint i) {
  return self->ring[(self->start + i) % self->capacity];
}

static void append(LoomSparkline *self, double value) {
  if (self->len < self->capacity) {
    self->ring[(self->start + self->len) % self->capacity] = value;
    self->len++;
  } else {
    self->ring[self->start] = value;
    self->start = (self->start + 1) % self->capacity;
  }
}

void loom_sparkline_push(LoomSparkline *self, double value) { loom_sparkline_push_values(self, &value, 1); }

/* One redraw for them all: a snapshot brings a step's values by the
 * hundred, of which only the newest `capacity` stay. */
void loom_sparkline_push_values(LoomSparkline *self, const double *values, gsize n) {
  g_return_if_fail(LOOM_IS_SPARKLINE(self));
  g_return_if_fail(values || n == 0);
  if (n == 0) return;
  for (gsize i = n > self->capacity ? n - self->capacity : 0; i < n; i++) append(self, values[i]);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

void loom_sparkline_clear(LoomSparkline *self) {
  g_return_if_fail(LOOM_IS_SPARKLINE(self));
  self->start = self->len = 0;
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

guint loom_sparkline_get_n_values(LoomSparkline *self) {
  g_return_val_if_fail(LOOM_IS_SPARKLINE(self), 0);
  return self->len;
}

double loom_sparkline_get_value(LoomSparkline *self, guint i) {
  g_return_val_if_fail(LOOM_IS_SPARKLINE(self), NAN);
  g_return_val_if_fail(i < self->len, NAN);
  return value_at(self, i);
}

/* Keeps the newest values that fit. */
static void set_capacity(LoomSparkline *self, guint capacity) {
  capacity = CLAMP(capacity, 2, LOOM_SPARKLINE_MAX_CAPACITY);
  if (self->capacity == capacity) return;
  double *ring = g_new(double, capacity);
  guint keep = MIN(self->len, capacity);
  for (guint i = 0; i < keep; i++) ring[i] = value_at(self, self->len - keep + i);
  g_free(self->ring);
  self->ring = ring;
  self->capacity = capacity;
  self->start = 0;
  self->len = keep;
  gtk_widget_queue_draw(GTK_WIDGET(self));
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_CAPACITY]);
}

static void set_show_value(LoomSparkline *self, gboolean show) {
  show = !!show;
  if (self->show_value == show) return;
  self->show_value = show;
  gtk_widget_queue_draw(GTK_WIDGET(self));
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_SHOW_VALUE]);
}

/* Slots are fixed (capacity of them across the width), so the line scrolls
 * left as values arrive instead of stretching. */
static void draw(LoomSparkline *self, cairo_t *cr, int w, int h) {
  GtkWidget *widget = GTK_WIDGET(self);
  GdkRGBA fg;
  loom_chart_foreground(widget, &fg);
  if (self->len == 0) return;
  double latest = value_at(self, self->len - 1);
  double text_w = 0;
  char text[LOOM_CHART_LABEL_LEN];
  if (self->show_value) {
    loom_chart_format(latest, 0, text);
    int tw;
    loom_chart_text_size(widget, text, &tw, NULL);
    text_w = tw + 4;
  }
  double lw = MAX(1.0, w - text_w);
  double lo = INFINITY, hi = -INFINITY;
  for (guint i = 0; i < self->len; i++) {
    double v = value_at(self, i);
    if (!isfinite(v)) continue;
    lo = MIN(lo, v);
    hi = MAX(hi, v);
  }
  if (lo <= hi) {
    if (lo == hi) lo -= 0.5, hi += 0.5;
    double step = lw / (self->capacity - 1);
    double x0 = lw - (self->len - 1) * step;
    float accent[3];
    loom_chart_class_color(0, accent);
    cairo_set_source_rgb(cr, accent[0], accent[1], accent[2]);
    cairo_set_line_width(cr, 1.25);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    gboolean drawing = FALSE;
    double px = 0, py = 0;
    for (guint i = 0; i < self->len; i++) {
      double v = value_at(self, i);
      if (!isfinite(v)) {
        drawing = FALSE;
        continue;
      }
      px = x0 + i * step;
      py = 1.5 + (h - 3) * (1 - (v - lo) / (hi - lo));
      if (drawing)
        cairo_line_to(cr, px, py);
      else
        cairo_move_to(cr, px, py);
      drawing = TRUE;
    }
    cairo_stroke(cr);
    if (isfinite(latest)) {
      cairo_arc(cr, px, py, 2, 0, 2 * G_PI);
      cairo_fill(cr);
    }
  }
  if (self->show_value) {
    cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.9);
    loom_chart_text(cr, widget, text, w, h / 2.0, 1, 0.5);
  }
}

typedef struct {
  LoomSparkline *self;
  int w, h;
} Canvas;

static void draw_canvas(cairo_t *cr, gpointer data) {
  const Canvas *c = data;
  draw(c->self, cr, c->w, c->h);
}

/* A texture node, as the other live charts (loom_chart_texture_node). */
static void loom_sparkline_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
  int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  if (w <= 0 || h <= 0) return;
  Canvas c = {LOOM_SPARKLINE(widget), w, h};
  GskRenderNode *node = loom_chart_texture_node(widget, w, h, draw_canvas, &c);
  if (!node) return;
  gtk_snapshot_append_node(snapshot, node);
  gsk_render_node_unref(node);
}

static void loom_sparkline_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                                   int *natural, int *minimum_baseline, int *natural_baseline) {
  (void)widget;
  (void)for_size;
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 24 : 12;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 120 : 22;
  *minimum_baseline = *natural_baseline = -1;
}

static void loom_sparkline_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomSparkline *self = LOOM_SPARKLINE(object);
  switch (prop_id) {
  case PROP_CAPACITY: g_value_set_uint(value, self->capacity); break;
  case PROP_SHOW_VALUE: g_value_set_boolean(value, self->show_value); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_sparkline_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  LoomSparkline *self = LOOM_SPARKLINE(object);
  switch (prop_id) {
  case PROP_CAPACITY: set_capacity(self, g_value_get_uint(value)); break;
  case PROP_SHOW_VALUE: set_show_value(self, g_value_get_boolean(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_sparkline_finalize(GObject *object) {
  g_free(LOOM_SPARKLINE(object)->ring);
  G_OBJECT_CLASS(loom_sparkline_parent_class)->finalize(object);
}

static void loom_sparkline_class_init(LoomSparklineClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->get_property = loom_sparkline_get_property;
  object_class->set_property = loom_sparkline_set_property;
  object_class->finalize = loom_sparkline_finalize;
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  widget_class->snapshot = loom_sparkline_snapshot;
  widget_class->measure = loom_sparkline_measure;
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_IMG);
  gtk_widget_class_set_css_name(widget_class, "loom-sparkline");

  const GParamFlags rw = G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS;
  properties[PROP_CAPACITY] = g_param_spec_uint("capacity", NULL, NULL, 2, LOOM_SPARKLINE_MAX_CAPACITY, 120, rw);
  properties[PROP_SHOW_VALUE] = g_param_spec_boolean("show-value", NULL, NULL, FALSE, rw);
  g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void loom_sparkline_init(LoomSparkline *self) {
  self->capacity = 120;
  self->ring = g_new(double, self->capacity);
}
