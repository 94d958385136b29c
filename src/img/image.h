/* Image decoding to the 8-bit BGR pixels PaddleOCR works on (what cv2.imread(path) returns).
 *
 * Formats: JPEG with libjpeg-turbo, the decoder of cv2.imread (baseline and progressive; gray, YCbCr,
 * CMYK/YCCK; EXIF orientation applied as cv2.imread does); with stb_image: PNG (1-16 bit; gray,
 * gray+alpha, palette, RGB, RGBA), BMP, GIF (first frame), binary PNM (P5/P6) and TGA. 16-bit samples
 * keep their high byte (cv2.IMREAD_COLOR). Gray is replicated to three channels.
 *
 * Limits, checked from the header before any pixel memory is allocated: a side of at most
 * OCR_IMAGE_MAX_SIDE and at most OCR_IMAGE_MAX_PIXELS pixels; files of at most
 * OCR_IMAGE_MAX_FILE_BYTES. Peak memory of a decode is the file bytes + the decoder's buffer
 * (up to 12 bytes a pixel for 16-bit RGBA PNG, 3-4 otherwise; a progressive JPEG adds its
 * coefficients, 2 bytes a sample) + the 3-byte BGR result.
 *
 * Fidelity to the reference decoder (ref_ocr.mjs, = cv2.imread): PNG, BMP, PNM, TGA, GIF and JPEG
 * pixels are identical (JPEG: the same libjpeg-turbo settings as cv2.imread, ISLOW IDCT and fancy
 * upsampling; checked byte for byte on every JPEG of tests/data). CMYK JPEG uses cv2's naive
 * CMYK -> BGR formula, not colour management.
 *
 * Truncated files are refused (libjpeg would fill the missing part of a JPEG with gray, stb_image
 * that of a BMP, TGA, GIF or PNM with zeros or leave it unset). Other JPEG damage that libjpeg only
 * warns about (corrupt entropy data, stray bytes) is decoded as cv2.imread decodes it.
 *
 * Every failure returns a status naming the reason and a one-line message; nothing aborts. */
#ifndef PPOCR_IMG_IMAGE_H
#define PPOCR_IMG_IMAGE_H

#include <stddef.h>
#include <stdint.h>

#define OCR_IMAGE_MAX_SIDE 32768
#define OCR_IMAGE_MAX_PIXELS 100000000LL /* 100 megapixels */
#define OCR_IMAGE_MAX_FILE_BYTES (1LL << 30)

struct ocr_image {
    int width, height;
    uint8_t *bgr;  /* width*height*3 bytes, rows top to bottom, no padding */
    int had_alpha; /* the file carried an alpha channel (or a tRNS transparent colour) */
};

enum ocr_alpha_mode {
    /* Colour channels as stored, alpha ignored: exactly cv2.imread(path, IMREAD_COLOR). */
    OCR_ALPHA_IGNORE = 0,
    /* Flatten so that content carried by alpha stays visible: when the colour channels are one
     * constant colour wherever alpha > 0 (text drawn only in the alpha channel), alpha is the ink:
     * gray = 255 - alpha (dark ink on white). Otherwise the pixels are composited onto white, or
     * onto black when the alpha-weighted foreground is light (white text on transparent). */
    OCR_ALPHA_FLATTEN = 1,
};

enum ocr_image_status {
    OCR_IMAGE_OK = 0,
    OCR_IMAGE_ERR_NOT_FOUND,      /* no such file */
    OCR_IMAGE_ERR_PERMISSION,     /* permission denied */
    OCR_IMAGE_ERR_IS_DIRECTORY,   /* a directory was given */
    OCR_IMAGE_ERR_IO,             /* any other read error */
    OCR_IMAGE_ERR_EMPTY,          /* zero bytes */
    OCR_IMAGE_ERR_UNKNOWN_FORMAT, /* not an image this program knows */
    OCR_IMAGE_ERR_UNSUPPORTED,    /* a known format or variant that cannot be decoded (WebP, TIFF, P1-P4 PNM, 12-bit JPEG...) */
    OCR_IMAGE_ERR_TRUNCATED,      /* the data ends early */
    OCR_IMAGE_ERR_CORRUPT,        /* the data is inconsistent */
    OCR_IMAGE_ERR_TOO_LARGE,      /* over the limits above */
    OCR_IMAGE_ERR_NO_MEMORY,
};

/* Decodes `path`. `name` in messages is the path. Returns OCR_IMAGE_OK and fills `img` (free with
 * ocr_image_free), or a status with a one-line reason in err (no trailing newline). */
enum ocr_image_status ocr_image_load_file(const char *path, enum ocr_alpha_mode alpha, struct ocr_image *img,
                                          char *err, size_t err_len);
/* Reads fd to its end (a pipe, stdin, a file) and decodes it; `name` is used in messages. Reads
 * interrupted by a signal are retried: a caller that must stop on one reads the bytes itself and
 * decodes them with ocr_image_load_memory (as the CLI does for stdin). fd stays open. */
enum ocr_image_status ocr_image_load_fd(int fd, const char *name, enum ocr_alpha_mode alpha, struct ocr_image *img,
                                        char *err, size_t err_len);
/* Decodes encoded bytes already in memory. */
enum ocr_image_status ocr_image_load_memory(const void *data, size_t size, const char *name, enum ocr_alpha_mode alpha,
                                            struct ocr_image *img, char *err, size_t err_len);
void ocr_image_free(struct ocr_image *img);

/* Whether a file name ends in the extension of a format decoded here (case-insensitive, image_formats.c):
 * the files a folder walk picks up. */
int ocr_image_has_known_extension(const char *name);

/* EXIF orientation (1-8) of a JPEG's first APP1 Exif segment; 1 when absent or unreadable. */
int ocr_jpeg_exif_orientation(const uint8_t *data, size_t size);

#endif
