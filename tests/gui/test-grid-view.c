/*
 * LoomGridView on its own, under a display: picking at the projected centre
 * of every occupied slot finds that slot (also stacked, also in a Z-slice),
 * the selection (also over a problem's red), the colour mode and the link
 * arcs show in pixels read back from GL, export writes a PNG of the
 * requested size, and a full 16×16×16×4 network renders without GL errors
 * and looks the same whether the view draws every block or only the shell.
 * Reset and the presets frame every cell of any grid in views of any shape,
 * also after a resize, unless the user has moved the camera since. Live
 * metrics: slot values in the colour map's colours (NaN grey, log scale,
 * auto and fixed range), link flows, alert slots in every mode.
 */
#include <glib/gstdio.h>
#include <math.h>
#include <loom/dtype.h>
#include <loom/net.h>
#include <stdlib.h>
#include <string.h>

#include "gui-test.h"
#include "loom-grid-camera.h"
#include "loom-grid-scene.h"
#include "loom-grid-view-private.h"
#include "loom-grid-view.h"

#define TIMEOUT_MS 20000

static GtkWidget *window;
static LoomGridView *view;

static loom_coord at(int z, int y, int x, int l) {
  return (loom_coord){z, y, x, l};
}

static gboolean same(loom_coord a, loom_coord b) {
  return a.z == b.z && a.y == b.y && a.x == b.x && a.l == b.l;
}

static void place(loom_net *net, loom_coord c, const char *type, loom_dtype dtype) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  if (!l) g_error("%s: %s", type, err.message);
  g_assert_cmpint(loom_layer_set_dtype(l, dtype, &err), ==, 0);
  if (loom_net_place(net, c, l, &err)) g_error("place: %s", err.message);
}

/* 2 levels × 1 row × 3 columns × 2 layers: stacked slots at (0,0,0) and (1,0,1). */
static loom_net *small_net(gboolean with_link) {
  loom_error err = {0};
  loom_net *net = loom_net_new(2, 1, 3, 2, &err);
  g_assert_nonnull(net);
  place(net, at(0, 0, 0, 0), "dense", LOOM_DTYPE_FLOAT32);
  place(net, at(0, 0, 0, 1), "relu", LOOM_DTYPE_FLOAT32);
  place(net, at(0, 0, 2, 1), "dense", LOOM_DTYPE_INT8);
  place(net, at(1, 0, 1, 0), "dense", LOOM_DTYPE_BINARY);
  place(net, at(1, 0, 1, 1), "tanh", LOOM_DTYPE_FLOAT32);
  if (with_link) {
    loom_link link = {at(0, 0, 0, 0), at(1, 0, 1, 1), LOOM_MERGE_ADD};
    g_assert_cmpint(loom_net_add_link(net, &link, &err), ==, 0);
  }
  return net;
}

static gboolean ready(gpointer data) {
  GError *error = NULL;
  int w, h;
  GBytes *bytes = loom_grid_view_read_pixels(view, &w, &h, &error);
  if (error && g_getenv("GRIDVIEW_DEBUG")) g_printerr("%s\n", error->message);
  g_clear_error(&error);
  if (!bytes) return FALSE;
  g_bytes_unref(bytes);
  return gtk_widget_get_width(GTK_WIDGET(view)) > 0;
}

static void show_net(const loom_net *net) {
  loom_grid_view_set_net(view, net);
  loom_grid_view_set_z_slice(view, -1);
  loom_grid_view_set_color_mode(view, LOOM_GRID_VIEW_COLOR_LAYER_TYPE);
  loom_grid_view_set_preset(view, LOOM_GRID_VIEW_PRESET_ISO);
  gui_test_wait(ready, NULL, TIMEOUT_MS, "the grid view to render");
  gui_test_spin(50);
}

typedef struct {
  GBytes *bytes;
  const guint8 *px;
  int width, height, scale;
} Pixels;

static Pixels read_back(void) {
  Pixels p = {0};
  g_autoptr(GError) error = NULL;
  p.bytes = loom_grid_view_read_pixels(view, &p.width, &p.height, &error);
  g_assert_no_error(error);
  p.px = g_bytes_get_data(p.bytes, NULL);
  p.scale = gtk_widget_get_scale_factor(GTK_WIDGET(view));
  return p;
}

/* Whether a pixel within @radius of widget point (x, y) has colour (r, g, b). */
static gboolean found_near(const Pixels *p, double x, double y, int radius, float r, float g, float b, int tol) {
  int cx = (int)(x * p->scale), cy = (int)(y * p->scale);
  for (int dy = -radius; dy <= radius; dy++)
    for (int dx = -radius; dx <= radius; dx++) {
      int px = cx + dx, py = cy + dy;
      if (px < 0 || py < 0 || px >= p->width || py >= p->height) continue;
      if (gui_test_pixel_near(p->px + ((gsize)py * p->width + px) * 4, r, g, b, tol)) return TRUE;
    }
  return FALSE;
}

static const guint8 *pixel_at(const Pixels *p, double x, double y) {
  int px = CLAMP((int)(x * p->scale), 0, p->width - 1), py = CLAMP((int)(y * p->scale), 0, p->height - 1);
  return p->px + ((gsize)py * p->width + px) * 4;
}

/* ---- picking ---- */

static void assert_picks_every_slot(const loom_net *net, int only_z) {
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_coord c = loom_net_layer_coord(net, i), got;
    double x, y;
    g_assert_true(loom_grid_view_project(view, &c, &x, &y));
    gboolean hit = loom_grid_view_pick(view, x, y, &got);
    if (only_z < 0 || c.z == only_z) {
      g_assert_true(hit);
      if (!same(got, c))
        g_error("pick at (%.1f, %.1f) found (%d,%d,%d,%d), expected (%d,%d,%d,%d)", x, y, got.z, got.y, got.x, got.l,
                c.z, c.y, c.x, c.l);
    } else if (hit) {
      g_assert_cmpint(got.z, ==, only_z); /* other levels are neither drawn nor picked */
    }
  }
}

