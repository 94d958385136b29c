/* cv2.resize INTER_LINEAR on 8-bit data, bit-exact with OpenCV 4.6 as the reference (opencv-js) runs
 * it: imgproc/resize.cpp's HResizeLinear in 11-bit fixed point, the vertical pass as its SIMD op
 * rounds, and the INTER_AREA fast path OpenCV takes for an exact 2x reduction. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/preprocess.h"
#include "ocr/workers.h"

/* Bands of output rows that a shared resize is cut into (ocr_workers_run claims them one at a
 * time, so a helper that wakes late takes fewer), each at least RESIZE_BAND_ROWS_MIN rows. */
#define RESIZE_BANDS_MAX 16
#define RESIZE_BAND_ROWS_MIN 64

#define COEF_BITS 11 /* INTER_RESIZE_COEF_BITS */
#define COEF_ONE (1 << COEF_BITS)

/* saturate_cast<short>(float): round half to even, as cvRound */
static inline int round_coef(float v)
{
    return (int)lrintf(v * COEF_ONE);
}

/* OpenCV turns INTER_LINEAR into INTER_AREA's 2x2 average when scaling down by exactly 2. */
static void resize_half(const uint8_t *src, int src_w, uint8_t *dst, int dst_w, int dst_h, int cn)
{
    size_t sstep = (size_t)src_w * cn;
    for (int y = 0; y < dst_h; y++) {
        const uint8_t *s0 = src + (size_t)2 * y * sstep, *s1 = s0 + sstep;
        uint8_t *d = dst + (size_t)y * dst_w * cn;
        for (int x = 0; x < dst_w; x++)
            for (int k = 0; k < cn; k++) {
                size_t i = (size_t)2 * x * cn + k;
                /* cn 1/3/4 take ResizeAreaFastVec's (sum + 2) >> 2; cn 2 the generic cvRound(sum * 0.25f) */
                int sum = s0[i] + s0[i + cn] + s1[i] + s1[i + cn];
                d[(size_t)x * cn + k] = (uint8_t)(cn == 2 ? (int)lrintf((float)sum * 0.25f) : (sum + 2) >> 2);
            }
    }
}

/* One source row, resized horizontally in 11-bit fixed point, kept as the vertical pass reads it:
 * cut to 16 bits (>> 4, see vresize_row). */
static void hresize_row(const uint8_t *s, const int *xofs, const int *alpha, int xmax, int dst_w, int cn, int16_t *d)
{
    int n = dst_w * cn, border = xmax * cn;
    if (cn == 3) { /* the channels of a pixel share its tap and weights: one lookup for three */
        for (int i = 0; i < border; i += 3) {
            const uint8_t *p = s + xofs[i];
            int a0 = alpha[2 * i], a1 = alpha[2 * i + 1];
            d[i] = (int16_t)((p[0] * a0 + p[3] * a1) >> 4);
            d[i + 1] = (int16_t)((p[1] * a0 + p[4] * a1) >> 4);
            d[i + 2] = (int16_t)((p[2] * a0 + p[5] * a1) >> 4);
        }
    } else {
        for (int i = 0; i < border; i++) {
            int sx = xofs[i];
            d[i] = (int16_t)((s[sx] * alpha[2 * i] + s[sx + cn] * alpha[2 * i + 1]) >> 4);
        }
    }
    for (int i = border; i < n; i++)
        d[i] = (int16_t)((s[xofs[i]] * COEF_ONE) >> 4);
}

/* VResizeLinear as OpenCV's 128-bit SIMD op (VResizeLinearVec_32s8u) computes it, which rounds
 * differently from the exact formula (r0*b0 + r1*b1 + 2^21) >> 22: rows are cut to 16 bits (>> 4),
 * multiplied keeping the high 16 bits, added with saturation, then (sum + 2) >> 2. opencv-js 4.6
 * gives this result for every element of a row, the last few included (checked on rows of 3 to 2880 values).
 * None of that op's saturations can bind here: a row value is at most 255 * 2049 (8-bit samples,
 * two weights in [0, 2048] whose rounding sums to at most 2049), so r >> 4 <= 32655, the two
 * products' high halves add up to at most 1021 and (sum + 2) >> 2 to at most 255. Without them
 * the loop is a few 16-bit vector instructions. */
static void vresize_row(const int16_t *restrict r0, const int16_t *restrict r1, int16_t b0, int16_t b1,
                        uint8_t *restrict d, int n)
{
    for (int i = 0; i < n; i++) {
        int16_t v = (int16_t)(((r0[i] * b0) >> 16) + ((r1[i] * b1) >> 16));
        d[i] = (uint8_t)((v + 2) >> 2);
    }
}

