/* DBPostProcess.boxes_from_bitmap of PaddleOCR 2.x, step for step as the reference
 * (shared/reference/ref_ocr.mjs) runs it, in the same float32/double arithmetic. */
#include "ocr/db_postprocess.h"

#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/box_score.h"
#include "ocr/contour.h"
#include "ocr/geometry.h"
#include "ocr/polygon_offset.h"
#include "ocr/workers.h"

void db_params_default(struct db_params *p)
{
    p->thresh = 0.3f;
    p->box_thresh = 0.6;
    p->unclip_ratio = 1.5;
    p->max_candidates = 1000;
    p->min_size = 3;
    p->workers = NULL;
}

/* get_mini_boxes: the min-area rectangle's corners sorted by x (stably), then the left pair and
 * the right pair each ordered by y, as [left-top, right-top, right-bottom, left-bottom]. */
static int mini_box(const struct geom_point *pts, size_t n, struct geom_pointf box[4], float *short_side)
{
    struct geom_rotated_rect rect;
    if (geom_min_area_rect(pts, n, &rect))
        return -1;
    struct geom_pointf c[4];
    geom_box_points(&rect, c);
    for (int i = 1; i < 4; i++) /* insertion sort: stable */
        for (int j = i; j > 0 && c[j].x < c[j - 1].x; j--) {
            struct geom_pointf t = c[j];
            c[j] = c[j - 1];
            c[j - 1] = t;
        }
    int i1, i2, i3, i4;
    if (c[1].y > c[0].y)
        i1 = 0, i4 = 1;
    else
        i1 = 1, i4 = 0;
    if (c[3].y > c[2].y)
        i2 = 2, i3 = 3;
    else
        i2 = 3, i3 = 2;
    box[0] = c[i1];
    box[1] = c[i2];
    box[2] = c[i3];
    box[3] = c[i4];
    *short_side = fminf(rect.width, rect.height);
    return 0;
}

/* V8's Math.hypot (normalised by the larger value, Kahan-compensated sum): the reference measures
 * the perimeter with it, and the offset distance follows from it. */
static double js_hypot(double a, double b)
{
    double v[2] = {fabs(a), fabs(b)};
    double max = v[0] > v[1] ? v[0] : v[1];
    if (max == 0)
        return 0;
    double sum = 0, compensation = 0;
    for (int i = 0; i < 2; i++) {
        double n = v[i] / max;
        double summand = n * n - compensation;
        double preliminary = sum + summand;
        compensation = (preliminary - sum) - summand;
        sum = preliminary;
    }
    return sqrt(sum) * max;
}

/* unclip: offset distance from shapely's area and length of the float box; the box goes to
 * Clipper with its coordinates truncated to integers, as pyclipper does. */
static int unclip(const struct geom_pointf box[4], double ratio, struct geom_point **out, size_t *n_out, char *err,
                  size_t err_len)
{
    double area = 0, length = 0;
    for (int i = 0; i < 4; i++) {
        double x0 = box[i].x, y0 = box[i].y, x1 = box[(i + 1) % 4].x, y1 = box[(i + 1) % 4].y;
        area += x0 * y1 - x1 * y0;
        length += js_hypot(x1 - x0, y1 - y0);
    }
    area = fabs(area) / 2;
    double distance = area * ratio / length;
    struct geom_point path[4];
    for (int i = 0; i < 4; i++)
        path[i] = (struct geom_point){(int32_t)box[i].x, (int32_t)box[i].y};
    return polygon_offset_round(path, 4, distance, out, n_out, err, err_len);
}

/* np.round(x / map_size * src_size) in float32, clipped to [0, src_size] */
static int scale_coordinate(float v, int map_size, int src_size)
{
    float r = (float)((double)(float)((double)v / map_size) * src_size);
    double rounded = nearbyint(r); /* half to even in the default rounding mode */
    if (rounded < 0)
        rounded = 0;
    if (rounded > src_size)
        rounded = src_size;
    return (int)rounded;
}

/* One contour's box (box_score_fast, unclip, the grown box): 1 with *b set, 0 when a filter drops
 * it, -1 with a reason in err. */
