/*
 * Shared by the Vulkan tests: open the device or skip (no Vulkan device:
 * TAP plan "1..0 # SKIP" under --tap, else the automake code 77), buffers
 * from host arrays, and the comparison used by every parity check.
 */
#pragma once
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/gpu-internal.h"

static inline loom_gpu *gpu_test_init(int *argc, char ***argv) {
  gboolean tap = FALSE;
  for (int i = 1; i < *argc; i++)
    if (strcmp((*argv)[i], "--tap") == 0) tap = TRUE;
  g_test_init(argc, argv, NULL);
  loom_error err = {0};
  loom_gpu *g = loom_gpu_new(-1, &err);
  if (!g) {
    if (tap) {
      printf("1..0 # SKIP no Vulkan device: %s\n", err.message);
      fflush(stdout);
      exit(0);
    }
    fprintf(stderr, "SKIP: no Vulkan device: %s\n", err.message);
    exit(77);
  }
  g_test_message("device %d: %s (%s)", loom_gpu_info(g)->index, loom_gpu_info(g)->name,
                 loom_gpu_kind_name(loom_gpu_info(g)->kind));
  return g;
}

static inline void gpu_test_buf(loom_gpu *g, gpu_buf *b, const float *values, int64_t n) {
  loom_error err = {0};
  if (gpu_buf_new(g, (size_t)(n > 0 ? n : 1) * sizeof(float), "test buffer", b, &err)) g_error("%s", err.message);
  if (values) memcpy(b->map, values, (size_t)n * sizeof(float));
}

/* Asserts |got − want| ≤ tol[i] for every i (tol NULL: exact, bit for bit),
 * naming the first failure; returns the worst |got − want| / tol. */
static inline double gpu_test_compare(const char *what, const float *got, const float *want, const double *tol,
                                      int64_t n) {
  double worst = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!tol) {
      if (memcmp(&got[i], &want[i], sizeof(float)))
        g_error("%s: entry %lld is %.9g on the device, %.9g on the CPU (expected bit-identical)", what, (long long)i,
                got[i], want[i]);
      continue;
    }
    double d = fabs((double)got[i] - (double)want[i]);
    if (!(d <= tol[i]))
      g_error("%s: entry %lld is %.9g on the device, %.9g on the CPU: |difference| %.3g exceeds the tolerance %.3g",
              what, (long long)i, got[i], want[i], d, tol[i]);
    if (tol[i] > 0 && d / tol[i] > worst) worst = d / tol[i];
  }
  return worst;
}

/* Deterministic values in [lo, hi) from a small LCG (no dependence on libc's rand). */
static inline void gpu_test_fill(float *v, int64_t n, double lo, double hi, uint64_t seed) {
  uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = (float)(lo + (hi - lo) * (double)(s >> 11) / 9007199254740992.0);
  }
}

#include "loom/loom.h"

/* dense → layernorm → tanh → dense → rmsnorm → relu → rmsnorm (no affine)
 * → dense, in_features → out: every normalization the device runs, with
 * affine weights moved off their initial ones and zeros. */
