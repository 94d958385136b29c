#include "ocr/pad.h"

void ocr_border_colour(const struct ppocr_image *img, uint8_t bgr[3])
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
