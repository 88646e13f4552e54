/*
 * LoomWindow shows one LoomDocument. Every command is a `win.` action with
 * an accelerator (set by LoomApplication), so the menu, the shortcuts window
 * and the tests all go through the same code.
 */
#include "loom-window.h"

#include <glib/gi18n.h>

#include "loom-grid-view.h"

/* The suffix the MIME type application/x-loom-model is registered for. */
#define MODEL_SUFFIX ".loom.json"

struct _LoomWindow {
  AdwApplicationWindow parent_instance;

  LoomDocument *document;
  GSignalGroup *document_signals;
  GSettings *settings;
  /* Cancelled when the window closes, so no file operation outlives it. */
  GCancellable *cancellable;
  GtkFileChooserNative *chooser;

  /* Template children */
  AdwWindowTitle *window_title;
  AdwToastOverlay *toast_overlay;
  LoomGridView *grid_view;
  GtkLabel *grid_label;
};

G_DEFINE_FINAL_TYPE(LoomWindow, loom_window, ADW_TYPE_APPLICATION_WINDOW)

enum { PROP_0, PROP_DOCUMENT, N_PROPS };
static GParamSpec *properties[N_PROPS];

static void show_error(LoomWindow *self, const char *heading, const GError *error) {
  AdwMessageDialog *dialog = ADW_MESSAGE_DIALOG(adw_message_dialog_new(GTK_WINDOW(self), heading, error->message));
  adw_message_dialog_add_response(dialog, "close", _("_Close"));
  gtk_window_present(GTK_WINDOW(dialog));
}

static void update_title(LoomWindow *self) {
  const char *title = loom_document_get_title(self->document);
  gboolean dirty = loom_document_get_dirty(self->document);
  /* The bullet marks unsaved changes, as in GNOME's editors. */
  g_autofree char *subtitle = dirty ? g_strdup_printf("• %s", title) : g_strdup(title);
  adw_window_title_set_subtitle(self->window_title, subtitle);
  /* Translators: the window title: a file name, then the application's name. */
  g_autofree char *window_title = g_strdup_printf(_("%s — Loom Workbench"), title);
  gtk_window_set_title(GTK_WINDOW(self), window_title);
}

static void update_grid(LoomWindow *self) {
  const loom_net *net = loom_document_get_net(self->document);
  int depth = loom_net_depth(net), rows = loom_net_rows(net), cols = loom_net_cols(net);
  int per_cell = loom_net_layers_per_cell(net);
  loom_grid_view_set_depth(self->grid_view, depth);
  loom_grid_view_set_rows(self->grid_view, rows);
  loom_grid_view_set_cols(self->grid_view, cols);
  /* Translators: the size of the network's grid: depth × rows × columns,
   * then the number of layer slots in each cell. */
  g_autofree char *text = g_strdup_printf(ngettext("%d × %d × %d cells, %d layer per cell",
                                                   "%d × %d × %d cells, %d layers per cell", per_cell),
                                          depth, rows, cols, per_cell);
  gtk_label_set_text(self->grid_label, text);
}

LoomDocument *loom_window_get_document(LoomWindow *self) {
  g_return_val_if_fail(LOOM_IS_WINDOW(self), NULL);
  return self->document;
}

void loom_window_set_document(LoomWindow *self, LoomDocument *document) {
  g_return_if_fail(LOOM_IS_WINDOW(self));
  g_return_if_fail(LOOM_IS_DOCUMENT(document));
  if (!g_set_object(&self->document, document)) return;
  g_signal_group_set_target(self->document_signals, document);
  update_title(self);
  update_grid(self);
  loom_grid_view_reset_camera(self->grid_view);
  g_object_notify_by_pspec(G_OBJECT(self), properties[PROP_DOCUMENT]);
}

static void remember_recent(LoomWindow *self, GFile *file) {
  GtkApplication *app = gtk_window_get_application(GTK_WINDOW(self));
  if (!LOOM_IS_APPLICATION(app)) return;
  g_autofree char *uri = g_file_get_uri(file);
  loom_application_add_recent(LOOM_APPLICATION(app), uri);
}

/* ---- open ---- */

static void open_done(GObject *source, GAsyncResult *result, gpointer user_data) {
  g_autoptr(LoomWindow) self = user_data;
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) document = loom_document_load_finish(result, &error);
  if (!document) {
    if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
      show_error(self, _("Cannot Open the Network"), error);
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

/* ---- save ---- */

static void save_done(GObject *source, GAsyncResult *result, gpointer user_data) {
  g_autoptr(LoomWindow) self = user_data;
  LoomDocument *document = LOOM_DOCUMENT(source);
  g_autoptr(GError) error = NULL;
  if (!loom_document_save_finish(document, result, &error)) {
    if (!g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED))
      show_error(self, _("Cannot Save the Network"), error);
    return;
  }
  remember_recent(self, loom_document_get_file(document));
  g_autofree char *message = g_strdup_printf(_("Saved “%s”"), loom_document_get_title(document));
  adw_toast_overlay_add_toast(self->toast_overlay, adw_toast_new(message));
}

