/*
 * Export of the document's network to the other formats (win.export-model):
 * LoomExportDialog asks for the format and dtype, a chooser for the file;
 * the document is never changed by an export.
 */
#include <glib/gi18n.h>

#include "loom-export-dialog.h"
#include "loom-window-private.h"

typedef struct {
  LoomWindow *self;
  LoomExportFormat format;
  gboolean all;
  loom_dtype dtype;
} ExportChoice;

static void export_chosen(GtkNativeDialog *chooser, int response, ExportChoice *c) {
  g_autoptr(GFile) file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file(GTK_FILE_CHOOSER(chooser)) : NULL;
  g_autofree char *path = file ? g_file_get_path(file) : NULL;
  g_autoptr(GError) error = NULL;
  if (path) {
    if (loom_export_write(loom_document_get_net(c->self->document), c->format, c->all, c->dtype, path, &error)) {
      g_autofree char *base = g_path_get_basename(path);
      /* Translators: a toast after an export; %s is the file's name. */
      g_autofree char *msg = g_strdup_printf(_("Exported “%s”"), base);
      loom_window_toast(c->self, msg);
    } else {
      loom_window_show_error(c->self, _("Cannot Export the Network"), error);
    }
  }
  gtk_native_dialog_destroy(chooser);
  g_object_unref(chooser);
  g_free(c);
}

static void on_export_response(LoomExportDialog *dialog, const char *response, LoomWindow *self) {
  if (!g_str_equal(response, "export")) return;
  ExportChoice *c = g_new0(ExportChoice, 1);
  c->self = self;
  c->format = loom_export_dialog_get_format(dialog);
  c->all = loom_export_dialog_get_dtype(dialog, &c->dtype);
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new(_("Export the Network"), GTK_WINDOW(self),
                                                              GTK_FILE_CHOOSER_ACTION_SAVE, _("_Export"), _("_Cancel"));
  gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
  g_autofree char *stem = g_strdup(loom_document_get_title(self->document));
  if (g_str_has_suffix(stem, ".loom.json")) stem[strlen(stem) - strlen(".loom.json")] = '\0';
  g_autofree char *name = g_strconcat(stem, loom_export_format_extension(c->format), NULL);
  gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), name);
  g_signal_connect(chooser, "response", G_CALLBACK(export_chosen), c);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

LoomExportDialog *loom_window_show_export(LoomWindow *self) {
  LoomExportDialog *dialog = loom_export_dialog_new(GTK_WINDOW(self), loom_document_get_net(self->document));
  g_signal_connect_object(dialog, "response", G_CALLBACK(on_export_response), self, 0);
  gtk_window_present(GTK_WINDOW(dialog));
  return dialog;
}

static void win_export_model(GtkWidget *widget, const char *action, GVariant *param) {
  loom_window_show_export(LOOM_WINDOW(widget));
}

void loom_window_export_class_init(GtkWidgetClass *widget_class) {
  gtk_widget_class_install_action(widget_class, "win.export-model", NULL, win_export_model);
}

/* ---- import of PyTorch weights (docs/safetensors.md, "Importing a state dict") ---- */

gboolean loom_window_import_weights(LoomWindow *self, const char *path, const char *map_path, GError **error) {
  loom_error err = {0};
  loom_import_map *map = NULL;
  if (map_path && loom_import_map_load(map_path, &map, &err)) {
    g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, err.message);
    return FALSE;
  }
  /* Into a copy: the document changes only through the command below. */
  loom_net *copy = loom_net_clone(loom_document_get_net(self->document), &err);
  int rc = copy ? loom_import_state_dict(copy, path, map, 0, &err) : LOOM_ERR_NOMEM;
  loom_import_map_free(map);
  if (rc) {
    if (copy) loom_net_free(copy);
    g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, err.message);
    return FALSE;
  }
  /* New weights: the trainer state of the old ones no longer applies. */
  gboolean ok = loom_window_execute(self, loom_command_new_training_result(copy, NULL, 0, 0, _("Import Weights")));
  loom_net_free(copy);
  if (!ok) g_set_error_literal(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("The weights could not be taken into the network"));
  return ok;
}

typedef struct {
  LoomWindow *self;
  char *weights; /* chosen first; then the mapping, when asked for */
  gboolean mapped;
} ImportChoice;

static void import_chosen(GtkNativeDialog *chooser, int response, ImportChoice *c);

static void choose_import(LoomWindow *self, ImportChoice *c) {
  gboolean map = c->weights != NULL;
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new(
      map ? _("Choose the Mapping of the Tensors") : _("Import PyTorch Weights"), GTK_WINDOW(self),
      GTK_FILE_CHOOSER_ACTION_OPEN, _("_Import"), _("_Cancel"));
  gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new();
  gtk_file_filter_set_name(filter, map ? _("Mappings (JSON)") : _("safetensors files"));
  gtk_file_filter_add_suffix(filter, map ? "json" : "safetensors");
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(chooser), filter);
  g_signal_connect(chooser, "response", G_CALLBACK(import_chosen), c);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void import_chosen(GtkNativeDialog *chooser, int response, ImportChoice *c) {
  g_autoptr(GFile) file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file(GTK_FILE_CHOOSER(chooser)) : NULL;
  char *path = file ? g_file_get_path(file) : NULL;
  gtk_native_dialog_destroy(chooser);
  g_object_unref(chooser);
  if (!path) goto done;
  if (c->mapped && !c->weights) {
    c->weights = path;
    choose_import(c->self, c);
    return;
  }
  g_autoptr(GError) error = NULL;
  const char *weights = c->weights ? c->weights : path;
  if (!loom_window_import_weights(c->self, weights, c->weights ? path : NULL, &error))
    loom_window_show_error(c->self, _("Cannot Import the Weights"), error);
  if (c->weights) g_free(path);
  else c->weights = path;
done:
  g_free(c->weights);
  g_free(c);
}

/* win.import-weights follows nn.Sequential's order; win.import-weights-mapped
 * asks for a mapping file that names where each tensor goes. */
static void win_import_weights(GtkWidget *widget, const char *action, GVariant *param) {
  ImportChoice *c = g_new0(ImportChoice, 1);
  c->self = LOOM_WINDOW(widget);
  c->mapped = g_str_equal(action, "win.import-weights-mapped");
  choose_import(c->self, c);
}

void loom_window_import_class_init(GtkWidgetClass *widget_class) {
  gtk_widget_class_install_action(widget_class, "win.import-weights", NULL, win_import_weights);
  gtk_widget_class_install_action(widget_class, "win.import-weights-mapped", NULL, win_import_weights);
}
