/* Geometry under DB post-processing, on cases small enough to work out by hand: contour tracing
 * (OpenCV's border following), convex hull, min-area rectangle and its corners, polygon fill,
 * Clipper's round offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/contour.h"
#include "ocr/geometry.h"
#include "ocr/poly_fill.h"
#include "ocr/polygon_offset.h"

/* ---------------------------------------------------------------- contours */

/* rows of '0'/'1' characters */
static struct contour_list trace(const char *const *rows, int w, int h)
{
    uint8_t *bitmap = malloc((size_t)w * (size_t)h);
    assert_non_null(bitmap);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            bitmap[y * w + x] = rows[y][x] == '1';
    struct contour_list list;
    char err[128];
    assert_int_equal(contours_find(bitmap, w, h, &list, err, sizeof(err)), 0);
    free(bitmap);
    return list;
}

static void assert_contour(const struct contour_list *list, size_t k, const int (*xy)[2], size_t n)
{
    assert_true(k < list->count);
    assert_int_equal(contour_length(list, k), n);
    const struct geom_point *p = list->points + list->start[k];
    for (size_t i = 0; i < n; i++) {
        if (p[i].x != xy[i][0] || p[i].y != xy[i][1])
            fail_msg("contour %zu point %zu: (%d,%d), expected (%d,%d)", k, i, p[i].x, p[i].y, xy[i][0], xy[i][1]);
    }
}

static void test_contour_single_pixel(void **state)
{
    (void)state;
    const char *rows[] = {"00000", "00100", "00000", "00000"};
    struct contour_list list = trace(rows, 5, 4);
    assert_int_equal(list.count, 1);
    const int want[][2] = {{2, 1}};
    assert_contour(&list, 0, want, 1);
    contour_list_free(&list);
}

static void test_contour_square_keeps_corners_only(void **state)
{
    (void)state;
    /* CHAIN_APPROX_SIMPLE: straight runs collapse to their ends; traced down the left side first */
    const char *rows[] = {"000000", "011100", "011100", "011100", "000000", "000000"};
    struct contour_list list = trace(rows, 6, 6);
    assert_int_equal(list.count, 1);
    const int want[][2] = {{1, 1}, {1, 3}, {3, 3}, {3, 1}};
    assert_contour(&list, 0, want, 4);
    contour_list_free(&list);
}

static void test_contour_hole_is_listed_first(void **state)
{
    (void)state;
    /* RETR_LIST lists the hole border too; it is found after the outer one (in a later row),
     * and OpenCV lists the last found first. The hole border runs through the foreground pixels
     * around the hole, cutting corners diagonally. */
    const char *rows[] = {"0000000", "0111110", "0111110", "0110110", "0111110", "0111110", "0000000"};
    struct contour_list list = trace(rows, 7, 7);
    assert_int_equal(list.count, 2);
    const int hole[][2] = {{2, 3}, {3, 2}, {4, 3}, {3, 4}};
    const int outer[][2] = {{1, 1}, {1, 5}, {5, 5}, {5, 1}};
    assert_contour(&list, 0, hole, 4);
    assert_contour(&list, 1, outer, 4);
    contour_list_free(&list);
}

static void test_contour_diagonal_touch_is_one_component(void **state)
{
    (void)state;
    /* 8-connectivity: two squares touching at a corner are one border, walked out and back */
    const char *rows[] = {"110000", "110000", "001100", "001100", "000000"};
    struct contour_list list = trace(rows, 6, 5);
    assert_int_equal(list.count, 1);
    const int want[][2] = {{0, 0}, {0, 1}, {1, 1}, {2, 2}, {2, 3}, {3, 3}, {3, 2}, {2, 2}, {1, 1}, {1, 0}};
    assert_contour(&list, 0, want, 10);
    contour_list_free(&list);
}

static void test_contour_whole_image_touches_borders(void **state)
{
    (void)state;
    const char *rows[] = {"1111", "1111", "1111"};
    struct contour_list list = trace(rows, 4, 3);
    assert_int_equal(list.count, 1);
    const int want[][2] = {{0, 0}, {0, 2}, {3, 2}, {3, 0}};
    assert_contour(&list, 0, want, 4);
    contour_list_free(&list);
}

