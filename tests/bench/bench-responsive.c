/*
 * Is the workbench fluid while it trains (issue 9, "How it is checked")?
 * The real window opens the spiral example, trains it at full speed for
 * BENCH_SECONDS (20) while the grid view orbits (driven from a tick
 * callback) with a heatmap on, and prints:
 *
 * - frames per second and the frame interval (median, 95 %, worst);
 * - the longest main-loop stall: the longest gap between two runs of a
 *   1 ms timeout at default priority, which runs whenever the main loop is
 *   free, so a gap is the time one dispatch (a frame's paint, a snapshot's
 *   handling, an event) kept the loop busy; and how many gaps exceed 16 ms;
 * - what the main thread spends where: the paint phase of the frame clock
 *   and the handling of each "snapshot" (from an emission hook, which runs
 *   before every handler, to a handler connected last);
 * - the worker's steps per second (from the snapshots' step counts)
 *   against headless training of the same settings with the engine's
 *   trainer in the same process, measured before and after the window
 *   (the worker's own thread count and pool, so the two do the same work),
 *   once from where the worker paused (the document's trained network and
 *   trainer state: the same phase of training, which the fresh baseline is
 *   not), and once more on a thread beside the paused window while it keeps
 *   orbiting (what the machine gives a training thread beside a drawing
 *   main thread); the worker's time inside and outside its steps.
 *
 * Goals: no stall over 16 ms; the worker at >= 0.9x the headless rate.
 *
 *   xvfb-run -a -s '-screen 0 1600x1000x24 +extension GLX' \
 *     env GDK_DEBUG=gl-glx GSETTINGS_SCHEMA_DIR=build/data GSETTINGS_BACKEND=memory \
 *     build/tests/bench/bench-responsive
 *
 * The paint phase is also split: its update and layout, and the main
 * thread's CPU time in it (wall time minus waiting for other threads).
 * BENCH_HIDE=LoomPlot,LoomHistogram hides widgets of those types;
 * BENCH_WATCH=z,y,x,l selects that slot (the inspector's live statistics).
 * BENCH_SPLIT_MS=ms splits the frames over that much main-thread CPU by
 * widget type (default 16; 0 splits every frame).
 *
 * BENCH_SECONDS=s trains s seconds; BENCH_HEATMAP=name picks the heatmap
 * metric ("none": no heatmap; default "activation-rms"); BENCH_EXAMPLE=name
 * trains another example; BENCH_HEADLESS=s measures the headless rate for
 * s seconds (default 5) each time. BENCH_BESIDE_TRAINING=1 also runs the
 * headless measurement on a thread beside the window while the worker
 * trains (in the middle of the counted time): slowed as much as the worker,
 * it says the machine gives less to any training thread then; unslowed, that
 * the worker itself is slower.
 */
#include <adwaita.h>
#include <loom/loom.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loom-application.h"
#include "loom-grid-view-private.h"
#include "loom-training-form.h"
#include "loom-training-pane-private.h"
#include "loom-window-private.h"

#define BUDGET_MS 16.7
#define STALL_MS 16.0
#define WARMUP_S 1.0 /* the first second (data, the first frames' shader compiles) is not counted */

typedef struct {
  double *v;
  int n, cap;
} Series;

