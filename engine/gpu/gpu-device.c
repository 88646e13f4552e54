/*
 * The Vulkan device: instance, physical device choice (a discrete GPU first,
 * a software device such as lavapipe last; LOOM_VULKAN_DEVICE or an index
 * picks one), the logical device with one compute queue, and the compute
 * pipelines of every kernel, made once per device.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "gpu/gpu-internal.h"

LOOM_API bool loom_gpu_compiled(void) { return true; }

const char *gpu_vk_result_name(VkResult r) {
  switch (r) {
  case VK_SUCCESS: return "VK_SUCCESS";
  case VK_NOT_READY: return "VK_NOT_READY";
  case VK_TIMEOUT: return "VK_TIMEOUT";
  case VK_INCOMPLETE: return "VK_INCOMPLETE";
  case VK_ERROR_OUT_OF_HOST_MEMORY: return "VK_ERROR_OUT_OF_HOST_MEMORY";
  case VK_ERROR_OUT_OF_DEVICE_MEMORY: return "VK_ERROR_OUT_OF_DEVICE_MEMORY";
  case VK_ERROR_INITIALIZATION_FAILED: return "VK_ERROR_INITIALIZATION_FAILED";
  case VK_ERROR_DEVICE_LOST: return "VK_ERROR_DEVICE_LOST";
  case VK_ERROR_MEMORY_MAP_FAILED: return "VK_ERROR_MEMORY_MAP_FAILED";
  case VK_ERROR_LAYER_NOT_PRESENT: return "VK_ERROR_LAYER_NOT_PRESENT";
  case VK_ERROR_EXTENSION_NOT_PRESENT: return "VK_ERROR_EXTENSION_NOT_PRESENT";
  case VK_ERROR_FEATURE_NOT_PRESENT: return "VK_ERROR_FEATURE_NOT_PRESENT";
  case VK_ERROR_INCOMPATIBLE_DRIVER: return "VK_ERROR_INCOMPATIBLE_DRIVER";
  case VK_ERROR_TOO_MANY_OBJECTS: return "VK_ERROR_TOO_MANY_OBJECTS";
  case VK_ERROR_OUT_OF_POOL_MEMORY: return "VK_ERROR_OUT_OF_POOL_MEMORY";
  default: return "VK_ERROR_UNKNOWN";
  }
}

int gpu_vk_error(const loom_gpu *g, loom_error *err, VkResult r, const char *what) {
  if (g)
    return loom_error_set(err, r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY
                                 ? LOOM_ERR_NOMEM
                                 : LOOM_ERR_IO,
                          _("Vulkan: %s failed on device %d (%s): %s (%d)"), what, g->info.index, g->info.name,
                          gpu_vk_result_name(r), (int)r);
  return loom_error_set(err, LOOM_ERR_IO, _("Vulkan: %s failed: %s (%d)"), what, gpu_vk_result_name(r), (int)r);
}

static int make_instance(VkInstance *out, loom_error *err) {
  VkApplicationInfo app = {
    .sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
    .pApplicationName = "loom",
    .pEngineName = "libloom",
    .apiVersion = VK_API_VERSION_1_1,
  };
  VkInstanceCreateInfo info = {.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, .pApplicationInfo = &app};
  VkResult r = vkCreateInstance(&info, NULL, out);
  if (r != VK_SUCCESS) {
    gpu_vk_error(NULL, err, r, _("creating the instance (is a Vulkan driver installed?)"));
    return err ? err->code : LOOM_ERR_IO;
  }
  return LOOM_OK;
}

static loom_gpu_kind kind_of(VkPhysicalDeviceType t) {
  switch (t) {
  case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return LOOM_GPU_DISCRETE;
  case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return LOOM_GPU_INTEGRATED;
  case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return LOOM_GPU_VIRTUAL;
  case VK_PHYSICAL_DEVICE_TYPE_CPU: return LOOM_GPU_CPU;
  default: return LOOM_GPU_OTHER;
  }
}

/* The first queue family with compute, or UINT32_MAX. */
static uint32_t compute_family(VkPhysicalDevice pd) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, NULL);
  if (n == 0 || n > 256) return UINT32_MAX;
  VkQueueFamilyProperties props[256];
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, props);
  for (uint32_t i = 0; i < n; i++)
    if (props[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return i;
  return UINT32_MAX;
}

static void describe(VkPhysicalDevice pd, int index, loom_gpu_device_info *d) {
  VkPhysicalDeviceDriverProperties drv = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceProperties2 p2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  VkPhysicalDeviceProperties p;
  vkGetPhysicalDeviceProperties(pd, &p);
  memset(d, 0, sizeof *d);
  /* The driver properties struct is core in 1.2 only. */
  if (p.apiVersion >= VK_API_VERSION_1_2) {
    p2.pNext = &drv;
    vkGetPhysicalDeviceProperties2(pd, &p2);
    snprintf(d->driver, sizeof d->driver, "%.127s %.126s", drv.driverName, drv.driverInfo);
  }
  d->index = index;
  snprintf(d->name, sizeof d->name, "%s", p.deviceName);
  d->kind = kind_of(p.deviceType);
  d->vendor_id = p.vendorID;
  d->device_id = p.deviceID;
  d->api_major = VK_API_VERSION_MAJOR(p.apiVersion);
  d->api_minor = VK_API_VERSION_MINOR(p.apiVersion);
  d->api_patch = VK_API_VERSION_PATCH(p.apiVersion);
  d->has_compute = compute_family(pd) != UINT32_MAX;
}

/* The physical devices of an instance; *out malloc'd. */
static int physical_devices(VkInstance inst, VkPhysicalDevice **out, uint32_t *n, loom_error *err) {
  *out = NULL;
  *n = 0;
  VkResult r = vkEnumeratePhysicalDevices(inst, n, NULL);
  if (r != VK_SUCCESS) return gpu_vk_error(NULL, err, r, _("listing the devices"));
  if (*n == 0) return LOOM_OK;
  *out = calloc(*n, sizeof **out);
  if (!*out) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory listing %u Vulkan devices"), *n);
  r = vkEnumeratePhysicalDevices(inst, n, *out);
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    free(*out);
    *out = NULL;
    return gpu_vk_error(NULL, err, r, _("listing the devices"));
  }
  return LOOM_OK;
}

