/*
 * The multi-head losses of a training step on the device (docs/gpu.md
 * "Training on the device"): multi_head_ce on logits and multi_head_nll on
 * probabilities, each sample's output heads × classes, one row a head.
 * engine/train/loss.c's semantics: the mean over the batch's active heads
 * (a head mask drops heads), label smoothing, a masked head's gradient 0,
 * a batch without an active head all 0. The kernel is loss.comp's (kinds 3
 * and 4) over batch·heads rows of `classes`; the host checks the labels,
 * marks the masked heads with the label −1 and counts the active ones.
 */
#include <string.h>

#include "core/i18n.h"
#include "gpu/gpu-train-private.h"

int gpu_train_head_labels(gpu_train *t, const loom_loss_spec *spec, const int32_t *labels, const uint8_t *mask,
                          int64_t rows, loom_error *err) {
  const char *what = loom_loss_name(spec->kind);
  int64_t heads = spec->heads;
  if (heads < 1 || t->width % heads != 0)
    /* TRANSLATORS: the first %s is the loss name, multi_head_ce or multi_head_nll. */
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: %lld outputs per sample do not split into %lld heads"), what,
                          (long long)t->width, (long long)heads);
  int64_t classes = t->width / heads, active = 0;
  /* the CPU's check (loss.c check_label), on the active heads only */
  for (int64_t i = 0; i < rows * heads; i++) {
    if (mask && !mask[i]) continue;
    if (labels[i] < 0 || labels[i] >= classes)
      return loom_error_set(err, LOOM_ERR_RANGE, _("%s: sample %lld, head %lld: label %d outside [0, %lld)"), what,
                            (long long)(i / heads), (long long)(i % heads), (int)labels[i], (long long)classes);
    active++;
  }
  /* The targets buffer holds max_batch × width floats: room for the labels. */
  int32_t *dst = t->targets.map;
  for (int64_t i = 0; i < rows * heads; i++) dst[i] = mask && !mask[i] ? -1 : labels[i];
  /* The CPU scales by 1/active in double and rounds the product once; the
   * float32 inverse adds one rounding. */
  t->loss_inv = active > 0 ? 1.0 / (double)active : 0.0;
  return LOOM_OK;
}

int gpu_train_record_head_loss(gpu_train *t, const loom_loss_spec *spec, loom_error *err) {
  loom_gpu_net *gn = t->gn;
  int64_t heads = spec->heads, rows = t->rows * heads, classes = t->width / heads;
  if (t->rows * t->width > (int64_t)UINT32_MAX) return gpu_too_large(_("a loss gradient"), t->rows * t->width, err);
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
