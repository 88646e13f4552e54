/*
 * Autosave and crash recovery in the real application: an edit leaves a
 * recovery copy (after the debounce) equal to the document's model JSON and
 * the document untouched; saving or discarding the changes removes it; a
 * copy left by a dead process is offered on start and recovering it gives
 * the same network, dirty, in its original file; Discard removes it;
 * damaged files are reported by name and moved aside; an interval of 0
 * writes nothing. Every case uses a directory of its own.
 */
#include <adwaita.h>
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <loom/model.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gui-test.h"
#include "loom-application.h"
#include "loom-grid-view.h"
#include "loom-recovery-dialog.h"
#include "loom-recovery.h"
#include "loom-window.h"

#define TIMEOUT_MS 20000

static LoomApplication *app;
static char *tmp_dir;
static char *start_json; /* the network the start-up case recovers */

static LoomRecovery *recovery(void) {
  return loom_application_get_recovery(app);
}

static LoomWindow *window(void) {
  return LOOM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
}

static LoomDocument *doc(void) {
  return loom_window_get_document(window());
}

static char *json_of(const loom_net *net) {
  loom_error err = {0};
  char *json = loom_model_to_json(net, NULL, &err);
  if (!json) g_error("to_json: %s", err.message);
  return json;
}

/* The network a model file holds, as JSON without the training section the
 * workbench adds when it saves. */
static char *net_json_of_file(const char *path) {
  loom_net *net = NULL;
  loom_error err = {0};
  if (loom_model_load(path, 0, &net, &err) != LOOM_OK) g_error("load %s: %s", path, err.message);
  char *json = json_of(net);
  loom_net_free(net);
  return json;
}

static char *fresh_dir(const char *name) {
  char *dir = g_build_filename(tmp_dir, name, NULL);
  g_assert_cmpint(g_mkdir_with_parents(dir, 0700), ==, 0);
  loom_recovery_set_directory(recovery(), dir);
  return dir;
}

static char *read_text(const char *path) {
  char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, &error));
  g_assert_no_error(error);
  return text;
}

/* Files directly in @dir (not in damaged/). */
static guint count_files(const char *dir) {
  g_autoptr(GDir) d = g_dir_open(dir, 0, NULL);
  guint n = 0;
  for (const char *name; d && (name = g_dir_read_name(d));) {
    g_autofree char *path = g_build_filename(dir, name, NULL);
    if (g_file_test(path, G_FILE_TEST_IS_REGULAR)) n++;
  }
  return n;
}

static gboolean path_gone(gpointer path) {
  return !g_file_test(path, G_FILE_TEST_EXISTS);
}

static gboolean dir_empty(gpointer dir) {
  return count_files(dir) == 0;
}

static gboolean recovery_idle(gpointer data) {
  return !loom_recovery_get_busy(recovery());
}

static gboolean document_recovered(gpointer data) {
  return loom_document_get_recovered(doc());
}

static gboolean document_clean(gpointer data) {
  return !loom_document_get_dirty(doc());
}

static GtkWindow *find_toplevel(GType type, const char *heading) {
  GListModel *toplevels = gtk_window_get_toplevels();
  for (guint i = 0; i < g_list_model_get_n_items(toplevels); i++) {
    g_autoptr(GtkWindow) w = g_list_model_get_item(toplevels, i);
    if (!G_TYPE_CHECK_INSTANCE_TYPE(w, type) || !gtk_widget_get_visible(GTK_WIDGET(w))) continue;
    if (heading && !g_str_equal(adw_message_dialog_get_heading(ADW_MESSAGE_DIALOG(w)), heading)) continue;
    return w;
  }
  return NULL;
}

static gboolean recovery_dialog_shown(gpointer data) {
  return find_toplevel(LOOM_TYPE_RECOVERY_DIALOG, NULL) != NULL;
}

static gboolean message_shown(gpointer heading) {
  return find_toplevel(ADW_TYPE_MESSAGE_DIALOG, heading) != NULL;
}

static AdwMessageDialog *wait_message(const char *heading) {
  gui_test_wait(message_shown, (gpointer)heading, TIMEOUT_MS, heading);
  return ADW_MESSAGE_DIALOG(find_toplevel(ADW_TYPE_MESSAGE_DIALOG, heading));
}

static LoomRecoveryDialog *wait_recovery_dialog(void) {
  gui_test_wait(recovery_dialog_shown, NULL, TIMEOUT_MS, "the recovery dialog");
  return LOOM_RECOVERY_DIALOG(find_toplevel(LOOM_TYPE_RECOVERY_DIALOG, NULL));
}