static void test_pick(void) {
  loom_net *net = small_net(FALSE);
  show_net(net);
  g_assert_cmpuint(loom_grid_view_get_depth(view), ==, 2);
  g_assert_cmpuint(loom_grid_view_get_cols(view), ==, 3);
  /* From the front every slot's centre is in sight (one row, nothing in front). */
  loom_grid_view_set_preset(view, LOOM_GRID_VIEW_PRESET_FRONT);
  assert_picks_every_slot(net, -1);
  /* From above at an angle, a stack's upper slot hides part of the lower
   * one; the top of each stack is in sight. */
  loom_grid_view_set_preset(view, LOOM_GRID_VIEW_PRESET_ISO);
  const loom_coord tops[] = {at(0, 0, 0, 1), at(0, 0, 2, 1), at(1, 0, 1, 1)};
  loom_coord got;
  double x, y;
  for (gsize i = 0; i < G_N_ELEMENTS(tops); i++) {
    g_assert_true(loom_grid_view_project(view, &tops[i], &x, &y));
    g_assert_true(loom_grid_view_pick(view, x, y, &got));
    g_assert_true(same(got, tops[i]));
  }
  loom_grid_view_set_preset(view, LOOM_GRID_VIEW_PRESET_TOP);
  loom_coord top = at(1, 0, 1, 1);
  g_assert_true(loom_grid_view_project(view, &top, &x, &y));
  g_assert_true(loom_grid_view_pick(view, x, y, &got) && same(got, top)); /* from above, the upper slot wins */

  loom_grid_view_set_preset(view, LOOM_GRID_VIEW_PRESET_FRONT);
  for (int z = 0; z < 2; z++) {
    loom_grid_view_set_z_slice(view, z);
    assert_picks_every_slot(net, z);
  }
  /* Over an empty cell: its slot l = 0. */
  loom_grid_view_set_z_slice(view, -1);
  loom_grid_view_set_preset(view, LOOM_GRID_VIEW_PRESET_ISO);
  loom_coord empty = at(0, 0, 1, 0);
  g_assert_true(loom_grid_view_project(view, &empty, &x, &y));
  g_assert_true(loom_grid_view_pick(view, x, y, &got));
  g_assert_true(same(got, empty));
  /* Far outside the grid: nothing. */
  g_assert_false(loom_grid_view_pick(view, 2, 2, &got));
  loom_grid_view_set_net(view, NULL);
  loom_net_free(net);
}

/* ---- pixels ---- */

static void count_signal(int *count) {
  (*count)++;
}

static void test_selection_highlight(void) {
  loom_net *net = small_net(FALSE);
  show_net(net);
  loom_coord c = at(0, 0, 2, 1);
  double x, y;
  g_assert_true(loom_grid_view_project(view, &c, &x, &y));
  Pixels before = read_back();
  g_assert_false(found_near(&before, x, y, 2, LOOM_GRID_VIEW_HIGHLIGHT_R, LOOM_GRID_VIEW_HIGHLIGHT_G,
                            LOOM_GRID_VIEW_HIGHLIGHT_B, 6));
  g_bytes_unref(before.bytes);

  int changed = 0;
  gulong id = g_signal_connect_swapped(view, "selection-changed", G_CALLBACK(count_signal), &changed);
  loom_grid_view_set_selection(view, &c);
  loom_grid_view_set_selection(view, &c); /* unchanged: no second signal */
  g_assert_cmpint(changed, ==, 1);
  g_signal_handler_disconnect(view, id);
  loom_coord sel;
  g_assert_true(loom_grid_view_get_selection(view, &sel) && same(sel, c));
  Pixels after = read_back();
  g_assert_true(found_near(&after, x, y, 2, LOOM_GRID_VIEW_HIGHLIGHT_R, LOOM_GRID_VIEW_HIGHLIGHT_G,
                           LOOM_GRID_VIEW_HIGHLIGHT_B, 6));
  g_bytes_unref(after.bytes);

  loom_grid_view_set_selection(view, NULL);
  g_assert_false(loom_grid_view_get_selection(view, NULL));
  loom_grid_view_set_net(view, NULL);
  loom_net_free(net);
}

static void test_color_mode(void) {
  loom_net *net = small_net(FALSE);
  show_net(net);
  loom_coord c = at(1, 0, 1, 0); /* binary: far from any layer-type colour */
  double x, y;
  g_assert_true(loom_grid_view_project(view, &c, &x, &y));
  Pixels by_type = read_back();
  guint8 a[4];
  memcpy(a, pixel_at(&by_type, x, y), 4);
  g_bytes_unref(by_type.bytes);

  loom_grid_view_set_color_mode(view, LOOM_GRID_VIEW_COLOR_DTYPE);
  g_assert_cmpint(loom_grid_view_get_color_mode(view), ==, LOOM_GRID_VIEW_COLOR_DTYPE);
  Pixels by_dtype = read_back();
  const guint8 *b = pixel_at(&by_dtype, x, y);
  int diff = abs(a[0] - b[0]) + abs(a[1] - b[1]) + abs(a[2] - b[2]);
  g_assert_cmpint(diff, >, 40);
  g_bytes_unref(by_dtype.bytes);
  loom_grid_view_set_net(view, NULL);
  loom_net_free(net);
}

static void test_link_drawn(void) {
  for (int with_link = 0; with_link < 2; with_link++) {
    loom_net *net = small_net(with_link);
    show_net(net);
    /* Where the arc's middle is (or would be). */
    float mid[3];
    double x, y;
    if (with_link) {
      g_assert_true(loom_grid_view_link_point(view, 0, 0.5, mid));
    } else {
      g_assert_false(loom_grid_view_link_point(view, 0, 0.5, mid));
      loom_net *other = small_net(TRUE);
      loom_grid_view_set_net(view, other);
      g_assert_true(loom_grid_view_link_point(view, 0, 0.5, mid));
      loom_grid_view_set_net(view, net);
      loom_net_free(other);
    }
    g_assert_true(loom_grid_view_project_point(view, mid, &x, &y));
    Pixels p = read_back();
    gboolean seen = found_near(&p, x, y, 2, LOOM_GRID_VIEW_ADD_R, LOOM_GRID_VIEW_ADD_G, LOOM_GRID_VIEW_ADD_B, 12);
    g_assert_true(seen == with_link);
    g_bytes_unref(p.bytes);

    if (with_link) { /* selected, the arc takes the highlight colour */
      loom_grid_view_set_selected_link(view, 0);
      Pixels s = read_back();
      g_assert_true(found_near(&s, x, y, 2, LOOM_GRID_VIEW_HIGHLIGHT_R, LOOM_GRID_VIEW_HIGHLIGHT_G,
                               LOOM_GRID_VIEW_HIGHLIGHT_B, 12));
      g_bytes_unref(s.bytes);
      loom_grid_view_set_selected_link(view, -1);
    }
    loom_grid_view_set_net(view, NULL);
    loom_net_free(net);
  }
}

