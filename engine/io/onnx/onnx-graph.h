/*
 * Internal to the ONNX exporter: a protobuf writer small enough to read in
 * one sitting (docs/onnx.md says why there is no protobuf-c here) and a graph
 * builder on top of it. Every tensor in the exported graph is float32 of
 * shape [N, per-sample shape...] unless said otherwise; N is the symbolic
 * batch dimension.
 *
 * Errors are sticky: the first failure (out of memory, a layer that cannot be
 * exported) is kept in g->rc / g->err and every later call does nothing, so
 * the per-layer code can chain calls and check once.
 */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "layers/layer-impl.h"
#include "loom/error.h"
#include "loom/shape.h"

/* ---- protobuf wire format ------------------------------------------------ */

typedef struct pb_buf {
  uint8_t *data;
  size_t len, cap;
  bool failed; /* an allocation failed: the content is incomplete */
} pb_buf;

void pb_free(pb_buf *b);
void pb_varint_field(pb_buf *b, int field, uint64_t v);       /* wire type 0 */
void pb_float_field(pb_buf *b, int field, float v);           /* wire type 5 */
void pb_bytes_field(pb_buf *b, int field, const void *p, size_t n); /* wire type 2 */
void pb_string_field(pb_buf *b, int field, const char *s);
void pb_message_field(pb_buf *b, int field, const pb_buf *sub);

/* ---- graph builder ------------------------------------------------------- */

/* A value (tensor) name in the graph. */
typedef struct onnx_val {
  char s[40];
} onnx_val;

/* Attributes of one node, collected before the node is written. */
typedef struct onnx_attrs {
  pb_buf buf;
} onnx_attrs;

typedef struct onnx_graph {
  pb_buf body; /* GraphProto fields: nodes, initializers, inputs, outputs */
  int next_id;
  int rc;
  loom_error *err;
} onnx_graph;

void onnx_attr_int(onnx_attrs *a, const char *name, int64_t v);
void onnx_attr_float(onnx_attrs *a, const char *name, float v);
void onnx_attr_ints(onnx_attrs *a, const char *name, const int64_t *v, int n);
void onnx_attr_string(onnx_attrs *a, const char *name, const char *v); /* a one-entry STRINGS attribute */

/* Appends a node `op` with n inputs (names; "" for a left-out optional one)
 * and one output, which it returns. `a` may be NULL; it is freed. */
onnx_val onnx_op(onnx_graph *g, const char *op, onnx_attrs *a, int n, ...);
/* The same with n_out outputs (TopK), written to outs. */
void onnx_op_outputs(onnx_graph *g, const char *op, onnx_attrs *a, int n_out, onnx_val *outs, int n, ...);

/* Initializers. `dims` has `rank` entries; a float tensor copies `v`. */
onnx_val onnx_const_floats(onnx_graph *g, const float *v, int rank, const int64_t *dims);
onnx_val onnx_const_ints(onnx_graph *g, const int64_t *v, int64_t n); /* 1-D int64 */
onnx_val onnx_scalar(onnx_graph *g, float v);                         /* shape [1] */
onnx_val onnx_const_int_scalar(onnx_graph *g, int64_t v);             /* 0-D int64 */

/* Reshape to [N, s...] (the batch dimension inferred). */
onnx_val onnx_reshape(onnx_graph *g, const char *x, const loom_shape *s);
/* Reshape to [N, numel(s)]. */
onnx_val onnx_flatten(onnx_graph *g, const char *x, const loom_shape *s);

/* Records a failure (keeps the first). Returns g->rc. */
int onnx_fail(onnx_graph *g, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* An out-of-memory failure if any buffer failed. */
int onnx_check_memory(onnx_graph *g, const pb_buf *b);

/* ---- layers (onnx-layers.c, onnx-containers.c) --------------------------- */

/* Adds the nodes computing layer l on x ([N, l->in_shape]) and returns its
 * output ([N, l->out_shape]). A layer type without an ONNX form fails with
 * an error naming the type and where the layer sits. */
onnx_val onnx_layer(onnx_graph *g, loom_layer *l, const char *x);
/* Weight slot `index` of l (its effective float32 values) as an initializer
 * of the given dims, and y = x·Wᵀ (+ b) on rows of n_in values (b_index -1:
 * no bias), from onnx-layers.c. */
onnx_val onnx_weight(onnx_graph *g, loom_layer *l, int index, int rank, const int64_t *dims);
onnx_val onnx_linear(onnx_graph *g, loom_layer *l, const char *x, int w_index, int b_index, int64_t n_in,
                     int64_t n_out);
/* attention (onnx-attention.c). */
onnx_val onnx_attention(onnx_graph *g, loom_layer *l, const char *x);
/* hierarchical_softmax (onnx-hsoftmax.c). */
onnx_val onnx_hsoftmax(onnx_graph *g, loom_layer *l, const char *x);
/* sparsemax and entmax15 (onnx-sparsemax.c). */
onnx_val onnx_sparsemax(onnx_graph *g, loom_layer *l, const char *x);
/* rnn and lstm (onnx-recurrent.c). */
onnx_val onnx_recurrent(onnx_graph *g, loom_layer *l, const char *x);
/* Containers (onnx-containers.c); NULL result name on types it does not know. */
bool onnx_container(onnx_graph *g, loom_layer *l, const char *x, onnx_val *y);
