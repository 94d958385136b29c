/* How the GPU layer reports failure: a status code plus one line of text saying what was being
 * done and, where Vulkan failed, the VkResult's name. The text lives in thread-local storage so
 * that a failure before any context exists (no driver, no device) can still be explained.
 *
 * Threads: any; each thread reads its own last failure. */
#ifndef PPOCR_GPU_ERROR_H
#define PPOCR_GPU_ERROR_H

#include <vulkan/vulkan.h>

enum gpu_status {
    GPU_OK = 0,
    GPU_ERR = -1,               /* anything else: bad argument, missing shader, driver error */
    GPU_ERR_OUT_OF_MEMORY = -2, /* host or device memory, or the pool's byte cap */
    GPU_ERR_DEVICE_LOST = -3,   /* the context is unusable from then on */
    GPU_ERR_TIMEOUT = -4,       /* a fence wait ran past the context's limit */
    GPU_ERR_NO_DEVICE = -5,     /* no Vulkan driver or no usable device */
};

/* The last failure's one-line reason on this thread ("" if none). */
const char *gpu_last_error(void);

/* "VK_ERROR_DEVICE_LOST" etc.; the number for values this header does not know. */
const char *gpu_result_name(VkResult r);

/* Records the reason (printf-style) and returns `status`, so that callers write
 * `return gpu_fail(GPU_ERR, "...")`. */
int gpu_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Maps a failed VkResult to a status and records "<doing>: <VkResult name>". */
int gpu_fail_vk(VkResult r, const char *doing);

#endif
