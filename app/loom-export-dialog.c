/*
 * LoomExportDialog: two drop-downs and the size of the weights, in an
 * AdwMessageDialog (responses "cancel" and "export").
 */
#include "loom-export-dialog.h"

#include <glib/gi18n.h>

#include "loom-format-private.h"

struct _LoomExportDialog {
  AdwMessageDialog parent_instance;
  const loom_net *net;
  GtkDropDown *format_drop, *dtype_drop;
  GtkLabel *size_label;
  char *size_text;
};

G_DEFINE_FINAL_TYPE(LoomExportDialog, loom_export_dialog, ADW_TYPE_MESSAGE_DIALOG)

const char *loom_export_format_extension(LoomExportFormat format) {
  switch (format) {
  case LOOM_EXPORT_SAFETENSORS: return ".safetensors";
  case LOOM_EXPORT_ONNX: return ".onnx";
  case LOOM_EXPORT_JSON: break;
  }
  return ".loom.json";
}

/* The dtype drop-down: index 0 keeps each layer's, then the traits table's order. */
static gboolean chosen_dtype(LoomExportDialog *self, loom_dtype *out) {
  guint k = gtk_drop_down_get_selected(self->dtype_drop);
  if (k == 0 || k == GTK_INVALID_LIST_POSITION) return FALSE;
  *out = (loom_dtype)(k - 1);
  return TRUE;
}

static void update_size(LoomExportDialog *self) {
  loom_dtype d = LOOM_DTYPE_FLOAT32;
  gboolean all = chosen_dtype(self, &d);
  guint64 bytes = 0, f32 = loom_net_bytes_float32(self->net);
  if (all) {
    for (int64_t i = 0; i < loom_net_n_layers(self->net); i++)
      bytes += loom_layer_bytes_at(loom_net_layer_at(self->net, loom_net_layer_coord(self->net, i)), d);
  } else {
    bytes = loom_net_bytes(self->net);
  }
  g_autofree char *size = loom_format_memory(bytes, f32);
  g_free(self->size_text);
  /* Translators: the export dialog: the weights' size (with its ratio to float32). */
  self->size_text = g_strdup_printf(_("Weights: %s"), size);
  if (gtk_drop_down_get_selected(self->format_drop) == LOOM_EXPORT_ONNX && all && d != LOOM_DTYPE_FLOAT32) {
    g_autofree char *more = g_strconcat(self->size_text, "\n",
                                        _("ONNX holds the weights as float32, dequantized from this dtype."), NULL);
    g_free(self->size_text);
    self->size_text = g_steal_pointer(&more);
  }
  gtk_label_set_text(self->size_label, self->size_text);
}

LoomExportDialog *loom_export_dialog_new(GtkWindow *parent, const loom_net *net) {
  LoomExportDialog *self = g_object_new(LOOM_TYPE_EXPORT_DIALOG, "transient-for", parent, "modal", TRUE, "heading",
                                        _("Export the Network"), NULL);
  self->net = net;
  update_size(self);
  return self;
}

LoomExportFormat loom_export_dialog_get_format(LoomExportDialog *self) {
  return (LoomExportFormat)gtk_drop_down_get_selected(self->format_drop);
}

void loom_export_dialog_set_format(LoomExportDialog *self, LoomExportFormat format) {
  gtk_drop_down_set_selected(self->format_drop, format);
}

gboolean loom_export_dialog_get_dtype(LoomExportDialog *self, loom_dtype *out) { return chosen_dtype(self, out); }

void loom_export_dialog_set_dtype(LoomExportDialog *self, gboolean all, loom_dtype d) {
  gtk_drop_down_set_selected(self->dtype_drop, all ? (guint)d + 1 : 0);
}

const char *loom_export_dialog_get_size_text(LoomExportDialog *self) { return self->size_text; }

