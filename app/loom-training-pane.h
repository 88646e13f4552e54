/*
 * LoomTrainingPane: the window's training pane (DESIGN.md §6) — the
 * settings form, the transport (Play, Pause, Step, Step Epoch, Reset: the
 * window's win.train-* actions), a status line and progress bar, loss and
 * accuracy plots, the decision boundary of two-feature data, and the live
 * heatmap it paints on the grid view. It observes a LoomTrainingSession and
 * shows its snapshots; it never runs training itself. Settings the user
 * changes come out as "settings-changed"; the window makes them a command.
 */
#pragma once

#include <gtk/gtk.h>
#include <loom/loom.h>

#include "loom-grid-view.h"
#include "loom-plot.h"
#include "loom-training-session.h"

G_BEGIN_DECLS

#define LOOM_TYPE_TRAINING_PANE (loom_training_pane_get_type())
G_DECLARE_FINAL_TYPE(LoomTrainingPane, loom_training_pane, LOOM, TRAINING_PANE, GtkWidget)

GtkWidget *loom_training_pane_new(void);
/* Property "session": the session whose snapshots the pane shows. */
void loom_training_pane_set_session(LoomTrainingPane *self, LoomTrainingSession *session);
/* The grid view the heatmap, link flows and alerts go to (not owned). */
void loom_training_pane_set_grid_view(LoomTrainingPane *self, LoomGridView *view);
/* The document's network (borrowed; for slot indices and links) and its
 * training settings (copied into the form). */
void loom_training_pane_set_net(LoomTrainingPane *self, const loom_net *net);
void loom_training_pane_set_settings(LoomTrainingPane *self, const loom_train_settings *settings);
const loom_train_settings *loom_training_pane_get_settings(LoomTrainingPane *self);
/* Property "heatmap-metric": the live metric the grid is coloured by, "none"
 * or a name of loom_training_pane_metric_names(). */
void loom_training_pane_set_heatmap_metric(LoomTrainingPane *self, const char *name);
const char *loom_training_pane_get_heatmap_metric(LoomTrainingPane *self);
const char *const *loom_training_pane_metric_names(void);
/* The "loss" or "accuracy" plot (for export). */
LoomPlot *loom_training_pane_get_plot(LoomTrainingPane *self, const char *which);
/* Forgets the curves (a new document). */
void loom_training_pane_clear(LoomTrainingPane *self);

G_END_DECLS
