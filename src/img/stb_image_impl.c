/* The one definition of stb_image, limited to the formats img/image.c gives it, so that a hostile
 * PSD/HDR/PIC file never reaches a decoder nobody checked. JPEG goes to libjpeg (image_libjpeg.c). */
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

#include "img/image_internal.h"

int stb_format_info(enum image_format format, const uint8_t *data, int size, int *w, int *h, int *channels)
{
    stbi__context s;
    stbi__start_mem(&s, data, size);
    switch (format) {
    case FMT_PNG: return stbi__png_info(&s, w, h, channels);
    case FMT_GIF: return stbi__gif_info(&s, w, h, channels);
    case FMT_BMP: return stbi__bmp_info(&s, w, h, channels);
    case FMT_PNM: return stbi__pnm_info(&s, w, h, channels);
    case FMT_TGA: return stbi__tga_info(&s, w, h, channels);
    default: return stbi__err("unknown image type", "Image not of any known type, or corrupt");
    }
}
