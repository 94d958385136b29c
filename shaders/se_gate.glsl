// Squeeze-and-excitation gate g[n][c] = gate_act(W2 relu(W1 mean_hw(x) + b1) + b2), fp32, in two
// dispatches that each spread over many workgroups:
//   SE_MEAN  one workgroup per (image, CPW channels) for small planes, WG_SIZE / CPW invocations
//            summing each channel's contiguous plane through shared memory; large planes (CPW 1)
//            in `parts` slices of `part_len` values, a workgroup each, so that a few channels of a
//            large map still fill the GPU. It writes sums [N][C][parts], not means.
//   SE_FC    one workgroup per (image, ROWS gate rows): the image's means (its partial sums added
//            in a fixed order, so results do not depend on scheduling) staged in shared memory,
//            the whole hidden layer computed again in every workgroup (CR x C multiply-adds,
//            cheap next to a pass over x), then its ROWS gate rows. Groups of LANES invocations
//            share each dot product so the weight rows are read contiguously.
// The shared-memory reductions need no subgroup support, so one kernel serves every device.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "workgroup.glsl"

shared float red[WG_SIZE];

// Sums red[] over aligned groups of `width` invocations (a power of two): the group's first
// invocation ends with the total. Every invocation must call it.
void group_sum(uint l, uint width)
{
    barrier();
    for (uint s = width / 2u; s > 0u; s >>= 1) {
        if (l % width < s)
            red[l] += red[l + s];
        barrier();
    }
}

#ifdef SE_MEAN
layout(constant_id = 1) const uint CPW = 8; // channels per workgroup, a power of two

layout(std430, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Sums { float sums[]; }; // [N][C][parts]

layout(push_constant) uniform Push {
    uint c, plane, x_off, parts, part_len; // parts > 1 only with CPW 1
} p;

void main()
{
    const uint l = gl_LocalInvocationID.x, tpc = WG_SIZE / CPW;
    const uint n = gl_WorkGroupID.y, lane = l % tpc;
    const uint ch = (gl_WorkGroupID.x / p.parts) * CPW + l / tpc, part = gl_WorkGroupID.x % p.parts;
    const uint begin = part * p.part_len, end = min(p.plane, begin + p.part_len);
    float s = 0.0;
    if (ch < p.c) {
        const uint base = p.x_off + (n * p.c + ch) * p.plane;
        for (uint k = begin + lane; k < end; k += tpc)
            s += float(x[base + k]);
    }
    red[l] = s;
    group_sum(l, tpc);
    if (lane == 0u && ch < p.c)
        sums[(n * p.c + ch) * p.parts + part] = red[l];
}

#else // SE_FC
#extension GL_EXT_control_flow_attributes : require
layout(constant_id = 1) const uint CR = 16;   // reduced channels (a model constant)
layout(constant_id = 2) const uint C = 64;    // channels (a model constant)
layout(constant_id = 3) const uint ROWS = 32; // gate rows per workgroup; ROWS * LANES = WG_SIZE
const uint LANES = WG_SIZE / ROWS;
// The weight buffer's sections, each from a multiple of 4 floats, so that rows whose length is a
// multiple of 4 load as 4-vectors: a dot product then issues a quarter of the loads, all at once
// (one after another, C = 384 was slow: BENCHMARKS.md).
const uint B1_AT = (CR * C + 3u) & ~3u;
const uint W2_AT = (B1_AT + CR + 3u) & ~3u;
const uint B2_AT = W2_AT + C * CR;
const bool C_VEC4 = C % 4u == 0u;
const bool CR_VEC4 = CR % 4u == 0u;

layout(std430, binding = 0) readonly buffer W { float w[]; };   // W1 [CR][C], b1 [CR], W2 [C][CR], b2 [C]
layout(std430, binding = 0) readonly buffer W4 { vec4 w4[]; };
layout(std430, binding = 1) readonly buffer Sums { float sums[]; }; // [N][C][parts]
layout(std430, binding = 2) writeonly buffer Gate { float gate[]; }; // [N][C]

layout(push_constant) uniform Push {
    uint gate_act;
    float gate_alpha, gate_beta;
    uint parts, plane;
} p;

// The means ([0, C)) and the hidden layer ([C, C + CR)).
shared float vals[C + CR];
const uint HID = C;

// The weight row of `len` terms from `at` dotted with vals[v0 ..], each lane of a group taking
// every LANES-th element (4-vector, where rows are) of it.
float row_dot(uint at, uint v0, uint len, bool rows_vec4, uint lane)
{
    float z = 0.0;
    if (rows_vec4) {
        [[unroll]] for (uint q = lane; q < len / 4u; q += LANES) {
            const uint v = v0 + 4u * q;
            z += dot(w4[at / 4u + q], vec4(vals[v], vals[v + 1u], vals[v + 2u], vals[v + 3u]));
        }
    } else {
        [[unroll]] for (uint k = lane; k < len; k += LANES)
            z += w[at + k] * vals[v0 + k];
    }
    return z;
}

void main()
{
    const uint l = gl_LocalInvocationID.x, n = gl_WorkGroupID.y;
    const uint row = l / LANES, lane = l % LANES;
    for (uint k = l; k < C; k += WG_SIZE) {
        float s = 0.0;
        for (uint q = 0; q < p.parts; q++)
            s += sums[(n * C + k) * p.parts + q];
        vals[k] = s / float(p.plane);
    }
    barrier();
    for (uint r0 = 0; r0 < CR; r0 += ROWS) {
        const uint r = r0 + row;
        red[l] = r < CR ? row_dot(r * C, 0u, C, C_VEC4, lane) : 0.0;
        group_sum(l, LANES);
        if (lane == 0u && r < CR)
            vals[HID + r] = max(red[l] + w[B1_AT + r], 0.0);
    }
    barrier();
    const uint k = gl_WorkGroupID.x * ROWS + row;
    red[l] = k < C ? row_dot(W2_AT + k * CR, HID, CR, CR_VEC4, lane) : 0.0;
    group_sum(l, LANES);
    if (lane == 0u && k < C)
        gate[n * C + k] = apply_act(red[l] + w[B2_AT + k], p.gate_act, p.gate_alpha, p.gate_beta);
}
#endif
