/*
 * hierarchical_softmax: a softmax tree of any depth.
 *
 * The tree is given by one of two parameters (the other stays empty):
 *  - levels = [b_0, ..., b_{D-1}]: D levels, every node of level d has b_d
 *    children; L = Π b_d leaves.
 *  - group_sizes = [s_0, ..., s_{G-1}]: two levels, the root has G children
 *    (groups) and group g has s_g leaves (groups may differ in size).
 *
 * Every node but the root has one logit. A row of the input holds them level
 * by level (breadth first): the root's children, then the children of the
 * first of those, of the second, ..., and last the leaves. Each inner node n
 * has its own softmax over its children's logits, q_c = softmax(z_children)_c,
 * and a node's path probability is the product of the q along its path,
 *
 *     P_c = P_parent(c) · q_c,   P_root = 1,
 *
 * so the output row, the L leaf probabilities P_leaf, sums to 1.
 *
 * The exact vector-Jacobian product, with U the expected upstream gradient
 * under a node (U_leaf = dy_leaf, U_n = Σ_{c child of n} q_c U_c):
 *
 *     dz_c = P_c · (U_c − U_parent(c))
 *
 * For two levels this is the group/leaf formula of docs/layers.md.
 *
 * Internally both parameters become the same list of "blocks", one per inner
 * node in breadth-first order: block 0 holds the root's children, block k ≥ 1
 * the children of the node with logit k − 1. Blocks lie consecutively in the
 * row, and every node's logit comes before its own block, so one pass forward
 * gives every P and one pass backward every U. Backward recomputes the q from
 * x (y alone loses them where a P underflows).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "layers/registry.h"
#include "layers/softmax-rows.h"

#define HSOFTMAX_MAX_ENTRIES 16777216.0 /* 2^24 logits per row */

enum { P_GROUP_SIZES, P_LEVELS };

typedef struct hs_tree {
  int64_t *blocks; /* children per inner node, breadth first (malloc'd) */
  int64_t n_blocks, n_logits, n_leaves;
} hs_tree;

static void hs_tree_clear(hs_tree *t) {
  free(t->blocks);
  t->blocks = NULL;
}

static int read_counts(const loom_layer *l, const char *name, const float *v, int64_t len, loom_error *err) {
  char where[128];
  for (int64_t i = 0; i < len; i++)
    if (!(v[i] >= 1.0f && v[i] <= HSOFTMAX_MAX_ENTRIES && v[i] == floorf(v[i])))
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("%s: parameter “%s” entry %lld is %g; expected a whole number from 1 to %lld"),
                            layer_where(l, where, sizeof where), name, (long long)i, (double)v[i],
                            (long long)HSOFTMAX_MAX_ENTRIES);
  return LOOM_OK;
}

static int tree_alloc(const loom_layer *l, hs_tree *t, int64_t n_blocks, loom_error *err) {
  char where[128];
  t->blocks = malloc((size_t)n_blocks * sizeof *t->blocks);
  if (!t->blocks)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for a tree of %lld inner nodes"),
                          layer_where(l, where, sizeof where), (long long)n_blocks);
  t->n_blocks = n_blocks;
  return LOOM_OK;
}

static int too_many_logits(const loom_layer *l, const char *name, loom_error *err) {
  char where[128];
  return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “%s” makes a tree of more than %lld nodes"),
                        layer_where(l, where, sizeof where), name, (long long)HSOFTMAX_MAX_ENTRIES);
}

