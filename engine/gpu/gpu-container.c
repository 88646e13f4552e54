/*
 * Containers on the device: `sequential` (its children one after another),
 * `residual` (x + the children's chain) and `parallel` (its children as
 * branches on one input, combined in any of parallel.c's modes: the
 * combining is gpu-parallel.c's), nested as deep as they come.
 * A container's node holds a node for each child, each with its own output
 * buffer (an empty sequential is a pass-through node); a sequential's
 * output is its last child's buffer, a residual's a buffer of its own, made
 * by two merge segments: the chain's output, then x added to it — y = f + x,
 * the very additions of the CPU's y = x + f. A branch or a chain may pass
 * its input through (an empty sequential): its node's output is its
 * input's buffer. The backward is in gpu-train.c
 * (record_container_backward) and gpu-parallel.c.
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "gpu/gpu-internal.h"
#include "layers/layer-impl.h"
#include "net/net-plan.h"

int gpu_container_buffers(const loom_layer *l) {
  const char *name = loom_layer_type_name(loom_layer_get_type(l));
  /* residual: its output; parallel: its output, the scratch gradient and a
   * filter's softmax */
  int n = !strcmp(name, "residual") ? 1 : !strcmp(name, "parallel") ? 3 : 0;
  for (int c = 0; c < l->n_children; c++) n += 1 + gpu_container_buffers(l->children[c]);
  if (l->gate) n += 1 + gpu_container_buffers(l->gate);
  return n;
}

int gpu_container_child(loom_gpu_net *gn, loom_layer *child, int in, gnode *s, loom_error *err) {
  char where[128];
  net_node nd = {.layer = child, .enabled = true, .in = child->in_shape, .out = child->out_shape};
  int rc = gpu_net_classify(&nd, s, err);
  if (rc) return rc;
  s->in = in;
  s->fuse_act = -1;
  if (s->kind == GN_PASS) {
    s->out = in;
  } else if (s->kind == GN_CONTAINER) {
    rc = gpu_container_setup(gn, s, err);
  } else {
    s->out = gn->n_bufs;
    rc = gpu_buf_new(gn->g, (size_t)(gn->batch * s->numel) * sizeof(float), layer_where(child, where, sizeof where),
                     &gn->bufs[gn->n_bufs], err);
    if (!rc) gn->n_bufs++;
    if (!rc && s->kind == GN_NORM)
      rc = gpu_buf_new(gn->g, (size_t)(gn->batch * s->rows * 2) * sizeof(float),
                       layer_where(child, where, sizeof where), &s->stats, err);
  }
  /* its indices come from a layer's output (or from the network's input
   * through a container): checked after the submission */
  if (!rc && s->kind == GN_EMBED) rc = gpu_net_add_check(gn, GPU_CHECK_TOKENS, s, err);
  return rc;
}

int gpu_container_setup(loom_gpu_net *gn, gnode *n, loom_error *err) {
  const loom_layer *l = n->layer;
  char where[128];
  if (l->n_children > 0) {
    n->sub = calloc((size_t)l->n_children, sizeof *n->sub);
    if (!n->sub) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a network on the device"));
  }
  int in = n->in, rc = LOOM_OK;
  n->in_numel = loom_shape_numel(&l->in_shape);
  for (int c = 0; !rc && c < l->n_children; c++) {
    if (n->parallel) in = n->in; /* every branch reads the container's input */
    gnode *s = &n->sub[n->n_sub++];
    rc = gpu_container_child(gn, l->children[c], in, s, err);
    in = s->out;
  }
  if (rc) return rc;
  if (n->parallel) return gpu_parallel_setup(gn, n, err);
  if (!n->residual) {
    n->out = in;
    return LOOM_OK;
  }
  n->out = gn->n_bufs;
  rc = gpu_buf_new(gn->g, (size_t)(gn->batch * n->numel) * sizeof(float), layer_where(l, where, sizeof where),
                   &gn->bufs[gn->n_bufs], err);
  if (!rc) gn->n_bufs++;
  return rc;
}

int gpu_node_dispatches(const gnode *n) {
  return n->kind == GN_CONTAINER ? gpu_container_dispatches(n) : n->kind != GN_PASS;
}

int gpu_container_dispatches(const gnode *n) {
  int d = n->residual ? 2 : n->parallel ? gpu_parallel_dispatches(n) : 0;
  for (int c = 0; c < n->n_sub; c++) d += gpu_node_dispatches(&n->sub[c]);
  return d;
}

int gpu_container_record(loom_gpu_net *gn, gpu_rec *rec, gnode *n, int64_t batch, loom_error *err) {
  int rc = LOOM_OK;
  for (int c = 0; !rc && c < n->n_sub; c++) rc = gpu_net_record_node(gn, rec, &n->sub[c], batch, false, err);
  if (!rc && n->parallel) return gpu_parallel_record(gn, rec, n, batch, err);
  if (rc || !n->residual) return rc;
  int last = n->n_sub > 0 ? n->sub[n->n_sub - 1].out : n->in;
  gpu_segment s = {.src = &gn->bufs[last], .dst = &gn->bufs[n->out], .batch = batch, .len = n->numel,
                   .src_stride = n->numel, .dst_stride = n->numel};
  rc = gpu_op_segment(rec, &s, err);
  if (rc) return rc;
  s.src = &gn->bufs[n->in];
  s.add = true;
  return gpu_op_segment(rec, &s, err);
}

int gpu_container_upload(loom_gpu_net *gn, gnode *n, loom_error *err) {
  int rc = LOOM_OK;
  for (int c = 0; !rc && c < n->n_sub; c++) rc = gpu_net_upload_node(gn, &n->sub[c], err);
  if (!rc && n->gate) rc = gpu_net_upload_node(gn, n->gate, err);
  return rc;
}

void gpu_container_free(loom_gpu *g, gnode *n) {
  for (int c = 0; c < n->n_sub; c++) gpu_gnode_free(g, &n->sub[c]);
  free(n->sub);
  n->sub = NULL;
  n->n_sub = 0;
  if (n->gate) gpu_gnode_free(g, n->gate);
  free(n->gate);
  n->gate = NULL;
}
