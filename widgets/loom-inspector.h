/*
 * LoomInspector: everything about one layer — its hyperparameters (one
 * LoomParamRow per entry of its type's loom_param_spec table), its dtype
 * (a drop-down over the dtype traits table showing each dtype's bits and the
 * layer's size at it), parameter count, input and output shape, and the
 * shape-inference problems reported at its slot.
 *
 *   GtkWidget *insp = loom_inspector_new();
 *   g_signal_connect(insp, "param-changed", G_CALLBACK(on_param), win);
 *   //   void on_param(LoomInspector *i, guint index, const loom_param_value *v, gpointer data)
 *   g_signal_connect(insp, "floats-changed", G_CALLBACK(on_floats), win);
 *   //   void on_floats(LoomInspector *i, guint index, GBytes *float32_values, gpointer data)
 *   g_signal_connect(insp, "dtype-changed", G_CALLBACK(on_dtype), win);
 *   //   void on_dtype(LoomInspector *i, int dtype, gpointer data)
 *   // after every change of the net (e.g. LoomCommandStack::changed):
 *   loom_inspector_set_layer(LOOM_INSPECTOR(insp), loom_net_layer_at(net, at), at);
 *   loom_inspector_set_diagnostics(LOOM_INSPECTOR(insp), diags, n_diags);
 *
 * Under the title the application can show one widget of its own under
 * "Live Statistics" (loom_inspector_set_live_widget: the
 * workbench's slot monitor while training has data); the section shows
 * while that widget is visible.
 *
 * The inspector never modifies the layer: each edit is a signal, so the
 * application can turn it into an undoable command. The layer is borrowed;
 * set it again (or NULL) whenever the net changes.
 */
#pragma once

#include <gtk/gtk.h>
#include <loom/net.h>

G_BEGIN_DECLS

#define LOOM_TYPE_INSPECTOR (loom_inspector_get_type())
G_DECLARE_FINAL_TYPE(LoomInspector, loom_inspector, LOOM, INSPECTOR, GtkWidget)

GtkWidget *loom_inspector_new(void);

/* Shows @layer (borrowed; NULL shows "no layer selected") found at @at.
 * Controls are rebuilt only when the layer type changes, so keyboard focus
 * survives an edit of the same layer. */
void loom_inspector_set_layer(LoomInspector *self, const loom_layer *layer, loom_coord at);
/* The "layer" property. */
const loom_layer *loom_inspector_get_layer(LoomInspector *self);

/* The problems of the last loom_net_infer_shapes (copied); those at the
 * shown slot (or naming it as a link's other end) are listed. */
void loom_inspector_set_diagnostics(LoomInspector *self, const loom_diag *diags, int n_diags);
/* @widget (NULL: none) goes under the layer's title; the inspector holds it
 * while set. */
void loom_inspector_set_live_widget(LoomInspector *self, GtkWidget *widget);

G_END_DECLS
