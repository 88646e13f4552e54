/*
 * hierarchical_softmax: a two-level softmax over G groups of leaves.
 *
 * The parameter group_sizes = [s_0, ..., s_{G-1}] splits L = Σ s_g leaves
 * into consecutive groups. Each row of the input (the last dimension) holds
 * G + L logits: first one logit a_g per group, then the leaf logits b, group
 * by group. The output row holds the L leaf probabilities
 *
 *     y[g, j] = P_g · Q_{g,j},  P = softmax(a),  Q_g = softmax(b_g),
 *
 * the probability of choosing group g and then leaf j inside it; they sum to
 * 1. The exact vector-Jacobian product, with u_g = Σ_j Q_{g,j} dy[g, j]:
 *
 *     da_g     = P_g · (u_g − Σ_h P_h u_h)
 *     db_{g,j} = P_g · Q_{g,j} · (dy[g, j] − u_g)
 *
 * Backward recomputes P and Q from x (y alone loses Q where P_g underflows).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "layers/registry.h"
#include "layers/softmax-rows.h"

#define HSOFTMAX_MAX_ENTRIES 16777216.0 /* 2^24 */

/* Reads and validates group_sizes; *sizes is malloc'd (caller frees). */
static int group_sizes_get(const loom_layer *l, int64_t **sizes, int64_t *n_groups, int64_t *n_leaves,
                           loom_error *err) {
  char where[128];
  int64_t len = 0;
  const float *v = loom_layer_get_floats(l, "group_sizes", &len);
  *sizes = NULL;
  if (!v || len == 0)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("%s: parameter “group_sizes” is empty; expected one leaf count per group, e.g. [4, 4, 2]"),
                          layer_where(l, where, sizeof where));
  if (len > (int64_t)HSOFTMAX_MAX_ENTRIES)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “group_sizes” has %lld groups; at most %lld allowed"),
                          layer_where(l, where, sizeof where), (long long)len, (long long)HSOFTMAX_MAX_ENTRIES);
  int64_t total = 0;
  for (int64_t g = 0; g < len; g++) {
    if (!(v[g] >= 1.0f && v[g] <= HSOFTMAX_MAX_ENTRIES && v[g] == floorf(v[g])))
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("%s: parameter “group_sizes” entry %lld is %g; expected a whole number from 1 to %lld"),
                            layer_where(l, where, sizeof where), (long long)g, (double)v[g],
                            (long long)HSOFTMAX_MAX_ENTRIES);
    total += (int64_t)v[g];
  }
  if (total > (int64_t)HSOFTMAX_MAX_ENTRIES)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("%s: parameter “group_sizes” adds up to %lld leaves; at most %lld allowed"),
                          layer_where(l, where, sizeof where), (long long)total, (long long)HSOFTMAX_MAX_ENTRIES);
  *sizes = malloc((size_t)len * sizeof **sizes);
  if (!*sizes)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for %lld group sizes"),
                          layer_where(l, where, sizeof where), (long long)len);
  for (int64_t g = 0; g < len; g++) (*sizes)[g] = (int64_t)v[g];
  *n_groups = len;
  *n_leaves = total;
  return LOOM_OK;
}

static int hsoftmax_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  int rc = rows_check_shape(l, in, err);
  if (rc) return rc;
  int64_t *sizes, n_groups, n_leaves;
  rc = group_sizes_get(l, &sizes, &n_groups, &n_leaves, err);
  if (rc) return rc;
  free(sizes);
  int64_t last = rows_last_dim(in);
  if (last != n_groups + n_leaves) {
    char where[128], shape[96];
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: input %s has a last dimension of %lld; expected %lld (%lld group logits + %lld leaf "
                            "logits from “group_sizes”)"),
                          layer_where(l, where, sizeof where), loom_shape_format(in, shape, sizeof shape),
                          (long long)last, (long long)(n_groups + n_leaves), (long long)n_groups, (long long)n_leaves);
  }
  l->out_shape = *in;
  l->out_shape.d[in->rank - 1] = n_leaves;
  return LOOM_OK;
}

typedef struct hsoftmax_job {
  const float *x, *dy;
  float *y, *dx;
  const int64_t *sizes;
  int64_t n_groups, n_leaves;
  atomic_int out_of_memory;
} hsoftmax_job;

static void hsoftmax_forward_range(void *arg, int64_t begin, int64_t end) {
  hsoftmax_job *j = arg;
  int64_t in_len = j->n_groups + j->n_leaves;
  double *p = malloc((size_t)j->n_groups * sizeof *p);
  if (!p) {
    atomic_store(&j->out_of_memory, 1);
    return;
  }
  for (int64_t r = begin; r < end; r++) {
    const float *x = j->x + r * in_len;
    float *y = j->y + r * j->n_leaves;
    softmax_row_f64(x, p, j->n_groups, 1.0);
    const float *b = x + j->n_groups;
    for (int64_t g = 0; g < j->n_groups; g++) {
      int64_t s = j->sizes[g];
      /* y = P_g · Q_g in float64, rounded once. */
      double top = -INFINITY, sum = 0.0;
      for (int64_t k = 0; k < s; k++)
        if (b[k] > top) top = b[k];
      for (int64_t k = 0; k < s; k++) sum += exp((double)b[k] - top);
      double scale = p[g] / sum;
      for (int64_t k = 0; k < s; k++) y[k] = (float)(exp((double)b[k] - top) * scale);
      b += s;
      y += s;
    }
  }
  free(p);
}

