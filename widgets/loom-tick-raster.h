/*
 * LoomTickRaster: a value per row over the last ticks, as a heatmap that
 * scrolls left (rows: the slots of a systolic mesh, columns: its ticks,
 * newest at the right), viridis from 0 to the largest value shown. It
 * makes a wave visible: a signal that needs N ticks to cross N layers
 * draws a diagonal. It takes plain numbers and labels.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LOOM_TYPE_TICK_RASTER (loom_tick_raster_get_type())
G_DECLARE_FINAL_TYPE(LoomTickRaster, loom_tick_raster, LOOM, TICK_RASTER, GtkWidget)

/* Columns kept; older ones scroll out. */
#define LOOM_TICK_RASTER_MAX_COLUMNS 160
/* Rows refused beyond this (a warning; what was shown stays). */
#define LOOM_TICK_RASTER_MAX_ROWS 65536

GtkWidget *loom_tick_raster_new(void);
/* The rows' names, top to bottom (NULL: "1", "2", ...); forgets every
 * column. 0 rows clears. */
void loom_tick_raster_set_rows(LoomTickRaster *self, const char *const *labels, int n_rows);
int loom_tick_raster_get_n_rows(LoomTickRaster *self);
/* A column at @tick: values[0 .. n_rows) (NaN or negative: no value). A
 * count other than the rows' is refused with a warning. */
void loom_tick_raster_push(LoomTickRaster *self, gint64 tick, const float *values, int n_values);
/* Forgets the columns, keeps the rows. */
void loom_tick_raster_clear(LoomTickRaster *self);
int loom_tick_raster_get_n_columns(LoomTickRaster *self);
/* The value at @row in the column @age ticks pushed before the newest (0:
 * the newest); NaN where there is none. */
float loom_tick_raster_get_value(LoomTickRaster *self, int row, int age);
/* The largest value kept: the colour scale's top. */
float loom_tick_raster_get_max(LoomTickRaster *self);
/* The cell under widget point (x, y): its row and its column's age (as
 * above); FALSE outside the cells. */
gboolean loom_tick_raster_cell_at(LoomTickRaster *self, double x, double y, int *row, int *age);

G_END_DECLS
