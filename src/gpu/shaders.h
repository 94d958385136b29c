/* SPIR-V modules compiled from the shaders folder at build time and linked into the binary.
 * Constant data: any thread. */
#ifndef PPOCR_GPU_SHADERS_H
#define PPOCR_GPU_SHADERS_H

#include <stddef.h>

struct gpu_shader_blob {
    const char *name;          /* file name without .comp, e.g. "conv2d" */
    const unsigned char *code; /* SPIR-V words, 4-byte aligned */
    size_t size;               /* bytes */
};

extern const struct gpu_shader_blob gpu_shader_blobs[];
extern const unsigned gpu_shader_blob_count;

/* The embedded module called `name`, or NULL. */
const struct gpu_shader_blob *gpu_shader_find(const char *name);

#endif