static inline loom_net *gpu_test_norm_net(int64_t in_features, int64_t out) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 8, 1, &err);
  if (!net) g_error("%s", err.message);
  loom_shape in = loom_shape_1d(in_features);
  if (loom_net_set_input_shape(net, &in, &err)) g_error("%s", err.message);
  static const char *const types[] = {"dense", "layernorm", "tanh", "dense", "rmsnorm", "relu", "rmsnorm", "dense"};
  const int64_t sizes[][2] = {{in_features, 24}, {0, 0}, {0, 0}, {24, 16}, {0, 0}, {0, 0}, {0, 0}, {16, out}};
  for (int x = 0; x < 8; x++) {
    loom_layer *l = loom_layer_new_by_name(types[x], &err);
    if (!l) g_error("%s", err.message);
    if (sizes[x][0] && (loom_layer_set_int(l, "in_features", sizes[x][0], &err) ||
                        loom_layer_set_int(l, "out_features", sizes[x][1], &err)))
      g_error("%s", err.message);
    if (x == 6 && loom_layer_set_bool(l, "elementwise_affine", false, &err)) g_error("%s", err.message);
    if (x == 4 && loom_layer_set_float(l, "eps", 1e-3, &err)) g_error("%s", err.message);
    if (loom_net_place(net, (loom_coord){0, 0, x, 0}, l, &err)) g_error("%s", err.message);
  }
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(net, 5, &diags)) g_error("%s", diags[0].message);
  free(diags);
  for (int x = 1; x <= 4; x += 3) {
    loom_layer *l = loom_net_layer_at(net, (loom_coord){0, 0, x, 0});
    for (int t = 0; t < loom_layer_n_weights(l); t++) {
      loom_weights *w = loom_layer_weights(l, t);
      float *m = loom_weights_master(w);
      gpu_test_fill(m, loom_weights_count(w), t == 0 ? 0.5 : -0.3, t == 0 ? 1.5 : 0.3, 90 + x * 2 + t);
      loom_weights_touch(w);
    }
  }
  return net;
}

/* dense → softmax_temperature (T 0.5) → dense → grid_softmax (3 rows of 4)
 * → dense → masked_softmax (entries 1 and 4 of 8 masked) → dense,
 * in_features → out: the softmax family the device runs, between layers
 * that carry the gradient on. */
static inline loom_net *gpu_test_softmax_net(int64_t in_features, int64_t out) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 7, 1, &err);
  if (!net) g_error("%s", err.message);
  loom_shape in = loom_shape_1d(in_features);
  if (loom_net_set_input_shape(net, &in, &err)) g_error("%s", err.message);
  static const char *const types[] = {"dense", "softmax_temperature", "dense", "grid_softmax",
                                      "dense", "masked_softmax",      "dense"};
  const int64_t sizes[][2] = {{in_features, 12}, {0, 0}, {12, 12}, {0, 0}, {12, 8}, {0, 0}, {8, out}};
  static const float mask[8] = {1, 0, 1, 1, 0, 1, 1, 1};
  for (int x = 0; x < 7; x++) {
    loom_layer *l = loom_layer_new_by_name(types[x], &err);
    if (!l) g_error("%s", err.message);
    int rc = 0;
    if (sizes[x][0])
      rc = loom_layer_set_int(l, "in_features", sizes[x][0], &err) ||
           loom_layer_set_int(l, "out_features", sizes[x][1], &err);
    if (x == 1) rc = loom_layer_set_float(l, "temperature", 0.5, &err);
    if (x == 3) rc = loom_layer_set_int(l, "rows", 3, &err) || loom_layer_set_int(l, "cols", 4, &err);
    if (x == 5) rc = loom_layer_set_floats(l, "mask", mask, 8, &err);
    if (rc || loom_net_place(net, (loom_coord){0, 0, x, 0}, l, &err)) g_error("%s", err.message);
  }
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(net, 5, &diags)) g_error("%s", diags[0].message);
  free(diags);
  return net;
}

static inline loom_layer *gpu_test_layer(const char *type, int64_t in_features, int64_t out_features) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  if (!l) g_error("%s", err.message);
  if (in_features && (loom_layer_set_int(l, "in_features", in_features, &err) ||
                      loom_layer_set_int(l, "out_features", out_features, &err)))
    g_error("%s", err.message);
  return l;
}

static inline loom_layer *gpu_test_container(const char *type, loom_layer *const *children, int n) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  if (!l) g_error("%s", err.message);
  for (int i = 0; i < n; i++)
    if (loom_layer_add_child(l, children[i], &err)) g_error("%s", err.message);
  return l;
}

