/*
 * The window's file side: New (with a size dialog), Open, Open Recent,
 * the example gallery, Save, Save As, Export Image, files dropped on the
 * window, and the "save changes?" question before anything would discard
 * unsaved edits (New, Open, closing the window, quitting).
 */
#include <glib/gi18n.h>
#include <loom/model.h>

#include "loom-example-gallery.h"
#include "loom-new-dialog.h"
#include "loom-window-private.h"

#define EXPORT_DEFAULT_WIDTH 1600
#define EXPORT_DEFAULT_HEIGHT 1000
#define EXPORT_MAX_SIDE 8192

/* ---- recent files ---- */

static void rebuild_recent_menus(LoomWindow *self) {
  g_auto(GStrv) uris = g_settings_get_strv(self->settings, "recent-files");
  g_menu_remove_all(self->recent_menu);
  g_menu_remove_all(self->recent_submenu);
  for (guint i = 0; uris[i]; i++) {
    g_autoptr(GFile) file = g_file_new_for_uri(uris[i]);
    g_autofree char *base = g_file_get_basename(file);
    g_autofree char *label = base ? g_filename_display_name(base) : g_strdup(uris[i]);
    g_autoptr(GMenuItem) item = g_menu_item_new(label, NULL);
    g_menu_item_set_action_and_target_value(item, "win.open-recent", g_variant_new_string(uris[i]));
    g_menu_append_item(self->recent_menu, item);
    g_menu_append_item(self->recent_submenu, item);
  }
}

static void remember_recent(LoomWindow *self, GFile *file) {
  g_autofree char *uri = g_file_get_uri(file);
  GtkApplication *app = gtk_window_get_application(GTK_WINDOW(self));
  if (LOOM_IS_APPLICATION(app)) loom_application_add_recent(LOOM_APPLICATION(app), uri);
  gtk_recent_manager_add_item(gtk_recent_manager_get_default(), uri);
}

/* ---- the "save changes?" question ---- */

static void clear_pending(LoomWindow *self) {
  if (self->pending_destroy && self->pending_data) self->pending_destroy(self->pending_data);
  self->pending = NULL;
  self->pending_data = NULL;
  self->pending_destroy = NULL;
}

static void run_pending(LoomWindow *self) {
  LoomWindowContinuation cont = self->pending;
  gpointer data = self->pending_data;
  GDestroyNotify destroy = self->pending_destroy;
  self->pending = NULL;
  self->pending_data = NULL;
  self->pending_destroy = NULL;
  if (cont) cont(self, data);
  if (destroy && data) destroy(data);
}

static void run_chooser(LoomWindow *self, GtkFileChooserAction action, gboolean exports);

static void on_replace_response(AdwMessageDialog *dialog, const char *response, LoomWindow *self) {
  GFile *file = loom_document_get_file(self->document);
  if (g_str_equal(response, "replace") && file)
    loom_window_save_to_file(self, file);
  else if (g_str_equal(response, "save-as"))
    run_chooser(self, GTK_FILE_CHOOSER_ACTION_SAVE, FALSE);
  else
    clear_pending(self);
}

/* Save to the document's own file, or choose one. A network recovered after
 * a crash asks first: its file may have changed since the copy was taken. */
