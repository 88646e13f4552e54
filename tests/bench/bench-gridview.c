/*
 * Frame times of the grid view orbiting a fully occupied 16×16×16×4 network
 * (16,384 slots, mixed layer types and dtypes, some links), driven by the
 * frame clock. Prints frames per second, the median and worst frame
 * interval and the median and worst paint phase (the view's GL frame and
 * GTK's compositing), each beside the 60 Hz frame budget. While the camera
 * moves the view renders at LOOM_GRID_VIEW_MOTION_SCALE of the resolution
 * (printed); a second series redraws with the camera at rest, at full
 * resolution, as the picture the user looks at once the orbit stops.
 *
 *   xvfb-run -a -s '-screen 0 1600x1000x24 +extension GLX' \
 *     env GDK_DEBUG=gl-glx build/tests/bench/bench-gridview [frames]
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
  double *intervals; /* ms between frame-clock ticks */
  double *renders;   /* ms of the frame clock's paint phase */
  int n_intervals, n_renders;
  double seconds;
} Series;

enum { ORBIT, REST, STILL, DONE };

typedef struct {
  LoomGridView *view;
  int frames, still_frames, phase;
  gint64 last_tick, phase_start;
  Series orbit, still;
  gint64 render_start;
} Bench;

static Series *series(Bench *b) {
  return b->phase == ORBIT ? &b->orbit : b->phase == STILL ? &b->still : NULL;
}

static int series_limit(Bench *b) {
  return b->phase == ORBIT ? b->frames : b->still_frames;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void report(const char *what, double *v, int n) {
  if (n == 0) return;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  double median = v[n / 2], worst = v[n - 1];
  printf("%-28s median %7.2f ms (%5.2f× budget)   worst %7.2f ms (%5.2f× budget)   budget %.1f ms\n", what, median,
         median / BUDGET_MS, worst, worst / BUDGET_MS, BUDGET_MS);
}

/* The paint phase: the view's GL frame, then GTK compositing it and the
 * legend into the window (with llvmpipe the buffer swap waits for both). */
static void paint_begin(GdkFrameClock *clock, Bench *b) {
  b->render_start = g_get_monotonic_time();
}

static void paint_end(GdkFrameClock *clock, Bench *b) {
  Series *s = series(b);
  if (s && b->last_tick && b->render_start && s->n_renders < series_limit(b))
    s->renders[s->n_renders++] = (double)(g_get_monotonic_time() - b->render_start) / 1000.0;
}

static gboolean tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data) {
  Bench *b = data;
  gint64 now = g_get_monotonic_time();
  Series *s = series(b);
  if (s && b->last_tick && s->n_intervals < series_limit(b))
    s->intervals[s->n_intervals++] = (double)(now - b->last_tick) / 1000.0;
  b->last_tick = now;
  if (s && s->n_intervals >= series_limit(b)) {
    s->seconds = (double)(now - b->phase_start) / 1e6;
    b->phase++;
    b->phase_start = now;
    b->last_tick = 0;
  }
  switch (b->phase) {
  case ORBIT: {
    double t = (double)b->orbit.n_intervals / 120.0;
    loom_grid_view_set_orbit(b->view, 0.65 + t * 2.0 * G_PI, 0.45 + 0.25 * sin(t * G_PI));
    break;
  }
  case REST: /* the camera stops; the full-resolution frame follows */
    b->last_tick = 0;
    if (now - b->phase_start > 3 * LOOM_GRID_VIEW_REST_MS * 1000) {
      b->phase = STILL;
      b->phase_start = now;
    }
    break;
  case STILL: gtk_gl_area_queue_render(GTK_GL_AREA(b->view)); break;
  default: return G_SOURCE_REMOVE;
  }
  return G_SOURCE_CONTINUE;
}

static void series_alloc(Series *s, int n) {
  s->intervals = g_new0(double, n);
  s->renders = g_new0(double, n);
}

static void series_free(Series *s) {
  g_free(s->intervals);
  g_free(s->renders);
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

int main(int argc, char **argv) {
  if (!gtk_init_check()) {
    fprintf(stderr, "bench-gridview needs a display (run it under xvfb-run)\n");
    return 77;
  }
  Bench b = {.frames = argc > 1 ? atoi(argv[1]) : 300};
  if (b.frames < 2) b.frames = 2;
  b.still_frames = MAX(b.frames / 5, 2);
  series_alloc(&b.orbit, b.frames);
  series_alloc(&b.still, b.still_frames);

  loom_net *net = full_net();
  GtkWidget *window = gtk_window_new();
  gtk_window_set_default_size(GTK_WINDOW(window), getenv("BENCH_W") ? atoi(getenv("BENCH_W")) : 1280, getenv("BENCH_H") ? atoi(getenv("BENCH_H")) : 800);
  b.view = LOOM_GRID_VIEW(loom_grid_view_new());
  gtk_window_set_child(GTK_WINDOW(window), GTK_WIDGET(b.view));
  loom_grid_view_set_net(b.view, net);
  gtk_window_present(GTK_WINDOW(window));
  GdkFrameClock *clock = gtk_widget_get_frame_clock(window);
  g_signal_connect_after(clock, "update", G_CALLBACK(paint_begin), &b);
  g_signal_connect_after(clock, "after-paint", G_CALLBACK(paint_end), &b);
  gtk_widget_add_tick_callback(GTK_WIDGET(b.view), tick, &b, NULL);

  b.phase_start = g_get_monotonic_time();
  while (b.phase != DONE) g_main_context_iteration(NULL, TRUE);

  const GError *gl_error = gtk_gl_area_get_error(GTK_GL_AREA(b.view));
  if (gl_error) {
    fprintf(stderr, "the grid view could not draw: %s\n", gl_error->message);
    return 1;
  }
  gtk_gl_area_make_current(GTK_GL_AREA(b.view));
  const char *renderer = (const char *)glGetString(GL_RENDERER);
  printf("grid view, %lld slots, %d links, %d×%d px, %d frames, GL renderer: %s\n",
         (long long)loom_net_n_slots(net), loom_net_n_links(net), gtk_widget_get_width(GTK_WIDGET(b.view)),
         gtk_widget_get_height(GTK_WIDGET(b.view)), b.orbit.n_intervals, renderer ? renderer : "?");
  int w = gtk_widget_get_width(GTK_WIDGET(b.view)), h = gtk_widget_get_height(GTK_WIDGET(b.view));
  printf("orbiting: rendered at %d×%d px (scale %.2f while the camera moves), stretched to the view\n",
         MAX(1, (int)(w * LOOM_GRID_VIEW_MOTION_SCALE)), MAX(1, (int)(h * LOOM_GRID_VIEW_MOTION_SCALE)),
         LOOM_GRID_VIEW_MOTION_SCALE);
  printf("%-28s %7.1f fps (budget 60 fps)\n", "frames per second", b.orbit.n_intervals / b.orbit.seconds);
  report("frame interval", b.orbit.intervals, b.orbit.n_intervals);
  report("paint phase", b.orbit.renders, b.orbit.n_renders);
  printf("camera at rest: %d redraws at full resolution (%d×%d px)\n", b.still.n_intervals, w, h);
  report("frame interval", b.still.intervals, b.still.n_intervals);
  report("paint phase", b.still.renders, b.still.n_renders);

  gtk_window_destroy(GTK_WINDOW(window));
  loom_net_free(net);
  series_free(&b.orbit);
  series_free(&b.still);
  return 0;
}
