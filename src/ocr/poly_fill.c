/* cv::fillPoly for one polygon, line type 8, shift 0 (drawing.cpp of OpenCV 4.6: CollectPolyEdges,
 * Line with LineIterator and clipLine, FillEdgeCollection). */
#include "ocr/poly_fill.h"

#include <stdlib.h>

#define XY_SHIFT 16

/* Arithmetic right shift (floor division by 2^XY_SHIFT) without relying on how >> treats
 * negative numbers. */
static int64_t fixed_floor(int64_t v)
{
    return v >= 0 ? v >> XY_SHIFT : -((-v + ((int64_t)1 << XY_SHIFT) - 1) >> XY_SHIFT);
}

/* cv::clipLine: Cohen-Sutherland with OpenCV's rounding. Returns 0 when nothing is visible. */
static int clip_line(int64_t w, int64_t h, int64_t *x1, int64_t *y1, int64_t *x2, int64_t *y2)
{
    int64_t right = w - 1, bottom = h - 1;
    if (w <= 0 || h <= 0)
        return 0;
    int c1 = (*x1 < 0) + (*x1 > right) * 2 + (*y1 < 0) * 4 + (*y1 > bottom) * 8;
    int c2 = (*x2 < 0) + (*x2 > right) * 2 + (*y2 < 0) * 4 + (*y2 > bottom) * 8;
    if ((c1 & c2) == 0 && (c1 | c2) != 0) {
        int64_t a;
        if (c1 & 12) {
            a = c1 < 8 ? 0 : bottom;
            *x1 += (int64_t)((double)(a - *y1) * (*x2 - *x1) / (*y2 - *y1));
            *y1 = a;
            c1 = (*x1 < 0) + (*x1 > right) * 2;
        }
        if (c2 & 12) {
            a = c2 < 8 ? 0 : bottom;
            *x2 += (int64_t)((double)(a - *y2) * (*x2 - *x1) / (*y2 - *y1));
            *y2 = a;
            c2 = (*x2 < 0) + (*x2 > right) * 2;
        }
        if ((c1 & c2) == 0 && (c1 | c2) != 0) {
            if (c1) {
                a = c1 == 1 ? 0 : right;
                *y1 += (int64_t)((double)(a - *x1) * (*y2 - *y1) / (*x2 - *x1));
                *x1 = a;
                c1 = 0;
            }
            if (c2) {
                a = c2 == 1 ? 0 : right;
                *y2 += (int64_t)((double)(a - *x2) * (*y2 - *y1) / (*x2 - *x1));
                *x2 = a;
                c2 = 0;
            }
        }
    }
    return (c1 | c2) == 0;
}

/* cv::LineIterator with 8-connectivity and leftToRight, as cv::line draws it. */
static void draw_line(uint8_t *mask, int w, int h, int64_t x1, int64_t y1, int64_t x2, int64_t y2)
{
    if ((uint64_t)x1 >= (uint64_t)w || (uint64_t)x2 >= (uint64_t)w || (uint64_t)y1 >= (uint64_t)h ||
        (uint64_t)y2 >= (uint64_t)h) {
        if (!clip_line(w, h, &x1, &y1, &x2, &y2))
            return;
    }
    int64_t dx = x2 - x1, dy = y2 - y1;
    if (dx < 0) { /* left to right */
        dx = -dx;
        dy = -dy;
        int64_t t = x1;
        x1 = x2;
        x2 = t;
        t = y1;
        y1 = y2;
        y2 = t;
    }
    int64_t step_y = 1;
    if (dy < 0) {
        dy = -dy;
        step_y = -1;
    }
    int vertical = dy > dx;
    int64_t major = vertical ? dy : dx, minor = vertical ? dx : dy;
    int64_t err = major - (minor + minor);
    int64_t x = x1, y = y1;
    for (int64_t i = 0; i <= major; i++) {
        mask[(size_t)y * (size_t)w + (size_t)x] = 1;
        int diagonal = err < 0;
        err += -(minor + minor) + (diagonal ? major + major : 0);
        if (vertical) {
            y += step_y;
            if (diagonal)
                x += 1;
        } else {
            x += 1;
            if (diagonal)
                y += step_y;
        }
    }
}

