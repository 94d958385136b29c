// Resize of NCHW planes with the coordinate rules of ref_resize: nearest (asymmetric, floor),
// bilinear with half-pixel or align-corners coordinates. Grid: x over output columns, y over
// output rows, z over planes, so no invocation divides to find its pixel. Nearest with integer
// scales (the det FPN's 2, 4, 8) runs one invocation per INPUT pixel instead, copying it to its
// scale_h x scale_w block of outputs.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"

layout(local_size_y_id = 1) in;

layout(std430, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Y { SFLOAT y[]; };

layout(push_constant) uniform Push {
    uint h, w, oh, ow, mode;
    uint int_scale_h, int_scale_w;  // nearest with integer scales: the scales, else 0
    float scale_h, scale_w;
    uint act;
    float alpha, beta;
    uint x_off, y_off, c, y_block, y_block_stride;
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

void main()
{
    uint plane = gl_GlobalInvocationID.z;
    uint base = p.x_off + plane * p.h * p.w;
    if (p.int_scale_h != 0u) {
        uint ix = gl_GlobalInvocationID.x, iy = gl_GlobalInvocationID.y;
        if (ix >= p.w || iy >= p.h)
            return;
        float v = float(x[base + iy * p.w + ix]);
        for (uint dy = 0; dy < p.int_scale_h; dy++) {
            uint oy = iy * p.int_scale_h + dy;
            if (oy >= p.oh)
                break;
            for (uint dx = 0; dx < p.int_scale_w; dx++) {
                uint ox = ix * p.int_scale_w + dx;
                if (ox < p.ow)
                    store(plane, oy, ox, v);
            }
        }
        return;
    }
    uint ox = gl_GlobalInvocationID.x, oy = gl_GlobalInvocationID.y;
    if (ox >= p.ow || oy >= p.oh)
        return;
    float v;
    if (p.mode == MODE_NEAREST) {
        uint sy = min(uint(floor(float(oy) / p.scale_h)), p.h - 1u);
        uint sx = min(uint(floor(float(ox) / p.scale_w)), p.w - 1u);
        v = float(x[base + sy * p.w + sx]);
    } else {
        float sy = linear_src(oy, p.h, p.oh, p.scale_h), sx = linear_src(ox, p.w, p.ow, p.scale_w);
        uint y0 = min(uint(floor(sy)), p.h - 1u), x0 = min(uint(floor(sx)), p.w - 1u);
        uint y1 = min(y0 + 1u, p.h - 1u), x1 = min(x0 + 1u, p.w - 1u);
        float fy = sy - float(y0), fx = sx - float(x0);
        float top = float(x[base + y0 * p.w + x0]) * (1.0 - fx) + float(x[base + y0 * p.w + x1]) * fx;
        float bot = float(x[base + y1 * p.w + x0]) * (1.0 - fx) + float(x[base + y1 * p.w + x1]) * fx;
        v = top * (1.0 - fy) + bot * fy;
    }
    store(plane, oy, ox, v);
}
