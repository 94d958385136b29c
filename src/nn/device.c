/* nn/device.h: each call forwarded to the backend the options choose or the device names. */
#include "nn/device.h"

#include "nn/backend.h"

static const struct nn_backend *backend_of(const struct nn_device_options *opt, char *err, size_t err_len)
{
    switch (opt->backend) {
    case NN_BACKEND_VULKAN: return &nn_backend_vulkan;
    case NN_BACKEND_CPU: return &nn_backend_cpu;
    case NN_BACKEND_AUTO: break;
    }
    snprintf(err, err_len, "no such backend (%d)", (int)opt->backend);
    return NULL;
}

/* NN_BACKEND_AUTO's order: a Vulkan GPU; else the CPU backend, which runs the nets several times
 * faster than a Vulkan CPU driver (lavapipe) on the same cores; else that driver. A failure is
 * passed over in silence unless every choice fails: then each one's reason is given. */
static int open_auto(const struct nn_device_options *opt, struct nn_device **out, char *err, size_t err_len)
{
    struct nn_device_options o = *opt;
    o.backend = NN_BACKEND_VULKAN;
    if (o.index >= 0)
        return nn_backend_vulkan.device_open(&o, out, err, err_len);
    char gpu_err[512];
    o.gpus_only = true;
    if (!nn_backend_vulkan.device_open(&o, out, gpu_err, sizeof gpu_err))
        return 0;
    o.backend = NN_BACKEND_CPU;
    char cpu_err[512];
    if (!nn_backend_cpu.device_open(&o, out, cpu_err, sizeof cpu_err))
        return 0;
    o.backend = NN_BACKEND_VULKAN;
    o.gpus_only = false;
    char vulkan_err[512]; /* covers the GPU-only choice's reason: that choice's devices and more */
    if (!nn_backend_vulkan.device_open(&o, out, vulkan_err, sizeof vulkan_err))
        return 0;
    snprintf(err, err_len, "%s; %s", vulkan_err, cpu_err);
    return -1;
}

int nn_device_open(const struct nn_device_options *opt, struct nn_device **out, char *err, size_t err_len)
{
    *out = NULL;
    if (opt->backend == NN_BACKEND_AUTO)
        return open_auto(opt, out, err, err_len);
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

int nn_device_classes(enum nn_backend_kind backend, enum nn_device_class *out, int max, char *err, size_t err_len)
{
    const struct nn_device_options opt = {.backend = backend};
    const struct nn_backend *b = backend_of(&opt, err, err_len);
    return b ? b->device_classes(out, max, err, err_len) : -1;
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

int nn_backend_choose(const struct nn_device_options *opt, const struct nn_backend **out,
                      struct nn_device_options *chosen, char *err, size_t err_len)
{
    *chosen = *opt;
    if (opt->backend == NN_BACKEND_AUTO) {
        struct nn_device *dev;
        if (open_auto(opt, &dev, err, err_len))
            return -1;
        chosen->backend = nn_device_backend(dev);
        nn_device_close(dev);
    }
    *out = backend_of(chosen, err, err_len);
    return *out ? 0 : -1;
}

/* AUTO: the backend it picks here, checked as the user would choose it by name. */
int nn_self_check(const struct nn_device_options *opt, FILE *out, char *err, size_t err_len)
{
    const struct nn_backend *b;
    struct nn_device_options chosen;
    if (nn_backend_choose(opt, &b, &chosen, err, err_len))
        return -1;
    return b->self_check(&chosen, out, err, err_len);
}
