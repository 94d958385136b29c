/* DB post-processing against the reference (PaddleOCR 2.x via shared/reference/ref_ocr.mjs) on
 * real det maps of corpus images and on seeded synthetic maps: tests/data/db/, made by
 * tools/ref/make-db-fixtures.mjs. Also the edge cases of the API (empty, full, 1xN maps). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/contour.h"
#include "ocr/db_postprocess.h"
#include "ocr/workers.h"
#include "support/test_env.h"

/* A private, static copy of stb_image's PNG decoder, for reading the 16-bit fixture maps. Some of
 * its static declarations stay unused to the end of this file, hence the file-wide ignore. */
#define STB_IMAGE_STATIC
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_PNG
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wunused-but-set-variable"
#pragma GCC diagnostic ignored "-Wshadow"
#pragma GCC diagnostic ignored "-Wimplicit-fallthrough"
#pragma GCC diagnostic ignored "-Wmisleading-indentation"
#pragma GCC diagnostic ignored "-Wtype-limits"
#include <stb_image.h>
#pragma GCC diagnostic pop

struct expected {
    int map_w, map_h, src_w, src_h;
    struct db_boxes raw, final;
};

static void read_boxes(FILE *f, const char *label, struct db_boxes *boxes, const char *path)
{
    char word[16];
    size_t n;
    if (fscanf(f, "%15s %zu", word, &n) != 2 || strcmp(word, label) != 0)
        fail_msg("%s: expected a '%s N' line", path, label);
    boxes->count = n;
    boxes->boxes = calloc(n ? n : 1, sizeof(*boxes->boxes));
    assert_non_null(boxes->boxes);
    for (size_t i = 0; i < n; i++) {
        struct db_box *b = &boxes->boxes[i];
        int got = fscanf(f, "%d %d %d %d %d %d %d %d %lf", &b->pts[0][0], &b->pts[0][1], &b->pts[1][0], &b->pts[1][1],
                         &b->pts[2][0], &b->pts[2][1], &b->pts[3][0], &b->pts[3][1], &b->score);
        if (got != 9)
            fail_msg("%s: bad box line %zu of '%s'", path, i, label);
    }
}

static void load_expected(const char *name, struct expected *e)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/data/db/%s.txt", test_data_dir(), name);
    FILE *f = fopen(path, "r");
    if (!f)
        fail_msg("cannot open %s (regenerate with tools/ref/make-db-fixtures.mjs)", path);
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        if (line[0] == '#')
            continue;
        if (sscanf(line, "map %d %d image %d %d", &e->map_w, &e->map_h, &e->src_w, &e->src_h) != 4)
            fail_msg("%s: expected the 'map W H image W H' line, got %s", path, line);
        break;
    }
    read_boxes(f, "raw", &e->raw, path);
    read_boxes(f, "final", &e->final, path);
    fclose(f);
}

/* The stored map: 16-bit grey PNG, probability = value / 65535 rounded to float (as the script). */
static float *load_map(const char *name, int w, int h)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/data/db/%s.png", test_data_dir(), name);
    int pw, ph, channels;
    stbi_us *v = stbi_load_16(path, &pw, &ph, &channels, 1);
    if (!v)
        fail_msg("cannot read %s: %s", path, stbi_failure_reason());
    assert_int_equal(pw, w);
    assert_int_equal(ph, h);
    float *map = malloc(sizeof(float) * (size_t)w * (size_t)h);
    assert_non_null(map);
    for (size_t i = 0; i < (size_t)w * (size_t)h; i++)
        map[i] = (float)((double)v[i] / 65535.0);
    stbi_image_free(v);
    return map;
}

struct comparison {
    int max_corner_error;
    double max_score_error;
};

