#version 450
// y[i] = x[off + i] over n floats, x read as RGBA32F texels: the dispatch tests check texel
// buffer bindings against C.
layout(local_size_x = 64) in;

layout(binding = 0) uniform samplerBuffer x4t;
layout(std430, binding = 1) writeonly buffer Y { float y[]; };

layout(push_constant) uniform Push {
    uint n, off;
} p;

void main()
{
    const uint i = gl_GlobalInvocationID.x;
    if (i < p.n)
        y[i] = texelFetch(x4t, int((p.off + i) / 4u))[(p.off + i) % 4u];
}
