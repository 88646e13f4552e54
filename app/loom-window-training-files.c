/*
 * Training files of the window: CSV import into the settings (through
 * LoomCsvDialog), the settings file that `loom train --config` reads, and
 * the plots' export. Each action asks for a file; the work is in functions
 * tests call directly.
 */
#include <glib/gi18n.h>

#include "loom-csv-dialog.h"
#include "loom-plot.h"
#include "loom-window-private.h"

typedef enum { CHOOSE_CSV, CHOOSE_SETTINGS, CHOOSE_LOSS_PLOT, CHOOSE_ACCURACY_PLOT } ChooserPurpose;

/* What the import dialog chose becomes the data settings: one command. */
static void on_csv_imported(LoomWindow *self, gpointer result, LoomCsvDialog *dialog) {
  const LoomCsvImport *import = result;
  loom_train_settings *s = loom_train_settings_copy(loom_training_pane_get_settings(self->training_pane));
  if (!s) return;
  const char *headers[] = {"auto", "yes", "no"};
  g_autofree char *label = g_strdup_printf("%lld", (long long)import->options.label_index);
  g_autofree char *delimiter = g_strdup_printf("%c", import->options.delimiter ? import->options.delimiter : ',');
  g_autoptr(GString) features = g_string_new(NULL);
  for (int64_t i = 0; i < import->options.n_features; i++)
    g_string_append_printf(features, "%s%lld", i ? "," : "", (long long)import->features[i]);
  const char *norms[] = {"none", "minmax", "zscore"};
  struct {
    const char *field, *value;
  } fields[] = {
      {"data", "csv"},
      {"data.csv.path", import->path},
      {"data.csv.header", headers[CLAMP((int)import->options.header, 0, 2)]},
      {"data.csv.delimiter", import->options.delimiter == '\t' ? "\\t" : delimiter},
      {"data.csv.label_index", label},
      {"data.csv.label_name", "default"},
      {"data.csv.target", import->options.target == LOOM_TARGET_VECTOR ? "vector" : "class"},
      {"data.csv.features", import->options.n_features > 0 ? features->str : "default"},
      {"data.normalize", norms[CLAMP((int)import->normalize, 0, 2)]},
  };
  loom_error err = {0};
  for (gsize i = 0; i < G_N_ELEMENTS(fields); i++) {
    if (loom_train_settings_set_field(s, fields[i].field, fields[i].value, &err) != LOOM_OK) {
      loom_window_toast(self, err.message);
      loom_train_settings_free(s);
      return;
    }
  }
  g_autoptr(GError) error = NULL;
  if (!loom_document_execute(self->document, loom_command_new_set_training_settings(s), &error))
    loom_window_toast(self, error->message);
  loom_train_settings_free(s);
}

void loom_window_import_csv(LoomWindow *self, GFile *file) {
  LoomCsvDialog *dialog = loom_csv_dialog_new(GTK_WINDOW(self), file);
  g_signal_connect_object(dialog, "imported", G_CALLBACK(on_csv_imported), self, G_CONNECT_SWAPPED);
  gtk_window_present(GTK_WINDOW(dialog));
}

gboolean loom_window_export_training_settings(LoomWindow *self, const char *path, GError **error) {
  loom_error err = {0};
  if (loom_train_settings_save(loom_training_pane_get_settings(self->training_pane), path, &err) == LOOM_OK) return TRUE;
  g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, err.message);
  return FALSE;
}

gboolean loom_window_export_plot(LoomWindow *self, const char *which, const char *path, GError **error) {
  LoomPlot *target = loom_training_pane_get_plot(self->training_pane, which);
  if (!target) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT, _("There is no plot “%s”"), which);
    return FALSE;
  }
  if (g_str_has_suffix(path, ".svg")) return loom_plot_export_svg(target, path, 1200, 700, error);
  if (g_str_has_suffix(path, ".csv")) return loom_plot_export_csv(target, path, error);
  return loom_plot_export_png(target, path, 1200, 700, error);
}

/* ---- choosers ---- */

typedef struct {
  LoomWindow *self;
  ChooserPurpose purpose;
} ChooserData;

static void chooser_done(GtkNativeDialog *dialog, int response, ChooserData *data) {
  LoomWindow *self = data->self;
  g_autoptr(GFile) file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog)) : NULL;
  g_autofree char *path = file ? g_file_get_path(file) : NULL;
  g_autoptr(GError) error = NULL;
  if (file) {
    switch (data->purpose) {
    case CHOOSE_CSV:
      loom_window_import_csv(self, file);
      break;
    case CHOOSE_SETTINGS:
      if (!path || !loom_window_export_training_settings(self, path, &error))
        loom_window_show_error(self, _("Cannot Export the Settings"), error);
      break;
    case CHOOSE_LOSS_PLOT:
    case CHOOSE_ACCURACY_PLOT:
      if (!path || !loom_window_export_plot(self, data->purpose == CHOOSE_LOSS_PLOT ? "loss" : "accuracy", path,
                                            &error))
        loom_window_show_error(self, _("Cannot Export the Plot"), error);
      break;
    }
  }
  gtk_native_dialog_destroy(dialog);
  g_object_unref(dialog);
  g_free(data);
}

static void choose(LoomWindow *self, ChooserPurpose purpose) {
  gboolean open = purpose == CHOOSE_CSV;
  const char *titles[] = {_("Import a CSV File"), _("Export Training Settings"), _("Export the Loss Plot"),
                          _("Export the Accuracy Plot")};
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new(
      titles[purpose], GTK_WINDOW(self), open ? GTK_FILE_CHOOSER_ACTION_OPEN : GTK_FILE_CHOOSER_ACTION_SAVE,
      open ? _("_Import") : _("_Export"), _("_Cancel"));
  gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
  const char *names[] = {NULL, _("training.settings.json"), _("loss.png"), _("accuracy.png")};
  if (names[purpose]) gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), names[purpose]);
  ChooserData *data = g_new0(ChooserData, 1);
  data->self = self;
  data->purpose = purpose;
  g_signal_connect(chooser, "response", G_CALLBACK(chooser_done), data);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void win_train_import_csv(GtkWidget *widget, const char *action, GVariant *param) {
  choose(LOOM_WINDOW(widget), CHOOSE_CSV);
}

static void win_train_export_settings(GtkWidget *widget, const char *action, GVariant *param) {
  choose(LOOM_WINDOW(widget), CHOOSE_SETTINGS);
}

static void win_train_export_plot(GtkWidget *widget, const char *action, GVariant *param) {
  choose(LOOM_WINDOW(widget), g_str_equal(g_variant_get_string(param, NULL), "loss") ? CHOOSE_LOSS_PLOT
                                                                                     : CHOOSE_ACCURACY_PLOT);
}

void loom_window_training_files_class_init(GtkWidgetClass *widget_class) {
  gtk_widget_class_install_action(widget_class, "win.train-import-csv", NULL, win_train_import_csv);
  gtk_widget_class_install_action(widget_class, "win.train-export-settings", NULL, win_train_export_settings);
  gtk_widget_class_install_action(widget_class, "win.train-export-plot", "s", win_train_export_plot);
}