/* Reads group_sizes or levels (exactly one set) into t; t->blocks is malloc'd. */
static int tree_get(const loom_layer *l, hs_tree *t, loom_error *err) {
  char where[128];
  int64_t n_groups = 0, n_levels = 0;
  const float *groups = loom_layer_get_floats(l, "group_sizes", &n_groups);
  const float *levels = loom_layer_get_floats(l, "levels", &n_levels);
  t->blocks = NULL;
  if (!groups) n_groups = 0;
  if (!levels) n_levels = 0;
  if (n_groups == 0 && n_levels == 0)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("%s: parameters “group_sizes” and “levels” are both empty; expected leaves per group "
                            "(two levels, e.g. [4, 4, 2]) or children per node for each level (e.g. [2, 3, 4])"),
                          layer_where(l, where, sizeof where));
  if (n_groups > 0 && n_levels > 0)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("%s: parameters “group_sizes” (%lld entries) and “levels” (%lld entries) are both set; "
                            "expected one of them, the other empty"),
                          layer_where(l, where, sizeof where), (long long)n_groups, (long long)n_levels);
  if (n_groups > 0) {
    int rc = read_counts(l, "group_sizes", groups, n_groups, err);
    if (rc) return rc;
    if (n_groups >= (int64_t)HSOFTMAX_MAX_ENTRIES) return too_many_logits(l, "group_sizes", err);
    int64_t leaves = 0;
    for (int64_t g = 0; g < n_groups; g++) {
      leaves += (int64_t)groups[g];
      if (leaves + n_groups > (int64_t)HSOFTMAX_MAX_ENTRIES) return too_many_logits(l, "group_sizes", err);
    }
    if ((rc = tree_alloc(l, t, 1 + n_groups, err))) return rc;
    t->blocks[0] = n_groups;
    for (int64_t g = 0; g < n_groups; g++) t->blocks[1 + g] = (int64_t)groups[g];
    t->n_leaves = leaves;
    t->n_logits = n_groups + leaves;
    return LOOM_OK;
  }
  int rc = read_counts(l, "levels", levels, n_levels, err);
  if (rc) return rc;
  /* Nodes per level: width_{d+1} = width_d · b_d; the inner nodes are the
   * nodes of levels 0 … D−1 (the root's level has width 1). */
  int64_t width = 1, inner = 0, logits = 0;
  for (int64_t d = 0; d < n_levels; d++) {
    inner += width;
    width *= (int64_t)levels[d]; /* both ≤ 2^24 before the check: no overflow */
    logits += width;
    if (width > (int64_t)HSOFTMAX_MAX_ENTRIES || logits > (int64_t)HSOFTMAX_MAX_ENTRIES)
      return too_many_logits(l, "levels", err);
  }
  if ((rc = tree_alloc(l, t, inner, err))) return rc;
  int64_t k = 0;
  width = 1;
  for (int64_t d = 0; d < n_levels; d++) {
    for (int64_t i = 0; i < width; i++) t->blocks[k++] = (int64_t)levels[d];
    width *= (int64_t)levels[d];
  }
  t->n_leaves = width;
  t->n_logits = logits;
  return LOOM_OK;
}

int hsoftmax_tree(const loom_layer *l, int64_t **blocks, int64_t *n_blocks, int64_t *n_logits, int64_t *n_leaves,
                  loom_error *err) {
  hs_tree t;
  int rc = tree_get(l, &t, err);
  if (rc) return rc;
  if (!l->built || t.n_logits != rows_last_dim(&l->in_shape) || t.n_leaves != rows_last_dim(&l->out_shape)) {
    char where[128];
    hs_tree_clear(&t);
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: parameter “group_sizes” or “levels” changed since the layer was built; build it "
                            "again"),
                          layer_where(l, where, sizeof where));
  }
  *blocks = t.blocks;
  *n_blocks = t.n_blocks;
  *n_logits = t.n_logits;
  *n_leaves = t.n_leaves;
  return LOOM_OK;
}

static int hsoftmax_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  (void)seed;
  int rc = rows_check_shape(l, in, err);
  if (rc) return rc;
  hs_tree t;
  if ((rc = tree_get(l, &t, err))) return rc;
  hs_tree_clear(&t);
  int64_t last = rows_last_dim(in);
  if (last != t.n_logits) {
    char where[128], shape[96];
    bool groups = l->n_floats[P_GROUP_SIZES] > 0;
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: input %s has a last dimension of %lld; expected %lld (%lld %s + %lld leaf logits "
                            "from “%s”)"),
                          layer_where(l, where, sizeof where), loom_shape_format(in, shape, sizeof shape),
                          (long long)last, (long long)t.n_logits, (long long)(t.n_logits - t.n_leaves),
                          groups ? _("group logits") : _("inner-node logits"), (long long)t.n_leaves,
                          groups ? "group_sizes" : "levels");
  }
  l->out_shape = *in;
  l->out_shape.d[in->rank - 1] = t.n_leaves;
  return LOOM_OK;
}

