/*
 * The protobuf wire format (varints, 32-bit floats and length-delimited
 * fields are all the exporter needs) and the graph builder of onnx-graph.h.
 * Field numbers come from onnx.proto (onnx/onnx.proto in ONNX 1.12,
 * Apache-2.0); each is named where it is written.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/onnx/onnx-graph.h"

/* ---- wire format --------------------------------------------------------- */

enum { WIRE_VARINT = 0, WIRE_LEN = 2, WIRE_FIXED32 = 5 };

void pb_free(pb_buf *b) {
  free(b->data);
  *b = (pb_buf){0};
}

static void put(pb_buf *b, const void *p, size_t n) {
  if (b->failed) return;
  if (n > SIZE_MAX / 2 - b->len) {
    b->failed = true;
    return;
  }
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) cap *= 2;
    uint8_t *d = realloc(b->data, cap);
    if (!d) {
      b->failed = true;
      return;
    }
    b->data = d;
    b->cap = cap;
  }
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

static void put_varint(pb_buf *b, uint64_t v) {
  uint8_t tmp[10];
  int n = 0;
  do {
    tmp[n] = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) tmp[n] |= 0x80;
    n++;
  } while (v);
  put(b, tmp, (size_t)n);
}

static void put_tag(pb_buf *b, int field, int wire) { put_varint(b, ((uint64_t)field << 3) | (uint64_t)wire); }

/* Negative int64 values are written as their two's complement (10 bytes), as
 * protobuf's int64 requires. */
void pb_varint_field(pb_buf *b, int field, uint64_t v) {
  put_tag(b, field, WIRE_VARINT);
  put_varint(b, v);
}

void pb_float_field(pb_buf *b, int field, float v) {
  uint32_t u;
  memcpy(&u, &v, sizeof u);
  uint8_t le[4] = {(uint8_t)u, (uint8_t)(u >> 8), (uint8_t)(u >> 16), (uint8_t)(u >> 24)};
  put_tag(b, field, WIRE_FIXED32);
  put(b, le, 4);
}

void pb_bytes_field(pb_buf *b, int field, const void *p, size_t n) {
  put_tag(b, field, WIRE_LEN);
  put_varint(b, n);
  put(b, p, n);
}

void pb_string_field(pb_buf *b, int field, const char *s) { pb_bytes_field(b, field, s, strlen(s)); }

void pb_message_field(pb_buf *b, int field, const pb_buf *sub) {
  if (sub->failed) b->failed = true;
  pb_bytes_field(b, field, sub->data ? (const void *)sub->data : "", sub->len);
}

/* ---- graph --------------------------------------------------------------- */

int onnx_fail(onnx_graph *g, int code, const char *fmt, ...) {
  if (g->rc) return g->rc;
  g->rc = code;
  if (g->err) {
    va_list ap;
    va_start(ap, fmt);
    char msg[sizeof g->err->message];
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    loom_error_set(g->err, code, "%s", msg);
  }
  return g->rc;
}

int onnx_check_memory(onnx_graph *g, const pb_buf *b) {
  if (b->failed) return onnx_fail(g, LOOM_ERR_NOMEM, _("out of memory writing the ONNX graph"));
  return g->rc;
}

static onnx_val fresh(onnx_graph *g, const char *prefix) {
  onnx_val v;
  snprintf(v.s, sizeof v.s, "%s%d", prefix, g->next_id++);
  return v;
}

/* AttributeProto: name 1, f 2, i 3, floats 7, ints 8, strings 9, type 20
 * (FLOAT 1, INT 2, FLOATS 6, INTS 7, STRINGS 8). */
void onnx_attr_int(onnx_attrs *a, const char *name, int64_t v) {
  pb_buf at = {0};
  pb_string_field(&at, 1, name);
  pb_varint_field(&at, 3, (uint64_t)v);
  pb_varint_field(&at, 20, 2);
  pb_message_field(&a->buf, 5, &at);
  pb_free(&at);
}

void onnx_attr_float(onnx_attrs *a, const char *name, float v) {
  pb_buf at = {0};
  pb_string_field(&at, 1, name);
  pb_float_field(&at, 2, v);
  pb_varint_field(&at, 20, 1);
  pb_message_field(&a->buf, 5, &at);
  pb_free(&at);
}

void onnx_attr_ints(onnx_attrs *a, const char *name, const int64_t *v, int n) {
  pb_buf at = {0};
  pb_string_field(&at, 1, name);
  for (int i = 0; i < n; i++) pb_varint_field(&at, 8, (uint64_t)v[i]);
  pb_varint_field(&at, 20, 7);
  pb_message_field(&a->buf, 5, &at);
  pb_free(&at);
}

