/*
 * The Vulkan backend's costs (docs/gpu.md), each beside a baseline measured in
 * the same run:
 *
 *  1. The forward of 16 dense 256→256 layers at batch 1 recorded into one
 *     command buffer and submitted once: wall time per forward (copy in,
 *     submit, wait, copy out), the same for 1 layer and for an empty
 *     submission, and from them the cost each further layer adds (the
 *     per-layer overhead, µs); beside it loom_net_forward on the CPU.
 *  2. A large float32 product C = A·Bᵀ (n×n×n) as one dispatch: GFLOP/s of
 *     the device beside loom_sgemm on the CPU (OpenBLAS when built with it),
 *     and the device's A·B and Aᵀ·B (the dense layer's two gradients).
 *  3. A training step (loom_trainer_step: batch, forward, loss, backward,
 *     Adam) of a 784-256-10 ReLU MLP at batch 64 on 1024 samples of 10
 *     Gaussian clusters (bench-train's mlp784), and of the digits CNN
 *     example at batch 32 on 1024 8×8 images of 10 clusters, on the device
 *     beside the CPU. tests/bench/torch_gpu.py is the PyTorch CUDA side of
 *     all three.
 *
 * Usage: bench-gpu [--threads N] [--runs R] [--size N] [--device I]
 * (--size: the large product, default 1024; use 8192 on a real GPU.)
 * Exits 77 without a Vulkan device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-util.h"
#include "gpu/gpu-internal.h"
#include "kernels/matmul.h"
#include "loom/loom.h"

static loom_net *dense_stack(int layers, int width) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, layers, 1, &err);
  loom_shape in = loom_shape_1d(width);
  if (!net || loom_net_set_input_shape(net, &in, &err)) goto fail;
  for (int i = 0; i < layers; i++) {
    loom_layer *l = loom_layer_new_by_name("dense", &err);
    if (!l || loom_layer_set_int(l, "in_features", width, &err) || loom_layer_set_int(l, "out_features", width, &err) ||
        loom_net_place(net, (loom_coord){0, 0, i, 0}, l, &err))
      goto fail;
  }
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(net, 1, &diags) != 0) {
    fprintf(stderr, "shape inference failed\n");
    exit(1);
  }
  free(diags);
  return net;
fail:
  fprintf(stderr, "%s\n", err.message);
  exit(1);
}

/* Median seconds of one forward on the device over `runs` batches of `reps`. */
static double time_gpu_forward(loom_gpu *gpu, loom_net *net, int runs, int reps) {
  loom_error err = {0};
  loom_gpu_net *gn = loom_gpu_net_new(gpu, net, 1, &err);
  if (!gn) {
    fprintf(stderr, "%s\n", err.message);
    exit(1);
  }
  float x[256] = {0}, y[256];
  for (int i = 0; i < 256; i++) x[i] = (float)(i % 7) * 0.1f;
  double t[64];
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now_s();
    for (int i = 0; i < reps; i++)
      if (loom_gpu_net_forward(gn, x, y, &err)) {
        fprintf(stderr, "%s\n", err.message);
        exit(1);
      }
    t[r] = (bench_now_s() - t0) / reps;
  }
  loom_gpu_net_free(gn);
  return bench_median(t, runs);
}

static double time_cpu_forward(loom_net *net, int threads, int runs, int reps) {
  loom_error err = {0};
  loom_pool *pool = loom_pool_new(threads, &err);
  loom_ctx ctx = {.pool = pool};
  float x[256] = {0}, y[256];
  double t[64];
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now_s();
    for (int i = 0; i < reps; i++) loom_net_forward(net, &ctx, x, 1, y, &err);
    t[r] = (bench_now_s() - t0) / reps;
  }
  loom_pool_free(pool);
  return bench_median(t, runs);
}

