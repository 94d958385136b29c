// 8-bit BGR images uploaded as packed bytes, read through 32-bit words so that devices without
// 8-bit storage run the same code (the four bytes of a word are little-endian).
#ifndef PPOCR_IMAGE_BYTES_GLSL
#define PPOCR_IMAGE_BYTES_GLSL

uint image_byte(uint i)
{
    return (img[i >> 2] >> ((i & 3u) * 8u)) & 0xffu;
}

// B, G, R of pixel (x, y) of a w-wide image as one uvec3.
uvec3 image_bgr(uint x, uint y, uint w)
{
    uint i = (y * w + x) * 3u;
    return uvec3(image_byte(i), image_byte(i + 1u), image_byte(i + 2u));
}

#endif
