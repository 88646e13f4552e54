/*
 * The names of the device kinds, built with or without the Vulkan backend:
 * `loom gpu` and the workbench print them either way.
 */
#include "loom/gpu.h"

LOOM_API const char *loom_gpu_kind_name(loom_gpu_kind kind) {
  switch (kind) {
  case LOOM_GPU_DISCRETE: return "discrete";
  case LOOM_GPU_INTEGRATED: return "integrated";
  case LOOM_GPU_VIRTUAL: return "virtual";
  case LOOM_GPU_CPU: return "cpu";
  default: return "other";
  }
}