/* dense in→12 → residual [dense 12→12, tanh, sequential [dense 12→12,
 * relu], layernorm] → sequential [] → sequential [residual [dense 12→12],
 * dense 12→out, softmax] → residual [gelu] → residual [sequential []]:
 * nested containers, empty ones, a residual of one activation and one of
 * an identity chain (y = x + x). */
static inline loom_net *gpu_test_container_net(int64_t in_features, int64_t out) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 6, 1, &err);
  if (!net) g_error("%s", err.message);
  loom_shape in = loom_shape_1d(in_features);
  if (loom_net_set_input_shape(net, &in, &err)) g_error("%s", err.message);
  loom_layer *inner = gpu_test_container("sequential", (loom_layer *[]){gpu_test_layer("dense", 12, 12),
                                                                         gpu_test_layer("relu", 0, 0)}, 2);
  loom_layer *slots[6] = {
    gpu_test_layer("dense", in_features, 12),
    gpu_test_container("residual", (loom_layer *[]){gpu_test_layer("dense", 12, 12), gpu_test_layer("tanh", 0, 0),
                                                    inner, gpu_test_layer("layernorm", 0, 0)}, 4),
    gpu_test_container("sequential", NULL, 0),
    gpu_test_container("sequential",
                       (loom_layer *[]){gpu_test_container("residual", (loom_layer *[]){gpu_test_layer("dense", 12, 12)}, 1),
                                        gpu_test_layer("dense", 12, out), gpu_test_layer("softmax", 0, 0)}, 3),
    gpu_test_container("residual", (loom_layer *[]){gpu_test_layer("gelu", 0, 0)}, 1),
    gpu_test_container("residual", (loom_layer *[]){gpu_test_container("sequential", NULL, 0)}, 1),
  };
  for (int x = 0; x < 6; x++)
    if (loom_net_place(net, (loom_coord){0, 0, x, 0}, slots[x], &err)) g_error("%s", err.message);
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(net, 5, &diags)) g_error("%s", diags[0].message);
  free(diags);
  return net;
}

/* dense in→12 → sparsemax → dense 12→12 → entmax15 → sequential [dense
 * 12→9, gumbel_softmax τ = 0.7 (hard or not)] → dense 9→6 →
 * hierarchical_softmax (group_sizes 2, 2: 4 leaves) → dense 4→out: the
 * rest of the softmax family, the Gumbel noise in a container's child. */
static inline loom_net *gpu_test_sparse_net(int64_t in_features, int64_t out, bool hard) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 8, 1, &err);
  if (!net) g_error("%s", err.message);
  loom_shape in = loom_shape_1d(in_features);
  if (loom_net_set_input_shape(net, &in, &err)) g_error("%s", err.message);
  loom_layer *gumbel = gpu_test_layer("gumbel_softmax", 0, 0), *tree = gpu_test_layer("hierarchical_softmax", 0, 0);
  static const float groups[2] = {2, 2};
  if (loom_layer_set_float(gumbel, "temperature", 0.7, &err) || loom_layer_set_bool(gumbel, "hard", hard, &err) ||
      loom_layer_set_floats(tree, "group_sizes", groups, 2, &err))
    g_error("%s", err.message);
  loom_layer *slots[8] = {
    gpu_test_layer("dense", in_features, 12),
    gpu_test_layer("sparsemax", 0, 0),
    gpu_test_layer("dense", 12, 12),
    gpu_test_layer("entmax15", 0, 0),
    gpu_test_container("sequential", (loom_layer *[]){gpu_test_layer("dense", 12, 9), gumbel}, 2),
    gpu_test_layer("dense", 9, 6),
    tree,
    gpu_test_layer("dense", 4, out),
  };
  for (int x = 0; x < 8; x++)
    if (loom_net_place(net, (loom_coord){0, 0, x, 0}, slots[x], &err)) g_error("%s", err.message);
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(net, 5, &diags)) g_error("%s", diags[0].message);
  free(diags);
  return net;
}

