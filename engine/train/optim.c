/*
 * torch.optim update rules (1.13, _single_tensor_* functions), one element
 * at a time (Adam's also in vectors, optim-adam.c). Each element's arithmetic follows torch's order of operations
 * in float32 with the scalar coefficients (bias corrections, step sizes)
 * computed in double as Python does, so 20 steps stay within 1e-5 of torch.
 */
#include "loom/optim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "train/optim-internal.h"

typedef struct tensor_state {
  int64_t size;
  int64_t steps;
  float *buf1; /* SGD/RMSprop momentum buffer; Adam exp_avg */
  float *buf2; /* Adam exp_avg_sq; RMSprop square_avg */
  float *buf3; /* Adam max_exp_avg_sq; RMSprop grad_avg */
  bool has_momentum; /* SGD: the buffer was initialised (torch: buf is not None) */
} tensor_state;

struct loom_optim {
  loom_optim_config cfg;
  int n;
  tensor_state *t;
  loom_pool *pool;
};

static const char *const optim_names[] = {"sgd", "adam", "adamw", "rmsprop"};
#define N_OPTIMS ((int)(sizeof optim_names / sizeof optim_names[0]))

LOOM_API const char *loom_optim_name(loom_optim_kind kind) {
  return (int)kind >= 0 && (int)kind < N_OPTIMS ? optim_names[kind] : "unknown";
}

LOOM_API int loom_optim_from_name(const char *name, loom_optim_kind *out, loom_error *err) {
  for (int i = 0; name && i < N_OPTIMS; i++)
    if (strcmp(name, optim_names[i]) == 0) {
      *out = (loom_optim_kind)i;
      return LOOM_OK;
    }
  return loom_error_set(err, LOOM_ERR_INVALID, _("unknown optimizer '%s' (expected sgd, adam, adamw or rmsprop)"),
                        name ? name : "(null)");
}

LOOM_API loom_optim_config loom_optim_defaults(loom_optim_kind kind) {
  loom_optim_config c = {.kind = kind};
  switch (kind) {
  case LOOM_OPTIM_SGD: break;
  case LOOM_OPTIM_ADAMW: c.weight_decay = 1e-2; /* fall through */
  case LOOM_OPTIM_ADAM:
    c.beta1 = 0.9;
    c.beta2 = 0.999;
    c.eps = 1e-8;
    break;
  case LOOM_OPTIM_RMSPROP:
    c.alpha = 0.99;
    c.eps = 1e-8;
    break;
  }
  return c;
}

static int bad_param(loom_error *err, const char *optim, const char *name, double v, const char *expected) {
  return loom_error_set(err, LOOM_ERR_INVALID, _("%s: %s is %g, expected %s"), optim, name, v, expected);
}

LOOM_API int loom_optim_config_validate(const loom_optim_config *c, loom_error *err) {
  if ((int)c->kind < 0 || (int)c->kind >= N_OPTIMS)
    return loom_error_set(err, LOOM_ERR_INVALID, _("unknown optimizer kind %d"), (int)c->kind);
  const char *o = optim_names[c->kind];
  if (!(c->weight_decay >= 0.0 && isfinite(c->weight_decay)))
    return bad_param(err, o, "weight_decay", c->weight_decay, _("a finite value >= 0"));
  switch (c->kind) {
  case LOOM_OPTIM_SGD:
    if (!(c->momentum >= 0.0 && isfinite(c->momentum)))
      return bad_param(err, o, "momentum", c->momentum, _("a finite value >= 0"));
    if (!isfinite(c->dampening)) return bad_param(err, o, "dampening", c->dampening, _("a finite value"));
    if (c->nesterov && (c->momentum <= 0.0 || c->dampening != 0.0))
      return loom_error_set(err, LOOM_ERR_INVALID,
                            _("%s: nesterov needs momentum > 0 and dampening 0 (momentum %g, dampening %g)"), o,
                            c->momentum, c->dampening);
    break;
  case LOOM_OPTIM_ADAM:
  case LOOM_OPTIM_ADAMW:
    if (!(c->beta1 >= 0.0 && c->beta1 < 1.0)) return bad_param(err, o, "beta1", c->beta1, _("a value in [0, 1)"));
    if (!(c->beta2 >= 0.0 && c->beta2 < 1.0)) return bad_param(err, o, "beta2", c->beta2, _("a value in [0, 1)"));
    if (!(c->eps >= 0.0 && isfinite(c->eps))) return bad_param(err, o, "eps", c->eps, _("a finite value >= 0"));
    break;
  case LOOM_OPTIM_RMSPROP:
    if (!(c->alpha >= 0.0 && isfinite(c->alpha)))
      return bad_param(err, o, "alpha", c->alpha, _("a finite value >= 0"));
    if (!(c->eps >= 0.0 && isfinite(c->eps))) return bad_param(err, o, "eps", c->eps, _("a finite value >= 0"));
    if (!(c->momentum >= 0.0 && isfinite(c->momentum)))
      return bad_param(err, o, "momentum", c->momentum, _("a finite value >= 0"));
    break;
  }
  return LOOM_OK;
}

