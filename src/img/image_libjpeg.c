/* JPEG decoding through libjpeg-turbo, set up as cv2.imread(path, IMREAD_COLOR) sets it up.
 *
 * Why libjpeg and not stb_image: PaddleOCR reads images with cv2.imread, whose JPEG decoder is
 * libjpeg-turbo (ISLOW integer IDCT, "fancy" triangle-filter chroma upsampling). stb_image's IDCT and
 * upsampling differ from it by up to 3 levels, and that is enough to move a detected box by 4 px on
 * real pages. With the same library and the same settings the pixels are identical.
 *
 * Settings mirrored from OpenCV's JpegDecoder::readData (grfmt_jpeg.cpp): libjpeg's defaults
 * (JDCT_ISLOW, do_fancy_upsampling TRUE), RGB output for 1- and 3-component files (gray is replicated
 * by libjpeg), and for 4-component files (Adobe CMYK or YCCK) libjpeg's CMYK output turned into colour
 * by OpenCV's icvCvt_CMYK2BGR_8u_C4C3R formula (no colour management).
 *
 * Errors: libjpeg's default error handler prints and calls exit(); here every error longjmps back
 * and becomes a status and a one-line message. Warnings are silent and the decode goes on, as in
 * cv2.imread, except "premature end of JPEG file": libjpeg would fill the rest of the image with
 * gray, and truncated files are refused (see image.h). */
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jerror.h>
#include <jpeglib.h>

#include "img/image_internal.h"

/* Real progressive files have about ten scans; a hostile one can have thousands of tiny scans, each
 * a pass over the whole coefficient buffer. libjpeg-turbo's own fuzzers stop at 500 too. */
#define MAX_SCANS 500

struct decoder {
    struct jpeg_error_mgr err; /* first: libjpeg hands back cinfo->err, which is this struct */
    struct jpeg_progress_mgr progress;
    jmp_buf jump;
    int truncated;      /* libjpeg ran out of data */
    int too_many_scans; /* the progress monitor stopped it */
};

static void on_error(j_common_ptr c)
{
    longjmp(((struct decoder *)c->err)->jump, 1);
}

static void on_message(j_common_ptr c, int level)
{
    struct decoder *d = (struct decoder *)c->err;
    if (level < 0 && d->err.msg_code == JWRN_JPEG_EOF) {
        d->truncated = 1;
        longjmp(d->jump, 1);
    }
    /* other warnings (corrupt entropy data, extraneous bytes): decoded anyway, as cv2.imread does;
     * nothing is printed from a library */
}

static void on_output(j_common_ptr c)
{
    (void)c;
}

static void on_progress(j_common_ptr c)
{
    j_decompress_ptr cinfo = (j_decompress_ptr)c;
    struct decoder *d = (struct decoder *)c->err;
    if (cinfo->input_scan_number > MAX_SCANS) {
        d->too_many_scans = 1;
        longjmp(d->jump, 1);
    }
}

/* The status and message of a libjpeg failure. */
static enum ppocr_status failure(j_decompress_ptr cinfo, struct decoder *d, int in_data, const char *name, char *err,
                                 size_t err_len)
{
    const char *stage = in_data ? "data" : "header";
    if (d->truncated) {
        snprintf(err, err_len, "%s: truncated JPEG (the data ends inside the %s)", name,
                 in_data ? "compressed image data" : "header");
        return PPOCR_ERR_TRUNCATED;
    }
    if (d->too_many_scans) {
        snprintf(err, err_len, "%s: corrupt JPEG data (more than %d progressive scans)", name, MAX_SCANS);
        return PPOCR_ERR_CORRUPT;
    }
    char msg[JMSG_LENGTH_MAX];
    d->err.format_message((j_common_ptr)cinfo, msg);
    for (char *c = msg; *c; c++) /* one printable line, whatever libjpeg formats into it */
        if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7E)
            *c = '?';
    switch (d->err.msg_code) {
    case JERR_OUT_OF_MEMORY:
        snprintf(err, err_len, "%s: out of memory decoding the JPEG (%s)", name, msg);
        return PPOCR_ERR_NO_MEMORY;
    case JERR_IMAGE_TOO_BIG:
    case JERR_WIDTH_OVERFLOW:
        snprintf(err, err_len, "%s: JPEG too large to decode (%s)", name, msg);
        return PPOCR_ERR_TOO_LARGE;
    case JERR_BAD_PRECISION:
    case JERR_ARITH_NOTIMPL:
    case JERR_NOT_COMPILED:
    case JERR_CONVERSION_NOTIMPL:
        snprintf(err, err_len, "%s: unsupported JPEG variant (%s)", name, msg);
        return PPOCR_ERR_UNSUPPORTED;
    default: snprintf(err, err_len, "%s: corrupt JPEG %s (%s)", name, stage, msg); return PPOCR_ERR_CORRUPT;
    }
}

