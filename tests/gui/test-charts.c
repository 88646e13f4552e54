/*
 * LoomPlot on its own, under a display: decimation (bounded vertices at
 * 10^6 points, extremes kept, exact per column, extended as points
 * arrive), the dense band, smoothing, log axis, read-out, markers, exports,
 * the chrome kept on screen; and the charts' number labels.
 */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "chart-test.h"
#include "loom-chart-private.h"
#include "loom-histogram.h"
#include "loom-plot-private.h"

static gboolean plot_drawn(gpointer data) {
  return loom_plot_get_drawn_vertices(data) > 0;
}

/* ---- LoomPlot ---- */

#define MILLION 1000000

static void test_plot_million_points(void) {
  GtkWidget *widget = loom_plot_new();
  LoomPlot *plot = LOOM_PLOT(widget);
  GtkWidget *window = present(widget, 800, 400);
  int a = loom_plot_add_series(plot, "loss", NULL, FALSE);
  int b = loom_plot_add_series(plot, "val", NULL, TRUE);
  double *x = g_new(double, MILLION), *y = g_new(double, MILLION);
  GRand *rand = g_rand_new_with_seed(7);
  for (gsize i = 0; i < MILLION; i++) {
    x[i] = (double)i;
    y[i] = 1.0 + 0.1 * g_rand_double(rand);
  }
  /* One spike up and one down, each a single point among 10^6. */
  y[654321] = 1000.0;
  y[123457] = -500.0;
  loom_plot_append_many(plot, a, x, y, MILLION);
  for (gsize i = 0; i < MILLION; i++) y[i] = 2.0 + 0.1 * g_rand_double(rand);
  loom_plot_append_many(plot, b, x, y, MILLION);
  g_assert_cmpuint(loom_plot_get_n_points(plot, a), ==, MILLION);
  gui_test_wait(plot_drawn, plot, 10000, "the plot to draw");

  /* At most first, min, max and last per pixel column and series. */
  gsize bound = 2 * 4 * (gsize)ceil(plot->frame.fw);
  gsize drawn = loom_plot_get_drawn_vertices(plot);
  g_assert_cmpuint(drawn, <=, bound);
  g_assert_cmpuint(drawn, >, 2 * (gsize)plot->frame.fw); /* every column has points */
  gsize n;
  const double *line = loom_plot_get_drawn_line(plot, a, &n);
  gboolean up = FALSE, down = FALSE;
  for (gsize i = 0; i < n; i++) {
    up |= line[2 * i] == 654321.0 && line[2 * i + 1] == 1000.0;
    down |= line[2 * i] == 123457.0 && line[2 * i + 1] == -500.0;
  }
  g_assert_true(up);
  g_assert_true(down);
  /* The first and last points are vertices too. */
  g_assert_cmpfloat(line[0], ==, 0.0);
  g_assert_cmpfloat(line[2 * (n - 1)], ==, (double)(MILLION - 1));

  /* Appending keeps the cost bounded; the new point is drawn. */
  loom_plot_append(plot, a, (double)MILLION, 5.0);
  plot->drawn_vertices = 0;
  gui_test_wait(plot_drawn, plot, 10000, "the plot to redraw");
  g_assert_cmpuint(loom_plot_get_drawn_vertices(plot), <=, bound);
  line = loom_plot_get_drawn_line(plot, a, &n);
  g_assert_cmpfloat(line[2 * (n - 1)], ==, (double)MILLION);
  g_assert_cmpfloat(line[2 * (n - 1) + 1], ==, 5.0);

  g_rand_free(rand);
  g_free(x);
  g_free(y);
  gtk_window_destroy(GTK_WINDOW(window));
}

/* The decimated line against a brute-force scan: per column exactly the
 * first, lowest, highest and last point, for sorted x with repeats and
 * gaps, on a linear and a log axis; unsorted x keeps every extreme. */
static void check_columns(LoomPlotSeries *s, int width, gboolean log_scale) {
  gsize n = s->x.len;
  const double *x = (const double *)s->x.data, *y = (const double *)s->raw.y.data;
  double x0 = x[0], x1 = x[n - 1];
  const GArray *line = loom_plot_series_line(s, 0, x0, x1, width, log_scale);
  const double *v = (const double *)line->data;
  gsize k = 0, i = 0;
  for (int c = 0; c < width; c++) {
    double edge = x0 + (x1 - x0) * (double)(c + 1) / width;
    gsize start = i;
    while (i < n && (c == width - 1 || x[i] < edge)) i++;
    if (i == start) continue;
    gsize imin = G_MAXSIZE, imax = G_MAXSIZE;
    for (gsize j = start; j < i; j++) {
      if (!isfinite(y[j]) || (log_scale && !(y[j] > 0))) continue;
      if (imin == G_MAXSIZE || y[j] < y[imin]) imin = j;
      if (imax == G_MAXSIZE || y[j] > y[imax]) imax = j;
    }
    gsize want[4] = {start, MIN(imin, imax), MAX(imin, imax), i - 1};
    gsize last = G_MAXSIZE;
    for (int q = 0; q < 4; q++) {
      gsize j = want[q];
      if (j == G_MAXSIZE || j == last || !isfinite(y[j]) || (log_scale && !(y[j] > 0))) continue;
      last = j;
      g_assert_cmpuint(k, <, line->len / 2);
      g_assert_cmpfloat(v[2 * k], ==, x[j]);
      g_assert_cmpfloat(v[2 * k + 1], ==, y[j]);
      k++;
    }
  }
  g_assert_cmpuint(k, ==, line->len / 2);
}

