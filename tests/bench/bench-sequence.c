/*
 * bench-sequence: forward and backward time of the sequence layers beside the
 * same operations in PyTorch measured in the same run (tests/bench/
 * torch_sequence.py through /usr/bin/python3, same thread count):
 *
 *   lstm 256→256, sequence 128, batch 1          (nn.LSTM, batch_first)
 *   attention d=256, 8 heads, causal, biases,
 *     sequence 128, batch 1                      (nn.MultiheadAttention with a causal mask)
 *
 * Usage: bench-sequence [--threads N] [--runs R] [--case lstm|attention]
 * (N defaults to the online cores; --case times one workload, for profiling).
 * Each figure is the median over R runs (default 7) of the time per call; a run
 * repeats the call for at least 50 ms. Without torch the column says so.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-util.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "layers/layer-impl.h"
#include "loom/loom.h"

#define N_CASES 2

typedef struct workload {
  const char *name, *title;
  loom_layer *layer;
  int64_t batch;
  float *x, *y, *dx, *dy;
  loom_ctx ctx;
} workload;

static void die(const char *what, const loom_error *err) {
  fprintf(stderr, "bench-sequence: %s: %s\n", what, err->message);
  exit(1);
}

static void random_fill(float *v, int64_t n, uint32_t seed) {
  GRand *r = g_rand_new_with_seed(seed);
  for (int64_t i = 0; i < n; i++) v[i] = (float)g_rand_double_range(r, -1.0, 1.0);
  g_rand_free(r);
}

static void set(loom_layer *l, const char *name, int64_t v) {
  loom_error err = {0};
  if (loom_layer_set_int(l, name, v, &err)) die(name, &err);
}

static void setup(workload *w, const char *type, const loom_shape *in) {
  loom_error err = {0};
  if (loom_layer_build(w->layer, in, 7, &err)) die(type, &err);
  loom_shape out = loom_layer_out_shape(w->layer);
  int64_t nx = w->batch * loom_shape_numel(in), ny = w->batch * loom_shape_numel(&out);
  w->x = g_new(float, nx);
  w->dx = g_new(float, nx);
  w->y = g_new(float, ny);
  w->dy = g_new(float, ny);
  random_fill(w->x, nx, 1);
  random_fill(w->dy, ny, 2);
}

static void run_forward(workload *w) {
  loom_error err = {0};
  if (layer_forward(w->layer, &w->ctx, w->x, w->y, w->batch, &err)) die(w->name, &err);
}

static void run_backward(workload *w) {
  loom_error err = {0};
  if (layer_backward(w->layer, &w->ctx, w->x, w->y, w->dy, w->dx, w->batch, &err)) die(w->name, &err);
}

static double timed(void (*fn)(workload *), workload *w, int runs) {
  double t[64];
  fn(w);
  for (int r = 0; r < runs; r++) {
    long calls = 0;
    double start = bench_now_s(), elapsed;
    do {
      fn(w);
      calls++;
      elapsed = bench_now_s() - start;
    } while (elapsed < 0.05);
    t[r] = elapsed / (double)calls * 1e3;
  }
  return bench_median(t, runs);
}

typedef struct torch_figures {
  bench_torch torch;
  double ms[N_CASES][2];
} torch_figures;

static const char *const case_names[N_CASES] = {"lstm", "attention"};

static bool parse_torch_line(const char *line, void *data) {
  torch_figures *tf = data;
  char name[64], pass[64];
  double ms;
  if (sscanf(line, "%63s %63s %lf", name, pass, &ms) != 3) return false;
  for (int i = 0; i < N_CASES; i++)
    if (strcmp(name, case_names[i]) == 0) tf->ms[i][strcmp(pass, "backward") == 0] = ms;
  return true;
}

/* Takes "--case NAME" out of argv (the other options are bench_parse_args's). */
static const char *take_case(int *argc, char **argv) {
  const char *only = NULL;
  int out = 1;
  for (int i = 1; i < *argc; i++) {
    if (strcmp(argv[i], "--case") == 0 && i + 1 < *argc) {
      only = argv[++i];
      continue;
    }
    argv[out++] = argv[i];
  }
  *argc = out;
  return only;
}

