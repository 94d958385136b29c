#include "gpu/transfer.h"
#include "gpu/internal.h"

#include <string.h>

#define STAGING_CHUNK (16ull << 20)

static int transfer_init(struct gpu_context *ctx)
{
    if (ctx->transfer_cmd)
        return GPU_OK;
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT |
                                           VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = ctx->queue_family};
    VkResult r = vkCreateCommandPool(ctx->device, &pi, NULL, &ctx->transfer_pool);
    if (r != VK_SUCCESS) {
        ctx->transfer_pool = VK_NULL_HANDLE;
        return gpu_ctx_fail_vk(ctx, r, "staging copy: creating a command pool");
    }
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    r = vkCreateFence(ctx->device, &fi, NULL, &ctx->transfer_fence);
    if (r != VK_SUCCESS) {
        ctx->transfer_fence = VK_NULL_HANDLE;
        return gpu_ctx_fail_vk(ctx, r, "staging copy: creating a fence");
    }
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = ctx->transfer_pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    r = vkAllocateCommandBuffers(ctx->device, &ai, &ctx->transfer_cmd);
    if (r != VK_SUCCESS) {
        ctx->transfer_cmd = VK_NULL_HANDLE;
        return gpu_ctx_fail_vk(ctx, r, "staging copy: allocating a command buffer");
    }
    return GPU_OK;
}

/* Copies `bytes` between two pool buffers and waits, with barriers that order the copy after
 * earlier host writes and before later host reads. */
static int copy_locked(struct gpu_context *ctx, const struct gpu_buffer *src, VkDeviceSize src_offset,
                       const struct gpu_buffer *dst, VkDeviceSize dst_offset, VkDeviceSize bytes)
{
    int st = transfer_init(ctx);
    if (st)
        return st;
    VkCommandBuffer cb = ctx->transfer_cmd;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult r = vkBeginCommandBuffer(cb, &bi);
    if (r != VK_SUCCESS)
        return gpu_ctx_fail_vk(ctx, r, "staging copy: beginning the command buffer");
    VkBufferCopy region = {src->offset + src_offset, dst->offset + dst_offset, bytes};
    vkCmdCopyBuffer(cb, src->buffer, dst->buffer, 1, &region);
    VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                             .dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT |
                                              VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1,
                         &after, 0, NULL, 0, NULL);
    r = vkEndCommandBuffer(cb);
    if (r != VK_SUCCESS)
        return gpu_ctx_fail_vk(ctx, r, "staging copy: ending the command buffer");
    st = gpu_ctx_submit(ctx, cb, ctx->transfer_fence, "staging copy");
    return st ? st : gpu_ctx_wait(ctx, ctx->transfer_fence, "staging copy");
}

/* The context has one staging command buffer: one copy at a time. */
static int copy_now(struct gpu_context *ctx, const struct gpu_buffer *src, VkDeviceSize src_offset,
                    const struct gpu_buffer *dst, VkDeviceSize dst_offset, VkDeviceSize bytes)
{
    pthread_mutex_lock(&ctx->transfer_lock);
    int st = copy_locked(ctx, src, src_offset, dst, dst_offset, bytes);
    pthread_mutex_unlock(&ctx->transfer_lock);
    return st;
}

static int check_range(const struct gpu_buffer *b, VkDeviceSize offset, size_t bytes,
                       const char *what)
{
    if (!b->block || offset > b->size || bytes > b->size - offset)
        return gpu_fail(GPU_ERR, "%s of %zu bytes at offset %llu: outside the %llu-byte buffer",
                        what, bytes, (unsigned long long)offset, (unsigned long long)b->size);
    return GPU_OK;
}

int gpu_upload(struct gpu_context *ctx, const struct gpu_buffer *dst, VkDeviceSize offset,
               const void *src, size_t bytes)
{
    int st = check_range(dst, offset, bytes, "upload");
    if (st || bytes == 0)
        return st;
    if (dst->mapped) {
        memcpy((unsigned char *)dst->mapped + offset, src, bytes);
        return GPU_OK;
    }
    struct gpu_buffer staging;
    size_t chunk = bytes < STAGING_CHUNK ? bytes : STAGING_CHUNK;
    st = gpu_buffer_alloc(ctx, GPU_MEMORY_HOST, chunk, &staging);
    for (size_t done = 0; !st && done < bytes; done += chunk) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        memcpy(staging.mapped, (const unsigned char *)src + done, n);
        st = copy_now(ctx, &staging, 0, dst, offset + done, n);
    }
    gpu_buffer_free(&staging);
    return st;
}

int gpu_download(struct gpu_context *ctx, const struct gpu_buffer *src, VkDeviceSize offset,
                 void *dst, size_t bytes)
{
    int st = check_range(src, offset, bytes, "download");
    if (st || bytes == 0)
        return st;
    if (src->mapped) {
        memcpy(dst, (const unsigned char *)src->mapped + offset, bytes);
        return GPU_OK;
    }
    struct gpu_buffer staging;
    size_t chunk = bytes < STAGING_CHUNK ? bytes : STAGING_CHUNK;
    st = gpu_buffer_alloc(ctx, GPU_MEMORY_HOST, chunk, &staging);
    for (size_t done = 0; !st && done < bytes; done += chunk) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        st = copy_now(ctx, src, offset + done, &staging, 0, n);
        if (!st)
            memcpy((unsigned char *)dst + done, staging.mapped, n);
    }
    gpu_buffer_free(&staging);
    return st;
}

void gpu_transfer_destroy(struct gpu_context *ctx)
{
    if (ctx->transfer_fence)
        vkDestroyFence(ctx->device, ctx->transfer_fence, NULL);
    if (ctx->transfer_pool)
        vkDestroyCommandPool(ctx->device, ctx->transfer_pool, NULL);
    ctx->transfer_fence = VK_NULL_HANDLE;
    ctx->transfer_pool = VK_NULL_HANDLE;
    ctx->transfer_cmd = VK_NULL_HANDLE;
}
