/*
 * The recovery directory on disk: the sidecar format, finding the copies a
 * crash left behind (scan) and reading one back (restore). Both run on GTask
 * threads. A copy belongs to a dead process when its PID is gone — or was
 * reused: the sidecar also records the boot and the process's start time,
 * so a PID alive after a reboot or reused by another program does not keep
 * a copy hidden.
 *
 * Sidecar (<id>.json), format 1:
 *   {"format": 1, "title": "…", "file": "/abs/path" | null,
 *    "modified": "ISO 8601", "pid": 1234, "boot-id": "…", "start-time": 5678}
 */
#include <errno.h>
#include <glib/gi18n.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <loom/model.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "loom-recovery-private.h"

#define SIDECAR_FORMAT 1
#define SIDECAR_MAX_BYTES (64 * 1024)
#define COPY_SUFFIX ".loom.json"
#define SIDECAR_SUFFIX ".json"
#define DAMAGED_DIR "damaged"

static char scan_tag, restore_tag, discard_tag;

void loom_recovery_item_free(LoomRecoveryItem *item) {
  if (!item) return;
  g_free(item->id);
  g_free(item->copy_path);
  g_free(item->sidecar_path);
  g_free(item->title);
  g_free(item->original_path);
  g_clear_pointer(&item->modified, g_date_time_unref);
  g_free(item);
}

static LoomRecoveryItem *item_copy(const LoomRecoveryItem *item) {
  LoomRecoveryItem *copy = g_new0(LoomRecoveryItem, 1);
  copy->id = g_strdup(item->id);
  copy->copy_path = g_strdup(item->copy_path);
  copy->sidecar_path = g_strdup(item->sidecar_path);
  copy->title = g_strdup(item->title);
  copy->original_path = g_strdup(item->original_path);
  copy->modified = item->modified ? g_date_time_ref(item->modified) : NULL;
  return copy;
}

char *loom_recovery_copy_path(const char *directory, const char *id) {
  g_autofree char *name = g_strconcat(id, COPY_SUFFIX, NULL);
  return g_build_filename(directory, name, NULL);
}

char *loom_recovery_sidecar_path(const char *directory, const char *id) {
  g_autofree char *name = g_strconcat(id, SIDECAR_SUFFIX, NULL);
  return g_build_filename(directory, name, NULL);
}

/* ---- who owns a copy ---- */

static char *boot_id(void) {
  char *text = NULL;
  if (!g_file_get_contents("/proc/sys/kernel/random/boot_id", &text, NULL, NULL)) return NULL;
  return g_strstrip(text);
}

/* Field 22 of /proc/PID/stat (clock ticks after boot); 0 where unknown. */
static guint64 start_time(pid_t pid) {
  g_autofree char *path = g_strdup_printf("/proc/%d/stat", (int)pid);
  g_autofree char *text = NULL;
  if (!g_file_get_contents(path, &text, NULL, NULL)) return 0;
  const char *p = strrchr(text, ')'); /* the command name may hold spaces */
  if (!p) return 0;
  g_auto(GStrv) fields = g_strsplit(p + 1, " ", 0);
  /* fields[0] is empty (the space after ')'), fields[1] is field 3. */
  if (g_strv_length(fields) < 21) return 0;
  return g_ascii_strtoull(fields[20], NULL, 10);
}

static gboolean owner_alive(gint64 pid, const char *recorded_boot, guint64 recorded_start) {
  if (pid <= 0 || pid > G_MAXINT) return FALSE;
  if (pid == getpid()) return TRUE;
  g_autofree char *boot = boot_id();
  if (recorded_boot && boot && !g_str_equal(recorded_boot, boot)) return FALSE;
  if (kill((pid_t)pid, 0) != 0 && errno == ESRCH) return FALSE;
  guint64 start = start_time((pid_t)pid);
  if (recorded_start && start && start != recorded_start) return FALSE;
  return TRUE;
}

/* ---- the sidecar ---- */

