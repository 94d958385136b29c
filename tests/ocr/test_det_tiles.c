/* Detection in strips (ocr/det_tiles.h): when strips are planned and how, which boxes a strip keeps,
 * and how the strips' boxes and the first pass's are merged. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/det_tiles.h"
#include "support/test_env.h"

static struct db_box rect_box(int x0, int y0, int x1, int y1)
{
    struct db_box b = {.pts = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}}, .score = 0.9};
    return b;
}

/* A page of n lines of text `height` pixels high. */
static struct db_boxes lines_of(int n, int height, int width)
{
    struct db_boxes b = {calloc((size_t)n, sizeof(struct db_box)), (size_t)n};
    assert_non_null(b.boxes);
    for (int i = 0; i < n; i++)
        b.boxes[i] = rect_box(100, 100 + i * 2 * height, width - 100, 100 + i * 2 * height + height);
    return b;
}

static void test_small_print_on_a_big_page_gets_strips(void **state)
{
    (void)state;
    /* an A4 page at 300 dpi with the engine's margin; first pass at 960 on its long side */
    int w = 2544, h = 3572;
    double first = 960.0 / h;
    struct db_boxes boxes = lines_of(40, 40, w);
    struct det_tiling t;
    det_tiling_plan(w, h, first, &boxes, 960, &t);
    assert_true(t.n >= 2);
    assert_true(t.n <= DET_STRIPS_MAX);
    assert_true(t.scale >= first * 1.25);
    assert_true(t.scale <= 1.0);
    /* the small text reaches a height the detector reads well */
    assert_true(40 * t.scale >= 16);
    assert_int_equal(t.strips[0].y0, 0);
    assert_int_equal(t.strips[t.n - 1].y1, h);
    assert_false(t.strips[0].cut_above);
    assert_false(t.strips[t.n - 1].cut_below);
    for (int i = 0; i < t.n; i++) {
        const struct det_strip *s = &t.strips[i];
        /* no strip's det input is larger than the first pass's */
        assert_true((double)w * t.scale * (s->y1 - s->y0) * t.scale <= 960.0 * 960.0 * 1.001);
        assert_true(t.limit >= (int)((s->y1 - s->y0) * t.scale));
        if (i) {
            /* neighbours share at least the overlap, which holds several lines */
            assert_true(t.strips[i - 1].y1 - s->y0 >= t.overlap);
            assert_true(s->cut_above);
            assert_true(t.strips[i - 1].cut_below);
        }
    }
    assert_true(t.overlap >= 4 * 40);
    assert_int_equal(t.limit, (int)ceil(w * t.scale));
    db_boxes_free(&boxes);
}

static void test_no_strips_when_the_text_is_big_enough(void **state)
{
    (void)state;
    struct det_tiling t;
    struct db_boxes big = lines_of(40, 60, 2544);
    det_tiling_plan(2544, 3572, 960.0 / 3572, &big, 960, &t);
    assert_int_equal(t.n, 0); /* 60 px at 0.27 is 16 det pixels */
    struct db_boxes docbank = lines_of(40, 33, 1764);
    det_tiling_plan(1764, 2264, 960.0 / 2264, &docbank, 960, &t);
    assert_int_equal(t.n, 0); /* a paper page: 33 px at 0.42 is 14 det pixels, read well */
    db_boxes_free(&docbank);
    /* a page no larger than the det limit is read at full size already */
    struct db_boxes small = lines_of(10, 12, 900);
    det_tiling_plan(900, 800, 1.0, &small, 960, &t);
    assert_int_equal(t.n, 0);
    /* nothing to go by */
    struct db_boxes two = lines_of(2, 10, 2544);
    det_tiling_plan(2544, 3572, 960.0 / 3572, &two, 960, &t);
    assert_int_equal(t.n, 0);
    db_boxes_free(&big);
    db_boxes_free(&small);
    db_boxes_free(&two);
}

