/*
 * Every Vulkan kernel against the CPU reference on odd shapes (tolerances:
 * docs/gpu.md): the dense layer's three products at every dtype (weights
 * decoded in the shader from the packed bytes; the decode itself bit for
 * bit: test-gpu-decode.c), its bias gradient
 * (bit-identical: same order), the activations forward and backward, the
 * softmax forward and backward, and the SGD and Adam updates; and determinism: the same recording
 * run twice gives the same bits.
 */
#include "gpu-test.h"
#include "layers/layer-impl.h"
#include "loom/loom.h"

static loom_gpu *gpu;

#define EPS32 5.9604644775390625e-8 /* 2^-24 */

static loom_layer *make_dense(int64_t n_in, int64_t n_out, loom_dtype dtype, uint64_t seed) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  g_assert_nonnull(l);
  g_assert_cmpint(loom_layer_set_int(l, "in_features", n_in, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_int(l, "out_features", n_out, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_dtype(l, dtype, &err), ==, 0);
  loom_shape in = loom_shape_1d(n_in);
  if (loom_layer_build(l, &in, seed, &err)) g_error("%s", err.message);
  /* Non-zero biases so the bias path is exercised. */
  float *b = loom_weights_master(loom_layer_weights(l, 1));
  gpu_test_fill(b, n_out, -0.5, 0.5, seed + 7);
  loom_weights_touch(loom_layer_weights(l, 1));
  return l;
}

/* The tolerance of a product entry: two float32 sums of K terms each stay
 * within K·2⁻²⁴·Σ|terms| of the exact value (γ_K), so they differ by at most
 * twice that. `absum` holds Σ|a_k·b_k| (+|bias|) per entry. */
static void gemm_tolerance(const double *absum, double *tol, int64_t n, int64_t k) {
  for (int64_t i = 0; i < n; i++) tol[i] = 2.0 * (double)(k + 1) * EPS32 * absum[i] + 1e-30;
}

typedef struct {
  float *y, *dx, *dw, *db;
} dense_result;

/* Forward and backward of l on the device; dw/db start from the given values (accumulate). */
static dense_result gpu_dense(loom_layer *l, const float *x, const float *dy, int64_t m, const float *dw0,
                              const float *db0) {
  loom_error err = {0};
  int64_t k = loom_layer_get_int(l, "in_features"), n = loom_layer_get_int(l, "out_features");
  gpu_weights w = {0}, b = {0};
  if (gpu_weights_upload(gpu, loom_layer_weights(l, 0), &w, &err)) g_error("%s", err.message);
  if (gpu_weights_upload(gpu, loom_layer_weights(l, 1), &b, &err)) g_error("%s", err.message);
  gpu_buf bx, by, bdy, bdx, bdw, bdb;
  gpu_test_buf(gpu, &bx, x, m * k);
  gpu_test_buf(gpu, &by, NULL, m * n);
  gpu_test_buf(gpu, &bdy, dy, m * n);
  gpu_test_buf(gpu, &bdx, NULL, m * k);
  gpu_test_buf(gpu, &bdw, dw0, n * k);
  gpu_test_buf(gpu, &bdb, db0, n);
  gpu_weights xv = gpu_weights_view(&bx, m, k);
  gpu_rec rec;
  if (gpu_rec_begin(gpu, 4, &rec, &err)) g_error("%s", err.message);
  gpu_gemm fwd = {.a = &bx, .lda = (uint32_t)k, .b = &w, .tb = true, .bias = &b.data, .c = &by, .ldc = (uint32_t)n,
                  .m = m, .n = n, .k = k};
  gpu_gemm bdx_op = {.a = &bdy, .lda = (uint32_t)n, .b = &w, .c = &bdx, .ldc = (uint32_t)k, .m = m, .n = k, .k = n};
  gpu_gemm bdw_op = {.a = &bdy, .lda = (uint32_t)n, .ta = true, .b = &xv, .c = &bdw, .ldc = (uint32_t)k, .m = n,
                     .n = k, .k = m, .accumulate = true};
  if (gpu_op_gemm(&rec, &fwd, &err) || gpu_op_gemm(&rec, &bdx_op, &err) || gpu_op_gemm(&rec, &bdw_op, &err) ||
      gpu_op_colsum(&rec, &bdy, &bdb, m, n, &err) || gpu_rec_end(&rec, &err) || gpu_rec_submit(&rec, &err))
    g_error("%s", err.message);
  dense_result r = {g_memdup2(by.map, (size_t)(m * n) * 4), g_memdup2(bdx.map, (size_t)(m * k) * 4),
                    g_memdup2(bdw.map, (size_t)(n * k) * 4), g_memdup2(bdb.map, (size_t)n * 4)};
  gpu_rec_free(&rec);
  gpu_buf *all[] = {&bx, &by, &bdy, &bdx, &bdw, &bdb};
  for (size_t i = 0; i < G_N_ELEMENTS(all); i++) gpu_buf_free(gpu, all[i]);
  gpu_weights_free(gpu, &w);
  gpu_weights_free(gpu, &b);
  return r;
}

static void dense_result_free(dense_result *r) {
  g_free(r->y);
  g_free(r->dx);
  g_free(r->dw);
  g_free(r->db);
}

static void check_dense(int64_t m, int64_t k, int64_t n, loom_dtype dtype, uint64_t seed) {
  loom_error err = {0};
  loom_layer *l = make_dense(k, n, dtype, seed);
  float *x = g_new(float, m * k), *dy = g_new(float, m * n), *y = g_new(float, m * n), *dx = g_new(float, m * k);
  gpu_test_fill(x, m * k, -1, 1, seed + 1);
  gpu_test_fill(dy, m * n, -1, 1, seed + 2);
  /* Gradients accumulate: start both sides from the same non-zero values. */
  float *dw0 = g_new(float, n * k), *db0 = g_new(float, n);
  gpu_test_fill(dw0, n * k, -0.1, 0.1, seed + 3);
  gpu_test_fill(db0, n, -0.1, 0.1, seed + 4);
  layer_zero_grad(l);
  memcpy(loom_layer_grad(l, 0), dw0, (size_t)(n * k) * 4);
  memcpy(loom_layer_grad(l, 1), db0, (size_t)n * 4);
  if (layer_forward(l, NULL, x, y, m, &err) || layer_backward(l, NULL, x, y, dy, dx, m, &err))
    g_error("%s", err.message);
  dense_result r = gpu_dense(l, x, dy, m, dw0, db0);

  const float *w = loom_weights_effective(loom_layer_weights(l, 0), &err);
  const float *b = loom_weights_master(loom_layer_weights(l, 1));
  g_assert_nonnull(w);
  int64_t big = MAX(m * n, MAX(m * k, n * k));
  double *abs = g_new0(double, big), *tol = g_new(double, big);
  char what[96];
  /* y = x·Wᵀ + b */
  for (int64_t i = 0; i < m; i++)
    for (int64_t o = 0; o < n; o++) {
      double s = fabs(b[o]);
      for (int64_t j = 0; j < k; j++) s += fabs((double)x[i * k + j] * w[o * k + j]);
      abs[i * n + o] = s;
    }
  gemm_tolerance(abs, tol, m * n, k);
  snprintf(what, sizeof what, "dense in %lld out %lld %s batch %lld: y", (long long)k, (long long)n, loom_dtype_name(dtype),
           (long long)m);
  double worst = gpu_test_compare(what, r.y, y, tol, m * n);
  /* dx = dy·W */
  for (int64_t i = 0; i < m; i++)
    for (int64_t j = 0; j < k; j++) {
      double s = 0;
      for (int64_t o = 0; o < n; o++) s += fabs((double)dy[i * n + o] * w[o * k + j]);
      abs[i * k + j] = s;
    }
  gemm_tolerance(abs, tol, m * k, n);
  snprintf(what, sizeof what, "dense in %lld out %lld %s batch %lld: dx", (long long)k, (long long)n,
           loom_dtype_name(dtype), (long long)m);
  worst = MAX(worst, gpu_test_compare(what, r.dx, dx, tol, m * k));
  /* dW = dW0 + dyᵀ·x */
  for (int64_t o = 0; o < n; o++)
    for (int64_t j = 0; j < k; j++) {
      double s = fabs(dw0[o * k + j]);
      for (int64_t i = 0; i < m; i++) s += fabs((double)dy[i * n + o] * x[i * k + j]);
      abs[o * k + j] = s;
    }
  gemm_tolerance(abs, tol, n * k, m);
  snprintf(what, sizeof what, "dense in %lld out %lld %s batch %lld: dW", (long long)k, (long long)n,
           loom_dtype_name(dtype), (long long)m);
  worst = MAX(worst, gpu_test_compare(what, r.dw, loom_layer_grad(l, 0), tol, n * k));
  /* db: the same additions in the same order */
  snprintf(what, sizeof what, "dense in %lld out %lld %s batch %lld: db", (long long)k, (long long)n,
           loom_dtype_name(dtype), (long long)m);
  gpu_test_compare(what, r.db, loom_layer_grad(l, 1), NULL, n);
  g_test_message("%s: worst difference %.3f of the tolerance", what, worst);

  /* Determinism: the same work again gives the same bits. */
  dense_result again = gpu_dense(l, x, dy, m, dw0, db0);
  g_assert_cmpmem(again.y, (size_t)(m * n) * 4, r.y, (size_t)(m * n) * 4);
  g_assert_cmpmem(again.dx, (size_t)(m * k) * 4, r.dx, (size_t)(m * k) * 4);
  g_assert_cmpmem(again.dw, (size_t)(n * k) * 4, r.dw, (size_t)(n * k) * 4);
  dense_result_free(&again);
  dense_result_free(&r);
  g_free(abs);
  g_free(tol);
  g_free(x);
  g_free(dy);
  g_free(y);
  g_free(dx);
  g_free(dw0);
  g_free(db0);
  loom_layer_free(l);
}

static void test_dense(gconstpointer data) {
  loom_dtype dtype = (loom_dtype)GPOINTER_TO_INT(data);
  static const int64_t cases[][3] = {{1, 1, 1}, {3, 5, 7}, {1, 67, 65}, {5, 130, 3}, {70, 17, 66}, {2, 300, 9}};
  /* Few-row products take one of two kernels by device kind: test both. */
  bool chosen = gpu->rowdot;
  for (int rowdot = 0; rowdot < 2; rowdot++) {
    gpu->rowdot = rowdot;
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++)
      check_dense(cases[c][0], cases[c][1], cases[c][2], dtype, 100 + c);
  }
  gpu->rowdot = chosen;
}

