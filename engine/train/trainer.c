/*
 * The step-based trainer (loom/train.h, docs/trainer.md): one
 * mini-batch per loom_trainer_step, epochs of seeded shuffles, train/test
 * metrics, early stopping, checkpoints and the NaN watchdog. Backprop lives
 * here; target propagation in tween.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "loom/model.h"
#include "train/trainer-internal.h"

LOOM_API const char *loom_train_method_name(loom_train_method m) {
  switch (m) {
  case LOOM_TRAIN_BACKPROP: return "backprop";
  case LOOM_TRAIN_TWEEN: return "tween";
  }
  return NULL;
}

LOOM_API int loom_train_method_from_name(const char *name, loom_train_method *out, loom_error *err) {
  for (int m = 0; m <= LOOM_TRAIN_TWEEN; m++)
    if (name && strcmp(name, loom_train_method_name((loom_train_method)m)) == 0) {
      if (out) *out = (loom_train_method)m;
      return LOOM_OK;
    }
  return loom_error_set(err, LOOM_ERR_INVALID, _("unknown training method “%s” (expected backprop or tween)"),
                        name ? name : "(null)");
}

LOOM_API loom_tween_config loom_tween_config_default(void) {
  return (loom_tween_config){.threshold = 0.2,
                             .momentum = 0.9,
                             .target_step = 0.3,
                             .max_input_step = 4.0,
                             .explosion_factor = 4.0,
                             .baseline_decay = 0.9,
                             .warmup_steps = 5,
                             .damping = 0.5,
                             .recovery = 1.1,
                             .min_rate_scale = 1.0 / 1024.0,
                             .chain_rule = false};
}

LOOM_API loom_train_config loom_train_config_default(void) {
  loom_train_config c;
  memset(&c, 0, sizeof c);
  c.method = LOOM_TRAIN_BACKPROP;
  c.loss.kind = LOOM_LOSS_CROSS_ENTROPY;
  c.loss.heads = 1;
  c.optim = loom_optim_defaults(LOOM_OPTIM_ADAM);
  c.schedule = loom_schedule_constant(1e-3);
  c.batch_size = 32;
  c.epochs = 10;
  c.shuffle = true;
  c.tween = loom_tween_config_default();
  return c;
}

static bool in_range(double v, double lo, double hi) { return isfinite(v) && v >= lo && v <= hi; }

LOOM_API int loom_train_config_validate(const loom_train_config *c, loom_error *err) {
  if (!c) return loom_error_set(err, LOOM_ERR_INVALID, _("no training configuration given"));
  if (!loom_train_method_name(c->method))
    return loom_error_set(err, LOOM_ERR_INVALID, _("method: unknown training method %d"), (int)c->method);
  if (c->batch_size < 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("batch_size must be at least 1, got %lld"), (long long)c->batch_size);
  if (c->epochs < 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("epochs must be at least 1, got %lld"), (long long)c->epochs);
  if (!in_range(c->clip_norm, 0, INFINITY))
    return loom_error_set(err, LOOM_ERR_INVALID, _("clip_norm must be 0 (off) or positive, got %g"), c->clip_norm);
  if (c->patience < 0) return loom_error_set(err, LOOM_ERR_INVALID, _("patience must be 0 (off) or positive, got %d"), c->patience);
  if (c->ticks < 0 || c->ticks > LOOM_TRAIN_MAX_TICKS)
    return loom_error_set(err, LOOM_ERR_INVALID, _("ticks must be 0 (one per slot) or 1 to %d, got %lld"),
                          LOOM_TRAIN_MAX_TICKS, (long long)c->ticks);
  if (!in_range(c->min_delta, 0, INFINITY))
    return loom_error_set(err, LOOM_ERR_INVALID, _("min_delta must be a finite value >= 0, got %g"), c->min_delta);
  if ((c->loss.kind == LOOM_LOSS_MULTI_HEAD_CE || c->loss.kind == LOOM_LOSS_MULTI_HEAD_NLL) && c->loss.heads < 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("loss.heads must be at least 1, got %lld"), (long long)c->loss.heads);
  if (!in_range(c->loss.label_smoothing, 0, 1))
    return loom_error_set(err, LOOM_ERR_INVALID, _("loss.label_smoothing must lie in [0, 1], got %g"), c->loss.label_smoothing);
  int rc = loom_schedule_validate(&c->schedule, err);
  if (rc) return rc;
  if (c->method == LOOM_TRAIN_BACKPROP) return loom_optim_config_validate(&c->optim, err);
  const loom_tween_config *t = &c->tween;
  if (!in_range(t->threshold, -1, 1))
    return loom_error_set(err, LOOM_ERR_INVALID, _("tween.threshold must lie in [-1, 1], got %g"), t->threshold);
  if (!in_range(t->momentum, 0, 0.999999))
    return loom_error_set(err, LOOM_ERR_INVALID, _("tween.momentum must lie in [0, 1), got %g"), t->momentum);
  if (!in_range(t->target_step, 1e-12, 1e6))
    return loom_error_set(err, LOOM_ERR_INVALID, _("tween.target_step must be positive, got %g"), t->target_step);
  if (!in_range(t->max_input_step, 1e-12, 1e6))
    return loom_error_set(err, LOOM_ERR_INVALID, _("tween.max_input_step must be positive, got %g"), t->max_input_step);
  if (!in_range(t->explosion_factor, 1.0 + 1e-12, 1e12))
    return loom_error_set(err, LOOM_ERR_INVALID, _("tween.explosion_factor must be above 1, got %g"), t->explosion_factor);
  if (!in_range(t->baseline_decay, 0, 0.999999))
    return loom_error_set(err, LOOM_ERR_INVALID, _("tween.baseline_decay must lie in [0, 1), got %g"), t->baseline_decay);
  if (t->warmup_steps < 0)
    return loom_error_set(err, LOOM_ERR_INVALID, _("tween.warmup_steps must be >= 0, got %d"), t->warmup_steps);
  if (!in_range(t->damping, 1e-12, 0.999999))
    return loom_error_set(err, LOOM_ERR_INVALID, _("tween.damping must lie in (0, 1), got %g"), t->damping);
  if (!in_range(t->recovery, 1.0, 1e6))
    return loom_error_set(err, LOOM_ERR_INVALID, _("tween.recovery must be >= 1, got %g"), t->recovery);
  if (!in_range(t->min_rate_scale, 1e-12, 1))
    return loom_error_set(err, LOOM_ERR_INVALID, _("tween.min_rate_scale must lie in (0, 1], got %g"), t->min_rate_scale);
  return LOOM_OK;
}

static int setup_tensors(loom_trainer *tr, loom_error *err) {
  loom_net *net = tr->net;
  /* A net loaded for inference gets its masters and gradients back here,
   * with an error naming the tensor should that run out of memory. */
  int rc = loom_net_prepare_training(net, err);
  if (rc) return rc;
  tr->n_nodes = net_plan_n_nodes(net);
  int n = 0;
  const net_node *nodes = net_plan_nodes(net);
  for (int k = 0; k < tr->n_nodes; k++) n += loom_layer_n_weights(nodes[k].layer);
  tr->n_tensors = n;
  size_t cnt = (size_t)(n > 0 ? n : 1);
  tr->lstats = calloc((size_t)(tr->n_nodes > 0 ? tr->n_nodes : 1), sizeof *tr->lstats);
  tr->tensors = calloc(cnt, sizeof *tr->tensors);
  tr->masters = calloc(cnt, sizeof *tr->masters);
  tr->grads = calloc(cnt, sizeof *tr->grads);
  tr->sizes = calloc(cnt, sizeof *tr->sizes);
  if (!tr->lstats || !tr->tensors || !tr->masters || !tr->grads || !tr->sizes)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory setting up training"));
  trainer_refresh_tensors(tr);
  tr->total_params = 0;
  for (int t = 0; t < n; t++) tr->total_params += tr->tensors[t].n;
  if (trainer_stats_setup(tr, err)) return err ? err->code : LOOM_ERR_NOMEM;
  tr->before = malloc((size_t)(tr->total_params > 0 ? tr->total_params : 1) * sizeof *tr->before);
  if (!tr->before) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory setting up training"));
  for (int k = 0; k < tr->n_nodes; k++) {
    loom_layer_stats *s = &tr->lstats[k];
    const net_node *nd = &nodes[k];
    s->at = nd->coord;
    s->type_name = loom_layer_type_name(loom_layer_get_type(nd->layer));
    s->dtype = loom_layer_get_dtype(nd->layer);
    s->enabled = nd->enabled;
    s->weighted = loom_layer_n_weights(nd->layer) > 0;
    s->rate_scale = 1.0;
  }
  return LOOM_OK;
}

