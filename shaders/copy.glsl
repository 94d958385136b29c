// y = act(x) between two strided views of up to 6 dims: the one kernel behind transpose, slice,
// concat (one dispatch per input, writing its slab of the output) and a reshape that cannot be a
// view. The host collapses dims that are contiguous in both views.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#include "grid.glsl"

#include "workgroup.glsl"

layout(std430, binding = 0) readonly buffer X { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Y { SFLOAT y[]; };

layout(push_constant) uniform Push {
    uint n, ndim, act;
    float alpha, beta;
    uint x_off, y_off;
    uint dims[6];
    uint xs[6];
    uint ys[6];
} p;

void main()
{
    uint i = grid_item_id();
    if (i >= p.n)
        return;
    uint rest = i, xi = p.x_off, yi = p.y_off;
    // the outermost dim needs no division: what is left of i is its coordinate
    for (int d = int(p.ndim) - 1; d > 0; d--) {
        uint c = rest % p.dims[d];
        rest /= p.dims[d];
        xi += c * p.xs[d];
        yi += c * p.ys[d];
    }
    xi += rest * p.xs[0];
    yi += rest * p.ys[0];
    float v = float(x[xi]);
    if (p.act != ACT_NONE)
        v = apply_act(v, p.act, p.alpha, p.beta);
    y[yi] = TO_S(v);
}
