/* Decoding encoded image bytes to BGR, mirroring cv2.imread(IMREAD_COLOR): JPEG with libjpeg-turbo
 * (image_libjpeg.c, the library cv2.imread uses), the other formats with stb_image. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#include <stb_image.h>
#pragma GCC diagnostic pop
#ifndef PPOCR_VK_STB_IMAGE
#error "stb_image.h is not src/img/third_party's: its fixes would be missing"
#endif

#include "img/image_internal.h"

static int is_unsupported_reason(const char *r)
{
    static const char *const reasons[] = {
        "only 8-bit",         "no header height", "max value > 65535", "unsupported data layout",
        "unsupported format", "unknown BMP",      "BMP RLE",           "BMP JPEG/PNG"};
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; i++)
        if (strcmp(r, reasons[i]) == 0)
            return 1;
    return 0;
}

/* Turns a failure of stb_image into a status and message. */
static enum ppocr_status stb_failure(enum image_format fmt, const char *name, const char *stage, char *err,
                                     size_t err_len)
{
    /* stb_image puts the bytes of an unknown chunk type into its reason: keep the message one printable line */
    char r[64];
    snprintf(r, sizeof r, "%s", stbi_failure_reason() ? stbi_failure_reason() : "unknown error");
    for (char *c = r; *c; c++)
        if ((unsigned char)*c < 0x20 || (unsigned char)*c > 0x7E)
            *c = '?';
    const char *f = image_format_name(fmt);
    if (strcmp(r, "outofmem") == 0) {
        snprintf(err, err_len, "%s: out of memory decoding the %s", name, f);
        return PPOCR_ERR_NO_MEMORY;
    }
    if (strcmp(r, "too large") == 0) {
        snprintf(err, err_len, "%s: %s too large to decode (the limit is %d pixels a side)", name, f,
                 PPOCR_IMAGE_MAX_SIDE);
        return PPOCR_ERR_TOO_LARGE;
    }
    if (is_unsupported_reason(r)) {
        snprintf(err, err_len, "%s: unsupported %s variant (%s)", name, f, r);
        return PPOCR_ERR_UNSUPPORTED;
    }
    snprintf(err, err_len, "%s: corrupt %s %s (%s)", name, f, stage, r);
    return PPOCR_ERR_CORRUPT;
}

/* Where output pixel (x, y) comes from in the stored image, for each EXIF orientation:
 * sx = ax*x + bx*y + cx*(w-1), sy = ay*x + by*y + cy*(h-1). 5-8 swap width and height. */
static const signed char orient_map[9][6] = {
    {0},                  /* unused */
    {1, 0, 0, 0, 1, 0},   /* 1: as stored */
    {-1, 0, 1, 0, 1, 0},  /* 2: mirrored left-right */
    {-1, 0, 1, 0, -1, 1}, /* 3: turned 180 */
    {1, 0, 0, 0, -1, 1},  /* 4: mirrored top-bottom */
    {0, 1, 0, 1, 0, 0},   /* 5: transposed */
    {0, 1, 0, -1, 0, 1},  /* 6: turned 90 clockwise to display */
    {0, -1, 1, -1, 0, 1}, /* 7: transversed */
    {0, -1, 1, 1, 0, 0},  /* 8: turned 90 counter-clockwise to display */
};

/* How alpha is folded into the colour of each pixel. */
struct flatten {
    enum { KEEP_COLOUR, ALPHA_IS_INK, COMPOSITE } kind; /* ALPHA_IS_INK: gray = 255 - alpha */
    int background;                                     /* COMPOSITE onto this gray level */
};

