/*
 * LoomPlot's drawing, one cairo path for the screen (through
 * gtk_snapshot_append_cairo) and the PNG/SVG exports: frame, 1-2-5 ticks,
 * decimated lines, markers, legend, title and the hover read-out.
 */
#include "loom-chart-private.h"
#include "loom-plot-private.h"

#include <glib/gi18n-lib.h>
#include <math.h>

#define PAD 6.0
#define TICK_GAP 4.0
#define LEGEND_SWATCH 16.0
#define LEGEND_SWATCH_GAP 4.0 /* swatch to its label */
#define LEGEND_ENTRY_GAP 12.0 /* one entry to the next */

typedef struct {
  LoomPlotFrame f;
  double xt[LOOM_CHART_MAX_TICKS], yt[LOOM_CHART_MAX_TICKS];
  int nxt, nyt;
  double xstep, ystep; /* 0 on a log axis */
  double text_h;
  gboolean title_in_legend_row; /* title left, legend right, one row */
  gboolean show_x_label, show_y_label;
} Layout;

static void data_range(LoomPlot *self, LoomPlotFrame *f) {
  double xlo = INFINITY, xhi = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
  for (guint i = 0; i < self->series->len; i++) {
    const LoomPlotSeries *s = g_ptr_array_index(self->series, i);
    if (s->x.len == 0) continue;
    xlo = MIN(xlo, s->x_min);
    xhi = MAX(xhi, s->x_max);
    double lo = self->log_scale ? s->raw.min_pos : s->raw.min;
    if (!isnan(lo)) ylo = MIN(ylo, lo);
    if (!isnan(s->raw.max) && (!self->log_scale || s->raw.max > 0)) yhi = MAX(yhi, s->raw.max);
  }
  for (guint i = 0; i < self->markers->len; i++) {
    double x = g_array_index(self->markers, LoomPlotMarker, i).x;
    xlo = MIN(xlo, x);
    xhi = MAX(xhi, x);
  }
  f->empty = !(ylo <= yhi);
  if (!(xlo <= xhi)) xlo = 0, xhi = 1;
  /* The right end grows in steps of about an eighth of the span (1, 2 or
   * 5 × 10^k): a live curve grows into its axis, and between steps the
   * pixel columns, the ticks and the decimation of what is already drawn
   * stay put (loom_plot_series_line then only extends its last columns). */
  if (xhi > xlo && isfinite(xhi - xlo)) {
    double v = (xhi - xlo) / 8, mag = pow(10, floor(log10(v))), norm = v / mag;
    double step = (norm < 1.5 ? 1 : norm < 3.5 ? 2 : norm < 7.5 ? 5 : 10) * mag;
    double end = ceil(xhi / step) * step;
    if (isfinite(end) && end > xhi) xhi = end;
  }
  if (xlo == xhi) xlo -= 0.5, xhi += 0.5;
  f->x0 = xlo;
  f->x1 = xhi;
  f->log_scale = self->log_scale;
  if (self->log_scale) {
    if (f->empty) ylo = 1, yhi = 10;
    ylo = log10(ylo);
    yhi = log10(yhi);
  } else if (f->empty) {
    ylo = 0, yhi = 1;
  }
  if (ylo == yhi) ylo -= 0.5, yhi += 0.5;
  double margin = (yhi - ylo) * 0.05;
  ylo -= margin;
  yhi += margin;
  /* A fixed end replaces the automatic one; on a log axis only if positive. */
  if (!isnan(self->y_min) && (!self->log_scale || self->y_min > 0))
    ylo = self->log_scale ? log10(self->y_min) : self->y_min;
  if (!isnan(self->y_max) && (!self->log_scale || self->y_max > 0))
    yhi = self->log_scale ? log10(self->y_max) : self->y_max;
  if (!(yhi > ylo)) yhi = ylo + 1;
  f->y0 = ylo;
  f->y1 = yhi;
}

