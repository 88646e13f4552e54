/*
 * Systolic execution of the plan made by infer.c (loom/systolic.h): per tick
 * every node merges the previous tick's committed outputs (spine input,
 * forward links, then feedback links) and runs its layer into the second
 * buffer; the commit swaps the buffers. Nodes run one after another in flat
 * order and each layer splits its own work deterministically, so a tick is
 * bit-identical for any thread count. Backward (BPTT) replays each recorded
 * tick's layer forward from its recorded input to restore the layer's
 * caches, then runs the layer backward and routes the input gradient through
 * the merges to the previous tick's outputs.
 */
#include "loom/systolic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "loom/sequence.h"
#include "net/net-internal.h"
#include "net/systolic-impl.h"

static void *alloc_floats(int64_t batch, int64_t numel, loom_error *err) {
  if (batch < 1 || numel < 0 || (numel > 0 && batch > (int64_t)(SIZE_MAX / sizeof(float)) / 2 / numel)) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("a batch of %lld × %lld values is too large"), (long long)batch,
                   (long long)numel);
    return NULL;
  }
  void *p = calloc((size_t)(batch * numel > 0 ? batch * numel : 1), sizeof(float));
  if (!p) loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for %lld activation values"), (long long)(batch * numel));
  return p;
}

static void free_recording(loom_systolic *s) {
  for (int64_t t = 0; t < s->n_rec; t++) free(s->rec[t]);
  s->n_rec = 0;
}

LOOM_API void loom_systolic_free(loom_systolic *s) {
  if (!s) return;
  for (int k = 0; k < s->n; k++) {
    if (s->cur) free(s->cur[k]);
    if (s->next) free(s->next[k]);
    if (s->in_buf) free(s->in_buf[k]);
    if (s->gsum) free(s->gsum[k]);
  }
  free(s->gsum);
  free(s->cur);
  free(s->next);
  free(s->in_buf);
  free(s->node_in);
  free(s->node_out);
  free(s->x);
  free(s->row);
  if (s->rec) free_recording(s);
  free(s->rec);
  free(s->rec_off);
  free(s);
}

LOOM_API loom_systolic *loom_systolic_new(loom_net *net, int64_t batch, loom_error *err) {
  if (!net) return loom_error_set(err, LOOM_ERR_INVALID, _("no network given")), NULL;
  if (batch < 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("the batch size must be at least 1, got %lld"), (long long)batch),
           NULL;
  if (net_plan_ensure(net, err)) return NULL;
  if (net->n_nodes < 1) return loom_error_set(err, LOOM_ERR_INVALID, _("the network holds no layers")), NULL;
  loom_systolic *s = calloc(1, sizeof *s);
  if (!s) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a systolic runner")), NULL;
  s->net = net;
  s->batch = batch;
  s->n = net->n_nodes;
  s->in_numel = loom_shape_numel(&net->input);
  s->cur = calloc((size_t)s->n, sizeof *s->cur);
  s->next = calloc((size_t)s->n, sizeof *s->next);
  s->in_buf = calloc((size_t)s->n, sizeof *s->in_buf);
  s->node_in = calloc((size_t)s->n, sizeof *s->node_in);
  s->node_out = calloc((size_t)s->n, sizeof *s->node_out);
  s->rec_off = calloc((size_t)s->n, sizeof *s->rec_off);
  if (!s->cur || !s->next || !s->in_buf || !s->node_in || !s->node_out || !s->rec_off) {
    loom_systolic_free(s);
    return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a systolic runner")), NULL;
  }
  if (!(s->x = alloc_floats(batch, s->in_numel, err))) goto fail;
  s->row_len = s->in_numel;
  for (int k = 0; k < s->n; k++) {
    const net_node *n = &net->nodes[k];
    s->node_in[k] = loom_shape_numel(&n->in);
    s->node_out[k] = loom_shape_numel(&n->out);
    if (s->node_in[k] > s->row_len) s->row_len = s->node_in[k];
    for (int i = 0; i < n->n_merges; i++) {
      int64_t len = n->merges[i].before_numel + n->merges[i].src_numel;
      if (len > s->row_len) s->row_len = len;
    }
    if (!(s->cur[k] = alloc_floats(batch, s->node_out[k], err)) ||
        !(s->next[k] = alloc_floats(batch, s->node_out[k], err)) ||
        !(s->in_buf[k] = alloc_floats(batch, s->node_in[k], err)))
      goto fail;
    s->rec_off[k] = s->rec_stride;
    s->rec_stride += batch * s->node_in[k];
  }
  if (!(s->row = alloc_floats(1, s->row_len, err))) goto fail;
  return s;
fail:
  loom_systolic_free(s);
  return NULL;
}

