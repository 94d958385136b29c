/* A page of more than a hundred lines, end to end on the device as it is (no limits lowered): the
 * Bebel book page of tests/data/pages (58 lines of print) with a white band put through it three
 * quarters of the way across, so that every line becomes two: a long one and a short one, 108 in
 * all, two columns. Its long lines are wide enough that four batches of them need more activation
 * memory than lavapipe's largest buffer (128 MiB), which failed the whole page before the engine
 * cut its work to the device (fit.h). The page must now be read: a hundred lines or more, with
 * words of both columns. */
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

#define BAND_AT 2150 /* pixels from the left: a quarter of the print's width is right of it */
#define BAND 200

static void test_dense_page(void **state)
{
    (void)state;
    char path[1024], err[512];
    snprintf(path, sizeof(path), "%s/data/pages/bebel_frau_1879_0168.png", test_data_dir());
    struct ppocr_image page;
    if (ppocr_image_load_file(path, PPOCR_ALPHA_FLATTEN, &page, err, sizeof(err)) != PPOCR_OK)
        fail_msg("%s", err);
    assert_true(page.width > BAND_AT);
    struct ppocr_image img = {.width = page.width + BAND, .height = page.height};
    img.bgr = malloc((size_t)img.width * img.height * 3);
    assert_non_null(img.bgr);
    for (int y = 0; y < img.height; y++) {
        uint8_t *row = img.bgr + (size_t)y * img.width * 3;
        const uint8_t *src = page.bgr + (size_t)y * page.width * 3;
        memcpy(row, src, (size_t)BAND_AT * 3);
        memset(row + (size_t)BAND_AT * 3, 255, (size_t)BAND * 3);
        memcpy(row + (size_t)(BAND_AT + BAND) * 3, src + (size_t)BAND_AT * 3, (size_t)(page.width - BAND_AT) * 3);
    }
    ppocr_image_free(&page);

    struct ppocr_options opt;
    ppocr_options_default(&opt);
    opt.backend = PPOCR_BACKEND_VULKAN; /* the buffer limit is lavapipe's */
    opt.models_dir = test_models_dir();
    struct ppocr_engine *e;
    ppocr_engine_create(&opt, &e, err, sizeof(err));
    if (!e)
        fail_msg("engine: %s", err);
    struct ppocr_result r;
    int rc = ppocr_engine_run(e, &img, &r, err, sizeof(err));
    ppocr_engine_destroy(e);
    free(img.bgr);
    if (rc)
        fail_msg("the dense page: %s", err);

    if (r.n_lines < 100)
        fail_msg("%d lines read, the page has 108", r.n_lines);
    /* whole words of the long lines (left of the band) and of the short ones (right of it); a
     * reading may miss a letter or two of the page, not most of these */
    const char *words[] = {"Sozialismus",  "Ueberzeugungen", "Volksbeschluss", "unmenschlicher",
                           "abzuschaffen", "Meinungen",      "Privatsache",    "Gregor"};
    const int n_words = (int)(sizeof(words) / sizeof(*words));
    char missing[256] = "";
    int found = 0;
    for (int w = 0; w < n_words; w++) {
        int here = 0;
        for (int i = 0; i < r.n_lines && !here; i++)
            here = strstr(r.lines[i].text, words[w]) != NULL;
        found += here;
        if (!here && strlen(missing) + strlen(words[w]) + 2 < sizeof(missing))
            strcat(strcat(missing, " "), words[w]);
    }
    if (found < n_words - 2)
        fail_msg("not read:%s", missing);
    ppocr_result_free(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_page),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
