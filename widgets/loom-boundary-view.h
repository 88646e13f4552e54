/*
 * LoomBoundaryView: what a model of two input features predicts over the
 * plane — class probabilities or a regression value sampled on a grid —
 * with the data points on top (training points filled, test points hollow).
 *
 * Classes use a fixed palette of ten colours (class c: colour c mod 10;
 * see docs/widgets-charts.md); regression uses a blue–white–red diverging
 * map over the field's own range.
 */
#pragma once

#include <gtk/gtk.h>

G_BEGIN_DECLS

typedef enum {
  LOOM_BOUNDARY_MODE_CLASSES,
  LOOM_BOUNDARY_MODE_REGRESSION,
} LoomBoundaryMode;

#define LOOM_TYPE_BOUNDARY_MODE (loom_boundary_mode_get_type())
GType loom_boundary_mode_get_type(void);

#define LOOM_TYPE_BOUNDARY_VIEW (loom_boundary_view_get_type())
G_DECLARE_FINAL_TYPE(LoomBoundaryView, loom_boundary_view, LOOM, BOUNDARY_VIEW, GtkWidget)

/* A certain prediction shows its class colour at this strength over white;
 * uncertain ones fade towards white (down to 0.25 at a uniform guess). */
#define LOOM_BOUNDARY_CERTAIN_STRENGTH 0.8
#define LOOM_BOUNDARY_MAX_RES 4096
#define LOOM_BOUNDARY_MAX_CHANNELS 256

GtkWidget *loom_boundary_view_new(void);
/* @values: res_y rows × res_x columns × @channels, row 0 at y_min, column 0
 * at x_min; copied. Classes mode: channels >= 2 are class probabilities,
 * channels == 1 a binary probability (of class 1). Regression mode: channel
 * 0. Refuses (with a warning, keeping the old field) sizes beyond
 * LOOM_BOUNDARY_MAX_RES / _MAX_CHANNELS or an empty range. */
void loom_boundary_view_set_field(LoomBoundaryView *self, int res_x, int res_y, const float *values, int channels,
                                  double x_min, double x_max, double y_min, double y_max);
/* Replaces the training (@test FALSE) or the test points: @xy holds n
 * (x1, x2) pairs, @value the class index (as float) or regression target. */
void loom_boundary_view_set_points(LoomBoundaryView *self, const float *xy, const float *value, gsize n,
                                   gboolean test);
void loom_boundary_view_set_mode(LoomBoundaryView *self, LoomBoundaryMode mode);
LoomBoundaryMode loom_boundary_view_get_mode(LoomBoundaryView *self);
/* The view drawn at w × h, as on screen (the field bilinearly scaled). */
GdkTexture *loom_boundary_view_render_texture(LoomBoundaryView *self, int w, int h);

G_END_DECLS
