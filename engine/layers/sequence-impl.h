/*
 * Internal: the state sequence layers keep between calls (recurrent.c,
 * attention.c), reached through the public functions of loom/sequence.h
 * (sequence-state.c).
 */
#pragma once
#include "layers/layer-impl.h"

/* recurrent.c: rnn and lstm. */
int recurrent_set_initial_state(loom_layer *l, const float *h0, const float *c0, int64_t batch, loom_error *err);
int recurrent_state_grad(const loom_layer *l, const float **dh0, const float **dc0, int64_t *batch);
void recurrent_reset(loom_layer *l);

/* attention.c */
int attention_set_key_padding(loom_layer *l, const uint8_t *mask, int64_t batch, int64_t keys, loom_error *err);
int64_t attention_cache_length(const loom_layer *l);
void attention_reset(loom_layer *l);
