/*
 * bench-layers: forward and backward time of three workloads, each beside the
 * same operation in PyTorch measured in the same run (tests/bench/
 * torch_layers.py through /usr/bin/python3, same thread count):
 *
 *   dense 1024→1024, batch 64
 *   conv2d 32→64, 3×3, padding 1, on batch 8 × 32 × 64 × 64
 *   the playground MLP 2-8-8-1 (dense + tanh), batch 10, run through a loom_net
 *
 * Then the dense workload's forward at a few dtypes, plain (loom_sgemm on the
 * dequantized copy) beside at rest (the packed codes only: docs/kernels.md,
 * "Dense layer at rest"), with the bytes each keeps resident.
 *
 * Then every float32 product of the dense and conv workloads alone, through
 * loom_sgemm on one thread beside single-threaded OpenBLAS on the same shape
 * (bench-products.c), and the dense workload on two threads against one.
 *
 * Usage: bench-layers [--threads N] [--runs R] [--cpu-time]
 * N defaults to the online cores. Each figure is the median over R runs
 * (default 7) of the time per call; a run repeats the call for at least 50 ms.
 * Without torch the column says so. --cpu-time (one thread only) times loom
 * and torch in their threads' CPU time, which other work on a shared machine
 * disturbs less than the wall clock; the two-thread comparisons are left out.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-products.h"
#include "bench-util.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "layers/layer-impl.h"
#include "loom/loom.h"

#define MAX_LAYERS 5

typedef struct workload {
  const char *name, *title;
  loom_net *net; /* when set, the layers run through loom_net_forward/backward */
  int n_layers;
  loom_layer *layers[MAX_LAYERS];
  int64_t batch;
  float *acts[MAX_LAYERS + 1]; /* acts[0] = x, acts[i+1] = output of layer i */
  float *grads[MAX_LAYERS + 1];
  loom_ctx ctx;
} workload;

static void die(const char *what, const loom_error *err) {
  fprintf(stderr, "bench-layers: %s: %s\n", what, err->message);
  exit(1);
}

static void random_fill(float *v, int64_t n, uint32_t seed) {
  GRand *r = g_rand_new_with_seed(seed);
  for (int64_t i = 0; i < n; i++) v[i] = (float)g_rand_double_range(r, -1.0, 1.0);
  g_rand_free(r);
}

static void add_layer(workload *w, loom_layer *l) { w->layers[w->n_layers++] = l; }

static void finish(workload *w, const loom_shape *in) {
  loom_error err = {0};
  loom_shape s = *in;
  w->acts[0] = g_new(float, w->batch * loom_shape_numel(&s));
  w->grads[0] = g_new(float, w->batch * loom_shape_numel(&s));
  random_fill(w->acts[0], w->batch * loom_shape_numel(&s), 1);
  for (int i = 0; i < w->n_layers; i++) {
    if (loom_layer_build(w->layers[i], &s, 7 + (uint64_t)i, &err)) die(w->name, &err);
    s = loom_layer_out_shape(w->layers[i]);
    w->acts[i + 1] = g_new(float, w->batch * loom_shape_numel(&s));
    w->grads[i + 1] = g_new(float, w->batch * loom_shape_numel(&s));
  }
  random_fill(w->grads[w->n_layers], w->batch * loom_shape_numel(&s), 2);
}

static void run_forward(workload *w) {
  loom_error err = {0};
  if (w->net) {
    if (loom_net_forward(w->net, &w->ctx, w->acts[0], w->batch, w->acts[1], &err)) die(w->name, &err);
    return;
  }
  for (int i = 0; i < w->n_layers; i++)
    if (layer_forward(w->layers[i], &w->ctx, w->acts[i], w->acts[i + 1], w->batch, &err)) die(w->name, &err);
}

/* Input and parameter gradients (accumulated, like torch's .grad). */
static void run_backward(workload *w) {
  loom_error err = {0};
  if (w->net) {
    if (loom_net_backward(w->net, &w->ctx, w->grads[1], w->grads[0], &err)) die(w->name, &err);
    return;
  }
  for (int i = w->n_layers - 1; i >= 0; i--)
    if (layer_backward(w->layers[i], &w->ctx, w->acts[i], w->acts[i + 1], w->grads[i + 1], w->grads[i], w->batch,
                       &err))
      die(w->name, &err);
}

/* Median over `runs` of the milliseconds per call; each run lasts >= 50 ms. */
static double timed(void (*fn)(workload *), workload *w, int runs) {
  double t[64];
  fn(w); /* warm-up: workspaces, dequantized caches */
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

static loom_layer *make(const char *type) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  if (!l) die(type, &err);
  return l;
}

static void set_int(loom_layer *l, const char *name, int64_t v) {
  loom_error err = {0};
  if (loom_layer_set_int(l, name, v, &err)) die(name, &err);
}

