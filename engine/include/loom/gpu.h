/*
 * The Vulkan compute backend (docs/gpu.md). Optional at build time: without
 * it loom_gpu_compiled() is false and every other call fails with
 * LOOM_ERR_UNSUPPORTED and a message saying so.
 *
 * A loom_gpu is one Vulkan device with its queue, its compute pipelines and
 * a command pool. A loom_gpu_net is a network prepared for that device at a
 * fixed batch: its weights resident in their packed layout (the same bytes as
 * the CPU's weight store, docs/dtypes.md), every activation in a persistent
 * device buffer and the whole forward recorded into one command buffer, so a
 * forward is one copy in, one submission and one copy out.
 *
 * A device is not thread-safe: one owner at a time.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "export.h"
#include "net.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum loom_gpu_kind {
  LOOM_GPU_OTHER,
  LOOM_GPU_INTEGRATED,
  LOOM_GPU_DISCRETE,
  LOOM_GPU_VIRTUAL,
  LOOM_GPU_CPU, /* a software device such as lavapipe (llvmpipe) */
} loom_gpu_kind;

typedef struct loom_gpu_device_info {
  int index; /* the Vulkan enumeration order; what vulkan:N names */
  char name[256];
  char driver[256]; /* driver name and version text, when the driver reports them */
  loom_gpu_kind kind;
  uint32_t vendor_id, device_id;
  uint32_t api_major, api_minor, api_patch;
  bool has_compute; /* a queue family with compute: only these can be used */
} loom_gpu_device_info;

/* Whether this build has the Vulkan backend. */
LOOM_API bool loom_gpu_compiled(void);
/* "discrete", "integrated", "virtual", "cpu", "other". */
LOOM_API const char *loom_gpu_kind_name(loom_gpu_kind kind);

/* Every physical device the Vulkan loader sees; *out is malloc'd (free()).
 * No loader or no driver is an error naming what failed. */
LOOM_API int loom_gpu_list_devices(loom_gpu_device_info **out, int *n, loom_error *err);

typedef struct loom_gpu loom_gpu;

/* Opens device `index`, or with index < 0 the one LOOM_VULKAN_DEVICE names
 * (an index) or else the best: a discrete GPU, then integrated, virtual,
 * then a software device. */
LOOM_API loom_gpu *loom_gpu_new(int index, loom_error *err);
LOOM_API void loom_gpu_free(loom_gpu *gpu);
LOOM_API const loom_gpu_device_info *loom_gpu_info(const loom_gpu *gpu);

/* Parses a device choice: "cpu" (*use_gpu false), "vulkan" (index -1: the
 * default choice above) or "vulkan:N". */
LOOM_API int loom_gpu_parse_device(const char *text, bool *use_gpu, int *index, loom_error *err);

typedef struct loom_gpu_net loom_gpu_net;

/* Prepares the network's forward at `batch` samples: infers shapes, checks
 * that every slot can run on the device (an unsupported layer type, link or
 * execution mode is an error naming the slot: there is no CPU fallback),
 * morphs and uploads the weights and records the command buffer. The net
 * must outlive the result; weights changed later are not seen until
 * loom_gpu_net_upload_weights(). */
LOOM_API loom_gpu_net *loom_gpu_net_new(loom_gpu *gpu, loom_net *net, int64_t batch, loom_error *err);
LOOM_API int loom_gpu_net_upload_weights(loom_gpu_net *gn, loom_error *err);
/* x: batch × input numel; y: batch × output numel. */
LOOM_API int loom_gpu_net_forward(loom_gpu_net *gn, const float *x, float *y, loom_error *err);
/* The seed and step a gumbel_softmax layer draws its noise from, as the
 * CPU's loom_ctx seed and step (both 0 until set: the context of `loom
 * forward`). The noise is drawn on the host for every forward. */
LOOM_API void loom_gpu_net_set_noise(loom_gpu_net *gn, uint64_t seed, uint64_t step);
LOOM_API int64_t loom_gpu_net_batch(const loom_gpu_net *gn);
/* Dispatches recorded in the command buffer. */
LOOM_API int loom_gpu_net_n_dispatches(const loom_gpu_net *gn);
LOOM_API void loom_gpu_net_free(loom_gpu_net *gn);

#ifdef __cplusplus
}
#endif
