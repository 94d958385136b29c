/* ppocr_engine_run_many on the real models: small images read in shared runs (detected side by
 * side, their lines in the same recognition batches, cropped from several images held on the
 * device at once) give what each gives alone through ppocr_engine_run: the same lines, texts,
 * boxes and words, scores within the rounding of other batch shapes. More images than one run
 * takes, an image too large to share a run (read alone between the others), an empty image
 * (failed, the others read) and a run of one image are covered. On the default device (the CPU
 * backend where it is built), and on a Vulkan device (lavapipe in CI) where one opens, with its
 * memory mapped and not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ppocr.h"
#include "support/test_env.h"

#define SCORE_TOL 2e-3 /* a line's score in another batch shape (fp16 activations on GPUs) */

static const char *const files[] = {
    "data/corpus/paddleocr/en_word_1.png",   "data/sample.png",
    "data/corpus/paddleocr/en_word_2.png",   "data/corpus/tesseract/HelloGoogle.png",
    "data/corpus/paddleocr/word_2.jpg",      "data/corpus/mmocr_words/1036169.jpg",
    "data/corpus/paddleocr/en_word_5.png",   "data/corpus/tesseract/phototest-rotated-180.png",
    "data/corpus/tesseract/phototest_2.png", "data/corpus/mmocr_words/1210236.jpg",
};
#define N_FILES (int)(sizeof(files) / sizeof(files[0]))

static struct ppocr_image images[N_FILES];

static void load(const char *name, struct ppocr_image *img)
{
    char path[1024], err[512];
    snprintf(path, sizeof(path), "%s/%s", test_data_dir(), name);
    if (ppocr_image_load_file(path, PPOCR_ALPHA_FLATTEN, img, err, sizeof(err)) != PPOCR_OK)
        fail_msg("%s", err);
}

static int setup(void **state)
{
    (void)state;
    for (int i = 0; i < N_FILES; i++)
        load(files[i], &images[i]);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    for (int i = 0; i < N_FILES; i++)
        ppocr_image_free(&images[i]);
    return 0;
}

static struct ppocr_engine *open_engine(enum ppocr_backend backend)
{
    struct ppocr_options opt;
    ppocr_options_default(&opt);
    opt.models_dir = test_models_dir();
    if (backend == PPOCR_BACKEND_VULKAN)
        opt.backend = PPOCR_BACKEND_VULKAN;
    char err[512];
    struct ppocr_engine *e = NULL;
    if (ppocr_engine_create(&opt, &e, err, sizeof(err)) != PPOCR_OK) {
        fprintf(stderr, "engine: %s\n", err);
        return NULL;
    }
    return e;
}

static void assert_same_reading(const struct ppocr_result *alone, const struct ppocr_result *shared, const char *what)
{
    if (alone->n_lines != shared->n_lines)
        fail_msg("%s: %d lines alone, %d in a shared run", what, alone->n_lines, shared->n_lines);
    assert_int_equal(alone->width, shared->width);
    assert_int_equal(alone->height, shared->height);
    for (int i = 0; i < alone->n_lines; i++) {
        const struct ppocr_line *a = &alone->lines[i], *b = &shared->lines[i];
        if (strcmp(a->text, b->text))
            fail_msg("%s line %d: \"%s\" alone, \"%s\" shared", what, i, a->text, b->text);
        assert_memory_equal(a->box, b->box, sizeof(a->box));
        if (!(fabsf(a->score - b->score) <= SCORE_TOL))
            fail_msg("%s line %d: score %.6f alone, %.6f shared", what, i, a->score, b->score);
        assert_int_equal(a->upside_down, b->upside_down);
        assert_int_equal(a->n_words, b->n_words);
        for (int w = 0; w < a->n_words; w++) {
            assert_string_equal(a->words[w].text, b->words[w].text);
            assert_memory_equal(a->words[w].box, b->words[w].box, sizeof(a->words[w].box));
        }
    }
    assert_int_equal(alone->n_paragraphs, shared->n_paragraphs);
    assert_int_equal(alone->n_blocks, shared->n_blocks);
}

/* images[order[0..n)] through ppocr_engine_run_many (and an empty image at `empty_at` when >= 0)
 * against each one read alone. */
