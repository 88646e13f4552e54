/*
 * Instance arrays of the grid view, built from the network on every edit
 * (never per frame), and the colour tables the view and its legend share.
 */
#include "loom-grid-scene.h"

#include <math.h>
#include <string.h>

#include "loom-grid-view-private.h"

/* Inside its cell, a slot's block keeps this margin on every side. */
#define CELL_MARGIN 0.14f
#define STACK_MARGIN 0.08f

void loom_grid_slot_box(int layers_per_cell, loom_coord c, float mn[3], float mx[3]) {
  int lpc = MAX(layers_per_cell, 1);
  float h = (1.f - 2.f * STACK_MARGIN) / (float)lpc;
  float gap = MIN(0.05f, h * 0.25f);
  mn[0] = (float)c.x + CELL_MARGIN;
  mx[0] = (float)c.x + 1.f - CELL_MARGIN;
  mn[2] = (float)c.y + CELL_MARGIN;
  mx[2] = (float)c.y + 1.f - CELL_MARGIN;
  mn[1] = (float)c.z + STACK_MARGIN + (float)c.l * h;
  mx[1] = mn[1] + h - gap;
}

void loom_grid_slot_centre(int layers_per_cell, loom_coord c, float p[3]) {
  float mn[3], mx[3];
  loom_grid_slot_box(layers_per_cell, c, mn, mx);
  for (int i = 0; i < 3; i++) p[i] = 0.5f * (mn[i] + mx[i]);
}

/* Keep in step with arc_point() in shaders/grid-link.vert. */
void loom_grid_arc_point(const float a[3], const float b[3], float t, float p[3]) {
  float d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  float len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  float c[3] = {0.5f * (a[0] + b[0]), 0.5f * (a[1] + b[1]) + 0.3f * len + 0.6f, 0.5f * (a[2] + b[2])};
  /* Ends stacked in one column would make a straight line up and down. */
  if (sqrtf(d[0] * d[0] + d[2] * d[2]) < 0.5f) c[0] += 0.8f;
  float u = 1.f - t;
  for (int i = 0; i < 3; i++) p[i] = u * u * a[i] + 2.f * u * t * c[i] + t * t * b[i];
}

/* ---- colours ---- */

/* Distinct hues, none close to the highlight amber or the problem red. */
static const float group_palette[][3] = {
  {0.30f, 0.56f, 0.92f}, /* blue */
  {0.36f, 0.74f, 0.40f}, /* green */
  {0.64f, 0.46f, 0.88f}, /* purple */
  {0.96f, 0.55f, 0.22f}, /* orange */
  {0.22f, 0.74f, 0.74f}, /* teal */
  {0.86f, 0.46f, 0.68f}, /* pink */
  {0.78f, 0.70f, 0.50f}, /* sand */
  {0.58f, 0.44f, 0.34f}, /* brown */
  {0.56f, 0.64f, 0.74f}, /* slate */
  {0.62f, 0.68f, 0.28f}, /* olive */
};
#define N_PALETTE ((int)G_N_ELEMENTS(group_palette))
#define MAX_GROUPS 64

typedef struct {
  int n;
  const char *names[MAX_GROUPS]; /* as the registry spells them (translated) */
} group_table;

/* Groups in the order the registry first mentions them. Translations are
 * fixed once the program runs, so the table is built once. */
static const group_table *groups(void) {
  static group_table table;
  static gsize done = 0;
  if (g_once_init_enter(&done)) {
    for (int i = 0; i < loom_layer_type_count() && table.n < MAX_GROUPS; i++) {
      const char *g = loom_layer_type_group(loom_layer_type_at(i));
      gboolean seen = FALSE;
      for (int k = 0; k < table.n && !seen; k++) seen = g_strcmp0(table.names[k], g) == 0;
      if (!seen) table.names[table.n++] = g;
    }
    g_once_init_leave(&done, 1);
  }
  return &table;
}

int loom_grid_group_count(void) { return groups()->n; }

const char *loom_grid_group_name(int index) {
  const group_table *t = groups();
  return index >= 0 && index < t->n ? t->names[index] : NULL;
}

int loom_grid_group_index(const loom_layer_type *type) {
  const group_table *t = groups();
  const char *g = loom_layer_type_group(type);
  for (int k = 0; k < t->n; k++)
    if (g_strcmp0(t->names[k], g) == 0) return k;
  return -1;
}

