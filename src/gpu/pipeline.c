#include "gpu/pipeline.h"
#include "gpu/internal.h"
#include "gpu/shaders.h"

#include <stdlib.h>
#include <string.h>

bool gpu_pipeline_is_variant(const struct gpu_pipeline *p, const struct gpu_pipeline_desc *d)
{
    return p->shader_id == d->shader && p->spec_count == d->spec_count && p->buffer_count == d->buffer_count &&
           p->push_bytes == d->push_bytes && p->subgroup_size == d->subgroup_size && p->texel_mask == d->texel_mask &&
           (d->spec_count == 0 || memcmp(p->spec, d->spec, d->spec_count * sizeof *d->spec) == 0);
}

static void pipeline_destroy(VkDevice dev, struct gpu_pipeline *p)
{
    if (p->pipeline)
        vkDestroyPipeline(dev, p->pipeline, NULL);
    if (p->layout)
        vkDestroyPipelineLayout(dev, p->layout, NULL);
    if (p->set_layout)
        vkDestroyDescriptorSetLayout(dev, p->set_layout, NULL);
    free(p);
}

static int check_desc(const struct gpu_caps *caps, const struct gpu_pipeline_desc *d)
{
    const char *name = gpu_shader_name(d->shader);
    if (!gpu_shader_get(d->shader))
        return gpu_fail(GPU_ERR, "building pipeline %s: no embedded shader with id %d", name, (int)d->shader);
    if (d->spec_count > GPU_MAX_SPEC_CONSTANTS || (d->spec_count && !d->spec))
        return gpu_fail(GPU_ERR, "building pipeline %s: %u specialization constants (at most %d)", name, d->spec_count,
                        GPU_MAX_SPEC_CONSTANTS);
    if (d->buffer_count > GPU_MAX_BUFFERS)
        return gpu_fail(GPU_ERR, "building pipeline %s: %u buffers (at most %d)", name, d->buffer_count,
                        GPU_MAX_BUFFERS);
    if (d->texel_mask >> d->buffer_count)
        return gpu_fail(GPU_ERR, "building pipeline %s: texel buffer past its %u bindings", name, d->buffer_count);
    if (d->push_bytes % 4 || d->push_bytes > caps->max_push_constants)
        return gpu_fail(GPU_ERR,
                        "building pipeline %s: %u push-constant bytes (a multiple of 4, "
                        "at most %u)",
                        name, d->push_bytes, caps->max_push_constants);
    if (d->subgroup_size && (!caps->subgroup_size_control || d->subgroup_size < caps->min_subgroup_size ||
                             d->subgroup_size > caps->max_subgroup_size))
        return gpu_fail(GPU_ERR, "building pipeline %s: subgroup size %u is not available", name, d->subgroup_size);
    return GPU_OK;
}

static int build(struct gpu_device *gd, VkPipelineCache cache, const struct gpu_pipeline_desc *d,
                 struct gpu_pipeline *p)
{
    VkDevice dev = gd->device;
    char doing[160];
    const struct gpu_shader_blob *blob = gpu_shader_get(d->shader);
    if (!blob)
        return gpu_fail(GPU_ERR, "building pipeline %s: no embedded shader with id %d", gpu_shader_name(d->shader),
                        (int)d->shader);

