#include "gpu/shaders.h"

const struct gpu_shader_blob *gpu_shader_get(enum gpu_shader_id id)
{
    if ((unsigned)id >= GPU_SHADER_COUNT || !gpu_shader_blobs[id].code)
        return NULL;
    return &gpu_shader_blobs[id];
}

const char *gpu_shader_name(enum gpu_shader_id id)
{
    const struct gpu_shader_blob *blob = gpu_shader_get(id);
    return blob ? blob->name : "(none)";
}
