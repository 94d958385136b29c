/* Text-box crops (get_rotate_crop_image) and the cls/rec input tensors against OpenCV 4.6
 * (opencv-js) results made by tests/data/images/make.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "img/image.h"
#include "ocr/preprocess.h"
#include "support/test_env.h"

static void load_fixture(const char *name, struct ppocr_image *img)
{
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/data/images/%s", test_data_dir(), name);
    enum ppocr_status st = ppocr_image_load_file(path, PPOCR_ALPHA_IGNORE, img, err, sizeof err);
    if (st != PPOCR_OK)
        fail_msg("%s", err);
}

static int max_diff_u8(const uint8_t *a, const uint8_t *b, size_t n)
{
    int m = 0;
    for (size_t i = 0; i < n; i++)
        if (abs(a[i] - b[i]) > m)
            m = abs(a[i] - b[i]);
    return m;
}

static FILE *open_expected(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/data/images/expected.txt", test_data_dir());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    return f;
}

static void test_crops_match_opencv(void **state)
{
    (void)state;
    FILE *f = open_expected();
    char line[4096];
    int cases = 0, rotated_cases = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "crop ", 5) != 0)
            continue;
        char name[256], out_name[256];
        float box[4][2];
        int cw, ch, rotated, used;
        int got_fields = sscanf(line, "crop %255s %f %f %f %f %f %f %f %f %d %d %d %255s%n", name, &box[0][0],
                                &box[0][1], &box[1][0], &box[1][1], &box[2][0], &box[2][1], &box[3][0], &box[3][1], &cw,
                                &ch, &rotated, out_name, &used);
        assert_int_equal(got_fields, 13);
        double m_want[9];
        const char *p = line + used;
        for (int i = 0; i < 9; i++) {
            int u;
            assert_int_equal(sscanf(p, " %lf%n", &m_want[i], &u), 1);
            p += u;
        }
        struct ocr_crop_plan plan;
        assert_int_equal(ocr_crop_plan_make((const float(*)[2])box, &plan), 0);
        assert_int_equal(plan.width, cw);
        assert_int_equal(plan.height, ch);
        assert_int_equal(plan.rotate, rotated);
        double md = 0;
        for (int i = 0; i < 9; i++)
            md = fmax(md, fabs(plan.dst_from_src[i] - m_want[i]) / fmax(fabs(m_want[i]), 1e-3));
        printf("%s box %d: %dx%d%s, matrix max rel diff %.3g", name, cases, cw, ch, rotated ? " turned" : "", md);
        assert_true(md == 0); /* same LU, same operation order: bit-identical */

        struct ppocr_image src, want, got;
        load_fixture(name, &src);
        load_fixture(out_name, &want);
        assert_int_equal(ocr_crop_box(&src, (const float(*)[2])box, &got), 0);
        assert_int_equal(got.width, want.width);
        assert_int_equal(got.height, want.height);
        int d = max_diff_u8(got.bgr, want.bgr, (size_t)got.width * got.height * 3);
        printf(", pixels max |diff| %d\n", d);
        assert_int_equal(d, 0);
        rotated_cases += rotated;
        ppocr_image_free(&src);
        ppocr_image_free(&want);
        ppocr_image_free(&got);
        cases++;
    }
    fclose(f);
    assert_int_equal(cases, 5);
    assert_int_equal(rotated_cases, 1);
}

/* cls (48x192) and rec (48x320) tensors of the crops above. */
static void test_rec_cls_input_matches_reference(void **state)
{
    (void)state;
    FILE *f = open_expected();
    char line[4096];
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "norm ", 5) != 0)
            continue;
        char crop_name[256], rs_name[256];
        int th, tw, rw, used;
        assert_int_equal(sscanf(line, "norm %255s %d %d %d %255s%n", crop_name, &th, &tw, &rw, rs_name, &used), 5);
        struct ppocr_image crop, resized;
        load_fixture(crop_name, &crop);
        load_fixture(rs_name, &resized);
        assert_int_equal(ocr_rec_resized_width(crop.width, crop.height, th, tw), rw);
        assert_int_equal(resized.width, rw);
        size_t plane = (size_t)th * tw;
        float *got = malloc(3 * plane * sizeof *got);
        test_fill_nan(got, 3 * plane);
        if (tw == OCR_CLS_WIDTH)
            assert_int_equal(ocr_cls_preprocess(&crop, got), 0);
        else
            assert_int_equal(ocr_rec_preprocess(&crop, th, tw, got), 0);
        /* every value: OpenCV's resized pixel normalised, zero padding on the right */
        double worst = 0;
        for (int c = 0; c < 3; c++)
            for (int y = 0; y < th; y++)
                for (int x = 0; x < tw; x++) {
                    float want =
                        x < rw ? ((float)resized.bgr[((size_t)y * rw + x) * 3 + c] / 255.f - 0.5f) / 0.5f : 0.f;
                    float g = got[c * plane + (size_t)y * tw + x];
                    worst = isnan(g) ? INFINITY : fmax(worst, fabs(g - want));
                }
        printf("%s -> %dx%d (resized width %d): max |diff| %g\n", crop_name, tw, th, rw, worst);
        assert_true(worst == 0);
        /* spot values computed by the reference in float32 */
        const char *p = line + used;
        int c, y, x, n = 0;
        float v;
        while (sscanf(p, " %d %d %d %f%n", &c, &y, &x, &v, &used) == 4) {
            p += used;
            assert_true(got[c * plane + (size_t)y * tw + x] == v);
            n++;
        }
        assert_int_equal(n, 12);
        free(got);
        ppocr_image_free(&crop);
        ppocr_image_free(&resized);
        cases++;
    }
    fclose(f);
    assert_int_equal(cases, 10);
}