static void save_in_place(LoomWindow *self) {
  GFile *file = loom_document_get_file(self->document);
  if (!file) {
    run_chooser(self, GTK_FILE_CHOOSER_ACTION_SAVE, FALSE);
    return;
  }
  if (!loom_document_get_recovered(self->document)) {
    loom_window_save_to_file(self, file);
    return;
  }
  g_autofree char *path = g_file_get_parse_name(file);
  g_autofree char *body = g_strdup_printf(_("“%s” holds changes recovered after Loom Workbench did not close "
                                            "properly. Saving replaces “%s”, which may have changed since."),
                                          loom_document_get_title(self->document), path);
  AdwMessageDialog *dialog =
    ADW_MESSAGE_DIALOG(adw_message_dialog_new(GTK_WINDOW(self), _("Replace the Saved File?"), body));
  adw_message_dialog_add_responses(dialog, "cancel", _("_Cancel"), "save-as", _("Save _As…"), "replace",
                                   _("_Replace"), NULL);
  adw_message_dialog_set_response_appearance(dialog, "replace", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response(dialog, "replace");
  adw_message_dialog_set_close_response(dialog, "cancel");
  g_signal_connect(dialog, "response", G_CALLBACK(on_replace_response), self);
  gtk_window_present(GTK_WINDOW(dialog));
}

static void on_discard_response(AdwMessageDialog *dialog, const char *response, LoomWindow *self) {
  if (g_str_equal(response, "discard")) {
    run_pending(self);
  } else if (g_str_equal(response, "save")) {
    /* The pending step runs once the save succeeded (save_done). */
    save_in_place(self);
  } else {
    clear_pending(self);
  }
}

void loom_window_confirm_discard(LoomWindow *self, LoomWindowContinuation cont, gpointer data,
                                 GDestroyNotify destroy) {
  if (!loom_document_get_dirty(self->document)) {
    cont(self, data);
    if (destroy && data) destroy(data);
    return;
  }
  clear_pending(self);
  self->pending = cont;
  self->pending_data = data;
  self->pending_destroy = destroy;
  g_autofree char *body = g_strdup_printf(_("“%s” has unsaved changes. Changes that are not saved are lost."),
                                          loom_document_get_title(self->document));
  AdwMessageDialog *dialog = ADW_MESSAGE_DIALOG(adw_message_dialog_new(GTK_WINDOW(self), _("Save Changes?"), body));
  adw_message_dialog_add_responses(dialog, "cancel", _("_Cancel"), "discard", _("_Discard"), "save", _("_Save"),
                                   NULL);
  adw_message_dialog_set_response_appearance(dialog, "discard", ADW_RESPONSE_DESTRUCTIVE);
  adw_message_dialog_set_response_appearance(dialog, "save", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response(dialog, "save");
  adw_message_dialog_set_close_response(dialog, "cancel");
  g_signal_connect(dialog, "response", G_CALLBACK(on_discard_response), self);
  gtk_window_present(GTK_WINDOW(dialog));
}

static void close_now(LoomWindow *self, gpointer data) {
  self->close_confirmed = TRUE;
  gtk_window_close(GTK_WINDOW(self));
}

gboolean loom_window_files_close_request(LoomWindow *self) {
  if (self->close_confirmed || !self->document || !loom_document_get_dirty(self->document)) return FALSE;
  loom_window_confirm_discard(self, close_now, NULL, NULL);
  return TRUE;
}

/* ---- open ---- */

static void open_done(GObject *source, GAsyncResult *result, gpointer user_data) {
  g_autoptr(LoomWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) document = loom_document_load_finish(result, &error);
  if (!document) {
    if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
      loom_window_show_error(self, _("Cannot Open the Network"), error);
    return;
  }
  loom_window_set_document(self, document);
  remember_recent(self, loom_document_get_file(document));
}

void loom_window_open_file(LoomWindow *self, GFile *file) {
  g_return_if_fail(LOOM_IS_WINDOW(self));
  g_return_if_fail(G_IS_FILE(file));
  loom_document_load_async(file, self->cancellable, open_done, g_object_ref(self));
}

static void open_file_cont(LoomWindow *self, gpointer file) {
  loom_window_open_file(self, file);
}

static void open_file_confirmed(LoomWindow *self, GFile *file) {
  loom_window_confirm_discard(self, open_file_cont, g_object_ref(file), g_object_unref);
}

gboolean loom_window_open_example(LoomWindow *self, const char *name, GError **error) {
  g_return_val_if_fail(LOOM_IS_WINDOW(self), FALSE);
  g_autoptr(LoomDocument) document = loom_document_new_for_example(name, error);
  if (!document) return FALSE;
  loom_window_set_document(self, document);
  return TRUE;
}

static void open_example_cont(LoomWindow *self, gpointer name) {
  g_autoptr(GError) error = NULL;
  if (!loom_window_open_example(self, name, &error)) loom_window_show_error(self, _("Cannot Open the Example"), error);
}

/* ---- save ---- */

static void save_done(GObject *source, GAsyncResult *result, gpointer user_data) {
  g_autoptr(LoomWindow) self = user_data;
  LoomDocument *document = LOOM_DOCUMENT(source);
  g_autoptr(GError) error = NULL;
  if (!loom_document_save_finish(document, result, &error)) {
    clear_pending(self);
    if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
      loom_window_show_error(self, _("Cannot Save the Network"), error);
    return;
  }
  remember_recent(self, loom_document_get_file(document));
  g_autofree char *message = g_strdup_printf(_("Saved “%s”"), loom_document_get_title(document));
  loom_window_toast(self, message);
  if (document == self->document) run_pending(self);
}

void loom_window_save_to_file(LoomWindow *self, GFile *file) {
  g_return_if_fail(LOOM_IS_WINDOW(self));
  g_return_if_fail(G_IS_FILE(file));
  /* Save while training runs saves the newest weights the worker published. */
  loom_window_training_flush(self);
  loom_document_save_async(self->document, file, self->cancellable, save_done, g_object_ref(self));
}

/* ---- export ---- */

gboolean loom_window_export_png(LoomWindow *self, GFile *file, int width, int height, GError **error) {
  g_return_val_if_fail(LOOM_IS_WINDOW(self), FALSE);
  g_autofree char *path = g_file_get_path(file);
  if (!path) {
    g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED, _("Images can only be exported to local files"));
    return FALSE;
  }
  return loom_grid_view_export_png(self->grid_view, path, width, height, error);
}

static void export_to(LoomWindow *self, GFile *file) {
  g_autoptr(GError) error = NULL;
  if (!loom_window_export_png(self, file, self->export_width, self->export_height, &error)) {
    loom_window_show_error(self, _("Cannot Export the Image"), error);
    return;
  }
  g_autofree char *base = g_file_get_basename(file);
  g_autofree char *message = g_strdup_printf(_("Exported “%s”"), base);
  loom_window_toast(self, message);
}

static GtkSpinButton *size_spin(GtkGrid *grid, int row, const char *label, int value) {
  GtkWidget *l = gtk_label_new_with_mnemonic(label);
  gtk_label_set_xalign(GTK_LABEL(l), 0);
  GtkWidget *spin = gtk_spin_button_new_with_range(16, EXPORT_MAX_SIDE, 16);
  gtk_spin_button_set_value(GTK_SPIN_BUTTON(spin), value);
  gtk_label_set_mnemonic_widget(GTK_LABEL(l), spin);
  gtk_grid_attach(grid, l, 0, row, 1, 1);
  gtk_grid_attach(grid, spin, 1, row, 1, 1);
  return GTK_SPIN_BUTTON(spin);
}

static void on_export_response(AdwMessageDialog *dialog, const char *response, LoomWindow *self) {
  if (!g_str_equal(response, "export")) return;
  self->export_width = gtk_spin_button_get_value_as_int(g_object_get_data(G_OBJECT(dialog), "width"));
  self->export_height = gtk_spin_button_get_value_as_int(g_object_get_data(G_OBJECT(dialog), "height"));
  run_chooser(self, GTK_FILE_CHOOSER_ACTION_SAVE, TRUE);
}

static void win_export_image(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  AdwMessageDialog *dialog = ADW_MESSAGE_DIALOG(
    adw_message_dialog_new(GTK_WINDOW(self), _("Export Image"), _("The grid view is drawn again at this size.")));
  GtkGrid *grid = GTK_GRID(gtk_grid_new());
  gtk_grid_set_row_spacing(grid, 6);
  gtk_grid_set_column_spacing(grid, 12);
  gtk_widget_set_halign(GTK_WIDGET(grid), GTK_ALIGN_CENTER);
  g_object_set_data(G_OBJECT(dialog), "width", size_spin(grid, 0, _("_Width (pixels)"), self->export_width));
  g_object_set_data(G_OBJECT(dialog), "height", size_spin(grid, 1, _("_Height (pixels)"), self->export_height));
  adw_message_dialog_set_extra_child(dialog, GTK_WIDGET(grid));
  adw_message_dialog_add_responses(dialog, "cancel", _("_Cancel"), "export", _("_Export…"), NULL);
  adw_message_dialog_set_response_appearance(dialog, "export", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response(dialog, "export");
  adw_message_dialog_set_close_response(dialog, "cancel");
  g_signal_connect(dialog, "response", G_CALLBACK(on_export_response), self);
  gtk_window_present(GTK_WINDOW(dialog));
}

/* ---- file choosers ---- */

static void chooser_response(GtkNativeDialog *dialog, int response, LoomWindow *self) {
  g_autoptr(GFile) file = NULL;
  if (response == GTK_RESPONSE_ACCEPT) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
  gboolean saving = gtk_file_chooser_get_action(GTK_FILE_CHOOSER(dialog)) == GTK_FILE_CHOOSER_ACTION_SAVE;
  gboolean exports = self->chooser_exports;
  g_clear_object(&self->chooser);
  if (!file) {
    if (saving && !exports) clear_pending(self);
    return;
  }
  if (exports)
    export_to(self, file);
  else if (saving)
    loom_window_save_to_file(self, file);
  else
    loom_window_open_file(self, file); /* win.open asked before choosing */
}

static void run_chooser(LoomWindow *self, GtkFileChooserAction action, gboolean exports) {
  if (self->chooser) gtk_native_dialog_destroy(GTK_NATIVE_DIALOG(self->chooser));
  g_clear_object(&self->chooser);
  gboolean saving = action == GTK_FILE_CHOOSER_ACTION_SAVE;
  const char *title = exports ? _("Export Image") : saving ? _("Save Network") : _("Open Network");
  self->chooser = gtk_file_chooser_native_new(title, GTK_WINDOW(self), action,
                                              exports ? _("_Export") : saving ? _("_Save") : _("_Open"), _("_Cancel"));
  self->chooser_exports = exports;
  gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(self->chooser), TRUE);
  g_autoptr(GtkFileFilter) filter = gtk_file_filter_new();
  if (exports) {
    gtk_file_filter_set_name(filter, _("PNG images"));
    gtk_file_filter_add_mime_type(filter, "image/png");
    /* Translators: the file name offered for an exported image; keep the .png suffix. */
    gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(self->chooser), _("network.png"));
  } else {
    gtk_file_filter_set_name(filter, _("Loom networks"));
    gtk_file_filter_add_mime_type(filter, "application/x-loom-model");
    gtk_file_filter_add_suffix(filter, "loom.json");
    /* A network saved as safetensors opens as well (docs/safetensors.md). */
    gtk_file_filter_add_mime_type(filter, "application/x-safetensors");
    gtk_file_filter_add_suffix(filter, "safetensors");
  }
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(self->chooser), filter);
  if (saving && !exports) {
    GFile *current = loom_document_get_file(self->document);
    if (current)
      gtk_file_chooser_set_file(GTK_FILE_CHOOSER(self->chooser), current, NULL);
    else
      /* Translators: the file name offered for a network never saved; keep the .loom.json suffix. */
      gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(self->chooser), _("Untitled network.loom.json"));
  }
  g_signal_connect(self->chooser, "response", G_CALLBACK(chooser_response), self);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(self->chooser));
}

