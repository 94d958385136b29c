/* cv::minAreaRect and cv::boxPoints (OpenCV 4.6, rotcalipers.cpp and types.cpp, the version with
 * firstVecIsRight), operation for operation in the same float/double mix: PaddleOCR truncates these corners to integers, so a
 * last-bit difference can move a box by a pixel. */
#include "ocr/geometry.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

#define GEOM_PI 3.1415926535897932384626433832795

struct calipers_result {
    struct geom_pointf corner, side1, side2;
};

/* OpenCV's firstVecIsRight: v1 turned clockwise (y down) has a negative dot product with v2 */
static int first_vector_is_right(struct geom_pointf v1, struct geom_pointf v2)
{
    float tx = v1.y, ty = -v1.x;
    return tx * v2.x + ty * v2.y < 0;
}

/* Rotating calipers over the hull (any orientation); the smallest rectangle as one corner and
 * two side vectors. Ties go to the last edge examined, as in OpenCV (area <= minarea). */
static void rotating_calipers_min_area(const struct geom_pointf *points, int n, float *inv_len,
                                       struct geom_pointf *vect, struct calipers_result *res)
{
    float minarea = FLT_MAX;
    int left = 0, bottom = 0, right = 0, top = 0, i, k;
    int seq[4];
    float orientation = 0, base_a, base_b = 0;
    struct geom_pointf pt0 = points[0];
    float left_x = pt0.x, right_x = pt0.x, top_y = pt0.y, bottom_y = pt0.y;
    int best_left = 0, best_bottom = 0;
    float best_a = 0, best_b = 0, best_width = 0, best_height = 0;

    for (i = 0; i < n; i++) {
        if (pt0.x < left_x)
            left_x = pt0.x, left = i;
        if (pt0.x > right_x)
            right_x = pt0.x, right = i;
        if (pt0.y > top_y)
            top_y = pt0.y, top = i;
        if (pt0.y < bottom_y)
            bottom_y = pt0.y, bottom = i;
        struct geom_pointf pt = points[i + 1 < n ? i + 1 : 0];
        double dx = pt.x - pt0.x, dy = pt.y - pt0.y; /* differences in float, as OpenCV */
        vect[i].x = (float)dx;
        vect[i].y = (float)dy;
        inv_len[i] = (float)(1. / sqrt(dx * dx + dy * dy));
        pt0 = pt;
    }

    {
        double ax = vect[n - 1].x, ay = vect[n - 1].y;
        for (i = 0; i < n; i++) {
            double bx = vect[i].x, by = vect[i].y;
            double convexity = ax * by - ay * bx;
            if (convexity != 0) {
                orientation = convexity > 0 ? 1.f : -1.f;
                break;
            }
            ax = bx;
            ay = by;
        }
    }
    base_a = orientation;

    seq[0] = bottom;
    seq[1] = right;
    seq[2] = top;
    seq[3] = left;

    for (k = 0; k < n; k++) {
        /* the caliper side making the smallest angle with its hull edge: compare the edges,
         * each turned into the first caliper's frame, by the sign of a cross product */
        struct geom_pointf rot[4] = {
            vect[seq[0]],
            {vect[seq[1]].y, -vect[seq[1]].x},
            {-vect[seq[2]].x, -vect[seq[2]].y},
            {-vect[seq[3]].y, vect[seq[3]].x},
        };
        int main_element = 0;
        for (i = 1; i < 4; i++)
            if (first_vector_is_right(rot[i], rot[main_element]))
                main_element = i;

        int pindex = seq[main_element];
        float lead_x = vect[pindex].x * inv_len[pindex];
        float lead_y = vect[pindex].y * inv_len[pindex];
        switch (main_element) {
        case 0:
            base_a = lead_x;
            base_b = lead_y;
            break;
        case 1:
            base_a = lead_y;
            base_b = -lead_x;
            break;
        case 2:
            base_a = -lead_x;
            base_b = -lead_y;
            break;
        default:
            base_a = -lead_y;
            base_b = lead_x;
            break;
        }
        seq[main_element] += 1;
        if (seq[main_element] == n)
            seq[main_element] = 0;

        float dx = points[seq[1]].x - points[seq[3]].x;
        float dy = points[seq[1]].y - points[seq[3]].y;
        float width = dx * base_a + dy * base_b;
        dx = points[seq[2]].x - points[seq[0]].x;
        dy = points[seq[2]].y - points[seq[0]].y;
        float height = -dx * base_b + dy * base_a;
        float area = width * height;
        if (area <= minarea) {
            minarea = area;
            best_left = seq[3];
            best_a = base_a;
            best_width = width;
            best_b = base_b;
            best_height = height;
            best_bottom = seq[0];
        }
    }

