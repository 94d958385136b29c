/* The engine on a device made to look small (gpu_options.max_buffer_range through
 * PPOCR_VK_MAX_BUFFER_RANGE, read when an engine's context is made), so that the cuts of fit.h run
 * on the sample page without big images:
 *  - at 22 MiB the sample's recognition group (and by default a batch of four lines, with
 *    --paddle-parity a batch of six) no longer fits: the cut reading must be the whole reading,
 *    line for line, score for score, box for box, in less memory;
 *  - at 12 MiB the sample's first line four times over does not fit even alone, nor beside the
 *    classifier: the classifier runs apart and the line is narrowed, and still read; the sample's
 *    detection does not fit either: it runs at a shorter side and still finds the page's lines;
 *  - on the device as it is, a text line so large that its crop has more pixels than 65535
 *    workgroups of the crop kernels cover (Vulkan's least maxComputeWorkGroupCount) is read;
 *  - images with a side at or near the documented limit (32768) are read, margin and all. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "img/image.h"
#include "ppocr.h"
#include "support/test_env.h"

#define MIB (1024 * 1024)

static struct ppocr_image sample;
static struct ppocr_engine *whole; /* default options, the device as it is */

/* An engine on a device whose buffers hold at most `range` bytes (0: the device's own). */
static struct ppocr_engine *engine_with_range(uint64_t range, int parity)
{
    char value[32], err[512];
    snprintf(value, sizeof(value), "%llu", (unsigned long long)range);
    if (range)
        setenv("PPOCR_VK_MAX_BUFFER_RANGE", value, 1);
    else
        unsetenv("PPOCR_VK_MAX_BUFFER_RANGE");
    struct ppocr_options opt;
    ppocr_options_default(&opt);
    opt.backend = PPOCR_BACKEND_VULKAN; /* the limits are a Vulkan device's */
    opt.models_dir = test_models_dir();
    opt.paddle_parity = parity;
    struct ppocr_engine *e;
    ppocr_engine_create(&opt, &e, err, sizeof(err));
    unsetenv("PPOCR_VK_MAX_BUFFER_RANGE");
    if (!e)
        fprintf(stderr, "engine (buffers of at most %s bytes): %s\n", range ? value : "the device's", err);
    return e;
}

static int setup(void **state)
{
    (void)state;
    char path[1024], err[512];
    snprintf(path, sizeof(path), "%s/data/sample.png", test_data_dir());
    if (ppocr_image_load_file(path, PPOCR_ALPHA_FLATTEN, &sample, err, sizeof(err)) != PPOCR_OK) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    whole = engine_with_range(0, 0);
    return whole ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ppocr_engine_destroy(whole);
    ppocr_image_free(&sample);
    return 0;
}

static void read_with(struct ppocr_engine *e, const struct ppocr_image *img, struct ppocr_result *r)
{
    char err[512];
    assert_non_null(e);
    if (ppocr_engine_run(e, img, r, err, sizeof(err)))
        fail_msg("%s", err);
}

static uint64_t device_peak(const struct ppocr_engine *e)
{
    struct ppocr_engine_memory mem;
    ppocr_engine_memory(e, &mem);
    return mem.device_peak;
}

static void assert_same_reading(const struct ppocr_result *a, const struct ppocr_result *b)
{
    assert_int_equal(a->n_lines, b->n_lines);
    for (int i = 0; i < a->n_lines; i++) {
        if (strcmp(a->lines[i].text, b->lines[i].text) || a->lines[i].score != b->lines[i].score)
            fail_msg("line %d: '%s' %.9g whole, '%s' %.9g cut", i, a->lines[i].text, (double)a->lines[i].score,
                     b->lines[i].text, (double)b->lines[i].score);
        assert_memory_equal(a->lines[i].box, b->lines[i].box, sizeof(a->lines[i].box));
    }
}

/* The sample read whole by `full` and cut by a 22 MiB engine of the same options. */
static void cut_reads_as_whole(struct ppocr_engine *full, int parity)
{
    struct ppocr_result a, b;
    read_with(full, &sample, &a);
    const uint64_t full_peak = device_peak(full);
    struct ppocr_engine *small = engine_with_range(22 * MIB, parity);
    read_with(small, &sample, &b);
    const uint64_t cut_peak = device_peak(small);
    ppocr_engine_destroy(small);
    assert_int_equal(a.n_lines, 8);
    assert_same_reading(&a, &b);
    /* the whole group took more than the cut one may: the cut did happen */
    if (cut_peak + 8 * MIB > full_peak)
        fail_msg("device peak %llu bytes cut, %llu whole: nothing was cut", (unsigned long long)cut_peak,
                 (unsigned long long)full_peak);
    ppocr_result_free(&a);
    ppocr_result_free(&b);
}

