#include "gpu/transfer.h"
#include "gpu/internal.h"

#include <string.h>

#define STAGING_CHUNK (16ull << 20)

void gpu_transfer_init(struct gpu_transfer *t, struct gpu_device *dev, struct gpu_queue *queue,
                       struct gpu_pool *staging)
{
    *t = (struct gpu_transfer){.dev = dev, .queue = queue, .staging = staging};
    pthread_mutex_init(&t->lock, NULL);
}

static int create_command_buffer(struct gpu_transfer *t)
{
    if (t->cb)
        return GPU_OK;
    VkDevice dev = t->dev->device;
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT |
                                           VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = t->dev->queue_family};
    VkResult r = vkCreateCommandPool(dev, &pi, NULL, &t->pool);
    if (r != VK_SUCCESS) {
        t->pool = VK_NULL_HANDLE;
        return gpu_device_fail_vk(t->dev, r, "staging copy: creating a command pool");
    }
    VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
    r = vkCreateFence(dev, &fi, NULL, &t->fence);
    if (r != VK_SUCCESS) {
        t->fence = VK_NULL_HANDLE;
        return gpu_device_fail_vk(t->dev, r, "staging copy: creating a fence");
    }
    VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                      .commandPool = t->pool,
                                      .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                      .commandBufferCount = 1};
    r = vkAllocateCommandBuffers(dev, &ai, &t->cb);
    if (r != VK_SUCCESS) {
        t->cb = VK_NULL_HANDLE;
        return gpu_device_fail_vk(t->dev, r, "staging copy: allocating a command buffer");
    }
    return GPU_OK;
}

/* Copies `bytes` between two pool buffers and waits, with barriers that order the copy after
 * earlier host writes and before later host reads. */
static int copy_locked(struct gpu_transfer *t, const struct gpu_buffer *src, VkDeviceSize src_offset,
                       const struct gpu_buffer *dst, VkDeviceSize dst_offset, VkDeviceSize bytes)
{
    int st = create_command_buffer(t);
    if (st)
        return st;
    VkCommandBuffer cb = t->cb;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
                                   .flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT};
    VkResult r = vkBeginCommandBuffer(cb, &bi);
    if (r != VK_SUCCESS)
        return gpu_device_fail_vk(t->dev, r, "staging copy: beginning the command buffer");
    VkBufferCopy region = {src->offset + src_offset, dst->offset + dst_offset, bytes};
    vkCmdCopyBuffer(cb, src->buffer, dst->buffer, 1, &region);
    VkMemoryBarrier after = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
                             .srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
                             .dstAccessMask =
                                 VK_ACCESS_HOST_READ_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT};
    vkCmdPipelineBarrier(cb, VK_PIPELINE_STAGE_TRANSFER_BIT,
                         VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &after, 0, NULL, 0,
                         NULL);
    r = vkEndCommandBuffer(cb);
    if (r != VK_SUCCESS)
        return gpu_device_fail_vk(t->dev, r, "staging copy: ending the command buffer");
    st = gpu_queue_submit(t->queue, cb, t->fence, "staging copy");
    return st ? st : gpu_queue_wait(t->queue, t->fence, "staging copy");
}

/* One staging command buffer: one copy at a time. */
static int copy_now(struct gpu_transfer *t, const struct gpu_buffer *src, VkDeviceSize src_offset,
                    const struct gpu_buffer *dst, VkDeviceSize dst_offset, VkDeviceSize bytes)
{
    pthread_mutex_lock(&t->lock);
    int st = copy_locked(t, src, src_offset, dst, dst_offset, bytes);
    pthread_mutex_unlock(&t->lock);
    return st;
}

static int check_range(const struct gpu_buffer *b, VkDeviceSize offset, size_t bytes, const char *what)
{
    if (!b->block || offset > b->size || bytes > b->size - offset)
        return gpu_fail(GPU_ERR, "%s of %zu bytes at offset %llu: outside the %llu-byte buffer", what, bytes,
                        (unsigned long long)offset, (unsigned long long)b->size);
    return GPU_OK;
}

int gpu_transfer_upload(struct gpu_transfer *t, const struct gpu_buffer *dst, VkDeviceSize offset, const void *src,
                        size_t bytes)
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
    st = gpu_pool_alloc(t->staging, chunk, &staging);
    for (size_t done = 0; !st && done < bytes; done += chunk) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        memcpy(staging.mapped, (const unsigned char *)src + done, n);
        st = copy_now(t, &staging, 0, dst, offset + done, n);
    }
    gpu_buffer_free(&staging);
    return st;
}

int gpu_transfer_download(struct gpu_transfer *t, const struct gpu_buffer *src, VkDeviceSize offset, void *dst,
                          size_t bytes)
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
    st = gpu_pool_alloc(t->staging, chunk, &staging);
    for (size_t done = 0; !st && done < bytes; done += chunk) {
        size_t n = bytes - done < chunk ? bytes - done : chunk;
        st = copy_now(t, src, offset + done, &staging, 0, n);
        if (!st)
            memcpy((unsigned char *)dst + done, staging.mapped, n);
    }
    gpu_buffer_free(&staging);
    return st;
}

void gpu_transfer_destroy(struct gpu_transfer *t)
{
    if (!t->dev)
        return; /* never initialised */
    if (t->fence)
        vkDestroyFence(t->dev->device, t->fence, NULL);
    if (t->pool)
        vkDestroyCommandPool(t->dev->device, t->pool, NULL);
    pthread_mutex_destroy(&t->lock);
    *t = (struct gpu_transfer){0};
}