static void test_plot_decimation_exact(void) {
  GdkRGBA c = {0, 0, 0, 1};
  LoomPlotSeries *s = loom_plot_series_new("s", &c, FALSE);
  GRand *rand = g_rand_new_with_seed(11);
  double x = 0;
  for (int i = 0; i < 100003; i++) {
    x += g_rand_int_range(rand, 0, 4) == 0 ? 0 : g_rand_double_range(rand, 0, 2); /* repeats and gaps */
    double y = g_rand_double_range(rand, -1, 3);
    if (i % 1000 == 17) y = NAN;
    g_assert_true(loom_plot_series_append(s, x, y, 0));
  }
  check_columns(s, 97, FALSE);
  check_columns(s, 97, TRUE);
  check_columns(s, 1, FALSE);
  check_columns(s, 640, FALSE);

  /* Appending under an unchanged view extends the cached vertices from the
   * last column on; they must equal a computation from scratch, on the raw
   * and the smoothed track, on a linear and a log axis. */
  for (int log_axis = 0; log_axis < 2; log_axis++) {
    loom_plot_series_clear(s);
    loom_plot_series_resmooth(s, 0.9);
    x = 0;
    for (int chunk = 0; chunk < 60; chunk++) {
      for (int i = 0; i < 1700 + chunk * 37; i++) {
        x += g_rand_int_range(rand, 0, 4) == 0 ? 0 : g_rand_double_range(rand, 0, 2);
        double y = g_rand_double_range(rand, -1, 3);
        if (i % 997 == 5) y = NAN;
        g_assert_true(loom_plot_series_append(s, x, y, 0.9));
      }
      for (int track = 0; track < 2; track++) {
        const GArray *kept = loom_plot_series_line(s, track, 0, 200000, 331, log_axis);
        g_assert_true(chunk < 2 || s->line_key[track].by_columns);
        GArray *copy = g_array_copy((GArray *)kept);
        s->line_key[track].valid = FALSE;
        const GArray *fresh = loom_plot_series_line(s, track, 0, 200000, 331, log_axis);
        g_assert_cmpuint(copy->len, ==, fresh->len);
        g_assert_cmpmem(copy->data, copy->len * sizeof(double), fresh->data, fresh->len * sizeof(double));
        g_array_unref(copy);
      }
    }
  }
  g_assert_cmpfloat(x, <, 200000);

  /* x going back: every extreme still reaches the line. */
  loom_plot_series_clear(s);
  for (int i = 0; i < 50000; i++) loom_plot_series_append(s, (double)((i * 7919) % 50000), (double)(i % 100), 0);
  loom_plot_series_append(s, 3.0, 1e6, 0);
  g_assert_false(s->sorted);
  const GArray *line = loom_plot_series_line(s, 0, 0, 49999, 200, FALSE);
  g_assert_cmpuint(line->len / 2, <=, 200 * 2 * 4);
  gboolean spike = FALSE;
  for (guint i = 0; i < line->len / 2; i++) spike |= g_array_index(line, double, 2 * i + 1) == 1e6;
  g_assert_true(spike);
  g_rand_free(rand);
  loom_plot_series_free(s);
}

/* A dense line is filled as a band (loom-plot-draw.c): a single spike
 * among 200,000 points still reaches its pixel, in the series' colour. */
