// Text-box crops, first dispatch: cv2.warpPerspective(INTER_CUBIC, BORDER_REPLICATE) of each box of
// one image into its own scratch region (one uint per pixel, B | G << 8 | R << 16), turned 90
// degrees counter-clockwise for tall boxes and optionally 180 degrees (lines the classifier turned
// over). All crops of an image are one dispatch: workgroup row y of the grid is crop y, its pixels
// run along x and wrap onto z (Vulkan guarantees only 65535 workgroups an axis; see nnh_grid_1d).
// Arithmetic as OpenCV: coordinates in 1/32 pixel computed in float-float (OpenCV uses double;
// see float2.glsl), 15-bit fixed-point 4x4 weights from a host-built table identical to OpenCV's,
// so the crops match ocr_warp_perspective_cubic. Coordinates that land within a hair of a rounding
// tie (boxes with whole-pixel edges make exact ties) are where float-float cannot tell which way
// OpenCV's double rounding went: the WARP_TIES twin (devices with 64-bit integers) appends those
// pixels to a list, and the CROP_FIX twin (crop_fix.comp, a second small dispatch) recomputes them
// in emulated double (f64emu.glsl). A separate pass keeps the slow path out of the main kernel,
// where CPUs would run it masked for every SIMD group.
#extension GL_GOOGLE_include_directive : require

#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer Img { uint img[]; };
layout(std430, binding = 1) readonly buffer Params { uint prm[]; };  // CROP_WORDS per crop
layout(std430, binding = 2) readonly buffer Cubic { uint cubic[]; };  // 1024 sets of 16 int16, 8 words each
layout(std430, binding = 3) writeonly buffer Scratch { uint scratch[]; };
// [0]: entries appended (zeroed before the warp); then (crop, pixel) pairs
layout(std430, binding = 4) buffer Ties { uint ties[]; };

layout(push_constant) uniform Push {
    uint src_w, src_h, margin, fill_word; // the image as image_bytes.glsl reads it
    uint n_crops;
    uint zero;      // always 0: see float2.glsl
    uint tie_cap;   // pairs the tie list holds
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

// Bicubic sample at source coordinates (X, Y) in 1/32 pixel, stored where pixel (x, y) of the
// w x h warp lands after the turns.
void warp_store(uint base, uint x, uint yy, uint w, uint h, int X, int Y)
{
    int sx = clamp(X >> 5, -32768, 32767) - 1, sy = clamp(Y >> 5, -32768, 32767) - 1;
    uint set = uint((Y & 31) * 32 + (X & 31));
    ivec3 sum = ivec3(0);
    for (int r = 0; r < 4; r++) {
        uint ry = uint(clamp(sy + r, 0, int(p.src_h) - 1));
        for (int q = 0; q < 4; q++) {
            uint rx = uint(clamp(sx + q, 0, int(p.src_w) - 1));
            sum += ivec3(image_bgr(rx, ry)) * weight(set, uint(r * 4 + q));
        }
    }
    uvec3 v = uvec3(clamp((sum + (1 << 14)) >> 15, 0, 255));
    // 90 ccw maps (x, y) of a w x h image to (y, w-1-x)
    uint ox = x, oy = yy, ow = w, oh = h;
    if (prm[base + CP_ROTATE] != 0u) {
        ox = yy, oy = w - 1u - x, ow = h, oh = w;
    }
    if (prm[base + CP_FLIP] != 0u) {
        ox = ow - 1u - ox, oy = oh - 1u - oy;
    }
    scratch[prm[base + CP_SCRATCH] + oy * ow + ox] = v.x | (v.y << 8) | (v.z << 16);
}

#ifdef CROP_FIX
#include "f64emu.glsl"

// OpenCV's coordinates for output pixel (px, py) exactly as WarpPerspectiveInvoker computes them in
// double: per block row X0 = m0 bx + m1 y + m2 (bx: the block's first column), then per pixel
// W = 32 / (W0 + m6 x1), X = lrint((X0 + m0 x1) W), likewise Y.
void exact_coords(uint base, uint px, uint py, out int X, out int Y)
{
    f64 m[9];
    for (uint k = 0; k < 9u; k++)
        m[k] = f64_from_bits(prm[base + CP_MATRIX64 + 2u * k], prm[base + CP_MATRIX64 + 2u * k + 1u]);
    uint bw0 = prm[base + CP_BLOCK_W];
    uint bx = (px / bw0) * bw0;
    f64 fbx = f64_from_int(int(bx)), fy = f64_from_int(int(py)), fx1 = f64_from_int(int(px - bx));
    f64 X0 = f64_add(f64_add(f64_mul(m[0], fbx), f64_mul(m[1], fy)), m[2]);
    f64 Y0 = f64_add(f64_add(f64_mul(m[3], fbx), f64_mul(m[4], fy)), m[5]);
    f64 W0 = f64_add(f64_add(f64_mul(m[6], fbx), f64_mul(m[7], fy)), m[8]);
    f64 W = f64_add(W0, f64_mul(m[6], fx1));
    W = W.m != 0ul ? f64_div(f64_from_int(32), W) : f64_zero();
    X = f64_lrint(f64_mul(f64_add(X0, f64_mul(m[0], fx1)), W));
    Y = f64_lrint(f64_mul(f64_add(Y0, f64_mul(m[3], fx1)), W));
}

// The listed pixels, again, with exact coordinates; a fixed grid walks the list.
void main()
{
    uint n = min(ties[0], p.tie_cap);
    uint stride = gl_NumWorkGroups.x * WG_SIZE;
    for (uint t = gl_GlobalInvocationID.x; t < n; t += stride) {
        uint c = ties[1u + 2u * t], i = ties[2u + 2u * t];
        uint base = c * CROP_WORDS;
        uint w = prm[base + CP_WARP_W], h = prm[base + CP_WARP_H];
        uint x = i % w, yy = i / w;
        int X, Y;
        exact_coords(base, x, yy, X, Y);
        warp_store(base, x, yy, w, h, X, Y);
    }
}

#else

void main()
{
    uint c = gl_WorkGroupID.y;
    uint base = c * CROP_WORDS;
    uint w = prm[base + CP_WARP_W], h = prm[base + CP_WARP_H];
    uint i = (gl_WorkGroupID.z * gl_NumWorkGroups.x + gl_WorkGroupID.x) * WG_SIZE + gl_LocalInvocationID.x;
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
    float rx = ff_round(fx), ry = ff_round(fy);
    int X = int(clamp(rx, -16777216.0, 16777216.0)), Y = int(clamp(ry, -16777216.0, 16777216.0));
#ifdef WARP_TIES
    // within a hair of a tie (float-float is good to ~1e-9 here): listed for the exact pass
    float tx = abs(ff_o(fx.x - rx) + fx.y), ty = abs(ff_o(fy.x - ry) + fy.y);
    if (abs(tx - 0.5) < 1e-6 || abs(ty - 0.5) < 1e-6) {
        uint t = atomicAdd(ties[0], 1u);
        if (t < p.tie_cap) {
            ties[1u + 2u * t] = c;
            ties[2u + 2u * t] = i;
        }
    }
#endif
    warp_store(base, x, yy, w, h, X, Y);
}

#endif