/* ---- actions ---- */

static void on_new_response(LoomNewDialog *dialog, const char *response, LoomWindow *self) {
  if (!g_str_equal(response, "create")) return;
  int dims[4];
  loom_shape input;
  loom_new_dialog_get_size(dialog, dims);
  if (!loom_new_dialog_get_input_shape(dialog, &input)) return;
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) document = loom_document_new_sized(dims[0], dims[1], dims[2], dims[3], &input, &error);
  if (!document) {
    loom_window_show_error(self, _("Cannot Create a Network"), error);
    return;
  }
  loom_window_set_document(self, document);
}

static void new_cont(LoomWindow *self, gpointer data) {
  LoomNewDialog *dialog = loom_new_dialog_new(GTK_WINDOW(self));
  const loom_net *net = loom_document_get_net(self->document);
  int dims[4] = {loom_net_depth(net), loom_net_rows(net), loom_net_cols(net), loom_net_layers_per_cell(net)};
  loom_new_dialog_set_size(dialog, dims);
  g_signal_connect(dialog, "response", G_CALLBACK(on_new_response), self);
  gtk_window_present(GTK_WINDOW(dialog));
}

static void win_new(GtkWidget *widget, const char *action, GVariant *param) {
  loom_window_confirm_discard(LOOM_WINDOW(widget), new_cont, NULL, NULL);
}

