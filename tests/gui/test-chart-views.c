/*
 * The other chart widgets on their own, under a display: LoomBoundaryView's
 * colours, points and its overlay on screen; LoomHistogram's counts;
 * LoomSparkline's ring; LoomTickRaster's columns and what it shows.
 */
#include <math.h>
#include <string.h>

#include "chart-test.h"
#include "loom-boundary-view.h"
#include "loom-chart-private.h"
#include "loom-histogram.h"
#include "loom-grid-scene.h"
#include "loom-sparkline.h"
#include "loom-tick-raster.h"

/* ---- LoomBoundaryView ---- */

#define RES 64

/* Two classes: class @left on the left half of the plane, the other right. */
static void halves(float *field, int left) {
  for (int r = 0; r < RES; r++)
    for (int c = 0; c < RES; c++) {
      float *p = field + ((gsize)r * RES + c) * 2;
      int cls = c < RES / 2 ? left : 1 - left;
      p[0] = cls == 0 ? 1.f : 0.f;
      p[1] = cls == 1 ? 1.f : 0.f;
    }
}

static void certain_color(int cls, float rgb[3]) {
  float col[3];
  loom_chart_class_color(cls, col);
  for (int i = 0; i < 3; i++) rgb[i] = 1 + (col[i] - 1) * (float)LOOM_BOUNDARY_CERTAIN_STRENGTH;
}

/* The field's extent in a render: the run of field colour through the middle. */
static void field_extent(const Pixels *p, const float rgb[3], int *x0, int *x1, int *y0, int *y1) {
  *x0 = *y0 = G_MAXINT;
  *x1 = *y1 = -1;
  for (int y = 0; y < p->h; y++)
    for (int x = 0; x < p->w; x++)
      if (rgb_near(p->px[(gsize)y * p->w + x], rgb, 3)) {
        *x0 = MIN(*x0, x), *x1 = MAX(*x1, x), *y0 = MIN(*y0, y), *y1 = MAX(*y1, y);
      }
  g_assert_cmpint(*x1, >, *x0);
}

