/*
 * A training step on the device (gpu-train.h, docs/gpu.md "Training on the
 * device"): the forward of gpu-net.c, then the loss gradient, the backward
 * of every node in reverse order and the optimizer's update, recorded into
 * one command buffer and submitted once.
 *
 * The step is recorded again for every step: the learning rate, Adam's bias
 * corrections and the batch size are push constants of the kernels, and
 * they change from step to step. Recording a few dozen dispatches costs the
 * host microseconds; keeping one recording and reading those values from a
 * buffer is the way to save them (docs/gpu.md "Not done yet").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "gpu/gpu-internal.h"
#include "gpu/gpu-train-private.h"
#include "layers/layer-impl.h"

int gpu_train_check_config(const loom_train_config *cfg, loom_error *err) {
  if (cfg->method != LOOM_TRAIN_BACKPROP)
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                          _("method: the Vulkan backend trains with backprop only, not %s"),
                          loom_train_method_name(cfg->method));
  /* every loss the trainer has: mse, cross_entropy and bce_logits
   * (gpu_op_loss_grad), multi_head_ce and multi_head_nll (gpu-loss.c) */
  return LOOM_OK;
}

static int tensor_setup(gpu_train *t, gt_tensor *tt, const loom_optim_config *oc, loom_error *err) {
  loom_gpu *g = t->g;
  const char *label = loom_weights_label(tt->w);
  size_t bytes = (size_t)tt->n * sizeof(float);
  tt->own_master = tt->dev->dtype != LOOM_DTYPE_FLOAT32;
  int rc = tt->own_master ? gpu_buf_new(g, bytes, label, &tt->master, err) : LOOM_OK;
  if (!rc) rc = gpu_buf_new(g, bytes, label, &tt->grad, err);
  bool adam = oc->kind != LOOM_OPTIM_SGD;
  /* State for whatever the optimizer may need: momentum can be switched on
   * between steps (loom_trainer_set_config). */
  if (!rc) rc = gpu_buf_new(g, bytes, label, &tt->s1, err);
  if (!rc && adam) rc = gpu_buf_new(g, bytes, label, &tt->s2, err);
  if (!rc && adam) rc = gpu_buf_new(g, bytes, label, &tt->s3, err);
  if (!rc) rc = gpu_buf_new_readback(g, bytes, label, &tt->rb_param, err);
  if (!rc) rc = gpu_buf_new_readback(g, bytes, label, &tt->rb_grad, err);
  return rc;
}

static gpu_buf *param_buf(gt_tensor *tt) { return tt->own_master ? &tt->master : &tt->dev->data; }

int gpu_train_upload(gpu_train *t, bool packed_only, loom_error *err) {
  for (int i = 0; i < t->n_tensors; i++) {
    gt_tensor *tt = &t->tensors[i];
    if (packed_only && !tt->own_master) continue;
    /* gpu_weights_upload morphs and copies the packed bytes: for float32
     * those are the master itself. */
    int rc = gpu_weights_upload(t->g, tt->w, tt->dev, err);
    if (rc) return rc;
    if (tt->own_master && !packed_only)
      memcpy(tt->master.map, loom_weights_master_const(tt->w), (size_t)tt->n * sizeof(float));
  }
  return LOOM_OK;
}

int gpu_train_download(gpu_train *t, loom_error *err) {
  for (int i = 0; i < t->n_tensors; i++) {
    gt_tensor *tt = &t->tensors[i];
    float *m = loom_weights_master(tt->w);
    if (!m) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: no master weights"), loom_weights_label(tt->w));
    memcpy(m, tt->rb_param.map, (size_t)tt->n * sizeof(float));
    loom_weights_touch(tt->w);
  }
  return LOOM_OK;
}

/* Which gradients are sums (t->acc) and the private input gradients of the
 * nodes that read such a buffer without a merge. */