static void test_plot_dense_band(void) {
  GtkWidget *widget = loom_plot_new();
  LoomPlot *plot = LOOM_PLOT(widget);
  GtkWidget *window = present(widget, 600, 300);
  GdkRGBA red = {1, 0, 0, 1};
  int a = loom_plot_add_series(plot, "loss", &red, FALSE);
  enum { N = 200000, SPIKE = 137911 };
  double *x = g_new(double, N), *y = g_new(double, N);
  GRand *rand = g_rand_new_with_seed(3);
  for (gsize i = 0; i < N; i++) {
    x[i] = (double)i;
    y[i] = 1.0 + 0.05 * g_rand_double(rand);
  }
  y[SPIKE] = 3.0;
  loom_plot_append_many(plot, a, x, y, N);
  Pixels px = download(loom_plot_render_texture(plot, 600, 300));
  LoomPlotFrame f;
  loom_plot_layout(plot, 600, 300, &f);
  int col = (int)floor(f.fx + (SPIKE - f.x0) / (f.x1 - f.x0) * f.fw);
  int row = (int)lrint(f.fy + f.fh - (3.0 - f.y0) / (f.y1 - f.y0) * f.fh);
  const float rgb[3] = {1, 0, 0};
  /* the spike's own column is red at the spike's height; columns away from it are not */
  gboolean hit = FALSE;
  for (int c = col - 1; c <= col + 1; c++) hit |= rgb_near(px.px[(gsize)row * px.w + c], rgb, 40);
  g_assert_true(hit);
  g_assert_false(rgb_near(px.px[(gsize)row * px.w + col - 30], rgb, 40));
  g_assert_false(rgb_near(px.px[(gsize)row * px.w + col + 30], rgb, 40));
  /* and the band itself: red at the noise's height everywhere */
  int noise_row = (int)lrint(f.fy + f.fh - (1.025 - f.y0) / (f.y1 - f.y0) * f.fh);
  for (int c = (int)f.fx + 2; c < (int)(f.fx + f.fw) - 2; c += 7)
    g_assert_true(rgb_near(px.px[(gsize)noise_row * px.w + c], rgb, 40));
  g_rand_free(rand);
  g_free(px.px);
  g_free(x);
  g_free(y);
  gtk_window_destroy(GTK_WINDOW(window));
}

static void test_plot_smoothing_and_log(void) {
  LoomPlot *plot = LOOM_PLOT(g_object_ref_sink(loom_plot_new()));
  int id = loom_plot_add_series(plot, "loss", NULL, FALSE);
  GRand *rand = g_rand_new_with_seed(3);
  for (int i = 0; i < 2000; i++) loom_plot_append(plot, id, i, pow(10, -3.0 * i / 2000) * (0.5 + g_rand_double(rand)));
  Pixels base = download(loom_plot_render_texture(plot, 400, 300));
  Pixels again = download(loom_plot_render_texture(plot, 400, 300));
  g_assert_cmpuint(count_different(&base, &again), ==, 0); /* deterministic */

  g_object_set(plot, "smoothing", 0.9, NULL);
  Pixels smooth = download(loom_plot_render_texture(plot, 400, 300));
  g_assert_cmpuint(count_different(&base, &smooth), >, 500);
  g_object_set(plot, "smoothing", 0.0, NULL);
  Pixels back = download(loom_plot_render_texture(plot, 400, 300));
  g_assert_cmpuint(count_different(&base, &back), ==, 0);

  g_object_set(plot, "log-scale", TRUE, NULL);
  Pixels log_px = download(loom_plot_render_texture(plot, 400, 300));
  g_assert_cmpuint(count_different(&base, &log_px), >, 500);

  /* TensorBoard's debiased EMA: 1, 2, 3 at w = 0.5. */
  loom_plot_clear(plot);
  g_assert_cmpint(loom_plot_get_n_series(plot), ==, 1);
  g_object_set(plot, "log-scale", FALSE, "smoothing", 0.5, NULL);
  loom_plot_append(plot, id, 0, 1);
  loom_plot_append(plot, id, 1, 2);
  loom_plot_append(plot, id, 2, 3);
  const LoomPlotSeries *s = g_ptr_array_index(plot->series, id);
  const double *sm = (const double *)s->smooth.y.data;
  g_assert_cmpfloat_with_epsilon(sm[0], 1.0, 1e-12);
  g_assert_cmpfloat_with_epsilon(sm[1], 1.25 / 0.75, 1e-12);
  g_assert_cmpfloat_with_epsilon(sm[2], 2.125 / 0.875, 1e-12);

  /* A log axis skips values <= 0 (and says so in the read-out). */
  g_object_set(plot, "smoothing", 0.0, "log-scale", TRUE, NULL);
  loom_plot_clear(plot);
  double xs[] = {0, 1, 2, 3, 4}, ys[] = {-1, 0, 1, 10, 100};
  loom_plot_append_many(plot, id, xs, ys, 5);
  Pixels drawn = download(loom_plot_render_texture(plot, 300, 200));
  g_free(drawn.px);
  gsize n;
  const double *line = loom_plot_get_drawn_line(plot, id, &n);
  g_assert_cmpuint(n, ==, 3);
  g_assert_cmpfloat(line[1], ==, 1.0);
  g_assert_cmpuint(s->raw.n_nonpos, ==, 2);

  /* Fixed y range: the property round-trips, NaN is automatic. */
  double lo;
  g_object_get(plot, "y-min", &lo, NULL);
  g_assert_true(isnan(lo));
  g_object_set(plot, "y-min", 0.5, "y-max", 50.0, NULL);
  g_object_get(plot, "y-min", &lo, NULL);
  g_assert_cmpfloat(lo, ==, 0.5);

  g_free(base.px);
  g_free(again.px);
  g_free(smooth.px);
  g_free(back.px);
  g_free(log_px.px);
  g_rand_free(rand);
  g_object_unref(plot);
}

