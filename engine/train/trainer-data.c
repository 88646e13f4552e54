/*
 * What the trainer feeds the loss: choosing a loss that fits the network and
 * the data, checking sizes, turning class labels into float targets for mse
 * and binary cross-entropy, accuracy counts, and evaluation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "train/trainer-internal.h"

/* The layer whose output is the network's output, or NULL. */
static const loom_layer *output_layer(const loom_net *net) {
  int64_t n = loom_net_n_layers(net);
  if (n < 1) return NULL;
  loom_coord c = loom_net_layer_coord(net, n - 1);
  if (!loom_net_is_enabled(net, c)) return NULL;
  return loom_net_layer_at(net, c);
}

static int64_t net_out_width(const loom_net *net) {
  loom_shape s = loom_net_output_shape(net);
  return loom_shape_numel(&s);
}

LOOM_API int loom_train_pick_loss(const loom_net *net, const loom_dataset *ds, loom_loss_spec *spec,
                                  loom_error *err) {
  if (!net || !ds || !spec) return loom_error_set(err, LOOM_ERR_INVALID, _("no network, dataset or loss given"));
  int64_t w = net_out_width(net);
  if (w < 1) return loom_error_set(err, LOOM_ERR_INVALID, _("the network has no output shape yet (shape inference first)"));
  const loom_layer *last = output_layer(net);
  bool sigmoid_out = last && strcmp(loom_layer_type_name(loom_layer_get_type(last)), "sigmoid") == 0;
  memset(spec, 0, sizeof *spec);
  spec->heads = 1;
  if (ds->target_kind == LOOM_TARGET_VECTOR) {
    if (w != ds->target_width)
      return loom_error_set(err, LOOM_ERR_SHAPE,
                            _("the model gives %lld outputs per sample but the data has %lld target values per sample"),
                            (long long)w, (long long)ds->target_width);
    spec->kind = LOOM_LOSS_MSE;
    return LOOM_OK;
  }
  int64_t heads = ds->target_width, classes = ds->n_classes;
  if (heads > 1 || ds->head_mask) { /* a head mask: only the multi-head losses read it */
    if (w != heads * classes)
      return loom_error_set(err, LOOM_ERR_SHAPE,
                            _("the model gives %lld outputs per sample but the data has %lld heads of %lld classes "
                              "(expected %lld outputs)"),
                            (long long)w, (long long)heads, (long long)classes, (long long)(heads * classes));
    /* a grid softmax already gives each head a distribution: NLL, not CE (which would softmax it again) */
    spec->kind = loom_layer_outputs_probabilities(last) ? LOOM_LOSS_MULTI_HEAD_NLL : LOOM_LOSS_MULTI_HEAD_CE;
    spec->heads = heads;
    return LOOM_OK;
  }
  if (w == 1 && classes <= 2) {
    spec->kind = sigmoid_out ? LOOM_LOSS_MSE : LOOM_LOSS_BCE_LOGITS;
    return LOOM_OK;
  }
  if (w == classes && classes >= 2) {
    /* The registry knows which layers output distributions (kmeans by its mode). */
    spec->kind = (sigmoid_out || loom_layer_outputs_probabilities(last)) ? LOOM_LOSS_MSE : LOOM_LOSS_CROSS_ENTROPY;
    return LOOM_OK;
  }
  return loom_error_set(err, LOOM_ERR_SHAPE,
                        _("the model gives %lld outputs per sample but the data has %lld classes (expected %lld "
                          "outputs, or 1 for two classes)"),
                        (long long)w, (long long)classes, (long long)classes);
}

LOOM_API int loom_train_check_data(const loom_net *net, const loom_dataset *ds, const loom_loss_spec *spec,
                                   loom_error *err) {
  if (!net || !ds || !spec) return loom_error_set(err, LOOM_ERR_INVALID, _("no network, dataset or loss given"));
  char a[96], b[96];
  loom_shape in = loom_net_input_shape(net);
  if (loom_shape_numel(&in) != ds->input_numel)
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("the model takes inputs of shape %s (%lld values) but the data's samples have shape %s "
                            "(%lld values)"),
                          loom_shape_format(&in, a, sizeof a), (long long)loom_shape_numel(&in),
                          loom_shape_format(&ds->input_shape, b, sizeof b), (long long)ds->input_numel);
  train_data_view v;
  int rc = train_view_init(&v, ds, spec, net_out_width(net), err);
  train_view_clear(&v);
  return rc;
}