/* The plan may not change under a runner: its buffers follow the shapes. */
int systolic_check_plan(const loom_systolic *s, loom_error *err) {
  loom_net *net = s->net;
  loom_error ignored = {0};
  /* Re-infers when a layer changed; then only equal sizes let the runner go on. */
  bool same = net_ensure_plan(net, &ignored) == LOOM_OK && net->n_nodes == s->n;
  for (int k = 0; same && k < s->n; k++)
    same = loom_shape_numel(&net->nodes[k].in) == s->node_in[k] && loom_shape_numel(&net->nodes[k].out) == s->node_out[k];
  if (!same)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("the network changed since its systolic runner was made; make a new one"));
  return LOOM_OK;
}

LOOM_API int loom_systolic_set_input(loom_systolic *s, const float *x, loom_error *err) {
  if (!s || !x) return loom_error_set(err, LOOM_ERR_INVALID, _("no systolic runner or input given"));
  memcpy(s->x, x, (size_t)(s->batch * s->in_numel) * sizeof *x);
  return LOOM_OK;
}

static const float *committed(const loom_systolic *s, int k) { return k < 0 ? s->x : s->cur[k]; }
static int64_t committed_numel(const loom_systolic *s, int k) { return k < 0 ? s->in_numel : s->node_out[k]; }

static void apply_merge(float *row, int64_t *len, const net_merge *g, const float *src) {
  switch (g->mode) {
  case LOOM_MERGE_REPLACE:
    memcpy(row, src, (size_t)g->src_numel * sizeof *row);
    *len = g->src_numel;
    break;
  case LOOM_MERGE_ADD:
    for (int64_t j = 0; j < *len; j++) row[j] += src[j];
    break;
  case LOOM_MERGE_CONCAT:
    memcpy(row + *len, src, (size_t)g->src_numel * sizeof *row);
    *len += g->src_numel;
    break;
  }
}

/* Node k's input from the committed outputs: spine, forward links, feedback links. */
static void merge_inputs(loom_systolic *s, const net_node *n, int k) {
  int64_t base_numel = committed_numel(s, n->pred);
  const float *base = committed(s, n->pred);
  for (int64_t b = 0; b < s->batch; b++) {
    float *row = s->row;
    int64_t len = base_numel;
    memcpy(row, base + b * base_numel, (size_t)base_numel * sizeof *row);
    for (int i = 0; i < n->n_merges; i++)
      apply_merge(row, &len, &n->merges[i], s->cur[n->merges[i].src_node] + b * n->merges[i].src_numel);
    for (int i = 0; i < n->n_feedback; i++)
      apply_merge(row, &len, &n->feedback[i], s->cur[n->feedback[i].src_node] + b * n->feedback[i].src_numel);
    memcpy(s->in_buf[k] + b * s->node_in[k], row, (size_t)s->node_in[k] * sizeof *row);
  }
}

static int record_tick(loom_systolic *s, loom_error *err) {
  if (s->n_rec >= SYSTOLIC_MAX_RECORDED)
    return loom_error_set(err, LOOM_ERR_RANGE, _("%d recorded ticks are the most a systolic runner keeps"),
                          SYSTOLIC_MAX_RECORDED);
  if (s->n_rec == s->rec_cap) {
    int64_t cap = s->rec_cap ? s->rec_cap * 2 : 16;
    float **grown = realloc(s->rec, (size_t)cap * sizeof *grown);
    if (!grown) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory recording a tick"));
    s->rec = grown;
    s->rec_cap = cap;
  }
  float *block = malloc((size_t)(s->rec_stride > 0 ? s->rec_stride : 1) * sizeof(float));
  if (!block) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory recording a tick"));
  for (int k = 0; k < s->n; k++)
    memcpy(block + s->rec_off[k], s->in_buf[k], (size_t)(s->batch * s->node_in[k]) * sizeof(float));
  s->rec[s->n_rec++] = block;
  return LOOM_OK;
}