static double serial_step_flops = TRAIN_SERIAL_STEP_FLOPS;

void train_set_serial_step_flops(double flops) { serial_step_flops = flops; }

loom_pool *train_step_pool(const loom_trainer *tr) { return tr->pool; }

LOOM_API loom_trainer *loom_trainer_new(loom_net *net, const loom_dataset *train, const loom_dataset *test,
                                        const loom_train_config *cfg, loom_pool *pool, loom_error *err) {
  if (!net || !train || !cfg) {
    loom_error_set(err, LOOM_ERR_INVALID, _("no network, training data or configuration given"));
    return NULL;
  }
  if (loom_train_config_validate(cfg, err)) return NULL;
  if (net_plan_ensure(net, err)) return NULL;
  if (loom_dataset_validate(train, err)) {
    loom_error_prefix(err, _("training data"));
    return NULL;
  }
  if (loom_train_check_data(net, train, &cfg->loss, err)) {
    loom_error_prefix(err, _("training data"));
    return NULL;
  }
  if (test && (loom_dataset_validate(test, err) || loom_train_check_data(net, test, &cfg->loss, err))) {
    loom_error_prefix(err, _("test data"));
    return NULL;
  }
  loom_trainer *tr = calloc(1, sizeof *tr);
  if (!tr) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory setting up training"));
    return NULL;
  }
  tr->net = net;
  tr->train = train;
  tr->test = test;
  tr->cfg = *cfg;
  tr->pool = pool;
  tr->ctx = (loom_ctx){.pool = pool, .training = true, .seed = cfg->seed};
  tr->best_epoch = -1;
  tr->best_loss = INFINITY;
  loom_shape out = loom_net_output_shape(net);
  tr->out_width = loom_shape_numel(&out);
  tr->in_numel = train->input_numel;
  int rc = train_view_init(&tr->view, train, &cfg->loss, tr->out_width, err);
  if (!rc) {
    tr->batcher = loom_batcher_new(train, cfg->batch_size, cfg->shuffle, cfg->drop_last, cfg->seed, err);
    if (!tr->batcher) rc = err ? err->code : LOOM_ERR_NOMEM;
  }
  if (!rc) {
    tr->n_batches = loom_batcher_n_batches(tr->batcher);
    if (tr->n_batches < 1)
      rc = loom_error_set(err, LOOM_ERR_INVALID,
                          _("the training data (%lld samples) gives no batch of %lld with drop_last"),
                          (long long)train->n, (long long)cfg->batch_size);
  }
  int64_t bs = cfg->batch_size < train->n ? cfg->batch_size : train->n;
  /* A step this small runs on the calling thread whatever the pool: its
   * hand-offs cost more than sharing the work saves (the digits CNN, 0.55
   * MFLOP forward a step, trained slower on two threads than on one).
   * Nothing depends on the thread count, so the bits are the same. */
  if (pool && loom_pool_size(pool) > 1 && (double)loom_net_flops(net) * (double)bs < serial_step_flops) {
    tr->pool = NULL;
    tr->ctx.pool = NULL;
  }
  if (!rc && tr->out_width > 0 && bs > INT64_MAX / 4 / tr->out_width)
    rc = loom_error_set(err, LOOM_ERR_NOMEM, _("a batch of %lld × %lld outputs is too large"), (long long)bs,
                        (long long)tr->out_width);
  if (!rc) {
    tr->y_cap = bs * tr->out_width;
    tr->y = malloc((size_t)tr->y_cap * sizeof *tr->y);
    tr->dy = malloc((size_t)tr->y_cap * sizeof *tr->dy);
    if (!tr->y || !tr->dy) rc = loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for %lld outputs"), (long long)tr->y_cap);
  }
  if (!rc) rc = setup_tensors(tr, err);
  if (!rc) rc = trainer_setup_passes(tr, err);
  if (!rc && cfg->method == LOOM_TRAIN_BACKPROP && tr->n_tensors > 0) {
    tr->opt = loom_optim_new(&cfg->optim, tr->n_tensors, tr->sizes, err);
    if (!tr->opt) rc = err ? err->code : LOOM_ERR_NOMEM;
    else loom_optim_set_pool(tr->opt, tr->pool);
  }
  if (!rc && cfg->method == LOOM_TRAIN_TWEEN) {
    tr->tween = tween_new(tr, err);
    if (!tr->tween) rc = err ? err->code : LOOM_ERR_NOMEM;
  }
  if (!rc && tr->n_tensors == 0)
    rc = loom_error_set(err, LOOM_ERR_INVALID, _("the network has no trainable weights"));
  if (!rc) rc = trainer_morph_all(tr, err);
  if (rc) {
    loom_trainer_free(tr);
    return NULL;
  }
  loom_batcher_set_epoch(tr->batcher, 0);
  return tr;
}

