#include "gpu/pool.h"
#include "gpu/internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define DEFAULT_BLOCK_BYTES (64ull << 20)
/* Host memory is pinned when it is allocated, which costs time per byte, while a page's
 * readbacks need well under a MiB: the host pool's first block is this small, so that the first
 * image does not wait for a whole block of it. */
#define FIRST_HOST_BLOCK_BYTES (4ull << 20)
#define MIN_ALIGNMENT 16 /* vec4 loads */

struct free_range {
    VkDeviceSize offset, size;
};

struct gpu_block {
    struct gpu_pool *pool;
    VkDeviceMemory memory;
    VkBuffer buffer;
    VkDeviceSize size;
    unsigned char *mapped;
    bool dedicated;          /* one allocation larger than a block; released when it is freed */
    unsigned live;           /* allocations in this block */
    struct free_range *free; /* sorted by offset, never adjacent */
    unsigned free_count, free_capacity;
};

struct gpu_pool {
    struct gpu_device *dev;
    const char *name;
    uint32_t memory_type;
    bool mapped;
    VkDeviceSize block_size, alignment;
    VkDeviceSize first_block_size; /* of the first block shared by allocations */
    bool shared_block_made;
    uint64_t in_use, peak, cap, block_bytes;
    unsigned allocations;
    struct gpu_block **blocks;
    unsigned block_count, block_capacity;
    pthread_mutex_t lock;
};

static VkDeviceSize round_up(VkDeviceSize x, VkDeviceSize a)
{
    return (x + a - 1) / a * a;
}

static const VkBufferUsageFlags BLOCK_USAGE = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT |
                                              VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
                                              VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;

/* The first memory type allowed by `bits` that has all of `want`, or -1. */
static int find_type(const VkPhysicalDeviceMemoryProperties *m, uint32_t bits, VkMemoryPropertyFlags want)
{
    for (uint32_t i = 0; i < m->memoryTypeCount; i++)
        if ((bits & (1u << i)) && (m->memoryTypes[i].propertyFlags & want) == want)
            return (int)i;
    return -1;
}

static int choose_memory_type(const struct gpu_device *dev, enum gpu_memory where, bool no_mapped_device_memory,
                              uint32_t *type)
{
    /* buffers of equal usage and flags share memoryTypeBits, so one probe answers for all */
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = 4096,
                             .usage = BLOCK_USAGE,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkBuffer probe;
    VkResult r = vkCreateBuffer(dev->device, &bi, NULL, &probe);
    if (r != VK_SUCCESS)
        return gpu_fail_vk(r, "creating a probe buffer to choose memory types");
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev->device, probe, &req);
    vkDestroyBuffer(dev->device, probe, NULL);

    const VkPhysicalDeviceMemoryProperties *m = &dev->caps.memory;
    const VkMemoryPropertyFlags DL = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, HV = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT,
                                HC = VK_MEMORY_PROPERTY_HOST_COHERENT_BIT, CACHED = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
    int t = -1;
    if (where == GPU_MEMORY_DEVICE) {
        if (dev->caps.unified_memory && !no_mapped_device_memory)
            t = find_type(m, req.memoryTypeBits, DL | HV | HC);
        if (t >= 0 && m->memoryHeaps[m->memoryTypes[t].heapIndex].size < dev->caps.device_local_bytes)
            t = -1; /* only a BAR window: keep it for nothing */
        if (t < 0)
            t = find_type(m, req.memoryTypeBits, DL);
        if (t < 0)
            t = find_type(m, req.memoryTypeBits, 0);
    } else {
        t = find_type(m, req.memoryTypeBits, HV | HC | CACHED);
        if (t < 0)
            t = find_type(m, req.memoryTypeBits, HV | HC);
    }
    if (t < 0)
        return gpu_fail(GPU_ERR, "choosing a memory type for %s buffers: none fits",
                        where == GPU_MEMORY_DEVICE ? "device" : "host");
    *type = (uint32_t)t;
    return GPU_OK;
}

