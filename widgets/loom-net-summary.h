/*
 * LoomNetSummary: a network's totals — layers, links, trainable parameters,
 * memory at the layers' chosen dtypes against float32 (human readable, with
 * the ratio) and forward FLOPs per sample.
 *
 *   GtkWidget *summary = loom_net_summary_new();
 *   // after every change of the net (and after shape inference, which sizes the weights):
 *   loom_net_summary_set_net(LOOM_NET_SUMMARY(summary), net);
 */
#pragma once

#include <gtk/gtk.h>
#include <loom/net.h>

G_BEGIN_DECLS

#define LOOM_TYPE_NET_SUMMARY (loom_net_summary_get_type())
G_DECLARE_FINAL_TYPE(LoomNetSummary, loom_net_summary, LOOM, NET_SUMMARY, GtkWidget)

GtkWidget *loom_net_summary_new(void);

/* Reads the totals of @net now (borrowed for the call only; NULL shows dashes). */
void loom_net_summary_set_net(LoomNetSummary *self, const loom_net *net);

/* The text shown for each line, for tests and tooltips: the "parameters-text",
 * "memory-text" and "flops-text" properties. */
const char *loom_net_summary_get_parameters_text(LoomNetSummary *self);
const char *loom_net_summary_get_memory_text(LoomNetSummary *self);
const char *loom_net_summary_get_flops_text(LoomNetSummary *self);

G_END_DECLS
