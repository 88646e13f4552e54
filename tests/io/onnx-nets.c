/*
 * onnx-nets DIR: writes the networks the ONNX export test runs beside the
 * built-in examples, one DIR/NAME.json each, and prints their names. Between
 * them they use every layer type the exporter covers, every parallel combine
 * mode, the three link merges, a disabled slot and quantized dtypes (whose
 * weights are exported dequantized). Weights come from fixed seeds.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"

typedef struct {
  loom_net *net;
  loom_error err;
  int rc;
} nb;

static loom_layer *L(nb *b, const char *type) {
  loom_layer *l = b->rc ? NULL : loom_layer_new_by_name(type, &b->err);
  if (!l && !b->rc) b->rc = 1;
  return l;
}
static loom_layer *I(nb *b, loom_layer *l, const char *name, int64_t v) {
  if (!b->rc && l) b->rc = loom_layer_set_int(l, name, v, &b->err);
  return l;
}
static loom_layer *B(nb *b, loom_layer *l, const char *name, bool v) {
  if (!b->rc && l) b->rc = loom_layer_set_bool(l, name, v, &b->err);
  return l;
}
static loom_layer *F(nb *b, loom_layer *l, const char *name, double v) {
  if (!b->rc && l) b->rc = loom_layer_set_float(l, name, v, &b->err);
  return l;
}
static loom_layer *E(nb *b, loom_layer *l, const char *name, const char *v) {
  if (!b->rc && l) b->rc = loom_layer_set_enum(l, name, v, &b->err);
  return l;
}
static loom_layer *N(nb *b, loom_layer *l, const char *name, int n, int64_t v0, int64_t v1, int64_t v2) {
  int64_t v[3] = {v0, v1, v2};
  if (!b->rc && l) b->rc = loom_layer_set_ints(l, name, v, n, &b->err);
  return l;
}
static loom_layer *D(nb *b, loom_layer *l, const char *dtype) {
  loom_dtype d;
  if (!b->rc && l) b->rc = loom_dtype_from_name(dtype, &d, &b->err);
  if (!b->rc && l) b->rc = loom_layer_set_dtype(l, d, &b->err);
  return l;
}
static loom_layer *dense(nb *b, int64_t in, int64_t out) {
  return I(b, I(b, L(b, "dense"), "in_features", in), "out_features", out);
}
static loom_layer *conv(nb *b, const char *type, int dims, int64_t in, int64_t out, int64_t k, int64_t s, int64_t p) {
  loom_layer *l = I(b, I(b, L(b, type), "in_channels", in), "out_channels", out);
  N(b, l, "kernel", dims, k, k, k);
  N(b, l, "stride", dims, s, s, s);
  return N(b, l, "padding", dims, p, p, p);
}
static loom_layer *kid(nb *b, loom_layer *c, loom_layer *child) {
  if (!b->rc && c && child) b->rc = loom_layer_add_child(c, child, &b->err);
  else loom_layer_free(child);
  return c;
}
static void put(nb *b, int y, int x, loom_layer *l) {
  loom_coord c = {0, y, x, 0};
  if (!b->rc && l) b->rc = loom_net_place(b->net, c, l, &b->err);
  else loom_layer_free(l);
}
static void row(nb *b, int y, loom_layer **ls, int n) {
  for (int i = 0; i < n; i++) put(b, y, i, ls[i]);
}
static void link(nb *b, int y0, int x0, int y1, int x1, loom_merge m) {
  loom_link k = {{0, y0, x0, 0}, {0, y1, x1, 0}, m};
  if (!b->rc) b->rc = loom_net_add_link(b->net, &k, &b->err);
}

#define ROW(b, ...)                                                                                                    \
  do {                                                                                                                 \
    loom_layer *ls_[] = {__VA_ARGS__};                                                                                 \
    row(b, 0, ls_, (int)(sizeof ls_ / sizeof ls_[0]));                                                                 \
  } while (0)

static void net_activations(nb *b) {
  ROW(b, dense(b, 6, 8), F(b, L(b, "leaky-relu"), "negative_slope", 0.1), D(b, dense(b, 8, 8), "int8"),
      F(b, L(b, "elu"), "alpha", 0.7), L(b, "gelu"), D(b, dense(b, 8, 8), "int4"), E(b, L(b, "gelu"), "approximate", "tanh"),
      L(b, "silu"), F(b, F(b, L(b, "softplus"), "beta", 2.0), "threshold", 1.5), L(b, "relu2"), L(b, "tanh"),
      B(b, dense(b, 8, 8), "bias", false), L(b, "relu"), L(b, "sigmoid"), D(b, dense(b, 8, 5), "float16"),
      F(b, L(b, "softmax_temperature"), "temperature", 0.7));
}

static void net_conv2d(nb *b) {
  ROW(b, I(b, conv(b, "conv2d", 2, 2, 4, 3, 2, 1), "groups", 2), L(b, "relu"),
      N(b, conv(b, "conv2d", 2, 4, 4, 3, 1, 2), "dilation", 2, 2, 1, 0),
      N(b, conv(b, "conv_transpose2d", 2, 4, 3, 3, 2, 1), "output_padding", 2, 1, 1, 0),
      E(b, L(b, "layernorm"), "over", "all"), L(b, "softmax"));
}

static void net_conv1d(nb *b) {
  ROW(b, N(b, conv(b, "conv1d", 1, 3, 4, 3, 1, 1), "dilation", 1, 2, 0, 0),
      B(b, conv(b, "conv_transpose1d", 1, 4, 2, 4, 2, 1), "bias", false), L(b, "rmsnorm"),
      E(b, B(b, L(b, "rmsnorm"), "elementwise_affine", false), "over", "all"),
      I(b, I(b, L(b, "grid_softmax"), "rows", 4), "cols", 11));
}

static void net_conv3d(nb *b) {
  ROW(b, D(b, conv(b, "conv3d", 3, 2, 3, 2, 1, 1), "int8"), L(b, "tanh"),
      I(b, conv(b, "conv_transpose3d", 3, 3, 2, 2, 2, 0), "groups", 1),
      B(b, L(b, "layernorm"), "elementwise_affine", false), L(b, "layernorm"));
}

static void net_sequence(nb *b) {
  loom_layer *mask = L(b, "masked_softmax");
  float keep[3] = {1, 0, 1};
  if (!b->rc && mask) b->rc = loom_layer_set_floats(mask, "mask", keep, 3, &b->err);
  ROW(b, I(b, I(b, L(b, "embedding"), "num_embeddings", 11), "embedding_dim", 8), L(b, "rmsnorm"),
      I(b, I(b, L(b, "swiglu"), "d_model", 8), "hidden", 12),
      E(b, B(b, I(b, I(b, L(b, "swiglu"), "d_model", 8), "hidden", 6), "bias", true), "activation", "relu2"),
      dense(b, 8, 3), mask);
}

static void net_containers(nb *b) {
  loom_layer *cat = E(b, L(b, "parallel"), "combine", "concat");
  kid(b, cat, dense(b, 6, 4));
  kid(b, cat, kid(b, kid(b, L(b, "sequential"), dense(b, 6, 3)), L(b, "tanh")));
  loom_layer *add = E(b, L(b, "parallel"), "combine", "add");
  kid(b, add, dense(b, 7, 5));
  kid(b, add, dense(b, 7, 5));
  loom_layer *avg = E(b, L(b, "parallel"), "combine", "avg");
  for (int i = 0; i < 3; i++) kid(b, avg, dense(b, 5, 5));
  loom_layer *res = kid(b, kid(b, L(b, "residual"), dense(b, 5, 5)), L(b, "relu"));
  loom_layer *filter = E(b, L(b, "parallel"), "combine", "filter");
  for (int i = 0; i < 3; i++) kid(b, filter, dense(b, 5, 4));
  if (!b->rc) b->rc = loom_layer_set_gate(filter, dense(b, 5, 3), &b->err);
  loom_layer *route = E(b, L(b, "parallel"), "combine", "route");
  for (int i = 0; i < 2; i++) kid(b, route, dense(b, 4, 6));
  loom_layer *gate = kid(b, L(b, "sequential"), dense(b, 4, 6));
  kid(b, gate, I(b, I(b, L(b, "grid_softmax"), "rows", 3), "cols", 2));
  if (!b->rc) b->rc = loom_layer_set_gate(route, gate, &b->err);
  ROW(b, cat, add, avg, res, filter, route, L(b, "sequential"));
}

/* Three [2, 9, 8] branches on the tiles of a 2×2 grid; the fourth stays 0. */
static void net_scatter(nb *b) {
  loom_layer *scatter = I(b, I(b, E(b, L(b, "parallel"), "combine", "grid_scatter"), "grid_rows", 2), "grid_cols", 2);
  for (int i = 0; i < 3; i++) kid(b, scatter, conv(b, "conv2d", 2, 2, 2, 3, 1, 1));
  ROW(b, scatter, L(b, "relu"));
}

