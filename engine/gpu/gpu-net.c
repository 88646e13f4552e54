/*
 * A network's forward on the device: every node of the plan made by shape
 * inference becomes zero (disabled: pass-through) or one dispatch, recorded
 * once into one command buffer over persistent buffers (the input, one output
 * per node), so a forward is a copy in, one submission and a copy out.
 * Slots the device cannot run are refused with their coordinates; nothing
 * falls back to the CPU behind the caller's back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "gpu/gpu-internal.h"
#include "layers/layer-impl.h"
#include "layers/softmax-rows.h"
#include "net/net-plan.h"

static int unsupported(const net_node *nd, const char *why, loom_error *err) {
  char where[128];
  return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("%s: the Vulkan backend %s"),
                        layer_where(nd->layer, where, sizeof where), why);
}

/* Classifies one plan node (or a container's child); fails for what the
 * device cannot run. */
int gpu_net_classify(const net_node *nd, gnode *out, loom_error *err) {
  char at[48];
  if (nd->n_feedback > 0)
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                          _("slot %s: the Vulkan backend does not run feedback links; run this network on the CPU"),
                          loom_coord_format(nd->coord, at, sizeof at));
  out->layer = nd->layer;
  out->numel = loom_shape_numel(&nd->out);
  if (!nd->enabled) {
    out->kind = GN_PASS;
    return LOOM_OK;
  }
  const loom_layer *l = nd->layer;
  const char *name = loom_layer_type_name(loom_layer_get_type(l));
  if (!l->gate && (!strcmp(name, "sequential") || !strcmp(name, "residual"))) {
    /* an empty sequential passes its input through, as a disabled slot */
    out->kind = l->n_children > 0 ? GN_CONTAINER : GN_PASS;
    out->residual = name[0] == 'r';
    return LOOM_OK;
  }
  /* every combine mode of parallel.c, gated ones with their gate (gpu-parallel.c) */
  if (!strcmp(name, "parallel")) return gpu_parallel_classify(l, out, err);
  if (l->n_children > 0 || l->gate)
    return unsupported(nd, _("does not run a gate on a sequential or residual container (only parallel's filter "
                             "and route use one)"), err);
  if (!strcmp(name, "dense")) {
    out->kind = GN_DENSE;
    out->k = loom_layer_get_int(l, "in_features");
    out->n = loom_layer_get_int(l, "out_features");
    out->pos = loom_shape_numel(&nd->in) / out->k;
    out->has_bias = l->n_weights > 1;
    return LOOM_OK;
  }
  if (!strcmp(name, "softmax") || !strcmp(name, "softmax_temperature") || !strcmp(name, "masked_softmax")) {
    out->kind = GN_SOFTMAX;
    out->cols = rows_last_dim(&nd->in);
    out->rows = rows_per_sample(&nd->in);
    bool tempered = !strcmp(name, "softmax_temperature");
    out->scale = tempered ? (float)(1.0 / loom_layer_get_float(l, "temperature")) : 1.0f;
    return LOOM_OK;
  }
  if (!strcmp(name, "grid_softmax")) {
    /* one softmax per row of its own rows × cols split of the sample */
    out->kind = GN_SOFTMAX;
    out->rows = loom_layer_get_int(l, "rows");
    out->cols = loom_layer_get_int(l, "cols");
    out->scale = 1.0f;
    return LOOM_OK;
  }
  if (!strcmp(name, "sparsemax") || !strcmp(name, "entmax15")) {
    out->kind = GN_SPARSE;
    out->entmax = name[0] == 'e';
    out->cols = rows_last_dim(&nd->in);
    out->rows = rows_per_sample(&nd->in);
    return LOOM_OK;
  }
  if (!strcmp(name, "gumbel_softmax")) {
    /* the noise is drawn on the host before each submission (gpu-softmax.c) */
    out->kind = GN_GUMBEL;
    out->cols = rows_last_dim(&nd->in);
    out->rows = rows_per_sample(&nd->in);
    out->scale = (float)(1.0 / loom_layer_get_float(l, "temperature"));
    out->hard = loom_layer_get_int(l, "hard") != 0;
    return LOOM_OK;
  }
  if (!strcmp(name, "hierarchical_softmax")) {
    /* rows of `cols` logits give rows of `n` leaf probabilities; the tree goes up with the weights */
    out->kind = GN_HSOFTMAX;
    out->cols = rows_last_dim(&nd->in);
    out->rows = rows_per_sample(&nd->in);
    out->n = rows_last_dim(&nd->out);
    return LOOM_OK;
  }
  bool transposed = !strncmp(name, "conv_transpose", 14);
  if (!strcmp(name, "conv1d") || !strcmp(name, "conv2d") || !strcmp(name, "conv3d") ||
      (transposed && strlen(name) == 16)) {
    /* conv.c's parameters in its order: in, out, kernel, stride, padding,
     * dilation, groups, bias; spatial sizes padded with leading 1s. A
     * transposed convolution swaps the sides (its output is the image). */
    int dims = name[strlen(name) - 2] - '0', lead = 3 - dims;
    const loom_shape *img = transposed ? &nd->out : &nd->in, *pos = transposed ? &nd->in : &nd->out;
    gpu_conv *c = &out->conv;
    out->transposed = transposed;
    c->cin = (uint32_t)img->d[0];
    c->cout = (uint32_t)pos->d[0];
    c->groups = (uint32_t)loom_layer_get_int(l, "groups");
    for (int i = 0; i < 3; i++) {
      bool used = i >= lead;
      c->img[i] = used ? (uint32_t)img->d[1 + i - lead] : 1;
      c->pos[i] = used ? (uint32_t)pos->d[1 + i - lead] : 1;
      c->k[i] = used ? (uint32_t)loom_layer_get_value(l, 2).i[i - lead] : 1;
      c->s[i] = used ? (uint32_t)loom_layer_get_value(l, 3).i[i - lead] : 1;
      c->pad[i] = used ? (uint32_t)loom_layer_get_value(l, 4).i[i - lead] : 0;
      c->d[i] = used ? (uint32_t)loom_layer_get_value(l, 5).i[i - lead] : 1;
    }
    out->kind = GN_CONV;
    out->has_bias = l->n_weights > 1;
    return LOOM_OK;
  }
  if (!strcmp(name, "embedding")) {
    out->kind = GN_EMBED;
    out->pos = loom_shape_numel(&nd->in);
    out->n = loom_layer_get_int(l, "embedding_dim");
    out->k = loom_layer_get_int(l, "num_embeddings");
    return LOOM_OK;
  }
  if (!strcmp(name, "layernorm") || !strcmp(name, "rmsnorm")) {
    out->kind = GN_NORM;
    out->layernorm = name[0] == 'l';
    out->eps = (float)loom_layer_get_float(l, "eps");
    /* "over": 0 the last dimension, 1 the whole sample (engine/layers/norm.c) */
    out->cols = loom_layer_get_int(l, "over") == 1 ? loom_shape_numel(&nd->in) : nd->in.d[nd->in.rank - 1];
    out->rows = loom_shape_numel(&nd->in) / out->cols;
    out->has_weight = l->n_weights > 0;
    out->has_bias = l->n_weights > 1;
    return LOOM_OK;
  }
  if (gpu_act_of(l, &out->act)) {
    out->kind = GN_ACT;
    return LOOM_OK;
  }
  char why[320];
  snprintf(why, sizeof why, _("does not run %s layers yet (it runs dense, convolutions, embedding, layernorm, rmsnorm, softmax, "
             "softmax_temperature, grid_softmax, masked_softmax, sparsemax, entmax15, gumbel_softmax, "
             "hierarchical_softmax and the element-wise activations)"),
           name);
  return unsupported(nd, why, err);
}