static void test_cut_reads_as_whole(void **state)
{
    (void)state;
    cut_reads_as_whole(whole, 0);
}

static void test_cut_reads_as_whole_parity(void **state)
{
    (void)state;
    struct ppocr_engine *full = engine_with_range(0, 1);
    assert_non_null(full);
    cut_reads_as_whole(full, 1);
    ppocr_engine_destroy(full);
}

static int count_of(const char *text, const char *word)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, word)); p += strlen(word))
        n++;
    return n;
}

/* The sample's first line (rows 86-123, columns 30-584) four times side by side, on white, and the
 * sample itself, at 12 MiB. */
static void test_too_wide_line_and_detection(void **state)
{
    (void)state;
    const int x0 = 30, y0 = 86, lw = 555, lh = 38, copies = 4, pad = 32;
    struct ppocr_image img = {.width = copies * lw + 2 * pad, .height = lh + pad};
    img.bgr = malloc((size_t)img.width * img.height * 3);
    assert_non_null(img.bgr);
    memset(img.bgr, 255, (size_t)img.width * img.height * 3);
    for (int y = 0; y < lh; y++)
        for (int c = 0; c < copies; c++)
            memcpy(img.bgr + ((size_t)(y + pad / 2) * img.width + pad + c * lw) * 3,
                   sample.bgr + ((size_t)(y + y0) * sample.width + x0) * 3, (size_t)lw * 3);
    struct ppocr_engine *small = engine_with_range(12 * MIB, 0);
    struct ppocr_result r, page;
    read_with(small, &img, &r);
    read_with(small, &sample, &page);
    ppocr_engine_destroy(small);
    free(img.bgr);
    assert_int_equal(r.n_lines, 1);
    if (count_of(r.lines[0].text, "point text") < 3)
        fail_msg("narrowed line read as '%s'", r.lines[0].text);
    assert_true(page.n_lines >= 6);
    int found = 0;
    for (int i = 0; i < page.n_lines; i++)
        found += count_of(page.lines[i].text, "quick brown");
    assert_true(found >= 3);
    ppocr_result_free(&r);
    ppocr_result_free(&page);
}

/* The sample's first line scaled up 22 times: a crop of about 12000 x 500 pixels. */
static void test_huge_crop(void **state)
{
    (void)state;
    const int x0 = 30, y0 = 86, lw = 555, lh = 38, scale = 22, pad = 200;
    struct ppocr_image img = {.width = lw * scale + 2 * pad, .height = lh * scale + pad};
    img.bgr = malloc((size_t)img.width * img.height * 3);
    assert_non_null(img.bgr);
    memset(img.bgr, 255, (size_t)img.width * img.height * 3);
    for (int y = 0; y < lh * scale; y++)
        for (int x = 0; x < lw * scale; x++)
            memcpy(img.bgr + ((size_t)(y + pad / 2) * img.width + pad + x) * 3,
                   sample.bgr + ((size_t)(y / scale + y0) * sample.width + x / scale + x0) * 3, 3);
    struct ppocr_result r;
    read_with(whole, &img, &r);
    free(img.bgr);
    assert_int_equal(r.n_lines, 1);
    if (!strstr(r.lines[0].text, "12 point text"))
        fail_msg("the huge line read as '%s'", r.lines[0].text);
    ppocr_result_free(&r);
}

/* Thin pages of 32705-32768 pixels a side: the detection margin must not push them over the
 * limit that the image itself keeps. */
static void test_sides_at_the_limit(void **state)
{
    (void)state;
    const int sides[] = {32705, 32768};
    for (size_t i = 0; i < sizeof sides / sizeof sides[0]; i++)
        for (int turned = 0; turned < 2; turned++) {
            struct ppocr_image img = {.width = turned ? 64 : sides[i], .height = turned ? sides[i] : 64};
            img.bgr = malloc((size_t)img.width * img.height * 3);
            assert_non_null(img.bgr);
            memset(img.bgr, 255, (size_t)img.width * img.height * 3);
            struct ppocr_result r;
            char err[512];
            enum ppocr_status st = ppocr_engine_run(whole, &img, &r, err, sizeof(err));
            free(img.bgr);
            if (st != PPOCR_OK)
                fail_msg("%dx%d: %s", img.width, img.height, err);
            assert_int_equal(r.width, img.width);
            assert_int_equal(r.height, img.height);
            ppocr_result_free(&r);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cut_reads_as_whole),          cmocka_unit_test(test_cut_reads_as_whole_parity),
        cmocka_unit_test(test_too_wide_line_and_detection), cmocka_unit_test(test_huge_crop),
        cmocka_unit_test(test_sides_at_the_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