/* What a click on a response button does: the response, then the dialog closes. */
static void respond(gpointer dialog, const char *response) {
  adw_message_dialog_response(ADW_MESSAGE_DIALOG(dialog), response);
  gtk_window_destroy(GTK_WINDOW(dialog));
}

static guint n_rows(LoomRecoveryDialog *dialog) {
  GtkWidget *list = gui_test_find_child(GTK_WIDGET(dialog), GTK_TYPE_LIST_BOX);
  g_assert_nonnull(list);
  guint n = 0;
  for (GtkWidget *c = gtk_widget_get_first_child(list); c; c = gtk_widget_get_next_sibling(c))
    if (GTK_IS_LIST_BOX_ROW(c)) n++;
  return n;
}

/* A process id nobody uses any more: a child that has exited and been reaped. */
static int dead_pid(void) {
  pid_t pid = fork();
  g_assert_cmpint(pid, >=, 0);
  if (pid == 0) _exit(0);
  int status;
  g_assert_cmpint(waitpid(pid, &status, 0), ==, pid);
  return pid;
}

/* What a crashed instance leaves: the copy of @net and its sidecar. */
static void write_orphan(const char *dir, const char *id, const loom_net *net, const char *title,
                         const char *original, int pid) {
  g_autofree char *copy_name = g_strconcat(id, ".loom.json", NULL);
  g_autofree char *copy = g_build_filename(dir, copy_name, NULL);
  loom_error err = {0};
  g_assert_cmpint(loom_model_save(net, copy, &err), ==, LOOM_OK);
  g_autoptr(JsonBuilder) b = json_builder_new();
  json_builder_begin_object(b);
  json_builder_set_member_name(b, "format");
  json_builder_add_int_value(b, 1);
  json_builder_set_member_name(b, "title");
  json_builder_add_string_value(b, title);
  json_builder_set_member_name(b, "file");
  if (original)
    json_builder_add_string_value(b, original);
  else
    json_builder_add_null_value(b);
  json_builder_set_member_name(b, "modified");
  json_builder_add_string_value(b, "2026-03-04T05:06:07Z");
  json_builder_set_member_name(b, "pid");
  json_builder_add_int_value(b, pid);
  json_builder_end_object(b);
  g_autoptr(JsonNode) root = json_builder_get_root(b);
  g_autofree char *text = json_to_string(root, TRUE);
  g_autofree char *sidecar_name = g_strconcat(id, ".json", NULL);
  g_autofree char *sidecar = g_build_filename(dir, sidecar_name, NULL);
  g_assert_true(g_file_set_contents(sidecar, text, -1, NULL));
}

static loom_net *example(const char *name) {
  loom_net *net = NULL;
  loom_error err = {0};
  g_assert_cmpint(loom_example_build(name, &net, &err), ==, LOOM_OK);
  return net;
}

static void edit(void) {
  LoomGridView *view = LOOM_GRID_VIEW(gui_test_find_child(GTK_WIDGET(window()), LOOM_TYPE_GRID_VIEW));
  loom_coord at = {-1, -1, -1, -1};
  const loom_net *net = loom_document_get_net(doc());
  /* A free slot, any. */
  for (int z = 0; z < loom_net_depth(net); z++)
    for (int y = 0; y < loom_net_rows(net); y++)
      for (int x = 0; x < loom_net_cols(net); x++)
        for (int l = 0; l < loom_net_layers_per_cell(net); l++)
          if (!loom_net_layer_at(net, (loom_coord){z, y, x, l})) at = (loom_coord){z, y, x, l};
  gtk_widget_grab_focus(GTK_WIDGET(view));
  if (at.z < 0) {
    /* A full grid (an example): clearing a slot is an edit too. */
    at = (loom_coord){0, 0, 0, 0};
    loom_grid_view_set_selection(view, &at);
    g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window()), "win.clear-slot", NULL));
    g_assert_null(loom_net_layer_at(loom_document_get_net(doc()), at));
    return;
  }
  loom_grid_view_set_selection(view, &at);
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window()), "win.place-layer", "s", "dense"));
  g_assert_nonnull(loom_net_layer_at(loom_document_get_net(doc()), at));
}

/* ---- cases ---- */

