/* Inside the layout step (ocr/layout.h): its shared structures and the calls between its files,
 * one file per job (each uses only those above it):
 *   layout_frame.c - the page's frame (turned over, deskewed), the segments in it, sorting helpers
 *   layout_cut.c   - the recursive XY-cut: columns, bands, rows, in reading order
 *   layout.c       - the whole page: rows joined into lines, paragraphs and blocks; ocr_layout_page
 * Lengths are measured in text heights (a DB box's height), so the rules hold at any resolution. */
#ifndef PPOCR_OCR_LAYOUT_INTERNAL_H
#define PPOCR_OCR_LAYOUT_INTERNAL_H

#include <math.h>

#include "ppocr.h"

/* Two segments share a row when their heights overlap by this share of the smaller one. */
#define ROW_OVERLAP 0.5

struct frame {
    int flip;            /* turned 180 degrees */
    double w, h;         /* the page's size */
    double cos_a, sin_a; /* the skew undone */
};

struct seg {
    double x0, x1, y0, y1; /* in the frame: x0..x1 along the line, y0..y1 = centre +- h/2 */
    double cy, h;
    int line; /* index in the result's lines */
};

struct row {
    int first, count; /* in the ordered segment list */
    int column;       /* the column (XY-cut branch) it was read in */
    double x0, x1, y0, y1, h;
};

struct cut_ctx {
    const struct seg *segs;
    int *order; /* segments in reading order, rows contiguous */
    int n_ordered;
    struct row *rows;
    int n_rows;
    int n_columns;
    int failed;
};

static inline double dist(const int a[2], const int b[2])
{
    return hypot(a[0] - b[0], a[1] - b[1]);
}

static inline int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static inline int same_row(const struct seg *a, const struct seg *b)
{
    double overlap = fmin(a->y1, b->y1) - fmax(a->y0, b->y0);
    return overlap >= ROW_OVERLAP * fmin(a->h, b->h);
}

/* ---- layout_frame.c ------------------------------------------------------------------------ */

/* The frame the page is read in: turned over when most lines were read upside down, and turned
 * back by the median angle of its longer lines. Returns 0, or -1 when out of memory. */
int layout_make_frame(const struct ppocr_result *r, struct frame *f);
void layout_make_seg(const struct frame *f, const struct ppocr_line *l, int index, struct seg *s);
/* A point of the frame in the image's coordinates. */
void layout_from_frame(const struct frame *f, double u, double v, double *x, double *y);
/* The median of n values, which it sorts. */
double layout_median(double *v, int n);
/* Sorts segment indices by x0 (by_x) or by centre height, ties by line. */
void layout_sort_idx(const struct seg *segs, int *idx, int n, int by_x);

/* ---- layout_cut.c -------------------------------------------------------------------------- */

/* Appends the region's rows, in reading order, to c (c->failed when out of memory). idx: the
 * region's segments, reordered in place; column: the column the region is read in. */
void layout_cut(struct cut_ctx *c, int *idx, int n, int column);

#endif