static void y_ticks(Layout *l) {
  if (l->f.log_scale) {
    l->nyt = loom_chart_log_ticks(pow(10, l->f.y0), pow(10, l->f.y1), l->yt);
    l->ystep = 0;
  } else {
    l->nyt = loom_chart_ticks(l->f.y0, l->f.y1, MAX(2, (int)(l->f.fh / 40)), l->yt, &l->ystep);
  }
}

static double legend_width(LoomPlot *self) {
  double width = 0;
  for (guint i = 0; i < self->series->len; i++) {
    const LoomPlotSeries *s = g_ptr_array_index(self->series, i);
    int tw;
    loom_chart_text_size(GTK_WIDGET(self), s->label, &tw, NULL);
    width += (i > 0 ? LEGEND_ENTRY_GAP : 0) + LEGEND_SWATCH + LEGEND_SWATCH_GAP + tw;
  }
  return width;
}

static void compute_layout(LoomPlot *self, int w, int h, Layout *l) {
  GtkWidget *widget = GTK_WIDGET(self);
  int th;
  loom_chart_text_size(widget, "0", NULL, &th);
  l->text_h = th;
  data_range(self, &l->f);
  gboolean has_title = self->title && *self->title, has_legend = self->series->len > 0;
  /* Where the title and the legend fit side by side they share a row: in
   * the training pane's short plots that row is a third of the frame. */
  l->title_in_legend_row = FALSE;
  if (has_title && has_legend) {
    int title_w;
    loom_chart_text_size(widget, self->title, &title_w, NULL);
    l->title_in_legend_row = PAD + title_w + 24 + legend_width(self) <= w - PAD - th;
  }
  double top = PAD + th / 2.0;
  if (has_title && !l->title_in_legend_row) top += th + TICK_GAP;
  if (has_legend) top += th + TICK_GAP;
  double bottom = PAD + th + TICK_GAP;
  /* The x axis's name gives its row to the data where the frame would
   * otherwise be under three rows of text (the training pane's plots in a
   * small window; the pane names the axis beside them). */
  l->show_x_label = self->x_label && *self->x_label && h - top - bottom - (th + TICK_GAP) >= 3 * th;
  if (l->show_x_label) bottom += th + TICK_GAP;
  l->f.fy = top;
  l->f.fh = MAX(1.0, h - top - bottom);
  y_ticks(l);
  int label_w = 0;
  for (int i = 0; i < l->nyt; i++) {
    char text[LOOM_CHART_LABEL_LEN];
    loom_chart_format(l->yt[i], l->ystep, text);
    int tw;
    loom_chart_text_size(widget, text, &tw, NULL);
    label_w = MAX(label_w, tw);
  }
  double left = PAD + label_w + TICK_GAP;
  /* Likewise the y axis's name where the frame would be under eight rows'
   * height wide (the title above names the curve). */
  l->show_y_label = self->y_label && *self->y_label && w - left - PAD - th - (th + TICK_GAP) >= 8 * th;
  if (l->show_y_label) left += th + TICK_GAP;
  l->f.fx = left;
  /* Room on the right for half of the last x tick's label (compact: "1k"). */
  l->f.fw = MAX(1.0, w - left - PAD - th);
  l->nxt = loom_chart_ticks(l->f.x0, l->f.x1, MAX(2, (int)(l->f.fw / 90)), l->xt, &l->xstep);
}

void loom_plot_layout(LoomPlot *self, int w, int h, LoomPlotFrame *frame) {
  Layout l;
  compute_layout(self, w, h, &l);
  *frame = l.f;
}

static double map_x(const LoomPlotFrame *f, double x) {
  return f->fx + (x - f->x0) / (f->x1 - f->x0) * f->fw;
}

static double map_y(const LoomPlotFrame *f, double y) {
  double v = f->log_scale ? log10(y) : y;
  return f->fy + f->fh - (v - f->y0) / (f->y1 - f->y0) * f->fh;
}

