/*
 * ONNX forms of the layer types: one function per family, one table keyed by
 * the registry's type. Weights are written as float32 initializers of
 * their effective values (the dequantized weights the engine computes with),
 * so the graph reproduces the engine's float32 reference; docs/onnx.md
 * explains the choice. Each function receives x as [N, l->in_shape] and
 * returns [N, l->out_shape]; the formulas are the ones in the layer's own
 * file, cited where they are not obvious.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/onnx/onnx-graph.h"
#include "layers/registry.h"

static int64_t int_param(const loom_layer *l, const char *name) { return loom_layer_get_int(l, name); }

static const loom_param_value *ints_param(const loom_layer *l, const char *name) {
  return &l->values[loom_layer_type_param_index(l->type, name)];
}

/* Weight slot `index` as a float32 initializer of the given dims. */
onnx_val onnx_weight(onnx_graph *g, loom_layer *l, int index, int rank, const int64_t *dims) {
  onnx_val none = {{0}};
  if (g->rc) return none;
  if (index >= l->n_weights) {
    char where[128];
    onnx_fail(g, LOOM_ERR_INVALID, _("%s has no weight slot %d to export"), layer_where(l, where, sizeof where),
              index);
    return none;
  }
  /* At rest a dequantized copy for the export only: the graph copies it. */
  float *owned;
  const float *v = layer_weight_values_for_call(l, index, &owned, g->err);
  if (!v) {
    onnx_fail(g, g->err ? g->err->code : LOOM_ERR_INVALID, "%s", g->err ? g->err->message : "");
    return none;
  }
  onnx_val c = onnx_const_floats(g, v, rank, dims);
  free(owned);
  return c;
}

/* Weight [rows, cols] transposed to [cols, rows], for x·Wᵀ as a MatMul. */
static onnx_val weight_t(onnx_graph *g, loom_layer *l, int index, int64_t rows, int64_t cols) {
  int64_t dims[2] = {rows, cols};
  onnx_val w = onnx_weight(g, l, index, 2, dims);
  onnx_attrs a = {0};
  int64_t perm[2] = {1, 0};
  onnx_attr_ints(&a, "perm", perm, 2);
  return onnx_op(g, "Transpose", &a, 1, w.s);
}

/* y = x·Wᵀ (+ b) on rows of `n_in` values. */
onnx_val onnx_linear(onnx_graph *g, loom_layer *l, const char *x, int w_index, int b_index, int64_t n_in,
                       int64_t n_out) {
  onnx_val y = onnx_op(g, "MatMul", NULL, 2, x, weight_t(g, l, w_index, n_out, n_in).s);
  if (b_index >= 0) {
    int64_t dims[1] = {n_out};
    y = onnx_op(g, "Add", NULL, 2, y.s, onnx_weight(g, l, b_index, 1, dims).s);
  }
  return y;
}

/* dense.c: rows of in_features (the whole sample or each position). */
static onnx_val export_dense(onnx_graph *g, loom_layer *l, const char *x) {
  int64_t n_in = int_param(l, "in_features"), n_out = int_param(l, "out_features");
  loom_shape rows = loom_shape_1d(n_in);
  onnx_val r = onnx_reshape(g, x, &rows);
  onnx_val y = onnx_linear(g, l, r.s, 0, l->n_weights > 1 ? 1 : -1, n_in, n_out);
  return onnx_reshape(g, y.s, &l->out_shape);
}