char *loom_recovery_sidecar_new(const char *title, const char *original_path, GDateTime *modified) {
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "format");
  json_builder_add_int_value(b, SIDECAR_FORMAT);
  json_builder_set_member_name(b, "title");
  json_builder_add_string_value(b, title);
  json_builder_set_member_name(b, "file");
  if (original_path)
    json_builder_add_string_value(b, original_path);
  else
    json_builder_add_null_value(b);
  g_autofree char *when = g_date_time_format_iso8601(modified);
  json_builder_set_member_name(b, "modified");
  json_builder_add_string_value(b, when);
  json_builder_set_member_name(b, "pid");
  json_builder_add_int_value(b, getpid());
  g_autofree char *boot = boot_id();
  if (boot) {
    json_builder_set_member_name(b, "boot-id");
    json_builder_add_string_value(b, boot);
  }
  guint64 start = start_time(getpid());
  if (start) {
    json_builder_set_member_name(b, "start-time");
    json_builder_add_int_value(b, (gint64)start);
  }
  json_builder_end_object(b);
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  g_autoptr(JsonGenerator) gen = json_generator_new();
  json_generator_set_pretty(gen, TRUE);
  json_generator_set_root(gen, root);
  return json_generator_to_data(gen, NULL);
}

static gboolean member_is(JsonObject *o, const char *name, GType type) {
  JsonNode *n = json_object_get_member(o, name);
  return n && JSON_NODE_HOLDS_VALUE(n) && json_node_get_value_type(n) == type;
}

typedef struct {
  LoomRecoveryItem *item;
  gint64 pid;
  char *boot_id;
  guint64 start_time;
} Sidecar;

/* Parses @path; on failure says what was expected. */
static gboolean sidecar_read(const char *path, Sidecar *out, GError **error) {
  g_autofree char *text = NULL;
  gsize len = 0;
  if (!g_file_get_contents(path, &text, &len, error)) return FALSE;
  if (len > SIDECAR_MAX_BYTES) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, _("larger than %d bytes"), SIDECAR_MAX_BYTES);
    return FALSE;
  }
  g_autoptr(JsonParser) parser = json_parser_new();
  if (!json_parser_load_from_data(parser, text, (gssize)len, error)) return FALSE;
  JsonNode *root = json_parser_get_root(parser);
  JsonObject *o = root && JSON_NODE_HOLDS_OBJECT(root) ? json_node_get_object(root) : NULL;
  JsonNode *file = o ? json_object_get_member(o, "file") : NULL;
  if (!o || !member_is(o, "format", G_TYPE_INT64) || json_object_get_int_member(o, "format") != SIDECAR_FORMAT ||
      !member_is(o, "title", G_TYPE_STRING) || !member_is(o, "modified", G_TYPE_STRING) ||
      !member_is(o, "pid", G_TYPE_INT64) || !file ||
      !(JSON_NODE_HOLDS_NULL(file) || member_is(o, "file", G_TYPE_STRING))) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                _("expected an object with format 1, a title, a file (a path or null), a time and a PID"));
    return FALSE;
  }
  GDateTime *modified = g_date_time_new_from_iso8601(json_object_get_string_member(o, "modified"), NULL);
  if (!modified) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, _("“modified” is not an ISO 8601 time"));
    return FALSE;
  }
  LoomRecoveryItem *item = g_new0(LoomRecoveryItem, 1);
  item->title = g_strdup(json_object_get_string_member(o, "title"));
  item->original_path = JSON_NODE_HOLDS_NULL(file) ? NULL : g_strdup(json_object_get_string_member(o, "file"));
  item->modified = modified;
  out->item = item;
  out->pid = json_object_get_int_member(o, "pid");
  out->boot_id = member_is(o, "boot-id", G_TYPE_STRING) ? g_strdup(json_object_get_string_member(o, "boot-id"))
                                                         : NULL;
  out->start_time = member_is(o, "start-time", G_TYPE_INT64) ? (guint64)json_object_get_int_member(o, "start-time")
                                                              : 0;
  return TRUE;
}

/* Moves @path into the damaged/ folder (never over an earlier one); returns
 * where it went, or NULL when it was not there. */