static void series_add(Series *s, double x) {
  if (s->n == s->cap) {
    s->cap = s->cap ? 2 * s->cap : 1024;
    s->v = g_renew(double, s->v, s->cap);
  }
  s->v[s->n++] = x;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void report(const char *what, Series *s) {
  if (s->n == 0) {
    printf("%-30s (none)\n", what);
    return;
  }
  qsort(s->v, (size_t)s->n, sizeof *s->v, cmp_double);
  double sum = 0;
  for (int i = 0; i < s->n; i++) sum += s->v[i];
  printf("%-30s n %6d   median %7.2f ms   95%% %7.2f ms   worst %7.2f ms   total %8.1f ms\n", what, s->n,
         s->v[s->n / 2], s->v[MIN((s->n * 95) / 100, s->n - 1)], s->v[s->n - 1], sum);
}

typedef struct {
  LoomWindow *window;
  gint64 t0;       /* when Play was pressed */
  gboolean counting; /* past the warm-up */
  gint64 last_tick, last_probe, paint_start, snapshot_start;
  gint64 paint_cpu_start, layout_done, render_cpu_start;
  Series ticks, probes, paints, paint_cpus, layouts, snapshots;
  /* Per frame: the main thread's CPU in each wrapped widget type's snapshot,
   * and in frames over the budget the split of their CPU time. */
  double widget_cpu[8];
  gboolean snapshot_since_frame;
  int slow_frames, slow_with_snapshot;
  double split_ms; /* frames over this much main-thread CPU are split by widget */
  Series slow_widget[8], slow_update, slow_render_rest;
  int stalls;
  gint64 first_step, last_step;
  double first_elapsed, last_elapsed; /* the worker's seconds inside loom_trainer_step */
  gint64 first_step_at, last_step_at;
  gint64 points, events[8]; /* received while counting: plot points, events by kind */
} Bench;

static Bench bench;

static double ms_since(gint64 t) { return (double)(g_get_monotonic_time() - t) / 1000.0; }

static gboolean orbit_tick(GtkWidget *widget, GdkFrameClock *clock, gpointer data) {
  gint64 now = g_get_monotonic_time();
  if (bench.counting && bench.last_tick) series_add(&bench.ticks, (double)(now - bench.last_tick) / 1000.0);
  bench.last_tick = now;
  double t = (double)(now - bench.t0) / 1e6;
  /* one turn every 4 s, bobbing up and down */
  loom_grid_view_set_orbit(LOOM_GRID_VIEW(widget), 0.65 + t * 0.5 * G_PI, 0.45 + 0.25 * sin(t * 0.25 * G_PI));
  return G_SOURCE_CONTINUE;
}

static gboolean probe(gpointer data) {
  gint64 now = g_get_monotonic_time();
  if (bench.counting && bench.last_probe) {
    double gap = (double)(now - bench.last_probe) / 1000.0;
    series_add(&bench.probes, gap);
    if (gap > STALL_MS) bench.stalls++;
  }
  bench.last_probe = now;
  return G_SOURCE_CONTINUE;
}

/* The main thread's own CPU time: on a machine whose cores are shared by
 * the worker and a software rasterizer, wall time mixes in waiting for
 * them; CPU time is what GTK and the widgets cost. */
static gint64 thread_cpu_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (gint64)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void paint_begin(GdkFrameClock *clock, gpointer data) {
  bench.paint_start = g_get_monotonic_time();
  bench.paint_cpu_start = thread_cpu_us();
  bench.layout_done = 0;
}

static void layout_end(GdkFrameClock *clock, gpointer data) { bench.layout_done = g_get_monotonic_time(); }

/* The widget types whose snapshots are timed (BENCH_HIDE's names too). */
static const char *const wrapped_names[] = {"LoomPlot", "LoomBoundaryView", "LoomGridView", "LoomHistogram",
                                            "LoomSparkline", "LoomGridLegend"};
#define N_WRAPPED G_N_ELEMENTS(wrapped_names)
static GType wrapped_types[N_WRAPPED];
static void (*wrapped_snapshot[N_WRAPPED])(GtkWidget *, GtkSnapshot *);

static void timed_snapshot(GtkWidget *widget, GtkSnapshot *snapshot) {
  for (guint k = 0; k < N_WRAPPED; k++)
    if (G_OBJECT_TYPE(widget) == wrapped_types[k]) {
      gint64 t0 = thread_cpu_us();
      wrapped_snapshot[k](widget, snapshot);
      bench.widget_cpu[k] += (double)(thread_cpu_us() - t0) / 1000.0;
      return;
    }
}

static void wrap_snapshots(void) {
  for (guint k = 0; k < N_WRAPPED; k++) {
    GType t = g_type_from_name(wrapped_names[k]);
    if (!t) continue;
    GtkWidgetClass *klass = g_type_class_ref(t);
    wrapped_types[k] = t;
    wrapped_snapshot[k] = klass->snapshot;
    klass->snapshot = timed_snapshot;
  }
}

static gboolean paint_hook(GSignalInvocationHint *hint, guint n, const GValue *params, gpointer data) {
  bench.render_cpu_start = thread_cpu_us();
  memset(bench.widget_cpu, 0, sizeof bench.widget_cpu);
  return TRUE;
}

static void paint_end(GdkFrameClock *clock, gpointer data) {
  if (!bench.counting || !bench.paint_start) return;
  gint64 now_cpu = thread_cpu_us();
  double cpu = (double)(now_cpu - bench.paint_cpu_start) / 1000.0;
  series_add(&bench.paints, ms_since(bench.paint_start));
  series_add(&bench.paint_cpus, cpu);
  if (bench.layout_done) series_add(&bench.layouts, (double)(bench.layout_done - bench.paint_start) / 1000.0);
  if (cpu > bench.split_ms && bench.render_cpu_start) {
    bench.slow_frames++;
    bench.slow_with_snapshot += bench.snapshot_since_frame;
    double widgets = 0;
    for (guint k = 0; k < N_WRAPPED; k++) {
      series_add(&bench.slow_widget[k], bench.widget_cpu[k]);
      widgets += bench.widget_cpu[k];
    }
    series_add(&bench.slow_update, (double)(bench.render_cpu_start - bench.paint_cpu_start) / 1000.0);
    series_add(&bench.slow_render_rest, (double)(now_cpu - bench.render_cpu_start) / 1000.0 - widgets);
  }
  bench.snapshot_since_frame = FALSE;
}

/* BENCH_HIDE=TypeA,TypeB hides every widget of those types: what the paint
 * phase costs without them tells what they cost. */
static int hide_types(GtkWidget *w, char **types) {
  int hidden = 0;
  for (char **t = types; *t; t++)
    if (!strcmp(G_OBJECT_TYPE_NAME(w), *t)) {
      gtk_widget_set_visible(w, FALSE);
      return 1;
    }
  for (GtkWidget *c = gtk_widget_get_first_child(w); c; c = gtk_widget_get_next_sibling(c)) hidden += hide_types(c, types);
  return hidden;
}

static gboolean snapshot_hook(GSignalInvocationHint *hint, guint n, const GValue *params, gpointer data) {
  bench.snapshot_start = g_get_monotonic_time();
  return TRUE;
}

static void snapshot_done(LoomTrainingSession *s, LoomTrainingSnapshot *snap, gpointer data) {
  gint64 now = g_get_monotonic_time();
  bench.snapshot_since_frame = TRUE;
  if (bench.counting && bench.snapshot_start) series_add(&bench.snapshots, ms_since(bench.snapshot_start));
  if (!bench.counting) return;
  bench.points += snap->points->len;
  for (guint i = 0; i < snap->events->len; i++) {
    LoomTrainingEventKind kind = g_array_index(snap->events, LoomTrainingEvent, i).kind;
    if ((int)kind >= 0 && (int)kind < (int)G_N_ELEMENTS(bench.events)) bench.events[kind]++;
  }
  if (snap->state != LOOM_TRAINING_RUNNING) return;
  if (!bench.first_step_at) {
    bench.first_step = snap->step;
    bench.first_elapsed = snap->elapsed;
    bench.first_step_at = now;
  }
  bench.last_step = snap->step;
  bench.last_elapsed = snap->elapsed;
  bench.last_step_at = now;
}

typedef gboolean (*Condition)(gpointer data);

static gboolean deadline_hit(gpointer flag) {
  *(gboolean *)flag = TRUE;
  return G_SOURCE_REMOVE;
}

/* As the GUI tests wait: the main loop blocks until something is due. */
static void wait_for(Condition cond, gpointer data, double seconds, const char *what) {
  gboolean timed_out = FALSE;
  guint id = g_timeout_add((guint)(seconds * 1000), deadline_hit, &timed_out);
  while (!cond(data) && !timed_out) g_main_context_iteration(NULL, TRUE);
  if (timed_out) {
    LoomTrainingSession *s = bench.window ? loom_training_controller_get_session(bench.window->training) : NULL;
    g_error("timed out waiting for %s (training state %d, busy %d)", what,
            s ? (int)loom_training_session_get_state(s) : -1, s ? loom_training_session_get_busy(s) : -1);
  }
  g_source_remove(id);
}

static gboolean is_mapped(gpointer w) { return gtk_widget_get_mapped(w); }

static gboolean is_state(gpointer state) {
  LoomTrainingSession *s = loom_training_controller_get_session(bench.window->training);
  return !loom_training_session_get_busy(s) && loom_training_session_get_state(s) == (LoomTrainingState)GPOINTER_TO_INT(state);
}

static gboolean settled(gpointer data) {
  LoomTrainingSession *s = loom_training_controller_get_session(bench.window->training);
  return loom_training_session_get_running(s) || !loom_training_session_get_busy(s);
}

static gboolean time_passed(gpointer until) { return g_get_monotonic_time() >= *(gint64 *)until; }

static void spin(double seconds) {
  gint64 until = g_get_monotonic_time() + (gint64)(seconds * 1e6);
  while (g_get_monotonic_time() < until) g_main_context_iteration(NULL, TRUE);
}

/* Steps per second of the engine's trainer on @net (consumed) with @s
 * (consumed), as the worker builds it (its thread count: one unless the
 * settings say), from @state's weights' optimizer state where given. */
static double timed_steps(const char *what, loom_net *net, loom_train_settings *s, GBytes *state, double seconds) {
  loom_error err = {0};
  loom_dataset *train = NULL, *test = NULL;
  loom_train_config cfg;
  g_autofree char *dir = g_build_filename(LOOM_SOURCE_DIR, "data", "datasets", NULL);
  if (loom_train_settings_make_data(s, net, dir, &train, &test, &err) ||
      loom_train_settings_make_config(s, net, train, &cfg, &err))
    g_error("headless %s: %s", what, err.message);
  int threads = s->threads > 0 ? s->threads : 1;
  loom_pool *pool = threads > 1 ? loom_pool_new(threads, &err) : NULL;
  loom_trainer *tr = loom_trainer_new(net, train, test, &cfg, pool, &err);
  if (!tr) g_error("headless %s: %s", what, err.message);
  if (state) {
    gsize len;
    const void *bytes = g_bytes_get_data(state, &len);
    if (loom_trainer_import_state(tr, bytes, len, &err)) g_error("headless %s: %s", what, err.message);
  }
  loom_step_stats st;
  gint64 start = 0, steps = 0, t = 0;
  gint64 warm = g_get_monotonic_time() + (gint64)(0.2 * 1e6);
  for (;;) {
    if (loom_trainer_step(tr, &st, &err)) g_error("headless %s: %s", what, err.message);
    t = g_get_monotonic_time();
    if (!start && t >= warm) start = t, steps = 0;
    else if (start) steps++;
    if (start && t - start >= (gint64)(seconds * 1e6)) break;
  }
  loom_trainer_free(tr);
  if (pool) loom_pool_free(pool);
  loom_dataset_free(train);
  loom_dataset_free(test);
  loom_train_settings_free(s);
  loom_net_free(net);
  return (double)steps / ((double)(t - start) / 1e6);
}

/* From the example's fresh weights. */
static double headless_steps_per_second(const char *example, double seconds) {
  loom_error err = {0};
  loom_net *net = NULL;
  loom_train_settings *s = NULL;
  if (loom_example_build(example, &net, &err) || loom_example_settings(example, &s, &err) ||
      loom_train_settings_set_field(s, "epochs", "100000", &err))
    g_error("headless %s: %s", example, err.message);
  return timed_steps(example, net, s, NULL, seconds);
}

/* From where the worker paused: the document's trained network, settings
 * and trainer state (weights and optimizer moments), so the two rates are
 * taken in the same phase of training; a network that has learned its data
 * steps at another rate than fresh weights (docs/trainer.md). */
static double headless_from_document(LoomDocument *doc, double seconds) {
  const LoomTrainingExtras *ex = loom_document_get_training(doc);
  loom_error err = {0};
  loom_net *net = loom_net_clone(loom_document_get_net(doc), &err);
  if (!net || !ex || !ex->settings) g_error("headless from the document: %s", net ? "no training settings" : err.message);
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(net, loom_net_seed(net), &diags) > 0) g_error("headless from the document: %s", diags[0].message);
  free(diags);
  return timed_steps("from the document", net, loom_train_settings_copy(ex->settings), ex->state, seconds);
}