static void test_rec_resized_width_rule(void **state)
{
    (void)state;
    assert_int_equal(ocr_rec_resized_width(100, 48, 48, 320), 100);
    assert_int_equal(ocr_rec_resized_width(101, 50, 48, 320), 97);   /* ceil(96.96) */
    assert_int_equal(ocr_rec_resized_width(1000, 10, 48, 320), 320); /* capped */
    assert_int_equal(ocr_rec_resized_width(1, 1000, 48, 192), 1);    /* never 0 */
    assert_int_equal(ocr_rec_resized_width(400, 100, 48, 192), 192);
    /* the ratio is formed first, as PaddleOCR does: 48 * (7/3) = 112.00000000000001 -> 113 */
    assert_int_equal(ocr_rec_resized_width(7, 3, 48, 320), (int)ceil(48 * (7.0 / 3.0)));
}

/* Matrix helpers: a known transform round-trips, a degenerate box is refused. */
static void test_matrix_and_degenerate_boxes(void **state)
{
    (void)state;
    const float src[4][2] = {{10, 20}, {110, 25}, {105, 60}, {8, 55}};
    const float dst[4][2] = {{0, 0}, {100, 0}, {100, 35}, {0, 35}};
    double m[9], inv[9];
    assert_int_equal(ocr_perspective_transform(src, dst, m), 0);
    assert_int_equal(ocr_invert_3x3(m, inv), 0);
    for (int i = 0; i < 4; i++) {
        double x = src[i][0], y = src[i][1], w = m[6] * x + m[7] * y + m[8];
        assert_float_equal((m[0] * x + m[1] * y + m[2]) / w, dst[i][0], 1e-9);
        assert_float_equal((m[3] * x + m[4] * y + m[5]) / w, dst[i][1], 1e-9);
        double u = dst[i][0], v = dst[i][1], wi = inv[6] * u + inv[7] * v + inv[8];
        assert_float_equal((inv[0] * u + inv[1] * v + inv[2]) / wi, src[i][0], 1e-9);
        assert_float_equal((inv[3] * u + inv[4] * v + inv[5]) / wi, src[i][1], 1e-9);
    }
    const double singular[9] = {1, 2, 3, 2, 4, 6, 0, 0, 1};
    assert_int_equal(ocr_invert_3x3(singular, inv), -1);
    struct ocr_crop_plan plan;
    const float flat[4][2] = {{5, 5}, {50, 5}, {50, 5.5f}, {5, 5.5f}}; /* less than a pixel high */
    assert_int_equal(ocr_crop_plan_make(flat, &plan), -1);
    const float line_box[4][2] = {{0, 0}, {10, 10}, {20, 20}, {30, 30}}; /* collinear */
    assert_int_equal(ocr_crop_plan_make(line_box, &plan), -1);
    const float huge[4][2] = {{0, 0}, {30000, 0}, {30000, 30000}, {0, 30000}}; /* 900 megapixels */
    assert_int_equal(ocr_crop_plan_make(huge, &plan), -1);
    const float nan_box[4][2] = {{0, 0}, {NAN, 0}, {10, 10}, {0, 10}};
    assert_int_equal(ocr_crop_plan_make(nan_box, &plan), -1);

    /* a box far outside a 2x2 image: every sample is the replicated border */
    uint8_t px[2 * 2 * 3] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 200, 100, 50};
    struct ppocr_image tiny = {2, 2, px, 0}, crop;
    const float outside[4][2] = {{100, 100}, {140, 100}, {140, 120}, {100, 120}};
    assert_int_equal(ocr_crop_box(&tiny, outside, &crop), 0);
    assert_int_equal(crop.width, 40);
    assert_int_equal(crop.height, 20);
    for (int i = 0; i < 40 * 20; i++)
        assert_memory_equal(crop.bgr + 3 * i, px + 9, 3); /* bottom-right pixel */
    ppocr_image_free(&crop);
    struct ppocr_image empty = {0, 0, NULL, 0};
    assert_int_equal(ocr_crop_box(&empty, outside, &crop), -1);
}

static void test_rotate90_ccw(void **state)
{
    (void)state;
    /* 3 wide, 2 high: pixel value = 10*y + x in every channel */
    uint8_t src[2 * 3 * 3], dst[3 * 2 * 3];
    for (int y = 0; y < 2; y++)
        for (int x = 0; x < 3; x++)
            memset(src + (y * 3 + x) * 3, 10 * y + x, 3);
    ocr_rotate90_ccw(src, 3, 2, dst);
    /* np.rot90: the right column becomes the top row */
    const uint8_t want[3][2] = {{2, 12}, {1, 11}, {0, 10}};
    for (int y = 0; y < 3; y++)
        for (int x = 0; x < 2; x++)
            assert_int_equal(dst[(y * 2 + x) * 3], want[y][x]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_crops_match_opencv),     cmocka_unit_test(test_rec_cls_input_matches_reference),
        cmocka_unit_test(test_rec_resized_width_rule), cmocka_unit_test(test_matrix_and_degenerate_boxes),
        cmocka_unit_test(test_rotate90_ccw),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