static void test_boundary_field(void) {
  GtkWidget *widget = loom_boundary_view_new();
  LoomBoundaryView *view = LOOM_BOUNDARY_VIEW(widget);
  GtkWidget *window = present(widget, 300, 300);
  float *field = g_new(float, RES * RES * 2);
  halves(field, 0);
  loom_boundary_view_set_field(view, RES, RES, field, 2, -1, 1, -1, 1);
  Pixels first = download(loom_boundary_view_render_texture(view, 300, 300));
  float c0[3], c1[3];
  certain_color(0, c0);
  certain_color(1, c1);
  int lx0, lx1, ly0, ly1, rx0, rx1, ry0, ry1;
  field_extent(&first, c0, &lx0, &lx1, &ly0, &ly1);
  field_extent(&first, c1, &rx0, &rx1, &ry0, &ry1);
  g_assert_cmpint(lx1, <, rx0); /* class 0 left of class 1 */
  int mid_y = (ly0 + ly1) / 2, left_x = (lx0 + lx1) / 2, right_x = (rx0 + rx1) / 2;
  g_assert_true(rgb_near(first.px[(gsize)mid_y * first.w + left_x], c0, 3));
  g_assert_true(rgb_near(first.px[(gsize)mid_y * first.w + right_x], c1, 3));

  /* A new field gives a new picture: the classes swap sides. */
  halves(field, 1);
  loom_boundary_view_set_field(view, RES, RES, field, 2, -1, 1, -1, 1);
  Pixels swapped = download(loom_boundary_view_render_texture(view, 300, 300));
  g_assert_cmpuint(count_different(&first, &swapped), >, 10000);
  g_assert_true(rgb_near(swapped.px[(gsize)mid_y * swapped.w + left_x], c1, 3));
  g_assert_true(rgb_near(swapped.px[(gsize)mid_y * swapped.w + right_x], c0, 3));

  /* Uncertain predictions are paler than certain ones. */
  for (int i = 0; i < RES * RES; i++) field[2 * i] = 0.55f, field[2 * i + 1] = 0.45f;
  loom_boundary_view_set_field(view, RES, RES, field, 2, -1, 1, -1, 1);
  Pixels pale = download(loom_boundary_view_render_texture(view, 300, 300));
  guint32 p = pale.px[(gsize)mid_y * pale.w + left_x];
  int sum_pale = ((p >> 16) & 0xff) + ((p >> 8) & 0xff) + (p & 0xff);
  g_assert_cmpint(sum_pale, >, (int)lrintf((c0[0] + c0[1] + c0[2]) * 255) + 60);

  /* Points: a filled training point of class 2 shows its colour at its
   * centre; a hollow test point leaves the field visible there. */
  halves(field, 0);
  loom_boundary_view_set_field(view, RES, RES, field, 2, -1, 1, -1, 1);
  float xy[] = {-0.5f, 0.5f}, cls[] = {2};
  loom_boundary_view_set_points(view, xy, cls, 1, FALSE);
  float txy[] = {-0.5f, -0.5f}, tcls[] = {2};
  loom_boundary_view_set_points(view, txy, tcls, 1, TRUE);
  Pixels points = download(loom_boundary_view_render_texture(view, 300, 300));
  double fw = rx1 - lx0 + 1, fh = ly1 - ly0 + 1;
  int px = (int)lrint(lx0 + 0.25 * fw), py_train = (int)lrint(ly0 + 0.25 * fh), py_test = (int)lrint(ly0 + 0.75 * fh);
  float c2[3];
  loom_chart_class_color(2, c2);
  g_assert_true(rgb_near(points.px[(gsize)py_train * points.w + px], c2, 8));
  g_assert_true(rgb_near(points.px[(gsize)py_test * points.w + px], c0, 8));
  g_assert_false(rgb_near(points.px[(gsize)(py_test - 3) * points.w + px], c0, 8)); /* the ring */

  /* Regression: one channel on the diverging map, low blue left, high red right. */
  for (int r = 0; r < RES; r++)
    for (int c = 0; c < RES; c++) field[r * RES + c] = (float)c;
  g_object_set(view, "mode", LOOM_BOUNDARY_MODE_REGRESSION, NULL);
  loom_boundary_view_set_field(view, RES, RES, field, 1, -1, 1, -1, 1);
  Pixels reg = download(loom_boundary_view_render_texture(view, 300, 300));
  guint32 lo = reg.px[(gsize)mid_y * reg.w + lx0 + 2], hi = reg.px[(gsize)mid_y * reg.w + rx1 - 2];
  g_assert_cmpint(lo & 0xff, >, (lo >> 16) & 0xff);   /* blue > red */
  g_assert_cmpint((hi >> 16) & 0xff, >, hi & 0xff);   /* red > blue */

  /* The on-screen path (a texture node) draws without complaint. */
  gui_test_spin(100);
  g_free(first.px);
  g_free(swapped.px);
  g_free(pale.px);
  g_free(points.px);
  g_free(reg.px);
  g_free(field);
  gtk_window_destroy(GTK_WINDOW(window));
}


/* The overlay (axes and points) is kept while only the field changes, and
 * drawn again when the points change. */
