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
/* The file of a device's cache, read and checked: for caps alone, so that it can be read while the
 * logical device is made. */
struct gpu_pipeline_cache_file {
    char path[1024]; /* "" when the disk cache is off */
    void *data;      /* the driver's data; NULL when there is no valid file */
    size_t size;
    uint64_t sum;
};
/* `dir` "": no disk cache. */
void gpu_pipeline_cache_read(const struct gpu_caps *caps, const char *dir, struct gpu_pipeline_cache_file *f);
/* Creates the cache from what was read (its data taken, freed here). */
int gpu_pipeline_cache_open(struct gpu_device *dev, struct gpu_pipeline_cache_file *f, struct gpu_pipeline_cache *c);
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
    bool ready;            /* built: from then on it never changes (under the table's lock) */
    bool used;             /* asked for by a caller, not only built ahead (under the table's lock) */
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
};
struct gpu_pipeline_table {
    struct gpu_device *dev;
    VkPipelineCache cache;
    pthread_mutex_t lock; /* guards list, count and each entry's flags (a leaf lock); builds run outside it */
    pthread_cond_t built; /* an entry became ready, or was taken out when its build failed */
    struct gpu_pipeline **list; /* in the order first asked for; entries not ready are being built */
    unsigned count, capacity;
};
void gpu_pipeline_table_init(struct gpu_pipeline_table *t, struct gpu_device *dev, VkPipelineCache cache);
void gpu_pipeline_table_destroy(struct gpu_pipeline_table *t);
int gpu_pipeline_table_get(struct gpu_pipeline_table *t, const struct gpu_pipeline_desc *desc,
                           const struct gpu_pipeline **out);
/* Whether p was built for desc (the same shader, constants and layout). */
bool gpu_pipeline_is_variant(const struct gpu_pipeline *p, const struct gpu_pipeline_desc *desc);
/* gpu_pipeline_table_get, marking the variant used or not (built ahead only). */
int gpu_pipeline_table_find_or_build(struct gpu_pipeline_table *t, const struct gpu_pipeline_desc *desc, bool use,
                                     const struct gpu_pipeline **out);
unsigned gpu_pipeline_table_count(struct gpu_pipeline_table *t);

/* pipeline_variants.c: the variants a run used, kept in a file beside the pipeline cache, and
 * built again ahead by the next run on threads of their own while its nets are made. */
struct gpu_pipeline_desc_list {
    struct gpu_pipeline_desc *descs; /* each desc's spec points into specs */
    uint32_t *specs;
    unsigned char *ages; /* runs since each was last used */
    unsigned count;
};
struct gpu_prebuild {
    struct gpu_pipeline_table *table;
    struct gpu_pipeline_desc_list list; /* what was read: built last first */
    pthread_t threads[4];
    unsigned n_threads;
    pthread_mutex_t lock; /* guards next and stop (a leaf lock) */
    unsigned next;
    bool stop;
};
/* The variants file of a pipeline cache file (its ".bin" name ending in ".variants"). */
void gpu_pipeline_variants_path(const char *cache_path, char *out, size_t out_size);
/* Starts up to n_threads threads building the variants listed in `path` (none where it is
 * missing, damaged or for other shaders). */
void gpu_prebuild_start(struct gpu_prebuild *b, struct gpu_pipeline_table *t, const char *path, unsigned n_threads);
/* Waits for the threads (asking them to stop first where `stop`). */
void gpu_prebuild_finish(struct gpu_prebuild *b, bool stop);
/* Writes the variants the table's callers used to `path` where they differ from those read. */
void gpu_pipeline_variants_save(struct gpu_pipeline_table *t, const struct gpu_prebuild *b, const char *path);
/* Stops and waits for the threads, and frees the list. A zeroed one is ignored. */
void gpu_prebuild_release(struct gpu_prebuild *b);

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
struct gpu_queue *gpu_context_queue(struct gpu_context *ctx, unsigned queue); /* modulo the count */

#endif
