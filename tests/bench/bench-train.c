/*
 * bench-train: training steps per second of two networks, each beside the
 * same training loop in PyTorch measured in the same run
 * (tests/bench/torch_train.py through /usr/bin/python3, same thread count):
 *
 *   playground  2-8-8-1 MLP (tanh), batch 10, BCE on logits, SGD (lr 0.03,
 *               momentum 0.9), 200 xor points
 *   mlp784      784-256-10 MLP (relu), batch 64, cross-entropy, Adam (lr 1e-3),
 *               1024 samples of 10 Gaussian clusters
 *   cnn         the digits CNN example (loom new --example cnn: conv 1→4 3×3
 *               pad 1, relu, conv 4→8 3×3 stride 2 pad 1, relu, dense 128→10),
 *               batch 32, cross-entropy, Adam (lr 1e-3), 1024 1×8×8 images of
 *               10 Gaussian clusters
 *
 * Two loom columns: the trainer (loom_trainer_step: shuffled batches,
 * forward, loss, backward, update, re-morph, NaN checks and per-layer
 * statistics) and the bare loop of docs/training.md (batcher, forward, loss,
 * backward, optimizer, touch), which shows what the trainer's bookkeeping
 * costs. The ratio is loom trainer / torch in steps per second (above 1:
 * loom is faster).
 *
 * Usage: bench-train [--threads N] [--runs R] [--cpu-time]
 * (N defaults to the online cores; --cpu-time, one thread only: loom and
 * torch timed in their threads' CPU time, less disturbed by other work)
 * Each figure is the median over R runs (default 7); a run repeats steps for
 * at least 0.2 s, the trainer's and the loop's runs alternate, and
 * trainer/loop is the median ratio of neighbouring runs (robust on a busy
 * machine). Without torch the column says so.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench-util.h"
#include "kernels/cpu.h"
#include "loom/loom.h"

#define RUN_SECONDS 0.2
#define WARMUP_STEPS 5
#define MAX_RUNS 64
#define MAX_TENSORS 16
#define N_WORKLOADS 4

static void die(const char *what, const loom_error *err) {
  fprintf(stderr, "bench-train: %s: %s\n", what, err->message);
  exit(1);
}

typedef struct workload {
  const char *name, *title;
  loom_net *net;
  loom_dataset *data;
  loom_train_config cfg;
} workload;

/* in → hidden… → out, dense and `act` layers in the slots of one cell. */
static loom_net *mlp(int64_t in, const int64_t *widths, int n_dense, const char *act) {
  loom_error err = {0};
  int n_slots = 2 * n_dense - 1;
  loom_net *net = loom_net_new(1, 1, 1, n_slots, &err);
  loom_shape s = loom_shape_1d(in);
  if (!net || loom_net_set_input_shape(net, &s, &err)) die("network", &err);
  int64_t prev = in;
  for (int i = 0, slot = 0; i < n_dense; i++) {
    loom_layer *d = loom_layer_new_by_name("dense", &err);
    if (!d || loom_layer_set_int(d, "in_features", prev, &err) ||
        loom_layer_set_int(d, "out_features", widths[i], &err) ||
        loom_net_place(net, (loom_coord){0, 0, 0, slot++}, d, &err))
      die("dense", &err);
    if (i + 1 < n_dense) {
      loom_layer *a = loom_layer_new_by_name(act, &err);
      if (!a || loom_net_place(net, (loom_coord){0, 0, 0, slot++}, a, &err)) die(act, &err);
    }
    prev = widths[i];
  }
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(net, 7, &diags) != 0) {
    fprintf(stderr, "bench-train: %s\n", diags ? diags[0].message : "shape inference failed");
    exit(1);
  }
  free(diags);
  return net;
}

/* Steps per second of `step` over one run of at least RUN_SECONDS. */
static double run_rate(void (*step)(void *, const char *), void *arg, const char *name) {
  long steps = 0;
  double start = bench_now_s(), elapsed;
  do {
    step(arg, name);
    steps++;
    elapsed = bench_now_s() - start;
  } while (elapsed < RUN_SECONDS);
  return (double)steps / elapsed;
}

/* ---- loom: the trainer ------------------------------------------------------ */

typedef struct trainer_run {
  loom_net *net;
  loom_trainer *tr;
} trainer_run;

