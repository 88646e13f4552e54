/*
 * LoomDocument owns the network the window shows. It lives on the main
 * thread; file I/O runs on GTask worker threads that only ever touch a
 * private copy of the network (DESIGN.md §6: the UI never waits on I/O, and
 * a worker never shares mutable state with the UI).
 */
#include "loom-document.h"

#include <glib/gi18n.h>
#include <loom/model.h>

struct _LoomDocument {
  GObject parent_instance;

  loom_net *net;
  GFile *file;
  char *title;
  gboolean dirty;
  /* Bumped by every change; a save only clears `dirty` when nothing changed
   * between taking its snapshot and finishing. */
  guint64 generation;
};

G_DEFINE_FINAL_TYPE(LoomDocument, loom_document, G_TYPE_OBJECT)
G_DEFINE_QUARK(loom-engine-error-quark, loom_engine_error)

/* GTask source tags; ISO C cannot turn the functions themselves into gpointers. */
static char load_tag, save_tag;

enum { PROP_0, PROP_FILE, PROP_TITLE, PROP_DIRTY, N_PROPS };
static GParamSpec *properties[N_PROPS];

static void set_engine_error(GError **error, const loom_error *err) {
  g_set_error_literal(error, LOOM_ENGINE_ERROR, err->code, err->message);
}

static void update_title(LoomDocument *self) {
  g_free(self->title);
  if (self->file) {
    g_autofree char *base = g_file_get_basename(self->file);
    self->title = g_filename_display_name(base);
  } else {
    self->title = g_strdup(_("Untitled network"));
  }
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_TITLE]);
}

static void set_file(LoomDocument *self, GFile *file) {
  if (self->file == file || (self->file && file && g_file_equal(self->file, file))) return;
  g_set_object(&self->file, file);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_FILE]);
  update_title(self);
}

/* Takes ownership of net. */
static LoomDocument *document_new_take(loom_net *net, GFile *file) {
  LoomDocument *self = g_object_new(LOOM_TYPE_DOCUMENT, NULL);
  self->net = net;
  if (file) self->file = g_object_ref(file);
  update_title(self);
  return self;
}

LoomDocument *loom_document_new(GError **error) {
  loom_error err = {0};
  loom_net *net = loom_net_new(LOOM_DOCUMENT_NEW_DEPTH, LOOM_DOCUMENT_NEW_ROWS, LOOM_DOCUMENT_NEW_COLS,
                               LOOM_DOCUMENT_NEW_LAYERS_PER_CELL, &err);
  if (!net) {
    set_engine_error(error, &err);
    return NULL;
  }
  return document_new_take(net, NULL);
}

/* The engine speaks paths; GFiles from portals and the command line are
 * local (FUSE-backed at worst), so a missing path is a real limitation. */
static char *local_path(GFile *file, GError **error) {
  char *path = g_file_get_path(file);
  if (!path) {
    g_autofree char *uri = g_file_get_uri(file);
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED,
                _("%s is not a local file; only local files can be opened and saved"), uri);
  }
  return path;
}

/* ---- load ---- */

static void load_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable) {
  GFile *file = task_data;
  GError *error = NULL;
  g_autofree char *path = local_path(file, &error);
  if (!path) {
    g_task_return_error(task, error);
    return;
  }
  loom_error err = {0};
  loom_net *net = NULL;
  if (loom_model_load(path, LOOM_MODEL_STRICT, &net, &err) != LOOM_OK) {
    set_engine_error(&error, &err);
    g_task_return_error(task, error);
    return;
  }
  g_task_return_pointer(task, net, (GDestroyNotify)loom_net_free);
}

void loom_document_load_async(GFile *file, GCancellable *cancellable, GAsyncReadyCallback callback,
                              gpointer user_data) {
  g_return_if_fail(G_IS_FILE(file));
  g_autoptr(GTask) task = g_task_new(NULL, cancellable, callback, user_data);
  g_task_set_source_tag(task, &load_tag);
  g_task_set_task_data(task, g_object_ref(file), g_object_unref);
  g_task_run_in_thread(task, load_thread);
}

LoomDocument *loom_document_load_finish(GAsyncResult *result, GError **error) {
  g_return_val_if_fail(g_task_is_valid(result, NULL), NULL);
  GTask *task = G_TASK(result);
  loom_net *net = g_task_propagate_pointer(task, error);
  if (!net) return NULL;
  return document_new_take(net, g_task_get_task_data(task));
}

