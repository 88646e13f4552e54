/*
 * What the grid view draws, as flat arrays built from a loom_net: one
 * instance per occupied slot (a block), per empty cell (an outline), per
 * remote link (an arc), and the spine's polyline. Plain C, no GL: the
 * renderer uploads these arrays as they are; the view picks against them.
 * Built only when the network changes, never per frame.
 */
#pragma once

#include <glib.h>
#include <loom/dtype.h>
#include <loom/layer.h>
#include <loom/net.h>

/*
 * A slot's block: three RGBA32F texels of the renderer's box texture, which
 * grid-box.vert and grid-box.frag read with texelFetch. Colours are 0xRRGGBB
 * stored as floats (exact < 2^24).
 *
 * Consecutive occupied slots of one cell form a run, drawn as one box (the
 * fragment shader draws the divisions between its slots and shades each
 * slot from its own third texel). The run's first block holds its length
 * and the top of its last block; the others hold 0.
 */
typedef struct {
  float min[3], run;     /* run: slots in the run starting here, or 0 */
  float size[3], run_top; /* run_top: y of the top of the run's last block */
  float type_rgb, dtype_rgb;
  float band;  /* bit-depth gauge, fraction of the block's width lit */
  float flags; /* LOOM_GRID_BOX_* bits */
} LoomGridBox;

/* Blocks per row of the box texture; the boxes array always holds whole
 * rows and one spare block after the last (the renderer's marker). */
#define LOOM_GRID_BOXES_PER_ROW 512

#define LOOM_GRID_BOX_DISABLED 1
#define LOOM_GRID_BOX_PROBLEM 2

typedef struct {
  float src[3], dst[3];
  guint8 rgba[4];
  float src_z, dst_z; /* depth levels of the ends, for the Z-slice */
  float feedback;     /* 1: a feedback link of a systolic network (drawn dashed), else 0 */
} LoomGridArc;

typedef struct {
  int depth, rows, cols, layers_per_cell;

  LoomGridBox *boxes; /* occupied slots in flat order (padded, see above) */
  loom_coord *box_coords;
  int n_boxes;
  int *box_first; /* depth + 1 entries: boxes of level z are [box_first[z], box_first[z+1]) */
  int *slot_box;  /* flat slot index → box index or -1 */

  float *cells; /* GL_LINES: 24 xyz vertices outlining each empty cell, z-major */
  int n_cells;
  int *cell_first;

  float *spine; /* xyz of each occupied enabled slot's centre, flat order */
  int n_spine;
  int *spine_first;
  int *spine_box; /* the block of each spine point */

  /* Per cell (z-major): whether a block within LOOM_GRID_SHELL cells
   * (Chebyshev distance) leaves room to look in: an empty slot, a
   * partly filled cell. See loom_grid_scene_visible(). */
  guint8 *near_open;

  LoomGridArc *arcs; /* one per link, same order as loom_net_link() */
  int n_arcs;

  /* For the legend: which groups (by loom_grid_group_index) and dtypes occur. */
  guint64 groups_present, dtypes_present, merges_present;
  gboolean any_problem, any_disabled, any_feedback;

  /* Capacities (elements) of the arrays above, reused by the next build. */
  gsize cap_slots, cap_cells, cap_arcs, cap_levels, cap_grid;
} LoomGridScene;

/*
 * Blocks can only be seen through the gaps between them from a few cells
 * deep: a ray that runs further inside a full region without hitting a block
 * meets the deeper faces edge-on, where they are a pixel of dark edge at
 * most. So the view draws a shell: blocks within LOOM_GRID_SHELL cells of a
 * side of the grid that faces the eye or of a cell with room to look in.
 * tests/gui/test-grid-view.c compares it with drawing every block.
 */
#define LOOM_GRID_SHELL 2

/* Where the eye is against the grid's box, per world axis (x, y, z):
 * 0 below, 1 within, 2 above; region = ix + 3 iy + 9 iz (27 regions). */
int loom_grid_scene_region(const LoomGridScene *scene, const float eye[3]);

/* The blocks worth drawing for an eye in @region, nearest sides first (so
 * the depth test rejects what lies behind before it is shaded), into
 * @boxes (n_boxes entries); and the spine segments (segment i joins spine
 * points i and i + 1) between two of them into @segments (n_spine
 * entries). @z_slice >= 0: every block of that level, nothing else.
 * @shell: FALSE draws every block. Returns the number of blocks. */
int loom_grid_scene_visible(const LoomGridScene *scene, int region, int z_slice, gboolean shell, int *boxes,
                            int *segments, int *n_segments);

/* Rebuilds every array from @net (NULL empties the scene). Arrays are reused
 * when large enough. Slots named by @diags are marked as problems; links
 * touching a diagnostic's two ends, or failing the link rules, turn red. */
void loom_grid_scene_build(LoomGridScene *scene, const loom_net *net, const loom_diag *diags, int n_diags);
void loom_grid_scene_clear(LoomGridScene *scene);

/* Box of slot @c inside its cell, world space (see loom-grid-camera.h). */
void loom_grid_slot_box(int layers_per_cell, loom_coord c, float mn[3], float mx[3]);
void loom_grid_slot_centre(int layers_per_cell, loom_coord c, float p[3]);
/* Point at parameter t ∈ [0, 1] of the arc drawn from @a to @b (the same
 * quadratic Bézier as shaders/grid-link.vert). */
void loom_grid_arc_point(const float a[3], const float b[3], float t, float p[3]);

/* Colours, linear 0..1 RGB. Layer types take the colour of their group (in
 * registry order, so it never depends on the network), shaded per type. */
int loom_grid_group_count(void);
const char *loom_grid_group_name(int index); /* translated, as loom_layer_type_group() */
int loom_grid_group_index(const loom_layer_type *t);
void loom_grid_group_color(int index, float rgb[3]);
void loom_grid_type_color(const loom_layer_type *t, float rgb[3]);
void loom_grid_dtype_color(loom_dtype d, float rgb[3]);
float loom_grid_dtype_band(loom_dtype d);
void loom_grid_merge_color(loom_merge m, float rgb[3]);
/* The colour map of the METRIC mode (viridis), t ∈ [0, 1] (clamped; NaN
 * gives t = 0). The one table behind both the blocks' colours and the
 * legend's colour bar (docs/grid-view.md, "Live metrics"). */
void loom_grid_colormap(float t, float rgb[3]);
