/*
 * Buffers and the recording of dispatches. Every buffer lives in one
 * host-visible, coherent memory type (device-local too where the device has
 * such a type, as resizable-BAR GPUs and software devices do), mapped for its
 * whole life: uploads and downloads are memcpy, and a recorded command
 * buffer can be submitted again and again over the same buffers.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/i18n.h"
#include "gpu/gpu-internal.h"

/* How long a submission is waited for by polling before blocking. */
#define GPU_SPIN_NS 2000000LL

static int buf_new(loom_gpu *g, size_t bytes, uint32_t mem_type, const char *what, gpu_buf *out, loom_error *err) {
  memset(out, 0, sizeof *out);
  if (bytes == 0) bytes = 4;
  bytes = (bytes + 3) & ~(size_t)3; /* packed weights are read as 32-bit words */
  if (bytes > g->max_buffer_bytes)
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                          _("%s: %zu bytes exceed the %llu bytes one storage buffer may hold on Vulkan device %d (%s)"),
                          what, bytes, (unsigned long long)g->max_buffer_bytes, g->info.index, g->info.name);
  VkBufferCreateInfo bc = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                           .size = bytes,
                           .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                    VK_BUFFER_USAGE_TRANSFER_DST_BIT,
                           .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
  VkResult r = vkCreateBuffer(g->device, &bc, NULL, &out->buffer);
  if (r != VK_SUCCESS) return gpu_vk_error(g, err, r, what);
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(g->device, out->buffer, &req);
  if (!(req.memoryTypeBits & (1u << mem_type))) {
    gpu_buf_free(g, out);
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED,
                          _("%s: Vulkan device %d (%s) cannot place a storage buffer in host-visible memory"), what,
                          g->info.index, g->info.name);
  }
  VkMemoryAllocateInfo ma = {.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
                             .allocationSize = req.size,
                             .memoryTypeIndex = mem_type};
  r = vkAllocateMemory(g->device, &ma, NULL, &out->memory);
  if (r == VK_SUCCESS) r = vkBindBufferMemory(g->device, out->buffer, out->memory, 0);
  if (r == VK_SUCCESS) r = vkMapMemory(g->device, out->memory, 0, VK_WHOLE_SIZE, 0, &out->map);
  if (r != VK_SUCCESS) {
    gpu_buf_free(g, out);
    return gpu_vk_error(g, err, r, what);
  }
  memset(out->map, 0, bytes);
  out->bytes = bytes;
  return LOOM_OK;
}

int gpu_buf_new(loom_gpu *g, size_t bytes, const char *what, gpu_buf *out, loom_error *err) {
  return buf_new(g, bytes, g->mem_type, what, out, err);
}

int gpu_buf_new_readback(loom_gpu *g, size_t bytes, const char *what, gpu_buf *out, loom_error *err) {
  return buf_new(g, bytes, g->mem_type_readback, what, out, err);
}

void gpu_buf_free(loom_gpu *g, gpu_buf *b) {
  if (b->map) vkUnmapMemory(g->device, b->memory);
  if (b->buffer) vkDestroyBuffer(g->device, b->buffer, NULL);
  if (b->memory) vkFreeMemory(g->device, b->memory, NULL);
  memset(b, 0, sizeof *b);
}

void gpu_groups_1d(int64_t n, uint32_t local, uint32_t groups[3]) {
  int64_t total = (n + local - 1) / local;
  if (total < 1) total = 1;
  int64_t x = total < 65535 ? total : 65535;
  groups[0] = (uint32_t)x;
  groups[1] = (uint32_t)((total + x - 1) / x);
  groups[2] = 1;
}

int gpu_rec_begin(loom_gpu *g, int max_dispatches, gpu_rec *rec, loom_error *err) {
  memset(rec, 0, sizeof *rec);
  rec->g = g;
  rec->max_dispatches = max_dispatches < 1 ? 1 : max_dispatches;
  VkDescriptorPoolSize size = {.type = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                               .descriptorCount = (uint32_t)rec->max_dispatches * 8u};
  VkDescriptorPoolCreateInfo pc = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                   .maxSets = (uint32_t)rec->max_dispatches,
                                   .poolSizeCount = 1,
                                   .pPoolSizes = &size};
  VkResult r = vkCreateDescriptorPool(g->device, &pc, NULL, &rec->pool);
  if (r != VK_SUCCESS) return gpu_vk_error(g, err, r, _("creating a descriptor pool"));
  VkCommandBufferAllocateInfo ca = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                    .commandPool = g->cmd_pool,
                                    .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                    .commandBufferCount = 1};
  r = vkAllocateCommandBuffers(g->device, &ca, &rec->cmd);
  if (r != VK_SUCCESS) {
    gpu_rec_free(rec);
    return gpu_vk_error(g, err, r, _("allocating a command buffer"));
  }
  VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  r = vkBeginCommandBuffer(rec->cmd, &bi);
  if (r != VK_SUCCESS) {
    gpu_rec_free(rec);
    return gpu_vk_error(g, err, r, _("beginning a command buffer"));
  }
  return LOOM_OK;
}

