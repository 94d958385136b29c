// 8-bit BGR images uploaded as packed bytes, read through 32-bit words so that devices without
// 8-bit storage run the same code (the four bytes of a word are little-endian), optionally framed
// by a margin of one colour that is not stored (image_ops.h).
#ifndef PPOCR_IMAGE_BYTES_GLSL
#define PPOCR_IMAGE_BYTES_GLSL

uint image_byte(uint i)
{
    return (img[i >> 2] >> ((i & 3u) * 8u)) & 0xffu;
}

// B, G, R of pixel (x, y) of the image as one uvec3. The image is p.src_w x p.src_h, of which the
// buffer holds the pixels at least p.margin from every edge, packed p.src_w - 2 p.margin a row;
// the rest is the colour in the low three bytes of word p.fill_word (the includer's push constants).
uvec3 image_bgr(uint x, uint y)
{
    uint ix = x - p.margin, iy = y - p.margin, iw = p.src_w - 2u * p.margin;
    if (ix >= iw || iy >= p.src_h - 2u * p.margin) { // x or y within the margin (unsigned wrap)
        uint c = img[p.fill_word];
        return uvec3(c & 0xffu, (c >> 8) & 0xffu, (c >> 16) & 0xffu);
    }
    uint i = (iy * iw + ix) * 3u;
    return uvec3(image_byte(i), image_byte(i + 1u), image_byte(i + 2u));
}

#endif
