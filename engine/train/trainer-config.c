/*
 * The training configuration as a table of fields (trainer-internal.h
 * train_fields): what may change between steps (loom_trainer_set_config) and
 * what is fixed for a trainer's life, and the checkpoint's record of the
 * configuration (train-state.c), both from this one list. A field added to
 * loom_train_config is added here, at the end (the checkpoint's order).
 */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/i18n.h"
#include "train/optim-internal.h"
#include "train/trainer-internal.h"

_Static_assert(sizeof(loom_train_method) == sizeof(int), "enums are stored as int");
_Static_assert(sizeof(loom_optim_kind) == sizeof(int), "enums are stored as int");

#define F(name, kind, member, live) {name, TRAIN_FIELD_##kind, offsetof(loom_train_config, member), live}

/* Fixed: the method and optimizer kind own the state's layout; the loss,
 * batch size, shuffle, drop_last and seed decide which samples the next
 * steps see and what the state means. Everything else steers the next step
 * only. */
const train_field train_fields[] = {
    F("method", INT, method, false),
    F("loss.kind", INT, loss.kind, false),
    F("loss.label_smoothing", DOUBLE, loss.label_smoothing, false),
    F("loss.heads", INT64, loss.heads, false),
    F("optim.kind", INT, optim.kind, false),
    F("optim.weight_decay", DOUBLE, optim.weight_decay, true),
    F("optim.maximize", BOOL, optim.maximize, true),
    F("optim.momentum", DOUBLE, optim.momentum, true),
    F("optim.dampening", DOUBLE, optim.dampening, true),
    F("optim.nesterov", BOOL, optim.nesterov, true),
    F("optim.beta1", DOUBLE, optim.beta1, true),
    F("optim.beta2", DOUBLE, optim.beta2, true),
    F("optim.eps", DOUBLE, optim.eps, true),
    F("optim.amsgrad", BOOL, optim.amsgrad, true),
    F("optim.alpha", DOUBLE, optim.alpha, true),
    F("optim.centered", BOOL, optim.centered, true),
    F("schedule.kind", INT, schedule.kind, true),
    F("schedule.base_lr", DOUBLE, schedule.base_lr, true),
    F("schedule.step_size", INT64, schedule.step_size, true),
    F("schedule.gamma", DOUBLE, schedule.gamma, true),
    F("schedule.t_0", INT64, schedule.t_0, true),
    F("schedule.t_mult", INT64, schedule.t_mult, true),
    F("schedule.eta_min", DOUBLE, schedule.eta_min, true),
    F("schedule.warmup_steps", INT64, schedule.warmup_steps, true),
    F("schedule.warmup_start_factor", DOUBLE, schedule.warmup_start_factor, true),
    F("batch_size", INT64, batch_size, false),
    F("epochs", INT64, epochs, true),
    F("shuffle", BOOL, shuffle, false),
    F("drop_last", BOOL, drop_last, false),
    F("seed", U64, seed, false),
    F("clip_norm", DOUBLE, clip_norm, true),
    F("patience", INT, patience, true),
    F("min_delta", DOUBLE, min_delta, true),
    F("restore_best", BOOL, restore_best, true),
    F("tween.threshold", DOUBLE, tween.threshold, true),
    F("tween.momentum", DOUBLE, tween.momentum, true),
    F("tween.target_step", DOUBLE, tween.target_step, true),
    F("tween.max_input_step", DOUBLE, tween.max_input_step, true),
    F("tween.explosion_factor", DOUBLE, tween.explosion_factor, true),
    F("tween.baseline_decay", DOUBLE, tween.baseline_decay, true),
    F("tween.warmup_steps", INT, tween.warmup_steps, true),
    F("tween.damping", DOUBLE, tween.damping, true),
    F("tween.recovery", DOUBLE, tween.recovery, true),
    F("tween.min_rate_scale", DOUBLE, tween.min_rate_scale, true),
    F("tween.chain_rule", BOOL, tween.chain_rule, true),
    /* not in version 1 states written before it existed (TRAIN_FIELDS_V1) */
    F("ticks", INT64, ticks, true),
};
const int train_n_fields = (int)(sizeof train_fields / sizeof train_fields[0]);