static void compare_boxes(const char *what, const struct db_boxes *got, const struct db_boxes *want,
                          struct comparison *cmp)
{
    if (got->count != want->count) {
        for (size_t i = 0; i < got->count; i++)
            print_message("  got  %zu: (%d,%d) (%d,%d) (%d,%d) (%d,%d) %.6f\n", i, got->boxes[i].pts[0][0],
                          got->boxes[i].pts[0][1], got->boxes[i].pts[1][0], got->boxes[i].pts[1][1],
                          got->boxes[i].pts[2][0], got->boxes[i].pts[2][1], got->boxes[i].pts[3][0],
                          got->boxes[i].pts[3][1], got->boxes[i].score);
        fail_msg("%s: %zu boxes, the reference has %zu", what, got->count, want->count);
    }
    for (size_t i = 0; i < got->count; i++) {
        const struct db_box *g = &got->boxes[i], *w = &want->boxes[i];
        for (int k = 0; k < 4; k++)
            for (int c = 0; c < 2; c++) {
                int d = abs(g->pts[k][c] - w->pts[k][c]);
                if (d > cmp->max_corner_error)
                    cmp->max_corner_error = d;
                if (d > 0)
                    print_message("  %s box %zu corner %d: %d vs reference %d\n", what, i, k, g->pts[k][c],
                                  w->pts[k][c]);
            }
        double ds = fabs(g->score - w->score);
        if (ds > cmp->max_score_error)
            cmp->max_score_error = ds;
    }
}

static void check_fixture(const char *name)
{
    struct expected e = {0};
    load_expected(name, &e);
    float *map = load_map(name, e.map_w, e.map_h);
    struct db_params params;
    db_params_default(&params);
    char err[256];

    struct db_boxes raw, final;
    assert_int_equal(db_boxes_from_map(map, NULL, e.map_w, e.map_h, e.src_w, e.src_h, &params, &raw, err, sizeof(err)),
                     0);
    assert_int_equal(db_postprocess(map, NULL, e.map_w, e.map_h, e.src_w, e.src_h, &params, &final, err, sizeof(err)),
                     0);

    /* the same from a work image built beforehand, as the GPU hands it over */
    int8_t *work = malloc(contour_work_bytes(e.map_w, e.map_h));
    assert_non_null(work);
    contour_work_above(map, e.map_w, e.map_h, params.thresh, work);
    struct db_boxes from_work;
    assert_int_equal(
        db_postprocess(map, work, e.map_w, e.map_h, e.src_w, e.src_h, &params, &from_work, err, sizeof(err)), 0);
    free(work);

    /* the same boxes, in the same order, with helper threads taking contours */
    struct ocr_workers *helpers;
    assert_int_equal(ocr_workers_create(3, &helpers), 0);
    params.workers = helpers;
    for (int round = 0; round < 3; round++) {
        struct db_boxes threaded;
        assert_int_equal(
            db_postprocess(map, NULL, e.map_w, e.map_h, e.src_w, e.src_h, &params, &threaded, err, sizeof(err)), 0);
        assert_int_equal(threaded.count, final.count);
        if (final.count)
            assert_memory_equal(threaded.boxes, final.boxes, final.count * sizeof(*final.boxes));
        db_boxes_free(&threaded);
    }
    params.workers = NULL;
    ocr_workers_destroy(helpers);

    struct comparison cmp = {0, 0};
    compare_boxes("raw", &raw, &e.raw, &cmp);
    compare_boxes("final", &final, &e.final, &cmp);
    compare_boxes("final from a work image", &from_work, &e.final, &cmp);
    print_message("%s: %zu raw, %zu final boxes; max corner error %d px, max score error %.3g\n", name, raw.count,
                  final.count, cmp.max_corner_error, cmp.max_score_error);
    /* The C code mirrors the reference's arithmetic: the boxes are expected exactly. */
    assert_int_equal(cmp.max_corner_error, 0);
    assert_true(cmp.max_score_error <= 1e-9);

    db_boxes_free(&raw);
    db_boxes_free(&final);
    db_boxes_free(&from_work);
    db_boxes_free(&e.raw);
    db_boxes_free(&e.final);
    free(map);
}