static void set_rgba(cairo_t *cr, const GdkRGBA *c, double alpha) {
  cairo_set_source_rgba(cr, c->red, c->green, c->blue, c->alpha * alpha);
}

static void marker_color(LoomPlotMarkerKind kind, const GdkRGBA *fg, GdkRGBA *out) {
  switch (kind) {
  case LOOM_PLOT_MARKER_RESTART: *out = (GdkRGBA){0.20, 0.47, 0.85, 1}; break;
  case LOOM_PLOT_MARKER_EXPLOSION: *out = (GdkRGBA){0.88, 0.11, 0.14, 1}; break;
  case LOOM_PLOT_MARKER_TASK_CHANGE: *out = (GdkRGBA){0.57, 0.25, 0.67, 1}; break;
  case LOOM_PLOT_MARKER_RECOVERED: *out = (GdkRGBA){0.18, 0.62, 0.27, 1}; break;
  default: *out = *fg; out->alpha *= 0.6; break;
  }
}

static const char *marker_name(LoomPlotMarkerKind kind) {
  switch (kind) {
  case LOOM_PLOT_MARKER_RESTART: return _("Restart");
  case LOOM_PLOT_MARKER_EXPLOSION: return _("Explosion");
  case LOOM_PLOT_MARKER_TASK_CHANGE: return _("Task change");
  case LOOM_PLOT_MARKER_RECOVERED: return _("Recovered");
  default: return _("Event");
  }
}

static void draw_axes(LoomPlot *self, cairo_t *cr, const Layout *l, const GdkRGBA *fg) {
  GtkWidget *widget = GTK_WIDGET(self);
  const LoomPlotFrame *f = &l->f;
  cairo_set_line_width(cr, 1);
  for (int i = 0; i < l->nyt; i++) {
    double y = round(map_y(f, l->yt[i])) + 0.5;
    set_rgba(cr, fg, 0.12);
    cairo_move_to(cr, f->fx, y);
    cairo_line_to(cr, f->fx + f->fw, y);
    cairo_stroke(cr);
    char text[LOOM_CHART_LABEL_LEN];
    loom_chart_format(l->yt[i], l->ystep, text);
    set_rgba(cr, fg, 0.75);
    loom_chart_text(cr, widget, text, f->fx - TICK_GAP, y, 1, 0.5);
  }
  for (int i = 0; i < l->nxt; i++) {
    double x = round(map_x(f, l->xt[i])) + 0.5;
    set_rgba(cr, fg, 0.12);
    cairo_move_to(cr, x, f->fy);
    cairo_line_to(cr, x, f->fy + f->fh);
    cairo_stroke(cr);
    char text[LOOM_CHART_LABEL_LEN];
    loom_chart_format(l->xt[i], l->xstep, text);
    set_rgba(cr, fg, 0.75);
    loom_chart_text(cr, widget, text, x, f->fy + f->fh + TICK_GAP, 0.5, 0);
  }
  set_rgba(cr, fg, 0.45);
  cairo_rectangle(cr, round(f->fx) + 0.5, round(f->fy) + 0.5, round(f->fw), round(f->fh));
  cairo_stroke(cr);
  set_rgba(cr, fg, 0.9);
  if (l->show_x_label)
    loom_chart_text(cr, widget, self->x_label, f->fx + f->fw / 2, f->fy + f->fh + TICK_GAP * 2 + l->text_h, 0.5, 0);
  if (l->show_y_label) {
    cairo_save(cr);
    cairo_translate(cr, PAD, f->fy + f->fh / 2);
    cairo_rotate(cr, -G_PI / 2);
    loom_chart_text(cr, widget, self->y_label, 0, 0, 0.5, 0);
    cairo_restore(cr);
  }
  if (self->title && *self->title) {
    if (l->title_in_legend_row)
      loom_chart_text(cr, widget, self->title, PAD, f->fy - TICK_GAP - l->text_h, 0, 0);
    else
      loom_chart_text(cr, widget, self->title, f->fx + f->fw / 2, PAD, 0.5, 0);
  }
}

