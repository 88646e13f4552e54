/*
 * `parallel`: every branch (child) runs on the same input and the outputs are
 * combined (docs/network.md gives the exact layouts):
 *   concat        along the first dimension of the per-sample shape
 *   add, avg      element-wise sum (avg divides it by the branch count)
 *   grid_scatter  branch i becomes tile (i / grid_cols, i % grid_cols) of a
 *                 [C, grid_rows·H, grid_cols·W] output (empty tiles are 0)
 *   filter        mixture of experts: softmax(gate(x)) weights the branches;
 *                 the gate is a layer of its own and is trained with them.
 *   route         mixture of experts whose gate ends in a probability layer
 *                 (e.g. dense → grid_softmax): its output, H heads × n
 *                 branches, is used as the weights directly, head h mixing
 *                 the h-th of H equal parts of every branch output.
 * "route" is a combine mode of its own rather than a reading of "filter"
 * gates that end in a softmax: files written before it existed keep their
 * meaning (a filter gate's output is always passed through a softmax).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "layers/containers.h"
#include "layers/registry.h"

typedef enum { COMBINE_CONCAT, COMBINE_ADD, COMBINE_AVG, COMBINE_GRID_SCATTER, COMBINE_FILTER, COMBINE_ROUTE } combine_mode;
enum { P_COMBINE, P_GRID_ROWS, P_GRID_COLS };

static const char *const combine_choices[] = {"concat", "add", "avg", "grid_scatter", "filter", "route", NULL};

static const loom_param_spec parallel_params[] = {
  {"combine", N_("Combine"),
   N_("How the branches' outputs become one: concat, add, avg, grid_scatter, filter (softmax of the gate's logits) "
      "or route (the gate's own probabilities, one row per routing head)"),
   LOOM_PARAM_ENUM, 0, 5, 0, combine_choices, 0},
  {"grid_rows", N_("Grid rows"), N_("grid_scatter: rows of the output grid of branches"), LOOM_PARAM_INT, 1, 4096, 1,
   NULL, 0},
  {"grid_cols", N_("Grid columns"), N_("grid_scatter: columns of the output grid of branches"), LOOM_PARAM_INT, 1,
   4096, 1, NULL, 0},
};

typedef struct {
  int n;
  int64_t batch;
  float **outs; /* branch outputs */
  int64_t *outs_cap;
  float *gate_out, *probs, *branch_dy, *branch_dx, *dlogits;
  int64_t gate_out_cap, probs_cap, branch_dy_cap, branch_dx_cap, dlogits_cap;
} par_state;

static void par_free(loom_layer *l) {
  par_state *s = l->state;
  if (!s) return;
  for (int i = 0; i < s->n; i++) free(s->outs[i]);
  free(s->outs);
  free(s->outs_cap);
  free(s->gate_out);
  free(s->probs);
  free(s->branch_dy);
  free(s->branch_dx);
  free(s->dlogits);
  free(s);
  l->state = NULL;
}

static par_state *par_get(loom_layer *l, loom_error *err) {
  par_state *s = l->state;
  if (s && s->n == l->n_children) return s;
  par_free(l);
  s = calloc(1, sizeof *s);
  if (s) {
    s->outs = calloc((size_t)(l->n_children > 0 ? l->n_children : 1), sizeof *s->outs);
    s->outs_cap = calloc((size_t)(l->n_children > 0 ? l->n_children : 1), sizeof *s->outs_cap);
  }
  if (!s || !s->outs || !s->outs_cap) {
    if (s) {
      free(s->outs);
      free(s->outs_cap);
      free(s);
    }
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory running a %s layer"), l->type->name);
    return NULL;
  }
  s->n = l->n_children;
  l->state = s;
  return s;
}

static bool uses_gate(combine_mode mode) { return mode == COMBINE_FILTER || mode == COMBINE_ROUTE; }

/* route: the layer whose output is the gate's output (through nested
 * sequentials), and whether it produces rows of probabilities. */
static const loom_layer *gate_last_layer(const loom_layer *g) {
  while (g->type == &loom_layer_sequential && g->n_children > 0) g = g->children[g->n_children - 1];
  return g;
}

