/*
 * Internal to gpu-train.c and gpu-train-state.c: the device's training
 * state (its tensors, their optimizer state and the step's buffers).
 */
#pragma once
#include "gpu/gpu-internal.h"
#include "gpu/gpu-train.h"

/* One trainable tensor of an enabled node. */
typedef struct {
  loom_weights *w;   /* the host's store */
  gpu_weights *dev;  /* the copy the forward reads (the node's w or b) */
  bool own_master;   /* dev is packed: the float32 master lives in `master` */
  gpu_buf master, grad, s1, s2, s3; /* s*: optimizer state */
  gpu_buf rb_param, rb_grad; /* host-cached copies made at the end of a step */
  bool has_momentum; /* SGD: the momentum buffer holds a step (the CPU's flag) */
  int64_t steps;     /* the optimizer's steps of this tensor (the CPU's per-tensor count) */
  int node, index;
  int64_t n;
} gt_tensor;

struct gpu_train {
  loom_gpu *g;
  loom_gpu_net *gn;
  int64_t max_batch, rows, width;
  gpu_buf *grads;   /* per activation buffer of gn: the gradient at it */
  bool *has_grad;   /* whether the last step computed grads[i] */
  /* Per activation buffer: read by more than one node or by a link, so its
   * gradient is a sum: zeroed at the start of the backward, then added to. */
  bool *acc;
  /* Per node: the gradient at its input when that is such a sum (the node
   * writes here, then it is added in); unused otherwise. */
  gpu_buf *gpriv;
  gpu_buf targets;  /* int32 labels or float targets */
  /* Host-cached copies of every activation and gradient buffer, made by the
   * step's command buffer: mapped device-local memory is write-combined,
   * and the host reading the statistics from it directly cost the H100 a
   * training step of 100 ms instead of a few. */
  gpu_buf *rb_bufs, *rb_grads;
  /* Clipping: each tensor's Σ g², then [coef, norm] (and its host copy). */
  gpu_buf clip_sums, clip_scale, rb_clip_scale;
  int n_tensors;
  gt_tensor *tensors;
  int64_t steps;    /* the trainer's steps done: the Gumbel noise's step */
  double loss_inv;  /* multi-head losses: 1 / the batch's active heads (0: none) */
  gpu_rec rec;
  gpu_rec forward;  /* the forward alone, when the host checks it (gpu-check.c) */
};


/* The device's tensor `index` of plan node `node` (the trainer's numbering),
 * or NULL (a disabled slot's tensors are not on the device). */
static inline gt_tensor *gpu_train_tensor_of(const gpu_train *t, int node, int index) {
  for (int i = 0; i < t->n_tensors; i++)
    if (t->tensors[i].node == node && t->tensors[i].index == index) return &t->tensors[i];
  return NULL;
}

/* Multi-head cross-entropy and NLL (gpu-train-loss.c): checks the batch's labels of the active heads as the CPU's
 * loss does (the CPU's message), writes them into t->targets with −1 for a
 * masked head, and sets t->loss_inv. */
int gpu_train_head_labels(gpu_train *t, const loom_loss_spec *spec, const int32_t *labels, const uint8_t *mask,
                          int64_t rows, loom_error *err);
/* Records the loss gradient of a multi-head loss for t->rows samples
 * (rows × width within the kernels' 32-bit indices: the caller checks). */
int gpu_train_record_head_loss(gpu_train *t, const loom_loss_spec *spec, loom_error *err);
