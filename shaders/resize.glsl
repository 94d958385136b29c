// Resize of NCHW planes with the coordinate rules of ref_resize: nearest (asymmetric, floor),
// bilinear with half-pixel or align-corners coordinates. Grid: x over output columns, y over
// output rows, z over planes, so no invocation divides to find its pixel. Nearest with integer
// scales takes the source index by integer division, by a shift for powers of two (the det FPN's
// 2, 4, 8): exact, and cheap where integer division is slow (CPUs). An SE's apply step before
// it can be fused in (GATED).
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"

layout(local_size_y_id = 1) in;
// x is an SE's input, its plane scaled by gate + residual (the SE's apply step, fused)
layout(constant_id = 2) const bool GATED = false;

layout(std430, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Y { SFLOAT y[]; };
layout(std430, binding = 2) readonly buffer Gate { float gate[]; }; // [N][C]: one per plane

layout(push_constant) uniform Push {
    uint h, w, oh, ow, mode;
    uint int_mode;                  // nearest with integer scales: 1 shifts, 2 divides; else 0
    uint int_h, int_w;              // the shifts or the divisors
    float scale_h, scale_w;
    uint act;
    float alpha, beta;
    uint x_off, y_off, c, y_block, y_block_stride;
    float residual;
} p;

#define MODE_NEAREST 0u
#define MODE_HALF_PIXEL 1u

float linear_src(uint o, uint in_size, uint out_size, float scale)
{
    if (p.mode == MODE_HALF_PIXEL)
        return clamp((float(o) + 0.5) / scale - 0.5, 0.0, float(in_size - 1u));
    return out_size > 1u ? float(o) * float(in_size - 1u) / float(out_size - 1u) : 0.0;
}

void store(uint plane, uint oy, uint ox, float v)
{
    uint i = (plane * p.oh + oy) * p.ow + ox;
    y[p.y_off + grid_out_index(i, p.y_block, p.y_block_stride)] = TO_S(apply_act(v, p.act, p.alpha, p.beta));
}

// Four outputs of a row per invocation, WG_SIZE apart, so that neighbouring invocations (the SIMD
// lanes of a CPU, the threads of a warp) touch neighbouring addresses at each step.
void main()
{
    uint plane = gl_GlobalInvocationID.z;
    uint base = p.x_off + plane * p.h * p.w;
    const float g = GATED ? gate[plane] + p.residual : 1.0;
    uint oy = gl_GlobalInvocationID.y;
    if (oy >= p.oh)
        return;
    uint sy;
    float fsy;
    if (p.mode == MODE_NEAREST) {
        sy = p.int_mode == 1u ? oy >> p.int_h : p.int_mode == 2u ? oy / p.int_h : uint(floor(float(oy) / p.scale_h));
        sy = min(sy, p.h - 1u);
    } else {
        fsy = linear_src(oy, p.h, p.oh, p.scale_h);
    }
    for (uint k = 0; k < 4u; k++) {
        uint ox = gl_WorkGroupID.x * 4u * WG_SIZE + k * WG_SIZE + gl_LocalInvocationID.x;
        if (ox >= p.ow)
            break;
        float v;
        if (p.mode == MODE_NEAREST) {
            uint sx = p.int_mode == 1u ? ox >> p.int_w : p.int_mode == 2u ? ox / p.int_w : uint(floor(float(ox) / p.scale_w));
            v = float(x[base + sy * p.w + min(sx, p.w - 1u)]);
        } else {
            float sx = linear_src(ox, p.w, p.ow, p.scale_w);
            uint y0 = min(uint(floor(fsy)), p.h - 1u), x0 = min(uint(floor(sx)), p.w - 1u);
            uint y1 = min(y0 + 1u, p.h - 1u), x1 = min(x0 + 1u, p.w - 1u);
            float fy = fsy - float(y0), fx = sx - float(x0);
            float top = float(x[base + y0 * p.w + x0]) * (1.0 - fx) + float(x[base + y0 * p.w + x1]) * fx;
            float bot = float(x[base + y1 * p.w + x0]) * (1.0 - fx) + float(x[base + y1 * p.w + x1]) * fx;
            v = top * (1.0 - fy) + bot * fy;
        }
        store(plane, oy, ox, GATED ? v * g : v);
    }
}
