// DB's bitmap: det's probability map, h rows of w, thresholded (prob > thresh, as the host compares
// in fp32) into the work image the contour follower labels in place: (w + 2) x (h + 2) bytes, 1 for
// text, 0 for the rest and for a one-pixel border. Four bytes per invocation, packed into a word,
// so devices without 8-bit storage run it too; bytes past the image in the last word are 0.
// The comparison is done on the values' bits: a GPU may flush denormals to zero in float
// arithmetic, which would make 1e-45 > 0 false where the host finds it true. With STORAGE_F16 the
// map holds fp16 values, widened exactly to fp32 first.
#extension GL_GOOGLE_include_directive : require
#include "grid.glsl"

#ifdef STORAGE_F16
#extension GL_EXT_shader_16bit_storage : require
layout(std430, binding = 0) readonly buffer Map { uint16_t map[]; }; // fp16 bits
#else
layout(std430, binding = 0) readonly buffer Map { uint map[]; }; // fp32 bits
#endif
layout(std430, binding = 1) writeonly buffer Work { uint work[]; };

layout(push_constant) uniform Push {
    uint w, h, map_off, words;
    uint thresh_bits; // fp32
} p;

#ifdef STORAGE_F16
uint fp32_bits_of_half(uint h)
{
    uint sign = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1fu)
        return sign | 0x7f800000u | (m << 13); // inf, NaN
    if (e == 0u) {
        if (m == 0u)
            return sign;
        int top = findMSB(m); // a subnormal half, m 2^-24, is a normal float
        return sign | (uint(top + 103) << 23) | ((m << uint(23 - top)) & 0x7fffffu);
    }
    return sign | ((e + 112u) << 23) | (m << 13);
}

uint map_bits(uint i) { return fp32_bits_of_half(uint(map[i])); }
#else
uint map_bits(uint i) { return map[i]; }
#endif

// The order of IEEE floats as integers: -0 and +0 equal, negative values below positive ones.
int order_key(uint bits)
{
    uint magnitude = bits & 0x7fffffffu;
    return (bits & 0x80000000u) != 0u ? -int(magnitude) : int(magnitude);
}

// a > t as IEEE fp32 compares them (false where either is NaN)
bool greater(uint a, uint t)
{
    if ((a & 0x7fffffffu) > 0x7f800000u || (t & 0x7fffffffu) > 0x7f800000u)
        return false;
    return order_key(a) > order_key(t);
}

void main()
{
    uint i = grid_item_id();
    if (i >= p.words)
        return;
    uint stride = p.w + 2u, first = 4u * i, y = first / stride, x = first - y * stride, word = 0u;
    for (uint k = 0u; k < 4u; k++) {
        if (y >= 1u && y <= p.h && x >= 1u && x <= p.w &&
            greater(map_bits(p.map_off + (y - 1u) * p.w + x - 1u), p.thresh_bits))
            word |= 1u << (8u * k);
        if (++x == stride) {
            x = 0u;
            y++;
        }
    }
    work[i] = word;
}
