/* ClipperOffset of clipper-lib 6.4.2 (the JS port used by the reference; pyclipper wraps the same
 * C++ version) for one closed polygon with round joins, in the same double arithmetic and with
 * its rounding (half away from zero). Clipper's general union pass that ends Execute is replaced
 * by its effect on the convex rings this code offsets (union_cleanup). */
#include "ocr/polygon_offset.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CLIPPER_PI 3.14159265358979 /* the literals Clipper uses */
#define CLIPPER_TWO_PI 6.28318530717959
#define CLIPPER_ARC_TOLERANCE 0.25
#define CLIPPER_NEAR_ZERO 1.0E-20

struct normal {
    double x, y;
};

struct offset_state {
    const struct geom_point *src;
    const struct normal *normals;
    double delta, sin_a, sin, cos, steps_per_rad;
    struct geom_point *dst;
    size_t len, cap;
};

static double clipper_round(double a)
{
    return a < 0 ? ceil(a - 0.5) : floor(a + 0.5);
}

static int emit(struct offset_state *st, double x, double y)
{
    if (st->len == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 64;
        struct geom_point *d = realloc(st->dst, cap * sizeof(*d));
        if (!d)
            return -1;
        st->dst = d;
        st->cap = cap;
    }
    st->dst[st->len++] = (struct geom_point){(int32_t)clipper_round(x), (int32_t)clipper_round(y)};
    return 0;
}

static struct normal unit_normal(struct geom_point a, struct geom_point b)
{
    double dx = (double)b.x - a.x, dy = (double)b.y - a.y;
    if (dx == 0 && dy == 0)
        return (struct normal){0, 0};
    double f = 1 / sqrt(dx * dx + dy * dy);
    dx *= f;
    dy *= f;
    return (struct normal){dy, -dx};
}

static int do_round(struct offset_state *st, int j, int k)
{
    const struct normal *nk = &st->normals[k], *nj = &st->normals[j];
    double a = atan2(st->sin_a, nk->x * nj->x + nk->y * nj->y);
    /* Cast_Int32 of the rounded value, then at least one step */
    int steps = (int)(int32_t)clipper_round(st->steps_per_rad * fabs(a));
    if (steps < 1)
        steps = 1;
    double x = nk->x, y = nk->y;
    for (int i = 0; i < steps; i++) {
        if (emit(st, st->src[j].x + x * st->delta, st->src[j].y + y * st->delta))
            return -1;
        double x2 = x;
        x = x * st->cos - st->sin * y;
        y = x2 * st->sin + y * st->cos;
    }
    return emit(st, st->src[j].x + nj->x * st->delta, st->src[j].y + nj->y * st->delta);
}

/* Returns the new k, or -1 when out of memory. */
static int offset_point(struct offset_state *st, int j, int k)
{
    const struct normal *nk = &st->normals[k], *nj = &st->normals[j];
    st->sin_a = nk->x * nj->y - nj->x * nk->y;
    if (fabs(st->sin_a * st->delta) < 1.0) {
        double cos_a = nk->x * nj->x + nj->y * nk->y;
        if (cos_a > 0) { /* nearly straight: one point */
            if (emit(st, st->src[j].x + nk->x * st->delta, st->src[j].y + nk->y * st->delta))
                return -1;
            return k;
        }
    } else if (st->sin_a > 1) {
        st->sin_a = 1.0;
    } else if (st->sin_a < -1) {
        st->sin_a = -1.0;
    }
    if (st->sin_a * st->delta < 0) { /* concave corner */
        if (emit(st, st->src[j].x + nk->x * st->delta, st->src[j].y + nk->y * st->delta) ||
            emit(st, st->src[j].x, st->src[j].y) ||
            emit(st, st->src[j].x + nj->x * st->delta, st->src[j].y + nj->y * st->delta))
            return -1;
    } else if (do_round(st, j, k)) {
        return -1;
    }
    return j;
}

static int same_point(struct geom_point a, struct geom_point b)
{
    return a.x == b.x && a.y == b.y;
}

/* What Clipper's closing union pass (ctUnion, pftPositive) returns for the offset of a convex
 * polygon: the same ring without repeated or collinear vertices, starting after the top-most
 * (then right-most) vertex. Checked equal to clipper-lib on 40000 random offset boxes. The start
 * matters: cv::minAreaRect breaks ties by the order of its input points. */
