/* LoomDocument: one open network, the file it lives in, and whether it changed. */
#pragma once

#include <gio/gio.h>
#include <loom/net.h>

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

/* An untitled document holding an empty network of the default size. */
LoomDocument *loom_document_new(GError **error);

/* Reads a model file on a worker thread. */
void loom_document_load_async(GFile *file, GCancellable *cancellable, GAsyncReadyCallback callback,
                              gpointer user_data);
LoomDocument *loom_document_load_finish(GAsyncResult *result, GError **error);

/*
 * Writes a snapshot of the network to @file on a worker thread (atomically,
 * through the engine). On success the document takes @file as its file and
 * is no longer dirty — unless it changed while the save ran.
 */
void loom_document_save_async(LoomDocument *self, GFile *file, GCancellable *cancellable,
                              GAsyncReadyCallback callback, gpointer user_data);
gboolean loom_document_save_finish(LoomDocument *self, GAsyncResult *result, GError **error);

const loom_net *loom_document_get_net(LoomDocument *self);
GFile *loom_document_get_file(LoomDocument *self);
gboolean loom_document_get_dirty(LoomDocument *self);
void loom_document_set_dirty(LoomDocument *self, gboolean dirty);
/* The file's display name, or "Untitled network". */
const char *loom_document_get_title(LoomDocument *self);

G_END_DECLS
