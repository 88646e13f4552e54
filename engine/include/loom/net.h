/*
 * The volumetric network (DESIGN.md §2): a depth × rows × cols grid of cells,
 * each with layers_per_cell slots addressed by (z, y, x, l). Data follows the
 * spine (occupied, enabled slots in flat-index order); remote links carry an
 * output elsewhere and merge it at their destination.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "context.h"
#include "error.h"
#include "export.h"
#include "layer.h"
#include "shape.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_net loom_net;

typedef struct loom_coord {
  int z, y, x, l;
} loom_coord;

static inline bool loom_coord_equal(loom_coord a, loom_coord b) {
  return a.z == b.z && a.y == b.y && a.x == b.x && a.l == b.l;
}

typedef enum loom_merge {
  LOOM_MERGE_REPLACE = 0, /* the hop replaces the spine input */
  LOOM_MERGE_ADD = 1,     /* elementwise sum with the spine input (same shape) */
  LOOM_MERGE_CONCAT = 2,  /* spine input followed by the hop, along features/channels */
} loom_merge;

typedef struct loom_link {
  loom_coord src, dst;
  loom_merge merge;
} loom_link;

LOOM_API const char *loom_merge_name(loom_merge m); /* "replace", "add", "concat" */
LOOM_API int loom_merge_from_name(const char *name, loom_merge *out, loom_error *err);

/* ---- grid -------------------------------------------------------------- */

/* Dimensions are checked (each >= 1, total slots bounded) before allocating. */
LOOM_API loom_net *loom_net_new(int depth, int rows, int cols, int layers_per_cell, loom_error *err);
LOOM_API void loom_net_free(loom_net *net);
LOOM_API loom_net *loom_net_clone(const loom_net *net, loom_error *err);
/* Fails, naming the slot, if an occupied slot or a link end would fall outside. */
LOOM_API int loom_net_resize(loom_net *net, int depth, int rows, int cols, int layers_per_cell, loom_error *err);
LOOM_API int loom_net_depth(const loom_net *net);
LOOM_API int loom_net_rows(const loom_net *net);
LOOM_API int loom_net_cols(const loom_net *net);
LOOM_API int loom_net_layers_per_cell(const loom_net *net);
LOOM_API int64_t loom_net_n_slots(const loom_net *net);
LOOM_API bool loom_net_contains(const loom_net *net, loom_coord c);
/* ((z·rows + y)·cols + x)·layers_per_cell + l; -1 if outside. */
LOOM_API int64_t loom_net_flat_index(const loom_net *net, loom_coord c);
LOOM_API loom_coord loom_net_coord_of(const loom_net *net, int64_t flat);
/* "(z,y,x,l)" */
LOOM_API char *loom_coord_format(loom_coord c, char *buf, size_t size);

/* How the network runs (DESIGN.md §2). Feed-forward: every slot sees its input
 * in the same pass and links must point forwards. Systolic (loom/systolic.h):
 * every slot reads the previous tick's outputs, so links may also point
 * backwards (feedback links); loom_net_forward refuses a network that has
 * one. Switching to feed-forward fails while a feedback link exists, naming it. */
typedef enum loom_execution {
  LOOM_EXEC_FEED_FORWARD = 0,
  LOOM_EXEC_SYSTOLIC = 1,
} loom_execution;
LOOM_API int loom_net_set_execution(loom_net *net, loom_execution mode, loom_error *err);
LOOM_API loom_execution loom_net_execution(const loom_net *net);
LOOM_API const char *loom_execution_name(loom_execution mode); /* "feed-forward", "systolic" */
LOOM_API int loom_execution_from_name(const char *name, loom_execution *out, loom_error *err);

/* The network's per-sample input shape. */
LOOM_API int loom_net_set_input_shape(loom_net *net, const loom_shape *in, loom_error *err);
LOOM_API loom_shape loom_net_input_shape(const loom_net *net);

/* ---- slots ------------------------------------------------------------- */

/* Places `layer` (ownership passes to the net) into an empty slot. */
LOOM_API int loom_net_place(loom_net *net, loom_coord c, loom_layer *layer, loom_error *err);
LOOM_API loom_layer *loom_net_layer_at(const loom_net *net, loom_coord c); /* NULL if empty/outside */
/* Removes and returns the layer (caller owns it); links touching the slot are
 * removed too and, if `removed_links` is not NULL, appended to it (up to
 * *n_removed capacity; *n_removed receives the count) so an undo can restore them. */
LOOM_API loom_layer *loom_net_take(loom_net *net, loom_coord c, loom_link *removed_links, int *n_removed);
LOOM_API int loom_net_clear(loom_net *net, loom_coord c, loom_error *err);
/* Moves a layer to an empty slot; its links follow it. */
LOOM_API int loom_net_move(loom_net *net, loom_coord from, loom_coord to, loom_error *err);
/* A disabled slot passes its input through, like an empty one. */
LOOM_API int loom_net_set_enabled(loom_net *net, loom_coord c, bool enabled, loom_error *err);
LOOM_API bool loom_net_is_enabled(const loom_net *net, loom_coord c);
/* Occupied slots in flat-index order (the spine, disabled ones included). */
LOOM_API int64_t loom_net_n_layers(const loom_net *net);
LOOM_API loom_coord loom_net_layer_coord(const loom_net *net, int64_t i);

