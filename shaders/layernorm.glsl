// Layer normalisation over the last axis: one workgroup per row, two fp32 passes (mean, then the
// mean squared deviation) as the reference computes the population variance.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"
#include "reduce.glsl"

#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(std430, binding = 1) readonly buffer Gamma { float gamma[]; };
layout(std430, binding = 2) readonly buffer Beta { float beta_[]; };
layout(std430, binding = 3) writeonly buffer Y { SFLOAT y[]; };

layout(push_constant) uniform Push {
    uint rows, c, has_affine, act;
    float alpha, beta, eps;
    uint x_off, y_off;
} p;

void main()
{
    uint row = grid_group_id();
    if (row >= p.rows)
        return;  // uniform across the workgroup
    uint base = p.x_off + row * p.c;
    uint l = gl_LocalInvocationID.x, step = WG_SIZE;
    float s = 0.0;
    for (uint k = l; k < p.c; k += step)
        s += float(x[base + k]);
    float mean = wg_sum(s) / float(p.c);
    float q = 0.0;
    for (uint k = l; k < p.c; k += step) {
        float d = float(x[base + k]) - mean;
        q += d * d;
    }
    float rstd = inversesqrt(wg_sum(q) / float(p.c) + p.eps);
    for (uint k = l; k < p.c; k += step) {
        float v = (float(x[base + k]) - mean) * rstd;
        if (p.has_affine != 0u)
            v = v * gamma[k] + beta_[k];
        y[p.y_off + row * p.c + k] = TO_S(apply_act(v, p.act, p.alpha, p.beta));
    }
}