static void test_a_wide_page_is_read_whole_at_a_higher_scale(void **state)
{
    (void)state;
    /* wide and low: one strip is the whole page */
    struct db_boxes boxes = lines_of(5, 30, 3000);
    struct det_tiling t;
    det_tiling_plan(3000, 400, 960.0 / 3000, &boxes, 960, &t);
    assert_int_equal(t.n, 1);
    assert_int_equal(t.strips[0].y0, 0);
    assert_int_equal(t.strips[0].y1, 400);
    assert_false(t.strips[0].cut_above || t.strips[0].cut_below);
    assert_true(t.scale > 960.0 / 3000 * 1.25);
    db_boxes_free(&boxes);
}

static void test_a_strip_keeps_only_whole_lines(void **state)
{
    (void)state;
    struct det_tiling t = {.scale = 0.5, .limit = 960, .overlap = 200, .n = 3};
    t.strips[0] = (struct det_strip){0, 1000, 0, 1};
    t.strips[1] = (struct det_strip){800, 1800, 1, 1};
    t.strips[2] = (struct det_strip){1600, 2400, 1, 0};
    struct db_box b[] = {
        rect_box(10, 790, 500, 830),   /* reaches above strip 1's top: cut */
        rect_box(10, 820, 500, 860),   /* whole */
        rect_box(10, 1770, 500, 1799), /* reaches strip 1's bottom: cut */
        rect_box(10, 700, 500, 1500),  /* taller than the overlap: no strip holds it whole */
    };
    struct db_boxes boxes = {malloc(sizeof(b)), 4};
    memcpy(boxes.boxes, b, sizeof(b));
    det_strip_keep_whole(&t, 1, &boxes);
    assert_int_equal(boxes.count, 2);
    assert_int_equal(boxes.boxes[0].pts[0][1], 820);
    assert_int_equal(boxes.boxes[1].pts[0][1], 700);
    /* the first strip's top is the page's edge */
    boxes.count = 0;
    boxes.boxes[boxes.count++] = rect_box(10, 0, 500, 30);
    det_strip_keep_whole(&t, 0, &boxes);
    assert_int_equal(boxes.count, 1);
    db_boxes_free(&boxes);
}

static void test_merge_finds_each_line_once(void **state)
{
    (void)state;
    struct db_box from_strips[] = {
        rect_box(100, 900, 800, 940), /* strip 0 */
        rect_box(100, 100, 800, 140),
        rect_box(102, 901, 801, 941), /* strip 1: the same line again */
        rect_box(100, 1500, 800, 1540),
    };
    struct db_box from_first[] = {
        rect_box(100, 100, 800, 142),    /* found by the strips too */
        rect_box(100, 2000, 1800, 2300), /* a headline the strips did not find whole */
    };
    struct db_boxes strips = {malloc(sizeof(from_strips)), 4}, first = {malloc(sizeof(from_first)), 2};
    memcpy(strips.boxes, from_strips, sizeof(from_strips));
    memcpy(first.boxes, from_first, sizeof(from_first));
    assert_int_equal(det_tiles_merge(&first, &strips), 0);
    assert_int_equal(first.count, 4);
    assert_int_equal(first.boxes[0].pts[0][1], 900);
    assert_int_equal(first.boxes[1].pts[0][1], 100);
    assert_int_equal(first.boxes[2].pts[0][1], 1500);
    assert_int_equal(first.boxes[3].pts[0][1], 2000);
    assert_int_equal(strips.count, 0);
    db_boxes_free(&first);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_print_on_a_big_page_gets_strips),
        cmocka_unit_test(test_no_strips_when_the_text_is_big_enough),
        cmocka_unit_test(test_a_wide_page_is_read_whole_at_a_higher_scale),
        cmocka_unit_test(test_a_strip_keeps_only_whole_lines),
        cmocka_unit_test(test_merge_finds_each_line_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
