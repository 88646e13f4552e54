/*
 * Containers on the device: `sequential` (its children one after another),
 * `residual` (x + the children's chain) and `parallel` (its children as
 * branches on one input, concatenated, added or averaged), nested as deep
 * as they come.
 * A container's node holds a node for each child, each with its own output
 * buffer (an empty sequential is a pass-through node); a sequential's
 * output is its last child's buffer, a residual's a buffer of its own, made
 * by two merge segments: the chain's output, then x added to it — y = f + x,
 * the very additions of the CPU's y = x + f. The backward is in
 * gpu-train.c (record_container_backward).
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "gpu/gpu-internal.h"
#include "layers/layer-impl.h"
#include "net/net-plan.h"

int gpu_container_buffers(const loom_layer *l) {
  const char *name = loom_layer_type_name(loom_layer_get_type(l));
  int n = !strcmp(name, "residual") ? 1 : !strcmp(name, "parallel") ? 2 : 0;
  for (int c = 0; c < l->n_children; c++) n += 1 + gpu_container_buffers(l->children[c]);
  return n;
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
    loom_layer *child = l->children[c];
    net_node nd = {.layer = child, .enabled = true, .in = child->in_shape, .out = child->out_shape};
    gnode *s = &n->sub[n->n_sub++];
    rc = gpu_net_classify(&nd, s, err);
    if (rc) break;
    s->in = in;
    s->fuse_act = -1;
    if (s->kind == GN_EMBED)
      return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                            _("%s: the Vulkan backend runs an embedding only on the network's input (its token "
                              "indices are checked on the host)"),
                            layer_where(child, where, sizeof where));
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
    in = s->out;
    if (!rc && n->parallel && s->out == n->in)
      return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                            _("%s: the Vulkan backend does not run a parallel branch that passes its input through"),
                            layer_where(child, where, sizeof where));
  }
  if (rc) return rc;
  if (n->parallel) {
    /* the gradient at a branch's input, before it is added to the others' */
    n->scratch = gn->n_bufs;
    rc = gpu_buf_new(gn->g, (size_t)(gn->batch * n->in_numel) * sizeof(float), layer_where(l, where, sizeof where),
                     &gn->bufs[gn->n_bufs], err);
    if (rc) return rc;
    gn->n_bufs++;
  }
  if (!n->residual && !n->parallel) {
    n->out = in;
    return LOOM_OK;
  }
  n->out = gn->n_bufs;
  rc = gpu_buf_new(gn->g, (size_t)(gn->batch * n->numel) * sizeof(float), layer_where(l, where, sizeof where),
                   &gn->bufs[gn->n_bufs], err);
  if (!rc) gn->n_bufs++;
  return rc;
}

int gpu_container_dispatches(const gnode *n) {
  int d = n->residual ? 2 : n->parallel ? n->n_sub : 0;
  for (int c = 0; c < n->n_sub; c++)
    d += n->sub[c].kind == GN_CONTAINER ? gpu_container_dispatches(&n->sub[c]) : n->sub[c].kind != GN_PASS;
  return d;
}

/* A parallel container's output from its branches', as parallel.c: concat
 * places them one after another in each sample; add and avg sum them in
 * branch order, avg dividing the sum by the branch count. */
static int record_combine(loom_gpu_net *gn, gpu_rec *rec, const gnode *n, int64_t batch, loom_error *err) {
  int64_t offset = 0;
  int rc = LOOM_OK;
  for (int c = 0; !rc && c < n->n_sub; c++) {
    const gnode *s = &n->sub[c];
    gpu_segment seg = {.src = &gn->bufs[s->out], .dst = &gn->bufs[n->out], .batch = batch, .len = s->numel,
                       .src_stride = s->numel, .dst_stride = n->numel};
    if (n->combine == 0) {
      seg.dst_off = offset;
      offset += s->numel;
    } else {
      seg.add = c > 0;
      seg.divide = n->combine == 2 && c == n->n_sub - 1 ? (uint32_t)n->n_sub : 0;
    }
    rc = gpu_op_segment(rec, &seg, err);
  }
  return rc;
}

int gpu_container_record(loom_gpu_net *gn, gpu_rec *rec, gnode *n, int64_t batch, loom_error *err) {
  int rc = LOOM_OK;
  for (int c = 0; !rc && c < n->n_sub; c++) rc = gpu_net_record_node(gn, rec, &n->sub[c], batch, false, err);
  if (!rc && n->parallel) return record_combine(gn, rec, n, batch, err);
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
  return rc;
}

void gpu_container_free(loom_gpu *g, gnode *n) {
  for (int c = 0; c < n->n_sub; c++) gpu_gnode_free(g, &n->sub[c]);
  free(n->sub);
  n->sub = NULL;
  n->n_sub = 0;
}
