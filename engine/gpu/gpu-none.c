/*
 * This build has no Vulkan backend (meson feature 'vulkan' off, or the
 * Vulkan loader or glslc missing): every gpu call says so.
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "loom/gpu.h"

static int not_built(loom_error *err) {
  return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                        _("this build of Loom has no Vulkan backend (rebuild with libvulkan-dev and glslc installed)"));
}

LOOM_API bool loom_gpu_compiled(void) { return false; }

LOOM_API int loom_gpu_list_devices(loom_gpu_device_info **out, int *n, loom_error *err) {
  *out = NULL;
  *n = 0;
  return not_built(err);
}

LOOM_API int loom_gpu_parse_device(const char *text, bool *use_gpu, int *index, loom_error *err) {
  *use_gpu = false;
  *index = -1;
  if (!strcmp(text, "cpu")) return LOOM_OK;
  if (!strncmp(text, "vulkan", 6)) return not_built(err);
  return loom_error_set(err, LOOM_ERR_INVALID, _("unknown device '%s' (expected cpu, vulkan or vulkan:N)"), text);
}

LOOM_API loom_gpu *loom_gpu_new(int index, loom_error *err) {
  not_built(err);
  return NULL;
}
LOOM_API void loom_gpu_free(loom_gpu *gpu) {}
LOOM_API const loom_gpu_device_info *loom_gpu_info(const loom_gpu *gpu) { return NULL; }

LOOM_API loom_gpu_net *loom_gpu_net_new(loom_gpu *gpu, loom_net *net, int64_t batch, loom_error *err) {
  not_built(err);
  return NULL;
}
LOOM_API int loom_gpu_net_upload_weights(loom_gpu_net *gn, loom_error *err) { return not_built(err); }
LOOM_API int loom_gpu_net_forward(loom_gpu_net *gn, const float *x, float *y, loom_error *err) {
  return not_built(err);
}
LOOM_API void loom_gpu_net_set_noise(loom_gpu_net *gn, uint64_t seed, uint64_t step) {}
LOOM_API int64_t loom_gpu_net_batch(const loom_gpu_net *gn) { return 0; }
LOOM_API int loom_gpu_net_n_dispatches(const loom_gpu_net *gn) { return 0; }
LOOM_API void loom_gpu_net_free(loom_gpu_net *gn) {}

/* The trainer's device step (gpu-train.h). */
#include "gpu/gpu-train.h"

gpu_train *gpu_train_new(loom_gpu *gpu, loom_net *net, int64_t max_batch, const loom_train_config *cfg,
                         loom_error *err) {
  not_built(err);
  return NULL;
}
void gpu_train_free(gpu_train *t) {}
int gpu_train_check_config(const loom_train_config *cfg, loom_error *err) { return not_built(err); }
int gpu_train_step(gpu_train *t, const loom_train_config *cfg, const float *x, int64_t rows, const int32_t *labels,
                   const uint8_t *head_mask, const float *targets, double lr, loom_error *err) {
  return not_built(err);
}
const float *gpu_train_output(const gpu_train *t) { return NULL; }
const float *gpu_train_node_output(const gpu_train *t, int node) { return NULL; }
const float *gpu_train_node_grad(const gpu_train *t, int node) { return NULL; }
const float *gpu_train_tensor_grad(const gpu_train *t, int node, int index) { return NULL; }
int gpu_train_download(gpu_train *t, loom_error *err) { return not_built(err); }
double gpu_train_grad_norm(const gpu_train *t) { return 0.0; }
int gpu_train_upload(gpu_train *t, bool packed_only, loom_error *err) { return not_built(err); }
bool gpu_train_state_view(const gpu_train *t, int node, int index, optim_tensor_state *st) { return false; }
bool gpu_train_state_set(gpu_train *t, int node, int index, const optim_tensor_state *st) { return false; }
void gpu_train_set_steps(gpu_train *t, int64_t steps) {}