void loom_grid_group_color(int index, float rgb[3]) {
  if (index < 0) {
    rgb[0] = rgb[1] = rgb[2] = 0.6f;
    return;
  }
  /* Past the palette, hues repeat a little darker. */
  float dim = index >= N_PALETTE ? 0.7f : 1.f;
  for (int i = 0; i < 3; i++) rgb[i] = group_palette[index % N_PALETTE][i] * dim;
}

void loom_grid_type_color(const loom_layer_type *t, float rgb[3]) {
  int group = loom_grid_group_index(t);
  loom_grid_group_color(group, rgb);
  /* The k-th type of a group (registry order): alternately lighter and
   * darker, so neighbours in a group stay apart but keep their family hue. */
  int k = 0;
  for (int i = 0; i < loom_layer_type_count(); i++) {
    const loom_layer_type *o = loom_layer_type_at(i);
    if (o == t) break;
    if (loom_grid_group_index(o) == group) k++;
  }
  float step = 0.12f * (float)((k + 1) / 2 % 4);
  float shade = k % 2 ? 1.f - step : 1.f + step;
  for (int i = 0; i < 3; i++) rgb[i] = CLAMP(rgb[i] * shade, 0.f, 1.f);
}

void loom_grid_dtype_color(loom_dtype d, float rgb[3]) {
  const loom_dtype_traits *tr = loom_dtype_traits_get(d);
  if (!tr) {
    rgb[0] = rgb[1] = rgb[2] = 0.5f;
    return;
  }
  static const float kind_rgb[][3] = {
    [LOOM_DTYPE_KIND_FLOAT] = {0.32f, 0.58f, 1.00f},    [LOOM_DTYPE_KIND_SIGNED] = {1.00f, 0.60f, 0.22f},
    [LOOM_DTYPE_KIND_UNSIGNED] = {0.40f, 0.86f, 0.42f}, [LOOM_DTYPE_KIND_TERNARY] = {0.74f, 0.52f, 1.00f},
    [LOOM_DTYPE_KIND_BINARY] = {0.86f, 0.86f, 0.86f},
  };
  const float *base = kind_rgb[tr->kind];
  /* Fewer bits, darker; among floats of one width, more exponent bits turn
   * the blue towards cyan (float16 vs bfloat16, e4m3 vs e5m2). */
  float t = log2f((float)MAX(tr->bits, 1)) / 6.f;
  float v = 0.5f + 0.5f * t;
  float cyan = tr->kind == LOOM_DTYPE_KIND_FLOAT ? (float)tr->exp_bits / 11.f : 0.f;
  float shifted[3] = {base[0], base[1] + 0.3f * cyan * (1.f - base[1]), base[2] - 0.3f * cyan * 0.5f};
  for (int i = 0; i < 3; i++) rgb[i] = CLAMP(shifted[i] * v, 0.f, 1.f);
}

float loom_grid_dtype_band(loom_dtype d) {
  const loom_dtype_traits *tr = loom_dtype_traits_get(d);
  return tr ? (log2f((float)MAX(tr->bits, 1)) + 1.f) / 7.f : 0.f;
}

void loom_grid_merge_color(loom_merge m, float rgb[3]) {
  static const float merge_rgb[][3] = {
    {LOOM_GRID_VIEW_REPLACE_R, LOOM_GRID_VIEW_REPLACE_G, LOOM_GRID_VIEW_REPLACE_B},
    {LOOM_GRID_VIEW_ADD_R, LOOM_GRID_VIEW_ADD_G, LOOM_GRID_VIEW_ADD_B},
    {LOOM_GRID_VIEW_CONCAT_R, LOOM_GRID_VIEW_CONCAT_G, LOOM_GRID_VIEW_CONCAT_B},
  };
  int i = (int)m >= 0 && (int)m < 3 ? (int)m : 0;
  memcpy(rgb, merge_rgb[i], sizeof merge_rgb[i]);
}

/*
 * Viridis (van der Walt and Smith, matplotlib 1.5/2.0), perceptually
 * uniform, readable in grey and by the colour blind, and with no grey in
 * it, so the neutral "no value" grey stands apart. The published map is a
 * 256-entry table; these are 33 points sampled from it at t = k/32, and
 * linear interpolation between them stays within 1.7/255 of every entry.
 */