    VkDescriptorSetLayoutBinding bindings[GPU_MAX_BUFFERS];
    for (unsigned i = 0; i < d->buffer_count; i++)
        bindings[i] = (VkDescriptorSetLayoutBinding){.binding = i,
                                                     .descriptorType = d->texel_mask >> i & 1u
                                                                           ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER
                                                                           : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER,
                                                     .descriptorCount = 1,
                                                     .stageFlags = VK_SHADER_STAGE_COMPUTE_BIT};
    p->push_descriptors = gd->push_descriptor_set != NULL;
    VkDescriptorSetLayoutCreateInfo sli = {
        .sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
        .flags = p->push_descriptors ? VK_DESCRIPTOR_SET_LAYOUT_CREATE_PUSH_DESCRIPTOR_BIT_KHR : 0,
        .bindingCount = d->buffer_count,
        .pBindings = bindings};
    VkResult r = vkCreateDescriptorSetLayout(dev, &sli, NULL, &p->set_layout);
    if (r != VK_SUCCESS) {
        p->set_layout = VK_NULL_HANDLE;
        snprintf(doing, sizeof doing, "building pipeline %s: descriptor set layout", gpu_shader_name(d->shader));
        return gpu_device_fail_vk(gd, r, doing);
    }
    VkPushConstantRange push = {.stageFlags = VK_SHADER_STAGE_COMPUTE_BIT, .size = d->push_bytes};
    VkPipelineLayoutCreateInfo li = {.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
                                     .setLayoutCount = 1,
                                     .pSetLayouts = &p->set_layout,
                                     .pushConstantRangeCount = d->push_bytes ? 1 : 0,
                                     .pPushConstantRanges = &push};
    r = vkCreatePipelineLayout(dev, &li, NULL, &p->layout);
    if (r != VK_SUCCESS) {
        p->layout = VK_NULL_HANDLE;
        snprintf(doing, sizeof doing, "building pipeline %s: pipeline layout", gpu_shader_name(d->shader));
        return gpu_device_fail_vk(gd, r, doing);
    }

    VkShaderModuleCreateInfo mi = {.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
                                   .codeSize = blob->size,
                                   .pCode = (const uint32_t *)blob->code};
    VkShaderModule module;
    r = vkCreateShaderModule(dev, &mi, NULL, &module);
    if (r != VK_SUCCESS) {
        snprintf(doing, sizeof doing, "building pipeline %s: shader module", gpu_shader_name(d->shader));
        return gpu_device_fail_vk(gd, r, doing);
    }
    VkSpecializationMapEntry entries[GPU_MAX_SPEC_CONSTANTS];
    for (unsigned i = 0; i < d->spec_count; i++)
        entries[i] = (VkSpecializationMapEntry){.constantID = i, .offset = 4 * i, .size = 4};
    VkSpecializationInfo spec = {
        .mapEntryCount = d->spec_count, .pMapEntries = entries, .dataSize = 4 * d->spec_count, .pData = d->spec};
    VkPipelineShaderStageRequiredSubgroupSizeCreateInfo subgroup = {
        .sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO,
        .requiredSubgroupSize = d->subgroup_size};
    VkComputePipelineCreateInfo ci = {.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
                                      .stage = {.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
                                                .pNext = d->subgroup_size ? &subgroup : NULL,
                                                .stage = VK_SHADER_STAGE_COMPUTE_BIT,
                                                .module = module,
                                                .pName = "main",
                                                .pSpecializationInfo = d->spec_count ? &spec : NULL},
                                      .layout = p->layout};
    r = vkCreateComputePipelines(dev, cache, 1, &ci, NULL, &p->pipeline);
    vkDestroyShaderModule(dev, module, NULL);
    if (r != VK_SUCCESS) {
        p->pipeline = VK_NULL_HANDLE;
        snprintf(doing, sizeof doing, "building pipeline %s: vkCreateComputePipelines", gpu_shader_name(d->shader));
        return gpu_device_fail_vk(gd, r, doing);
    }
    return GPU_OK;
}

static struct gpu_pipeline *find_locked(const struct gpu_pipeline_table *t, const struct gpu_pipeline_desc *d)
{
    for (unsigned i = 0; i < t->count; i++)
        if (gpu_pipeline_is_variant(t->list[i], d))
            return t->list[i];
    return NULL;
}

void gpu_pipeline_table_init(struct gpu_pipeline_table *t, struct gpu_device *dev, VkPipelineCache cache)
{
    *t = (struct gpu_pipeline_table){.dev = dev, .cache = cache};
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->built, NULL);
}