/* The merges that take effect (from the last replace on) and the node's own
 * buffer for its merged input. */
static int setup_merges(loom_gpu_net *gn, const net_node *nd, gnode *n, const int *out_of, loom_error *err) {
  int first = 0;
  for (int m = 0; m < nd->n_merges; m++)
    if (nd->merges[m].mode == LOOM_MERGE_REPLACE) first = m;
  n->base_used = nd->merges[first].mode != LOOM_MERGE_REPLACE;
  n->merges = calloc((size_t)(nd->n_merges - first), sizeof *n->merges);
  if (!n->merges) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a network on the device"));
  for (int m = first; m < nd->n_merges; m++) {
    const net_merge *g = &nd->merges[m];
    n->merges[n->n_merges++] = (struct gmerge){.src = out_of[g->src_node], .mode = g->mode,
                                               .src_numel = g->src_numel, .before_numel = g->before_numel};
  }
  char what[160], where[128];
  snprintf(what, sizeof what, _("the merged input of %s"), layer_where(nd->layer, where, sizeof where));
  n->in = gn->n_bufs;
  int rc = gpu_buf_new(gn->g, (size_t)(gn->batch * n->in_numel) * sizeof(float), what, &gn->bufs[gn->n_bufs], err);
  if (!rc) gn->n_bufs++;
  return rc;
}

