/* SPIR-V modules compiled from the shaders folder at build time and linked into the binary, one
 * per shaders/<name>.comp and per row of shaders/variants.cmake, named in code by their ids
 * (GPU_SHADER_<name>, generated).
 * Constant data: any thread. */
#ifndef PPOCR_GPU_SHADERS_H
#define PPOCR_GPU_SHADERS_H

#include <stddef.h>
#include <stdint.h>

#include "gpu/shader_ids.h"

struct gpu_shader_blob {
    const char *name;          /* file name without .comp, e.g. "conv2d" */
    const unsigned char *code; /* SPIR-V words, 4-byte aligned */
    size_t size;               /* bytes */
    uint64_t checksum;         /* the first 64 bits of the module's SHA-256: the same SPIR-V or not */
};

extern const struct gpu_shader_blob gpu_shader_blobs[GPU_SHADER_COUNT];

/* The embedded module `id`, or NULL for GPU_SHADER_NONE and ids out of range. */
const struct gpu_shader_blob *gpu_shader_get(enum gpu_shader_id id);
/* Its name (for messages and profiles): "conv2d"; "(none)" where gpu_shader_get gives NULL. */
const char *gpu_shader_name(enum gpu_shader_id id);

#endif
