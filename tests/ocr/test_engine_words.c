/* The engine's words end to end, on the real models: on the sample page and on phototest turned a
 * quarter counter-clockwise (read turned back, its lines upside down there), every line's words
 * joined by spaces are its text, every word box lies within its line's box, the words follow each
 * other in the direction the text runs, and together they cover the ink of their line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "img/image.h"
#include "ppocr.h"
#include "support/test_env.h"

#define SLACK 3.0 /* pixels a word box may reach past its line's box (corners are rounded) */

static struct ppocr_engine *engine;

static int setup(void **state)
{
    (void)state;
    struct ppocr_options opt;
    ppocr_options_default(&opt);
    opt.models_dir = test_models_dir();
    char err[512];
    ppocr_engine_create(&opt, &engine, err, sizeof(err));
    if (!engine)
        fprintf(stderr, "engine: %s\n", err);
    return engine ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    ppocr_engine_destroy(engine);
    return 0;
}

static void read_page(const char *name, struct ppocr_image *img, struct ppocr_result *r)
{
    char path[1024], err[512];
    snprintf(path, sizeof(path), "%s/data/%s", test_data_dir(), name);
    if (ppocr_image_load_file(path, PPOCR_ALPHA_FLATTEN, img, err, sizeof(err)) != PPOCR_OK)
        fail_msg("%s", err);
    if (ppocr_engine_run(engine, img, r, err, sizeof(err)))
        fail_msg("%s: %s", name, err);
    assert_true(r->n_lines > 0);
}

/* The text with runs of spaces and tabs made one space, none at the ends. */
static void squeeze(const char *s, char *out)
{
    char *o = out;
    for (; *s; s++) {
        if (*s == ' ' || *s == '\t') {
            if (o > out && o[-1] != ' ')
                *o++ = ' ';
        } else {
            *o++ = *s;
        }
    }
    if (o > out && o[-1] == ' ')
        o--;
    *o = '\0';
}

/* How far p lies outside the convex quad q (0 inside). */
static double outside(const int q[4][2], double px, double py)
{
    double area = 0, worst = 0;
    for (int k = 0; k < 4; k++)
        area += (double)q[k][0] * q[(k + 1) % 4][1] - (double)q[(k + 1) % 4][0] * q[k][1];
    for (int k = 0; k < 4; k++) {
        const int *a = q[k], *b = q[(k + 1) % 4];
        double ex = b[0] - a[0], ey = b[1] - a[1], len = hypot(ex, ey);
        if (len == 0)
            continue;
        /* positive on the inner side of the edge, whichever way the corners turn */
        double d = ((px - a[0]) * ey - (py - a[1]) * ex) / len * (area > 0 ? -1 : 1);
        if (-d > worst)
            worst = -d;
    }
    return worst;
}

static int dark(const struct ppocr_image *img, int x, int y)
{
    const uint8_t *p = img->bgr + ((size_t)y * img->width + x) * 3;
    return p[0] + p[1] + p[2] < 3 * 128;
}

/* The checks on one page; (dx, dy) is the direction its text runs in the image. Returns the share
 * of its lines' ink that their words cover. */