static void free_state(loom_optim *opt) {
  for (int i = 0; i < opt->n; i++) {
    free(opt->t[i].buf1);
    free(opt->t[i].buf2);
    free(opt->t[i].buf3);
  }
}

LOOM_API void loom_optim_free(loom_optim *opt) {
  if (!opt) return;
  free_state(opt);
  free(opt->t);
  free(opt);
}

/* Buffers each kind needs; all start at zero (torch's zeros_like), except
 * SGD's momentum buffer, which torch initialises from the first gradient. */
unsigned optim_needed_buffers(const loom_optim_config *c) {
  bool adam = c->kind == LOOM_OPTIM_ADAM || c->kind == LOOM_OPTIM_ADAMW;
  bool need1 = adam || c->momentum > 0.0;
  bool need2 = c->kind != LOOM_OPTIM_SGD;
  bool need3 = (adam && c->amsgrad) || (c->kind == LOOM_OPTIM_RMSPROP && c->centered);
  return (need1 ? 1u : 0u) | (need2 ? 2u : 0u) | (need3 ? 4u : 0u);
}

static float **buffer_slot(tensor_state *t, int b) { return b == 0 ? &t->buf1 : b == 1 ? &t->buf2 : &t->buf3; }

int optim_tensor_ensure(loom_optim *opt, int i, unsigned mask, loom_error *err) {
  tensor_state *t = &opt->t[i];
  for (int b = 0; b < OPTIM_N_BUFFERS; b++) {
    float **slot = buffer_slot(t, b);
    if (!(mask & (1u << b)) || *slot) continue;
    if (!(*slot = calloc((size_t)t->size, sizeof(float))))
      return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for the state of tensor %d (%lld floats)"),
                            optim_names[opt->cfg.kind], i, (long long)t->size);
  }
  return LOOM_OK;
}

static int alloc_state(loom_optim *opt, loom_error *err) {
  unsigned mask = optim_needed_buffers(&opt->cfg);
  for (int i = 0; i < opt->n; i++) {
    int rc = optim_tensor_ensure(opt, i, mask, err);
    if (rc) return rc;
  }
  return LOOM_OK;
}

void optim_tensor_get(const loom_optim *opt, int i, optim_tensor_state *out) {
  tensor_state *t = &opt->t[i];
  *out = (optim_tensor_state){.size = t->size, .steps = t->steps, .has_momentum = t->has_momentum};
  for (int b = 0; b < OPTIM_N_BUFFERS; b++) {
    out->buf[b] = *buffer_slot(t, b);
    if (out->buf[b]) out->buffers |= 1u << b;
  }
}

void optim_tensor_set_counts(loom_optim *opt, int i, int64_t steps, bool has_momentum) {
  opt->t[i].steps = steps;
  opt->t[i].has_momentum = has_momentum;
}

LOOM_API int loom_optim_set_config(loom_optim *opt, const loom_optim_config *cfg, loom_error *err) {
  if (!opt || !cfg) return loom_error_set(err, LOOM_ERR_INVALID, _("no optimizer or configuration given"));
  int rc = loom_optim_config_validate(cfg, err);
  if (rc) return rc;
  if (cfg->kind != opt->cfg.kind)
    return loom_error_set(err, LOOM_ERR_INVALID, _("the optimizer cannot change from %s to %s while it keeps state"),
                          optim_names[opt->cfg.kind], optim_names[cfg->kind]);
  /* buffers a knob newly needs start at zero, as torch's state would; none is
   * freed, so turning a knob off and on again keeps what it had */
  unsigned mask = optim_needed_buffers(cfg);
  for (int i = 0; i < opt->n; i++)
    if ((rc = optim_tensor_ensure(opt, i, mask, err))) return rc;
  opt->cfg = *cfg;
  return LOOM_OK;
}