static size_t union_cleanup(struct geom_point *p, size_t n)
{
    int changed = 1;
    while (changed && n >= 3) {
        changed = 0;
        for (size_t i = 0; i < n && n >= 3;) {
            struct geom_point a = p[(i + n - 1) % n], b = p[i], c = p[(i + 1) % n];
            int64_t cross = (int64_t)(b.x - a.x) * (c.y - b.y) - (int64_t)(b.y - a.y) * (c.x - b.x);
            if (same_point(a, b) || same_point(b, c) || cross == 0) {
                memmove(p + i, p + i + 1, (n - i - 1) * sizeof(*p));
                n--;
                changed = 1;
            } else {
                i++;
            }
        }
    }
    if (n < 3)
        return 0;
    size_t top = 0;
    for (size_t i = 1; i < n; i++)
        if (p[i].y < p[top].y || (p[i].y == p[top].y && p[i].x > p[top].x))
            top = i;
    size_t start = (top + 1) % n;
    struct geom_point *rotated = malloc(n * sizeof(*p));
    if (!rotated)
        return n; /* keep Clipper's ring unrotated rather than fail: same vertices */
    for (size_t i = 0; i < n; i++)
        rotated[i] = p[(start + i) % n];
    memcpy(p, rotated, n * sizeof(*p));
    free(rotated);
    return n;
}

static double clipper_area(const struct geom_point *p, size_t n)
{
    if (n < 3)
        return 0;
    double a = 0;
    for (size_t i = 0, j = n - 1; i < n; j = i++)
        a += ((double)p[j].x + p[i].x) * ((double)p[j].y - p[i].y);
    return -a * 0.5;
}

int polygon_offset_round(const struct geom_point *path, size_t n, double delta, struct geom_point **out, size_t *n_out,
                         char *err, size_t err_len)
{
    *out = NULL;
    *n_out = 0;
    if (!(delta >= 0)) {
        snprintf(err, err_len, "polygon offset: only growing is supported (delta %g)", delta);
        return -1;
    }
    if (n == 0)
        return 0;
    if (n > (size_t)INT32_MAX / 2) {
        snprintf(err, err_len, "polygon offset: %zu points is too many", n);
        return -1;
    }
    struct geom_point *src = malloc(n * sizeof(*src));
    struct normal *normals = malloc(n * sizeof(*normals));
    struct offset_state st = {0};
    if (!src || !normals)
        goto oom;

    /* AddPath: drop closing repeats of the first point and consecutive duplicates */
    size_t high = n - 1;
    while (high > 0 && path[0].x == path[high].x && path[0].y == path[high].y)
        high--;
    size_t len = 0;
    src[len++] = path[0];
    for (size_t i = 1; i <= high; i++)
        if (src[len - 1].x != path[i].x || src[len - 1].y != path[i].y)
            src[len++] = path[i];
    if (len < 3)
        goto empty;

    /* FixOrientations: Clipper wants a positive area (its orientation), else reverses */
    if (!(clipper_area(src, len) >= 0))
        for (size_t i = 0, j = len - 1; i < j; i++, j--) {
            struct geom_point t = src[i];
            src[i] = src[j];
            src[j] = t;
        }

    if (delta > -CLIPPER_NEAR_ZERO && delta < CLIPPER_NEAR_ZERO) {
        *out = src;
        *n_out = union_cleanup(src, len);
        free(normals);
        return 0;
    }

    double tolerance = CLIPPER_ARC_TOLERANCE;
    if (tolerance > fabs(delta) * CLIPPER_ARC_TOLERANCE)
        tolerance = fabs(delta) * CLIPPER_ARC_TOLERANCE;
    double steps = CLIPPER_PI / acos(1 - tolerance / fabs(delta));
    st.sin = sin(CLIPPER_TWO_PI / steps);
    st.cos = cos(CLIPPER_TWO_PI / steps);
    st.steps_per_rad = steps / CLIPPER_TWO_PI;
    st.delta = delta;
    st.src = src;
    st.normals = normals;

    for (size_t j = 0; j + 1 < len; j++)
        normals[j] = unit_normal(src[j], src[j + 1]);
    normals[len - 1] = unit_normal(src[len - 1], src[0]);
    int k = (int)len - 1;
    for (int j = 0; j < (int)len; j++) {
        k = offset_point(&st, j, k);
        if (k < 0)
            goto oom;
    }
    free(src);
    free(normals);
    if (clipper_area(st.dst, st.len) == 0) { /* Clipper's union returns nothing for a flat polygon */
        free(st.dst);
        return 0;
    }
    *out = st.dst;
    *n_out = union_cleanup(st.dst, st.len);
    return 0;

empty:
    free(src);
    free(normals);
    return 0;
oom:
    free(src);
    free(normals);
    free(st.dst);
    snprintf(err, err_len, "polygon offset: out of memory");
    return -1;
}