static void test_plot_readout(void) {
  GtkWidget *widget = loom_plot_new();
  LoomPlot *plot = LOOM_PLOT(widget);
  GtkWidget *window = present(widget, 600, 300);
  g_object_set(plot, "title", "Training", "x-label", "step", "y-label", "loss", NULL);
  int a = loom_plot_add_series(plot, "a", NULL, FALSE);
  int b = loom_plot_add_series(plot, "b", NULL, FALSE);
  for (int i = 0; i < 100; i++) loom_plot_append(plot, a, i, 2.0 * i);
  for (int i = 0; i < 100; i += 10) loom_plot_append(plot, b, i, -i);
  gui_test_wait(plot_drawn, plot, 5000, "the plot to draw");
  const LoomPlotFrame *f = &plot->frame;
  double px = f->fx + (42.3 - f->x0) / (f->x1 - f->x0) * f->fw;
  double x, values[3];
  g_assert_true(loom_plot_get_readout(plot, px, &x, values, 3));
  g_assert_cmpfloat(x, ==, 42.0);
  g_assert_cmpfloat(values[0], ==, 84.0);
  g_assert_cmpfloat(values[1], ==, -40.0); /* b's point nearest to x = 42 */
  g_assert_true(isnan(values[2]));         /* no such series */
  g_assert_false(loom_plot_get_readout(plot, f->fx - 2, &x, values, 2));
  g_assert_false(loom_plot_get_readout(plot, f->fx + f->fw + 2, &x, values, 2));

  /* The read-out box drawn under the pointer changes the picture. */
  Pixels plain = download(loom_plot_render_texture(plot, 600, 300));
  plot->hover_x = px;
  LoomPlotFrame frame;
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 600, 300);
  cairo_t *cr = cairo_create(surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  GdkRGBA fg = {0.1, 0.1, 0.1, 1};
  loom_plot_draw(plot, cr, 600, 300, &fg, px, &frame, LOOM_PLOT_PART_ALL);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  const guint32 *hover = (const guint32 *)cairo_image_surface_get_data(surface);
  gsize differ = 0;
  for (gsize i = 0; i < 600 * 300; i++) differ += hover[i] != plain.px[i];
  g_assert_cmpuint(differ, >, 200);
  cairo_surface_destroy(surface);
  g_free(plain.px);

  /* The accessible summary names the latest values. */
  g_autofree char *summary = loom_plot_summary(plot);
  g_assert_nonnull(strstr(summary, "Training"));
  g_assert_nonnull(strstr(summary, "a 198 at 99"));
  gtk_window_destroy(GTK_WINDOW(window));
}

static void test_plot_markers(void) {
  LoomPlot *plot = LOOM_PLOT(g_object_ref_sink(loom_plot_new()));
  int id = loom_plot_add_series(plot, "loss", NULL, FALSE);
  for (int i = 0; i < 100; i++) loom_plot_append(plot, id, i, 1.0 / (1 + i));
  Pixels before = download(loom_plot_render_texture(plot, 400, 300));
  loom_plot_add_marker(plot, 30, LOOM_PLOT_MARKER_EXPLOSION, NULL);
  loom_plot_add_marker(plot, 60, LOOM_PLOT_MARKER_RESTART, "seed 2");
  g_assert_cmpuint(loom_plot_get_n_markers(plot), ==, 2);
  Pixels after = download(loom_plot_render_texture(plot, 400, 300));
  g_assert_cmpuint(count_different(&before, &after), >, 100);
  loom_plot_clear(plot);
  g_assert_cmpuint(loom_plot_get_n_markers(plot), ==, 0);
  g_assert_cmpuint(loom_plot_get_n_points(plot, id), ==, 0);
  g_assert_cmpint(loom_plot_get_n_series(plot), ==, 1);
  g_free(before.px);
  g_free(after.px);
  g_object_unref(plot);
}

/* Title and legend share a row where both fit, and take two where not. */
static void test_plot_title_beside_legend(void) {
  LoomPlot *plot = LOOM_PLOT(g_object_ref_sink(loom_plot_new()));
  loom_plot_add_series(plot, "Train", NULL, FALSE);
  loom_plot_add_series(plot, "Test", NULL, TRUE);
  g_object_set(plot, "title", "Loss", NULL);
  LoomPlotFrame shared, apart, none;
  loom_plot_layout(plot, 400, 300, &shared);
  g_object_set(plot, "title", "A title much too long to share its row with the legend of two series", NULL);
  loom_plot_layout(plot, 400, 300, &apart);
  g_object_set(plot, "title", "", NULL);
  loom_plot_layout(plot, 400, 300, &none);
  int th;
  loom_chart_text_size(GTK_WIDGET(plot), "0", NULL, &th);
  g_assert_cmpfloat(shared.fy, ==, none.fy);
  g_assert_cmpfloat(apart.fy, >=, shared.fy + th);
  g_assert_cmpfloat(shared.fh, >, apart.fh);
  g_object_unref(plot);
}