static loom_layer *rec(nb *b, const char *type, int64_t in, int64_t hidden, const char *output) {
  return E(b, I(b, I(b, L(b, type), "input_size", in), "hidden_size", hidden), "output", output);
}

static void net_recurrent(nb *b) {
  ROW(b, rec(b, "lstm", 5, 6, "sequence"),
      E(b, B(b, rec(b, "rnn", 6, 6, "sequence"), "bias", false), "nonlinearity", "relu"),
      D(b, rec(b, "rnn", 6, 5, "sequence"), "int8"), rec(b, "lstm", 5, 4, "last"));
}

static loom_layer *att(nb *b, int64_t d, int64_t heads, int64_t kv, const char *rope) {
  return E(b, I(b, I(b, I(b, L(b, "attention"), "d_model", d), "heads", heads), "kv_heads", kv), "rope", rope);
}

/* Causal GQA with half RoPE, biases and Q/K norms; then bidirectional
 * multi-head attention with interleaved RoPE and a head width of its own. */
static void net_attention(nb *b) {
  loom_layer *a1 = B(b, B(b, att(b, 16, 4, 2, "half"), "bias", true), "qk_norm", true);
  loom_layer *a2 = D(b, F(b, I(b, B(b, att(b, 16, 2, 2, "interleaved"), "causal", false), "head_dim", 8), "rope_base", 500.0),
                     "int8");
  ROW(b, a1, L(b, "layernorm"), a2);
}