/* The 128×128-tile kernel takes large float32 products whose operands read
 * as vec4s (in, out multiples of 4): with the threshold lowered it runs on
 * odd small shapes too — partial tiles, K not a multiple of its 8-deep
 * slices, a single slice, and rows that are not a multiple of 4. The
 * misaligned case (in 66) must fall back to the 64×64 kernel and agree too. */
static void test_dense_tiles(void) {
  static const int64_t cases[][3] = {{9, 4, 4}, {70, 132, 260}, {130, 20, 136}, {257, 36, 12}, {131, 66, 20}};
  int64_t chosen = gpu->tile_min_tiles;
  gpu->tile_min_tiles = 1;
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++)
    check_dense(cases[c][0], cases[c][1], cases[c][2], LOOM_DTYPE_FLOAT32, 200 + c);
  gpu->tile_min_tiles = chosen;
}

/* Per-tensor scales take the other branch of the decode. */
static void test_dense_per_tensor(void) {
  loom_error err = {0};
  loom_layer *l = make_dense(9, 11, LOOM_DTYPE_INT4, 5);
  if (loom_weights_set_scale_mode(loom_layer_weights(l, 0), LOOM_SCALE_PER_TENSOR, &err)) g_error("%s", err.message);
  float x[2 * 9], y[2 * 11], dy[2 * 11] = {0};
  gpu_test_fill(x, 18, -1, 1, 9);
  if (layer_forward(l, NULL, x, y, 2, &err)) g_error("%s", err.message);
  dense_result r = gpu_dense(l, x, dy, 2, NULL, NULL);
  double tol[22];
  for (int i = 0; i < 22; i++) tol[i] = 2.0 * 10 * EPS32 * 20.0 + 1e-30; /* Σ|x·w| + |b| < 20 here */
  gpu_test_compare("dense int4 per-tensor: y", r.y, y, tol, 22);
  dense_result_free(&r);
  loom_layer_free(l);
}

