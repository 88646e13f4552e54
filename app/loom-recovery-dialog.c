/*
 * "Recover Unsaved Changes?": one row per copy a crash left, built in code
 * (the rows are the whole layout). Recovering and discarding run through
 * LoomRecovery; the document opens in a window here, so nothing else needs
 * to know about recovered documents.
 */
#include "loom-recovery-dialog.h"

#include <glib/gi18n.h>
#include <string.h>

#include "loom-window.h"

struct _LoomRecoveryDialog {
  AdwMessageDialog parent_instance;
  LoomApplication *app;
  GtkWindow *parent; /* weak */
  GPtrArray *items;  /* LoomRecoveryItem*, those not yet handled */
  GHashTable *rows;  /* id → GtkWidget* row (owned by the list) */
  GtkListBox *list;
};

G_DEFINE_FINAL_TYPE(LoomRecoveryDialog, loom_recovery_dialog, ADW_TYPE_MESSAGE_DIALOG)

static LoomRecovery *recovery_of(LoomApplication *app) {
  return loom_application_get_recovery(app);
}

static AdwMessageDialog *show_message(GtkWindow *parent, const char *heading, const char *body) {
  AdwMessageDialog *dialog = ADW_MESSAGE_DIALOG(adw_message_dialog_new(parent, heading, body));
  adw_message_dialog_add_response(dialog, "close", _("_Close"));
  gtk_window_present(GTK_WINDOW(dialog));
  return dialog;
}

/* ---- recovering ---- */

/* A window showing a new network nobody has touched yet. */
static gboolean window_is_pristine(GtkWindow *window) {
  if (!LOOM_IS_WINDOW(window)) return FALSE;
  LoomDocument *document = loom_window_get_document(LOOM_WINDOW(window));
  return document && !loom_document_get_dirty(document) && !loom_document_get_file(document) &&
         !loom_command_stack_get_can_undo(loom_document_get_commands(document)) &&
         loom_net_n_layers(loom_document_get_net(document)) == 0;
}

static void restore_done(GObject *source, GAsyncResult *result, gpointer user_data) {
  g_autoptr(LoomRecoveryDialog) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) document = loom_recovery_restore_finish(LOOM_RECOVERY(source), result, &error);
  GtkWindow *active = gtk_application_get_active_window(GTK_APPLICATION(self->app));
  GtkWindow *target = self->parent ? self->parent : active;
  if (!document) {
    show_message(target, _("Cannot Recover the Network"), error->message);
    return;
  }
  if (!window_is_pristine(target)) target = GTK_WINDOW(loom_window_new(self->app));
  loom_window_set_document(LOOM_WINDOW(target), document);
  gtk_window_present(target);
}

static LoomRecoveryItem *take_item(LoomRecoveryDialog *self, const char *id) {
  for (guint i = 0; i < self->items->len; i++) {
    LoomRecoveryItem *item = g_ptr_array_index(self->items, i);
    if (!g_str_equal(item->id, id)) continue;
    GtkWidget *row = g_hash_table_lookup(self->rows, id);
    if (row) gtk_list_box_remove(self->list, row);
    g_hash_table_remove(self->rows, id);
    return g_ptr_array_steal_index(self->items, i);
  }
  return NULL;
}

static void handle(LoomRecoveryDialog *self, const char *id, gboolean recover) {
  g_autoptr(LoomRecoveryItem) item = take_item(self, id);
  if (!item) return;
  LoomRecovery *recovery = recovery_of(self->app);
  if (recover)
    loom_recovery_restore_async(recovery, item, NULL, restore_done, g_object_ref(self));
  else
    loom_recovery_discard(recovery, item);
}

static void handle_all(LoomRecoveryDialog *self, gboolean recover) {
  while (self->items->len > 0) {
    LoomRecoveryItem *item = g_ptr_array_index(self->items, 0);
    g_autofree char *id = g_strdup(item->id);
    handle(self, id, recover);
  }
}

static void recovery_action(GtkWidget *widget, const char *action, GVariant *param) {
  LoomRecoveryDialog *self = LOOM_RECOVERY_DIALOG(widget);
  handle(self, g_variant_get_string(param, NULL), g_str_equal(action, "recovery.recover"));
  if (self->items->len == 0) gtk_window_destroy(GTK_WINDOW(self));
}

static void on_response(LoomRecoveryDialog *self, const char *response) {
  /* "later" keeps the copies: they are offered again on the next start. */
  if (g_str_equal(response, "recover"))
    handle_all(self, TRUE);
  else if (g_str_equal(response, "discard"))
    handle_all(self, FALSE);
}

/* ---- the rows ---- */