/* ---- save ---- */

typedef struct {
  loom_net *snapshot;
  GFile *file;
  guint64 generation;
} SaveData;

static void save_data_free(SaveData *data) {
  loom_net_free(data->snapshot);
  g_object_unref(data->file);
  g_free(data);
}

static void save_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable) {
  SaveData *data = task_data;
  GError *error = NULL;
  g_autofree char *path = local_path(data->file, &error);
  if (!path) {
    g_task_return_error(task, error);
    return;
  }
  loom_error err = {0};
  if (loom_model_save(data->snapshot, path, &err) != LOOM_OK) {
    set_engine_error(&error, &err);
    g_task_return_error(task, error);
    return;
  }
  g_task_return_boolean(task, TRUE);
}

void loom_document_save_async(LoomDocument *self, GFile *file, GCancellable *cancellable,
                              GAsyncReadyCallback callback, gpointer user_data) {
  g_return_if_fail(LOOM_IS_DOCUMENT(self));
  g_return_if_fail(G_IS_FILE(file));
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, &save_tag);

  loom_error err = {0};
  loom_net *snapshot = loom_net_clone(self->net, &err);
  if (!snapshot) {
    GError *error = NULL;
    set_engine_error(&error, &err);
    g_task_return_error(task, error);
    return;
  }
  SaveData *data = g_new0(SaveData, 1);
  data->snapshot = snapshot;
  data->file = g_object_ref(file);
  data->generation = self->generation;
  g_task_set_task_data(task, data, (GDestroyNotify)save_data_free);
  g_task_run_in_thread(task, save_thread);
}

gboolean loom_document_save_finish(LoomDocument *self, GAsyncResult *result, GError **error) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), FALSE);
  g_return_val_if_fail(g_task_is_valid(result, self), FALSE);
  GTask *task = G_TASK(result);
  if (!g_task_propagate_boolean(task, error)) return FALSE;
  SaveData *data = g_task_get_task_data(task);
  set_file(self, data->file);
  if (data->generation == self->generation) loom_document_set_dirty(self, FALSE);
  return TRUE;
}

/* ---- accessors ---- */

const loom_net *loom_document_get_net(LoomDocument *self) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), NULL);
  return self->net;
}

GFile *loom_document_get_file(LoomDocument *self) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), NULL);
  return self->file;
}

const char *loom_document_get_title(LoomDocument *self) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), NULL);
  return self->title;
}

gboolean loom_document_get_dirty(LoomDocument *self) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), FALSE);
  return self->dirty;
}

void loom_document_set_dirty(LoomDocument *self, gboolean dirty) {
  g_return_if_fail(LOOM_IS_DOCUMENT(self));
  dirty = !!dirty;
  if (dirty) self->generation++;
  if (self->dirty == dirty) return;
  self->dirty = dirty;
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_DIRTY]);
}

static void loom_document_finalize(GObject *object) {
  LoomDocument *self = LOOM_DOCUMENT(object);
  loom_net_free(self->net);
  g_clear_object(&self->file);
  g_free(self->title);
  G_OBJECT_CLASS(loom_document_parent_class)->finalize(object);
}

static void loom_document_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomDocument *self = LOOM_DOCUMENT(object);
  switch (prop_id) {
  case PROP_FILE: g_value_set_object(value, self->file); break;
  case PROP_TITLE: g_value_set_string(value, self->title); break;
  case PROP_DIRTY: g_value_set_boolean(value, self->dirty); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_document_set_property(GObject *object, guint prop_id, const GValue *value,
                                       GParamSpec *pspec) {
  LoomDocument *self = LOOM_DOCUMENT(object);
  switch (prop_id) {
  case PROP_DIRTY: loom_document_set_dirty(self, g_value_get_boolean(value)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_document_class_init(LoomDocumentClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->finalize = loom_document_finalize;
  object_class->get_property = loom_document_get_property;
  object_class->set_property = loom_document_set_property;

  properties[PROP_FILE] = g_param_spec_object("file", NULL, NULL, G_TYPE_FILE,
                                              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_TITLE] = g_param_spec_string("title", NULL, NULL, NULL,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_DIRTY] = g_param_spec_boolean("dirty", NULL, NULL, FALSE,
                                                G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                                  G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);
}

static void loom_document_init(LoomDocument *self) {}
