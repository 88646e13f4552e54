/*
 * Containers that chain their children: `sequential` (y = f_n(…f_1(x))) and
 * `residual` (y = x + f_n(…f_1(x)), the output shape must equal the input
 * shape). Shared helpers for parallel.c live here too. Semantics:
 * docs/network.md.
 */
#include "layers/containers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "core/rng.h"
#include "layers/registry.h"

/* ---- shared helpers ---------------------------------------------------- */

int container_reserve(float **buf, int64_t *cap, int64_t batch, int64_t numel, const loom_layer *l,
                      loom_error *err) {
  char where[128];
  if (batch < 0 || numel < 0 || (numel > 0 && batch > (INT64_MAX / (int64_t)sizeof(float)) / numel))
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: a batch of %lld × %lld values is too large"),
                          layer_where(l, where, sizeof where), (long long)batch, (long long)numel);
  int64_t count = batch * numel;
  if (count <= *cap && *buf) return LOOM_OK;
  float *grown = realloc(*buf, (size_t)(count > 0 ? count : 1) * sizeof(float));
  if (!grown)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for %lld intermediate values"),
                          layer_where(l, where, sizeof where), (long long)count);
  *buf = grown;
  *cap = count;
  return LOOM_OK;
}

uint64_t container_child_seed(uint64_t seed, int i) {
  return loom_rng_derive(seed, 0x636869ull * 65536u + (uint64_t)(int64_t)(i + 1));
}

void container_child_error(const loom_layer *l, const char *what, int i, loom_error *err) {
  char where[128];
  if (i < 0)
    loom_error_prefix(err, _("%s, gate"), layer_where(l, where, sizeof where));
  else
    /* what: "child" or "branch", already translated */
    loom_error_prefix(err, "%s, %s %d", layer_where(l, where, sizeof where), what, i);
}

/* ---- chains ------------------------------------------------------------ */

void chain_free(chain *c) {
  if (!c) return;
  for (int i = 0; i < c->n; i++) free(c->acts[i]);
  free(c->acts);
  free(c->acts_cap);
  free(c->grad_a);
  free(c->grad_b);
  memset(c, 0, sizeof *c);
}

int chain_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_shape *out, loom_error *err) {
  loom_shape cur = *in;
  for (int i = 0; i < l->n_children; i++) {
    int rc = loom_layer_build(l->children[i], &cur, container_child_seed(seed, i), err);
    if (rc) {
      /* TRANSLATORS: the word before the index of a container's child layer in an error prefix
         such as "layer sequential, child 2: …". */
      container_child_error(l, _("child"), i, err);
      return rc;
    }
    cur = l->children[i]->out_shape;
  }
  *out = cur;
  return LOOM_OK;
}

static int chain_resize(chain *c, int n, const loom_layer *l, loom_error *err) {
  if (c->n == n) return LOOM_OK;
  chain_free(c);
  if (n == 0) return LOOM_OK;
  c->acts = calloc((size_t)n, sizeof *c->acts);
  c->acts_cap = calloc((size_t)n, sizeof *c->acts_cap);
  if (!c->acts || !c->acts_cap) {
    chain_free(c);
    return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory running a %s layer"), l->type->name);
  }
  c->n = n;
  return LOOM_OK;
}

int chain_forward(loom_layer *l, chain *c, const loom_ctx *ctx, const float *x, int64_t batch, loom_error *err) {
  int rc = chain_resize(c, l->n_children, l, err);
  if (rc) return rc;
  c->batch = batch;
  const float *cur = x;
  for (int i = 0; i < l->n_children; i++) {
    loom_layer *child = l->children[i];
    rc = container_reserve(&c->acts[i], &c->acts_cap[i], batch, loom_shape_numel(&child->out_shape), l, err);
    if (rc) return rc;
    rc = layer_forward(child, ctx, cur, c->acts[i], batch, err);
    if (rc) {
      container_child_error(l, _("child"), i, err);
      return rc;
    }
    cur = c->acts[i];
  }
  return LOOM_OK;
}

const float *chain_output(const chain *c, const float *x) { return c->n > 0 ? c->acts[c->n - 1] : x; }

int chain_backward(loom_layer *l, chain *c, const loom_ctx *ctx, const float *x, const float *dy, float *dx,
                   int64_t batch, loom_error *err) {
  char where[128];
  if (c->n != l->n_children || c->batch != batch)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: backward without a matching forward (batch %lld)"),
                          layer_where(l, where, sizeof where), (long long)batch);
  if (l->n_children == 0) {
    if (dx) memcpy(dx, dy, (size_t)(batch * loom_shape_numel(&l->in_shape)) * sizeof *dx);
    return LOOM_OK;
  }
  const float *cur_dy = dy;
  bool use_a = true;
  for (int i = l->n_children - 1; i >= 0; i--) {
    loom_layer *child = l->children[i];
    const float *xi = i == 0 ? x : c->acts[i - 1];
    float *dxi = NULL;
    if (i == 0) {
      dxi = dx;
    } else {
      float **buf = use_a ? &c->grad_a : &c->grad_b;
      int64_t *cap = use_a ? &c->grad_a_cap : &c->grad_b_cap;
      int rc = container_reserve(buf, cap, batch, loom_shape_numel(&child->in_shape), l, err);
      if (rc) return rc;
      dxi = *buf;
      use_a = !use_a;
    }
    int rc = layer_backward(child, ctx, xi, c->acts[i], cur_dy, dxi, batch, err);
    if (rc) {
      container_child_error(l, _("child"), i, err);
      return rc;
    }
    cur_dy = dxi;
  }
  return LOOM_OK;
}