LOOM_API int loom_gpu_list_devices(loom_gpu_device_info **out, int *n, loom_error *err) {
  *out = NULL;
  *n = 0;
  VkInstance inst;
  int rc = make_instance(&inst, err);
  if (rc) return rc;
  VkPhysicalDevice *pds;
  uint32_t count;
  rc = physical_devices(inst, &pds, &count, err);
  if (!rc && count > 0) {
    *out = calloc(count, sizeof **out);
    if (!*out) {
      rc = loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory listing %u Vulkan devices"), count);
    } else {
      for (uint32_t i = 0; i < count; i++) describe(pds[i], (int)i, &(*out)[i]);
      *n = (int)count;
    }
  }
  free(pds);
  vkDestroyInstance(inst, NULL);
  return rc;
}

LOOM_API int loom_gpu_parse_device(const char *text, bool *use_gpu, int *index, loom_error *err) {
  *use_gpu = false;
  *index = -1;
  if (!strcmp(text, "cpu")) return LOOM_OK;
  if (!strcmp(text, "vulkan")) {
    *use_gpu = true;
    return LOOM_OK;
  }
  if (!strncmp(text, "vulkan:", 7)) {
    char *end;
    errno = 0;
    long v = strtol(text + 7, &end, 10);
    if (end != text + 7 && !*end && errno == 0 && v >= 0 && v <= 1000) {
      *use_gpu = true;
      *index = (int)v;
      return LOOM_OK;
    }
  }
  return loom_error_set(err, LOOM_ERR_INVALID, _("unknown device '%s' (expected cpu, vulkan or vulkan:N)"), text);
}

/* Rank for the automatic choice: lower is better. */
static int kind_rank(loom_gpu_kind k) {
  switch (k) {
  case LOOM_GPU_DISCRETE: return 0;
  case LOOM_GPU_INTEGRATED: return 1;
  case LOOM_GPU_VIRTUAL: return 2;
  case LOOM_GPU_OTHER: return 3;
  default: return 4;
  }
}

