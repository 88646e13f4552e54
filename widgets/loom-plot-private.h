/*
 * LoomPlot internals shared by loom-plot.c (the widget), loom-plot-data.c
 * (point storage and decimation), loom-plot-draw.c (cairo drawing) and
 * loom-plot-export.c, plus hooks for the tests.
 */
#pragma once

#include "loom-big-array.h"
#include "loom-plot.h"

G_BEGIN_DECLS

/* Level-0 buckets summarise 8 points; level k buckets 8·2^k. */
#define LOOM_PLOT_BUCKET_SHIFT 3
#define LOOM_PLOT_NO_INDEX G_MAXUINT32
/* Indices are 32-bit in the buckets: a series holds fewer points. */
#define LOOM_PLOT_MAX_POINTS ((gsize)G_MAXUINT32 - 1)
/* Enough pyramid levels for that many points: 8·2^28 ≥ 2^31, and one more
 * level for each further doubling up to 2^32. */
#define LOOM_PLOT_LEVELS 30

/* Indices of the smallest and largest finite y of a run of points, and of
 * the smallest positive one (what a log axis shows); NO_INDEX when none. */
typedef struct {
  guint32 imin, imax, iminpos;
} LoomPlotBucket;

/* One line's y values with its min/max pyramid: complete buckets only, a
 * level-k bucket made from two level-(k-1) buckets when the second one
 * completes, so appending is O(1) amortized and any index range's extremes
 * come from O(log n) buckets plus at most 2·8 raw points. */
typedef struct {
  LoomBigArray y;                        /* double */
  LoomBigArray levels[LOOM_PLOT_LEVELS]; /* LoomPlotBucket, level 0 first */
  guint n_levels;                        /* levels with buckets */
  double min, max;  /* finite values; NaN while none */
  double min_pos;   /* smallest positive value; NaN while none */
  gsize n_nonpos;   /* finite values <= 0: not drawn on a log axis */
} LoomPlotTrack;

/* What the last draw of a line was computed for. */
typedef struct {
  gsize n_points;
  double x0, x1;
  int width;
  gboolean log_scale;
  gboolean valid;
  /* By columns only: where the last column with points begins (its column,
   * its first point, its first value in the vertex array), so that points
   * appended under the same key redo that column and add new ones. */
  gboolean by_columns;
  int tail_column;
  gsize tail_first, tail_out;
} LoomPlotCacheKey;

typedef struct {
  char *label;
  GdkRGBA color;
  gboolean dashed;
  LoomBigArray x; /* double */
  gboolean sorted; /* x never decreased */
  double x_min, x_max;
  LoomPlotTrack raw;
  LoomPlotTrack smooth; /* EMA of raw; empty while smoothing is 0 */
  double ema, ema_wpow; /* running EMA and w^k, k finite values: debiasing as TensorBoard */
  /* The decimated vertices (x, y interleaved) of the last draw, per track. */
  GArray *line[2];
  LoomPlotCacheKey line_key[2];
} LoomPlotSeries;

typedef struct {
  double x;
  LoomPlotMarkerKind kind;
  char *label;
} LoomPlotMarker;

/* Where the data lands on a canvas of a given size. */
typedef struct {
  double fx, fy, fw, fh; /* the plotting frame */
  double x0, x1, y0, y1; /* data range shown (y in log10 units on a log axis) */
  gboolean log_scale;
  gboolean empty;
} LoomPlotFrame;

struct _LoomPlot {
  GtkWidget parent_instance;

  GPtrArray *series; /* LoomPlotSeries* */
  GArray *markers;   /* LoomPlotMarker */
  char *title, *x_label, *y_label;
  double smoothing;
  gboolean log_scale;
  double y_min, y_max; /* NaN: automatic */

  LoomPlotFrame frame; /* of the last on-screen draw */
  double hover_x;      /* widget x of the pointer; NaN when outside */
  gsize drawn_vertices;
  guint summary_idle;

  /* Axes, markers and legend as one texture node, kept while its key
   * holds: between the x axis's steps only the lines change. */
  guint chrome_serial; /* bumped by series, markers, titles and labels */
  GskRenderNode *chrome;
  struct LoomPlotChromeKey {
    int w, h;
    GdkRGBA fg;
    LoomPlotFrame frame;
    guint serial;
  } chrome_key;
};

/* What loom_plot_draw draws: the screen keeps the chrome in a node of its
 * own; the exports draw everything. */
typedef enum {
  LOOM_PLOT_PART_CHROME = 1 << 0,  /* axes, ticks, labels, title, markers, legend */
  LOOM_PLOT_PART_LINES = 1 << 1,   /* the series */
  LOOM_PLOT_PART_READOUT = 1 << 2, /* the hover read-out */
  LOOM_PLOT_PART_ALL = 7
} LoomPlotParts;

/* ---- loom-plot-data.c ---- */
LoomPlotSeries *loom_plot_series_new(const char *label, const GdkRGBA *color, gboolean dashed);
void loom_plot_series_free(LoomPlotSeries *s);
void loom_plot_series_clear(LoomPlotSeries *s);
gboolean loom_plot_series_append(LoomPlotSeries *s, double x, double y, double smoothing);
/* Recomputes the smoothed track for a new smoothing weight (O(points)). */
void loom_plot_series_resmooth(LoomPlotSeries *s, double smoothing);
/* The vertices to draw for @track (0 raw, 1 smoothed) over x in [x0, x1]
 * on @width pixel columns: every point when few, else per column its
 * first, lowest, highest and last point in index order. Cached. */
const GArray *loom_plot_series_line(LoomPlotSeries *s, int track, double x0, double x1, int width,
                                    gboolean log_scale);
/* Index of the point whose x is nearest to @x; FALSE when none. */
gboolean loom_plot_series_nearest(const LoomPlotSeries *s, double x, gsize *index);

/* ---- loom-plot-draw.c ---- */
/* Lays out and draws @parts of the chart on @cr (w × h); @hover_x is the
 * pointer's x or NaN. @frame receives the layout used. Returns the line
 * vertices drawn. */
gsize loom_plot_draw(LoomPlot *self, cairo_t *cr, int w, int h, const GdkRGBA *fg, double hover_x,
                     LoomPlotFrame *frame, LoomPlotParts parts);
/* The frame for a canvas w × h without drawing. */
void loom_plot_layout(LoomPlot *self, int w, int h, LoomPlotFrame *frame);
/* The read-out at widget x @px for a chart laid out as @frame. */
gboolean loom_plot_readout_in(LoomPlot *self, const LoomPlotFrame *frame, double px, double *x, double *values,
                              int n_values);
/* "Loss 0.123 at 1.2k; accuracy 0.91 at 1.2k": the accessible summary. */
char *loom_plot_summary(LoomPlot *self);

/* ---- test hooks ---- */
/* Line vertices (all series, raw and smoothed) of the last on-screen draw. */
gsize loom_plot_get_drawn_vertices(LoomPlot *self);
/* The vertices (x, y interleaved, *n pairs) of @series' raw line in the
 * last draw, on screen or exported; NULL before any. */
const double *loom_plot_get_drawn_line(LoomPlot *self, int series, gsize *n);

G_END_DECLS