static void draw_markers(LoomPlot *self, cairo_t *cr, const Layout *l, const GdkRGBA *fg) {
  const LoomPlotFrame *f = &l->f;
  static const double dash[] = {3, 3};
  /* Thousands of markers may fall on a few hundred pixel columns: one line
   * per column and kind, and a label only where it does not overlap the
   * previous one, so a frame's cost is bounded by the plot's width. */
  double last_x[8], label_end = -G_MAXDOUBLE;
  for (int k = 0; k < 8; k++) last_x[k] = -G_MAXDOUBLE;
  for (guint i = 0; i < self->markers->len; i++) {
    const LoomPlotMarker *m = &g_array_index(self->markers, LoomPlotMarker, i);
    double x = round(map_x(f, m->x)) + 0.5;
    if (x < f->fx - 1 || x > f->fx + f->fw + 1) continue;
    int k = (int)m->kind & 7;
    if (x == last_x[k]) continue;
    last_x[k] = x;
    GdkRGBA c;
    marker_color(m->kind, fg, &c);
    set_rgba(cr, &c, 0.8);
    cairo_set_line_width(cr, 1);
    cairo_set_dash(cr, dash, 2, 0);
    cairo_move_to(cr, x, f->fy);
    cairo_line_to(cr, x, f->fy + f->fh);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    cairo_move_to(cr, x - 4, f->fy);
    cairo_line_to(cr, x + 4, f->fy);
    cairo_line_to(cr, x, f->fy + 6);
    cairo_close_path(cr);
    cairo_fill(cr);
    /* Either side overlaps the previous label where the right one does:
     * decided before the text is measured (a layout per marker column). */
    if (x + 3 < label_end) continue;
    const char *text = m->label && *m->label ? m->label : marker_name(m->kind);
    int tw;
    loom_chart_text_size(GTK_WIDGET(self), text, &tw, NULL);
    /* Right of the line, or left of it where the frame ends first (a
     * restart near the newest step was cut off at the plot's edge). */
    double left = x + 3 + tw <= f->fx + f->fw ? x + 3 : MAX(f->fx, x - 3 - tw);
    if (left < label_end) continue;
    loom_chart_text(cr, GTK_WIDGET(self), text, left, f->fy + 6, 0, 0);
    label_end = left + tw + 4;
  }
}

/* A line with more vertices than pixel columns (decimated, or dense) is
 * filled as one band instead of stroked: per column, from the highest to
 * the lowest of its vertices and of the previous column's last one (what
 * joins them), widened by the line width. Cairo's stroker spent 80 % of a
 * frame on the zig-zag of a decimated noisy loss (50-100 ms at 520 px);
 * the band covers the same pixels with 4 vertices per column, keeps every
 * extreme visible, and a dashed series keeps its dashes along x. Returns
 * FALSE (nothing drawn) when the line has an empty column between its
 * ends or x goes back: those are stroked. */
