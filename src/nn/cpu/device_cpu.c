/* nn_device on the CPU (oneDNN's threads in this process), and the CPU backend's table
 * (nn/backend.h). */
#include "nn/cpu/device_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "nn/cpu/cpu_net.h"
#include "nn/cpu/session_cpu.h"

const struct nn_backend nn_backend_cpu = NN_BACKEND_TABLE(NN_BACKEND_CPU, nn_cpu_);

static const struct cpu_device *cpu_device(const struct nn_device *d)
{
    return (const struct cpu_device *)d;
}

/* A quarter of the machine's memory, as the Vulkan session takes a quarter of a GPU's: images,
 * weights and sibling sessions share the rest. */
static uint64_t host_memory_limit(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0)
        return (uint64_t)1 << 30; /* unknown: 1 GiB, which a 960 page needs a fraction of */
    return (uint64_t)pages * (uint64_t)page / 4;
}

int nn_cpu_device_open(const struct nn_device_options *opt, struct nn_device **out, char *err, size_t err_len)
{
    *out = NULL;
    if (opt->threads < 0) {
        snprintf(err, err_len, "CPU backend: %d threads (0 for all cores)", opt->threads);
        return -1;
    }
    char why[256];
    if (cpu_net_available(why, sizeof why)) {
        snprintf(err, err_len, "CPU backend: %s", why);
        return -1;
    }
    struct cpu_device *d = calloc(1, sizeof(*d));
    if (!d) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    d->base.backend = &nn_backend_cpu;
    d->threads = opt->threads;
    d->threads_used = cpu_net_threads(opt->threads);
    d->memory_limit = host_memory_limit();
    *out = &d->base;
    return 0;
}

void nn_cpu_device_close(struct nn_device *dev)
{
    free(dev); /* the cpu_device it begins */
}

int nn_cpu_device_threads(const struct nn_device *dev)
{
    return dev && dev->backend == &nn_backend_cpu ? cpu_device(dev)->threads_used : 0;
}

static void describe(int threads, char *out, size_t len)
{
    snprintf(out, len, "CPU (oneDNN, %d thread%s), fp32", threads, threads == 1 ? "" : "s");
}

void nn_cpu_device_info(const struct nn_device *dev, struct nn_device_info *out)
{
    const struct cpu_device *d = cpu_device(dev);
    describe(d->threads_used, out->description, sizeof(out->description));
    out->device_class = NN_DEVICE_CPU;
    out->max_buffer_bytes = d->memory_limit;
}

void nn_cpu_device_memory(const struct nn_device *dev, struct nn_device_memory *out)
{
    const struct cpu_device *d = cpu_device(dev);
    out->device_in_use = atomic_load(&d->in_use);
    out->device_peak = atomic_load(&d->peak);
    out->host_in_use = 0;
    out->host_peak = 0;
}

void cpu_device_account(struct cpu_device *d, uint64_t from, uint64_t to)
{
    const uint64_t now = atomic_fetch_add(&d->in_use, to - from) + (to - from); /* wraps back when to < from */
    uint64_t peak = atomic_load(&d->peak);
    while (now > peak && !atomic_compare_exchange_weak(&d->peak, &peak, now))
        ;
}

int nn_cpu_list_devices(FILE *out, char *err, size_t err_len)
{
    if (cpu_net_available(err, err_len))
        return -1;
    char line[128];
    describe(cpu_net_threads(0), line, sizeof line);
    fprintf(out, "cpu: %s\n", line);
    return 1;
}

int nn_cpu_device_classes(enum nn_device_class *out, int max, char *err, size_t err_len)
{
    if (cpu_net_available(err, err_len))
        return -1;
    if (max > 0)
        out[0] = NN_DEVICE_CPU;
    return 1;
}

int nn_cpu_self_check(const struct nn_device_options *opt, FILE *out, char *err, size_t err_len)
{
    if (opt->threads < 0) {
        snprintf(err, err_len, "CPU backend: %d threads (0 for all cores)", opt->threads);
        return -1;
    }
    return cpu_net_self_check(opt->threads, out, err, err_len);
}