/* A feedback link of a systolic network: drawn in its merge colour, never
 * the problem red, and dashed: along the arc the colour comes and goes,
 * where the same link pointing forwards is solid. */
static int arc_hits(int samples, float r, float g, float b) {
  Pixels p = read_back();
  int hits = 0;
  for (int i = 0; i < samples; i++) {
    float point[3];
    double x, y;
    g_assert_true(loom_grid_view_link_point(view, 0, 0.1 + 0.6 * i / (samples - 1), point));
    g_assert_true(loom_grid_view_project_point(view, point, &x, &y));
    hits += found_near(&p, x, y, 0, r, g, b, 12);
  }
  g_bytes_unref(p.bytes);
  return hits;
}

static void test_feedback_dashed(void) {
  const int samples = 60;
  int hits[2];
  for (int feedback = 0; feedback < 2; feedback++) {
    loom_net *net = small_net(FALSE);
    loom_error err = {0};
    g_assert_cmpint(loom_net_set_execution(net, LOOM_EXEC_SYSTOLIC, &err), ==, LOOM_OK);
    loom_link link = {at(0, 0, 0, 0), at(1, 0, 1, 1), LOOM_MERGE_ADD};
    if (feedback) link = (loom_link){at(1, 0, 1, 1), at(0, 0, 0, 0), LOOM_MERGE_ADD};
    g_assert_cmpint(loom_net_add_link(net, &link, &err), ==, LOOM_OK);
    show_net(net);
    hits[feedback] = arc_hits(samples, LOOM_GRID_VIEW_ADD_R, LOOM_GRID_VIEW_ADD_G, LOOM_GRID_VIEW_ADD_B);
    g_assert_cmpint(arc_hits(samples, LOOM_GRID_VIEW_PROBLEM_R, LOOM_GRID_VIEW_PROBLEM_G, LOOM_GRID_VIEW_PROBLEM_B),
                    ==, 0);
    loom_grid_view_set_net(view, NULL);
    loom_net_free(net);
  }
  g_test_message("arc samples in the link colour: forward %d, feedback %d of %d", hits[0], hits[1], samples);
  g_assert_cmpint(hits[0], >=, samples * 9 / 10);
  g_assert_cmpint(hits[1], >=, samples / 3);
  g_assert_cmpint(hits[1], <=, samples * 3 / 4);
}

static void test_problem_red(void) {
  loom_net *net = small_net(FALSE);
  show_net(net);
  loom_diag diag = {.at = at(0, 0, 0, 1), .code = LOOM_ERR_SHAPE};
  g_strlcpy(diag.message, "test problem", sizeof diag.message);
  loom_grid_view_set_diagnostics(view, &diag, 1);
  /* The middle of the block's face towards the camera, well away from the
   * outline along its edges (the slot's centre may project onto one). */
  double x, y;
  float mn[3], mx[3];
  loom_grid_slot_box(2, diag.at, mn, mx);
  float face[3] = {0.5f * (mn[0] + mx[0]), 0.5f * (mn[1] + mx[1]), mx[2]};
  g_assert_true(loom_grid_view_project_point(view, face, &x, &y));
  Pixels p = read_back();
  /* Lit red: any face's shade of the problem colour. */
  const guint8 *px = pixel_at(&p, x, y);
  g_assert_cmpint(px[0], >, 2 * px[1]);
  g_assert_cmpint(px[0], >, 2 * px[2]);
  g_bytes_unref(p.bytes);

  /* Selected, it stays red inside a highlight outline: both show. */
  loom_grid_view_set_selection(view, &diag.at);
  Pixels sel = read_back();
  px = pixel_at(&sel, x, y);
  g_assert_cmpint(px[0], >, 2 * px[1]);
  g_assert_cmpint(px[0], >, 2 * px[2]);
  double x0, y0, x1, y1; /* the block's size on screen bounds the search for its outline */
  loom_coord below = at(0, 0, 0, 0);
  g_assert_true(loom_grid_view_project(view, &below, &x0, &y0));
  g_assert_true(loom_grid_view_project(view, &(loom_coord){0, 0, 2, 1}, &x1, &y1));
  int radius = (int)(0.5 * fabs(x1 - x0) * sel.scale);
  g_assert_true(found_near(&sel, x, y, radius, LOOM_GRID_VIEW_HIGHLIGHT_R, LOOM_GRID_VIEW_HIGHLIGHT_G,
                           LOOM_GRID_VIEW_HIGHLIGHT_B, 6));
  g_bytes_unref(sel.bytes);
  loom_grid_view_set_selection(view, NULL);

  g_autofree char *text = loom_grid_view_describe_slot(view, &diag.at);
  g_assert_nonnull(strstr(text, "test problem"));
  g_assert_nonnull(strstr(text, "(0,0,0,1)"));
  g_assert_nonnull(strstr(text, "float32"));
  loom_grid_view_set_net(view, NULL);
  loom_net_free(net);
}

static void test_export_png(void) {
  loom_net *net = small_net(TRUE);
  show_net(net);
  g_autofree char *dir = g_dir_make_tmp("gridview-test-XXXXXX", NULL);
  g_autofree char *path = g_build_filename(dir, "grid.png", NULL);
  g_autoptr(GError) error = NULL;
  g_assert_true(loom_grid_view_export_png(view, path, 321, 203, &error));
  g_assert_no_error(error);
  g_autoptr(GdkTexture) texture = gdk_texture_new_from_filename(path, &error);
  g_assert_no_error(error);
  g_assert_cmpint(gdk_texture_get_width(texture), ==, 321);
  g_assert_cmpint(gdk_texture_get_height(texture), ==, 203);

  g_assert_false(loom_grid_view_export_png(view, path, 0, 10, &error));
  g_assert_nonnull(error);
  g_clear_error(&error);
  g_autofree char *missing = g_build_filename(dir, "no-such-dir", "grid.png", NULL);
  g_assert_false(loom_grid_view_export_png(view, missing, 64, 64, &error));
  g_assert_nonnull(error);
  g_unlink(path);
  g_rmdir(dir);
  loom_grid_view_set_net(view, NULL);
  loom_net_free(net);
}