static int plan_sums(gpu_train *t, loom_error *err) {
  loom_gpu_net *gn = t->gn;
  int *readers = calloc((size_t)gn->n_bufs, sizeof *readers);
  if (!readers) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a network on the device"));
  readers[gn->out_buf]++; /* the loss */
  for (int k = 0; k < gn->n_nodes; k++) {
    const gnode *n = &gn->nodes[k];
    if (n->n_merges > 0) {
      if (n->base_used) t->acc[n->base] = true;
      for (int m = 0; m < n->n_merges; m++) t->acc[n->merges[m].src] = true;
    } else if (n->kind != GN_PASS) {
      readers[n->in]++;
    }
  }
  for (int j = 0; j < gn->n_bufs; j++)
    if (readers[j] > 1) t->acc[j] = true;
  free(readers);
  int rc = LOOM_OK;
  for (int k = 0; !rc && k < gn->n_nodes; k++) {
    const gnode *n = &gn->nodes[k];
    if (n->kind != GN_PASS && n->n_merges == 0 && t->acc[n->in])
      rc = gpu_buf_new(t->g, gn->bufs[n->in].bytes, _("the gradient at a layer's input"), &t->gpriv[k], err);
  }
  return rc;
}

/* Where node k writes the gradient at its input. */
static gpu_buf *input_grad(gpu_train *t, int k) {
  const gnode *n = &t->gn->nodes[k];
  return t->gpriv[k].buffer ? &t->gpriv[k] : &t->grads[n->in];
}

/* Adds node k's input gradient into the gradients it is a part of: the
 * merge's parts back to the spine input and the link sources (the CPU's
 * merge_backward), or a private input gradient into its buffer's sum. */
static int record_distribute(gpu_train *t, int k, loom_error *err) {
  loom_gpu_net *gn = t->gn;
  const gnode *n = &gn->nodes[k];
  int64_t b = t->rows;
  if (n->n_merges == 0) {
    if (!t->gpriv[k].buffer) return LOOM_OK;
    gpu_segment s = {.src = &t->gpriv[k], .dst = &t->grads[n->in], .batch = b, .len = n->in_numel,
                     .src_stride = n->in_numel, .dst_stride = n->in_numel, .add = true};
    t->has_grad[n->in] = true;
    return gpu_op_segment(&t->rec, &s, err);
  }
  const gpu_buf *gm = &t->grads[n->in];
  int rc = LOOM_OK;
  for (int m = n->n_merges - 1; !rc && m >= 0; m--) {
    const struct gmerge *g = &n->merges[m];
    /* a concatenated source sits after what came before it; the rest start at 0 */
    int64_t off = g->mode == LOOM_MERGE_CONCAT ? g->before_numel : 0;
    gpu_segment s = {.src = gm, .dst = &t->grads[g->src], .batch = b, .len = g->src_numel,
                     .src_stride = n->in_numel, .src_off = off, .dst_stride = g->src_numel, .add = true};
    t->has_grad[g->src] = true;
    rc = gpu_op_segment(&t->rec, &s, err);
  }
  if (!rc && n->base_used) {
    gpu_segment s = {.src = gm, .dst = &t->grads[n->base], .batch = b, .len = n->base_numel,
                     .src_stride = n->in_numel, .dst_stride = n->base_numel, .add = true};
    t->has_grad[n->base] = true;
    rc = gpu_op_segment(&t->rec, &s, err);
  }
  return rc;
}

/* At least the number of trainable tensors the device keeps. */
static int max_tensors(const loom_gpu_net *gn) {
  int n = 0;
  for (int k = 0; k < gn->n_nodes; k++) n += loom_layer_n_weights(gn->nodes[k].layer);
  return n;
}

/* The trainable tensors of node n (plan node k or a child of one, its
 * tensors from k's flat index `base` on, in the order of
 * loom_layer_weights: a layer's own, then its children's). */