/* OpenCV's icvCvt_CMYK2BGR_8u_C4C3R, written as RGB: libjpeg gives Adobe's inverted CMYK (255 = no
 * ink), so each channel is about value * k / 255. */
static void cmyk_to_rgb(const uint8_t *cmyk, uint8_t *rgb, int w)
{
    for (int x = 0; x < w; x++, cmyk += 4, rgb += 3) {
        int k = cmyk[3];
        for (int c = 0; c < 3; c++)
            rgb[c] = (uint8_t)(k - ((255 - cmyk[c]) * k >> 8));
    }
}

enum ppocr_status libjpeg_decode(const uint8_t *data, size_t size, const char *name, int *w, int *h, uint8_t **rgb,
                                 char *err, size_t err_len)
{
    struct jpeg_decompress_struct cinfo;
    struct decoder d;
    /* changed after setjmp and read after longjmp: volatile, so longjmp cannot leave a stale copy */
    uint8_t *volatile out = NULL;
    volatile int in_data = 0;
    if (rgb)
        *rgb = NULL;
    memset(&cinfo, 0, sizeof cinfo); /* jpeg_destroy_decompress is safe on it even if create fails */
    memset(&d, 0, sizeof d);
    cinfo.err = jpeg_std_error(&d.err);
    d.err.error_exit = on_error;
    d.err.emit_message = on_message;
    d.err.output_message = on_output;
    d.progress.progress_monitor = on_progress;
    if (setjmp(d.jump)) {
        enum ppocr_status st = failure(&cinfo, &d, in_data, name, err, err_len);
        jpeg_destroy_decompress(&cinfo); /* frees everything libjpeg allocated, in any state */
        free(out);
        return st;
    }
    jpeg_create_decompress(&cinfo);
    cinfo.progress = &d.progress;
    jpeg_mem_src(&cinfo, data, (unsigned long)size);
    jpeg_read_header(&cinfo, TRUE);
    if (!rgb) { /* header only: the size, checked against the limits by the caller */
        *w = (int)cinfo.image_width;
        *h = (int)cinfo.image_height;
        jpeg_destroy_decompress(&cinfo);
        return PPOCR_OK;
    }
    if ((int)cinfo.image_width != *w || (int)cinfo.image_height != *h) { /* never decode past the checked size */
        jpeg_destroy_decompress(&cinfo);
        snprintf(err, err_len, "%s: corrupt JPEG (inconsistent size)", name);
        return PPOCR_ERR_CORRUPT;
    }
    int cmyk = cinfo.num_components == 4; /* OpenCV's test: CMYK and YCCK both come out as CMYK */
    cinfo.out_color_space = cmyk ? JCS_CMYK : JCS_RGB;
    cinfo.dct_method = JDCT_ISLOW;
    cinfo.do_fancy_upsampling = TRUE;
    in_data = 1;
    jpeg_start_decompress(&cinfo);
    size_t stride = (size_t)*w * 3;
    out = malloc(stride * (size_t)*h);
    if (!out) {
        jpeg_destroy_decompress(&cinfo);
        snprintf(err, err_len, "%s: out of memory for a %dx%d image", name, *w, *h);
        return PPOCR_ERR_NO_MEMORY;
    }
    /* the CMYK row lives in libjpeg's image pool: jpeg_destroy_decompress frees it on every path */
    JSAMPARRAY row = cmyk ? cinfo.mem->alloc_sarray((j_common_ptr)&cinfo, JPOOL_IMAGE, (JDIMENSION)*w * 4, 1) : NULL;
    while (cinfo.output_scanline < cinfo.output_height) {
        uint8_t *dst = out + (size_t)cinfo.output_scanline * stride;
        JSAMPROW rows[1] = {dst};
        /* the memory source never suspends, so 0 rows cannot happen: guarded all the same, a loop
         * that stops advancing would never end */
        if (jpeg_read_scanlines(&cinfo, cmyk ? row : rows, 1) != 1) {
            jpeg_destroy_decompress(&cinfo);
            free(out);
            snprintf(err, err_len, "%s: corrupt JPEG data (the decoder stopped early)", name);
            return PPOCR_ERR_CORRUPT;
        }
        if (cmyk)
            cmyk_to_rgb(row[0], dst, *w);
    }
    jpeg_finish_decompress(&cinfo);
    jpeg_destroy_decompress(&cinfo);
    *rgb = out;
    return PPOCR_OK;
}
