#version 450
// dst = src + 1 over n integers: chained between two buffers, each dispatch depends on the last,
// so a missing barrier shows up as a wrong count.
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };

layout(push_constant) uniform Push { uint n; } p;

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n)
        dst[i] = src[i] + 1u;
}
