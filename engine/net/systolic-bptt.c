/*
 * Backpropagation through time over a systolic runner's recorded ticks.
 *
 * Tick t computes out_t[k] = f_k(merge(out_{t-1}[pred], out_{t-1}[links])) (the
 * network input in place of out_{t-1}[pred] for the first slot; out_{-1} = 0).
 * Walking t from the last recorded tick down, g[k] holds dL/d out_t[k]: the
 * loss gradient dy[t] joins at the last slot, each layer is replayed forward
 * on its recorded input (restoring its caches) and run backward, and its
 * input gradient flows through the merges into the previous tick's g. Nodes
 * and reductions run in a fixed order, so gradients do not depend on the
 * thread count.
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "net/net-internal.h"
#include "net/systolic-impl.h"
#include "net/systolic-plan.h"

/* A layer (or one inside it) whose state crosses calls: BPTT over ticks would
 * need that state's gradient between calls, which layers do not keep. */
static const loom_layer *carries_state(const loom_layer *l) {
  if (loom_layer_get_int(l, "carry_state") || loom_layer_get_int(l, "cache_capacity") > 0) return l;
  for (int i = 0; i < loom_layer_n_children(l); i++) {
    const loom_layer *c = carries_state(loom_layer_child(l, i));
    if (c) return c;
  }
  return NULL;
}

static void add_into(float *dst, const float *src, int64_t n) {
  for (int64_t i = 0; i < n; i++) dst[i] += src[i];
}

/* Routes one sample's input gradient `row` of node n back through its merges
 * (in reverse order) into the previous tick's gradients `prev` (gx for the input). */
static void merge_backward(const loom_systolic *s, const net_node *n, float *row, int64_t b, float **prev,
                           float *gx) {
  for (int i = n->n_feedback - 1; i >= 0; i--) {
    const net_merge *g = &n->feedback[i];
    add_into(prev[g->src_node] + b * g->src_numel, row, g->src_numel);
    if (g->mode == LOOM_MERGE_REPLACE) memset(row, 0, (size_t)g->before_numel * sizeof *row);
  }
  for (int i = n->n_merges - 1; i >= 0; i--) {
    const net_merge *g = &n->merges[i];
    float *src = prev[g->src_node] + b * g->src_numel;
    switch (g->mode) {
    case LOOM_MERGE_REPLACE:
      add_into(src, row, g->src_numel);
      memset(row, 0, (size_t)g->before_numel * sizeof *row);
      break;
    case LOOM_MERGE_ADD: add_into(src, row, g->src_numel); break;
    case LOOM_MERGE_CONCAT: add_into(src, row + g->before_numel, g->src_numel); break;
    }
  }
  int64_t base = n->pred < 0 ? s->in_numel : s->node_out[n->pred];
  add_into(n->pred < 0 ? gx + b * base : prev[n->pred] + b * base, row, base);
}

typedef struct bptt_bufs {
  float **g, **prev; /* per node: gradients of this tick's and the previous tick's outputs */
  float *gin, *out, *gx;
} bptt_bufs;

static void bufs_free(bptt_bufs *u, int n) {
  for (int k = 0; k < n; k++) {
    if (u->g) free(u->g[k]);
    if (u->prev) free(u->prev[k]);
  }
  free(u->g);
  free(u->prev);
  free(u->gin);
  free(u->out);
  free(u->gx);
}

static int bufs_alloc(const loom_systolic *s, bptt_bufs *u, loom_error *err) {
  int64_t widest = 1;
  if (s->n < 1) return loom_error_set(err, LOOM_ERR_INVALID, _("the network holds no layers"));
  u->g = calloc((size_t)s->n, sizeof *u->g);
  u->prev = calloc((size_t)s->n, sizeof *u->prev);
  if (!u->g || !u->prev) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for backpropagation through time"));
  for (int k = 0; k < s->n; k++) {
    int64_t count = s->batch * s->node_out[k];
    u->g[k] = calloc((size_t)(count > 0 ? count : 1), sizeof(float));
    u->prev[k] = calloc((size_t)(count > 0 ? count : 1), sizeof(float));
    if (!u->g[k] || !u->prev[k])
      return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for backpropagation through time"));
    if (s->node_in[k] > widest) widest = s->node_in[k];
    if (s->node_out[k] > widest) widest = s->node_out[k];
  }
  u->gin = calloc((size_t)(s->batch * widest), sizeof(float));
  u->out = calloc((size_t)(s->batch * widest), sizeof(float));
  u->gx = calloc((size_t)(s->batch * (s->in_numel > 0 ? s->in_numel : 1)), sizeof(float));
  if (!u->gin || !u->out || !u->gx)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for backpropagation through time"));
  return LOOM_OK;
}

