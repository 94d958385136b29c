// binary.glsl's common case four elements at a time: a and y dense and contiguous, b contiguous,
// a scalar (b_scalar) or absent (OP_COPY), element count and offsets multiples of 4 (the host
// checks), so every access is one 16-byte (fp32) or 8-byte (fp16) load or store. The arithmetic
// is in MFLOAT4: fp16 in the f16a twin.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"

layout(std430, binding = 0) readonly buffer A { SFLOAT4 a[]; };
layout(std430, binding = 1) readonly buffer B { SFLOAT b[]; };
layout(std430, binding = 2) writeonly buffer Y { SFLOAT4 y[]; };

layout(push_constant) uniform Push {
    uint n4, op, act, b_scalar;
    float alpha, beta;
    uint a_off4, b_off, y_off4;
} p;

#define OP_ADD 0u
#define OP_SUB 1u
#define OP_MUL 2u
#define OP_DIV 3u

void main()
{
    uint i = grid_item_id();
    if (i >= p.n4)
        return;
    MFLOAT4 x = MFLOAT4(a[p.a_off4 + i]);
    if (p.op <= OP_DIV) {
        MFLOAT4 q;
        if (p.b_scalar != 0u) {
            q = MFLOAT4(float(b[p.b_off]));
        } else {
            uint j = p.b_off + 4u * i;
            q = MFLOAT4(vec4(float(b[j]), float(b[j + 1u]), float(b[j + 2u]), float(b[j + 3u])));
        }
        switch (p.op) {
        case OP_ADD: x += q; break;
        case OP_SUB: x -= q; break;
        case OP_MUL: x *= q; break;
        default: x /= q; break;
        }
    }
    y[p.y_off4 + i] = TO_S4(p.act == ACT_NONE ? x : apply_act(x, p.act, p.alpha, p.beta));
}
