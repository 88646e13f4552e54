/*
 * Target propagation ("tween", docs/trainer.md): every layer gets a target
 * for its output, walking the network backwards from the loss; gap = target −
 * actual; link budget = cos(actual, target); weighted layers whose budget
 * reaches the threshold take the local update Δw = η·budget·v with
 * v ← μ·v + mean over the batch of x·gap (the layer's own parameter
 * gradient of ⟨output, gap⟩, which for dense is gapᵀ·x). A layer whose gap
 * RMS jumps above explosion_factor × its running baseline skips the step and
 * has its rate damped; calm steps let the rate recover. With chain_rule the
 * targets come from gradients: t = a − β·κ·∂L/∂a.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "layers/layer-impl.h"
#include "train/trainer-internal.h"

struct tween_state {
  float **vel;       /* per tensor */
  float **delta;     /* per node: sum of the deltas its consumers asked for */
  int64_t *delta_cap;
  int *contrib;      /* per node: how many consumers sent a delta */
  int64_t *seen;     /* per node: steps with a target */
  float *d, *dx, *probe, *row;
  int64_t d_cap, dx_cap, probe_cap, row_cap;
  int64_t explosions, recoveries;
  int n_nodes, n_tensors;
};

void tween_free(tween_state *s) {
  if (!s) return;
  free(s->d);
  free(s->dx);
  free(s->probe);
  free(s->row);
  for (int i = 0; s->vel && i < s->n_tensors; i++) free(s->vel[i]);
  free(s->vel);
  for (int i = 0; s->delta && i < s->n_nodes; i++) free(s->delta[i]);
  free(s->delta);
  free(s->delta_cap);
  free(s->contrib);
  free(s->seen);
  free(s);
}

tween_state *tween_new(loom_trainer *tr, loom_error *err) {
  tween_state *s = calloc(1, sizeof *s);
  int n = tr->n_nodes;
  if (s) {
    s->vel = calloc((size_t)tr->n_tensors + 1, sizeof *s->vel);
    s->delta = calloc((size_t)n + 1, sizeof *s->delta);
    s->delta_cap = calloc((size_t)n + 1, sizeof *s->delta_cap);
    s->contrib = calloc((size_t)n + 1, sizeof *s->contrib);
    s->seen = calloc((size_t)n + 1, sizeof *s->seen);
  }
  if (!s || !s->vel || !s->delta || !s->delta_cap || !s->contrib || !s->seen) goto nomem;
  s->n_nodes = n;
  s->n_tensors = tr->n_tensors;
  for (int t = 0; t < tr->n_tensors; t++)
    if (!(s->vel[t] = calloc((size_t)tr->tensors[t].n, sizeof(float)))) goto nomem;
  return s;
nomem:
  tween_free(s);
  loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory setting up target propagation"));
  return NULL;
}

void tween_get_view(tween_state *s, tween_view *out) {
  *out = (tween_view){.vel = s->vel, .seen = s->seen, .explosions = &s->explosions, .recoveries = &s->recoveries};
}

static int grow(float **buf, int64_t *cap, int64_t count, loom_error *err) {
  if (count <= *cap && *buf) return LOOM_OK;
  float *g = realloc(*buf, (size_t)(count > 0 ? count : 1) * sizeof *g);
  if (!g) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for %lld target values"), (long long)count);
  *buf = g;
  *cap = count;
  return LOOM_OK;
}

/* κ: the factor that turns dy (of the batch-mean loss) into the per-sample,
 * per-element-normalised gradient, so that −β·κ·dy is β(q − p) for the
 * cross-entropies and β(t − y) for mse. */
static double loss_scale(const loom_trainer *tr, int64_t batch) {
  switch (tr->cfg.loss.kind) {
  case LOOM_LOSS_CROSS_ENTROPY: return (double)batch;
  case LOOM_LOSS_BCE_LOGITS: return (double)(batch * tr->out_width);
  case LOOM_LOSS_MSE: return (double)(batch * tr->out_width) / 2.0;
  case LOOM_LOSS_MULTI_HEAD_CE:
  case LOOM_LOSS_MULTI_HEAD_NLL: return (double)(batch * tr->cfg.loss.heads);
  }
  return (double)batch;
}

