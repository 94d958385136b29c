/* Convex hull of integer points, mirroring OpenCV 4.6's Sklansky scan (convhull.cpp, before
 * repeated points were skipped explicitly) including the order and the starting vertex of its
 * output: cv::minAreaRect breaks ties between equally small
 * rectangles by hull order, so the same vertices in another order can give other float corners. */
#include "ocr/geometry.h"

#include <stdlib.h>

static int sign_of(int64_t v)
{
    return (v > 0) - (v < 0);
}

struct indexed_point {
    int32_t x, y;
    int index;
};

/* OpenCV sorts pointers to the points by (x, y, address): a total order, so any sort agrees. */
static int compare_indexed_points(const void *a, const void *b)
{
    const struct indexed_point *p = a, *q = b;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    if (p->y != q->y)
        return p->y < q->y ? -1 : 1;
    return (p->index > q->index) - (p->index < q->index);
}

static int same_point(const struct geom_point *a, const struct geom_point *b)
{
    return a->x == b->x && a->y == b->y;
}

/* One quarter of the hull between sorted positions start and end (Sklansky_ in OpenCV). */
static int sklansky(const struct geom_point *pts, const int *order, int start, int end, int *stack, int nsign,
                    int sign2)
{
    int incr = end > start ? 1 : -1;
    int pprev = start, pcur = pprev + incr, pnext = pcur + incr;
    int stacksize = 3;

    if (start == end || same_point(&pts[order[start]], &pts[order[end]])) {
        stack[0] = start;
        return 1;
    }
    stack[0] = pprev;
    stack[1] = pcur;
    stack[2] = pnext;
    end += incr;

    while (pnext != end) {
        const struct geom_point *prev = &pts[order[pprev]];
        const struct geom_point *cur = &pts[order[pcur]];
        const struct geom_point *next = &pts[order[pnext]];
        int by = next->y - cur->y;
        if (sign_of(by) != nsign) {
            int ax = cur->x - prev->x, ay = cur->y - prev->y;
            int bx = next->x - cur->x;
            int64_t convexity = (int64_t)ay * bx - (int64_t)ax * by;
            if (sign_of(convexity) == sign2 && (ax != 0 || ay != 0)) {
                pprev = pcur;
                pcur = pnext;
                pnext += incr;
                stack[stacksize] = pnext;
                stacksize++;
            } else if (pprev == start) {
                pcur = pnext;
                stack[1] = pcur;
                pnext += incr;
                stack[2] = pnext;
            } else {
                stack[stacksize - 2] = pnext;
                pcur = pprev;
                pprev = stack[stacksize - 4];
                stacksize--;
            }
        } else {
            pnext += incr;
            stack[stacksize - 1] = pnext;
        }
    }
    return --stacksize;
}

/* OpenCV rotates the hull so that the input indices of its vertices ascend or descend, when a
 * rotation can do it; contours then start their hull at the earliest contour point. */
static void rotate_to_monotonic(int *hullbuf, int nout, int *tmp)
{
    int min_idx = 0, max_idx = 0, lt = 0, i;
    for (i = 1; i < nout; i++) {
        int idx = hullbuf[i];
        lt += hullbuf[i - 1] < idx;
        if (lt > 1 && lt <= i - 2)
            break;
        if (idx < hullbuf[min_idx])
            min_idx = i;
        if (idx > hullbuf[max_idx])
            max_idx = i;
    }
    int mmdist = abs(max_idx - min_idx);
    if (!((mmdist == 1 || mmdist == nout - 1) && (lt <= 1 || lt >= nout - 2)))
        return;
    int ascending = (max_idx + 1) % nout == min_idx;
    int i0 = ascending ? min_idx : max_idx, j = i0;
    if (i0 <= 0)
        return;
    for (i = 0; i < nout; i++) {
        int curr_idx = tmp[i] = hullbuf[j];
        int next_j = j + 1 < nout ? j + 1 : 0;
        int next_idx = hullbuf[next_j];
        if (i < nout - 1 && (ascending != (curr_idx < next_idx)))
            break;
        j = next_j;
    }
    if (i == nout)
        for (i = 0; i < nout; i++)
            hullbuf[i] = tmp[i];
}