static const float viridis[33][3] = {
  {0.2670f, 0.0049f, 0.3294f}, {0.2770f, 0.0502f, 0.3755f}, {0.2823f, 0.0946f, 0.4170f},
  {0.2829f, 0.1354f, 0.4530f}, {0.2789f, 0.1749f, 0.4830f}, {0.2708f, 0.2133f, 0.5066f},
  {0.2593f, 0.2507f, 0.5244f}, {0.2454f, 0.2867f, 0.5370f}, {0.2302f, 0.3213f, 0.5455f},
  {0.2148f, 0.3545f, 0.5510f}, {0.2000f, 0.3864f, 0.5545f}, {0.1861f, 0.4173f, 0.5567f},
  {0.1733f, 0.4474f, 0.5579f}, {0.1613f, 0.4770f, 0.5581f}, {0.1497f, 0.5064f, 0.5573f},
  {0.1384f, 0.5358f, 0.5551f}, {0.1281f, 0.5651f, 0.5509f}, {0.1209f, 0.5945f, 0.5442f},
  {0.1203f, 0.6238f, 0.5343f}, {0.1310f, 0.6529f, 0.5208f}, {0.1554f, 0.6815f, 0.5032f},
  {0.1930f, 0.7096f, 0.4812f}, {0.2415f, 0.7366f, 0.4545f}, {0.2986f, 0.7624f, 0.4230f},
  {0.3629f, 0.7867f, 0.3866f}, {0.4330f, 0.8091f, 0.3453f}, {0.5081f, 0.8292f, 0.2992f},
  {0.5873f, 0.8470f, 0.2489f}, {0.6694f, 0.8622f, 0.1954f}, {0.7529f, 0.8751f, 0.1427f},
  {0.8359f, 0.8861f, 0.1025f}, {0.9166f, 0.8961f, 0.1008f}, {0.9932f, 0.9062f, 0.1439f},
};

void loom_grid_colormap(float t, float rgb[3]) {
  const int last = (int)G_N_ELEMENTS(viridis) - 1;
  float x = (t > 0.f ? MIN(t, 1.f) : 0.f) * (float)last; /* NaN fails t > 0 */
  int i = MIN((int)x, last - 1);
  float f = x - (float)i;
  for (int c = 0; c < 3; c++) rgb[c] = viridis[i][c] + f * (viridis[i + 1][c] - viridis[i][c]);
}

static float pack_rgb(const float rgb[3]) {
  guint32 v = 0;
  for (int i = 0; i < 3; i++) v = v << 8 | (guint32)lrintf(CLAMP(rgb[i], 0.f, 1.f) * 255.f);
  return (float)v;
}

static void to_rgba8(const float rgb[3], guint8 out[4]) {
  for (int i = 0; i < 3; i++) out[i] = (guint8)lrintf(CLAMP(rgb[i], 0.f, 1.f) * 255.f);
  out[3] = 255;
}

/* The 12 edges of a cell's outline (slightly inset), as GL_LINES. */
static void cell_outline(float *v, int x, int y, int z) {
  static const int edges[24] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 2, 1, 3, 4, 6, 5, 7, 0, 4, 1, 5, 2, 6, 3, 7};
  const float lo = 0.1f, hi = 0.9f;
  for (int i = 0; i < 24; i++) {
    int c = edges[i];
    v[3 * i + 0] = (float)x + (c & 1 ? hi : lo);
    v[3 * i + 1] = (float)z + (c & 2 ? hi : lo);
    v[3 * i + 2] = (float)y + (c & 4 ? hi : lo);
  }
}

/* ---- building ---- */

/* The engine's own rules (loom_net_check_link judges a link of the network
 * against the others): a backward link is valid only in a systolic network. */
static gboolean link_valid(const loom_net *net, int index) {
  return loom_net_check_link(net, loom_net_link(net, index), NULL) == LOOM_OK;
}

/* A valid link pointing backwards (or to itself) feeds the previous tick's
 * output back: only systolic networks have them. */
static gboolean link_feedback(const loom_net *net, const loom_link *k) {
  return loom_net_flat_index(net, k->src) >= loom_net_flat_index(net, k->dst);
}

/* Arrays grow to the largest network seen and are reused after that, so
 * rebuilding on every edit allocates nothing once the size is stable. */