int main(int argc, char **argv) {
  int threads, runs;
  const char *only = take_case(&argc, argv);
  if (only && strcmp(only, case_names[0]) != 0 && strcmp(only, case_names[1]) != 0) {
    fprintf(stderr, "bench-sequence: --case takes lstm or attention, not %s\n", only);
    return 2;
  }
  if (!bench_parse_args(argc, argv, 64, &threads, &runs)) return 2;
  loom_error err = {0};
  loom_pool *pool = loom_pool_new(threads, &err);
  if (!pool) die("pool", &err);

  workload w[N_CASES] = {
    {.name = "lstm", .title = "lstm 256→256, seq 128, batch 1", .batch = 1},
    {.name = "attention", .title = "attention d=256 8 heads causal, seq 128", .batch = 1},
  };
  w[0].layer = loom_layer_new_by_name("lstm", &err);
  set(w[0].layer, "input_size", 256);
  set(w[0].layer, "hidden_size", 256);
  setup(&w[0], "lstm", &(loom_shape){2, {128, 256}});
  w[1].layer = loom_layer_new_by_name("attention", &err);
  set(w[1].layer, "d_model", 256);
  set(w[1].layer, "heads", 8);
  if (loom_layer_set_bool(w[1].layer, "bias", true, &err)) die("bias", &err);
  setup(&w[1], "attention", &(loom_shape){2, {128, 256}});

  printf("bench-sequence: %d thread%s, median of %d runs, milliseconds per call\n", threads, threads == 1 ? "" : "s",
         runs);
  char *loadavg = NULL;
  if (g_file_get_contents("/proc/loadavg", &loadavg, NULL, NULL))
    printf("load average before the run: %.*s\n", (int)strcspn(loadavg, " "), loadavg);
  g_free(loadavg);
  printf("matrix products: loom_sgemm's packed kernels at level %s (docs/sgemm.md)\n", loom_kernels_get()->name);
  double ms[N_CASES][2];
  bool selected[N_CASES];
  for (int i = 0; i < N_CASES; i++) {
    selected[i] = !only || strcmp(only, case_names[i]) == 0;
    if (!selected[i]) continue;
    w[i].ctx = (loom_ctx){.pool = pool, .training = true};
    ms[i][0] = timed(run_forward, &w[i], runs);
    run_forward(&w[i]);
    ms[i][1] = timed(run_backward, &w[i], runs);
  }

  torch_figures tf = {0};
  for (int i = 0; i < N_CASES; i++) tf.ms[i][0] = tf.ms[i][1] = -1.0;
  bench_run_torch(&tf.torch, "torch_sequence.py", threads, runs, parse_torch_line, &tf);
  if (tf.torch.available)
    printf("torch %s with torch.set_num_threads(%d)\n", tf.torch.version, threads);
  else
    printf("torch column skipped: %s\n", tf.torch.note);
  printf("\n%-42s %-9s %10s %10s %11s\n", "workload", "pass", "loom", "torch", "torch/loom");
  for (int i = 0; i < N_CASES; i++)
    for (int p = 0; p < 2 && selected[i]; p++) {
      double t = tf.ms[i][p];
      char tcol[32] = "-", rcol[32] = "-";
      if (tf.torch.available && t > 0) {
        snprintf(tcol, sizeof tcol, "%.4f", t);
        snprintf(rcol, sizeof rcol, "%.2f", t / ms[i][p]);
      }
      printf("%-42s %-9s %10.4f %10s %11s\n", p == 0 ? w[i].title : "", p == 0 ? "forward" : "backward", ms[i][p],
             tcol, rcol);
    }
  for (int i = 0; i < N_CASES; i++) {
    loom_layer_free(w[i].layer);
    g_free(w[i].x);
    g_free(w[i].y);
    g_free(w[i].dx);
    g_free(w[i].dy);
  }
  loom_pool_free(pool);
  return 0;
}