int train_view_init(train_data_view *v, const loom_dataset *ds, const loom_loss_spec *spec, int64_t width,
                    loom_error *err) {
  memset(v, 0, sizeof *v);
  v->ds = ds;
  v->spec = *spec;
  v->width = width;
  const char *loss = loom_loss_name(spec->kind);
  if (!loss) return loom_error_set(err, LOOM_ERR_INVALID, _("unknown loss kind %d"), (int)spec->kind);
  bool multi_head = spec->kind == LOOM_LOSS_MULTI_HEAD_CE || spec->kind == LOOM_LOSS_MULTI_HEAD_NLL;
  if (ds->head_mask && !multi_head)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("the data has a head mask, which only the losses multi_head_ce and multi_head_nll use (the loss is %s)"),
                          loss);
  bool labels = ds->target_kind == LOOM_TARGET_CLASS;
  if (loom_loss_uses_labels(spec->kind)) {
    if (!labels)
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("the loss %s needs class labels but the data has target vectors (use mse)"), loss);
    int64_t heads = multi_head ? spec->heads : 1;
    if (heads < 1 || ds->target_width != heads)
      return loom_error_set(err, LOOM_ERR_SHAPE,
                            dngettext(GETTEXT_PACKAGE,
                                      "the loss %s expects %lld label per sample but the data has %lld",
                                      "the loss %s expects %lld labels per sample but the data has %lld",
                                      (unsigned long)(heads < 1 ? 0 : heads)),
                            loss, (long long)heads, (long long)ds->target_width);
    if (width != heads * ds->n_classes)
      return loom_error_set(err, LOOM_ERR_SHAPE,
                            _("the model gives %lld outputs per sample but the data has %lld classes%s (expected "
                              "%lld outputs for %s)"),
                            (long long)width, (long long)ds->n_classes, heads > 1 ? _(" per head") : "",
                            (long long)(heads * ds->n_classes), loss);
    return LOOM_OK;
  }
  if (!labels) {
    if (width != ds->target_width)
      return loom_error_set(err, LOOM_ERR_SHAPE,
                            _("the model gives %lld outputs per sample but the data has %lld target values per sample"),
                            (long long)width, (long long)ds->target_width);
    return LOOM_OK;
  }
  if (ds->target_width != 1)
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("the loss %s cannot use %lld class labels per sample (use multi_head_ce)"), loss,
                          (long long)ds->target_width);
  v->convert = true;
  if (width == 1 && ds->n_classes <= 2) {
    v->one_hot = false;
  } else if (width == ds->n_classes) {
    v->one_hot = true;
  } else {
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("the model gives %lld outputs per sample but the data has %lld classes (expected %lld "
                            "outputs, or 1 for two classes)"),
                          (long long)width, (long long)ds->n_classes, (long long)ds->n_classes);
  }
  return LOOM_OK;
}

void train_view_clear(train_data_view *v) {
  free(v->conv);
  v->conv = NULL;
  v->conv_cap = 0;
}

int train_view_targets(train_data_view *v, const loom_batch *b, const float **out, loom_error *err) {
  const float *targets = b->targets;
  int64_t n = b->size, w = v->width;
  if (v->convert) {
    if (n * w > v->conv_cap) {
      float *grown = realloc(v->conv, (size_t)(n * w) * sizeof *grown);
      if (!grown) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for %lld targets"), (long long)(n * w));
      v->conv = grown;
      v->conv_cap = n * w;
    }
    for (int64_t i = 0; i < n; i++) {
      int32_t c = b->labels[i];
      if (v->one_hot) {
        for (int64_t j = 0; j < w; j++) v->conv[i * w + j] = j == c ? 1.0f : 0.0f;
      } else {
        v->conv[i * w] = (float)c;
      }
    }
    targets = v->conv;
  }
  *out = targets;
  return LOOM_OK;
}

