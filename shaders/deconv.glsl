// Transposed convolution in gather form, for the configurations the GEMM path does not cover
// (padding, dilation, groups, kernel != stride): each invocation computes one output pixel by
// visiting only the taps whose stride-aligned source lies inside the input.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint LX = 64;
layout(constant_id = 1) const uint KH = 2;
layout(constant_id = 2) const uint KW = 2;
layout(constant_id = 3) const uint SH = 2;
layout(constant_id = 4) const uint SW = 2;
layout(constant_id = 5) const uint DH = 1;
layout(constant_id = 6) const uint DW = 1;
layout(constant_id = 7) const uint ACT = 0;
layout(constant_id = 8) const float ALPHA = 0.0;
layout(constant_id = 9) const float BETA = 0.0;
layout(constant_id = 10) const bool HAS_BIAS = false;

layout(std430, binding = 0) readonly buffer BufX { SFLOAT x[]; };
layout(std430, binding = 1) readonly buffer BufW { SFLOAT w[]; }; // [IC][OC/g][KH][KW]
layout(std430, binding = 2) writeonly buffer BufY { SFLOAT y[]; };
layout(std430, binding = 3) readonly buffer BufBias { float bias[]; };

layout(push_constant) uniform Push {
    uint H, W, OH, OW;
    uint icg, ocg, OC;
    uint pad_t, pad_l;
    uint x_off, x_img;
    uint y_off, y_img;
} p;

void main()
{
    const uint ox = gl_GlobalInvocationID.x, oy = gl_WorkGroupID.y;
    const uint img = gl_WorkGroupID.z / p.OC, oc = gl_WorkGroupID.z % p.OC;
    if (ox >= p.OW)
        return;
    const uint g = oc / p.ocg, oo = oc % p.ocg;
    float acc = HAS_BIAS ? bias[oc] : 0.0;
    for (uint ky = 0; ky < KH; ky++) {
        int ty = int(oy + p.pad_t) - int(ky * DH);
        if (ty < 0 || ty % int(SH) != 0 || uint(ty) / SH >= p.H)
            continue;
        uint iy = uint(ty) / SH;
        for (uint kx = 0; kx < KW; kx++) {
            int tx = int(ox + p.pad_l) - int(kx * DW);
            if (tx < 0 || tx % int(SW) != 0 || uint(tx) / SW >= p.W)
                continue;
            uint src = p.x_off + img * p.x_img + ((g * p.icg) * p.H + iy) * p.W + uint(tx) / SW;
            uint wi = ((g * p.icg * p.ocg + oo) * KH + ky) * KW + kx;
            for (uint ic = 0; ic < p.icg; ic++)
                acc = fma(float(x[src + ic * p.H * p.W]), float(w[wi + ic * p.ocg * KH * KW]), acc);
        }
    }
    y[p.y_off + img * p.y_img + (oc * p.OH + oy) * p.OW + ox] = TO_S(apply_act(acc, ACT, ALPHA, BETA));
}
