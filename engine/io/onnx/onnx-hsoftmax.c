/*
 * ONNX form of hierarchical_softmax (hierarchical-softmax.c): one Softmax per
 * inner node, breadth first. Block 0 holds the root's children, block k ≥ 1
 * the children of the node whose logit is k − 1; blocks lie consecutively in
 * the row. A block's path probabilities are its softmax times its parent's
 * path probability, and the output is the last level's blocks (the leaves,
 * which end the row) concatenated. The tree is read from the same parameters
 * the layer reads (group_sizes or levels); the layer was built, so they are
 * valid. The graph grows with the number of inner nodes, which is capped.
 */
#include <stdio.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "io/onnx/onnx-graph.h"

#define MAX_BLOCKS 4096

/* Children per inner node, breadth first, into blocks (at most MAX_BLOCKS);
 * returns the count or -1 when there are more. */
static int64_t tree_blocks(const loom_layer *l, int64_t *blocks) {
  int64_t n_groups = 0, n_levels = 0, k = 0, width = 1;
  const float *groups = loom_layer_get_floats(l, "group_sizes", &n_groups);
  const float *levels = loom_layer_get_floats(l, "levels", &n_levels);
  if (groups && n_groups > 0) {
    if (n_groups + 1 > MAX_BLOCKS) return -1;
    blocks[k++] = n_groups;
    for (int64_t g = 0; g < n_groups; g++) blocks[k++] = (int64_t)groups[g];
    return k;
  }
  for (int64_t d = 0; levels && d < n_levels; d++) {
    if (k + width > MAX_BLOCKS) return -1;
    for (int64_t i = 0; i < width; i++) blocks[k++] = (int64_t)levels[d];
    width *= (int64_t)levels[d];
  }
  return k;
}

static onnx_val slice_last(onnx_graph *g, const char *x, int64_t begin, int64_t end) {
  int64_t axes[1] = {-1};
  return onnx_op(g, "Slice", NULL, 4, x, onnx_const_ints(g, &begin, 1).s, onnx_const_ints(g, &end, 1).s,
                 onnx_const_ints(g, axes, 1).s);
}

onnx_val onnx_hsoftmax(onnx_graph *g, loom_layer *l, const char *x) {
  onnx_val y = {{0}};
  char where[128];
  int64_t *blocks = malloc(MAX_BLOCKS * 2 * sizeof *blocks);
  onnx_val *probs = malloc(MAX_BLOCKS * sizeof *probs);
  if (!blocks || !probs) {
    free(blocks);
    free(probs);
    return onnx_fail(g, LOOM_ERR_NOMEM, _("out of memory writing the ONNX graph")), y;
  }
  int64_t *start = blocks + MAX_BLOCKS, n = tree_blocks(l, blocks);
  if (n < 1) {
    onnx_fail(g, LOOM_ERR_UNSUPPORTED,
              _("%s cannot be exported to ONNX: its tree has more than %d inner nodes, one softmax each"),
              layer_where(l, where, sizeof where), MAX_BLOCKS);
    goto done;
  }
  int64_t logits = 0;
  for (int64_t k = 0; k < n; k++) {
    start[k] = logits;
    logits += blocks[k];
  }
  loom_shape rows = loom_shape_1d(logits);
  onnx_val r = onnx_reshape(g, x, &rows);
  onnx_attrs sa = {0};
  for (int64_t k = 0, parent_block = 0; k < n; k++) {
    onnx_attr_int(&sa, "axis", -1);
    onnx_val q = onnx_op(g, "Softmax", &sa, 1, slice_last(g, r.s, start[k], start[k] + blocks[k]).s);
    if (k == 0) {
      probs[k] = q;
      continue;
    }
    /* The parent is the node with logit k − 1, inside an earlier block. */
    while (start[parent_block] + blocks[parent_block] <= k - 1) parent_block++;
    int64_t at = k - 1 - start[parent_block];
    probs[k] = onnx_op(g, "Mul", NULL, 2, q.s, slice_last(g, probs[parent_block].s, at, at + 1).s);
  }
  /* The leaves end the row: the blocks after the last inner node's logit. */
  int64_t first_leaf_block = n;
  while (first_leaf_block > 0 && start[first_leaf_block - 1] >= n - 1) first_leaf_block--;
  y = probs[first_leaf_block];
  for (int64_t k = first_leaf_block + 1; k < n; k++) {
    onnx_attrs ca = {0};
    onnx_attr_int(&ca, "axis", -1);
    y = onnx_op(g, "Concat", &ca, 2, y.s, probs[k].s);
  }
  y = onnx_reshape(g, y.s, &l->out_shape);
done:
  free(blocks);
  free(probs);
  return y;
}
