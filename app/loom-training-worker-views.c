/*
 * The costly extras of the training worker's snapshots (see the rates in
 * loom-training-worker.c): the weights, the watched activations, the DNA
 * snapshot and the decision field over the plane of two-feature data.
 */
#include "loom-training-worker-private.h"

#include <glib/gi18n.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FIELD_RES 48
#define FIELD_MAX_CHANNELS 16
/* Each DNA snapshot of the timeline stays small: larger layers keep their
 * fixed-length profile only (docs/dna.md). */
#define DNA_MAX_BYTES ((size_t)4 << 20)

/* Output → what the decision view shows: class probabilities, a binary
 * probability, or the raw regression value. */
static void field_activation(const loom_loss_spec *loss, float *row, int channels) {
  if (loss->kind == LOOM_LOSS_CROSS_ENTROPY && channels >= 2) {
    float m = row[0];
    for (int c = 1; c < channels; c++) m = fmaxf(m, row[c]);
    float sum = 0;
    for (int c = 0; c < channels; c++) sum += row[c] = expf(row[c] - m);
    for (int c = 0; c < channels; c++) row[c] /= sum;
  } else if (loss->kind == LOOM_LOSS_BCE_LOGITS && channels == 1) {
    row[0] = 1.0f / (1.0f + expf(-row[0]));
  }
}

/* The network's output for @n samples: a systolic network holds them for
 * the ticks it trains with and is read after the last, as the trainer and
 * loom_evaluate_ticks score it. */
static int field_forward(Worker *w, const float *x, int64_t n, float *y, int64_t channels) {
  loom_ctx ctx = {.pool = w->pool, .training = false};
  if (loom_net_execution(w->net) != LOOM_EXEC_SYSTOLIC) return loom_net_forward(w->net, &ctx, x, n, y, NULL);
  loom_systolic *sys = loom_systolic_new(w->net, n, NULL);
  if (!sys) return LOOM_ERR_INVALID;
  int64_t ticks = loom_trainer_config(w->trainer)->ticks;
  if (ticks <= 0) ticks = loom_systolic_n_slots(sys);
  int rc = loom_systolic_set_input(sys, x, NULL);
  for (int64_t t = 0; rc == LOOM_OK && t < ticks; t++) rc = loom_systolic_tick(sys, &ctx, NULL);
  int64_t numel = 0;
  const float *out = rc == LOOM_OK ? loom_systolic_output(sys, &numel) : NULL;
  if (out && numel == channels) memcpy(y, out, (size_t)(n * channels) * sizeof *y);
  else rc = LOOM_ERR_INVALID;
  loom_systolic_free(sys);
  return rc;
}

/* The network's output over the plane of a two-feature data set. */
static void make_field(Worker *w, LoomTrainingSnapshot *snap) {
  const loom_dataset *train = w->data->train;
  if (train->input_numel != 2) return;
  loom_shape out = loom_net_output_shape(w->net);
  int64_t channels = loom_shape_numel(&out);
  if (channels < 1 || channels > FIELD_MAX_CHANNELS) return;
  double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
  const loom_dataset *sets[2] = {train, w->data->test};
  for (int s = 0; s < 2; s++)
    for (int64_t i = 0; sets[s] && i < sets[s]->n; i++)
      for (int d = 0; d < 2; d++) {
        double v = sets[s]->inputs[i * 2 + d];
        if (!isfinite(v)) continue;
        lo[d] = fmin(lo[d], v);
        hi[d] = fmax(hi[d], v);
      }
  for (int d = 0; d < 2; d++) {
    if (!(hi[d] > lo[d])) {
      lo[d] = isfinite(lo[d]) ? lo[d] - 1 : -1;
      hi[d] = lo[d] + 2;
    }
    double pad = 0.1 * (hi[d] - lo[d]);
    lo[d] -= pad;
    hi[d] += pad;
  }
  int res = FIELD_RES;
  g_autofree float *x = g_new(float, (gsize)res * res * 2);
  for (int r = 0; r < res; r++)
    for (int c = 0; c < res; c++) {
      x[(r * res + c) * 2] = (float)(lo[0] + (hi[0] - lo[0]) * (c + 0.5) / res);
      x[(r * res + c) * 2 + 1] = (float)(lo[1] + (hi[1] - lo[1]) * (r + 0.5) / res);
    }
  float *y = g_new(float, (gsize)res * res * channels);
  if (field_forward(w, x, (int64_t)res * res, y, channels) != LOOM_OK) {
    g_free(y);
    return;
  }
  const loom_loss_spec *loss = &loom_trainer_config(w->trainer)->loss;
  for (int i = 0; i < res * res; i++) field_activation(loss, y + (gsize)i * channels, (int)channels);
  snap->field = y;
  snap->field_res = res;
  snap->field_channels = (int)channels;
  snap->field_regression = loss->kind == LOOM_LOSS_MSE && train->target_kind == LOOM_TARGET_VECTOR;
  snap->field_bounds[0] = lo[0];
  snap->field_bounds[1] = hi[0];
  snap->field_bounds[2] = lo[1];
  snap->field_bounds[3] = hi[1];
}

void worker_make_extras(Worker *w, LoomTrainingSnapshot *snap) {
  if (w->has_watch) {
    int64_t batch = 0;
    /* The trainer's view covers systolic networks (the runner's last tick)
     * and device steps (their copies), which the network's plan does not. */
    const float *a = w->trainer ? loom_trainer_activation(w->trainer, w->watch, &batch)
                                : loom_net_activation(w->net, w->watch, &batch);
    loom_layer *l = loom_net_layer_at(w->net, w->watch);
    if (a && l && batch > 0) {
      loom_shape s = loom_layer_out_shape(l);
      gint64 n = batch * loom_shape_numel(&s);
      snap->watch = g_memdup2(a, (gsize)n * sizeof(float));
      snap->n_watch = n;
      snap->watch_at = w->watch;
    }
  }
  snap->net = loom_net_clone(w->net, NULL);
  snap->net_step = total_steps(w);
  /* Signatures for the DNA view's timeline and its live heatmap; bounded in
   * memory by the engine's default. */
  snap->dna = loom_shared_dna_new(loom_dna_snapshot_new_ex(w->net, snap->net_step, DNA_MAX_BYTES, NULL));
  if (w->trainer) {
    void *bytes = NULL;
    size_t len = 0;
    if (loom_trainer_export_state(w->trainer, &bytes, &len, NULL) == LOOM_OK)
      snap->train_state = g_bytes_new_with_free_func(bytes, len, free, bytes);
    if (w->data) make_field(w, snap); /* after the activations were copied: it runs a forward */
  }
}
