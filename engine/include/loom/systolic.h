/*
 * Systolic execution (DESIGN.md §2, docs/network.md): the whole grid advances
 * one tick at a time. In a tick every enabled slot computes from the outputs
 * the slots committed at the end of the previous tick (its spine input, its
 * forward links and its feedback links alike; the first slot reads the
 * network's input) and writes into a second buffer; one commit then swaps
 * the buffers. Before the first tick every output is zero. A signal thus
 * needs N ticks to cross N layers, and feedback links (pointing backwards)
 * are legal: the network must be in LOOM_EXEC_SYSTOLIC mode to hold them.
 * Ticks are deterministic and bit-identical for any thread count.
 *
 * The input is held (set once) or streamed (set before each tick). Layers
 * that keep state between calls keep it across ticks: an rnn/lstm with
 * carry_state consumes one step per tick, an attention layer with a KV cache
 * attends over the steps seen so far (loom/sequence.h); reset forgets it.
 *
 * Training: with recording on, every tick keeps each slot's input; then
 * loom_systolic_backward() runs backpropagation through time over the
 * recorded ticks for losses on the output at any of them, accumulating the
 * parameter gradients of every layer (loom_net_zero_grad clears them).
 * Layers that carry state between calls cannot be trained this way (their
 * state's gradient would cross calls); backward refuses them by coordinate.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "context.h"
#include "error.h"
#include "export.h"
#include "net.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_systolic loom_systolic;

/* Infers the network's shapes (it must be in systolic mode when it has
 * feedback links) and allocates the buffers for `batch` samples. The net
 * must outlive the runner and stay unchanged while it is used. */
LOOM_API loom_systolic *loom_systolic_new(loom_net *net, int64_t batch, loom_error *err);
LOOM_API void loom_systolic_free(loom_systolic *s);
/* batch × numel(input shape), copied; used by every following tick until set again. */
LOOM_API int loom_systolic_set_input(loom_systolic *s, const float *x, loom_error *err);
/* One tick: every slot from the previous tick's outputs, then one commit. */
LOOM_API int loom_systolic_tick(loom_systolic *s, const loom_ctx *ctx, loom_error *err);
/* Zeroes every output, the tick counter and the recording, and forgets the
 * layers' carried state; the input stays. */
LOOM_API void loom_systolic_reset(loom_systolic *s);
LOOM_API int64_t loom_systolic_ticks(const loom_systolic *s);
LOOM_API int64_t loom_systolic_batch(const loom_systolic *s);
/* The committed output of the layer at c (batch × numel of its output shape;
 * *numel receives that per-sample size), or NULL when c holds no layer. */
LOOM_API const float *loom_systolic_output_at(const loom_systolic *s, loom_coord c, int64_t *numel);
/* The network's output: the last slot's committed output. */
LOOM_API const float *loom_systolic_output(const loom_systolic *s, int64_t *numel);

/* Per-slot statistics of the committed outputs over the whole batch, for
 * viewers animating a signal: slots in spine order. */
typedef struct loom_slot_trace {
  loom_coord at;
  double mean; /* mean of the values */
  double norm; /* L2 norm of the values */
} loom_slot_trace;
LOOM_API int64_t loom_systolic_n_slots(const loom_systolic *s);
/* Fills out[0 .. n_slots-1]. */
LOOM_API void loom_systolic_trace(const loom_systolic *s, loom_slot_trace *out);

/* Keeps each tick's slot inputs for backward (from the next tick on; reset clears). */
LOOM_API int loom_systolic_set_recording(loom_systolic *s, bool on, loom_error *err);
/* BPTT over the recorded ticks: dy[t] (batch × numel(output), or NULL for no
 * loss) is the gradient of the loss with respect to the network's output
 * after recorded tick t (t = 0 … n_ticks − 1). Accumulates every parameter
 * gradient; dx (may be NULL) receives the gradient with respect to the input,
 * summed over the ticks (batch × numel(input)). */
LOOM_API int loom_systolic_backward(loom_systolic *s, const loom_ctx *ctx, const float *const *dy, int64_t n_ticks,
                                    float *dx, loom_error *err);

#ifdef __cplusplus
}
#endif
