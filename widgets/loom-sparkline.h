/*
 * LoomSparkline: a tiny line of the last N values of a statistic, newest
 * at the right, scaled to the values shown; optionally the latest value as
 * text. Non-finite values break the line.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LOOM_TYPE_SPARKLINE (loom_sparkline_get_type())
G_DECLARE_FINAL_TYPE(LoomSparkline, loom_sparkline, LOOM, SPARKLINE, GtkWidget)

#define LOOM_SPARKLINE_MAX_CAPACITY 100000

GtkWidget *loom_sparkline_new(void);
/* O(1): the oldest value drops out once "capacity" values are held. */
void loom_sparkline_push(LoomSparkline *self, double value);
/* @n values in order, as that many pushes. */
void loom_sparkline_push_values(LoomSparkline *self, const double *values, gsize n);
void loom_sparkline_clear(LoomSparkline *self);
guint loom_sparkline_get_n_values(LoomSparkline *self);
/* Value @i, 0 the oldest held. */
double loom_sparkline_get_value(LoomSparkline *self, guint i);

G_END_DECLS
