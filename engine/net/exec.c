/*
 * Feed-forward execution of the plan made by infer.c: every node (occupied
 * slot, flat order) gets the output of the node before it, merged with its
 * incoming links in link order, and runs its layer (a disabled node passes
 * the merged value through). Backward walks the nodes in reverse, routing
 * each input gradient back through the merges. Everything runs in a fixed
 * order, so with deterministic layers the result is bit-identical for any
 * thread count.
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "net/net-internal.h"

static int reserve(float **buf, int64_t *cap, int64_t batch, int64_t numel, loom_error *err) {
  if (numel > 0 && batch > (INT64_MAX / (int64_t)sizeof(float)) / numel)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("a batch of %lld × %lld values is too large"), (long long)batch,
                          (long long)numel);
  int64_t count = batch * numel;
  if (*buf && count <= *cap) return LOOM_OK;
  float *grown = realloc(*buf, (size_t)(count > 0 ? count : 1) * sizeof(float));
  if (!grown)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for %lld activation values"), (long long)count);
  *buf = grown;
  *cap = count;
  return LOOM_OK;
}

/* Longest per-sample value while the merges of a node apply. */
static int64_t merge_span(const net_node *n) {
  int64_t m = loom_shape_numel(&n->base_in), len = m;
  for (int i = 0; i < n->n_merges; i++) {
    const net_merge *g = &n->merges[i];
    len = g->mode == LOOM_MERGE_REPLACE ? g->src_numel
        : g->mode == LOOM_MERGE_ADD     ? g->before_numel
                                        : g->before_numel + g->src_numel;
    if (len > m) m = len;
  }
  return m;
}

static const float *node_output(const loom_net *net, int k) {
  return k < 0 ? net->x_buf : net->nodes[k].out_ptr;
}

static int merge_forward(loom_net *net, net_node *n, int64_t batch, loom_error *err) {
  int64_t in_numel = loom_shape_numel(&n->in), base_numel = loom_shape_numel(&n->base_in);
  int rc = reserve(&n->in_buf, &n->in_cap, batch, in_numel, err);
  if (!rc) rc = reserve(&net->scratch_a, &net->scratch_a_cap, 1, merge_span(n), err);
  if (rc) return rc;
  const float *base = node_output(net, n->pred);
  float *row = net->scratch_a;
  for (int64_t b = 0; b < batch; b++) {
    memcpy(row, base + b * base_numel, (size_t)base_numel * sizeof *row);
    int64_t len = base_numel;
    for (int i = 0; i < n->n_merges; i++) {
      const net_merge *g = &n->merges[i];
      const float *src = net->nodes[g->src_node].out_ptr + b * g->src_numel;
      switch (g->mode) {
      case LOOM_MERGE_REPLACE:
        memcpy(row, src, (size_t)g->src_numel * sizeof *row);
        len = g->src_numel;
        break;
      case LOOM_MERGE_ADD:
        for (int64_t j = 0; j < len; j++) row[j] += src[j];
        break;
      case LOOM_MERGE_CONCAT:
        memcpy(row + len, src, (size_t)g->src_numel * sizeof *row);
        len += g->src_numel;
        break;
      }
    }
    memcpy(n->in_buf + b * in_numel, row, (size_t)in_numel * sizeof *row);
  }
  n->in_ptr = n->in_buf;
  return LOOM_OK;
}

LOOM_API int loom_net_forward(loom_net *net, const loom_ctx *ctx, const float *x, int64_t batch, float *y,
                              loom_error *err) {
  if (!net || !x || !y) return loom_error_set(err, LOOM_ERR_INVALID, _("no network, input or output given"));
  if (batch < 1) return loom_error_set(err, LOOM_ERR_INVALID, _("the batch size must be at least 1, got %lld"), (long long)batch);
  net->batch = 0;
  int rc = net_ensure_plan(net, err);
  if (rc) return rc;
  for (int k = 0; k < net->n_nodes; k++)
    if (net->nodes[k].n_feedback > 0) {
      char a[48], b[48];
      const net_node *n = &net->nodes[k];
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("link %s → %s points backwards (the source comes after the destination); feedback links "
                              "need systolic execution"),
                            loom_coord_format(net->nodes[n->feedback[0].src_node].coord, a, sizeof a),
                            loom_coord_format(n->coord, b, sizeof b));
    }
  int64_t in_numel = loom_shape_numel(&net->input);
  if ((rc = reserve(&net->x_buf, &net->x_cap, batch, in_numel, err))) return rc;
  memcpy(net->x_buf, x, (size_t)(batch * in_numel) * sizeof *x);
  for (int k = 0; k < net->n_nodes; k++) {
    net_node *n = &net->nodes[k];
    if (n->n_merges == 0) {
      n->in_ptr = node_output(net, n->pred);
    } else if ((rc = merge_forward(net, n, batch, err))) {
      return rc;
    }
    if (!n->enabled) {
      n->out_ptr = n->in_ptr;
      continue;
    }
    if ((rc = reserve(&n->out_buf, &n->out_cap, batch, loom_shape_numel(&n->out), err))) return rc;
    if ((rc = layer_forward(n->layer, ctx, n->in_ptr, n->out_buf, batch, err))) return rc;
    n->out_ptr = n->out_buf;
  }
  memcpy(y, node_output(net, net->n_nodes - 1), (size_t)(batch * loom_shape_numel(&net->out_shape)) * sizeof *y);
  net->batch = batch;
  return LOOM_OK;
}