/* Builds the merged input: the start (spine input, or the replacing link),
 * then adds and concatenations in order; lengths only grow from the start. */
static int record_merges(loom_gpu_net *gn, gpu_rec *rec, const gnode *n, int64_t batch, loom_error *err) {
  gpu_buf *dst = &gn->bufs[n->in];
  int64_t len = 0;
  int m = 0, rc = LOOM_OK;
  gpu_segment seg = {.dst = dst, .batch = batch, .dst_stride = n->in_numel};
  if (n->base_used) {
    seg.src = &gn->bufs[n->base];
    seg.len = seg.src_stride = len = n->base_numel;
  } else {
    seg.src = &gn->bufs[n->merges[0].src];
    seg.len = seg.src_stride = len = n->merges[0].src_numel;
    m = 1;
  }
  rc = gpu_op_segment(rec, &seg, err);
  for (; !rc && m < n->n_merges; m++) {
    const struct gmerge *g = &n->merges[m];
    seg = (gpu_segment){.src = &gn->bufs[g->src], .dst = dst, .batch = batch, .src_stride = g->src_numel,
                        .dst_stride = n->in_numel};
    if (g->mode == LOOM_MERGE_ADD) {
      seg.len = len;
      seg.add = true;
    } else {
      seg.len = g->src_numel;
      seg.dst_off = len;
      len += g->src_numel;
    }
    rc = gpu_op_segment(rec, &seg, err);
  }
  return rc;
}

/* A masked softmax's mask onto the device, checked as the CPU's forward
 * checks it (engine/layers/softmax.c): every entry 0 or 1, one row of the
 * sample's rows or all of them, no row masked whole. The buffer is made
 * when the network is prepared and keeps its size: a mask of another
 * length afterwards is refused. */
static int upload_mask(loom_gpu_net *gn, gnode *n, loom_error *err) {
  int64_t len = 0;
  const float *mask = loom_layer_get_floats(n->layer, "mask", &len);
  char where[128];
  if (!mask) len = 0;
  if (len != 0 && len != n->cols && len != n->rows * n->cols)
    return loom_error_set(err, LOOM_ERR_SHAPE,
                          _("%s: parameter “mask” has %lld entries; expected %lld or %lld"),
                          layer_where(n->layer, where, sizeof where), (long long)len, (long long)n->cols,
                          (long long)(n->rows * n->cols));
  for (int64_t r = 0; r < len / n->cols; r++) {
    bool kept = false;
    for (int64_t i = r * n->cols; i < (r + 1) * n->cols; i++) {
      if (mask[i] != 0.0f && mask[i] != 1.0f)
        return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “mask” entry %lld is %g; expected 0 or 1"),
                              layer_where(n->layer, where, sizeof where), (long long)i, (double)mask[i]);
      kept = kept || mask[i] != 0.0f;
    }
    if (!kept)
      return loom_error_set(err, LOOM_ERR_INVALID, _("%s: parameter “mask” masks every entry of row %lld"),
                            layer_where(n->layer, where, sizeof where), (long long)r);
  }
  if (n->keep.buffer && len != n->keep_rows * n->cols)
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                          _("%s: the mask changed its length after the network went to the device; prepare it again"),
                          layer_where(n->layer, where, sizeof where));
  if (len == 0) return LOOM_OK;
  if (!n->keep.buffer) {
    int rc = gpu_buf_new(gn->g, (size_t)len * sizeof(float), layer_where(n->layer, where, sizeof where), &n->keep,
                         err);
    if (rc) return rc;
    n->keep_rows = len / n->cols;
  }
  memcpy(n->keep.map, mask, (size_t)len * sizeof(float));
  return LOOM_OK;
}