typedef struct hsoftmax_job {
  const float *x, *dy;
  float *y, *dx;
  hs_tree tree;
  atomic_int out_of_memory;
} hsoftmax_job;

/* q: the per-block softmaxes of row x, turned in place into path
 * probabilities P (node k − 1's P is final before block k is reached). */
static void path_probabilities(const hs_tree *t, const float *x, double *q) {
  int64_t start = 0;
  for (int64_t k = 0; k < t->n_blocks; k++) {
    softmax_row_f64(x + start, q + start, t->blocks[k], 1.0);
    start += t->blocks[k];
  }
  start = t->blocks[0];
  for (int64_t k = 1; k < t->n_blocks; k++) {
    double parent = q[k - 1];
    for (int64_t c = start; c < start + t->blocks[k]; c++) q[c] *= parent;
    start += t->blocks[k];
  }
}

static void hsoftmax_forward_range(void *arg, int64_t begin, int64_t end) {
  hsoftmax_job *j = arg;
  const hs_tree *t = &j->tree;
  double *p = malloc((size_t)t->n_logits * sizeof *p);
  if (!p) {
    atomic_store(&j->out_of_memory, 1);
    return;
  }
  int64_t first_leaf = t->n_logits - t->n_leaves;
  for (int64_t r = begin; r < end; r++) {
    path_probabilities(t, j->x + r * t->n_logits, p);
    float *y = j->y + r * t->n_leaves;
    for (int64_t i = 0; i < t->n_leaves; i++) y[i] = (float)p[first_leaf + i];
  }
  free(p);
}

static void hsoftmax_backward_range(void *arg, int64_t begin, int64_t end) {
  hsoftmax_job *j = arg;
  const hs_tree *t = &j->tree;
  int64_t n = t->n_logits, first_leaf = n - t->n_leaves;
  /* q (conditional), P (path) and U (expected upstream gradient) per node. */
  double *q = malloc((size_t)(3 * n) * sizeof *q);
  if (!q) {
    atomic_store(&j->out_of_memory, 1);
    return;
  }
  double *p = q + n, *u = p + n;
  for (int64_t r = begin; r < end; r++) {
    const float *x = j->x + r * n;
    const float *dy = j->dy + r * t->n_leaves;
    float *dx = j->dx + r * n;
    int64_t start = 0;
    for (int64_t k = 0; k < t->n_blocks; k++) {
      softmax_row_f64(x + start, q + start, t->blocks[k], 1.0);
      start += t->blocks[k];
    }
    for (int64_t c = 0; c < t->blocks[0]; c++) p[c] = q[c];
    start = t->blocks[0];
    for (int64_t k = 1; k < t->n_blocks; k++) {
      for (int64_t c = start; c < start + t->blocks[k]; c++) p[c] = p[k - 1] * q[c];
      start += t->blocks[k];
    }
    for (int64_t i = 0; i < t->n_leaves; i++) u[first_leaf + i] = dy[i];
    /* Bottom up: block k's children are all final when node k − 1 is summed. */
    double u_root = 0.0;
    int64_t end_k = n;
    for (int64_t k = t->n_blocks - 1; k >= 0; k--) {
      int64_t begin_k = end_k - t->blocks[k];
      double s = 0.0;
      for (int64_t c = begin_k; c < end_k; c++) s += q[c] * u[c];
      if (k > 0) u[k - 1] = s;
      else u_root = s;
      end_k = begin_k;
    }
    start = 0;
    for (int64_t k = 0; k < t->n_blocks; k++) {
      double u_parent = k > 0 ? u[k - 1] : u_root;
      for (int64_t c = start; c < start + t->blocks[k]; c++) dx[c] = (float)(p[c] * (u[c] - u_parent));
      start += t->blocks[k];
    }
  }
  free(q);
}

