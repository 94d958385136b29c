#version 450
// y = a * x + y over n floats; the self-check and the dispatch tests compare it with C.
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) buffer Y { float y[]; };

layout(push_constant) uniform Push {
    uint n;
    float a;
} p;

void main()
{
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n)
        y[i] = p.a * x[i] + y[i];
}
