/*
 * Frame times of the grid view orbiting a fully occupied 16×16×16×4 network
 * (16,384 slots, mixed layer types and dtypes, some links), driven by the
 * frame clock. Prints frames per second, the median, 95th percentile and
 * worst frame interval and paint phase (the view's GL frame and GTK's
 * compositing), each beside the 60 Hz frame budget. The worst frames are
 * the first ones: llvmpipe compiles each shader variant when first used.
 *
 *   xvfb-run -a -s '-screen 0 1600x1000x24 +extension GLX' \
 *     env GDK_DEBUG=gl-glx build/tests/bench/bench-gridview [frames]
 *
 * BENCH_W / BENCH_H set the window size (default 1280×800); BENCH_HOLD=s
 * keeps the last frame on screen for s seconds, for a screenshot.
 * BENCH_HEATMAP=1 colours the slots by a metric (the METRIC mode) and sets
 * new slot and link values on every frame, as training would at up to 30
 * updates a second, only more often. BENCH_PNG=path saves the window's
 * last frame, legend included, as a PNG.
 */
#include <epoxy/gl.h>
#include <math.h>
#include <gtk/gtk.h>
#include <loom/net.h>
#include <stdio.h>
#include <stdlib.h>

#include "loom-grid-view-private.h"
#include "loom-grid-view.h"

#define BUDGET_MS 16.7

typedef struct {
  LoomGridView *view;
  const loom_net *net;
  gboolean heatmap;
  float *values, *flows; /* one per slot, one per link */
  int frames, done;
  gint64 last_tick;
  double *intervals; /* ms between frame-clock ticks */
  double *renders;   /* ms of the frame clock's paint phase */
  int n_intervals, n_renders;
  gint64 render_start;
} Bench;

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void report(const char *what, double *v, int n) {
  if (n == 0) return;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  double median = v[n / 2], p95 = v[(n * 95) / 100 < n ? (n * 95) / 100 : n - 1], worst = v[n - 1];
  printf("%-28s median %7.2f ms (%5.2f× budget)   95%% %7.2f ms   worst %7.2f ms (%5.2f× budget)   budget %.1f ms\n",
         what, median, median / BUDGET_MS, p95, worst, worst / BUDGET_MS, BUDGET_MS);
}

/* The paint phase: the view's GL frame, then GTK compositing it and the
 * legend into the window (with llvmpipe the buffer swap waits for both). */
static void paint_begin(GdkFrameClock *clock, Bench *b) {
  b->render_start = g_get_monotonic_time();
}

static void paint_end(GdkFrameClock *clock, Bench *b) {
  if (b->last_tick && b->render_start && b->n_renders < b->frames)
    b->renders[b->n_renders++] = (double)(g_get_monotonic_time() - b->render_start) / 1000.0;
}

static gboolean tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data) {
  Bench *b = data;
  gint64 now = g_get_monotonic_time();
  if (b->last_tick && b->n_intervals < b->frames)
    b->intervals[b->n_intervals++] = (double)(now - b->last_tick) / 1000.0;
  b->last_tick = now;
  double t = (double)b->n_intervals / 120.0;
  loom_grid_view_set_orbit(b->view, 0.65 + t * 2.0 * G_PI, 0.45 + 0.25 * sin(t * G_PI));
  if (b->heatmap) {
    /* A wave through the grid, as a per-layer statistic might move, with
     * a few slots that have no value; and flows that swell and ebb. */
    int64_t n = loom_net_n_slots(b->net);
    for (int64_t f = 0; f < n; f++)
      b->values[f] = f % 97 == 0 ? NAN : (float)exp(2.0 * sin((double)f * 0.0021 + t * 3.0) + 0.3 * sin((double)f * 0.37));
    for (int i = 0; i < loom_net_n_links(b->net); i++) b->flows[i] = (float)(1.0 + sin(t * 4.0 + i));
    loom_grid_view_set_slot_values(b->view, b->values, (gsize)n, "gradient norm");
    loom_grid_view_set_link_values(b->view, b->flows, (gsize)loom_net_n_links(b->net));
  }
  if (b->n_intervals >= b->frames) {
    b->done = 1;
    return G_SOURCE_REMOVE;
  }
  return G_SOURCE_CONTINUE;
}

static loom_net *full_net(void) {
  static const char *const types[] = {"dense", "relu", "layernorm", "conv2d", "softmax", "tanh", "embedding", "gelu"};
  loom_error err = {0};
  loom_net *net = loom_net_new(16, 16, 16, 4, &err);
  if (!net) g_error("%s", err.message);
  for (int64_t f = 0; f < loom_net_n_slots(net); f++) {
    loom_layer *l = loom_layer_new_by_name(types[f % G_N_ELEMENTS(types)], &err);
    if (!l || loom_layer_set_dtype(l, (loom_dtype)(f % LOOM_DTYPE_COUNT), &err) ||
        loom_net_place(net, loom_net_coord_of(net, f), l, &err))
      g_error("%s", err.message);
    if (f % 13 == 0) loom_net_set_enabled(net, loom_net_coord_of(net, f), false, &err);
  }
  for (int64_t i = 0; i + 1500 < loom_net_n_slots(net); i += 257) {
    loom_link link = {loom_net_coord_of(net, i), loom_net_coord_of(net, i + 1500), (loom_merge)(i % 3)};
    if (loom_net_add_link(net, &link, &err)) g_error("%s", err.message);
  }
  return net;
}