/* In a small plot the axes' names give their room to the data; in a large
 * one they keep it. */
static void test_plot_labels_give_way(void) {
  LoomPlot *plot = LOOM_PLOT(g_object_ref_sink(loom_plot_new()));
  int id = loom_plot_add_series(plot, "Train", NULL, FALSE);
  for (int i = 0; i < 100; i++) loom_plot_append(plot, id, i, 1.0 / (1 + i));
  g_object_set(plot, "title", "Loss", NULL);
  LoomPlotFrame bare_small, bare_large, named_small, named_large;
  loom_plot_layout(plot, 160, 110, &bare_small);
  loom_plot_layout(plot, 600, 300, &bare_large);
  g_object_set(plot, "x-label", "Step", "y-label", "Loss", NULL);
  loom_plot_layout(plot, 160, 110, &named_small);
  loom_plot_layout(plot, 600, 300, &named_large);
  g_assert_cmpfloat(named_small.fh, ==, bare_small.fh);
  g_assert_cmpfloat(named_small.fw, ==, bare_small.fw);
  g_assert_cmpfloat(named_large.fh, <, bare_large.fh);
  g_assert_cmpfloat(named_large.fw, <, bare_large.fw);
  g_object_unref(plot);
}

/* Draws plot at 400 × 300 on white; *frame gets the plot's frame. */
static guint32 *draw_white(LoomPlot *plot, LoomPlotFrame *frame) {
  cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 400, 300);
  cairo_t *cr = cairo_create(surface);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  GdkRGBA fg = {0.1, 0.1, 0.1, 1};
  loom_plot_draw(plot, cr, 400, 300, &fg, NAN, frame, LOOM_PLOT_PART_ALL);
  cairo_destroy(cr);
  cairo_surface_flush(surface);
  guint32 *px = g_memdup2(cairo_image_surface_get_data(surface), 400 * 300 * 4);
  cairo_surface_destroy(surface);
  return px;
}

/* A marker at the newest step has its label left of its line: drawn to the
 * right it ran past the frame and was cut off at the widget's edge. */
static void test_plot_marker_label_at_edge(void) {
  LoomPlot *plot = LOOM_PLOT(g_object_ref_sink(loom_plot_new()));
  int id = loom_plot_add_series(plot, "loss", NULL, FALSE);
  for (int i = 0; i < 100; i++) loom_plot_append(plot, id, i, 1.0 / (1 + i));
  LoomPlotFrame f;
  g_autofree guint32 *before = draw_white(plot, &f);
  loom_plot_add_marker(plot, 99, LOOM_PLOT_MARKER_RESTART, "Training restarted");
  g_autofree guint32 *after = draw_white(plot, &f);
  int line = (int)round(f.fx + (99 - f.x0) / (f.x1 - f.x0) * f.fw);
  int text_h;
  loom_chart_text_size(GTK_WIDGET(plot), "Training restarted", NULL, &text_h);
  gsize left = 0, right = 0;
  for (int y = (int)f.fy + 6; y < (int)f.fy + 6 + text_h && y < 300; y++) {
    for (int x = 0; x < line - 4; x++) left += after[y * 400 + x] != before[y * 400 + x];
    for (int x = line + 2; x < 400; x++) right += after[y * 400 + x] != before[y * 400 + x];
  }
  g_assert_cmpuint(left, >, 50);
  g_assert_cmpuint(right, ==, 0);
  g_object_unref(plot);
}

static char *read_text(const char *path) {
  char *text = NULL;
  g_autoptr(GError) error = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, &error));
  g_assert_no_error(error);
  return text;
}