static void test_boundary_overlay_on_screen(void) {
  GtkWidget *widget = loom_boundary_view_new();
  LoomBoundaryView *view = LOOM_BOUNDARY_VIEW(widget);
  GtkWidget *window = present(widget, 300, 300);
  float *field = g_new(float, RES * RES * 2);
  halves(field, 0);
  loom_boundary_view_set_field(view, RES, RES, field, 2, -1, 1, -1, 1);
  float xy[] = {-0.5f, 0.5f}, cls[] = {2};
  loom_boundary_view_set_points(view, xy, cls, 1, FALSE);
  Pixels a = on_screen(widget, window);
  float c0[3], c1[3], c2[3];
  certain_color(0, c0);
  certain_color(1, c1);
  loom_chart_class_color(2, c2);
  int lx0, lx1, ly0, ly1;
  field_extent(&a, c0, &lx0, &lx1, &ly0, &ly1);
  /* class 0 fills the left half: the frame is twice its width */
  double fw = 2.0 * (lx1 - lx0 + 1), fh = ly1 - ly0 + 1;
  int px = (int)lrint(lx0 + 0.25 * fw), py = (int)lrint(ly0 + 0.25 * fh);
  g_assert_true(rgb_near(a.px[(gsize)py * a.w + px], c2, 8));

  /* A new field: the classes swap, the point stays on top of it. */
  halves(field, 1);
  loom_boundary_view_set_field(view, RES, RES, field, 2, -1, 1, -1, 1);
  Pixels b = on_screen(widget, window);
  g_assert_true(rgb_near(b.px[(gsize)py * b.w + px], c2, 8));
  g_assert_true(rgb_near(b.px[(gsize)py * b.w + px + 20], c1, 3));

  /* The point moves: the old place shows the field, the new one the point. */
  float moved[] = {-0.5f, -0.5f};
  loom_boundary_view_set_points(view, moved, cls, 1, FALSE);
  Pixels c = on_screen(widget, window);
  int py2 = (int)lrint(ly0 + 0.75 * fh);
  g_assert_true(rgb_near(c.px[(gsize)py * c.w + px], c1, 3));
  g_assert_true(rgb_near(c.px[(gsize)py2 * c.w + px], c2, 8));
  g_free(a.px);
  g_free(b.px);
  g_free(c.px);
  g_free(field);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* ---- LoomHistogram and LoomSparkline ---- */

static void test_histogram_counts(void) {
  LoomHistogram *h = LOOM_HISTOGRAM(g_object_ref_sink(loom_histogram_new()));
  float v[] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, NAN, INFINITY, -INFINITY};
  loom_histogram_set_values(h, v, G_N_ELEMENTS(v), 5);
  gsize n_bins;
  const guint64 *counts = loom_histogram_get_bin_counts(h, &n_bins);
  g_assert_cmpuint(n_bins, ==, 5);
  guint64 want[] = {2, 2, 2, 2, 3};
  for (int i = 0; i < 5; i++) g_assert_cmpuint(counts[i], ==, want[i]);
  guint64 n_nan, n_inf;
  loom_histogram_get_nonfinite(h, &n_nan, &n_inf);
  g_assert_cmpuint(n_nan, ==, 1);
  g_assert_cmpuint(n_inf, ==, 2);
  double lo, hi;
  g_assert_true(loom_histogram_get_range(h, &lo, &hi));
  g_assert_cmpfloat(lo, ==, 0);
  g_assert_cmpfloat(hi, ==, 10);

  /* All equal: one value's width around it, the value in the middle bin. */
  float same[] = {3, 3, 3};
  loom_histogram_set_values(h, same, 3, 4);
  counts = loom_histogram_get_bin_counts(h, &n_bins);
  g_assert_cmpuint(counts[2], ==, 3);

  /* Many values against a plain count. */
  GRand *rand = g_rand_new_with_seed(5);
  float *many = g_new(float, 100000);
  for (int i = 0; i < 100000; i++) many[i] = (float)g_rand_int_range(rand, -50, 50);
  loom_histogram_set_values(h, many, 100000, 99);
  counts = loom_histogram_get_bin_counts(h, &n_bins);
  g_assert_true(loom_histogram_get_range(h, &lo, &hi));
  guint64 total = 0;
  for (gsize b = 0; b < n_bins; b++) {
    guint64 expect = 0;
    for (int i = 0; i < 100000; i++) {
      /* Integers -50..49 over 99 bins of width 1: value k in bin k + 50, 49 joins 48's bin. */
      int k = (int)many[i] + 50;
      expect += (gsize)MIN(k, 98) == b;
    }
    g_assert_cmpuint(counts[b], ==, expect);
    total += counts[b];
  }
  g_assert_cmpuint(total, ==, 100000);

  loom_histogram_set_values(h, NULL, 0, 8);
  g_assert_false(loom_histogram_get_range(h, &lo, &hi));
  g_assert_true(isnan(lo));
  g_free(many);
  g_rand_free(rand);
  g_object_unref(h);
}

