/*
 * ONNX forms of rnn and lstm (recurrent.c) as the RNN and LSTM operators,
 * batch-first (layout 1, opset 14 on). PyTorch's LSTM gate order i, f, g, o
 * becomes ONNX's i, o, f, c (c is g): the weight and bias rows are copied
 * in that order. B is bias_ih followed by bias_hh, both reordered. The
 * initial state is zero, as in a plain forward; a layer that carries its
 * state from call to call (carry_state) has no ONNX form and is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/onnx/onnx-graph.h"
#include "layers/registry.h"

/* ONNX block b takes the engine's block order[b]. */
static const int lstm_order[4] = {0, 3, 1, 2};

/* Appends `rows` blocks of h rows × cols from src (G blocks) in ONNX order. */
static void reorder(float *dst, const float *src, int64_t g, int64_t h, int64_t cols) {
  for (int64_t b = 0; b < g; b++) {
    int64_t from = g == 4 ? lstm_order[b] : b;
    memcpy(dst + b * h * cols, src + from * h * cols, (size_t)(h * cols) * sizeof *dst);
  }
}

/* At rest a dequantized copy in *owned for the export only (the graph copies it). */
static const float *values(onnx_graph *g, loom_layer *l, int index, float **owned) {
  *owned = NULL;
  const float *v = g->rc ? NULL : layer_weight_values_for_call(l, index, owned, g->err);
  if (!v && !g->rc) onnx_fail(g, g->err ? g->err->code : LOOM_ERR_INVALID, "%s", g->err ? g->err->message : "");
  return v;
}

onnx_val onnx_recurrent(onnx_graph *g, loom_layer *l, const char *x) {
  onnx_val y = {{0}};
  char where[128];
  bool lstm = l->type == &loom_layer_lstm;
  if (loom_layer_get_int(l, "carry_state"))
    return onnx_fail(g, LOOM_ERR_UNSUPPORTED,
                     _("%s cannot be exported to ONNX: it carries its state from one call to the next "
                       "(carry_state), which an ONNX graph cannot hold"),
                     layer_where(l, where, sizeof where)),
           y;
  int64_t f = loom_layer_get_int(l, "input_size"), h = loom_layer_get_int(l, "hidden_size"), gc = lstm ? 4 : 1;
  int64_t steps = l->in_shape.rank == 2 ? l->in_shape.d[0] : 1;
  bool bias = l->n_weights > 2;
  int64_t wdims[3] = {1, gc * h, f}, rdims[3] = {1, gc * h, h}, bdims[2] = {1, 2 * gc * h};
  size_t n_w = (size_t)(gc * h * f), n_r = (size_t)(gc * h * h), n_b = (size_t)(2 * gc * h);
  float *buf = malloc((n_w + n_r + n_b) * sizeof *buf);
  if (!buf) return onnx_fail(g, LOOM_ERR_NOMEM, _("out of memory writing the ONNX graph")), y;
  float *owned[4] = {NULL};
  const float *w_ih = values(g, l, 0, &owned[0]), *w_hh = values(g, l, 1, &owned[1]);
  const float *b_ih = bias ? values(g, l, 2, &owned[2]) : NULL, *b_hh = bias ? values(g, l, 3, &owned[3]) : NULL;
  if (g->rc) {
    for (int i = 0; i < 4; i++) free(owned[i]);
    free(buf);
    return y;
  }
  reorder(buf, w_ih, gc, h, f);
  reorder(buf + n_w, w_hh, gc, h, h);
  onnx_val w = onnx_const_floats(g, buf, 3, wdims), r = onnx_const_floats(g, buf + n_w, 3, rdims), b = {{0}};
  if (bias) {
    reorder(buf + n_w + n_r, b_ih, gc, h, 1);
    reorder(buf + n_w + n_r + gc * h, b_hh, gc, h, 1);
    b = onnx_const_floats(g, buf + n_w + n_r, 2, bdims);
  }
  for (int i = 0; i < 4; i++) free(owned[i]);
  free(buf);
  int64_t seq[2] = {steps, f};
  loom_shape seq_shape = loom_shape_make(2, seq);
  onnx_val xs = onnx_reshape(g, x, &seq_shape); /* [N, T, F] */
  onnx_attrs a = {0};
  onnx_attr_int(&a, "hidden_size", h);
  onnx_attr_int(&a, "layout", 1);
  if (!lstm) onnx_attr_string(&a, "activations", loom_layer_get_int(l, "nonlinearity") ? "Relu" : "Tanh");
  onnx_val out = onnx_op(g, lstm ? "LSTM" : "RNN", &a, 4, xs.s, w.s, r.s, bias ? b.s : ""); /* [N, T, 1, H] */
  if (loom_shape_numel(&l->out_shape) == h && steps > 1) {
    /* output "last": the final step */
    int64_t last = steps - 1;
    onnx_attrs ga = {0};
    onnx_attr_int(&ga, "axis", 1);
    out = onnx_op(g, "Gather", &ga, 2, out.s, onnx_const_ints(g, &last, 1).s);
  }
  return onnx_reshape(g, out.s, &l->out_shape);
}