gpu_softmax gpu_node_softmax(const gnode *n, int64_t batch) {
  return (gpu_softmax){.rows = batch * n->rows, .cols = n->cols, .scale = n->scale,
                       .keep = n->keep.buffer ? &n->keep : NULL, .keep_rows = n->keep_rows};
}

int gpu_net_upload_node(loom_gpu_net *gn, gnode *n, loom_error *err) {
  if (n->kind == GN_CONTAINER) return gpu_container_upload(gn, n, err);
  if (n->kind == GN_GUMBEL || n->kind == GN_HSOFTMAX) {
    /* their buffers and the recording keep the sizes of the preparation */
    char where[128];
    if (n->layer->in_shape.rank < 1 || rows_last_dim(&n->layer->in_shape) != n->cols ||
        loom_shape_numel(&n->layer->out_shape) != n->numel)
      return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                            _("%s: the layer's shape changed after the network went to the device; prepare it again"),
                            layer_where(n->layer, where, sizeof where));
    return gpu_softmax_node_upload(gn, n, err);
  }
  if (n->kind == GN_SOFTMAX && !strcmp(loom_layer_type_name(loom_layer_get_type(n->layer)), "masked_softmax"))
    return upload_mask(gn, n, err);
  if (n->kind != GN_DENSE && n->kind != GN_EMBED && n->kind != GN_CONV && !(n->kind == GN_NORM && n->has_weight))
    return LOOM_OK;
  int rc = gpu_weights_upload(gn->g, loom_layer_weights(n->layer, 0), &n->w, err);
  if (!rc && n->has_bias) {
    loom_weights *b = loom_layer_weights(n->layer, 1);
    if (loom_weights_dtype(b) != LOOM_DTYPE_FLOAT32)
      return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("%s: the Vulkan backend needs a float32 bias"),
                            loom_weights_label(b));
    rc = gpu_weights_upload(gn->g, b, &n->b, err);
  }
  return rc;
}

LOOM_API int loom_gpu_net_upload_weights(loom_gpu_net *gn, loom_error *err) {
  int rc = LOOM_OK;
  for (int i = 0; !rc && i < gn->n_nodes; i++) rc = gpu_net_upload_node(gn, &gn->nodes[i], err);
  return rc;
}

void gpu_gnode_free(loom_gpu *g, gnode *n) {
  gpu_container_free(g, n);
  gpu_weights_free(g, &n->w);
  gpu_weights_free(g, &n->b);
  gpu_buf_free(g, &n->stats);
  gpu_buf_free(g, &n->keep);
  gpu_softmax_node_free(g, n);
}

gpu_norm gpu_node_norm(gnode *n, int64_t batch) {
  return (gpu_norm){.layernorm = n->layernorm, .eps = n->eps, .rows = batch * n->rows, .d = n->cols,
                    .w = n->has_weight ? &n->w.data : NULL, .b = n->has_bias ? &n->b.data : NULL, .stats = &n->stats};
}

int gpu_net_forward_dispatches(const loom_gpu_net *gn) {
  int d = gn->n_nodes;
  for (int i = 0; i < gn->n_nodes; i++) {
    if (gn->nodes[i].n_merges > 0) d += gn->nodes[i].n_merges + 1;
    if (gn->nodes[i].kind == GN_CONTAINER) d += gpu_container_dispatches(&gn->nodes[i]);
  }
  return d;
}

/* Pairs each dense layer with the activation right after it when that
 * activation is the only reader of the dense layer's output (no link reads
 * it and it is not the network's output), so the forward can store the
 * activation directly. */