/* ---- activations ----------------------------------------------------------- */

static void check_activation(const char *type, const char *param, const char *choice, double value) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  g_assert_nonnull(l);
  if (param && choice && loom_layer_set_enum(l, param, choice, &err)) g_error("%s", err.message);
  if (param && !choice && loom_layer_set_float(l, param, value, &err)) g_error("%s", err.message);
  /* A grid over [-12, 12] (zero included) plus values near zero. */
  enum { N = 1531 };
  float x[N], dy[N], y[N], dx[N];
  for (int i = 0; i < N - 40; i++) x[i] = (float)(-12.0 + 24.0 * i / (N - 41));
  for (int i = 0; i < 40; i++) x[N - 40 + i] = (float)((i - 20) * 1e-3);
  gpu_test_fill(dy, N, -1, 1, 3);
  loom_shape in = loom_shape_1d(N);
  if (loom_layer_build(l, &in, 0, &err) || layer_forward(l, NULL, x, y, 1, &err) ||
      layer_backward(l, NULL, x, y, dy, dx, 1, &err))
    g_error("%s", err.message);
  gpu_act act;
  g_assert_true(gpu_act_of(l, &act));
  gpu_buf bx, bdy, by, bdx;
  gpu_test_buf(gpu, &bx, x, N);
  gpu_test_buf(gpu, &bdy, dy, N);
  gpu_test_buf(gpu, &by, NULL, N);
  gpu_test_buf(gpu, &bdx, NULL, N);
  gpu_rec rec;
  if (gpu_rec_begin(gpu, 2, &rec, &err) || gpu_op_act(&rec, &act, &bx, NULL, &by, N, &err) ||
      gpu_op_act(&rec, &act, &bx, &bdy, &bdx, N, &err) || gpu_rec_end(&rec, &err) || gpu_rec_submit(&rec, &err))
    g_error("%s", err.message);
  /* Float32 formulas against the CPU's correctly rounded ones (docs/gpu.md). */
  double tol_y[N], tol_dx[N];
  for (int i = 0; i < N; i++) {
    double ax = fabs(x[i]);
    tol_y[i] = 1e-5 * fabs(y[i]) + 4e-7 * (1.0 + ax);
    tol_dx[i] = 1e-5 * fabs(dx[i]) + 4e-7 * (1.0 + ax) * fabs(dy[i]);
  }
  char what[96];
  snprintf(what, sizeof what, "%s%s%s forward", type, choice ? " " : "", choice ? choice : "");
  double w1 = gpu_test_compare(what, by.map, y, tol_y, N);
  snprintf(what, sizeof what, "%s%s%s backward", type, choice ? " " : "", choice ? choice : "");
  double w2 = gpu_test_compare(what, bdx.map, dx, tol_dx, N);
  g_test_message("%s: worst %.3f / %.3f of the tolerance", type, w1, w2);
  gpu_rec_free(&rec);
  gpu_buf_free(gpu, &bx);
  gpu_buf_free(gpu, &bdy);
  gpu_buf_free(gpu, &by);
  gpu_buf_free(gpu, &bdx);
  loom_layer_free(l);
}