/* The window as GTK draws it, legend included, through its own renderer. */
static void save_window(GtkWidget *window, const char *path) {
  GdkPaintable *paintable = gtk_widget_paintable_new(window);
  GtkSnapshot *snapshot = gtk_snapshot_new();
  gdk_paintable_snapshot(paintable, snapshot, gtk_widget_get_width(window), gtk_widget_get_height(window));
  GskRenderNode *node = gtk_snapshot_free_to_node(snapshot);
  if (node) {
    GdkTexture *texture = gsk_renderer_render_texture(gtk_native_get_renderer(GTK_NATIVE(window)), node, NULL);
    if (!gdk_texture_save_to_png(texture, path)) fprintf(stderr, "cannot write %s\n", path);
    g_object_unref(texture);
    gsk_render_node_unref(node);
  }
  g_object_unref(paintable);
}

int main(int argc, char **argv) {
  if (!gtk_init_check()) {
    fprintf(stderr, "bench-gridview needs a display (run it under xvfb-run)\n");
    return 77;
  }
  Bench b = {.frames = argc > 1 ? atoi(argv[1]) : 300};
  if (b.frames < 2) b.frames = 2;
  b.intervals = g_new0(double, b.frames);
  b.renders = g_new0(double, b.frames);

  loom_net *net = full_net();
  GtkWidget *window = gtk_window_new();
  gtk_window_set_default_size(GTK_WINDOW(window), getenv("BENCH_W") ? atoi(getenv("BENCH_W")) : 1280, getenv("BENCH_H") ? atoi(getenv("BENCH_H")) : 800);
  b.view = LOOM_GRID_VIEW(loom_grid_view_new());
  gtk_window_set_child(GTK_WINDOW(window), GTK_WIDGET(b.view));
  loom_grid_view_set_net(b.view, net);
  b.net = net;
  b.heatmap = getenv("BENCH_HEATMAP") && atoi(getenv("BENCH_HEATMAP"));
  b.values = g_new0(float, loom_net_n_slots(net));
  b.flows = g_new0(float, MAX(loom_net_n_links(net), 1));
  if (b.heatmap) {
    loom_grid_view_set_color_mode(b.view, LOOM_GRID_VIEW_COLOR_METRIC);
    loom_grid_view_set_metric_log(b.view, TRUE);
  }
  gtk_window_present(GTK_WINDOW(window));
  GdkFrameClock *clock = gtk_widget_get_frame_clock(window);
  g_signal_connect_after(clock, "update", G_CALLBACK(paint_begin), &b);
  g_signal_connect_after(clock, "after-paint", G_CALLBACK(paint_end), &b);
  gtk_widget_add_tick_callback(GTK_WIDGET(b.view), tick, &b, NULL);

  gint64 start = g_get_monotonic_time();
  while (!b.done) g_main_context_iteration(NULL, TRUE);
  double seconds = (double)(g_get_monotonic_time() - start) / 1e6;
  /* BENCH_HOLD=s keeps the last pose on screen for s seconds (screenshots). */
  gint64 hold_until = g_get_monotonic_time() + (gint64)(getenv("BENCH_HOLD") ? atof(getenv("BENCH_HOLD")) * 1e6 : 0);
  while (g_get_monotonic_time() < hold_until) g_main_context_iteration(NULL, FALSE), g_usleep(10000);

  const GError *gl_error = gtk_gl_area_get_error(GTK_GL_AREA(b.view));
  if (gl_error) {
    fprintf(stderr, "the grid view could not draw: %s\n", gl_error->message);
    return 1;
  }
  const char *png = getenv("BENCH_PNG");
  if (png) save_window(window, png);
  gtk_gl_area_make_current(GTK_GL_AREA(b.view));
  const char *renderer = (const char *)glGetString(GL_RENDERER);
  printf("grid view%s, %lld slots, %d links, %d×%d px, %d frames, GL renderer: %s\n",
         b.heatmap ? " with heatmap updates every frame" : "", (long long)loom_net_n_slots(net), loom_net_n_links(net), gtk_widget_get_width(GTK_WIDGET(b.view)),
         gtk_widget_get_height(GTK_WIDGET(b.view)), b.n_intervals, renderer ? renderer : "?");
  printf("%-28s %7.1f fps (budget 60 fps)\n", "frames per second", b.n_intervals / seconds);
  /* Steady state, as bench-responsive counts it: the first second (shader
   * compiles, first uploads) left out. */
  {
    double t = 0, warm = 0;
    int k = 0;
    while (k < b.n_intervals && warm < 1000.0) warm += b.intervals[k++];
    for (int i = k; i < b.n_intervals; i++) t += b.intervals[i];
    if (t > 0)
      printf("%-28s %7.1f fps over %d frames after the first second\n", "steady frames per second",
             (b.n_intervals - k) / (t / 1000.0), b.n_intervals - k);
  }
  report("frame interval", b.intervals, b.n_intervals);
  if (b.n_renders >= 3)
    printf("%-28s %7.2f %7.2f %7.2f ms\n", "first three paint phases", b.renders[0], b.renders[1], b.renders[2]);
  report("paint phase", b.renders, b.n_renders);

  gtk_window_destroy(GTK_WINDOW(window));
  loom_net_free(net);
  g_free(b.values);
  g_free(b.flows);
  g_free(b.intervals);
  g_free(b.renders);
  return 0;
}
