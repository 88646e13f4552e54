/*
 * LoomGridView's instance struct and the functions its two source files
 * share (loom-grid-view.c: state, drawing, API; loom-grid-view-input.c:
 * gestures, drops, tooltips). Not for other widgets or tests.
 */
#pragma once

#include "loom-grid-camera.h"
#include "loom-grid-renderer.h"
#include "loom-grid-scene.h"
#include "loom-grid-view.h"

typedef enum { DRAG_NONE, DRAG_ORBIT, DRAG_PAN, DRAG_LINK } LoomGridDrag;

struct _LoomGridView {
  GtkGLArea parent_instance;

  guint depth, rows, cols;
  LoomGridCamera cam;
  /* Reset or preset since the user last moved the camera: the grid is framed
   * anew for every viewport size (loom_grid_view_sync_camera). */
  gboolean auto_frame;

  const loom_net *net; /* not owned */
  loom_diag *diags;
  int n_diags;
  LoomGridScene scene;
  gboolean scene_dirty;  /* the network changed since the scene was built */
  gboolean upload_dirty; /* the scene changed since the GL buffers were filled */
  guint scene_tick;      /* pending rebuild before the next layout */
  LoomGridRenderer *renderer;

  gboolean has_selection, has_hover;
  loom_coord selection, hover;
  int selected_link;
  LoomGridViewColorMode color_mode;
  int z_slice;
  gboolean link_tool;
  gboolean all_blocks; /* test hook: draw every block, not only the shell */

  /* The drag in progress. */
  LoomGridDrag drag;
  float drag_yaw, drag_pitch, zoom_start;
  double drag_x, drag_y, drag_last_dx, drag_last_dy;
  loom_coord link_src;
  gboolean rubber;
  LoomGridArc rubber_arc;
  gboolean shift;
  LoomGridArc shift_arc;

  GtkWidget *legend;
  gboolean show_legend;
  guint64 legend_key[5]; /* what the legend shows now, to skip needless rebuilds */

  /* Live training metrics (loom-grid-view-metric.c). Setting them touches
   * only the per-slot colour texture and the links' flow buffer at the next
   * frame, never the scene. */
  float *slot_values; /* one per flat slot index, copied */
  gsize n_slot_values;
  char *metric_label;
  gboolean metric_log, metric_auto;
  double fixed_lo, fixed_hi; /* loom_grid_view_set_metric_range() */
  double range_lo, range_hi; /* the range in use; NaN when nothing has a value */
  float *link_values;        /* per link index, or NULL */
  gsize n_link_values;
  loom_coord *alerts;
  gsize n_alerts;
  gboolean slot_colors_dirty, link_flow_dirty; /* upload before the next frame */
  guint8 *slot_rgba; /* scratch: the colour texture's texels */
  gsize slot_rgba_cap;
  float *link_flow; /* scratch: flow per arc, 0..1 */
  gsize link_flow_cap;
  guint pulse_tick; /* redraws every frame while alerts pulse */
  double pulse_time; /* test hook: >= 0 pins the pulse's phase */
};

/* loom-grid-view.c */
/* Makes the scene match the network (cheap when nothing changed). */
void loom_grid_view_ensure_scene(LoomGridView *self);
/* Brings the camera up to date with the grid's size and, while it frames
 * the grid automatically, with the widget's size. */
void loom_grid_view_sync_camera(LoomGridView *self);
/* The user moves the camera: it keeps its framing from now on, whatever the
 * widget's size, until the next reset or preset. */
void loom_grid_view_camera_moved(LoomGridView *self);
int loom_grid_view_layers_per_cell(LoomGridView *self);
void loom_grid_view_fill_frame(LoomGridView *self, LoomGridFrame *f, int width, int height, float scale);
/* Uploads what changed since the last frame: the scene, the live data. */
void loom_grid_view_upload(LoomGridView *self);
/* The legend again, after what it lists changed (alerts, link flows). */
void loom_grid_view_legend_changed(LoomGridView *self);
/* Uploads what changed and draws a frame into the bound framebuffer. */
void loom_grid_view_draw(LoomGridView *self, int width, int height);
void loom_grid_view_set_hover(LoomGridView *self, const loom_coord *c);
/* Pick that also says whether the slot holds a layer. */
gboolean loom_grid_view_pick_full(LoomGridView *self, double x, double y, loom_coord *out, gboolean *occupied);
/* loom-grid-view-metric.c */
/* Recomputes the range in use from the values and the scale, and shows it
 * in the legend's colour bar. */
void loom_grid_view_metric_changed(LoomGridView *self);
/* Uploads the slot colours and link flows that changed (GL current). */
void loom_grid_view_upload_live(LoomGridView *self);
/* 0..1: the alert outline's pulse at this frame. */
float loom_grid_view_pulse(LoomGridView *self);
void loom_grid_view_metric_free(LoomGridView *self);
/* loom-grid-view-input.c */
void loom_grid_view_install_input(LoomGridView *self);
gboolean loom_grid_view_query_tooltip(GtkWidget *widget, int x, int y, gboolean keyboard, GtkTooltip *tooltip);

/* loom-grid-view-gl.c: GtkGLArea and GtkWidget vfuncs */
GdkGLContext *loom_grid_view_create_context(GtkGLArea *area);
void loom_grid_view_realize(GtkWidget *widget);
void loom_grid_view_unrealize(GtkWidget *widget);
gboolean loom_grid_view_render(GtkGLArea *area, GdkGLContext *context);

enum { SIGNAL_SELECTION_CHANGED, SIGNAL_SLOT_ACTIVATED, SIGNAL_LAYER_DROPPED, SIGNAL_LINK_DRAWN, N_SIGNALS };
extern guint loom_grid_view_signals[N_SIGNALS];
