/* cv2.resize INTER_LINEAR and the detection input against OpenCV 4.6 (opencv-js) results made by
 * tests/data/images/make.sh: pixel-identical is required, and the max difference is printed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "img/image.h"
#include "ocr/pad.h"
#include "ocr/preprocess.h"
#include "ocr/workers.h"
#include "support/test_env.h"

static void load_fixture(const char *name, struct ppocr_image *img)
{
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/data/images/%s", test_data_dir(), name);
    enum ppocr_status st = ppocr_image_load_file(path, PPOCR_ALPHA_IGNORE, img, err, sizeof err);
    if (st != PPOCR_OK)
        fail_msg("%s", err);
}

/* Largest per-byte difference between two BGR buffers; prints where the first difference is. */
static int max_diff(const uint8_t *a, const uint8_t *b, int w, int h, const char *what)
{
    int m = 0;
    size_t first = (size_t)-1;
    for (size_t i = 0; i < (size_t)w * h * 3; i++) {
        int d = abs(a[i] - b[i]);
        if (d && first == (size_t)-1)
            first = i;
        if (d > m)
            m = d;
    }
    if (m)
        printf("%s: max |diff| %d, first at x=%zu y=%zu c=%zu (%d vs %d)\n", what, m, first / 3 % (size_t)w,
               first / 3 / (size_t)w, first % 3, a[first], b[first]);
    else
        printf("%s: identical (%dx%d)\n", what, w, h);
    return m;
}

/* Lines of expected.txt starting with `kind`, one at a time. */
static int next_line(FILE *f, const char *kind, char *line, size_t len)
{
    while (fgets(line, (int)len, f))
        if (strncmp(line, kind, strlen(kind)) == 0 && line[strlen(kind)] == ' ')
            return 1;
    return 0;
}

static FILE *open_expected(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/data/images/expected.txt", test_data_dir());
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    return f;
}

static void test_resize_matches_opencv(void **state)
{
    (void)state;
    FILE *f = open_expected();
    char line[4096];
    int cases = 0;
    while (next_line(f, "resize", line, sizeof line)) {
        char in_name[256], out_name[256];
        int dw, dh;
        assert_int_equal(sscanf(line, "resize %255s %d %d %255s", in_name, &dw, &dh, out_name), 4);
        struct ppocr_image src, want;
        load_fixture(in_name, &src);
        load_fixture(out_name, &want);
        assert_int_equal(want.width, dw);
        assert_int_equal(want.height, dh);
        uint8_t *got = malloc((size_t)dw * dh * 3);
        assert_int_equal(ocr_resize_linear(src.bgr, src.width, src.height, got, dw, dh, 3), 0);
        assert_int_equal(max_diff(got, want.bgr, dw, dh, out_name), 0);
        free(got);
        ppocr_image_free(&src);
        ppocr_image_free(&want);
        cases++;
    }
    fclose(f);
    assert_true(cases >= 6);
}

static void test_resize_rejects_bad_arguments(void **state)
{
    (void)state;
    uint8_t src[4 * 4 * 3] = {0}, dst[4 * 4 * 3];
    assert_int_equal(ocr_resize_linear(src, 0, 4, dst, 2, 2, 3), -1);
    assert_int_equal(ocr_resize_linear(src, 4, 4, dst, 2, -1, 3), -1);
    assert_int_equal(ocr_resize_linear(src, 4, 4, dst, 2, 2, 5), -1);
    assert_int_equal(ocr_resize_linear(src, 4, 4, dst, 2, 2, 0), -1);
}

/* A constant image stays constant whatever the scale (weights sum to one after rounding). */
static void test_resize_constant(void **state)
{
    (void)state;
    static uint8_t src[40 * 30 * 3], dst[97 * 71 * 3];
    memset(src, 201, sizeof src);
    const int sizes[][2] = {{97, 71}, {7, 3}, {20, 15}, {1, 1}, {40, 1}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        assert_int_equal(ocr_resize_linear(src, 40, 30, dst, sizes[k][0], sizes[k][1], 3), 0);
        for (int i = 0; i < sizes[k][0] * sizes[k][1] * 3; i++)
            assert_int_equal(dst[i], 201);
    }
}

/* Rows shared with helpers (in bands, each claimed by whichever thread comes first) give the same
 * bytes as one thread: random sizes with 1-4 channels, scaled down, up, across and by exactly 2. */