static void open_chooser_cont(LoomWindow *self, gpointer data) {
  run_chooser(self, GTK_FILE_CHOOSER_ACTION_OPEN, FALSE);
}

static void win_open(GtkWidget *widget, const char *action, GVariant *param) {
  /* Ask before choosing, so the question is not a surprise after the choice. */
  loom_window_confirm_discard(LOOM_WINDOW(widget), open_chooser_cont, NULL, NULL);
}

static void win_open_recent(GtkWidget *widget, const char *action, GVariant *param) {
  g_autoptr(GFile) file = g_file_new_for_uri(g_variant_get_string(param, NULL));
  open_file_confirmed(LOOM_WINDOW(widget), file);
}

static void win_open_example(GtkWidget *widget, const char *action, GVariant *param) {
  loom_window_confirm_discard(LOOM_WINDOW(widget), open_example_cont, g_variant_dup_string(param, NULL), g_free);
}

static void on_example_chosen(LoomWindow *self, const char *name) {
  gtk_widget_activate_action(GTK_WIDGET(self), "win.open-example", "s", name);
}

static void win_show_examples(GtkWidget *widget, const char *action, GVariant *param) {
  LoomExampleGallery *gallery = loom_example_gallery_new(GTK_WINDOW(widget));
  g_signal_connect_object(gallery, "example-chosen", G_CALLBACK(on_example_chosen), widget, G_CONNECT_SWAPPED);
  gtk_window_present(GTK_WINDOW(gallery));
}

