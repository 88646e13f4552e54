/*
 * The optimizer state of a training run on the device, in and out
 * (docs/gpu.md "The training state on the device"): the trainer's
 * checkpoints (train-state.c) write the device's state in the CPU's layout,
 * and a checkpoint or a CPU run's optimizer is carried onto the device.
 *
 * The device keeps, per tensor, the buffers s1, s2, s3 in the CPU's order
 * (optim.c: buf1, buf2, buf3 — the kernels read them so), a step count and
 * SGD's momentum flag, so the state maps 1:1 and moves as plain copies of
 * mapped memory; nothing here can fail. Steps are synchronous (the host
 * waits on the step's fence), so no step is in flight when this runs.
 */
#include <string.h>

#include "gpu/gpu-train-private.h"

static gpu_buf *state_buf(gt_tensor *tt, int b) {
  gpu_buf *s = b == 0 ? &tt->s1 : b == 1 ? &tt->s2 : &tt->s3;
  return s->buffer != VK_NULL_HANDLE ? s : NULL;
}

bool gpu_train_state_view(const gpu_train *t, int node, int index, optim_tensor_state *st) {
  gt_tensor *tt = gpu_train_tensor_of(t, node, index);
  if (!tt || st->size != tt->n) return false;
  st->steps = tt->steps;
  st->has_momentum = tt->has_momentum;
  for (int b = 0; b < OPTIM_N_BUFFERS; b++) {
    gpu_buf *s = state_buf(tt, b);
    /* A buffer the host has and the device lacks (SGD's unused s2, s3 read
     * from a checkpoint) is never touched by the device's optimizer. */
    if (st->buf[b] && s) st->buf[b] = s->map;
  }
  return true;
}

bool gpu_train_state_set(gpu_train *t, int node, int index, const optim_tensor_state *st) {
  gt_tensor *tt = gpu_train_tensor_of(t, node, index);
  if (!tt || st->size != tt->n) return false;
  tt->steps = st->steps;
  tt->has_momentum = st->has_momentum;
  for (int b = 0; b < OPTIM_N_BUFFERS; b++) {
    gpu_buf *s = state_buf(tt, b);
    if (!s) continue;
    if (st->buf[b]) memcpy(s->map, st->buf[b], (size_t)tt->n * sizeof(float));
    else memset(s->map, 0, (size_t)tt->n * sizeof(float));
  }
  return true;
}

void gpu_train_set_steps(gpu_train *t, int64_t steps) { t->steps = steps; }
