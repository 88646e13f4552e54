/*
 * ONNX form of attention (attention.c) in plain operators, for the fixed
 * sequence length the layer was built for:
 *
 *   q, k, v = projections, split into heads [N, heads, T, head_dim]
 *   qk_norm: RMSNorm over head_dim with q_norm / k_norm
 *   RoPE:    x·C + (x·P)·S, with C, S the cos/sin tables [T, head_dim]
 *            (angles in float64 as att_rope_table computes them) and P the
 *            signed permutation pairing j with j + head_dim/2 (half) or 2j
 *            with 2j+1 (interleaved), so x·P is exact
 *   GQA:     key/value head h / (heads / kv_heads) gathered per query head
 *   softmax(q·kᵀ / √head_dim + causal mask) · v, heads joined, output projection
 *
 * The KV cache (cache_capacity > 0) is state kept between calls and is
 * refused; a key padding mask is a per-call input of the C API, not part of
 * the layer, and is not exported (docs/onnx.md).
 */
#include <math.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "io/onnx/onnx-graph.h"
#include "layers/attention-impl.h"

/* [N, T, heads·hd] → [N, heads, T, hd] */
static onnx_val split_heads(onnx_graph *g, const char *x, int64_t steps, int64_t heads, int64_t hd) {
  int64_t dims[3] = {steps, heads, hd};
  loom_shape s = loom_shape_make(3, dims);
  onnx_attrs a = {0};
  int64_t perm[4] = {0, 2, 1, 3};
  onnx_attr_ints(&a, "perm", perm, 4);
  return onnx_op(g, "Transpose", &a, 1, onnx_reshape(g, x, &s).s);
}

static onnx_val rms_heads(onnx_graph *g, loom_layer *l, const char *x, int w_index, int64_t hd, float eps) {
  onnx_attrs a = {0};
  int64_t axes[1] = {-1};
  onnx_attr_ints(&a, "axes", axes, 1);
  onnx_attr_int(&a, "keepdims", 1);
  onnx_val ms = onnx_op(g, "ReduceMean", &a, 1, onnx_op(g, "Mul", NULL, 2, x, x).s);
  onnx_val rms = onnx_op(g, "Sqrt", NULL, 1, onnx_op(g, "Add", NULL, 2, ms.s, onnx_scalar(g, eps).s).s);
  onnx_val y = onnx_op(g, "Div", NULL, 2, x, rms.s);
  return onnx_op(g, "Mul", NULL, 2, y.s, onnx_weight(g, l, w_index, 1, &hd).s);
}