static int register_tensors(gpu_train *t, gnode *n, int k, int base, const loom_optim_config *oc, loom_error *err) {
  int rc = LOOM_OK;
  if (n->kind == GN_CONTAINER) {
    for (int c = 0; !rc && c < n->n_sub; c++) {
      rc = register_tensors(t, &n->sub[c], k, base, oc, err);
      base += loom_layer_n_weights(n->sub[c].layer);
    }
    /* the gate's tensors come after the children's (layer-weights.c) */
    if (!rc && n->gate) rc = register_tensors(t, n->gate, k, base, oc, err);
    return rc;
  }
  if (n->kind != GN_DENSE && n->kind != GN_EMBED && n->kind != GN_CONV && !(n->kind == GN_NORM && n->has_weight))
    return LOOM_OK;
  for (int idx = 0; !rc && idx < (n->has_bias ? 2 : 1); idx++) {
    gt_tensor *tt = &t->tensors[t->n_tensors];
    tt->w = loom_layer_weights(n->layer, idx);
    tt->dev = idx == 0 ? &n->w : &n->b;
    tt->node = k;
    tt->index = base + idx;
    tt->n = loom_weights_count(tt->w);
    rc = tensor_setup(t, tt, oc, err);
    t->n_tensors++;
  }
  return rc;
}

gpu_train *gpu_train_new(loom_gpu *gpu, loom_net *net, int64_t max_batch, const loom_train_config *cfg,
                         loom_error *err) {
  if (gpu_train_check_config(cfg, err)) return NULL;
  loom_gpu_net *gn = loom_gpu_net_new(gpu, net, max_batch, err);
  if (!gn) return NULL;
  gpu_train *t = calloc(1, sizeof *t);
  if (t) {
    t->g = gpu;
    t->gn = gn;
    t->max_batch = max_batch;
    t->width = gn->out_numel;
    t->grads = calloc((size_t)gn->n_bufs, sizeof *t->grads);
    t->has_grad = calloc((size_t)gn->n_bufs, sizeof *t->has_grad);
    t->tensors = calloc((size_t)max_tensors(gn) + 1, sizeof *t->tensors);
  }
  if (t) {
    t->rb_bufs = calloc((size_t)gn->n_bufs, sizeof *t->rb_bufs);
    t->rb_grads = calloc((size_t)gn->n_bufs, sizeof *t->rb_grads);
    t->acc = calloc((size_t)gn->n_bufs, sizeof *t->acc);
    t->gpriv = calloc((size_t)gn->n_nodes + 1, sizeof *t->gpriv);
  }
  if (!t || !t->grads || !t->has_grad || !t->tensors || !t->acc || !t->gpriv || !t->rb_bufs || !t->rb_grads) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a network of %d slots on the device"), gn->n_nodes);
    if (t) gpu_train_free(t);
    else loom_gpu_net_free(gn);
    return NULL;
  }
  int rc = LOOM_OK;
  for (int i = 1; !rc && i < gn->n_bufs; i++) {
    rc = gpu_buf_new(gpu, gn->bufs[i].bytes, _("the gradient at a layer's output"), &t->grads[i], err);
  }
  /* Buffer 0 is the network input: its gradient is needed only when a
   * disabled slot before the first layer reports it (the trainer's norms). */
  if (!rc) rc = gpu_buf_new(gpu, gn->bufs[0].bytes, _("the gradient at the network input"), &t->grads[0], err);
  for (int i = 0; !rc && i < gn->n_bufs; i++) {
    rc = gpu_buf_new_readback(gpu, gn->bufs[i].bytes, _("a copy for the host"), &t->rb_bufs[i], err);
    if (!rc) rc = gpu_buf_new_readback(gpu, gn->bufs[i].bytes, _("a copy for the host"), &t->rb_grads[i], err);
  }
  if (!rc) rc = plan_sums(t, err);
  if (!rc)
    rc = gpu_buf_new(gpu, (size_t)(max_tensors(gn) + 1) * sizeof(float), _("the gradient norms"), &t->clip_sums, err);
  if (!rc) rc = gpu_buf_new(gpu, 2 * sizeof(float), _("the gradient norms"), &t->clip_scale, err);
  if (!rc) rc = gpu_buf_new_readback(gpu, 2 * sizeof(float), _("the gradient norms"), &t->rb_clip_scale, err);
  /* Labels are one int32 a sample; float targets the output's width. */
  if (!rc)
    rc = gpu_buf_new(gpu, (size_t)(max_batch * (t->width > 0 ? t->width : 1)) * sizeof(float), _("the targets"),
                     &t->targets, err);
  for (int k = 0; !rc && k < gn->n_nodes; k++) rc = register_tensors(t, &gn->nodes[k], k, 0, &cfg->optim, err);
  if (!rc) rc = gpu_train_upload(t, false, err);
  if (rc) {
    gpu_train_free(t);
    return NULL;
  }
  return t;
}