static gboolean document_trained(gpointer steps) {
  const LoomTrainingExtras *ex = loom_document_get_training(bench.window->document);
  return ex && ex->state && ex->steps >= *(gint64 *)steps;
}

typedef struct {
  const char *example;
  double seconds;
  double rate;
  gint done; /* atomic */
} BesideRun;

static gpointer headless_beside(gpointer data) {
  BesideRun *r = data;
  r->rate = headless_steps_per_second(r->example, r->seconds);
  g_atomic_int_set(&r->done, TRUE);
  g_main_context_wakeup(NULL);
  return NULL;
}

static gboolean beside_done(gpointer data) { return g_atomic_int_get(&((BesideRun *)data)->done); }

int main(int argc, char **argv) {
  if (!gtk_init_check()) {
    fprintf(stderr, "bench-responsive needs a display (run it under xvfb-run)\n");
    return 77;
  }
  const char *example = g_getenv("BENCH_EXAMPLE") ? g_getenv("BENCH_EXAMPLE") : "spiral";
  const char *metric = g_getenv("BENCH_HEATMAP") ? g_getenv("BENCH_HEATMAP") : "activation-rms";
  double seconds = g_getenv("BENCH_SECONDS") ? g_ascii_strtod(g_getenv("BENCH_SECONDS"), NULL) : 20.0;
  double headless_s = g_getenv("BENCH_HEADLESS") ? g_ascii_strtod(g_getenv("BENCH_HEADLESS"), NULL) : 5.0;
  bench.split_ms = g_getenv("BENCH_SPLIT_MS") ? g_ascii_strtod(g_getenv("BENCH_SPLIT_MS"), NULL) : STALL_MS;
  if (!(seconds > WARMUP_S + 1.0)) seconds = 20.0;
  if (!(headless_s > 0.5)) headless_s = 5.0;

  double headless_before = headless_steps_per_second(example, headless_s);

  LoomApplication *app = loom_application_new();
  g_application_set_flags(G_APPLICATION(app), G_APPLICATION_HANDLES_OPEN | G_APPLICATION_NON_UNIQUE);
  g_autoptr(GError) error = NULL;
  if (!g_application_register(G_APPLICATION(app), NULL, &error)) g_error("%s", error->message);
  g_application_activate(G_APPLICATION(app));
  bench.window = LOOM_WINDOW(gtk_application_get_active_window(GTK_APPLICATION(app)));
  gtk_window_set_default_size(GTK_WINDOW(bench.window), 1600, 1000);
  gtk_window_maximize(GTK_WINDOW(bench.window));
  wait_for(is_mapped, bench.window, 60, "the window to map");
  if (!gtk_widget_activate_action(GTK_WIDGET(bench.window), "win.open-example", "s", example))
    g_error("win.open-example is not available");
  wait_for(is_state, GINT_TO_POINTER(LOOM_TRAINING_PAUSED), 60, "the example to be ready to train");
  LoomTrainingPane *pane = bench.window->training_pane;
  LoomTrainingForm *form = NULL;
  for (GtkWidget *w = gtk_widget_get_first_child(GTK_WIDGET(pane)); w && !form;) {
    /* depth-first search for the settings form */
    if (LOOM_IS_TRAINING_FORM(w)) {
      form = LOOM_TRAINING_FORM(w);
      break;
    }
    GtkWidget *next = gtk_widget_get_first_child(w);
    while (!next && w && w != GTK_WIDGET(pane)) {
      next = gtk_widget_get_next_sibling(w);
      if (!next) w = gtk_widget_get_parent(w);
    }
    w = next;
  }
  if (!form) g_error("no training form in the pane");
  if (!loom_training_form_set_field(form, "epochs", "100000", &error)) g_error("%s", error->message);
  wait_for(settled, NULL, 60, "the worker to take the settings");
  if (strcmp(metric, "none") != 0) loom_training_pane_set_heatmap_metric(pane, metric);
  if (g_getenv("BENCH_WATCH")) {
    /* a selected slot: the inspector's live histograms and sparklines too */
    loom_coord watch;
    if (sscanf(g_getenv("BENCH_WATCH"), "%d,%d,%d,%d", &watch.z, &watch.y, &watch.x, &watch.l) != 4)
      g_error("BENCH_WATCH=%s: expected z,y,x,l", g_getenv("BENCH_WATCH"));
    loom_grid_view_set_selection(bench.window->grid_view, &watch);
  }
  spin(1.0); /* the first frames: GTK's and the grid's shaders */

  GdkFrameClock *clock = gtk_widget_get_frame_clock(GTK_WIDGET(bench.window));
  g_signal_connect_after(clock, "update", G_CALLBACK(paint_begin), NULL);
  g_signal_connect_after(clock, "layout", G_CALLBACK(layout_end), NULL);
  g_signal_connect_after(clock, "after-paint", G_CALLBACK(paint_end), NULL);
  g_signal_add_emission_hook(g_signal_lookup("paint", GDK_TYPE_FRAME_CLOCK), 0, paint_hook, NULL, NULL);
  wrap_snapshots();
  if (g_getenv("BENCH_HIDE")) {
    g_auto(GStrv) types = g_strsplit(g_getenv("BENCH_HIDE"), ",", -1);
    printf("hidden: %d widgets of the types %s\n", hide_types(GTK_WIDGET(bench.window), types), g_getenv("BENCH_HIDE"));
  }
  gtk_widget_add_tick_callback(GTK_WIDGET(bench.window->grid_view), orbit_tick, NULL, NULL);
  g_signal_add_emission_hook(g_signal_lookup("snapshot", LOOM_TYPE_TRAINING_SESSION), 0, snapshot_hook, NULL, NULL);
  g_signal_connect_after(loom_training_controller_get_session(bench.window->training), "snapshot", G_CALLBACK(snapshot_done), NULL);
  g_timeout_add(1, probe, NULL);

  bench.t0 = g_get_monotonic_time();
  if (!gtk_widget_activate_action(GTK_WIDGET(bench.window), "win.train-toggle", NULL))
    g_error("win.train-toggle is not available");
  spin(WARMUP_S);
  bench.counting = TRUE;
  gint64 start = g_get_monotonic_time(), until = start + (gint64)((seconds - WARMUP_S) * 1e6);
  BesideRun during = {example, headless_s, 0, FALSE};
  if (g_getenv("BENCH_BESIDE_TRAINING")) {
    gint64 middle = start + (gint64)(((seconds - WARMUP_S) / 2 - headless_s / 2) * 1e6);
    wait_for(time_passed, &middle, seconds + 60, "the middle of the run");
    GThread *during_thread = g_thread_new("headless-during", headless_beside, &during);
    wait_for(beside_done, &during, headless_s + 120, "the headless run beside the training window");
    g_thread_join(during_thread);
  }
  wait_for(time_passed, &until, seconds + 60, "the run");
  double run_s = (double)(g_get_monotonic_time() - start) / 1e6;
  bench.counting = FALSE;
  int frames = bench.ticks.n;
  if (!gtk_widget_activate_action(GTK_WIDGET(bench.window), "win.train-toggle", NULL))
    g_error("win.train-toggle is not available");
  gint64 pause_at = g_get_monotonic_time();
  LoomTrainingSnapshot *shown = loom_training_session_get_latest(loom_training_controller_get_session(bench.window->training));
  gint64 shown_step = shown ? shown->step : 0;
  wait_for(is_state, GINT_TO_POINTER(LOOM_TRAINING_PAUSED), 600, "the pause");
  double pause_s = (double)(g_get_monotonic_time() - pause_at) / 1e6;
  gint64 final_step = loom_training_session_get_latest(loom_training_controller_get_session(bench.window->training))->step;
  /* Pause hands the trained network and the trainer's state to the document. */
  wait_for(document_trained, &final_step, 60, "the trained network in the document");
  const double headless_trained = headless_from_document(bench.window->document, headless_s);
  const GError *gl_error = gtk_gl_area_get_error(GTK_GL_AREA(bench.window->grid_view));
  if (gl_error) g_error("the grid view could not draw: %s", gl_error->message);
  int width = gtk_widget_get_width(GTK_WIDGET(bench.window->grid_view));
  int height = gtk_widget_get_height(GTK_WIDGET(bench.window->grid_view));
  /* The same headless measurement on a thread of its own while the paused
   * window keeps orbiting: what the machine gives a training thread beside
   * a drawing main thread (shared caches, the cores' clock), without the
   * worker. */
  BesideRun beside = {example, headless_s, 0, FALSE};
  GThread *beside_thread = g_thread_new("headless-beside", headless_beside, &beside);
  wait_for(beside_done, &beside, headless_s + 120, "the headless run beside the window");
  g_thread_join(beside_thread);
  gtk_window_destroy(GTK_WINDOW(bench.window));
  while (g_main_context_iteration(NULL, FALSE)) {}

  double headless_after = headless_steps_per_second(example, headless_s);
  double headless = 0.5 * (headless_before + headless_after);
  double worker = bench.last_step_at > bench.first_step_at
                      ? (double)(bench.last_step - bench.first_step) /
                            ((double)(bench.last_step_at - bench.first_step_at) / 1e6)
                      : 0.0;

  printf("workbench training \"%s\" for %.1f s (%.1f s counted) with the grid view (%d×%d px) orbiting, heatmap %s\n",
         example, seconds, run_s, width, height, metric);
  printf("%-30s %7.1f fps (budget 60 fps)\n", "frames per second", frames / run_s);
  report("frame interval", &bench.ticks);
  report("main-loop gap (1 ms probe)", &bench.probes);
  printf("%-30s %7.2f ms (goal: none over %.0f ms; %d gaps over it)\n", "longest main-loop stall",
         bench.probes.n ? bench.probes.v[bench.probes.n - 1] : 0.0, STALL_MS, bench.stalls);
  report("paint phase", &bench.paints);
  report("  its update and layout", &bench.layouts);
  report("  main thread CPU in it", &bench.paint_cpus);
  report("snapshot handling", &bench.snapshots);
  char over[48];
  snprintf(over, sizeof over, "frames over %g ms of CPU", bench.split_ms);
  printf("%-30s %d (%d after a training snapshot); their main-thread CPU:\n", over,
         bench.slow_frames, bench.slow_with_snapshot);
  report("  update and layout", &bench.slow_update);
  for (guint k = 0; k < N_WRAPPED; k++) {
    char what[64];
    g_snprintf(what, sizeof what, "  %s snapshots", wrapped_names[k]);
    report(what, &bench.slow_widget[k]);
  }
  report("  the rest of paint (GSK, swap)", &bench.slow_render_rest);
  printf("%-30s %10.0f steps/s (headless before %.0f, after %.0f, mean %.0f)\n", "worker", worker, headless_before,
         headless_after, headless);
  printf("%-30s %7.3f× (goal >= 0.9×)\n", "worker / headless", headless > 0 ? worker / headless : 0.0);
  printf("%-30s %10.0f steps/s (%.3f× headless; the worker / this: %.3f×)\n", "headless from the paused state",
         headless_trained, headless > 0 ? headless_trained / headless : 0.0,
         headless_trained > 0 ? worker / headless_trained : 0.0);
  printf("%-30s %10.0f steps/s (%.3f× headless; the worker / this: %.3f×)\n", "headless beside the window",
         beside.rate, headless > 0 ? beside.rate / headless : 0.0, beside.rate > 0 ? worker / beside.rate : 0.0);
  if (during.rate > 0)
    printf("%-30s %10.0f steps/s (%.3f× headless; the worker / this: %.3f×)\n", "headless beside the training",
           during.rate, headless > 0 ? during.rate / headless : 0.0, worker / during.rate);
  /* Inside its steps against outside them (commands, snapshots, the
   * extras): tells a slower step (cores shared) from overhead around it. */
  double in_steps = bench.last_elapsed - bench.first_elapsed;
  double span = (double)(bench.last_step_at - bench.first_step_at) / 1e6;
  if (in_steps > 0 && span > 0)
    printf("%-30s %10.0f steps/s inside loom_trainer_step (%.3f× headless); %.1f %% of its time outside\n",
           "worker, split", (double)(bench.last_step - bench.first_step) / in_steps,
           headless > 0 ? (double)(bench.last_step - bench.first_step) / in_steps / headless : 0.0,
           100.0 * (1.0 - in_steps / span));
  printf("%-30s %lld step points, %lld task changes, %lld recoveries, %lld restarts (plot markers)\n",
         "received while counting", (long long)bench.points, (long long)bench.events[LOOM_TRAINING_EVENT_TASK_CHANGE],
         (long long)bench.events[LOOM_TRAINING_EVENT_RECOVERED], (long long)bench.events[LOOM_TRAINING_EVENT_RESTART]);
  printf("%-30s %7.2f s (the UI showed step %lld when Pause was pressed, the worker paused at step %lld)\n",
         "Pause shown after", pause_s, (long long)shown_step, (long long)final_step);

  g_object_unref(app);
  g_free(bench.ticks.v);
  g_free(bench.probes.v);
  g_free(bench.paints.v);
  g_free(bench.paint_cpus.v);
  for (guint k = 0; k < N_WRAPPED; k++) g_free(bench.slow_widget[k].v);
  g_free(bench.slow_update.v);
  g_free(bench.slow_render_rest.v);
  g_free(bench.layouts.v);
  g_free(bench.snapshots.v);
  return 0;
}