/* Four lanes at a time (the baseline ISA's width; the same sums): GCC
 * -O2 left the plain loop scalar, and where the program's layout split
 * it over two 32-byte fetch windows it cost a tenth of a digits-CNN
 * training step (bench-train, Zen 3). */
typedef float add_vf __attribute__((vector_size(16)));

static void add_into(float *dst, const float *src, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    add_vf a[2], b[2];
    memcpy(a, dst + i, sizeof a);
    memcpy(b, src + i, sizeof b);
    a[0] += b[0];
    a[1] += b[1];
    memcpy(dst + i, a, sizeof a);
  }
  for (; i < n; i++) dst[i] += src[i];
}

static float *grad_of(loom_net *net, int k) { return k < 0 ? net->gx_buf : net->nodes[k].grad_out; }

/* Sends the gradient of a node's merged input back to its spine input and links. */
static int merge_backward(loom_net *net, net_node *n, const float *g_in, int64_t batch, loom_error *err) {
  int64_t in_numel = loom_shape_numel(&n->in), base_numel = loom_shape_numel(&n->base_in);
  float *base_g = grad_of(net, n->pred);
  if (n->n_merges == 0) {
    add_into(base_g, g_in, batch * in_numel);
    return LOOM_OK;
  }
  int rc = reserve(&net->scratch_a, &net->scratch_a_cap, 1, merge_span(n), err);
  if (rc) return rc;
  float *row = net->scratch_a;
  for (int64_t b = 0; b < batch; b++) {
    memcpy(row, g_in + b * in_numel, (size_t)in_numel * sizeof *row);
    for (int i = n->n_merges - 1; i >= 0; i--) {
      const net_merge *g = &n->merges[i];
      float *src_g = net->nodes[g->src_node].grad_out + b * g->src_numel;
      switch (g->mode) {
      case LOOM_MERGE_REPLACE:
        add_into(src_g, row, g->src_numel);
        memset(row, 0, (size_t)g->before_numel * sizeof *row);
        break;
      case LOOM_MERGE_ADD: add_into(src_g, row, g->src_numel); break;
      case LOOM_MERGE_CONCAT: add_into(src_g, row + g->before_numel, g->src_numel); break;
      }
    }
    add_into(base_g + b * base_numel, row, base_numel);
  }
  return LOOM_OK;
}

