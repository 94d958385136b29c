// Resize of NCHW planes, one invocation per output element, with the coordinate rules of
// ref_resize: nearest (asymmetric, floor; integer scales take an exact integer division),
// bilinear with half-pixel or align-corners coordinates.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"

#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Y { SFLOAT y[]; };

layout(push_constant) uniform Push {
    uint n, h, w, oh, ow, mode;
    uint int_scale_h, int_scale_w;  // the scale when it is an integer, else 0
    float scale_h, scale_w;
    uint act;
    float alpha, beta;
    uint x_off, y_off, y_block, y_block_stride;
} p;

#define MODE_NEAREST 0u
#define MODE_HALF_PIXEL 1u

uint nearest(uint o, uint in_size, uint int_scale, float scale)
{
    uint s = int_scale != 0u ? o / int_scale : uint(floor(float(o) / scale));
    return min(s, in_size - 1u);
}

float linear_src(uint o, uint in_size, uint out_size, float scale)
{
    if (p.mode == MODE_HALF_PIXEL)
        return clamp((float(o) + 0.5) / scale - 0.5, 0.0, float(in_size - 1u));
    return out_size > 1u ? float(o) * float(in_size - 1u) / float(out_size - 1u) : 0.0;
}

void main()
{
    uint i = grid_item_id();
    if (i >= p.n)
        return;
    uint ox = i % p.ow, t = i / p.ow;
    uint oy = t % p.oh, plane = t / p.oh;
    uint base = p.x_off + plane * p.h * p.w;
    float v;
    if (p.mode == MODE_NEAREST) {
        v = float(x[base + nearest(oy, p.h, p.int_scale_h, p.scale_h) * p.w + nearest(ox, p.w, p.int_scale_w, p.scale_w)]);
    } else {
        float sy = linear_src(oy, p.h, p.oh, p.scale_h), sx = linear_src(ox, p.w, p.ow, p.scale_w);
        uint y0 = min(uint(floor(sy)), p.h - 1u), x0 = min(uint(floor(sx)), p.w - 1u);
        uint y1 = min(y0 + 1u, p.h - 1u), x1 = min(x0 + 1u, p.w - 1u);
        float fy = sy - float(y0), fx = sx - float(x0);
        float top = float(x[base + y0 * p.w + x0]) * (1.0 - fx) + float(x[base + y0 * p.w + x1]) * fx;
        float bot = float(x[base + y1 * p.w + x0]) * (1.0 - fx) + float(x[base + y1 * p.w + x1]) * fx;
        v = top * (1.0 - fy) + bot * fy;
    }
    y[p.y_off + grid_out_index(i, p.y_block, p.y_block_stride)] = TO_S(apply_act(v, p.act, p.alpha, p.beta));
}