static int hsoftmax_run(loom_layer *l, const loom_ctx *ctx, hsoftmax_job *j, int64_t batch, bool forward,
                        loom_error *err) {
  int rc = tree_get(l, &j->tree, err);
  if (rc) return rc;
  char where[128];
  if (j->tree.n_logits != rows_last_dim(&l->in_shape)) {
    hs_tree_clear(&j->tree);
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: parameter “group_sizes” or “levels” changed since the layer was built; build it "
                            "again"),
                          layer_where(l, where, sizeof where));
  }
  atomic_init(&j->out_of_memory, 0);
  int64_t rows = batch * rows_per_sample(&l->in_shape);
  int64_t in_len = j->tree.n_logits;
  if (forward) {
    rc = rows_check_finite(l, j->x, batch, rows_per_sample(&l->in_shape), in_len, NULL, 0, err);
    if (!rc) rows_parallel(ctx, rows, rows_grain(in_len), hsoftmax_forward_range, j);
  } else {
    rows_parallel(ctx, rows, rows_grain(in_len), hsoftmax_backward_range, j);
  }
  hs_tree_clear(&j->tree);
  if (!rc && atomic_load(&j->out_of_memory))
    rc = loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for a row buffer of %lld logits"),
                        layer_where(l, where, sizeof where), (long long)in_len);
  return rc;
}

static int hsoftmax_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                            loom_error *err) {
  hsoftmax_job j = {.x = x, .y = y};
  return hsoftmax_run(l, ctx, &j, batch, true, err);
}

static int hsoftmax_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                             float *dx, int64_t batch, loom_error *err) {
  (void)y;
  if (!dx) return LOOM_OK;
  hsoftmax_job j = {.x = x, .dy = dy, .dx = dx};
  return hsoftmax_run(l, ctx, &j, batch, false, err);
}

/* Keeps `levels` when its tree fits the input; otherwise proposes G groups of
 * equal size s with G·(1 + s) = last dimension, G as close to √last as
 * possible (a balanced two-level tree); a prime length becomes one group of
 * all leaves. */
static int hsoftmax_adapt(loom_layer *l, const loom_shape *in, loom_error *err) {
  int rc = rows_check_shape(l, in, err);
  if (rc) return rc;
  int64_t n = rows_last_dim(in);
  char where[128];
  if (l->n_floats[P_LEVELS] > 0 && l->n_floats[P_GROUP_SIZES] == 0) {
    hs_tree t;
    loom_error ignored = {0};
    if (tree_get(l, &t, &ignored) == LOOM_OK) {
      bool fits = t.n_logits == n;
      hs_tree_clear(&t);
      if (fits) return LOOM_OK;
    }
  }
  if (n < 2 || n > (int64_t)HSOFTMAX_MAX_ENTRIES)
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: a last dimension of %lld cannot hold group and leaf logits; expected 2 to %lld"),
                          layer_where(l, where, sizeof where), (long long)n, (long long)HSOFTMAX_MAX_ENTRIES);
  int64_t best = 1;
  for (int64_t g = 1; g * g <= n; g++)
    if (n % g == 0 && n / g >= 2) best = g;
  int64_t groups = best, size = n / best - 1;
  float *sizes = malloc((size_t)groups * sizeof *sizes);
  if (!sizes)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for %lld group sizes"),
                          layer_where(l, where, sizeof where), (long long)groups);
  for (int64_t g = 0; g < groups; g++) sizes[g] = (float)size;
  rc = loom_layer_set_floats(l, "levels", NULL, 0, err);
  if (!rc) rc = loom_layer_set_floats(l, "group_sizes", sizes, groups, err);
  free(sizes);
  return rc;
}

static int64_t hsoftmax_flops(const loom_layer *l) {
  /* A softmax over every block, then one multiply per node below the root's
   * children (its path probability). */
  hs_tree t;
  loom_error ignored = {0};
  int64_t rows = rows_per_sample(&l->in_shape), n = rows_last_dim(&l->in_shape);
  if (tree_get(l, &t, &ignored) != LOOM_OK) return rows * 5 * n;
  int64_t multiplies = t.n_logits - t.blocks[0];
  hs_tree_clear(&t);
  return rows * (5 * n + multiplies);
}

/* "%lld leaves" in the user's language; counts past 10⁶ choose their plural
 * form from the last six digits, as the gettext manual recommends. */
