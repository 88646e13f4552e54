/*
 * The grid view's palette and test hooks, shared with the GUI tests so they
 * can tell things apart in pixels read back from GL. Colours are linear 0..1.
 */
#pragma once

#include <glib.h>
#include <loom/net.h>

/* Background (glClearColor). */
#define LOOM_GRID_VIEW_CLEAR_R 0.110f
#define LOOM_GRID_VIEW_CLEAR_G 0.114f
#define LOOM_GRID_VIEW_CLEAR_B 0.133f

/* Outer border lines of the floor, the most saturated colour of the floor. */
#define LOOM_GRID_VIEW_BORDER_R 0.384f
#define LOOM_GRID_VIEW_BORDER_G 0.627f
#define LOOM_GRID_VIEW_BORDER_B 0.918f

/* The selected slot (drawn flat, unlit, in this colour) and selected link. */
#define LOOM_GRID_VIEW_HIGHLIGHT_R 1.000f
#define LOOM_GRID_VIEW_HIGHLIGHT_G 0.800f
#define LOOM_GRID_VIEW_HIGHLIGHT_B 0.000f

/* Slots with diagnostics and invalid links. */
#define LOOM_GRID_VIEW_PROBLEM_R 0.930f
#define LOOM_GRID_VIEW_PROBLEM_G 0.180f
#define LOOM_GRID_VIEW_PROBLEM_B 0.180f

/* METRIC colour mode: a slot without a value (NaN, not positive on a log
 * scale, or no value given). A grey that no point of the colour map is
 * near (loom_grid_colormap: viridis is saturated everywhere). */
#define LOOM_GRID_VIEW_NEUTRAL_R 0.520f
#define LOOM_GRID_VIEW_NEUTRAL_G 0.520f
#define LOOM_GRID_VIEW_NEUTRAL_B 0.540f

/* Alert slots (training stopped there: NaN, explosion), in every colour
 * mode; their outline pulses between dark red and white. */
#define LOOM_GRID_VIEW_ALERT_R 1.000f
#define LOOM_GRID_VIEW_ALERT_G 0.060f
#define LOOM_GRID_VIEW_ALERT_B 0.060f

/* Link arcs by merge mode. */
#define LOOM_GRID_VIEW_REPLACE_R 0.300f
#define LOOM_GRID_VIEW_REPLACE_G 0.820f
#define LOOM_GRID_VIEW_REPLACE_B 0.960f
#define LOOM_GRID_VIEW_ADD_R 0.600f
#define LOOM_GRID_VIEW_ADD_G 0.950f
#define LOOM_GRID_VIEW_ADD_B 0.300f
#define LOOM_GRID_VIEW_CONCAT_R 0.960f
#define LOOM_GRID_VIEW_CONCAT_G 0.520f
#define LOOM_GRID_VIEW_CONCAT_B 0.960f

typedef struct _LoomGridView LoomGridView;

/* World position of the point at parameter t of link @index's arc (0 at the
 * source, 1 at the destination); FALSE if there is no such link. */
gboolean loom_grid_view_link_point(LoomGridView *self, int index, double t, float p[3]);
/* World point → widget coordinates. */
gboolean loom_grid_view_project_point(LoomGridView *self, const float p[3], double *x, double *y);
/* Sets the orbit angles directly (benchmarks, tests). */
void loom_grid_view_set_orbit(LoomGridView *self, double yaw, double pitch);
/* Looks at the grid's centre from @zoom times the distance that fits its
 * bounding sphere, whatever the view's size (benchmarks, tests). */
void loom_grid_view_set_zoom(LoomGridView *self, double zoom);
/* Draws every block instead of the shell that can be seen (tests compare
 * the two; see LOOM_GRID_SHELL in loom-grid-scene.h). */
void loom_grid_view_set_draw_all_blocks(LoomGridView *self, gboolean all);
/* Pins the alert outline's pulse at @seconds of its cycle (tests compare
 * two phases); a negative value lets it follow the frame clock again. */
void loom_grid_view_set_pulse_time(LoomGridView *self, double seconds);
/* The tooltip text for slot @c (NULL outside the grid); g_free() it. */
char *loom_grid_view_describe_slot(LoomGridView *self, const loom_coord *c);
