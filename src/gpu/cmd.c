#include "gpu/cmd.h"
#include "gpu/internal.h"
#include "gpu/pipeline.h"

#include <stdlib.h>
#include <string.h>

/* Descriptor pools come in fixed slabs; a recording takes as many as its dispatches need. */
#define SETS_PER_POOL 128
#define DESCRIPTORS_PER_POOL (SETS_PER_POOL * 4)
#define TEXEL_DESCRIPTORS_PER_POOL SETS_PER_POOL

struct gpu_cmd {
    struct gpu_device *dev;
    struct gpu_queue *queue;
    VkCommandPool pool;
    VkCommandBuffer cb;
    VkFence fence;
    bool recording, recorded, pending;
    int error; /* first failure while recording, reported again by gpu_cmd_end */

    VkDescriptorPool *descriptor_pools;
    unsigned descriptor_pool_count, descriptor_pools_used;
    unsigned sets_left; /* in the last used pool */

    VkBufferView *views; /* of the texel buffers bound since gpu_cmd_begin */
    unsigned view_count, view_capacity;

    VkQueryPool queries;
    unsigned max_timings, timed;
    bool untimed_dispatches;    /* only gpu_cmd_mark writes timestamps */
    unsigned side_by_side;      /* gpu_cmd_set_side_by_side; 0 reads as 1 */
    struct gpu_timing *timings; /* labels at record time, times after each wait */
    uint64_t *ticks;
};

static int record_fail(struct gpu_cmd *cmd, int status)
{
    if (!cmd->error)
        cmd->error = status;
    return status;
}

void gpu_cmd_set_side_by_side(struct gpu_cmd *cmd, unsigned n)
{
    cmd->side_by_side = n;
}

unsigned gpu_cmd_side_by_side(const struct gpu_cmd *cmd)
{
    return cmd->side_by_side ? cmd->side_by_side : 1;
}

int gpu_cmd_create(struct gpu_context *ctx, unsigned max_timings, struct gpu_cmd **out)
{
    return gpu_cmd_create_on(ctx, 0, max_timings, out);
}

int gpu_cmd_create_on(struct gpu_context *ctx, unsigned queue, unsigned max_timings, struct gpu_cmd **out)
{
    *out = NULL;
    struct gpu_cmd *cmd = calloc(1, sizeof *cmd);
    if (!cmd)
        return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "creating a command buffer: out of memory");
    cmd->dev = gpu_context_gpu_device(ctx);
    cmd->queue = gpu_context_queue(ctx, queue);
    struct gpu_device *dev = cmd->dev;
    VkCommandPoolCreateInfo pi = {.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
                                  .flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
                                  .queueFamilyIndex = dev->queue_family};
    VkResult r = vkCreateCommandPool(dev->device, &pi, NULL, &cmd->pool);
    const char *doing = "creating a command pool";
    if (r == VK_SUCCESS) {
        VkCommandBufferAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
                                          .commandPool = cmd->pool,
                                          .level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
                                          .commandBufferCount = 1};
        r = vkAllocateCommandBuffers(dev->device, &ai, &cmd->cb);
        doing = "allocating a command buffer";
    }
    if (r == VK_SUCCESS) {
        VkFenceCreateInfo fi = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
        r = vkCreateFence(dev->device, &fi, NULL, &cmd->fence);
        doing = "creating a fence";
    }
    if (r == VK_SUCCESS && max_timings > 0 && dev->caps.timestamps) {
        VkQueryPoolCreateInfo qi = {.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
                                    .queryType = VK_QUERY_TYPE_TIMESTAMP,
                                    .queryCount = max_timings + 1};
        r = vkCreateQueryPool(dev->device, &qi, NULL, &cmd->queries);
        doing = "creating a timestamp query pool";
        if (r == VK_SUCCESS) {
            cmd->max_timings = max_timings;
            cmd->timings = calloc(max_timings, sizeof *cmd->timings);
            cmd->ticks = calloc(max_timings + 1, sizeof *cmd->ticks);
            if (!cmd->timings || !cmd->ticks)
                r = VK_ERROR_OUT_OF_HOST_MEMORY;
        }
    }
    if (r != VK_SUCCESS) {
        int st = gpu_device_fail_vk(dev, r, doing);
        gpu_cmd_destroy(cmd);
        return st;
    }
    *out = cmd;
    return GPU_OK;
}

