/* LoomCsvDialog: CSV import options over a live preview, then the load on a GTask thread. */
#include "loom-csv-dialog-private.h"

#include <glib/gi18n.h>

#include "loom-workbench-resources.h"

/* A preview long enough to judge the columns, short enough to stay instant. */
#define PREVIEW_ROWS 20
/* An integer target with at most this many distinct values in the preview
 * looks like class labels rather than a measured quantity. */
#define FEW_CLASSES 10

const char loom_csv_dialog_delimiters[3] = {',', ';', '\t'};

enum { PROP_0, PROP_FILE, PROP_BUSY, N_PROPS };
static GParamSpec *properties[N_PROPS];

enum { SIGNAL_IMPORTED, N_SIGNALS };
static guint signals[N_SIGNALS];

G_DEFINE_FINAL_TYPE(LoomCsvDialog, loom_csv_dialog, ADW_TYPE_WINDOW)

static void import_free(LoomCsvImport *job) {
  if (!job) return;
  g_free(job->path);
  g_free(job->features);
  if (job->dataset) loom_dataset_free(job->dataset);
  g_free(job);
}

static void show_error(LoomCsvDialog *self, const char *message) {
  gtk_label_set_text(self->error_label, message ? message : "");
  gtk_widget_set_visible(GTK_WIDGET(self->error_label), message != NULL);
}

static int64_t target_column(LoomCsvDialog *self) {
  guint sel = adw_combo_row_get_selected(self->target_row);
  return sel == GTK_INVALID_LIST_POSITION ? -1 : (int64_t)sel;
}

static gboolean any_feature(LoomCsvDialog *self) {
  for (guint c = 0; c < self->feature_checks->len; c++)
    if (gtk_check_button_get_active(g_ptr_array_index(self->feature_checks, c))) return TRUE;
  return FALSE;
}

static void update_import_enabled(LoomCsvDialog *self) {
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "csv.import",
                                self->have_preview && !self->busy && any_feature(self));
}

static void set_busy(LoomCsvDialog *self, gboolean busy) {
  if (self->busy == busy) return;
  self->busy = busy;
  gtk_widget_set_visible(GTK_WIDGET(self->spinner), busy);
  gtk_spinner_set_spinning(self->spinner, busy);
  gtk_widget_set_sensitive(self->options_box, !busy);
  update_import_enabled(self);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_BUSY]);
}

/* Text or a handful of distinct integers reads as classes; anything else as
 * a quantity to regress. */
static loom_target_kind default_kind(LoomCsvDialog *self, int64_t col) {
  const loom_csv_preview *p = &self->preview;
  if (!p->numeric[col]) return LOOM_TARGET_CLASS;
  for (int64_t r = 0; r < p->n_rows; r++)
    if (!g_ascii_string_to_signed(p->cells[r * p->n_columns + col], 10, 0, G_MAXINT32, NULL, NULL))
      return LOOM_TARGET_VECTOR;
  return p->distinct[col] <= FEW_CLASSES ? LOOM_TARGET_CLASS : LOOM_TARGET_VECTOR;
}

static void on_feature_toggled(LoomCsvDialog *self) {
  if (self->rebuilding) return;
  update_import_enabled(self);
  loom_csv_dialog_fill_preview(self);
}

/* The target is never a feature: its check is off and insensitive; the
 * column it leaves becomes a feature again, as the default has it. */
static void apply_target(LoomCsvDialog *self, int64_t old_target) {
  int64_t target = target_column(self);
  self->rebuilding = TRUE;
  for (guint c = 0; c < self->feature_checks->len; c++) {
    GtkWidget *check = g_ptr_array_index(self->feature_checks, c);
    gtk_widget_set_sensitive(check, (int64_t)c != target);
    if ((int64_t)c == target) gtk_check_button_set_active(GTK_CHECK_BUTTON(check), FALSE);
    else if ((int64_t)c == old_target) gtk_check_button_set_active(GTK_CHECK_BUTTON(check), TRUE);
  }
  if (target >= 0) adw_combo_row_set_selected(self->kind_row, (guint)default_kind(self, target));
  self->rebuilding = FALSE;
  update_import_enabled(self);
  loom_csv_dialog_fill_preview(self);
}

static void on_target_changed(LoomCsvDialog *self) {
  if (self->rebuilding) return;
  int64_t old_target = self->target;
  self->target = target_column(self);
  apply_target(self, old_target);
}

/* Column names, feature checks and the target after a new preview. keep:
 * the column count is unchanged, so the user's choices stay. */
