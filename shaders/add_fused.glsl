// y = act(a' + b') over NCHW maps of the output's shape, where the net fused into the add what
// produced its operands (det's FPN: out = SE(x) + upsample(top)):
//   a gated operand is an SE's input x, scaled per (image, channel) by gate[n][c] + residual
//     (the SE's apply step, which then writes nothing);
//   an upsampled operand is a nearest RESIZE's input, a map smaller by integer factors, read at
//     (h / fh, w / fw) (the resize, which then writes nothing).
// Each invocation takes 4 neighbouring outputs of a row, so the index arithmetic is shared. The
// output may be a channel slice of a wider tensor. Arithmetic in fp32.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"

#define OPERAND_NONE 0u
#define OPERAND_A 1u
#define OPERAND_B 2u

layout(constant_id = 1) const uint GATED = OPERAND_NONE;
layout(constant_id = 2) const uint UPSAMPLED = OPERAND_NONE;
layout(constant_id = 3) const uint ACT = ACT_NONE;
layout(constant_id = 4) const float ALPHA = 0.0;
layout(constant_id = 5) const float BETA = 0.0;

layout(std430, binding = 0) readonly buffer A { SFLOAT a[]; };
layout(std430, binding = 1) readonly buffer B { SFLOAT b[]; };
layout(std430, binding = 2) writeonly buffer Y { SFLOAT y[]; };
layout(std430, binding = 3) readonly buffer Gate { float gate[]; }; // [N][C]

layout(push_constant) uniform Push {
    uint rows, h, w, w4;       // rows = N C H of the output; w4 = ceil(w / 4)
    uint a_off, b_off, y_off;
    uint fh, fw, src_h, src_w; // the upsampled operand: factors and its plane
    float residual;            // the gated operand: x (gate + residual)
    uint y_block, y_block_stride;
} p;

float operand(uint which, uint off, uint row, uint nc, uint hh, uint ww, float g)
{
    float v;
    if (UPSAMPLED == which)
        v = float(which == OPERAND_A ? a[off + (nc * p.src_h + hh / p.fh) * p.src_w + ww / p.fw]
                                     : b[off + (nc * p.src_h + hh / p.fh) * p.src_w + ww / p.fw]);
    else
        v = float(which == OPERAND_A ? a[off + row * p.w + ww] : b[off + row * p.w + ww]);
    return GATED == which ? v * g : v;
}

void main()
{
    const uint i = grid_item_id();
    if (i >= p.rows * p.w4)
        return;
    const uint row = i / p.w4, w0 = (i - row * p.w4) * 4u;
    const uint nc = row / p.h, hh = row - nc * p.h;
    const float g = GATED != OPERAND_NONE ? gate[nc] + p.residual : 1.0;
    for (uint k = 0; k < 4u; k++) {
        const uint ww = w0 + k;
        if (ww >= p.w)
            break;
        float v = operand(OPERAND_A, p.a_off, row, nc, hh, ww, g) + operand(OPERAND_B, p.b_off, row, nc, hh, ww, g);
        y[p.y_off + grid_out_index(row * p.w + ww, p.y_block, p.y_block_stride)] = TO_S(apply_act(v, ACT, ALPHA, BETA));
    }
}