/* What every band of one resize shares: the sizes, the horizontal taps, the vertical scale. */
struct resize_job {
    const uint8_t *src;
    int src_w, src_h, cn;
    uint8_t *dst;
    int dst_w, dst_h, bands;
    double scale_y;
    const int *xofs, *alpha;
    int xmax;
    int16_t *rows; /* two horizontally resized rows per band */
};

/* Output rows [band * dst_h / bands, (band + 1) * dst_h / bands): each depends on two source rows
 * alone, so a band's rows are the same bytes whichever thread makes them. */
static void resize_band(void *arg, int band)
{
    const struct resize_job *j = arg;
    const size_t n = (size_t)j->dst_w * j->cn;
    const int dy0 = (int)((int64_t)band * j->dst_h / j->bands), dy1 = (int)((int64_t)(band + 1) * j->dst_h / j->bands);
    /* two horizontally resized source rows, kept while consecutive output rows use them again */
    int16_t *buf[2] = {j->rows + 2 * n * (size_t)band, j->rows + 2 * n * (size_t)band + n};
    int held[2] = {-1, -1};
    for (int dy = dy0; dy < dy1; dy++) {
        float fy = (float)((dy + 0.5) * j->scale_y - 0.5);
        int sy = (int)floorf(fy);
        fy -= (float)sy;
        const int16_t *r[2];
        for (int k = 0; k < 2; k++) {
            int want = sy + k < 0 ? 0 : sy + k >= j->src_h ? j->src_h - 1 : sy + k;
            int b = held[0] == want ? 0 : held[1] == want ? 1 : -1;
            if (b < 0) {
                /* overwrite neither the row just taken (k = 1) nor the one the next step needs */
                b = k == 1 ? (r[0] == buf[0] ? 1 : 0) : (held[0] == sy + 1 ? 1 : 0);
                hresize_row(j->src + (size_t)want * j->src_w * j->cn, j->xofs, j->alpha, j->xmax, j->dst_w, j->cn,
                            buf[b]);
                held[b] = want;
            }
            r[k] = buf[b];
        }
        vresize_row(r[0], r[1], (int16_t)round_coef(1.f - fy), (int16_t)round_coef(fy), j->dst + (size_t)dy * n,
                    (int)n);
    }
}

int ocr_resize_linear_shared(const uint8_t *src, int src_w, int src_h, uint8_t *dst, int dst_w, int dst_h, int cn,
                             struct ocr_workers *workers)
{
    if (src_w <= 0 || src_h <= 0 || dst_w <= 0 || dst_h <= 0 || cn < 1 || cn > 4)
        return -1;
    if (src_w == dst_w && src_h == dst_h) {
        memcpy(dst, src, (size_t)src_w * src_h * cn);
        return 0;
    }
    /* as cv::resize: the scale is 1/(dst/src) in double, not src/dst */
    double scale_x = 1. / ((double)dst_w / src_w), scale_y = 1. / ((double)dst_h / src_h);
    if (fabs(scale_x - 2) < DBL_EPSILON && fabs(scale_y - 2) < DBL_EPSILON) {
        resize_half(src, src_w, dst, dst_w, dst_h, cn);
        return 0;
    }
    int bands = workers ? dst_h / RESIZE_BAND_ROWS_MIN : 1;
    bands = bands < 1 ? 1 : bands > RESIZE_BANDS_MAX ? RESIZE_BANDS_MAX : bands;
    size_t n = (size_t)dst_w * cn;
    int *xofs = malloc(n * sizeof *xofs), *alpha = malloc(2 * n * sizeof *alpha);
    int16_t *rows = malloc(2 * n * (size_t)bands * sizeof *rows);
    if (!xofs || !alpha || !rows) {
        free(xofs), free(alpha), free(rows);
        return -1;
    }
    int xmax = dst_w;
    for (int dx = 0; dx < dst_w; dx++) {
        float fx = (float)((dx + 0.5) * scale_x - 0.5);
        int sx = (int)floorf(fx);
        fx -= (float)sx;
        if (sx < 0)
            fx = 0, sx = 0;
        if (sx + 1 >= src_w) {
            if (dx < xmax)
                xmax = dx;
            fx = 0, sx = src_w - 1;
        }
        for (int k = 0; k < cn; k++) {
            xofs[dx * cn + k] = sx * cn + k;
            alpha[2 * (dx * cn + k)] = round_coef(1.f - fx);
            alpha[2 * (dx * cn + k) + 1] = round_coef(fx);
        }
    }
    struct resize_job job = {src, src_w, src_h, cn, dst, dst_w, dst_h, bands, scale_y, xofs, alpha, xmax, rows};
    ocr_workers_run(workers, bands, resize_band, &job);
    free(xofs), free(alpha), free(rows);
    return 0;
}

int ocr_resize_linear(const uint8_t *src, int src_w, int src_h, uint8_t *dst, int dst_w, int dst_h, int cn)
{
    return ocr_resize_linear_shared(src, src_w, src_h, dst, dst_w, dst_h, cn, NULL);
}