void gpu_train_free(gpu_train *t) {
  if (!t) return;
  loom_gpu *g = t->g;
  vkDeviceWaitIdle(g->device);
  gpu_rec_free(&t->rec);
  gpu_rec_free(&t->forward);
  for (int i = 0; i < t->n_tensors; i++) {
    gt_tensor *tt = &t->tensors[i];
    gpu_buf_free(g, &tt->master);
    gpu_buf_free(g, &tt->grad);
    gpu_buf_free(g, &tt->s1);
    gpu_buf_free(g, &tt->s2);
    gpu_buf_free(g, &tt->s3);
    gpu_buf_free(g, &tt->rb_param);
    gpu_buf_free(g, &tt->rb_grad);
  }
  for (int i = 0; t->rb_bufs && t->rb_grads && i < t->gn->n_bufs; i++) {
    gpu_buf_free(g, &t->rb_bufs[i]);
    gpu_buf_free(g, &t->rb_grads[i]);
  }
  free(t->rb_bufs);
  free(t->rb_grads);
  for (int i = 0; t->grads && i < t->gn->n_bufs; i++) gpu_buf_free(g, &t->grads[i]);
  for (int k = 0; t->gpriv && k < t->gn->n_nodes; k++) gpu_buf_free(g, &t->gpriv[k]);
  gpu_buf_free(g, &t->targets);
  gpu_buf_free(g, &t->clip_sums);
  gpu_buf_free(g, &t->clip_scale);
  gpu_buf_free(g, &t->rb_clip_scale);
  loom_gpu_net_free(t->gn);
  free(t->grads);
  free(t->has_grad);
  free(t->acc);
  free(t->gpriv);
  free(t->tensors);
  free(t);
}

static int record_container_backward(gpu_train *t, gnode *n, int k, int base, gpu_buf *dx, bool need_input_grad,
                                     loom_error *err);
static int record_parallel_backward(gpu_train *t, gnode *n, int k, int base, gpu_buf *dx, bool need_input_grad,
                                    loom_error *err);

/* The backward of node n — plan node k or a child of one, its tensors from
 * k's flat index `base` on — with the gradient at its output in
 * grads[n->out]: parameter gradients, and the gradient at its input into dx
 * when something reads it (need_input_grad). */
