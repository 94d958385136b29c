/* nn_device on Vulkan: a gpu_context; and the Vulkan backend's table (nn/backend.h). */
#include "nn/device.h"

#include <stdlib.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pool.h"
#include "gpu/selftest.h"
#include "nn/backend.h"
#include "nn/gpu/session_gpu.h"

const struct nn_backend nn_backend_vulkan = NN_BACKEND_TABLE(NN_BACKEND_VULKAN, nn_vulkan_);

struct vulkan_device {
    struct nn_device base;
    struct gpu_context *ctx;
};

static const struct vulkan_device *vulkan_device(const struct nn_device *d)
{
    return (const struct vulkan_device *)d;
}

static struct gpu_options options_of(const struct nn_device_options *opt)
{
    struct gpu_options g;
    gpu_options_default(&g);
    g.device_index = opt->index;
    g.gpus_only = opt->gpus_only;
    g.force_fp32 = opt->force_fp32;
    return g;
}

int nn_vulkan_device_open(const struct nn_device_options *opt, struct nn_device **out, char *err, size_t err_len)
{
    *out = NULL;
    struct vulkan_device *d = calloc(1, sizeof(*d));
    if (!d) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    const struct gpu_options g = options_of(opt);
    if (gpu_context_create(&g, &d->ctx)) {
        snprintf(err, err_len, "%s", gpu_last_error());
        free(d);
        return -1;
    }
    d->base.backend = &nn_backend_vulkan;
    *out = &d->base;
    return 0;
}

void nn_vulkan_device_close(struct nn_device *dev)
{
    if (!dev)
        return;
    gpu_context_destroy(vulkan_device(dev)->ctx);
    free(dev); /* the vulkan_device it begins */
}

/* NULL for a device of another backend. */
struct gpu_context *nn_gpu_device_context(const struct nn_device *d)
{
    return d && d->backend == &nn_backend_vulkan ? vulkan_device(d)->ctx : NULL;
}

static enum nn_device_class class_of(enum gpu_device_kind kind)
{
    return kind == GPU_DEVICE_CPU ? NN_DEVICE_CPU : kind == GPU_DEVICE_DISCRETE ? NN_DEVICE_DISCRETE_GPU : NN_DEVICE_OTHER_GPU;
}

void nn_vulkan_device_info(const struct nn_device *dev, struct nn_device_info *out)
{
    const struct vulkan_device *d = vulkan_device(dev);
    const struct gpu_caps *caps = gpu_context_caps(d->ctx);
    char queues[32] = "";
    if (caps->queue_count > 1)
        snprintf(queues, sizeof queues, ", %u queues", caps->queue_count);
    snprintf(out->description, sizeof(out->description), "%s (%s), %s%s", caps->device_name,
             gpu_device_kind_name(caps->kind), gpu_prefers_fp16(d->ctx) ? "fp16 (det fp32)" : "fp32", queues);
    out->device_class = caps->is_cpu ? NN_DEVICE_CPU : class_of(caps->kind);
    out->max_buffer_bytes = caps->max_storage_buffer_range;
}

void nn_vulkan_device_memory(const struct nn_device *device, struct nn_device_memory *out)
{
    const struct vulkan_device *d = vulkan_device(device);
    struct gpu_pool_stats dev, host;
    gpu_pool_stats(d->ctx, GPU_MEMORY_DEVICE, &dev);
    gpu_pool_stats(d->ctx, GPU_MEMORY_HOST, &host);
    out->device_in_use = dev.in_use;
    out->device_peak = dev.peak;
    out->host_in_use = host.in_use;
    out->host_peak = host.peak;
}

int nn_vulkan_list_devices(FILE *out, char *err, size_t err_len)
{
    int n = gpu_list_devices(out);
    if (n < 0) {
        snprintf(err, err_len, "%s", gpu_last_error());
        return -1;
    }
    if (n == 0) {
        snprintf(err, err_len, "no Vulkan device found (install a GPU driver, or mesa-vulkan-drivers for lavapipe)");
        return -1;
    }
    return n;
}

int nn_vulkan_device_classes(enum nn_device_class *out, int max, char *err, size_t err_len)
{
    enum gpu_device_kind kinds[64];
    const int n = gpu_device_kinds(kinds, max < 64 ? max : 64);
    if (n < 0) {
        snprintf(err, err_len, "%s", gpu_last_error());
        return -1;
    }
    for (int i = 0; i < n && i < max && i < 64; i++)
        out[i] = class_of(kinds[i]);
    return n;
}

int nn_vulkan_self_check(const struct nn_device_options *opt, FILE *out, char *err, size_t err_len)
{
    const struct gpu_options g = options_of(opt);
    struct gpu_context *ctx = NULL;
    if (gpu_context_create(&g, &ctx)) {
        snprintf(err, err_len, "%s", gpu_last_error());
        return -1;
    }
    const struct gpu_caps *c = gpu_context_caps(ctx);
    fprintf(out, "device: %s (%s), driver %s %s\n", c->device_name, gpu_device_kind_name(c->kind), c->driver_name,
            c->driver_info);
    fprintf(out, "precision: %s; subgroup %u; shared memory %u KiB; cooperative matrix %s\n",
            gpu_prefers_fp16(ctx) ? "fp16" : "fp32", c->subgroup_size, c->max_shared_memory / 1024,
            c->coopmat_khr  ? "KHR"
            : c->coopmat_nv ? "NV"
                            : "none");
    int rc = 0;
    if (gpu_selftest(ctx)) {
        snprintf(err, err_len, "%s", gpu_last_error());
        rc = -1;
    } else {
        fprintf(out, "self-check: ok\n");
    }
    gpu_context_destroy(ctx);
    return rc;
}
