/*
 * Training steps on a Vulkan device (loom_trainer_set_device, docs/gpu.md
 * "Training on the device"). The device runs the forward, the loss
 * gradient, the backward and the optimizer's update as one submission
 * (engine/gpu/gpu-train.c); everything else stays the trainer's own: the
 * batches, the schedule, the loss value and accuracy (from the device's
 * output, in double as on the CPU), the statistics and NaN checks (reading
 * the device's buffers), the re-morph of the updated stores and the epoch's
 * evaluation (on the host, whose masters are brought up to date after every
 * step so that checkpoints, evaluation and the caller always see the
 * trained weights).
 */
#include <math.h>
#include <string.h>

#include "core/i18n.h"
#include "train/optim-internal.h"
#include "train/trainer-internal.h"

/* The device's optimizer state into the host's optimizer (tr->opt), tensor
 * by tensor: the host then holds what the device does. */
void trainer_device_state_to_host(loom_trainer *tr) {
  if (!tr->dev || !tr->opt) return;
  for (int t = 0; t < tr->n_tensors; t++) {
    optim_tensor_state host, dev;
    optim_tensor_get(tr->opt, t, &host);
    dev = host;
    if (!gpu_train_state_view(tr->dev, tr->tensors[t].node, tr->tensors[t].index, &dev)) continue;
    optim_tensor_set_counts(tr->opt, t, dev.steps, dev.has_momentum);
    for (int b = 0; b < OPTIM_N_BUFFERS; b++)
      if (host.buf[b] && dev.buf[b] != host.buf[b]) memcpy(host.buf[b], dev.buf[b], (size_t)host.size * sizeof(float));
  }
}

/* The host's optimizer state onto the device `dev` (a checkpoint imported,
 * or a CPU run moving to the device). */
void trainer_device_state_from_host(loom_trainer *tr, gpu_train *dev) {
  if (!dev || !tr->opt) return;
  for (int t = 0; t < tr->n_tensors; t++) {
    optim_tensor_state host;
    optim_tensor_get(tr->opt, t, &host);
    gpu_train_state_set(dev, tr->tensors[t].node, tr->tensors[t].index, &host);
  }
}

/* The optimizer's state moves with the trainer: from the device it leaves
 * into the host's optimizer, from there onto the device it joins (both hold
 * every tensor's state in the CPU's layout, docs/gpu.md "The training state
 * on the device"). A device that refuses the network or the configuration
 * changes nothing. */
LOOM_API int loom_trainer_set_device(loom_trainer *tr, loom_gpu *gpu, loom_error *err) {
  if (!tr) return loom_error_set(err, LOOM_ERR_INVALID, _("no trainer given"));
  gpu_train *dev = NULL;
  if (gpu) {
    int64_t batch = tr->cfg.batch_size < tr->train->n ? tr->cfg.batch_size : tr->train->n;
    dev = gpu_train_new(gpu, tr->net, batch, &tr->cfg, err);
    if (!dev) return err ? err->code : LOOM_ERR_UNSUPPORTED;
  }
  trainer_device_state_to_host(tr);
  trainer_device_state_from_host(tr, dev);
  gpu_train_free(tr->dev);
  tr->dev = dev;
  return LOOM_OK;
}

LOOM_API bool loom_trainer_on_device(const loom_trainer *tr) { return tr && tr->dev; }

int trainer_device_step(loom_trainer *tr, const loom_batch *b, loom_error *err) {
  loom_step_stats *s = &tr->last;
  const float *targets = NULL;
  int rc = train_view_targets(&tr->view, b, &targets, err);
  /* the CPU trainer's context: the steps done before this one */
  gpu_train_set_steps(tr->dev, tr->steps);
  if (!rc)
    rc = gpu_train_step(tr->dev, &tr->cfg, b->inputs, b->size, b->labels, b->head_mask, targets, s->lr, err);
  if (rc) return rc;
  tr->dev_batch = b->size;
  /* The loss and accuracy of the device's output, by the CPU's own code. */
  if ((rc = train_view_loss(&tr->view, b, gpu_train_output(tr->dev), &s->loss, NULL, &s->correct, &s->counted, NULL,
                            err)))
    return rc;
  trainer_activation_stats(tr);
  if ((rc = trainer_check_activations(tr, s->loss, err))) return rc;
  trainer_refresh_tensors(tr);
  for (int t = 0; t < tr->n_tensors; t++) {
    train_tensor *tt = &tr->tensors[t];
    /* Read only: the statistics and the NaN check of the gradients. */
    tt->grad = (float *)gpu_train_tensor_grad(tr->dev, tt->node, tt->index);
    tr->grads[t] = tt->grad;
  }
  if ((rc = trainer_gradient_pass(tr, err))) return rc;
  /* The global norm before clipping: the device's when it clipped (the
   * gradients read back are the clipped ones, whose norms the layers report,
   * as on the CPU). */
  double norm = 0.0;
  for (int t = 0; t < tr->n_tensors; t++)
    if (tr->grads[t]) norm += tr->tensors[t].grad_sq;
  s->grad_norm = tr->cfg.clip_norm > 0 ? gpu_train_grad_norm(tr->dev) : sqrt(norm);
  /* The host's masters are still those before the update: back them up,
   * then take the device's. */
  for (int t = 0; t < tr->n_tensors; t++)
    if (tr->grads[t]) trainer_backup(tr, t);
  if ((rc = gpu_train_download(tr->dev, err))) return rc;
  if ((rc = trainer_weight_pass(tr, err))) return rc;
  if ((rc = trainer_morph_updated(tr, err))) return rc;
  /* Packed stores: the forward decodes the host's new packed copy. */
  return gpu_train_upload(tr->dev, true, err);
}