static void test_big_net(void) {
  static const char *const types[] = {"dense", "relu", "layernorm", "softmax", "tanh", "conv2d"};
  loom_error err = {0};
  loom_net *net = loom_net_new(16, 16, 16, 4, &err);
  g_assert_nonnull(net);
  for (int64_t f = 0; f < loom_net_n_slots(net); f++)
    place(net, loom_net_coord_of(net, f), types[f % G_N_ELEMENTS(types)], (loom_dtype)(f % LOOM_DTYPE_COUNT));
  for (int64_t i = 0; i + 997 < loom_net_n_slots(net); i += 499) {
    loom_link link = {loom_net_coord_of(net, i), loom_net_coord_of(net, i + 997), (loom_merge)(i % 3)};
    g_assert_cmpint(loom_net_add_link(net, &link, &err), ==, 0);
  }
  show_net(net);
  Pixels p = read_back(); /* fails on any GL error of the frame */
  g_assert_false(gui_test_pixel_near(pixel_at(&p, gtk_widget_get_width(GTK_WIDGET(view)) / 2.0,
                                              gtk_widget_get_height(GTK_WIDGET(view)) / 2.0),
                                     LOOM_GRID_VIEW_CLEAR_R, LOOM_GRID_VIEW_CLEAR_G, LOOM_GRID_VIEW_CLEAR_B, 3));
  g_bytes_unref(p.bytes);
  loom_grid_view_set_z_slice(view, 15);
  loom_coord c = at(15, 8, 8, 3), got;
  double x, y;
  g_assert_true(loom_grid_view_project(view, &c, &x, &y));
  g_assert_true(loom_grid_view_pick(view, x, y, &got));
  g_assert_cmpint(got.z, ==, 15);
  p = read_back();
  g_bytes_unref(p.bytes);
  loom_grid_view_set_z_slice(view, -1);

  /* The view draws only the shell of blocks that can be seen through the
   * gaps (LOOM_GRID_SHELL). From an oblique angle that is the same picture;
   * looking along an axis, rays run down the straight gaps and meet deeper
   * faces edge-on: slivers of dark edge (and the spine) that the shell
   * leaves out: up to 1.5% of the pixels, in thin slivers. */
  /* The camera the tolerances below were measured with: farther than the
   * box-fitting framing, whose closer eye sees more slivers. */
  loom_grid_view_set_zoom(view, 1.15);
  static const struct {
    double yaw, pitch, max_share;
  } poses[] = {
    {0.65, 0.45, 0.0002}, {2.5, 0.45, 0.0002}, {4.0, 0.2, 0.0002}, {1.2, 0.9, 0.001}, {5.5, 1.2, 0.002},
    {0.3, 0.1, 0.006},    {3.3, 0.7, 0.008},   {0.0, 0.0, 0.015},  {1.571, 0.0, 0.015}, {0.0, 1.5, 0.02},
  };
  for (gsize i = 0; i < G_N_ELEMENTS(poses); i++) {
    loom_grid_view_set_orbit(view, poses[i].yaw, poses[i].pitch);
    loom_grid_view_set_draw_all_blocks(view, TRUE);
    Pixels all = read_back();
    loom_grid_view_set_draw_all_blocks(view, FALSE);
    Pixels shell = read_back();
    int differ = 0;
    for (gsize k = 0; k < (gsize)all.width * all.height; k++) {
      const guint8 *a = all.px + 4 * k, *b = shell.px + 4 * k;
      if (abs(a[0] - b[0]) > 48 || abs(a[1] - b[1]) > 48 || abs(a[2] - b[2]) > 48) differ++;
    }
    double share = (double)differ / ((double)all.width * all.height);
    if (g_getenv("GRIDVIEW_DEBUG"))
      g_printerr("yaw %.2f pitch %.2f: %.3f%% of the pixels differ\n", poses[i].yaw, poses[i].pitch, 100 * share);
    g_assert_cmpfloat(share, <=, poses[i].max_share);
    g_bytes_unref(all.bytes);
    g_bytes_unref(shell.bytes);
  }
  loom_grid_view_set_net(view, NULL);
  loom_net_free(net);
}

/* ---- live metrics ---- */

/* The middle of the top face of slot @c's block, in widget coordinates:
 * lit at 1.0 and far from the block's edges. */
static void top_centre(loom_coord c, double *x, double *y) {
  float mn[3], mx[3];
  loom_grid_slot_box(2, c, mn, mx);
  float top[3] = {0.5f * (mn[0] + mx[0]), mx[1], 0.5f * (mn[2] + mx[2])};
  g_assert_true(loom_grid_view_project_point(view, top, x, y));
}

/* Whether the top of slot @c shows colour @rgb (within 8-bit rounding of
 * the texture and the framebuffer). */
static gboolean top_is(loom_coord c, const float rgb[3], int tol) {
  double x, y;
  top_centre(c, &x, &y);
  Pixels p = read_back();
  const guint8 *px = pixel_at(&p, x, y);
  gboolean ok = gui_test_pixel_near(px, rgb[0], rgb[1], rgb[2], tol);
  if (!ok)
    g_printerr("slot (%d,%d,%d,%d): pixel %d %d %d, expected %.0f %.0f %.0f\n", c.z, c.y, c.x, c.l, px[0], px[1],
               px[2], rgb[0] * 255, rgb[1] * 255, rgb[2] * 255);
  g_bytes_unref(p.bytes);
  return ok;
}

static gboolean top_is_map(loom_coord c, float t) {
  float rgb[3];
  loom_grid_colormap(t, rgb);
  return top_is(c, rgb, 3);
}

static const float neutral[3] = {LOOM_GRID_VIEW_NEUTRAL_R, LOOM_GRID_VIEW_NEUTRAL_G, LOOM_GRID_VIEW_NEUTRAL_B};

/* One value per flat slot of @net, NaN except where set. */
static float *nan_values(const loom_net *net) {
  gsize n = (gsize)loom_net_n_slots(net);
  float *v = g_new(float, n);
  for (gsize i = 0; i < n; i++) v[i] = NAN;
  return v;
}

static void set_value(const loom_net *net, float *v, loom_coord c, float value) {
  v[loom_net_flat_index(net, c)] = value;
}