struct poly_edge {
    int64_t y0, y1; /* rows [y0, y1) */
    int64_t x, dx;  /* x at row y0 and per row, 16.16 fixed point */
};

static int compare_int64(const void *a, const void *b)
{
    int64_t p = *(const int64_t *)a, q = *(const int64_t *)b;
    return (p > q) - (p < q);
}

void poly_fill_mask(uint8_t *mask, int w, int h, const struct geom_point *v, int n)
{
    struct poly_edge edges[16];
    struct poly_edge *e = n <= 16 ? edges : malloc(sizeof(*e) * (size_t)n);
    int64_t xs_small[16];
    int64_t *xs = n <= 16 ? xs_small : malloc(sizeof(*xs) * (size_t)n);
    if (!e || !xs)
        goto done; /* mask left empty: callers see a zero-pixel polygon */

    int n_edges = 0;
    struct geom_point p0 = v[n - 1];
    for (int i = 0; i < n; i++) {
        struct geom_point p1 = v[i];
        draw_line(mask, w, h, p0.x, p0.y, p1.x, p1.y);
        if (p0.y != p1.y) {
            int64_t x0 = (int64_t)p0.x * (1 << XY_SHIFT), x1 = (int64_t)p1.x * (1 << XY_SHIFT);
            struct poly_edge *edge = &e[n_edges++];
            if (p0.y < p1.y) {
                edge->y0 = p0.y;
                edge->y1 = p1.y;
                edge->x = x0;
            } else {
                edge->y0 = p1.y;
                edge->y1 = p0.y;
                edge->x = x1;
            }
            edge->dx = (x1 - x0) / (p1.y - p0.y);
        }
        p0 = p1;
    }
    if (n_edges < 2)
        goto done;

    int64_t y_min = INT64_MAX, y_max = INT64_MIN, x_min = INT64_MAX, x_max = INT64_MIN;
    for (int i = 0; i < n_edges; i++) {
        int64_t x_end = e[i].x + (e[i].y1 - e[i].y0) * e[i].dx;
        if (e[i].y0 < y_min)
            y_min = e[i].y0;
        if (e[i].y1 > y_max)
            y_max = e[i].y1;
        if (e[i].x < x_min)
            x_min = e[i].x;
        if (e[i].x > x_max)
            x_max = e[i].x;
        if (x_end < x_min)
            x_min = x_end;
        if (x_end > x_max)
            x_max = x_end;
    }
    if (y_max < 0 || y_min >= h || x_max < 0 || x_min >= ((int64_t)w << XY_SHIFT))
        goto done;
    if (y_max > h)
        y_max = h;

    /* Each row pairs the active edges in x order and fills from floor(left) to floor(right). */
    for (int64_t y = y_min < 0 ? 0 : y_min; y < y_max; y++) {
        int na = 0;
        for (int i = 0; i < n_edges; i++)
            if (e[i].y0 <= y && y < e[i].y1)
                xs[na++] = e[i].x + (y - e[i].y0) * e[i].dx;
        qsort(xs, (size_t)na, sizeof(*xs), compare_int64);
        for (int i = 0; i + 1 < na; i += 2) {
            int64_t xa = fixed_floor(xs[i] + ((int64_t)1 << XY_SHIFT) - 1), xb = fixed_floor(xs[i + 1]);
            if (xa < w && xb >= 0) {
                if (xa < 0)
                    xa = 0;
                if (xb >= w)
                    xb = w - 1;
                for (int64_t x = xa; x <= xb; x++)
                    mask[(size_t)y * (size_t)w + (size_t)x] = 1;
            }
        }
    }
done:
    if (e != edges)
        free(e);
    if (xs != xs_small)
        free(xs);
}