static loom_layer *dense(int64_t in, int64_t out) {
  loom_layer *l = make("dense");
  set_int(l, "in_features", in);
  set_int(l, "out_features", out);
  return l;
}

/* Dense 1024→1024, batch 64, inference forward: plain against at rest. */
static void bench_at_rest(loom_pool *pool, int runs) {
  static const loom_dtype dts[] = {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT8, LOOM_DTYPE_INT4, LOOM_DTYPE_TERNARY,
                                   LOOM_DTYPE_FP8_E4M3, LOOM_DTYPE_FP4};
  printf("\n%-38s %10s %10s %9s %12s %12s\n", "dense 1024→1024 b64, forward", "plain", "at rest", "rest/pl",
         "bytes plain", "bytes rest");
  for (size_t k = 0; k < G_N_ELEMENTS(dts); k++) {
    loom_error err = {0};
    workload w = {.name = loom_dtype_name(dts[k]), .batch = 64, .ctx = {.pool = pool}};
    loom_layer *l = dense(1024, 1024);
    if (loom_layer_set_dtype(l, dts[k], &err)) die(w.name, &err);
    add_layer(&w, l);
    finish(&w, &(loom_shape){1, {1024}});
    double plain = timed(run_forward, &w, runs);
    size_t plain_bytes = loom_layer_resident_bytes(l);
    if (loom_layer_to_inference(l, &err)) die(w.name, &err);
    double rest = timed(run_forward, &w, runs);
    printf("%-38s %10.4f %10.4f %9.2f %12zu %12zu\n", w.name, plain, rest, rest / plain, plain_bytes,
           loom_layer_resident_bytes(l));
    loom_layer_free(l);
    for (int i = 0; i < 2; i++) {
      g_free(w.acts[i]);
      g_free(w.grads[i]);
    }
  }
}

/* The dense workload (GEMM-bound) on two threads against one: the median of
 * per-run ratios, the two pools taking turns run by run. */
static void bench_scaling(workload *w, int runs) {
  loom_pool *one = loom_pool_new(1, NULL), *two = loom_pool_new(2, NULL);
  if (!one || !two) {
    fprintf(stderr, "bench-layers: no pool for the scaling runs\n");
    exit(1);
  }
  double ratio[2][64];
  for (int r = 0; r < runs; r++)
    for (int p = 0; p < 2; p++) {
      void (*fn)(workload *) = p ? run_backward : run_forward;
      w->ctx.pool = one;
      double t1 = timed(fn, w, 1);
      w->ctx.pool = two;
      ratio[p][r] = t1 / timed(fn, w, 1);
    }
  printf("\n%s, 2 threads against 1 (time ratio, median of %d): forward %.2f, backward %.2f\n", w->title, runs,
         bench_median(ratio[0], runs), bench_median(ratio[1], runs));
  loom_pool_free(one);
  loom_pool_free(two);
}

/* ---- torch ----------------------------------------------------------------- */

typedef struct torch_figures {
  bench_torch torch;
  double ms[3][2]; /* workload × (forward, backward); < 0 if missing */
} torch_figures;

static const char *const workload_names[3] = {"dense", "conv2d", "mlp"};

/* "NAME forward|backward MS" */
static bool parse_torch_line(const char *line, void *data) {
  torch_figures *tf = data;
  char name[64], pass[64];
  double ms;
  if (sscanf(line, "%63s %63s %lf", name, pass, &ms) != 3) return false;
  for (int i = 0; i < 3; i++)
    if (strcmp(name, workload_names[i]) == 0) tf->ms[i][strcmp(pass, "backward") == 0] = ms;
  return true;
}

static torch_figures run_torch(int threads, int runs) {
  torch_figures tf = {0};
  for (int i = 0; i < 3; i++) tf.ms[i][0] = tf.ms[i][1] = -1.0;
  bench_run_torch(&tf.torch, "torch_layers.py", threads, runs, parse_torch_line, &tf);
  return tf;
}

