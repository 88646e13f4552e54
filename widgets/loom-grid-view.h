/* LoomGridView: the 3D view of a network's grid (a GtkGLArea). */
#pragma once

#include <gtk/gtk.h>
#include <loom/net.h>

G_BEGIN_DECLS

/* Values are stable (settings and the renderer's u_color_mode use them). */
typedef enum {
  LOOM_GRID_VIEW_COLOR_LAYER_TYPE = 0,
  LOOM_GRID_VIEW_COLOR_DTYPE = 1,
  LOOM_GRID_VIEW_COLOR_METRIC = 2, /* by loom_grid_view_set_slot_values() */
} LoomGridViewColorMode;
typedef enum { LOOM_GRID_VIEW_PRESET_ISO, LOOM_GRID_VIEW_PRESET_FRONT, LOOM_GRID_VIEW_PRESET_TOP } LoomGridViewPreset;

#define LOOM_TYPE_GRID_VIEW_COLOR_MODE (loom_grid_view_color_mode_get_type())
GType loom_grid_view_color_mode_get_type(void);

#define LOOM_TYPE_GRID_VIEW (loom_grid_view_get_type())
G_DECLARE_FINAL_TYPE(LoomGridView, loom_grid_view, LOOM, GRID_VIEW, GtkGLArea)

GtkWidget *loom_grid_view_new(void);

guint loom_grid_view_get_depth(LoomGridView *self);
void loom_grid_view_set_depth(LoomGridView *self, guint depth);
guint loom_grid_view_get_rows(LoomGridView *self);
void loom_grid_view_set_rows(LoomGridView *self, guint rows);
guint loom_grid_view_get_cols(LoomGridView *self);
void loom_grid_view_set_cols(LoomGridView *self, guint cols);

/* Puts the camera back where it starts: looking at the whole grid, which it
 * frames to fill the view (every block in sight, whatever the view's aspect).
 * Until the user moves the camera, it frames the grid anew when the view is
 * resized or the grid changes size; loom_grid_view_set_preset() too. */
void loom_grid_view_reset_camera(LoomGridView *self);

/*
 * Renders the current scene into the area's framebuffer and returns its
 * pixels as tightly packed RGBA rows, top row first (*width × *height device
 * pixels). NULL with @error set when the view is not realized or GL failed.
 */
GBytes *loom_grid_view_read_pixels(LoomGridView *self, int *width, int *height, GError **error);

/*
 * The network shown. The view does not own it and never modifies it; call
 * loom_grid_view_net_changed() after every edit (the instance buffers are
 * rebuilt at the next frame). NULL shows the empty floor. Sets depth, rows
 * and cols from the network.
 */
void loom_grid_view_set_net(LoomGridView *self, const loom_net *net);
void loom_grid_view_net_changed(LoomGridView *self);
/* Shape-inference problems, drawn in red at their slots (copied). */
void loom_grid_view_set_diagnostics(LoomGridView *self, const loom_diag *diags, int n);

/* Selection: one slot or none. Property "has-selection"; signal "selection-changed". */
gboolean loom_grid_view_get_selection(LoomGridView *self, loom_coord *out);
void loom_grid_view_set_selection(LoomGridView *self, const loom_coord *c); /* NULL clears */
/* Selected link index (-1 none); property "selected-link"; drawn highlighted. */
void loom_grid_view_set_selected_link(LoomGridView *self, int index);
int loom_grid_view_get_selected_link(LoomGridView *self);

/* Properties "color-mode", "z-slice" (-1 all depths, else only that depth is
 * drawn and picked), "link-tool" (a drag from slot to slot emits
 * "link-drawn" instead of orbiting), "show-legend". */
