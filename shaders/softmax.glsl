// Softmax over the middle axis of x viewed as [outer][len][inner]: one workgroup per
// (outer, inner) row, fp32 max / sum reductions (the rec head's 6625 classes, attention rows).
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"
#include "reduce.glsl"

#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Y { SFLOAT y[]; };

layout(push_constant) uniform Push {
    uint rows, len, inner, act;
    float alpha, beta;
    uint x_off, y_off;
} p;

void main()
{
    uint row = grid_group_id();
    if (row >= p.rows)
        return;  // uniform across the workgroup
    uint base = (row / p.inner) * p.len * p.inner + row % p.inner;
    uint l = gl_LocalInvocationID.x, step = WG_SIZE;
    float m = -3.402823466e38;
    for (uint k = l; k < p.len; k += step)
        m = max(m, float(x[p.x_off + base + k * p.inner]));
    m = wg_max(m);
    float s = 0.0;
    for (uint k = l; k < p.len; k += step)
        s += exp(float(x[p.x_off + base + k * p.inner]) - m);
    float inv = 1.0 / wg_sum(s);
    for (uint k = l; k < p.len; k += step) {
        float v = exp(float(x[p.x_off + base + k * p.inner]) - m) * inv;
        y[p.y_off + base + k * p.inner] = TO_S(apply_act(v, p.act, p.alpha, p.beta));
    }
}