int geom_convex_hull(const struct geom_point *pts, size_t count, int clockwise, struct geom_point *hull)
{
    if (count == 0)
        return 0;
    if (count > (size_t)(INT32_MAX / 4))
        return -1;
    int total = (int)count, nout = 0, i;
    struct indexed_point *sorted = malloc(sizeof(*sorted) * (size_t)total);
    int *order = malloc(sizeof(int) * (size_t)total);
    int *stack = malloc(sizeof(int) * ((size_t)total + 2));
    int *hullbuf = malloc(sizeof(int) * (size_t)total);
    if (!sorted || !order || !stack || !hullbuf) {
        free(sorted);
        free(order);
        free(stack);
        free(hullbuf);
        return -1;
    }
    for (i = 0; i < total; i++)
        sorted[i] = (struct indexed_point){pts[i].x, pts[i].y, i};
    qsort(sorted, (size_t)total, sizeof(*sorted), compare_indexed_points);
    for (i = 0; i < total; i++)
        order[i] = sorted[i].index;
    free(sorted);

    int miny_ind = 0, maxy_ind = 0;
    for (i = 1; i < total; i++) {
        int y = pts[order[i]].y;
        if (pts[order[miny_ind]].y > y)
            miny_ind = i;
        if (pts[order[maxy_ind]].y < y)
            maxy_ind = i;
    }

    if (same_point(&pts[order[0]], &pts[order[total - 1]])) {
        hullbuf[nout++] = order[0];
    } else {
        int *tl_stack = stack;
        int tl_count = sklansky(pts, order, 0, maxy_ind, tl_stack, -1, 1);
        int *tr_stack = stack + tl_count;
        int tr_count = sklansky(pts, order, total - 1, maxy_ind, tr_stack, -1, -1);
        if (!clockwise) {
            int *swap_stack = tl_stack;
            tl_stack = tr_stack;
            tr_stack = swap_stack;
            int swap_count = tl_count;
            tl_count = tr_count;
            tr_count = swap_count;
        }
        for (i = 0; i < tl_count - 1; i++)
            hullbuf[nout++] = order[tl_stack[i]];
        for (i = tr_count - 1; i > 0; i--)
            hullbuf[nout++] = order[tr_stack[i]];
        int stop_idx = tr_count > 2 ? tr_stack[1] : tl_count > 2 ? tl_stack[tl_count - 2] : -1;

        int *bl_stack = stack;
        int bl_count = sklansky(pts, order, 0, miny_ind, bl_stack, 1, -1);
        int *br_stack = stack + bl_count;
        int br_count = sklansky(pts, order, total - 1, miny_ind, br_stack, 1, 1);
        if (clockwise) {
            int *swap_stack = bl_stack;
            bl_stack = br_stack;
            br_stack = swap_stack;
            int swap_count = bl_count;
            bl_count = br_count;
            br_count = swap_count;
        }

        if (stop_idx >= 0) {
            int check_idx = bl_count > 2 ? bl_stack[1] : bl_count + br_count > 2 ? br_stack[2 - bl_count] : -1;
            if (check_idx == stop_idx ||
                (check_idx >= 0 && same_point(&pts[order[check_idx]], &pts[order[stop_idx]]))) {
                /* all points on one line: the lower half mirrors the upper one */
                if (bl_count > 2)
                    bl_count = 2;
                if (br_count > 2)
                    br_count = 2;
            }
        }
        for (i = 0; i < bl_count - 1; i++)
            hullbuf[nout++] = order[bl_stack[i]];
        for (i = br_count - 1; i > 0; i--)
            hullbuf[nout++] = order[br_stack[i]];
        if (nout >= 3)
            rotate_to_monotonic(hullbuf, nout, stack);
    }
    for (i = 0; i < nout; i++)
        hull[i] = pts[hullbuf[i]];
    free(order);
    free(stack);
    free(hullbuf);
    return nout;
}