static struct flatten choose_flatten(const uint8_t *pix, size_t count, int n)
{
    struct flatten fl = {KEEP_COLOUR, 255};
    int has_gray = n < 3;
    const uint8_t *first = NULL;
    int varies = 0, translucent = 0;
    double lum_sum = 0, a_sum = 0;
    for (size_t i = 0; i < count; i++) {
        const uint8_t *q = pix + i * (size_t)n;
        int a = q[n - 1];
        if (a < 255)
            translucent = 1;
        if (a == 0)
            continue;
        if (!first)
            first = q;
        else if (memcmp(first, q, (size_t)n - 1) != 0)
            varies = 1;
        double lum = has_gray ? q[0] : 0.299 * q[0] + 0.587 * q[1] + 0.114 * q[2];
        lum_sum += lum * a;
        a_sum += a;
    }
    if (!translucent)
        return fl;
    if (!varies)
        fl.kind = ALPHA_IS_INK;
    else {
        fl.kind = COMPOSITE;
        fl.background = a_sum > 0 && lum_sum / a_sum > 127.5 ? 0 : 255;
    }
    return fl;
}

/* The decoder's n-channel RGB(A)/gray(A) pixels -> oriented BGR, alpha folded as `fl` says. */
static void to_bgr(const uint8_t *pix, int w, int h, int n, int orientation, struct flatten fl, uint8_t *out, int out_w,
                   int out_h)
{
    const signed char *m = orient_map[orientation];
    ptrdiff_t step_x = ((ptrdiff_t)m[3] * w + m[0]) * n;
    for (int y = 0; y < out_h; y++) {
        ptrdiff_t sx = (ptrdiff_t)m[1] * y + m[2] * (w - 1), sy = (ptrdiff_t)m[4] * y + m[5] * (h - 1);
        const uint8_t *q = pix + (sy * w + sx) * n;
        uint8_t *d = out + (size_t)y * out_w * 3;
        for (int x = 0; x < out_w; x++, q += step_x, d += 3) {
            int r = q[0], g = n >= 3 ? q[1] : q[0], b = n >= 3 ? q[2] : q[0];
            if (fl.kind == ALPHA_IS_INK) {
                r = g = b = 255 - q[n - 1];
            } else if (fl.kind == COMPOSITE) {
                int a = q[n - 1], bg = fl.background * (255 - a) + 127;
                r = (r * a + bg) / 255;
                g = (g * a + bg) / 255;
                b = (b * a + bg) / 255;
            }
            d[0] = (uint8_t)b;
            d[1] = (uint8_t)g;
            d[2] = (uint8_t)r;
        }
    }
}

/* RGB pixels into BGR, in place. */
static void swap_red_blue(uint8_t *p, size_t count)
{
    for (size_t i = 0; i < count; i++, p += 3) {
        const uint8_t r = p[0];
        p[0] = p[2];
        p[2] = r;
    }
}

/* count gray bytes at the start of p (which has room for 3 count) into BGR, in place: from the
 * last pixel back, so that no byte is written before it is read. */
static void gray_to_bgr(uint8_t *p, size_t count)
{
    for (size_t i = count; i-- > 0;) {
        const uint8_t g = p[i];
        p[3 * i] = p[3 * i + 1] = p[3 * i + 2] = g;
    }
}

/* Whether w x h is over the documented limits; if so, err says so. */
static int too_large(unsigned long long w, unsigned long long h, const char *name, char *err, size_t err_len)
{
    if (w <= PPOCR_IMAGE_MAX_SIDE && h <= PPOCR_IMAGE_MAX_SIDE && w * h <= (unsigned long long)PPOCR_IMAGE_MAX_PIXELS)
        return 0;
    snprintf(err, err_len, "%s: image too large (%llux%llu; the limit is %lld pixels and %d a side)", name, w, h,
             PPOCR_IMAGE_MAX_PIXELS, PPOCR_IMAGE_MAX_SIDE);
    return 1;
}

static int any_alpha_below_255(const uint8_t *pix, size_t count, int n)
{
    for (size_t i = 0; i < count; i++)
        if (pix[i * (size_t)n + (size_t)n - 1] != 255)
            return 1;
    return 0;
}

/* What the header says, once every check that needs no pixel memory has passed. */
struct header {
    enum image_format fmt;
    int w, h, channels;
    int orientation; /* EXIF, JPEG only */
};

#define FAIL(status, ...) (snprintf(err, err_len, __VA_ARGS__), (status))

