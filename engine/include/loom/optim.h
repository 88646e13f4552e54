/*
 * Optimizers with PyTorch's update rules (torch 1.13, single-tensor path;
 * every equation is written out in docs/training.md) and gradient clipping.
 *
 * An optimizer is created for a fixed list of parameter tensors (their
 * sizes) and keeps per-tensor state (momentum buffers, moments, step count).
 * A trainer calls loom_optim_step once per mini-batch with the float32
 * masters and their gradients in the same order, then calls
 * loom_weights_touch on every updated store. Updates are elementwise, so the
 * result does not depend on threads: with a pool (loom_optim_set_pool) a
 * tensor is updated in pieces on its threads, bit for bit the same.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "export.h"
#include "pool.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum loom_optim_kind {
  LOOM_OPTIM_SGD = 0,
  LOOM_OPTIM_ADAM = 1,
  LOOM_OPTIM_ADAMW = 2,
  LOOM_OPTIM_RMSPROP = 3,
} loom_optim_kind;

typedef struct loom_optim_config {
  loom_optim_kind kind;
  double weight_decay; /* L2 added to the gradient; AdamW: decoupled decay */
  bool maximize;       /* ascend instead of descend (gradient negated) */
  /* SGD */
  double momentum; /* also RMSprop */
  double dampening;
  bool nesterov;
  /* Adam, AdamW */
  double beta1, beta2;
  double eps; /* also RMSprop */
  bool amsgrad;
  /* RMSprop */
  double alpha;
  bool centered;
} loom_optim_config;

/* PyTorch's defaults for `kind` (SGD: no momentum; Adam: betas 0.9/0.999,
 * eps 1e-8; AdamW: same, weight_decay 0.01; RMSprop: alpha 0.99, eps 1e-8). */
LOOM_API loom_optim_config loom_optim_defaults(loom_optim_kind kind);
LOOM_API const char *loom_optim_name(loom_optim_kind kind); /* "sgd", "adam", "adamw", "rmsprop" */
LOOM_API int loom_optim_from_name(const char *name, loom_optim_kind *out, loom_error *err);
/* The checks torch.optim makes (momentum >= 0, betas in [0,1), nesterov
 * needs momentum > 0 and dampening 0, ...), naming the parameter. */
LOOM_API int loom_optim_config_validate(const loom_optim_config *cfg, loom_error *err);

typedef struct loom_optim loom_optim;

/* sizes[i] = number of floats of tensor i (>= 1). State starts empty, as in torch. */
LOOM_API loom_optim *loom_optim_new(const loom_optim_config *cfg, int n_tensors, const int64_t *sizes,
                                    loom_error *err);
LOOM_API void loom_optim_free(loom_optim *opt);
LOOM_API const loom_optim_config *loom_optim_config_of(const loom_optim *opt);
LOOM_API int loom_optim_n_tensors(const loom_optim *opt);
/* Changes the hyperparameters (weight decay, momentum, betas, eps, …) and
 * keeps every tensor's state; the kind cannot change. A knob that needs a
 * buffer the tensors lack (momentum turned on, amsgrad, centered) gets it
 * zeroed, as torch would create it. */
LOOM_API int loom_optim_set_config(loom_optim *opt, const loom_optim_config *cfg, loom_error *err);
/* The pool loom_optim_step splits its updates over (NULL: the calling
 * thread alone, the default). The pool must outlive its use here. */
LOOM_API void loom_optim_set_pool(loom_optim *opt, loom_pool *pool);
/* Forgets all state (momentum, moments, step counts). */
LOOM_API void loom_optim_reset(loom_optim *opt);
/* How many updates tensor i has received (torch's state['step']). */
LOOM_API int64_t loom_optim_tensor_steps(const loom_optim *opt, int i);

/*
 * One update of every tensor with learning rate lr (>= 0, finite):
 * params[i] (sizes[i] floats) is updated in place from grads[i]. A NULL
 * grads[i] skips tensor i, like a parameter whose .grad is None in torch.
 */
LOOM_API int loom_optim_step(loom_optim *opt, float *const *params, const float *const *grads, double lr,
                             loom_error *err);

/*
 * torch.nn.utils.clip_grad_norm_: total = the norm_type-norm of all
 * gradients together (norm_type > 0, or INFINITY for the max norm); every
 * gradient is multiplied by min(1, max_norm / (total + 1e-6)). *total_norm
 * gets the norm before clipping. A non-finite total is an error
 * (LOOM_ERR_NONFINITE, gradients untouched) when error_if_nonfinite, else
 * the gradients are scaled as torch does. NULL grads[i] are skipped.
 */
LOOM_API int loom_clip_grad_norm(float *const *grads, const int64_t *sizes, int n_tensors, double max_norm,
                                 double norm_type, bool error_if_nonfinite, double *total_norm, loom_error *err);

#ifdef __cplusplus
}
#endif
