/* PaddleOCR's get_rotate_crop_image, bit-exact with OpenCV 4.6's scalar code:
 * getPerspectiveTransform (imgproc/imgwarp.cpp + core LU), invert (core/lapack.cpp, 3x3 cofactors),
 * warpPerspective INTER_CUBIC + BORDER_REPLICATE (WarpPerspectiveInvoker + remapBicubic). */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/preprocess.h"

#define INTER_BITS 5
#define INTER_TAB_SIZE (1 << INTER_BITS)
#define REMAP_COEF_BITS 15
#define REMAP_COEF_ONE (1 << REMAP_COEF_BITS)
#define WARP_BLOCK 32

/* core/matrix_decomp.cpp LUImpl, solving a x = b in place (b becomes x). */
static int lu_solve(double a[8][8], double b[8])
{
    const int m = 8;
    for (int i = 0; i < m; i++) {
        int k = i;
        for (int j = i + 1; j < m; j++)
            if (fabs(a[j][i]) > fabs(a[k][i]))
                k = j;
        if (fabs(a[k][i]) < DBL_EPSILON * 100)
            return -1;
        if (k != i) {
            for (int j = i; j < m; j++) {
                double t = a[i][j];
                a[i][j] = a[k][j], a[k][j] = t;
            }
            double t = b[i];
            b[i] = b[k], b[k] = t;
        }
        double d = -1 / a[i][i];
        for (int j = i + 1; j < m; j++) {
            double alpha = a[j][i] * d;
            for (k = i + 1; k < m; k++)
                a[j][k] += alpha * a[i][k];
            b[j] += alpha * b[i];
        }
    }
    for (int i = m - 1; i >= 0; i--) {
        double s = b[i];
        for (int k = i + 1; k < m; k++)
            s -= a[i][k] * b[k];
        b[i] = s / a[i][i]; /* a division, not a product with the stored reciprocal: last bit matters */
    }
    return 0;
}

int ocr_perspective_transform(const float src[4][2], const float dst[4][2], double m[9])
{
    double a[8][8] = {{0}}, b[8];
    for (int i = 0; i < 4; i++) {
        a[i][0] = a[i + 4][3] = src[i][0];
        a[i][1] = a[i + 4][4] = src[i][1];
        a[i][2] = a[i + 4][5] = 1;
        /* products of two floats are floats in OpenCV's code (Point2f) */
        a[i][6] = -src[i][0] * dst[i][0];
        a[i][7] = -src[i][1] * dst[i][0];
        a[i + 4][6] = -src[i][0] * dst[i][1];
        a[i + 4][7] = -src[i][1] * dst[i][1];
        b[i] = dst[i][0];
        b[i + 4] = dst[i][1];
    }
    if (lu_solve(a, b) != 0)
        return -1;
    memcpy(m, b, sizeof b);
    m[8] = 1.;
    return 0;
}

int ocr_invert_3x3(const double m[9], double inv[9])
{
#define M(r, c) m[(r)*3 + (c)]
    double d = M(0, 0) * (M(1, 1) * M(2, 2) - M(1, 2) * M(2, 1)) - M(0, 1) * (M(1, 0) * M(2, 2) - M(1, 2) * M(2, 0)) +
               M(0, 2) * (M(1, 0) * M(2, 1) - M(1, 1) * M(2, 0));
    if (d == 0.)
        return -1;
    d = 1. / d;
    double t[9] = {
        (M(1, 1) * M(2, 2) - M(1, 2) * M(2, 1)) * d, (M(0, 2) * M(2, 1) - M(0, 1) * M(2, 2)) * d,
        (M(0, 1) * M(1, 2) - M(0, 2) * M(1, 1)) * d, (M(1, 2) * M(2, 0) - M(1, 0) * M(2, 2)) * d,
        (M(0, 0) * M(2, 2) - M(0, 2) * M(2, 0)) * d, (M(0, 2) * M(1, 0) - M(0, 0) * M(1, 2)) * d,
        (M(1, 0) * M(2, 1) - M(1, 1) * M(2, 0)) * d, (M(0, 1) * M(2, 0) - M(0, 0) * M(2, 1)) * d,
        (M(0, 0) * M(1, 1) - M(0, 1) * M(1, 0)) * d,
    };
#undef M
    memcpy(inv, t, sizeof t);
    return 0;
}

static inline int clampi(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}
static inline int sat_short(int v)
{
    return clampi(v, SHRT_MIN, SHRT_MAX);
}

/* imgwarp.cpp interpolateCubic (A = -0.75), in float as OpenCV evaluates it. */
static void cubic_coeffs(float x, float c[4])
{
    const float A = -0.75f;
    c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = 1.f - c[0] - c[1] - c[2];
}