/* main() put a dead process's copy in place before the first window: offered. */
static void test_offered_on_start(void) {
  LoomRecoveryDialog *dialog = wait_recovery_dialog();
  g_assert_cmpuint(n_rows(dialog), ==, 1);
  g_autofree char *original = g_build_filename(tmp_dir, "start.loom.json", NULL);
  respond(dialog, "recover");
  gui_test_wait(document_recovered, NULL, TIMEOUT_MS, "the recovered document");

  /* The same network, dirty, in its original file. */
  g_autofree char *json = json_of(loom_document_get_net(doc()));
  g_assert_cmpstr(json, ==, start_json);
  g_assert_true(loom_document_get_dirty(doc()));
  g_autofree char *path = g_file_get_path(loom_document_get_file(doc()));
  g_assert_cmpstr(path, ==, original);
  g_assert_cmpstr(loom_document_get_title(doc()), ==, "start.loom.json");
  g_assert_true(g_str_has_prefix(gtk_window_get_title(GTK_WINDOW(window())), "• "));

  /* This process took the copy over: its sidecar now names this PID. */
  const char *dir = loom_recovery_get_directory(recovery());
  g_autofree char *sidecar = g_build_filename(dir, "0a1b2c3d-0000-4000-8000-000000000001.json", NULL);
  gui_test_wait(recovery_idle, NULL, TIMEOUT_MS, "the copy to be claimed");
  g_autofree char *text = read_text(sidecar);
  g_autofree char *pid = g_strdup_printf("\"pid\" : %d", (int)getpid());
  g_assert_nonnull(strstr(text, pid));

  /* Save replaces the original only after asking. */
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window()), "win.save", NULL));
  AdwMessageDialog *replace = wait_message("Replace the Saved File?");
  g_assert_false(g_file_test(original, G_FILE_TEST_EXISTS));
  respond(replace, "replace");
  gui_test_wait(document_clean, NULL, TIMEOUT_MS, "the save");
  g_autofree char *saved = net_json_of_file(original);
  g_assert_cmpstr(saved, ==, start_json);
  g_assert_false(loom_document_get_recovered(doc()));
  gui_test_wait(dir_empty, (gpointer)dir, TIMEOUT_MS, "the copy to go after saving");
}

static void count_signal(guint *n) {
  (*n)++;
}

static void test_autosave_after_edit(void) {
  g_autofree char *dir = fresh_dir("edit");
  edit();
  LoomCommandStack *stack = loom_document_get_commands(doc());
  g_autofree char *undo_label = g_strdup(loom_command_stack_get_undo_label(stack));
  g_assert_cmpuint(count_files(dir), ==, 0); /* debounced, not at once */

  /* Autosave must not touch the document: no signal, no history. */
  guint n_signals = 0;
  gulong changed = g_signal_connect_swapped(doc(), "changed", G_CALLBACK(count_signal), &n_signals);
  gulong notify = g_signal_connect_swapped(doc(), "notify", G_CALLBACK(count_signal), &n_signals);

  g_autofree char *copy = loom_recovery_get_copy_path(recovery(), doc());
  g_assert_null(copy); /* nothing written yet */
  char *expected = loom_document_to_json(doc(), NULL, NULL);
  g_assert_nonnull(expected);
  for (gint64 end = g_get_monotonic_time() + TIMEOUT_MS * 1000; count_files(dir) < 2;) {
    g_assert_cmpint(g_get_monotonic_time(), <, end);
    g_main_context_iteration(NULL, TRUE);
  }
  gui_test_wait(recovery_idle, NULL, TIMEOUT_MS, "the write to finish");
  copy = loom_recovery_get_copy_path(recovery(), doc());
  g_assert_nonnull(copy);
  g_assert_true(g_str_has_prefix(copy, dir));
  g_autofree char *written = read_text(copy);
  g_assert_cmpstr(written, ==, expected);

  /* The sidecar: the document's file (saved by the case before) and title, this process. */
  g_autofree char *stem = g_strndup(copy, strlen(copy) - strlen(".loom.json"));
  g_autofree char *sidecar_path = g_strconcat(stem, ".json", NULL);
  g_autofree char *sidecar = read_text(sidecar_path);
  g_autoptr(JsonNode) node = json_from_string(sidecar, NULL);
  g_assert_nonnull(node);
  JsonObject *o = json_node_get_object(node);
  g_assert_cmpint(json_object_get_int_member(o, "pid"), ==, getpid());
  g_assert_cmpstr(json_object_get_string_member(o, "title"), ==, loom_document_get_title(doc()));
  g_autofree char *file_path = g_file_get_path(loom_document_get_file(doc()));
  g_assert_cmpstr(json_object_get_string_member(o, "file"), ==, file_path);

  /* Autosave left the document alone: still dirty, same history. */
  g_signal_handler_disconnect(doc(), changed);
  g_signal_handler_disconnect(doc(), notify);
  g_assert_cmpuint(n_signals, ==, 0);
  g_assert_true(loom_document_get_dirty(doc()));
  g_assert_cmpstr(loom_command_stack_get_undo_label(stack), ==, undo_label);
  g_assert_false(loom_command_stack_get_can_redo(stack));
  char *after = loom_document_to_json(doc(), NULL, NULL);
  g_assert_cmpstr(after, ==, expected);
  free(after);
  free(expected);

  /* Saving removes the copy. */
  g_autofree char *target = g_build_filename(tmp_dir, "edit.loom.json", NULL);
  g_autoptr(GFile) file = g_file_new_for_path(target);
  loom_window_save_to_file(window(), file);
  gui_test_wait(document_clean, NULL, TIMEOUT_MS, "the save");
  gui_test_wait(dir_empty, dir, TIMEOUT_MS, "the copy to go after saving");
  g_assert_null(loom_recovery_get_copy_path(recovery(), doc()));
}