static int choose(VkPhysicalDevice *pds, uint32_t n, int index, loom_error *err) {
  if (index < 0) {
    const char *env = getenv("LOOM_VULKAN_DEVICE");
    if (env && *env) {
      char *end;
      errno = 0;
      long v = strtol(env, &end, 10);
      if (end == env || *end || errno || v < 0 || v > 1000)
        return loom_error_set(err, LOOM_ERR_INVALID,
                              _("LOOM_VULKAN_DEVICE is '%s'; it must be a device index (see loom info --devices)"),
                              env);
      index = (int)v;
    }
  }
  if (index >= 0) {
    if ((uint32_t)index >= n)
      return loom_error_set(err, LOOM_ERR_RANGE, _("there is no Vulkan device %d: Vulkan sees %u device(s)"), index,
                            n);
    if (compute_family(pds[index]) == UINT32_MAX)
      return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("Vulkan device %d has no compute queue"), index);
    return index;
  }
  int best = -1, best_rank = 100;
  for (uint32_t i = 0; i < n; i++) {
    if (compute_family(pds[i]) == UINT32_MAX) continue;
    loom_gpu_device_info d;
    describe(pds[i], (int)i, &d);
    if (kind_rank(d.kind) < best_rank) {
      best = (int)i;
      best_rank = kind_rank(d.kind);
    }
  }
  if (best < 0) return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("no Vulkan device with a compute queue"));
  return best;
}

static int pick_memory(loom_gpu *g, loom_error *err) {
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(g->phys, &mp);
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  int plain = -1, local = -1, cached = -1;
  for (uint32_t i = 0; i < mp.memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = mp.memoryTypes[i].propertyFlags;
    if ((f & host) != host) continue;
    if (plain < 0) plain = (int)i;
    if (local < 0 && (f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT)) local = (int)i;
    if (cached < 0 && (f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT)) cached = (int)i;
  }
  if (plain < 0)
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("Vulkan device %d (%s) has no host-visible coherent memory"),
                          g->info.index, g->info.name);
  /* The workgroup-per-output product for few rows needs a GPU's many
   * threads; on a software device its barriers cost more than the
   * uncoalesced reads it avoids (lavapipe: 10× slower). */
  g->rowdot = g->info.kind != LOOM_GPU_CPU;
  /* 128 tiles keep every multiprocessor of a large GPU busy (an H100 has
   * 132); below that the 64×64 kernel's four times as many workgroups win. */
  g->tile_min_tiles = 128;
  g->mem_device_local = local >= 0;
  g->mem_type = (uint32_t)(local >= 0 ? local : plain);
  g->mem_type_readback = cached >= 0 ? (uint32_t)cached : g->mem_type;
  return LOOM_OK;
}

static int make_pipelines(loom_gpu *g, loom_error *err) {
  for (int k = 0; k < GPU_K_COUNT; k++) {
    const gpu_kernel_info *ki = &gpu_kernels[k];
    VkDescriptorSetLayoutBinding binds[8];
    for (int b = 0; b < ki->n_bindings; b++)
      binds[b] = (VkDescriptorSetLayoutBinding){
        .binding = (uint32_t)b,
        .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
        .descriptorCount = 1,
        .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT,
      };
    VkDescriptorSetLayoutCreateInfo sl = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
                                          .bindingCount = (uint32_t)ki->n_bindings,
                                          .pBindings = binds};
    VkResult r = vkCreateDescriptorSetLayout(g->device, &sl, NULL, &g->set_layout[k]);
    if (r != VK_SUCCESS) return gpu_vk_error(g, err, r, _("creating a descriptor set layout"));
    VkPushConstantRange pc = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = GPU_PUSH_BYTES};
    VkPipelineLayoutCreateInfo pl = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1,
                                     .pSetLayouts = &g->set_layout[k],
                                     .pushConstantRangeCount = 1,
                                     .pPushConstantRanges = &pc};
    r = vkCreatePipelineLayout(g->device, &pl, NULL, &g->pipe_layout[k]);
    if (r != VK_SUCCESS) return gpu_vk_error(g, err, r, _("creating a pipeline layout"));
    VkShaderModuleCreateInfo sm = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = ki->code_bytes,
                                   .pCode = ki->code};
    VkShaderModule module;
    r = vkCreateShaderModule(g->device, &sm, NULL, &module);
    if (r != VK_SUCCESS) return gpu_vk_error(g, err, r, ki->name);
    VkComputePipelineCreateInfo cp = {
      .sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                .module = module,
                .pName = "main"},
      .layout = g->pipe_layout[k],
    };
    r = vkCreateComputePipelines(g->device, VK_NULL_HANDLE, 1, &cp, NULL, &g->pipeline[k]);
    vkDestroyShaderModule(g->device, module, NULL);
    if (r != VK_SUCCESS) return gpu_vk_error(g, err, r, ki->name);
  }
  return LOOM_OK;
}

