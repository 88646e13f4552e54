/*
 * LoomDocument owns the network the window shows. It lives on the main
 * thread; file I/O runs on GTask worker threads that only ever touch a
 * private copy of the network (DESIGN.md §6: the UI never waits on I/O, and
 * a worker never shares mutable state with the UI). Edits run through the
 * command stack; after each one shape inference re-runs on the main thread
 * (it only builds the layers whose input changed).
 */
#include "loom-document.h"

#include <glib/gi18n.h>
#include <loom/model.h>
#include <stdlib.h>

struct _LoomDocument {
  GObject parent_instance;

  loom_net *net;
  GFile *file;
  char *title;
  char *untitled_title; /* the example's title until the first save; NULL: "Untitled network" */
  LoomCommandStack *commands;
  loom_diag *diags;
  int n_diags;
  /* Bumped by every change of the stack; a save only marks the stack clean
   * when nothing changed between taking its snapshot and finishing. */
  guint64 generation;
  gboolean recovered; /* recovered after a crash and not saved since */
  LoomTrainingExtras training; /* settings, trainer state; commands swap them */
  struct {
    const loom_net *net; /* NULL: none */
    GBytes *state;
    gint64 steps;
    gpointer owner;
    GDestroyNotify owner_free;
  } live;
};

G_DEFINE_FINAL_TYPE(LoomDocument, loom_document, G_TYPE_OBJECT)
G_DEFINE_QUARK(loom-engine-error-quark, loom_engine_error)

/* GTask source tags; ISO C cannot turn the functions themselves into gpointers. */
static char load_tag, save_tag;

enum { PROP_0, PROP_FILE, PROP_TITLE, PROP_DIRTY, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_CHANGED, SIGNAL_LIVE_CHANGED, N_SIGNALS };
static guint signals[N_SIGNALS];

static void set_engine_error(GError **error, const loom_error *err) {
  g_set_error_literal(error, LOOM_ENGINE_ERROR, err->code, err->message);
}

static void update_title(LoomDocument *self) {
  g_free(self->title);
  if (self->file) {
    g_autofree char *base = g_file_get_basename(self->file);
    self->title = g_filename_display_name(base);
  } else {
    self->title = g_strdup(self->untitled_title ? self->untitled_title : _("Untitled network"));
  }
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_TITLE]);
}

static void set_file(LoomDocument *self, GFile *file) {
  if (self->file == file || (self->file && file && g_file_equal(self->file, file))) return;
  g_set_object(&self->file, file);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_FILE]);
  update_title(self);
}

static void infer(LoomDocument *self) {
  g_clear_pointer(&self->diags, free);
  self->n_diags = 0;
  loom_diag *diags = NULL;
  int n = loom_net_infer_shapes(self->net, LOOM_DOCUMENT_SEED, &diags);
  self->diags = diags;
  self->n_diags = n > 0 ? n : 0;
}

static void on_stack_changed(LoomDocument *self) {
  self->generation++;
  infer(self);
  g_signal_emit(self, signals[SIGNAL_CHANGED], 0);
}

static void on_stack_dirty(LoomDocument *self) {
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_DIRTY]);
}

/* Moves what a model file carried for training into the document; without
 * settings, the defaults (a network file saved before it trained). */
static void take_extras(LoomDocument *self, loom_model_extras *extras) {
  if (extras && extras->settings) self->training.settings = g_steal_pointer(&extras->settings);
  else self->training.settings = loom_train_settings_new();
  if (extras && extras->train_state && extras->train_state_len > 0) {
    self->training.state = g_bytes_new_with_free_func(extras->train_state, extras->train_state_len, free,
                                                      extras->train_state);
    extras->train_state = NULL;
    extras->train_state_len = 0;
  }
  self->training.steps = extras ? extras->train_steps : 0;
  loom_model_extras_clear(extras);
}