/* ---- links ------------------------------------------------------------- */

/* Both ends must hold layers; a backward (feedback) link is an error in
 * feed-forward mode naming both coordinates; duplicates are refused. */
LOOM_API int loom_net_add_link(loom_net *net, const loom_link *link, loom_error *err);
LOOM_API int loom_net_remove_link(loom_net *net, int index, loom_error *err);
LOOM_API int loom_net_n_links(const loom_net *net);
LOOM_API const loom_link *loom_net_link(const loom_net *net, int index);
/* Why a link would be refused, or LOOM_OK (the GUI highlights invalid links).
 * Passing a link already in the network (the pointer loom_net_link returns)
 * judges it against the others, so it is never a duplicate of itself. */
LOOM_API int loom_net_check_link(const loom_net *net, const loom_link *link, loom_error *err);

/* ---- shape inference --------------------------------------------------- */

typedef struct loom_diag {
  loom_coord at;         /* the slot the problem is reported at */
  bool has_other;        /* a link problem also names the other end */
  loom_coord other;
  loom_status code;
  char message[512];     /* translated; names coordinates, expected and actual sizes */
} loom_diag;

/*
 * Builds every layer along the spine and links with the shapes that reach
 * it (new weights drawn from `seed`). Returns the number of problems found;
 * *diags (free() it) gets each, in flat order. 0 means the network can run.
 */
LOOM_API int loom_net_infer_shapes(loom_net *net, uint64_t seed, loom_diag **diags);
/* The input shape a layer placed at `c` would receive (before merges at c). */
LOOM_API int loom_net_propose_input(const loom_net *net, loom_coord c, loom_shape *out, loom_error *err);
LOOM_API loom_shape loom_net_output_shape(const loom_net *net); /* after a successful inference */

/* ---- execution (feed-forward) ------------------------------------------ */

/* x: batch × numel(input shape); y: batch × numel(output shape). Runs shape
 * inference first if anything changed and fails with its first problem. */
LOOM_API int loom_net_forward(loom_net *net, const loom_ctx *ctx, const float *x, int64_t batch, float *y,
                              loom_error *err);
/* After a forward with ctx->training: accumulates every parameter gradient
 * and writes dx (may be NULL). */
LOOM_API int loom_net_backward(loom_net *net, const loom_ctx *ctx, const float *dy, float *dx, loom_error *err);
LOOM_API void loom_net_zero_grad(loom_net *net);
/* The output of the layer at c from the last forward (batch × numel(out)); NULL if none. */
LOOM_API const float *loom_net_activation(const loom_net *net, loom_coord c, int64_t *batch);

/* ---- weights ----------------------------------------------------------- */

/* The seed the weights were last drawn from (loom_net_infer_shapes). */
LOOM_API uint64_t loom_net_seed(const loom_net *net);
/*
 * Draws every weight anew from `seed`, as if each layer had just been placed
 * and built (containers, their children and gates included); shapes and
 * hyperparameters stay. Reinitialising with the seed a network was built
 * from gives back its initial weights bit for bit. On error (the network
 * does not pass shape inference) the first problem is reported.
 */
LOOM_API int loom_net_reinit_weights(loom_net *net, uint64_t seed, loom_error *err);
/* Every layer (containers' children too) computes at @d from now on; errors
 * are prefixed with the slot. On error the layers before it are changed:
 * call it on a copy when that matters (loom convert, the workbench's export). */
LOOM_API int loom_net_set_dtype_all(loom_net *net, loom_dtype d, loom_error *err);

/* ---- totals ------------------------------------------------------------ */

LOOM_API int64_t loom_net_param_count(const loom_net *net);
LOOM_API size_t loom_net_bytes(const loom_net *net);            /* at the layers' dtypes */
LOOM_API size_t loom_net_bytes_float32(const loom_net *net);    /* had every layer float32 */
LOOM_API int64_t loom_net_flops(const loom_net *net);           /* forward, per sample */

/* ---- inference at rest (docs/dtypes.md, "At rest") ---------------------- */

/* Every built layer keeps only its packed weights and scales (float32 and
 * float64 keep the float32 master), gradients freed; the dense layer then
 * multiplies the packed codes directly (docs/kernels.md). Errors name the
 * weights' layer and slot; a failure leaves the layers before it at rest. */
LOOM_API int loom_net_to_inference(loom_net *net, loom_error *err);
/* Recreates every master (dequantized codes: exact) and gradient; the trainer calls it. */
LOOM_API int loom_net_prepare_training(loom_net *net, loom_error *err);
/* Weight stores + gradients: allocated now / at rest / while training. */
LOOM_API size_t loom_net_resident_bytes(const loom_net *net);
LOOM_API size_t loom_net_inference_bytes(const loom_net *net);
LOOM_API size_t loom_net_training_bytes(const loom_net *net);

#ifdef __cplusplus
}
#endif