static void rebuild_columns(LoomCsvDialog *self, gboolean keep) {
  const loom_csv_preview *p = &self->preview;
  int64_t old_target = target_column(self);
  /* The old checks die with the flow box's children: keep their states. */
  g_autofree gboolean *was_active = g_new0(gboolean, self->feature_checks->len + 1);
  guint old_len = self->feature_checks->len;
  for (guint c = 0; c < old_len; c++)
    was_active[c] = gtk_check_button_get_active(g_ptr_array_index(self->feature_checks, c));
  g_ptr_array_set_size(self->feature_checks, 0);
  self->rebuilding = TRUE;
  GtkStringList *names = gtk_string_list_new(NULL);
  for (int64_t c = 0; c < p->n_columns; c++) {
    g_autofree char *name = loom_csv_dialog_column_name(self, c);
    gtk_string_list_append(names, name);
  }
  adw_combo_row_set_model(self->target_row, G_LIST_MODEL(names));
  g_object_unref(names);
  GtkWidget *child;
  while ((child = gtk_widget_get_first_child(GTK_WIDGET(self->features_box))))
    gtk_flow_box_remove(self->features_box, child);
  int64_t target = keep && old_target >= 0 ? old_target : p->n_columns - 1;
  for (int64_t c = 0; c < p->n_columns; c++) {
    g_autofree char *name = loom_csv_dialog_column_name(self, c);
    GtkWidget *check = gtk_check_button_new_with_label(name);
    gtk_accessible_update_property(GTK_ACCESSIBLE(check), GTK_ACCESSIBLE_PROPERTY_LABEL, name, -1);
    gboolean active = keep && (guint)c < old_len ? was_active[c] : c != target;
    gtk_check_button_set_active(GTK_CHECK_BUTTON(check), active && c != target);
    gtk_widget_set_sensitive(check, c != target);
    g_signal_connect_swapped(check, "toggled", G_CALLBACK(on_feature_toggled), self);
    gtk_flow_box_append(self->features_box, check);
    g_ptr_array_add(self->feature_checks, check);
  }
  adw_combo_row_set_selected(self->target_row, (guint)target);
  self->target = target;
  if (!keep) adw_combo_row_set_selected(self->kind_row, (guint)default_kind(self, target));
  self->rebuilding = FALSE;
  update_import_enabled(self);
  loom_csv_dialog_fill_preview(self);
}

/* Reads the preview. detect: as the file suggests (header and delimiter
 * auto), presetting the switch and the delimiter; else as the user chose. */
static void load_preview(LoomCsvDialog *self, gboolean detect) {
  loom_csv_options o = loom_csv_options_default();
  guint delim_index = adw_combo_row_get_selected(self->delimiter_row);
  o.delimiter = detect ? 0 : loom_csv_dialog_delimiters[MIN(delim_index, 2u)];
  o.header = detect ? LOOM_CSV_HEADER_AUTO
                    : gtk_switch_get_active(self->header_switch) ? LOOM_CSV_HEADER_YES : LOOM_CSV_HEADER_NO;
  int64_t old_columns = self->have_preview ? self->preview.n_columns : -1;
  loom_csv_preview_clear(&self->preview);
  loom_error err = {0};
  self->have_preview = loom_csv_preview_read(self->path, &o, PREVIEW_ROWS, &self->preview, &err) == 0;
  show_error(self, self->have_preview ? NULL : err.message);
  gtk_widget_set_sensitive(self->options_box, self->have_preview);
  if (!self->have_preview) {
    loom_csv_dialog_fill_preview(self);
    update_import_enabled(self);
    return;
  }
  if (detect) {
    self->rebuilding = TRUE;
    gtk_switch_set_active(self->header_switch, self->preview.header_detected);
    for (guint i = 0; i < G_N_ELEMENTS(loom_csv_dialog_delimiters); i++)
      if (loom_csv_dialog_delimiters[i] == self->preview.delimiter) adw_combo_row_set_selected(self->delimiter_row, i);
    self->rebuilding = FALSE;
  }
  g_autofree char *description = g_strdup_printf(
    g_dngettext(GETTEXT_PACKAGE, "The first %lld row of the file", "The first %lld rows of the file",
                (gulong)self->preview.n_rows),
    (long long)self->preview.n_rows);
  adw_preferences_group_set_description(self->preview_group, description);
  rebuild_columns(self, old_columns == self->preview.n_columns);
}

static void on_reading_changed(LoomCsvDialog *self) {
  if (self->rebuilding) return;
  show_error(self, NULL);
  load_preview(self, FALSE);
}

/* ---- import ------------------------------------------------------------------ */