/* Takes ownership of net and of what @extras holds (may be NULL). */
static LoomDocument *document_new_take(loom_net *net, loom_model_extras *extras, GFile *file,
                                       const char *untitled_title) {
  LoomDocument *self = g_object_new(LOOM_TYPE_DOCUMENT, NULL);
  self->net = net;
  take_extras(self, extras);
  if (file) self->file = g_object_ref(file);
  self->untitled_title = g_strdup(untitled_title);
  self->commands = loom_command_stack_new(net);
  loom_command_stack_set_extras(self->commands, &self->training);
  g_signal_connect_object(self->commands, "changed", G_CALLBACK(on_stack_changed), self, G_CONNECT_SWAPPED);
  g_signal_connect_object(self->commands, "notify::dirty", G_CALLBACK(on_stack_dirty), self, G_CONNECT_SWAPPED);
  infer(self);
  update_title(self);
  return self;
}

LoomDocument *loom_document_new(GError **error) {
  loom_shape input = loom_shape_1d(LOOM_DOCUMENT_NEW_INPUT_FEATURES);
  return loom_document_new_sized(LOOM_DOCUMENT_NEW_DEPTH, LOOM_DOCUMENT_NEW_ROWS, LOOM_DOCUMENT_NEW_COLS,
                                 LOOM_DOCUMENT_NEW_LAYERS_PER_CELL, &input, error);
}

LoomDocument *loom_document_new_sized(int depth, int rows, int cols, int layers_per_cell, const loom_shape *input,
                                      GError **error) {
  g_return_val_if_fail(input != NULL, NULL);
  loom_error err = {0};
  loom_net *net = loom_net_new(depth, rows, cols, layers_per_cell, &err);
  if (!net || loom_net_set_input_shape(net, input, &err) != LOOM_OK) {
    loom_net_free(net);
    set_engine_error(error, &err);
    return NULL;
  }
  return document_new_take(net, NULL, NULL, NULL);
}

LoomDocument *loom_document_new_for_example(const char *name, GError **error) {
  g_return_val_if_fail(name != NULL, NULL);
  loom_error err = {0};
  loom_net *net = NULL;
  if (loom_example_build(name, &net, &err) != LOOM_OK) {
    set_engine_error(error, &err);
    return NULL;
  }
  /* Every example opens ready to train: Play is the only click. */
  loom_model_extras extras = {0};
  if (loom_example_settings(name, &extras.settings, &err) != LOOM_OK) {
    loom_net_free(net);
    set_engine_error(error, &err);
    return NULL;
  }
  /* Shown as the title (translated) until the copy is saved under a file name. */
  const char *title = NULL;
  for (int i = 0; i < loom_example_count() && !title; i++)
    if (g_str_equal(loom_example_name(i), name)) title = loom_example_title(i);
  return document_new_take(net, &extras, NULL, title);
}

LoomDocument *loom_document_new_recovered(loom_net *net, loom_model_extras *extras, GFile *file,
                                          const char *title) {
  g_return_val_if_fail(net != NULL, NULL);
  g_return_val_if_fail(file == NULL || G_IS_FILE(file), NULL);
  LoomDocument *self = document_new_take(net, extras, file, title);
  self->recovered = TRUE;
  loom_command_stack_mark_unsaved(self->commands);
  return self;
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

typedef struct {
  loom_net *net;
  loom_model_extras extras;
} Loaded;

static void loaded_free(Loaded *loaded) {
  if (loaded->net) loom_net_free(loaded->net);
  loom_model_extras_clear(&loaded->extras);
  g_free(loaded);
}

static void load_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable) {
  GFile *file = task_data;
  GError *error = NULL;
  g_autofree char *path = local_path(file, &error);
  if (!path) {
    g_task_return_error(task, error);
    return;
  }
  loom_error err = {0};
  Loaded *loaded = g_new0(Loaded, 1);
  if (loom_model_load_ex(path, LOOM_MODEL_STRICT, &loaded->net, &loaded->extras, &err) != LOOM_OK) {
    loaded_free(loaded);
    set_engine_error(&error, &err);
    g_task_return_error(task, error);
    return;
  }
  g_task_return_pointer(task, loaded, (GDestroyNotify)loaded_free);
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
  Loaded *loaded = g_task_propagate_pointer(task, error);
  if (!loaded) return NULL;
  LoomDocument *self = document_new_take(g_steal_pointer(&loaded->net), &loaded->extras, g_task_get_task_data(task),
                                         NULL);
  loaded_free(loaded);
  return self;
}