static double time_empty_submit(loom_gpu *gpu, int runs, int reps) {
  loom_error err = {0};
  gpu_rec rec;
  if (gpu_rec_begin(gpu, 1, &rec, &err) || gpu_rec_end(&rec, &err)) {
    fprintf(stderr, "%s\n", err.message);
    exit(1);
  }
  double t[64];
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now_s();
    for (int i = 0; i < reps; i++) gpu_rec_submit(&rec, &err);
    t[r] = (bench_now_s() - t0) / reps;
  }
  gpu_rec_free(&rec);
  return bench_median(t, runs);
}

/* Median seconds of one product recorded alone, submit to fence. */
static double time_product(loom_gpu *gpu, const gpu_gemm *op, int runs) {
  loom_error err = {0};
  gpu_rec rec;
  if (gpu_rec_begin(gpu, 1, &rec, &err) || gpu_op_gemm(&rec, op, &err) || gpu_rec_end(&rec, &err) ||
      gpu_rec_submit(&rec, &err)) {
    fprintf(stderr, "%s\n", err.message);
    exit(1);
  }
  double t[64];
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now_s();
    if (gpu_rec_submit(&rec, &err)) {
      fprintf(stderr, "%s\n", err.message);
      exit(1);
    }
    t[r] = bench_now_s() - t0;
  }
  gpu_rec_free(&rec);
  return bench_median(t, runs);
}

static void large_product(loom_gpu *gpu, int64_t n, int threads, int runs) {
  loom_error err = {0};
  gpu_buf a, b, c;
  if (gpu_buf_new(gpu, (size_t)(n * n) * 4, "A", &a, &err) || gpu_buf_new(gpu, (size_t)(n * n) * 4, "B", &b, &err) ||
      gpu_buf_new(gpu, (size_t)(n * n) * 4, "C", &c, &err)) {
    fprintf(stderr, "%s\n", err.message);
    exit(1);
  }
  /* The CPU works on its own copies: mapped device memory may be
   * write-combined, and reading it from the host is very slow. */
  float *ha = malloc((size_t)(n * n) * 4), *hb = malloc((size_t)(n * n) * 4);
  for (int64_t i = 0; i < n * n; i++) {
    ha[i] = (float)((i * 7) % 13) * 0.01f;
    hb[i] = (float)((i * 5) % 11) * 0.01f;
  }
  memcpy(a.map, ha, (size_t)(n * n) * 4);
  memcpy(b.map, hb, (size_t)(n * n) * 4);
  gpu_weights bw = gpu_weights_view(&b, n, n);
  /* The dense layer's three layouts: forward x·Wᵀ (the headline figure,
   * beside the CPU), input gradient dy·W, weight gradient dyᵀ·x. */
  gpu_gemm fwd = {.a = &a, .lda = (uint32_t)n, .b = &bw, .tb = true, .c = &c, .ldc = (uint32_t)n, .m = n, .n = n,
                  .k = n};
  gpu_gemm dx = fwd, dw = fwd;
  dx.tb = false;
  dw.tb = false;
  dw.ta = true;
  double gpu_s = time_product(gpu, &fwd, runs), dx_s = time_product(gpu, &dx, runs),
         dw_s = time_product(gpu, &dw, runs);
  double t[64];
  loom_pool *pool = loom_pool_new(threads, &err);
  float *hc = malloc((size_t)(n * n) * 4);
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now_s();
    loom_sgemm(pool, false, true, n, n, n, ha, n, hb, n, false, hc, n);
    t[r] = bench_now_s() - t0;
  }
  double cpu_s = bench_median(t, runs);
  double flop = 2.0 * (double)n * (double)n * (double)n;
  printf("\nfloat32 product %lld×%lld×%lld (one dispatch, submit to fence):\n", (long long)n, (long long)n,
         (long long)n);
  printf("  device  %8.2f ms  %8.2f GFLOP/s  (A·Bᵀ)\n", gpu_s * 1e3, flop / gpu_s * 1e-9);
  printf("  device  %8.2f ms  %8.2f GFLOP/s  (A·B)\n", dx_s * 1e3, flop / dx_s * 1e-9);
  printf("  device  %8.2f ms  %8.2f GFLOP/s  (Aᵀ·B)\n", dw_s * 1e3, flop / dw_s * 1e-9);
  printf("  CPU     %8.2f ms  %8.2f GFLOP/s  (loom_sgemm, %d threads)\n", cpu_s * 1e3, flop / cpu_s * 1e-9, threads);
  printf("  device / CPU throughput: %.2fx\n", cpu_s / gpu_s);
  free(hc);
  free(ha);
  free(hb);
  loom_pool_free(pool);
  gpu_buf_free(gpu, &a);
  gpu_buf_free(gpu, &b);
  gpu_buf_free(gpu, &c);
}

