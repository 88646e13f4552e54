/*
 * Autosave: one Entry per watched document. An edit (re)starts a debounce
 * timer; when it fires the network is serialized here, on the main thread,
 * and a GTask thread writes the sidecar, then the copy, each atomically.
 * An entry runs one job (write or delete) at a time; what is asked for
 * meanwhile (want_write, want_delete) runs when the job is done, so writes
 * coalesce and never overlap.
 *
 * A copy must not outlive its reason (the document saved, discarded or
 * closed), even when that happens while a job runs: each job has its own
 * GCancellable, and a write whose cancellable was cancelled deletes what it
 * wrote. Whoever cancels also schedules a delete, so whichever of the two
 * runs last leaves no file behind.
 *
 * Reading the directory back after a crash (scan, restore) is in
 * loom-recovery-files.c.
 */
#include "loom-recovery-private.h"

#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <loom/file.h>
#include <loom/model.h>
#include <stdlib.h>
#include <string.h>

/* A steady stream of edits delays the copy at most this many intervals. */
#define MAX_DEFER_INTERVALS 4

typedef struct {
  LoomRecovery *recovery; /* unowned: entries die with it */
  LoomDocument *document;
  char *id;
  guint timer;
  gint64 pending_since; /* monotonic time of the first edit not yet in the copy; 0: none */
  gboolean busy;        /* a job of this entry is running */
  gboolean want_write, want_delete;
  gboolean has_copy; /* a copy may exist on disk */
  GCancellable *job; /* the running or last job's */
} Entry;

struct _LoomRecovery {
  GObject parent_instance;
  char *directory;
  guint interval;
  GHashTable *entries; /* LoomDocument* → Entry* */
  guint n_jobs;
};

G_DEFINE_FINAL_TYPE(LoomRecovery, loom_recovery, G_TYPE_OBJECT)

enum { PROP_0, PROP_DIRECTORY, PROP_INTERVAL, PROP_BUSY, N_PROPS };
static GParamSpec *properties[N_PROPS];

static GQuark adopted_id_quark(void) {
  return g_quark_from_static_string("loom-recovery-adopted-id");
}

static GQuark window_document_quark(void) {
  return g_quark_from_static_string("loom-recovery-window-document");
}

static char job_tag;

/* ---- jobs ---- */

typedef struct {
  char *directory, *copy_path, *sidecar_path;
  char *json; /* NULL: a delete job */
  size_t len;
  char *sidecar;
  GCancellable *cancellable;
  LoomDocument *document; /* whose entry to report to; NULL: nobody */
} Job;

static void job_free(Job *job) {
  g_free(job->directory);
  g_free(job->copy_path);
  g_free(job->sidecar_path);
  free(job->json);
  g_free(job->sidecar);
  g_clear_object(&job->cancellable);
  g_clear_object(&job->document);
  g_free(job);
}

static gboolean write_file(const char *path, const char *data, size_t len, GError **error) {
  loom_error err = {0};
  if (loom_file_write_atomic(path, data, len, &err) == LOOM_OK) return TRUE;
  g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, err.message);
  return FALSE;
}

void loom_recovery_delete_files(const char *sidecar_path, const char *copy_path) {
  /* Sidecar first: a copy without a sidecar is known junk to the scan. */
  g_unlink(sidecar_path);
  g_unlink(copy_path);
}

static void job_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *unused) {
  Job *job = task_data;
  GError *error = NULL;
  if (job->json && !g_cancellable_is_cancelled(job->cancellable)) {
    if (g_mkdir_with_parents(job->directory, 0700) != 0) {
      int saved = errno;
      g_set_error(&error, G_IO_ERROR, g_io_error_from_errno(saved), _("Cannot create the folder “%s”: %s"),
                  job->directory, g_strerror(saved));
    } else if (write_file(job->sidecar_path, job->sidecar, strlen(job->sidecar), &error)) {
      write_file(job->copy_path, job->json, job->len, &error);
    }
  }
  /* Cancelled (saved, discarded, closed) while writing: take it back. */
  if (!job->json || g_cancellable_is_cancelled(job->cancellable))
    loom_recovery_delete_files(job->sidecar_path, job->copy_path);
  if (error)
    g_task_return_error(task, error);
  else
    g_task_return_boolean(task, TRUE);
}

static void reconcile(Entry *e);