static void plan_fusion(loom_gpu_net *gn) {
  int *readers = calloc((size_t)gn->n_bufs, sizeof *readers);
  for (int i = 0; i < gn->n_nodes; i++) {
    gn->nodes[i].fuse_act = -1;
    gn->nodes[i].fused = false;
  }
  if (!readers) return; /* no fusion: the forward is the same, one dispatch more a pair */
  for (int i = 0; i < gn->n_nodes; i++) {
    const gnode *n = &gn->nodes[i];
    if (n->n_merges > 0) {
      if (n->base_used) readers[n->base]++;
      for (int m = 0; m < n->n_merges; m++) readers[n->merges[m].src]++;
    } else if (n->kind != GN_PASS) {
      readers[n->in]++;
    }
  }
  for (int i = 0; i < gn->n_nodes; i++) {
    gnode *n = &gn->nodes[i];
    if (n->kind != GN_DENSE || n->out == gn->out_buf || readers[n->out] != 1) continue;
    for (int j = i + 1; j < gn->n_nodes; j++) {
      gnode *a = &gn->nodes[j];
      if (a->kind == GN_PASS && a->n_merges == 0) continue; /* a disabled slot passes it on */
      if (a->kind == GN_ACT && a->n_merges == 0 && a->in == n->out) {
        n->fuse_act = j;
        a->fused = true;
      }
      break;
    }
  }
  free(readers);
}

int gpu_net_record_node(loom_gpu_net *gn, gpu_rec *rec, gnode *n, int64_t batch, bool fuse, loom_error *err) {
  gpu_buf *x = &gn->bufs[n->in], *y = &gn->bufs[n->out];
  int rc = LOOM_OK;
  switch (n->kind) {
  case GN_PASS: break;
  case GN_CONTAINER: rc = gpu_container_record(gn, rec, n, batch, err); break;
  case GN_DENSE: {
    const gnode *a = fuse && n->fuse_act >= 0 ? &gn->nodes[n->fuse_act] : NULL;
    gpu_gemm op = {.a = x, .lda = (uint32_t)n->k, .b = &n->w, .tb = true, .bias = n->has_bias ? &n->b.data : NULL,
                   .c = a ? &gn->bufs[a->out] : y, .ldc = (uint32_t)n->n, .m = batch * n->pos, .n = n->n, .k = n->k,
                   .act = a ? &a->act : NULL};
    rc = gpu_op_gemm(rec, &op, err);
    break;
  }
  case GN_ACT: rc = gpu_op_act(rec, &n->act, x, NULL, y, batch * n->numel, err); break;
  case GN_SOFTMAX: {
    gpu_softmax op = gpu_node_softmax(n, batch);
    rc = gpu_op_softmax(rec, &op, x, y, err);
    break;
  }
  case GN_NORM: {
    gpu_norm op = gpu_node_norm(n, batch);
    rc = gpu_op_norm_forward(rec, &op, x, y, err);
    break;
  }
  case GN_EMBED: rc = gpu_op_embed(rec, &n->w, x, NULL, y, batch * n->pos, err); break;
  case GN_SPARSE:
  case GN_GUMBEL:
  case GN_HSOFTMAX: rc = gpu_softmax_node_forward(rec, n, x, y, batch, err); break;
  case GN_CONV:
    rc = n->transposed
           ? gpu_op_conv(rec, &n->conv, GPU_CONV_DX, batch, &n->w, n->has_bias ? &n->b.data : NULL, NULL, x, y, err)
           : gpu_op_conv(rec, &n->conv, GPU_CONV_FORWARD, batch, &n->w, n->has_bias ? &n->b.data : NULL, x, NULL, y,
                         err);
    break;
  }

  return rc;
}

int gpu_net_record_forward(loom_gpu_net *gn, gpu_rec *rec, int64_t batch, bool fuse, loom_error *err) {
  int rc = LOOM_OK;
  for (int i = 0; !rc && i < gn->n_nodes; i++) {
    gnode *n = &gn->nodes[i];
    if (n->n_merges > 0 && (rc = record_merges(gn, rec, n, batch, err))) break;
    if (fuse && n->fused) continue;
    rc = gpu_net_record_node(gn, rec, n, batch, fuse, err);
  }
  return rc;
}

