/* The owner: creates the pieces in their order, hands each public call that takes a context the
 * piece it is about, and destroys the pieces in reverse order. */
#include "gpu/context.h"
#include "gpu/internal.h"
#include "gpu/transfer.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct gpu_context {
    struct gpu_settings settings;
    struct gpu_device dev;
    struct gpu_queue queues[GPU_MAX_QUEUES]; /* caps.queue_count of them */
    atomic_uint next_queue;
    struct gpu_pool *pools[2]; /* indexed by enum gpu_memory */
    struct gpu_pipeline_cache pipeline_cache;
    struct gpu_pipeline_table pipelines;
    struct gpu_prebuild prebuild; /* zeroed where the variants are not built ahead */
    char variants_path[1024];
    struct gpu_transfer transfer;
};

/* Threads building the last run's variants ahead: a few, beside the threads making the nets. */
static unsigned prebuild_threads(void)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores >= 16 ? 4 : cores >= 4 ? (unsigned)(cores / 4) : 1;
}

/* The pipeline cache's file, read on a thread of its own while the driver makes the device. */
struct cache_read {
    const char *dir;
    struct gpu_caps caps;
    struct gpu_pipeline_cache_file file;
    pthread_t thread;
    bool started;
};

static void *cache_read_run(void *arg)
{
    struct cache_read *r = arg;
    gpu_pipeline_cache_read(&r->caps, r->dir, &r->file);
    return NULL;
}

static void device_chosen(void *arg, const struct gpu_caps *caps)
{
    struct cache_read *r = arg;
    r->caps = *caps;
    r->started = pthread_create(&r->thread, NULL, cache_read_run, r) == 0;
    if (!r->started)
        cache_read_run(r);
}

static int create_pieces(struct gpu_context *ctx)
{
    const struct gpu_settings *s = &ctx->settings;
    struct cache_read cache = {.dir = s->cache_dir};
    int st = gpu_device_create(s, device_chosen, &cache, &ctx->dev);
    if (cache.started)
        pthread_join(cache.thread, NULL);
    if (st) {
        free(cache.file.data);
        return st;
    }
    for (uint32_t q = 0; q < ctx->dev.caps.queue_count; q++)
        gpu_queue_init(&ctx->queues[q], &ctx->dev, q, s->timeout_ms, s->spin_us);
    for (int w = 0; w < 2; w++) {
        st = gpu_pool_create(&ctx->dev, (enum gpu_memory)w, s->pool_cap, s->no_mapped_device_memory, &ctx->pools[w]);
        if (st) {
            free(cache.file.data);
            return st;
        }
    }
    st = gpu_pipeline_cache_open(&ctx->dev, &cache.file, &ctx->pipeline_cache);
    if (st)
        return st;
    gpu_pipeline_table_init(&ctx->pipelines, &ctx->dev, ctx->pipeline_cache.handle);
    if (s->prebuild < 0 ? !ctx->dev.caps.is_cpu : s->prebuild) {
        gpu_pipeline_variants_path(ctx->pipeline_cache.path, ctx->variants_path, sizeof ctx->variants_path);
        if (ctx->variants_path[0])
            gpu_prebuild_start(&ctx->prebuild, &ctx->pipelines, ctx->variants_path, prebuild_threads());
    }
    gpu_transfer_init(&ctx->transfer, &ctx->dev, &ctx->queues[0], ctx->pools[GPU_MEMORY_HOST]);
    return GPU_OK;
}

int gpu_context_create(const struct gpu_options *opt, struct gpu_context **out)
{
    *out = NULL;
    struct gpu_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "creating the GPU context: out of memory");
    gpu_settings_from_env(opt, &ctx->settings);
    int st = create_pieces(ctx);
    if (st) {
        char reason[512];
        snprintf(reason, sizeof reason, "%s", gpu_last_error());
        gpu_context_destroy(ctx);
        gpu_fail(st, "%s", reason); /* destroy must not hide why creation failed */
        return st;
    }
    *out = ctx;
    return GPU_OK;
}