static void destroy_views(struct gpu_cmd *cmd)
{
    for (unsigned i = 0; i < cmd->view_count; i++)
        vkDestroyBufferView(cmd->dev->device, cmd->views[i], NULL);
    cmd->view_count = 0;
}

void gpu_cmd_destroy(struct gpu_cmd *cmd)
{
    if (!cmd)
        return;
    VkDevice dev = cmd->dev->device;
    if (cmd->pending)
        gpu_queue_drain(cmd->queue, cmd->fence);
    for (unsigned i = 0; i < cmd->descriptor_pool_count; i++)
        vkDestroyDescriptorPool(dev, cmd->descriptor_pools[i], NULL);
    free(cmd->descriptor_pools);
    destroy_views(cmd);
    free(cmd->views);
    if (cmd->queries)
        vkDestroyQueryPool(dev, cmd->queries, NULL);
    if (cmd->fence)
        vkDestroyFence(dev, cmd->fence, NULL);
    if (cmd->pool)
        vkDestroyCommandPool(dev, cmd->pool, NULL); /* frees the command buffer */
    free(cmd->timings);
    free(cmd->ticks);
    free(cmd);
}

int gpu_cmd_begin(struct gpu_cmd *cmd)
{
    struct gpu_device *dev = cmd->dev;
    if (cmd->pending) {
        int st = gpu_cmd_wait(cmd);
        if (st)
            return st;
    }
    VkResult r = vkResetCommandBuffer(cmd->cb, 0);
    if (r != VK_SUCCESS)
        return gpu_device_fail_vk(dev, r, "resetting a command buffer for recording");
    for (unsigned i = 0; i < cmd->descriptor_pools_used; i++) {
        r = vkResetDescriptorPool(dev->device, cmd->descriptor_pools[i], 0);
        if (r != VK_SUCCESS)
            return gpu_device_fail_vk(dev, r, "resetting a descriptor pool for recording");
    }
    cmd->descriptor_pools_used = 0;
    cmd->sets_left = 0;
    destroy_views(cmd);
    cmd->timed = 0;
    cmd->error = GPU_OK;
    cmd->recorded = false;
    VkCommandBufferBeginInfo bi = {.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
    r = vkBeginCommandBuffer(cmd->cb, &bi);
    if (r != VK_SUCCESS)
        return gpu_device_fail_vk(dev, r, "beginning a command buffer");
    cmd->recording = true;
    if (cmd->queries) {
        /* recorded, not done on the host, so every replay starts from clean queries */
        vkCmdResetQueryPool(cmd->cb, cmd->queries, 0, cmd->max_timings + 1);
        vkCmdWriteTimestamp(cmd->cb, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, cmd->queries, 0);
    }
    return GPU_OK;
}

/* A timing that ends here: everything since the previous timestamp has finished. */
static void write_timestamp(struct gpu_cmd *cmd, const char *label)
{
    if (!cmd->queries || cmd->timed >= cmd->max_timings)
        return;
    struct gpu_timing *t = &cmd->timings[cmd->timed++];
    snprintf(t->label, sizeof t->label, "%s", label);
    t->us = 0;
    vkCmdWriteTimestamp(cmd->cb, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, cmd->queries, cmd->timed);
}

static int descriptor_set(struct gpu_cmd *cmd, const struct gpu_pipeline *p, VkDescriptorSet *set)
{
    struct gpu_device *dev = cmd->dev;
    VkResult r;
    if (cmd->sets_left == 0) {
        if (cmd->descriptor_pools_used == cmd->descriptor_pool_count) {
            VkDescriptorPool *pools = realloc(cmd->descriptor_pools, (cmd->descriptor_pool_count + 1) * sizeof *pools);
            if (!pools)
                return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "recording %s: out of memory", p->shader);
            cmd->descriptor_pools = pools;
            const VkDescriptorPoolSize sizes[] = {
                {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, DESCRIPTORS_PER_POOL},
                {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, TEXEL_DESCRIPTORS_PER_POOL}};
            VkDescriptorPoolCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
                                             .maxSets = SETS_PER_POOL,
                                             .poolSizeCount = 2,
                                             .pPoolSizes = sizes};
            r = vkCreateDescriptorPool(dev->device, &ci, NULL, &cmd->descriptor_pools[cmd->descriptor_pool_count]);
            if (r != VK_SUCCESS)
                return gpu_device_fail_vk(dev, r, "recording a dispatch: creating a descriptor pool");
            cmd->descriptor_pool_count++;
        }
        cmd->descriptor_pools_used++;
        cmd->sets_left = SETS_PER_POOL;
    }
    VkDescriptorSetAllocateInfo ai = {.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
                                      .descriptorPool = cmd->descriptor_pools[cmd->descriptor_pools_used - 1],
                                      .descriptorSetCount = 1,
                                      .pSetLayouts = &p->set_layout};
    r = vkAllocateDescriptorSets(dev->device, &ai, set);
    if ((r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL) && cmd->sets_left < SETS_PER_POOL) {
        /* the slab ran out of descriptors before sets: move on to the next one */
        cmd->sets_left = 0;
        return descriptor_set(cmd, p, set);
    }
    if (r != VK_SUCCESS)
        return gpu_device_fail_vk(dev, r, "recording a dispatch: allocating a descriptor set");
    cmd->sets_left--;
    return GPU_OK;
}

