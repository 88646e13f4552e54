/*
 * loom_onnx_export: walks the execution plan (net-plan.h) node by node as
 * exec.c runs it. A node's input is its spine predecessor's output with the
 * incoming links merged in link order (replace, add, concat on the
 * per-sample values in memory order, so on [N, numel] tensors), reshaped to
 * the node's input shape; a disabled node passes that through.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "io/onnx/onnx-graph.h"
#include "loom/file.h"
#include "loom/onnx.h"
#include "net/net-plan.h"

#define ONNX_IR_VERSION 8 /* ONNX 1.10 … 1.12 */
#define ONNX_OPSET 17     /* LayerNormalization is an operator from 17 on */

/* ValueInfoProto {name 1, type 2 {tensor_type 1 {elem_type 1, shape 2
 * {dim 1 {dim_value 1 | dim_param 2}}}}} for a float [N, s...] tensor. */
static void value_info(pb_buf *graph, int field, const char *name, const loom_shape *s) {
  pb_buf shape = {0}, tensor = {0}, type = {0}, info = {0}, dim = {0};
  pb_string_field(&dim, 2, "N");
  pb_message_field(&shape, 1, &dim);
  for (int i = 0; i < s->rank; i++) {
    pb_free(&dim);
    pb_varint_field(&dim, 1, (uint64_t)s->d[i]);
    pb_message_field(&shape, 1, &dim);
  }
  pb_varint_field(&tensor, 1, 1); /* FLOAT */
  pb_message_field(&tensor, 2, &shape);
  pb_message_field(&type, 1, &tensor);
  pb_string_field(&info, 1, name);
  pb_message_field(&info, 2, &type);
  pb_message_field(graph, field, &info);
  pb_free(&dim);
  pb_free(&shape);
  pb_free(&tensor);
  pb_free(&type);
  pb_free(&info);
}

/* The merged input of node k as [N, node->in]. */
static onnx_val node_input(onnx_graph *g, const net_node *nodes, int k, const onnx_val *outs, const onnx_val *x,
                           const loom_shape *net_in) {
  const net_node *n = &nodes[k];
  onnx_val base = n->pred < 0 ? *x : outs[n->pred];
  if (n->n_merges == 0) return base;
  const loom_shape *base_shape = n->pred < 0 ? net_in : &nodes[n->pred].out;
  onnx_val v = onnx_flatten(g, base.s, base_shape);
  for (int i = 0; i < n->n_merges; i++) {
    const net_merge *m = &n->merges[i];
    const net_node *src = &nodes[m->src_node];
    onnx_val s = onnx_flatten(g, outs[m->src_node].s, &src->out);
    switch (m->mode) {
    case LOOM_MERGE_REPLACE: v = s; break;
    case LOOM_MERGE_ADD: v = onnx_op(g, "Add", NULL, 2, v.s, s.s); break;
    case LOOM_MERGE_CONCAT: {
      onnx_attrs a = {0};
      onnx_attr_int(&a, "axis", 1);
      v = onnx_op(g, "Concat", &a, 2, v.s, s.s);
      break;
    }
    }
  }
  return onnx_reshape(g, v.s, &n->in);
}

static int build_graph(loom_net *net, onnx_graph *g) {
  char where[64];
  if (loom_net_execution(net) != LOOM_EXEC_FEED_FORWARD)
    return onnx_fail(g, LOOM_ERR_UNSUPPORTED,
                     _("the network runs systolic (every slot reads the previous tick); ONNX export covers "
                       "feed-forward networks only"));
  int rc = net_plan_ensure(net, g->err);
  if (rc) return g->rc = rc;
  int n_nodes = net_plan_n_nodes(net);
  const net_node *nodes = net_plan_nodes(net);
  if (n_nodes < 1) return onnx_fail(g, LOOM_ERR_INVALID, _("the network holds no layers; there is nothing to export"));
  for (int k = 0; k < n_nodes; k++)
    if (nodes[k].n_feedback > 0)
      return onnx_fail(g, LOOM_ERR_UNSUPPORTED, _("slot %s receives a feedback link, which ONNX export cannot express"),
                       loom_coord_format(nodes[k].coord, where, sizeof where));
  loom_shape in_shape = loom_net_input_shape(net), out_shape = loom_net_output_shape(net);
  onnx_val *outs = calloc((size_t)n_nodes, sizeof *outs);
  if (!outs) return onnx_fail(g, LOOM_ERR_NOMEM, _("out of memory writing the ONNX graph"));
  onnx_val x;
  snprintf(x.s, sizeof x.s, "input");
  for (int k = 0; k < n_nodes && !g->rc; k++) {
    onnx_val in = node_input(g, nodes, k, outs, &x, &in_shape);
    outs[k] = nodes[k].enabled ? onnx_layer(g, nodes[k].layer, in.s) : in;
  }
  if (!g->rc) {
    /* Identity names the graph output whatever the last node was. */
    onnx_val last = onnx_reshape(g, outs[n_nodes - 1].s, &out_shape);
    pb_buf node = {0};
    pb_string_field(&node, 1, last.s);
    pb_string_field(&node, 2, "output");
    pb_string_field(&node, 3, "output_identity");
    pb_string_field(&node, 4, "Identity");
    pb_message_field(&g->body, 1, &node);
    pb_free(&node);
    pb_string_field(&g->body, 2, "loom");
    value_info(&g->body, 11, "input", &in_shape);
    value_info(&g->body, 12, "output", &out_shape);
    onnx_check_memory(g, &g->body);
  }
  free(outs);
  return g->rc;
}

LOOM_API int loom_onnx_export_bytes(loom_net *net, void **data, size_t *len, loom_error *err) {
  if (!net || !data || !len) return loom_error_set(err, LOOM_ERR_INVALID, _("no network or output buffer given"));
  *data = NULL;
  *len = 0;
  onnx_graph g = {.err = err};
  int rc = build_graph(net, &g);
  if (rc) {
    pb_free(&g.body);
    return rc;
  }
  /* ModelProto: ir_version 1, producer_name 2, producer_version 3, graph 7,
   * opset_import 8 {domain 1, version 2}. */
  pb_buf model = {0}, opset = {0};
  pb_varint_field(&model, 1, ONNX_IR_VERSION);
  pb_string_field(&model, 2, "loom");
  pb_string_field(&model, 3, LOOM_VERSION_STRING);
  pb_message_field(&model, 7, &g.body);
  pb_string_field(&opset, 1, "");
  pb_varint_field(&opset, 2, ONNX_OPSET);
  pb_message_field(&model, 8, &opset);
  pb_free(&opset);
  pb_free(&g.body);
  if (model.failed) {
    pb_free(&model);
    return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory writing the ONNX graph"));
  }
  *data = model.data;
  *len = model.len;
  return LOOM_OK;
}

LOOM_API int loom_onnx_export(loom_net *net, const char *path, loom_error *err) {
  void *data = NULL;
  size_t len = 0;
  int rc = loom_onnx_export_bytes(net, &data, &len, err);
  if (!rc) rc = loom_file_write_atomic(path, data, len, err);
  free(data);
  return rc;
}