static gboolean fill_band(cairo_t *cr, const LoomPlotFrame *f, const double *p, gsize n, gboolean dashed,
                          double width) {
  int columns = (int)ceil(f->fw);
  if (columns <= 0 || n <= (gsize)columns) return FALSE;
  double *top = g_new(double, 2 * (gsize)columns), *bottom = top + columns;
  for (int c = 0; c < columns; c++) top[c] = INFINITY, bottom[c] = -INFINITY;
  int first = -1, last = -1;
  double prev_x = -INFINITY, prev_y = NAN;
  gboolean ok = TRUE;
  for (gsize i = 0; i < n && ok; i++) {
    double x = map_x(f, p[2 * i]), y = map_y(f, p[2 * i + 1]);
    if (x < prev_x) ok = FALSE;
    int c = CLAMP((int)floor(x - f->fx), 0, columns - 1);
    if (first < 0) first = c;
    if (c != last && last >= 0 && !isnan(prev_y)) {
      if (c > last + 1) ok = FALSE; /* an empty column: a stroke joins across it */
      top[c] = MIN(top[c], prev_y);
      bottom[c] = MAX(bottom[c], prev_y);
    }
    top[c] = MIN(top[c], y);
    bottom[c] = MAX(bottom[c], y);
    last = c;
    prev_x = x;
    prev_y = y;
  }
  if (ok) {
    /* a dash of 6 columns every 10, as the stroke's 6-on 4-off pattern */
    for (int c = first; c <= last;) {
      int end = last + 1;
      if (dashed) {
        if ((c - first) % 10 >= 6) {
          c++;
          continue;
        }
        end = MIN(end, c + 6 - (c - first) % 10);
      }
      cairo_move_to(cr, f->fx + c, top[c] - width / 2);
      for (int k = c; k < end; k++) {
        cairo_line_to(cr, f->fx + k, top[k] - width / 2);
        cairo_line_to(cr, f->fx + k + 1, top[k] - width / 2);
      }
      for (int k = end - 1; k >= c; k--) {
        cairo_line_to(cr, f->fx + k + 1, bottom[k] + width / 2);
        cairo_line_to(cr, f->fx + k, bottom[k] + width / 2);
      }
      cairo_close_path(cr);
      c = end;
    }
    cairo_fill(cr);
  }
  g_free(top);
  return ok;
}

static gsize draw_line(cairo_t *cr, const LoomPlotFrame *f, const GArray *v, const LoomPlotSeries *s, double alpha,
                       double width) {
  static const double dash[] = {6, 4};
  gsize n = v->len / 2;
  if (n == 0) return 0;
  const double *p = (const double *)v->data;
  set_rgba(cr, &s->color, alpha);
  if (fill_band(cr, f, p, n, s->dashed, width)) return n;
  cairo_set_line_width(cr, width);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  cairo_set_dash(cr, s->dashed ? dash : NULL, s->dashed ? 2 : 0, 0);
  cairo_move_to(cr, map_x(f, p[0]), map_y(f, p[1]));
  for (gsize i = 1; i < n; i++) cairo_line_to(cr, map_x(f, p[2 * i]), map_y(f, p[2 * i + 1]));
  if (n == 1) cairo_line_to(cr, map_x(f, p[0]) + 0.01, map_y(f, p[1]));
  cairo_stroke(cr);
  cairo_set_dash(cr, NULL, 0, 0);
  return n;
}

static gsize draw_series(LoomPlot *self, cairo_t *cr, const Layout *l) {
  const LoomPlotFrame *f = &l->f;
  int columns = (int)ceil(f->fw);
  gsize vertices = 0;
  cairo_save(cr);
  cairo_rectangle(cr, f->fx, f->fy, f->fw, f->fh);
  cairo_clip(cr);
  gboolean smoothed = self->smoothing > 0;
  for (guint i = 0; i < self->series->len; i++) {
    LoomPlotSeries *s = g_ptr_array_index(self->series, i);
    const GArray *raw = loom_plot_series_line(s, 0, f->x0, f->x1, columns, f->log_scale);
    /* Smoothing draws the raw line faint under the smoothed one, as TensorBoard does. */
    vertices += draw_line(cr, f, raw, s, smoothed ? 0.25 : 1.0, smoothed ? 1.0 : 1.5);
    if (smoothed)
      vertices += draw_line(cr, f, loom_plot_series_line(s, 1, f->x0, f->x1, columns, f->log_scale), s, 1.0, 1.75);
  }
  cairo_restore(cr);
  return vertices;
}

