/* Word boxes from CTC steps (ocr/word_boxes.h), without the GPU: crops planned from known quads
 * (straight, rotated, perspective, tall and turned, read upside down), recogniser inputs with and
 * without padding, and the expected corners computed here from the quads' own edges. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/ctc.h"
#include "ocr/preprocess.h"
#include "ocr/word_boxes.h"

/* classes: 0 blank, 1 "a", 2 "b", 3 "中", 4 "国", 5 "，" (U+FF0C), 6 "é", 7 " " */
static const char *const dict[] = {"a", "b", "\xe4\xb8\xad", "\xe5\x9b\xbd", "\xef\xbc\x8c", "\xc3\xa9", " "};
enum { N_DICT = 7, BLANK = 0, A = 1, B = 2, ZH = 3, GUO = 4, COMMA = 5, E_ACUTE = 6, SPACE = 7 };

/* A run of steps [first, last] of one class. */
struct run {
    int cls, first, last;
};

/* Decodes T steps holding the runs (blank elsewhere), probability 0.5 + class / 20 + step / 1000. */
static struct ctc_text decode_runs(const struct run *runs, int n, int T)
{
    int32_t *cls = calloc((size_t)T, sizeof(*cls));
    float *prob = calloc((size_t)T, sizeof(*prob));
    assert_non_null(cls);
    assert_non_null(prob);
    for (int t = 0; t < T; t++)
        prob[t] = 0.9f;
    for (int i = 0; i < n; i++)
        for (int t = runs[i].first; t <= runs[i].last; t++) {
            cls[t] = runs[i].cls;
            prob[t] = 0.5f + runs[i].cls / 20.0f + t / 1000.0f;
        }
    struct ctc_text text;
    char err[256];
    if (ctc_decode_argmax(cls, prob, (size_t)T, dict, N_DICT, &text, err, sizeof(err)))
        fail_msg("%s", err);
    free(cls);
    free(prob);
    return text;
}

/* The geometry of a crop of quad q read at input width input_w (resized as the engine does). */
static struct word_geometry plan_geometry(const float q[4][2], int flip, int input_w)
{
    struct ocr_crop_plan plan;
    assert_int_equal(ocr_crop_plan_make(q, &plan), 0);
    struct word_geometry g = {
        .crop_w = plan.width, .crop_h = plan.height, .rotate = plan.rotate, .flip = flip, .input_w = input_w};
    memcpy(g.src_from_dst, plan.src_from_dst, sizeof(g.src_from_dst));
    double rw = plan.rotate ? plan.height : plan.width, rh = plan.rotate ? plan.width : plan.height;
    g.resized_w = (int)fmin(ceil(48.0 * rw / rh), input_w);
    return g;
}

static void lerp(const float a[2], const float b[2], double f, double out[2])
{
    out[0] = a[0] + f * (b[0] - a[0]);
    out[1] = a[1] + f * (b[1] - a[1]);
}

static void assert_near(const int got[2], const double want[2], double tol, const char *what)
{
    if (fabs(got[0] - want[0]) > tol || fabs(got[1] - want[1]) > tol)
        fail_msg("%s: got (%d, %d), want (%.2f, %.2f)", what, got[0], got[1], want[0], want[1]);
}

/* The expected corners of the word spanning fractions f0..f1 of an affine quad's reading length:
 * the reading starts at corner `start` of q (clockwise order) and runs toward corner start + 1, and
 * its bottom is the opposite edge, from corner start + 3 toward start + 2. */
static void expect_word(const int box[4][2], const float q[4][2], int start, double f0, double f1, double tol)
{
    const float *tl = q[start], *tr = q[(start + 1) % 4], *br = q[(start + 2) % 4], *bl = q[(start + 3) % 4];
    double want[4][2];
    lerp(tl, tr, f0, want[0]);
    lerp(tl, tr, f1, want[1]);
    lerp(bl, br, f1, want[2]);
    lerp(bl, br, f0, want[3]);
    const char *names[4] = {"top-left", "top-right", "bottom-right", "bottom-left"};
    for (int k = 0; k < 4; k++)
        assert_near(box[k], want[k], tol, names[k]);
}

