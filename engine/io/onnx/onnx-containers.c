/*
 * ONNX forms of the containers (containers.c, parallel.c): a sequential is
 * its children in a row, a residual adds its input back, a parallel combines
 * its branches as parallel.c's forward does. Branch outputs are flattened to
 * [N, numel] before they are combined, because every combine mode works on
 * the per-sample values in memory order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/onnx/onnx-graph.h"
#include "layers/registry.h"

enum { COMBINE_CONCAT, COMBINE_ADD, COMBINE_AVG, COMBINE_GRID_SCATTER, COMBINE_FILTER, COMBINE_ROUTE };

static onnx_val chain(onnx_graph *g, loom_layer *l, const char *x) {
  onnx_val v;
  snprintf(v.s, sizeof v.s, "%s", x);
  for (int i = 0; i < l->n_children; i++) v = onnx_layer(g, l->children[i], v.s);
  return v;
}

/* Branch outputs [N, numel] stacked to [N, n, numel]. */
static onnx_val stack(onnx_graph *g, const onnx_val *outs, int n) {
  onnx_val acc = {{0}};
  int64_t axis[1] = {1};
  onnx_val ax = onnx_const_ints(g, axis, 1);
  for (int i = 0; i < n; i++) {
    onnx_val u = onnx_op(g, "Unsqueeze", NULL, 2, outs[i].s, ax.s);
    if (i == 0) {
      acc = u;
    } else {
      onnx_attrs a = {0};
      onnx_attr_int(&a, "axis", 1);
      acc = onnx_op(g, "Concat", &a, 2, acc.s, u.s);
    }
  }
  return acc;
}

/* grid_scatter: branch i becomes tile (i / cols, i % cols) of [C, rows·H,
 * cols·W]; empty tiles stay 0. Each branch is padded to the full grid and
 * the padded branches summed (every output value comes from one branch). */
static onnx_val grid_scatter(onnx_graph *g, loom_layer *l, const onnx_val *outs) {
  int64_t rows = loom_layer_get_int(l, "grid_rows"), cols = loom_layer_get_int(l, "grid_cols");
  const loom_shape *s0 = &l->children[0]->out_shape;
  int64_t c = s0->d[0], h = s0->rank == 3 ? s0->d[1] : 1, w = s0->rank == 1 ? 1 : s0->d[s0->rank - 1];
  int64_t chw[3] = {c, h, w};
  loom_shape as_chw = loom_shape_make(3, chw);
  onnx_val sum = {{0}};
  for (int i = 0; i < l->n_children; i++) {
    int64_t r = i / cols, k = i % cols;
    int64_t pads[8] = {0, 0, r * h, k * w, 0, 0, (rows - 1 - r) * h, (cols - 1 - k) * w};
    onnx_val t = onnx_reshape(g, outs[i].s, &as_chw);
    onnx_val p = onnx_op(g, "Pad", NULL, 2, t.s, onnx_const_ints(g, pads, 8).s);
    sum = i == 0 ? p : onnx_op(g, "Add", NULL, 2, sum.s, p.s);
  }
  return sum;
}

static onnx_val combine(onnx_graph *g, loom_layer *l, const char *x, int mode, const onnx_val *outs);

static onnx_val parallel(onnx_graph *g, loom_layer *l, const char *x) {
  int n = l->n_children, mode = (int)loom_layer_get_int(l, "combine");
  onnx_val y = {{0}};
  onnx_val *outs = calloc((size_t)(n > 0 ? n : 1), sizeof *outs);
  if (!outs) return onnx_fail(g, LOOM_ERR_NOMEM, _("out of memory writing the ONNX graph")), y;
  for (int i = 0; i < n; i++) {
    onnx_val b = onnx_layer(g, l->children[i], x);
    outs[i] = onnx_flatten(g, b.s, &l->children[i]->out_shape);
  }
  y = combine(g, l, x, mode, outs);
  free(outs);
  return y;
}

