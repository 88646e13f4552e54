/*
 * The trainer's watchdogs and per-layer statistics: NaN/inf scans in the
 * order values are computed (activations forward, gradients backward, then
 * the updated masters), norms for the live views, and re-morphing after an
 * update (quantization-aware training).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/i18n.h"
#include "train/trainer-internal.h"

double train_now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int64_t trainer_first_nonfinite(const float *v, int64_t n) {
  for (int64_t i = 0; v && i < n; i++)
    if (!isfinite(v[i])) return i;
  return -1;
}

int trainer_report_nonfinite(loom_trainer *tr, loom_nonfinite_where where, int node, const char *what, int64_t index,
                             int64_t per_sample, loom_error *err) {
  tr->last.nonfinite = where;
  tr->finished = true;
  long long step = (long long)(tr->steps + 1), epoch = (long long)tr->epoch, batch = (long long)tr->batch_index;
  if (node < 0) {
    tr->last.nonfinite_has_coord = false;
    return loom_error_set(err, LOOM_ERR_NONFINITE,
                          _("training stopped at step %lld (epoch %lld, batch %lld): the loss is not finite although "
                            "every layer's output is"),
                          step, epoch, batch);
  }
  const net_node *n = &tr->net->nodes[node];
  char at[48];
  loom_coord_format(n->coord, at, sizeof at);
  tr->last.nonfinite_at = n->coord;
  tr->last.nonfinite_has_coord = true;
  const char *type = loom_layer_type_name(loom_layer_get_type(n->layer));
  if (per_sample > 0)
    return loom_error_set(err, LOOM_ERR_NONFINITE,
                          _("training stopped at step %lld (epoch %lld, batch %lld): NaN or infinity first appeared in "
                            "%s of layer %s at %s (sample %lld, element %lld)"),
                          step, epoch, batch, what, type, at, (long long)(index / per_sample),
                          (long long)(index % per_sample));
  return loom_error_set(err, LOOM_ERR_NONFINITE,
                        _("training stopped at step %lld (epoch %lld, batch %lld): NaN or infinity first appeared in "
                          "%s of layer %s at %s (element %lld)"),
                        step, epoch, batch, what, type, at, (long long)index);
}

/* "the gradient of ‘children[1].bias’" for tensor t. */
static const char *tensor_what(const loom_trainer *tr, int t, const char *fmt, char *buf, size_t size) {
  const train_tensor *tt = &tr->tensors[t];
  char path[128];
  loom_layer_weights_path(tr->net->nodes[tt->node].layer, tt->index, path, sizeof path);
  snprintf(buf, size, fmt, path);
  return buf;
}

int trainer_check_activations(loom_trainer *tr, double loss, loom_error *err) {
  loom_net *net = tr->net;
  int64_t batch = net->batch;
  if (isfinite(loss)) return LOOM_OK;
  for (int k = 0; k < net->n_nodes; k++) {
    const net_node *n = &net->nodes[k];
    if (!n->enabled) continue;
    int64_t per = loom_shape_numel(&n->out);
    int64_t i = trainer_first_nonfinite(n->out_ptr, batch * per);
    if (i >= 0) return trainer_report_nonfinite(tr, LOOM_NONFINITE_ACTIVATION, k, _("the output"), i, per, err);
  }
  tr->last.nonfinite = LOOM_NONFINITE_LOSS;
  return trainer_report_nonfinite(tr, LOOM_NONFINITE_LOSS, -1, NULL, 0, 0, err);
}

int trainer_check_gradients(loom_trainer *tr, loom_error *err) {
  loom_net *net = tr->net;
  int64_t batch = net->batch;
  /* Backward computes the last layer first, so that is where a NaN appears first. */
  for (int k = net->n_nodes - 1; k >= 0; k--) {
    const net_node *n = &net->nodes[k];
    int64_t per = loom_shape_numel(&n->out);
    int64_t i = trainer_first_nonfinite(n->grad_out, batch * per);
    if (i >= 0)
      return trainer_report_nonfinite(tr, LOOM_NONFINITE_GRADIENT, k, _("the output gradient"), i, per, err);
    for (int t = 0; t < tr->n_tensors; t++) {
      if (tr->tensors[t].node != k) continue;
      i = trainer_first_nonfinite(tr->tensors[t].grad, tr->tensors[t].n);
      char what[192];
      if (i >= 0)
        return trainer_report_nonfinite(tr, LOOM_NONFINITE_GRADIENT, k,
                                        tensor_what(tr, t, _("the gradient of ‘%s’"), what, sizeof what), i, 0, err);
    }
  }
  return LOOM_OK;
}