static void job_done(GObject *source, GAsyncResult *result, gpointer user_data) {
  LoomRecovery *self = LOOM_RECOVERY(source);
  GTask *task = G_TASK(result);
  Job *job = g_task_get_task_data(task);
  g_autoptr(GError) error = NULL;
  if (!g_task_propagate_boolean(task, &error))
    /* Autosave is a safety net: a failure must not interrupt the user. */
    g_message("Autosave: %s", error->message);
  if (--self->n_jobs == 0) g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
  Entry *e = job->document ? g_hash_table_lookup(self->entries, job->document) : NULL;
  if (!e || e->job != job->cancellable) return; /* forgotten meanwhile */
  e->busy = FALSE;
  reconcile(e);
}

static void start_job(LoomRecovery *self, Job *job) {
  g_autoptr(GTask) task = g_task_new(self, NULL, job_done, NULL);
  g_task_set_source_tag(task, &job_tag);
  g_task_set_task_data(task, job, (GDestroyNotify)job_free);
  if (self->n_jobs++ == 0) g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
  g_task_run_in_thread(task, job_thread);
}

static Job *job_new(LoomRecovery *self, const char *id) {
  Job *job = g_new0(Job, 1);
  job->directory = g_strdup(self->directory);
  job->copy_path = loom_recovery_copy_path(self->directory, id);
  job->sidecar_path = loom_recovery_sidecar_path(self->directory, id);
  job->cancellable = g_cancellable_new();
  return job;
}

/* ---- entries ---- */

static void entry_start(Entry *e, Job *job) {
  job->document = g_object_ref(e->document);
  g_set_object(&e->job, job->cancellable);
  e->busy = TRUE;
  start_job(e->recovery, job);
}

static void start_write(Entry *e) {
  if (!loom_document_get_needs_recovery(e->document)) return;
  /* Serialized here, where the network lives: the thread gets bytes only. */
  g_autoptr(GError) error = NULL;
  size_t len = 0;
  char *json = loom_document_to_json(e->document, &len, &error);
  if (!json) {
    g_message("Autosave: %s", error->message);
    return;
  }
  GFile *file = loom_document_get_file(e->document);
  g_autofree char *path = file ? g_file_get_path(file) : NULL;
  g_autoptr(GDateTime) now = g_date_time_new_now_utc();
  Job *job = job_new(e->recovery, e->id);
  job->json = json;
  job->len = len;
  job->sidecar = loom_recovery_sidecar_new(loom_document_get_title(e->document), path, now);
  e->has_copy = TRUE;
  entry_start(e, job);
}

static void reconcile(Entry *e) {
  if (e->busy) return;
  if (e->want_delete) {
    e->want_delete = FALSE;
    e->has_copy = FALSE;
    entry_start(e, job_new(e->recovery, e->id));
  } else if (e->want_write) {
    e->want_write = FALSE;
    start_write(e);
  }
}

static gboolean on_timer(gpointer data) {
  Entry *e = data;
  e->timer = 0;
  e->pending_since = 0;
  e->want_write = TRUE;
  reconcile(e);
  return G_SOURCE_REMOVE;
}

static void schedule(Entry *e) {
  guint interval = e->recovery->interval;
  if (interval == 0) return;
  gint64 now = g_get_monotonic_time();
  if (!e->pending_since) e->pending_since = now;
  /* Debounced, but a long burst of edits still reaches the disk. */
  if (e->timer && now - e->pending_since >= (gint64)interval * MAX_DEFER_INTERVALS * G_USEC_PER_SEC) return;
  g_clear_handle_id(&e->timer, g_source_remove);
  e->timer = g_timeout_add(interval * 1000, on_timer, e);
}

/* The document has no unsaved changes (any more): no copy. */
static void drop_copy(Entry *e) {
  g_clear_handle_id(&e->timer, g_source_remove);
  e->pending_since = 0;
  e->want_write = FALSE;
  if (!e->has_copy && !e->busy) return;
  if (e->job) g_cancellable_cancel(e->job);
  e->want_delete = TRUE;
  reconcile(e);
}

static void on_document_changed(Entry *e) {
  if (!loom_document_get_needs_recovery(e->document)) {
    drop_copy(e);
    return;
  }
  e->want_delete = FALSE;
  schedule(e);
}