static void trainer_step(void *arg, const char *name) {
  trainer_run *t = arg;
  loom_error err = {0};
  loom_step_stats st;
  if (loom_trainer_step(t->tr, &st, &err)) die(name, &err);
}

static void trainer_setup(trainer_run *t, const workload *w, loom_pool *pool) {
  loom_error err = {0};
  t->net = loom_net_clone(w->net, &err);
  if (!t->net) die(w->name, &err);
  t->tr = loom_trainer_new(t->net, w->data, NULL, &w->cfg, pool, &err);
  if (!t->tr) die(w->name, &err);
}

static void trainer_clear(trainer_run *t) {
  loom_trainer_free(t->tr);
  loom_net_free(t->net);
}

/* ---- loom: the bare loop of docs/training.md ------------------------------- */

typedef struct bare_loop {
  loom_net *net;
  loom_batcher *batches;
  loom_optim *opt;
  const loom_train_config *cfg;
  loom_ctx ctx;
  int n;
  loom_weights *stores[MAX_TENSORS];
  float *masters[MAX_TENSORS];
  const float *grads[MAX_TENSORS];
  int64_t sizes[MAX_TENSORS];
  float *y, *dy;
  int64_t width, batch_index, epoch, step;
} bare_loop;

static void bare_step(void *arg, const char *name) {
  bare_loop *b = arg;
  loom_error err = {0};
  if (b->batch_index == loom_batcher_n_batches(b->batches)) {
    b->batch_index = 0;
    loom_batcher_set_epoch(b->batches, (uint64_t)++b->epoch);
  }
  loom_batch batch;
  double loss;
  b->ctx.step = (uint64_t)b->step;
  if (loom_batcher_get(b->batches, b->batch_index++, &batch, &err)) die(name, &err);
  loom_net_zero_grad(b->net);
  if (loom_net_forward(b->net, &b->ctx, batch.inputs, batch.size, b->y, &err) ||
      loom_loss_eval(&b->cfg->loss, b->y, batch.size, b->width, batch.labels, batch.targets, NULL, &loss, b->dy,
                     &err) ||
      loom_net_backward(b->net, &b->ctx, b->dy, NULL, &err) ||
      loom_optim_step(b->opt, b->masters, b->grads, loom_schedule_lr(&b->cfg->schedule, b->step++), &err))
    die(name, &err);
  for (int t = 0; t < b->n; t++) loom_weights_touch(b->stores[t]);
}

static void bare_setup(bare_loop *b, const workload *w, loom_pool *pool) {
  loom_error err = {0};
  *b = (bare_loop){.cfg = &w->cfg, .ctx = {.pool = pool, .training = true, .seed = w->cfg.seed}};
  b->net = loom_net_clone(w->net, &err);
  if (!b->net) die(w->name, &err);
  loom_diag *diags = NULL; /* a clone is built again before it runs (the trainer does it itself) */
  int problems = loom_net_infer_shapes(b->net, 7, &diags);
  free(diags);
  if (problems) {
    fprintf(stderr, "bench-train: %s: shape inference failed\n", w->name);
    exit(1);
  }
  for (int64_t i = 0; i < loom_net_n_layers(b->net); i++) {
    loom_layer *l = loom_net_layer_at(b->net, loom_net_layer_coord(b->net, i));
    for (int t = 0; t < loom_layer_n_weights(l); t++) {
      if (b->n == MAX_TENSORS) {
        fprintf(stderr, "bench-train: %s: more than %d tensors\n", w->name, MAX_TENSORS);
        exit(1);
      }
      b->stores[b->n] = loom_layer_weights(l, t);
      b->masters[b->n] = loom_weights_master(b->stores[b->n]);
      b->grads[b->n] = loom_layer_grad(l, t);
      b->sizes[b->n] = loom_weights_count(b->stores[b->n]);
      b->n++;
    }
  }
  b->opt = loom_optim_new(&w->cfg.optim, b->n, b->sizes, &err);
  if (b->opt) loom_optim_set_pool(b->opt, pool);
  b->batches = loom_batcher_new(w->data, w->cfg.batch_size, w->cfg.shuffle, w->cfg.drop_last, w->cfg.seed, &err);
  if (!b->opt || !b->batches) die(w->name, &err);
  loom_batcher_set_epoch(b->batches, 0);
  loom_shape out = loom_net_output_shape(b->net);
  b->width = loom_shape_numel(&out);
  b->y = g_new(float, w->cfg.batch_size * b->width);
  b->dy = g_new(float, w->cfg.batch_size * b->width);
}

