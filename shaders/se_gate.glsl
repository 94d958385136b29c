// Squeeze-and-excitation, first dispatch: the gate g[n][c] = gate_act(W2 relu(W1 mean_hw(x) + b1) + b2)
// in fp32. One workgroup per (c, n) reduces its plane to a mean; the last workgroup of each n to
// finish (an atomic counter, reset again for the next replay) runs the two small FC layers, so the
// whole gate is one dispatch that still spreads the reading of x over all channels.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "reduce.glsl"

#include "workgroup.glsl"
layout(constant_id = 1) const uint CR = 16;  // reduced channels (a model constant)

layout(std430, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };  // W1 [CR][C], b1 [CR], W2 [C][CR], b2 [C]
layout(std430, binding = 2) coherent buffer Means { float means[]; };  // [N][C]
layout(std430, binding = 3) coherent buffer Counter { uint counter[]; };  // [N]
layout(std430, binding = 4) writeonly buffer Gate { float gate[]; };  // [N][C]

layout(push_constant) uniform Push {
    uint c, plane, gate_act;
    float gate_alpha, gate_beta;
    uint x_off;
} p;

shared float hid[CR];
shared bool last;

void main()
{
    uint ch = gl_WorkGroupID.x, n = gl_WorkGroupID.y, l = gl_LocalInvocationID.x;
    uint base = p.x_off + (n * p.c + ch) * p.plane;
    // four independent partial sums keep several loads in flight per invocation
    float s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0;
    uint k = l;
    for (; k + 3u * WG_SIZE < p.plane; k += 4u * WG_SIZE) {
        s0 += float(x[base + k]);
        s1 += float(x[base + k + WG_SIZE]);
        s2 += float(x[base + k + 2u * WG_SIZE]);
        s3 += float(x[base + k + 3u * WG_SIZE]);
    }
    for (; k < p.plane; k += WG_SIZE)
        s0 += float(x[base + k]);
    float s = wg_sum((s0 + s1) + (s2 + s3));
    if (l == 0u) {
        means[n * p.c + ch] = s / float(p.plane);
        memoryBarrierBuffer();
        last = atomicAdd(counter[n], 1u) == p.c - 1u;
    }
    barrier();
    if (!last)
        return;
    memoryBarrierBuffer();
    uint w2 = CR * p.c + CR, b2 = w2 + p.c * CR;
    for (uint r = l; r < CR; r += WG_SIZE) {
        float z = w[CR * p.c + r];
        for (uint k = 0; k < p.c; k++)
            z += w[r * p.c + k] * means[n * p.c + k];
        hid[r] = max(z, 0.0);
    }
    barrier();
    for (uint k = l; k < p.c; k += WG_SIZE) {
        float z = w[b2 + k];
        for (uint r = 0; r < CR; r++)
            z += w[w2 + k * CR + r] * hid[r];
        gate[n * p.c + k] = apply_act(z, p.gate_act, p.gate_alpha, p.gate_beta);
    }
    if (l == 0u)
        counter[n] = 0u;
}