/* The mlp784 network: 784-256-10, ReLU. */
static loom_net *mlp784(loom_error *err) {
  loom_net *net = loom_net_new(1, 1, 3, 1, err);
  loom_shape in = loom_shape_1d(784);
  if (!net || loom_net_set_input_shape(net, &in, err)) return NULL;
  const char *types[] = {"dense", "relu", "dense"};
  const int64_t io[][2] = {{784, 256}, {0, 0}, {256, 10}};
  for (int x = 0; x < 3; x++) {
    loom_layer *l = loom_layer_new_by_name(types[x], err);
    if (!l || (io[x][0] && (loom_layer_set_int(l, "in_features", io[x][0], err) ||
                            loom_layer_set_int(l, "out_features", io[x][1], err))) ||
        loom_net_place(net, (loom_coord){0, 0, x, 0}, l, err))
      return NULL;
  }
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(net, 1, &diags) != 0) return NULL;
  free(diags);
  return net;
}

/* Median seconds of a training step (Adam at its defaults): the mlp784
 * workload at batch 64 on 1024 samples of 10 clusters, or (cnn) the digits
 * CNN example at batch 32 on 1024 8×8 images of 10 clusters. */
static double time_train_step(loom_gpu *gpu, bool cnn, int threads, int runs) {
  loom_error err = {0};
  loom_net *net = NULL;
  if (cnn ? loom_example_build("cnn", &net, &err) != 0 : !(net = mlp784(&err))) goto fail;
  loom_dataset *ds = loom_gen_clusters(1024, 10, cnn ? 64 : 784, 0.5, 3, &err);
  loom_shape img = loom_shape_make(3, (int64_t[]){1, 8, 8});
  if (!ds || (cnn && loom_dataset_reshape_inputs(ds, &img, &err))) goto fail;
  loom_train_config cfg = loom_train_config_default();
  cfg.batch_size = cnn ? 32 : 64;
  cfg.epochs = 1000000;
  loom_pool *pool = loom_pool_new(threads, &err);
  loom_trainer *tr = loom_trainer_new(net, ds, NULL, &cfg, pool, &err);
  if (!tr || (gpu && loom_trainer_set_device(tr, gpu, &err))) goto fail;
  double t[64];
  for (int r = 0; r < runs; r++) {
    int steps = 0;
    double t0 = bench_now_s(), t1;
    do {
      if (loom_trainer_step(tr, NULL, &err)) goto fail;
      steps++;
      t1 = bench_now_s();
    } while (t1 - t0 < 0.2);
    t[r] = (t1 - t0) / steps;
  }
  loom_trainer_free(tr);
  loom_pool_free(pool);
  loom_dataset_free(ds);
  loom_net_free(net);
  return bench_median(t, runs);
fail:
  fprintf(stderr, "%s\n", err.message);
  exit(1);
}

