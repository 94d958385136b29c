// Float-float ("double-single") arithmetic: a value is vec2(hi, lo) with |lo| <= ulp(hi)/2, about
// 44 significant bits from fp32 operations alone (Vulkan rounds fp32 add and mul correctly; fma is
// not guaranteed fused, so products use Dekker's split). The crop warp uses it to reproduce
// OpenCV's double-precision coordinate arithmetic on devices without fp64.
// A compiler that treated floating point as real arithmetic would fold (a + b) - a into b and
// reduce all of this to plain fp32; `precise` forbids that, and as a second guard every
// intermediate passes through ff_o(), an XOR with a push-constant zero (FF_ZERO, defined by the
// includer) that no optimiser can see through.
#ifndef PPOCR_FLOAT2_GLSL
#define PPOCR_FLOAT2_GLSL

float ff_o(float x)
{
    return uintBitsToFloat(floatBitsToUint(x) ^ FF_ZERO);
}

vec2 ff_two_sum(float a, float b)
{
    float s = ff_o(a + b);
    float bb = ff_o(s - a);
    float t1 = ff_o(s - bb);
    float t2 = ff_o(a - t1), t3 = ff_o(b - bb);
    return vec2(s, ff_o(t2 + t3));
}

vec2 ff_quick_two_sum(float a, float b)
{
    float s = ff_o(a + b);
    float t = ff_o(s - a);
    return vec2(s, ff_o(b - t));
}

vec2 ff_split(float a)
{
    float c = ff_o(4097.0 * a);
    float t = ff_o(c - a);
    float hi = ff_o(c - t);
    return vec2(hi, ff_o(a - hi));
}

vec2 ff_two_prod(float a, float b)
{
    float p = ff_o(a * b);
    vec2 as = ff_split(a), bs = ff_split(b);
    float e = ff_o(ff_o(as.x * bs.x) - p);
    e = ff_o(e + ff_o(as.x * bs.y));
    e = ff_o(e + ff_o(as.y * bs.x));
    e = ff_o(e + ff_o(as.y * bs.y));
    return vec2(p, e);
}

vec2 ff_add(vec2 a, vec2 b)
{
    vec2 s = ff_two_sum(a.x, b.x), t = ff_two_sum(a.y, b.y);
    s = ff_quick_two_sum(s.x, ff_o(s.y + t.x));
    return ff_quick_two_sum(s.x, ff_o(s.y + t.y));
}

vec2 ff_mul(vec2 a, vec2 b)
{
    vec2 p = ff_two_prod(a.x, b.x);
    float cross = ff_o(ff_o(a.x * b.y) + ff_o(a.y * b.x));
    return ff_quick_two_sum(p.x, ff_o(p.y + cross));
}

// a / b, refined twice from the fp32 quotient (whose own error Vulkan allows up to 2.5 ulp).
vec2 ff_div(vec2 a, vec2 b)
{
    float q1 = ff_o(a.x / b.x);
    vec2 r = ff_add(a, -ff_mul(b, vec2(q1, 0.0)));
    float q2 = ff_o(r.x / b.x);
    r = ff_add(r, -ff_mul(b, vec2(q2, 0.0)));
    float q3 = ff_o(r.x / b.x);
    return ff_add(ff_quick_two_sum(q1, q2), vec2(q3, 0.0));
}

// lrint(hi + lo): nearest integer, ties to even, as a float (exact below 2^24).
float ff_round(vec2 a)
{
    float r = roundEven(a.x);
    float d = ff_o(ff_o(a.x - r) + a.y);
    bool odd = mod(r, 2.0) != 0.0;
    if (d > 0.5 || (d == 0.5 && odd))
        r += 1.0;
    else if (d < -0.5 || (d == -0.5 && odd))
        r -= 1.0;
    return r;
}

#endif
