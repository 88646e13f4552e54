/*
 * Internal to the engine: the per-tensor state of an optimizer, for the
 * trainer's checkpoints (train-state.c), which save and restore it exactly.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "kernels/cpu.h"
#include "loom/optim.h"

/* Elements per piece when loom_optim_step shares a tensor out over a pool:
 * 64 KiB of each stream, a multiple of every vector width. The pool gives
 * each thread the same pieces step after step (pool.c), so a piece's
 * moments stay in one core's cache; the trainer's sums and its copy of the
 * masters (trainer-check.c) take the same pieces, so a thread also reads
 * and copies what it updates. */
#define OPTIM_POOL_PIECE 16384

/* Which state buffers a tensor has: bit 0 buf1 (SGD/RMSprop momentum, Adam
 * exp_avg), bit 1 buf2 (Adam exp_avg_sq, RMSprop square_avg), bit 2 buf3
 * (Adam max_exp_avg_sq, RMSprop grad_avg). */
#define OPTIM_N_BUFFERS 3
/* The buffers `cfg` needs (a tensor may hold more: set_config never frees). */
unsigned optim_needed_buffers(const loom_optim_config *cfg);

typedef struct optim_tensor_state {
  int64_t size;
  int64_t steps;
  bool has_momentum; /* SGD: the momentum buffer was initialised */
  unsigned buffers;  /* the mask of the buffers present */
  float *buf[OPTIM_N_BUFFERS]; /* NULL where absent; size floats each */
} optim_tensor_state;

/* Tensor i's state, with writable buffers. */
void optim_tensor_get(const loom_optim *opt, int i, optim_tensor_state *out);
/* Sets tensor i's counters. */
void optim_tensor_set_counts(loom_optim *opt, int i, int64_t steps, bool has_momentum);
/* Allocates (zeroed) the buffers of `mask` tensor i lacks. */
int optim_tensor_ensure(loom_optim *opt, int i, unsigned mask, loom_error *err);

/* The float32 coefficients of one Adam/AdamW step (torch's order of
 * operations; optim.c computes them in double, as Python does). */
typedef struct optim_adam_coef {
  float b1, b2, one_b1, one_b2, eps, wd, decay, step_size, bias2_sqrt;
  bool decoupled, maximize;
} optim_adam_coef;

/* Updates n parameters p from gradients g and the state m1 (exp_avg), m2
 * (exp_avg_sq), vmax (max_exp_avg_sq; NULL without amsgrad) at `level`
 * (optim-adam.c): the same bits at every level. */
void optim_adam_update(const optim_adam_coef *k, loom_kernel_level level, int64_t n, float *p, const float *g,
                       float *m1, float *m2, float *vmax);

/* One SGD step's float32 coefficients (torch's order of operations):
 * weight decay, momentum, 1 − dampening, −lr; `first`: the momentum buffer
 * starts from this step's gradient. */
typedef struct optim_sgd_coef {
  float wd, mom, damp1, neg_lr;
  bool maximize, nesterov, first;
} optim_sgd_coef;

/* One RMSprop step's: alpha, 1 − alpha, eps, weight decay, momentum, −lr. */
typedef struct optim_rmsprop_coef {
  float a, one_a, eps, wd, mom, neg_lr;
  bool maximize, centered;
} optim_rmsprop_coef;

/* Updates n parameters p from gradients g and the state (buf1 momentum,
 * and for RMSprop buf2 square_avg, buf3 grad_avg, NULL where the options
 * need none) at `level` (optim-sgd.c): the same bits at every level. */
void optim_sgd_update(const optim_sgd_coef *k, loom_kernel_level level, int64_t n, float *p, const float *g,
                      float *buf1);
void optim_rmsprop_update(const optim_rmsprop_coef *k, loom_kernel_level level, int64_t n, float *p, const float *g,
                          float *buf1, float *buf2, float *buf3);