static void hsoftmax_backward_range(void *arg, int64_t begin, int64_t end) {
  hsoftmax_job *j = arg;
  int64_t in_len = j->n_groups + j->n_leaves;
  int64_t max_size = 1;
  for (int64_t g = 0; g < j->n_groups; g++)
    if (j->sizes[g] > max_size) max_size = j->sizes[g];
  /* p, u (per group) and q (the largest group) in one block. */
  double *p = malloc((size_t)(2 * j->n_groups + max_size) * sizeof *p);
  if (!p) {
    atomic_store(&j->out_of_memory, 1);
    return;
  }
  double *u = p + j->n_groups, *q = u + j->n_groups;
  for (int64_t r = begin; r < end; r++) {
    const float *x = j->x + r * in_len;
    const float *dy = j->dy + r * j->n_leaves;
    float *dx = j->dx + r * in_len;
    softmax_row_f64(x, p, j->n_groups, 1.0);
    const float *b = x + j->n_groups;
    const float *dyg = dy;
    float *db = dx + j->n_groups;
    double pu = 0.0;
    for (int64_t g = 0; g < j->n_groups; g++) {
      int64_t s = j->sizes[g];
      softmax_row_f64(b, q, s, 1.0);
      double ug = 0.0;
      for (int64_t k = 0; k < s; k++) ug += q[k] * dyg[k];
      for (int64_t k = 0; k < s; k++) db[k] = (float)(p[g] * q[k] * ((double)dyg[k] - ug));
      u[g] = ug;
      pu += p[g] * ug;
      b += s;
      dyg += s;
      db += s;
    }
    for (int64_t g = 0; g < j->n_groups; g++) dx[g] = (float)(p[g] * (u[g] - pu));
  }
  free(p);
}

static int hsoftmax_run(loom_layer *l, const loom_ctx *ctx, hsoftmax_job *j, int64_t batch, bool forward,
                        loom_error *err) {
  int64_t *sizes;
  int rc = group_sizes_get(l, &sizes, &j->n_groups, &j->n_leaves, err);
  if (rc) return rc;
  char where[128];
  if (j->n_groups + j->n_leaves != rows_last_dim(&l->in_shape)) {
    free(sizes);
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: parameter “group_sizes” changed since the layer was built; build it again"),
                          layer_where(l, where, sizeof where));
  }
  j->sizes = sizes;
  atomic_init(&j->out_of_memory, 0);
  int64_t rows = batch * rows_per_sample(&l->in_shape);
  int64_t in_len = j->n_groups + j->n_leaves;
  if (forward) {
    rc = rows_check_finite(l, j->x, batch, rows_per_sample(&l->in_shape), in_len, NULL, 0, err);
    if (!rc) rows_parallel(ctx, rows, rows_grain(in_len), hsoftmax_forward_range, j);
  } else {
    rows_parallel(ctx, rows, rows_grain(in_len), hsoftmax_backward_range, j);
  }
  free(sizes);
  if (!rc && atomic_load(&j->out_of_memory))
    rc = loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for a row buffer of %lld groups"),
                        layer_where(l, where, sizeof where), (long long)j->n_groups);
  return rc;
}

static int hsoftmax_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                            loom_error *err) {
  hsoftmax_job j = {.x = x, .y = y};
  return hsoftmax_run(l, ctx, &j, batch, true, err);
}

static int hsoftmax_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                             float *dx, int64_t batch, loom_error *err) {
  if (!dx) return LOOM_OK;
  hsoftmax_job j = {.x = x, .dy = dy, .dx = dx};
  return hsoftmax_run(l, ctx, &j, batch, false, err);
}

/* Proposes G groups of equal size s with G·(1 + s) = last dimension, G as
 * close to √last as possible (a balanced tree); a prime length becomes one
 * group of all leaves. */
static int hsoftmax_adapt(loom_layer *l, const loom_shape *in, loom_error *err) {
  int rc = rows_check_shape(l, in, err);
  if (rc) return rc;
  int64_t n = rows_last_dim(in);
  char where[128];
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
  rc = loom_layer_set_floats(l, "group_sizes", sizes, groups, err);
  free(sizes);
  return rc;
}

static int64_t hsoftmax_flops(const loom_layer *l) {
  /* Softmax over every input entry, then one multiply per leaf. */
  int64_t rows = rows_per_sample(&l->in_shape);
  return rows * (5 * rows_last_dim(&l->in_shape) + rows_last_dim(&l->out_shape));
}

static char *hsoftmax_describe(const loom_layer *l, char *buf, size_t size) {
  int64_t len = 0, total = 0;
  const float *v = loom_layer_get_floats(l, "group_sizes", &len);
  for (int64_t g = 0; v && g < len; g++) total += (int64_t)v[g];
  snprintf(buf, size, "hierarchical_softmax %lld groups, %lld leaves", (long long)len, (long long)total);
  return buf;
}

static const loom_param_spec hsoftmax_params[] = {
  {.name = "group_sizes", .label = N_("Group sizes"),
   .tooltip = N_("Leaves per group; each input row holds one logit per group followed by the leaf logits"),
   .kind = LOOM_PARAM_FLOATS, .min = 1, .max = HSOFTMAX_MAX_ENTRIES},
};

const loom_layer_type loom_layer_hierarchical_softmax = {
  .id = 94,
  .name = "hierarchical_softmax",
  .label = N_("Hierarchical softmax"),
  .group = N_("Softmax"),
  .description = N_("Two-level softmax: the probability of a leaf is the softmax over groups times the softmax "
                    "within its group."),
  .params = hsoftmax_params,
  .n_params = 1,
  .build = hsoftmax_build,
  .forward = hsoftmax_forward,
  .backward = hsoftmax_backward,
  .adapt = hsoftmax_adapt,
  .flops = hsoftmax_flops,
  .describe = hsoftmax_describe,
};
