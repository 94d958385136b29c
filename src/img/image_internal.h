/* Helpers shared by the files of img/: not part of the public API. */
#ifndef PPOCR_IMG_IMAGE_INTERNAL_H
#define PPOCR_IMG_IMAGE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "img/image.h"

/* The containers decoded here (JPEG by libjpeg, the others by stb_image); their names, signatures
 * and file extensions are listed once, in image_formats.c. */
enum image_format { FMT_UNKNOWN, FMT_PNG, FMT_JPEG, FMT_GIF, FMT_BMP, FMT_PNM, FMT_TGA };
/* The format's name in messages ("PNG"...; "image" for FMT_UNKNOWN). */
const char *image_format_name(enum image_format format);
/* The format the first bytes announce; FMT_UNKNOWN also for TGA, which has no signature. */
enum image_format image_format_sniff(const uint8_t *data, size_t size);
/* Formats people feed OCR tools that this build cannot decode (WebP, TIFF, ASCII PNM...), named for
 * the error; NULL when the data is none of them. */
const char *image_format_unsupported(const uint8_t *data, size_t size);

/* stb_image's header parser of one format (so that its failure reason is that format's, not the
 * last of all the parsers stbi_info tries). Not for JPEG. Returns 1 and the size, or 0. */
int stb_format_info(enum image_format format, const uint8_t *data, int size, int *w, int *h, int *channels);

/* How a JPEG's marker structure ends. */
enum jpeg_walk_result {
    JPEG_WALK_COMPLETE,    /* reached EOI */
    JPEG_WALK_TRUNCATED,   /* the data ends before EOI */
    JPEG_WALK_MALFORMED,   /* not the marker layout a JPEG has; libjpeg decides */
    JPEG_WALK_BAD_HUFFMAN, /* a DHT table with more than 256 codes (libjpeg refuses it too) */
};
/* The first SOFn frame header of a JPEG. */
struct jpeg_frame {
    int marker;        /* 0xC0..0xCF, 0 when none was seen */
    int width, height; /* as the frame header says them */
};
/* Walks the markers of a JPEG (SOI already checked); reports the EXIF orientation (1-8, else 1)
 * and the first frame header. */
enum jpeg_walk_result jpeg_walk(const uint8_t *data, size_t size, int *orientation, struct jpeg_frame *frame);

/* Decodes a JPEG with libjpeg-turbo as cv2.imread does (image_libjpeg.c). With rgb NULL, only reads
 * the header and gives its size in *w, *h; otherwise the header must say *w x *h (already checked
 * against the limits) and *rgb gets w*h*3 malloc'd RGB bytes. Every libjpeg error, and the data
 * ending early, becomes a status and a one-line message. */
enum ppocr_status libjpeg_decode(const uint8_t *data, size_t size, const char *name, int *w, int *h, uint8_t **rgb,
                                 char *err, size_t err_len);

/* A PNG's chunk list, walked before stb_image sees it: a chunk running past the end would make it
 * allocate what the length field claims. */
enum png_walk_result { PNG_WALK_COMPLETE, PNG_WALK_TRUNCATED, PNG_WALK_CORRUPT };
/* *needs_rewrite: the PNG must go through png_rewrite_for_stb before stb_image sees it. */
enum png_walk_result png_walk(const uint8_t *data, size_t size, int *needs_rewrite);
/* Copies a complete PNG without its zero-length IDAT chunks (stb_image 2.27 memcpy()s from a null
 * buffer on an empty first IDAT) and with a short palette filled to 256 entries (stb_image would
 * read the colour of an index past it from an uninitialised table). png_walk refuses a second
 * palette, so out needs room for size + 768 bytes. Returns the new size. */
size_t png_rewrite_for_stb(const uint8_t *data, size_t size, uint8_t *out);

/* A BMP's headers against its size: the pixel data must start after the headers (and palette) and
 * hold every uncompressed row the header announces. */
enum bmp_layout_result { BMP_LAYOUT_OK, BMP_LAYOUT_TRUNCATED, BMP_LAYOUT_BAD_OFFSET };
enum bmp_layout_result bmp_layout(const uint8_t *data, size_t size);
/* Whether the data is shorter than its header says (1) or not (0, also when it cannot tell). */
int tga_truncated(const uint8_t *data, size_t size); /* pixels (or RLE packets) missing */
int gif_truncated(const uint8_t *data, size_t size); /* the first image's data cut off */

/* A binary PNM (P5/P6) header. */
struct pnm_layout {
    int maxval;                     /* 0 when it is 0 or missing: no PNM has it */
    int channels, bytes_per_sample; /* 2 bytes (big-endian) when maxval > 255 */
    size_t data_offset;
    unsigned long long data_bytes;
};
int pnm_layout(const uint8_t *data, size_t size, struct pnm_layout *layout);
/* Whether the width, height or maxval of a P5/P6 header is over INT_MAX. */
int pnm_number_overflows(const uint8_t *data, size_t size);

/* Reads fd to its end into a malloc'd buffer (at most PPOCR_IMAGE_MAX_FILE_BYTES). */
enum ppocr_status read_fd_bytes(int fd, const char *name, uint8_t **data, size_t *size, char *err, size_t err_len);

#endif