LOOM_API loom_gpu *loom_gpu_new(int index, loom_error *err) {
  loom_gpu *g = calloc(1, sizeof *g);
  if (!g) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a Vulkan device"));
    return NULL;
  }
  VkPhysicalDevice *pds = NULL;
  uint32_t n = 0;
  int rc = make_instance(&g->instance, err);
  if (!rc) rc = physical_devices(g->instance, &pds, &n, err);
  if (!rc && n == 0) rc = loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("Vulkan sees no device"));
  int chosen = rc ? -1 : choose(pds, n, index, err);
  if (!rc && chosen < 0) rc = chosen;
  if (!rc) {
    g->phys = pds[chosen];
    describe(g->phys, chosen, &g->info);
    g->queue_family = compute_family(g->phys);
    VkPhysicalDeviceProperties p;
    vkGetPhysicalDeviceProperties(g->phys, &p);
    g->max_buffer_bytes = p.limits.maxStorageBufferRange;
    float priority = 1.0f;
    VkDeviceQueueCreateInfo q = {.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
                                 .queueFamilyIndex = g->queue_family,
                                 .queueCount = 1,
                                 .pQueuePriorities = &priority};
    VkDeviceCreateInfo dc = {.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, .queueCreateInfoCount = 1,
                             .pQueueCreateInfos = &q};
    VkResult r = vkCreateDevice(g->phys, &dc, NULL, &g->device);
    if (r != VK_SUCCESS) rc = gpu_vk_error(g, err, r, _("creating the logical device"));
  }
  free(pds);
  if (!rc) {
    vkGetDeviceQueue(g->device, g->queue_family, 0, &g->queue);
    VkCommandPoolCreateInfo cp = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = g->queue_family};
    VkResult r = vkCreateCommandPool(g->device, &cp, NULL, &g->cmd_pool);
    if (r != VK_SUCCESS) rc = gpu_vk_error(g, err, r, _("creating the command pool"));
  }
  if (!rc) {
    VkFenceCreateInfo fc = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    VkResult r = vkCreateFence(g->device, &fc, NULL, &g->fence);
    if (r != VK_SUCCESS) rc = gpu_vk_error(g, err, r, _("creating a fence"));
  }
  if (!rc) rc = pick_memory(g, err);
  if (!rc) rc = make_pipelines(g, err);
  if (!rc && !(g->dummy = calloc(1, sizeof *g->dummy)))
    rc = loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a Vulkan device"));
  if (!rc) rc = gpu_buf_new(g, 16, _("an unused binding"), g->dummy, err);
  if (rc) {
    loom_gpu_free(g);
    return NULL;
  }
  return g;
}

LOOM_API void loom_gpu_free(loom_gpu *g) {
  if (!g) return;
  if (g->device) {
    vkDeviceWaitIdle(g->device);
    if (g->dummy) gpu_buf_free(g, g->dummy);
    for (int k = 0; k < GPU_K_COUNT; k++) {
      if (g->pipeline[k]) vkDestroyPipeline(g->device, g->pipeline[k], NULL);
      if (g->pipe_layout[k]) vkDestroyPipelineLayout(g->device, g->pipe_layout[k], NULL);
      if (g->set_layout[k]) vkDestroyDescriptorSetLayout(g->device, g->set_layout[k], NULL);
    }
    if (g->fence) vkDestroyFence(g->device, g->fence, NULL);
    if (g->cmd_pool) vkDestroyCommandPool(g->device, g->cmd_pool, NULL);
    vkDestroyDevice(g->device, NULL);
  }
  if (g->instance) vkDestroyInstance(g->instance, NULL);
  free(g->dummy);
  free(g);
}

LOOM_API const loom_gpu_device_info *loom_gpu_info(const loom_gpu *g) { return &g->info; }