static int record_node_backward(gpu_train *t, gnode *n, int k, int base, gpu_buf *dx, bool need_input_grad,
                                loom_error *err) {
  loom_gpu_net *gn = t->gn;
  gpu_buf *x = &gn->bufs[n->in], *y = &gn->bufs[n->out];
  gpu_buf *dy = &t->grads[n->out];
  int64_t b = t->rows;
  int rc = LOOM_OK;
  switch (n->kind) {
  case GN_PASS: return LOOM_OK;
  case GN_CONTAINER: return record_container_backward(t, n, k, base, dx, need_input_grad, err);
  case GN_DENSE: {
    int64_t m = b * n->pos;
    gt_tensor *tw = gpu_train_tensor_of(t, k, base), *tb = gpu_train_tensor_of(t, k, base + 1);
    /* dW = dyᵀ·x (N×K), written whole: the CPU zeroes gradients before each
     * step and adds one product, which is this sum in another order. */
    gpu_weights xv = gpu_weights_view(x, m, n->k);
    gpu_gemm dw = {.a = dy, .lda = (uint32_t)n->n, .ta = true, .b = &xv, .c = &tw->grad, .ldc = (uint32_t)n->k,
                   .m = n->n, .n = n->k, .k = m};
    rc = gpu_op_gemm(&t->rec, &dw, err);
    if (!rc && tb) {
      gpu_rec_zero(&t->rec, &tb->grad);
      rc = gpu_op_colsum(&t->rec, dy, &tb->grad, m, n->n, err);
    }
    if (!rc && need_input_grad) {
      /* dx = dy·W through the forward's copy: with packed weights that is the
       * dequantized W, the straight-through estimator of the CPU. */
      gpu_gemm op = {.a = dy, .lda = (uint32_t)n->n, .b = &n->w, .c = dx, .ldc = (uint32_t)n->k, .m = m, .n = n->k,
                     .k = n->n};
      rc = gpu_op_gemm(&t->rec, &op, err);
    }
    return rc;
  }
  case GN_ACT:
    return need_input_grad ? gpu_op_act(&t->rec, &n->act, x, dy, dx, b * n->numel, err) : LOOM_OK;
  case GN_SOFTMAX: {
    if (!need_input_grad) return LOOM_OK;
    gpu_softmax op = gpu_node_softmax(n, b);
    return gpu_op_softmax_backward(&t->rec, &op, y, dy, dx, err);
  }
  case GN_SPARSE:
  case GN_GUMBEL:
  case GN_HSOFTMAX: return need_input_grad ? gpu_softmax_node_backward(&t->rec, n, y, dy, dx, b, err) : LOOM_OK;
  case GN_CONV: {
    gt_tensor *tw = gpu_train_tensor_of(t, k, base), *tb = gpu_train_tensor_of(t, k, base + 1);
    /* dx through the forward's copy of W: with packed weights, the
     * dequantized W (the CPU's straight-through estimator) */
    if (n->transposed) {
      /* the sides swapped: x is the positions side, dy the image side */
      gpu_conv img_side = n->conv;
      img_side.cout = n->conv.cin; /* the bias belongs to the image side's channels */
      memcpy(img_side.pos, n->conv.img, sizeof img_side.pos);
      rc = gpu_op_conv(&t->rec, &n->conv, GPU_CONV_DW, b, &n->w, NULL, dy, x, &tw->grad, err);
      if (!rc && tb) rc = gpu_op_conv(&t->rec, &img_side, GPU_CONV_DB, b, &n->w, NULL, NULL, dy, &tb->grad, err);
      if (!rc && need_input_grad)
        rc = gpu_op_conv(&t->rec, &n->conv, GPU_CONV_FORWARD, b, &n->w, NULL, dy, NULL, dx, err);
      return rc;
    }
    rc = gpu_op_conv(&t->rec, &n->conv, GPU_CONV_DW, b, &n->w, NULL, x, dy, &tw->grad, err);
    if (!rc && tb) rc = gpu_op_conv(&t->rec, &n->conv, GPU_CONV_DB, b, &n->w, NULL, NULL, dy, &tb->grad, err);
    if (!rc && need_input_grad) rc = gpu_op_conv(&t->rec, &n->conv, GPU_CONV_DX, b, &n->w, NULL, NULL, dy, dx, err);
    return rc;
  }
  case GN_EMBED: {
    gt_tensor *tw = gpu_train_tensor_of(t, k, base);
    gpu_rec_zero(&t->rec, &tw->grad);
    rc = gpu_op_embed(&t->rec, &n->w, x, dy, &tw->grad, b * n->pos, err);
    /* Token indices are discrete: no gradient flows into them. */
    if (!rc && need_input_grad) gpu_rec_zero(&t->rec, dx);
    return rc;
  }
  case GN_NORM: {
    gpu_norm op = gpu_node_norm(n, b);
    gt_tensor *tw = gpu_train_tensor_of(t, k, base), *tb = gpu_train_tensor_of(t, k, base + 1);
    if (tw) rc = gpu_op_norm_params(&t->rec, &op, x, dy, &tw->grad, tb ? &tb->grad : NULL, err);
    if (!rc && need_input_grad) rc = gpu_op_norm_backward(&t->rec, &op, x, dy, dx, err);
    return rc;
  }
  }
  return LOOM_OK;
}

/* Through gpu-parallel.c, which calls back for each branch's and the gate's backward. */
typedef struct {
  gpu_train *t;
  int k;
} child_ctx;

static int child_backward(void *ctx, gnode *n, int base, gpu_buf *dx, bool need_input_grad, loom_error *err) {
  child_ctx *c = ctx;
  return record_node_backward(c->t, n, c->k, base, dx, need_input_grad, err);
}