static void draw_legend(LoomPlot *self, cairo_t *cr, const Layout *l, const GdkRGBA *fg) {
  GtkWidget *widget = GTK_WIDGET(self);
  double y = l->f.fy - TICK_GAP - l->text_h;
  double x = l->f.fx + l->f.fw;
  static const double dash[] = {4, 3};
  for (int i = (int)self->series->len - 1; i >= 0; i--) {
    const LoomPlotSeries *s = g_ptr_array_index(self->series, i);
    int tw;
    loom_chart_text_size(widget, s->label, &tw, NULL);
    x -= tw;
    set_rgba(cr, fg, 0.9);
    loom_chart_text(cr, widget, s->label, x, y, 0, 0);
    x -= LEGEND_SWATCH + LEGEND_SWATCH_GAP;
    set_rgba(cr, &s->color, 1);
    cairo_set_line_width(cr, 2);
    cairo_set_dash(cr, s->dashed ? dash : NULL, s->dashed ? 2 : 0, 0);
    cairo_move_to(cr, x, y + l->text_h / 2);
    cairo_line_to(cr, x + LEGEND_SWATCH, y + l->text_h / 2);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    x -= LEGEND_ENTRY_GAP;
  }
}

gboolean loom_plot_readout_in(LoomPlot *self, const LoomPlotFrame *f, double px, double *x, double *values,
                              int n_values) {
  if (px < f->fx || px > f->fx + f->fw) return FALSE;
  double want = f->x0 + (px - f->fx) / f->fw * (f->x1 - f->x0);
  double best_x = NAN;
  for (guint i = 0; i < self->series->len; i++) {
    const LoomPlotSeries *s = g_ptr_array_index(self->series, i);
    gsize idx;
    if (!loom_plot_series_nearest(s, want, &idx)) continue;
    double xi = loom_big_array_index(&s->x, double, idx);
    if (isnan(best_x) || fabs(xi - want) < fabs(best_x - want)) best_x = xi;
  }
  if (isnan(best_x)) return FALSE;
  if (x) *x = best_x;
  for (int i = 0; i < n_values; i++) {
    values[i] = NAN;
    if ((guint)i >= self->series->len) continue;
    const LoomPlotSeries *s = g_ptr_array_index(self->series, i);
    gsize idx;
    if (loom_plot_series_nearest(s, best_x, &idx)) values[i] = loom_big_array_index(&s->raw.y, double, idx);
  }
  return TRUE;
}

/* The vertical rule at the nearest point and a box with its x and every
 * series' value, placed beside the rule on the side with room. */