/* Sends a node's input delta back through its merges to the producers. */
static int route_delta(tween_state *s, loom_net *net, const net_node *n, const float *dx, int64_t batch,
                       loom_error *err) {
  int64_t in_numel = loom_shape_numel(&n->in), base_numel = loom_shape_numel(&n->base_in);
  bool base_gets = true;
  for (int i = 0; i < n->n_merges; i++)
    if (n->merges[i].mode == LOOM_MERGE_REPLACE) base_gets = false;
  if (n->n_merges == 0) {
    if (n->pred < 0) return LOOM_OK;
    float *dst = s->delta[n->pred];
    for (int64_t i = 0; i < batch * in_numel; i++) dst[i] += dx[i];
    s->contrib[n->pred]++;
    return LOOM_OK;
  }
  int64_t span = in_numel > base_numel ? in_numel : base_numel;
  for (int i = 0; i < n->n_merges; i++) {
    if (n->merges[i].before_numel > span) span = n->merges[i].before_numel;
    if (n->merges[i].src_numel > span) span = n->merges[i].src_numel;
  }
  int rc = grow(&s->row, &s->row_cap, span, err);
  if (rc) return rc;
  for (int64_t b = 0; b < batch; b++) {
    float *row = s->row;
    memcpy(row, dx + b * in_numel, (size_t)in_numel * sizeof *row);
    for (int i = n->n_merges - 1; i >= 0; i--) {
      const net_merge *g = &n->merges[i];
      float *src = s->delta[g->src_node] + b * g->src_numel;
      switch (g->mode) {
      case LOOM_MERGE_REPLACE:
        for (int64_t j = 0; j < g->src_numel; j++) src[j] += row[j];
        memset(row, 0, (size_t)g->before_numel * sizeof *row);
        break;
      case LOOM_MERGE_ADD: /* the least-norm split of a sum: half each */
        for (int64_t j = 0; j < g->src_numel; j++) {
          row[j] *= 0.5f;
          src[j] += row[j];
        }
        break;
      case LOOM_MERGE_CONCAT:
        for (int64_t j = 0; j < g->src_numel; j++) src[j] += row[g->before_numel + j];
        break;
      }
    }
    if (base_gets && n->pred >= 0) {
      float *dst = s->delta[n->pred] + b * base_numel;
      for (int64_t j = 0; j < base_numel; j++) dst[j] += row[j];
    }
  }
  for (int i = 0; i < n->n_merges; i++) s->contrib[n->merges[i].src_node]++;
  if (base_gets && n->pred >= 0) s->contrib[n->pred]++;
  return LOOM_OK;
}

/* gap RMS, budget = cos(a, a + gap); a zero activation has lost nothing (1). */
static void gap_stats(const float *a, const float *gap, int64_t count, double *rms, double *budget) {
  double gg = 0.0, aa = 0.0, tt = 0.0, at = 0.0;
  for (int64_t i = 0; i < count; i++) {
    double av = a[i], t = av + (double)gap[i];
    gg += (double)gap[i] * gap[i];
    aa += av * av;
    tt += t * t;
    at += av * t;
  }
  *rms = count > 0 ? sqrt(gg / (double)count) : 0.0;
  if (aa == 0.0) *budget = 1.0;
  else if (tt == 0.0) *budget = 0.0;
  else *budget = at / (sqrt(aa) * sqrt(tt));
}

/* Updates the running baseline of a node's gap; true when this step exploded. */
static bool explosion_check(loom_trainer *tr, tween_state *s, int k, double rms) {
  const loom_tween_config *c = &tr->cfg.tween;
  loom_layer_stats *st = &tr->lstats[k];
  s->seen[k]++;
  if (s->seen[k] <= c->warmup_steps || st->baseline <= 0.0) {
    st->baseline += (rms - st->baseline) / (double)s->seen[k];
    return false;
  }
  double limit = c->explosion_factor * st->baseline;
  if (rms > limit) {
    st->baseline = c->baseline_decay * st->baseline + (1.0 - c->baseline_decay) * limit;
    st->rate_scale = fmax(c->min_rate_scale, st->rate_scale * c->damping);
    st->explosions++;
    s->explosions++;
    return true;
  }
  st->baseline = c->baseline_decay * st->baseline + (1.0 - c->baseline_decay) * rms;
  if (st->rate_scale < 1.0) {
    st->rate_scale = fmin(1.0, st->rate_scale * c->recovery);
    if (st->rate_scale == 1.0) s->recoveries++;
  }
  return false;
}

static int output_delta(loom_trainer *tr, tween_state *s, int64_t batch, loom_error *err) {
  int last = tr->n_nodes - 1;
  double f = -tr->cfg.tween.target_step * loss_scale(tr, batch);
  int64_t count = batch * tr->out_width;
  for (int64_t i = 0; i < count; i++) s->delta[last][i] = (float)(f * (double)tr->dy[i]);
  s->contrib[last] = 1;
  (void)err;
  return LOOM_OK;
}

static int chain_deltas(loom_trainer *tr, tween_state *s, int64_t batch, loom_error *err) {
  loom_net *net = tr->net;
  int rc = trainer_backward(tr, err);
  if (rc) return rc;
  trainer_refresh_tensors(tr);
  if ((rc = trainer_gradient_pass(tr, err))) return rc;
  double f = -tr->cfg.tween.target_step * loss_scale(tr, batch);
  const net_node *nodes = net_plan_nodes(net);
  for (int k = 0; k < tr->n_nodes; k++) {
    int64_t count = batch * loom_shape_numel(&nodes[k].out);
    const float *g = nodes[k].grad_out;
    for (int64_t i = 0; i < count; i++) s->delta[k][i] = (float)(f * (double)g[i]);
    s->contrib[k] = 1;
  }
  /* mean over the batch of x·gap = −β·κ/B · ∂L/∂w */
  float scale = (float)(f / (double)batch);
  for (int t = 0; t < tr->n_tensors; t++)
    for (int64_t i = 0; i < tr->tensors[t].n; i++) tr->tensors[t].grad[i] *= scale;
  return LOOM_OK;
}

