// y = act(x * (scale[c] + scale_add) + shift[c]) over x viewed as [outer][c][inner]: the stand-alone
// folded BatchNorm (scale per channel), and SE's second dispatch (scale = the gate per (n, c), with
// scale_add 1 when the block adds its input back). Scale and shift are fp32. The AFFINE_VEC4 twin
// handles four elements of one channel per invocation (inner, offsets and channel-view blocks
// multiples of 4, checked by the host). The arithmetic is in MFLOAT: fp16 in the f16a twins.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"

#include "workgroup.glsl"

#ifdef AFFINE_VEC4
#define XTYPE SFLOAT4
#define FTYPE MFLOAT4
#define TO_X(v) TO_S4(v)
#define VEC 4u
#else
#define XTYPE SFLOAT
#define FTYPE MFLOAT
#define TO_X(v) TO_S(v)
#define VEC 1u
#endif

layout(std430, binding = 0) readonly buffer X { XTYPE x[]; };
layout(std430, binding = 1) readonly buffer Scale { float scale[]; };
layout(std430, binding = 2) readonly buffer Shift { float shift[]; };
layout(std430, binding = 3) writeonly buffer Y { XTYPE y[]; };

layout(push_constant) uniform Push {
    uint n, c, inner, act;
    float alpha, beta, scale_add;
    uint has_shift, scale_outer_stride;  // scale index = outer * scale_outer_stride + c
    uint x_off, y_off, y_block, y_block_stride;
} p;

// n, offsets and blocks in units of VEC elements; inner in elements
void main()
{
    uint i = grid_item_id();
    if (i >= p.n)
        return;
    uint q = i * VEC / p.inner;
    uint ch = q % p.c, outer = q / p.c;
    FTYPE v = FTYPE(x[p.x_off + i]) * MFLOAT(scale[outer * p.scale_outer_stride + ch] + p.scale_add);
    if (p.has_shift != 0u)
        v += MFLOAT(shift[ch]);
    y[p.y_off + grid_out_index(i, p.y_block, p.y_block_stride)] =
        TO_X(p.act == ACT_NONE ? v : apply_act(v, p.act, p.alpha, p.beta));
}