static char *format_time(GDateTime *utc) {
  g_autoptr(GDateTime) when = g_date_time_to_local(utc);
  g_autoptr(GDateTime) now = g_date_time_new_now_local();
  g_autoptr(GDateTime) yesterday = g_date_time_add_days(now, -1);
  int y, m, d;
  g_date_time_get_ymd(when, &y, &m, &d);
  int ny, nm, nd, yy, ym, yd;
  g_date_time_get_ymd(now, &ny, &nm, &nd);
  g_date_time_get_ymd(yesterday, &yy, &ym, &yd);
  const char *format;
  if (y == ny && m == nm && d == nd)
    /* Translators: when a recovery copy was written, a g_date_time_format() format. */
    format = _("today at %H:%M");
  else if (y == yy && m == ym && d == yd)
    /* Translators: when a recovery copy was written, a g_date_time_format() format. */
    format = _("yesterday at %H:%M");
  else
    /* Translators: when a recovery copy was written, a g_date_time_format() format. */
    format = _("%-d %B %Y at %H:%M");
  return g_date_time_format(when, format);
}

/* The title is the file's name already: the folder, home shown as "~". */
static char *folder_of(const char *path) {
  g_autofree char *dir = g_path_get_dirname(path);
  const char *home = g_get_home_dir();
  size_t n = strlen(home);
  g_autofree char *display = g_filename_display_name(dir);
  if (n > 1 && g_str_has_prefix(dir, home) && (dir[n] == '\0' || dir[n] == G_DIR_SEPARATOR)) {
    g_autofree char *rest = g_filename_display_name(dir + n);
    return g_strconcat("~", rest, NULL);
  }
  return g_steal_pointer(&display);
}

/* Two lines: where the network lives, and when the copy was written. */
static char *describe(const LoomRecoveryItem *item) {
  g_autofree char *when = format_time(item->modified);
  g_autofree char *where = item->original_path ? folder_of(item->original_path) : g_strdup(_("Never saved"));
  /* Translators: the second line under a recovered network; %s is a time such as "today at 08:41". */
  g_autofree char *changed = g_strdup_printf(_("Changed %s"), when);
  return g_strdup_printf("%s\n%s", where, changed);
}

static GtkWidget *button(const char *label, const char *action, const LoomRecoveryItem *item, const char *tooltip) {
  const char *id = item->id;
  GtkWidget *b = gtk_button_new_with_label(label);
  /* Every row has the same two buttons: the title tells them apart. */
  gtk_accessible_update_property(GTK_ACCESSIBLE(b), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, item->title, -1);
  gtk_widget_set_valign(b, GTK_ALIGN_CENTER);
  gtk_widget_set_tooltip_text(b, tooltip);
  gtk_actionable_set_action_name(GTK_ACTIONABLE(b), action);
  gtk_actionable_set_action_target(GTK_ACTIONABLE(b), "s", id);
  return b;
}

static void add_row(LoomRecoveryDialog *self, const LoomRecoveryItem *item, gboolean buttons) {
  GtkWidget *row = adw_action_row_new();
  adw_preferences_row_set_use_markup(ADW_PREFERENCES_ROW(row), FALSE);
  adw_preferences_row_set_title(ADW_PREFERENCES_ROW(row), item->title);
  g_autofree char *subtitle = describe(item);
  adw_action_row_set_subtitle(ADW_ACTION_ROW(row), subtitle);
  adw_action_row_set_title_lines(ADW_ACTION_ROW(row), 1);
  adw_action_row_set_subtitle_lines(ADW_ACTION_ROW(row), 2);
  gtk_widget_set_tooltip_text(row, item->original_path);
  if (buttons) {
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_box_append(GTK_BOX(box), button(_("Discard"), "recovery.discard", item, _("Delete these changes")));
    GtkWidget *recover = button(_("Recover"), "recovery.recover", item, _("Open these changes"));
    gtk_widget_add_css_class(recover, "suggested-action");
    gtk_box_append(GTK_BOX(box), recover);
    adw_action_row_add_suffix(ADW_ACTION_ROW(row), box);
  }
  gtk_list_box_append(self->list, row);
  g_hash_table_insert(self->rows, g_strdup(item->id), row);
}

/* ---- lifecycle ---- */

static void loom_recovery_dialog_finalize(GObject *object) {
  LoomRecoveryDialog *self = LOOM_RECOVERY_DIALOG(object);
  g_clear_weak_pointer(&self->parent);
  g_clear_object(&self->app);
  g_ptr_array_unref(self->items);
  g_hash_table_unref(self->rows);
  G_OBJECT_CLASS(loom_recovery_dialog_parent_class)->finalize(object);
}