int tween_step(loom_trainer *tr, const loom_batch *b, const float *targets, double lr, loom_error *err) {
  (void)targets;
  tween_state *s = tr->tween;
  loom_net *net = tr->net;
  const loom_tween_config *c = &tr->cfg.tween;
  int64_t batch = b->size;
  int rc;
  const net_node *nodes = net_plan_nodes(net);
  for (int k = 0; k < tr->n_nodes; k++) {
    int64_t count = batch * loom_shape_numel(&nodes[k].out);
    if ((rc = grow(&s->delta[k], &s->delta_cap[k], count, err))) return rc;
    memset(s->delta[k], 0, (size_t)count * sizeof(float));
    s->contrib[k] = 0;
  }
  rc = c->chain_rule ? chain_deltas(tr, s, batch, err) : output_delta(tr, s, batch, err);
  if (rc) return rc;
  tr->last.layers_skipped = 0;
  for (int k = tr->n_nodes - 1; k >= 0; k--) {
    const net_node *n = &nodes[k];
    loom_layer_stats *st = &tr->lstats[k];
    st->has_target = s->contrib[k] > 0;
    st->skipped = st->exploded = false;
    if (!st->has_target) continue;
    int64_t out_numel = loom_shape_numel(&n->out), in_numel = loom_shape_numel(&n->in);
    int64_t count = batch * out_numel;
    float *gap = s->delta[k];
    if (!c->chain_rule && s->contrib[k] > 1) {
      float inv = 1.0f / (float)s->contrib[k];
      for (int64_t i = 0; i < count; i++) gap[i] *= inv;
    }
    int64_t bad = trainer_first_nonfinite(gap, count);
    if (bad >= 0)
      return trainer_report_nonfinite(tr, LOOM_NONFINITE_GRADIENT, TRAINER_BAD_TARGET_GAP, k, -1, bad, out_numel, err);
    gap_stats(n->out_ptr, gap, count, &st->gap_rms, &st->budget);
    st->exploded = explosion_check(tr, s, k, st->gap_rms);
    st->skipped = st->weighted && (st->exploded || st->budget < c->threshold);
    if (st->skipped) tr->last.layers_skipped++;
    bool upstream = n->pred >= 0 || n->n_merges > 0;
    if (c->chain_rule) continue;
    if ((rc = grow(&s->dx, &s->dx_cap, batch * in_numel, err))) return rc;
    if (!n->enabled) {
      if (upstream && (rc = route_delta(s, net, n, gap, batch, err))) return rc;
      continue;
    }
    bool need_backward = st->weighted || upstream;
    float *d = NULL;
    if (need_backward) {
      if (upstream) {
        if ((rc = grow(&s->d, &s->d_cap, batch * in_numel, err))) return rc;
        d = s->d;
      }
      if ((rc = layer_backward(n->layer, &tr->ctx, n->in_ptr, n->out_ptr, gap, d, batch, err))) return rc;
    }
    if (!upstream) continue;
    if ((rc = grow(&s->probe, &s->probe_cap, count, err))) return rc;
    if ((rc = tween_input_delta(n->layer, &tr->ctx, n->in_ptr, n->out_ptr, gap, d, s->dx, s->probe, batch,
                                c->max_input_step, err)))
      return rc;
    if ((rc = route_delta(s, net, n, s->dx, batch, err))) return rc;
  }
  trainer_refresh_tensors(tr);
  float inv = 1.0f / (float)batch;
  for (int t = 0; t < tr->n_tensors; t++) {
    train_tensor *tt = &tr->tensors[t];
    const loom_layer_stats *st = &tr->lstats[tt->node];
    if (!c->chain_rule)
      for (int64_t i = 0; i < tt->n; i++) tt->grad[i] *= inv;
    /* a failure here puts back the tensors already updated (report_nonfinite) */
    tt->grad_sq = train_sum_squares(tt->grad, tt->n);
    if (!isfinite(tt->grad_sq))
      return trainer_report_nonfinite(tr, LOOM_NONFINITE_GRADIENT, TRAINER_BAD_LOCAL_UPDATE, tt->node, t,
                                      trainer_first_nonfinite(tt->grad, tt->n), 0, err);
    if (!st->has_target || st->skipped || !st->enabled) continue;
    trainer_backup(tr, t);
    double rate = lr * st->budget * st->rate_scale;
    float mu = (float)c->momentum;
    float *v = s->vel[t], *w = tr->masters[t];
    for (int64_t i = 0; i < tt->n; i++) {
      v[i] = mu * v[i] + tt->grad[i];
      w[i] = (float)((double)w[i] + rate * (double)v[i]);
    }
  }
  tr->last.explosions = s->explosions;
  tr->last.recoveries = s->recoveries;
  return LOOM_OK;
}