static void bare_clear(bare_loop *b) {
  g_free(b->y);
  g_free(b->dy);
  loom_batcher_free(b->batches);
  loom_optim_free(b->opt);
  loom_net_free(b->net);
}

/* The trainer and the bare loop take turns run by run, so a burst of other
 * work on the machine hits both alike; trainer/loop is the median of the
 * ratios of neighbouring runs. */
static void measure(const workload *w, loom_pool *pool, int runs, double *trainer, double *bare, double *ratio) {
  trainer_run t;
  bare_loop b;
  trainer_setup(&t, w, pool);
  bare_setup(&b, w, pool);
  for (int i = 0; i < WARMUP_STEPS; i++) {
    trainer_step(&t, w->name);
    bare_step(&b, w->name);
  }
  double tr[MAX_RUNS], br[MAX_RUNS], ra[MAX_RUNS];
  for (int r = 0; r < runs; r++) {
    tr[r] = run_rate(trainer_step, &t, w->name);
    br[r] = run_rate(bare_step, &b, w->name);
    ra[r] = tr[r] / br[r];
  }
  trainer_clear(&t);
  bare_clear(&b);
  *trainer = bench_median(tr, runs);
  *bare = bench_median(br, runs);
  *ratio = bench_median(ra, runs);
}

/* ---- torch ----------------------------------------------------------------- */

typedef struct torch_figures {
  bench_torch torch;
  double rate[N_WORKLOADS]; /* steps per second; < 0 if missing */
} torch_figures;

typedef struct torch_parse {
  torch_figures *tf;
  const workload *w;
} torch_parse;

/* "NAME STEPS_PER_SECOND" */
static bool parse_torch_line(const char *line, void *data) {
  torch_parse *tp = data;
  char name[64];
  double rate;
  if (sscanf(line, "%63s %lf", name, &rate) != 2) return false;
  for (int i = 0; i < N_WORKLOADS; i++)
    if (strcmp(name, tp->w[i].name) == 0) tp->tf->rate[i] = rate;
  return true;
}

static torch_figures run_torch(const workload *w, int threads, int runs) {
  torch_figures tf = {0};
  for (int i = 0; i < N_WORKLOADS; i++) tf.rate[i] = -1.0;
  torch_parse tp = {&tf, w};
  bench_run_torch(&tf.torch, "torch_train.py", threads, runs, parse_torch_line, &tp);
  return tf;
}

