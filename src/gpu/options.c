#include "gpu/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void gpu_options_default(struct gpu_options *opt)
{
    *opt = (struct gpu_options){.device_index = -1, .validate = -1, .spin_us = -1, .prebuild = -1};
}

static bool env_flag(const char *name)
{
    const char *v = getenv(name);
    return v && *v && strcmp(v, "0") != 0;
}

/* A folder name that does not fit turns the disk cache off rather than saving somewhere else. */
static void set_dir(char *dir, size_t size, const char *fmt, const char *base)
{
    if (snprintf(dir, size, fmt, base) >= (int)size)
        dir[0] = 0;
}

static void resolve_cache_dir(const char *opt, char *dir, size_t size)
{
    dir[0] = 0;
    if (opt) {
        set_dir(dir, size, "%s", opt);
        return;
    }
    const char *env = getenv("PPOCR_CACHE_DIR");
    if (env && *env) {
        set_dir(dir, size, "%s", env);
        return;
    }
    env = getenv("XDG_CACHE_HOME");
    if (env && *env) {
        set_dir(dir, size, "%s/ppocr-vk", env);
        return;
    }
    env = getenv("HOME");
    if (env && *env)
        set_dir(dir, size, "%s/.cache/ppocr-vk", env);
}

void gpu_settings_from_env(const struct gpu_options *in, struct gpu_settings *s)
{
    struct gpu_options o;
    if (in)
        o = *in;
    else
        gpu_options_default(&o);
    memset(s, 0, sizeof *s);
    s->device_index = o.device_index;
    s->gpus_only = o.gpus_only;
    s->validate = o.validate < 0 ? env_flag("PPOCR_VK_VALIDATE") : o.validate != 0;
    s->force_fp32 = o.force_fp32 || env_flag("PPOCR_VK_FORCE_FP32");
    s->no_push_descriptors = o.no_push_descriptors || env_flag("PPOCR_VK_NO_PUSH_DESCRIPTORS");
    s->no_mapped_device_memory = o.no_mapped_device_memory || env_flag("PPOCR_VK_NO_MAPPED_DEVICE");

    s->pool_cap = o.pool_cap;
    const char *cap = getenv("PPOCR_VK_POOL_CAP");
    if (s->pool_cap == 0 && cap && *cap)
        s->pool_cap = strtoull(cap, NULL, 0);
    s->max_buffer_range = o.max_buffer_range;
    const char *range = getenv("PPOCR_VK_MAX_BUFFER_RANGE");
    if (s->max_buffer_range == 0 && range && *range)
        s->max_buffer_range = strtoull(range, NULL, 0);
    s->timeout_ms = o.timeout_ms;
    const char *timeout = getenv("PPOCR_VK_TIMEOUT_MS");
    if (s->timeout_ms == 0 && timeout && *timeout)
        s->timeout_ms = (uint32_t)strtoul(timeout, NULL, 0);
    s->spin_us = o.spin_us;
    const char *spin = getenv("PPOCR_VK_SPIN_US");
    if (s->spin_us < 0 && spin && *spin)
        s->spin_us = (int)strtol(spin, NULL, 0);

    s->prebuild = o.prebuild;
    const char *prebuild = getenv("PPOCR_VK_PREBUILD");
    if (s->prebuild < 0 && prebuild && *prebuild)
        s->prebuild = env_flag("PPOCR_VK_PREBUILD");

    s->queues = o.queues;
    const char *queues = getenv("PPOCR_VK_QUEUES");
    if (s->queues == 0 && queues && *queues)
        s->queues = (unsigned)strtoul(queues, NULL, 0);
    if (s->queues == 0)
        s->queues = 1;
    if (s->queues > GPU_MAX_QUEUES)
        s->queues = GPU_MAX_QUEUES;

    resolve_cache_dir(o.cache_dir, s->cache_dir, sizeof s->cache_dir);
}