static void test_resize_shared_matches_alone(void **state)
{
    (void)state;
    struct ocr_workers *workers;
    assert_int_equal(ocr_workers_create(3, &workers), 0);
    srand(20261208);
    int cases = 0, banded = 0;
    for (int k = 0; k < 48; k++) {
        const int cn = 1 + k % 4;
        const int src_w = 1 + rand() % 211, src_h = 1 + rand() % 1300;
        int dst_w = 1 + rand() % 233, dst_h = 1 + rand() % 1500;
        if (k % 8 == 7 && src_w >= 2 && src_h >= 2) { /* OpenCV's 2x2 box average */
            dst_w = src_w / 2;
            dst_h = src_h / 2;
        }
        uint8_t *src = malloc((size_t)src_w * src_h * cn), *alone = malloc((size_t)dst_w * dst_h * cn),
                *shared = malloc((size_t)dst_w * dst_h * cn);
        assert_non_null(src);
        assert_non_null(alone);
        assert_non_null(shared);
        for (size_t i = 0; i < (size_t)src_w * src_h * cn; i++)
            src[i] = (uint8_t)rand();
        memset(shared, 0xA5, (size_t)dst_w * dst_h * cn);
        assert_int_equal(ocr_resize_linear(src, src_w, src_h, alone, dst_w, dst_h, cn), 0);
        assert_int_equal(ocr_resize_linear_shared(src, src_w, src_h, shared, dst_w, dst_h, cn, workers), 0);
        if (memcmp(alone, shared, (size_t)dst_w * dst_h * cn))
            fail_msg("%dx%d -> %dx%d, %d channels: the shared resize differs", src_w, src_h, dst_w, dst_h, cn);
        cases++;
        banded += dst_h >= 128;
        free(src);
        free(alone);
        free(shared);
    }
    printf("%d sizes the same bytes, %d of them in several bands\n", cases, banded);
    assert_true(banded >= 24);
    ocr_workers_destroy(workers);
}

