/*
 * LoomSystolicPane: the systolic mesh tick by tick (DESIGN.md §2,
 * docs/network.md): Tick, Play at a chosen speed, Reset; the tick counter;
 * each slot's output norm on the grid as the signal travels along the spine
 * and through the links (feedback links included). Ticks run on a worker
 * thread, one at a time; the pane never waits for one.
 */
#pragma once

#include <gtk/gtk.h>
#include <loom/loom.h>

#include "loom-grid-view.h"

G_BEGIN_DECLS

#define LOOM_TYPE_SYSTOLIC_PANE (loom_systolic_pane_get_type())
G_DECLARE_FINAL_TYPE(LoomSystolicPane, loom_systolic_pane, LOOM, SYSTOLIC_PANE, GtkWidget)

GtkWidget *loom_systolic_pane_new(void);
/* The document's network (borrowed; copied when the first tick runs) and the
 * input held at the network's input (copied; NULL: ones). Either starts the
 * mesh over. */
void loom_systolic_pane_set_net(LoomSystolicPane *self, const loom_net *net);
void loom_systolic_pane_set_input(LoomSystolicPane *self, const float *x, gsize n);
void loom_systolic_pane_set_grid_view(LoomSystolicPane *self, LoomGridView *view);
/* One tick (after the one running, if any). */
void loom_systolic_pane_tick(LoomSystolicPane *self);
/* Property "playing": ticks follow each other at "speed" ticks a second. */
void loom_systolic_pane_set_playing(LoomSystolicPane *self, gboolean playing);
gboolean loom_systolic_pane_get_playing(LoomSystolicPane *self);
void loom_systolic_pane_reset(LoomSystolicPane *self);
/* Property "ticks": ticks done. */
gint64 loom_systolic_pane_get_ticks(LoomSystolicPane *self);
/* The last tick's trace (per slot: mean and norm of its output); NULL before one. */
const loom_slot_trace *loom_systolic_pane_get_trace(LoomSystolicPane *self, gsize *n);
/* Why the mesh cannot run (NULL when it can). */
const char *loom_systolic_pane_get_error(LoomSystolicPane *self);

G_END_DECLS