static double check_words(const struct ppocr_image *img, const struct ppocr_result *r, double dx, double dy)
{
    long ink = 0, covered = 0;
    for (int i = 0; i < r->n_lines; i++) {
        const struct ppocr_line *l = &r->lines[i];
        assert_true(l->n_words > 0);
        assert_non_null(l->words);
        size_t cap = 1;
        for (int w = 0; w < l->n_words; w++)
            cap += strlen(l->words[w].text) + 1;
        char *joined = calloc(cap, 1), *want = malloc(strlen(l->text) + 1);
        assert_non_null(joined);
        assert_non_null(want);
        for (int w = 0; w < l->n_words; w++) {
            if (w)
                strcat(joined, " ");
            strcat(joined, l->words[w].text);
        }
        squeeze(l->text, want);
        assert_string_equal(joined, want);
        free(joined);
        free(want);

        double prev_end = -1e9;
        for (int w = 0; w < l->n_words; w++) {
            const struct ppocr_word *wd = &l->words[w];
            assert_true(wd->score > 0 && wd->score <= 1);
            double lo = 1e9, hi = -1e9;
            for (int k = 0; k < 4; k++) {
                double off = outside(l->box, wd->box[k][0], wd->box[k][1]);
                if (off > SLACK)
                    fail_msg("line %d word %d (%s): corner %d (%d, %d) is %.1f px outside the line's box", i, w,
                             wd->text, k, wd->box[k][0], wd->box[k][1], off);
                double along = wd->box[k][0] * dx + wd->box[k][1] * dy;
                lo = fmin(lo, along);
                hi = fmax(hi, along);
            }
            /* its own corners read the same way: the top edge runs along the text */
            double ex = wd->box[1][0] - wd->box[0][0], ey = wd->box[1][1] - wd->box[0][1];
            if (hypot(ex, ey) > 0 && (ex * dx + ey * dy) / hypot(ex, ey) < 0.9)
                fail_msg("line %d word %d (%s) runs (%.0f, %.0f)", i, w, wd->text, ex, ey);
            if (lo < prev_end - 1)
                fail_msg("line %d word %d (%s) starts %.1f px before the last one ends", i, w, wd->text, prev_end - lo);
            prev_end = hi;
        }

        /* the ink within the line's box */
        int x0 = img->width, y0 = img->height, x1 = 0, y1 = 0;
        for (int k = 0; k < 4; k++) {
            x0 = l->box[k][0] < x0 ? l->box[k][0] : x0;
            y0 = l->box[k][1] < y0 ? l->box[k][1] : y0;
            x1 = l->box[k][0] > x1 ? l->box[k][0] : x1;
            y1 = l->box[k][1] > y1 ? l->box[k][1] : y1;
        }
        for (int y = y0; y <= y1; y++)
            for (int x = x0; x <= x1; x++) {
                if (!dark(img, x, y) || outside(l->box, x, y) > 0)
                    continue;
                int in = 0;
                for (int w = 0; w < l->n_words && !in; w++)
                    in = outside(l->words[w].box, x, y) <= 1.0;
                ink++;
                covered += in;
            }
    }
    assert_true(ink > 0);
    return (double)covered / ink;
}

static void test_sample_words(void **state)
{
    (void)state;
    struct ppocr_image img;
    struct ppocr_result r;
    read_page("sample.png", &img, &r);
    double cover = check_words(&img, &r, 1, 0);
    fprintf(stderr, "sample: %d lines, words cover %.2f %% of their ink\n", r.n_lines, 100 * cover);
    assert_true(cover > 0.99);
    const struct ppocr_word *w = &r.lines[0].words[0];
    fprintf(stderr, "first word: %s %.4f (%d,%d) (%d,%d) (%d,%d) (%d,%d)\n", w->text, w->score, w->box[0][0],
            w->box[0][1], w->box[1][0], w->box[1][1], w->box[2][0], w->box[2][1], w->box[3][0], w->box[3][1]);
    ppocr_result_free(&r);
    ppocr_image_free(&img);
}

/* Turned a quarter counter-clockwise, the text runs up the page; read turned back (the better
 * reading), where it stands upside down. */
static void test_turned_page_words(void **state)
{
    (void)state;
    struct ppocr_image img;
    struct ppocr_result r;
    read_page("corpus/tesseract/phototest-rotated-L.png", &img, &r);
    int upside_down = 0;
    for (int i = 0; i < r.n_lines; i++)
        upside_down += r.lines[i].upside_down;
    assert_true(2 * upside_down > r.n_lines);
    double cover = check_words(&img, &r, 0, -1);
    fprintf(stderr, "phototest-rotated-L: %d lines, words cover %.2f %% of their ink\n", r.n_lines, 100 * cover);
    assert_true(cover > 0.99);
    ppocr_result_free(&r);
    ppocr_image_free(&img);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sample_words),
        cmocka_unit_test(test_turned_page_words),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