static gboolean document_is(gpointer document) {
  return doc() != document;
}

static void test_discarded_changes(void) {
  g_autofree char *dir = fresh_dir("discard-changes");
  edit();
  for (gint64 end = g_get_monotonic_time() + TIMEOUT_MS * 1000; count_files(dir) < 2;) {
    g_assert_cmpint(g_get_monotonic_time(), <, end);
    g_main_context_iteration(NULL, TRUE);
  }
  /* Another network, discarding the changes: the copy goes with them. */
  LoomDocument *before = doc();
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window()), "win.open-example", "s", "xor"));
  respond(wait_message("Save Changes?"), "discard");
  gui_test_wait(document_is, before, TIMEOUT_MS, "the example");
  gui_test_wait(dir_empty, dir, TIMEOUT_MS, "the copy to go after discarding");
}

static void test_discard_offered(void) {
  g_autofree char *dir = fresh_dir("discard-offered");
  loom_net *net = example("xor");
  write_orphan(dir, "0a1b2c3d-0000-4000-8000-000000000002", net, "Lost work", NULL, dead_pid());
  /* A copy whose process still runs (this one) is not offered. */
  write_orphan(dir, "0a1b2c3d-0000-4000-8000-000000000003", net, "Still open", NULL, getpid());
  loom_net_free(net);
  LoomDocument *before = doc();
  loom_recovery_dialog_check(app);
  LoomRecoveryDialog *dialog = wait_recovery_dialog();
  g_assert_cmpuint(n_rows(dialog), ==, 1);
  respond(dialog, "discard");
  g_autofree char *gone = g_build_filename(dir, "0a1b2c3d-0000-4000-8000-000000000002.loom.json", NULL);
  g_autofree char *gone_sidecar = g_build_filename(dir, "0a1b2c3d-0000-4000-8000-000000000002.json", NULL);
  gui_test_wait(path_gone, gone, TIMEOUT_MS, "the discarded copy to go");
  gui_test_wait(path_gone, gone_sidecar, TIMEOUT_MS, "the discarded sidecar to go");
  g_assert_cmpuint(count_files(dir), ==, 2); /* the live one stays */
  g_assert_true(doc() == before);
  g_assert_cmpuint(g_list_length(gtk_application_get_windows(GTK_APPLICATION(app))), ==, 1);
}

static void test_damaged(void) {
  g_autofree char *dir = fresh_dir("damaged");
  loom_net *net = example("xor");
  /* A sidecar that is not JSON, and a good sidecar whose copy is cut short. */
  write_orphan(dir, "bad-sidecar", net, "Bad sidecar", NULL, dead_pid());
  g_autofree char *bad_sidecar = g_build_filename(dir, "bad-sidecar.json", NULL);
  g_assert_true(g_file_set_contents(bad_sidecar, "{\"format\": 1, \"title\": ", -1, NULL));
  write_orphan(dir, "bad-copy", net, "Bad copy", NULL, dead_pid());
  g_autofree char *bad_copy = g_build_filename(dir, "bad-copy.loom.json", NULL);
  char *json = json_of(net);
  json[strlen(json) / 2] = '\0';
  g_assert_true(g_file_set_contents(bad_copy, json, -1, NULL));
  free(json);
  loom_net_free(net);

  LoomDocument *before = doc();
  loom_recovery_dialog_check(app);
  AdwMessageDialog *report = wait_message("Damaged Recovery Files");
  g_assert_nonnull(strstr(adw_message_dialog_get_body(report), bad_sidecar));
  respond(report, "close");

  LoomRecoveryDialog *dialog = wait_recovery_dialog();
  g_assert_cmpuint(n_rows(dialog), ==, 1); /* only the one with a readable sidecar */
  respond(dialog, "recover");
  AdwMessageDialog *error = wait_message("Cannot Recover the Network");
  g_assert_nonnull(strstr(adw_message_dialog_get_body(error), bad_copy));
  respond(error, "close");

  /* Both moved aside, nothing opened. */
  g_assert_cmpuint(count_files(dir), ==, 0);
  g_autofree char *damaged = g_build_filename(dir, "damaged", NULL);
  g_assert_cmpuint(count_files(damaged), ==, 4);
  g_assert_true(doc() == before);
  g_assert_cmpuint(g_list_length(gtk_application_get_windows(GTK_APPLICATION(app))), ==, 1);
}