/* A JPEG's header checks: the marker walk (frame size against the limits, variant, truncation),
 * then libjpeg's own header parse. */
static enum ppocr_status check_jpeg_header(const uint8_t *p, size_t size, const char *name, struct header *hd,
                                           char *err, size_t err_len)
{
    struct jpeg_frame frame;
    enum jpeg_walk_result walk = jpeg_walk(p, size, &hd->orientation, &frame);
    if (walk == JPEG_WALK_BAD_HUFFMAN)
        return FAIL(PPOCR_ERR_CORRUPT, "%s: corrupt JPEG header (bad Huffman table)", name);
    int sof = frame.marker;
    if (sof && sof != 0xC0 && sof != 0xC1 && sof != 0xC2)
        return FAIL(PPOCR_ERR_UNSUPPORTED, "%s: unsupported JPEG variant (SOF%d: %s)", name, sof - 0xC0,
                    sof >= 0xC9 && sof != 0xCB ? "arithmetic coding" : "lossless or hierarchical coding");
    /* the frame header's claim, before libjpeg allocates anything for it (even when the rest is missing) */
    if (sof && too_large((unsigned long long)frame.width, (unsigned long long)frame.height, name, err, err_len))
        return PPOCR_ERR_TOO_LARGE;
    if (walk == JPEG_WALK_TRUNCATED && !sof)
        return FAIL(PPOCR_ERR_TRUNCATED, "%s: truncated JPEG (the data ends inside the header)", name);
    enum ppocr_status st = libjpeg_decode(p, size, name, &hd->w, &hd->h, NULL, err, err_len);
    if (st != PPOCR_OK)
        return st;
    hd->fmt = FMT_JPEG;
    hd->channels = 3;
    if (too_large((unsigned long long)hd->w, (unsigned long long)hd->h, name, err, err_len))
        return PPOCR_ERR_TOO_LARGE;
    /* libjpeg would only warn at the end of the data and fill the rest with gray: refuse it rather
     * than read an image that is not there */
    if (walk == JPEG_WALK_TRUNCATED)
        return FAIL(PPOCR_ERR_TRUNCATED, "%s: truncated JPEG (the data ends before the end-of-image marker)", name);
    return PPOCR_OK;
}

