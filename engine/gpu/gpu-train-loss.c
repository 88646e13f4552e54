/*
 * The multi-head losses of a training step on the device (docs/gpu.md
 * "Multi-head losses on the device"): multi_head_ce on logits and multi_head_nll on
 * probabilities, each sample's output heads × classes, one row a head.
 * engine/train/loss.c's semantics: the mean over the batch's active heads
 * (a head mask drops heads), label smoothing, a masked head's gradient 0,
 * a batch without an active head all 0. The kernel is loss.comp's (kinds 3
 * and 4) over batch·heads rows of `classes`; the host checks the labels,
 * marks the masked heads with the label −1 and counts the active ones.
 * (No messages of its own: the label check is loss.c's, the size check
 * gpu-train.c's.)
 */
#include <string.h>

#include "gpu/gpu-train-private.h"
#include "train/loss-internal.h"

int gpu_train_head_labels(gpu_train *t, const loom_loss_spec *spec, const int32_t *labels, const uint8_t *mask,
                          int64_t rows, loom_error *err) {
  int64_t active = 0;
  int rc = loss_check_head_labels(spec, labels, mask, rows, t->width, &active, err);
  if (rc) return rc;
  /* The targets buffer holds max_batch × width floats: room for the labels. */
  int32_t *dst = t->targets.map;
  for (int64_t i = 0; i < rows * spec->heads; i++) dst[i] = mask && !mask[i] ? -1 : labels[i];
  /* The CPU scales by 1/active in double and rounds the product once; the
   * float32 inverse adds one rounding. */
  t->loss_inv = active > 0 ? 1.0 / (double)active : 0.0;
  return LOOM_OK;
}

int gpu_train_record_head_loss(gpu_train *t, const loom_loss_spec *spec, loom_error *err) {
  loom_gpu_net *gn = t->gn;
  int64_t heads = spec->heads, rows = t->rows * heads, classes = t->width / heads;
  /* loss.comp's push constants (gpu-ops.c gpu_op_loss_grad has the same) */
  struct {
    uint32_t rows, cols, kind, valid;
    float inv, eps;
  } push = {(uint32_t)rows, (uint32_t)classes, spec->kind == LOOM_LOSS_MULTI_HEAD_NLL ? 4u : 3u, (uint32_t)rows,
            (float)t->loss_inv, (float)spec->label_smoothing};
  const gpu_buf *bufs[3] = {&gn->bufs[gn->out_buf], &t->targets, &t->grads[gn->out_buf]};
  uint32_t groups[3];
  gpu_groups_1d(rows, 1, groups);
  return gpu_rec_dispatch(&t->rec, GPU_K_LOSS, bufs, &push, sizeof push, groups, err);
}