/* sparsemax over the whole sample, entmax15 per position. */
static void net_sparse(nb *b) {
  ROW(b, dense(b, 4, 12), L(b, "sparsemax"), F(b, L(b, "softmax_temperature"), "temperature", 3.0), dense(b, 12, 12),
      L(b, "entmax15"));
}

static void net_sparse_rows(nb *b) { ROW(b, dense(b, 6, 9), L(b, "entmax15"), dense(b, 9, 7), L(b, "sparsemax")); }

/* k-means per position (features, int8 centres), then over the sample. */
static void net_kmeans(nb *b) {
  ROW(b, dense(b, 5, 4), D(b, E(b, I(b, L(b, "kmeans"), "n_clusters", 6), "output", "features"), "int8"),
      F(b, I(b, L(b, "kmeans"), "n_clusters", 3), "temperature", 2.5));
}

/* hierarchical softmax by levels (per position) and by group sizes. */
static void net_hsoftmax(nb *b) {
  loom_layer *lv = L(b, "hierarchical_softmax"), *gs = L(b, "hierarchical_softmax");
  float levels[2] = {2, 3}, groups[3] = {3, 1, 2};
  if (!b->rc) b->rc = loom_layer_set_floats(lv, "levels", levels, 2, &b->err);
  if (!b->rc) b->rc = loom_layer_set_floats(gs, "levels", NULL, 0, &b->err);
  if (!b->rc) b->rc = loom_layer_set_floats(gs, "group_sizes", groups, 3, &b->err);
  ROW(b, dense(b, 5, 8), lv, dense(b, 6, 3), D(b, dense(b, 12, 9), "int4"), gs);
}