/* activation.c: act_value(). */
static onnx_val export_activation(onnx_graph *g, loom_layer *l, const char *x) {
  const loom_layer_type *t = l->type;
  onnx_attrs a = {0};
  if (t == &loom_layer_relu) return onnx_op(g, "Relu", NULL, 1, x);
  if (t == &loom_layer_sigmoid) return onnx_op(g, "Sigmoid", NULL, 1, x);
  if (t == &loom_layer_tanh) return onnx_op(g, "Tanh", NULL, 1, x);
  if (t == &loom_layer_leaky_relu) {
    onnx_attr_float(&a, "alpha", (float)loom_layer_get_float(l, "negative_slope"));
    return onnx_op(g, "LeakyRelu", &a, 1, x);
  }
  if (t == &loom_layer_elu) {
    onnx_attr_float(&a, "alpha", (float)loom_layer_get_float(l, "alpha"));
    return onnx_op(g, "Elu", &a, 1, x);
  }
  if (t == &loom_layer_silu) return onnx_op(g, "Mul", NULL, 2, x, onnx_op(g, "Sigmoid", NULL, 1, x).s);
  if (t == &loom_layer_relu2) {
    onnx_val r = onnx_op(g, "Relu", NULL, 1, x);
    return onnx_op(g, "Mul", NULL, 2, r.s, r.s);
  }
  if (t == &loom_layer_gelu) {
    onnx_val inner;
    if (int_param(l, "approximate")) {
      /* tanh(√(2/π)·(x + 0.044715·x³)) */
      onnx_val x3 = onnx_op(g, "Mul", NULL, 2, x, onnx_op(g, "Mul", NULL, 2, x, x).s);
      onnx_val s = onnx_op(g, "Add", NULL, 2, x, onnx_op(g, "Mul", NULL, 2, x3.s, onnx_scalar(g, 0.044715f).s).s);
      inner = onnx_op(g, "Tanh", NULL, 1,
                      onnx_op(g, "Mul", NULL, 2, s.s, onnx_scalar(g, 0.79788456080286535588f).s).s);
    } else {
      inner = onnx_op(g, "Erf", NULL, 1, onnx_op(g, "Mul", NULL, 2, x, onnx_scalar(g, 0.70710678118654752440f).s).s);
    }
    onnx_val one_plus = onnx_op(g, "Add", NULL, 2, inner.s, onnx_scalar(g, 1.0f).s);
    onnx_val half_x = onnx_op(g, "Mul", NULL, 2, x, onnx_scalar(g, 0.5f).s);
    return onnx_op(g, "Mul", NULL, 2, half_x.s, one_plus.s);
  }
  if (t == &loom_layer_softplus) {
    /* beta·x > threshold ? x : log(1 + exp(beta·x)) / beta */
    float beta = (float)loom_layer_get_float(l, "beta"), thr = (float)loom_layer_get_float(l, "threshold");
    onnx_val bx = onnx_op(g, "Mul", NULL, 2, x, onnx_scalar(g, beta).s);
    onnx_val sp = onnx_op(g, "Div", NULL, 2, onnx_op(g, "Softplus", NULL, 1, bx.s).s, onnx_scalar(g, beta).s);
    onnx_val above = onnx_op(g, "Greater", NULL, 2, bx.s, onnx_scalar(g, thr).s);
    return onnx_op(g, "Where", NULL, 3, above.s, x, sp.s);
  }
  onnx_val none = {{0}};
  return none;
}

/* conv.c: PyTorch's weight layouts are ONNX's ([out, in/groups, k...] and
 * [in, out/groups, k...] transposed); padding is symmetric. */
static onnx_val export_conv(onnx_graph *g, loom_layer *l, const char *x) {
  bool t = l->type == &loom_layer_conv_transpose1d || l->type == &loom_layer_conv_transpose2d ||
           l->type == &loom_layer_conv_transpose3d;
  const loom_param_value *k = ints_param(l, "kernel"), *s = ints_param(l, "stride"), *p = ints_param(l, "padding"),
                         *d = ints_param(l, "dilation");
  int dims = l->type->params[loom_layer_type_param_index(l->type, "kernel")].count;
  int64_t cin = int_param(l, "in_channels"), cout = int_param(l, "out_channels"), groups = int_param(l, "groups");
  int64_t wdims[2 + 3], pads[6];
  wdims[0] = t ? cin : cout;
  wdims[1] = (t ? cout : cin) / groups;
  for (int i = 0; i < dims; i++) {
    wdims[2 + i] = k->i[i];
    pads[i] = pads[dims + i] = p->i[i];
  }
  onnx_attrs a = {0};
  onnx_attr_ints(&a, "kernel_shape", k->i, dims);
  onnx_attr_ints(&a, "strides", s->i, dims);
  onnx_attr_ints(&a, "dilations", d->i, dims);
  onnx_attr_ints(&a, "pads", pads, 2 * dims);
  onnx_attr_int(&a, "group", groups);
  if (t) onnx_attr_ints(&a, "output_padding", ints_param(l, "output_padding")->i, dims);
  onnx_val w = onnx_weight(g, l, 0, 2 + dims, wdims);
  const char *op = t ? "ConvTranspose" : "Conv";
  /* The input may lack its single channel's axis (conv.c conv_image_shape):
   * l->in_shape has it, so reshaping to it is exact, and a no-op otherwise. */
  onnx_val img = onnx_reshape(g, x, &l->in_shape);
  x = img.s;
  if (l->n_weights > 1) {
    int64_t bd[1] = {cout};
    onnx_val b = onnx_weight(g, l, 1, 1, bd);
    return onnx_op(g, op, &a, 3, x, w.s, b.s);
  }
  return onnx_op(g, op, &a, 2, x, w.s);
}