static struct ppocr_word *make_words(const struct ctc_text *t, const struct word_geometry *g, int want_n)
{
    struct ppocr_word *w;
    int n;
    assert_int_equal(ocr_words_make(t, g, &w, &n), 0);
    assert_int_equal(n, want_n);
    return w;
}

static void free_words(struct ppocr_word *w, int n)
{
    for (int i = 0; i < n; i++)
        free(w[i].text);
    free(w);
}

/* A straight 400 x 30 box read at 640 (no padding) in 80 steps: a step is 5 source pixels. */
static void test_straight_line(void **state)
{
    (void)state;
    const float q[4][2] = {{100, 50}, {500, 50}, {500, 80}, {100, 80}};
    struct word_geometry g = plan_geometry(q, 0, 640);
    assert_int_equal(g.resized_w, 640);
    const struct run runs[] = {{A, 10, 11}, {B, 12, 13}, {SPACE, 16, 17}, {A, 20, 22}, {SPACE, 26, 26}, {B, 40, 40}};
    struct ctc_text t = decode_runs(runs, 6, 80);
    assert_string_equal(t.text, "ab a b");
    struct ppocr_word *w = make_words(&t, &g, 3);
    assert_string_equal(w[0].text, "ab");
    assert_string_equal(w[1].text, "a");
    assert_string_equal(w[2].text, "b");
    /* the word's steps, reaching a little before and after */
    const double before = OCR_WORD_REACH_BEFORE, after = OCR_WORD_REACH_AFTER;
    const double spans[3][2] = {{10 - before, 14 + after}, {20 - before, 23 + after}, {40 - before, 41 + after}};
    for (int i = 0; i < 3; i++) {
        double want[4][2] = {{100 + 5 * spans[i][0], 50},
                             {100 + 5 * spans[i][1], 50},
                             {100 + 5 * spans[i][1], 80},
                             {100 + 5 * spans[i][0], 80}};
        for (int k = 0; k < 4; k++)
            assert_near(w[i].box[k], want[k], 0.51, w[i].text);
    }
    /* a word's score is the mean probability of its characters' first steps */
    assert_true(w[0].score == (t.chars[0].prob + t.chars[1].prob) / 2.0f);
    assert_true(w[1].score == t.chars[3].prob);
    free_words(w, 3);
    ctc_text_free(&t);
}

/* Words close together meet in the middle of the gap between their steps instead of overlapping;
 * the first and last stop at the crop's ends. */
static void test_close_words_meet_in_the_gap(void **state)
{
    (void)state;
    const float q[4][2] = {{0, 0}, {400, 0}, {400, 30}, {0, 30}};
    struct word_geometry g = plan_geometry(q, 0, 640);
    const struct run runs[] = {{A, 0, 1}, {SPACE, 2, 2}, {B, 3, 4}, {A, 79, 79}};
    struct ctc_text t = decode_runs(runs, 4, 80);
    assert_string_equal(t.text, "a ba");
    struct ppocr_word *w = make_words(&t, &g, 2);
    assert_int_equal(w[0].box[0][0], 0);
    /* halfway between step 2 (the end of "a") and step 3, 5 source pixels a step */
    assert_in_range(w[0].box[1][0], 12, 13);
    assert_in_range(w[1].box[0][0], 12, 13);
    assert_int_equal(w[1].box[1][0], 400);
    free_words(w, 2);
    ctc_text_free(&t);
}