LOOM_API int loom_systolic_tick(loom_systolic *s, const loom_ctx *ctx, loom_error *err) {
  if (!s) return loom_error_set(err, LOOM_ERR_INVALID, _("no systolic runner given"));
  int rc = systolic_check_plan(s, err);
  if (rc) return rc;
  for (int k = 0; k < s->n; k++) {
    const net_node *n = &s->net->nodes[k];
    merge_inputs(s, n, k);
    if (!n->enabled) {
      memcpy(s->next[k], s->in_buf[k], (size_t)(s->batch * s->node_out[k]) * sizeof(float));
      continue;
    }
    if ((rc = layer_forward(n->layer, ctx, s->in_buf[k], s->next[k], s->batch, err))) {
      char at[48];
      loom_error_prefix(err, _("tick %lld, slot %s"), (long long)s->ticks + 1, loom_coord_format(n->coord, at, sizeof at));
      return rc;
    }
  }
  if (s->recording && (rc = record_tick(s, err))) return rc;
  float **swap = s->cur;
  s->cur = s->next;
  s->next = swap;
  s->ticks++;
  return LOOM_OK;
}

LOOM_API void loom_systolic_reset(loom_systolic *s) {
  if (!s) return;
  for (int k = 0; k < s->n; k++) {
    memset(s->cur[k], 0, (size_t)(s->batch * s->node_out[k]) * sizeof(float));
    memset(s->next[k], 0, (size_t)(s->batch * s->node_out[k]) * sizeof(float));
    if (k < s->net->n_nodes) loom_layer_reset_state(s->net->nodes[k].layer);
  }
  free_recording(s);
  s->ticks = 0;
}

LOOM_API int64_t loom_systolic_ticks(const loom_systolic *s) { return s ? s->ticks : 0; }
LOOM_API int64_t loom_systolic_batch(const loom_systolic *s) { return s ? s->batch : 0; }
LOOM_API int64_t loom_systolic_n_slots(const loom_systolic *s) { return s ? s->n : 0; }

LOOM_API const float *loom_systolic_output_at(const loom_systolic *s, loom_coord c, int64_t *numel) {
  if (numel) *numel = 0;
  if (!s) return NULL;
  int64_t f = net_flat(s->net, c);
  for (int k = 0; f >= 0 && k < s->n; k++)
    if (s->net->nodes[k].flat == f) {
      if (numel) *numel = s->node_out[k];
      return s->cur[k];
    }
  return NULL;
}

LOOM_API const float *loom_systolic_output(const loom_systolic *s, int64_t *numel) {
  if (numel) *numel = s ? s->node_out[s->n - 1] : 0;
  return s ? s->cur[s->n - 1] : NULL;
}

LOOM_API void loom_systolic_trace(const loom_systolic *s, loom_slot_trace *out) {
  for (int k = 0; s && out && k < s->n; k++) {
    int64_t count = s->batch * s->node_out[k];
    double sum = 0.0, sq = 0.0;
    for (int64_t i = 0; i < count; i++) {
      sum += s->cur[k][i];
      sq += (double)s->cur[k][i] * s->cur[k][i];
    }
    out[k].at = s->net->nodes[k].coord;
    out[k].mean = count > 0 ? sum / (double)count : 0.0;
    out[k].norm = sqrt(sq);
  }
}

LOOM_API int loom_systolic_set_recording(loom_systolic *s, bool on, loom_error *err) {
  if (!s) return loom_error_set(err, LOOM_ERR_INVALID, _("no systolic runner given"));
  if (!on) free_recording(s);
  s->recording = on;
  return LOOM_OK;
}