static void test_activations(void) {
  check_activation("relu", NULL, NULL, 0);
  check_activation("leaky-relu", "negative_slope", NULL, 0.2);
  check_activation("elu", "alpha", NULL, 1.5);
  check_activation("gelu", NULL, NULL, 0);
  check_activation("gelu", "approximate", "tanh", 0);
  check_activation("silu", NULL, NULL, 0);
  check_activation("sigmoid", NULL, NULL, 0);
  check_activation("tanh", NULL, NULL, 0);
  check_activation("softplus", "beta", NULL, 2.0);
  check_activation("relu2", NULL, NULL, 0);
}

/* ---- softmax ---------------------------------------------------------------- */

/* One member of the softmax family on `batch` samples of `spr` rows of
 * `cols` (grid_softmax: its rows × cols split of a flat sample). mask_rows:
 * masked_softmax's mask has that many rows (1: one for every row), with
 * every third entry and each row's first but one masked. */
static void check_softmax(const char *type, int64_t batch, int64_t spr, int64_t cols, int mask_rows, uint64_t seed) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  if (!l) g_error("%s", err.message);
  loom_shape in = loom_shape_1d(spr * cols);
  if (!strcmp(type, "grid_softmax")) {
    if (loom_layer_set_int(l, "rows", spr, &err) || loom_layer_set_int(l, "cols", cols, &err)) g_error("%s", err.message);
  } else {
    int64_t dims[2] = {spr, cols};
    in = loom_shape_make(2, dims);
  }
  float scale = 1.0f;
  if (!strcmp(type, "softmax_temperature")) {
    if (loom_layer_set_float(l, "temperature", 0.37, &err)) g_error("%s", err.message);
    scale = (float)(1.0 / 0.37);
  }
  float *mask = NULL;
  if (mask_rows > 0) {
    mask = g_new(float, mask_rows * cols);
    for (int64_t i = 0; i < mask_rows * cols; i++) mask[i] = (i % 3 == 1 || i % cols == 0) && cols > 1 ? 0.0f : 1.0f;
    if (loom_layer_set_floats(l, "mask", mask, mask_rows * cols, &err)) g_error("%s", err.message);
  }
  if (loom_layer_build(l, &in, 0, &err)) g_error("%s", err.message);
  int64_t rows = batch * spr, n = rows * cols;
  float *x = g_new(float, n), *y = g_new(float, n), *dy = g_new(float, n), *dx = g_new(float, n);
  gpu_test_fill(x, n, -20, 20, seed);
  gpu_test_fill(dy, n, -1, 1, seed + 50);
  if (layer_forward(l, NULL, x, y, batch, &err) || layer_backward(l, NULL, x, y, dy, dx, batch, &err))
    g_error("%s", err.message);
  gpu_buf bx, by, bdy, bdx, bycpu, bkeep;
  gpu_test_buf(gpu, &bx, x, n);
  gpu_test_buf(gpu, &by, NULL, n);
  gpu_test_buf(gpu, &bdy, dy, n);
  gpu_test_buf(gpu, &bdx, NULL, n);
  /* The backward takes the CPU's y, so it is checked on its own. */
  gpu_test_buf(gpu, &bycpu, y, n);
  gpu_test_buf(gpu, &bkeep, mask, mask ? mask_rows * cols : 1);
  gpu_softmax op = {.rows = rows, .cols = cols, .scale = scale, .keep = mask ? &bkeep : NULL, .keep_rows = mask_rows};
  gpu_rec rec;
  if (gpu_rec_begin(gpu, 2, &rec, &err) || gpu_op_softmax(&rec, &op, &bx, &by, &err) ||
      gpu_op_softmax_backward(&rec, &op, &bycpu, &bdy, &bdx, &err) || gpu_rec_end(&rec, &err) ||
      gpu_rec_submit(&rec, &err))
    g_error("%s", err.message);
  char what[96];
  double *tol = g_new(double, n);
  for (int64_t i = 0; i < n; i++) tol[i] = 1e-5 * fabs(y[i]) + 1e-9;
  snprintf(what, sizeof what, "%s %lld x %lld", type, (long long)rows, (long long)cols);
  gpu_test_compare(what, by.map, y, tol, n);
  /* masked entries: exactly 0 */
  for (int64_t i = 0; mask && i < n; i++)
    if (mask[((i / cols) % mask_rows) * cols + i % cols] == 0.0f) g_assert_cmpfloat(((float *)by.map)[i], ==, 0.0f);
  /* dx = scale·y·(dy − ⟨y, dy⟩): the float32 dot product of `cols` terms is
   * within cols·2⁻²⁴·Σ|y·dy| of exact; then two roundings. */
  for (int64_t r = 0; r < rows; r++) {
    double absdot = 0;
    for (int64_t i = 0; i < cols; i++) absdot += fabs((double)y[r * cols + i] * dy[r * cols + i]);
    for (int64_t i = 0; i < cols; i++) {
      int64_t e = r * cols + i;
      tol[e] = 1e-5 * fabs(dx[e]) + scale * fabs(y[e]) * (2.0 * (cols + 2) * EPS32 * (absdot + fabs(dy[e]))) + 1e-30;
    }
  }
  snprintf(what, sizeof what, "%s %lld x %lld backward", type, (long long)rows, (long long)cols);
  double worst = gpu_test_compare(what, bdx.map, dx, tol, n);
  g_test_message("%s: worst %.3f of the tolerance", what, worst);
  gpu_rec_free(&rec);
  gpu_buf *all[] = {&bx, &by, &bdy, &bdx, &bycpu, &bkeep};
  for (size_t i = 0; i < G_N_ELEMENTS(all); i++) gpu_buf_free(gpu, all[i]);
  g_free(tol);
  g_free(x);
  g_free(y);
  g_free(dy);
  g_free(dx);
  g_free(mask);
  loom_layer_free(l);
}

