/* Synchronous host <-> buffer copies for data that is not part of a recording (weights, one-off
 * inputs and results): a plain memcpy where the buffer is mapped, otherwise a copy through
 * staging memory on the compute queue. The caller makes sure no GPU work is using the range. */
#ifndef PPOCR_GPU_TRANSFER_H
#define PPOCR_GPU_TRANSFER_H

#include <stddef.h>

#include <vulkan/vulkan.h>

#include "gpu/pool.h"

struct gpu_context;

int gpu_upload(struct gpu_context *ctx, const struct gpu_buffer *dst, VkDeviceSize offset,
               const void *src, size_t bytes);
int gpu_download(struct gpu_context *ctx, const struct gpu_buffer *src, VkDeviceSize offset,
                 void *dst, size_t bytes);

/* Between these two, this thread's uploads are copied to staging memory and recorded into one
 * command buffer that the end submits and waits for: one round trip for a net's weights instead
 * of one per tensor. Other threads' transfers wait for the end. The end returns the first
 * failure of the batch (the destinations are then not all written) and must follow every begin
 * that succeeded, before the destinations are used or freed. */
int gpu_upload_batch_begin(struct gpu_context *ctx);
int gpu_upload_batch_end(struct gpu_context *ctx);

#endif