int gpu_pool_create(struct gpu_device *dev, enum gpu_memory where, uint64_t cap, bool no_mapped_device_memory,
                    struct gpu_pool **out)
{
    *out = NULL;
    struct gpu_pool *p = calloc(1, sizeof *p);
    if (!p)
        return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "creating a buffer pool: out of memory");
    p->dev = dev;
    p->name = where == GPU_MEMORY_DEVICE ? "device" : "host";
    pthread_mutex_init(&p->lock, NULL);
    int st = choose_memory_type(dev, where, no_mapped_device_memory, &p->memory_type);
    if (st) {
        gpu_pool_destroy(p);
        return st;
    }
    const struct gpu_caps *caps = &dev->caps;
    p->mapped = (caps->memory.memoryTypes[p->memory_type].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
                !(where == GPU_MEMORY_DEVICE && no_mapped_device_memory);
    p->alignment = caps->min_storage_buffer_offset_alignment;
    /* every buffer can be bound as a texel buffer too (gpu_pipeline_desc.texel_mask) */
    if (p->alignment < caps->min_texel_buffer_offset_alignment)
        p->alignment = caps->min_texel_buffer_offset_alignment;
    if (p->alignment < MIN_ALIGNMENT)
        p->alignment = MIN_ALIGNMENT;
    if (p->mapped && caps->non_coherent_atom_size > p->alignment)
        p->alignment = caps->non_coherent_atom_size;
    p->cap = cap;
    p->block_size = DEFAULT_BLOCK_BYTES;
    if (p->block_size > caps->max_storage_buffer_range)
        p->block_size = caps->max_storage_buffer_range / p->alignment * p->alignment;
    if (p->cap && p->block_size > round_up(p->cap, p->alignment))
        p->block_size = round_up(p->cap, p->alignment);
    p->first_block_size = p->block_size;
    if (where == GPU_MEMORY_HOST && p->first_block_size > FIRST_HOST_BLOCK_BYTES)
        p->first_block_size = round_up(FIRST_HOST_BLOCK_BYTES, p->alignment);
    *out = p;
    return GPU_OK;
}

static void block_destroy(struct gpu_block *b)
{
    VkDevice dev = b->pool->dev->device;
    if (b->buffer)
        vkDestroyBuffer(dev, b->buffer, NULL);
    if (b->memory)
        vkFreeMemory(dev, b->memory, NULL); /* unmaps implicitly */
    b->pool->block_bytes -= b->size;
    free(b->free);
    free(b);
}

static int block_create(struct gpu_pool *p, VkDeviceSize size, bool dedicated, struct gpu_block **out)
{
    struct gpu_device *dev = p->dev;
    struct gpu_block *b = calloc(1, sizeof *b);
    if (!b || !(b->free = malloc(4 * sizeof *b->free))) {
        free(b);
        return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "creating a %s memory block: out of host memory", p->name);
    }
    b->pool = p;
    b->size = size;
    b->dedicated = dedicated;
    b->free_capacity = 4;
    b->free_count = 1;
    b->free[0] = (struct free_range){0, size};
    p->block_bytes += size; /* undone by block_destroy */

    char doing[160];
    VkBufferCreateInfo bi = {.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
                             .size = size,
                             .usage = BLOCK_USAGE,
                             .sharingMode = VK_SHARING_MODE_EXCLUSIVE};
    VkResult r = vkCreateBuffer(dev->device, &bi, NULL, &b->buffer);
    if (r != VK_SUCCESS) {
        b->buffer = VK_NULL_HANDLE;
        snprintf(doing, sizeof doing, "creating a %llu-byte %s buffer block", (unsigned long long)size, p->name);
        block_destroy(b);
        return gpu_device_fail_vk(dev, r, doing);
    }
    VkMemoryRequirements req;
    vkGetBufferMemoryRequirements(dev->device, b->buffer, &req);
    VkMemoryAllocateInfo ai = {
        .sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, .allocationSize = req.size, .memoryTypeIndex = p->memory_type};
    r = vkAllocateMemory(dev->device, &ai, NULL, &b->memory);
    if (r == VK_SUCCESS)
        r = vkBindBufferMemory(dev->device, b->buffer, b->memory, 0);
    if (r == VK_SUCCESS && p->mapped)
        r = vkMapMemory(dev->device, b->memory, 0, VK_WHOLE_SIZE, 0, (void **)&b->mapped);
    if (r != VK_SUCCESS) {
        snprintf(doing, sizeof doing, "allocating a %llu-byte %s memory block", (unsigned long long)req.size, p->name);
        block_destroy(b);
        return gpu_device_fail_vk(dev, r, doing);
    }
    if (p->block_count == p->block_capacity) {
        unsigned cap = p->block_capacity ? 2 * p->block_capacity : 8;
        struct gpu_block **blocks = realloc(p->blocks, cap * sizeof *blocks);
        if (!blocks) {
            block_destroy(b);
            return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "creating a %s memory block: out of host memory", p->name);
        }
        p->blocks = blocks;
        p->block_capacity = cap;
    }
    p->blocks[p->block_count++] = b;
    *out = b;
    return GPU_OK;
}