static gboolean has_label(GtkWidget *root, const char *text) {
  for (GtkWidget *w = gtk_widget_get_first_child(root); w; w = gtk_widget_get_next_sibling(w)) {
    if (GTK_IS_LABEL(w) && g_strcmp0(gtk_label_get_text(GTK_LABEL(w)), text) == 0) return TRUE;
    if (has_label(w, text)) return TRUE;
  }
  return FALSE;
}

/* The tops of the three stacks (in sight from the iso preset). */
static const loom_coord top_a = {0, 0, 0, 1}, top_b = {0, 0, 2, 1}, top_c = {1, 0, 1, 1};

static void test_metric_values(void) {
  loom_net *net = small_net(FALSE);
  show_net(net);
  Pixels by_type = read_back();

  g_autofree float *v = nan_values(net);
  set_value(net, v, top_a, 0.25f);
  set_value(net, v, top_b, 0.9f);
  loom_grid_view_set_metric_auto_range(view, FALSE);
  loom_grid_view_set_metric_range(view, 0.0, 1.0);
  loom_grid_view_set_slot_values(view, v, (gsize)loom_net_n_slots(net), "Gradient norm");
  /* Values alone change nothing until the mode shows them. */
  Pixels unchanged = read_back();
  g_assert_true(g_bytes_equal(unchanged.bytes, by_type.bytes));
  g_bytes_unref(unchanged.bytes);
  loom_grid_view_set_color_mode(view, LOOM_GRID_VIEW_COLOR_METRIC);
  g_assert_cmpint(loom_grid_view_get_color_mode(view), ==, LOOM_GRID_VIEW_COLOR_METRIC);
  g_assert_true(top_is_map(top_a, 0.25f));
  g_assert_true(top_is_map(top_b, 0.9f));
  g_assert_true(top_is(top_c, neutral, 3)); /* NaN: grey */
  g_assert_true(has_label(GTK_WIDGET(view), "Gradient norm"));
  g_autofree char *tip = loom_grid_view_describe_slot(view, &top_b);
  g_assert_nonnull(strstr(tip, "Gradient norm: 0.9"));
  g_autofree char *tip_nan = loom_grid_view_describe_slot(view, &top_c);
  g_assert_nonnull(strstr(tip_nan, "Gradient norm: no value"));

  /* A new frame of values: only the colours change. */
  set_value(net, v, top_c, 0.5f);
  set_value(net, v, top_a, NAN);
  loom_grid_view_set_slot_values(view, v, (gsize)loom_net_n_slots(net), "Gradient norm");
  g_assert_true(top_is_map(top_c, 0.5f));
  g_assert_true(top_is(top_a, neutral, 3));
  /* Beyond the range: the ends of the map; slots past n: no value. */
  set_value(net, v, top_a, -3.f);
  set_value(net, v, top_b, INFINITY);
  loom_grid_view_set_slot_values(view, v, (gsize)loom_net_n_slots(net), "Gradient norm");
  g_assert_true(top_is_map(top_a, 0.f));
  g_assert_true(top_is_map(top_b, 1.f));
  loom_grid_view_set_slot_values(view, v, (gsize)loom_net_flat_index(net, top_b), NULL);
  g_assert_true(top_is(top_b, neutral, 3));
  g_assert_true(has_label(GTK_WIDGET(view), "Metric"));

  /* Back to layer types: the very same picture as before. */
  loom_grid_view_set_color_mode(view, LOOM_GRID_VIEW_COLOR_LAYER_TYPE);
  Pixels again = read_back();
  g_assert_cmpint(again.width, ==, by_type.width);
  g_assert_true(g_bytes_equal(again.bytes, by_type.bytes));
  g_bytes_unref(again.bytes);
  g_bytes_unref(by_type.bytes);

  loom_grid_view_set_slot_values(view, NULL, 0, NULL);
  loom_grid_view_set_metric_auto_range(view, TRUE);
  loom_grid_view_set_net(view, NULL);
  loom_net_free(net);
}

static void test_metric_range(void) {
  loom_net *net = small_net(FALSE);
  show_net(net);
  loom_grid_view_set_color_mode(view, LOOM_GRID_VIEW_COLOR_METRIC);
  g_autofree float *v = nan_values(net);
  gsize n = (gsize)loom_net_n_slots(net);
  set_value(net, v, top_a, 2.f);
  set_value(net, v, top_b, 4.f);
  set_value(net, v, top_c, 6.f);
  double lo, hi;

  /* Auto: the finite values' range, anew with every frame of values. */
  g_assert_true(loom_grid_view_get_metric_auto_range(view));
  loom_grid_view_set_slot_values(view, v, n, "loss");
  loom_grid_view_get_metric_range(view, &lo, &hi);
  g_assert_cmpfloat(lo, ==, 2.0);
  g_assert_cmpfloat(hi, ==, 6.0);
  g_assert_true(top_is_map(top_a, 0.f));
  g_assert_true(top_is_map(top_b, 0.5f));
  g_assert_true(top_is_map(top_c, 1.f));
  set_value(net, v, top_c, 10.f);
  loom_grid_view_set_slot_values(view, v, n, "loss");
  loom_grid_view_get_metric_range(view, &lo, &hi);
  g_assert_cmpfloat(hi, ==, 10.0);
  g_assert_true(top_is_map(top_b, 0.25f));

  /* Fixed: the range set, whatever the values. */
  int notified = 0;
  gulong id = g_signal_connect_swapped(view, "notify::metric-auto-range", G_CALLBACK(count_signal), &notified);
  loom_grid_view_set_metric_range(view, 0.0, 20.0);
  loom_grid_view_get_metric_range(view, &lo, &hi);
  g_assert_cmpfloat(hi, ==, 10.0); /* still auto */
  loom_grid_view_set_metric_auto_range(view, FALSE);
  loom_grid_view_set_metric_auto_range(view, FALSE);
  g_assert_cmpint(notified, ==, 1);
  g_signal_handler_disconnect(view, id);
  loom_grid_view_get_metric_range(view, &lo, &hi);
  g_assert_cmpfloat(lo, ==, 0.0);
  g_assert_cmpfloat(hi, ==, 20.0);
  g_assert_true(top_is_map(top_b, 0.2f));

  /* Log scale: decades evenly spaced; non-positive values have none. */
  notified = 0;
  id = g_signal_connect_swapped(view, "notify::metric-log", G_CALLBACK(count_signal), &notified);
  loom_grid_view_set_metric_log(view, TRUE);
  g_assert_cmpint(notified, ==, 1);
  g_signal_handler_disconnect(view, id);
  g_assert_true(loom_grid_view_get_metric_log(view));
  set_value(net, v, top_a, 10.f);
  set_value(net, v, top_b, 1000.f);
  set_value(net, v, top_c, -5.f);
  loom_grid_view_set_metric_range(view, 1.0, 10000.0);
  loom_grid_view_set_slot_values(view, v, n, "loss");
  g_assert_true(top_is_map(top_a, 0.25f));
  g_assert_true(top_is_map(top_b, 0.75f));
  g_assert_true(top_is(top_c, neutral, 3));
  /* Auto on a log scale: over the positive values. */
  loom_grid_view_set_metric_auto_range(view, TRUE);
  loom_grid_view_get_metric_range(view, &lo, &hi);
  g_assert_cmpfloat(lo, ==, 10.0);
  g_assert_cmpfloat(hi, ==, 1000.0);
  g_assert_true(top_is_map(top_a, 0.f));
  g_assert_true(top_is_map(top_b, 1.f));
  /* A fixed range reaching below zero cannot be drawn on it: auto it is. */
  loom_grid_view_set_metric_auto_range(view, FALSE);
  loom_grid_view_set_metric_range(view, -1.0, 100.0);
  loom_grid_view_get_metric_range(view, &lo, &hi);
  g_assert_cmpfloat(lo, ==, 10.0);
  /* Nothing finite: no range. */
  loom_grid_view_set_metric_auto_range(view, TRUE);
  g_autofree float *none = nan_values(net);
  loom_grid_view_set_slot_values(view, none, n, "loss");
  loom_grid_view_get_metric_range(view, &lo, &hi);
  g_assert_true(isnan(lo) && isnan(hi));
  g_assert_true(top_is(top_a, neutral, 3));

  loom_grid_view_set_metric_log(view, FALSE);
  loom_grid_view_set_slot_values(view, NULL, 0, NULL);
  loom_grid_view_set_net(view, NULL);
  loom_net_free(net);
}

