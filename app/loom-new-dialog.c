/* LoomNewDialog: the size of a new network, validated as typed. */
#include "loom-new-dialog.h"

#include <glib/gi18n.h>
#include <stdlib.h>

struct _LoomNewDialog {
  AdwMessageDialog parent_instance;
  GtkSpinButton *depth, *rows, *cols, *per_cell;
  GtkEntry *input;
  GtkLabel *input_error;
};

G_DEFINE_FINAL_TYPE(LoomNewDialog, loom_new_dialog, ADW_TYPE_MESSAGE_DIALOG)

gboolean loom_parse_shape(const char *text, loom_shape *out) {
  g_autofree char *copy = g_strdup(text ? text : "");
  /* Accept ×, x, X, * and commas between sizes. */
  g_autofree char *plain = NULL;
  {
    GString *s = g_string_new(NULL);
    for (const char *p = copy; *p; p = g_utf8_next_char(p)) {
      gunichar c = g_utf8_get_char(p);
      g_string_append_c(s, (c == 0x00D7 || c == 'x' || c == 'X' || c == '*' || c == ',') ? ' ' : (char)(c < 128 ? c : '?'));
    }
    plain = g_string_free(s, FALSE);
  }
  g_auto(GStrv) parts = g_strsplit_set(plain, " \t", -1);
  int64_t dims[LOOM_MAX_DIMS];
  int rank = 0;
  for (int i = 0; parts[i]; i++) {
    if (!*parts[i]) continue;
    if (rank == LOOM_MAX_DIMS) return FALSE;
    guint64 v;
    if (!g_ascii_string_to_unsigned(parts[i], 10, 1, G_MAXINT32, &v, NULL)) return FALSE;
    dims[rank++] = (int64_t)v;
  }
  if (rank == 0) return FALSE;
  if (out) *out = loom_shape_make(rank, dims);
  return TRUE;
}

static void on_input_changed(LoomNewDialog *self) {
  gboolean ok = loom_parse_shape(gtk_editable_get_text(GTK_EDITABLE(self->input)), NULL);
  adw_message_dialog_set_response_enabled(ADW_MESSAGE_DIALOG(self), "create", ok);
  if (ok)
    gtk_widget_remove_css_class(GTK_WIDGET(self->input), "error");
  else
    gtk_widget_add_css_class(GTK_WIDGET(self->input), "error");
  gtk_label_set_text(self->input_error,
                     ok ? "" : _("Enter one to four positive sizes separated by ×, for example 16 or 3×32×32"));
  gtk_widget_set_visible(GTK_WIDGET(self->input_error), !ok);
  gtk_accessible_update_state(GTK_ACCESSIBLE(self->input), GTK_ACCESSIBLE_STATE_INVALID,
                              ok ? GTK_ACCESSIBLE_INVALID_FALSE : GTK_ACCESSIBLE_INVALID_TRUE, -1);
}

void loom_new_dialog_get_size(LoomNewDialog *self, int dims[4]) {
  g_return_if_fail(LOOM_IS_NEW_DIALOG(self));
  dims[0] = gtk_spin_button_get_value_as_int(self->depth);
  dims[1] = gtk_spin_button_get_value_as_int(self->rows);
  dims[2] = gtk_spin_button_get_value_as_int(self->cols);
  dims[3] = gtk_spin_button_get_value_as_int(self->per_cell);
}

void loom_new_dialog_set_size(LoomNewDialog *self, const int dims[4]) {
  g_return_if_fail(LOOM_IS_NEW_DIALOG(self));
  gtk_spin_button_set_value(self->depth, dims[0]);
  gtk_spin_button_set_value(self->rows, dims[1]);
  gtk_spin_button_set_value(self->cols, dims[2]);
  gtk_spin_button_set_value(self->per_cell, dims[3]);
}

void loom_new_dialog_set_input_text(LoomNewDialog *self, const char *text) {
  g_return_if_fail(LOOM_IS_NEW_DIALOG(self));
  gtk_editable_set_text(GTK_EDITABLE(self->input), text);
}

gboolean loom_new_dialog_get_input_shape(LoomNewDialog *self, loom_shape *out) {
  g_return_val_if_fail(LOOM_IS_NEW_DIALOG(self), FALSE);
  return loom_parse_shape(gtk_editable_get_text(GTK_EDITABLE(self->input)), out);
}

static void loom_new_dialog_class_init(LoomNewDialogClass *klass) {
  GtkWidgetClass *widget_class = GTK_WIDGET_CLASS(klass);
  gtk_widget_class_set_template_from_resource(widget_class, "/org/loomworkbench/Workbench/loom-new-dialog.ui");
  gtk_widget_class_bind_template_child(widget_class, LoomNewDialog, depth);
  gtk_widget_class_bind_template_child(widget_class, LoomNewDialog, rows);
  gtk_widget_class_bind_template_child(widget_class, LoomNewDialog, cols);
  gtk_widget_class_bind_template_child(widget_class, LoomNewDialog, per_cell);
  gtk_widget_class_bind_template_child(widget_class, LoomNewDialog, input);
  gtk_widget_class_bind_template_child(widget_class, LoomNewDialog, input_error);
}

static void loom_new_dialog_init(LoomNewDialog *self) {
  gtk_widget_init_template(GTK_WIDGET(self));
  g_signal_connect_swapped(self->input, "changed", G_CALLBACK(on_input_changed), self);
}

LoomNewDialog *loom_new_dialog_new(GtkWindow *parent) {
  return g_object_new(LOOM_TYPE_NEW_DIALOG, "transient-for", parent, "modal", TRUE, NULL);
}
