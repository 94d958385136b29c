// Multi-head self-attention on packed qkv [N][T][3C] -> y [N][T][C] (packing of ref_attention),
// head dim HD = C / heads (a specialisation constant: a model constant, so that the per-row
// arrays q and acc stay in registers with fully unrolled loops). One workgroup per (query block,
// head, n); each invocation owns one query row and runs an online softmax (running max and sum,
// fp32) over the keys, which the workgroup stages through shared memory TILE rows at a time.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"

#include "workgroup.glsl"
layout(constant_id = 1) const uint HD = 16;
#define TILE 32u

layout(std430, binding = 0) readonly buffer QKV { SFLOAT qkv[]; };
layout(std430, binding = 1) writeonly buffer Y { SFLOAT y[]; };

layout(push_constant) uniform Push {
    uint t, c, act;
    float scale, alpha, beta;
    uint x_off, y_off;
} p;

shared float ks[TILE * HD];
shared float vs[TILE * HD];

void main()
{
    uint head = gl_WorkGroupID.y, n = gl_WorkGroupID.z;
    uint i = gl_WorkGroupID.x * WG_SIZE + gl_LocalInvocationID.x;
    bool has_row = i < p.t;
    uint row3 = 3u * p.c;
    uint seq = p.x_off + n * p.t * row3;
    float q[HD], acc[HD];
    for (uint e = 0; e < HD; e++) {
        q[e] = has_row ? float(qkv[seq + i * row3 + head * HD + e]) * p.scale : 0.0;
        acc[e] = 0.0;
    }
    float m = -3.402823466e38, l = 0.0;
    for (uint j0 = 0; j0 < p.t; j0 += TILE) {
        uint rows = min(TILE, p.t - j0);
        barrier();
        for (uint k = gl_LocalInvocationID.x; k < rows * HD; k += WG_SIZE) {
            uint j = k / HD, e = k % HD;
            uint src = seq + (j0 + j) * row3 + head * HD + e;
            ks[j * HD + e] = float(qkv[src + p.c]);
            vs[j * HD + e] = float(qkv[src + 2u * p.c]);
        }
        barrier();
        if (!has_row)
            continue;
        for (uint j = 0; j < rows; j++) {
            float s = 0.0;
            for (uint e = 0; e < HD; e++)
                s += q[e] * ks[j * HD + e];
            float mn = max(m, s);
            float corr = exp(m - mn), w = exp(s - mn);
            l = l * corr + w;
            for (uint e = 0; e < HD; e++)
                acc[e] = acc[e] * corr + w * vs[j * HD + e];
            m = mn;
        }
    }
    if (!has_row)
        return;
    float inv = 1.0 / l;
    uint dst = p.y_off + (n * p.t + i) * p.c + head * HD;
    for (uint e = 0; e < HD; e++)
        y[dst + e] = TO_S(apply_act(acc[e] * inv, p.act, p.alpha, p.beta));
}
