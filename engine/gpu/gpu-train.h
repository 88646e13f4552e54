/*
 * Internal to the engine: a training step on a Vulkan device, for the
 * trainer (engine/train/trainer-device.c). Free of Vulkan types, so that
 * builds without the backend compile the trainer too (gpu-none.c answers
 * every call with LOOM_ERR_UNSUPPORTED).
 *
 * A step is one command buffer: the forward, the loss gradient, the backward
 * of every node in reverse order and the optimizer's update of every
 * tensor, all on device buffers that persist between steps; only the batch
 * goes in, and the host reads the results from mapped memory afterwards
 * (docs/gpu.md "Training on the device").
 */
#pragma once
#include <stdint.h>

#include "loom/gpu.h"
#include "loom/train.h"
#include "train/optim-internal.h"

typedef struct gpu_train gpu_train;

/* Prepares `net` (inferred) for steps of at most max_batch samples under
 * cfg: every slot must run on the device (an error names the slot and layer
 * type), the method must be backprop (an error names the field); every
 * loss runs. The device's copies start from the host's masters and its
 * optimizer state from zero (gpu_train_state_set puts another there). */
gpu_train *gpu_train_new(loom_gpu *gpu, loom_net *net, int64_t max_batch, const loom_train_config *cfg,
                         loom_error *err);
void gpu_train_free(gpu_train *t);
/* Whether cfg (a live change of the configuration) can still be stepped on
 * the device; an error names the field when not. */
int gpu_train_check_config(const loom_train_config *cfg, loom_error *err);

/* One step on `rows` samples: x is rows × input numel; labels (int32, one a
 * sample, or one a head with a multi-head loss, head_mask (may be NULL)
 * marking the active heads) for the class losses, else float targets
 * rows × output width. */
int gpu_train_step(gpu_train *t, const loom_train_config *cfg, const float *x, int64_t rows, const int32_t *labels,
                   const uint8_t *head_mask, const float *targets, double lr, loom_error *err);

/* The last step's values, rows × per-sample size each, readable until the
 * next step: the network output, a node's output and the gradient at a
 * node's output (NULL for a node whose output gradient was not needed), and
 * the gradient of tensor `index` of node `node` (NULL when the node has no
 * such tensor on the device: a disabled slot). */
const float *gpu_train_output(const gpu_train *t);
const float *gpu_train_node_output(const gpu_train *t, int node);
const float *gpu_train_node_grad(const gpu_train *t, int node);
const float *gpu_train_tensor_grad(const gpu_train *t, int node, int index);

/* With clip_norm > 0: the global gradient norm before clipping, as the
 * device computed it (float32) in the last step. */
double gpu_train_grad_norm(const gpu_train *t);

/* Copies the device's updated masters into the host's stores (touched, so
 * their packed copies follow at the next morph). */
int gpu_train_download(gpu_train *t, loom_error *err);
/* Copies the host's stores to the device: every master, and the packed
 * copies the forward decodes (after the host re-morphed them). */
int gpu_train_upload(gpu_train *t, bool packed_only, loom_error *err);

/* The optimizer state on the device (gpu-train-state.c), tensor by tensor
 * in the CPU optimizer's layout (train/optim-internal.h): buffer 0 is s1
 * (SGD and RMSprop momentum, Adam's exp_avg), 1 s2, 2 s3. A tensor of a
 * disabled slot is not on the device: both return false for it.
 *
 * Export: makes *st, the host optimizer's state of tensor `index` of plan
 * node `node`, show the device's: its step count and momentum flag, and
 * for each buffer st has that the device keeps, a pointer to the device's
 * mapped values (valid until the next step). */
bool gpu_train_state_view(const gpu_train *t, int node, int index, optim_tensor_state *st);
/* Import: the device's state of that tensor from *st (a buffer the device
 * keeps and st lacks starts at zero, as a new buffer does on the CPU). */
bool gpu_train_state_set(gpu_train *t, int node, int index, const optim_tensor_state *st);
/* The trainer's steps done before the next step (its Gumbel noise's step). */
void gpu_train_set_steps(gpu_train *t, int64_t steps);
