#include "gpu/error.h"

#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

const char *gpu_last_error(void)
{
    return last_error;
}

const char *gpu_result_name(VkResult r)
{
    switch (r) {
#define NAME(x)                                                                                                        \
    case x: return #x;
        NAME(VK_SUCCESS)
        NAME(VK_NOT_READY)
        NAME(VK_TIMEOUT) NAME(VK_EVENT_SET) NAME(VK_EVENT_RESET) NAME(VK_INCOMPLETE) NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
            NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY) NAME(VK_ERROR_INITIALIZATION_FAILED) NAME(VK_ERROR_DEVICE_LOST)
                NAME(VK_ERROR_MEMORY_MAP_FAILED) NAME(VK_ERROR_LAYER_NOT_PRESENT) NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
                    NAME(VK_ERROR_FEATURE_NOT_PRESENT) NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
                        NAME(VK_ERROR_TOO_MANY_OBJECTS) NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
                            NAME(VK_ERROR_FRAGMENTED_POOL) NAME(VK_ERROR_UNKNOWN) NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
                                NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE) NAME(VK_ERROR_FRAGMENTATION)
                                    NAME(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS) NAME(VK_PIPELINE_COMPILE_REQUIRED)
                                        NAME(VK_ERROR_INVALID_SHADER_NV)
#undef NAME
                                            default:
        {
            static _Thread_local char buf[32];
            snprintf(buf, sizeof buf, "VkResult(%d)", (int)r);
            return buf;
        }
    }
}

int gpu_fail(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}

int gpu_fail_vk(VkResult r, const char *doing)
{
    int status = GPU_ERR;
    if (r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY)
        status = GPU_ERR_OUT_OF_MEMORY;
    else if (r == VK_ERROR_DEVICE_LOST)
        status = GPU_ERR_DEVICE_LOST;
    else if (r == VK_TIMEOUT)
        status = GPU_ERR_TIMEOUT;
    return gpu_fail(status, "%s: %s", doing, gpu_result_name(r));
}
