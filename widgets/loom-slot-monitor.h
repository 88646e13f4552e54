/*
 * LoomSlotMonitor: live views of one slot while it trains — a histogram of
 * its weights, one of its activations, and sparklines of its statistics.
 * It takes plain numbers; whoever owns the data decides what to show.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LOOM_TYPE_SLOT_MONITOR (loom_slot_monitor_get_type())
G_DECLARE_FINAL_TYPE(LoomSlotMonitor, loom_slot_monitor, LOOM, SLOT_MONITOR, GtkWidget)

GtkWidget *loom_slot_monitor_new(void);

/* Forgets everything shown (another slot was selected); @title names the
 * slot, NULL hides the monitor's content behind a hint. */
void loom_slot_monitor_reset(LoomSlotMonitor *self, const char *title);
/* A sparkline per statistic; returns its index. */
int loom_slot_monitor_add_series(LoomSlotMonitor *self, const char *label);
void loom_slot_monitor_push(LoomSlotMonitor *self, int series, double value);
/* @n values in order, as that many pushes (one redraw). */
void loom_slot_monitor_push_values(LoomSlotMonitor *self, int series, const double *values, gsize n);
/* "show-weights": the weight histogram and its heading (default TRUE). */
void loom_slot_monitor_set_show_weights(LoomSlotMonitor *self, gboolean show);
gboolean loom_slot_monitor_get_show_weights(LoomSlotMonitor *self);
void loom_slot_monitor_set_weights(LoomSlotMonitor *self, const float *values, gsize n);
void loom_slot_monitor_set_activations(LoomSlotMonitor *self, const float *values, gsize n);
/* Values in the activation histogram (finite or not). */
guint64 loom_slot_monitor_get_n_activations(LoomSlotMonitor *self);
/* Values pushed to @series since the last reset (its sparkline keeps the
 * newest of them that fit its capacity). */
guint loom_slot_monitor_get_n_values(LoomSlotMonitor *self, int series);

G_END_DECLS