void loom_window_save_to_file(LoomWindow *self, GFile *file) {
  g_return_if_fail(LOOM_IS_WINDOW(self));
  g_return_if_fail(G_IS_FILE(file));
  loom_document_save_async(self->document, file, self->cancellable, save_done, g_object_ref(self));
}

/* ---- file choosers ---- */

static GtkFileFilter *model_filter(void) {
  GtkFileFilter *filter = gtk_file_filter_new();
  gtk_file_filter_set_name(filter, _("Loom networks"));
  gtk_file_filter_add_mime_type(filter, "application/x-loom-model");
  gtk_file_filter_add_suffix(filter, "loom.json");
  return filter;
}

static void chooser_response(GtkNativeDialog *dialog, int response, LoomWindow *self) {
  g_autoptr(GFile) file = NULL;
  if (response == GTK_RESPONSE_ACCEPT) file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog));
  gboolean saving = gtk_file_chooser_get_action(GTK_FILE_CHOOSER(dialog)) == GTK_FILE_CHOOSER_ACTION_SAVE;
  g_clear_object(&self->chooser);
  if (!file) return;
  if (saving)
    loom_window_save_to_file(self, file);
  else
    loom_window_open_file(self, file);
}

static void run_chooser(LoomWindow *self, GtkFileChooserAction action) {
  if (self->chooser) {
    gtk_native_dialog_show(GTK_NATIVE_DIALOG(self->chooser));
    return;
  }
  gboolean saving = action == GTK_FILE_CHOOSER_ACTION_SAVE;
  self->chooser = gtk_file_chooser_native_new(saving ? _("Save Network") : _("Open Network"), GTK_WINDOW(self),
                                              action, saving ? _("_Save") : _("_Open"), _("_Cancel"));
  gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(self->chooser), TRUE);
  g_autoptr(GtkFileFilter) filter = model_filter();
  gtk_file_chooser_add_filter(GTK_FILE_CHOOSER(self->chooser), filter);
  if (saving) {
    GFile *current = loom_document_get_file(self->document);
    if (current) {
      gtk_file_chooser_set_file(GTK_FILE_CHOOSER(self->chooser), current, NULL);
    } else {
      /* Translators: the file name offered for a network never saved; keep the .loom.json suffix. */
      gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(self->chooser), _("Untitled network.loom.json"));
    }
  }
  g_signal_connect(self->chooser, "response", G_CALLBACK(chooser_response), self);
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(self->chooser));
}

/* ---- actions ---- */

static void win_new(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  g_autoptr(GError) error = NULL;
  g_autoptr(LoomDocument) document = loom_document_new(&error);
  if (!document) {
    show_error(self, _("Cannot Create a Network"), error);
    return;
  }
  loom_window_set_document(self, document);
}

static void win_open(GtkWidget *widget, const char *action, GVariant *param) {
  run_chooser(LOOM_WINDOW(widget), GTK_FILE_CHOOSER_ACTION_OPEN);
}

static void win_save(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  GFile *file = loom_document_get_file(self->document);
  if (file)
    loom_window_save_to_file(self, file);
  else
    run_chooser(self, GTK_FILE_CHOOSER_ACTION_SAVE);
}

static void win_save_as(GtkWidget *widget, const char *action, GVariant *param) {
  run_chooser(LOOM_WINDOW(widget), GTK_FILE_CHOOSER_ACTION_SAVE);
}

static void win_reset_camera(GtkWidget *widget, const char *action, GVariant *param) {
  loom_grid_view_reset_camera(LOOM_WINDOW(widget)->grid_view);
}

/* ---- window state ---- */

static gboolean loom_window_close_request(GtkWindow *window) {
  LoomWindow *self = LOOM_WINDOW(window);
  g_cancellable_cancel(self->cancellable);

  /* Saved on close rather than on every resize (as gnome-text-editor does):
   * the default size is the unmaximized size even while maximized. */
  int width, height;
  gtk_window_get_default_size(window, &width, &height);
  g_settings_set_int(self->settings, "window-width", width);
  g_settings_set_int(self->settings, "window-height", height);
  g_settings_set_boolean(self->settings, "window-maximized", gtk_window_is_maximized(window));
  return GTK_WINDOW_CLASS(loom_window_parent_class)->close_request(window);
}