void onnx_attr_string(onnx_attrs *a, const char *name, const char *v) {
  pb_buf at = {0};
  pb_string_field(&at, 1, name);
  pb_string_field(&at, 9, v);
  pb_varint_field(&at, 20, 8);
  pb_message_field(&a->buf, 5, &at);
  pb_free(&at);
}

/* NodeProto: input 1, output 2, name 3, op_type 4, attribute 5 (the
 * attributes were collected as ready-made field-5 entries). */
static void write_node(onnx_graph *g, const char *op, onnx_attrs *a, int n_out, onnx_val *outs, int n_in,
                       va_list ap) {
  for (int i = 0; i < n_out; i++) outs[i] = fresh(g, "t");
  if (g->rc) {
    if (a) pb_free(&a->buf);
    return;
  }
  pb_buf node = {0};
  for (int i = 0; i < n_in; i++) pb_string_field(&node, 1, va_arg(ap, const char *));
  for (int i = 0; i < n_out; i++) pb_string_field(&node, 2, outs[i].s);
  char name[48];
  snprintf(name, sizeof name, "%s_%s", op, outs[0].s);
  pb_string_field(&node, 3, name);
  pb_string_field(&node, 4, op);
  if (a) {
    if (a->buf.failed) node.failed = true;
    if (a->buf.data) put(&node, a->buf.data, a->buf.len);
    pb_free(&a->buf);
  }
  pb_message_field(&g->body, 1, &node); /* GraphProto.node */
  onnx_check_memory(g, &node);
  pb_free(&node);
  onnx_check_memory(g, &g->body);
}

onnx_val onnx_op(onnx_graph *g, const char *op, onnx_attrs *a, int n, ...) {
  onnx_val out;
  va_list ap;
  va_start(ap, n);
  write_node(g, op, a, 1, &out, n, ap);
  va_end(ap);
  return out;
}

void onnx_op_outputs(onnx_graph *g, const char *op, onnx_attrs *a, int n_out, onnx_val *outs, int n, ...) {
  va_list ap;
  va_start(ap, n);
  write_node(g, op, a, n_out, outs, n, ap);
  va_end(ap);
}

/* TensorProto: dims 1, data_type 2 (FLOAT 1, INT64 7), name 8, raw_data 9
 * (little-endian, which is what this machine stores). */
static onnx_val add_initializer(onnx_graph *g, int data_type, const void *raw, size_t bytes, int rank,
                                const int64_t *dims) {
  onnx_val name = fresh(g, "w");
  if (g->rc) return name;
  pb_buf t = {0};
  for (int i = 0; i < rank; i++) pb_varint_field(&t, 1, (uint64_t)dims[i]);
  pb_varint_field(&t, 2, (uint64_t)data_type);
  pb_string_field(&t, 8, name.s);
  pb_bytes_field(&t, 9, raw, bytes);
  pb_message_field(&g->body, 5, &t); /* GraphProto.initializer */
  onnx_check_memory(g, &t);
  pb_free(&t);
  onnx_check_memory(g, &g->body);
  return name;
}

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "raw_data is little-endian");

onnx_val onnx_const_floats(onnx_graph *g, const float *v, int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  return add_initializer(g, 1, v, (size_t)n * sizeof *v, rank, dims);
}

onnx_val onnx_const_ints(onnx_graph *g, const int64_t *v, int64_t n) {
  return add_initializer(g, 7, v, (size_t)n * sizeof *v, 1, &n);
}

onnx_val onnx_const_int_scalar(onnx_graph *g, int64_t v) { return add_initializer(g, 7, &v, sizeof v, 0, NULL); }

onnx_val onnx_scalar(onnx_graph *g, float v) {
  int64_t one = 1;
  return onnx_const_floats(g, &v, 1, &one);
}

onnx_val onnx_reshape(onnx_graph *g, const char *x, const loom_shape *s) {
  int64_t dims[LOOM_MAX_DIMS + 1];
  dims[0] = -1;
  for (int i = 0; i < s->rank; i++) dims[i + 1] = s->d[i];
  onnx_val shape = onnx_const_ints(g, dims, s->rank + 1);
  return onnx_op(g, "Reshape", NULL, 2, x, shape.s);
}

onnx_val onnx_flatten(onnx_graph *g, const char *x, const loom_shape *s) {
  loom_shape flat = loom_shape_1d(loom_shape_numel(s));
  return onnx_reshape(g, x, &flat);
}
