/*
 * Internal: what a layer type implements. Each family lives in its own file
 * (engine/layers/dense.c, conv.c, ...) and exports one `const loom_layer_type`
 * per type; engine/layers/registry.c lists them, one line each.
 *
 * Contract for every type:
 *  - build(): validate hyperparameters against `in`, set l->out_shape, and
 *    declare/allocate weights with layer_weights_ensure() (kept if unchanged).
 *  - forward(): y = f(x) for `batch` samples; x is batch × numel(in_shape),
 *    y is batch × numel(out_shape). Weighted types compute with
 *    loom_weights_effective() (the dequantized values at the layer's dtype).
 *    When ctx->training, keep in l->state whatever backward needs beyond x/y.
 *  - backward(): given x, y (from the last forward) and dy, ACCUMULATE (+=)
 *    parameter gradients into l->grad[i] and WRITE dx (dx may be NULL when
 *    the input gradient is not needed). Gradients w.r.t. quantized weights
 *    pass straight through to the float32 master (STE).
 *  - Parallel work goes through loom_pool_for with ranges that depend only on
 *    the problem size, and each range writes disjoint outputs; reductions run
 *    in a fixed order. Results must be bit-identical for any thread count.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "loom/context.h"
#include "loom/layer.h"

#define LOOM_LAYER_MAX_WEIGHTS 12 /* attention: 4 projections, 4 biases, 2 norms */

struct loom_layer_type {
  int id;                  /* stable: appears in files; never reuse */
  const char *name;        /* stable JSON name */
  const char *label;       /* N_() */
  const char *group;       /* N_() */
  const char *description; /* N_() */
  unsigned flags;
  const loom_param_spec *params;
  int n_params;

  int (*build)(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err);
  int (*forward)(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch, loom_error *err);
  int (*backward)(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy, float *dx,
                  int64_t batch, loom_error *err);
  /* Optional. */
  int (*adapt)(loom_layer *l, const loom_shape *in, loom_error *err);
  int64_t (*flops)(const loom_layer *l);
  void (*free_state)(loom_layer *l);
  int (*clone_state)(loom_layer *dst, const loom_layer *src, loom_error *err);
  char *(*describe)(const loom_layer *l, char *buf, size_t size);
  /* For types whose output kind depends on their parameters; otherwise the
   * LOOM_LAYER_OUTPUTS_PROBABILITIES flag answers. */
  bool (*outputs_probabilities)(const loom_layer *l);
};

struct loom_layer {
  const loom_layer_type *type;
  loom_param_value *values; /* type->n_params entries */
  float **floats;           /* per param: LOOM_PARAM_FLOATS storage (else NULL) */
  int64_t *n_floats;
  loom_dtype dtype;

  bool built;
  loom_shape in_shape, out_shape;

  int n_weights;
  loom_weights *weights[LOOM_LAYER_MAX_WEIGHTS];
  float *grad[LOOM_LAYER_MAX_WEIGHTS];
  const char *weight_names[LOOM_LAYER_MAX_WEIGHTS];
  bool weight_quantized[LOOM_LAYER_MAX_WEIGHTS]; /* follows the layer dtype */

  void *state; /* type-private (caches for backward, masks, ...) */

  int n_children;
  loom_layer **children;
  loom_layer *gate;

  /* Where the layer sits, for error messages; set by the network. */
  int coord[4];
  bool has_coord;
};

/* Helpers for type implementations (engine/layers/layer.c). */

/* Declares weight slot `index` named `name` with shape rows×cols; allocates
 * (initialised by `init` from `seed`) only if missing or of another shape. */
typedef enum { LAYER_INIT_ZERO, LAYER_INIT_ONE, LAYER_INIT_KAIMING_UNIFORM, LAYER_INIT_NORMAL } layer_init;
int layer_weights_ensure(loom_layer *l, int index, const char *name, int64_t rows, int64_t cols, bool quantized,
                         layer_init init, int64_t fan_in, uint64_t seed, loom_error *err);
/* Drops weight slots >= n (e.g. bias switched off). */
void layer_weights_truncate(loom_layer *l, int n);
/* Effective float32 values of weight `index` at the layer's dtype. At rest
 * this leaves a dequantized copy resident: layers use the three below. */
const float *layer_weight_values(loom_layer *l, int index, loom_error *err);
/* The same, a stale copy re-made on the pool's threads (the pass's
 * ctx->pool): after every training step at a dtype other than float32,
 * the re-morph and the dequantized copy of each weight matrix. */
const float *layer_weight_values_on(loom_layer *l, int index, loom_pool *pool, loom_error *err);
/* engine/layers/layer-product.c: weight `index` is at rest (its store holds
 * only packed codes and scales). */
bool layer_weight_at_rest(const loom_layer *l, int index);
/* y (m × rows) = x (m × cols) · Wᵀ for weight `index`; at rest from the
 * packed codes, without a float32 copy of W. */
int layer_weight_product(loom_layer *l, int index, loom_pool *pool, const float *x, int64_t m, float *y,
                         loom_error *err);
/* The values of weight `index` for one call: at rest a dequantized copy
 * that *owned holds and the caller frees, else the store's (*owned NULL). */
const float *layer_weight_values_for_call(loom_layer *l, int index, float **owned, loom_error *err);
/* Row `row` of weight `index` at rest, dequantized into dst (cols values). */
int layer_weight_row(const loom_layer *l, int index, int64_t row, float *dst, loom_error *err);
/* Parameter value by index of the spec (no name lookup in hot paths). */
static inline int64_t layer_int(const loom_layer *l, int index) { return l->values[index].i[0]; }
static inline double layer_float(const loom_layer *l, int index) { return l->values[index].f; }
/* "layer conv2d at (0,1,2,0)" or "layer conv2d" — for error messages. */
const char *layer_where(const loom_layer *l, char *buf, size_t size);
/* Runs a child layer (containers): forwards to its type with the child's own state. */
int layer_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch, loom_error *err);
int layer_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy, float *dx,
                   int64_t batch, loom_error *err);
/* True when l's own weights have their masters and gradients (not at rest). */
bool layer_ready_for_training(const loom_layer *l);
/* Zeroes the gradients of l and its children (none to zero at rest). */
void layer_zero_grad(loom_layer *l);
/* Sets where the layer sits (the net calls it on place/move; has_coord false
 * clears it) and relabels its weights, children and gate included. */
void layer_set_coord(loom_layer *l, const int coord[4], bool has_coord);
/* engine/layers/embedding.c: @count token indices, @t_len a sample, must be
 * integers in [0, vocab); else an error naming l, the sample and position. */
int embedding_check_tokens(const loom_layer *l, const float *x, int64_t count, int64_t t_len, int64_t vocab,
                           loom_error *err);