static void test_plot_export(void) {
  LoomPlot *plot = LOOM_PLOT(g_object_ref_sink(loom_plot_new()));
  int a = loom_plot_add_series(plot, "loss", NULL, FALSE);
  int b = loom_plot_add_series(plot, "acc, %", NULL, TRUE);
  for (int i = 0; i < 50; i++) {
    loom_plot_append(plot, a, i * 0.5, 1.0 / (3.0 + i));
    loom_plot_append(plot, b, i * 0.5, sin(i) * 1e-7);
  }
  g_autofree char *dir = g_dir_make_tmp("loom-charts-XXXXXX", NULL);
  g_autofree char *png = g_build_filename(dir, "plot.png", NULL);
  g_autofree char *svg = g_build_filename(dir, "plot.svg", NULL);
  g_autofree char *csv = g_build_filename(dir, "plot.csv", NULL);
  g_autoptr(GError) error = NULL;

  g_assert_true(loom_plot_export_png(plot, png, 640, 360, &error));
  g_assert_no_error(error);
  GdkTexture *texture = gdk_texture_new_from_filename(png, &error);
  g_assert_no_error(error);
  g_assert_cmpint(gdk_texture_get_width(texture), ==, 640);
  g_assert_cmpint(gdk_texture_get_height(texture), ==, 360);
  g_object_unref(texture);

  g_assert_true(loom_plot_export_svg(plot, svg, 640, 360, &error));
  g_assert_no_error(error);
  g_autofree char *svg_text = read_text(svg);
  g_assert_true(g_str_has_prefix(svg_text, "<?xml"));
  g_assert_nonnull(strstr(svg_text, "<path"));

  /* Same x everywhere: one row per x, values read back bit for bit. */
  g_assert_true(loom_plot_export_csv(plot, csv, &error));
  g_assert_no_error(error);
  g_autofree char *csv_text = read_text(csv);
  g_auto(GStrv) rows = g_strsplit(csv_text, "\n", -1);
  g_assert_cmpstr(rows[0], ==, "x,loss,\"acc, %\"");
  for (int i = 0; i < 50; i++) {
    char *end;
    const char *p = rows[i + 1];
    g_assert_cmpfloat(g_ascii_strtod(p, &end), ==, i * 0.5);
    g_assert_cmpint(*end, ==, ',');
    g_assert_cmpfloat(g_ascii_strtod(end + 1, &end), ==, 1.0 / (3.0 + i));
    g_assert_cmpint(*end, ==, ',');
    g_assert_cmpfloat(g_ascii_strtod(end + 1, &end), ==, sin(i) * 1e-7);
    g_assert_cmpint(*end, ==, '\0');
  }
  g_assert_cmpstr(rows[51], ==, "");

  /* Different x: one row per point, "series,x,y". */
  loom_plot_append(plot, a, 100, 0.25);
  g_assert_true(loom_plot_export_csv(plot, csv, &error));
  g_free(csv_text);
  csv_text = read_text(csv);
  g_strfreev(rows);
  rows = g_strsplit(csv_text, "\n", -1);
  g_assert_cmpstr(rows[0], ==, "series,x,y");
  g_assert_cmpstr(rows[1], ==, "loss,0,0.33333333333333331");
  g_assert_cmpstr(rows[51], ==, "loss,100,0.25");
  g_assert_true(g_str_has_prefix(rows[52], "\"acc, %\",0,0"));
  g_assert_cmpuint(g_strv_length(rows), ==, 1 + 51 + 50 + 1);

  /* Refusals name the file. */
  g_assert_false(loom_plot_export_png(plot, png, 0, 360, &error));
  g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
  g_assert_nonnull(strstr(error->message, png));
  g_clear_error(&error);
  g_autofree char *missing = g_build_filename(dir, "no-such-dir", "plot.svg", NULL);
  g_assert_false(loom_plot_export_svg(plot, missing, 100, 100, &error));
  g_assert_nonnull(error);
  g_clear_error(&error);

  g_unlink(png);
  g_unlink(svg);
  g_unlink(csv);
  g_rmdir(dir);
  g_object_unref(plot);
}

static void test_chart_format(void) {
  char out[LOOM_CHART_LABEL_LEN];
  loom_chart_format(1200, 0, out);
  g_assert_cmpstr(out, ==, "1.2k");
  loom_chart_format(3500000, 500000, out);
  g_assert_cmpstr(out, ==, "3.5M");
  loom_chart_format(0.001, 0, out);
  g_assert_cmpstr(out, ==, "0.001");
  loom_chart_format(0.0001, 0, out);
  g_assert_cmpstr(out, ==, "1e-4");
  loom_chart_format(0.25, 0.05, out);
  g_assert_cmpstr(out, ==, "0.25");
  loom_chart_format(-12, 2, out);
  g_assert_cmpstr(out, ==, "-12");
  loom_chart_format(0, 1, out);
  g_assert_cmpstr(out, ==, "0");
  double ticks[LOOM_CHART_MAX_TICKS], step;
  int n = loom_chart_ticks(0.13, 0.97, 5, ticks, &step);
  g_assert_cmpfloat(step, ==, 0.2);
  g_assert_cmpint(n, ==, 4);
  g_assert_cmpfloat_with_epsilon(ticks[0], 0.2, 1e-12);
  n = loom_chart_ticks(0, 1000, 4, ticks, &step);
  g_assert_cmpfloat(step, ==, 200);
  g_assert_cmpint(n, ==, 6);
  n = loom_chart_log_ticks(0.001, 10, ticks);
  g_assert_cmpint(n, ==, 5);
  g_assert_cmpfloat_with_epsilon(ticks[0], 0.001, 1e-15);
}

/* LoomPlot keeps its axes, markers and legend in a node of their own: a
 * new marker or a new x step must reach the screen, new points alone keep
 * the node. */
