/*
 * LoomTrainingPane internals shared by loom-training-pane.c (layout,
 * transport, status) and loom-training-pane-views.c (plots, heatmap,
 * decision boundary).
 */
#pragma once

#include "loom-big-array.h"
#include "loom-boundary-view.h"
#include "loom-plot.h"
#include "loom-training-form.h"
#include "loom-training-pane.h"

G_BEGIN_DECLS

struct _LoomTrainingPane {
  GtkWidget parent_instance;

  LoomTrainingSession *session;
  GSignalGroup *session_signals;
  LoomGridView *grid_view; /* weak */
  const loom_net *net;
  int metric;              /* index into the metric table; 0 = none */
  LoomGridViewColorMode color_mode_before; /* restored when the heatmap goes off */
  gboolean by_epoch;       /* the plots' x axis */
  gboolean alert_shown;    /* the grid shows a slot where training stopped */
  int play_shows_pause;    /* the play button's face: -1 not set yet, else whether it shows Pause */

  /* Everything the plots have shown, to draw them again on another axis. */
  LoomBigArray points; /* LoomTrainingPoint */
  GArray *epochs;  /* LoomTrainingEpoch */
  GArray *events;  /* LoomTrainingEvent (labels owned) */
  LoomTrainingData *data; /* the points on the boundary view */

  /* Template children */
  GtkWidget *paned;
  LoomTrainingForm *form;
  GtkLabel *status_label;
  GtkDropDown *device_dropdown; /* "CPU", then each Vulkan device; hidden without one */
  GArray *device_indices;       /* int: the Vulkan index of entry k + 1 */
  gboolean device_updating;
  GtkLabel *message_label;
  GtkProgressBar *progress;
  GtkToggleButton *play_button;
  LoomPlot *loss_plot;
  LoomPlot *accuracy_plot;
  GtkDropDown *axis_dropdown;
  GtkScale *smoothing_scale;
  GtkToggleButton *log_button;
  GtkDropDown *metric_dropdown;
  GtkToggleButton *metric_log_button;
  LoomBoundaryView *boundary_view;
  GtkLabel *data_label;
};

/* loom-training-pane-views.c */
void loom_training_pane_views_init(LoomTrainingPane *self);
void loom_training_pane_views_snapshot(LoomTrainingPane *self, LoomTrainingSnapshot *snap);
void loom_training_pane_redraw_plots(LoomTrainingPane *self);
void loom_training_pane_update_heatmap(LoomTrainingPane *self, LoomTrainingSnapshot *snap);
void loom_training_pane_clear_views(LoomTrainingPane *self);
int loom_training_pane_metric_count(void);
const char *loom_training_pane_metric_label(int index);

G_END_DECLS