uint64_t train_field_get(const loom_train_config *c, const train_field *f) {
  const char *p = (const char *)c + f->offset;
  switch (f->kind) {
  case TRAIN_FIELD_INT: {
    int v;
    memcpy(&v, p, sizeof v);
    return (uint64_t)(int64_t)v;
  }
  case TRAIN_FIELD_INT64: {
    int64_t v;
    memcpy(&v, p, sizeof v);
    return (uint64_t)v;
  }
  case TRAIN_FIELD_BOOL: {
    bool v;
    memcpy(&v, p, sizeof v);
    return v ? 1u : 0u;
  }
  case TRAIN_FIELD_U64:
  case TRAIN_FIELD_DOUBLE: {
    uint64_t v; /* a double's bits: equal exactly when the stored values are */
    memcpy(&v, p, sizeof v);
    return v;
  }
  }
  return 0;
}

bool train_field_set(loom_train_config *c, const train_field *f, uint64_t bits) {
  char *p = (char *)c + f->offset;
  switch (f->kind) {
  case TRAIN_FIELD_INT: {
    int64_t v = (int64_t)bits;
    if (v < INT32_MIN || v > INT32_MAX) return false;
    int i = (int)v;
    memcpy(p, &i, sizeof i);
    return true;
  }
  case TRAIN_FIELD_BOOL: {
    if (bits > 1) return false;
    bool b = bits == 1;
    memcpy(p, &b, sizeof b);
    return true;
  }
  case TRAIN_FIELD_INT64:
  case TRAIN_FIELD_U64:
  case TRAIN_FIELD_DOUBLE: memcpy(p, &bits, sizeof bits); return true;
  }
  return false;
}

void train_field_format(const loom_train_config *c, const train_field *f, char *buf, size_t size) {
  uint64_t bits = train_field_get(c, f);
  double d;
  switch (f->kind) {
  case TRAIN_FIELD_BOOL: snprintf(buf, size, "%s", bits ? "true" : "false"); return;
  case TRAIN_FIELD_U64: snprintf(buf, size, "%" PRIu64, bits); return;
  case TRAIN_FIELD_DOUBLE:
    memcpy(&d, &bits, sizeof d);
    snprintf(buf, size, "%.17g", d);
    return;
  case TRAIN_FIELD_INT:
  case TRAIN_FIELD_INT64: break;
  }
  /* the enums by name where they have one */
  if (strcmp(f->name, "method") == 0 && loom_train_method_name(c->method))
    snprintf(buf, size, "%s", loom_train_method_name(c->method));
  else if (strcmp(f->name, "optim.kind") == 0)
    snprintf(buf, size, "%s", loom_optim_name(c->optim.kind));
  else if (strcmp(f->name, "loss.kind") == 0 && loom_loss_name(c->loss.kind))
    snprintf(buf, size, "%s", loom_loss_name(c->loss.kind));
  else
    snprintf(buf, size, "%" PRId64, (int64_t)bits);
}

const train_field *train_fixed_difference(const loom_train_config *a, const loom_train_config *b) {
  for (int i = 0; i < train_n_fields; i++) {
    const train_field *f = &train_fields[i];
    /* method-specific parts of the layout: the optimizer kind matters to backprop only */
    if (f->live || (strcmp(f->name, "optim.kind") == 0 && a->method != LOOM_TRAIN_BACKPROP)) continue;
    if (train_field_get(a, f) != train_field_get(b, f)) return f;
  }
  return NULL;
}

LOOM_API int loom_trainer_set_config(loom_trainer *tr, const loom_train_config *cfg, loom_error *err) {
  if (!tr || !cfg) return loom_error_set(err, LOOM_ERR_INVALID, _("no trainer or configuration given"));
  int rc = loom_train_config_validate(cfg, err);
  if (rc) return rc;
  const train_field *f = train_fixed_difference(&tr->cfg, cfg);
  if (f) {
    char was[64], now[64];
    train_field_format(&tr->cfg, f, was, sizeof was);
    train_field_format(cfg, f, now, sizeof now);
    /* TRANSLATORS: the first %s is a configuration field such as "batch_size" or "optim.kind". */
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("%s cannot change while training (it is %s, the new configuration has %s); start a new "
                            "training run instead"),
                          f->name, was, now);
  }
  if (tr->dev && (rc = gpu_train_check_config(cfg, err))) return rc;
  if (tr->opt && (rc = loom_optim_set_config(tr->opt, &cfg->optim, err))) return rc;
  tr->cfg = *cfg;
  /* more epochs continue a run that ended by its count; early stopping and NaN stops stay */
  if (!tr->halted) tr->finished = tr->epoch >= cfg->epochs;
  return LOOM_OK;
}