static void compare_runs(struct ppocr_engine *e, const struct ppocr_image *imgs, int n, int empty_at)
{
    struct ppocr_result *alone = calloc((size_t)n, sizeof(*alone)), *shared = calloc((size_t)n, sizeof(*shared));
    enum ppocr_status *status = calloc((size_t)n, sizeof(*status));
    char(*errs)[256] = calloc((size_t)n, sizeof(*errs));
    assert_true(alone && shared && status && errs);
    for (int i = 0; i < n; i++)
        if (i != empty_at && ppocr_engine_run(e, &imgs[i], &alone[i], errs[i], sizeof(errs[i])) != PPOCR_OK)
            fail_msg("image %d alone: %s", i, errs[i]);
    const enum ppocr_status all = ppocr_engine_run_many(e, imgs, n, shared, status, errs[0], sizeof(errs[0]));
    assert_int_equal(all, empty_at >= 0 ? PPOCR_ERR_FAILED : PPOCR_OK);
    int lines = 0;
    for (int i = 0; i < n; i++) {
        char what[64];
        snprintf(what, sizeof(what), "image %d of %d", i, n);
        if (i == empty_at) {
            assert_int_equal(status[i], PPOCR_ERR_FAILED);
            assert_non_null(strstr(errs[i], "empty image"));
            assert_int_equal(shared[i].n_lines, 0);
            continue;
        }
        if (status[i] != PPOCR_OK)
            fail_msg("%s shared: %s", what, errs[i]);
        assert_same_reading(&alone[i], &shared[i], what);
        lines += shared[i].n_lines;
        ppocr_result_free(&alone[i]);
        ppocr_result_free(&shared[i]);
    }
    assert_true(lines >= n - (empty_at >= 0) - 1); /* the images were read, not skipped */
    free(alone), free(shared), free(status), free(errs);
}

/* A copy of img scaled up by `factor` (nearest pixel): too large to share a run. */
static struct ppocr_image enlarged(const struct ppocr_image *img, int factor)
{
    struct ppocr_image big = *img;
    big.width *= factor;
    big.height *= factor;
    big.bgr = malloc((size_t)big.width * big.height * 3);
    assert_non_null(big.bgr);
    for (int y = 0; y < big.height; y++)
        for (int x = 0; x < big.width; x++)
            memcpy(big.bgr + ((size_t)y * big.width + x) * 3,
                   img->bgr + ((size_t)(y / factor) * img->width + x / factor) * 3, 3);
    return big;
}

static void run_cases(struct ppocr_engine *e, int n_images)
{
    /* every image: more than one run takes, so two runs */
    compare_runs(e, images, n_images, -1);
    /* one run of one image */
    compare_runs(e, &images[1], 1, -1);
    /* two pages of one size, whose detections share a run in plans of one shape */
    struct ppocr_image pages[2] = {images[7], images[1]};
    compare_runs(e, pages, 2, -1);
    /* an empty image and an image too large to share between shared ones */
    struct ppocr_image mixed[5] = {images[0], {0}, enlarged(&images[1], 4), images[2], images[3]};
    compare_runs(e, mixed, 5, 1);
    free(mixed[2].bgr);
}

static void test_default_device(void **state)
{
    (void)state;
    struct ppocr_engine *e = open_engine(PPOCR_BACKEND_AUTO);
    assert_non_null(e);
    run_cases(e, N_FILES);
    ppocr_engine_destroy(e);
}

static void test_vulkan_device(void **state)
{
    (void)state;
    struct ppocr_engine *e = open_engine(PPOCR_BACKEND_VULKAN);
    if (!e)
        skip();
    /* lavapipe reads a line in about 0.1 s: the small images only, still two runs */
    static const int small[] = {0, 2, 4, 5, 6, 9, 0, 2, 4, 5};
    struct ppocr_image some[10];
    for (int i = 0; i < 10; i++)
        some[i] = images[small[i]];
    compare_runs(e, some, 10, -1);
    struct ppocr_image mixed[4] = {images[0], {0}, images[1], images[3]};
    compare_runs(e, mixed, 4, 1);
    ppocr_engine_destroy(e);

    /* device memory not mapped, as on discrete GPUs: each image's map of a shared detection run
     * comes back through one readback, at its own place there (no engine runs while the
     * environment changes) */
    setenv("PPOCR_VK_NO_MAPPED_DEVICE", "1", 1);
    e = open_engine(PPOCR_BACKEND_VULKAN);
    unsetenv("PPOCR_VK_NO_MAPPED_DEVICE");
    assert_non_null(e);
    compare_runs(e, some, 6, -1);
    ppocr_engine_destroy(e);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_device),
        cmocka_unit_test(test_vulkan_device),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
