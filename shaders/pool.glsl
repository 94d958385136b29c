// Max / average pooling over windows, one invocation per output element (the nets' windows are
// 2x2 and 3x2). Windows are clipped as in ref_pool2d: max ignores padding; average divides by the
// window clipped to the padded extent (count_include_pad) or by its in-image taps.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"

#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Y { SFLOAT y[]; };

layout(push_constant) uniform Push {
    uint n, h, w, oh, ow;
    int kh, kw, sh, sw, pad_t, pad_l, pad_b, pad_r;
    uint is_max, count_include_pad, act;
    float alpha, beta;
    uint x_off, y_off, y_block, y_block_stride;
} p;

void main()
{
    uint i = grid_item_id();
    if (i >= p.n)
        return;
    uint ox = i % p.ow, t = i / p.ow;
    uint oy = t % p.oh, plane = t / p.oh;
    int y0 = int(oy) * p.sh - p.pad_t, x0 = int(ox) * p.sw - p.pad_l;
    int y1 = min(y0 + p.kh, int(p.h) + p.pad_b), x1 = min(x0 + p.kw, int(p.w) + p.pad_r);
    int ya = max(y0, 0), yb = min(y1, int(p.h)), xa = max(x0, 0), xb = min(x1, int(p.w));
    uint base = p.x_off + plane * p.h * p.w;
    float v;
    if (p.is_max != 0u) {
        v = -3.402823466e38;
        for (int iy = ya; iy < yb; iy++)
            for (int ix = xa; ix < xb; ix++)
                v = max(v, float(x[base + uint(iy) * p.w + uint(ix)]));
    } else {
        float s = 0.0;
        for (int iy = ya; iy < yb; iy++)
            for (int ix = xa; ix < xb; ix++)
                s += float(x[base + uint(iy) * p.w + uint(ix)]);
        int taps = p.count_include_pad != 0u ? (y1 - y0) * (x1 - x0) : (yb - ya) * (xb - xa);
        v = taps > 0 ? s / float(taps) : 0.0;
    }
    y[p.y_off + grid_out_index(i, p.y_block, p.y_block_stride)] = TO_S(apply_act(v, p.act, p.alpha, p.beta));
}
