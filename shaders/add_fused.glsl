// y = act(a' + b') over NCHW maps of the output's shape, where the net fused into the add what
// produced its operands (det's FPN: out = SE(x) + upsample(top)):
//   a gated operand is an SE's input x, scaled per (image, channel) by gate[n][c] + residual
//     (the SE's apply step, which then writes nothing);
//   an upsampled operand is a nearest RESIZE's input, a map smaller by integer factors, read at
//     (h / fh, w / fw) (the resize, which then writes nothing).
// With use_vec4 set by the host (rows a multiple of 4, full-size operands and the output on multiples
// of 4) each invocation takes 4 neighbouring outputs as 4-vectors; otherwise one output. The
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
layout(std430, binding = 0) readonly buffer A4 { SFLOAT4 a4[]; };
layout(std430, binding = 1) readonly buffer B4 { SFLOAT4 b4[]; };
layout(std430, binding = 2) writeonly buffer Y4 { SFLOAT4 y4[]; };

layout(push_constant) uniform Push {
    uint items, h, w;          // items: outputs, or groups of 4 with vec4
    uint a_off, b_off, y_off;
    uint fh, fw, src_h, src_w; // the upsampled operand: factors and its plane
    float residual;            // the gated operand: x (gate + residual)
    uint y_block, y_block_stride;
    uint use_vec4;
} p;

// Element e (dense index of the output) of an operand that is not upsampled.
float full(uint which, uint off, uint e)
{
    return float(which == OPERAND_A ? a[off + e] : b[off + e]);
}

vec4 full4(uint which, uint off, uint e)
{
    return vec4(which == OPERAND_A ? a4[(off + e) / 4u] : b4[(off + e) / 4u]);
}

float upsampled(uint which, uint off, uint nc, uint hh, uint ww)
{
    const uint i = off + (nc * p.src_h + hh / p.fh) * p.src_w + ww / p.fw;
    return float(which == OPERAND_A ? a[i] : b[i]);
}

vec4 operand4(uint which, uint off, uint e, uint nc, uint hh, uint ww, float g)
{
    vec4 v;
    if (UPSAMPLED == which)
        v = vec4(upsampled(which, off, nc, hh, ww), upsampled(which, off, nc, hh, ww + 1u),
                 upsampled(which, off, nc, hh, ww + 2u), upsampled(which, off, nc, hh, ww + 3u));
    else
        v = full4(which, off, e);
    return GATED == which ? v * g : v;
}

float operand(uint which, uint off, uint e, uint nc, uint hh, uint ww, float g)
{
    const float v = UPSAMPLED == which ? upsampled(which, off, nc, hh, ww) : full(which, off, e);
    return GATED == which ? v * g : v;
}

void main()
{
    const uint i = grid_item_id();
    if (i >= p.items)
        return;
    const uint e = p.use_vec4 != 0u ? 4u * i : i;
    const uint row = e / p.w, ww = e - row * p.w;
    const uint nc = row / p.h, hh = row - nc * p.h;
    const float g = GATED != OPERAND_NONE ? gate[nc] + p.residual : 1.0;
    const uint yi = p.y_off + grid_out_index(e, p.y_block, p.y_block_stride);
    if (p.use_vec4 != 0u) {
        const vec4 v = operand4(OPERAND_A, p.a_off, e, nc, hh, ww, g) + operand4(OPERAND_B, p.b_off, e, nc, hh, ww, g);
        y4[yi / 4u] = TO_S4(apply_act(v, ACT, ALPHA, BETA));
    } else {
        const float v = operand(OPERAND_A, p.a_off, e, nc, hh, ww, g) + operand(OPERAND_B, p.b_off, e, nc, hh, ww, g);
        y[yi] = TO_S(apply_act(v, ACT, ALPHA, BETA));
    }
}