static inline loom_layer *gpu_test_parallel(const char *combine, loom_layer *const *branches, int n) {
  loom_error err = {0};
  loom_layer *l = gpu_test_container("parallel", branches, n);
  if (loom_layer_set_enum(l, "combine", combine, &err)) g_error("%s", err.message);
  return l;
}

/* dense in→8 → parallel concat [dense 8→5, sequential [dense 8→3, tanh]]
 * → parallel add [dense 8→6, sequential [dense 8→6, relu]] → parallel avg
 * [dense 6→out, dense 6→out, sequential [dense 6→4, dense 4→out]] →
 * residual [parallel add [dense out→out, tanh]]. */
static inline loom_net *gpu_test_parallel_net(int64_t in_features, int64_t out) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 5, 1, &err);
  if (!net) g_error("%s", err.message);
  loom_shape in = loom_shape_1d(in_features);
  if (loom_net_set_input_shape(net, &in, &err)) g_error("%s", err.message);
  loom_layer *slots[5] = {
    gpu_test_layer("dense", in_features, 8),
    gpu_test_parallel("concat", (loom_layer *[]){gpu_test_layer("dense", 8, 5),
                                                 gpu_test_container("sequential", (loom_layer *[]){
                                                   gpu_test_layer("dense", 8, 3), gpu_test_layer("tanh", 0, 0)}, 2)},
                      2),
    gpu_test_parallel("add", (loom_layer *[]){gpu_test_layer("dense", 8, 6),
                                              gpu_test_container("sequential", (loom_layer *[]){
                                                gpu_test_layer("dense", 8, 6), gpu_test_layer("relu", 0, 0)}, 2)},
                      2),
    gpu_test_parallel("avg", (loom_layer *[]){gpu_test_layer("dense", 6, out), gpu_test_layer("dense", 6, out),
                                              gpu_test_container("sequential", (loom_layer *[]){
                                                gpu_test_layer("dense", 6, 4), gpu_test_layer("dense", 4, out)}, 2)},
                      3),
    gpu_test_container("residual", (loom_layer *[]){gpu_test_parallel("add", (loom_layer *[]){
                                      gpu_test_layer("dense", out, out), gpu_test_layer("tanh", 0, 0)}, 2)}, 1),
  };
  for (int x = 0; x < 5; x++)
    if (loom_net_place(net, (loom_coord){0, 0, x, 0}, slots[x], &err)) g_error("%s", err.message);
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(net, 5, &diags)) g_error("%s", diags[0].message);
  free(diags);
  return net;
}

/* embedding (vocab 9 × 5, at `table`) → dense 5→8 → tanh → dense 8→3 over
 * 4 tokens a sample: output [4, 3]. */
static inline loom_net *gpu_test_embed_net(loom_dtype table) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 4, 1, &err);
  if (!net) g_error("%s", err.message);
  loom_shape in = loom_shape_1d(4);
  if (loom_net_set_input_shape(net, &in, &err)) g_error("%s", err.message);
  static const char *const types[] = {"embedding", "dense", "tanh", "dense"};
  for (int x = 0; x < 4; x++) {
    loom_layer *l = loom_layer_new_by_name(types[x], &err);
    if (!l) g_error("%s", err.message);
    int rc = 0;
    if (x == 0)
      rc = loom_layer_set_int(l, "num_embeddings", 9, &err) || loom_layer_set_int(l, "embedding_dim", 5, &err) ||
           loom_layer_set_dtype(l, table, &err);
    if (x == 1) rc = loom_layer_set_int(l, "in_features", 5, &err) || loom_layer_set_int(l, "out_features", 8, &err);
    if (x == 3) rc = loom_layer_set_int(l, "in_features", 8, &err) || loom_layer_set_int(l, "out_features", 3, &err);
    if (rc || loom_net_place(net, (loom_coord){0, 0, x, 0}, l, &err)) g_error("%s", err.message);
  }
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(net, 5, &diags)) g_error("%s", diags[0].message);
  free(diags);
  return net;
}

