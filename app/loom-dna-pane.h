/*
 * LoomDnaPane: the window's DNA pane (DESIGN.md §5, docs/dna.md). Choose A
 * and B — the current network, a snapshot of the training timeline, or a
 * model file — and see their similarity matrix with the overall index and
 * the logic shifts; selecting a shift draws its arrow in the grid view.
 * Scrubbing the timeline compares A with each snapshot in turn; the live
 * heatmap colours every slot of the newest snapshot by its best match in A.
 */
#pragma once

#include <gtk/gtk.h>
#include <loom/loom.h>

#include "loom-grid-view.h"
#include "loom-training-snapshot.h"

G_BEGIN_DECLS

#define LOOM_TYPE_DNA_PANE (loom_dna_pane_get_type())
G_DECLARE_FINAL_TYPE(LoomDnaPane, loom_dna_pane, LOOM, DNA_PANE, GtkWidget)

/* Sources A and B can be. */
typedef enum {
  LOOM_DNA_SOURCE_CURRENT,  /* the document's network now */
  LOOM_DNA_SOURCE_SNAPSHOT, /* a snapshot of the training timeline */
  LOOM_DNA_SOURCE_FILE,     /* a model file */
} LoomDnaSourceKind;

GtkWidget *loom_dna_pane_new(void);
/* The document's network (borrowed) and the grid view that shows shift
 * arrows and the live heatmap (not owned). */
void loom_dna_pane_set_net(LoomDnaPane *self, const loom_net *net);
void loom_dna_pane_set_grid_view(LoomDnaPane *self, LoomGridView *view);
/* The training timeline: a snapshot at a step (kept, bounded: when full, every
 * other older snapshot goes). clear: a new document or reset weights. */
void loom_dna_pane_add_snapshot(LoomDnaPane *self, LoomSharedDna *dna);
void loom_dna_pane_clear_timeline(LoomDnaPane *self);
guint loom_dna_pane_get_n_snapshots(LoomDnaPane *self);
/* A model file as a source; errors name the file and the reason. */
gboolean loom_dna_pane_add_file(LoomDnaPane *self, const char *path, GError **error);
/* Chooses A or B: the @index-th source of @kind (0 for CURRENT). */
gboolean loom_dna_pane_set_source(LoomDnaPane *self, gboolean b, LoomDnaSourceKind kind, guint index);
/* The comparison shown (NULL before one succeeded). */
const loom_dna_result *loom_dna_pane_get_result(LoomDnaPane *self);
/* Selects logic shift @index (-1 none): the arrow in the grid, the cell in the matrix. */
void loom_dna_pane_select_shift(LoomDnaPane *self, int index);
/* Property "live-heatmap": colour the grid by similarity to A. */
void loom_dna_pane_set_live_heatmap(LoomDnaPane *self, gboolean live);
gboolean loom_dna_pane_get_live_heatmap(LoomDnaPane *self);
gboolean loom_dna_pane_export_matrix(LoomDnaPane *self, const char *path, GError **error);

G_END_DECLS