static void reserve(LoomGridScene *s, gsize n_slots, gsize n_cells, gsize n_links, gsize levels) {
  if (n_slots > s->cap_slots) {
    gsize padded = (n_slots + 1 + LOOM_GRID_BOXES_PER_ROW - 1) / LOOM_GRID_BOXES_PER_ROW * LOOM_GRID_BOXES_PER_ROW;
    s->boxes = g_renew(LoomGridBox, s->boxes, padded);
    memset(s->boxes, 0, padded * sizeof *s->boxes);
    s->box_coords = g_renew(loom_coord, s->box_coords, n_slots);
    s->slot_box = g_renew(int, s->slot_box, n_slots);
    s->spine = g_renew(float, s->spine, n_slots * 3);
    s->spine_box = g_renew(int, s->spine_box, n_slots);
    s->cap_slots = n_slots;
  }
  if (n_cells > s->cap_grid) {
    s->near_open = g_renew(guint8, s->near_open, n_cells);
    s->cap_grid = n_cells;
  }
  if (n_cells > s->cap_cells) {
    s->cells = g_renew(float, s->cells, n_cells * 24 * 3);
    s->cap_cells = n_cells;
  }
  if (n_links > s->cap_arcs) {
    s->arcs = g_renew(LoomGridArc, s->arcs, n_links);
    s->cap_arcs = n_links;
  }
  if (levels > s->cap_levels) {
    s->box_first = g_renew(int, s->box_first, levels);
    s->cell_first = g_renew(int, s->cell_first, levels);
    s->spine_first = g_renew(int, s->spine_first, levels);
    s->cap_levels = levels;
  }
}

void loom_grid_scene_clear(LoomGridScene *s) {
  g_free(s->boxes);
  g_free(s->box_coords);
  g_free(s->box_first);
  g_free(s->slot_box);
  g_free(s->cells);
  g_free(s->cell_first);
  g_free(s->spine);
  g_free(s->spine_box);
  g_free(s->near_open);
  g_free(s->spine_first);
  g_free(s->arcs);
  memset(s, 0, sizeof *s);
}

static gboolean has_problem(const loom_diag *diags, int n, loom_coord c) {
  for (int i = 0; i < n; i++)
    if (loom_coord_equal(diags[i].at, c)) return TRUE;
  return FALSE;
}

static gboolean link_has_problem(const loom_diag *diags, int n, const loom_link *k) {
  for (int i = 0; i < n; i++) {
    if (!diags[i].has_other) continue;
    loom_coord a = diags[i].at, b = diags[i].other;
    if ((loom_coord_equal(a, k->dst) && loom_coord_equal(b, k->src)) ||
        (loom_coord_equal(a, k->src) && loom_coord_equal(b, k->dst)))
      return TRUE;
  }
  return FALSE;
}

/* Chebyshev dilation of a z-major mask by @radius cells: one running pass
 * per axis. */
static void dilate(guint8 *mask, int depth, int rows, int cols, int radius) {
  const int dims[3] = {depth, rows, cols};
  const gsize strides[3] = {(gsize)rows * cols, (gsize)cols, 1};
  int longest = MAX(depth, MAX(rows, cols));
  g_autofree guint8 *line = g_malloc(MAX(longest, 1));
  for (int axis = 0; axis < 3; axis++) {
    int n = dims[axis];
    gsize stride = strides[axis];
    gsize total = (gsize)depth * rows * cols;
    for (gsize start = 0; start < total; start++) {
      /* Only the cells whose coordinate on this axis is 0 start a line. */
      if ((start / stride) % (gsize)n != 0) continue;
      for (int i = 0; i < n; i++) line[i] = mask[start + (gsize)i * stride];
      for (int i = 0; i < n; i++) {
        guint8 any = 0;
        for (int j = MAX(i - radius, 0); j <= MIN(i + radius, n - 1) && !any; j++) any = line[j];
        mask[start + (gsize)i * stride] = any;
      }
    }
  }
}