static void test_contour_order_is_last_found_first(void **state)
{
    (void)state;
    const char *rows[] = {"11100000", "11100000", "00000000", "00000111", "00000111", "00000111"};
    struct contour_list list = trace(rows, 8, 6);
    assert_int_equal(list.count, 2);
    const int lower[][2] = {{5, 3}, {5, 5}, {7, 5}, {7, 3}};
    const int upper[][2] = {{0, 0}, {0, 1}, {2, 1}, {2, 0}};
    assert_contour(&list, 0, lower, 4);
    assert_contour(&list, 1, upper, 4);
    contour_list_free(&list);
}

static void test_contour_ring_with_island(void **state)
{
    (void)state;
    /* outer border, hole border (8 points: the hole's corners are cut), and a bar inside the hole */
    const char *rows[] = {"1111111", "1000001", "1011101", "1000001", "1111111"};
    struct contour_list list = trace(rows, 7, 5);
    assert_int_equal(list.count, 3);
    const int bar[][2] = {{2, 2}, {4, 2}};
    const int hole[][2] = {{0, 1}, {1, 0}, {5, 0}, {6, 1}, {6, 3}, {5, 4}, {1, 4}, {0, 3}};
    const int outer[][2] = {{0, 0}, {0, 4}, {6, 4}, {6, 0}};
    assert_contour(&list, 0, bar, 2);
    assert_contour(&list, 1, hole, 8);
    assert_contour(&list, 2, outer, 4);
    contour_list_free(&list);
}

static void test_contour_empty_image_and_bad_size(void **state)
{
    (void)state;
    const char *rows[] = {"000", "000"};
    struct contour_list list = trace(rows, 3, 2);
    assert_int_equal(list.count, 0);
    contour_list_free(&list);
    char err[128] = "";
    uint8_t px = 1;
    assert_int_equal(contours_find(&px, 0, 1, &list, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "empty image"));
}

/* A float map traced straight (map > thresh) gives what its thresholded bitmap gives: random
 * blobs on odd sizes, values exactly at the threshold (not foreground) included. */
static void test_contour_of_thresholded_map(void **state)
{
    (void)state;
    const int sizes[][2] = {{1, 1}, {7, 3}, {33, 17}, {64, 61}};
    const float thresh = 0.3f;
    unsigned seed = 12345;
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int w = sizes[s][0], h = sizes[s][1];
        float *map = malloc((size_t)w * h * sizeof(float));
        uint8_t *bitmap = malloc((size_t)w * h);
        assert_non_null(map);
        assert_non_null(bitmap);
        for (int i = 0; i < w * h; i++) {
            seed = seed * 1103515245u + 12345u;
            unsigned r = (seed >> 16) % 5;
            map[i] = r == 0 ? thresh : r < 3 ? 0.1f : 0.9f;
            bitmap[i] = map[i] > thresh;
        }
        struct contour_list a, b;
        char err[128];
        assert_int_equal(contours_find(bitmap, w, h, &a, err, sizeof(err)), 0);
        assert_int_equal(contours_find_above(map, w, h, thresh, &b, err, sizeof(err)), 0);
        assert_int_equal(a.count, b.count);
        assert_int_equal(a.n_points, b.n_points);
        for (size_t k = 0; k <= a.count; k++)
            assert_int_equal(a.start[k], b.start[k]);
        assert_memory_equal(a.points, b.points, a.n_points * sizeof(*a.points));
        contour_list_free(&a);
        contour_list_free(&b);
        free(map);
        free(bitmap);
    }
    struct contour_list list;
    char err[128] = "";
    float px = 1;
    assert_int_equal(contours_find_above(&px, 1, 0, thresh, &list, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "empty image"));
}

/* ---------------------------------------------------------------- hull, min-area rect, corners */

static int has_point(const struct geom_point *pts, int n, int x, int y)
{
    for (int i = 0; i < n; i++)
        if (pts[i].x == x && pts[i].y == y)
            return 1;
    return 0;
}