/* Signature, container layout, size limits: everything that can be refused before decoding. */
static enum ppocr_status check_header(const uint8_t *p, size_t size, const char *name, struct header *hd, char *err,
                                      size_t err_len)
{
    memset(hd, 0, sizeof *hd);
    hd->orientation = 1;
    if (size == 0)
        return FAIL(PPOCR_ERR_EMPTY, "%s: empty file (0 bytes)", name);
    const char *other = image_format_unsupported(p, size);
    if (other)
        return FAIL(PPOCR_ERR_UNSUPPORTED, "%s: unsupported image format: %s", name, other);
    if (size > INT_MAX)
        return FAIL(PPOCR_ERR_TOO_LARGE, "%s: file too large (%zu bytes)", name, size);
    enum image_format fmt = image_format_sniff(p, size);
    int rewrite;
    if (fmt == FMT_JPEG)
        return check_jpeg_header(p, size, name, hd, err, err_len);
    /* stb_image refuses large PNG headers in its own words (and at its own bound): ours come first */
    if (fmt == FMT_PNG && size >= 24 && memcmp(p + 12, "IHDR", 4) == 0) {
        unsigned long long pw = (unsigned long long)p[16] << 24 | p[17] << 16 | p[18] << 8 | p[19];
        unsigned long long ph = (unsigned long long)p[20] << 24 | p[21] << 16 | p[22] << 8 | p[23];
        if (too_large(pw, ph, name, err, err_len))
            return PPOCR_ERR_TOO_LARGE;
    }
    /* stb_image 2.27 reads the numbers of a PNM header into an int with no overflow check (2.28 has
     * one): a number that does not fit is refused here first */
    if (fmt == FMT_PNM && pnm_number_overflows(p, size))
        return FAIL(PPOCR_ERR_CORRUPT, "%s: corrupt PNM header (a number out of range)", name);
    if (!stb_format_info(fmt == FMT_UNKNOWN ? FMT_TGA : fmt, p, (int)size, &hd->w, &hd->h, &hd->channels)) {
        if (fmt == FMT_UNKNOWN)
            return FAIL(PPOCR_ERR_UNKNOWN_FORMAT, "%s: not an image (unknown format)", name);
        const char *r = stbi_failure_reason();
        int specific = r && (strcmp(r, "too large") == 0 || strcmp(r, "outofmem") == 0 || is_unsupported_reason(r));
        if (!specific && fmt == FMT_PNG && png_walk(p, size, &rewrite) == PNG_WALK_TRUNCATED)
            return FAIL(PPOCR_ERR_TRUNCATED, "%s: truncated %s (the data ends inside the header)", name,
                        image_format_name(fmt));
        return stb_failure(fmt, name, "header", err, err_len);
    }
    hd->fmt = fmt = fmt == FMT_UNKNOWN ? FMT_TGA : fmt;
    if (hd->w <= 0 || hd->h <= 0)
        return FAIL(PPOCR_ERR_CORRUPT, "%s: corrupt %s header (%dx%d pixels)", name, image_format_name(fmt), hd->w,
                    hd->h);
    if (too_large((unsigned long long)hd->w, (unsigned long long)hd->h, name, err, err_len))
        return PPOCR_ERR_TOO_LARGE;
    enum bmp_layout_result bmp = fmt == FMT_BMP ? bmp_layout(p, size) : BMP_LAYOUT_OK;
    if (bmp == BMP_LAYOUT_BAD_OFFSET)
        return FAIL(PPOCR_ERR_CORRUPT,
                    "%s: corrupt BMP header (the pixel data offset points inside the headers or palette)", name);
    struct pnm_layout pnm;
    int pnm_known = fmt == FMT_PNM && pnm_layout(p, size, &pnm) == 0;
    if (pnm_known && pnm.maxval == 0) /* stb_image would take it for 255 */
        return FAIL(PPOCR_ERR_CORRUPT, "%s: corrupt PNM header (maxval 0)", name);
    /* stb_image decodes cut-off BMP, TGA, GIF and PNM pixels as if the rest were zeros (or leaves
     * them unwritten): refuse them rather than read garbage */
    if (bmp == BMP_LAYOUT_TRUNCATED || (fmt == FMT_TGA && tga_truncated(p, size)) ||
        (fmt == FMT_GIF && gif_truncated(p, size)) || (pnm_known && size - pnm.data_offset < pnm.data_bytes))
        return FAIL(PPOCR_ERR_TRUNCATED, "%s: truncated %s (the pixel data ends early)", name, image_format_name(fmt));
    if (fmt == FMT_PNG) {
        /* a chunk running past the end would make stb_image allocate what its length field claims */
        enum png_walk_result chunks = png_walk(p, size, &rewrite);
        if (chunks == PNG_WALK_TRUNCATED)
            return FAIL(PPOCR_ERR_TRUNCATED, "%s: truncated PNG (the data ends before the IEND chunk)", name);
        if (chunks == PNG_WALK_CORRUPT)
            return FAIL(PPOCR_ERR_CORRUPT, "%s: corrupt PNG (damaged chunk list)", name);
    }
    return PPOCR_OK;
}

