/* PaddleOCR's handling of the DB boxes before cropping: filter_tag_det_res (predict_det.py) and
 * sorted_boxes (predict_system.py). */
#include <math.h>
#include <stdlib.h>

#include "ocr/db_postprocess.h"

/* order_points_clockwise: top-left has the smallest x + y, bottom-right the largest; of the other
 * two, top-right has the smallest y - x. First index wins ties, as numpy's argmin/argmax. */
static void order_clockwise(int pts[4][2])
{
    int i_min = 0, i_max = 0;
    for (int i = 1; i < 4; i++) {
        if (pts[i][0] + pts[i][1] < pts[i_min][0] + pts[i_min][1])
            i_min = i;
        if (pts[i][0] + pts[i][1] > pts[i_max][0] + pts[i_max][1])
            i_max = i;
    }
    int rest[3], n_rest = 0;
    for (int i = 0; i < 4; i++)
        if (i != i_min && i != i_max)
            rest[n_rest++] = i;
    int r_min = 0, r_max = 0;
    for (int i = 1; i < n_rest; i++) {
        if (pts[rest[i]][1] - pts[rest[i]][0] < pts[rest[r_min]][1] - pts[rest[r_min]][0])
            r_min = i;
        if (pts[rest[i]][1] - pts[rest[i]][0] > pts[rest[r_max]][1] - pts[rest[r_max]][0])
            r_max = i;
    }
    int ordered[4][2];
    int from[4] = {i_min, rest[r_min], i_max, rest[r_max]};
    for (int i = 0; i < 4; i++) {
        ordered[i][0] = pts[from[i]][0];
        ordered[i][1] = pts[from[i]][1];
    }
    for (int i = 0; i < 4; i++) {
        pts[i][0] = ordered[i][0];
        pts[i][1] = ordered[i][1];
    }
}

/* int(np.linalg.norm(a - b)) of two int points, as float32 */
static int side_length(const int a[2], const int b[2])
{
    float dx = (float)(a[0] - b[0]), dy = (float)(a[1] - b[1]);
    return (int)sqrtf(dx * dx + dy * dy);
}

static int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void db_boxes_filter(struct db_boxes *boxes, int src_w, int src_h)
{
    size_t kept = 0;
    for (size_t i = 0; i < boxes->count; i++) {
        struct db_box b = boxes->boxes[i];
        order_clockwise(b.pts);
        for (int k = 0; k < 4; k++) {
            b.pts[k][0] = clamp_int(b.pts[k][0], 0, src_w - 1);
            b.pts[k][1] = clamp_int(b.pts[k][1], 0, src_h - 1);
        }
        if (side_length(b.pts[0], b.pts[1]) <= 3 || side_length(b.pts[0], b.pts[3]) <= 3)
            continue;
        boxes->boxes[kept++] = b;
    }
    boxes->count = kept;
}

static int before(const struct db_box *a, size_t ia, const struct db_box *b, size_t ib)
{
    if (a->pts[0][1] != b->pts[0][1])
        return a->pts[0][1] < b->pts[0][1];
    if (a->pts[0][0] != b->pts[0][0])
        return a->pts[0][0] < b->pts[0][0];
    return ia < ib;
}

void db_boxes_sort(struct db_boxes *boxes)
{
    size_t n = boxes->count;
    struct db_box *b = boxes->boxes;
    /* stable insertion sort: box counts are bounded by max_candidates and mostly near sorted */
    for (size_t i = 1; i < n; i++) {
        struct db_box t = b[i];
        size_t j = i;
        while (j > 0 && before(&t, 1, &b[j - 1], 0)) {
            b[j] = b[j - 1];
            j--;
        }
        b[j] = t;
    }
    /* the adjacent-swap pass of sorted_boxes, kept as PaddleOCR has it (it is not a full sort) */
    for (size_t i = 0; i + 1 < n; i++) {
        for (size_t j = i + 1; j-- > 0;) {
            if (abs(b[j + 1].pts[0][1] - b[j].pts[0][1]) < 10 && b[j + 1].pts[0][0] < b[j].pts[0][0]) {
                struct db_box t = b[j];
                b[j] = b[j + 1];
                b[j + 1] = t;
            } else {
                break;
            }
        }
    }
}