static void test_convex_hull_drops_inner_and_collinear_points(void **state)
{
    (void)state;
    const struct geom_point pts[] = {{0, 0}, {2, 0}, {4, 0}, {4, 2}, {4, 4}, {2, 2}, {1, 3}, {0, 4}, {0, 2}, {2, 4}};
    struct geom_point hull[10];
    int n = geom_convex_hull(pts, 10, 0, hull);
    assert_int_equal(n, 4);
    assert_true(has_point(hull, n, 0, 0) && has_point(hull, n, 4, 0) && has_point(hull, n, 4, 4) &&
                has_point(hull, n, 0, 4));
    /* consecutive hull vertices turn the same way */
    for (int i = 0; i < n; i++) {
        struct geom_point a = hull[i], b = hull[(i + 1) % n], c = hull[(i + 2) % n];
        long cross = (long)(b.x - a.x) * (c.y - b.y) - (long)(b.y - a.y) * (c.x - b.x);
        assert_true(cross > 0);
    }
}

static void test_convex_hull_of_repeated_point(void **state)
{
    (void)state;
    const struct geom_point pts[] = {{3, 7}, {3, 7}, {3, 7}};
    struct geom_point hull[3];
    assert_int_equal(geom_convex_hull(pts, 3, 0, hull), 1);
    assert_int_equal(hull[0].x, 3);
    assert_int_equal(hull[0].y, 7);
    assert_int_equal(geom_convex_hull(pts, 0, 0, hull), 0);
}

static void assert_near(double got, double want, double tol, const char *what)
{
    if (!(fabs(got - want) <= tol))
        fail_msg("%s: %.9g, expected %.9g", what, got, want);
}

static void assert_sides(const struct geom_rotated_rect *r, double a, double b)
{
    double lo = fmin(r->width, r->height), hi = fmax(r->width, r->height);
    assert_near(lo, fmin(a, b), 1e-4, "short side");
    assert_near(hi, fmax(a, b), 1e-4, "long side");
}

/* every expected corner is one of the rectangle's corners */
static void assert_corners(const struct geom_rotated_rect *r, const double want[4][2])
{
    struct geom_pointf c[4];
    geom_box_points(r, c);
    for (int i = 0; i < 4; i++) {
        int found = 0;
        for (int k = 0; k < 4; k++)
            found |= fabs(c[k].x - want[i][0]) < 1e-4 && fabs(c[k].y - want[i][1]) < 1e-4;
        if (!found)
            fail_msg("corner (%g, %g) missing", want[i][0], want[i][1]);
    }
}

static void test_min_area_rect_axis_aligned(void **state)
{
    (void)state;
    const struct geom_point pts[] = {{0, 0}, {0, 4}, {10, 4}, {10, 0}, {5, 2}};
    struct geom_rotated_rect r;
    assert_int_equal(geom_min_area_rect(pts, 5, &r), 0);
    assert_sides(&r, 10, 4);
    assert_near(r.cx, 5, 1e-6, "cx");
    assert_near(r.cy, 2, 1e-6, "cy");
    /* OpenCV 4.6 reports this rectangle with its sides swapped and a 90 degree angle */
    assert_near(r.width, 4, 1e-6, "width");
    assert_near(r.angle, 90, 1e-6, "angle");
    const double want[4][2] = {{0, 0}, {10, 0}, {10, 4}, {0, 4}};
    assert_corners(&r, want);
}

static void test_min_area_rect_rotated_rectangle(void **state)
{
    (void)state;
    /* sides (8, 6) of length 10 and (-3, 4) of length 5 */
    const struct geom_point pts[] = {{0, 0}, {8, 6}, {5, 10}, {-3, 4}, {2, 4}, {4, 5}};
    struct geom_rotated_rect r;
    assert_int_equal(geom_min_area_rect(pts, 6, &r), 0);
    assert_sides(&r, 10, 5);
    assert_near(r.angle, 36.869897, 1e-5, "angle"); /* atan2(6, 8) */
    assert_near(r.cx, 2.5, 1e-5, "cx");
    assert_near(r.cy, 5, 1e-5, "cy");
    const double want[4][2] = {{0, 0}, {8, 6}, {5, 10}, {-3, 4}};
    assert_corners(&r, want);
}

static void test_min_area_rect_triangle(void **state)
{
    (void)state;
    /* right isosceles triangle: flush with a leg (10 x 10) or the hypotenuse (14.14 x 7.07),
     * both of area 100 = twice the triangle */
    const struct geom_point pts[] = {{0, 0}, {10, 0}, {0, 10}};
    struct geom_rotated_rect r;
    assert_int_equal(geom_min_area_rect(pts, 3, &r), 0);
    assert_near((double)r.width * r.height, 100, 1e-3, "area");
}

