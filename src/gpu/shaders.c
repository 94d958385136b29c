#include "gpu/shaders.h"

#include <string.h>

const struct gpu_shader_blob *gpu_shader_find(const char *name)
{
    for (unsigned i = 0; i < gpu_shader_blob_count; i++)
        if (strcmp(gpu_shader_blobs[i].name, name) == 0)
            return &gpu_shader_blobs[i];
    return NULL;
}