/* A view of binding i's range as RGBA32F texels, kept until the next gpu_cmd_begin. */
static int texel_view(struct gpu_cmd *cmd, const struct gpu_pipeline *p, unsigned i, const struct gpu_binding *b,
                      VkBufferView *out)
{
    struct gpu_device *dev = cmd->dev;
    const VkDeviceSize texels = (b->range + 15) / 16;
    if (!b->buffer || b->range == 0 || texels > dev->caps.max_texel_buffer_elements ||
        b->offset % dev->caps.min_texel_buffer_offset_alignment)
        return gpu_fail(GPU_ERR,
                        "recording %s: texel binding %u is empty, misaligned or too large "
                        "(offset %llu, %llu bytes)",
                        p->shader, i, (unsigned long long)b->offset, (unsigned long long)b->range);
    if (cmd->view_count == cmd->view_capacity) {
        unsigned cap = cmd->view_capacity ? 2 * cmd->view_capacity : 16;
        VkBufferView *views = realloc(cmd->views, cap * sizeof *views);
        if (!views)
            return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "recording %s: out of memory", p->shader);
        cmd->views = views;
        cmd->view_capacity = cap;
    }
    VkBufferViewCreateInfo vi = {.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO,
                                 .buffer = b->buffer,
                                 .format = VK_FORMAT_R32G32B32A32_SFLOAT,
                                 .offset = b->offset,
                                 .range = texels * 16};
    VkResult r = vkCreateBufferView(dev->device, &vi, NULL, out);
    if (r != VK_SUCCESS)
        return gpu_device_fail_vk(dev, r, "recording a dispatch: creating a texel buffer view");
    cmd->views[cmd->view_count++] = *out;
    return GPU_OK;
}

int gpu_cmd_dispatch(struct gpu_cmd *cmd, const struct gpu_dispatch *d)
{
    struct gpu_device *dev = cmd->dev;
    const struct gpu_pipeline *p = d->pipeline;
    if (!cmd->recording)
        return record_fail(cmd, gpu_fail(GPU_ERR, "recording a dispatch: gpu_cmd_begin was not called"));
    if (!p)
        return record_fail(cmd, gpu_fail(GPU_ERR, "recording a dispatch: no pipeline"));
    if (p->push_bytes && !d->push)
        return record_fail(cmd, gpu_fail(GPU_ERR, "recording %s: push constants missing", p->shader));
    uint32_t groups[3];
    for (int i = 0; i < 3; i++) {
        groups[i] = d->groups[i] ? d->groups[i] : 1;
        if (groups[i] > dev->caps.max_workgroup_count[i])
            return record_fail(cmd, gpu_fail(GPU_ERR,
                                             "recording %s: %u workgroups in dimension "
                                             "%d, the device allows %u",
                                             p->shader, groups[i], i, dev->caps.max_workgroup_count[i]));
    }
    VkDescriptorBufferInfo infos[GPU_MAX_BUFFERS];
    VkWriteDescriptorSet writes[GPU_MAX_BUFFERS];
    VkBufferView views[GPU_MAX_BUFFERS];
    for (unsigned i = 0; i < p->buffer_count; i++) {
        const struct gpu_binding *b = &d->buffers[i];
        writes[i] = (VkWriteDescriptorSet){
            .sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, .dstBinding = i, .descriptorCount = 1};
        if (p->texel_mask >> i & 1u) {
            int st = texel_view(cmd, p, i, b, &views[i]);
            if (st)
                return record_fail(cmd, st);
            writes[i].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
            writes[i].pTexelBufferView = &views[i];
            continue;
        }
        if (!b->buffer || b->range == 0 || b->range > dev->caps.max_storage_buffer_range ||
            b->offset % dev->caps.min_storage_buffer_offset_alignment)
            return record_fail(cmd,
                               gpu_fail(GPU_ERR,
                                        "recording %s: binding %u is empty, "
                                        "misaligned or too large (offset %llu, %llu bytes)",
                                        p->shader, i, (unsigned long long)b->offset, (unsigned long long)b->range));
        infos[i] = (VkDescriptorBufferInfo){b->buffer, b->offset, b->range};
        writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
        writes[i].pBufferInfo = &infos[i];
    }
    vkCmdBindPipeline(cmd->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->pipeline);
    if (p->buffer_count && p->push_descriptors) {
        dev->push_descriptor_set(cmd->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, p->buffer_count, writes);
    } else if (p->buffer_count) {
        VkDescriptorSet set;
        int st = descriptor_set(cmd, p, &set);
        if (st)
            return record_fail(cmd, st);
        for (unsigned i = 0; i < p->buffer_count; i++)
            writes[i].dstSet = set;
        vkUpdateDescriptorSets(dev->device, p->buffer_count, writes, 0, NULL);
        vkCmdBindDescriptorSets(cmd->cb, VK_PIPELINE_BIND_POINT_COMPUTE, p->layout, 0, 1, &set, 0, NULL);
    }
    if (p->push_bytes)
        vkCmdPushConstants(cmd->cb, p->layout, VK_SHADER_STAGE_COMPUTE_BIT, 0, p->push_bytes, d->push);
    vkCmdDispatch(cmd->cb, groups[0], groups[1], groups[2]);
    if (!cmd->untimed_dispatches)
        write_timestamp(cmd, d->label ? d->label : p->shader);
    return GPU_OK;
}