static int record_parallel_backward(gpu_train *t, gnode *n, int k, int base, gpu_buf *dx, bool need_input_grad,
                                    loom_error *err) {
  child_ctx c = {t, k};
  gpu_parallel_bw bw = {.gn = t->gn, .rec = &t->rec, .grads = t->grads, .rows = t->rows,
                        .backward = child_backward, .ctx = &c};
  return gpu_parallel_backward(&bw, n, base, dx, need_input_grad, err);
}

/* A container's backward: its children's in reverse order, each from the
 * gradient at its output buffer (a sequential's last child writes the
 * container's own); a child that reads the container's input (the first,
 * after any that pass it through) writes into dx. A residual first copies
 * the gradient at its output to its chain's output, and afterwards adds it
 * to dx, as the CPU's dx += dy (with an identity chain, dx = dy + dy). */
static int record_container_backward(gpu_train *t, gnode *n, int k, int base, gpu_buf *dx, bool need_input_grad,
                                     loom_error *err) {
  if (n->parallel) return record_parallel_backward(t, n, k, base, dx, need_input_grad, err);
  int chain_out = n->n_sub > 0 ? n->sub[n->n_sub - 1].out : n->in, rc = LOOM_OK;
  gpu_segment dy = {.src = &t->grads[n->out], .batch = t->rows, .len = n->numel, .src_stride = n->numel,
                    .dst_stride = n->numel};
  if (n->residual && chain_out != n->in) {
    dy.dst = &t->grads[chain_out];
    rc = gpu_op_segment(&t->rec, &dy, err);
  }
  int start = base;
  for (int c = 0; c < n->n_sub; c++) start += loom_layer_n_weights(n->sub[c].layer);
  for (int c = n->n_sub - 1; !rc && c >= 0; c--) {
    gnode *s = &n->sub[c];
    start -= loom_layer_n_weights(s->layer);
    if (s->kind == GN_PASS) continue; /* its output is its input's buffer */
    bool first = s->in == n->in;
    rc = record_node_backward(t, s, k, start, first ? dx : &t->grads[s->in], first ? need_input_grad : true, err);
  }
  if (rc || !n->residual || !need_input_grad) return rc;
  dy.dst = dx;
  if (chain_out == n->in) rc = gpu_op_segment(&t->rec, &dy, err);
  dy.add = true;
  if (!rc) rc = gpu_op_segment(&t->rec, &dy, err);
  return rc;
}