static void entry_free(Entry *e) {
  g_clear_handle_id(&e->timer, g_source_remove);
  g_signal_handlers_disconnect_by_data(e->document, e);
  if (e->job) g_cancellable_cancel(e->job);
  if (e->has_copy || e->busy) {
    /* Runs beside a write still in flight: see the comment at the top. */
    Job *job = job_new(e->recovery, e->id);
    start_job(e->recovery, job);
  }
  g_clear_object(&e->job);
  g_object_unref(e->document);
  g_free(e->id);
  g_free(e);
}

void loom_recovery_watch(LoomRecovery *self, LoomDocument *document) {
  g_return_if_fail(LOOM_IS_RECOVERY(self));
  g_return_if_fail(LOOM_IS_DOCUMENT(document));
  if (g_hash_table_contains(self->entries, document)) return;
  Entry *e = g_new0(Entry, 1);
  e->recovery = self;
  e->document = g_object_ref(document);
  e->id = g_object_steal_qdata(G_OBJECT(document), adopted_id_quark());
  g_hash_table_insert(self->entries, document, e);
  g_signal_connect_swapped(document, "changed", G_CALLBACK(on_document_changed), e);
  g_signal_connect_swapped(document, "notify::dirty", G_CALLBACK(on_document_changed), e);
  /* Training's newest weights, up to 30 times a second: the debounce's
   * longest deferral (MAX_DEFER_INTERVALS) still writes them regularly. */
  g_signal_connect_swapped(document, "live-changed", G_CALLBACK(on_document_changed), e);
  if (e->id) {
    /* A restored copy: claim it for this process at once. */
    e->has_copy = TRUE;
    if (self->interval > 0) {
      e->want_write = TRUE;
      reconcile(e);
    }
    return;
  }
  e->id = g_uuid_string_random();
  if (loom_document_get_needs_recovery(document)) schedule(e);
}

void loom_recovery_forget(LoomRecovery *self, LoomDocument *document) {
  g_return_if_fail(LOOM_IS_RECOVERY(self));
  g_return_if_fail(LOOM_IS_DOCUMENT(document));
  g_hash_table_remove(self->entries, document);
}

void loom_recovery_adopt(LoomDocument *document, const char *id) {
  g_object_set_qdata_full(G_OBJECT(document), adopted_id_quark(), g_strdup(id), g_free);
}

char *loom_recovery_get_copy_path(LoomRecovery *self, LoomDocument *document) {
  g_return_val_if_fail(LOOM_IS_RECOVERY(self), NULL);
  Entry *e = g_hash_table_lookup(self->entries, document);
  return e && e->has_copy ? loom_recovery_copy_path(self->directory, e->id) : NULL;
}

gboolean loom_recovery_get_busy(LoomRecovery *self) {
  g_return_val_if_fail(LOOM_IS_RECOVERY(self), FALSE);
  return self->n_jobs > 0;
}

/* ---- windows ---- */

static void sync_window(GtkWindow *window, GParamSpec *pspec, LoomRecovery *self) {
  LoomDocument *old = g_object_get_qdata(G_OBJECT(window), window_document_quark());
  g_autoptr(LoomDocument) document = NULL;
  g_object_get(window, "document", &document, NULL);
  if (old == document) return;
  if (old) loom_recovery_forget(self, old);
  if (document) loom_recovery_watch(self, document);
  g_object_set_qdata_full(G_OBJECT(window), window_document_quark(), document ? g_object_ref(document) : NULL,
                          g_object_unref);
}

static void on_window_added(LoomRecovery *self, GtkWindow *window) {
  GParamSpec *pspec = g_object_class_find_property(G_OBJECT_GET_CLASS(window), "document");
  if (!pspec || !g_type_is_a(pspec->value_type, LOOM_TYPE_DOCUMENT)) return;
  g_signal_connect_object(window, "notify::document", G_CALLBACK(sync_window), self, 0);
  sync_window(window, NULL, self);
}

static void on_window_removed(LoomRecovery *self, GtkWindow *window) {
  /* Closed: whatever it held was saved or deliberately discarded. */
  LoomDocument *old = g_object_get_qdata(G_OBJECT(window), window_document_quark());
  if (old) loom_recovery_forget(self, old);
  g_signal_handlers_disconnect_by_data(window, self);
  g_object_set_qdata(G_OBJECT(window), window_document_quark(), NULL);
}