/* norm.c: over the last dimension or the whole sample; statistics in double
 * there, float32 here (within the tolerance docs/onnx.md states). */
static onnx_val export_norm(onnx_graph *g, loom_layer *l, const char *x) {
  bool all = int_param(l, "over") == 1, layernorm = l->type == &loom_layer_layernorm;
  float eps = (float)loom_layer_get_float(l, "eps");
  loom_shape rows = loom_shape_1d(all ? loom_shape_numel(&l->in_shape) : l->in_shape.d[l->in_shape.rank - 1]);
  int64_t d = rows.d[0];
  onnx_val r = onnx_reshape(g, x, &rows), y;
  if (layernorm) {
    onnx_val w, b;
    if (l->n_weights > 0) {
      w = onnx_weight(g, l, 0, 1, &d);
      b = onnx_weight(g, l, 1, 1, &d);
    } else {
      /* Without affine parameters the scale is 1 and the offset 0. */
      w = onnx_op(g, "Expand", NULL, 2, onnx_scalar(g, 1.0f).s, onnx_const_ints(g, &d, 1).s);
      b = onnx_op(g, "Expand", NULL, 2, onnx_scalar(g, 0.0f).s, onnx_const_ints(g, &d, 1).s);
    }
    onnx_attrs a = {0};
    onnx_attr_int(&a, "axis", -1);
    onnx_attr_float(&a, "epsilon", eps);
    y = onnx_op(g, "LayerNormalization", &a, 3, r.s, w.s, b.s);
  } else {
    /* x / √(mean(x²) + eps) · w */
    onnx_attrs a = {0};
    int64_t axes[1] = {-1};
    onnx_attr_ints(&a, "axes", axes, 1);
    onnx_attr_int(&a, "keepdims", 1);
    onnx_val ms = onnx_op(g, "ReduceMean", &a, 1, onnx_op(g, "Mul", NULL, 2, r.s, r.s).s);
    onnx_val rms = onnx_op(g, "Sqrt", NULL, 1, onnx_op(g, "Add", NULL, 2, ms.s, onnx_scalar(g, eps).s).s);
    y = onnx_op(g, "Div", NULL, 2, r.s, rms.s);
    if (l->n_weights > 0) y = onnx_op(g, "Mul", NULL, 2, y.s, onnx_weight(g, l, 0, 1, &d).s);
  }
  return onnx_reshape(g, y.s, &l->out_shape);
}

/* embedding.c: token indices arrive as floats; a row of the table each. */
static onnx_val export_embedding(onnx_graph *g, loom_layer *l, const char *x) {
  int64_t dims[2] = {int_param(l, "num_embeddings"), int_param(l, "embedding_dim")};
  onnx_attrs a = {0};
  onnx_attr_int(&a, "to", 7); /* INT64 */
  onnx_val idx = onnx_op(g, "Cast", &a, 1, x);
  onnx_attrs b = {0};
  onnx_attr_int(&b, "axis", 0);
  return onnx_op(g, "Gather", &b, 2, onnx_weight(g, l, 0, 2, dims).s, idx.s);
}

/* softmax.c: over the last dimension; temperature divides the logits; grid
 * softmax works on rows × cols of the flattened sample; the masked softmax
 * gives masked entries probability 0 (-inf logits do the same in ONNX). */