static bool gives_probabilities(const loom_layer_type *t) {
  static const loom_layer_type *const types[] = {
    &loom_layer_softmax,  &loom_layer_softmax_temperature, &loom_layer_grid_softmax, &loom_layer_masked_softmax,
    &loom_layer_sparsemax, &loom_layer_entmax15,           &loom_layer_gumbel_softmax, &loom_layer_hierarchical_softmax};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (t == types[i]) return true;
  return false;
}

/* Routing heads of a built route layer: the gate gives heads × n probabilities. */
static int64_t route_heads(const loom_layer *l) {
  return loom_shape_numel(&l->gate->out_shape) / l->n_children;
}

/* After the gate is built: it must end in a probability layer whose rows
 * have one entry per branch, and its heads must split the branch output. */
static int route_check(const loom_layer *l, const char *where, loom_error *err) {
  char a[96];
  int n = l->n_children;
  const loom_layer *last = gate_last_layer(l->gate);
  if (!gives_probabilities(last->type))
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("%s: combine “route” uses the gate's output as probabilities, so the gate must end in a "
                            "softmax-family layer (e.g. dense → grid_softmax), not in %s"),
                          where, last->type->name);
  int64_t row = last->type == &loom_layer_grid_softmax ? layer_int(last, 1)
                                                        : last->out_shape.d[last->out_shape.rank - 1];
  if (row != n)
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: the gate's %s gives rows of %lld probabilities, expected %d (one per branch)"), where,
                          last->type->name, (long long)row, n);
  int64_t g = loom_shape_numel(&l->gate->out_shape);
  if (g % n != 0)
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: the gate gives %lld values per sample, expected a multiple of %d (routing heads × "
                            "branches)"),
                          where, (long long)g, n);
  int64_t heads = g / n, m = loom_shape_numel(&l->children[0]->out_shape);
  if (m % heads != 0)
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: the gate has %lld routing heads but the branches give %s (%lld values), which do "
                            "not split into %lld equal parts"),
                          where, (long long)heads, loom_shape_format(&l->children[0]->out_shape, a, sizeof a),
                          (long long)m, (long long)heads);
  return LOOM_OK;
}

/* A branch output [C], [C, L] or [C, H, W] seen as C × H × W. */
static void as_chw(const loom_shape *s, int64_t *c, int64_t *h, int64_t *w) {
  *c = s->d[0];
  *h = s->rank == 3 ? s->d[1] : 1;
  *w = s->rank == 1 ? 1 : s->d[s->rank - 1];
}