void loom_recovery_track_windows(LoomRecovery *self, GtkApplication *app) {
  g_return_if_fail(LOOM_IS_RECOVERY(self));
  g_return_if_fail(GTK_IS_APPLICATION(app));
  g_signal_connect_object(app, "window-added", G_CALLBACK(on_window_added), self, G_CONNECT_SWAPPED);
  g_signal_connect_object(app, "window-removed", G_CALLBACK(on_window_removed), self, G_CONNECT_SWAPPED);
  for (GList *l = gtk_application_get_windows(app); l; l = l->next) on_window_added(self, l->data);
}

/* ---- properties ---- */

const char *loom_recovery_get_directory(LoomRecovery *self) {
  g_return_val_if_fail(LOOM_IS_RECOVERY(self), NULL);
  return self->directory;
}

void loom_recovery_set_directory(LoomRecovery *self, const char *directory) {
  g_return_if_fail(LOOM_IS_RECOVERY(self));
  g_autofree char *dir = directory ? g_strdup(directory)
                                   : g_build_filename(g_get_user_state_dir(), "loom-workbench", "recovery", NULL);
  if (g_strcmp0(dir, self->directory) == 0) return;
  g_free(self->directory);
  self->directory = g_steal_pointer(&dir);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_DIRECTORY]);
}

guint loom_recovery_get_interval(LoomRecovery *self) {
  g_return_val_if_fail(LOOM_IS_RECOVERY(self), 0);
  return self->interval;
}

void loom_recovery_set_interval(LoomRecovery *self, guint seconds) {
  g_return_if_fail(LOOM_IS_RECOVERY(self));
  if (self->interval == seconds) return;
  self->interval = seconds;
  GHashTableIter iter;
  Entry *e;
  g_hash_table_iter_init(&iter, self->entries);
  while (g_hash_table_iter_next(&iter, NULL, (gpointer *)&e)) {
    g_clear_handle_id(&e->timer, g_source_remove);
    e->pending_since = 0;
    if (seconds > 0 && loom_document_get_needs_recovery(e->document)) schedule(e);
  }
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_INTERVAL]);
}

LoomRecovery *loom_recovery_new(const char *directory) {
  LoomRecovery *self = g_object_new(LOOM_TYPE_RECOVERY, NULL);
  loom_recovery_set_directory(self, directory);
  return self;
}

static void loom_recovery_dispose(GObject *object) {
  LoomRecovery *self = LOOM_RECOVERY(object);
  g_hash_table_remove_all(self->entries);
  G_OBJECT_CLASS(loom_recovery_parent_class)->dispose(object);
}

static void loom_recovery_finalize(GObject *object) {
  LoomRecovery *self = LOOM_RECOVERY(object);
  g_hash_table_unref(self->entries);
  g_free(self->directory);
  G_OBJECT_CLASS(loom_recovery_parent_class)->finalize(object);
}

static void loom_recovery_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomRecovery *self = LOOM_RECOVERY(object);
  switch (prop_id) {
  case PROP_DIRECTORY: g_value_set_string(value, self->directory); break;
  case PROP_INTERVAL: g_value_set_uint(value, self->interval); break;
  case PROP_BUSY: g_value_set_boolean(value, self->n_jobs > 0); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_recovery_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  LoomRecovery *self = LOOM_RECOVERY(object);
  switch (prop_id) {
  case PROP_DIRECTORY: loom_recovery_set_directory(self, g_value_get_string(value)); break;
  case PROP_INTERVAL: loom_recovery_set_interval(self, g_value_get_uint(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_recovery_class_init(LoomRecoveryClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->dispose = loom_recovery_dispose;
  object_class->finalize = loom_recovery_finalize;
  object_class->get_property = loom_recovery_get_property;
  object_class->set_property = loom_recovery_set_property;

  properties[PROP_DIRECTORY] = g_param_spec_string("directory", NULL, NULL, NULL,
                                                   G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                                     G_PARAM_STATIC_STRINGS);
  /* Bound to the GSettings key autosave-interval. */
  properties[PROP_INTERVAL] = g_param_spec_uint("interval", NULL, NULL, 0, 3600, LOOM_RECOVERY_DEFAULT_INTERVAL,
                                                G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                                  G_PARAM_STATIC_STRINGS);
  properties[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE,
                                               G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void loom_recovery_init(LoomRecovery *self) {
  self->interval = LOOM_RECOVERY_DEFAULT_INTERVAL;
  self->entries = g_hash_table_new_full(NULL, NULL, NULL, (GDestroyNotify)entry_free);
}
