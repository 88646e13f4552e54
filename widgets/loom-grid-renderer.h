/*
 * The grid view's GL side: shader programs, instance buffers and the draw
 * calls of one frame (docs/grid-view.md). Every call
 * needs the view's GL context current. GL 3.3 core or GLES 3.0.
 */
#pragma once

#include <glib.h>

#include "loom-grid-camera.h"
#include "loom-grid-scene.h"

typedef struct LoomGridRenderer LoomGridRenderer;

/* What one frame shows beyond the scene's buffers. */
typedef struct {
  LoomMat4 mvp;
  float eye[3]; /* world space: blocks draw only the faces turned to it */
  int width, height; /* framebuffer pixels */
  float scale;       /* device pixels per widget pixel: line widths */
  int depth, rows, cols;
  int z_slice;    /* -1: every level */
  int color_mode; /* LoomGridViewColorMode */
  int selected_box, hover_box, selected_link; /* indices into the scene's arrays, or -1 */
  gboolean marker;   /* the selected slot is empty: outline its box */
  LoomGridBox marker_box;
  gboolean all_blocks; /* draw every block, not only the shell (tests) */
  gboolean rubber; /* the link tool's arc while dragging */
  LoomGridArc rubber_arc;
  gboolean shift; /* a DNA logic shift shown as an arrow */
  LoomGridArc shift_arc;
  float pulse; /* 0..1: the alert slots' outline, dark red to white */
  gboolean live; /* the slot colour texture matters: METRIC mode or alerts */
} LoomGridFrame;

LoomGridRenderer *loom_grid_renderer_new(gboolean es, GError **error);
void loom_grid_renderer_free(LoomGridRenderer *r);

/* Draws a tiny network once off-screen, so that the driver compiles every
 * program for every state a frame uses before the first visible frame.
 * Leaves that network uploaded: upload the real scene afterwards. */
void loom_grid_renderer_warm_up(LoomGridRenderer *r);

/* Copies the scene's arrays into the instance buffers (after every rebuild). */
void loom_grid_renderer_upload(LoomGridRenderer *r, const LoomGridScene *scene);

/* The per-block live data (after each upload, as often as it changes):
 * @texels RGBA8 texels, one per block in the boxes' order and padded like
 * them (whole rows of LOOM_GRID_BOXES_PER_ROW, one spare block): the METRIC
 * mode's colour, alpha 255 on alert slots, else 0. */
void loom_grid_renderer_upload_slot_colors(LoomGridRenderer *r, const guint8 *rgba, gsize texels);
/* The flow through each link, 0..1 (@n per arc); NULL: arcs drawn plain. */
void loom_grid_renderer_upload_link_flow(LoomGridRenderer *r, const float *flow, int n);

/* Draws into the bound framebuffer. */
void loom_grid_renderer_draw(LoomGridRenderer *r, const LoomGridScene *scene, const LoomGridFrame *frame);

/* Draws into a framebuffer of its own of frame->width × frame->height and
 * reads it back into @rgba (tightly packed, top row first). The previously
 * bound framebuffer is bound again afterwards. */
gboolean loom_grid_renderer_draw_offscreen(LoomGridRenderer *r, const LoomGridScene *scene, const LoomGridFrame *frame,
                                           guint8 *rgba, GError **error);

/* The largest framebuffer side the context supports. */
int loom_grid_renderer_max_size(LoomGridRenderer *r);