void loom_grid_scene_build(LoomGridScene *s, const loom_net *net, const loom_diag *diags, int n_diags) {
  s->n_boxes = s->n_cells = s->n_spine = s->n_arcs = 0;
  s->groups_present = s->dtypes_present = s->merges_present = 0;
  s->any_problem = s->any_disabled = s->any_feedback = FALSE;
  if (!net) {
    s->depth = s->rows = s->cols = s->layers_per_cell = 0;
    return;
  }
  s->depth = loom_net_depth(net);
  s->rows = loom_net_rows(net);
  s->cols = loom_net_cols(net);
  s->layers_per_cell = loom_net_layers_per_cell(net);
  int64_t n_slots = loom_net_n_slots(net);
  gsize n_cells = (gsize)s->depth * (gsize)s->rows * (gsize)s->cols;
  int n_links = loom_net_n_links(net);
  reserve(s, (gsize)n_slots, n_cells, (gsize)n_links, (gsize)s->depth + 1);

  int lpc = s->layers_per_cell;
  int64_t f = 0;
  for (int z = 0; z < s->depth; z++) {
    s->box_first[z] = s->n_boxes;
    s->cell_first[z] = s->n_cells;
    s->spine_first[z] = s->n_spine;
    for (int y = 0; y < s->rows; y++)
      for (int x = 0; x < s->cols; x++) {
        gboolean occupied = FALSE;
        for (int l = 0; l < lpc; l++, f++) {
          loom_coord c = {z, y, x, l};
          loom_layer *layer = loom_net_layer_at(net, c);
          s->slot_box[f] = layer ? s->n_boxes : -1;
          if (!layer) continue;
          occupied = TRUE;
          LoomGridBox *b = &s->boxes[s->n_boxes];
          s->box_coords[s->n_boxes++] = c;
          float mn[3], mx[3], rgb[3];
          loom_grid_slot_box(lpc, c, mn, mx);
          for (int i = 0; i < 3; i++) {
            b->min[i] = mn[i];
            b->size[i] = mx[i] - mn[i];
          }
          const loom_layer_type *t = loom_layer_get_type(layer);
          loom_dtype d = loom_layer_get_dtype(layer);
          loom_grid_type_color(t, rgb);
          b->type_rgb = pack_rgb(rgb);
          loom_grid_dtype_color(d, rgb);
          b->dtype_rgb = pack_rgb(rgb);
          b->band = loom_grid_dtype_band(d);
          int flags = 0;
          if (!loom_net_is_enabled(net, c)) flags |= LOOM_GRID_BOX_DISABLED;
          if (has_problem(diags, n_diags, c)) flags |= LOOM_GRID_BOX_PROBLEM;
          b->flags = (float)flags;
          int g = loom_grid_group_index(t);
          if (g >= 0 && g < 64) s->groups_present |= G_GUINT64_CONSTANT(1) << g;
          if ((int)d >= 0 && (int)d < 64) s->dtypes_present |= G_GUINT64_CONSTANT(1) << d;
          s->any_problem |= (flags & LOOM_GRID_BOX_PROBLEM) != 0;
          s->any_disabled |= (flags & LOOM_GRID_BOX_DISABLED) != 0;
          if (!(flags & LOOM_GRID_BOX_DISABLED)) {
            loom_grid_slot_centre(lpc, c, s->spine + 3 * s->n_spine);
            s->spine_box[s->n_spine++] = s->n_boxes - 1;
          }
        }
        if (!occupied) cell_outline(s->cells + 24 * 3 * s->n_cells++, x, y, z);
        gboolean full = TRUE;
        for (int l = 0; l < lpc; l++) full = full && s->slot_box[f - lpc + l] >= 0;
        /* Runs of stacked blocks, from the top down: each first block learns
         * its run's length and top. */
        int run = 0;
        float top = 0.f;
        for (int l = lpc - 1; l >= 0; l--) {
          int b = s->slot_box[f - lpc + l];
          if (b < 0) {
            run = 0;
            continue;
          }
          if (run == 0) top = s->boxes[b].min[1] + s->boxes[b].size[1];
          run++;
          gboolean starts = l == 0 || s->slot_box[f - lpc + l - 1] < 0;
          s->boxes[b].run = starts ? (float)run : 0.f;
          s->boxes[b].run_top = starts ? top : 0.f;
        }
        s->near_open[((gsize)z * s->rows + y) * s->cols + x] = !full;
      }
  }
  s->box_first[s->depth] = s->n_boxes;
  s->cell_first[s->depth] = s->n_cells;
  s->spine_first[s->depth] = s->n_spine;
  dilate(s->near_open, s->depth, s->rows, s->cols, LOOM_GRID_SHELL);

  for (int i = 0; i < n_links; i++) {
    const loom_link *k = loom_net_link(net, i);
    LoomGridArc *a = &s->arcs[s->n_arcs++];
    loom_grid_slot_centre(lpc, k->src, a->src);
    loom_grid_slot_centre(lpc, k->dst, a->dst);
    a->src_z = (float)k->src.z;
    a->dst_z = (float)k->dst.z;
    float rgb[3];
    a->feedback = 0.f;
    if (!link_valid(net, i) || link_has_problem(diags, n_diags, k)) {
      rgb[0] = LOOM_GRID_VIEW_PROBLEM_R;
      rgb[1] = LOOM_GRID_VIEW_PROBLEM_G;
      rgb[2] = LOOM_GRID_VIEW_PROBLEM_B;
      s->any_problem = TRUE;
    } else {
      loom_grid_merge_color(k->merge, rgb);
      if (link_feedback(net, k)) {
        a->feedback = 1.f;
        s->any_feedback = TRUE;
      }
    }
    to_rgba8(rgb, a->rgba);
    if ((int)k->merge >= 0 && (int)k->merge < 64) s->merges_present |= G_GUINT64_CONSTANT(1) << k->merge;
  }
}