/* Token indices in [0, 9), each sample's targets a smooth function of them. */
static inline void gpu_test_tokens(float *x, int64_t n, uint64_t seed) {
  uint64_t s = seed * 2862933555777941757ull + 3037000493ull;
  for (int64_t i = 0; i < n; i++) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)((s >> 33) % 9);
  }
}

static inline loom_layer *gpu_test_conv_layer(const char *type, int dims, int64_t cin, int64_t cout,
                                              const int64_t *k, const int64_t *s, const int64_t *pad,
                                              const int64_t *d, int64_t groups, loom_dtype dtype) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  if (!l || loom_layer_set_int(l, "in_channels", cin, &err) || loom_layer_set_int(l, "out_channels", cout, &err) ||
      loom_layer_set_ints(l, "kernel", k, dims, &err) || loom_layer_set_ints(l, "stride", s, dims, &err) ||
      loom_layer_set_ints(l, "padding", pad, dims, &err) || loom_layer_set_ints(l, "dilation", d, dims, &err) ||
      loom_layer_set_int(l, "groups", groups, &err) || loom_layer_set_dtype(l, dtype, &err))
    g_error("%s", err.message);
  return l;
}

static inline loom_net *gpu_test_net_of(const loom_shape *in, loom_layer **layers, int n) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, n, 1, &err);
  if (!net || loom_net_set_input_shape(net, in, &err)) g_error("%s", err.message);
  for (int x = 0; x < n; x++)
    if (loom_net_place(net, (loom_coord){0, 0, x, 0}, layers[x], &err)) g_error("%s", err.message);
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(net, 6, &diags)) g_error("%s", diags[0].message);
  free(diags);
  return net;
}

/* [4, 9, 10] → conv2d 4→6, kernel 3×2, stride 2×1, padding 1×0, dilation
 * 1×2, groups 2 (at `dtype`) → tanh → conv2d 6→3 1×1 → dense 8→4. */
static inline loom_net *gpu_test_conv_net(loom_dtype dtype) {
  loom_error err = {0};
  loom_shape in = loom_shape_make(3, (int64_t[]){4, 9, 10});
  loom_layer *dense = loom_layer_new_by_name("dense", &err);
  if (!dense || loom_layer_set_int(dense, "in_features", 8, &err) || loom_layer_set_int(dense, "out_features", 4, &err))
    g_error("%s", err.message);
  loom_layer *layers[] = {
    gpu_test_conv_layer("conv2d", 2, 4, 6, (int64_t[]){3, 2}, (int64_t[]){2, 1}, (int64_t[]){1, 0}, (int64_t[]){1, 2},
                        2, dtype),
    loom_layer_new_by_name("tanh", &err),
    gpu_test_conv_layer("conv2d", 2, 6, 3, (int64_t[]){1, 1}, (int64_t[]){1, 1}, (int64_t[]){0, 0}, (int64_t[]){1, 1},
                        1, LOOM_DTYPE_FLOAT32),
    dense};
  return gpu_test_net_of(&in, layers, 4);
}

/* [2, 3, 4, 5] → conv3d 2→3, kernel 2×3×2, stride 1×2×1, padding 1×1×0. */
static inline loom_net *gpu_test_conv3d_net(void) {
  loom_shape in = loom_shape_make(4, (int64_t[]){2, 3, 4, 5});
  loom_layer *layers[] = {gpu_test_conv_layer("conv3d", 3, 2, 3, (int64_t[]){2, 3, 2}, (int64_t[]){1, 2, 1},
                                              (int64_t[]){1, 1, 0}, (int64_t[]){1, 1, 1}, 1, LOOM_DTYPE_FLOAT32)};
  return gpu_test_net_of(&in, layers, 1);
}