void loom_grid_view_set_color_mode(LoomGridView *self, LoomGridViewColorMode mode);
LoomGridViewColorMode loom_grid_view_get_color_mode(LoomGridView *self);
void loom_grid_view_set_z_slice(LoomGridView *self, int z);
int loom_grid_view_get_z_slice(LoomGridView *self);
void loom_grid_view_set_link_tool(LoomGridView *self, gboolean enabled);
gboolean loom_grid_view_get_link_tool(LoomGridView *self);
void loom_grid_view_set_show_legend(LoomGridView *self, gboolean show);
gboolean loom_grid_view_get_show_legend(LoomGridView *self);
/*
 * Live metrics (docs/grid-view.md, "Live metrics"). Cheap enough to call
 * on every frame: only per-slot colours and per-link flows are uploaded
 * at the next frame, the scene is not rebuilt.
 *
 * The METRIC colour mode colours each slot by @values, one per FLAT slot
 * index (((z·rows + y)·cols + x)·layers_per_cell + l), copied; slots past
 * @n, NaN values (and non-positive ones on a log scale) are drawn in a
 * neutral grey; ±infinity takes the end colours. @label names the metric
 * in the legend (NULL: none). NULL @values clears them.
 */
void loom_grid_view_set_slot_values(LoomGridView *self, const float *values, gsize n, const char *label);
/* Properties "metric-log" (log10 colour scale) and "metric-auto-range"
 * (TRUE, the default: the range spans the finite values of the latest
 * loom_grid_view_set_slot_values(), the positive ones on a log scale;
 * FALSE: the fixed range below). */
void loom_grid_view_set_metric_log(LoomGridView *self, gboolean log_scale);
gboolean loom_grid_view_get_metric_log(LoomGridView *self);
void loom_grid_view_set_metric_auto_range(LoomGridView *self, gboolean auto_range);
gboolean loom_grid_view_get_metric_auto_range(LoomGridView *self);
/* The fixed range (lo < hi, both finite; default 0..1). On a log scale a
 * fixed range with lo <= 0 cannot be drawn: the values' range is used. */
void loom_grid_view_set_metric_range(LoomGridView *self, double lo, double hi);
/* The range in use now; NaN, NaN when auto-ranging over no value. */
void loom_grid_view_get_metric_range(LoomGridView *self, double *lo, double *hi);
/* The magnitude flowing through each link (index = the net's link index):
 * arcs get wider and brighter with |value| relative to the largest; links
 * past @n and non-finite values count as 0. Copied; NULL clears. */
void loom_grid_view_set_link_values(LoomGridView *self, const float *per_link, gsize n);
/* Slots drawn red with a pulsing outline in every colour mode (training
 * stopped there: NaN, explosion). Copied; NULL or 0 clears. */
void loom_grid_view_set_alert_slots(LoomGridView *self, const loom_coord *slots, gsize n);

/* A DNA logic shift: an arrow (in its own colour, LOOM_GRID_VIEW_SHIFT_*)
 * from the slot where a layer's logic was to the slot where it moved.
 * NULL clears it. */
void loom_grid_view_set_shift_arrow(LoomGridView *self, const loom_coord *from, const loom_coord *to);
#define LOOM_GRID_VIEW_SHIFT_R 1.0f
#define LOOM_GRID_VIEW_SHIFT_G 0.25f
#define LOOM_GRID_VIEW_SHIFT_B 0.78f

/* Jumps the camera to a preset view of the whole grid. */
void loom_grid_view_set_preset(LoomGridView *self, LoomGridViewPreset preset);

/* Picking by ray cast: the occupied slot under widget point (x, y) (the
 * closest hit), else the cell entered first (its lowest empty slot, l = 0
 * when the cell is empty). FALSE if the ray misses the grid. */
gboolean loom_grid_view_pick(LoomGridView *self, double x, double y, loom_coord *out);
/* A slot's centre in widget coordinates. */
gboolean loom_grid_view_project(LoomGridView *self, const loom_coord *c, double *x, double *y);

/* Renders off-screen at width × height pixels and writes a PNG. */
gboolean loom_grid_view_export_png(LoomGridView *self, const char *path, int width, int height, GError **error);

G_END_DECLS