gboolean loom_export_write(const loom_net *net, LoomExportFormat format, gboolean all, loom_dtype dtype,
                           const char *path, GError **error) {
  loom_error err = {0};
  loom_net *copy = loom_net_clone(net, &err);
  int rc = copy ? LOOM_OK : err.code ? err.code : LOOM_ERR_NOMEM;
  if (!rc) {
    loom_diag *diags = NULL;
    loom_net_infer_shapes(copy, loom_net_seed(copy), &diags);
    free(diags);
  }
  if (!rc && all) rc = loom_net_set_dtype_all(copy, dtype, &err);
  /* safetensors follows the file's name (docs/safetensors.md). */
  if (!rc) rc = format == LOOM_EXPORT_ONNX ? loom_onnx_export(copy, path, &err) : loom_model_save(copy, path, &err);
  if (copy) loom_net_free(copy);
  if (!rc) return TRUE;
  g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, _("Cannot export to %s: %s"), path, err.message);
  return FALSE;
}

static void loom_export_dialog_finalize(GObject *object) {
  g_free(LOOM_EXPORT_DIALOG(object)->size_text);
  G_OBJECT_CLASS(loom_export_dialog_parent_class)->finalize(object);
}

static void loom_export_dialog_class_init(LoomExportDialogClass *klass) {
  G_OBJECT_CLASS(klass)->finalize = loom_export_dialog_finalize;
}

static GtkWidget *row(const char *label, GtkWidget *editor) {
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 12);
  GtkWidget *l = gtk_label_new_with_mnemonic(label);
  gtk_label_set_xalign(GTK_LABEL(l), 0);
  gtk_widget_set_hexpand(l, TRUE);
  gtk_label_set_mnemonic_widget(GTK_LABEL(l), editor);
  gtk_box_append(GTK_BOX(box), l);
  gtk_box_append(GTK_BOX(box), editor);
  gtk_accessible_update_relation(GTK_ACCESSIBLE(editor), GTK_ACCESSIBLE_RELATION_LABELLED_BY, l, NULL, -1);
  return box;
}

static void loom_export_dialog_init(LoomExportDialog *self) {
  const char *formats[] = {_("Model file (JSON)"), _("safetensors"), _("ONNX graph"), NULL};
  self->format_drop = GTK_DROP_DOWN(gtk_drop_down_new_from_strings(formats));
  g_autoptr(GtkStringList) dtypes = gtk_string_list_new(NULL);
  gtk_string_list_append(dtypes, _("Each layer's own"));
  for (int d = 0; loom_dtype_name((loom_dtype)d); d++) gtk_string_list_append(dtypes, loom_dtype_name((loom_dtype)d));
  self->dtype_drop = GTK_DROP_DOWN(gtk_drop_down_new(G_LIST_MODEL(g_object_ref(dtypes)), NULL));
  self->size_label = GTK_LABEL(gtk_label_new(NULL));
  gtk_label_set_xalign(self->size_label, 0);
  gtk_label_set_wrap(self->size_label, TRUE);
  GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12);
  gtk_box_append(GTK_BOX(box), row(_("_Format"), GTK_WIDGET(self->format_drop)));
  gtk_box_append(GTK_BOX(box), row(_("_Data type"), GTK_WIDGET(self->dtype_drop)));
  gtk_box_append(GTK_BOX(box), GTK_WIDGET(self->size_label));
  adw_message_dialog_set_extra_child(ADW_MESSAGE_DIALOG(self), box);
  adw_message_dialog_set_body(ADW_MESSAGE_DIALOG(self),
                              _("The model file and safetensors reopen in the workbench; ONNX runs in other runtimes."));
  adw_message_dialog_add_response(ADW_MESSAGE_DIALOG(self), "cancel", _("_Cancel"));
  adw_message_dialog_add_response(ADW_MESSAGE_DIALOG(self), "export", _("_Export…"));
  adw_message_dialog_set_response_appearance(ADW_MESSAGE_DIALOG(self), "export", ADW_RESPONSE_SUGGESTED);
  adw_message_dialog_set_default_response(ADW_MESSAGE_DIALOG(self), "export");
  adw_message_dialog_set_close_response(ADW_MESSAGE_DIALOG(self), "cancel");
  g_signal_connect_swapped(self->format_drop, "notify::selected", G_CALLBACK(update_size), self);
  g_signal_connect_swapped(self->dtype_drop, "notify::selected", G_CALLBACK(update_size), self);
}
