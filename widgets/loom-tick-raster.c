/*
 * LoomTickRaster: the columns live in a ring of LOOM_TICK_RASTER_MAX_COLUMNS
 * × rows floats; each redraw paints them, one pixel a cell, into an image
 * that cairo scales to the cells' area without smoothing (a mesh can have
 * more rows than the widget has pixels: nearest sampling then shows every
 * pixel row's slot), beside the row labels and under the tick range.
 */
#include "loom-tick-raster.h"

#include <glib/gi18n-lib.h>
#include <math.h>
#include <string.h>

#include "loom-chart-private.h"
#include "loom-grid-scene.h"

struct _LoomTickRaster {
  GtkWidget parent_instance;
  int n_rows;
  GStrv labels;
  float *cells;    /* [slot][row]: slot = ring position, LOOM_TICK_RASTER_MAX_COLUMNS slots */
  float *col_max;  /* the largest value of each slot's column (0 without one) */
  gint64 *ticks;   /* each slot's tick */
  int head;        /* the slot the next column goes to */
  int n_columns;   /* kept, at most LOOM_TICK_RASTER_MAX_COLUMNS */
  float max;       /* over the kept columns */
  int label_width; /* the widest row label, pixels */
  guint description_source;
};

G_DEFINE_FINAL_TYPE(LoomTickRaster, loom_tick_raster, GTK_TYPE_WIDGET)

#define MARGIN 6.0
#define LABEL_GAP 6.0
/* Rows beyond this many never get a text line each on a screen: their
 * labels are not measured (a Pango layout each, on the UI thread). */
#define LABELLED_ROWS_MAX 256

GtkWidget *loom_tick_raster_new(void) { return g_object_new(LOOM_TYPE_TICK_RASTER, NULL); }

typedef struct {
  double x0, y0, w, h; /* the cells' area */
  double text_h;
  gboolean labels; /* the rows are tall enough for their names */
} Layout;

static void layout(LoomTickRaster *self, double w, double h, Layout *l) {
  int th;
  loom_chart_text_size(GTK_WIDGET(self), "0", NULL, &th);
  l->text_h = th;
  double bottom = th + LABEL_GAP;
  l->y0 = MARGIN;
  l->h = MAX(h - MARGIN - bottom, 1);
  double left = MIN(self->label_width + LABEL_GAP, 0.35 * w);
  l->labels = self->n_rows > 0 && self->n_rows <= LABELLED_ROWS_MAX && l->h / self->n_rows >= th &&
              left >= self->label_width + LABEL_GAP;
  l->x0 = l->labels ? MARGIN + left : MARGIN;
  l->w = MAX(w - l->x0 - MARGIN, 1);
}

/* Columns across the cells' area: the kept ones, at least MIN_VISIBLE, so
 * that the first ticks are wide enough to show a wave's diagonal. */
#define MIN_VISIBLE 32
static int visible_columns(const LoomTickRaster *self) {
  return CLAMP(self->n_columns, MIN_VISIBLE, LOOM_TICK_RASTER_MAX_COLUMNS);
}

/* The ring slot of the column `age` ticks before the newest. */
static int slot_of(LoomTickRaster *self, int age) {
  return ((self->head - 1 - age) % LOOM_TICK_RASTER_MAX_COLUMNS + LOOM_TICK_RASTER_MAX_COLUMNS) %
         LOOM_TICK_RASTER_MAX_COLUMNS;
}

