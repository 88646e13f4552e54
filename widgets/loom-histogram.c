/* LoomHistogram: bars drawn with cairo, counts computed once per update. */
#include "loom-histogram.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "loom-chart-private.h"

struct _LoomHistogram {
  GtkWidget parent_instance;

  guint64 *counts;
  gsize n_bins;
  double lo, hi; /* NaN without finite values */
  guint64 n_finite, n_nan, n_inf;
  guint description_source; /* a pending update_description */
};

G_DEFINE_FINAL_TYPE(LoomHistogram, loom_histogram, GTK_TYPE_WIDGET)

GtkWidget *loom_histogram_new(void) {
  return g_object_new(LOOM_TYPE_HISTOGRAM, NULL);
}

static gboolean update_description(gpointer data) {
  LoomHistogram *self = data;
  self->description_source = 0;
  g_autofree char *text = NULL;
  if (self->n_finite == 0) {
    text = g_strdup(_("No values"));
  } else {
    char lo[LOOM_CHART_LABEL_LEN], hi[LOOM_CHART_LABEL_LEN];
    loom_chart_format(self->lo, 0, lo);
    loom_chart_format(self->hi, 0, hi);
    /* TRANSLATORS: accessible description of a histogram */
    text = g_strdup_printf(_("%llu values from %s to %s; %llu NaN, %llu infinite"), (unsigned long long)self->n_finite,
                           lo, hi, (unsigned long long)self->n_nan, (unsigned long long)self->n_inf);
  }
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
  return G_SOURCE_REMOVE;
}

void loom_histogram_set_values(LoomHistogram *self, const float *values, gsize n, int bins) {
  g_return_if_fail(LOOM_IS_HISTOGRAM(self));
  g_return_if_fail(values != NULL || n == 0);
  bins = CLAMP(bins, 1, LOOM_HISTOGRAM_MAX_BINS);
  if (self->n_bins != (gsize)bins) {
    g_free(self->counts);
    self->counts = g_new0(guint64, bins);
    self->n_bins = (gsize)bins;
  } else {
    memset(self->counts, 0, sizeof(guint64) * self->n_bins);
  }
  self->n_finite = self->n_nan = self->n_inf = 0;
  double lo = INFINITY, hi = -INFINITY;
  for (gsize i = 0; i < n; i++) {
    float v = values[i];
    if (isnan(v))
      self->n_nan++;
    else if (isinf(v))
      self->n_inf++;
    else {
      self->n_finite++;
      lo = MIN(lo, v);
      hi = MAX(hi, v);
    }
  }
  if (self->n_finite == 0) {
    self->lo = self->hi = NAN;
  } else {
    if (lo == hi) lo -= 0.5, hi += 0.5;
    self->lo = lo;
    self->hi = hi;
    double scale = (double)bins / (hi - lo);
    for (gsize i = 0; i < n; i++) {
      double v = values[i];
      if (!isfinite(v)) continue;
      double pos = (v - lo) * scale;
      gsize b = pos <= 0 ? 0 : (gsize)pos;
      self->counts[MIN(b, self->n_bins - 1)]++;
    }
  }
  if (self->description_source == 0)
    self->description_source = g_timeout_add(LOOM_CHART_ACCESSIBLE_DELAY_MS, update_description, self);
  gtk_widget_queue_draw(GTK_WIDGET(self));
}

const guint64 *loom_histogram_get_bin_counts(LoomHistogram *self, gsize *n_bins) {
  g_return_val_if_fail(LOOM_IS_HISTOGRAM(self), NULL);
  if (n_bins) *n_bins = self->n_bins;
  return self->counts;
}

gboolean loom_histogram_get_range(LoomHistogram *self, double *lo, double *hi) {
  g_return_val_if_fail(LOOM_IS_HISTOGRAM(self), FALSE);
  if (lo) *lo = self->lo;
  if (hi) *hi = self->hi;
  return self->n_finite > 0;
}

void loom_histogram_get_nonfinite(LoomHistogram *self, guint64 *n_nan, guint64 *n_inf) {
  g_return_if_fail(LOOM_IS_HISTOGRAM(self));
  if (n_nan) *n_nan = self->n_nan;
  if (n_inf) *n_inf = self->n_inf;
}

/* Bars over the range, the tallest bar's count at the top left, each bar's
 * count above it where the bars are wide enough, the range's ends below,
 * and the non-finite counts at the bottom right (in red: they mean trouble). */
