/*
 * Helpers shared by the chart widgets (LoomPlot, LoomBoundaryView,
 * LoomHistogram, LoomSparkline): compact number labels, 1-2-5 axis ticks,
 * the class palette and text drawn with cairo. Charts draw with cairo so
 * that the screen (gtk_snapshot_append_cairo) and the PNG/SVG exports share
 * one code path.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LOOM_CHART_LABEL_LEN 32
/* The longest a live chart's accessible text lags its data: the texts name
 * values that change with every training snapshot (up to 30 a second), and
 * each change is a message to every assistive technology listening. */
#define LOOM_CHART_ACCESSIBLE_DELAY_MS 1000
#define LOOM_CHART_MAX_TICKS 24
#define LOOM_CHART_N_CLASS_COLORS 10

/* "0", "0.25", "1.2k", "3.5M", "1e-3", "-12": at most about 5 significant
 * characters. @step (0 or NaN: unknown) is the distance to the neighbouring
 * labels; enough decimals are kept to tell them apart. C locale digits. */
void loom_chart_format(double v, double step, char out[LOOM_CHART_LABEL_LEN]);

/* Ticks at multiples of 1, 2 or 5 × 10^k covering [lo, hi] with about
 * @target of them; returns how many were written (≤ LOOM_CHART_MAX_TICKS)
 * and the step in *step. */
int loom_chart_ticks(double lo, double hi, int target, double ticks[LOOM_CHART_MAX_TICKS], double *step);

/* Ticks for a log10 axis over [lo, hi] (both > 0): the decades, and 2 and
 * 5 × 10^k too when fewer than three decades show. */
int loom_chart_log_ticks(double lo, double hi, double ticks[LOOM_CHART_MAX_TICKS]);

/* The ten class colours (a Tableau-10 variant, distinguishable in print and
 * for the common colour-vision deficiencies); class c uses c mod 10. */
void loom_chart_class_color(int cls, float rgb[3]);

/* The widget's foreground colour (the theme's text colour). */
void loom_chart_foreground(GtkWidget *widget, GdkRGBA *fg);

/* Text at (x, y) aligned by @xalign/@yalign (0 left/top .. 1 right/bottom)
 * with the widget's font; returns the text's width in pixels. */
double loom_chart_text(cairo_t *cr, GtkWidget *widget, const char *text, double x, double y, double xalign,
                       double yalign);
/* The pixel size of @text in the widget's font. */
void loom_chart_text_size(GtkWidget *widget, const char *text, int *width, int *height);

/* What @draw paints on a w × h canvas, rasterized now at the widget's scale
 * factor, as a texture node. The live charts use this instead of
 * gtk_snapshot_append_cairo: GSK uploads a texture once, while its cairo
 * (fallback) path made a frame with a cached cairo node over a texture that
 * had just changed cost 20 ms in the swap on the H100 machine
 * (bench-responsive; docs/grid-view.md). NULL when the canvas is empty. */
GskRenderNode *loom_chart_texture_node(GtkWidget *widget, int w, int h, void (*draw)(cairo_t *cr, gpointer data),
                                       gpointer data);

G_END_DECLS