static int alert_white_pixels(loom_coord c) {
  double x, y;
  top_centre(c, &x, &y);
  Pixels p = read_back();
  int n = 0;
  for (int dy = -30; dy <= 30; dy++)
    for (int dx = -30; dx <= 30; dx++)
      if (found_near(&p, x + dx / (double)p.scale, y + dy / (double)p.scale, 0, 1.f, 1.f, 1.f, 24)) n++;
  g_bytes_unref(p.bytes);
  return n;
}

static void test_alert_slots(void) {
  loom_net *net = small_net(FALSE);
  show_net(net);
  const float red[3] = {LOOM_GRID_VIEW_ALERT_R, LOOM_GRID_VIEW_ALERT_G, LOOM_GRID_VIEW_ALERT_B};
  g_assert_false(top_is(top_b, red, 12));
  g_autofree float *v = nan_values(net);
  set_value(net, v, top_b, 0.5f);
  loom_grid_view_set_slot_values(view, v, (gsize)loom_net_n_slots(net), NULL);
  loom_grid_view_set_alert_slots(view, &top_b, 1);
  g_autofree char *tip = loom_grid_view_describe_slot(view, &top_b);
  g_assert_nonnull(strstr(tip, "Training stopped here"));
  static const LoomGridViewColorMode modes[] = {LOOM_GRID_VIEW_COLOR_LAYER_TYPE, LOOM_GRID_VIEW_COLOR_DTYPE,
                                                LOOM_GRID_VIEW_COLOR_METRIC};
  for (gsize i = 0; i < G_N_ELEMENTS(modes); i++) {
    loom_grid_view_set_color_mode(view, modes[i]);
    g_assert_true(top_is(top_b, red, 3));
    g_assert_false(top_is(top_a, red, 12)); /* only the alert slot */
  }
  /* The outline pulses from dark red (no white) to white. */
  loom_grid_view_set_pulse_time(view, 0.0);
  g_assert_cmpint(alert_white_pixels(top_b), ==, 0);
  loom_grid_view_set_pulse_time(view, 0.5);
  g_assert_cmpint(alert_white_pixels(top_b), >, 20);
  loom_grid_view_set_pulse_time(view, -1.0);
  /* An empty slot or one outside the grid: ignored. */
  const loom_coord odd[] = {{0, 0, 1, 0}, {7, 7, 7, 7}};
  loom_grid_view_set_alert_slots(view, odd, G_N_ELEMENTS(odd));
  g_assert_true(top_is_map(top_b, 0.5f));
  loom_grid_view_set_alert_slots(view, NULL, 0);
  g_assert_true(top_is_map(top_b, 0.5f));

  loom_grid_view_set_slot_values(view, NULL, 0, NULL);
  loom_grid_view_set_net(view, NULL);
  loom_net_free(net);
}

/* Pixels of the link's colour within @radius device pixels of the arc's middle. */
static int arc_pixels(float r, float g, float b) {
  float mid[3];
  double x, y;
  g_assert_true(loom_grid_view_link_point(view, 0, 0.5, mid));
  g_assert_true(loom_grid_view_project_point(view, mid, &x, &y));
  Pixels p = read_back();
  int n = 0;
  for (int dy = -8; dy <= 8; dy++)
    for (int dx = -8; dx <= 8; dx++)
      if (found_near(&p, x + dx / (double)p.scale, y + dy / (double)p.scale, 0, r, g, b, 12)) n++;
  g_bytes_unref(p.bytes);
  return n;
}

static void test_link_values(void) {
  loom_net *net = small_net(TRUE);
  show_net(net);
  const float add[3] = {LOOM_GRID_VIEW_ADD_R, LOOM_GRID_VIEW_ADD_G, LOOM_GRID_VIEW_ADD_B};
  int plain = arc_pixels(add[0], add[1], add[2]);
  g_assert_cmpint(plain, >, 0);
  /* The largest flow: full colour, wider. */
  float flow = 5.f;
  loom_grid_view_set_link_values(view, &flow, 1);
  int full = arc_pixels(add[0], add[1], add[2]);
  g_assert_cmpint(full, >, plain + plain / 2);
  /* No flow at all: a thin, dim thread. */
  flow = 0.f;
  loom_grid_view_set_link_values(view, &flow, 1);
  g_assert_cmpint(arc_pixels(add[0], add[1], add[2]), ==, 0);
  g_assert_cmpint(arc_pixels(add[0] * 0.3f, add[1] * 0.3f, add[2] * 0.3f), >, 0);
  /* Cleared: as before. */
  loom_grid_view_set_link_values(view, NULL, 0);
  g_assert_cmpint(arc_pixels(add[0], add[1], add[2]), ==, plain);
  loom_grid_view_set_net(view, NULL);
  loom_net_free(net);
}

