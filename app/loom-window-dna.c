/*
 * The window's side of the DNA pane: the training timeline feeds it, the
 * document's network is its "current network", files to compare and the
 * matrix's export go through choosers. Its live heatmap and the training
 * pane's share the grid view: turning one on turns the other off.
 */
#include <glib/gi18n.h>

#include "loom-window-private.h"

void loom_window_dna_document_set(LoomWindow *self) {
  loom_dna_pane_clear_timeline(self->dna_pane);
  loom_dna_pane_set_net(self->dna_pane, loom_document_get_net(self->document));
}

void loom_window_dna_document_changed(LoomWindow *self) {
  loom_dna_pane_set_net(self->dna_pane, loom_document_get_net(self->document));
}

void loom_window_dna_training_snapshot(LoomWindow *self, LoomTrainingSnapshot *snap) {
  if (snap->dna) loom_dna_pane_add_snapshot(self->dna_pane, snap->dna);
}

static void on_dna_live(LoomWindow *self) {
  if (loom_dna_pane_get_live_heatmap(self->dna_pane)) loom_training_pane_set_heatmap_metric(self->training_pane, "none");
  else if (g_str_equal(loom_training_pane_get_heatmap_metric(self->training_pane), "none"))
    loom_grid_view_set_color_mode(self->grid_view, LOOM_GRID_VIEW_COLOR_LAYER_TYPE);
}

static void on_training_metric(LoomWindow *self) {
  if (!g_str_equal(loom_training_pane_get_heatmap_metric(self->training_pane), "none"))
    loom_dna_pane_set_live_heatmap(self->dna_pane, FALSE);
}

typedef enum { DNA_CHOOSE_FILE, DNA_CHOOSE_EXPORT } DnaPurpose;

static void chooser_done(GtkNativeDialog *dialog, int response, gpointer data) {
  LoomWindow *self = g_object_get_data(G_OBJECT(dialog), "window");
  DnaPurpose purpose = GPOINTER_TO_INT(data);
  g_autoptr(GFile) file = response == GTK_RESPONSE_ACCEPT ? gtk_file_chooser_get_file(GTK_FILE_CHOOSER(dialog)) : NULL;
  g_autofree char *path = file ? g_file_get_path(file) : NULL;
  g_autoptr(GError) error = NULL;
  if (path && purpose == DNA_CHOOSE_FILE && !loom_dna_pane_add_file(self->dna_pane, path, &error))
    loom_window_show_error(self, _("Cannot Compare the File"), error);
  if (path && purpose == DNA_CHOOSE_EXPORT && !loom_dna_pane_export_matrix(self->dna_pane, path, &error))
    loom_window_show_error(self, _("Cannot Export the Matrix"), error);
  gtk_native_dialog_destroy(dialog);
  g_object_unref(dialog);
}

static void choose(LoomWindow *self, DnaPurpose purpose) {
  gboolean open = purpose == DNA_CHOOSE_FILE;
  GtkFileChooserNative *chooser = gtk_file_chooser_native_new(
      open ? _("Compare a Model File") : _("Export the DNA Matrix"), GTK_WINDOW(self),
      open ? GTK_FILE_CHOOSER_ACTION_OPEN : GTK_FILE_CHOOSER_ACTION_SAVE, open ? _("_Compare") : _("_Export"),
      _("_Cancel"));
  gtk_native_dialog_set_modal(GTK_NATIVE_DIALOG(chooser), TRUE);
  if (!open) gtk_file_chooser_set_current_name(GTK_FILE_CHOOSER(chooser), _("dna-matrix.png"));
  g_object_set_data(G_OBJECT(chooser), "window", self);
  g_signal_connect(chooser, "response", G_CALLBACK(chooser_done), GINT_TO_POINTER(purpose));
  gtk_native_dialog_show(GTK_NATIVE_DIALOG(chooser));
}

static void win_dna_open_file(GtkWidget *widget, const char *action, GVariant *param) {
  choose(LOOM_WINDOW(widget), DNA_CHOOSE_FILE);
}

static void win_dna_export(GtkWidget *widget, const char *action, GVariant *param) {
  choose(LOOM_WINDOW(widget), DNA_CHOOSE_EXPORT);
}

/* Shows the DNA pane (and the bottom area, if hidden). */
static void win_show_dna(GtkWidget *widget, const char *action, GVariant *param) {
  LoomWindow *self = LOOM_WINDOW(widget);
  g_action_group_change_action_state(G_ACTION_GROUP(self), "show-training", g_variant_new_boolean(TRUE));
  gtk_stack_set_visible_child_name(self->bottom_stack, "dna");
}

void loom_window_dna_class_init(GtkWidgetClass *widget_class) {
  gtk_widget_class_install_action(widget_class, "win.dna-open-file", NULL, win_dna_open_file);
  gtk_widget_class_install_action(widget_class, "win.dna-export", NULL, win_dna_export);
  gtk_widget_class_install_action(widget_class, "win.show-dna", NULL, win_show_dna);
}

void loom_window_dna_init(LoomWindow *self) {
  loom_dna_pane_set_grid_view(self->dna_pane, self->grid_view);
  g_signal_connect_swapped(self->dna_pane, "notify::live-heatmap", G_CALLBACK(on_dna_live), self);
  g_signal_connect_swapped(self->training_pane, "notify::heatmap-metric", G_CALLBACK(on_training_metric), self);
}
