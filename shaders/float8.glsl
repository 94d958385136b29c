// Eight neighbouring fp32 values as one 64-bit 4-vector, two per component, the lower address in
// each component's low half (little-endian): the CPU kernels' 8-float loads and stores, which
// lavapipe moves lane by lane in four steps instead of eight.
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

// element i (0..7; a constant once the caller's loop is unrolled)
float float8_at(u64vec4 q, uint i)
{
    return uintBitsToFloat(unpack32(q[i / 2u])[i % 2u]);
}

u64vec4 float8_pack(const float v[8])
{
    u64vec4 q;
    for (uint c = 0; c < 4u; c++)
        q[c] = pack64(uvec2(floatBitsToUint(v[2u * c]), floatBitsToUint(v[2u * c + 1u])));
    return q;
}