LOOM_API void loom_trainer_free(loom_trainer *tr) {
  if (!tr) return;
  loom_batcher_free(tr->batcher);
  train_view_clear(&tr->view);
  free(tr->y);
  free(tr->dy);
  free(tr->lstats);
  free(tr->tensors);
  free(tr->masters);
  free(tr->grads);
  free(tr->sizes);
  free(tr->before);
  free(tr->dead_units);
  loom_optim_free(tr->opt);
  tween_free(tr->tween);
  loom_net_free(tr->best_net);
  gpu_train_free(tr->dev);
  trainer_free_passes(tr);
  free(tr);
}

LOOM_API const loom_train_config *loom_trainer_config(const loom_trainer *tr) { return tr ? &tr->cfg : NULL; }
LOOM_API const loom_step_stats *loom_trainer_last_step(const loom_trainer *tr) { return tr ? &tr->last : NULL; }
LOOM_API const loom_epoch_stats *loom_trainer_last_epoch(const loom_trainer *tr) {
  return tr && tr->has_epoch ? &tr->last_epoch : NULL;
}
LOOM_API int64_t loom_trainer_epoch(const loom_trainer *tr) { return tr ? tr->epoch : 0; }
LOOM_API int64_t loom_trainer_steps(const loom_trainer *tr) { return tr ? tr->steps : 0; }
LOOM_API int64_t loom_trainer_batches_per_epoch(const loom_trainer *tr) { return tr ? tr->n_batches : 0; }
LOOM_API bool loom_trainer_finished(const loom_trainer *tr) { return !tr || tr->finished; }
LOOM_API int64_t loom_trainer_best_epoch(const loom_trainer *tr) { return tr ? tr->best_epoch : -1; }