int gpu_rec_dispatch(gpu_rec *rec, gpu_kernel k, const gpu_buf *const *bufs, const void *push, size_t push_bytes,
                     const uint32_t groups[3], loom_error *err) {
  loom_gpu *g = rec->g;
  if (rec->ended || rec->n_dispatches >= rec->max_dispatches || push_bytes > GPU_PUSH_BYTES)
    return loom_error_set(err, LOOM_ERR_INVALID,
                          _("internal error: dispatch %d of kernel %s does not fit the recording (%d dispatches)"),
                          rec->n_dispatches, gpu_kernels[k].name, rec->max_dispatches);
  VkDescriptorSetAllocateInfo da = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                    .descriptorPool = rec->pool,
                                    .descriptorSetCount = 1,
                                    .pSetLayouts = &g->set_layout[k]};
  VkDescriptorSet set;
  VkResult r = vkAllocateDescriptorSets(g->device, &da, &set);
  if (r != VK_SUCCESS) return gpu_vk_error(g, err, r, _("allocating a descriptor set"));
  int nb = gpu_kernels[k].n_bindings;
  VkDescriptorBufferInfo infos[8];
  VkWriteDescriptorSet writes[8];
  for (int b = 0; b < nb; b++) {
    infos[b] = (VkDescriptorBufferInfo){.buffer = bufs[b]->buffer, .offset = 0, .range = VK_WHOLE_SIZE};
    writes[b] = (VkWriteDescriptorSet){.sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET,
                                       .dstSet = set,
                                       .dstBinding = (uint32_t)b,
                                       .descriptorCount = 1,
                                       .descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                       .pBufferInfo = &infos[b]};
  }
  vkUpdateDescriptorSets(g->device, (uint32_t)nb, writes, 0, NULL);
  vkCmdBindPipeline(rec->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->pipeline[k]);
  vkCmdBindDescriptorSets(rec->cmd, VK_PIPELINE_BIND_POINT_COMPUTE, g->pipe_layout[k], 0, 1, &set, 0, NULL);
  uint8_t block[GPU_PUSH_BYTES] = {0};
  memcpy(block, push, push_bytes);
  vkCmdPushConstants(rec->cmd, g->pipe_layout[k], VK_SHADER_STAGE_COMPUTE_BIT, 0, GPU_PUSH_BYTES, block);
  vkCmdDispatch(rec->cmd, groups[0], groups[1], groups[2]);
  /* Each dispatch sees every write of the ones before it: a chain of layers
   * is a chain of dependencies, and a full barrier costs no more here. */
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
  vkCmdPipelineBarrier(rec->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                       &mb, 0, NULL, 0, NULL);
  rec->n_dispatches++;
  return LOOM_OK;
}

void gpu_rec_copy(gpu_rec *rec, const gpu_buf *src, gpu_buf *dst, size_t bytes) {
  /* The dispatch barrier made shader writes visible to shaders; a copy reads
   * in the transfer stage. */
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_TRANSFER_READ_BIT};
  vkCmdPipelineBarrier(rec->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &mb, 0,
                       NULL, 0, NULL);
  VkBufferCopy region = {.size = bytes};
  vkCmdCopyBuffer(rec->cmd, src->buffer, dst->buffer, 1, &region);
}

int gpu_rec_end(gpu_rec *rec, loom_error *err) {
  /* Host reads after the fence need the shader and copy writes made
   * available to the host. */
  VkMemoryBarrier mb = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                        .srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT,
                        .dstAccessMask = VK_ACCESS_HOST_READ_BIT};
  vkCmdPipelineBarrier(rec->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
                       VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
  VkResult r = vkEndCommandBuffer(rec->cmd);
  if (r != VK_SUCCESS) return gpu_vk_error(rec->g, err, r, _("ending a command buffer"));
  rec->ended = true;
  return LOOM_OK;
}

int gpu_rec_submit(gpu_rec *rec, loom_error *err) {
  loom_gpu *g = rec->g;
  if (!rec->ended) return loom_error_set(err, LOOM_ERR_INVALID, _("internal error: submitting an unended recording"));
  VkSubmitInfo si = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &rec->cmd};
  VkResult r = vkResetFences(g->device, 1, &g->fence);
  if (r == VK_SUCCESS) r = vkQueueSubmit(g->queue, 1, &si, g->fence);
  if (r != VK_SUCCESS) return gpu_vk_error(g, err, r, _("submitting a command buffer"));
  /* A short submission finishes in tens of microseconds; a blocking wait
   * can add as much again in the driver's wake-up. Poll first, for at most
   * GPU_SPIN_NS, then block. */
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    r = vkGetFenceStatus(g->device, g->fence);
    if (r != VK_NOT_READY) break;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if ((t1.tv_sec - t0.tv_sec) * 1000000000LL + (t1.tv_nsec - t0.tv_nsec) > GPU_SPIN_NS) {
      r = vkWaitForFences(g->device, 1, &g->fence, VK_TRUE, UINT64_MAX);
      break;
    }
  }
  if (r != VK_SUCCESS) return gpu_vk_error(g, err, r, _("waiting for the device"));
  return LOOM_OK;
}

void gpu_rec_free(gpu_rec *rec) {
  if (!rec->g) return;
  if (rec->cmd) vkFreeCommandBuffers(rec->g->device, rec->g->cmd_pool, 1, &rec->cmd);
  if (rec->pool) vkDestroyDescriptorPool(rec->g->device, rec->pool, NULL);
  memset(rec, 0, sizeof *rec);
}

void gpu_rec_zero(gpu_rec *rec, gpu_buf *b) {
  /* Earlier dispatches may still read or write the buffer (a gradient of the
   * previous layer); the fill waits for them, and later dispatches for it. */
  VkMemoryBarrier before = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                            .srcAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
                            .dstAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT};
  vkCmdPipelineBarrier(rec->cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1, &before,
                       0, NULL, 0, NULL);
  vkCmdFillBuffer(rec->cmd, b->buffer, 0, VK_WHOLE_SIZE, 0);
  VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                           .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                           .dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
  vkCmdPipelineBarrier(rec->cmd, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &after, 0,
                       NULL, 0, NULL);
}