static void test_softmax(void) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {7, 1, 37}, {3, 1, 300}, {2, 1, 5}, {3, 4, 9}};
  for (size_t c = 0; c < G_N_ELEMENTS(shapes); c++) {
    check_softmax("softmax", shapes[c][0], shapes[c][1], shapes[c][2], 0, c);
    check_softmax("softmax_temperature", shapes[c][0], shapes[c][1], shapes[c][2], 0, c + 10);
    check_softmax("grid_softmax", shapes[c][0], shapes[c][1], shapes[c][2], 0, c + 20);
    check_softmax("masked_softmax", shapes[c][0], shapes[c][1], shapes[c][2], 0, c + 30);
    check_softmax("masked_softmax", shapes[c][0], shapes[c][1], shapes[c][2], 1, c + 40);
    if (shapes[c][1] > 1) check_softmax("masked_softmax", shapes[c][0], shapes[c][1], shapes[c][2], (int)shapes[c][1], c + 50);
  }
}

/* ---- optimizers ------------------------------------------------------------- */

static void check_optimizer(const loom_optim_config *cfg, const char *what) {
  enum { N = 517, STEPS = 4 };
  const double lr = 0.05;
  loom_error err = {0};
  int64_t size = N;
  loom_optim *opt = loom_optim_new(cfg, 1, &size, &err);
  g_assert_nonnull(opt);
  float p[N], g[N];
  gpu_test_fill(p, N, -1, 1, 11);
  gpu_buf bp, bg, b1, b2, b3;
  gpu_test_buf(gpu, &bp, p, N);
  gpu_test_buf(gpu, &bg, NULL, N);
  gpu_test_buf(gpu, &b1, NULL, N);
  gpu_test_buf(gpu, &b2, NULL, N);
  gpu_test_buf(gpu, &b3, NULL, N);
  bool adam = cfg->kind == LOOM_OPTIM_ADAM || cfg->kind == LOOM_OPTIM_ADAMW;
  bool rms = cfg->kind == LOOM_OPTIM_RMSPROP;
  for (int s = 1; s <= STEPS; s++) {
    gpu_test_fill(g, N, -1, 1, 20 + s);
    g[0] = 0.0f;
    memcpy(bg.map, g, sizeof g);
    float *params[1] = {p};
    const float *grads[1] = {g};
    if (loom_optim_step(opt, params, grads, lr, &err)) g_error("%s", err.message);
    gpu_rec rec;
    int rc = gpu_rec_begin(gpu, 1, &rec, &err);
    if (!rc)
      rc = adam  ? gpu_op_adam(&rec, cfg, s, lr, &bp, &bg, &b1, &b2, cfg->amsgrad ? &b3 : NULL, N, &err)
         : rms ? gpu_op_rmsprop(&rec, cfg, lr, &bp, &bg, &b1, &b2, &b3, N, &err)
               : gpu_op_sgd(&rec, cfg, s == 1, lr, &bp, &bg, cfg->momentum != 0 ? &b1 : NULL, N, &err);
    if (rc || gpu_rec_end(&rec, &err) || gpu_rec_submit(&rec, &err)) g_error("%s", err.message);
    gpu_rec_free(&rec);
    /* Adds and products round as on the CPU; Adam's division and square
     * root carry the driver's accuracy: a few ulp of each step's change. */
    double tol[N];
    for (int i = 0; i < N; i++) tol[i] = adam || rms ? 2e-6 * fabs(p[i]) + 1e-5 * lr * s : 2.0 * EPS32 * fabs(p[i]);
    char label[96];
    snprintf(label, sizeof label, "%s step %d", what, s);
    double worst = gpu_test_compare(label, bp.map, p, tol, N);
    if (s == STEPS) g_test_message("%s: worst %.3f of the tolerance", what, worst);
  }
  gpu_buf *all[] = {&bp, &bg, &b1, &b2, &b3};
  for (size_t i = 0; i < G_N_ELEMENTS(all); i++) gpu_buf_free(gpu, all[i]);
  loom_optim_free(opt);
}

