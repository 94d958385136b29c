/* The one list of the image formats decoded here: each one's name in messages, the first bytes of
 * its files and its file extensions (what a folder walk picks up). A format added here is sniffed,
 * named and listed everywhere; its decoder goes in image.c (and stb_image_impl.c). */
#include <string.h>
#include <strings.h>

#include "img/image_internal.h"

struct format_desc {
    const char *name;
    const char *signatures[2]; /* a file starts with one of these */
    const char *extensions[4];
};

static const struct format_desc formats[] = {
    [FMT_UNKNOWN] = {"image", {NULL}, {NULL}},
    [FMT_PNG] = {"PNG", {"\x89PNG\r\n\x1a\n"}, {"png"}},
    [FMT_JPEG] = {"JPEG", {"\xFF\xD8\xFF"}, {"jpg", "jpeg", "jpe"}},
    [FMT_GIF] = {"GIF", {"GIF87a", "GIF89a"}, {"gif"}},
    [FMT_BMP] = {"BMP", {"BM"}, {"bmp"}},
    /* P1-P4 and P7 are refused by name first (image_format_unsupported); .pbm files are listed so
     * that they are reported, not skipped */
    [FMT_PNM] = {"PNM", {"P5", "P6"}, {"pnm", "pbm", "pgm", "ppm"}},
    [FMT_TGA] = {"TGA", {NULL}, {"tga"}}, /* no signature: stb_image's own test decides */
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const char *image_format_name(enum image_format format)
{
    return formats[format].name;
}

enum image_format image_format_sniff(const uint8_t *p, size_t n)
{
    for (size_t f = 0; f < COUNT(formats); f++)
        for (size_t i = 0; i < COUNT(formats[f].signatures) && formats[f].signatures[i]; i++) {
            size_t len = strlen(formats[f].signatures[i]);
            if (n >= len && memcmp(p, formats[f].signatures[i], len) == 0)
                return (enum image_format)f;
        }
    return FMT_UNKNOWN;
}

const char *image_format_unsupported(const uint8_t *p, size_t n)
{
    if (n >= 12 && memcmp(p, "RIFF", 4) == 0 && memcmp(p + 8, "WEBP", 4) == 0)
        return "WebP";
    if (n >= 4 && (memcmp(p, "II*\0", 4) == 0 || memcmp(p, "MM\0*", 4) == 0))
        return "TIFF";
    if (n >= 12 && memcmp(p + 4, "ftyp", 4) == 0)
        return "HEIF/AVIF";
    if (n >= 4 && memcmp(p, "8BPS", 4) == 0)
        return "PSD";
    if (n >= 4 && memcmp(p, "%PDF", 4) == 0)
        return "PDF";
    if (n >= 12 && memcmp(p, "\0\0\0\x0cjP  ", 8) == 0)
        return "JPEG 2000";
    if (n >= 2 && p[0] == 'P' && p[1] >= '1' && p[1] <= '4')
        return "PNM in ASCII or 1-bit form (P1-P4; only P5/P6)";
    if (n >= 2 && p[0] == 'P' && p[1] == '7')
        return "PAM (P7)";
    return NULL;
}

int ppocr_image_has_known_extension(const char *name)
{
    const char *dot = strrchr(name, '.');
    if (!dot || dot == name)
        return 0;
    for (size_t f = 0; f < COUNT(formats); f++)
        for (size_t i = 0; i < COUNT(formats[f].extensions) && formats[f].extensions[i]; i++)
            if (strcasecmp(dot + 1, formats[f].extensions[i]) == 0)
                return 1;
    return 0;
}