/* gumbel_softmax (stochastic) has no ONNX form: the export names it and its slot. */
static void net_refused(nb *b) { ROW(b, dense(b, 4, 5), L(b, "gumbel_softmax")); }

/* A 2×3 grid: replace, add and concat links, and a disabled slot. */
static void net_links(nb *b) {
  put(b, 0, 0, dense(b, 4, 6));
  put(b, 0, 1, L(b, "tanh"));
  put(b, 0, 2, dense(b, 6, 6));
  put(b, 1, 0, L(b, "relu"));
  put(b, 1, 1, dense(b, 12, 5));
  put(b, 1, 2, dense(b, 6, 3));
  link(b, 0, 0, 0, 2, LOOM_MERGE_ADD);
  link(b, 0, 1, 1, 1, LOOM_MERGE_CONCAT);
  link(b, 0, 0, 1, 2, LOOM_MERGE_REPLACE);
  if (!b->rc) b->rc = loom_net_set_enabled(b->net, (loom_coord){0, 1, 0, 0}, false, &b->err);
}

static const struct {
  const char *name;
  int rows, cols;
  int rank;
  int64_t in[4];
  void (*build)(nb *b);
} nets[] = {
  {"activations", 1, 16, 1, {6}, net_activations},
  {"conv2d", 1, 6, 3, {2, 9, 8}, net_conv2d},
  {"conv1d", 1, 5, 2, {3, 13}, net_conv1d},
  {"conv3d", 1, 5, 4, {2, 4, 5, 3}, net_conv3d},
  {"sequence", 1, 6, 1, {5}, net_sequence},
  {"containers", 1, 7, 1, {6}, net_containers},
  {"scatter", 1, 2, 3, {2, 9, 8}, net_scatter},
  {"links", 2, 3, 1, {4}, net_links},
  {"recurrent", 1, 4, 2, {7, 5}, net_recurrent},
  {"attention", 1, 3, 2, {6, 16}, net_attention},
  {"sparse", 1, 5, 1, {4}, net_sparse},
  {"sparse-rows", 1, 4, 2, {5, 6}, net_sparse_rows},
  {"kmeans", 1, 3, 2, {3, 5}, net_kmeans},
  {"hsoftmax", 1, 5, 2, {4, 5}, net_hsoftmax},
  {"refused", 1, 2, 1, {4}, net_refused},
};

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: onnx-nets DIR\n");
    return 2;
  }
  for (size_t i = 0; i < sizeof nets / sizeof nets[0]; i++) {
    nb b = {0};
    b.net = loom_net_new(1, nets[i].rows, nets[i].cols, 1, &b.err);
    if (!b.net) b.rc = 1;
    loom_shape in = loom_shape_make(nets[i].rank, nets[i].in);
    if (!b.rc) b.rc = loom_net_set_input_shape(b.net, &in, &b.err);
    if (!b.rc) nets[i].build(&b);
    loom_diag *diags = NULL;
    if (!b.rc && loom_net_infer_shapes(b.net, 1234 + i, &diags) > 0) {
      snprintf(b.err.message, sizeof b.err.message, "%s", diags[0].message);
      b.rc = 1;
    }
    free(diags);
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.json", argv[1], nets[i].name);
    if (!b.rc) b.rc = loom_model_save(b.net, path, &b.err);
    loom_net_free(b.net);
    if (b.rc) {
      fprintf(stderr, "onnx-nets: %s: %s\n", nets[i].name, b.err.message);
      return 1;
    }
    printf("%s\n", nets[i].name);
  }
  return 0;
}