/* [3, 11] → conv1d 3→5, kernel 3, stride 2, padding 1, dilation 2. */
static inline loom_net *gpu_test_conv1d_net(void) {
  loom_shape in = loom_shape_make(2, (int64_t[]){3, 11});
  loom_layer *layers[] = {gpu_test_conv_layer("conv1d", 1, 3, 5, (int64_t[]){3}, (int64_t[]){2}, (int64_t[]){1},
                                              (int64_t[]){2}, 1, LOOM_DTYPE_FLOAT32)};
  return gpu_test_net_of(&in, layers, 1);
}

/* [4, 5, 6] → conv_transpose2d 4→6, kernel 3×2, stride 2×1, padding 1×0,
 * dilation 1×2, groups 2, output_padding 1×0 (at `dtype`) → tanh → dense 8→3. */
static inline loom_net *gpu_test_conv_t_net(loom_dtype dtype) {
  loom_error err = {0};
  loom_shape in = loom_shape_make(3, (int64_t[]){4, 5, 6});
  loom_layer *ct = gpu_test_conv_layer("conv_transpose2d", 2, 4, 6, (int64_t[]){3, 2}, (int64_t[]){2, 1},
                                       (int64_t[]){1, 0}, (int64_t[]){1, 2}, 2, dtype);
  if (loom_layer_set_ints(ct, "output_padding", (int64_t[]){1, 0}, 2, &err)) g_error("%s", err.message);
  loom_layer *dense = loom_layer_new_by_name("dense", &err);
  if (!dense || loom_layer_set_int(dense, "in_features", 8, &err) || loom_layer_set_int(dense, "out_features", 3, &err))
    g_error("%s", err.message);
  loom_layer *layers[] = {ct, loom_layer_new_by_name("tanh", &err), dense};
  return gpu_test_net_of(&in, layers, 3);
}

/* [3, 7] → conv_transpose1d 3→2, kernel 3, stride 3, padding 1;
 * [2, 2, 3, 2] → conv_transpose3d 2→4, kernel 2×2×3, stride 2×1×1. */
static inline loom_net *gpu_test_conv_t1d_net(void) {
  loom_shape in = loom_shape_make(2, (int64_t[]){3, 7});
  loom_layer *layers[] = {gpu_test_conv_layer("conv_transpose1d", 1, 3, 2, (int64_t[]){3}, (int64_t[]){3},
                                              (int64_t[]){1}, (int64_t[]){1}, 1, LOOM_DTYPE_FLOAT32)};
  return gpu_test_net_of(&in, layers, 1);
}

static inline loom_net *gpu_test_conv_t3d_net(void) {
  loom_shape in = loom_shape_make(4, (int64_t[]){2, 2, 3, 2});
  loom_layer *layers[] = {gpu_test_conv_layer("conv_transpose3d", 3, 2, 4, (int64_t[]){2, 2, 3}, (int64_t[]){2, 1, 1},
                                              (int64_t[]){0, 0, 0}, (int64_t[]){1, 1, 1}, 1, LOOM_DTYPE_FLOAT32)};
  return gpu_test_net_of(&in, layers, 1);
}

/* ---- parallel combine modes, gates, pass-through branches ---------------- */

static inline loom_layer *gpu_test_gated(const char *combine, loom_layer *const *branches, int n, loom_layer *gate) {
  loom_error err = {0};
  loom_layer *l = gpu_test_parallel(combine, branches, n);
  if (loom_layer_set_gate(l, gate, &err)) g_error("%s", err.message);
  return l;
}

static inline loom_layer *gpu_test_empty(void) { return gpu_test_container("sequential", NULL, 0); }

static inline loom_layer *gpu_test_seq2(loom_layer *a, loom_layer *b) {
  return gpu_test_container("sequential", (loom_layer *[]){a, b}, 2);
}