/* initInterTab2D(INTER_CUBIC, fixed point): 4x4 weights for each 1/32-pixel offset, saturated to
 * short (a weight of 1.0 becomes 32767), then corrected to sum to exactly 1 << 15 by nudging the
 * largest or smallest of the 2x2 weights at rows/columns ksize/2 = 2..3 (OpenCV's choice, so at a
 * whole-pixel offset the missing unit lands on the pixel diagonally below-right). */
static void cubic_table(short tab[INTER_TAB_SIZE * INTER_TAB_SIZE][16])
{
    float c1[INTER_TAB_SIZE][4];
    for (int i = 0; i < INTER_TAB_SIZE; i++)
        cubic_coeffs((float)i * (1.f / INTER_TAB_SIZE), c1[i]);
    for (int i = 0; i < INTER_TAB_SIZE; i++)
        for (int j = 0; j < INTER_TAB_SIZE; j++) {
            short *t = tab[i * INTER_TAB_SIZE + j];
            int isum = 0;
            for (int k1 = 0; k1 < 4; k1++)
                for (int k2 = 0; k2 < 4; k2++) {
                    float v = c1[i][k1] * c1[j][k2];
                    isum += t[k1 * 4 + k2] = (short)sat_short((int)lrintf(v * REMAP_COEF_ONE));
                }
            if (isum != REMAP_COEF_ONE) {
                int diff = isum - REMAP_COEF_ONE, mk1 = 2, mk2 = 2, Mk1 = 2, Mk2 = 2;
                for (int k1 = 2; k1 < 4; k1++)
                    for (int k2 = 2; k2 < 4; k2++) {
                        if (t[k1 * 4 + k2] < t[mk1 * 4 + mk2])
                            mk1 = k1, mk2 = k2;
                        else if (t[k1 * 4 + k2] > t[Mk1 * 4 + Mk2])
                            Mk1 = k1, Mk2 = k2;
                    }
                if (diff < 0)
                    t[Mk1 * 4 + Mk2] = (short)(t[Mk1 * 4 + Mk2] - diff);
                else
                    t[mk1 * 4 + mk2] = (short)(t[mk1 * 4 + mk2] - diff);
            }
        }
}

/* remapBicubic for one pixel with BORDER_REPLICATE: with weights summing to one, OpenCV's border
 * formula (cval*ONE + sum((S - cval)*w)) equals this plain sum over clamped coordinates. */
static void bicubic_pixel(const uint8_t *src, int sw, int sh, int sx, int sy, const short *w, uint8_t *d)
{
    int xs[4], ys[4];
    for (int i = 0; i < 4; i++) {
        xs[i] = clampi(sx + i, 0, sw - 1) * 3;
        ys[i] = clampi(sy + i, 0, sh - 1);
    }
    for (int k = 0; k < 3; k++) {
        int sum = 0;
        for (int i = 0; i < 4; i++) {
            const uint8_t *row = src + (size_t)ys[i] * sw * 3 + k;
            sum += row[xs[0]] * w[4 * i] + row[xs[1]] * w[4 * i + 1] + row[xs[2]] * w[4 * i + 2] +
                   row[xs[3]] * w[4 * i + 3];
        }
        d[k] = (uint8_t)clampi((sum + (1 << (REMAP_COEF_BITS - 1))) >> REMAP_COEF_BITS, 0, 255);
    }
}

void ocr_warp_perspective_cubic(const uint8_t *src, int src_w, int src_h, const double m[9], uint8_t *dst, int dst_w,
                                int dst_h)
{
    short tab[INTER_TAB_SIZE * INTER_TAB_SIZE][16];
    cubic_table(tab);
    /* WarpPerspectiveInvoker walks blocks; X0 + M[0]*x1 is rounded differently from M[0]*(x + x1),
     * so the block origins are part of the arithmetic */
    int bh0 = dst_h < WARP_BLOCK / 2 ? dst_h : WARP_BLOCK / 2;
    int bw0 = WARP_BLOCK * WARP_BLOCK / bh0 < dst_w ? WARP_BLOCK * WARP_BLOCK / bh0 : dst_w;
    bh0 = WARP_BLOCK * WARP_BLOCK / bw0 < dst_h ? WARP_BLOCK * WARP_BLOCK / bw0 : dst_h;
    for (int y = 0; y < dst_h; y += bh0)
        for (int x = 0; x < dst_w; x += bw0) {
            int bw = dst_w - x < bw0 ? dst_w - x : bw0, bh = dst_h - y < bh0 ? dst_h - y : bh0;
            for (int y1 = 0; y1 < bh; y1++) {
                double X0 = m[0] * x + m[1] * (y + y1) + m[2];
                double Y0 = m[3] * x + m[4] * (y + y1) + m[5];
                double W0 = m[6] * x + m[7] * (y + y1) + m[8];
                uint8_t *d = dst + ((size_t)(y + y1) * dst_w + x) * 3;
                for (int x1 = 0; x1 < bw; x1++, d += 3) {
                    double W = W0 + m[6] * x1;
                    W = W != 0 ? INTER_TAB_SIZE / W : 0;
                    double fX = fmax((double)INT_MIN, fmin((double)INT_MAX, (X0 + m[0] * x1) * W));
                    double fY = fmax((double)INT_MIN, fmin((double)INT_MAX, (Y0 + m[3] * x1) * W));
                    int X = (int)lrint(fX), Y = (int)lrint(fY);
                    int sx = sat_short(X >> INTER_BITS) - 1, sy = sat_short(Y >> INTER_BITS) - 1;
                    int a = (Y & (INTER_TAB_SIZE - 1)) * INTER_TAB_SIZE + (X & (INTER_TAB_SIZE - 1));
                    bicubic_pixel(src, src_w, src_h, sx, sy, tab[a], d);
                }
            }
        }
}