static int parallel_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  char where[128], a[96], b[96];
  combine_mode mode = (combine_mode)layer_int(l, P_COMBINE);
  int n = l->n_children;
  layer_where(l, where, sizeof where);
  if (n == 0) return loom_error_set(err, LOOM_ERR_INVALID, _("%s has no branches; add at least one"), where);
  if (!uses_gate(mode) && l->gate)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("%s has a gate, which only combine “filter” and “route” use (combine is “%s”)"), where,
                          combine_choices[mode]);
  if (mode == COMBINE_FILTER && !l->gate)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: combine “filter” needs a gate layer (input → %d logits)"),
                          where, n);
  if (mode == COMBINE_ROUTE && !l->gate)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("%s: combine “route” needs a gate that ends in a softmax-family layer (input → "
                            "heads × %d probabilities)"),
                          where, n);
  for (int i = 0; i < n; i++) {
    int rc = loom_layer_build(l->children[i], in, container_child_seed(seed, i), err);
    if (rc) {
      /* TRANSLATORS: the word before the index of a parallel layer's branch in an error prefix
         such as "layer parallel, branch 2: …". */
      container_child_error(l, _("branch"), i, err);
      return rc;
    }
  }
  const loom_shape *s0 = &l->children[0]->out_shape;
  for (int i = 1; i < n; i++) {
    const loom_shape *si = &l->children[i]->out_shape;
    bool ok;
    if (mode == COMBINE_CONCAT) {
      ok = si->rank == s0->rank;
      for (int k = 1; ok && k < s0->rank; k++) ok = si->d[k] == s0->d[k];
    } else {
      ok = loom_shape_equal(si, s0);
    }
    if (!ok)
      return loom_error_set(err, LOOM_ERR_SHAPE,
                            mode == COMBINE_CONCAT
                              ? _("%s: branch %d gives %s but branch 0 gives %s; concat needs equal shapes apart "
                                  "from the first dimension")
                              : _("%s: branch %d gives %s but branch 0 gives %s; combine “%s” needs equal shapes"),
                            where, i, loom_shape_format(si, a, sizeof a), loom_shape_format(s0, b, sizeof b),
                            combine_choices[mode]);
  }
  l->out_shape = *s0;
  if (uses_gate(mode)) { /* present: checked above; it reads the layer's input */
    int rc = loom_layer_build(l->gate, in, container_child_seed(seed, -1), err);
    if (rc) {
      container_child_error(l, NULL, -1, err);
      return rc;
    }
  }
  switch (mode) {
  case COMBINE_CONCAT:
    for (int i = 1; i < n; i++) l->out_shape.d[0] += l->children[i]->out_shape.d[0];
    break;
  case COMBINE_GRID_SCATTER: {
    int64_t rows = layer_int(l, P_GRID_ROWS), cols = layer_int(l, P_GRID_COLS), c, h, w;
    if (n > rows * cols)
      return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: %d branches do not fit a %lld×%lld grid"), where, n,
                            (long long)rows, (long long)cols);
    if (s0->rank > 3)
      return loom_error_set(err, LOOM_ERR_SHAPE,
                            _("%s: grid_scatter places outputs of rank 1 to 3, but the branches give %s"), where,
                            loom_shape_format(s0, a, sizeof a));
    as_chw(s0, &c, &h, &w);
    int64_t dims[3] = {c, rows * h, cols * w};
    l->out_shape = loom_shape_make(3, dims);
    break;
  }
  case COMBINE_FILTER: {
    int64_t g = loom_shape_numel(&l->gate->out_shape);
    if (g != n)
      return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: the gate gives %lld values per sample, expected %d (one per branch)"),
                            where, (long long)g, n);
    break;
  }
  case COMBINE_ROUTE: return route_check(l, where, err);
  default: break;
  }
  return LOOM_OK;
}

/* grid_scatter: row h of channel ch of branch i is row (r·H + h) of channel
 * ch of the output, starting at column c·W, where (r, c) = (i / cols, i % cols). */
static int64_t tile_offset(const loom_layer *l, int i, int64_t ch, int64_t hh) {
  int64_t c, h, w;
  as_chw(&l->children[i]->out_shape, &c, &h, &w);
  int64_t rows = layer_int(l, P_GRID_ROWS), cols = layer_int(l, P_GRID_COLS);
  return (ch * rows * h + (i / cols) * h + hh) * cols * w + (i % cols) * w;
}

static void grid_scatter_sample(const loom_layer *l, int i, const float *branch, float *out) {
  int64_t c, h, w;
  as_chw(&l->children[i]->out_shape, &c, &h, &w);
  for (int64_t ch = 0; ch < c; ch++)
    for (int64_t hh = 0; hh < h; hh++)
      memcpy(out + tile_offset(l, i, ch, hh), branch + (ch * h + hh) * w, (size_t)w * sizeof *out);
}

static void grid_gather_sample(const loom_layer *l, int i, const float *out, float *branch) {
  int64_t c, h, w;
  as_chw(&l->children[i]->out_shape, &c, &h, &w);
  for (int64_t ch = 0; ch < c; ch++)
    for (int64_t hh = 0; hh < h; hh++)
      memcpy(branch + (ch * h + hh) * w, out + tile_offset(l, i, ch, hh), (size_t)w * sizeof *branch);
}