void gpu_context_destroy(struct gpu_context *ctx)
{
    if (!ctx)
        return;
    if (ctx->dev.device) {
        if (!gpu_device_lost(&ctx->dev))
            vkDeviceWaitIdle(ctx->dev.device);
        gpu_transfer_destroy(&ctx->transfer);
        gpu_prebuild_finish(&ctx->prebuild, true); /* first: its threads use the table */
        gpu_pipeline_cache_close(&ctx->dev, &ctx->pipeline_cache); /* makes the cache's folder */
        if (ctx->variants_path[0] && !gpu_device_lost(&ctx->dev))
            gpu_pipeline_variants_save(&ctx->pipelines, &ctx->prebuild, ctx->variants_path);
        gpu_prebuild_release(&ctx->prebuild);
        gpu_pipeline_table_destroy(&ctx->pipelines);
        for (int w = 0; w < 2; w++)
            gpu_pool_destroy(ctx->pools[w]);
    }
    for (uint32_t q = 0; q < GPU_MAX_QUEUES; q++)
        gpu_queue_destroy(&ctx->queues[q]);
    gpu_device_destroy(&ctx->dev);
    free(ctx);
}

struct gpu_device *gpu_context_gpu_device(struct gpu_context *ctx)
{
    return &ctx->dev;
}
struct gpu_queue *gpu_context_queue(struct gpu_context *ctx, unsigned queue)
{
    return &ctx->queues[queue % ctx->dev.caps.queue_count];
}

unsigned gpu_context_take_queue(struct gpu_context *ctx)
{
    return atomic_fetch_add(&ctx->next_queue, 1u) % ctx->dev.caps.queue_count;
}

const struct gpu_caps *gpu_context_caps(const struct gpu_context *ctx)
{
    return &ctx->dev.caps;
}
VkDevice gpu_context_device(const struct gpu_context *ctx)
{
    return ctx->dev.device;
}
VkPhysicalDevice gpu_context_physical_device(const struct gpu_context *ctx)
{
    return ctx->dev.physical;
}

bool gpu_prefers_fp16(const struct gpu_context *ctx)
{
    const struct gpu_caps *c = &ctx->dev.caps;
    return c->storage_16bit && c->shader_fp16 && !c->is_cpu && !ctx->settings.force_fp32;
}

bool gpu_shuffles_fill_workgroup(const struct gpu_caps *c, uint32_t workgroup)
{
    return (c->subgroup_ops & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) && c->min_subgroup_size == c->max_subgroup_size &&
           c->subgroup_size && workgroup % c->subgroup_size == 0;
}

/* --- the pieces' calls that take a context ----------------------------------------------------*/

int gpu_buffer_alloc(struct gpu_context *ctx, enum gpu_memory where, VkDeviceSize size, struct gpu_buffer *out)
{
    return gpu_pool_alloc(ctx->pools[where], size, out);
}

bool gpu_memory_is_mapped(const struct gpu_context *ctx, enum gpu_memory where)
{
    return gpu_pool_mapped(ctx->pools[where]);
}

void gpu_pool_stats(const struct gpu_context *ctx, enum gpu_memory where, struct gpu_pool_stats *out)
{
    gpu_pool_read_stats(ctx->pools[where], out);
}

void gpu_pool_reset_peak(struct gpu_context *ctx, enum gpu_memory where)
{
    gpu_pool_restart_peak(ctx->pools[where]);
}

void gpu_pool_trim(struct gpu_context *ctx)
{
    for (int w = 0; w < 2; w++)
        gpu_pool_release_empty(ctx->pools[w]);
}

int gpu_pipeline_get(struct gpu_context *ctx, const struct gpu_pipeline_desc *desc, const struct gpu_pipeline **out)
{
    return gpu_pipeline_table_get(&ctx->pipelines, desc, out);
}

unsigned gpu_pipeline_count(const struct gpu_context *ctx)
{
    /* the table's lock is taken; the context stays const to its callers */
    return gpu_pipeline_table_count((struct gpu_pipeline_table *)&ctx->pipelines);
}

void gpu_pipeline_prebuild_wait(struct gpu_context *ctx)
{
    gpu_prebuild_finish(&ctx->prebuild, false);
}

void gpu_pipeline_cache_info(const struct gpu_context *ctx, struct gpu_pipeline_cache_info *out)
{
    gpu_pipeline_cache_describe(&ctx->pipeline_cache, out);
}

int gpu_upload(struct gpu_context *ctx, const struct gpu_buffer *dst, VkDeviceSize offset, const void *src,
               size_t bytes)
{
    return gpu_transfer_upload(&ctx->transfer, dst, offset, src, bytes);
}

int gpu_download(struct gpu_context *ctx, const struct gpu_buffer *src, VkDeviceSize offset, void *dst, size_t bytes)
{
    return gpu_transfer_download(&ctx->transfer, src, offset, dst, bytes);
}