/* with_forward false: the forward was submitted (and checked) alone before. */
static int record_step(gpu_train *t, const loom_train_config *cfg, double lr, bool with_forward, loom_error *err) {
  loom_gpu_net *gn = t->gn;
  gpu_rec_free(&t->rec);
  /* forward, loss, backward (≤ 3 a node, and a merge's segments), update (1 a tensor) */
  int max = gpu_net_forward_dispatches(gn) + 1 + 3 * t->n_tensors + 1;
  for (int k = 0; k < gn->n_nodes; k++) {
    max += 4 + gn->nodes[k].n_merges;
    if (gn->nodes[k].kind == GN_CONTAINER) max += 4 * gpu_container_dispatches(&gn->nodes[k]);
  }
  int rc = gpu_rec_begin(t->g, max, &t->rec, err);
  /* unfused: the backward reads every layer's own output */
  if (!rc && with_forward) rc = gpu_net_record_forward(gn, &t->rec, t->rows, false, err);
  /* The sums start from zero; the loss gradient is the first part of its
   * buffer's, so it may come after. */
  for (int j = 0; !rc && j < gn->n_bufs; j++)
    if (t->acc[j]) gpu_rec_zero(&t->rec, &t->grads[j]);
  bool heads = cfg->loss.kind == LOOM_LOSS_MULTI_HEAD_CE || cfg->loss.kind == LOOM_LOSS_MULTI_HEAD_NLL;
  if (!rc && heads)
    rc = t->rows * t->width > (int64_t)UINT32_MAX ? gpu_too_large(_("a loss gradient"), t->rows * t->width, err)
                                                  : gpu_train_record_head_loss(t, &cfg->loss, err);
  else if (!rc)
    rc = gpu_op_loss_grad(&t->rec, &cfg->loss, &gn->bufs[gn->out_buf], &t->targets, &t->grads[gn->out_buf], t->rows,
                          t->rows, t->width, err);
  memset(t->has_grad, 0, (size_t)gn->n_bufs * sizeof *t->has_grad);
  t->has_grad[gn->out_buf] = true;
  /* Links point forward, so every reader of a node's output comes after it:
   * in reverse order a node's output gradient is complete when its turn
   * comes. The network input's gradient is wanted only when a disabled slot
   * before the first layer reports it, or a link adds to it. */
  bool input_wanted = t->acc[0];
  for (int k = 0; k < gn->n_nodes; k++)
    if (gn->nodes[k].kind == GN_PASS && gn->nodes[k].out == 0) input_wanted = true;
  for (int k = gn->n_nodes - 1; !rc && k >= 0; k--) {
    gnode *n = &gn->nodes[k];
    if (n->kind != GN_PASS) {
      bool need = n->in != 0 || input_wanted;
      rc = record_node_backward(t, n, k, 0, input_grad(t, k), need, err);
      if (need && n->n_merges == 0 && !t->gpriv[k].buffer) t->has_grad[n->in] = true;
      if (need && n->n_merges > 0) t->has_grad[n->in] = true;
    }
    if (!rc) rc = record_distribute(t, k, err);
  }
  /* Clipping by the global norm: every gradient is complete here. */
  if (cfg->clip_norm > 0) {
    for (int i = 0; !rc && i < t->n_tensors; i++)
      rc = gpu_op_clip(&t->rec, 0, &t->tensors[i].grad, t->tensors[i].n, i, &t->clip_sums, &t->clip_scale,
                       t->n_tensors, cfg->clip_norm, err);
    if (!rc) rc = gpu_op_clip(&t->rec, 1, NULL, 0, 0, &t->clip_sums, &t->clip_scale, t->n_tensors, cfg->clip_norm, err);
    for (int i = 0; !rc && i < t->n_tensors; i++)
      rc = gpu_op_clip(&t->rec, 2, &t->tensors[i].grad, t->tensors[i].n, i, &t->clip_sums, &t->clip_scale,
                       t->n_tensors, cfg->clip_norm, err);
    if (!rc) gpu_rec_copy(&t->rec, &t->clip_scale, &t->rb_clip_scale, 2 * sizeof(float));
  }
  for (int i = 0; !rc && i < t->n_tensors; i++) {
    gt_tensor *tt = &t->tensors[i];
    if (cfg->optim.kind == LOOM_OPTIM_SGD)
      rc = gpu_op_sgd(&t->rec, &cfg->optim, !tt->has_momentum, lr, param_buf(tt), &tt->grad,
                      cfg->optim.momentum != 0 ? &tt->s1 : NULL, tt->n, err);
    else if (cfg->optim.kind == LOOM_OPTIM_RMSPROP)
      rc = gpu_op_rmsprop(&t->rec, &cfg->optim, lr, param_buf(tt), &tt->grad, &tt->s1, &tt->s2, &tt->s3, tt->n, err);
    else
      rc = gpu_op_adam(&t->rec, &cfg->optim, tt->steps + 1, lr, param_buf(tt), &tt->grad, &tt->s1, &tt->s2,
                       cfg->optim.amsgrad ? &tt->s3 : NULL, tt->n, err);
  }
  if (!rc) {
    gpu_rec_copy(&t->rec, &gn->bufs[gn->out_buf], &gn->readback, (size_t)(t->rows * t->width) * sizeof(float));
    /* What the host reads after the step: activations and gradients for the
     * statistics, the updated parameters for the host's masters. */
    for (int i = 1; i < gn->n_bufs; i++) {
      size_t bytes = gn->bufs[i].bytes / (size_t)t->max_batch * (size_t)t->rows;
      gpu_rec_copy(&t->rec, &gn->bufs[i], &t->rb_bufs[i], bytes);
      if (t->has_grad[i]) gpu_rec_copy(&t->rec, &t->grads[i], &t->rb_grads[i], bytes);
    }
    if (t->has_grad[0])
      gpu_rec_copy(&t->rec, &t->grads[0], &t->rb_grads[0], gn->bufs[0].bytes / (size_t)t->max_batch * (size_t)t->rows);
    for (int i = 0; i < t->n_tensors; i++) {
      gt_tensor *tt = &t->tensors[i];
      gpu_rec_copy(&t->rec, &tt->grad, &tt->rb_grad, (size_t)tt->n * sizeof(float));
      gpu_rec_copy(&t->rec, param_buf(tt), &tt->rb_param, (size_t)tt->n * sizeof(float));
    }
  }
  if (!rc) rc = gpu_rec_end(&t->rec, err);
  return rc;
}

