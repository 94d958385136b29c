#include "ocr/box_score.h"

#include <math.h>
#include <stdlib.h>

#include "ocr/poly_fill.h"

static int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

int box_score_fast(const float *map, int w, int h, const struct geom_pointf box[4], double *score)
{
    float x_lo = box[0].x, x_hi = box[0].x, y_lo = box[0].y, y_hi = box[0].y;
    for (int i = 1; i < 4; i++) {
        x_lo = fminf(x_lo, box[i].x);
        x_hi = fmaxf(x_hi, box[i].x);
        y_lo = fminf(y_lo, box[i].y);
        y_hi = fmaxf(y_hi, box[i].y);
    }
    /* the float bounds are far inside int range for any map this code sees */
    int xmin = clamp_int((int)floorf(x_lo), 0, w - 1), xmax = clamp_int((int)ceilf(x_hi), 0, w - 1);
    int ymin = clamp_int((int)floorf(y_lo), 0, h - 1), ymax = clamp_int((int)ceilf(y_hi), 0, h - 1);
    int mw = xmax - xmin + 1, mh = ymax - ymin + 1;

    uint8_t *mask = calloc((size_t)mw * (size_t)mh, 1);
    if (!mask)
        return -1;
    struct geom_point poly[4];
    for (int i = 0; i < 4; i++) /* numpy: float32 minus int stays float32, then astype(int32) */
        poly[i] = (struct geom_point){(int32_t)(box[i].x - (float)xmin), (int32_t)(box[i].y - (float)ymin)};
    poly_fill_mask(mask, mw, mh, poly, 4);

    double sum = 0;
    size_t n = 0;
    for (int y = 0; y < mh; y++) {
        const float *row = map + (size_t)(ymin + y) * (size_t)w + xmin;
        const uint8_t *m = mask + (size_t)y * (size_t)mw;
        for (int x = 0; x < mw; x++)
            if (m[x]) {
                sum += row[x];
                n++;
            }
    }
    free(mask);
    *score = sum * (n ? 1. / (double)n : 0); /* cv::mean multiplies by the reciprocal */
    return 0;
}
