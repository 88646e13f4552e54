/*
 * LoomWindow internals shared by loom-window.c (layout, refresh, widget
 * signals), loom-window-actions.c (editing, selection and view actions) and
 * loom-window-files.c (new, open, save, examples, export, drops, closing).
 */
#pragma once

#include "loom-dna-pane.h"
#include "loom-export-dialog.h"
#include "loom-grid-view.h"
#include "loom-inspector.h"
#include "loom-link-list.h"
#include "loom-net-summary.h"
#include "loom-palette.h"
#include "loom-slot-monitor.h"
#include "loom-slot-watch.h"
#include "loom-systolic-pane.h"
#include "loom-training-pane.h"
#include "loom-training-controller.h"
#include "loom-training-session.h"
#include "loom-window.h"

G_BEGIN_DECLS

/* What to do once the user agreed to drop unsaved changes (or saved them). */
typedef void (*LoomWindowContinuation)(LoomWindow *self, gpointer data);

struct _LoomWindow {
  AdwApplicationWindow parent_instance;

  LoomDocument *document;
  GSignalGroup *document_signals;
  GSettings *settings;
  /* Cancelled when the window closes, so no file operation outlives it. */
  GCancellable *cancellable;
  GtkFileChooserNative *chooser;
  gboolean chooser_exports; /* the save chooser picks a PNG for export */
  int export_width, export_height;

  /* Set while a "save changes?" question or the save it started is pending. */
  LoomWindowContinuation pending;
  gpointer pending_data;
  GDestroyNotify pending_destroy;
  gboolean close_confirmed;

  char *last_layer_type; /* what Enter or a double click on a slot places */
  /* win.link-from-selection: where the link being drawn by keyboard starts. */
  gboolean has_link_source;
  loom_coord link_source;
  guint settle_panes; /* idle that fixes the panes' positions after the first layout */
  gboolean panes_settled;

  /* Training (loom-window-training.c) */
  LoomTrainingController *training;

  /* Template children */
  AdwWindowTitle *window_title;
  AdwToastOverlay *toast_overlay;
  GtkPaned *outer_paned; /* palette | the rest */
  GtkPaned *inner_paned; /* grid view | inspector column */
  GtkWidget *inspector_column;
  GtkPaned *inspector_paned; /* inspector | links and totals */
  GtkPaned *center_paned; /* grid view above the training pane */
  LoomGridView *grid_view;
  GtkWidget *bottom_box;  /* the training and DNA panes */
  GtkStack *bottom_stack;
  LoomTrainingPane *training_pane;
  LoomDnaPane *dna_pane;
  LoomSystolicPane *systolic_pane;
  LoomTrainingData *systolic_data; /* whose first sample the mesh holds */
  LoomSlotMonitor *slot_monitor; /* in the inspector: the selected slot while it trains */
  LoomSlotWatch *slot_watch;     /* feeds it */
  GtkLabel *grid_label;
  GtkLabel *hint_label;
  LoomPalette *palette;
  LoomInspector *inspector;
  LoomLinkList *link_list;
  LoomNetSummary *net_summary;
  GtkWidget *undo_button;
  GtkWidget *redo_button;
  GMenu *recent_menu;
  GMenu *recent_submenu;
};

void loom_window_show_error(LoomWindow *self, const char *heading, const GError *error);
void loom_window_toast(LoomWindow *self, const char *message);
/* Re-reads the document into every view and updates the actions. */
void loom_window_refresh(LoomWindow *self);
/* The grid's caption (size, selection, problems) and the hint above the view. */
void loom_window_update_labels(LoomWindow *self);
/* The selected slot, or FALSE when none. */
gboolean loom_window_get_selected_slot(LoomWindow *self, loom_coord *out);
/* Runs @cmd on the document; a refusal is shown as a toast. */
gboolean loom_window_execute(LoomWindow *self, LoomCommand *cmd);
/* Adds a link (merge mode from win.link-merge) and selects it. */
gboolean loom_window_add_link(LoomWindow *self, loom_coord src, loom_coord dst);

/* loom-window-actions.c */
void loom_window_actions_class_init(GtkWidgetClass *widget_class);
void loom_window_actions_init(LoomWindow *self);
void loom_window_update_actions(LoomWindow *self);
gboolean loom_window_place_layer(LoomWindow *self, const char *type_name, loom_coord at);

/* loom-window-files.c */
void loom_window_files_class_init(GtkWidgetClass *widget_class);
void loom_window_files_init(LoomWindow *self);
void loom_window_files_dispose(LoomWindow *self);
/* Calls @cont at once when the document is clean; otherwise asks first
 * (Cancel / Discard / Save). @destroy frees @data whatever happens. */
void loom_window_confirm_discard(LoomWindow *self, LoomWindowContinuation cont, gpointer data,
                                 GDestroyNotify destroy);
gboolean loom_window_files_close_request(LoomWindow *self);

/* loom-window-training.c */
void loom_window_training_class_init(GtkWidgetClass *widget_class);
void loom_window_training_init(LoomWindow *self);
void loom_window_training_dispose(LoomWindow *self);
/* The window shows another document / the document changed. */
void loom_window_training_document_set(LoomWindow *self);
void loom_window_training_document_changed(LoomWindow *self);
void loom_window_training_selection_changed(LoomWindow *self);
void loom_window_training_update_actions(LoomWindow *self);
/* While training runs the network is not edited (docs/workbench.md). */
gboolean loom_window_training_locked(LoomWindow *self);
/* The newest weights the worker published into the document (Save). */
void loom_window_training_flush(LoomWindow *self);

/* loom-window-dna.c */
void loom_window_dna_class_init(GtkWidgetClass *widget_class);
void loom_window_dna_init(LoomWindow *self);
void loom_window_dna_document_set(LoomWindow *self);
void loom_window_dna_document_changed(LoomWindow *self);
void loom_window_dna_training_snapshot(LoomWindow *self, LoomTrainingSnapshot *snap);

/* loom-window-export.c */
void loom_window_export_class_init(GtkWidgetClass *widget_class);
/* The export dialog (win.export-model), shown; for tests. */
LoomExportDialog *loom_window_show_export(LoomWindow *self);
void loom_window_import_class_init(GtkWidgetClass *widget_class);
/* The tensors of a PyTorch state dict in @path (safetensors) into the
 * document's weights as one undoable command; @map_path: a mapping (NULL:
 * the nn.Sequential rule). Errors name the tensor and the slot. */
gboolean loom_window_import_weights(LoomWindow *self, const char *path, const char *map_path, GError **error);

/* loom-window-systolic.c */
void loom_window_systolic_class_init(GtkWidgetClass *widget_class);
void loom_window_systolic_init(LoomWindow *self);
void loom_window_systolic_dispose(LoomWindow *self);
void loom_window_systolic_document_changed(LoomWindow *self);
void loom_window_systolic_training_snapshot(LoomWindow *self, LoomTrainingSnapshot *snap);

/* loom-window-training-files.c */
void loom_window_training_files_class_init(GtkWidgetClass *widget_class);
void loom_window_import_csv(LoomWindow *self, GFile *file);
gboolean loom_window_export_training_settings(LoomWindow *self, const char *path, GError **error);
/* @which: "loss" or "accuracy"; the format follows the extension (.png, .svg, .csv). */
gboolean loom_window_export_plot(LoomWindow *self, const char *which, const char *path, GError **error);

G_END_DECLS