static void restore_window_state(LoomWindow *self) {
  int width = g_settings_get_int(self->settings, "window-width");
  int height = g_settings_get_int(self->settings, "window-height");
  if (width > 0 && height > 0) gtk_window_set_default_size(GTK_WINDOW(self), width, height);
  if (g_settings_get_boolean(self->settings, "window-maximized")) gtk_window_maximize(GTK_WINDOW(self));
}

static void loom_window_constructed(GObject *object) {
  LoomWindow *self = LOOM_WINDOW(object);
  G_OBJECT_CLASS(loom_window_parent_class)->constructed(object);
  /* After the template, whose default size this overrides. */
  restore_window_state(self);
  if (!self->document) {
    g_autoptr(GError) error = NULL;
    g_autoptr(LoomDocument) document = loom_document_new(&error);
    if (document)
      loom_window_set_document(self, document);
    else
      g_critical("Cannot create an empty network: %s", error->message);
  }
}

static void loom_window_dispose(GObject *object) {
  LoomWindow *self = LOOM_WINDOW(object);
  g_cancellable_cancel(self->cancellable);
  if (self->chooser) gtk_native_dialog_destroy(GTK_NATIVE_DIALOG(self->chooser));
  g_clear_object(&self->chooser);
  gtk_widget_dispose_template(GTK_WIDGET(self), LOOM_TYPE_WINDOW);
  G_OBJECT_CLASS(loom_window_parent_class)->dispose(object);
}

static void loom_window_finalize(GObject *object) {
  LoomWindow *self = LOOM_WINDOW(object);
  g_clear_object(&self->document_signals);
  g_clear_object(&self->settings);
  g_clear_object(&self->document);
  g_clear_object(&self->cancellable);
  G_OBJECT_CLASS(loom_window_parent_class)->finalize(object);
}

static void loom_window_get_property(GObject *object, guint prop_id, GValue *value, GParamSpec *pspec) {
  LoomWindow *self = LOOM_WINDOW(object);
  switch (prop_id) {
  case PROP_DOCUMENT: g_value_set_object(value, self->document); break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_window_set_property(GObject *object, guint prop_id, const GValue *value, GParamSpec *pspec) {
  LoomWindow *self = LOOM_WINDOW(object);
  switch (prop_id) {
  case PROP_DOCUMENT:
    if (g_value_get_object(value)) loom_window_set_document(self, g_value_get_object(value));
    break;
  default: G_OBJECT_WARN_INVALID_PROPERTY_ID(object, prop_id, pspec);
  }
}

static void loom_window_class_init(LoomWindowClass *klass) {
  GObjectClass *object_class = G_OBJECT_CLASS(klass);
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  GtkWindowClass *window_class = GTK_WINDOW_CLASS(klass);

  object_class->constructed = loom_window_constructed;
  object_class->dispose = loom_window_dispose;
  object_class->finalize = loom_window_finalize;
  object_class->get_property = loom_window_get_property;
  object_class->set_property = loom_window_set_property;
  window_class->close_request = loom_window_close_request;

  properties[PROP_DOCUMENT] = g_param_spec_object("document", NULL, NULL, LOOM_TYPE_DOCUMENT,
                                                  G_PARAM_READWRITE | G_PARAM_EXPLICIT_NOTIFY |
                                                    G_PARAM_STATIC_STRINGS);
  g_object_class_install_properties(object_class, N_PROPS, properties);

  g_type_ensure(LOOM_TYPE_GRID_VIEW);
  gtk_widget_class_set_template_from_resource(widget_class, "/org/loomworkbench/Workbench/loom-window.ui");
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, window_title);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, toast_overlay);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, grid_view);
  gtk_widget_class_bind_template_child(widget_class, LoomWindow, grid_label);

  gtk_widget_class_install_action(widget_class, "win.new", NULL, win_new);
  gtk_widget_class_install_action(widget_class, "win.open", NULL, win_open);
  gtk_widget_class_install_action(widget_class, "win.save", NULL, win_save);
  gtk_widget_class_install_action(widget_class, "win.save-as", NULL, win_save_as);
  gtk_widget_class_install_action(widget_class, "win.reset-camera", NULL, win_reset_camera);
}

static void loom_window_init(LoomWindow *self) {
  gtk_widget_init_template(GTK_WIDGET(self));
  self->cancellable = g_cancellable_new();
  self->settings = g_settings_new(APPLICATION_ID);
  self->document_signals = g_signal_group_new(LOOM_TYPE_DOCUMENT);
  g_signal_group_connect_swapped(self->document_signals, "notify::title", G_CALLBACK(update_title), self);
  g_signal_group_connect_swapped(self->document_signals, "notify::dirty", G_CALLBACK(update_title), self);
}

LoomWindow *loom_window_new(LoomApplication *application) {
  return g_object_new(LOOM_TYPE_WINDOW, "application", application, NULL);
}