LOOM_API int loom_net_backward(loom_net *net, const loom_ctx *ctx, const float *dy, float *dx, loom_error *err) {
  if (!net || !dy) return loom_error_set(err, LOOM_ERR_INVALID, _("no network or output gradient given"));
  int64_t batch = net->batch;
  if (batch < 1 || !net->plan_valid)
    return loom_error_set(err, LOOM_ERR_INVALID, _("backward needs a forward pass of the unchanged network first"));
  for (int k = 0; k < net->n_nodes; k++) {
    const net_node *n = &net->nodes[k];
    if (n->enabled && !n->layer->built)
      return loom_error_set(err, LOOM_ERR_INVALID, _("backward needs a forward pass of the unchanged network first"));
  }
  int rc;
  int64_t in_numel = loom_shape_numel(&net->input);
  if ((rc = reserve(&net->gx_buf, &net->gx_cap, batch, in_numel, err))) return rc;
  memset(net->gx_buf, 0, (size_t)(batch * in_numel) * sizeof(float));
  for (int k = 0; k < net->n_nodes; k++) {
    net_node *n = &net->nodes[k];
    int64_t count = batch * loom_shape_numel(&n->out);
    if ((rc = reserve(&n->grad_out, &n->grad_out_cap, batch, loom_shape_numel(&n->out), err))) return rc;
    memset(n->grad_out, 0, (size_t)count * sizeof(float));
  }
  add_into(grad_of(net, net->n_nodes - 1), dy, batch * loom_shape_numel(&net->out_shape));
  for (int k = net->n_nodes - 1; k >= 0; k--) {
    net_node *n = &net->nodes[k];
    const float *g_in = n->grad_out;
    if (n->enabled) {
      bool need_dx = n->pred >= 0 || n->n_merges > 0 || dx;
      float *g = NULL;
      if (need_dx) {
        if ((rc = reserve(&net->scratch_b, &net->scratch_b_cap, batch, loom_shape_numel(&n->in), err))) return rc;
        g = net->scratch_b;
      }
      if ((rc = layer_backward(n->layer, ctx, n->in_ptr, n->out_ptr, n->grad_out, g, batch, err))) return rc;
      if (!need_dx) continue;
      g_in = g;
    }
    if ((rc = merge_backward(net, n, g_in, batch, err))) return rc;
  }
  if (dx) memcpy(dx, net->gx_buf, (size_t)(batch * in_numel) * sizeof *dx);
  return LOOM_OK;
}

LOOM_API void loom_net_zero_grad(loom_net *net) {
  if (!net) return;
  for (int64_t i = 0; i < net->n_slots; i++)
    if (net->slots[i]) layer_zero_grad(net->slots[i]);
}

LOOM_API const float *loom_net_activation(const loom_net *net, loom_coord c, int64_t *batch) {
  if (batch) *batch = 0;
  if (!net || net->batch < 1) return NULL;
  int64_t f = net_flat(net, c);
  for (int k = 0; f >= 0 && k < net->n_nodes; k++)
    if (net->nodes[k].flat == f) {
      if (batch) *batch = net->batch;
      return net->nodes[k].out_ptr;
    }
  return NULL;
}

/* ---- totals ------------------------------------------------------------ */

LOOM_API int64_t loom_net_param_count(const loom_net *net) {
  int64_t n = 0;
  for (int64_t i = 0; net && i < net->n_slots; i++)
    if (net->slots[i]) n += loom_layer_param_count(net->slots[i]);
  return n;
}

LOOM_API size_t loom_net_bytes(const loom_net *net) {
  size_t n = 0;
  for (int64_t i = 0; net && i < net->n_slots; i++)
    if (net->slots[i]) n += loom_layer_bytes(net->slots[i]);
  return n;
}

LOOM_API size_t loom_net_bytes_float32(const loom_net *net) {
  size_t n = 0;
  for (int64_t i = 0; net && i < net->n_slots; i++)
    if (net->slots[i]) n += loom_layer_bytes_at(net->slots[i], LOOM_DTYPE_FLOAT32);
  return n;
}

LOOM_API int64_t loom_net_flops(const loom_net *net) {
  int64_t n = 0;
  for (int64_t i = 0; net && i < net->n_slots; i++)
    if (net->slots[i] && !net->disabled[i]) n += loom_layer_flops(net->slots[i]);
  return n;
}

/* ---- inference at rest ---------------------------------------------------- */

LOOM_API int loom_net_to_inference(loom_net *net, loom_error *err) {
  for (int64_t i = 0; net && i < net->n_slots; i++) {
    int rc = net->slots[i] ? loom_layer_to_inference(net->slots[i], err) : LOOM_OK;
    if (rc) return rc;
  }
  return LOOM_OK;
}

LOOM_API int loom_net_prepare_training(loom_net *net, loom_error *err) {
  for (int64_t i = 0; net && i < net->n_slots; i++) {
    int rc = net->slots[i] ? loom_layer_prepare_training(net->slots[i], err) : LOOM_OK;
    if (rc) return rc;
  }
  return LOOM_OK;
}

static size_t net_sum(const loom_net *net, size_t (*of)(const loom_layer *)) {
  size_t n = 0;
  for (int64_t i = 0; net && i < net->n_slots; i++)
    if (net->slots[i]) n += of(net->slots[i]);
  return n;
}

LOOM_API size_t loom_net_resident_bytes(const loom_net *net) { return net_sum(net, loom_layer_resident_bytes); }
LOOM_API size_t loom_net_inference_bytes(const loom_net *net) { return net_sum(net, loom_layer_inference_bytes); }
LOOM_API size_t loom_net_training_bytes(const loom_net *net) { return net_sum(net, loom_layer_training_bytes); }
