// Index (int32) and value of the first maximum of each row of x viewed as [rows][c]: one workgroup
// per row, so that recognition reads back T indices and probabilities instead of T x 6625 floats.
// With SOFTMAX_VALUE, x holds logits and the value is the maximum's softmax probability,
// 1 / sum(exp(x - max)): the net's final softmax is never written out.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "grid.glsl"
#include "reduce.glsl"

#include "workgroup.glsl"

layout(constant_id = 1) const bool SOFTMAX_VALUE = false;

layout(std430, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer I { int index[]; };
layout(std430, binding = 2) writeonly buffer V { SFLOAT value[]; };

layout(push_constant) uniform Push {
    uint rows, c, x_off, i_off, v_off;
} p;

void main()
{
    uint row = grid_group_id();
    if (row >= p.rows)
        return;  // uniform across the workgroup
    uint base = p.x_off + row * p.c;
    float m = -3.402823466e38;
    uint mi = 0xffffffffu;
    // each invocation walks increasing indices, so a strict > keeps its first maximum
    for (uint k = gl_LocalInvocationID.x; k < p.c; k += WG_SIZE) {
        float v = float(x[base + k]);
        if (v > m || mi == 0xffffffffu) {
            m = v;
            mi = k;
        }
    }
    wg_argmax(m, mi);
    float v = m;
    if (SOFTMAX_VALUE) {
        float s = 0.0;
        for (uint k = gl_LocalInvocationID.x; k < p.c; k += WG_SIZE)
            s += exp(float(x[base + k]) - m);
        v = 1.0 / wg_sum(s);
    }
    if (gl_LocalInvocationID.x == 0u) {
        index[p.i_off + row] = int(mi);
        value[p.v_off + row] = TO_S(v);
    }
}