/* A 200 x 40 box fills 240 of a 320-wide input: steps past column 240 are padding. */
static void test_padding_is_not_the_crop(void **state)
{
    (void)state;
    const float q[4][2] = {{10, 20}, {210, 20}, {210, 60}, {10, 60}};
    struct word_geometry g = plan_geometry(q, 0, 320);
    assert_int_equal(g.resized_w, 240);
    const struct run runs[] = {{A, 5, 8}, {SPACE, 12, 12}, {B, 27, 31}};
    struct ctc_text t = decode_runs(runs, 3, 40);
    struct ppocr_word *w = make_words(&t, &g, 2);
    const double px = 8.0 * 200 / 240; /* source pixels per step */
    double want0[2] = {10 + px * (5 - OCR_WORD_REACH_BEFORE), 20},
           want1[2] = {10 + px * (9 + OCR_WORD_REACH_AFTER), 20};
    assert_near(w[0].box[0], want0, 0.51, "first word starts");
    assert_near(w[0].box[1], want1, 0.51, "first word ends");
    double want2[2] = {10 + px * (27 - OCR_WORD_REACH_BEFORE), 20}, want3[2] = {210, 20};
    assert_near(w[1].box[0], want2, 0.51, "second word starts");
    assert_near(w[1].box[1], want3, 0.51, "a word running into the padding ends with the crop");
    free_words(w, 2);
    ctc_text_free(&t);
}

/* A quad turned 30 degrees: the words lie along its top and bottom edges, at the fraction of the
 * reading length their steps cover. */
static void test_rotated_quad(void **state)
{
    (void)state;
    const double c = cos(3.14159265358979 / 6), s = sin(3.14159265358979 / 6), W = 300, H = 40;
    const float o[2] = {120, 80};
    const float q[4][2] = {{o[0], o[1]},
                           {(float)(o[0] + W * c), (float)(o[1] + W * s)},
                           {(float)(o[0] + W * c - H * s), (float)(o[1] + W * s + H * c)},
                           {(float)(o[0] - H * s), (float)(o[1] + H * c)}};
    const int input_w = 384, T = 48;
    struct word_geometry g = plan_geometry(q, 0, input_w);
    assert_int_equal(g.rotate, 0);
    const struct run runs[] = {{A, 6, 9}, {SPACE, 12, 13}, {B, 20, 21}, {E_ACUTE, 22, 24}};
    struct ctc_text t = decode_runs(runs, 4, T);
    struct ppocr_word *w = make_words(&t, &g, 2);
    assert_string_equal(w[1].text, "b\xc3\xa9");
    /* crop pixels per step, over the crop's width: the fraction of the quad */
    const double per_step = (double)input_w / T / g.resized_w;
    expect_word(w[0].box, q, 0, (6 - OCR_WORD_REACH_BEFORE) * per_step, (10 + OCR_WORD_REACH_AFTER) * per_step, 1.0);
    expect_word(w[1].box, q, 0, (20 - OCR_WORD_REACH_BEFORE) * per_step, (25 + OCR_WORD_REACH_AFTER) * per_step, 1.0);
    free_words(w, 2);
    ctc_text_free(&t);
}

/* A tall box is turned counter-clockwise before reading: the text runs down the box, the top of
 * the reading is the box's right edge. Read turned over as well, it runs up from the bottom-left. */
static void test_tall_box_turned_and_flipped(void **state)
{
    (void)state;
    const float q[4][2] = {{50, 100}, {90, 100}, {90, 400}, {50, 400}};
    const int input_w = 384, T = 48;
    const struct run runs[] = {{ZH, 10, 11}, {GUO, 14, 15}, {SPACE, 18, 18}, {A, 22, 25}};
    struct ctc_text t = decode_runs(runs, 4, T);
    for (int flip = 0; flip < 2; flip++) {
        struct word_geometry g = plan_geometry(q, flip, input_w);
        assert_int_equal(g.rotate, 1);
        assert_int_equal(g.resized_w, 360); /* 300 long, 40 high */
        struct ppocr_word *w = make_words(&t, &g, 3);
        const double per_step = (double)input_w / T / g.resized_w, pitch = 4 * per_step;
        /* not flipped: the reading starts at the top-right corner (1); flipped, at the bottom-left (3) */
        const int start = flip ? 3 : 1;
        expect_word(w[0].box, q, start, 11 * per_step - pitch / 2, 11 * per_step + pitch / 2, 1.0);
        expect_word(w[1].box, q, start, 15 * per_step - pitch / 2, 15 * per_step + pitch / 2, 1.0);
        expect_word(w[2].box, q, start, (22 - OCR_WORD_REACH_BEFORE) * per_step, (26 + OCR_WORD_REACH_AFTER) * per_step,
                    1.0);
        free_words(w, 3);
    }
    ctc_text_free(&t);
}