static void import_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable) {
  (void)source;
  (void)cancellable;
  const LoomCsvImport *job = data; /* the task's own copy: no widget is touched here */
  loom_error err = {0};
  loom_dataset *ds = loom_dataset_load_csv(job->path, &job->options, &err);
  if (!ds) {
    g_task_return_new_error(task, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, "%s", err.message);
    return;
  }
  if (g_task_return_error_if_cancelled(task)) {
    loom_dataset_free(ds);
    return;
  }
  g_task_return_pointer(task, ds, (GDestroyNotify)loom_dataset_free);
}

static void import_done(GObject *source, GAsyncResult *result, gpointer data) {
  (void)data;
  LoomCsvDialog *self = LOOM_CSV_DIALOG(source);
  g_autoptr(GError) error = NULL;
  loom_dataset *ds = g_task_propagate_pointer(G_TASK(result), &error);
  /* Closed meanwhile: the widgets may be gone; drop the result. */
  if (g_cancellable_is_cancelled(g_task_get_cancellable(G_TASK(result)))) {
    if (ds) loom_dataset_free(ds);
    return;
  }
  set_busy(self, FALSE);
  if (!ds) {
    show_error(self, error->message);
    return;
  }
  LoomCsvImport *job = g_task_get_task_data(G_TASK(result));
  job->dataset = ds;
  g_signal_emit(self, signals[SIGNAL_IMPORTED], 0, job);
  if (job->dataset) loom_dataset_free(job->dataset);
  job->dataset = NULL;
  gtk_window_close(GTK_WINDOW(self));
}

static void import_activated(GtkWidget *widget, const char *action, GVariant *param) {
  (void)action;
  (void)param;
  LoomCsvDialog *self = LOOM_CSV_DIALOG(widget);
  if (self->busy || !self->have_preview || !any_feature(self)) return;
  LoomCsvImport *job = g_new0(LoomCsvImport, 1);
  job->path = g_strdup(self->path);
  job->options = loom_csv_options_default();
  job->options.header = gtk_switch_get_active(self->header_switch) ? LOOM_CSV_HEADER_YES : LOOM_CSV_HEADER_NO;
  job->options.delimiter = self->preview.delimiter;
  job->options.label_index = target_column(self);
  job->options.target = adw_combo_row_get_selected(self->kind_row) == 1 ? LOOM_TARGET_VECTOR : LOOM_TARGET_CLASS;
  job->features = g_new(int64_t, self->feature_checks->len);
  for (guint c = 0; c < self->feature_checks->len; c++)
    if (gtk_check_button_get_active(g_ptr_array_index(self->feature_checks, c)))
      job->features[job->options.n_features++] = c;
  job->options.features = job->features;
  static const loom_norm_kind norms[] = {LOOM_NORM_NONE, LOOM_NORM_MINMAX, LOOM_NORM_ZSCORE};
  job->normalize = norms[MIN(adw_combo_row_get_selected(self->norm_row), 2u)];

  show_error(self, NULL);
  set_busy(self, TRUE);
  GTask *task = g_task_new(self, self->cancellable, import_done, NULL);
  g_task_set_task_data(task, job, (GDestroyNotify)import_free);
  g_task_run_in_thread(task, import_thread);
  g_object_unref(task);
}

/* ---- the object ------------------------------------------------------------ */

static gboolean on_close_request(GtkWindow *window) {
  g_cancellable_cancel(LOOM_CSV_DIALOG(window)->cancellable);
  return FALSE;
}