/* ---- save ---- */

typedef struct {
  loom_net *snapshot;
  loom_model_extras extras;
  GBytes *state; /* backs extras.train_state */
  GFile *file;
  guint64 generation;
} SaveData;

static void save_data_free(SaveData *data) {
  loom_net_free(data->snapshot);
  data->extras.train_state = NULL; /* borrowed from data->state */
  loom_model_extras_clear(&data->extras);
  g_clear_pointer(&data->state, g_bytes_unref);
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
  if (loom_model_save_ex(data->snapshot, &data->extras, path, &err) != LOOM_OK) {
    set_engine_error(&error, &err);
    g_task_return_error(task, error);
    return;
  }
  g_task_return_boolean(task, TRUE);
}

/* The document's training extras for the model file; the state blob is
 * borrowed from *@state (a new reference the caller drops). */
static void fill_extras(LoomDocument *self, loom_model_extras *extras, GBytes **state) {
  extras->settings = loom_train_settings_copy(self->training.settings);
  extras->train_steps = self->training.steps;
  if (self->training.state) {
    *state = g_bytes_ref(self->training.state);
    gsize len;
    extras->train_state = (void *)g_bytes_get_data(*state, &len);
    extras->train_state_len = len;
  }
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
  fill_extras(self, &data->extras, &data->state);
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
  self->recovered = FALSE;
  if (data->generation == self->generation) loom_command_stack_mark_clean(self->commands);
  return TRUE;
}

/* ---- accessors ---- */

char *loom_document_to_json(LoomDocument *self, size_t *len, GError **error) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), NULL);
  loom_model_extras extras = {0};
  GBytes *state = NULL;
  fill_extras(self, &extras, &state);
  const loom_net *net = self->net;
  if (self->live.net) {
    net = self->live.net;
    extras.train_steps = self->live.steps;
    g_clear_pointer(&state, g_bytes_unref);
    extras.train_state = NULL;
    extras.train_state_len = 0;
    if (self->live.state) {
      state = g_bytes_ref(self->live.state);
      gsize n;
      extras.train_state = (void *)g_bytes_get_data(state, &n);
      extras.train_state_len = n;
    }
  }
  loom_error err = {0};
  char *json = loom_model_to_json_ex(net, &extras, len, &err);
  extras.train_state = NULL;
  loom_model_extras_clear(&extras);
  g_clear_pointer(&state, g_bytes_unref);
  if (!json) set_engine_error(error, &err);
  return json;
}

static void live_release(LoomDocument *self) {
  if (self->live.owner_free) self->live.owner_free(self->live.owner);
  memset(&self->live, 0, sizeof self->live);
}

void loom_document_set_live_training(LoomDocument *self, const loom_net *net, GBytes *state, gint64 steps,
                                     gpointer owner, GDestroyNotify owner_free) {
  g_return_if_fail(LOOM_IS_DOCUMENT(self));
  g_return_if_fail(net != NULL);
  live_release(self);
  self->live.net = net;
  self->live.state = state;
  self->live.steps = steps;
  self->live.owner = owner;
  self->live.owner_free = owner_free;
  g_signal_emit(self, signals[SIGNAL_LIVE_CHANGED], 0);
}

void loom_document_clear_live_training(LoomDocument *self) {
  g_return_if_fail(LOOM_IS_DOCUMENT(self));
  if (!self->live.net) return;
  live_release(self);
  g_signal_emit(self, signals[SIGNAL_LIVE_CHANGED], 0);
}

gboolean loom_document_get_needs_recovery(LoomDocument *self) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), FALSE);
  return loom_document_get_dirty(self) || (self->live.net && self->live.steps != self->training.steps);
}