/* A straight line read upside down: the reading starts at the bottom-right corner. */
static void test_flipped_line(void **state)
{
    (void)state;
    const float q[4][2] = {{20, 10}, {420, 10}, {420, 40}, {20, 40}};
    struct word_geometry g = plan_geometry(q, 1, 640);
    const struct run runs[] = {{A, 30, 33}};
    struct ctc_text t = decode_runs(runs, 1, 80);
    struct ppocr_word *w = make_words(&t, &g, 1);
    expect_word(w[0].box, q, 2, (30 - OCR_WORD_REACH_BEFORE) / 80.0, (34 + OCR_WORD_REACH_AFTER) / 80.0, 0.51);
    assert_true(w[0].box[0][0] > w[0].box[1][0]); /* read right to left in the image */
    free_words(w, 1);
    ctc_text_free(&t);
}

/* Under perspective the fractions are not linear, but a word spanning the whole crop is the quad
 * and every word's corners stay on the quad's top and bottom edges. */
static void test_perspective_quad(void **state)
{
    (void)state;
    const float q[4][2] = {{100, 100}, {500, 60}, {520, 160}, {90, 130}};
    struct word_geometry g = plan_geometry(q, 0, 200); /* 431 x 101: the input is all crop */
    assert_int_equal(g.resized_w, 200);
    const int T = 25;
    const struct run runs[] = {{A, 0, 3}, {B, 21, 24}, {SPACE, 10, 10}, {B, 11, 14}};
    /* a line of one word from the first step to the last */
    struct ctc_text t = decode_runs(runs, 2, T);
    struct ppocr_word *w = make_words(&t, &g, 1);
    /* the crop is (int) its float size, so its far corners may fall a pixel short of the quad's */
    expect_word(w[0].box, q, 0, 0, 1, 1.5);
    free_words(w, 1);
    ctc_text_free(&t);
    t = decode_runs(runs + 2, 2, T);
    w = make_words(&t, &g, 1);
    double along[4];
    for (int k = 0; k < 4; k++) {
        const float *a = k < 2 ? q[0] : q[3], *b = k < 2 ? q[1] : q[2];
        double ex = b[0] - a[0], ey = b[1] - a[1];
        double dist = fabs((w[0].box[k][0] - a[0]) * ey - (w[0].box[k][1] - a[1]) * ex) / hypot(ex, ey);
        if (dist > 1.0)
            fail_msg("corner %d is %.2f px off the quad's edge", k, dist);
        along[k] = ((w[0].box[k][0] - a[0]) * ex + (w[0].box[k][1] - a[1]) * ey) / (ex * ex + ey * ey);
    }
    /* inside the edges, in reading order; foreshortened toward the quad's short (far) side */
    assert_true(0 < along[0] && along[0] < along[1] && along[1] < 1);
    assert_true(0 < along[3] && along[3] < along[2] && along[2] < 1);
    assert_true(along[1] < (15 + OCR_WORD_REACH_AFTER) / T);
    free_words(w, 1);
    ctc_text_free(&t);
}

/* Spaces split words; a CJK character is a word of its own, sized by the line's character pitch
 * (from neighbouring CJK characters, or the line's height without any). */
