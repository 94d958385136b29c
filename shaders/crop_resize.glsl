// Text-box crops, second dispatch: each turned crop in scratch resized to the target height as
// cv2.resize INTER_LINEAR (bit-exact with ocr_resize_linear), normalised (v/255 - 0.5) / 0.5 and
// written into its batch slot of the cls or rec input [N][3][H][W], zero right of the resized width.
// Workgroup row y is crop y; its pixels run along x and wrap onto z as crop_warp.glsl's do.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"

#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer Scratch { uint scratch[]; };
layout(std430, binding = 1) readonly buffer Params { uint prm[]; };
layout(std430, binding = 2) writeonly buffer Y { SFLOAT y[]; };

layout(push_constant) uniform Push {
    uint n_crops, target_h, target_w, y_off;
} p;

#include "crop_params.glsl"

uint g_base, g_w;
uvec3 pix(uint x, uint yy)
{
    uint v = scratch[g_base + yy * g_w + x];
    return uvec3(v & 0xffu, (v >> 8) & 0xffu, (v >> 16) & 0xffu);
}
#include "linear_u8.glsl"

void main()
{
    uint c = gl_WorkGroupID.y;
    uint i = (gl_WorkGroupID.z * gl_NumWorkGroups.x + gl_WorkGroupID.x) * WG_SIZE + gl_LocalInvocationID.x;
    if (c >= p.n_crops || i >= p.target_w * p.target_h)
        return;
    uint base = c * CROP_WORDS;
    uint x = i % p.target_w, yy = i / p.target_w;
    uint plane = p.target_w * p.target_h;
    uint o = p.y_off + prm[base + CP_SLOT] * 3u * plane + yy * p.target_w + x;
    if (x >= prm[base + CP_RESIZED_W]) {
        y[o] = TO_S(0.0);
        y[o + plane] = TO_S(0.0);
        y[o + 2u * plane] = TO_S(0.0);
        return;
    }
    bool rot = prm[base + CP_ROTATE] != 0u;
    g_base = prm[base + CP_SCRATCH];
    g_w = rot ? prm[base + CP_WARP_H] : prm[base + CP_WARP_W];
    uint mode = prm[base + CP_RESIZE_MODE];
    uvec3 v;
    if (mode == RESIZE_COPY) {
        v = pix(x, yy);
    } else if (mode == RESIZE_HALF) {
        v = half_u8(x, yy);
    } else {
        uint t = prm[base + CP_TABLE];
        uint ex = t + 3u * x, ey = t + 3u * (prm[base + CP_RESIZED_W] + yy);
        v = linear_u8(uvec3(prm[ex], prm[ex + 1u], prm[ex + 2u]), uvec3(prm[ey], prm[ey + 1u], prm[ey + 2u]));
    }
    vec3 f = (vec3(v) / 255.0 - 0.5) / 0.5;
    y[o] = TO_S(f.x);
    y[o + plane] = TO_S(f.y);
    y[o + 2u * plane] = TO_S(f.z);
}