static void test_min_area_rect_collinear_and_single(void **state)
{
    (void)state;
    const struct geom_point line[] = {{0, 0}, {5, 5}, {10, 10}, {5, 5}};
    struct geom_rotated_rect r;
    assert_int_equal(geom_min_area_rect(line, 4, &r), 0);
    assert_near(r.width, sqrt(200), 1e-5, "length");
    assert_near(r.height, 0, 0, "thickness");
    assert_near(r.cx, 5, 0, "cx");
    assert_near(r.cy, 5, 0, "cy");
    assert_near(r.angle, -135, 1e-5, "angle"); /* from (10,10) to (0,0): OpenCV's hull order */

    const struct geom_point one[] = {{3, 4}};
    assert_int_equal(geom_min_area_rect(one, 1, &r), 0);
    assert_near(r.cx, 3, 0, "cx");
    assert_near(r.cy, 4, 0, "cy");
    assert_near(r.width, 0, 0, "width");
    assert_near(r.height, 0, 0, "height");
}

static void test_box_points_order(void **state)
{
    (void)state;
    /* RotatedRect::points: bottom-left, top-left, top-right, bottom-right for angle 0 (y down) */
    struct geom_rotated_rect r = {5, 5, 10, 4, 0};
    struct geom_pointf c[4];
    geom_box_points(&r, c);
    const float want[4][2] = {{0, 7}, {0, 3}, {10, 3}, {10, 7}};
    for (int i = 0; i < 4; i++) {
        assert_near(c[i].x, want[i][0], 0, "x");
        assert_near(c[i].y, want[i][1], 0, "y");
    }
}

/* ---------------------------------------------------------------- polygon fill */

static void assert_mask(const struct geom_point *poly, int n, int w, int h, const char *const *rows)
{
    uint8_t *mask = calloc((size_t)w * (size_t)h, 1);
    assert_non_null(mask);
    poly_fill_mask(mask, w, h, poly, n);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            if (mask[y * w + x] != (rows[y][x] == '1'))
                fail_msg("mask pixel (%d,%d) is %d", x, y, mask[y * w + x]);
    free(mask);
}

static void test_fill_includes_the_outline(void **state)
{
    (void)state;
    const struct geom_point square[] = {{1, 1}, {4, 1}, {4, 3}, {1, 3}};
    const char *square_rows[] = {"000000", "011110", "011110", "011110", "000000"};
    assert_mask(square, 4, 6, 5, square_rows);

    const struct geom_point triangle[] = {{0, 0}, {4, 0}, {0, 4}, {0, 4}};
    const char *triangle_rows[] = {"11111", "11110", "11100", "11000", "10000"};
    assert_mask(triangle, 4, 5, 5, triangle_rows);

    const struct geom_point diamond[] = {{2, 0}, {4, 2}, {2, 4}, {0, 2}};
    const char *diamond_rows[] = {"00100", "01110", "11111", "01110", "00100"};
    assert_mask(diamond, 4, 5, 5, diamond_rows);
}

static void test_fill_clips_to_the_mask(void **state)
{
    (void)state;
    const struct geom_point wide[] = {{-3, -1}, {9, -1}, {9, 1}, {-3, 1}};
    const char *rows[] = {"1111111", "1111111", "0000000", "0000000"};
    assert_mask(wide, 4, 7, 4, rows);
}

/* ---------------------------------------------------------------- polygon offset */

static void test_offset_axis_aligned_rectangle(void **state)
{
    (void)state;
    /* PaddleOCR's distance for a 10 x 4 box: area * 1.5 / perimeter = 60 / 28. Clipper's steps for
     * a quarter turn: round(pi/2 * (pi / acos(1 - 0.25 / d)) / 2pi) = 2, so each corner gives
     * the start normal, one point rotated by 2pi/6.45 and the end normal, all rounded:
     * (-2,0) (-1,-2) (0,-2) | (10,-2) (12,-1) (12,0) | (12,4) (11,6) (10,6) | (0,6) (-2,5) (-2,4).
     * The union pass then drops the four collinear ones, (0,-2) (12,0) (10,6) (-2,4), and starts
     * after the top-most, right-most vertex (10,-2). */
    const struct geom_point rect[] = {{0, 0}, {10, 0}, {10, 4}, {0, 4}};
    struct geom_point *out;
    size_t n;
    char err[128];
    assert_int_equal(polygon_offset_round(rect, 4, 60.0 / 28.0, &out, &n, err, sizeof(err)), 0);
    const int want[][2] = {{12, -1}, {12, 4}, {11, 6}, {0, 6}, {-2, 5}, {-2, 0}, {-1, -2}, {10, -2}};
    assert_int_equal(n, 8);
    for (size_t i = 0; i < n; i++)
        if (out[i].x != want[i][0] || out[i].y != want[i][1])
            fail_msg("offset point %zu: (%d,%d), expected (%d,%d)", i, out[i].x, out[i].y, want[i][0], want[i][1]);
    free(out);
}