static void loom_csv_dialog_set_property(GObject *object, guint id, const GValue *value, GParamSpec *pspec) {
  LoomCsvDialog *self = LOOM_CSV_DIALOG(object);
  switch (id) {
  case PROP_FILE:
    g_set_object(&self->file, g_value_get_object(value));
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void loom_csv_dialog_get_property(GObject *object, guint id, GValue *value, GParamSpec *pspec) {
  LoomCsvDialog *self = LOOM_CSV_DIALOG(object);
  switch (id) {
  case PROP_FILE:
    g_value_set_object(value, self->file);
    break;
  case PROP_BUSY:
    g_value_set_boolean(value, self->busy);
    break;
  default:
    G_OBJECT_WARN_INVALID_PROPERTY_ID(object, id, pspec);
  }
}

static void loom_csv_dialog_constructed(GObject *object) {
  G_OBJECT_CLASS(loom_csv_dialog_parent_class)->constructed(object);
  LoomCsvDialog *self = LOOM_CSV_DIALOG(object);
  g_return_if_fail(G_IS_FILE(self->file));
  self->path = g_file_get_path(self->file);
  g_autofree char *name = g_file_get_basename(self->file);
  adw_window_title_set_subtitle(self->window_title, name);
  if (!self->path) {
    /* A URI without a local path (no FUSE mount): the engine reads paths only. */
    show_error(self, _("Only files on this computer can be imported"));
    gtk_widget_set_sensitive(self->options_box, FALSE);
    update_import_enabled(self);
    return;
  }
  load_preview(self, TRUE);
}

static void loom_csv_dialog_dispose(GObject *object) {
  LoomCsvDialog *self = LOOM_CSV_DIALOG(object);
  g_cancellable_cancel(self->cancellable);
  gtk_widget_dispose_template(GTK_WIDGET(self), LOOM_TYPE_CSV_DIALOG);
  G_OBJECT_CLASS(loom_csv_dialog_parent_class)->dispose(object);
}

static void loom_csv_dialog_finalize(GObject *object) {
  LoomCsvDialog *self = LOOM_CSV_DIALOG(object);
  loom_csv_preview_clear(&self->preview);
  g_clear_pointer(&self->feature_checks, g_ptr_array_unref);
  g_clear_object(&self->cancellable);
  g_clear_object(&self->file);
  g_free(self->path);
  G_OBJECT_CLASS(loom_csv_dialog_parent_class)->finalize(object);
}

static void loom_csv_dialog_class_init(LoomCsvDialogClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  object_class->set_property = loom_csv_dialog_set_property;
  object_class->get_property = loom_csv_dialog_get_property;
  object_class->constructed = loom_csv_dialog_constructed;
  object_class->dispose = loom_csv_dialog_dispose;
  object_class->finalize = loom_csv_dialog_finalize;
  GTK_WINDOW_CLASS(klass)->close_request = on_close_request;

  properties[PROP_FILE] = g_param_spec_object("file", NULL, NULL, G_TYPE_FILE,
                                              G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS);
  properties[PROP_BUSY] = g_param_spec_boolean("busy", NULL, NULL, FALSE, G_PARAM_READABLE | G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  signals[SIGNAL_IMPORTED] = g_signal_new("imported", G_TYPE_FROM_CLASS(klass), G_SIGNAL_RUN_LAST, 0, NULL, NULL,
                                          NULL, G_TYPE_NONE, 1, G_TYPE_POINTER);

  gtk_widget_class_install_action(widget_class, "csv.import", NULL, import_activated);
  gtk_widget_class_add_binding_action(widget_class, GDK_KEY_Escape, 0, "window.close", NULL);

  /* The resources live in a static library; referencing them links their
   * registering constructor in even where no LoomApplication is (tests). */
  (void)loom_workbench_get_resource();
  gtk_widget_class_set_template_from_resource(widget_class, "/org/loomworkbench/Workbench/loom-csv-dialog.ui");
  gtk_widget_class_bind_template_child(widget_class, LoomCsvDialog, window_title);
  gtk_widget_class_bind_template_child(widget_class, LoomCsvDialog, spinner);
  gtk_widget_class_bind_template_child(widget_class, LoomCsvDialog, error_label);
  gtk_widget_class_bind_template_child(widget_class, LoomCsvDialog, preview_group);
  gtk_widget_class_bind_template_child(widget_class, LoomCsvDialog, preview_grid);
  gtk_widget_class_bind_template_child(widget_class, LoomCsvDialog, options_box);
  gtk_widget_class_bind_template_child(widget_class, LoomCsvDialog, header_switch);
  gtk_widget_class_bind_template_child(widget_class, LoomCsvDialog, delimiter_row);
  gtk_widget_class_bind_template_child(widget_class, LoomCsvDialog, target_row);
  gtk_widget_class_bind_template_child(widget_class, LoomCsvDialog, kind_row);
  gtk_widget_class_bind_template_child(widget_class, LoomCsvDialog, norm_row);
  gtk_widget_class_bind_template_child(widget_class, LoomCsvDialog, features_box);
}

static void loom_csv_dialog_init(LoomCsvDialog *self) {
  gtk_widget_init_template(GTK_WIDGET(self));
  self->cancellable = g_cancellable_new();
  self->feature_checks = g_ptr_array_new();
  g_signal_connect_swapped(self->header_switch, "notify::active", G_CALLBACK(on_reading_changed), self);
  g_signal_connect_swapped(self->delimiter_row, "notify::selected", G_CALLBACK(on_reading_changed), self);
  g_signal_connect_swapped(self->target_row, "notify::selected", G_CALLBACK(on_target_changed), self);
  gtk_widget_action_set_enabled(GTK_WIDGET(self), "csv.import", FALSE);
}

LoomCsvDialog *loom_csv_dialog_new(GtkWindow *parent, GFile *file) {
  g_return_val_if_fail(G_IS_FILE(file), NULL);
  return g_object_new(LOOM_TYPE_CSV_DIALOG, "transient-for", parent, "modal", TRUE, "file", file, NULL);
}
