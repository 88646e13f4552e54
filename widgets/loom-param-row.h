/*
 * LoomParamRow: an editor for one hyperparameter, built from its
 * loom_param_spec (INT → spin button, INTS → a row of spin buttons, FLOAT →
 * entry, FLOATS → comma-separated entry, BOOL → switch, ENUM → drop-down).
 * Text is validated as it is typed against the spec's bounds; invalid text
 * is marked, explained under the control and never emitted. LoomInspector
 * holds one per parameter; it can be used alone:
 *
 *   GtkWidget *row = loom_param_row_new(spec);
 *   loom_param_row_set_value(LOOM_PARAM_ROW(row), &value, NULL, 0);
 *   g_signal_connect(row, "value-changed", G_CALLBACK(on_value), data);
 *   // void on_value(LoomParamRow *row, const loom_param_value *v, gpointer data)
 *   // "floats-changed" (GBytes *floats) for LOOM_PARAM_FLOATS
 *
 * The row never changes a layer; it only reports what the user committed
 * (Enter, focus leaving, a spin click, a switch or drop-down change).
 */
#pragma once

#include <gtk/gtk.h>
#include <loom/layer.h>

G_BEGIN_DECLS

#define LOOM_TYPE_PARAM_ROW (loom_param_row_get_type())
G_DECLARE_FINAL_TYPE(LoomParamRow, loom_param_row, LOOM, PARAM_ROW, GtkWidget)

/* @spec must outlive the row (specs live in the engine's static tables). */
GtkWidget *loom_param_row_new(const loom_param_spec *spec);
const loom_param_spec *loom_param_row_get_spec(LoomParamRow *self);

/* Shows a value without emitting anything; clears any error. @floats/@n are
 * used for LOOM_PARAM_FLOATS only. */
void loom_param_row_set_value(LoomParamRow *self, const loom_param_value *value, const float *floats, int64_t n);

/* The "error" property: why the text typed now is refused, or NULL. */
const char *loom_param_row_get_error(LoomParamRow *self);

/* The label, so a container can put labels in one GtkSizeGroup. */
GtkWidget *loom_param_row_get_label(LoomParamRow *self);
/* The editing widget @i (spin button, entry, switch or drop-down); NULL past the end. */
GtkWidget *loom_param_row_get_editor(LoomParamRow *self, int i);

G_END_DECLS
