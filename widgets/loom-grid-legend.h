/*
 * The grid view's legend: what the colours, the bit-depth gauge and the
 * link colours mean, for what the current network contains. A plain box of
 * swatches and labels that LoomGridView shows over its top-left corner.
 */
#pragma once

#include <gtk/gtk.h>

#include "loom-grid-scene.h"

GtkWidget *loom_grid_legend_new(void);
/* Rebuilds the rows for @scene in @color_mode (0 layer type, 1 dtype). */
void loom_grid_legend_update(GtkWidget *legend, const LoomGridScene *scene, int color_mode);