static void paint_cells(LoomTickRaster *self, cairo_t *cr, const Layout *l, int scale) {
  /* One image column a tick column, one image row a pixel row at most. */
  const int cols = visible_columns(self);
  const int rows = MIN(self->n_rows, MAX(1, (int)ceil(l->h * scale)));
  cairo_surface_t *image = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, cols, rows);
  if (cairo_surface_status(image) != CAIRO_STATUS_SUCCESS) {
    cairo_surface_destroy(image);
    return;
  }
  cairo_surface_flush(image);
  guint8 *data = cairo_image_surface_get_data(image);
  const int stride = cairo_image_surface_get_stride(image);
  memset(data, 0, (size_t)stride * (size_t)rows);
  const float top = self->max > 0 ? self->max : 1;
  for (int age = 0; age < self->n_columns; age++) {
    const float *column = self->cells + (size_t)slot_of(self, age) * (size_t)self->n_rows;
    const int x = cols - 1 - age;
    for (int r = 0; r < rows; r++) {
      const int row = (int)((gint64)r * self->n_rows / rows);
      const float v = column[row];
      if (!(v >= 0)) continue; /* no value: transparent */
      float rgb[3];
      loom_grid_colormap(v / top, rgb);
      guint32 pixel = 0xff000000u | (guint32)lroundf(rgb[0] * 255) << 16 | (guint32)lroundf(rgb[1] * 255) << 8 |
                      (guint32)lroundf(rgb[2] * 255);
      memcpy(data + (size_t)r * (size_t)stride + (size_t)x * 4, &pixel, 4);
    }
  }
  cairo_surface_mark_dirty(image);
  cairo_save(cr);
  cairo_rectangle(cr, l->x0, l->y0, l->w, l->h);
  cairo_clip(cr);
  cairo_translate(cr, l->x0, l->y0);
  cairo_scale(cr, l->w / cols, l->h / rows);
  cairo_set_source_surface(cr, image, 0, 0);
  cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
  cairo_paint(cr);
  cairo_restore(cr);
  cairo_surface_destroy(image);
}

typedef struct {
  LoomTickRaster *self;
  double w, h;
  int scale;
} Draw;

static void draw(cairo_t *cr, gpointer data) {
  const Draw *d = data;
  LoomTickRaster *self = d->self;
  GtkWidget *widget = GTK_WIDGET(self);
  GdkRGBA fg;
  loom_chart_foreground(widget, &fg);
  if (self->n_rows == 0) {
    cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.6);
    loom_chart_text(cr, widget, _("Tick the mesh to see its slots over time"), d->w / 2, d->h / 2, 0.5, 0.5);
    return;
  }
  Layout l;
  layout(self, d->w, d->h, &l);
  cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.06);
  cairo_rectangle(cr, l.x0, l.y0, l.w, l.h);
  cairo_fill(cr);
  paint_cells(self, cr, &l, d->scale);
  cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.8);
  if (l.labels)
    for (int r = 0; r < self->n_rows; r++)
      loom_chart_text(cr, widget, self->labels[r], l.x0 - LABEL_GAP, l.y0 + (r + 0.5) * l.h / self->n_rows, 1, 0.5);
  /* Under the cells: the colour scale's top at the left, the newest tick
   * at the right end, the oldest under its column where there is room. */
  const double base = l.y0 + l.h + LABEL_GAP / 2;
  char text[64], value[LOOM_CHART_LABEL_LEN];
  loom_chart_format(self->max, 0, value);
  /* TRANSLATORS: the systolic raster's colour scale, e.g. "colour: 0 to 3.75" */
  g_snprintf(text, sizeof text, _("colour: 0 to %s"), value);
  int scale_w, newest_w, oldest_w;
  loom_chart_text_size(widget, text, &scale_w, NULL);
  cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.6);
  loom_chart_text(cr, widget, text, l.x0, base, 0, 0);
  if (self->n_columns == 0) return;
  cairo_set_source_rgba(cr, fg.red, fg.green, fg.blue, 0.8);
  const gint64 newest = self->ticks[slot_of(self, 0)], oldest = self->ticks[slot_of(self, self->n_columns - 1)];
  /* TRANSLATORS: under the systolic raster's newest column; %lld is a tick */
  g_snprintf(text, sizeof text, _("tick %lld"), (long long)newest);
  loom_chart_text_size(widget, text, &newest_w, NULL);
  loom_chart_text(cr, widget, text, l.x0 + l.w, base, 1, 0);
  if (self->n_columns < 2) return;
  const double x = l.x0 + l.w * (1 - (double)self->n_columns / visible_columns(self));
  g_snprintf(text, sizeof text, "%lld", (long long)oldest);
  loom_chart_text_size(widget, text, &oldest_w, NULL);
  if (x >= l.x0 + scale_w + 2 * LABEL_GAP && x + oldest_w + 2 * LABEL_GAP <= l.x0 + l.w - newest_w)
    loom_chart_text(cr, widget, text, x, base, 0, 0);
}

static void loom_tick_raster_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
  LoomTickRaster *self = LOOM_TICK_RASTER(widget);
  const int w = gtk_widget_get_width(widget), h = gtk_widget_get_height(widget);
  Draw d = {self, w, h, MAX(gtk_widget_get_scale_factor(widget), 1)};
  GskRenderNode *node = loom_chart_texture_node(widget, w, h, draw, &d);
  if (node) {
    gtk_snapshot_append_node(snapshot, node);
    gsk_render_node_unref(node);
  }
}