static void win_save(GtkWidget *widget, const char *action, GVariant *param) {
  save_in_place(LOOM_WINDOW(widget));
}

static void win_save_as(GtkWidget *widget, const char *action, GVariant *param) {
  run_chooser(LOOM_WINDOW(widget), GTK_FILE_CHOOSER_ACTION_SAVE, FALSE);
}

/* ---- drops ---- */

static gboolean on_file_drop(GtkDropTarget *target, const GValue *value, double x, double y, LoomWindow *self) {
  GFile *file = NULL;
  if (G_VALUE_HOLDS(value, GDK_TYPE_FILE_LIST)) {
    GSList *files = g_value_get_boxed(value);
    file = files ? files->data : NULL;
  } else if (G_VALUE_HOLDS(value, G_TYPE_FILE)) {
    file = g_value_get_object(value);
  }
  if (!file) return FALSE;
  open_file_confirmed(self, file);
  return TRUE;
}

void loom_window_files_init(LoomWindow *self) {
  self->export_width = EXPORT_DEFAULT_WIDTH;
  self->export_height = EXPORT_DEFAULT_HEIGHT;
  g_signal_connect_object(self->settings, "changed::recent-files", G_CALLBACK(rebuild_recent_menus), self,
                          G_CONNECT_SWAPPED);
  rebuild_recent_menus(self);

  GtkDropTarget *drop = gtk_drop_target_new(G_TYPE_INVALID, GDK_ACTION_COPY);
  gtk_drop_target_set_gtypes(drop, (GType[]){GDK_TYPE_FILE_LIST, G_TYPE_FILE}, 2);
  g_signal_connect(drop, "drop", G_CALLBACK(on_file_drop), self);
  gtk_widget_add_controller(GTK_WIDGET(self), GTK_EVENT_CONTROLLER(drop));
}

void loom_window_files_dispose(LoomWindow *self) {
  clear_pending(self);
  if (self->chooser) gtk_native_dialog_destroy(GTK_NATIVE_DIALOG(self->chooser));
  g_clear_object(&self->chooser);
}

void loom_window_files_class_init(GtkWidgetClass *widget_class) {
  gtk_widget_class_install_action(widget_class, "win.new", NULL, win_new);
  gtk_widget_class_install_action(widget_class, "win.open", NULL, win_open);
  gtk_widget_class_install_action(widget_class, "win.open-recent", "s", win_open_recent);
  gtk_widget_class_install_action(widget_class, "win.open-example", "s", win_open_example);
  gtk_widget_class_install_action(widget_class, "win.show-examples", NULL, win_show_examples);
  gtk_widget_class_install_action(widget_class, "win.save", NULL, win_save);
  gtk_widget_class_install_action(widget_class, "win.save-as", NULL, win_save_as);
  gtk_widget_class_install_action(widget_class, "win.export-image", NULL, win_export_image);
}