static int contour_box(const float *prob, const struct contour_list *contours, size_t k, int map_w, int map_h,
                       int src_w, int src_h, const struct db_params *params, struct db_box *b, char *err,
                       size_t err_len)
{
    struct geom_pointf box[4], grown_box[4];
    float short_side;
    if (mini_box(contours->points + contours->start[k], contour_length(contours, k), box, &short_side))
        goto oom;
    if (short_side < params->min_size)
        return 0;
    double score;
    if (box_score_fast(prob, map_w, map_h, box, &score))
        goto oom;
    if (params->box_thresh > score)
        return 0;
    struct geom_point *grown;
    size_t n_grown;
    if (unclip(box, params->unclip_ratio, &grown, &n_grown, err, err_len))
        return -1;
    if (n_grown == 0) {
        free(grown);
        return 0;
    }
    int rc = mini_box(grown, n_grown, grown_box, &short_side);
    free(grown);
    if (rc)
        goto oom;
    if (short_side < params->min_size + 2)
        return 0;
    for (int i = 0; i < 4; i++) {
        b->pts[i][0] = scale_coordinate(grown_box[i].x, map_w, src_w);
        b->pts[i][1] = scale_coordinate(grown_box[i].y, map_h, src_h);
    }
    b->score = score;
    return 1;
oom:
    snprintf(err, err_len, "db: out of memory");
    return -1;
}

/* The contours' boxes as tasks (ocr_workers_run), each into its own slot, gathered in contour
 * order afterwards: the same boxes in the same order on any number of threads. */
struct box_job {
    const float *prob;
    const struct contour_list *contours;
    int map_w, map_h, src_w, src_h;
    const struct db_params *params;
    struct db_box *slots;
    signed char *kept; /* contour_box's result per contour */
    atomic_int failed;
    char *err;
    size_t err_len;
};

static void box_task(void *arg, int k)
{
    struct box_job *j = arg;
    char why[256];
    j->kept[k] = (signed char)contour_box(j->prob, j->contours, (size_t)k, j->map_w, j->map_h, j->src_w, j->src_h,
                                          j->params, &j->slots[k], why, sizeof(why));
    if (j->kept[k] < 0 && atomic_exchange(&j->failed, 1) == 0)
        snprintf(j->err, j->err_len, "%s", why);
}

int db_boxes_from_map(const float *prob, int8_t *work, int map_w, int map_h, int src_w, int src_h,
                      const struct db_params *params, struct db_boxes *out, char *err, size_t err_len)
{
    memset(out, 0, sizeof(*out));
    if (!prob || map_w <= 0 || map_h <= 0 || src_w <= 0 || src_h <= 0) {
        snprintf(err, err_len, "db: bad sizes (map %dx%d, image %dx%d)", map_w, map_h, src_w, src_h);
        return -1;
    }
    if (params->max_candidates < 0 || params->min_size < 0 || !(params->unclip_ratio >= 0)) {
        snprintf(err, err_len, "db: bad parameters (max_candidates %d, min_size %d, unclip_ratio %g)",
                 params->max_candidates, params->min_size, params->unclip_ratio);
        return -1;
    }
    struct contour_list contours;
    if (work ? contours_find_in_work(work, map_w, map_h, &contours, err, err_len)
             : contours_find_above(prob, map_w, map_h, params->thresh, &contours, err, err_len))
        return -1;

    size_t n = contours.count < (size_t)params->max_candidates ? contours.count : (size_t)params->max_candidates;
    struct box_job job = {prob, &contours, map_w, map_h, src_w, src_h, params, NULL, NULL, 0, err, err_len};
    job.slots = malloc((n ? n : 1) * sizeof(*job.slots));
    job.kept = malloc(n ? n : 1);
    if (!job.slots || !job.kept) {
        free(job.slots);
        free(job.kept);
        contour_list_free(&contours);
        snprintf(err, err_len, "db: out of memory");
        return -1;
    }
    ocr_workers_run(params->workers, (int)n, box_task, &job);
    contour_list_free(&contours);
    if (atomic_load(&job.failed)) {
        free(job.slots);
        free(job.kept);
        return -1;
    }
    /* the slots become the result, the kept ones moved to the front in contour order */
    out->boxes = job.slots;
    for (size_t k = 0; k < n; k++)
        if (job.kept[k] > 0)
            out->boxes[out->count++] = job.slots[k];
    free(job.kept);
    return 0;
}

int db_postprocess(const float *prob, int8_t *work, int map_w, int map_h, int src_w, int src_h,
                   const struct db_params *params, struct db_boxes *out, char *err, size_t err_len)
{
    if (db_boxes_from_map(prob, work, map_w, map_h, src_w, src_h, params, out, err, err_len))
        return -1;
    db_boxes_filter(out, src_w, src_h);
    db_boxes_sort(out);
    return 0;
}

void db_boxes_free(struct db_boxes *boxes)
{
    free(boxes->boxes);
    boxes->boxes = NULL;
    boxes->count = 0;
}