/* The branches' flattened outputs combined as parallel.c's forward does. */
static onnx_val combine(onnx_graph *g, loom_layer *l, const char *x, int mode, const onnx_val *outs) {
  int n = l->n_children;
  onnx_val y = {{0}};
  if (g->rc) return y;
  switch (mode) {
  case COMBINE_CONCAT:
    y = outs[0];
    for (int i = 1; i < n; i++) {
      onnx_attrs a = {0};
      onnx_attr_int(&a, "axis", 1);
      y = onnx_op(g, "Concat", &a, 2, y.s, outs[i].s);
    }
    break;
  case COMBINE_ADD:
  case COMBINE_AVG:
    y = outs[0];
    for (int i = 1; i < n; i++) y = onnx_op(g, "Add", NULL, 2, y.s, outs[i].s);
    if (mode == COMBINE_AVG) y = onnx_op(g, "Div", NULL, 2, y.s, onnx_scalar(g, (float)n).s);
    break;
  case COMBINE_GRID_SCATTER: y = grid_scatter(g, l, outs); break;
  case COMBINE_FILTER: {
    /* Σ_i softmax(gate(x))_i · branch_i */
    onnx_val gate = onnx_flatten(g, onnx_layer(g, l->gate, x).s, &l->gate->out_shape);
    onnx_attrs a = {0};
    onnx_attr_int(&a, "axis", -1);
    onnx_val p = onnx_op(g, "Softmax", &a, 1, gate.s);
    int64_t pshape[3] = {0, n, 1};
    onnx_val p3 = onnx_op(g, "Reshape", NULL, 2, p.s, onnx_const_ints(g, pshape, 3).s);
    onnx_val prod = onnx_op(g, "Mul", NULL, 2, stack(g, outs, n).s, p3.s);
    int64_t axis[1] = {1};
    onnx_attrs r = {0};
    onnx_attr_int(&r, "keepdims", 0);
    y = onnx_op(g, "ReduceSum", &r, 2, prod.s, onnx_const_ints(g, axis, 1).s);
    break;
  }
  case COMBINE_ROUTE: {
    /* Head h mixes the h-th of H equal parts of every branch with the gate's
     * probabilities p[h, i] (taken as they are, no softmax). */
    int64_t numel = loom_shape_numel(&l->out_shape), heads = loom_shape_numel(&l->gate->out_shape) / n;
    onnx_val gate = onnx_layer(g, l->gate, x);
    int64_t pshape[4] = {0, heads, n, 1}; /* [N, H, n, 1] */
    onnx_val p = onnx_op(g, "Reshape", NULL, 2, gate.s, onnx_const_ints(g, pshape, 4).s);
    int64_t bshape[4] = {0, n, heads, numel / heads}; /* [N, n, H, part] */
    onnx_val st = onnx_op(g, "Reshape", NULL, 2, stack(g, outs, n).s, onnx_const_ints(g, bshape, 4).s);
    onnx_attrs t = {0};
    int64_t perm[4] = {0, 2, 1, 3}; /* [N, H, n, part] */
    onnx_attr_ints(&t, "perm", perm, 4);
    onnx_val prod = onnx_op(g, "Mul", NULL, 2, onnx_op(g, "Transpose", &t, 1, st.s).s, p.s);
    int64_t axis[1] = {2};
    onnx_attrs r = {0};
    onnx_attr_int(&r, "keepdims", 0);
    y = onnx_op(g, "ReduceSum", &r, 2, prod.s, onnx_const_ints(g, axis, 1).s);
    break;
  }
  default: {
    char where[128];
    onnx_fail(g, LOOM_ERR_UNSUPPORTED, _("%s cannot be exported to ONNX: its combine mode is unknown"),
              layer_where(l, where, sizeof where));
    return y;
  }
  }
  return onnx_reshape(g, y.s, &l->out_shape);
}

bool onnx_container(onnx_graph *g, loom_layer *l, const char *x, onnx_val *y) {
  if (l->type == &loom_layer_sequential) {
    *y = onnx_reshape(g, chain(g, l, x).s, &l->out_shape);
    return true;
  }
  if (l->type == &loom_layer_residual) {
    *y = onnx_op(g, "Add", NULL, 2, x, chain(g, l, x).s);
    return true;
  }
  if (l->type == &loom_layer_parallel) {
    *y = parallel(g, l, x);
    return true;
  }
  return false;
}