static inline loom_layer *gpu_test_grid_softmax(int64_t rows, int64_t cols) {
  loom_error err = {0};
  loom_layer *l = gpu_test_layer("grid_softmax", 0, 0);
  if (loom_layer_set_int(l, "rows", rows, &err) || loom_layer_set_int(l, "cols", cols, &err))
    g_error("%s", err.message);
  return l;
}

/* [3, 4] → dense 4→5 → parallel grid_scatter 2×2 [dense 5→5, sequential []
 * (passes its input through), sequential [dense 5→5, tanh]] (one tile left
 * empty) → dense 10→3 over [3, 2, 10]: output [3, 2, 3]. */
static inline loom_net *gpu_test_grid_net(void) {
  loom_error err = {0};
  loom_shape in = loom_shape_make(2, (int64_t[]){3, 4});
  loom_layer *grid = gpu_test_parallel("grid_scatter", (loom_layer *[]){gpu_test_layer("dense", 5, 5), gpu_test_empty(),
                                                                        gpu_test_seq2(gpu_test_layer("dense", 5, 5),
                                                                                      gpu_test_layer("tanh", 0, 0))},
                                       3);
  if (loom_layer_set_int(grid, "grid_rows", 2, &err) || loom_layer_set_int(grid, "grid_cols", 2, &err))
    g_error("%s", err.message);
  loom_layer *layers[] = {gpu_test_layer("dense", 4, 5), grid, gpu_test_layer("dense", 10, 3)};
  return gpu_test_net_of(&in, layers, 3);
}

/* [2, 3, 4] → parallel grid_scatter 3 rows × 2 columns of 5 branches (four
 * conv2d 2→2, kernel 1×1, and a pass-through) → [2, 9, 8] → dense 8→3:
 * tiles of several rows. */
static inline loom_net *gpu_test_grid3_net(void) {
  loom_error err = {0};
  loom_shape in = loom_shape_make(3, (int64_t[]){2, 3, 4});
  loom_layer *b[5];
  for (int i = 0; i < 4; i++)
    b[i] = gpu_test_conv_layer("conv2d", 2, 2, 2, (int64_t[]){1, 1}, (int64_t[]){1, 1}, (int64_t[]){0, 0},
                               (int64_t[]){1, 1}, 1, LOOM_DTYPE_FLOAT32);
  b[4] = gpu_test_empty();
  loom_layer *grid = gpu_test_parallel("grid_scatter", b, 5);
  if (loom_layer_set_int(grid, "grid_rows", 3, &err) || loom_layer_set_int(grid, "grid_cols", 2, &err))
    g_error("%s", err.message);
  loom_layer *layers[] = {grid, gpu_test_layer("dense", 8, 3)};
  return gpu_test_net_of(&in, layers, 2);
}

/* dense in→9 → parallel filter [dense 9→9, sequential [] (pass-through),
 * sequential [dense 9→9, relu]], gate dense 9→3 → parallel filter [dense
 * 9→9, dense 9→9], gate sequential [dense 9→4, tanh, dense 4→2] → dense 9→out. */
static inline loom_net *gpu_test_filter_net(int64_t in_features, int64_t out) {
  loom_shape in = loom_shape_1d(in_features);
  loom_layer *layers[] = {
    gpu_test_layer("dense", in_features, 9),
    gpu_test_gated("filter", (loom_layer *[]){gpu_test_layer("dense", 9, 9), gpu_test_empty(),
                                              gpu_test_seq2(gpu_test_layer("dense", 9, 9), gpu_test_layer("relu", 0, 0))},
                   3, gpu_test_layer("dense", 9, 3)),
    gpu_test_gated("filter", (loom_layer *[]){gpu_test_layer("dense", 9, 9), gpu_test_layer("dense", 9, 9)}, 2,
                   gpu_test_container("sequential", (loom_layer *[]){gpu_test_layer("dense", 9, 4),
                                                                     gpu_test_layer("tanh", 0, 0),
                                                                     gpu_test_layer("dense", 4, 2)}, 3)),
    gpu_test_layer("dense", 9, out),
  };
  return gpu_test_net_of(&in, layers, 4);
}