int main(int argc, char **argv) {
  int64_t size = 1024;
  int device = -1;
  /* Our own options first; the rest goes to bench_parse_args. */
  int kept = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--size") && i + 1 < argc) size = strtoll(argv[++i], NULL, 10);
    else if (!strcmp(argv[i], "--device") && i + 1 < argc) device = atoi(argv[++i]);
    else argv[kept++] = argv[i];
  }
  int threads, runs;
  if (!bench_parse_args(kept, argv, 63, &threads, &runs)) return 2;
  if (size < 64 || size > 16384) {
    fprintf(stderr, "--size must be 64…16384\n");
    return 2;
  }
  loom_error err = {0};
  loom_gpu *gpu = loom_gpu_new(device, &err);
  if (!gpu) {
    fprintf(stderr, "SKIP: no Vulkan device: %s\n", err.message);
    return 77;
  }
  const loom_gpu_device_info *info = loom_gpu_info(gpu);
  printf("device %d: %s [%s] %s\n", info->index, info->name, loom_gpu_kind_name(info->kind), info->driver);
  printf("buffers in %s memory\n", gpu->mem_device_local ? "device-local host-visible" : "host (not device-local)");
  printf("runs %d (medians), CPU threads %d\n\n", runs, threads);

  loom_net *net16 = dense_stack(16, 256), *net1 = dense_stack(1, 256);
  int reps = 50;
  double empty = time_empty_submit(gpu, runs, reps);
  double g1 = time_gpu_forward(gpu, net1, runs, reps), g16 = time_gpu_forward(gpu, net16, runs, reps);
  double c16 = time_cpu_forward(net16, threads, runs, reps);
  printf("16 × dense 256→256, batch 1, one submission per forward:\n");
  printf("  empty submission       %9.1f µs\n", empty * 1e6);
  printf("  1 layer  (device)      %9.1f µs\n", g1 * 1e6);
  printf("  16 layers (device)     %9.1f µs\n", g16 * 1e6);
  printf("  16 layers (CPU)        %9.1f µs\n", c16 * 1e6);
  printf("  per further layer      %9.1f µs  ((16 layers − 1 layer) / 15)\n", (g16 - g1) / 15 * 1e6);
  printf("  device / CPU time: %.2fx\n", g16 / c16);

  /* Weights decoded in the shader (docs/gpu.md "Weights in their packed
   * layout"): the same stack with every layer at a packed dtype. */
  static const loom_dtype packed[] = {LOOM_DTYPE_INT8, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_INT32, LOOM_DTYPE_INT64,
                                      LOOM_DTYPE_FLOAT64};
  printf("\n16 × dense 256→256, batch 1, weights decoded on the device (float32: %.1f µs):\n", g16 * 1e6);
  for (size_t i = 0; i < sizeof packed / sizeof packed[0]; i++) {
    loom_net *q = loom_net_clone(net16, &err);
    if (!q || loom_net_set_dtype_all(q, packed[i], &err)) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    double tq = time_gpu_forward(gpu, q, runs, reps);
    printf("  %-8s %9.1f µs  (%.2fx float32)\n", loom_dtype_name(packed[i]), tq * 1e6, tq / g16);
    loom_net_free(q);
  }

  for (int cnn = 0; cnn < 2; cnn++) {
    double ts_gpu = time_train_step(gpu, cnn, threads, runs), ts_cpu = time_train_step(NULL, cnn, threads, runs);
    printf(cnn ? "\ntraining step, digits CNN example, batch 32, Adam (loom_trainer_step):\n"
               : "\ntraining step, 784-256-10 ReLU MLP, batch 64, Adam (loom_trainer_step):\n");
    printf("  device  %9.1f µs\n", ts_gpu * 1e6);
    printf("  CPU     %9.1f µs  (%d threads)\n", ts_cpu * 1e6, threads);
    printf("  device / CPU time: %.2fx\n", ts_gpu / ts_cpu);
  }

  large_product(gpu, size, threads, runs < 5 ? runs : 5);
  loom_net_free(net16);
  loom_net_free(net1);
  loom_gpu_free(gpu);
  return 0;
}