/* Copies the masters of `src` (same architecture) into `dst`. */
static int copy_weights(loom_net *dst, const loom_net *src, loom_error *err) {
  int64_t n = loom_net_n_layers(dst);
  if (n != loom_net_n_layers(src)) return loom_error_set(err, LOOM_ERR_INVALID, _("the network changed during training"));
  for (int64_t i = 0; i < n; i++) {
    loom_layer *a = loom_net_layer_at(dst, loom_net_layer_coord(dst, i));
    loom_layer *b = loom_net_layer_at(src, loom_net_layer_coord(src, i));
    if (loom_layer_n_weights(a) != loom_layer_n_weights(b))
      return loom_error_set(err, LOOM_ERR_INVALID, _("the network changed during training"));
    for (int t = 0; t < loom_layer_n_weights(a); t++) {
      loom_weights *wa = loom_layer_weights(a, t), *wb = loom_layer_weights(b, t);
      if (loom_weights_count(wa) != loom_weights_count(wb))
        return loom_error_set(err, LOOM_ERR_INVALID, _("the network changed during training"));
      memcpy(loom_weights_master(wa), loom_weights_master_const(wb), (size_t)loom_weights_count(wa) * sizeof(float));
      loom_weights_touch(wa);
    }
  }
  return LOOM_OK;
}