static onnx_val export_softmax(onnx_graph *g, loom_layer *l, const char *x) {
  onnx_val v = {{0}};
  snprintf(v.s, sizeof v.s, "%s", x);
  loom_shape grid = l->in_shape;
  if (l->type == &loom_layer_softmax_temperature)
    v = onnx_op(g, "Div", NULL, 2, v.s, onnx_scalar(g, (float)loom_layer_get_float(l, "temperature")).s);
  if (l->type == &loom_layer_grid_softmax) {
    int64_t dims[2] = {int_param(l, "rows"), int_param(l, "cols")};
    grid = loom_shape_make(2, dims);
    v = onnx_reshape(g, v.s, &grid);
  }
  if (l->type == &loom_layer_masked_softmax) {
    int64_t n_keep = 0;
    const float *keep = loom_layer_get_floats(l, "mask", &n_keep);
    if (keep && n_keep > 0) {
      int64_t n = grid.d[grid.rank - 1], rows = n_keep / n;
      if (n_keep != n && n_keep != loom_shape_numel(&grid) / n * n) {
        char where[128];
        onnx_fail(g, LOOM_ERR_SHAPE, _("%s: its mask of %lld values fits neither a row nor the sample"),
                  layer_where(l, where, sizeof where), (long long)n_keep);
        return v;
      }
      /* keep == 0 → -inf added to the logit. */
      int64_t dims[2] = {rows, n};
      float *bias = malloc((size_t)n_keep * sizeof *bias);
      if (!bias) {
        onnx_fail(g, LOOM_ERR_NOMEM, _("out of memory writing the ONNX graph"));
        return v;
      }
      for (int64_t i = 0; i < n_keep; i++) bias[i] = keep[i] == 0.0f ? -INFINITY : 0.0f;
      onnx_val mb = onnx_const_floats(g, bias, 2, dims);
      free(bias);
      if (rows > 1) {
        loom_shape rs = loom_shape_make(2, dims);
        v = onnx_reshape(g, v.s, &rs);
      }
      v = onnx_op(g, "Add", NULL, 2, v.s, mb.s);
    }
  }
  onnx_attrs a = {0};
  onnx_attr_int(&a, "axis", -1);
  v = onnx_op(g, "Softmax", &a, 1, v.s);
  return onnx_reshape(g, v.s, &l->out_shape);
}

/* swiglu.c: down(act(gate(x)) · up(x)), act = silu or relu². */
static onnx_val export_swiglu(onnx_graph *g, loom_layer *l, const char *x) {
  int64_t d = int_param(l, "d_model"), hid = int_param(l, "hidden");
  bool bias = int_param(l, "bias") != 0;
  loom_shape rows = loom_shape_1d(d);
  onnx_val r = onnx_reshape(g, x, &rows);
  onnx_val gate = onnx_linear(g, l, r.s, 0, bias ? 3 : -1, d, hid);
  onnx_val up = onnx_linear(g, l, r.s, 1, bias ? 4 : -1, d, hid);
  onnx_val act;
  if (int_param(l, "activation") == 1) {
    onnx_val rl = onnx_op(g, "Relu", NULL, 1, gate.s);
    act = onnx_op(g, "Mul", NULL, 2, rl.s, rl.s);
  } else {
    act = onnx_op(g, "Mul", NULL, 2, gate.s, onnx_op(g, "Sigmoid", NULL, 1, gate.s).s);
  }
  onnx_val h = onnx_op(g, "Mul", NULL, 2, act.s, up.s);
  onnx_val y = onnx_linear(g, l, h.s, 2, bias ? 5 : -1, hid, d);
  return onnx_reshape(g, y.s, &l->out_shape);
}

/* kmeans.c: a_k = −‖x − c_k‖² / T per row, p = softmax(a); the output is p
 * or Σ_k p_k c_k. */