/* The colour map: viridis's published ends and middle (matplotlib's table
 * at 0, 128 and 255), within the interpolation's error. */
static void test_colormap(void) {
  static const struct {
    float t, rgb[3];
  } ref[] = {
    {0.f, {0.267004f, 0.004874f, 0.329415f}},
    {128.f / 255.f, {0.127568f, 0.566949f, 0.550556f}},
    {1.f, {0.993248f, 0.906157f, 0.143936f}},
  };
  for (gsize i = 0; i < G_N_ELEMENTS(ref); i++) {
    float rgb[3];
    loom_grid_colormap(ref[i].t, rgb);
    for (int c = 0; c < 3; c++) g_assert_cmpfloat(fabsf(rgb[c] - ref[i].rgb[c]), <, 2.f / 255.f);
  }
  float lo[3], nan_rgb[3], hi[3], over[3];
  loom_grid_colormap(0.f, lo);
  loom_grid_colormap(NAN, nan_rgb);
  loom_grid_colormap(1.f, hi);
  loom_grid_colormap(7.f, over);
  g_assert_true(memcmp(lo, nan_rgb, sizeof lo) == 0 && memcmp(hi, over, sizeof hi) == 0);
  /* Lightness grows along the map (what makes it read as "more"). */
  float prev = -1.f;
  for (int k = 0; k <= 64; k++) {
    float rgb[3];
    loom_grid_colormap((float)k / 64.f, rgb);
    float luma = 0.2126f * rgb[0] + 0.7152f * rgb[1] + 0.0722f * rgb[2];
    g_assert_cmpfloat(luma, >, prev);
    prev = luma;
  }
}

/* ---- framing ---- */

/* Grids (depth, rows, cols): a line of blocks, long thin ones along each
 * axis, a tall one, a cube, odd ones. */
static const int shapes[][3] = {
  {1, 1, 5}, {1, 1, 40}, {1, 40, 1}, {12, 1, 1}, {16, 16, 16}, {1, 1, 1}, {3, 7, 2}, {2, 64, 3}, {8, 2, 30},
};

/* Where the corner (i & 1, i & 2, i & 4 at the far ends) of the grid's box lies. */
static void box_corner(const int shape[3], int i, float p[3]) {
  p[0] = i & 1 ? (float)shape[2] : 0.f; /* columns along x */
  p[1] = i & 2 ? (float)shape[0] : 0.f; /* depth up y */
  p[2] = i & 4 ? (float)shape[1] : 0.f; /* rows along z */
}

/* Every corner inside the clip volume (so also between the near and far
 * planes); returns how far out the outermost one lies (1 = at an edge). */
static double assert_framed(const LoomGridCamera *cam, float w, float h, const char *what) {
  LoomMat4 m = loom_grid_camera_matrix(cam, w, h);
  int shape[3] = {cam->depth, cam->rows, cam->cols};
  double extent = 0.0;
  for (int i = 0; i < 8; i++) {
    float p[3], clip[4];
    box_corner(shape, i, p);
    for (int r = 0; r < 4; r++) clip[r] = m.m[r] * p[0] + m.m[4 + r] * p[1] + m.m[8 + r] * p[2] + m.m[12 + r];
    if (!(clip[3] > 0.f && fabsf(clip[0]) <= clip[3] && fabsf(clip[1]) <= clip[3] && fabsf(clip[2]) <= clip[3]))
      g_error("%s: %d×%d×%d grid in %.0f×%.0f: corner %d at clip (%g, %g, %g, %g) is out of view", what,
              shape[0], shape[1], shape[2], w, h, i, clip[0], clip[1], clip[2], clip[3]);
    extent = MAX(extent, MAX(fabs(clip[0] / clip[3]), fabs(clip[1] / clip[3])));
  }
  return extent;
}

/* The camera alone, for many grids, viewports and angles: the box is in
 * view and fills it (the margin and no more on its tighter side). */
static void test_framing_math(void) {
  static const float sizes[][2] = {{1600, 400}, {400, 1000}, {800, 600}, {300, 300}, {2400, 200}, {150, 900}};
  static const float poses[][2] = {
    {LOOM_GRID_CAMERA_YAW, LOOM_GRID_CAMERA_PITCH}, {0.f, 0.f}, {0.f, LOOM_GRID_CAMERA_MAX_PITCH},
    {1.571f, 0.f}, {2.5f, 0.9f}, {4.2f, 0.2f}, {5.9f, 1.3f},
  };
  for (gsize g = 0; g < G_N_ELEMENTS(shapes); g++)
    for (gsize v = 0; v < G_N_ELEMENTS(sizes); v++)
      for (gsize o = 0; o < G_N_ELEMENTS(poses); o++) {
        LoomGridCamera cam = {.depth = shapes[g][0], .rows = shapes[g][1], .cols = shapes[g][2]};
        loom_grid_camera_reset(&cam);
        cam.yaw = poses[o][0];
        cam.pitch = poses[o][1];
        loom_grid_camera_frame(&cam, sizes[v][0], sizes[v][1]);
        double extent = assert_framed(&cam, sizes[v][0], sizes[v][1], "framed");
        /* 1 / (1 + margin) when tight; a long grid seen end-on sits farther
         * back so its near end stays clear of the eye. */
        if (g_getenv("GRIDVIEW_DEBUG") && extent < 0.9)
          g_printerr("%d×%d×%d grid in %.0f×%.0f at yaw %.2f pitch %.2f fills %.0f%% of the view\n", shapes[g][0],
                     shapes[g][1], shapes[g][2], sizes[v][0], sizes[v][1], poses[o][0], poses[o][1], 100 * extent);
        if (extent < 0.6)
          g_error("%d×%d×%d grid in %.0f×%.0f at yaw %.2f pitch %.2f fills only %.0f%% of the view", shapes[g][0],
                  shapes[g][1], shapes[g][2], sizes[v][0], sizes[v][1], poses[o][0], poses[o][1], 100 * extent);
      }
}