static int parallel_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                            loom_error *err) {
  par_state *s = par_get(l, err);
  if (!s) return err ? err->code : LOOM_ERR_NOMEM;
  combine_mode mode = (combine_mode)layer_int(l, P_COMBINE);
  int n = l->n_children;
  int64_t out_numel = loom_shape_numel(&l->out_shape);
  s->batch = batch;
  for (int i = 0; i < n; i++) {
    int64_t ni = loom_shape_numel(&l->children[i]->out_shape);
    int rc = container_reserve(&s->outs[i], &s->outs_cap[i], batch, ni, l, err);
    if (!rc) rc = layer_forward(l->children[i], ctx, x, s->outs[i], batch, err);
    if (rc) {
      container_child_error(l, _("branch"), i, err);
      return rc;
    }
  }
  switch (mode) {
  case COMBINE_CONCAT:
    for (int64_t b = 0; b < batch; b++) {
      float *yb = y + b * out_numel;
      for (int i = 0; i < n; i++) {
        int64_t ni = loom_shape_numel(&l->children[i]->out_shape);
        memcpy(yb, s->outs[i] + b * ni, (size_t)ni * sizeof *yb);
        yb += ni;
      }
    }
    break;
  case COMBINE_ADD:
  case COMBINE_AVG:
    memcpy(y, s->outs[0], (size_t)(batch * out_numel) * sizeof *y);
    for (int i = 1; i < n; i++)
      for (int64_t j = 0; j < batch * out_numel; j++) y[j] += s->outs[i][j];
    if (mode == COMBINE_AVG)
      for (int64_t j = 0; j < batch * out_numel; j++) y[j] /= (float)n;
    break;
  case COMBINE_GRID_SCATTER: {
    memset(y, 0, (size_t)(batch * out_numel) * sizeof *y);
    int64_t ni = loom_shape_numel(&l->children[0]->out_shape);
    for (int64_t b = 0; b < batch; b++)
      for (int i = 0; i < n; i++) grid_scatter_sample(l, i, s->outs[i] + b * ni, y + b * out_numel);
    break;
  }
  case COMBINE_FILTER: {
    int rc = container_reserve(&s->gate_out, &s->gate_out_cap, batch, n, l, err);
    if (!rc) rc = container_reserve(&s->probs, &s->probs_cap, batch, n, l, err);
    if (!rc) rc = layer_forward(l->gate, ctx, x, s->gate_out, batch, err);
    if (rc) {
      container_child_error(l, NULL, -1, err);
      return rc;
    }
    for (int64_t b = 0; b < batch; b++) {
      const float *z = s->gate_out + b * n;
      float *p = s->probs + b * n;
      double mx = z[0], sum = 0.0;
      for (int i = 1; i < n; i++) mx = z[i] > mx ? z[i] : mx;
      if (!isfinite(mx)) {
        char where[128];
        return loom_error_set(err, LOOM_ERR_NONFINITE, _("%s: the gate's output for sample %lld is not finite"),
                              layer_where(l, where, sizeof where), (long long)b);
      }
      for (int i = 0; i < n; i++) sum += exp((double)z[i] - mx);
      for (int i = 0; i < n; i++) p[i] = (float)(exp((double)z[i] - mx) / sum);
      float *yb = y + b * out_numel;
      for (int64_t j = 0; j < out_numel; j++) {
        float acc = 0.0f;
        for (int i = 0; i < n; i++) acc += p[i] * s->outs[i][b * out_numel + j];
        yb[j] = acc;
      }
    }
    break;
  }
  case COMBINE_ROUTE: {
    int64_t heads = route_heads(l), part = out_numel / heads;
    int rc = container_reserve(&s->gate_out, &s->gate_out_cap, batch, heads * n, l, err);
    if (!rc) rc = layer_forward(l->gate, ctx, x, s->gate_out, batch, err);
    if (rc) {
      container_child_error(l, NULL, -1, err);
      return rc;
    }
    for (int64_t k = 0; k < batch * heads * n; k++)
      if (!isfinite(s->gate_out[k])) {
        char where[128];
        return loom_error_set(err, LOOM_ERR_NONFINITE, _("%s: the gate's output for sample %lld is not finite"),
                              layer_where(l, where, sizeof where), (long long)(k / (heads * n)));
      }
    for (int64_t b = 0; b < batch; b++)
      for (int64_t h = 0; h < heads; h++) {
        const float *p = s->gate_out + (b * heads + h) * n;
        int64_t base = b * out_numel + h * part;
        for (int64_t j = 0; j < part; j++) {
          float acc = 0.0f;
          for (int i = 0; i < n; i++) acc += p[i] * s->outs[i][base + j];
          y[base + j] = acc;
        }
      }
    break;
  }
  }
  return LOOM_OK;
}