static const char *leaves_text(double leaves, char *out, size_t size) {
  unsigned long n = leaves < 1e6 ? (unsigned long)leaves : (unsigned long)fmod(leaves, 1e6) + 1000000ul;
  /* TRANSLATORS: part of a layer summary such as "hierarchical_softmax 2 groups, 24 leaves";
     leaves are the classes at the bottom of the tree. */
  snprintf(out, size, dngettext(GETTEXT_PACKAGE, "%.0f leaf", "%.0f leaves", n), leaves);
  return out;
}

static char *hsoftmax_describe(const loom_layer *l, char *buf, size_t size) {
  int64_t n_groups = 0, n_levels = 0;
  const float *groups = loom_layer_get_floats(l, "group_sizes", &n_groups);
  const float *levels = loom_layer_get_floats(l, "levels", &n_levels);
  char leaves_buf[64], part[256];
  if (groups && n_groups > 0) {
    int64_t total = 0;
    for (int64_t g = 0; g < n_groups; g++) total += (int64_t)groups[g];
    /* TRANSLATORS: part of a layer summary such as "hierarchical_softmax 2 groups, 24 leaves". */
    snprintf(part, sizeof part, dngettext(GETTEXT_PACKAGE, "%lld group", "%lld groups", (unsigned long)n_groups),
             (long long)n_groups);
    snprintf(buf, size, "hierarchical_softmax %s, %s", part, leaves_text((double)total, leaves_buf, sizeof leaves_buf));
    return buf;
  }
  if (!levels || n_levels == 0) {
    /* TRANSLATORS: layer summary of a hierarchical softmax whose tree is not set yet;
       "hierarchical_softmax" is the layer type name. */
    snprintf(buf, size, "%s", _("hierarchical_softmax (no tree)"));
    return buf;
  }
  /* "hierarchical_softmax levels 2×3×4, 24 leaves" */
  char sizes[192] = "";
  size_t at = 0;
  double leaves = 1.0;
  for (int64_t d = 0; d < n_levels && at < sizeof sizes; d++) {
    at += (size_t)snprintf(sizes + at, sizeof sizes - at, d ? "×%g" : "%g", (double)levels[d]);
    leaves *= levels[d];
  }
  /* TRANSLATORS: part of a layer summary such as "hierarchical_softmax levels 2×3×4, 24 leaves";
     %s gives the branching factor of each level of the tree. */
  snprintf(part, sizeof part, _("levels %s"), sizes);
  snprintf(buf, size, "hierarchical_softmax %s, %s", part, leaves_text(leaves, leaves_buf, sizeof leaves_buf));
  return buf;
}

static const loom_param_spec hsoftmax_params[] = {
  [P_GROUP_SIZES] = {.name = "group_sizes", .label = N_("Group sizes"),
                     .tooltip = N_("Two levels: leaves per group; each input row holds one logit per group followed "
                                   "by the leaf logits. Leave empty when “levels” is set"),
                     .kind = LOOM_PARAM_FLOATS, .min = 1, .max = HSOFTMAX_MAX_ENTRIES},
  [P_LEVELS] = {.name = "levels", .label = N_("Levels"),
                .tooltip = N_("Children per node for each level, root first (e.g. 2, 3, 4: 24 leaves); each input "
                              "row holds one logit per node, level by level. Leave empty when “group_sizes” is set"),
                .kind = LOOM_PARAM_FLOATS, .min = 1, .max = HSOFTMAX_MAX_ENTRIES},
};

const loom_layer_type loom_layer_hierarchical_softmax = {
  .id = 94,
  .name = "hierarchical_softmax",
  .label = N_("Hierarchical softmax"),
  .group = N_("Softmax"),
  .flags = LOOM_LAYER_OUTPUTS_PROBABILITIES,
  .description = N_("Softmax tree: the probability of a leaf is the product of the softmax probabilities of the "
                    "nodes on its path from the root."),
  .params = hsoftmax_params,
  .n_params = 2,
  .build = hsoftmax_build,
  .forward = hsoftmax_forward,
  .backward = hsoftmax_backward,
  .adapt = hsoftmax_adapt,
  .flops = hsoftmax_flops,
  .describe = hsoftmax_describe,
};