/* dense in→6 → relu → parallel route [dense 6→6, sequential []
 * (pass-through), sequential [dense 6→6, tanh]], gate sequential [dense
 * 6→6, grid_softmax 2×3] (2 heads of 3 outputs) → parallel route [dense 6→6,
 * dense 6→6], gate sequential [dense 6→2, softmax] (one head) → dense 6→out. */
static inline loom_net *gpu_test_route_net(int64_t in_features, int64_t out) {
  loom_shape in = loom_shape_1d(in_features);
  loom_layer *layers[] = {
    gpu_test_layer("dense", in_features, 6),
    gpu_test_layer("relu", 0, 0),
    gpu_test_gated("route", (loom_layer *[]){gpu_test_layer("dense", 6, 6), gpu_test_empty(),
                                             gpu_test_seq2(gpu_test_layer("dense", 6, 6), gpu_test_layer("tanh", 0, 0))},
                   3, gpu_test_seq2(gpu_test_layer("dense", 6, 6), gpu_test_grid_softmax(2, 3))),
    gpu_test_gated("route", (loom_layer *[]){gpu_test_layer("dense", 6, 6), gpu_test_layer("dense", 6, 6)}, 2,
                   gpu_test_seq2(gpu_test_layer("dense", 6, 2), gpu_test_layer("softmax", 0, 0))),
    gpu_test_layer("dense", 6, out),
  };
  return gpu_test_net_of(&in, layers, 5);
}

/* Makes the gate's first dense layer output `bias` for every input (zero
 * weights): the branches tie where the bias values do. */
static inline void gpu_test_tie_gate(loom_layer *parallel, const float *bias, int64_t n) {
  loom_layer *g = loom_layer_gate(parallel);
  while (loom_layer_n_children(g) > 0) g = loom_layer_child(g, 0);
  loom_weights *w = loom_layer_weights(g, 0), *b = loom_layer_weights(g, 1);
  memset(loom_weights_master(w), 0, (size_t)loom_weights_count(w) * sizeof(float));
  g_assert_cmpint(loom_weights_count(b), ==, n);
  memcpy(loom_weights_master(b), bias, (size_t)n * sizeof(float));
  loom_weights_touch(w);
  loom_weights_touch(b);
}

static inline loom_layer *gpu_test_embedding(int64_t vocab, int64_t dim) {
  loom_error err = {0};
  loom_layer *l = gpu_test_layer("embedding", 0, 0);
  if (loom_layer_set_int(l, "num_embeddings", vocab, &err) || loom_layer_set_int(l, "embedding_dim", dim, &err))
    g_error("%s", err.message);
  return l;
}

/* Embeddings whose indices a layer computed or that sit in a container, 4
 * tokens a sample: parallel concat [sequential [relu, embedding 9×5],
 * embedding 9×5] → [8, 5] → dense 5→3: output [8, 3]. */
static inline loom_net *gpu_test_embed_container_net(void) {
  loom_shape in = loom_shape_1d(4);
  loom_layer *layers[] = {
    gpu_test_parallel("concat", (loom_layer *[]){gpu_test_seq2(gpu_test_layer("relu", 0, 0), gpu_test_embedding(9, 5)),
                                                 gpu_test_embedding(9, 5)},
                      2),
    gpu_test_layer("dense", 5, 3),
  };
  return gpu_test_net_of(&in, layers, 2);
}

/* relu → embedding 9×5 → dense 5→3 (4 tokens): an embedding after a layer. */
static inline loom_net *gpu_test_embed_after_net(void) {
  loom_shape in = loom_shape_1d(4);
  loom_layer *layers[] = {gpu_test_layer("relu", 0, 0), gpu_test_embedding(9, 5), gpu_test_layer("dense", 5, 3)};
  return gpu_test_net_of(&in, layers, 3);
}