LOOM_API loom_optim *loom_optim_new(const loom_optim_config *cfg, int n_tensors, const int64_t *sizes,
                                    loom_error *err) {
  if (loom_optim_config_validate(cfg, err)) return NULL;
  if (n_tensors < 1 || !sizes) {
    loom_error_set(err, LOOM_ERR_INVALID, _("%s: needs at least one parameter tensor, got %d"),
                   optim_names[cfg->kind], n_tensors);
    return NULL;
  }
  for (int i = 0; i < n_tensors; i++)
    if (sizes[i] < 1 || (uint64_t)sizes[i] > SIZE_MAX / 4 / sizeof(float)) {
      loom_error_set(err, LOOM_ERR_INVALID, _("%s: tensor %d has size %lld, expected at least 1"),
                     optim_names[cfg->kind], i, (long long)sizes[i]);
      return NULL;
    }
  loom_optim *opt = calloc(1, sizeof *opt);
  if (opt) opt->t = calloc((size_t)n_tensors, sizeof *opt->t);
  if (!opt || !opt->t) {
    free(opt);
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory"));
    return NULL;
  }
  opt->cfg = *cfg;
  opt->n = n_tensors;
  for (int i = 0; i < n_tensors; i++) opt->t[i].size = sizes[i];
  if (alloc_state(opt, err)) {
    loom_optim_free(opt);
    return NULL;
  }
  return opt;
}

LOOM_API void loom_optim_set_pool(loom_optim *opt, loom_pool *pool) { opt->pool = pool; }

LOOM_API const loom_optim_config *loom_optim_config_of(const loom_optim *opt) { return &opt->cfg; }
LOOM_API int loom_optim_n_tensors(const loom_optim *opt) { return opt->n; }

LOOM_API int64_t loom_optim_tensor_steps(const loom_optim *opt, int i) {
  return i >= 0 && i < opt->n ? opt->t[i].steps : 0;
}

LOOM_API void loom_optim_reset(loom_optim *opt) {
  for (int i = 0; i < opt->n; i++) {
    tensor_state *t = &opt->t[i];
    size_t bytes = (size_t)t->size * sizeof(float);
    if (t->buf1) memset(t->buf1, 0, bytes);
    if (t->buf2) memset(t->buf2, 0, bytes);
    if (t->buf3) memset(t->buf3, 0, bytes);
    t->steps = 0;
    t->has_momentum = false;
  }
}

/* ---- per-tensor updates --------------------------------------------------- */

/* One tensor's update, run on elements [begin, end) of it by the pool. */
typedef struct update_job {
  const loom_optim_config *c;
  tensor_state *t;
  float *p;
  const float *g;
  double lr;
  bool first;         /* SGD: the momentum buffer is initialised by this step */
  optim_adam_coef ak; /* Adam, AdamW */
} update_job;

static void sgd_range(void *arg, int64_t begin, int64_t end) {
  const update_job *j = arg;
  const loom_optim_config *c = j->c;
  const optim_sgd_coef k = {.wd = (float)c->weight_decay,
                            .mom = (float)c->momentum,
                            .damp1 = (float)(1.0 - c->dampening),
                            .neg_lr = (float)-j->lr,
                            .maximize = c->maximize,
                            .nesterov = c->nesterov,
                            .first = j->first};
  float *buf1 = j->t->buf1;
  optim_sgd_update(&k, loom_kernels_get()->level, end - begin, j->p + begin, j->g + begin,
                   buf1 ? buf1 + begin : NULL);
}

static void adam_range(void *arg, int64_t begin, int64_t end) {
  const update_job *j = arg;
  tensor_state *t = j->t;
  optim_adam_update(&j->ak, loom_kernels_get()->level, end - begin, j->p + begin, j->g + begin, t->buf1 + begin,
                    t->buf2 + begin, j->c->amsgrad ? t->buf3 + begin : NULL);
}

static optim_adam_coef adam_coef(const loom_optim_config *c, const tensor_state *t, double lr) {
  double step = (double)t->steps;
  double bias1 = 1.0 - pow(c->beta1, step), bias2 = 1.0 - pow(c->beta2, step);
  return (optim_adam_coef){.b1 = (float)c->beta1,
                           .b2 = (float)c->beta2,
                           .one_b1 = (float)(1.0 - c->beta1),
                           .one_b2 = (float)(1.0 - c->beta2),
                           .eps = (float)c->eps,
                           .wd = (float)c->weight_decay,
                           .decay = (float)(1.0 - lr * c->weight_decay),
                           .step_size = (float)(lr / bias1),
                           .bias2_sqrt = (float)sqrt(bias2),
                           .decoupled = c->kind == LOOM_OPTIM_ADAMW,
                           .maximize = c->maximize};
}