static char *move_aside(const char *directory, const char *path) {
  if (!g_file_test(path, G_FILE_TEST_EXISTS)) return NULL;
  g_autofree char *dir = g_build_filename(directory, DAMAGED_DIR, NULL);
  g_mkdir_with_parents(dir, 0700);
  g_autofree char *base = g_path_get_basename(path);
  char *target = g_build_filename(dir, base, NULL);
  for (int i = 1; g_file_test(target, G_FILE_TEST_EXISTS) && i < 1000; i++) {
    g_free(target);
    g_autofree char *name = g_strdup_printf("%d-%s", i, base);
    target = g_build_filename(dir, name, NULL);
  }
  if (g_rename(path, target) != 0) {
    g_unlink(path); /* it must not be offered again */
    g_clear_pointer(&target, g_free);
  }
  return target;
}

/* ---- scan ---- */

typedef struct {
  GPtrArray *items;
  GPtrArray *problems;
} ScanResult;

static void scan_result_free(ScanResult *r) {
  g_ptr_array_unref(r->items);
  g_ptr_array_unref(r->problems);
  g_free(r);
}

static int by_time(gconstpointer a, gconstpointer b) {
  const LoomRecoveryItem *x = *(LoomRecoveryItem *const *)a, *y = *(LoomRecoveryItem *const *)b;
  return g_date_time_compare(x->modified, y->modified);
}

static void scan_one(const char *directory, const char *id, ScanResult *r) {
  g_autofree char *sidecar_path = loom_recovery_sidecar_path(directory, id);
  g_autofree char *copy_path = loom_recovery_copy_path(directory, id);
  Sidecar s = {0};
  g_autoptr(GError) error = NULL;
  if (!sidecar_read(sidecar_path, &s, &error)) {
    g_autofree char *moved = move_aside(directory, sidecar_path);
    g_autofree char *moved_copy = move_aside(directory, copy_path);
    g_autofree char *damaged = g_build_filename(directory, DAMAGED_DIR, NULL);
    /* Translators: the first %s is a file, the second why it is damaged, the third a folder. */
    char *problem = g_strdup_printf(_("The recovery file “%s” is damaged (%s). It was moved, with the network "
                                      "copy beside it, to “%s”."),
                                    sidecar_path, error->message, damaged);
    g_ptr_array_add(r->problems, problem);
    return;
  }
  g_autoptr(LoomRecoveryItem) item = s.item;
  g_autofree char *boot = s.boot_id;
  if (owner_alive(s.pid, boot, s.start_time)) return; /* still being edited */
  if (!g_file_test(copy_path, G_FILE_TEST_IS_REGULAR)) {
    /* A first write that never got to the copy: nothing to recover. */
    g_unlink(sidecar_path);
    return;
  }
  item->id = g_strdup(id);
  item->copy_path = g_steal_pointer(&copy_path);
  item->sidecar_path = g_steal_pointer(&sidecar_path);
  g_ptr_array_add(r->items, g_steal_pointer(&item));
}

static void scan_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable) {
  const char *directory = task_data;
  ScanResult *r = g_new0(ScanResult, 1);
  r->items = g_ptr_array_new_with_free_func((GDestroyNotify)loom_recovery_item_free);
  r->problems = g_ptr_array_new_with_free_func(g_free);
  g_autoptr(GDir) dir = g_dir_open(directory, 0, NULL); /* none yet: nothing to recover */
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func(g_free);
  for (const char *name; dir && (name = g_dir_read_name(dir));) g_ptr_array_add(names, g_strdup(name));
  for (guint i = 0; i < names->len; i++) {
    const char *name = g_ptr_array_index(names, i);
    if (g_str_has_suffix(name, COPY_SUFFIX)) {
      /* A copy without a sidecar: its deletion was interrupted. */
      g_autofree char *id = g_strndup(name, strlen(name) - strlen(COPY_SUFFIX));
      g_autofree char *sidecar = loom_recovery_sidecar_path(directory, id);
      g_autofree char *copy = g_build_filename(directory, name, NULL);
      if (!g_file_test(sidecar, G_FILE_TEST_EXISTS)) g_unlink(copy);
    } else if (g_str_has_suffix(name, SIDECAR_SUFFIX)) {
      g_autofree char *id = g_strndup(name, strlen(name) - strlen(SIDECAR_SUFFIX));
      scan_one(directory, id, r);
    }
  }
  g_ptr_array_sort(r->items, by_time);
  g_task_return_pointer(task, r, (GDestroyNotify)scan_result_free);
}