static gboolean update_description(gpointer data) {
  LoomTickRaster *self = data;
  self->description_source = 0;
  char value[LOOM_CHART_LABEL_LEN];
  loom_chart_format(self->max, 0, value);
  /* TRANSLATORS: accessible description of the systolic raster */
  g_autofree char *text = g_strdup_printf(_("%d slots over the last %d ticks; largest value %s"), self->n_rows,
                                          self->n_columns, value);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
  return G_SOURCE_REMOVE;
}

static void changed(LoomTickRaster *self) {
  gtk_widget_queue_draw(GTK_WIDGET(self));
  if (self->description_source == 0)
    self->description_source = g_timeout_add(LOOM_CHART_ACCESSIBLE_DELAY_MS, update_description, self);
}

void loom_tick_raster_set_rows(LoomTickRaster *self, const char *const *labels, int n_rows) {
  g_return_if_fail(LOOM_IS_TICK_RASTER(self));
  if (n_rows < 0 || n_rows > LOOM_TICK_RASTER_MAX_ROWS) {
    g_warning("LoomTickRaster: %d rows refused (at most %d)", n_rows, LOOM_TICK_RASTER_MAX_ROWS);
    return;
  }
  g_strfreev(self->labels);
  self->labels = g_new0(char *, n_rows + 1);
  self->label_width = 0;
  for (int i = 0; i < n_rows; i++) {
    self->labels[i] = labels && labels[i] ? g_strdup(labels[i]) : g_strdup_printf("%d", i + 1);
    if (n_rows > LABELLED_ROWS_MAX) continue;
    int tw;
    loom_chart_text_size(GTK_WIDGET(self), self->labels[i], &tw, NULL);
    self->label_width = MAX(self->label_width, tw);
  }
  g_free(self->cells);
  self->cells = n_rows ? g_new(float, (gsize)n_rows * LOOM_TICK_RASTER_MAX_COLUMNS) : NULL;
  self->n_rows = n_rows;
  loom_tick_raster_clear(self);
}

int loom_tick_raster_get_n_rows(LoomTickRaster *self) {
  g_return_val_if_fail(LOOM_IS_TICK_RASTER(self), 0);
  return self->n_rows;
}

void loom_tick_raster_push(LoomTickRaster *self, gint64 tick, const float *values, int n_values) {
  g_return_if_fail(LOOM_IS_TICK_RASTER(self));
  g_return_if_fail(values != NULL || n_values == 0);
  if (n_values != self->n_rows) {
    g_warning("LoomTickRaster: a column of %d values refused (%d rows)", n_values, self->n_rows);
    return;
  }
  if (n_values == 0) return;
  float *column = self->cells + (size_t)self->head * (size_t)self->n_rows;
  float top = 0;
  for (int r = 0; r < n_values; r++) {
    const float v = values[r];
    column[r] = isfinite(v) && v >= 0 ? v : NAN;
    if (column[r] > top) top = column[r];
  }
  self->col_max[self->head] = top;
  self->ticks[self->head] = tick;
  self->head = (self->head + 1) % LOOM_TICK_RASTER_MAX_COLUMNS;
  self->n_columns = MIN(self->n_columns + 1, LOOM_TICK_RASTER_MAX_COLUMNS);
  self->max = 0;
  for (int age = 0; age < self->n_columns; age++) self->max = MAX(self->max, self->col_max[slot_of(self, age)]);
  changed(self);
}

void loom_tick_raster_clear(LoomTickRaster *self) {
  g_return_if_fail(LOOM_IS_TICK_RASTER(self));
  self->head = 0;
  self->n_columns = 0;
  self->max = 0;
  changed(self);
}

int loom_tick_raster_get_n_columns(LoomTickRaster *self) {
  g_return_val_if_fail(LOOM_IS_TICK_RASTER(self), 0);
  return self->n_columns;
}

float loom_tick_raster_get_value(LoomTickRaster *self, int row, int age) {
  g_return_val_if_fail(LOOM_IS_TICK_RASTER(self), NAN);
  if (row < 0 || row >= self->n_rows || age < 0 || age >= self->n_columns) return NAN;
  return self->cells[(size_t)slot_of(self, age) * (size_t)self->n_rows + (size_t)row];
}

