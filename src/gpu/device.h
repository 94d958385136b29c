/* The Vulkan instance, the physical device chosen and what it can do, and the logical device
 * created on it with the features this project uses. Every other piece of the GPU layer is
 * built on one of these and takes it as a parameter.
 *
 * Threads: everything here is written while the device is created and only read afterwards,
 * except `lost`, which any thread may set (an atomic). */
#ifndef PPOCR_GPU_DEVICE_H
#define PPOCR_GPU_DEVICE_H

#include <stdatomic.h>
#include <stdbool.h>

#include <vulkan/vulkan.h>

#include "gpu/context.h"
#include "gpu/options.h"

struct gpu_device {
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice physical;
    VkDevice device;
    uint32_t queue_family;                             /* the compute family; caps.queue_count queues of it */
    struct gpu_caps caps;                              /* with the settings' force_fp32 and max_buffer_range applied */
    PFN_vkCmdPushDescriptorSetKHR push_descriptor_set; /* NULL when not used */
    atomic_bool lost;                                  /* VK_ERROR_DEVICE_LOST seen: every later call fails fast */
};

/* Called once the device is chosen and its caps are read, before the logical device is created
 * (most of the driver's time), so always where gpu_device_create succeeds: work that needs only
 * the caps can go on beside that. */
typedef void (*gpu_device_chosen_fn)(void *ctx, const struct gpu_caps *caps);

/* On failure the handles made so far are left in *out for gpu_device_destroy. `chosen` may be NULL. */
int gpu_device_create(const struct gpu_settings *s, gpu_device_chosen_fn chosen, void *ctx, struct gpu_device *out);
/* Destroys the device and the instance; whatever was made on the device must be gone. */
void gpu_device_destroy(struct gpu_device *d);

/* Turns a failed result into a status, marking the device lost on VK_ERROR_DEVICE_LOST. */
int gpu_device_fail_vk(struct gpu_device *d, VkResult r, const char *doing);

static inline bool gpu_device_lost(const struct gpu_device *d)
{
    return atomic_load(&d->lost);
}

#endif
