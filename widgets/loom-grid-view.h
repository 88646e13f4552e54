/* LoomGridView: the 3D view of a network's grid (a GtkGLArea). */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

#define LOOM_TYPE_GRID_VIEW (loom_grid_view_get_type())
G_DECLARE_FINAL_TYPE(LoomGridView, loom_grid_view, LOOM, GRID_VIEW, GtkGLArea)

GtkWidget *loom_grid_view_new(void);

guint loom_grid_view_get_depth(LoomGridView *self);
void loom_grid_view_set_depth(LoomGridView *self, guint depth);
guint loom_grid_view_get_rows(LoomGridView *self);
void loom_grid_view_set_rows(LoomGridView *self, guint rows);
guint loom_grid_view_get_cols(LoomGridView *self);
void loom_grid_view_set_cols(LoomGridView *self, guint cols);

/* Puts the camera back where it starts: looking at the whole grid. */
void loom_grid_view_reset_camera(LoomGridView *self);

/*
 * Renders the current scene into the area's framebuffer and returns its
 * pixels as tightly packed RGBA rows, top row first (*width × *height device
 * pixels). NULL with @error set when the view is not realized or GL failed.
 */
GBytes *loom_grid_view_read_pixels(LoomGridView *self, int *width, int *height, GError **error);

G_END_DECLS
