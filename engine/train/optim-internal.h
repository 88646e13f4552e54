/*
 * Internal to the engine: the per-tensor state of an optimizer, for the
 * trainer's checkpoints (train-state.c), which save and restore it exactly.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "loom/optim.h"

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