int gpu_train_step(gpu_train *t, const loom_train_config *cfg, const float *x, int64_t rows, const int32_t *labels,
                   const uint8_t *head_mask, const float *targets, double lr, loom_error *err) {
  if (rows < 1 || rows > t->max_batch)
    return loom_error_set(err, LOOM_ERR_INVALID, _("a batch of %lld samples on a device prepared for %lld"),
                          (long long)rows, (long long)t->max_batch);
  int rc = gpu_train_check_config(cfg, err);
  if (rc) return rc;
  bool labelled = loom_loss_uses_labels(cfg->loss.kind), heads = cfg->loss.kind != LOOM_LOSS_CROSS_ENTROPY;
  if (labelled && !labels)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: missing labels"), loom_loss_name(cfg->loss.kind));
  if (!labelled && !targets)
    return loom_error_set(err, LOOM_ERR_INVALID, _("loss: %s needs float targets"), loom_loss_name(cfg->loss.kind));
  if (labelled && heads && (rc = gpu_train_head_labels(t, &cfg->loss, labels, head_mask, rows, err))) return rc;
  if (labelled && !heads)
    for (int64_t i = 0; i < rows; i++)
      if (labels[i] < 0 || labels[i] >= t->width)
        return loom_error_set(err, LOOM_ERR_RANGE, _("sample %lld: label %d outside [0, %lld)"), (long long)i,
                              labels[i], (long long)t->width);
  if ((rc = gpu_net_check_input(t->gn, x, rows, err))) return rc;
  t->rows = rows;
  memcpy(t->gn->bufs[0].map, x, (size_t)(rows * t->gn->in_numel) * sizeof(float));
  /* the CPU trainer's context: its seed, and the steps done before this one */
  loom_gpu_net_set_noise(t->gn, cfg->seed, (uint64_t)t->steps);
  gpu_softmax_fill_noise(t->gn, rows);
  if (labelled && !heads) memcpy(t->targets.map, labels, (size_t)rows * sizeof(int32_t));
  else if (!labelled) memcpy(t->targets.map, targets, (size_t)(rows * t->width) * sizeof(float));
  bool checked = t->gn->n_checks > 0;
  /* What the CPU checks during its forward decides whether the step goes on */
  if (checked && (rc = gpu_net_forward_checked(t->gn, &t->forward, rows, err))) return rc;
  rc = record_step(t, cfg, lr, !checked, err);
  if (!rc) rc = gpu_rec_submit(&t->rec, err);
  if (rc) return rc;
  t->steps++;
  for (int i = 0; i < t->n_tensors; i++) {
    t->tensors[i].steps++;
    if (cfg->optim.kind == LOOM_OPTIM_SGD && (float)cfg->optim.momentum != 0.0f) t->tensors[i].has_momentum = true;
  }
  return LOOM_OK;
}

const float *gpu_train_output(const gpu_train *t) { return t->gn->readback.map; }

const float *gpu_train_node_output(const gpu_train *t, int node) {
  int b = t->gn->nodes[node].out;
  /* buffer 0 (a disabled slot before the first layer) is the input the host wrote */
  return b == 0 ? t->gn->bufs[0].map : t->rb_bufs[b].map;
}

const float *gpu_train_node_grad(const gpu_train *t, int node) {
  int b = t->gn->nodes[node].out;
  return t->has_grad[b] ? t->rb_grads[b].map : NULL;
}

const float *gpu_train_tensor_grad(const gpu_train *t, int node, int index) {
  gt_tensor *tt = gpu_train_tensor_of(t, node, index);
  return tt ? tt->rb_grad.map : NULL;
}

double gpu_train_grad_norm(const gpu_train *t) { return ((const float *)t->rb_clip_scale.map)[1]; }
