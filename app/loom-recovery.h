/*
 * LoomRecovery: autosave and crash recovery (DESIGN.md §6). It owns the
 * recovery directory, $XDG_STATE_HOME/loom-workbench/recovery/. For every
 * watched document with unsaved changes it keeps a recovery copy,
 * <id>.loom.json, and a sidecar, <id>.json (original file or null, title,
 * time, the owning process), written a few seconds after the last edit.
 * The copy goes away when the document is saved, its changes are discarded
 * or its window closes. Copies whose process is gone are what a crash left:
 * loom_recovery_scan_async() lists them and loom_recovery_restore_async()
 * turns one back into a (dirty) document.
 *
 * The network is serialized on the main thread (loom_model_to_json) and
 * written atomically on a GTask thread, one write per document at a time;
 * the document itself is never changed.
 */
#pragma once

#include <gtk/gtk.h>

#include "loom-document.h"

G_BEGIN_DECLS

/* Seconds from the last edit to the recovery copy (the GSettings default). */
#define LOOM_RECOVERY_DEFAULT_INTERVAL 5

typedef struct {
  char *id;            /* the file name stem, a UUID */
  char *copy_path;     /* the recovery copy (<id>.loom.json) */
  char *sidecar_path;  /* <id>.json */
  char *title;         /* the document's title when it was written */
  char *original_path; /* where the document lives; NULL: never saved */
  GDateTime *modified; /* when the copy was written */
} LoomRecoveryItem;

void loom_recovery_item_free(LoomRecoveryItem *item);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(LoomRecoveryItem, loom_recovery_item_free)

#define LOOM_TYPE_RECOVERY (loom_recovery_get_type())
G_DECLARE_FINAL_TYPE(LoomRecovery, loom_recovery, LOOM, RECOVERY, GObject)

/* @directory NULL: the user's state directory (g_get_user_state_dir). */
LoomRecovery *loom_recovery_new(const char *directory);
const char *loom_recovery_get_directory(LoomRecovery *self);
/* Only before any document is watched (tests use a fresh directory each). */
void loom_recovery_set_directory(LoomRecovery *self, const char *directory);

/* Seconds from the last edit to the copy; 0 disables autosave. */
guint loom_recovery_get_interval(LoomRecovery *self);
void loom_recovery_set_interval(LoomRecovery *self, guint seconds);

/* Keeps a recovery copy of @document while it is dirty. */
void loom_recovery_watch(LoomRecovery *self, LoomDocument *document);
/* Stops watching @document and deletes its copy (saved, discarded, closed). */
void loom_recovery_forget(LoomRecovery *self, LoomDocument *document);
/* Watches the "document" of every window of @app: a window's old document
 * is forgotten when it shows another one or closes. */
void loom_recovery_track_windows(LoomRecovery *self, GtkApplication *app);
/* The copy's path while one is kept for @document, else NULL. */
char *loom_recovery_get_copy_path(LoomRecovery *self, LoomDocument *document);
/* TRUE while a write or delete for some document is running. */
gboolean loom_recovery_get_busy(LoomRecovery *self);

/*
 * Lists, on a worker thread, the copies whose process is gone, oldest
 * first. Damaged sidecars are moved to the "damaged" subdirectory and
 * described (translated, naming the file) in @problems.
 */
void loom_recovery_scan_async(LoomRecovery *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                              gpointer user_data);
/* A GPtrArray of LoomRecoveryItem; @problems (may be NULL) gets a NULL-terminated
 * array of messages, empty when none. */
GPtrArray *loom_recovery_scan_finish(LoomRecovery *self, GAsyncResult *result, char ***problems,
                                     GError **error);

/*
 * Reads @item's copy on a worker thread into a dirty document (title from the
 * sidecar, file = the original path). A copy that cannot be read is moved to
 * the "damaged" subdirectory and the error names it. The document keeps the
 * copy's id, so once watched it updates that copy instead of starting anew.
 */
void loom_recovery_restore_async(LoomRecovery *self, const LoomRecoveryItem *item, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data);
LoomDocument *loom_recovery_restore_finish(LoomRecovery *self, GAsyncResult *result, GError **error);

/* Deletes @item's copy and sidecar (on a worker thread). */
void loom_recovery_discard(LoomRecovery *self, const LoomRecoveryItem *item);

G_END_DECLS