float loom_tick_raster_get_max(LoomTickRaster *self) {
  g_return_val_if_fail(LOOM_IS_TICK_RASTER(self), 0);
  return self->max;
}

gboolean loom_tick_raster_cell_at(LoomTickRaster *self, double x, double y, int *row, int *age) {
  g_return_val_if_fail(LOOM_IS_TICK_RASTER(self), FALSE);
  if (self->n_rows == 0) return FALSE;
  Layout l;
  layout(self, gtk_widget_get_width(GTK_WIDGET(self)), gtk_widget_get_height(GTK_WIDGET(self)), &l);
  if (x < l.x0 || y < l.y0 || x >= l.x0 + l.w || y >= l.y0 + l.h) return FALSE;
  const int r = MIN((int)((y - l.y0) / l.h * self->n_rows), self->n_rows - 1);
  const int cols = visible_columns(self);
  const int a = cols - 1 - MIN((int)((x - l.x0) / l.w * cols), cols - 1);
  if (a >= self->n_columns) return FALSE;
  if (row) *row = r;
  if (age) *age = a;
  return TRUE;
}

static gboolean on_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip,
                                 gpointer data) {
  (void)keyboard;
  (void)data;
  LoomTickRaster *self = LOOM_TICK_RASTER(widget);
  int row, age;
  if (!loom_tick_raster_cell_at(self, x, y, &row, &age)) return FALSE;
  const float v = loom_tick_raster_get_value(self, row, age);
  char value[LOOM_CHART_LABEL_LEN];
  loom_chart_format(v, 0, value);
  /* TRANSLATORS: the systolic raster's read-out: a slot, a tick and its output norm */
  g_autofree char *text =
      g_strdup_printf(_("%s at tick %lld: %s"), self->labels[row], (long long)self->ticks[slot_of(self, age)],
                      isnan(v) ? _("no value") : value);
  gtk_tooltip_set_text(tooltip, text);
  return TRUE;
}

static void loom_tick_raster_measure(GtkWidget *widget, GtkOrientation orientation, int for_size, int *minimum,
                                     int *natural, int *minimum_baseline, int *natural_baseline) {
  (void)widget;
  (void)for_size;
  *minimum = orientation == GTK_ORIENTATION_HORIZONTAL ? 160 : 60;
  *natural = orientation == GTK_ORIENTATION_HORIZONTAL ? 480 : 160;
  *minimum_baseline = *natural_baseline = -1;
}

static void loom_tick_raster_dispose(GObject *object) {
  g_clear_handle_id(&LOOM_TICK_RASTER(object)->description_source, g_source_remove);
  G_OBJECT_CLASS(loom_tick_raster_parent_class)->dispose(object);
}

static void loom_tick_raster_finalize(GObject *object) {
  LoomTickRaster *self = LOOM_TICK_RASTER(object);
  g_strfreev(self->labels);
  g_free(self->cells);
  g_free(self->col_max);
  g_free(self->ticks);
  G_OBJECT_CLASS(loom_tick_raster_parent_class)->finalize(object);
}

static void loom_tick_raster_class_init(LoomTickRasterClass *klass) {
  G_OBJECT_CLASS(klass)->dispose = loom_tick_raster_dispose;
  G_OBJECT_CLASS(klass)->finalize = loom_tick_raster_finalize;
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  widget_class->snapshot = loom_tick_raster_snapshot;
  widget_class->measure = loom_tick_raster_measure;
  gtk_widget_class_set_accessible_role(widget_class, GTK_ACCESSIBLE_ROLE_IMG);
  gtk_widget_class_set_css_name(widget_class, "loom-tick-raster");
}

static void loom_tick_raster_init(LoomTickRaster *self) {
  self->labels = g_new0(char *, 1);
  self->col_max = g_new0(float, LOOM_TICK_RASTER_MAX_COLUMNS);
  self->ticks = g_new0(gint64, LOOM_TICK_RASTER_MAX_COLUMNS);
  gtk_widget_set_has_tooltip(GTK_WIDGET(self), TRUE);
  g_signal_connect(self, "query-tooltip", G_CALLBACK(on_query_tooltip), NULL);
  gtk_accessible_update_property(GTK_ACCESSIBLE(self), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                 _("Each slot's output over the last ticks"), -1);
  update_description(self);
}