LOOM_API int loom_trainer_restore_best(loom_trainer *tr, loom_error *err) {
  if (!tr) return loom_error_set(err, LOOM_ERR_INVALID, _("no trainer given"));
  if (!tr->best_net) return loom_error_set(err, LOOM_ERR_INVALID, _("no best epoch has been kept (patience is 0)"));
  int rc = copy_weights(tr->net, tr->best_net, err);
  if (!rc) rc = trainer_morph_all(tr, err);
  if (!rc && tr->dev) rc = gpu_train_upload(tr->dev, false, err); /* the next step starts from them */
  return rc;
}

LOOM_API int loom_trainer_save_checkpoint(const loom_trainer *tr, const char *path, loom_error *err) {
  if (!tr || !path) return loom_error_set(err, LOOM_ERR_INVALID, _("no trainer or path given"));
  return loom_model_save(tr->net, path, err);
}

static int backprop_update(loom_trainer *tr, double lr, loom_error *err) {
  int rc = trainer_backward(tr, err);
  if (rc) return rc;
  trainer_refresh_tensors(tr);
  if ((rc = trainer_gradient_pass(tr, err))) return rc;
  double norm = 0.0;
  if (tr->cfg.clip_norm > 0) {
    rc = loom_clip_grad_norm((float *const *)tr->grads, tr->sizes, tr->n_tensors, tr->cfg.clip_norm, 2.0, false,
                             &norm, err);
    if (rc) return rc;
    /* the layers' grad_norm is of the gradient the update uses: clipped */
    for (int t = 0; t < tr->n_tensors; t++)
      if (tr->grads[t]) tr->tensors[t].grad_sq = train_sum_squares_on(tr->pool, tr->grads[t], tr->sizes[t]);
  } else {
    for (int t = 0; t < tr->n_tensors; t++)
      if (tr->grads[t]) norm += tr->tensors[t].grad_sq;
    norm = sqrt(norm);
  }
  tr->last.grad_norm = norm;
  /* a tensor without a gradient (disabled layer) keeps its weights: no copy */
  for (int t = 0; t < tr->n_tensors; t++)
    if (tr->grads[t]) trainer_backup(tr, t);
  return loom_optim_step(tr->opt, tr->masters, tr->grads, lr, err);
}

static void epoch_reset(loom_trainer *tr) {
  tr->ep_loss_sum = tr->ep_seconds = 0.0;
  tr->ep_samples = tr->ep_correct = tr->ep_counted = 0;
}

static int keep_best(loom_trainer *tr, loom_error *err) {
  if (tr->best_net) return copy_weights(tr->best_net, tr->net, err);
  tr->best_net = loom_net_clone(tr->net, err);
  return tr->best_net ? LOOM_OK : (err ? err->code : LOOM_ERR_NOMEM);
}

static int finish_epoch(loom_trainer *tr, loom_error *err) {
  loom_epoch_stats *e = &tr->last_epoch;
  memset(e, 0, sizeof *e);
  e->epoch = tr->epoch;
  e->steps = tr->steps;
  e->train.samples = tr->ep_samples;
  e->train.loss = tr->ep_samples ? tr->ep_loss_sum / (double)tr->ep_samples : 0.0;
  e->train.correct = tr->ep_correct;
  e->train.counted = tr->ep_counted;
  e->train.accuracy = tr->ep_counted ? (double)tr->ep_correct / (double)tr->ep_counted : NAN;
  e->seconds = tr->ep_seconds;
  e->samples_per_second = tr->ep_seconds > 0 ? (double)tr->ep_samples / tr->ep_seconds : 0.0;
  double monitored = e->train.loss;
  if (tr->test) {
    int rc = loom_evaluate_ticks(tr->net, tr->pool, tr->test, &tr->cfg.loss, tr->cfg.batch_size, tr->cfg.ticks,
                                 &e->test, err);
    if (rc) return rc;
    e->has_test = true;
    monitored = e->test.loss;
  }
  e->improved = monitored < tr->best_loss - tr->cfg.min_delta;
  if (e->improved) {
    tr->best_loss = monitored;
    tr->best_epoch = tr->epoch;
    tr->bad_epochs = 0;
    if (tr->cfg.patience > 0) {
      int rc = keep_best(tr, err);
      if (rc) return rc;
    }
  } else {
    tr->bad_epochs++;
  }
  if (tr->cfg.patience > 0 && tr->bad_epochs >= tr->cfg.patience) {
    e->stop = tr->halted = true;
    if (tr->cfg.restore_best) {
      int rc = loom_trainer_restore_best(tr, err);
      if (rc) return rc;
    }
  }
  if (tr->epoch + 1 >= tr->cfg.epochs) e->stop = true;
  tr->has_epoch = true;
  tr->finished = e->stop;
  tr->epoch++;
  tr->batch_index = 0;
  loom_batcher_set_epoch(tr->batcher, (uint64_t)tr->epoch);
  epoch_reset(tr);
  return LOOM_OK;
}

