/* Synchronous host <-> buffer copies for data that is not part of a recording (weights, one-off
 * inputs and results): a plain memcpy where the buffer is mapped, otherwise a copy through
 * staging memory on the compute queue. The caller makes sure no GPU work is using the range.
 *
 * Threads: may run on several threads at once. Staging copies share one command buffer, whose
 * lock is held across a copy's submission and wait (and takes the queue's lock inside it). */
#ifndef PPOCR_GPU_TRANSFER_H
#define PPOCR_GPU_TRANSFER_H

#include <stddef.h>

#include <vulkan/vulkan.h>

#include "gpu/pool.h"

struct gpu_context;

int gpu_upload(struct gpu_context *ctx, const struct gpu_buffer *dst, VkDeviceSize offset, const void *src,
               size_t bytes);
int gpu_download(struct gpu_context *ctx, const struct gpu_buffer *src, VkDeviceSize offset, void *dst, size_t bytes);

#endif