static void test_phototest(void **state)
{
    (void)state;
    check_fixture("phototest");
}
static void test_00009282(void **state)
{
    (void)state;
    check_fixture("00009282");
}
static void test_00018069(void **state)
{
    (void)state;
    check_fixture("00018069");
}
static void test_en_word_1(void **state)
{
    (void)state;
    check_fixture("en_word_1");
}
static void test_mmocr_word(void **state)
{
    (void)state;
    check_fixture("mmocr_1036169");
}
static void test_synthetic_shapes(void **state)
{
    (void)state;
    check_fixture("synthetic_shapes");
}
static void test_synthetic_many_contours(void **state)
{
    (void)state;
    check_fixture("synthetic_many");
}

static void run_on(const float *map, int w, int h, struct db_boxes *out)
{
    struct db_params params;
    db_params_default(&params);
    char err[256];
    int rc = db_postprocess(map, NULL, w, h, w, h, &params, out, err, sizeof(err));
    if (rc)
        fail_msg("db_postprocess: %s", err);
}

static void test_empty_map_has_no_boxes(void **state)
{
    (void)state;
    float map[64 * 48] = {0};
    struct db_boxes boxes;
    run_on(map, 64, 48, &boxes);
    assert_int_equal(boxes.count, 0);
    db_boxes_free(&boxes);
}

static void test_all_ones_map_is_one_image_box(void **state)
{
    (void)state;
    enum { W = 40, H = 30 };
    float map[W * H];
    for (int i = 0; i < W * H; i++)
        map[i] = 1.0f;
    struct db_boxes boxes;
    run_on(map, W, H, &boxes);
    assert_int_equal(boxes.count, 1);
    /* the grown box covers the image, clipped to its last pixel */
    const int want[4][2] = {{0, 0}, {W - 1, 0}, {W - 1, H - 1}, {0, H - 1}};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(boxes.boxes[0].pts[k][0], want[k][0]);
        assert_int_equal(boxes.boxes[0].pts[k][1], want[k][1]);
    }
    assert_true(fabs(boxes.boxes[0].score - 1.0) < 1e-12);
    db_boxes_free(&boxes);
}

static void test_one_row_map_has_no_boxes(void **state)
{
    (void)state;
    float map[100];
    for (int i = 0; i < 100; i++)
        map[i] = 0.9f;
    struct db_boxes boxes;
    run_on(map, 100, 1, &boxes); /* a 1-pixel-high text region is below min_size */
    assert_int_equal(boxes.count, 0);
    db_boxes_free(&boxes);
    run_on(map, 1, 100, &boxes);
    assert_int_equal(boxes.count, 0);
    db_boxes_free(&boxes);
}

static void test_max_candidates_bounds_the_contours(void **state)
{
    (void)state;
    /* a 20x10 block at the bottom and 200 specks above it: with max_candidates 100 only the
     * last-found contours are looked at, which in OpenCV's order come first: the block is kept
     * only because it is found last. */
    enum { W = 64, H = 64 };
    float map[W * H];
    memset(map, 0, sizeof(map));
    for (int y = 0; y < 40; y += 2)
        for (int x = 0; x < W; x += 6)
            map[y * W + x] = 0.9f;
    for (int y = 48; y < 58; y++)
        for (int x = 10; x < 30; x++)
            map[y * W + x] = 0.9f;
    struct db_params params;
    db_params_default(&params);
    params.max_candidates = 100;
    char err[256];
    struct db_boxes boxes;
    assert_int_equal(db_postprocess(map, NULL, W, H, W, H, &params, &boxes, err, sizeof(err)), 0);
    assert_int_equal(boxes.count, 1);
    db_boxes_free(&boxes);
    /* the same block at the top is found first, hence listed last, hence cut */
    memset(map, 0, sizeof(map));
    for (int y = 2; y < 12; y++)
        for (int x = 10; x < 30; x++)
            map[y * W + x] = 0.9f;
    for (int y = 20; y < 60; y += 2)
        for (int x = 0; x < W; x += 6)
            map[y * W + x] = 0.9f;
    assert_int_equal(db_postprocess(map, NULL, W, H, W, H, &params, &boxes, err, sizeof(err)), 0);
    assert_int_equal(boxes.count, 0);
    db_boxes_free(&boxes);
    params.max_candidates = 1000;
    assert_int_equal(db_postprocess(map, NULL, W, H, W, H, &params, &boxes, err, sizeof(err)), 0);
    assert_int_equal(boxes.count, 1);
    db_boxes_free(&boxes);
}