static void remove_locked(struct gpu_pipeline_table *t, const struct gpu_pipeline *p)
{
    for (unsigned i = 0; i < t->count; i++)
        if (t->list[i] == p) {
            t->list[i] = t->list[--t->count];
            return;
        }
}

/* A variant is listed before it is built, and built outside the lock, so that nets created on
 * several threads (and the variants built ahead, pipeline_variants.c) compile side by side (the
 * pipeline cache synchronises itself) while a second thread asking for a variant being built
 * waits for it rather than building it twice. */
int gpu_pipeline_table_find_or_build(struct gpu_pipeline_table *t, const struct gpu_pipeline_desc *d, bool use,
                                     const struct gpu_pipeline **out)
{
    *out = NULL;
    int st = check_desc(&t->dev->caps, d);
    if (st)
        return st;
    pthread_mutex_lock(&t->lock);
    struct gpu_pipeline *p;
    while ((p = find_locked(t, d)) && !p->ready)
        pthread_cond_wait(&t->built, &t->lock);
    if (p) {
        p->used |= use;
        pthread_mutex_unlock(&t->lock);
        *out = p;
        return GPU_OK;
    }
    if (t->count == t->capacity) {
        unsigned cap = t->capacity ? 2 * t->capacity : 32;
        struct gpu_pipeline **list = realloc(t->list, cap * sizeof *list);
        if (!list) {
            pthread_mutex_unlock(&t->lock);
            return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "building pipeline %s: out of memory", gpu_shader_name(d->shader));
        }
        t->list = list;
        t->capacity = cap;
    }
    p = calloc(1, sizeof *p);
    if (!p) {
        pthread_mutex_unlock(&t->lock);
        return gpu_fail(GPU_ERR_OUT_OF_MEMORY, "building pipeline %s: out of memory", gpu_shader_name(d->shader));
    }
    p->shader_id = d->shader;
    snprintf(p->shader, sizeof p->shader, "%s", gpu_shader_name(d->shader));
    if (d->spec_count)
        memcpy(p->spec, d->spec, d->spec_count * sizeof *d->spec);
    p->spec_count = d->spec_count;
    p->buffer_count = d->buffer_count;
    p->push_bytes = d->push_bytes;
    p->subgroup_size = d->subgroup_size;
    p->texel_mask = d->texel_mask;
    t->list[t->count++] = p;
    pthread_mutex_unlock(&t->lock);

    st = build(t->dev, t->cache, d, p);

    pthread_mutex_lock(&t->lock);
    if (st)
        remove_locked(t, p); /* a thread waiting for it builds it itself, and says why it fails */
    else
        p->ready = true, p->used = use;
    pthread_cond_broadcast(&t->built);
    pthread_mutex_unlock(&t->lock);
    if (st) {
        pipeline_destroy(t->dev->device, p);
        return st;
    }
    *out = p;
    return GPU_OK;
}

int gpu_pipeline_table_get(struct gpu_pipeline_table *t, const struct gpu_pipeline_desc *d,
                           const struct gpu_pipeline **out)
{
    return gpu_pipeline_table_find_or_build(t, d, true, out);
}

const char *gpu_pipeline_shader(const struct gpu_pipeline *p)
{
    return p->shader;
}

unsigned gpu_pipeline_table_count(struct gpu_pipeline_table *t)
{
    pthread_mutex_lock(&t->lock);
    unsigned n = 0;
    for (unsigned i = 0; i < t->count; i++)
        n += t->list[i]->ready;
    pthread_mutex_unlock(&t->lock);
    return n;
}

void gpu_pipeline_table_destroy(struct gpu_pipeline_table *t)
{
    if (!t->dev)
        return; /* never initialised */
    for (unsigned i = 0; i < t->count; i++)
        pipeline_destroy(t->dev->device, t->list[i]);
    free(t->list);
    t->list = NULL;
    t->count = t->capacity = 0;
    pthread_cond_destroy(&t->built);
    pthread_mutex_destroy(&t->lock);
    t->dev = NULL;
}