/* The stored pixels, 8 bits a sample, hd->channels interleaved (gray, gray+alpha, RGB or RGBA). */
static enum ppocr_status decode_pixels(const uint8_t *p, size_t size, const char *name, struct header *hd,
                                       uint8_t **pix, char *err, size_t err_len)
{
    if (hd->fmt == FMT_JPEG)
        return libjpeg_decode(p, size, name, &hd->w, &hd->h, pix, err, err_len);
    struct pnm_layout pnm;
    if (hd->fmt == FMT_PNM && pnm_layout(p, size, &pnm) == 0 && pnm.bytes_per_sample == 2) {
        /* stb_image 2.27 reads 16-bit PNM samples in host byte order; they are big-endian: keep the high byte */
        size_t n = (size_t)hd->w * hd->h * pnm.channels;
        if (!(*pix = malloc(n)))
            return FAIL(PPOCR_ERR_NO_MEMORY, "%s: out of memory for a %dx%d image", name, hd->w, hd->h);
        for (size_t i = 0; i < n; i++)
            (*pix)[i] = p[pnm.data_offset + 2 * i];
        hd->channels = pnm.channels;
        return PPOCR_OK;
    }
    uint8_t *copy = NULL;
    int rewrite;
    if (hd->fmt == FMT_PNG && png_walk(p, size, &rewrite) == PNG_WALK_COMPLETE && rewrite) {
        if (!(copy = malloc(size + 768)))
            return FAIL(PPOCR_ERR_NO_MEMORY, "%s: out of memory", name);
        size = png_rewrite_for_stb(p, size, copy);
        p = copy;
    }
    int w, h;
    *pix = stbi_load_from_memory(p, (int)size, &w, &h, &hd->channels, 0);
    free(copy);
    if (!*pix)
        return stb_failure(hd->fmt, name, "data", err, err_len);
    if (w != hd->w || h != hd->h) { /* the header parse and the decode disagree: never trust either */
        free(*pix);
        *pix = NULL;
        return FAIL(PPOCR_ERR_CORRUPT, "%s: corrupt %s (inconsistent size)", name, image_format_name(hd->fmt));
    }
    return PPOCR_OK;
}

enum ppocr_status ppocr_image_load_memory(const void *data, size_t size, const char *name, enum ppocr_alpha_mode alpha,
                                          struct ppocr_image *img, char *err, size_t err_len)
{
    memset(img, 0, sizeof *img);
    struct header hd;
    uint8_t *pix;
    enum ppocr_status st = check_header(data, size, name, &hd, err, err_len);
    if (st == PPOCR_OK)
        st = decode_pixels(data, size, name, &hd, &pix, err, err_len);
    if (st != PPOCR_OK)
        return st;

    int w = hd.w, h = hd.h, n = hd.channels;
    size_t count = (size_t)w * (size_t)h;
    int has_alpha = n == 2 || n == 4;
    /* stb always gives GIF four channels; only a transparent index makes it carry alpha */
    if (has_alpha && hd.fmt == FMT_GIF)
        has_alpha = any_alpha_below_255(pix, count, n);
    struct flatten fl = {KEEP_COLOUR, 255};
    if (has_alpha && alpha == PPOCR_ALPHA_FLATTEN)
        fl = choose_flatten(pix, count, n);
    if (hd.orientation == 1 && (n == 3 || n == 1)) { /* as stored, no alpha: BGR where the pixels are */
        uint8_t *bgr = n == 3 ? pix : realloc(pix, count * 3);
        if (!bgr) {
            free(pix);
            return FAIL(PPOCR_ERR_NO_MEMORY, "%s: out of memory for a %dx%d image", name, w, h);
        }
        if (n == 3)
            swap_red_blue(bgr, count);
        else
            gray_to_bgr(bgr, count);
        *img = (struct ppocr_image){.bgr = bgr, .width = w, .height = h};
        return PPOCR_OK;
    }
    if (!(img->bgr = malloc(count * 3))) {
        free(pix);
        return FAIL(PPOCR_ERR_NO_MEMORY, "%s: out of memory for a %dx%d image", name, w, h);
    }
    img->width = hd.orientation >= 5 ? h : w;
    img->height = hd.orientation >= 5 ? w : h;
    img->had_alpha = has_alpha;
    to_bgr(pix, w, h, n, hd.orientation, fl, img->bgr, img->width, img->height);
    free(pix); /* stbi_image_free is free() in this build (no STBI_FREE); libjpeg_decode's is malloc'd */
    return PPOCR_OK;
}

void ppocr_image_free(struct ppocr_image *img)
{
    if (!img)
        return;
    free(img->bgr);
    memset(img, 0, sizeof *img);
}