static void test_det_resize_dims(void **state)
{
    (void)state;
    /* {w, h, expected w, expected h}: PaddleOCR's rule with Python's round-half-even */
    const int cases[][4] = {
        {400, 200, 384, 192},                                         /* 12.5 -> 12 */
        {3600, 4800, 704, 960},                                       /* 720/32 = 22.5 -> 22 */
        {1017, 529, 960, 512},                                        /* 499 -> 16 * 32 */
        {114, 34, 128, 32},                                           /* never scaled up, but rounded to 32s */
        {10, 5, 32, 32},                                              /* at least 32 */
        {960, 960, 960, 960},                                         /* the limit itself is not scaled */
        {1920, 1080, 960, 544},                                       /* 540/32 = 16.875 -> 17 */
        {1, 5000, 32, 960},     {5000, 1, 960, 32}, {80, 48, 64, 64}, /* 2.5 -> 2, 1.5 -> 2 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int w, h;
        ocr_det_resize_dims(cases[i][0], cases[i][1], OCR_DET_LIMIT_SIDE_LEN, &w, &h);
        if (w != cases[i][2] || h != cases[i][3])
            fail_msg("%dx%d -> %dx%d, expected %dx%d", cases[i][0], cases[i][1], w, h, cases[i][2], cases[i][3]);
    }
}

/* Whole det input on real corpus images: resized pixels and normalised floats. */
static void test_det_preprocess_matches_reference(void **state)
{
    (void)state;
    FILE *f = open_expected();
    char line[4096];
    int cases = 0;
    while (next_line(f, "det", line, sizeof line)) {
        char in_name[256], out_name[256];
        int sw, sh, dw, dh, used;
        assert_int_equal(sscanf(line, "det %255s %d %d %d %d %255s%n", in_name, &sw, &sh, &dw, &dh, out_name, &used),
                         6);
        struct ppocr_image src, want;
        load_fixture(in_name, &src);
        load_fixture(out_name, &want);
        assert_int_equal(src.width, sw);
        assert_int_equal(src.height, sh);
        int w, h;
        ocr_det_resize_dims(sw, sh, OCR_DET_LIMIT_SIDE_LEN, &w, &h);
        assert_int_equal(w, dw);
        assert_int_equal(h, dh);
        size_t plane = (size_t)w * h;
        float *got = malloc(3 * plane * sizeof *got), *ref = malloc(3 * plane * sizeof *ref);
        assert_int_equal(ocr_det_preprocess(&src, OCR_DET_LIMIT_SIDE_LEN, got), 0);
        /* the resize part: compare with OpenCV's pixels through the normalisation */
        ocr_det_normalize(want.bgr, w, h, ref);
        double d = test_max_abs(got, ref, 3 * plane);
        printf("%s det %dx%d: max |diff| vs OpenCV resize + normalise %g\n", in_name, w, h, d);
        assert_true(d == 0);
        /* the normalisation part: values the reference computed in float32 */
        const char *p = line + used;
        int c, idx, k = 0;
        float v;
        while (sscanf(p, " %d %d %f%n", &c, &idx, &v, &used) == 3) {
            p += used;
            assert_true(c >= 0 && c < 3 && idx >= 0 && (size_t)idx < plane);
            if (got[(size_t)c * plane + (size_t)idx] != v)
                fail_msg("%s: c=%d p=%d got %.9g want %.9g", in_name, c, idx, got[(size_t)c * plane + idx], v);
            k++;
        }
        assert_int_equal(k, 12);
        free(got);
        free(ref);
        ppocr_image_free(&src);
        ppocr_image_free(&want);
        cases++;
    }
    fclose(f);
    assert_int_equal(cases, 3);
}

/* mean/std per BGR channel, exact float32 arithmetic: spot values computed by hand in float32. */
static void test_det_normalize_values(void **state)
{
    (void)state;
    const uint8_t px[6] = {0, 0, 0, 255, 255, 255};
    float out[6];
    ocr_det_normalize(px, 2, 1, out);
    /* planes: B (mean .485 std .229), G (.456/.224), R (.406/.225); pixel 0 black, pixel 1 white */
    assert_float_equal(out[0], -0.485f / 0.229f, 1e-6);
    assert_float_equal(out[1], (1 - 0.485f) / 0.229f, 1e-6);
    assert_float_equal(out[2], -0.456f / 0.224f, 1e-6);
    assert_float_equal(out[3], (1 - 0.456f) / 0.224f, 1e-6);
    assert_float_equal(out[4], -0.406f / 0.225f, 1e-6);
    assert_float_equal(out[5], (1 - 0.406f) / 0.225f, 1e-6);
}

/* The margin's colour: the mean of the image's border pixels, rounded, per channel, for one pixel,
 * a row, a column and odd sizes (the GPU kernels that read the margin: test_gpu_image.c). */
static void test_border_colour(void **state)
{
    (void)state;
    static const int sizes[][2] = {{1, 1}, {5, 3}, {7, 2}, {1, 9}, {33, 17}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int w = sizes[k][0], h = sizes[k][1];
        struct ppocr_image img = {0};
        img.width = w;
        img.height = h;
        img.bgr = malloc((size_t)w * h * 3);
        double sum[3] = {0, 0, 0};
        int n = 0;
        for (int y = 0; y < h; y++)
            for (int x = 0; x < w; x++)
                for (int c = 0; c < 3; c++) {
                    uint8_t v = (uint8_t)(x * 37 + y * 101 + c * 53 + (int)k);
                    img.bgr[((size_t)y * w + x) * 3 + c] = v;
                    if (y == 0 || y == h - 1 || x == 0 || x == w - 1) {
                        sum[c] += v;
                        n += c == 0;
                    }
                }
        uint8_t got[3];
        ocr_border_colour(&img, got);
        for (int c = 0; c < 3; c++)
            if (got[c] != (int)(sum[c] / n + 0.5))
                fail_msg("%dx%d: channel %d is %d, expected %d", w, h, c, got[c], (int)(sum[c] / n + 0.5));
        free(img.bgr);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_resize_matches_opencv), cmocka_unit_test(test_resize_rejects_bad_arguments),
        cmocka_unit_test(test_resize_constant),       cmocka_unit_test(test_border_colour),
        cmocka_unit_test(test_det_resize_dims),       cmocka_unit_test(test_det_preprocess_matches_reference),
        cmocka_unit_test(test_det_normalize_values),  cmocka_unit_test(test_resize_shared_matches_alone),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