static void test_offset_rotated_rectangle(void **state)
{
    (void)state;
    /* 10 x 5 rectangle along (8, 6), given clockwise on screen (Clipper reverses it); grown by 1,
     * its min-area rectangle is 12 x 7 up to the rounding of the vertices (sqrt(2)/2 each end) */
    const struct geom_point rect[] = {{0, 0}, {-3, 4}, {5, 10}, {8, 6}};
    struct geom_point *out;
    size_t n;
    char err[128];
    assert_int_equal(polygon_offset_round(rect, 4, 1.0, &out, &n, err, sizeof(err)), 0);
    assert_true(n >= 8);
    /* every vertex lies about 1 px outside the rectangle: distance to the nearest side line */
    for (size_t i = 0; i < n; i++) {
        double u = (out[i].x * 8 + out[i].y * 6) / 10.0, v = (-out[i].x * 3 + out[i].y * 4) / 5.0;
        double du = u < 0 ? -u : u > 10 ? u - 10 : 0, dv = v < 0 ? -v : v > 5 ? v - 5 : 0;
        double d = sqrt(du * du + dv * dv);
        if (fabs(d - 1.0) > 0.75)
            fail_msg("offset point (%d,%d) at distance %g", out[i].x, out[i].y, d);
    }
    struct geom_rotated_rect r;
    assert_int_equal(geom_min_area_rect(out, n, &r), 0);
    assert_near(fmax(r.width, r.height), 12, 1.42, "long side");
    assert_near(fmin(r.width, r.height), 7, 1.42, "short side");
    free(out);
}

static void test_offset_degenerate_and_bad_input(void **state)
{
    (void)state;
    const struct geom_point flat[] = {{1, 1}, {1, 1}, {5, 1}, {1, 1}};
    struct geom_point *out;
    size_t n = 99;
    char err[128] = "";
    assert_int_equal(polygon_offset_round(flat, 4, 2.0, &out, &n, err, sizeof(err)), 0);
    assert_int_equal(n, 0); /* two distinct points: no polygon, as Clipper */
    free(out);
    assert_int_equal(polygon_offset_round(flat, 4, -1.0, &out, &n, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "only growing"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contour_single_pixel),
        cmocka_unit_test(test_contour_square_keeps_corners_only),
        cmocka_unit_test(test_contour_hole_is_listed_first),
        cmocka_unit_test(test_contour_diagonal_touch_is_one_component),
        cmocka_unit_test(test_contour_whole_image_touches_borders),
        cmocka_unit_test(test_contour_order_is_last_found_first),
        cmocka_unit_test(test_contour_ring_with_island),
        cmocka_unit_test(test_contour_empty_image_and_bad_size),
        cmocka_unit_test(test_contour_of_thresholded_map),
        cmocka_unit_test(test_convex_hull_drops_inner_and_collinear_points),
        cmocka_unit_test(test_convex_hull_of_repeated_point),
        cmocka_unit_test(test_min_area_rect_axis_aligned),
        cmocka_unit_test(test_min_area_rect_rotated_rectangle),
        cmocka_unit_test(test_min_area_rect_triangle),
        cmocka_unit_test(test_min_area_rect_collinear_and_single),
        cmocka_unit_test(test_box_points_order),
        cmocka_unit_test(test_fill_includes_the_outline),
        cmocka_unit_test(test_fill_clips_to_the_mask),
        cmocka_unit_test(test_offset_axis_aligned_rectangle),
        cmocka_unit_test(test_offset_rotated_rectangle),
        cmocka_unit_test(test_offset_degenerate_and_bad_input),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
