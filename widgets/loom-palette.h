/*
 * LoomPalette: every layer type of the engine's registry, grouped by group,
 * with a search entry that filters by label, name, group and description.
 *
 *   GtkWidget *palette = loom_palette_new();
 *   g_signal_connect(palette, "layer-activated", G_CALLBACK(on_layer_activated), win);
 *   // void on_layer_activated(LoomPalette *p, const char *type_name, gpointer data)
 *
 * Rows are drag sources: a drag carries the type name (G_TYPE_STRING, e.g.
 * "conv2d"); a drop target accepts G_TYPE_STRING and checks the name with
 * loom_layer_type_find(). Enter or a double click on a row emits
 * "layer-activated" with the type name.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LOOM_TYPE_PALETTE (loom_palette_get_type())
G_DECLARE_FINAL_TYPE(LoomPalette, loom_palette, LOOM, PALETTE, GtkWidget)

GtkWidget *loom_palette_new(void);

/* The "search-text" property: what the search entry filters by. */
const char *loom_palette_get_search_text(LoomPalette *self);
void loom_palette_set_search_text(LoomPalette *self, const char *text);

/* The type names of the rows the filter shows, in display order (g_strfreev). */
char **loom_palette_dup_visible_types(LoomPalette *self);

/* The symbolic icon name of a layer group (as returned by loom_layer_type_group). */
const char *loom_palette_group_icon_name(const char *group);

G_END_DECLS