typedef struct {
  int width, height;
} Size;

static gboolean view_has_size(gpointer data) {
  const Size *size = data;
  return gtk_widget_get_width(GTK_WIDGET(view)) == size->width &&
         gtk_widget_get_height(GTK_WIDGET(view)) == size->height;
}

static void resize_view(int width, int height) {
  /* Laid out at exactly this size in the top left corner of the window. */
  gtk_widget_set_halign(GTK_WIDGET(view), GTK_ALIGN_START);
  gtk_widget_set_valign(GTK_WIDGET(view), GTK_ALIGN_START);
  gtk_widget_set_size_request(GTK_WIDGET(view), width, height);
  Size size = {width, height};
  gui_test_wait(view_has_size, &size, TIMEOUT_MS, "the view to take its new size");
}

/* Every corner of the grid's box projects inside the widget. */
static void assert_view_framed(const int shape[3], const char *what) {
  double w = gtk_widget_get_width(GTK_WIDGET(view)), h = gtk_widget_get_height(GTK_WIDGET(view));
  for (int i = 0; i < 8; i++) {
    float p[3];
    double x, y;
    box_corner(shape, i, p);
    g_assert_true(loom_grid_view_project_point(view, p, &x, &y));
    if (x < 0 || y < 0 || x > w || y > h)
      g_error("%s: %d×%d×%d grid in a %.0f×%.0f view: corner %d at (%.1f, %.1f) is out of view", what, shape[0],
              shape[1], shape[2], w, h, i, x, y);
  }
}

static double corner_y(const int shape[3]) {
  float p[3];
  double x, y;
  box_corner(shape, 7, p);
  g_assert_true(loom_grid_view_project_point(view, p, &x, &y));
  return y;
}

/* The widget: after reset and every preset, in wide and narrow views, and
 * after a resize; once the user has moved the camera a resize leaves it. */
static void test_framing_view(void) {
  static const int sizes[][2] = {{620, 160}, {140, 460}, {400, 400}};
  static const LoomGridViewPreset presets[] = {LOOM_GRID_VIEW_PRESET_ISO, LOOM_GRID_VIEW_PRESET_FRONT,
                                               LOOM_GRID_VIEW_PRESET_TOP};
  for (gsize g = 0; g < G_N_ELEMENTS(shapes); g++) {
    loom_error err = {0};
    loom_net *net = loom_net_new(shapes[g][0], shapes[g][1], shapes[g][2], 2, &err);
    g_assert_nonnull(net);
    place(net, at(shapes[g][0] - 1, shapes[g][1] - 1, shapes[g][2] - 1, 1), "dense", LOOM_DTYPE_FLOAT32);
    loom_grid_view_set_net(view, net);
    for (gsize v = 0; v < G_N_ELEMENTS(sizes); v++) {
      resize_view(sizes[v][0], sizes[v][1]);
      loom_grid_view_reset_camera(view);
      assert_view_framed(shapes[g], "reset");
      for (gsize p = 0; p < G_N_ELEMENTS(presets); p++) {
        loom_grid_view_set_preset(view, presets[p]);
        assert_view_framed(shapes[g], "preset");
      }
    }
    /* Framed anew for the new size while the camera is where reset put it. */
    loom_grid_view_reset_camera(view);
    resize_view(sizes[1][0], sizes[1][1]);
    resize_view(sizes[0][0], sizes[1][1]);
    assert_view_framed(shapes[g], "resized after reset");
    loom_grid_view_set_net(view, NULL);
    loom_net_free(net);
  }

  /* After an orbit the camera stays as the user left it: a change of width
   * alone does not move a point up or down the view. */
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 5, 1, &err);
  const int shape[3] = {1, 1, 5};
  loom_grid_view_set_net(view, net);
  resize_view(600, 300);
  loom_grid_view_reset_camera(view);
  double framed_y = corner_y(shape);
  resize_view(200, 300);
  g_assert_cmpfloat(fabs(corner_y(shape) - framed_y), >, 1.0); /* re-framed for the narrow view */
  loom_grid_view_set_orbit(view, LOOM_GRID_CAMERA_YAW, LOOM_GRID_CAMERA_PITCH);
  double moved_y = corner_y(shape);
  resize_view(600, 300);
  g_assert_cmpfloat(fabs(corner_y(shape) - moved_y), <, 0.01);

  loom_grid_view_set_net(view, NULL);
  loom_net_free(net);
  gtk_widget_set_size_request(GTK_WIDGET(view), -1, -1);
  gtk_widget_set_halign(GTK_WIDGET(view), GTK_ALIGN_FILL);
  gtk_widget_set_valign(GTK_WIDGET(view), GTK_ALIGN_FILL);
}

int main(int argc, char **argv) {
  gui_test_init(&argc, &argv);
  window = gtk_window_new();
  gtk_window_set_default_size(GTK_WINDOW(window), 640, 480);
  view = LOOM_GRID_VIEW(loom_grid_view_new());
  gtk_window_set_child(GTK_WINDOW(window), GTK_WIDGET(view));
  gtk_window_present(GTK_WINDOW(window));

  g_test_add_func("/grid-view/pick", test_pick);
  g_test_add_func("/grid-view/selection-highlight", test_selection_highlight);
  g_test_add_func("/grid-view/color-mode", test_color_mode);
  g_test_add_func("/grid-view/link-drawn", test_link_drawn);
  g_test_add_func("/grid-view/problem-red", test_problem_red);
  g_test_add_func("/grid-view/feedback-dashed", test_feedback_dashed);
  g_test_add_func("/grid-view/export-png", test_export_png);
  g_test_add_func("/grid-view/big-net", test_big_net);
  g_test_add_func("/grid-view/colormap", test_colormap);
  g_test_add_func("/grid-view/metric-values", test_metric_values);
  g_test_add_func("/grid-view/metric-range", test_metric_range);
  g_test_add_func("/grid-view/alert-slots", test_alert_slots);
  g_test_add_func("/grid-view/link-values", test_link_values);
  g_test_add_func("/grid-view/framing-math", test_framing_math);
  g_test_add_func("/grid-view/framing-view", test_framing_view);
  int rc = g_test_run();
  gtk_window_destroy(GTK_WINDOW(window));
  return rc;
}
