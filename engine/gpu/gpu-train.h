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

typedef struct gpu_train gpu_train;

/* Prepares `net` (inferred) for steps of at most max_batch samples under
 * cfg: every slot must run on the device (an error names the slot and layer
 * type), the method must be backprop, the loss mse, cross_entropy or
 * bce_logits (an error names the field). The device's copies start from
 * the host's masters. */
gpu_train *gpu_train_new(loom_gpu *gpu, loom_net *net, int64_t max_batch, const loom_train_config *cfg,
                         loom_error *err);
void gpu_train_free(gpu_train *t);
/* Whether cfg (a live change of the configuration) can still be stepped on
 * the device; an error names the field when not. */
int gpu_train_check_config(const loom_train_config *cfg, loom_error *err);

/* One step on `rows` samples: x is rows × input numel; labels (int32, one a
 * sample) for cross_entropy, else float targets rows × output width. */
int gpu_train_step(gpu_train *t, const loom_train_config *cfg, const float *x, int64_t rows, const int32_t *labels,
                   const float *targets, double lr, loom_error *err);

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
