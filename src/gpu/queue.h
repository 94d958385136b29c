/* One of the device's compute queues: submissions and the fence waits that follow them, within the
 * context's timeout, polling a while first where that wakes the host sooner.
 *
 * Threads: any number of threads may submit and wait at once. Vulkan wants a queue externally
 * synchronised, so `lock` is held around vkQueueSubmit and vkQueueWaitIdle and nothing else; it
 * is the innermost lock of the layer (nothing else is taken while it is held). A fence is the
 * caller's: one thread at a time per fence. */
#ifndef PPOCR_GPU_QUEUE_H
#define PPOCR_GPU_QUEUE_H

#include <pthread.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "gpu/device.h"

struct gpu_queue {
    struct gpu_device *dev;
    VkQueue queue;
    pthread_mutex_t lock;
    uint32_t timeout_ms; /* resolved: never 0 */
    uint64_t timeout_ns, spin_ns;
};

/* The family's queue `index` (below caps.queue_count). timeout_ms 0 and spin_us < 0 take the
 * device kind's defaults. */
void gpu_queue_init(struct gpu_queue *q, struct gpu_device *dev, uint32_t index, uint32_t timeout_ms, int spin_us);
void gpu_queue_destroy(struct gpu_queue *q);

/* Submits one command buffer, signalling `fence` (reset here). */
int gpu_queue_submit(struct gpu_queue *q, VkCommandBuffer cb, VkFence fence, const char *what);
/* Waits on `fence` within the timeout. */
int gpu_queue_wait(struct gpu_queue *q, VkFence fence, const char *what);
/* Before destroying work that may still run: waits on `fence` within the timeout, and past it
 * for the whole queue, since destroying work in flight is undefined. */
void gpu_queue_drain(struct gpu_queue *q, VkFence fence);

#endif
