/* Small print on a large page, end to end on the real models: three copies of the sample page, at 0.7 of its size, on a
 * white page large enough that detection at the det limit sees its text under 10 pixels high,
 * which takes the page to the strips of det_tiles.h. One copy lies across the cut between the
 * strips. Every line of every copy must come out once, with its text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "img/image.h"
#include "ocr/preprocess.h"
#include "ppocr.h"
#include "support/test_env.h"

static const char *const sample_lines[] = {
    "This is a lot of 12 point text to test the",
    "ocr code and see if it works on all types",
    "of file format.",
    "The quick brown dog jumped over the",
    "lazy fox. The quick brown dog jumped",
    "over the lazy fox. The quick brown dog",
    "jumped over the lazy fox. The quick",
    "brown dog jumped over the lazy fox",
};
enum { N_SAMPLE = 8, COPIES = 3 };

/* Levenshtein distance in bytes (the sample is ASCII). */
static size_t edits(const char *a, const char *b)
{
    size_t na = strlen(a), nb = strlen(b), row[128];
    assert_true(nb < 128);
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            best = up + 1 < best ? up + 1 : best;
            best = row[j - 1] + 1 < best ? row[j - 1] + 1 : best;
            diag = up;
            row[j] = best;
        }
    }
    return row[nb];
}

static void test_small_print_read_in_strips(void **state)
{
    (void)state;
    char path[1024], err[512];
    snprintf(path, sizeof(path), "%s/data/sample.png", test_data_dir());
    struct ppocr_image sample;
    if (ppocr_image_load_file(path, PPOCR_ALPHA_FLATTEN, &sample, err, sizeof(err)) != PPOCR_OK)
        fail_msg("%s", err);
    /* the sample's text at 0.7 of its size */
    struct ppocr_image small = {.width = sample.width * 7 / 10, .height = sample.height * 7 / 10};
    small.bgr = malloc((size_t)small.width * small.height * 3);
    assert_non_null(small.bgr);
    assert_int_equal(
        ocr_resize_linear(sample.bgr, sample.width, sample.height, small.bgr, small.width, small.height, 3), 0);
    ppocr_image_free(&sample);
    sample = small;
    struct ppocr_image page = {.width = 2000, .height = 3400};
    page.bgr = malloc((size_t)page.width * page.height * 3);
    assert_non_null(page.bgr);
    memset(page.bgr, 255, (size_t)page.width * page.height * 3);
    const int at[COPIES][2] = {{100, 30}, {1200, 1400}, {600, 2800}};
    for (int c = 0; c < COPIES; c++)
        for (int y = 0; y < sample.height; y++)
            memcpy(page.bgr + ((size_t)(at[c][1] + y) * page.width + at[c][0]) * 3,
                   sample.bgr + (size_t)y * sample.width * 3, (size_t)sample.width * 3);

    struct ppocr_options opt;
    ppocr_options_default(&opt);
    opt.models_dir = test_models_dir();
    struct ppocr_engine *engine;
    ppocr_engine_create(&opt, &engine, err, sizeof(err));
    if (!engine)
        fail_msg("engine: %s", err);
    struct ppocr_result r;
    if (ppocr_engine_run(engine, &page, &r, err, sizeof(err)))
        fail_msg("%s", err);

    /* each copy's lines, once each; nothing else */
    int found[COPIES * N_SAMPLE] = {0};
    for (int i = 0; i < r.n_lines; i++) {
        int hit = -1;
        for (int c = 0; c < COPIES && hit < 0; c++)
            for (int k = 0; k < N_SAMPLE && hit < 0; k++) {
                int x = r.lines[i].box[0][0], y = r.lines[i].box[0][1];
                int inside =
                    x >= at[c][0] && x < at[c][0] + sample.width && y >= at[c][1] && y < at[c][1] + sample.height;
                /* read as well as a page at the det limit reads: a slip or two (a space, a full
                 * stop), none of the line missing */
                size_t e = inside ? edits(r.lines[i].text, sample_lines[k]) : SIZE_MAX;
                if (e <= 1 || (e != SIZE_MAX && 10 * e <= strlen(sample_lines[k])))
                    hit = c * N_SAMPLE + k;
            }
        if (hit < 0)
            fail_msg("line %d \"%s\" at %d,%d is none of the sample's", i, r.lines[i].text, r.lines[i].box[0][0],
                     r.lines[i].box[0][1]);
        found[hit]++;
    }
    for (int i = 0; i < COPIES * N_SAMPLE; i++)
        if (found[i] != 1)
            fail_msg("copy %d line %d \"%s\" found %d times", i / N_SAMPLE, i % N_SAMPLE, sample_lines[i % N_SAMPLE],
                     found[i]);
    ppocr_result_free(&r);
    ppocr_engine_destroy(engine);
    ppocr_image_free(&page);
    ppocr_image_free(&sample);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_small_print_read_in_strips),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
