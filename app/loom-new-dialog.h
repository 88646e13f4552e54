/*
 * LoomNewDialog: asks for the size of a new network — depth, rows, columns,
 * layers per cell and the per-sample input shape ("16", "3×32×32"). The
 * "create" response is enabled only while the shape parses.
 */
#pragma once

#include <adwaita.h>
#include <loom/shape.h>

G_BEGIN_DECLS

#define LOOM_TYPE_NEW_DIALOG (loom_new_dialog_get_type())
G_DECLARE_FINAL_TYPE(LoomNewDialog, loom_new_dialog, LOOM, NEW_DIALOG, AdwMessageDialog)

LoomNewDialog *loom_new_dialog_new(GtkWindow *parent);

/* depth, rows, cols, layers per cell */
void loom_new_dialog_get_size(LoomNewDialog *self, int dims[4]);
void loom_new_dialog_set_size(LoomNewDialog *self, const int dims[4]);
/* The "input-shape" text and its parse; FALSE when it does not parse. */
void loom_new_dialog_set_input_text(LoomNewDialog *self, const char *text);
gboolean loom_new_dialog_get_input_shape(LoomNewDialog *self, loom_shape *out);

/* Parses "16", "3x32x32" or "3×32×32" (1–4 positive sizes). */
gboolean loom_parse_shape(const char *text, loom_shape *out);

G_END_DECLS