static void test_plot_chrome_on_screen(void) {
  GtkWidget *widget = loom_plot_new();
  LoomPlot *plot = LOOM_PLOT(widget);
  GtkWidget *window = present(widget, 500, 300);
  GdkRGBA blue = {0, 0, 1, 1};
  int a = loom_plot_add_series(plot, "loss", &blue, FALSE);
  for (int i = 0; i <= 1001; i++) loom_plot_append(plot, a, i, 1.0 + 0.001 * i); /* x axis to 1100 */
  Pixels first = on_screen(widget, window);
  GskRenderNode *kept = plot->chrome;
  g_assert_nonnull(kept);
  /* a point inside the current x step: same axes, same node */
  loom_plot_append(plot, a, 1002, 1.5);
  Pixels more = on_screen(widget, window);
  g_assert_true(plot->chrome == kept);
  /* a marker in the middle: a new node, and its dashed line on screen */
  loom_plot_add_marker(plot, 500, LOOM_PLOT_MARKER_EXPLOSION, "boom");
  Pixels marked = on_screen(widget, window);
  g_assert_true(plot->chrome != kept);
  g_assert_cmpuint(count_different(&more, &marked), >, 20);
  /* the x axis steps past its end: new ticks */
  kept = plot->chrome;
  for (int i = 1003; i <= 3000; i++) loom_plot_append(plot, a, i, 1.5);
  Pixels stepped = on_screen(widget, window);
  g_assert_true(plot->chrome != kept);
  g_assert_cmpuint(count_different(&marked, &stepped), >, 100);
  g_free(first.px);
  g_free(more.px);
  g_free(marked.px);
  g_free(stepped.px);
  gtk_window_destroy(GTK_WINDOW(window));
}


/* LoomBigArray: the values survive every growth, from malloc's memory into
 * a mapping of its own and from one mapping into a larger one (the pages
 * moved, not copied); emptying keeps the memory; growing by set_size zeroes. */
static void test_big_array(void) {
  LoomBigArray a;
  loom_big_array_init(&a, sizeof(guint32));
  g_assert_null(loom_big_array_append(&a, NULL, 0));
  const gsize n = (gsize)3 << 20; /* 12 MiB of values: several mapped growths */
  gboolean was_mapped = FALSE;
  for (gsize i = 0; i < n; i += 1000) {
    guint32 chunk[1000];
    gsize m = MIN((gsize)1000, n - i);
    for (gsize j = 0; j < m; j++) chunk[j] = (guint32)((i + j) * 2654435761u);
    guint32 *at = loom_big_array_append(&a, chunk, m);
    g_assert_true(at == &loom_big_array_index(&a, guint32, i));
    if (a.mapped && !was_mapped) {
      was_mapped = TRUE;
      /* Past 2 MiB of capacity: a mapping of its own, in whole pages. */
      g_assert_cmpuint(a.capacity * sizeof(guint32), >=, (gsize)2 << 20);
      g_assert_cmpuint((guintptr)a.data % 4096, ==, 0);
    }
  }
  g_assert_true(was_mapped);
  g_assert_cmpuint(a.len, ==, n);
  g_assert_cmpuint(a.capacity, >=, n);
  for (gsize i = 0; i < n; i++)
    if (loom_big_array_index(&a, guint32, i) != (guint32)(i * 2654435761u))
      g_error("value %" G_GSIZE_FORMAT " changed in a growth", i);
  gsize capacity = a.capacity;
  guint8 *data = a.data;
  loom_big_array_set_size(&a, 0);
  g_assert_cmpuint(a.capacity, ==, capacity);
  g_assert_true(a.data == data);
  loom_big_array_set_size(&a, 5);
  for (gsize i = 0; i < 5; i++) g_assert_cmpuint(loom_big_array_index(&a, guint32, i), ==, 0);
  loom_big_array_release(&a);
  g_assert_null(a.data);
  g_assert_cmpuint(a.len, ==, 0);
  /* Usable again after release; elements whose size does not divide 2 MiB. */
  loom_big_array_init(&a, 40);
  guint8 big[40];
  for (gsize i = 0; i < 200000; i++) {
    memset(big, (int)(i & 0xff), sizeof big);
    loom_big_array_append(&a, big, 1);
  }
  g_assert_true(a.mapped);
  for (gsize i = 0; i < 200000; i += 997) g_assert_cmpuint(a.data[i * 40 + 39], ==, i & 0xff);
  loom_big_array_release(&a);
}

/* Text sizes are kept per widget, and measured again when its font changes
 * (the Pango context's serial): the cache never answers with a stale size. */