static void rmsprop_range(void *arg, int64_t begin, int64_t end) {
  const update_job *j = arg;
  const loom_optim_config *c = j->c;
  tensor_state *t = j->t;
  const optim_rmsprop_coef k = {.a = (float)c->alpha,
                                .one_a = (float)(1.0 - c->alpha),
                                .eps = (float)c->eps,
                                .wd = (float)c->weight_decay,
                                .mom = (float)c->momentum,
                                .neg_lr = (float)-j->lr,
                                .maximize = c->maximize,
                                .centered = c->centered};
  optim_rmsprop_update(&k, loom_kernels_get()->level, end - begin, j->p + begin, j->g + begin,
                       t->buf1 ? t->buf1 + begin : NULL, t->buf2 + begin, t->buf3 ? t->buf3 + begin : NULL);
}

LOOM_API int loom_optim_step(loom_optim *opt, float *const *params, const float *const *grads, double lr,
                             loom_error *err) {
  const char *o = optim_names[opt->cfg.kind];
  if (!(lr >= 0.0 && isfinite(lr))) return bad_param(err, o, "lr", lr, _("a finite value >= 0"));
  for (int i = 0; i < opt->n; i++)
    if (grads[i] && !params[i])
      return loom_error_set(err, LOOM_ERR_INVALID, _("%s: tensor %d has a gradient but no parameters"), o, i);
  for (int i = 0; i < opt->n; i++) {
    if (!grads[i]) continue;
    tensor_state *t = &opt->t[i];
    t->steps++;
    update_job j = {.c = &opt->cfg, .t = t, .p = params[i], .g = grads[i], .lr = lr, .first = !t->has_momentum};
    loom_range_fn fn = rmsprop_range;
    switch (opt->cfg.kind) {
    case LOOM_OPTIM_SGD: fn = sgd_range; break;
    case LOOM_OPTIM_ADAM:
    case LOOM_OPTIM_ADAMW:
      fn = adam_range;
      j.ak = adam_coef(&opt->cfg, t, lr);
      break;
    case LOOM_OPTIM_RMSPROP: break;
    }
    loom_pool_for(opt->pool, t->size, OPTIM_POOL_PIECE, fn, &j);
    if (opt->cfg.kind == LOOM_OPTIM_SGD && (float)opt->cfg.momentum != 0.0f) t->has_momentum = true;
  }
  return LOOM_OK;
}

/* ---- clipping --------------------------------------------------------------- */

LOOM_API int loom_clip_grad_norm(float *const *grads, const int64_t *sizes, int n_tensors, double max_norm,
                                 double norm_type, bool error_if_nonfinite, double *total_norm, loom_error *err) {
  if (!(norm_type > 0.0))
    return loom_error_set(err, LOOM_ERR_INVALID, _("clip_grad_norm: norm_type is %g, expected > 0 or infinity"),
                          norm_type);
  if (!(max_norm >= 0.0) || isnan(max_norm))
    return loom_error_set(err, LOOM_ERR_INVALID, _("clip_grad_norm: max_norm is %g, expected >= 0"), max_norm);
  /* torch takes the norm of the per-tensor norms; in exact arithmetic that is
   * the norm over all elements, which is what is summed here in double. */
  double total = 0.0;
  if (isinf(norm_type)) {
    for (int i = 0; i < n_tensors; i++)
      for (int64_t k = 0; grads[i] && k < sizes[i]; k++) {
        double a = fabs((double)grads[i][k]);
        if (a > total || isnan(a)) total = a;
      }
  } else {
    for (int i = 0; i < n_tensors; i++) {
      double tensor_sum = 0.0;
      for (int64_t k = 0; grads[i] && k < sizes[i]; k++) {
        double a = fabs((double)grads[i][k]);
        tensor_sum += norm_type == 2.0 ? a * a : norm_type == 1.0 ? a : pow(a, norm_type);
      }
      total += tensor_sum;
    }
    total = norm_type == 2.0 ? sqrt(total) : norm_type == 1.0 ? total : pow(total, 1.0 / norm_type);
  }
  *total_norm = total;
  if (!isfinite(total) && error_if_nonfinite)
    return loom_error_set(err, LOOM_ERR_NONFINITE,
                          _("clip_grad_norm: the total norm of order %g of the gradients is non-finite (%g)"),
                          norm_type, total);
  double coef = max_norm / (total + 1e-6);
  if (coef > 1.0) coef = 1.0;
  /* torch multiplies even when the coefficient is 1; skipping changes nothing. */
  if (coef != 1.0) {
    float f = (float)coef;
    for (int i = 0; i < n_tensors; i++)
      for (int64_t k = 0; grads[i] && k < sizes[i]; k++) grads[i][k] *= f;
  }
  return LOOM_OK;
}