LOOM_API int loom_trainer_step(loom_trainer *tr, loom_step_stats *stats, loom_error *err) {
  if (!tr) return loom_error_set(err, LOOM_ERR_INVALID, _("no trainer given"));
  if (tr->finished)
    return loom_error_set(err, LOOM_ERR_CANCELLED, _("training has finished after %lld steps (epoch %lld)"),
                          (long long)tr->steps, (long long)tr->epoch);
  double t0 = train_now_seconds();
  loom_step_stats *s = &tr->last;
  memset(s, 0, sizeof *s);
  s->step = tr->steps + 1;
  s->epoch = tr->epoch;
  s->batch_index = tr->batch_index;
  s->n_layers = tr->n_nodes;
  s->layers = tr->lstats;
  loom_batch b;
  int rc = loom_batcher_get(tr->batcher, tr->batch_index, &b, err);
  if (rc) return rc;
  s->batch_size = b.size;
  s->lr = loom_schedule_lr(&tr->cfg.schedule, tr->steps);
  tr->ctx.step = (uint64_t)tr->steps;
  tr->ctx.training = true;
  trainer_backup_reset(tr);
  if (tr->dev) {
    rc = trainer_device_step(tr, &b, err);
    if (rc) {
      if (rc == LOOM_ERR_NONFINITE) tr->finished = tr->halted = true;
      return rc;
    }
  } else {
    loom_net_zero_grad(tr->net);
    if ((rc = trainer_forward(tr, &b, err))) return rc;
    const float *targets = NULL;
    if ((rc = train_view_loss(&tr->view, &b, tr->y, &s->loss, tr->dy, &s->correct, &s->counted, &targets, err)))
      return rc;
    trainer_activation_stats(tr);
    if ((rc = trainer_check_activations(tr, s->loss, err))) return rc;
    if (tr->cfg.method == LOOM_TRAIN_BACKPROP)
      rc = backprop_update(tr, s->lr, err);
    else
      rc = tween_step(tr, &b, targets, s->lr, err);
    if (rc) {
      if (rc == LOOM_ERR_NONFINITE) tr->finished = tr->halted = true;
      return rc;
    }
    if ((rc = trainer_weight_pass(tr, err))) return rc;
    if ((rc = trainer_morph_updated(tr, err))) return rc;
  }
  trainer_layer_norms(tr);
  trainer_weight_stats(tr);
  tr->steps++;
  tr->ep_loss_sum += s->loss * (double)b.size;
  tr->ep_samples += b.size;
  tr->ep_correct += s->correct;
  tr->ep_counted += s->counted;
  double seconds = train_now_seconds() - t0;
  tr->ep_seconds += seconds;
  trainer_throughput(tr, s, seconds);
  tr->batch_index++;
  if (tr->batch_index >= tr->n_batches) {
    s->epoch_end = true;
    if ((rc = finish_epoch(tr, err))) return rc;
  }
  if (stats) *stats = *s;
  return LOOM_OK;
}

LOOM_API int loom_trainer_run_epoch(loom_trainer *tr, loom_epoch_stats *out, loom_error *err) {
  if (!tr) return loom_error_set(err, LOOM_ERR_INVALID, _("no trainer given"));
  loom_step_stats s;
  do {
    int rc = loom_trainer_step(tr, &s, err);
    if (rc) return rc;
  } while (!s.epoch_end);
  if (out) *out = tr->last_epoch;
  return LOOM_OK;
}
