/* Compute pipelines built from the embedded SPIR-V, specialised with uint32 constants, laid out
 * as N buffers (set 0, bindings 0..N-1: storage buffers, or uniform texel buffers of RGBA32F
 * texels where texel_mask says) plus one push-constant range. The context keeps
 * every variant it built, so asking twice for the same (shader, constants, layout) is a lookup,
 * and all of them go into one VkPipelineCache saved on disk between runs.
 *
 * Threads: every call here may run on several threads at once. The table's lock guards the list
 * of pipelines (nothing else is taken under it); pipelines are built outside it, and Vulkan
 * synchronises the VkPipelineCache itself. A pipeline, once returned, never changes. */
#ifndef PPOCR_GPU_PIPELINE_H
#define PPOCR_GPU_PIPELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/shader_ids.h"

struct gpu_context;
struct gpu_pipeline;

#define GPU_MAX_SPEC_CONSTANTS 32
#define GPU_MAX_BUFFERS 16

struct gpu_pipeline_desc {
    enum gpu_shader_id shader; /* embedded module GPU_SHADER_<name> (shaders/<name>.comp or variants.cmake) */
    const uint32_t *spec;      /* values of constant_id 0..spec_count-1 (floats: bit patterns) */
    unsigned spec_count;
    unsigned buffer_count;  /* buffers the shader declares (storage or, by texel_mask, texel) */
    unsigned push_bytes;    /* size of its push-constant block, multiple of 4; 0 if none */
    uint32_t subgroup_size; /* 0: driver's choice; else required (caps.subgroup_size_control) */
    /* Bindings (bit i: binding i) read as uniform texel buffers of RGBA32F texels, a vec4 per
     * texelFetch: lavapipe gathers those for all SIMD lanes at once, where it loads a storage
     * buffer one lane at a time. The binding's range is viewed in whole texels (its size rounded
     * up to 16 bytes, inside the pool's allocation) and must hold at most
     * caps.max_texel_buffer_elements of them. */
    uint32_t texel_mask;
};

/* The pipeline for `desc`, built on first use; owned by the context. */
int gpu_pipeline_get(struct gpu_context *ctx, const struct gpu_pipeline_desc *desc, const struct gpu_pipeline **out);

const char *gpu_pipeline_shader(const struct gpu_pipeline *p);

/* How many distinct pipelines the context has built. */
unsigned gpu_pipeline_count(const struct gpu_context *ctx);

/* Waits until the variants the last run used (gpu_options.prebuild) are built ahead. */
void gpu_pipeline_prebuild_wait(struct gpu_context *ctx);

struct gpu_pipeline_cache_info {
    const char *path;    /* the cache file, "" when the disk cache is off */
    bool loaded;         /* a valid file for this device, driver and program was read */
    size_t loaded_bytes; /* driver data in it */
};
void gpu_pipeline_cache_info(const struct gpu_context *ctx, struct gpu_pipeline_cache_info *out);

#endif