static void test_optimizers(void) {
  loom_optim_config c = loom_optim_defaults(LOOM_OPTIM_SGD);
  check_optimizer(&c, "sgd");
  c.momentum = 0.9;
  c.weight_decay = 0.01;
  check_optimizer(&c, "sgd momentum");
  c.dampening = 0;
  c.nesterov = true;
  c.maximize = true;
  check_optimizer(&c, "sgd nesterov maximize");
  c = loom_optim_defaults(LOOM_OPTIM_ADAM);
  check_optimizer(&c, "adam");
  c.amsgrad = true;
  c.weight_decay = 0.1;
  check_optimizer(&c, "adam amsgrad l2");
  c = loom_optim_defaults(LOOM_OPTIM_ADAMW);
  check_optimizer(&c, "adamw");
  c = loom_optim_defaults(LOOM_OPTIM_RMSPROP);
  check_optimizer(&c, "rmsprop");
  c.momentum = 0.9;
  c.centered = true;
  c.weight_decay = 0.01;
  c.maximize = true;
  check_optimizer(&c, "rmsprop centered momentum l2 maximize");
}

int main(int argc, char **argv) {
  gpu = gpu_test_init(&argc, &argv);
  g_test_add_data_func("/gpu/dense/float32", GINT_TO_POINTER(LOOM_DTYPE_FLOAT32), test_dense);
  g_test_add_data_func("/gpu/dense/int8", GINT_TO_POINTER(LOOM_DTYPE_INT8), test_dense);
  g_test_add_data_func("/gpu/dense/int4", GINT_TO_POINTER(LOOM_DTYPE_INT4), test_dense);
  static const loom_dtype more[] = {LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FP8_E4M3, LOOM_DTYPE_FP8_E5M2,
                                    LOOM_DTYPE_FP4,     LOOM_DTYPE_INT16,    LOOM_DTYPE_INT2,     LOOM_DTYPE_UINT8,
                                    LOOM_DTYPE_UINT4,   LOOM_DTYPE_UINT2,    LOOM_DTYPE_TERNARY,  LOOM_DTYPE_BINARY,
                                    LOOM_DTYPE_FLOAT64, LOOM_DTYPE_INT32,    LOOM_DTYPE_INT64,    LOOM_DTYPE_UINT32,
                                    LOOM_DTYPE_UINT64,  LOOM_DTYPE_UINT16};
  for (size_t i = 0; i < G_N_ELEMENTS(more); i++) {
    char *path = g_strdup_printf("/gpu/dense/%s", loom_dtype_name(more[i]));
    g_test_add_data_func(path, GINT_TO_POINTER(more[i]), test_dense);
    g_free(path);
  }
  g_test_add_func("/gpu/dense/int4-per-tensor", test_dense_per_tensor);
  g_test_add_func("/gpu/dense/float32-tiles", test_dense_tiles);
  g_test_add_func("/gpu/activations", test_activations);
  g_test_add_func("/gpu/softmax", test_softmax);
  g_test_add_func("/gpu/optimizers", test_optimizers);
  int rc = g_test_run();
  loom_gpu_free(gpu);
  return rc;
}