static void test_text_size_follows_font(void) {
  GtkWidget *plot = g_object_ref_sink(loom_plot_new());
  PangoContext *context = gtk_widget_get_pango_context(plot);
  PangoFontDescription *font = pango_font_description_from_string("DejaVu Sans 10");
  pango_context_set_font_description(context, font);
  int w10, h10, again_w, again_h, w20, h20;
  loom_chart_text_size(plot, "0.125", &w10, &h10);
  loom_chart_text_size(plot, "0.125", &again_w, &again_h);
  g_assert_cmpint(again_w, ==, w10);
  g_assert_cmpint(again_h, ==, h10);
  pango_font_description_set_size(font, 20 * PANGO_SCALE);
  pango_context_set_font_description(context, font);
  loom_chart_text_size(plot, "0.125", &w20, &h20);
  g_assert_cmpint(w20, >, w10 + w10 / 2);
  g_assert_cmpint(h20, >, h10 + h10 / 2);
  /* Many labels: the cache stays bounded and keeps answering right. */
  for (int i = 0; i < 2000; i++) {
    char text[16];
    g_snprintf(text, sizeof text, "%d", i);
    int w, h;
    loom_chart_text_size(plot, text, &w, &h);
    g_assert_cmpint(w, >, 0);
  }
  loom_chart_text_size(plot, "0.125", &again_w, &again_h);
  g_assert_cmpint(again_w, ==, w20);
  pango_font_description_free(font);
  g_object_unref(plot);
}

/* The accessible texts of the live charts follow their data at most
 * LOOM_CHART_ACCESSIBLE_DELAY_MS late, not with every update (a training
 * run changes them up to 30 times a second), and name the newest values. */
typedef struct {
  GtkWidget *widget;
  GtkAccessibleProperty property;
  const char *needle;
} AccessibleWait;

static gboolean accessible_text_has(gpointer data) {
  const AccessibleWait *w = data;
  g_autofree char *text = gtk_test_accessible_check_property(GTK_ACCESSIBLE(w->widget), w->property, "\x01");
  return text && strstr(text, w->needle) != NULL;
}

static void test_accessible_text_follows(void) {
  if (g_strcmp0(g_getenv("GTK_A11Y"), "test") != 0) {
    g_test_skip("needs GTK_A11Y=test (GTK's test accessibility context), as meson test sets it");
    return;
  }
  GtkWidget *histogram = g_object_ref_sink(loom_histogram_new());
  float values[7] = {0.5f, 1, 2, 3, 4, 5, NAN};
  for (int round = 0; round < 50; round++) loom_histogram_set_values(LOOM_HISTOGRAM(histogram), values, 7, 8);
  /* Not yet: the first update is still pending. */
  g_assert_false(accessible_text_has(&(AccessibleWait){histogram, GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, "6 values"}));
  gui_test_wait(accessible_text_has, &(AccessibleWait){histogram, GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, "6 values"},
                3 * LOOM_CHART_ACCESSIBLE_DELAY_MS, "the histogram's description");
  loom_histogram_set_values(LOOM_HISTOGRAM(histogram), values, 3, 8);
  gui_test_wait(accessible_text_has, &(AccessibleWait){histogram, GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, "3 values"},
                3 * LOOM_CHART_ACCESSIBLE_DELAY_MS, "the histogram's new description");
  g_object_unref(histogram);

  GtkWidget *plot = g_object_ref_sink(loom_plot_new());
  g_object_set(plot, "title", "Loss", NULL);
  int s = loom_plot_add_series(LOOM_PLOT(plot), "train", NULL, FALSE);
  for (int i = 0; i < 1000; i++) loom_plot_append(LOOM_PLOT(plot), s, i, 1000.0 / (i + 1));
  gui_test_wait(accessible_text_has, &(AccessibleWait){plot, GTK_ACCESSIBLE_PROPERTY_LABEL, "999"},
                3 * LOOM_CHART_ACCESSIBLE_DELAY_MS, "the plot's summary");
  /* A plot disposed with an update pending leaves no source behind. */
  loom_plot_append(LOOM_PLOT(plot), s, 1000, 0.5);
  g_object_unref(plot);
  g_usleep(LOOM_CHART_ACCESSIBLE_DELAY_MS * 1200);
  while (g_main_context_iteration(NULL, FALSE)) {
  }
}

int main(int argc, char **argv) {
  gui_test_init(&argc, &argv);
  g_test_add_func("/charts/text-size-follows-font", test_text_size_follows_font);
  g_test_add_func("/charts/accessible-text-follows", test_accessible_text_follows);
  g_test_add_func("/charts/format", test_chart_format);
  g_test_add_func("/charts/big-array", test_big_array);
  g_test_add_func("/charts/plot/million-points", test_plot_million_points);
  g_test_add_func("/charts/plot/decimation-exact", test_plot_decimation_exact);
  g_test_add_func("/charts/plot/dense-band", test_plot_dense_band);
  g_test_add_func("/charts/plot/smoothing-and-log", test_plot_smoothing_and_log);
  g_test_add_func("/charts/plot/readout", test_plot_readout);
  g_test_add_func("/charts/plot/markers", test_plot_markers);
  g_test_add_func("/charts/plot/marker-label-at-edge", test_plot_marker_label_at_edge);
  g_test_add_func("/charts/plot/title-beside-legend", test_plot_title_beside_legend);
  g_test_add_func("/charts/plot/labels-give-way", test_plot_labels_give_way);
  g_test_add_func("/charts/plot/export", test_plot_export);
  g_test_add_func("/charts/plot/chrome-on-screen", test_plot_chrome_on_screen);
  return g_test_run();
}