static onnx_val export_kmeans(onnx_graph *g, loom_layer *l, const char *x) {
  int64_t k = int_param(l, "n_clusters"), f = l->in_shape.d[l->in_shape.rank - 1];
  int64_t cdims[2] = {k, f}, axis[1] = {1}, last[1] = {-1};
  loom_shape rows = loom_shape_1d(f);
  onnx_val r = onnx_reshape(g, x, &rows); /* [R, F] */
  onnx_val c = onnx_weight(g, l, 0, 2, cdims);
  onnx_val diff = onnx_op(g, "Sub", NULL, 2, onnx_op(g, "Unsqueeze", NULL, 2, r.s, onnx_const_ints(g, axis, 1).s).s, c.s);
  onnx_attrs ra = {0};
  onnx_attr_int(&ra, "keepdims", 0);
  onnx_val d2 = onnx_op(g, "ReduceSum", &ra, 2, onnx_op(g, "Mul", NULL, 2, diff.s, diff.s).s,
                        onnx_const_ints(g, last, 1).s); /* [R, K] */
  onnx_val a = onnx_op(g, "Div", NULL, 2, d2.s, onnx_scalar(g, (float)-loom_layer_get_float(l, "temperature")).s);
  onnx_attrs sa = {0};
  onnx_attr_int(&sa, "axis", -1);
  onnx_val p = onnx_op(g, "Softmax", &sa, 1, a.s);
  if (int_param(l, "output") == 1) p = onnx_op(g, "MatMul", NULL, 2, p.s, c.s);
  return onnx_reshape(g, p.s, &l->out_shape);
}

typedef onnx_val (*export_fn)(onnx_graph *g, loom_layer *l, const char *x);

static const struct {
  const loom_layer_type *type;
  export_fn fn;
} exporters[] = {
  {&loom_layer_dense, export_dense},
  {&loom_layer_relu, export_activation},
  {&loom_layer_leaky_relu, export_activation},
  {&loom_layer_elu, export_activation},
  {&loom_layer_gelu, export_activation},
  {&loom_layer_silu, export_activation},
  {&loom_layer_sigmoid, export_activation},
  {&loom_layer_tanh, export_activation},
  {&loom_layer_softplus, export_activation},
  {&loom_layer_relu2, export_activation},
  {&loom_layer_conv1d, export_conv},
  {&loom_layer_conv2d, export_conv},
  {&loom_layer_conv3d, export_conv},
  {&loom_layer_conv_transpose1d, export_conv},
  {&loom_layer_conv_transpose2d, export_conv},
  {&loom_layer_conv_transpose3d, export_conv},
  {&loom_layer_layernorm, export_norm},
  {&loom_layer_rmsnorm, export_norm},
  {&loom_layer_embedding, export_embedding},
  {&loom_layer_softmax, export_softmax},
  {&loom_layer_softmax_temperature, export_softmax},
  {&loom_layer_grid_softmax, export_softmax},
  {&loom_layer_masked_softmax, export_softmax},
  {&loom_layer_hierarchical_softmax, onnx_hsoftmax},
  {&loom_layer_kmeans, export_kmeans},
  {&loom_layer_sparsemax, onnx_sparsemax},
  {&loom_layer_entmax15, onnx_sparsemax},
  {&loom_layer_swiglu, export_swiglu},
  {&loom_layer_rnn, onnx_recurrent},
  {&loom_layer_lstm, onnx_recurrent},
  {&loom_layer_attention, onnx_attention},
};

onnx_val onnx_layer(onnx_graph *g, loom_layer *l, const char *x) {
  onnx_val y = {{0}};
  if (g->rc) return y;
  char where[128];
  if (!l->built) {
    onnx_fail(g, LOOM_ERR_INVALID, _("%s is not built; the network must pass shape inference before export"),
              layer_where(l, where, sizeof where));
    return y;
  }
  if (onnx_container(g, l, x, &y)) return y;
  for (size_t i = 0; i < sizeof exporters / sizeof exporters[0]; i++)
    if (exporters[i].type == l->type) return exporters[i].fn(g, l, x);
  onnx_fail(g, LOOM_ERR_UNSUPPORTED,
            _("%s cannot be exported to ONNX: the exporter has no ONNX form for layer type “%s” (docs/onnx.md lists "
              "the types it covers)"),
            layer_where(l, where, sizeof where), l->type->name);
  return y;
}