/* One recorded tick backwards: u->g holds dL/d out_t, u->prev receives dL/d out_{t-1}. */
static int tick_backward(loom_systolic *s, const loom_ctx *ctx, int64_t t, bptt_bufs *u, loom_error *err) {
  for (int k = 0; k < s->n; k++) memset(u->prev[k], 0, (size_t)(s->batch * s->node_out[k]) * sizeof(float));
  for (int k = 0; k < s->n; k++) {
    const net_node *n = &s->net->nodes[k];
    const float *in = s->rec[t] + s->rec_off[k];
    int64_t in_numel = s->node_in[k];
    if (n->enabled) {
      int rc = layer_forward(n->layer, ctx, in, u->out, s->batch, err);
      if (!rc) rc = layer_backward(n->layer, ctx, in, u->out, u->g[k], u->gin, s->batch, err);
      if (rc) {
        char at[48];
        loom_error_prefix(err, _("backward through tick %lld, slot %s"), (long long)t + 1,
                          loom_coord_format(n->coord, at, sizeof at));
        return rc;
      }
    } else {
      memcpy(u->gin, u->g[k], (size_t)(s->batch * in_numel) * sizeof(float));
    }
    for (int64_t b = 0; b < s->batch; b++) {
      memcpy(s->row, u->gin + b * in_numel, (size_t)in_numel * sizeof(float));
      merge_backward(s, n, s->row, b, u->prev, u->gx);
    }
  }
  return LOOM_OK;
}

/* Allocates (first backward) or zeroes the per-node gradient sums. */
static int gsum_clear(loom_systolic *s, loom_error *err) {
  if (!s->gsum && !(s->gsum = calloc((size_t)s->n, sizeof *s->gsum)))
    return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for backpropagation through time"));
  for (int k = 0; k < s->n; k++) {
    int64_t count = s->batch * s->node_out[k];
    if (!s->gsum[k] && !(s->gsum[k] = calloc((size_t)(count > 0 ? count : 1), sizeof(float))))
      return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for backpropagation through time"));
    memset(s->gsum[k], 0, (size_t)count * sizeof(float));
  }
  return LOOM_OK;
}

const float *systolic_node_output(const loom_systolic *s, int k) { return s && k >= 0 && k < s->n ? s->cur[k] : NULL; }

const float *systolic_node_grad(const loom_systolic *s, int k) {
  return s && s->gsum && k >= 0 && k < s->n ? s->gsum[k] : NULL;
}

LOOM_API int loom_systolic_backward(loom_systolic *s, const loom_ctx *ctx, const float *const *dy, int64_t n_ticks,
                                    float *dx, loom_error *err) {
  if (!s || !dy) return loom_error_set(err, LOOM_ERR_INVALID, _("no systolic runner or output gradients given"));
  int rc = systolic_check_plan(s, err);
  if (rc) return rc;
  if (n_ticks != s->n_rec)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("backward got output gradients for %lld ticks but %lld ticks were recorded"),
                          (long long)n_ticks, (long long)s->n_rec);
  if (n_ticks < 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("backward needs recorded ticks: turn recording on, then tick"));
  for (int k = 0; k < s->n; k++) {
    const net_node *n = &s->net->nodes[k];
    const loom_layer *c = n->enabled ? carries_state(n->layer) : NULL;
    if (c) {
      char at[48];
      return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                            _("slot %s: its %s layer carries state between ticks (carry_state or a KV cache), which "
                              "backpropagation through ticks does not cover"),
                            loom_coord_format(n->coord, at, sizeof at), loom_layer_type_name(loom_layer_get_type(c)));
    }
  }
  bptt_bufs u = {0};
  rc = bufs_alloc(s, &u, err);
  if (!rc) rc = gsum_clear(s, err);
  int last = s->n - 1;
  for (int64_t t = n_ticks - 1; !rc && t >= 0; t--) {
    if (dy[t]) add_into(u.g[last], dy[t], s->batch * s->node_out[last]);
    for (int k = 0; k < s->n; k++) add_into(s->gsum[k], u.g[k], s->batch * s->node_out[k]);
    rc = tick_backward(s, ctx, t, &u, err);
    float **swap = u.g;
    u.g = u.prev;
    u.prev = swap;
  }
  if (!rc && dx) memcpy(dx, u.gx, (size_t)(s->batch * s->in_numel) * sizeof *dx);
  bufs_free(&u, s->n);
  return rc;
}