void ocr_rotate90_ccw(const uint8_t *src, int w, int h, uint8_t *dst)
{
    /* dst(x, y) = src(w-1-y, x); dst is h wide */
    for (int y = 0; y < w; y++)
        for (int x = 0; x < h; x++)
            memcpy(dst + ((size_t)y * h + x) * 3, src + ((size_t)x * w + (w - 1 - y)) * 3, 3);
}

/* np.linalg.norm of a float32 difference, in float32 */
static float dist_f32(const float a[2], const float b[2])
{
    float dx = a[0] - b[0], dy = a[1] - b[1];
    float s = dx * dx + dy * dy;
    return sqrtf(s);
}

int ocr_crop_plan_make(const float box[4][2], struct ocr_crop_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    for (int i = 0; i < 4; i++)
        if (!isfinite(box[i][0]) || !isfinite(box[i][1]))
            return -1;
    float w = fmaxf(dist_f32(box[0], box[1]), dist_f32(box[2], box[3]));
    float h = fmaxf(dist_f32(box[0], box[3]), dist_f32(box[1], box[2]));
    if (!(w >= 1 && h >= 1 && w <= PPOCR_IMAGE_MAX_SIDE && h <= PPOCR_IMAGE_MAX_SIDE) ||
        (double)(int)w * (int)h > PPOCR_IMAGE_MAX_PIXELS)
        return -1;
    plan->width = (int)w;
    plan->height = (int)h;
    const float rect[4][2] = {
        {0, 0}, {(float)plan->width, 0}, {(float)plan->width, (float)plan->height}, {0, (float)plan->height}};
    if (ocr_perspective_transform(box, rect, plan->dst_from_src) != 0)
        return -1;
    if (ocr_invert_3x3(plan->dst_from_src, plan->src_from_dst) != 0)
        return -1;
    plan->rotate = (double)plan->height / plan->width >= 1.5;
    plan->out_width = plan->rotate ? plan->height : plan->width;
    plan->out_height = plan->rotate ? plan->width : plan->height;
    return 0;
}

int ocr_crop_warp(const struct ppocr_image *img, const double src_from_dst[9], int width, int height, int rotate,
                  struct ppocr_image *out)
{
    memset(out, 0, sizeof *out);
    size_t bytes = (size_t)width * height * 3;
    uint8_t *warped = malloc(bytes);
    if (!warped)
        return -1;
    ocr_warp_perspective_cubic(img->bgr, img->width, img->height, src_from_dst, warped, width, height);
    if (rotate) {
        uint8_t *turned = malloc(bytes);
        if (!turned) {
            free(warped);
            return -1;
        }
        ocr_rotate90_ccw(warped, width, height, turned);
        free(warped);
        warped = turned;
    }
    out->bgr = warped;
    out->width = rotate ? height : width;
    out->height = rotate ? width : height;
    return 0;
}

int ocr_crop_box(const struct ppocr_image *img, const float box[4][2], struct ppocr_image *out)
{
    memset(out, 0, sizeof *out);
    struct ocr_crop_plan plan;
    if (!img->bgr || img->width <= 0 || img->height <= 0 || ocr_crop_plan_make(box, &plan) != 0)
        return -1;
    return ocr_crop_warp(img, plan.src_from_dst, plan.width, plan.height, plan.rotate, out);
}

void ocr_rotate180(struct ppocr_image *img)
{
    const size_t n = (size_t)img->width * img->height;
    for (size_t i = 0; i < n / 2; i++)
        for (int c = 0; c < 3; c++) {
            const uint8_t t = img->bgr[i * 3 + c];
            img->bgr[i * 3 + c] = img->bgr[(n - 1 - i) * 3 + c];
            img->bgr[(n - 1 - i) * 3 + c] = t;
        }
}