static int parallel_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                             float *dx, int64_t batch, loom_error *err) {
  char where[128];
  par_state *s = l->state;
  if (!s || s->n != l->n_children || s->batch != batch)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: backward without a matching forward (batch %lld)"),
                          layer_where(l, where, sizeof where), (long long)batch);
  combine_mode mode = (combine_mode)layer_int(l, P_COMBINE);
  int n = l->n_children;
  int64_t in_numel = loom_shape_numel(&l->in_shape), out_numel = loom_shape_numel(&l->out_shape);
  int rc;
  if (dx) {
    memset(dx, 0, (size_t)(batch * in_numel) * sizeof *dx);
    if ((rc = container_reserve(&s->branch_dx, &s->branch_dx_cap, batch, in_numel, l, err))) return rc;
  }
  int64_t offset = 0; /* concat: where branch i starts inside a sample */
  for (int i = 0; i < n; i++) {
    int64_t ni = loom_shape_numel(&l->children[i]->out_shape);
    const float *dyi = dy;
    if (mode != COMBINE_ADD) {
      if ((rc = container_reserve(&s->branch_dy, &s->branch_dy_cap, batch, ni, l, err))) return rc;
      float *g = s->branch_dy;
      for (int64_t b = 0; b < batch; b++) {
        const float *dyb = dy + b * out_numel;
        float *gb = g + b * ni;
        switch (mode) {
        case COMBINE_CONCAT: memcpy(gb, dyb + offset, (size_t)ni * sizeof *gb); break;
        case COMBINE_AVG:
          for (int64_t j = 0; j < ni; j++) gb[j] = dyb[j] / (float)n;
          break;
        case COMBINE_GRID_SCATTER: grid_gather_sample(l, i, dyb, gb); break;
        case COMBINE_FILTER: {
          float p = s->probs[b * n + i];
          for (int64_t j = 0; j < ni; j++) gb[j] = p * dyb[j];
          break;
        }
        case COMBINE_ROUTE: {
          int64_t heads = route_heads(l), part = ni / heads;
          for (int64_t j = 0; j < ni; j++) gb[j] = s->gate_out[(b * heads + j / part) * n + i] * dyb[j];
          break;
        }
        default: break;
        }
      }
      dyi = g;
    }
    rc = layer_backward(l->children[i], ctx, x, s->outs[i], dyi, dx ? s->branch_dx : NULL, batch, err);
    if (rc) {
      container_child_error(l, _("branch"), i, err);
      return rc;
    }
    if (dx)
      for (int64_t j = 0; j < batch * in_numel; j++) dx[j] += s->branch_dx[j];
    offset += ni;
  }
  if (mode == COMBINE_FILTER) {
    /* dL/dp_i = <dy, out_i>; through the softmax: dz = p ⊙ (dp − <p, dp>). */
    if ((rc = container_reserve(&s->dlogits, &s->dlogits_cap, batch, n, l, err))) return rc;
    double *dp = malloc((size_t)n * sizeof *dp);
    if (!dp) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory running a %s layer"), l->type->name);
    for (int64_t b = 0; b < batch; b++) {
      const float *dyb = dy + b * out_numel, *p = s->probs + b * n;
      double dot = 0.0;
      for (int i = 0; i < n; i++) {
        const float *o = s->outs[i] + b * out_numel;
        double acc = 0.0;
        for (int64_t j = 0; j < out_numel; j++) acc += (double)dyb[j] * (double)o[j];
        dp[i] = acc;
        dot += (double)p[i] * acc;
      }
      for (int i = 0; i < n; i++) s->dlogits[b * n + i] = (float)((double)p[i] * (dp[i] - dot));
    }
    free(dp);
    rc = layer_backward(l->gate, ctx, x, s->gate_out, s->dlogits, dx ? s->branch_dx : NULL, batch, err);
    if (rc) {
      container_child_error(l, NULL, -1, err);
      return rc;
    }
    if (dx)
      for (int64_t j = 0; j < batch * in_numel; j++) dx[j] += s->branch_dx[j];
  }
  if (mode == COMBINE_ROUTE) {
    /* The gate's output is p itself: dL/dp[h][i] = <dy, out_i> over part h;
     * the gate's own last layer (a softmax) applies its Jacobian. */
    int64_t heads = route_heads(l), part = out_numel / heads;
    if ((rc = container_reserve(&s->dlogits, &s->dlogits_cap, batch, heads * n, l, err))) return rc;
    for (int64_t b = 0; b < batch; b++)
      for (int64_t h = 0; h < heads; h++) {
        int64_t base = b * out_numel + h * part;
        for (int i = 0; i < n; i++) {
          double acc = 0.0;
          for (int64_t j = 0; j < part; j++) acc += (double)dy[base + j] * (double)s->outs[i][base + j];
          s->dlogits[(b * heads + h) * n + i] = (float)acc;
        }
      }
    rc = layer_backward(l->gate, ctx, x, s->gate_out, s->dlogits, dx ? s->branch_dx : NULL, batch, err);
    if (rc) {
      container_child_error(l, NULL, -1, err);
      return rc;
    }
    if (dx)
      for (int64_t j = 0; j < batch * in_numel; j++) dx[j] += s->branch_dx[j];
  }
  return LOOM_OK;
}