void loom_recovery_scan_async(LoomRecovery *self, GCancellable *cancellable, GAsyncReadyCallback callback,
                              gpointer user_data) {
  g_return_if_fail(LOOM_IS_RECOVERY(self));
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, &scan_tag);
  g_task_set_task_data(task, g_strdup(loom_recovery_get_directory(self)), g_free);
  g_task_run_in_thread(task, scan_thread);
}

GPtrArray *loom_recovery_scan_finish(LoomRecovery *self, GAsyncResult *result, char ***problems,
                                     GError **error) {
  g_return_val_if_fail(g_task_is_valid(result, self), NULL);
  ScanResult *r = g_task_propagate_pointer(G_TASK(result), error);
  if (!r) return NULL;
  if (problems) {
    g_ptr_array_add(r->problems, NULL);
    *problems = (char **)g_ptr_array_steal(r->problems, NULL);
  }
  GPtrArray *items = g_steal_pointer(&r->items);
  r->items = g_ptr_array_new();
  scan_result_free(r);
  return items;
}

/* ---- restore and discard ---- */

/* A recovery copy: the network and its training settings and state. */
typedef struct {
  loom_net *net;
  loom_model_extras extras;
} Restored;

static void restored_free(Restored *r) {
  if (r->net) loom_net_free(r->net);
  loom_model_extras_clear(&r->extras);
  g_free(r);
}

static void restore_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable) {
  LoomRecoveryItem *item = task_data;
  loom_error err = {0};
  Restored *restored = g_new0(Restored, 1);
  if (loom_model_load_ex(item->copy_path, LOOM_MODEL_STRICT, &restored->net, &restored->extras, &err) == LOOM_OK) {
    g_task_return_pointer(task, restored, (GDestroyNotify)restored_free);
    return;
  }
  restored_free(restored);
  g_autofree char *directory = g_path_get_dirname(item->copy_path);
  g_autofree char *moved = move_aside(directory, item->copy_path);
  g_autofree char *moved_sidecar = move_aside(directory, item->sidecar_path);
  /* Translators: the first %s is a file, the second where it went, the third the reason. */
  g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                          _("The recovery file “%s” cannot be read and was moved to “%s”: %s"), item->copy_path,
                          moved ? moved : "-", err.message);
}

void loom_recovery_restore_async(LoomRecovery *self, const LoomRecoveryItem *item, GCancellable *cancellable,
                                 GAsyncReadyCallback callback, gpointer user_data) {
  g_return_if_fail(LOOM_IS_RECOVERY(self));
  g_return_if_fail(item != NULL);
  g_autoptr(GTask) task = g_task_new(self, cancellable, callback, user_data);
  g_task_set_source_tag(task, &restore_tag);
  g_task_set_task_data(task, item_copy(item), (GDestroyNotify)loom_recovery_item_free);
  g_task_run_in_thread(task, restore_thread);
}

LoomDocument *loom_recovery_restore_finish(LoomRecovery *self, GAsyncResult *result, GError **error) {
  g_return_val_if_fail(g_task_is_valid(result, self), NULL);
  Restored *restored = g_task_propagate_pointer(G_TASK(result), error);
  if (!restored) return NULL;
  LoomRecoveryItem *item = g_task_get_task_data(G_TASK(result));
  g_autoptr(GFile) file = item->original_path ? g_file_new_for_path(item->original_path) : NULL;
  LoomDocument *document =
      loom_document_new_recovered(g_steal_pointer(&restored->net), &restored->extras, file, item->title);
  restored_free(restored);
  loom_recovery_adopt(document, item->id);
  return document;
}

static void discard_thread(GTask *task, gpointer source, gpointer task_data, GCancellable *cancellable) {
  LoomRecoveryItem *item = task_data;
  loom_recovery_delete_files(item->sidecar_path, item->copy_path);
  g_task_return_boolean(task, TRUE);
}

void loom_recovery_discard(LoomRecovery *self, const LoomRecoveryItem *item) {
  g_return_if_fail(LOOM_IS_RECOVERY(self));
  g_return_if_fail(item != NULL);
  g_autoptr(GTask) task = g_task_new(self, NULL, NULL, NULL);
  g_task_set_source_tag(task, &discard_tag);
  g_task_set_task_data(task, item_copy(item), (GDestroyNotify)loom_recovery_item_free);
  g_task_run_in_thread(task, discard_thread);
}
