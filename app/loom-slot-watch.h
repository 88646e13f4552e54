/*
 * LoomSlotWatch: the selected slot while it trains (docs/workbench.md, "Live
 * statistics of the selected slot"). It asks the training worker to watch
 * the slot and feeds what the snapshots bring — every step's statistics,
 * the newest weights, the last batch's activations — into a LoomSlotMonitor
 * (a widget of its own, which takes plain numbers). The window only tells
 * it what is selected.
 */
#pragma once

#include <gtk/gtk.h>

#include "loom-slot-monitor.h"
#include "loom-training-controller.h"

G_BEGIN_DECLS

#define LOOM_TYPE_SLOT_WATCH (loom_slot_watch_get_type())
G_DECLARE_FINAL_TYPE(LoomSlotWatch, loom_slot_watch, LOOM, SLOT_WATCH, GObject)

LoomSlotWatch *loom_slot_watch_new(LoomTrainingController *training, LoomSlotMonitor *monitor);
/* The slot at @at of @net, or none (@at NULL, or an empty slot). */
void loom_slot_watch_select(LoomSlotWatch *self, const loom_net *net, const loom_coord *at);

G_END_DECLS
