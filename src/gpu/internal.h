/* What the files of the GPU layer share with each other and with nobody else. Each piece below
 * the context takes the lower pieces it needs as parameters (see the order in context.h). */
#ifndef PPOCR_GPU_INTERNAL_H
#define PPOCR_GPU_INTERNAL_H

#include "gpu/context.h"
#include "gpu/device.h"
#include "gpu/error.h"
#include "gpu/options.h"
#include "gpu/pipeline.h"
#include "gpu/pool.h"
#include "gpu/queue.h"
#include "gpu/shader_ids.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* pool.c: one pool of one kind of memory; its own lock guards all of it (a leaf lock). */
struct gpu_pool;
int gpu_pool_create(struct gpu_device *dev, enum gpu_memory where, uint64_t cap, bool no_mapped_device_memory,
                    struct gpu_pool **out);
void gpu_pool_destroy(struct gpu_pool *p); /* NULL is ok */
int gpu_pool_alloc(struct gpu_pool *p, VkDeviceSize size, struct gpu_buffer *out);
bool gpu_pool_mapped(const struct gpu_pool *p);
void gpu_pool_read_stats(struct gpu_pool *p, struct gpu_pool_stats *out);
void gpu_pool_restart_peak(struct gpu_pool *p);
void gpu_pool_release_empty(struct gpu_pool *p);

/* pipeline_cache.c: the VkPipelineCache and its file. Written at creation and at close only;
 * Vulkan synchronises the VkPipelineCache itself. */
struct gpu_pipeline_cache {
    VkPipelineCache handle;
    char path[1024];     /* "" when the disk cache is off */
    uint64_t loaded_sum; /* checksum of the data read at creation, 0 if none */
    size_t loaded_size;
};
/* `dir` "": no disk cache. */
int gpu_pipeline_cache_open(struct gpu_device *dev, const char *dir, struct gpu_pipeline_cache *c);
/* Writes the file if the data changed (and the device is not lost), then destroys the cache. */
void gpu_pipeline_cache_close(struct gpu_device *dev, struct gpu_pipeline_cache *c);
void gpu_pipeline_cache_describe(const struct gpu_pipeline_cache *c, struct gpu_pipeline_cache_info *out);

/* pipeline.c: every pipeline variant built, built into one VkPipelineCache. */
struct gpu_pipeline {
    enum gpu_shader_id shader_id;
    char shader[64]; /* its name, for messages and profiles */
    uint32_t spec[32];
    unsigned spec_count, buffer_count, push_bytes;
    uint32_t subgroup_size;
    uint32_t texel_mask;   /* gpu_pipeline_desc.texel_mask */
    bool push_descriptors; /* the set layout is a push-descriptor layout */
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
};
struct gpu_pipeline_table {
    struct gpu_device *dev;
    VkPipelineCache cache;
    pthread_mutex_t lock; /* guards list and count (a leaf lock); builds run outside it */
    struct gpu_pipeline **list;
    unsigned count, capacity;
};
void gpu_pipeline_table_init(struct gpu_pipeline_table *t, struct gpu_device *dev, VkPipelineCache cache);
void gpu_pipeline_table_destroy(struct gpu_pipeline_table *t);
int gpu_pipeline_table_get(struct gpu_pipeline_table *t, const struct gpu_pipeline_desc *desc,
                           const struct gpu_pipeline **out);
unsigned gpu_pipeline_table_count(struct gpu_pipeline_table *t);

/* transfer.c: the one staging command buffer, for copies one at a time. `lock` guards the
 * command buffer and its fence and is held across the submission and the wait, so it is taken
 * before the queue's lock; staging memory is allocated before it is taken. */
struct gpu_transfer {
    struct gpu_device *dev;
    struct gpu_queue *queue;
    struct gpu_pool *staging; /* host memory */
    pthread_mutex_t lock;
    VkCommandPool pool; /* created on the first staging copy */
    VkCommandBuffer cb;
    VkFence fence;
};
void gpu_transfer_init(struct gpu_transfer *t, struct gpu_device *dev, struct gpu_queue *queue,
                       struct gpu_pool *staging);
void gpu_transfer_destroy(struct gpu_transfer *t);
int gpu_transfer_upload(struct gpu_transfer *t, const struct gpu_buffer *dst, VkDeviceSize offset, const void *src,
                        size_t bytes);
int gpu_transfer_download(struct gpu_transfer *t, const struct gpu_buffer *src, VkDeviceSize offset, void *dst,
                          size_t bytes);

/* context.c: the pieces of a context, for the code above it (command buffers). */
struct gpu_device *gpu_context_gpu_device(struct gpu_context *ctx);
struct gpu_queue *gpu_context_queue(struct gpu_context *ctx);

#endif
