/* nn/device.h: each call forwarded to the backend the options choose or the device names. */
#include "nn/device.h"

#include "nn/backend.h"

static const struct nn_backend *backend_of(const struct nn_device_options *opt, char *err, size_t err_len)
{
    switch (opt->backend) {
    case NN_BACKEND_VULKAN: return &nn_backend_vulkan;
    case NN_BACKEND_CPU: return &nn_backend_cpu;
    }
    snprintf(err, err_len, "no such backend (%d)", (int)opt->backend);
    return NULL;
}

int nn_device_open(const struct nn_device_options *opt, struct nn_device **out, char *err, size_t err_len)
{
    *out = NULL;
    const struct nn_backend *b = backend_of(opt, err, err_len);
    return b ? b->device_open(opt, out, err, err_len) : -1;
}

void nn_device_close(struct nn_device *dev)
{
    if (dev)
        dev->backend->device_close(dev);
}

void nn_device_info(const struct nn_device *dev, struct nn_device_info *out)
{
    dev->backend->device_info(dev, out);
}

enum nn_backend_kind nn_device_backend(const struct nn_device *dev)
{
    return dev->backend->kind;
}

void nn_device_memory(const struct nn_device *dev, struct nn_device_memory *out)
{
    dev->backend->device_memory(dev, out);
}

/* Vulkan's devices with their index, then the CPU backend where it is built ("cpu"): one of the
 * two failing is no failure. */
int nn_list_devices(FILE *out, char *err, size_t err_len)
{
    char vulkan_err[512], cpu_err[512];
    const int vulkan = nn_backend_vulkan.list_devices(out, vulkan_err, sizeof vulkan_err);
    const int cpu = nn_backend_cpu.list_devices(out, cpu_err, sizeof cpu_err);
    if (vulkan < 0 && cpu < 0) {
        snprintf(err, err_len, "%s; %s", vulkan_err, cpu_err);
        return -1;
    }
    return (vulkan > 0 ? vulkan : 0) + (cpu > 0 ? cpu : 0);
}

int nn_self_check(const struct nn_device_options *opt, FILE *out, char *err, size_t err_len)
{
    const struct nn_backend *b = backend_of(opt, err, err_len);
    return b ? b->self_check(opt, out, err, err_len) : -1;
}
