/* The frame a page is read in: turned 180 degrees when most lines were read upside down, and
 * deskewed by the lines' median angle; the segments in it, and the sorting helpers of the cut. */
#include "ocr/layout_internal.h"

#include <math.h>
#include <stdlib.h>

/* Skew below this (radians) is left alone, and above MAX_SKEW the lines' angles are not a skew. */
#define MIN_SKEW 0.002
#define MAX_SKEW 0.26

static void to_frame(const struct frame *f, double x, double y, double *u, double *v)
{
    if (f->flip) {
        x = f->w - 1 - x;
        y = f->h - 1 - y;
    }
    double dx = x - f->w / 2, dy = y - f->h / 2;
    *u = f->w / 2 + dx * f->cos_a + dy * f->sin_a;
    *v = f->h / 2 - dx * f->sin_a + dy * f->cos_a;
}

void layout_from_frame(const struct frame *f, double u, double v, double *x, double *y)
{
    double du = u - f->w / 2, dv = v - f->h / 2;
    *x = f->w / 2 + du * f->cos_a - dv * f->sin_a;
    *y = f->h / 2 + du * f->sin_a + dv * f->cos_a;
    if (f->flip) {
        *x = f->w - 1 - *x;
        *y = f->h - 1 - *y;
    }
}

double layout_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), compare_doubles);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int layout_make_frame(const struct ppocr_result *r, struct frame *f)
{
    int upside_down = 0;
    for (int i = 0; i < r->n_lines; i++)
        upside_down += r->lines[i].upside_down != 0;
    *f = (struct frame){.flip = 2 * upside_down > r->n_lines, .w = r->width, .h = r->height, .cos_a = 1};
    double *angles = malloc(((size_t)r->n_lines + 1) * sizeof(*angles));
    if (!angles)
        return -1;
    int n = 0;
    for (int i = 0; i < r->n_lines; i++) {
        const int(*b)[2] = r->lines[i].box;
        double len = dist(b[0], b[1]), h = (dist(b[0], b[3]) + dist(b[1], b[2])) / 2;
        if (len < 3 * h)
            continue; /* too short for its angle to mean much */
        double a = atan2(b[1][1] - b[0][1], b[1][0] - b[0][0]);
        if (fabs(a) <= MAX_SKEW)
            angles[n++] = a;
    }
    if (n) {
        double a = layout_median(angles, n);
        if (fabs(a) >= MIN_SKEW) {
            /* in the turned frame the same lines slope the same way */
            f->cos_a = cos(a);
            f->sin_a = sin(a);
        }
    }
    free(angles);
    return 0;
}

void layout_make_seg(const struct frame *f, const struct ppocr_line *l, int index, struct seg *s)
{
    double u0 = INFINITY, u1 = -INFINITY, v0 = INFINITY, v1 = -INFINITY;
    for (int k = 0; k < 4; k++) {
        double u, v;
        to_frame(f, l->box[k][0], l->box[k][1], &u, &v);
        /* comparisons, not fmin/fmax: GCC 12's vectoriser fails on those four reductions for
         * aarch64 (an internal compiler error at -O2 and -O3) */
        u0 = u < u0 ? u : u0;
        u1 = u > u1 ? u : u1;
        v0 = v < v0 ? v : v0;
        v1 = v > v1 ? v : v1;
    }
    s->h = fmax(1.0, (dist(l->box[0], l->box[3]) + dist(l->box[1], l->box[2])) / 2);
    s->cy = (v0 + v1) / 2;
    s->x0 = u0;
    s->x1 = u1;
    s->y0 = s->cy - s->h / 2;
    s->y1 = s->cy + s->h / 2;
    s->line = index;
}

/* ---- sorting segment indices by a key ------------------------------------------------------ */

/* qsort has no context argument: the segments being sorted, per thread (engines lay out their
 * pages side by side). */
static _Thread_local const struct seg *sort_segs;

static int by_x0(const void *a, const void *b)
{
    const struct seg *p = &sort_segs[*(const int *)a], *q = &sort_segs[*(const int *)b];
    return p->x0 < q->x0 ? -1 : p->x0 > q->x0 ? 1 : p->line - q->line;
}

static int by_cy(const void *a, const void *b)
{
    const struct seg *p = &sort_segs[*(const int *)a], *q = &sort_segs[*(const int *)b];
    return p->cy < q->cy ? -1 : p->cy > q->cy ? 1 : p->line - q->line;
}

void layout_sort_idx(const struct seg *segs, int *idx, int n, int by_x)
{
    sort_segs = segs;
    qsort(idx, (size_t)n, sizeof(*idx), by_x ? by_x0 : by_cy);
}
