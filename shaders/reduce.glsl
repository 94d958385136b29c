// Workgroup-wide reductions for kernels that give one workgroup a row (softmax, layernorm, argmax,
// global pooling, SE's channel means). The *_sg twins define USE_SUBGROUP and reduce within each
// subgroup first, then across subgroups through a few shared slots; the others use a shared-memory
// tree. The workgroup size (constant_id 0) must be a power of two, at most 256. Every invocation
// of the workgroup must call these (they contain barriers).
#ifndef PPOCR_REDUCE_GLSL
#define PPOCR_REDUCE_GLSL

#include "workgroup.glsl"

#ifdef USE_SUBGROUP
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
// one slot per subgroup: 256 invocations / at least 4 lanes
shared float red_f[64];
shared uint red_u[64];
#else
shared float red_f[256];
shared uint red_u[256];
#endif

float wg_sum(float v)
{
#ifdef USE_SUBGROUP
    v = subgroupAdd(v);
    if (subgroupElect())
        red_f[gl_SubgroupID] = v;
    barrier();
    float t = 0.0;
    for (uint s = 0; s < gl_NumSubgroups; s++)
        t += red_f[s];
    barrier();
    return t;
#else
    uint l = gl_LocalInvocationID.x;
    red_f[l] = v;
    barrier();
    for (uint s = WG_SIZE / 2; s > 0; s >>= 1) {
        if (l < s)
            red_f[l] += red_f[l + s];
        barrier();
    }
    float t = red_f[0];
    barrier();
    return t;
#endif
}

float wg_max(float v)
{
#ifdef USE_SUBGROUP
    v = subgroupMax(v);
    if (subgroupElect())
        red_f[gl_SubgroupID] = v;
    barrier();
    float t = red_f[0];
    for (uint s = 1; s < gl_NumSubgroups; s++)
        t = max(t, red_f[s]);
    barrier();
    return t;
#else
    uint l = gl_LocalInvocationID.x;
    red_f[l] = v;
    barrier();
    for (uint s = WG_SIZE / 2; s > 0; s >>= 1) {
        if (l < s)
            red_f[l] = max(red_f[l], red_f[l + s]);
        barrier();
    }
    float t = red_f[0];
    barrier();
    return t;
#endif
}

// The smallest index among the invocations holding the maximum value (first maximum of a row
// when each invocation passes its own first maximum).
void wg_argmax(inout float v, inout uint idx)
{
    float m = wg_max(v);
    uint cand = v == m ? idx : 0xffffffffu;
#ifdef USE_SUBGROUP
    cand = subgroupMin(cand);
    if (subgroupElect())
        red_u[gl_SubgroupID] = cand;
    barrier();
    uint t = red_u[0];
    for (uint s = 1; s < gl_NumSubgroups; s++)
        t = min(t, red_u[s]);
    barrier();
#else
    uint l = gl_LocalInvocationID.x;
    red_u[l] = cand;
    barrier();
    for (uint s = WG_SIZE / 2; s > 0; s >>= 1) {
        if (l < s)
            red_u[l] = min(red_u[l], red_u[l + s]);
        barrier();
    }
    uint t = red_u[0];
    barrier();
#endif
    v = m;
    idx = t;
}

#endif