    float A1 = best_a, B1 = best_b, A2 = -best_b, B2 = best_a;
    float C1 = A1 * points[best_left].x + points[best_left].y * B1;
    float C2 = A2 * points[best_bottom].x + points[best_bottom].y * B2;
    float idet = 1.f / (A1 * B2 - A2 * B1);
    res->corner.x = (C1 * B2 - C2 * B1) * idet;
    res->corner.y = (A1 * C2 - A2 * C1) * idet;
    res->side1.x = A1 * best_width;
    res->side1.y = B1 * best_width;
    res->side2.x = A2 * best_height;
    res->side2.y = B2 * best_height;
}

int geom_min_area_rect(const struct geom_point *pts, size_t n, struct geom_rotated_rect *rect)
{
    *rect = (struct geom_rotated_rect){0};
    if (n == 0)
        return 0;
    struct geom_point *hull = malloc(sizeof(*hull) * n);
    if (!hull)
        return -1;
    int nh = geom_convex_hull(pts, n, 0, hull); /* OpenCV 4.6 asks for clockwise = false */
    if (nh < 0) {
        free(hull);
        return -1;
    }
    /* one block: hull as float, then edge vectors, then inverse edge lengths */
    struct geom_pointf *hp = malloc((sizeof(struct geom_pointf) * 2 + sizeof(float)) * (size_t)(nh + 1));
    if (!hp) {
        free(hull);
        return -1;
    }
    for (int i = 0; i < nh; i++)
        hp[i] = (struct geom_pointf){(float)hull[i].x, (float)hull[i].y};
    free(hull);

    if (nh > 2) {
        struct geom_pointf *vect = hp + nh;
        float *inv_len = (float *)(vect + nh);
        struct calipers_result r;
        rotating_calipers_min_area(hp, nh, inv_len, vect, &r);
        rect->cx = r.corner.x + (r.side1.x + r.side2.x) * 0.5f;
        rect->cy = r.corner.y + (r.side1.y + r.side2.y) * 0.5f;
        rect->width = (float)sqrt((double)r.side1.x * r.side1.x + (double)r.side1.y * r.side1.y);
        rect->height = (float)sqrt((double)r.side2.x * r.side2.x + (double)r.side2.y * r.side2.y);
        rect->angle = (float)atan2((double)r.side1.y, (double)r.side1.x);
    } else if (nh == 2) {
        rect->cx = (hp[0].x + hp[1].x) * 0.5f;
        rect->cy = (hp[0].y + hp[1].y) * 0.5f;
        double dx = hp[1].x - hp[0].x, dy = hp[1].y - hp[0].y;
        rect->width = (float)sqrt(dx * dx + dy * dy);
        rect->height = 0;
        rect->angle = (float)atan2(dy, dx);
    } else {
        rect->cx = hp[0].x;
        rect->cy = hp[0].y;
    }
    rect->angle = (float)(rect->angle * 180 / GEOM_PI);
    free(hp);
    return 0;
}

void geom_box_points(const struct geom_rotated_rect *rect, struct geom_pointf pt[4])
{
    double angle = rect->angle * GEOM_PI / 180.;
    float b = (float)cos(angle) * 0.5f;
    float a = (float)sin(angle) * 0.5f;
    pt[0].x = rect->cx - a * rect->height - b * rect->width;
    pt[0].y = rect->cy + b * rect->height - a * rect->width;
    pt[1].x = rect->cx + a * rect->height - b * rect->width;
    pt[1].y = rect->cy - b * rect->height - a * rect->width;
    pt[2].x = 2 * rect->cx - pt[0].x;
    pt[2].y = 2 * rect->cy - pt[0].y;
    pt[3].x = 2 * rect->cx - pt[1].x;
    pt[3].y = 2 * rect->cy - pt[1].y;
}