static void test_sparkline(void) {
  GtkWidget *widget = loom_sparkline_new();
  LoomSparkline *s = LOOM_SPARKLINE(widget);
  guint capacity;
  g_object_get(s, "capacity", &capacity, NULL);
  g_assert_cmpuint(capacity, ==, 120);
  g_object_set(s, "capacity", 5, "show-value", TRUE, NULL);
  for (int i = 1; i <= 8; i++) loom_sparkline_push(s, i);
  g_assert_cmpuint(loom_sparkline_get_n_values(s), ==, 5);
  for (guint i = 0; i < 5; i++) g_assert_cmpfloat(loom_sparkline_get_value(s, i), ==, 4.0 + i);
  g_object_set(s, "capacity", 3, NULL);
  g_assert_cmpuint(loom_sparkline_get_n_values(s), ==, 3);
  for (guint i = 0; i < 3; i++) g_assert_cmpfloat(loom_sparkline_get_value(s, i), ==, 6.0 + i);
  /* Values in bulk: as many single pushes, in a ring partly full, then more than it holds. */
  const double few[2] = {10, 11}, many[7] = {20, 21, 22, 23, 24, 25, 26};
  loom_sparkline_push_values(s, few, 2);
  g_assert_cmpuint(loom_sparkline_get_n_values(s), ==, 3);
  g_assert_cmpfloat(loom_sparkline_get_value(s, 0), ==, 8.0);
  g_assert_cmpfloat(loom_sparkline_get_value(s, 2), ==, 11.0);
  loom_sparkline_push_values(s, many, 7);
  for (guint i = 0; i < 3; i++) g_assert_cmpfloat(loom_sparkline_get_value(s, i), ==, 24.0 + i);
  loom_sparkline_push_values(s, NULL, 0);
  g_assert_cmpuint(loom_sparkline_get_n_values(s), ==, 3);
  loom_sparkline_push(s, NAN);
  GtkWidget *window = present(widget, 200, 30);
  gui_test_spin(100);
  loom_sparkline_clear(s);
  g_assert_cmpuint(loom_sparkline_get_n_values(s), ==, 0);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* ---- LoomTickRaster ---- */

/* The ring keeps the newest columns, the colour scale's top follows the
 * kept ones, and on screen each row's newest cell (at the right edge) has
 * the colour of its value, the cells before the first tick none. */
static void test_tick_raster(void) {
  GtkWidget *widget = loom_tick_raster_new();
  LoomTickRaster *r = LOOM_TICK_RASTER(widget);
  const char *const labels[3] = {"(0,0,0,0) dense", "(0,0,1,0) relu", "(0,0,2,0) dense"};
  loom_tick_raster_set_rows(r, labels, 3);
  g_assert_cmpint(loom_tick_raster_get_n_rows(r), ==, 3);
  g_assert_cmpint(loom_tick_raster_get_n_columns(r), ==, 0);
  g_assert_true(isnan(loom_tick_raster_get_value(r, 0, 0)));
  /* A wave: slot k lights up at tick k + 1; the first tick is the largest. */
  for (int t = 1; t <= 3; t++) {
    float v[3];
    for (int k = 0; k < 3; k++) v[k] = k + 1 <= t ? (t == 1 ? 8.0f : (float)(k + 1)) : 0.0f;
    loom_tick_raster_push(r, t, v, 3);
  }
  g_assert_cmpint(loom_tick_raster_get_n_columns(r), ==, 3);
  g_assert_cmpfloat(loom_tick_raster_get_value(r, 2, 0), ==, 3.0f); /* the newest column */
  g_assert_cmpfloat(loom_tick_raster_get_value(r, 0, 2), ==, 8.0f); /* the oldest */
  g_assert_cmpfloat(loom_tick_raster_get_max(r), ==, 8.0f);
  /* Not a value: NaN and negatives are kept as none. */
  const float odd[3] = {NAN, -1.0f, 2.0f};
  loom_tick_raster_push(r, 4, odd, 3);
  g_assert_true(isnan(loom_tick_raster_get_value(r, 0, 0)));
  g_assert_true(isnan(loom_tick_raster_get_value(r, 1, 0)));
  /* A column of another length is refused, nothing kept. */
  g_test_expect_message(NULL, G_LOG_LEVEL_WARNING, "*a column of 2 values refused*");
  loom_tick_raster_push(r, 5, odd, 2);
  g_test_assert_expected_messages();
  g_assert_cmpint(loom_tick_raster_get_n_columns(r), ==, 4);
  /* Past the ring: the oldest go, the large first tick with them. */
  for (int t = 5; t < 5 + LOOM_TICK_RASTER_MAX_COLUMNS; t++) {
    const float v[3] = {1.0f, 2.0f, (float)(t % 3)};
    loom_tick_raster_push(r, t, v, 3);
  }
  g_assert_cmpint(loom_tick_raster_get_n_columns(r), ==, LOOM_TICK_RASTER_MAX_COLUMNS);
  g_assert_cmpfloat(loom_tick_raster_get_max(r), ==, 2.0f);
  g_assert_cmpfloat(loom_tick_raster_get_value(r, 2, 0), ==, (float)((4 + LOOM_TICK_RASTER_MAX_COLUMNS) % 3));

  /* On screen: the newest cell of each row (right edge, the row's middle). */
  loom_tick_raster_clear(r);
  const float first[3] = {4.0f, 0.0f, 1.0f};
  loom_tick_raster_push(r, 1, first, 3);
  GtkWidget *window = present(widget, 400, 200);
  gui_test_spin(100);
  Pixels p = on_screen(widget, window);
  int found = 0;
  for (int row = 0; row < 3; row++) {
    /* The widget says which pixels are the row's newest cell. */
    gboolean hit = FALSE;
    for (int y = 0; y < p.h && !hit; y++)
      for (int x = p.w - 1; x >= 0 && !hit; x--) {
        int cr, age;
        if (!loom_tick_raster_cell_at(r, x + 0.5, y + 0.5, &cr, &age) || cr != row || age != 0) continue;
        /* the cell's middle, well inside it */
        int y1 = y;
        while (y1 + 1 < p.h && loom_tick_raster_cell_at(r, x + 0.5, y1 + 1.5, &cr, &age) && cr == row) y1++;
        const int cy = (y + y1) / 2, cx = x - 2;
        float rgb[3];
        loom_grid_colormap(first[row] / 4.0f, rgb);
        g_assert_true(rgb_near(p.px[cy * p.w + cx], rgb, 3));
        hit = TRUE;
        found++;
      }
  }
  g_assert_cmpint(found, ==, 3);
  /* Left of the only column there is none: not a cell. */
  int row, age;
  g_assert_false(loom_tick_raster_cell_at(r, 60, p.h / 2.0, &row, &age));
  g_free(p.px);
  loom_tick_raster_set_rows(r, NULL, 0);
  g_assert_cmpint(loom_tick_raster_get_n_rows(r), ==, 0);
  gui_test_spin(50);
  gtk_window_destroy(GTK_WINDOW(window));
}

int main(int argc, char **argv) {
  gui_test_init(&argc, &argv);
  g_test_add_func("/charts/boundary/field", test_boundary_field);
  g_test_add_func("/charts/boundary/overlay-on-screen", test_boundary_overlay_on_screen);
  g_test_add_func("/charts/histogram/counts", test_histogram_counts);
  g_test_add_func("/charts/sparkline", test_sparkline);
  g_test_add_func("/charts/tick-raster", test_tick_raster);
  return g_test_run();
}
