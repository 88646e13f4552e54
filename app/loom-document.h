/*
 * LoomDocument: one open network, the file it lives in, its undo history and
 * whether it differs from the file. Every edit goes through
 * loom_document_execute() (a LoomCommand on the document's LoomCommandStack);
 * "dirty" follows the stack's clean index, so undoing back to the saved state
 * makes the document clean again.
 */
#pragma once

#include <gio/gio.h>
#include <loom/model.h>
#include <loom/net.h>

#include "loom-commands.h"

G_BEGIN_DECLS

/* Engine failures surface as GErrors in this domain; the code is a loom_status. */
#define LOOM_ENGINE_ERROR (loom_engine_error_quark())
GQuark loom_engine_error_quark(void);

#define LOOM_TYPE_DOCUMENT (loom_document_get_type())
G_DECLARE_FINAL_TYPE(LoomDocument, loom_document, LOOM, DOCUMENT, GObject)

/* The grid a new document starts with: DESIGN.md's smallest useful volume. */
#define LOOM_DOCUMENT_NEW_DEPTH 4
#define LOOM_DOCUMENT_NEW_ROWS 4
#define LOOM_DOCUMENT_NEW_COLS 4
#define LOOM_DOCUMENT_NEW_LAYERS_PER_CELL 1
#define LOOM_DOCUMENT_NEW_INPUT_FEATURES 16

/* The seed shape inference draws new weights from: documents are reproducible. */
#define LOOM_DOCUMENT_SEED G_GUINT64_CONSTANT(20240611)

/* An untitled document holding an empty network of the default size. */
LoomDocument *loom_document_new(GError **error);
/* An untitled, empty network of the given size and per-sample input shape. */
LoomDocument *loom_document_new_sized(int depth, int rows, int cols, int layers_per_cell, const loom_shape *input,
                                      GError **error);
/* An untitled copy of a built-in example (loom_example_build). */
LoomDocument *loom_document_new_for_example(const char *name, GError **error);

/*
 * A document holding unsaved changes recovered after a crash (LoomRecovery):
 * takes @net and what @extras holds (training settings and state; may be NULL), lives in @file (NULL: never saved; then @title is its title
 * until the first save) and is dirty until saved. Until then
 * loom_document_get_recovered() is TRUE, so the window asks before Save
 * replaces @file.
 */
LoomDocument *loom_document_new_recovered(loom_net *net, loom_model_extras *extras, GFile *file,
                                          const char *title);

/* Reads a model file on a worker thread. */
void loom_document_load_async(GFile *file, GCancellable *cancellable, GAsyncReadyCallback callback,
                              gpointer user_data);
LoomDocument *loom_document_load_finish(GAsyncResult *result, GError **error);

/*
 * Writes a snapshot of the network to @file on a worker thread (atomically,
 * through the engine). On success the document takes @file as its file and
 * is no longer dirty — unless it was edited while the save ran.
 */
void loom_document_save_async(LoomDocument *self, GFile *file, GCancellable *cancellable,
                              GAsyncReadyCallback callback, gpointer user_data);
gboolean loom_document_save_finish(LoomDocument *self, GAsyncResult *result, GError **error);

const loom_net *loom_document_get_net(LoomDocument *self);
GFile *loom_document_get_file(LoomDocument *self);
gboolean loom_document_get_dirty(LoomDocument *self);
/* TRUE for a recovered document (loom_document_new_recovered) until it is saved. */
gboolean loom_document_get_recovered(LoomDocument *self);
/* The file's display name; before the first save, the example's title for
 * a copy of an example, else "Untitled network". */
const char *loom_document_get_title(LoomDocument *self);

/* The network with its training settings and state, as the model file
 * holds them (malloc'd; recovery copies). While live training is set (below)
 * it is the live weights, trainer state and step count instead. */
char *loom_document_to_json(LoomDocument *self, size_t *len, GError **error);

/* Live training: the newest weights a running worker published, which are
 * not a command of the document yet (they become one when training pauses).
 * Only recovery copies take them, so a crash while training loses at most an
 * autosave interval of training; the network, Undo and the dirty flag do not
 * change. @net and @state must stay unchanged until @owner_free(@owner) is
 * called (the snapshot that holds them); each call emits "live-changed". */
void loom_document_set_live_training(LoomDocument *self, const loom_net *net, GBytes *state, gint64 steps,
                                     gpointer owner, GDestroyNotify owner_free);
void loom_document_clear_live_training(LoomDocument *self);
/* TRUE when a recovery copy is worth keeping: the document is dirty, or live
 * training has weights it does not have. */
gboolean loom_document_get_needs_recovery(LoomDocument *self);
/* The training settings, the trainer state and the steps that made the
 * weights. Change them only through commands (loom-commands.h). */
const LoomTrainingExtras *loom_document_get_training(LoomDocument *self);

/* ---- editing ---- */

LoomCommandStack *loom_document_get_commands(LoomDocument *self);
/* Runs @cmd (consumed) as one undoable step; on failure nothing changed. */
gboolean loom_document_execute(LoomDocument *self, LoomCommand *cmd, GError **error);
gboolean loom_document_undo(LoomDocument *self, GError **error);
gboolean loom_document_redo(LoomDocument *self, GError **error);

/* The problems the last shape inference found (it runs after every change);
 * "changed" is emitted after they are updated. */
const loom_diag *loom_document_get_diagnostics(LoomDocument *self, int *n_diags);

/* A new layer of @type_name for slot @at, sized by shape inference for the
 * input it would receive there (loom_net_propose_input + adapt_to_input). */
loom_layer *loom_document_make_layer(LoomDocument *self, const char *type_name, loom_coord at, GError **error);

G_END_DECLS
