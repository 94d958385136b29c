// cv2.resize INTER_LINEAR on 8-bit data as ocr_resize_linear computes it: per output column and
// row a table entry of 3 words (source index 0, source index 1, weight0 | weight1 << 16, 11-bit
// weights built on the host in double as OpenCV does); rows weighted horizontally in 11-bit fixed
// point, then the vertical step as OpenCV's SIMD VResizeLinearVec_32s8u rounds it (rows cut to
// 16 bits, high halves of the products, saturating adds, (sum + 2) >> 2).
#ifndef PPOCR_LINEAR_U8_GLSL
#define PPOCR_LINEAR_U8_GLSL

// pix(x, y) must be defined by the includer as a function returning the uvec3 BGR of a source pixel.
ivec3 sat16(ivec3 v)
{
    return clamp(v, -32768, 32767);
}

uvec3 linear_u8(uvec3 ex, uvec3 ey)
{
    int a0 = int(ex.z & 0xffffu), a1 = int(ex.z >> 16);
    ivec3 r0 = ivec3(pix(ex.x, ey.x)) * a0 + ivec3(pix(ex.y, ey.x)) * a1;
    ivec3 r1 = ivec3(pix(ex.x, ey.y)) * a0 + ivec3(pix(ex.y, ey.y)) * a1;
    ivec3 v = sat16((sat16(r0 >> 4) * int(ey.z & 0xffffu)) >> 16) + sat16((sat16(r1 >> 4) * int(ey.z >> 16)) >> 16);
    return uvec3(clamp((sat16(v) + 2) >> 2, 0, 255));
}

// OpenCV's exact 2x downscale (INTER_AREA fast path): (sum of the 2x2 block + 2) >> 2.
uvec3 half_u8(uint x, uint y)
{
    return (pix(2u * x, 2u * y) + pix(2u * x + 1u, 2u * y) + pix(2u * x, 2u * y + 1u) + pix(2u * x + 1u, 2u * y + 1u) + 2u) >> 2;
}

#define RESIZE_TABLE 0u
#define RESIZE_HALF 1u
#define RESIZE_COPY 2u

#endif
