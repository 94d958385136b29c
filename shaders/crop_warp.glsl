// Text-box crops, first dispatch: cv2.warpPerspective(INTER_CUBIC, BORDER_REPLICATE) of each box of
// one image into its own scratch region (one uint per pixel, B | G << 8 | R << 16), turned 90
// degrees counter-clockwise for tall boxes and optionally 180 degrees (lines the classifier turned
// over). All crops of an image are one dispatch: workgroup row y of the grid is crop y.
// Arithmetic as OpenCV: coordinates in 1/32 pixel computed in float-float (OpenCV uses double;
// see float2.glsl), 15-bit fixed-point 4x4 weights from a host-built table identical to OpenCV's,
// so the crops match ocr_warp_perspective_cubic except where a coordinate lies within ~1e-12 of
// a rounding tie.
#extension GL_GOOGLE_include_directive : require

#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer Img { uint img[]; };
layout(std430, binding = 1) readonly buffer Params { uint prm[]; };  // CROP_WORDS per crop
layout(std430, binding = 2) readonly buffer Cubic { uint cubic[]; };  // 1024 sets of 16 int16, 8 words each
layout(std430, binding = 3) writeonly buffer Scratch { uint scratch[]; };

layout(push_constant) uniform Push {
    uint src_w, src_h, n_crops;
    uint zero;  // always 0: see float2.glsl
} p;

#include "image_bytes.glsl"
#include "crop_params.glsl"
#define FF_ZERO p.zero
#include "float2.glsl"

int weight(uint set, uint k)
{
    uint wv = cubic[set * 8u + (k >> 1)];
    return (k & 1u) != 0u ? int(wv) >> 16 : (int(wv << 16) >> 16);
}

void main()
{
    uint c = gl_WorkGroupID.y;
    uint base = c * CROP_WORDS;
    uint w = prm[base + CP_WARP_W], h = prm[base + CP_WARP_H];
    uint i = gl_WorkGroupID.x * WG_SIZE + gl_LocalInvocationID.x;
    if (c >= p.n_crops || i >= w * h)
        return;
    uint x = i % w, yy = i / w;
    // the matrix as (hi, lo) float pairs: CP_MATRIX holds 9 hi words, then 9 lo words
    vec2 m[9];
    for (uint k = 0; k < 9u; k++)
        m[k] = vec2(uintBitsToFloat(prm[base + CP_MATRIX + k]), uintBitsToFloat(prm[base + CP_MATRIX + 9u + k]));
    vec2 fxp = vec2(float(x), 0.0), fyp = vec2(float(yy), 0.0);
    vec2 X0 = ff_add(ff_add(ff_mul(m[0], fxp), ff_mul(m[1], fyp)), m[2]);
    vec2 Y0 = ff_add(ff_add(ff_mul(m[3], fxp), ff_mul(m[4], fyp)), m[5]);
    vec2 W0 = ff_add(ff_add(ff_mul(m[6], fxp), ff_mul(m[7], fyp)), m[8]);
    vec2 Wi = W0.x != 0.0 ? ff_div(vec2(32.0, 0.0), W0) : vec2(0.0);
    vec2 fx = ff_mul(X0, Wi), fy = ff_mul(Y0, Wi);
    // OpenCV saturates to int; coordinates this far out only ever sample the border
    int X = int(clamp(ff_round(fx), -16777216.0, 16777216.0)), Y = int(clamp(ff_round(fy), -16777216.0, 16777216.0));
    int sx = clamp(X >> 5, -32768, 32767) - 1, sy = clamp(Y >> 5, -32768, 32767) - 1;
    uint set = uint((Y & 31) * 32 + (X & 31));
    ivec3 sum = ivec3(0);
    for (int r = 0; r < 4; r++) {
        uint ry = uint(clamp(sy + r, 0, int(p.src_h) - 1));
        for (int q = 0; q < 4; q++) {
            uint rx = uint(clamp(sx + q, 0, int(p.src_w) - 1));
            sum += ivec3(image_bgr(rx, ry, p.src_w)) * weight(set, uint(r * 4 + q));
        }
    }
    uvec3 v = uvec3(clamp((sum + (1 << 14)) >> 15, 0, 255));
    // where the pixel lands after the turns: 90 ccw maps (x, y) of a w x h image to (y, w-1-x)
    uint ox = x, oy = yy, ow = w, oh = h;
    if (prm[base + CP_ROTATE] != 0u) {
        ox = yy, oy = w - 1u - x, ow = h, oh = w;
    }
    if (prm[base + CP_FLIP] != 0u) {
        ox = ow - 1u - ox, oy = oh - 1u - oy;
    }
    scratch[prm[base + CP_SCRATCH] + oy * ow + ox] = v.x | (v.y << 8) | (v.z << 16);
}
