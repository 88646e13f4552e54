/*
 * State that sequence layers keep between calls (docs/layers.md):
 *
 *  - rnn / lstm: the initial state (zero unless given here), and with the
 *    parameter carry_state the final state of one call starts the next, so a
 *    long sequence can be fed a step (or a chunk) per call.
 *  - attention: with cache_capacity > 0 the layer keeps the keys and values
 *    of every step seen (its KV cache); each call appends its steps and
 *    attends over all cached ones, so decoding token by token equals running
 *    the whole sequence at once. Asking past the capacity is an error.
 *
 * loom_layer_reset_state() forgets carried state and cached steps (in a
 * container, of every layer inside); weights and given states stay.
 */
#pragma once
#include <stdint.h>

#include "error.h"
#include "export.h"
#include "layer.h"

#ifdef __cplusplus
extern "C" {
#endif

/* rnn/lstm: h0 (and c0 for lstm) are batch × hidden_size; they are copied and
 * used by every following forward of that batch size (another batch size is
 * an error naming both). h0 = NULL goes back to a zero initial state. */
LOOM_API int loom_layer_set_initial_state(loom_layer *l, const float *h0, const float *c0, int64_t batch,
                                          loom_error *err);
/* rnn/lstm: after a backward, the gradient of the loss with respect to the
 * initial state (batch × hidden_size each; *dc0 NULL for rnn). Pointers stay
 * valid until the next backward. */
LOOM_API int loom_layer_initial_state_grad(const loom_layer *l, const float **dh0, const float **dc0, int64_t *batch,
                                           loom_error *err);
/* attention: keys to ignore, batch × keys bytes (nonzero = padding, masked
 * out like PyTorch's key_padding_mask); keys must equal the sequence length
 * of the next forward (or, with a cache, the cached steps after it). NULL
 * removes the mask. */
LOOM_API int loom_layer_set_key_padding_mask(loom_layer *l, const uint8_t *mask, int64_t batch, int64_t keys,
                                             loom_error *err);
/* attention: steps held in the KV cache (0 without a cache). */
LOOM_API int64_t loom_layer_cached_steps(const loom_layer *l);
/* Forgets carried recurrent state and KV caches, recursively. */
LOOM_API void loom_layer_reset_state(loom_layer *l);
/* True when l, or a layer inside it, is set to keep something from one
 * forward call for the next: an rnn or lstm with carry_state, an attention
 * layer with a KV cache (cache_capacity > 0). Without such a layer a
 * sample's output does not depend on the other samples of its call nor on
 * the calls before, so a batch may run in parts (loom forward does). A
 * given initial state or key padding mask holds one batch size; a call of
 * another size is refused, never wrong. */
LOOM_API bool loom_layer_keeps_state(const loom_layer *l);

#ifdef __cplusplus
}
#endif
