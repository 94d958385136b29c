// y = act(a (op) b) with numpy broadcasting, or y = act(a) (OP_COPY: the unary op). The host
// collapses the shapes to at most 6 dims and passes each input's element strides per output dim
// (0 where it broadcasts); the output is dense or a channel slice of a wider tensor. The arithmetic
// is in MFLOAT: fp16 in the f16a twin.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"

#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer A { SFLOAT a[]; };
layout(std430, binding = 1) readonly buffer B { SFLOAT b[]; };
layout(std430, binding = 2) writeonly buffer Y { SFLOAT y[]; };

layout(push_constant) uniform Push {
    uint n, ndim, op, act;
    float alpha, beta;
    uint a_off, b_off, y_off, y_block, y_block_stride;
    uint dims[6];
    uint as[6];
    uint bs[6];
} p;

#define OP_ADD 0u
#define OP_SUB 1u
#define OP_MUL 2u
#define OP_DIV 3u
#define OP_COPY 4u

void main()
{
    uint i = grid_item_id();
    if (i >= p.n)
        return;
    uint rest = i, ai = p.a_off, bi = p.b_off;
    // the outermost dim needs no division: what is left of i is its coordinate
    for (int d = int(p.ndim) - 1; d > 0; d--) {
        uint c = rest % p.dims[d];
        rest /= p.dims[d];
        ai += c * p.as[d];
        bi += c * p.bs[d];
    }
    ai += rest * p.as[0];
    bi += rest * p.bs[0];
    MFLOAT x = MFLOAT(a[ai]);
    MFLOAT v;
    switch (p.op) {
    case OP_ADD: v = x + MFLOAT(b[bi]); break;
    case OP_SUB: v = x - MFLOAT(b[bi]); break;
    case OP_MUL: v = x * MFLOAT(b[bi]); break;
    case OP_DIV: v = x / MFLOAT(b[bi]); break;
    default: v = x; break;
    }
    y[p.y_off + grid_out_index(i, p.y_block, p.y_block_stride)] = TO_S(apply_act(v, p.act, p.alpha, p.beta));
}
