/*
 * LoomExportDialog: asks how to export the document's network — the format
 * (the model file as JSON, safetensors, or an ONNX graph) and one dtype for
 * every layer (or each layer's own) — showing what the weights will weigh
 * against float32 before anything is written. "export" hands the choice to
 * the window, which asks for the file.
 */
#pragma once

#include <adwaita.h>
#include <loom/loom.h>

G_BEGIN_DECLS

typedef enum {
  LOOM_EXPORT_JSON,
  LOOM_EXPORT_SAFETENSORS,
  LOOM_EXPORT_ONNX,
} LoomExportFormat;

#define LOOM_TYPE_EXPORT_DIALOG (loom_export_dialog_get_type())
G_DECLARE_FINAL_TYPE(LoomExportDialog, loom_export_dialog, LOOM, EXPORT_DIALOG, AdwMessageDialog)

/* @net is borrowed for the dialog's life (the window keeps its document). */
LoomExportDialog *loom_export_dialog_new(GtkWindow *parent, const loom_net *net);
LoomExportFormat loom_export_dialog_get_format(LoomExportDialog *self);
void loom_export_dialog_set_format(LoomExportDialog *self, LoomExportFormat format);
/* FALSE: each layer keeps its dtype. */
gboolean loom_export_dialog_get_dtype(LoomExportDialog *self, loom_dtype *out);
void loom_export_dialog_set_dtype(LoomExportDialog *self, gboolean all, loom_dtype d);
/* "Weights: 7.7 kB at int4, 60 kB at float32 (0.13×)" as shown. */
const char *loom_export_dialog_get_size_text(LoomExportDialog *self);
/* The file name extension of the format: ".loom.json", ".safetensors", ".onnx". */
const char *loom_export_format_extension(LoomExportFormat format);
/* Writes @net (copied; moved to @dtype when @all) in @format to @path, atomically. */
gboolean loom_export_write(const loom_net *net, LoomExportFormat format, gboolean all, loom_dtype dtype,
                           const char *path, GError **error);

G_END_DECLS
