/*
 * The trainer's per-layer statistics for the live views (docs/trainer.md
 * "Per-layer statistics"), cheap enough for every step: one blocked pass over each
 * layer's output for its moments (shared with act_rms), a dead-unit scan that
 * only revisits units still zero, and the quantization error of a store,
 * computed when the store is re-morphed and cached until its weights change.
 * Every sum runs on the calling thread in a fixed order, so the values do
 * not depend on the thread count.
 */
#include <math.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "core/weights-internal.h"
#include "train/trainer-internal.h"

int trainer_stats_setup(loom_trainer *tr, loom_error *err) {
  const net_node *nodes = net_plan_nodes(tr->net);
  int64_t widest = 1;
  for (int k = 0; k < tr->n_nodes; k++) {
    int64_t per = loom_shape_numel(&nodes[k].out);
    if (per > widest) widest = per;
  }
  if ((uint64_t)widest > SIZE_MAX / sizeof *tr->dead_units)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("a layer output of %lld values is too large"), (long long)widest);
  tr->dead_units = malloc((size_t)widest * sizeof *tr->dead_units);
  if (!tr->dead_units) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory setting up training"));
  tr->unit_cap = widest;
  return LOOM_OK;
}

/* Units (of `per`) that are ±0 in every one of `batch` rows, over per. The
 * first row lists the zero units; each further row keeps those still zero,
 * so a layer without dead units costs one pass over one sample. */
static double dead_fraction(int64_t *cand, const float *v, int64_t batch, int64_t per) {
  if (!v || batch <= 0 || per <= 0) return 0.0;
  int64_t nc = 0;
  for (int64_t j = 0; j < per; j++)
    if (v[j] == 0.0f) cand[nc++] = j;
  for (int64_t b = 1; b < batch && nc > 0; b++) {
    const float *row = v + b * per;
    int64_t keep = 0;
    for (int64_t c = 0; c < nc; c++)
      if (row[cand[c]] == 0.0f) cand[keep++] = cand[c];
    nc = keep;
  }
  return (double)nc / (double)per;
}

void trainer_activation_stats(loom_trainer *tr) {
  const net_node *nodes = net_plan_nodes(tr->net);
  int64_t batch = trainer_batch(tr);
  for (int k = 0; k < tr->n_nodes; k++) {
    loom_layer_stats *st = &tr->lstats[k];
    int64_t per = loom_shape_numel(&nodes[k].out), count = batch * per;
    train_moments m;
    const float *out = trainer_node_out(tr, k);
    train_moments_of(out, count, &m);
    if (count > 0) {
      double n = (double)count, mean = m.sum / n;
      /* population variance from the sums; rounding can leave it just below 0 */
      double var = m.sum_sq / n - mean * mean;
      st->act_rms = sqrt(m.sum_sq / n);
      st->act_mean = mean;
      st->act_std = var > 0.0 ? sqrt(var) : (isnan(var) ? var : 0.0);
    } else {
      st->act_rms = st->act_mean = st->act_std = 0.0;
    }
    st->act_min = m.min;
    st->act_max = m.max;
    st->dead_fraction = per <= tr->unit_cap ? dead_fraction(tr->dead_units, out, batch, per) : 0.0;
  }
}

int trainer_quant_refresh(loom_trainer *tr, int t, loom_error *err) {
  train_tensor *tt = &tr->tensors[t];
  loom_dtype d = loom_weights_dtype(tt->w);
  tt->quant_abs = 0.0;
  if (d == LOOM_DTYPE_FLOAT32 || d == LOOM_DTYPE_FLOAT64) return LOOM_OK; /* the round trip is exact */
  /* the dequantized copy the next forward reads, made on the step's pool */
  const float *e = loom_weights_effective_on(tt->w, train_step_pool(tr), err);
  if (!e) return err ? err->code : LOOM_ERR_INVALID;
  tt->quant_abs = train_sum_abs_diff_on(train_step_pool(tr), loom_weights_master_const(tt->w), e, tt->n);
  return LOOM_OK;
}

void trainer_weight_stats(loom_trainer *tr) {
  for (int k = 0; k < tr->n_nodes; k++) {
    tr->lstats[k].quant_error = 0.0;
    tr->lstats[k].has_weights_stats = false;
  }
  /* tensors of a node are consecutive: sum them, then divide by their count */
  for (int t = 0; t < tr->n_tensors;) {
    int node = tr->tensors[t].node;
    double abs_sum = 0.0;
    int64_t count = 0;
    for (; t < tr->n_tensors && tr->tensors[t].node == node; t++) {
      abs_sum += tr->tensors[t].quant_abs;
      count += tr->tensors[t].n;
    }
    tr->lstats[node].quant_error = count > 0 ? abs_sum / (double)count : 0.0;
    tr->lstats[node].has_weights_stats = true;
  }
}

void trainer_throughput(loom_trainer *tr, loom_step_stats *s, double seconds) {
  s->seconds = seconds;
  tr->tp_seconds[tr->tp_next] = seconds;
  tr->tp_samples[tr->tp_next] = s->batch_size;
  tr->tp_next = (tr->tp_next + 1) % LOOM_TRAIN_THROUGHPUT_WINDOW;
  if (tr->tp_count < LOOM_TRAIN_THROUGHPUT_WINDOW) tr->tp_count++;
  double secs = 0.0;
  int64_t samples = 0;
  for (int i = 0; i < tr->tp_count; i++) {
    secs += tr->tp_seconds[i];
    samples += tr->tp_samples[i];
  }
  s->samples_per_second = secs > 0.0 ? (double)samples / secs : 0.0;
}

LOOM_API const float *loom_trainer_activation(const loom_trainer *tr, loom_coord c, int64_t *batch) {
  *batch = 0;
  if (!tr || tr->steps == 0) return NULL;
  for (int k = 0; k < tr->n_nodes; k++) {
    if (!loom_coord_equal(tr->lstats[k].at, c)) continue;
    const float *out = trainer_node_out(tr, k);
    if (out) *batch = trainer_batch(tr);
    return out;
  }
  return NULL;
}