static void loom_recovery_dialog_class_init(LoomRecoveryDialogClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->finalize = loom_recovery_dialog_finalize;
  gtk_widget_class_install_action(widget_class, "recovery.recover", "s", recovery_action);
  gtk_widget_class_install_action(widget_class, "recovery.discard", "s", recovery_action);
}

static void loom_recovery_dialog_init(LoomRecoveryDialog *self) {
  self->items = g_ptr_array_new_with_free_func((GDestroyNotify)loom_recovery_item_free);
  self->rows = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, NULL);
  self->list = GTK_LIST_BOX(gtk_list_box_new());
  gtk_list_box_set_selection_mode(self->list, GTK_SELECTION_NONE);
  gtk_widget_add_css_class(GTK_WIDGET(self->list), "boxed-list");
  gtk_accessible_update_property(GTK_ACCESSIBLE(self->list), GTK_ACCESSIBLE_PROPERTY_LABEL,
                                 _("Networks with unsaved changes"), -1);
  adw_message_dialog_set_extra_child(ADW_MESSAGE_DIALOG(self), GTK_WIDGET(self->list));
  g_signal_connect(self, "response", G_CALLBACK(on_response), NULL);
}

LoomRecoveryDialog *loom_recovery_dialog_new(LoomApplication *app, GtkWindow *parent, GPtrArray *items) {
  g_return_val_if_fail(LOOM_IS_APPLICATION(app), NULL);
  g_return_val_if_fail(items != NULL && items->len > 0, NULL);
  guint n = items->len;
  LoomRecoveryDialog *self = g_object_new(LOOM_TYPE_RECOVERY_DIALOG, "transient-for", parent, "modal", TRUE,
                                          "heading", _("Recover Unsaved Changes?"), NULL);
  self->app = g_object_ref(app);
  g_set_weak_pointer(&self->parent, parent);
  adw_message_dialog_set_body(ADW_MESSAGE_DIALOG(self),
                              g_dngettext(GETTEXT_PACKAGE, "Loom Workbench did not close properly. This network has changes that were "
                                       "not saved. Later keeps them for the next start.",
                                       "Loom Workbench did not close properly. These networks have changes that were "
                                       "not saved. Later keeps them for the next start.",
                                       n));
  for (guint i = 0; i < n; i++) {
    LoomRecoveryItem *item = g_ptr_array_index(items, i);
    add_row(self, item, n > 1);
    LoomRecoveryItem *copy = g_new0(LoomRecoveryItem, 1);
    *copy = (LoomRecoveryItem){g_strdup(item->id), g_strdup(item->copy_path), g_strdup(item->sidecar_path),
                               g_strdup(item->title), g_strdup(item->original_path),
                               g_date_time_ref(item->modified)};
    g_ptr_array_add(self->items, copy);
  }
  AdwMessageDialog *dialog = ADW_MESSAGE_DIALOG(self);
  adw_message_dialog_add_responses(dialog, "later", _("_Later"), "discard", n > 1 ? _("_Discard All") : _("_Discard"),
                                   "recover", n > 1 ? _("_Recover All") : _("_Recover"), NULL);
  adw_message_dialog_set_response_appearance(dialog, "discard", ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_response_appearance(dialog, "recover", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response(dialog, "recover");
  adw_message_dialog_set_close_response(dialog, "later");
  return self;
}

/* ---- the check on start ---- */

static void scan_done(GObject *source, GAsyncResult *result, gpointer user_data) {
  g_autoptr(LoomApplication) app = user_data;
  g_auto(GStrv) problems = NULL;
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) items = loom_recovery_scan_finish(LOOM_RECOVERY(source), result, &problems, &error);
  GtkWindow *parent = gtk_application_get_active_window(GTK_APPLICATION(app));
  if (!items) {
    g_message("Recovery: %s", error->message);
    return;
  }
  LoomRecoveryDialog *dialog = items->len > 0 ? loom_recovery_dialog_new(app, parent, items) : NULL;
  if (problems && problems[0]) {
    /* One question at a time: the report first, then what can be recovered. */
    g_autofree char *body = g_strjoinv("\n\n", problems);
    AdwMessageDialog *report = show_message(parent, _("Damaged Recovery Files"), body);
    if (dialog)
      g_signal_connect_object(report, "response", G_CALLBACK(gtk_window_present), dialog, G_CONNECT_SWAPPED);
  } else if (dialog) {
    gtk_window_present(GTK_WINDOW(dialog));
  }
}

void loom_recovery_dialog_check(LoomApplication *app) {
  g_return_if_fail(LOOM_IS_APPLICATION(app));
  loom_recovery_scan_async(recovery_of(app), NULL, scan_done, g_object_ref(app));
}
