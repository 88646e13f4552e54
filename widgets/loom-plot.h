/*
 * LoomPlot: line charts of training metrics (loss, accuracy, ...) against a
 * step or time axis. Series of (x, y) points appended live; markers for
 * events (restarts, explosions, task changes); TensorBoard-style smoothing;
 * linear or log10 y axis; a hover read-out; PNG, SVG and CSV export.
 *
 * Built to stay smooth with 10^6 points per series: drawing goes through a
 * min/max decimation per pixel column, so a redraw costs O(width), not
 * O(points). The x values of a series are expected to be non-decreasing
 * (steps); a series that goes back in x is still drawn exactly, but each
 * redraw then scans its points. See docs/widgets-charts.md.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LOOM_TYPE_PLOT (loom_plot_get_type())
G_DECLARE_FINAL_TYPE(LoomPlot, loom_plot, LOOM, PLOT, GtkWidget)

typedef enum {
  LOOM_PLOT_MARKER_RESTART,
  LOOM_PLOT_MARKER_EXPLOSION,
  LOOM_PLOT_MARKER_TASK_CHANGE,
  LOOM_PLOT_MARKER_RECOVERED,
  LOOM_PLOT_MARKER_OTHER,
} LoomPlotMarkerKind;

GtkWidget *loom_plot_new(void);

/* A new series drawn in @color (NULL: the next class colour), dashed or
 * solid; returns its id (0, 1, 2, ...). */
int loom_plot_add_series(LoomPlot *self, const char *label, const GdkRGBA *color, gboolean dashed);
/* O(1) amortized. Non-finite y values are kept (exported) but not drawn. */
void loom_plot_append(LoomPlot *self, int series, double x, double y);
void loom_plot_append_many(LoomPlot *self, int series, const double *x, const double *y, gsize n);
/* Forgets all points and markers; keeps the series. */
void loom_plot_clear(LoomPlot *self);
gsize loom_plot_get_n_points(LoomPlot *self, int series);
int loom_plot_get_n_series(LoomPlot *self);

void loom_plot_add_marker(LoomPlot *self, double x, LoomPlotMarkerKind kind, const char *label);
gsize loom_plot_get_n_markers(LoomPlot *self);

/* The read-out under the pointer at @widget_x: the x of the point nearest
 * to it (over all series) and each series' raw value there (its point
 * nearest to that x; NaN for a series without points). FALSE when
 * @widget_x lies outside the plotting area or there are no points. */
gboolean loom_plot_get_readout(LoomPlot *self, double widget_x, double *x, double *values, int n_values);

/* The chart as exported, at any size: the screen's drawing code with a
 * light background and dark text, whatever the theme; no hover read-out. */
GdkTexture *loom_plot_render_texture(LoomPlot *self, int width, int height);
gboolean loom_plot_export_png(LoomPlot *self, const char *path, int width, int height, GError **error);
gboolean loom_plot_export_svg(LoomPlot *self, const char *path, int width, int height, GError **error);
/* All raw points. When every series has the same x values: a header
 * "x,<label 1>,<label 2>,..." and one row per x. Otherwise one row per
 * point: header "series,x,y", the series' label in the first column. */
gboolean loom_plot_export_csv(LoomPlot *self, const char *path, GError **error);

G_END_DECLS
