// Transposed convolution with kernel == stride, no padding, no dilation and one group (the det
// head's 2x2 upsampling): every output pixel receives exactly one tap, so each invocation takes
// one input pixel and scatters it into its KH x KW block of every output channel. It keeps
// M = OC KH KW sums (M4: M rounded up to 4), loads each of the pixel's IC values once
// (neighbouring invocations read neighbouring pixels) and reads the weights, [IC][M4], as
// 4-vectors that every invocation of a workgroup reads alike. Sums in fp32.
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"

layout(constant_id = 1) const uint M4 = 4;
layout(constant_id = 2) const uint OC = 1;
layout(constant_id = 3) const uint KH = 2;
layout(constant_id = 4) const uint KW = 2;
layout(constant_id = 5) const uint ACT = 0;
layout(constant_id = 6) const float ALPHA = 0.0;
layout(constant_id = 7) const float BETA = 0.0;
layout(constant_id = 8) const bool HAS_BIAS = false;
const uint Q = M4 / 4u;

layout(std430, binding = 0) readonly buffer BufX { SFLOAT x[]; };
layout(std430, binding = 1) readonly buffer BufW { SFLOAT4 w4[]; }; // [IC][M4 / 4]
layout(std430, binding = 2) writeonly buffer BufY { SFLOAT y[]; };
layout(std430, binding = 3) readonly buffer BufBias { float bias[]; };

layout(push_constant) uniform Push {
    uint items, hw, w, ic; // items: images x input pixels
    uint x_off, x_img;
    uint y_off, y_img, ow, ohw;
} p;

void main()
{
    const uint i = grid_item_id();
    if (i >= p.items)
        return;
    const uint n = i / p.hw, pix = i - n * p.hw;
    const uint row = pix / p.w, col = pix - row * p.w;
    vec4 acc[Q];
    [[unroll]] for (uint q = 0; q < Q; q++)
        acc[q] = vec4(0.0);
    const uint xb = p.x_off + n * p.x_img + pix;
    for (uint c = 0; c < p.ic; c++) {
        const float xv = float(x[xb + c * p.hw]);
        [[unroll]] for (uint q = 0; q < Q; q++)
            acc[q] = fma(vec4(xv), vec4(w4[c * Q + q]), acc[q]);
    }
    const uint yb = p.y_off + n * p.y_img + row * KH * p.ow + col * KW;
    [[unroll]] for (uint m = 0; m < OC * KH * KW; m++) {
        const uint oc = m / (KH * KW), tap = m % (KH * KW);
        float v = acc[m / 4u][m % 4u];
        if (HAS_BIAS)
            v += bias[oc];
        y[yb + oc * p.ohw + (tap / KW) * p.ow + tap % KW] = TO_S(apply_act(v, ACT, ALPHA, BETA));
    }
}