const LoomTrainingExtras *loom_document_get_training(LoomDocument *self) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), NULL);
  return &self->training;
}

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
  return loom_command_stack_get_dirty(self->commands);
}

gboolean loom_document_get_recovered(LoomDocument *self) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), FALSE);
  return self->recovered;
}

/* ---- editing ---- */

LoomCommandStack *loom_document_get_commands(LoomDocument *self) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), NULL);
  return self->commands;
}

gboolean loom_document_execute(LoomDocument *self, LoomCommand *cmd, GError **error) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), FALSE);
  g_return_val_if_fail(cmd != NULL, FALSE);
  return loom_command_stack_push(self->commands, cmd, error);
}

gboolean loom_document_undo(LoomDocument *self, GError **error) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), FALSE);
  return loom_command_stack_undo(self->commands, error);
}

gboolean loom_document_redo(LoomDocument *self, GError **error) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), FALSE);
  return loom_command_stack_redo(self->commands, error);
}

const loom_diag *loom_document_get_diagnostics(LoomDocument *self, int *n_diags) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), NULL);
  if (n_diags) *n_diags = self->n_diags;
  return self->diags;
}

loom_layer *loom_document_make_layer(LoomDocument *self, const char *type_name, loom_coord at, GError **error) {
  g_return_val_if_fail(LOOM_IS_DOCUMENT(self), NULL);
  g_return_val_if_fail(type_name != NULL, NULL);
  loom_error err = {0};
  loom_layer *layer = loom_layer_new_by_name(type_name, &err);
  if (!layer) {
    set_engine_error(error, &err);
    return NULL;
  }
  /* Where the spine cannot tell yet (nothing upstream is valid), the layer
   * keeps its defaults and shape inference explains the problem at the slot. */
  loom_shape in;
  if (loom_net_propose_input(self->net, at, &in, NULL) == LOOM_OK && in.rank > 0)
    loom_layer_adapt_to_input(layer, &in, NULL);
  return layer;
}

static void loom_document_finalize(GObject *object) {
  LoomDocument *self = LOOM_DOCUMENT(object);
  live_release(self);
  g_clear_object(&self->commands);
  loom_net_free(self->net);
  g_clear_pointer(&self->diags, free);
  g_clear_object(&self->file);
  g_free(self->title);
  g_free(self->untitled_title);
  if (self->training.settings) loom_train_settings_free(self->training.settings);
  g_clear_pointer(&self->training.state, g_bytes_unref);
  G_OBJECT_CLASS(loom_document_parent_class)->finalize(object);
}

static void loom_document_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomDocument *self = LOOM_DOCUMENT(object);
  switch (prop_id) {
  case PROP_FILE: g_value_set_object(value, self->file); break;
  case PROP_TITLE: g_value_set_string(value, self->title); break;
  case PROP_DIRTY: g_value_set_boolean(value, loom_document_get_dirty(self)); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_document_class_init(LoomDocumentClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  object_class->finalize = loom_document_finalize;
  object_class->get_property = loom_document_get_property;

  properties[PROP_FILE] = g_param_spec_object("file", NULL, NULL, G_TYPE_FILE,
                                              G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  properties[PROP_TITLE] = g_param_spec_string("title", NULL, NULL, NULL,
                                               G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  /* Follows the command stack: TRUE while the network differs from its file. */
  properties[PROP_DIRTY] = g_param_spec_boolean("dirty", NULL, NULL, FALSE,
                                                G_PARAM_READABLE | G_PARAM_EXPLICIT_NOTIFY | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  /* After every edit, undo or redo, once the diagnostics are up to date. */
  signals[SIGNAL_CHANGED] = g_signal_new("changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                         NULL, G_TYPE_NONE, 0);
  /* Live training weights were set or cleared (loom_document_set_live_training). */
  signals[SIGNAL_LIVE_CHANGED] = g_signal_new("live-changed", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL,
                                              NULL, NULL, G_TYPE_NONE, 0);
}

static void loom_document_init(LoomDocument *self) {}