static int record(loom_gpu_net *gn, loom_error *err) {
  int rc = gpu_rec_begin(gn->g, gpu_net_forward_dispatches(gn), &gn->rec, err);
  if (!rc) rc = gpu_net_record_forward(gn, &gn->rec, gn->batch, true, err);
  if (!rc)
    gpu_rec_copy(&gn->rec, &gn->bufs[gn->out_buf], &gn->readback, (size_t)(gn->batch * gn->out_numel) * sizeof(float));
  if (!rc) rc = gpu_rec_end(&gn->rec, err);
  return rc;
}

LOOM_API loom_gpu_net *loom_gpu_net_new(loom_gpu *g, loom_net *net, int64_t batch, loom_error *err) {
  if (!g || !net) {
    loom_error_set(err, LOOM_ERR_INVALID, _("no device or network given"));
    return NULL;
  }
  if (batch < 1) {
    loom_error_set(err, LOOM_ERR_INVALID, _("the batch size must be at least 1, got %lld"), (long long)batch);
    return NULL;
  }
  if (loom_net_execution(net) != LOOM_EXEC_FEED_FORWARD) {
    loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("the Vulkan backend runs feed-forward networks only, not systolic ones"));
    return NULL;
  }
  if (net_plan_ensure(net, err)) return NULL;
  loom_gpu_net *gn = calloc(1, sizeof *gn);
  int n_nodes = net_plan_n_nodes(net);
  if (gn) gn->nodes = calloc((size_t)n_nodes + 1, sizeof *gn->nodes);
  /* the input, each node's output and each merged input */
  /* the input, each node's output and each merged input, and the
   * buffers of containers' children */
  const net_node *plan = net_plan_nodes(net);
  size_t n_buffers = 2 * (size_t)n_nodes + 1;
  for (int i = 0; i < n_nodes; i++) n_buffers += (size_t)gpu_container_buffers(plan[i].layer);
  if (gn) gn->bufs = calloc(n_buffers, sizeof *gn->bufs);
  if (!gn || !gn->nodes || !gn->bufs) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a network of %d slots on the device"), n_nodes);
    loom_gpu_net_free(gn);
    return NULL;
  }
  gn->g = g;
  gn->net = net;
  gn->batch = batch;
  gn->n_nodes = n_nodes;
  loom_shape in_shape = loom_net_input_shape(net), out_shape = loom_net_output_shape(net);
  gn->in_numel = loom_shape_numel(&in_shape);
  gn->out_numel = loom_shape_numel(&out_shape);
  if (gn->in_numel > INT64_MAX / 4 / batch || gn->out_numel > INT64_MAX / 4 / batch) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("a batch of %lld samples is too large"), (long long)batch);
    loom_gpu_net_free(gn);
    return NULL;
  }
  int rc = LOOM_OK;
  /* Buffer 0 is the input; node i writes buffer i + 1 unless it passes through. */
  int *out_of = calloc((size_t)n_nodes + 1, sizeof *out_of);
  if (!out_of) rc = loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a network of %d slots on the device"),
                                   n_nodes);
  char what[160];
  if (!rc) rc = gpu_buf_new(g, (size_t)(batch * gn->in_numel) * sizeof(float), _("the network input"), &gn->bufs[0],
                            err);
  gn->n_bufs = 1;
  for (int i = 0; !rc && i < n_nodes; i++) {
    gnode *n = &gn->nodes[i];
    rc = gpu_net_classify(&plan[i], n, err);
    if (rc) break;
    n->in = n->base = plan[i].pred < 0 ? 0 : out_of[plan[i].pred];
    n->in_numel = loom_shape_numel(&plan[i].in);
    n->base_numel = loom_shape_numel(&plan[i].base_in);
    if (plan[i].n_merges > 0) {
      rc = setup_merges(gn, &plan[i], n, out_of, err);
      if (rc) break;
    }
    if (n->kind == GN_PASS) {
      n->out = n->in;
    } else if (n->kind == GN_CONTAINER) {
      rc = gpu_container_setup(gn, n, err);
    } else {
      char where[128];
      snprintf(what, sizeof what, _("the output of %s"), layer_where(n->layer, where, sizeof where));
      n->out = gn->n_bufs;
      rc = gpu_buf_new(g, (size_t)(batch * n->numel) * sizeof(float), what, &gn->bufs[gn->n_bufs], err);
      if (!rc) gn->n_bufs++;
      if (!rc && n->kind == GN_NORM)
        rc = gpu_buf_new(g, (size_t)(batch * n->rows * 2) * sizeof(float), what, &n->stats, err);
    }
    out_of[i] = n->out;
    /* Token indices of the network's input are checked before each
     * submission; those a layer computed after it (gpu-check.c). */
    if (!rc && n->kind == GN_EMBED && n->in != 0) rc = gpu_net_add_check(gn, GPU_CHECK_TOKENS, n, err);
  }
  gn->out_buf = n_nodes > 0 && out_of ? out_of[n_nodes - 1] : 0;
  free(out_of);
  if (!rc)
    rc = gpu_buf_new_readback(g, (size_t)(batch * gn->out_numel) * sizeof(float), _("the network output"),
                              &gn->readback, err);
  if (!rc) rc = loom_gpu_net_upload_weights(gn, err);
  if (!rc) plan_fusion(gn);
  if (!rc) rc = record(gn, err);
  if (rc) {
    loom_gpu_net_free(gn);
    return NULL;
  }
  return gn;
}