static void test_disabled(void) {
  g_autofree char *dir = fresh_dir("disabled");
  GSettings *settings = loom_application_get_settings(app);
  g_settings_set_uint(settings, "autosave-interval", 0);
  g_assert_cmpuint(loom_recovery_get_interval(recovery()), ==, 0);
  edit();
  gui_test_spin(2500); /* more than twice the interval the other cases use */
  g_assert_cmpuint(count_files(dir), ==, 0);
  g_assert_false(g_file_test(dir, G_FILE_TEST_EXISTS) && count_files(dir) > 0);
  g_assert_null(loom_recovery_get_copy_path(recovery(), doc()));

  /* Turned on again, the unsaved changes get their copy. */
  g_settings_set_uint(settings, "autosave-interval", 1);
  for (gint64 end = g_get_monotonic_time() + TIMEOUT_MS * 1000; count_files(dir) < 2;) {
    g_assert_cmpint(g_get_monotonic_time(), <, end);
    g_main_context_iteration(NULL, TRUE);
  }
  /* Undo back to the clean state: no unsaved changes, no copy. */
  g_assert_true(gtk_widget_activate_action(GTK_WIDGET(window()), "win.undo", NULL));
  g_assert_false(loom_document_get_dirty(doc()));
  gui_test_wait(dir_empty, dir, TIMEOUT_MS, "the copy to go after undo");
}

/* ---- setup ---- */

static void remove_tree(const char *path) {
  if (g_file_test(path, G_FILE_TEST_IS_DIR)) {
    g_autoptr(GDir) d = g_dir_open(path, 0, NULL);
    for (const char *name; d && (name = g_dir_read_name(d));) {
      g_autofree char *child = g_build_filename(path, name, NULL);
      remove_tree(child);
    }
    g_rmdir(path);
  } else {
    g_unlink(path);
  }
}

int main(int argc, char **argv) {
  gui_test_init(&argc, &argv);
  tmp_dir = g_dir_make_tmp("loom-recovery-XXXXXX", NULL);
  g_assert_nonnull(tmp_dir);

  app = loom_application_new();
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_autoptr(GError) error = NULL;
  g_assert_true(g_application_register(G_APPLICATION(app), NULL, &error));
  g_settings_set_uint(loom_application_get_settings(app), "autosave-interval", 1);

  /* What a crash left before this start: a saved file's unsaved changes. */
  g_autofree char *start_dir = fresh_dir("start");
  loom_net *net = example("spiral");
  start_json = json_of(net);
  g_autofree char *original = g_build_filename(tmp_dir, "start.loom.json", NULL);
  write_orphan(start_dir, "0a1b2c3d-0000-4000-8000-000000000001", net, "start.loom.json", original, dead_pid());
  loom_net_free(net);
  g_application_activate(G_APPLICATION(app));

  g_test_add_func("/recovery/offered-on-start", test_offered_on_start);
  g_test_add_func("/recovery/autosave-after-edit", test_autosave_after_edit);
  g_test_add_func("/recovery/discarded-changes", test_discarded_changes);
  g_test_add_func("/recovery/discard-offered", test_discard_offered);
  g_test_add_func("/recovery/damaged", test_damaged);
  g_test_add_func("/recovery/disabled", test_disabled);
  int status = g_test_run();

  /* The document is clean (see disabled), so quitting asks nothing. */
  g_action_group_activate_action(G_ACTION_GROUP(app), "quit", NULL);
  while (g_main_context_iteration(NULL, FALSE)) {}
  g_object_unref(app);
  remove_tree(tmp_dir);
  g_free(tmp_dir);
  free(start_json);
  return status;
}