static void draw(LoomHistogram *self, cairo_t *cr, int w, int h) {
  GtkWidget *widget = GTK_WIDGET(self);
  GdkRGBA fg;
  loom_chart_foreground(widget, &fg);
  int th;
  loom_chart_text_size(widget, "0", NULL, &th);
  char text[LOOM_CHART_LABEL_LEN];
  if (self->n_finite == 0 && self->n_nan == 0 && self->n_inf == 0) {
    cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.5);
    loom_chart_text(cr, widget, _("No values"), w / 2.0, h / 2.0, 0.5, 0.5);
    return;
  }
  double top = th + 2, bottom = h - th - 2;
  double area_h = MAX(1.0, bottom - top);
  guint64 max_count = 0;
  for (gsize i = 0; i < self->n_bins; i++) max_count = MAX(max_count, self->counts[i]);
  double bar_w = (double)w / (double)self->n_bins;
  float accent[3];
  loom_chart_class_color(0, accent);
  if (max_count > 0) {
    for (gsize i = 0; i < self->n_bins; i++) {
      if (self->counts[i] == 0) continue;
      double bh = MAX(1.0, area_h * (double)self->counts[i] / (double)max_count);
      cairo_set_source_rgba(cr, accent[0], accent[1], accent[2], 0.85);
      cairo_rectangle(cr, i * bar_w + (bar_w > 3 ? 0.5 : 0), bottom - bh, MAX(1.0, bar_w - (bar_w > 3 ? 1 : 0)), bh);
      cairo_fill(cr);
      loom_chart_format((double)self->counts[i], 1, text);
      int tw;
      loom_chart_text_size(widget, text, &tw, NULL);
      if (tw + 2 <= bar_w) {
        cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.8);
        loom_chart_text(cr, widget, text, i * bar_w + bar_w / 2, bottom - bh, 0.5, 1);
      }
    }
  }
  cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.45);
  cairo_rectangle(cr, 0, bottom, w, 1);
  cairo_fill(cr);
  cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.75);
  loom_chart_format((double)max_count, 1, text);
  g_autofree char *max_text = g_strdup_printf(_("max %s"), text);
  loom_chart_text(cr, widget, max_text, 0, 0, 0, 0);
  if (self->n_finite > 0) {
    loom_chart_format(self->lo, 0, text);
    loom_chart_text(cr, widget, text, 0, bottom + 2, 0, 0);
    loom_chart_format(self->hi, 0, text);
    loom_chart_text(cr, widget, text, w, bottom + 2, 1, 0);
  }
  if (self->n_nan > 0 || self->n_inf > 0) {
    char nan_text[LOOM_CHART_LABEL_LEN], inf_text[LOOM_CHART_LABEL_LEN];
    loom_chart_format((double)self->n_nan, 1, nan_text);
    loom_chart_format((double)self->n_inf, 1, inf_text);
    /* TRANSLATORS: counts of non-finite values in a histogram */
    g_autofree char *bad = g_strdup_printf(_("NaN %s · ±∞ %s"), nan_text, inf_text);
    cairo_set_source_rgba(cr, 0.85, 0.15, 0.15, 1);
    loom_chart_text(cr, widget, bad, w, 0, 1, 0);
  }
}

typedef struct {
  LoomHistogram *self;
  int w, h;
} Canvas;

static void draw_canvas(cairo_t *cr, gpointer data) {
  const Canvas *c = data;
  draw(c->self, cr, c->w, c->h);
}

/* A texture node, as the other live charts (loom_chart_texture_node). */
static void loom_histogram_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
  int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  if (w <= 0 || h <= 0) return;
  Canvas c = {LOOM_HISTOGRAM(widget), w, h};
  GskRenderNode *node = loom_chart_texture_node(widget, w, h, draw_canvas, &c);
  if (!node) return;
  gtk_snapshot_append_node(snapshot, node);
  gsk_render_node_unref(node);
}

static void loom_histogram_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                                   int *natural, int *minimum_baseline, int *natural_baseline) {
  (void)widget;
  (void)for_size;
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 80 : 48;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 240 : 80;
  *minimum_baseline = *natural_baseline = -1;
}

static void loom_histogram_dispose(GObject *object) {
  g_clear_handle_id(&LOOM_HISTOGRAM(object)->description_source, g_source_remove);
  G_OBJECT_CLASS(loom_histogram_parent_class)->dispose(object);
}

static void loom_histogram_finalize(GObject *object) {
  g_free(LOOM_HISTOGRAM(object)->counts);
  G_OBJECT_CLASS(loom_histogram_parent_class)->finalize(object);
}

static void loom_histogram_class_init(LoomHistogramClass *klass) {
  G_OBJECT_CLASS(klass)->dispose = loom_histogram_dispose;
  G_OBJECT_CLASS(klass)->finalize = loom_histogram_finalize;
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  widget_class->snapshot = loom_histogram_snapshot;
  widget_class->measure = loom_histogram_measure;
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_IMG);
  gtk_widget_class_set_css_name(widget_class, "loom-histogram");
}

static void loom_histogram_init(LoomHistogram *self) {
  self->lo = self->hi = NAN;
  update_description(self);
}
