/*
 * The grid view's legend: what the colours, the bit-depth gauge and the
 * link colours mean, for what the current network contains. A plain box of
 * swatches and labels that LoomGridView shows over its top-left corner.
 */
#pragma once

#include <gtk/gtk.h>

#include "loom-grid-scene.h"

/* What the view shows beyond the scene: rows for them appear when set. */
typedef struct {
  gboolean alerts;    /* alert slots */
  gboolean link_flow; /* arcs drawn by the flow through them */
} LoomGridLegendExtras;

GtkWidget *loom_grid_legend_new(void);
/* Rebuilds the rows for @scene in @color_mode (a LoomGridViewColorMode).
 * In the METRIC mode the first rows are the metric's name and a colour
 * bar, filled in by loom_grid_legend_set_metric(). */
void loom_grid_legend_update(GtkWidget *legend, const LoomGridScene *scene, int color_mode,
                             const LoomGridLegendExtras *extras);
/* The metric's name (NULL: a generic heading) and the range in use (NaN:
 * no values), on a log scale or not. Only redraws the bar and relabels the
 * heading when they changed, so it can run on every update without laying
 * the legend out again. Does nothing outside the METRIC mode. */
void loom_grid_legend_set_metric(GtkWidget *legend, const char *label, double lo, double hi, gboolean log_scale);
