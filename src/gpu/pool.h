/* Buffers for tensors, sub-allocated from a few large VkDeviceMemory blocks per pool.
 * Each block is one VkDeviceMemory bound to one VkBuffer; an allocation is a range of it, so
 * shaders bind (buffer, offset, size). Freed ranges coalesce and are reused, so a steady
 * workload stops allocating Vulkan memory after its first image.
 *
 * Threads: every call here may run on several threads at once; each pool's lock guards its
 * blocks and counters (nothing else is taken under it). A buffer's contents are the caller's. */
#ifndef PPOCR_GPU_POOL_H
#define PPOCR_GPU_POOL_H

#include <stdbool.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

struct gpu_context;
struct gpu_block;

enum gpu_memory {
    GPU_MEMORY_DEVICE, /* where shaders run fastest; host-mapped too on unified memory */
    GPU_MEMORY_HOST,   /* host-visible, coherent (cached where possible): staging, readback */
};

struct gpu_buffer {
    VkBuffer buffer;     /* the block's buffer; the allocation starts at `offset` */
    VkDeviceSize offset; /* multiple of minStorageBufferOffsetAlignment */
    VkDeviceSize size;   /* bytes asked for */
    void *mapped;        /* host address of `offset`, or NULL if the memory is not mappable */
    struct gpu_block *block;
};

struct gpu_pool_stats {
    uint64_t in_use;      /* bytes of live allocations, after alignment */
    uint64_t peak;        /* highest in_use since creation or gpu_pool_reset_peak */
    uint64_t block_bytes; /* VkDeviceMemory held */
    uint64_t cap;         /* 0: no cap */
    uint64_t block_size;  /* requests up to this share blocks; larger ones get their own */
    unsigned blocks, allocations;
    bool mapped; /* allocations come with a host pointer */
};

/* Allocates `size` bytes. Fails cleanly with GPU_ERR_OUT_OF_MEMORY past the pool's cap or when
 * the driver is out of memory, and with GPU_ERR past maxStorageBufferRange. */
int gpu_buffer_alloc(struct gpu_context *ctx, enum gpu_memory where, VkDeviceSize size, struct gpu_buffer *out);

/* Returns the range to its pool and zeroes *b; a zeroed buffer is ignored. */
void gpu_buffer_free(struct gpu_buffer *b);

/* Whether the host can read and write this buffer in place (no staging copy needed). */
static inline bool gpu_buffer_is_mapped(const struct gpu_buffer *b)
{
    return b->mapped != 0;
}

/* Whether every allocation from `where` is host-mapped (device memory on unified-memory
 * devices such as integrated GPUs, lavapipe, resizable BAR). */
bool gpu_memory_is_mapped(const struct gpu_context *ctx, enum gpu_memory where);

void gpu_pool_stats(const struct gpu_context *ctx, enum gpu_memory where, struct gpu_pool_stats *out);
void gpu_pool_reset_peak(struct gpu_context *ctx, enum gpu_memory where);

/* Gives empty blocks back to the driver. */
void gpu_pool_trim(struct gpu_context *ctx);

#endif
