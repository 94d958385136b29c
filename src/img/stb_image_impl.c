/* The one definition of stb_image, limited to the formats img/image.c gives it, so that a hostile
 * PSD/HDR/PIC file never reaches a decoder nobody checked. JPEG goes to libjpeg (image_libjpeg.c).
 * The header is third_party/stb_image.h: 2.27 with fixes of its own defects, each marked
 * "ppocr-vk:" (never-written bytes given as pixels, a zlib output without bound). */
#include <limits.h>

#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#define STBI_ONLY_BMP
#define STBI_ONLY_GIF
#define STBI_ONLY_PNM
#define STBI_ONLY_TGA
#define STBI_NO_STDIO             /* files are read by image_read.c, with errors of our own */
#define STBI_MAX_DIMENSIONS 32768 /* PPOCR_IMAGE_MAX_SIDE: stb refuses the same sides itself */

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wmisleading-indentation"
#pragma GCC diagnostic ignored "-Wtype-limits"
#include <stb_image.h>
#pragma GCC diagnostic pop
#ifndef PPOCR_VK_STB_IMAGE
#error "stb_image.h is not src/img/third_party's: its fixes would be missing"
#endif

#include "img/image_internal.h"

int stb_format_info(enum image_format format, const uint8_t *data, int size, int *w, int *h, int *channels)
{
    stbi__context s;
    stbi__start_mem(&s, data, size);
    switch (format) {
    case FMT_PNG: return stbi__png_info(&s, w, h, channels);
    case FMT_GIF: return stbi__gif_info(&s, w, h, channels);
    case FMT_BMP:
        if (!stbi__bmp_info(&s, w, h, channels))
            return 0;
        /* a top-down BMP stores its height negated; stbi__bmp_load reads it the same way (INT_MIN,
         * which has no positive, stays negative and is refused) */
        if (*h < 0 && *h != INT_MIN)
            *h = -*h;
        return 1;
    case FMT_PNM: return stbi__pnm_info(&s, w, h, channels);
    case FMT_TGA: return stbi__tga_info(&s, w, h, channels);
    default: return stbi__err("unknown image type", "Image not of any known type, or corrupt");
    }
}
