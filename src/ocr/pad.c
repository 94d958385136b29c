#include "ocr/pad.h"

#include <stdlib.h>
#include <string.h>

void ocr_border_colour(const struct ocr_image *img, uint8_t bgr[3])
{
    double sum[3] = {0, 0, 0};
    long n = 0;
    int w = img->width, h = img->height;
    for (int y = 0; y < h; y++) {
        int step = (y == 0 || y == h - 1) ? 1 : (w > 1 ? w - 1 : 1);
        for (int x = 0; x < w; x += step) {
            const uint8_t *p = img->bgr + ((size_t)y * w + x) * 3;
            for (int c = 0; c < 3; c++)
                sum[c] += p[c];
            n++;
        }
    }
    for (int c = 0; c < 3; c++)
        bgr[c] = (uint8_t)(sum[c] / (double)n + 0.5);
}

int ocr_pad_image(const struct ocr_image *img, int margin, struct ocr_image *out)
{
    memset(out, 0, sizeof(*out));
    if (margin < 0 || img->width > OCR_IMAGE_MAX_SIDE - 2 * margin || img->height > OCR_IMAGE_MAX_SIDE - 2 * margin)
        return -1;
    int w = img->width + 2 * margin, h = img->height + 2 * margin;
    uint8_t *bgr = malloc((size_t)w * h * 3);
    if (!bgr)
        return -1;
    uint8_t fill[3];
    ocr_border_colour(img, fill);
    /* one row of the colour, built once; then each byte of the result is written once */
    size_t row = (size_t)w * 3, side = (size_t)margin * 3, inner = (size_t)img->width * 3;
    for (size_t i = 0; i < row; i += 3)
        memcpy(bgr + i, fill, 3);
    for (int y = 1; y < margin; y++)
        memcpy(bgr + (size_t)y * row, bgr, row);
    for (int y = 0; y < img->height; y++) {
        uint8_t *d = bgr + (size_t)(y + margin) * row;
        memcpy(d, bgr, side);
        memcpy(d + side, img->bgr + (size_t)y * inner, inner);
        memcpy(d + side + inner, bgr, side);
    }
    for (int y = margin + img->height; y < h; y++)
        memcpy(bgr + (size_t)y * row, bgr, row);
    out->width = w;
    out->height = h;
    out->bgr = bgr;
    out->had_alpha = img->had_alpha;
    return 0;
}