int gpu_net_check_input(const loom_gpu_net *gn, const float *x, int64_t batch, loom_error *err) {
  for (int i = 0; i < gn->n_nodes; i++) {
    const gnode *n = &gn->nodes[i];
    if (n->kind != GN_EMBED || n->in != 0) continue;
    int rc = gpu_check_tokens(n->layer, x, batch * n->pos, n->pos, n->k, err);
    if (rc) return rc;
  }
  return LOOM_OK;
}

LOOM_API int loom_gpu_net_forward(loom_gpu_net *gn, const float *x, float *y, loom_error *err) {
  if (!gn || !x || !y) return loom_error_set(err, LOOM_ERR_INVALID, _("no network, input or output given"));
  int check = gpu_net_check_input(gn, x, gn->batch, err);
  if (check) return check;
  memcpy(gn->bufs[0].map, x, (size_t)(gn->batch * gn->in_numel) * sizeof(float));
  gpu_softmax_fill_noise(gn, gn->batch);
  int rc = gpu_rec_submit(&gn->rec, err);
  if (!rc) rc = gpu_net_run_checks(gn, gn->batch, err);
  if (rc) return rc;
  memcpy(y, gn->readback.map, (size_t)(gn->batch * gn->out_numel) * sizeof(float));
  return LOOM_OK;
}

LOOM_API void loom_gpu_net_set_noise(loom_gpu_net *gn, uint64_t seed, uint64_t step) {
  gn->seed = seed;
  gn->step = step;
}

LOOM_API int64_t loom_gpu_net_batch(const loom_gpu_net *gn) { return gn->batch; }
LOOM_API int loom_gpu_net_n_dispatches(const loom_gpu_net *gn) { return gn->rec.n_dispatches; }

LOOM_API void loom_gpu_net_free(loom_gpu_net *gn) {
  if (!gn) return;
  if (gn->g) {
    vkDeviceWaitIdle(gn->g->device);
    gpu_rec_free(&gn->rec);
    for (int i = 0; gn->nodes && i < gn->n_nodes; i++) {
      gpu_gnode_free(gn->g, &gn->nodes[i]);
      free(gn->nodes[i].merges);
    }
    for (int i = 0; gn->bufs && i < gn->n_bufs; i++) gpu_buf_free(gn->g, &gn->bufs[i]);
    gpu_buf_free(gn->g, &gn->readback);
  }
  free(gn->nodes);
  free(gn->bufs);
  free(gn->checks);
  free(gn);
}