static void block_remove(struct gpu_pool *p, struct gpu_block *b)
{
    for (unsigned i = 0; i < p->block_count; i++)
        if (p->blocks[i] == b) {
            p->blocks[i] = p->blocks[--p->block_count];
            break;
        }
    block_destroy(b);
}

/* Takes `size` bytes from the start of free range `i`. */
static VkDeviceSize block_take(struct gpu_block *b, unsigned i, VkDeviceSize size)
{
    VkDeviceSize offset = b->free[i].offset;
    b->free[i].offset += size;
    b->free[i].size -= size;
    if (b->free[i].size == 0) {
        memmove(&b->free[i], &b->free[i + 1], (b->free_count - i - 1) * sizeof *b->free);
        b->free_count--;
    }
    b->live++;
    return offset;
}

/* Gives a range back, merging it with free neighbours. */
static int block_give(struct gpu_block *b, VkDeviceSize offset, VkDeviceSize size)
{
    unsigned lo = 0, hi = b->free_count;
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (b->free[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    bool joins_prev = lo > 0 && b->free[lo - 1].offset + b->free[lo - 1].size == offset;
    bool joins_next = lo < b->free_count && offset + size == b->free[lo].offset;
    b->live--;
    if (joins_prev && joins_next) {
        b->free[lo - 1].size += size + b->free[lo].size;
        memmove(&b->free[lo], &b->free[lo + 1], (b->free_count - lo - 1) * sizeof *b->free);
        b->free_count--;
    } else if (joins_prev) {
        b->free[lo - 1].size += size;
    } else if (joins_next) {
        b->free[lo].offset = offset;
        b->free[lo].size += size;
    } else {
        if (b->free_count == b->free_capacity) {
            struct free_range *f = realloc(b->free, 2 * b->free_capacity * sizeof *f);
            if (!f)
                return -1; /* the range leaks inside its block until the pool is destroyed */
            b->free = f;
            b->free_capacity *= 2;
        }
        memmove(&b->free[lo + 1], &b->free[lo], (b->free_count - lo) * sizeof *b->free);
        b->free[lo] = (struct free_range){offset, size};
        b->free_count++;
    }
    return 0;
}

int gpu_pool_alloc(struct gpu_pool *p, VkDeviceSize size, struct gpu_buffer *out)
{
    memset(out, 0, sizeof *out);
    const struct gpu_caps *caps = &p->dev->caps;
    if (gpu_device_lost(p->dev))
        return gpu_fail(GPU_ERR_DEVICE_LOST, "allocating a %s buffer: the device was lost earlier", p->name);
    if (size > caps->max_storage_buffer_range)
        return gpu_fail(GPU_ERR,
                        "allocating a %llu-byte %s buffer: larger than the device's "
                        "maxStorageBufferRange of %llu bytes",
                        (unsigned long long)size, p->name, (unsigned long long)caps->max_storage_buffer_range);
    VkDeviceSize need = round_up(size ? size : 1, p->alignment);

    pthread_mutex_lock(&p->lock);
    int st = GPU_OK;
    if (p->cap && p->in_use + need > p->cap) {
        st = gpu_fail(GPU_ERR_OUT_OF_MEMORY,
                      "allocating a %llu-byte %s buffer: the pool's cap of "
                      "%llu bytes is reached (%llu in use)",
                      (unsigned long long)size, p->name, (unsigned long long)p->cap, (unsigned long long)p->in_use);
        goto done;
    }
    struct gpu_block *best = NULL;
    unsigned best_range = 0;
    if (need <= p->block_size) {
        for (unsigned i = 0; i < p->block_count; i++) {
            struct gpu_block *b = p->blocks[i];
            if (b->dedicated)
                continue;
            for (unsigned j = 0; j < b->free_count; j++)
                if (b->free[j].size >= need && (!best || b->free[j].size < best->free[best_range].size)) {
                    best = b;
                    best_range = j;
                }
        }
    }
    if (!best) {
        bool dedicated = need > p->block_size;
        VkDeviceSize block = dedicated ? need
                             : !p->shared_block_made && need <= p->first_block_size ? p->first_block_size
                                                                                    : p->block_size;
        st = block_create(p, block, dedicated, &best);
        if (st)
            goto done;
        p->shared_block_made |= !dedicated;
        best_range = 0;
    }
    VkDeviceSize offset = block_take(best, best_range, need);
    *out = (struct gpu_buffer){.buffer = best->buffer,
                               .offset = offset,
                               .size = size,
                               .mapped = best->mapped ? best->mapped + offset : NULL,
                               .block = best};
    p->in_use += need;
    if (p->in_use > p->peak)
        p->peak = p->in_use;
    p->allocations++;
done:
    pthread_mutex_unlock(&p->lock);
    return st;
}

void gpu_buffer_free(struct gpu_buffer *buf)
{
    struct gpu_block *b = buf->block;
    if (!b)
        return;
    struct gpu_pool *p = b->pool;
    VkDeviceSize need = round_up(buf->size ? buf->size : 1, p->alignment);
    pthread_mutex_lock(&p->lock);
    p->in_use -= need;
    p->allocations--;
    block_give(b, buf->offset, need);
    if (b->dedicated && b->live == 0)
        block_remove(p, b);
    pthread_mutex_unlock(&p->lock);
    memset(buf, 0, sizeof *buf);
}

bool gpu_pool_mapped(const struct gpu_pool *p)
{
    return p->mapped;
}

void gpu_pool_read_stats(struct gpu_pool *p, struct gpu_pool_stats *out)
{
    pthread_mutex_lock(&p->lock);
    *out = (struct gpu_pool_stats){.in_use = p->in_use,
                                   .peak = p->peak,
                                   .block_bytes = p->block_bytes,
                                   .cap = p->cap,
                                   .block_size = p->block_size,
                                   .blocks = p->block_count,
                                   .allocations = p->allocations,
                                   .mapped = p->mapped};
    pthread_mutex_unlock(&p->lock);
}

void gpu_pool_restart_peak(struct gpu_pool *p)
{
    pthread_mutex_lock(&p->lock);
    p->peak = p->in_use;
    pthread_mutex_unlock(&p->lock);
}

void gpu_pool_release_empty(struct gpu_pool *p)
{
    pthread_mutex_lock(&p->lock);
    for (unsigned i = p->block_count; i-- > 0;)
        if (p->blocks[i]->live == 0)
            block_remove(p, p->blocks[i]);
    pthread_mutex_unlock(&p->lock);
}

void gpu_pool_destroy(struct gpu_pool *p)
{
    if (!p)
        return;
    while (p->block_count)
        block_remove(p, p->blocks[p->block_count - 1]);
    free(p->blocks);
    pthread_mutex_destroy(&p->lock);
    free(p);
}