static void draw_readout(LoomPlot *self, cairo_t *cr, const Layout *l, const GdkRGBA *fg, double px) {
  guint n = self->series->len;
  g_autofree double *values = g_new(double, MAX(n, 1));
  double x;
  if (!loom_plot_readout_in(self, &l->f, px, &x, values, (int)n)) return;
  const LoomPlotFrame *f = &l->f;
  double rx = round(map_x(f, x)) + 0.5;
  set_rgba(cr, fg, 0.6);
  cairo_set_line_width(cr, 1);
  cairo_move_to(cr, rx, f->fy);
  cairo_line_to(cr, rx, f->fy + f->fh);
  cairo_stroke(cr);

  GPtrArray *lines = g_ptr_array_new_with_free_func(g_free);
  char num[LOOM_CHART_LABEL_LEN];
  loom_chart_format(x, 0, num);
  g_ptr_array_add(lines, g_strdup_printf("x = %s", num));
  gsize hidden = 0;
  for (guint i = 0; i < n; i++) {
    const LoomPlotSeries *s = g_ptr_array_index(self->series, i);
    loom_chart_format(values[i], 0, num);
    if (self->log_scale && values[i] <= 0)
      /* TRANSLATORS: a series' value under the pointer that a log axis cannot show */
      g_ptr_array_add(lines, g_strdup_printf(_("%s: %s (not on log axis)"), s->label, num));
    else
      g_ptr_array_add(lines, g_strdup_printf("%s: %s", s->label, num));
    hidden += s->raw.n_nonpos;
  }
  if (self->log_scale && hidden > 0)
    g_ptr_array_add(lines, g_strdup_printf(g_dngettext(GETTEXT_PACKAGE, "%llu value ≤ 0 not drawn", "%llu values ≤ 0 not drawn", hidden),
                                           (unsigned long long)hidden));
  GtkWidget *widget = GTK_WIDGET(self);
  double box_w = 0;
  for (guint i = 0; i < lines->len; i++) {
    int tw;
    loom_chart_text_size(widget, g_ptr_array_index(lines, i), &tw, NULL);
    box_w = MAX(box_w, tw + 14);
  }
  box_w += 8;
  double box_h = lines->len * l->text_h + 8;
  double bx = rx + 8 + box_w <= f->fx + f->fw ? rx + 8 : rx - 8 - box_w;
  double by = f->fy + 8;
  /* The inverse of the text colour: light box on a light theme, dark on a dark one. */
  cairo_set_source_rgba(cr, 1 - fg->red, 1 - fg->green, 1 - fg->blue, 0.88);
  cairo_rectangle(cr, bx, by, box_w, box_h);
  cairo_fill_preserve(cr);
  set_rgba(cr, fg, 0.4);
  cairo_stroke(cr);
  for (guint i = 0; i < lines->len; i++) {
    double ty = by + 4 + i * l->text_h;
    if (i >= 1 && i <= n) {
      const LoomPlotSeries *s = g_ptr_array_index(self->series, i - 1);
      set_rgba(cr, &s->color, 1);
      cairo_rectangle(cr, bx + 4, ty + l->text_h / 2 - 4, 8, 8);
      cairo_fill(cr);
    }
    set_rgba(cr, fg, 1);
    loom_chart_text(cr, widget, g_ptr_array_index(lines, i), bx + 18, ty, 0, 0);
  }
  g_ptr_array_unref(lines);
}

gsize loom_plot_draw(LoomPlot *self, cairo_t *cr, int w, int h, const GdkRGBA *fg, double hover_x,
                     LoomPlotFrame *frame, LoomPlotParts parts) {
  Layout l;
  compute_layout(self, w, h, &l);
  *frame = l.f;
  gsize vertices = 0;
  if (parts & LOOM_PLOT_PART_CHROME) {
    draw_axes(self, cr, &l, fg);
    draw_markers(self, cr, &l, fg);
    /* above the frame: the lines never cover it */
    if (self->series->len > 0) draw_legend(self, cr, &l, fg);
  }
  if (parts & LOOM_PLOT_PART_LINES) vertices = draw_series(self, cr, &l);
  if ((parts & LOOM_PLOT_PART_READOUT) && !isnan(hover_x)) draw_readout(self, cr, &l, fg, hover_x);
  return vertices;
}

char *loom_plot_summary(LoomPlot *self) {
  const char *title = self->title && *self->title ? self->title : _("Plot");
  GString *out = g_string_new(title);
  gboolean any = FALSE;
  for (guint i = 0; i < self->series->len; i++) {
    const LoomPlotSeries *s = g_ptr_array_index(self->series, i);
    if (s->x.len == 0) continue;
    char y[LOOM_CHART_LABEL_LEN], x[LOOM_CHART_LABEL_LEN];
    loom_chart_format(loom_big_array_index(&s->raw.y, double, s->raw.y.len - 1), 0, y);
    loom_chart_format(loom_big_array_index(&s->x, double, s->x.len - 1), 0, x);
    g_string_append(out, any ? "; " : ": ");
    /* TRANSLATORS: a series' latest value in a chart's accessible summary, e.g. "loss 0.12 at 1.2k" */
    g_string_append_printf(out, _("%s %s at %s"), s->label, y, x);
    any = TRUE;
  }
  if (!any) {
    g_string_free(out, TRUE);
    /* TRANSLATORS: accessible summary of a chart without points; %s is its title */
    return g_strdup_printf(_("%s: no data yet"), title);
  }
  return g_string_free(out, FALSE);
}