void gpu_cmd_time_dispatches(struct gpu_cmd *cmd, bool on)
{
    cmd->untimed_dispatches = !on;
}

void gpu_cmd_mark(struct gpu_cmd *cmd, const char *label)
{
    if (cmd->recording)
        write_timestamp(cmd, label);
}

static void stage_masks(enum gpu_stage s, bool source, VkPipelineStageFlags *stage, VkAccessFlags *access)
{
    *stage = VK_PIPELINE_STAGE_ALL_COMMANDS_BIT; /* only for values outside the enum */
    *access = VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT;
    switch (s) {
    case GPU_STAGE_COMPUTE:
        *stage = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT;
        *access = source ? VK_ACCESS_SHADER_WRITE_BIT : VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT;
        break;
    case GPU_STAGE_TRANSFER:
        *stage = VK_PIPELINE_STAGE_TRANSFER_BIT;
        *access = source ? VK_ACCESS_TRANSFER_WRITE_BIT : VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
        break;
    case GPU_STAGE_HOST:
        *stage = VK_PIPELINE_STAGE_HOST_BIT;
        *access = source ? VK_ACCESS_HOST_WRITE_BIT : VK_ACCESS_HOST_READ_BIT;
        break;
    }
}

void gpu_cmd_barrier(struct gpu_cmd *cmd, enum gpu_stage from, enum gpu_stage to)
{
    if (!cmd->recording) {
        record_fail(cmd, gpu_fail(GPU_ERR, "recording a barrier: gpu_cmd_begin was not called"));
        return;
    }
    VkPipelineStageFlags src_stage, dst_stage;
    VkMemoryBarrier b = {.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER};
    stage_masks(from, true, &src_stage, &b.srcAccessMask);
    stage_masks(to, false, &dst_stage, &b.dstAccessMask);
    vkCmdPipelineBarrier(cmd->cb, src_stage, dst_stage, 0, 1, &b, 0, NULL, 0, NULL);
}

static bool inside(const struct gpu_buffer *b, VkDeviceSize offset, VkDeviceSize bytes)
{
    return b->block && offset <= b->size && bytes <= b->size - offset;
}

