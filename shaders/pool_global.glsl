// Global average pooling, fp32 accumulation: one workgroup per (n, c) plane, or with POOL_SERIAL
// (CPU devices) one invocation per plane, without the shared memory and barriers of a workgroup
// reduction (lavapipe runs a barrier as a coroutine switch).
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"
#include "reduce.glsl"

#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Y { SFLOAT y[]; };

layout(push_constant) uniform Push {
    uint planes, plane_size, act;
    float alpha, beta;
    uint x_off, y_off, y_block, y_block_stride;
} p;

#ifdef POOL_SERIAL
void main()
{
    uint plane = grid_item_id();
    if (plane >= p.planes)
        return;
    uint base = p.x_off + plane * p.plane_size;
    float s = 0.0;
    for (uint k = 0; k < p.plane_size; k++)
        s += float(x[base + k]);
    y[p.y_off + grid_out_index(plane, p.y_block, p.y_block_stride)] =
        TO_S(apply_act(s / float(p.plane_size), p.act, p.alpha, p.beta));
}
#else
void main()
{
    uint plane = grid_group_id();
    if (plane >= p.planes)
        return;  // uniform across the workgroup
    uint base = p.x_off + plane * p.plane_size;
    float s = 0.0;
    for (uint k = gl_LocalInvocationID.x; k < p.plane_size; k += WG_SIZE)
        s += float(x[base + k]);
    s = wg_sum(s);
    if (gl_LocalInvocationID.x == 0u)
        y[p.y_off + grid_out_index(plane, p.y_block, p.y_block_stride)] =
            TO_S(apply_act(s / float(p.plane_size), p.act, p.alpha, p.beta));
}
#endif
