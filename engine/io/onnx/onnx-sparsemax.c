/*
 * ONNX forms of sparsemax and entmax15 (sparsemax.c) over the last axis, by
 * the same sort-based algorithms: TopK sorts each row descending, CumSum
 * gives the prefix sums, the support size is counted from a comparison with
 * ρ = 1…n, and GatherElements picks τ at the support size.
 *
 *   sparsemax  k = #{ρ : 1 + ρ·z_(ρ) > Σ_{j≤ρ} z_(j)},  τ = (Σ_{j≤k} z_(j) − 1)/k,  p = [z − τ]₊
 *   entmax15   x = z/2 − max(z/2) sorted; τ(ρ) = mean_ρ − √max(0, (1 − ρ·(meansq_ρ − mean_ρ²))/ρ),
 *              k = #{ρ : τ(ρ) ≤ x_(ρ)},  p = [x − τ(k)]₊²
 *
 * The engine works in float64 per row, the graph in float32 (docs/onnx.md
 * gives the measured difference).
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "io/onnx/onnx-graph.h"
#include "layers/registry.h"

static onnx_val reduce_sum_last(onnx_graph *g, const char *x) {
  int64_t axes[1] = {-1};
  onnx_attrs a = {0};
  onnx_attr_int(&a, "keepdims", 1);
  return onnx_op(g, "ReduceSum", &a, 2, x, onnx_const_ints(g, axes, 1).s);
}

/* v[..., k − 1] for a float count k [..., 1]. */
static onnx_val pick(onnx_graph *g, const char *v, const char *k) {
  onnx_attrs c = {0}, ga = {0};
  onnx_attr_int(&c, "to", 7); /* INT64 */
  onnx_val idx = onnx_op(g, "Cast", &c, 1, onnx_op(g, "Sub", NULL, 2, k, onnx_scalar(g, 1.0f).s).s);
  onnx_attr_int(&ga, "axis", -1);
  return onnx_op(g, "GatherElements", &ga, 2, v, idx.s);
}

static onnx_val count(onnx_graph *g, const char *cond) {
  onnx_attrs c = {0};
  onnx_attr_int(&c, "to", 1); /* FLOAT */
  return reduce_sum_last(g, onnx_op(g, "Cast", &c, 1, cond).s);
}

onnx_val onnx_sparsemax(onnx_graph *g, loom_layer *l, const char *x) {
  onnx_val y = {{0}};
  const loom_shape *in = &l->in_shape;
  int64_t n = in->d[in->rank - 1];
  float *rho = malloc((size_t)n * sizeof *rho);
  if (!rho) return onnx_fail(g, LOOM_ERR_NOMEM, _("out of memory writing the ONNX graph")), y;
  for (int64_t i = 0; i < n; i++) rho[i] = (float)(i + 1);
  onnx_val r = onnx_const_floats(g, rho, 1, &n);
  free(rho);
  onnx_val z;
  snprintf(z.s, sizeof z.s, "%s", x);
  bool entmax = l->type == &loom_layer_entmax15;
  if (entmax) {
    onnx_attrs m = {0};
    int64_t axes[1] = {-1};
    onnx_attr_ints(&m, "axes", axes, 1);
    onnx_attr_int(&m, "keepdims", 1);
    z = onnx_op(g, "Mul", NULL, 2, z.s, onnx_scalar(g, 0.5f).s);
    z = onnx_op(g, "Sub", NULL, 2, z.s, onnx_op(g, "ReduceMax", &m, 1, z.s).s);
  }
  onnx_attrs t = {0};
  onnx_attr_int(&t, "axis", -1);
  onnx_val sorted[2];
  onnx_op_outputs(g, "TopK", &t, 2, sorted, 2, z.s, onnx_const_ints(g, &n, 1).s);
  onnx_val axis = onnx_const_int_scalar(g, -1);
  onnx_val cs = onnx_op(g, "CumSum", NULL, 2, sorted[0].s, axis.s);
  if (!entmax) {
    onnx_val lhs = onnx_op(g, "Add", NULL, 2, onnx_scalar(g, 1.0f).s, onnx_op(g, "Mul", NULL, 2, r.s, sorted[0].s).s);
    onnx_val k = count(g, onnx_op(g, "Greater", NULL, 2, lhs.s, cs.s).s);
    onnx_val tau = onnx_op(g, "Div", NULL, 2, onnx_op(g, "Sub", NULL, 2, pick(g, cs.s, k.s).s, onnx_scalar(g, 1.0f).s).s,
                           k.s);
    return onnx_op(g, "Relu", NULL, 1, onnx_op(g, "Sub", NULL, 2, z.s, tau.s).s);
  }
  onnx_val sq = onnx_op(g, "Mul", NULL, 2, sorted[0].s, sorted[0].s);
  onnx_val mean = onnx_op(g, "Div", NULL, 2, cs.s, r.s);
  onnx_val meansq = onnx_op(g, "Div", NULL, 2, onnx_op(g, "CumSum", NULL, 2, sq.s, axis.s).s, r.s);
  onnx_val ss = onnx_op(g, "Mul", NULL, 2, r.s,
                        onnx_op(g, "Sub", NULL, 2, meansq.s, onnx_op(g, "Mul", NULL, 2, mean.s, mean.s).s).s);
  onnx_val delta = onnx_op(g, "Div", NULL, 2, onnx_op(g, "Sub", NULL, 2, onnx_scalar(g, 1.0f).s, ss.s).s, r.s);
  onnx_val tau = onnx_op(g, "Sub", NULL, 2, mean.s, onnx_op(g, "Sqrt", NULL, 1, onnx_op(g, "Relu", NULL, 1, delta.s).s).s);
  onnx_val k = count(g, onnx_op(g, "LessOrEqual", NULL, 2, tau.s, sorted[0].s).s);
  onnx_val p = onnx_op(g, "Relu", NULL, 1, onnx_op(g, "Sub", NULL, 2, z.s, pick(g, tau.s, k.s).s).s);
  return onnx_op(g, "Mul", NULL, 2, p.s, p.s);
}