static void test_cjk_characters_are_words(void **state)
{
    (void)state;
    const float q[4][2] = {{0, 0}, {600, 0}, {600, 40}, {0, 40}};
    struct word_geometry g = plan_geometry(q, 0, 720); /* a step: 600 / 90 source pixels */
    const struct run runs[] = {{ZH, 10, 11},    {GUO, 16, 17},   {A, 20, 21},       {B, 22, 22},
                               {COMMA, 28, 28}, {SPACE, 32, 32}, {E_ACUTE, 36, 37}, {ZH, 40, 41}};
    struct ctc_text t = decode_runs(runs, 8, 90);
    assert_string_equal(t.text, "\xe4\xb8\xad\xe5\x9b\xbd"
                                "ab\xef\xbc\x8c \xc3\xa9\xe4\xb8\xad");
    struct ppocr_word *w = make_words(&t, &g, 6);
    const char *want[6] = {"\xe4\xb8\xad", "\xe5\x9b\xbd", "ab", "\xef\xbc\x8c", "\xc3\xa9", "\xe4\xb8\xad"};
    for (int i = 0; i < 6; i++)
        assert_string_equal(w[i].text, want[i]);
    /* 中 and 国 follow each other 6 steps apart, the only CJK pair: that is the pitch */
    const double px = 600.0 / 90, pitch = 6 * px;
    double c0 = 11 * px, c1 = 17 * px;
    assert_in_range(w[0].box[0][0], lround(c0 - pitch / 2) - 1, lround(c0 - pitch / 2) + 1);
    assert_in_range(w[0].box[1][0], lround(c0 + pitch / 2) - 1, lround(c0 + pitch / 2) + 1);
    assert_in_range(w[1].box[0][0], lround(c1 - pitch / 2) - 1, lround(c1 - pitch / 2) + 1);
    /* 国's box reaches halfway to "ab"'s steps, no further, nor does "ab"'s */
    long mid = lround(0.5 * (18 + 20) * px), ab = lround(fmax(19, 20 - OCR_WORD_REACH_BEFORE) * px);
    assert_in_range(w[1].box[1][0], mid - 1, mid + 1);
    assert_in_range(w[2].box[0][0], ab - 1, ab + 1);
    ctc_text_free(&t);
    free_words(w, 6);

    /* one CJK character alone: as wide as the line is high */
    const struct run one[] = {{ZH, 40, 41}};
    t = decode_runs(one, 1, 90);
    w = make_words(&t, &g, 1);
    assert_in_range(w[0].box[0][0], lround(41 * px - 20) - 1, lround(41 * px - 20) + 1);
    assert_in_range(w[0].box[1][0], lround(41 * px + 20) - 1, lround(41 * px + 20) + 1);
    free_words(w, 1);
    ctc_text_free(&t);

    assert_true(ocr_word_is_cjk(0x4E2D));  /* 中 */
    assert_true(ocr_word_is_cjk(0x3042));  /* あ */
    assert_true(ocr_word_is_cjk(0x30A2));  /* ア */
    assert_true(ocr_word_is_cjk(0xD55C));  /* 한 */
    assert_true(ocr_word_is_cjk(0xFF21));  /* Ａ */
    assert_true(ocr_word_is_cjk(0x20000)); /* 𠀀 */
    assert_false(ocr_word_is_cjk('A'));
    assert_false(ocr_word_is_cjk(0xE9));   /* é */
    assert_false(ocr_word_is_cjk(0x0416)); /* Ж */
}

/* Nothing kept, or only spaces: no words. */
static void test_no_words(void **state)
{
    (void)state;
    const float q[4][2] = {{0, 0}, {400, 0}, {400, 30}, {0, 30}};
    struct word_geometry g = plan_geometry(q, 0, 640);
    struct ctc_text t = decode_runs(NULL, 0, 80);
    struct ppocr_word dummy, *w = &dummy;
    int n = -1;
    assert_int_equal(ocr_words_make(&t, &g, &w, &n), 0);
    assert_int_equal(n, 0);
    assert_null(w);
    ctc_text_free(&t);
    const struct run spaces[] = {{SPACE, 3, 4}, {SPACE, 9, 9}};
    t = decode_runs(spaces, 2, 80);
    assert_int_equal(ocr_words_make(&t, &g, &w, &n), 0);
    assert_int_equal(n, 0);
    assert_null(w);
    ctc_text_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_straight_line),
        cmocka_unit_test(test_close_words_meet_in_the_gap),
        cmocka_unit_test(test_padding_is_not_the_crop),
        cmocka_unit_test(test_rotated_quad),
        cmocka_unit_test(test_tall_box_turned_and_flipped),
        cmocka_unit_test(test_flipped_line),
        cmocka_unit_test(test_perspective_quad),
        cmocka_unit_test(test_cjk_characters_are_words),
        cmocka_unit_test(test_no_words),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