onnx_val onnx_attention(onnx_graph *g, loom_layer *l, const char *x) {
  onnx_val y = {{0}};
  char where[128];
  if (loom_layer_get_int(l, "cache_capacity") > 0)
    return onnx_fail(g, LOOM_ERR_UNSUPPORTED,
                     _("%s cannot be exported to ONNX: its key/value cache keeps state from one call to the next "
                       "(set cache_capacity to 0 to export it)"),
                     layer_where(l, where, sizeof where)),
           y;
  int64_t d = loom_layer_get_int(l, "d_model"), h = loom_layer_get_int(l, "heads"), kv = att_kv_heads(l);
  int64_t hd = att_head_dim(l), steps = l->in_shape.rank == 2 ? l->in_shape.d[0] : 1;
  bool bias = loom_layer_get_int(l, "bias") != 0, qk_norm = loom_layer_get_int(l, "qk_norm") != 0;
  int rope = (int)loom_layer_get_int(l, "rope");
  int nw = 4;
  loom_shape rows = loom_shape_1d(d);
  onnx_val xr = onnx_reshape(g, x, &rows);
  onnx_val q = onnx_linear(g, l, xr.s, 0, bias ? nw : -1, d, h * hd);
  onnx_val k = onnx_linear(g, l, xr.s, 1, bias ? nw + 1 : -1, d, kv * hd);
  onnx_val v = onnx_linear(g, l, xr.s, 2, bias ? nw + 2 : -1, d, kv * hd);
  int o_bias = bias ? nw + 3 : -1;
  if (bias) nw += 4;
  q = split_heads(g, q.s, steps, h, hd);
  k = split_heads(g, k.s, steps, kv, hd);
  v = split_heads(g, v.s, steps, kv, hd);
  if (qk_norm) {
    float eps = (float)loom_layer_get_float(l, "qk_norm_eps");
    q = rms_heads(g, l, q.s, nw, hd, eps);
    k = rms_heads(g, l, k.s, nw + 1, hd, eps);
  }
  if (rope != ATT_ROPE_NONE) {
    int64_t half = hd / 2, tab = steps * hd;
    double base = loom_layer_get_float(l, "rope_base");
    float *buf = calloc((size_t)(2 * tab + hd * hd), sizeof *buf);
    if (!buf) return onnx_fail(g, LOOM_ERR_NOMEM, _("out of memory writing the ONNX graph")), y;
    float *cs = buf, *sn = buf + tab, *perm = buf + 2 * tab;
    for (int64_t j = 0; j < half; j++) {
      int64_t i1 = rope == ATT_ROPE_INTERLEAVED ? 2 * j : j, i2 = rope == ATT_ROPE_INTERLEAVED ? 2 * j + 1 : j + half;
      for (int64_t t = 0; t < steps; t++) {
        double angle = (double)t * pow(base, -2.0 * (double)j / (double)hd);
        cs[t * hd + i1] = cs[t * hd + i2] = (float)cos(angle);
        sn[t * hd + i1] = sn[t * hd + i2] = (float)sin(angle);
      }
      /* (x·P)[i1] = −x[i2], (x·P)[i2] = x[i1] */
      perm[i2 * hd + i1] = -1.0f;
      perm[i1 * hd + i2] = 1.0f;
    }
    int64_t tdims[2] = {steps, hd}, pdims[2] = {hd, hd};
    onnx_val c = onnx_const_floats(g, cs, 2, tdims), s = onnx_const_floats(g, sn, 2, tdims);
    onnx_val p = onnx_const_floats(g, perm, 2, pdims);
    free(buf);
    onnx_val *qk[2] = {&q, &k};
    for (int i = 0; i < 2; i++) {
      onnx_val rot = onnx_op(g, "Mul", NULL, 2, onnx_op(g, "MatMul", NULL, 2, qk[i]->s, p.s).s, s.s);
      *qk[i] = onnx_op(g, "Add", NULL, 2, onnx_op(g, "Mul", NULL, 2, qk[i]->s, c.s).s, rot.s);
    }
  }
  if (kv != h) {
    int64_t *idx = malloc((size_t)h * sizeof *idx);
    if (!idx) return onnx_fail(g, LOOM_ERR_NOMEM, _("out of memory writing the ONNX graph")), y;
    for (int64_t i = 0; i < h; i++) idx[i] = i / (h / kv);
    onnx_val gi = onnx_const_ints(g, idx, h);
    free(idx);
    onnx_attrs a = {0}, b = {0};
    onnx_attr_int(&a, "axis", 1);
    onnx_attr_int(&b, "axis", 1);
    k = onnx_op(g, "Gather", &a, 2, k.s, gi.s);
    v = onnx_op(g, "Gather", &b, 2, v.s, gi.s);
  }
  onnx_attrs kt = {0};
  int64_t kperm[4] = {0, 1, 3, 2};
  onnx_attr_ints(&kt, "perm", kperm, 4);
  onnx_val scores = onnx_op(g, "MatMul", NULL, 2, q.s, onnx_op(g, "Transpose", &kt, 1, k.s).s);
  scores = onnx_op(g, "Mul", NULL, 2, scores.s, onnx_scalar(g, (float)(1.0 / sqrt((double)hd))).s);
  if (loom_layer_get_int(l, "causal") && steps > 1) {
    float *mask = malloc((size_t)(steps * steps) * sizeof *mask);
    if (!mask) return onnx_fail(g, LOOM_ERR_NOMEM, _("out of memory writing the ONNX graph")), y;
    for (int64_t i = 0; i < steps; i++)
      for (int64_t j = 0; j < steps; j++) mask[i * steps + j] = j > i ? -INFINITY : 0.0f;
    int64_t mdims[2] = {steps, steps};
    scores = onnx_op(g, "Add", NULL, 2, scores.s, onnx_const_floats(g, mask, 2, mdims).s);
    free(mask);
  }
  onnx_attrs sa = {0};
  onnx_attr_int(&sa, "axis", -1);
  onnx_val o = onnx_op(g, "MatMul", NULL, 2, onnx_op(g, "Softmax", &sa, 1, scores.s).s, v.s);
  onnx_attrs ot = {0};
  int64_t operm[4] = {0, 2, 1, 3};
  onnx_attr_ints(&ot, "perm", operm, 4);
  o = onnx_op(g, "Transpose", &ot, 1, o.s); /* [N, T, heads, hd] */
  loom_shape joined = loom_shape_1d(h * hd);
  o = onnx_reshape(g, o.s, &joined);
  y = onnx_linear(g, l, o.s, 3, o_bias, h * hd, d);
  return onnx_reshape(g, y.s, &l->out_shape);
}