int64_t chain_flops(const loom_layer *l) {
  int64_t n = 0;
  for (int i = 0; i < l->n_children; i++) n += loom_layer_flops(l->children[i]);
  return n;
}

/* ---- sequential -------------------------------------------------------- */

static void chain_state_free(loom_layer *l) {
  chain_free(l->state);
  free(l->state);
  l->state = NULL;
}

static int ensure_chain(loom_layer *l, loom_error *err) {
  if (l->state) return LOOM_OK;
  l->state = calloc(1, sizeof(chain));
  return l->state ? LOOM_OK : loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory running a %s layer"), l->type->name);
}

static int sequential_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  return chain_build(l, in, seed, &l->out_shape, err);
}

static int sequential_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                              loom_error *err) {
  int rc = ensure_chain(l, err);
  if (!rc) rc = chain_forward(l, l->state, ctx, x, batch, err);
  if (rc) return rc;
  memcpy(y, chain_output(l->state, x), (size_t)(batch * loom_shape_numel(&l->out_shape)) * sizeof *y);
  return LOOM_OK;
}

static int sequential_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                               float *dx, int64_t batch, loom_error *err) {
  int rc = ensure_chain(l, err);
  if (rc) return rc;
  return chain_backward(l, l->state, ctx, x, dy, dx, batch, err);
}

/* A chain gives probabilities exactly when its last layer does (an empty one
 * passes its input through and promises nothing). */
static bool sequential_outputs_probabilities(const loom_layer *l) {
  return l->n_children > 0 && loom_layer_outputs_probabilities(l->children[l->n_children - 1]);
}

static char *sequential_describe(const loom_layer *l, char *buf, size_t size) {
  snprintf(buf, size, "%s ×%d", l->type->name, l->n_children);
  return buf;
}

const loom_layer_type loom_layer_sequential = {
  .id = 30,
  .name = "sequential",
  .label = N_("Sequential"),
  .group = N_("Container"),
  .description = N_("Runs its child layers one after another; with no children it passes its input through."),
  .flags = LOOM_LAYER_CONTAINER,
  .build = sequential_build,
  .forward = sequential_forward,
  .backward = sequential_backward,
  .flops = chain_flops,
  .free_state = chain_state_free,
  .describe = sequential_describe,
  .outputs_probabilities = sequential_outputs_probabilities,
};

/* ---- residual ---------------------------------------------------------- */

static int residual_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  char where[128], a[96], b[96];
  if (l->n_children == 0)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s holds no layers; add at least one"),
                          layer_where(l, where, sizeof where));
  loom_shape out;
  int rc = chain_build(l, in, seed, &out, err);
  if (rc) return rc;
  if (!loom_shape_equal(&out, in))
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: its layers turn the input %s into %s; the shapes must match to be added"),
                          layer_where(l, where, sizeof where), loom_shape_format(in, a, sizeof a),
                          loom_shape_format(&out, b, sizeof b));
  l->out_shape = *in;
  return LOOM_OK;
}

static int residual_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                            loom_error *err) {
  int rc = ensure_chain(l, err);
  if (!rc) rc = chain_forward(l, l->state, ctx, x, batch, err);
  if (rc) return rc;
  const float *f = chain_output(l->state, x);
  int64_t n = batch * loom_shape_numel(&l->out_shape);
  for (int64_t i = 0; i < n; i++) y[i] = x[i] + f[i];
  return LOOM_OK;
}

static int residual_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                             float *dx, int64_t batch, loom_error *err) {
  int rc = ensure_chain(l, err);
  if (!rc) rc = chain_backward(l, l->state, ctx, x, dy, dx, batch, err);
  if (rc || !dx) return rc;
  int64_t n = batch * loom_shape_numel(&l->in_shape);
  for (int64_t i = 0; i < n; i++) dx[i] += dy[i];
  return LOOM_OK;
}

static int64_t residual_flops(const loom_layer *l) {
  return chain_flops(l) + (l->built ? loom_shape_numel(&l->out_shape) : 0);
}

static char *residual_describe(const loom_layer *l, char *buf, size_t size) {
  snprintf(buf, size, "%s ×%d", l->type->name, l->n_children);
  return buf;
}

const loom_layer_type loom_layer_residual = {
  .id = 32,
  .name = "residual",
  .label = N_("Residual"),
  .group = N_("Container"),
  .description = N_("Adds its input to the output of its child layers (a skip connection around them)."),
  .flags = LOOM_LAYER_CONTAINER,
  .build = residual_build,
  .forward = residual_forward,
  .backward = residual_backward,
  .flops = residual_flops,
  .free_state = chain_state_free,
  .describe = residual_describe,
};