int main(int argc, char **argv) {
  bench_blas_one_thread(argv);
  int threads, runs;
  bool cpu_time = bench_take_flag(&argc, argv, "--cpu-time");
  if (!bench_parse_args(argc, argv, 64, &threads, &runs)) return 2;
  if (cpu_time && threads != 1) {
    fprintf(stderr, "bench-layers: --cpu-time needs --threads 1\n");
    return 2;
  }
  bench_use_thread_cpu_time(cpu_time);

  loom_error err = {0};
  loom_pool *pool = loom_pool_new(threads, &err);
  if (!pool) die("pool", &err);

  workload w[3] = {
    {.name = "dense", .title = "dense 1024→1024, batch 64", .batch = 64},
    {.name = "conv2d", .title = "conv2d 32→64 3×3 pad 1, 8×32×64×64", .batch = 8},
    {.name = "mlp", .title = "MLP 2-8-8-1 tanh, batch 10", .batch = 10},
  };
  add_layer(&w[0], dense(1024, 1024));
  finish(&w[0], &(loom_shape){1, {1024}});

  loom_layer *conv = make("conv2d");
  set_int(conv, "in_channels", 32);
  set_int(conv, "out_channels", 64);
  if (loom_layer_set_ints(conv, "padding", (const int64_t[]){1, 1}, 2, &err)) die("padding", &err);
  add_layer(&w[1], conv);
  finish(&w[1], &(loom_shape){3, {32, 64, 64}});

  /* The playground network: five slots of one cell along the spine. */
  loom_shape mlp_in = {1, {2}}, mlp_out = {1, {1}};
  w[2].net = loom_net_new(1, 1, 1, 5, &err);
  if (!w[2].net || loom_net_set_input_shape(w[2].net, &mlp_in, &err)) die("mlp", &err);
  loom_layer *mlp[5] = {dense(2, 8), make("tanh"), dense(8, 8), make("tanh"), dense(8, 1)};
  for (int l = 0; l < 5; l++)
    if (loom_net_place(w[2].net, (loom_coord){0, 0, 0, l}, mlp[l], &err)) die("mlp", &err);
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(w[2].net, 7, &diags) != 0) {
    fprintf(stderr, "bench-layers: mlp: %s\n", diags ? diags[0].message : "shape inference failed");
    return 1;
  }
  free(diags);
  for (int l = 0; l < 2; l++) {
    const loom_shape *s = l ? &mlp_out : &mlp_in;
    w[2].acts[l] = g_new(float, w[2].batch * loom_shape_numel(s));
    w[2].grads[l] = g_new(float, w[2].batch * loom_shape_numel(s));
    random_fill(w[2].acts[l], w[2].batch * loom_shape_numel(s), 1);
    random_fill(w[2].grads[l], w[2].batch * loom_shape_numel(s), 2);
  }

  printf("bench-layers: %d thread%s, median of %d runs, milliseconds per call%s\n", threads,
         threads == 1 ? "" : "s", runs, cpu_time ? " (thread CPU time)" : "");
  /* Other work on the machine skews both columns; say how busy it was. */
  char *loadavg = NULL;
  if (g_file_get_contents("/proc/loadavg", &loadavg, NULL, NULL))
    printf("load average before the run: %.*s\n", (int)strcspn(loadavg, " "), loadavg);
  g_free(loadavg);
  printf("matrix products: loom_sgemm's packed kernels at level %s (docs/sgemm.md), conv2d's tiles too\n",
         loom_kernels_get()->name);
  double loom_ms[3][2];
  for (int i = 0; i < 3; i++) {
    w[i].ctx = (loom_ctx){.pool = pool, .training = true};
    loom_ms[i][0] = timed(run_forward, &w[i], runs);
    run_forward(&w[i]);
    loom_ms[i][1] = timed(run_backward, &w[i], runs);
  }

  torch_figures tf = run_torch(threads, runs);
  if (tf.torch.available)
    printf("torch %s with torch.set_num_threads(%d)\n", tf.torch.version, threads);
  else
    printf("torch column skipped: %s\n", tf.torch.note);
  printf("\n%-38s %-9s %10s %10s %11s\n", "workload", "pass", "loom", "torch", "loom/torch");
  for (int i = 0; i < 3; i++)
    for (int p = 0; p < 2; p++) {
      double t = tf.ms[i][p];
      char tcol[32] = "-", rcol[32] = "-";
      if (tf.torch.available && t > 0) {
        snprintf(tcol, sizeof tcol, "%.4f", t);
        snprintf(rcol, sizeof rcol, "%.2f", loom_ms[i][p] / t);
      }
      printf("%-38s %-9s %10.4f %10s %11s\n", p == 0 ? w[i].title : "", p == 0 ? "forward" : "backward",
             loom_ms[i][p], tcol, rcol);
    }
  bench_at_rest(pool, runs);
  loom_pool *one = loom_pool_new(1, NULL), *two = loom_pool_new(2, NULL);
  if (!one || !two) die("pool", &err);
  bench_products(one, cpu_time ? NULL : two, runs);
  loom_pool_free(one);
  loom_pool_free(two);
  if (!cpu_time) bench_scaling(&w[0], runs);

  for (int i = 0; i < 3; i++) {
    for (int l = 0; l <= MAX_LAYERS; l++) {
      if (l < w[i].n_layers) loom_layer_free(w[i].layers[l]);
      g_free(w[i].acts[l]);
      g_free(w[i].grads[l]);
    }
    loom_net_free(w[i].net);
  }
  loom_pool_free(pool);
  return 0;
}
