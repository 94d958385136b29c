// Linear work-item ids for 1-D jobs whose grid wraps from x onto y (see nnh_grid_1d): Vulkan
// only guarantees 65535 workgroups per axis.
#ifndef PPOCR_GRID_GLSL
#define PPOCR_GRID_GLSL

#include "workgroup.glsl"

uint grid_group_id()
{
    return gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
}

uint grid_item_id()
{
    return grid_group_id() * WG_SIZE + gl_LocalInvocationID.x;
}

// Element i of a dense result written into a channel slice of a wider tensor (dst_channels).
// Dense outputs (block == block_stride) skip the division: integer division is slow on CPUs
// (lavapipe) and not free on GPUs.
uint grid_out_index(uint i, uint block, uint block_stride)
{
    if (block == block_stride)
        return i;
    return (i / block) * block_stride + i % block;
}

#endif