int trainer_check_weights(loom_trainer *tr, loom_error *err) {
  for (int t = 0; t < tr->n_tensors; t++) {
    int64_t i = trainer_first_nonfinite(loom_weights_master(tr->tensors[t].w), tr->tensors[t].n);
    char what[192];
    if (i >= 0)
      return trainer_report_nonfinite(tr, LOOM_NONFINITE_WEIGHTS, tr->tensors[t].node,
                                      tensor_what(tr, t, _("the updated ‘%s’"), what, sizeof what), i, 0, err);
  }
  return LOOM_OK;
}

void trainer_refresh_tensors(loom_trainer *tr) {
  loom_net *net = tr->net;
  int t = 0;
  for (int k = 0; k < net->n_nodes; k++) {
    loom_layer *l = net->nodes[k].layer;
    int nw = loom_layer_n_weights(l);
    for (int i = 0; i < nw && t < tr->n_tensors; i++, t++) {
      train_tensor *tt = &tr->tensors[t];
      tt->w = loom_layer_weights(l, i);
      tt->grad = loom_layer_grad(l, i);
      tt->n = loom_weights_count(tt->w);
      tt->node = k;
      tt->index = i;
      tr->masters[t] = loom_weights_master(tt->w);
      tr->grads[t] = net->nodes[k].enabled ? tt->grad : NULL;
      tr->sizes[t] = tt->n;
    }
  }
}

static double sum_squares(const float *v, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; v && i < n; i++) s += (double)v[i] * (double)v[i];
  return s;
}

void trainer_activation_stats(loom_trainer *tr) {
  loom_net *net = tr->net;
  int64_t batch = net->batch;
  for (int k = 0; k < net->n_nodes; k++) {
    const net_node *n = &net->nodes[k];
    int64_t count = batch * loom_shape_numel(&n->out);
    tr->lstats[k].act_rms = count > 0 ? sqrt(sum_squares(n->out_ptr, count) / (double)count) : 0.0;
  }
}

void trainer_layer_norms(loom_trainer *tr) {
  int64_t offset = 0;
  for (int k = 0; k < tr->n_nodes; k++) {
    tr->lstats[k].grad_norm = tr->lstats[k].weight_norm = tr->lstats[k].update_norm = 0.0;
  }
  for (int t = 0; t < tr->n_tensors; t++) {
    const train_tensor *tt = &tr->tensors[t];
    loom_layer_stats *s = &tr->lstats[tt->node];
    const float *m = loom_weights_master(tt->w);
    double up = 0.0;
    for (int64_t i = 0; i < tt->n; i++) {
      double d = (double)m[i] - (double)tr->before[offset + i];
      up += d * d;
    }
    s->update_norm += up;
    s->weight_norm += sum_squares(m, tt->n);
    s->grad_norm += sum_squares(tt->grad, tt->n);
    offset += tt->n;
  }
  for (int k = 0; k < tr->n_nodes; k++) {
    loom_layer_stats *s = &tr->lstats[k];
    s->grad_norm = sqrt(s->grad_norm);
    s->weight_norm = sqrt(s->weight_norm);
    s->update_norm = sqrt(s->update_norm);
    s->update_ratio = s->weight_norm > 0 ? s->update_norm / s->weight_norm : 0.0;
  }
}

int trainer_morph_all(loom_trainer *tr, loom_error *err) {
  for (int t = 0; t < tr->n_tensors; t++) {
    loom_weights_touch(tr->tensors[t].w);
    int rc = loom_weights_morph(tr->tensors[t].w, err);
    if (rc) return rc;
  }
  return LOOM_OK;
}