int gpu_cmd_copy(struct gpu_cmd *cmd, const struct gpu_buffer *src, VkDeviceSize src_offset,
                 const struct gpu_buffer *dst, VkDeviceSize dst_offset, VkDeviceSize bytes)
{
    if (!cmd->recording)
        return record_fail(cmd, gpu_fail(GPU_ERR, "recording a copy: gpu_cmd_begin was not called"));
    if (!inside(src, src_offset, bytes) || !inside(dst, dst_offset, bytes))
        return record_fail(cmd, gpu_fail(GPU_ERR,
                                         "recording a copy of %llu bytes: outside the "
                                         "source or destination buffer",
                                         (unsigned long long)bytes));
    if (bytes == 0)
        return GPU_OK;
    VkBufferCopy region = {src->offset + src_offset, dst->offset + dst_offset, bytes};
    vkCmdCopyBuffer(cmd->cb, src->buffer, dst->buffer, 1, &region);
    return GPU_OK;
}

int gpu_cmd_fill(struct gpu_cmd *cmd, const struct gpu_buffer *dst, VkDeviceSize offset, VkDeviceSize bytes,
                 uint32_t value)
{
    if (!cmd->recording)
        return record_fail(cmd, gpu_fail(GPU_ERR, "recording a fill: gpu_cmd_begin was not called"));
    if (!inside(dst, offset, bytes) || bytes % 4 || (dst->offset + offset) % 4)
        return record_fail(cmd, gpu_fail(GPU_ERR,
                                         "recording a fill of %llu bytes: outside the "
                                         "buffer or not 4-byte aligned",
                                         (unsigned long long)bytes));
    if (bytes)
        vkCmdFillBuffer(cmd->cb, dst->buffer, dst->offset + offset, bytes, value);
    return GPU_OK;
}

int gpu_cmd_end(struct gpu_cmd *cmd)
{
    if (!cmd->recording)
        return gpu_fail(GPU_ERR, "ending a recording: gpu_cmd_begin was not called");
    cmd->recording = false;
    VkResult r = vkEndCommandBuffer(cmd->cb);
    if (r != VK_SUCCESS)
        return gpu_device_fail_vk(cmd->dev, r, "ending a command buffer");
    if (cmd->error)
        return cmd->error; /* gpu_last_error() may be newer; the first call returned the reason */
    cmd->recorded = true;
    return GPU_OK;
}

int gpu_cmd_submit(struct gpu_cmd *cmd)
{
    if (!cmd->recorded)
        return gpu_fail(GPU_ERR, "submitting a command buffer: nothing recorded successfully");
    if (cmd->pending)
        return gpu_fail(GPU_ERR, "submitting a command buffer: the previous submission is still "
                                 "running (call gpu_cmd_wait)");
    int st = gpu_queue_submit(cmd->queue, cmd->cb, cmd->fence, "submitting a command buffer");
    if (!st)
        cmd->pending = true;
    return st;
}

static VkResult read_timings(struct gpu_cmd *cmd)
{
    if (!cmd->queries || cmd->timed == 0)
        return VK_SUCCESS;
    VkResult r =
        vkGetQueryPoolResults(cmd->dev->device, cmd->queries, 0, cmd->timed + 1, (cmd->timed + 1) * sizeof *cmd->ticks,
                              cmd->ticks, sizeof *cmd->ticks, VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT);
    if (r != VK_SUCCESS)
        return r;
    unsigned bits = cmd->dev->caps.timestamp_valid_bits;
    uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    double ns_per_tick = cmd->dev->caps.timestamp_period;
    for (unsigned i = 0; i < cmd->timed; i++)
        cmd->timings[i].us = (double)((cmd->ticks[i + 1] - cmd->ticks[i]) & mask) * ns_per_tick * 1e-3;
    return VK_SUCCESS;
}

int gpu_cmd_wait(struct gpu_cmd *cmd)
{
    if (!cmd->pending)
        return GPU_OK;
    int st = gpu_queue_wait(cmd->queue, cmd->fence, "running a command buffer");
    if (st == GPU_ERR_TIMEOUT)
        return st; /* still pending: a later wait may succeed */
    cmd->pending = false;
    if (st)
        return st;
    VkResult r = read_timings(cmd);
    if (r != VK_SUCCESS)
        return gpu_device_fail_vk(cmd->dev, r, "reading timestamp queries");
    return GPU_OK;
}

int gpu_cmd_run(struct gpu_cmd *cmd)
{
    int st = gpu_cmd_submit(cmd);
    return st ? st : gpu_cmd_wait(cmd);
}

unsigned gpu_cmd_timed_count(const struct gpu_cmd *cmd)
{
    return cmd->timed;
}

void gpu_cmd_timings(const struct gpu_cmd *cmd, const struct gpu_timing **out, unsigned *count)
{
    *out = cmd->timings;
    *count = cmd->queries ? cmd->timed : 0;
}