/* ---- what an eye sees ---- */

int loom_grid_scene_region(const LoomGridScene *s, const float eye[3]) {
  const float size[3] = {(float)s->cols, (float)s->depth, (float)s->rows};
  int region = 0, weight = 1;
  for (int i = 0; i < 3; i++, weight *= 3) region += weight * (eye[i] < 0.f ? 0 : eye[i] > size[i] ? 2 : 1);
  return region;
}

/* Cells from the side facing the eye inwards: how deep coordinate @i of
 * @n lies, seen from @side (0 below, 1 within, 2 above), doubled. */
static int depth_key(int side, int i, int n) {
  return side == 2 ? 2 * (n - 1 - i) : side == 0 ? 2 * i : ABS(2 * i - (n - 1));
}

int loom_grid_scene_visible(const LoomGridScene *s, int region, int z_slice, gboolean shell, int *boxes,
                            int *segments, int *n_segments) {
  *n_segments = 0;
  if (s->n_boxes == 0) return 0;
  /* World axes x, y, z are columns, levels and rows. */
  const int side_x = region % 3, side_y = region / 3 % 3, side_z = region / 9;
  const int lpc = s->layers_per_cell;
  int z0 = 0, z1 = s->depth;
  if (z_slice >= 0 && z_slice < s->depth) {
    z0 = z_slice;
    z1 = z_slice + 1;
    shell = FALSE; /* a slice is one level: open to the eye from above and below */
  }
  /* Inside the grid's box the eye sees whatever surrounds it. */
  if (region == 13) shell = FALSE;

  /* Counting sort of the cells by their depth from the eye's sides. */
  int max_key = 2 * (s->depth + s->rows + s->cols) + 1;
  g_autofree int *count = g_new0(int, max_key + 1);
  g_autofree guint8 *kept = g_malloc0((gsize)s->n_boxes);
  for (int pass = 0; pass < 2; pass++) {
    if (pass == 1)
      for (int k = 0, sum = 0; k <= max_key; k++) {
        int c = count[k];
        count[k] = sum;
        sum += c;
      }
    for (int z = z0; z < z1; z++)
      for (int y = 0; y < s->rows; y++)
        for (int x = 0; x < s->cols; x++) {
          gsize cell = ((gsize)z * s->rows + y) * s->cols + x;
          if (shell && !s->near_open[cell]) {
            /* Cells between this one and a side facing the eye. */
            int inside = G_MAXINT;
            if (side_x != 1) inside = MIN(inside, side_x == 2 ? s->cols - 1 - x : x);
            if (side_y != 1) inside = MIN(inside, side_y == 2 ? s->depth - 1 - z : z);
            if (side_z != 1) inside = MIN(inside, side_z == 2 ? s->rows - 1 - y : y);
            if (inside >= LOOM_GRID_SHELL) continue;
          }
          int key = depth_key(side_x, x, s->cols) + depth_key(side_y, z, s->depth) + depth_key(side_z, y, s->rows);
          for (int l = 0; l < lpc; l++) {
            /* The stack from the end facing the eye. */
            int layer = side_y == 0 ? l : lpc - 1 - l;
            int b = s->slot_box[cell * (gsize)lpc + (gsize)layer];
            if (b < 0) continue;
            if (pass == 0) {
              count[key]++;
            } else {
              boxes[count[key]++] = b;
              kept[b] = 1;
            }
          }
        }
  }
  int n = count[max_key];

  int first = 0, last = s->n_spine;
  if (z_slice >= 0 && z_slice < s->depth) {
    first = s->spine_first[z_slice];
    last = s->spine_first[z_slice + 1];
  }
  for (int i = first; i + 1 < last; i++)
    if (kept[s->spine_box[i]] && kept[s->spine_box[i + 1]]) segments[(*n_segments)++] = i;
  return n;
}