int train_view_loss(train_data_view *v, const loom_batch *b, const float *y, double *loss, float *dy,
                    int64_t *correct, int64_t *counted, const float **targets_out, loom_error *err) {
  const float *targets = NULL;
  int64_t n = b->size, w = v->width;
  int rc = train_view_targets(v, b, &targets, err);
  if (rc) return rc;
  if (targets_out) *targets_out = loom_loss_uses_labels(v->spec.kind) ? NULL : targets;
  rc = loom_loss_eval(&v->spec, y, n, w, b->labels, targets, b->head_mask, loss, dy, err);
  if (rc) return rc;
  switch (v->spec.kind) {
  case LOOM_LOSS_CROSS_ENTROPY:
    *correct += loom_count_correct_argmax(y, b->labels, n, w);
    *counted += n;
    break;
  case LOOM_LOSS_MULTI_HEAD_CE:
  case LOOM_LOSS_MULTI_HEAD_NLL: {
    loom_head_counts hc = {0};
    loom_count_correct_heads(y, b->labels, b->head_mask, n, v->spec.heads, w / v->spec.heads, &hc, NULL, NULL);
    *correct += hc.correct;
    *counted += hc.active;
    break;
  }
  case LOOM_LOSS_BCE_LOGITS:
    *correct += loom_count_correct_binary(y, targets, n * w, 0.0);
    *counted += n * w;
    break;
  case LOOM_LOSS_MSE:
    if (v->convert && v->one_hot) {
      *correct += loom_count_correct_argmax(y, b->labels, n, w);
      *counted += n;
    } else if (v->convert) {
      *correct += loom_count_correct_binary(y, targets, n, 0.5);
      *counted += n;
    }
    break;
  }
  return LOOM_OK;
}

LOOM_API int loom_evaluate(loom_net *net, loom_pool *pool, const loom_dataset *ds, const loom_loss_spec *spec,
                           int64_t batch_size, loom_eval_result *out, loom_error *err) {
  return loom_evaluate_ticks(net, pool, ds, spec, batch_size, 0, out, err);
}

LOOM_API int loom_evaluate_ticks(loom_net *net, loom_pool *pool, const loom_dataset *ds, const loom_loss_spec *spec,
                                 int64_t batch_size, int64_t ticks, loom_eval_result *out, loom_error *err) {
  if (ticks < 0 || ticks > LOOM_TRAIN_MAX_TICKS)
    return loom_error_set(err, LOOM_ERR_INVALID, _("ticks must be 0 (one per slot) or 1 to %d, got %lld"),
                          LOOM_TRAIN_MAX_TICKS, (long long)ticks);
  if (!net || !ds || !spec || !out)
    return loom_error_set(err, LOOM_ERR_INVALID, _("no network, dataset, loss or result given"));
  if (batch_size < 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("batch_size must be at least 1, got %lld"), (long long)batch_size);
  memset(out, 0, sizeof *out);
  int rc = net_plan_ensure(net, err);
  if (rc) return rc;
  if ((rc = loom_train_check_data(net, ds, spec, err))) return rc;
  train_data_view v;
  if ((rc = train_view_init(&v, ds, spec, net_out_width(net), err))) return rc;
  loom_batcher *batches = loom_batcher_new(ds, batch_size, false, false, 0, err);
  int64_t bs = batch_size < ds->n ? batch_size : ds->n;
  float *y = batches ? malloc((size_t)(bs * v.width) * sizeof *y) : NULL;
  if (batches && !y) rc = loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for %lld outputs"), (long long)(bs * v.width));
  if (!batches) rc = err ? err->code : LOOM_ERR_NOMEM;
  loom_ctx ctx = {.pool = pool, .training = false};
  double sum = 0.0;
  bool systolic = loom_net_execution(net) == LOOM_EXEC_SYSTOLIC;
  loom_systolic *runner = NULL;
  for (int64_t i = 0; !rc && i < loom_batcher_n_batches(batches); i++) {
    loom_batch b;
    double loss;
    if ((rc = loom_batcher_get(batches, i, &b, err))) break;
    if (systolic)
      rc = train_systolic_run(net, &runner, &ctx, b.inputs, b.size, train_ticks_for(net, ticks), false, y, err);
    else
      rc = loom_net_forward(net, &ctx, b.inputs, b.size, y, err);
    if (rc) break;
    if ((rc = train_view_loss(&v, &b, y, &loss, NULL, &out->correct, &out->counted, NULL, err))) break;
    sum += loss * (double)b.size;
    out->samples += b.size;
  }
  free(y);
  loom_systolic_free(runner);
  loom_batcher_free(batches);
  train_view_clear(&v);
  if (rc) return rc;
  out->loss = out->samples ? sum / (double)out->samples : 0.0;
  out->accuracy = out->counted ? (double)out->correct / (double)out->counted : NAN;
  return LOOM_OK;
}
