#include "gpu/queue.h"
#include "gpu/error.h"

#include <stdio.h>
#include <time.h>

#define DEFAULT_TIMEOUT_MS 120000u
/* A CPU device (lavapipe) shares the processor with everything else on the machine: on a 2-core
 * machine slowed down by another tenant, a small net's first fp16 run under the sanitizers took
 * longer than DEFAULT_TIMEOUT_MS (BENCHMARKS.md; its first run also pays for some of lavapipe's
 * compilation). */
#define CPU_DEVICE_TIMEOUT_MS 1800000u

void gpu_queue_init(struct gpu_queue *q, struct gpu_device *dev, uint32_t index, uint32_t timeout_ms, int spin_us)
{
    q->dev = dev;
    vkGetDeviceQueue(dev->device, dev->queue_family, index, &q->queue);
    pthread_mutex_init(&q->lock, NULL);
    int spin = spin_us >= 0 ? spin_us : dev->caps.is_cpu ? 0 : GPU_DEFAULT_SPIN_US;
    q->spin_ns = (uint64_t)spin * 1000ull;
    q->timeout_ms = timeout_ms ? timeout_ms : dev->caps.is_cpu ? CPU_DEVICE_TIMEOUT_MS : DEFAULT_TIMEOUT_MS;
    q->timeout_ns = (uint64_t)q->timeout_ms * 1000000ull;
}

void gpu_queue_destroy(struct gpu_queue *q)
{
    if (!q->dev)
        return; /* never initialised */
    pthread_mutex_destroy(&q->lock);
    q->dev = NULL;
}

int gpu_queue_submit(struct gpu_queue *q, VkCommandBuffer cb, VkFence fence, const char *what)
{
    char doing[160];
    if (gpu_device_lost(q->dev))
        return gpu_fail(GPU_ERR_DEVICE_LOST, "%s: the device was lost earlier", what);
    VkResult r = vkResetFences(q->dev->device, 1, &fence);
    if (r != VK_SUCCESS) {
        snprintf(doing, sizeof doing, "%s: resetting the fence", what);
        return gpu_device_fail_vk(q->dev, r, doing);
    }
    VkSubmitInfo submit = {.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO, .commandBufferCount = 1, .pCommandBuffers = &cb};
    pthread_mutex_lock(&q->lock);
    r = vkQueueSubmit(q->queue, 1, &submit, fence);
    pthread_mutex_unlock(&q->lock);
    if (r != VK_SUCCESS) {
        snprintf(doing, sizeof doing, "%s: vkQueueSubmit", what);
        return gpu_device_fail_vk(q->dev, r, doing);
    }
    return GPU_OK;
}

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* The fence's status, polled for up to spin_ns (never longer than the timeout): VK_NOT_READY
 * when the GPU is still busy after that. */
static VkResult poll_fence(const struct gpu_queue *q, VkFence fence)
{
    if (!q->spin_ns)
        return VK_NOT_READY;
    uint64_t limit = q->spin_ns < q->timeout_ns ? q->spin_ns : q->timeout_ns, t0 = now_ns();
    VkResult r;
    do
        r = vkGetFenceStatus(q->dev->device, fence);
    while (r == VK_NOT_READY && now_ns() - t0 < limit);
    return r;
}

int gpu_queue_wait(struct gpu_queue *q, VkFence fence, const char *what)
{
    char doing[160];
    if (gpu_device_lost(q->dev))
        return gpu_fail(GPU_ERR_DEVICE_LOST, "%s: the device was lost earlier", what);
    VkResult r = poll_fence(q, fence);
    if (r == VK_NOT_READY)
        r = vkWaitForFences(q->dev->device, 1, &fence, VK_TRUE, q->timeout_ns);
    if (r == VK_TIMEOUT)
        return gpu_fail(GPU_ERR_TIMEOUT, "%s: the GPU did not finish within %u ms (VK_TIMEOUT)", what, q->timeout_ms);
    if (r != VK_SUCCESS) {
        snprintf(doing, sizeof doing, "%s: waiting for the GPU", what);
        return gpu_device_fail_vk(q->dev, r, doing);
    }
    return GPU_OK;
}

void gpu_queue_drain(struct gpu_queue *q, VkFence fence)
{
    if (gpu_device_lost(q->dev) || vkWaitForFences(q->dev->device, 1, &fence, VK_TRUE, q->timeout_ns) != VK_TIMEOUT)
        return;
    pthread_mutex_lock(&q->lock);
    vkQueueWaitIdle(q->queue);
    pthread_mutex_unlock(&q->lock);
}