static void test_bad_arguments_are_errors(void **state)
{
    (void)state;
    float map[4] = {0};
    struct db_params params;
    db_params_default(&params);
    char err[256] = "";
    struct db_boxes boxes;
    assert_int_equal(db_postprocess(map, NULL, 0, 4, 10, 10, &params, &boxes, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "bad sizes"));
    assert_int_equal(db_postprocess(map, NULL, 2, 2, 10, -1, &params, &boxes, err, sizeof(err)), -1);
    params.max_candidates = -1;
    assert_int_equal(db_postprocess(map, NULL, 2, 2, 10, 10, &params, &boxes, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "max_candidates"));
}

static void test_reading_order(void **state)
{
    (void)state;
    /* sorted_boxes: by top-left y then x; boxes within 10 px vertically go left to right */
    struct db_box b[4] = {
        {{{50, 12}, {90, 12}, {90, 20}, {50, 20}}, 0.9},
        {{{10, 40}, {40, 40}, {40, 50}, {10, 50}}, 0.8},
        {{{5, 15}, {45, 15}, {45, 25}, {5, 25}}, 0.7},
        {{{60, 10}, {95, 10}, {95, 18}, {60, 18}}, 0.6},
    };
    struct db_boxes boxes = {b, 4};
    db_boxes_sort(&boxes);
    /* by (y, x): (60,10) (50,12) (5,15) (10,40); then the swaps bring (5,15) and (50,12) forward */
    const int want_x[4] = {5, 50, 60, 10};
    for (int i = 0; i < 4; i++)
        assert_int_equal(b[i].pts[0][0], want_x[i]);
}

static void test_filter_orders_clockwise_and_drops_thin_boxes(void **state)
{
    (void)state;
    struct db_box b[2] = {
        {{{30, 20}, {10, 20}, {10, 5}, {30, 5}}, 0.9}, /* counter-clockwise from bottom-right */
        {{{0, 0}, {40, 0}, {40, 3}, {0, 3}}, 0.9},     /* 3 px high: dropped */
    };
    struct db_boxes boxes = {b, 2};
    db_boxes_filter(&boxes, 25, 100); /* x clipped to 24 */
    assert_int_equal(boxes.count, 1);
    const int want[4][2] = {{10, 5}, {24, 5}, {24, 20}, {10, 20}};
    for (int k = 0; k < 4; k++) {
        assert_int_equal(b[0].pts[k][0], want[k][0]);
        assert_int_equal(b[0].pts[k][1], want[k][1]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_phototest),
        cmocka_unit_test(test_00009282),
        cmocka_unit_test(test_00018069),
        cmocka_unit_test(test_en_word_1),
        cmocka_unit_test(test_mmocr_word),
        cmocka_unit_test(test_synthetic_shapes),
        cmocka_unit_test(test_synthetic_many_contours),
        cmocka_unit_test(test_empty_map_has_no_boxes),
        cmocka_unit_test(test_all_ones_map_is_one_image_box),
        cmocka_unit_test(test_one_row_map_has_no_boxes),
        cmocka_unit_test(test_max_candidates_bounds_the_contours),
        cmocka_unit_test(test_bad_arguments_are_errors),
        cmocka_unit_test(test_reading_order),
        cmocka_unit_test(test_filter_orders_clockwise_and_drops_thin_boxes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