int main(int argc, char **argv) {
  int threads, runs;
  bool cpu_time = bench_take_flag(&argc, argv, "--cpu-time");
  if (!bench_parse_args(argc, argv, MAX_RUNS, &threads, &runs)) return 2;
  if (cpu_time && threads != 1) {
    fprintf(stderr, "bench-train: --cpu-time needs --threads 1\n");
    return 2;
  }
  bench_use_thread_cpu_time(cpu_time);

  loom_error err = {0};
  loom_pool *pool = loom_pool_new(threads, &err);
  if (!pool) die("pool", &err);

  workload w[N_WORKLOADS] = {
    {.name = "playground", .title = "MLP 2-8-8-1 tanh, batch 10, BCE, SGD"},
    {.name = "mlp784", .title = "MLP 784-256-10 relu, batch 64, CE, Adam"},
    {.name = "cnn", .title = "digits CNN 1x8x8, batch 32, CE, Adam"},
    /* quantization-aware: the trainer re-morphs each updated store and the
     * layers read its dequantized copy (docs/trainer.md); torch has no row */
    {.name = "mlp784-int8", .title = "MLP 784-256-10 at int8 (QAT), as mlp784"},
  };
  w[0].net = mlp(2, (const int64_t[]){8, 8, 1}, 3, "tanh");
  w[0].data = loom_gen_xor(200, 0.02, 1, &err);
  /* 0/1 float targets, which the bare loop's loss reads as they are */
  if (!w[0].data || loom_dataset_labels_to_vectors(w[0].data, false, &err)) die(w[0].name, &err);
  w[0].cfg = loom_train_config_default();
  w[0].cfg.loss = (loom_loss_spec){.kind = LOOM_LOSS_BCE_LOGITS, .heads = 1};
  w[0].cfg.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
  w[0].cfg.optim.momentum = 0.9;
  w[0].cfg.schedule = loom_schedule_constant(0.03);
  w[0].cfg.batch_size = 10;

  w[1].net = mlp(784, (const int64_t[]){256, 10}, 2, "relu");
  w[1].data = loom_gen_clusters(1024, 10, 784, 0.3, 1, &err);
  if (!w[1].data) die(w[1].name, &err);
  w[1].cfg = loom_train_config_default(); /* cross-entropy, Adam 1e-3 */
  w[1].cfg.batch_size = 64;

  const loom_shape image = loom_shape_make(3, (const int64_t[]){1, 8, 8});
  if (loom_example_build("cnn", &w[2].net, &err)) die(w[2].name, &err);
  w[2].data = loom_gen_clusters(1024, 10, 64, 0.3, 1, &err);
  if (!w[2].data || loom_dataset_reshape_inputs(w[2].data, &image, &err)) die(w[2].name, &err);
  w[2].cfg = loom_train_config_default();
  w[2].cfg.batch_size = 32;

  w[3].net = mlp(784, (const int64_t[]){256, 10}, 2, "relu");
  for (int64_t i = 0; i < loom_net_n_layers(w[3].net); i++) {
    loom_layer *l = loom_net_layer_at(w[3].net, loom_net_layer_coord(w[3].net, i));
    if (loom_layer_n_weights(l) > 0 && loom_layer_set_dtype(l, LOOM_DTYPE_INT8, &err)) die(w[3].name, &err);
  }
  w[3].data = loom_gen_clusters(1024, 10, 784, 0.3, 1, &err);
  if (!w[3].data) die(w[3].name, &err);
  w[3].cfg = w[1].cfg;

  for (int i = 0; i < N_WORKLOADS; i++) {
    w[i].cfg.epochs = INT64_MAX / 2; /* never finishes inside the bench */
    w[i].cfg.seed = 1;
    if (loom_train_config_validate(&w[i].cfg, &err)) die(w[i].name, &err);
  }

  printf("bench-train: %d thread%s, median of %d runs of >= %.1f s, training steps per second%s\n", threads,
         threads == 1 ? "" : "s", runs, RUN_SECONDS, cpu_time ? " of thread CPU time" : "");
  /* Other work on the machine skews every column; say how busy it was. */
  char *loadavg = NULL;
  if (g_file_get_contents("/proc/loadavg", &loadavg, NULL, NULL))
    printf("load average before the run: %.*s\n", (int)strcspn(loadavg, " "), loadavg);
  g_free(loadavg);
  printf("matrix products: loom_sgemm's packed kernels at level %s (docs/sgemm.md)\n", loom_kernels_get()->name);
  double trainer[N_WORKLOADS], bare[N_WORKLOADS], ratio[N_WORKLOADS];
  for (int i = 0; i < N_WORKLOADS; i++) measure(&w[i], pool, runs, &trainer[i], &bare[i], &ratio[i]);
  torch_figures tf = run_torch(w, threads, runs);
  if (tf.torch.available)
    printf("torch %s with torch.set_num_threads(%d)\n", tf.torch.version, threads);
  else
    printf("torch column skipped: %s\n", tf.torch.note);

  printf("\n%-42s %12s %12s %12s %12s %11s\n", "workload", "loom trainer", "loom loop", "trainer/loop", "torch",
         "loom/torch");
  for (int i = 0; i < N_WORKLOADS; i++) {
    char tcol[32] = "-", rcol[32] = "-";
    if (tf.torch.available && tf.rate[i] > 0) {
      snprintf(tcol, sizeof tcol, "%.1f", tf.rate[i]);
      snprintf(rcol, sizeof rcol, "%.2f", trainer[i] / tf.rate[i]);
    }
    printf("%-42s %12.1f %12.1f %12.2f %12s %11s\n", w[i].title, trainer[i], bare[i], ratio[i], tcol, rcol);
  }
  printf("(trainer/loop: median ratio of neighbouring runs, what the trainer's bookkeeping leaves of the bare\n"
         " loop's speed; loom/torch: trainer steps per second over torch's; above 1 loom is faster)\n");

  for (int i = 0; i < N_WORKLOADS; i++) {
    loom_net_free(w[i].net);
    loom_dataset_free(w[i].data);
  }
  loom_pool_free(pool);
  return 0;
}