static int64_t parallel_flops(const loom_layer *l) {
  int64_t f = 0;
  for (int i = 0; i < l->n_children; i++) f += loom_layer_flops(l->children[i]);
  if (l->gate) f += loom_layer_flops(l->gate);
  if (!l->built) return f;
  int64_t out = loom_shape_numel(&l->out_shape);
  switch ((combine_mode)layer_int(l, P_COMBINE)) {
  case COMBINE_ADD:
  case COMBINE_AVG: return f + out * l->n_children;
  case COMBINE_FILTER: return f + 2 * out * l->n_children + 5 * l->n_children;
  case COMBINE_ROUTE: return f + 2 * out * l->n_children;
  default: return f;
  }
}

static char *parallel_describe(const loom_layer *l, char *buf, size_t size) {
  combine_mode mode = (combine_mode)layer_int(l, P_COMBINE);
  if (mode == COMBINE_GRID_SCATTER)
    snprintf(buf, size, "%s %s %lld×%lld ×%d", l->type->name, combine_choices[mode],
             (long long)layer_int(l, P_GRID_ROWS), (long long)layer_int(l, P_GRID_COLS), l->n_children);
  else if (mode == COMBINE_ROUTE && l->built)
    /* TRANSLATORS: layer summary, e.g. "parallel route ×3, 2 heads": the layer type name, the
       combine mode's stable name, the number of branches, then the number of routing heads. */
    snprintf(buf, size, dngettext(GETTEXT_PACKAGE, "%s %s ×%d, %lld head", "%s %s ×%d, %lld heads",
                                  (unsigned long)route_heads(l)),
             l->type->name, combine_choices[mode], l->n_children, (long long)route_heads(l));
  else
    snprintf(buf, size, "%s %s ×%d", l->type->name, combine_choices[mode], l->n_children);
  return buf;
}

const loom_layer_type loom_layer_parallel = {
  .id = 31,
  .name = "parallel",
  .label = N_("Parallel"),
  .group = N_("Container"),
  .description = N_("Runs its branches on the same input and combines their outputs (concat, add, avg, "
                    "grid_scatter, or filter and route: gated mixtures of experts)."),
  .flags = LOOM_LAYER_CONTAINER,
  .params = parallel_params,
  .n_params = (int)(sizeof parallel_params / sizeof parallel_params[0]),
  .build = parallel_build,
  .forward = parallel_forward,
  .backward = parallel_backward,
  .flops = parallel_flops,
  .free_state = par_free,
  .describe = parallel_describe,
};
