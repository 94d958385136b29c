/* The golden check's comparison on hand-made results (no engine): goldens written by the real
 * --format json writer and read back match their result; one changed character, a box one pixel
 * past the limit, a score past its limit each give one difference that names the line; a box at
 * the limit passes; a missing and an extra line give one difference each and leave the lines
 * after them paired; lines near --drop-score may come or go; --check-edits; the image size;
 * lookup by file and page; malformed goldens give their line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/check.h"
#include "cli/golden.h"
#include "cli/output.h"
#include "ppocr.h"

#define MAX_LINES 16

struct spec {
    const char *text;
    float score;
    int x, y, w, h;
};

/* A result of a 640x480 image whose lines are axis-aligned boxes. */
struct page {
    struct ppocr_result result;
    struct ppocr_line lines[MAX_LINES];
};

static void make_page(struct page *p, const struct spec *lines, int n)
{
    memset(p, 0, sizeof(*p));
    p->result.width = 640;
    p->result.height = 480;
    p->result.n_lines = n;
    p->result.lines = p->lines;
    for (int i = 0; i < n; i++) {
        struct ppocr_line *l = &p->lines[i];
        const struct spec *s = &lines[i];
        l->text = (char *)s->text;
        l->score = s->score;
        const int box[4][2] = {{s->x, s->y}, {s->x + s->w, s->y}, {s->x + s->w, s->y + s->h}, {s->x, s->y + s->h}};
        memcpy(l->box, box, sizeof(box));
    }
}

static const struct spec sample[] = {
    {"This is a lot of 12 point text", 0.96282f, 36, 91, 543, 27},
    {"ocr code and see if it works", 0.98856f, 35, 124, 581, 28},
    {"of file format.", 0.98781f, 36, 160, 188, 27},
    {"The quick brown dog jumped over the", 0.97f, 36, 200, 560, 28},
    {"lazy fox. The quick brown dog jumped", 0.95f, 36, 236, 560, 28},
    {"over the lazy fox.", 0.99f, 36, 272, 300, 28},
};
#define N_SAMPLE ((int)(sizeof(sample) / sizeof(sample[0])))

/* The golden of `lines` as --format json writes it, read back. */
static void make_golden(const struct spec *lines, int n, const char *file, struct cli_golden *g)
{
    struct page p;
    make_page(&p, lines, n);
    struct cli_args args;
    memset(&args, 0, sizeof(args));
    args.format = CLI_FORMAT_JSON;
    struct cli_buf json = {0};
    cli_format_result(&json, &args, file, 0, &p.result);
    assert_non_null(json.data);
    char err[256];
    int rc = cli_golden_parse(json.data, json.len, "golden.jsonl", g, err, sizeof(err));
    if (rc)
        fail_msg("%s", err);
    assert_int_equal(g->n, 1);
    cli_buf_free(&json);
}

static const struct cli_check_limits limits = {.box_px = 2, .score = 0.05, .text_edits = 0, .drop_score = 0.5};

/* Compares `ours` with the golden of `golden_lines`; the diff is left in *out (free it). */
static int diff_count(const struct spec *golden_lines, int n_golden, const struct spec *ours, int n_ours,
                      const struct cli_check_limits *lim, struct cli_buf *out, struct cli_check_stats *stats)
{
    struct cli_golden g;
    make_golden(golden_lines, n_golden, "sample.png", &g);
    struct page p;
    make_page(&p, ours, n_ours);
    memset(out, 0, sizeof(*out));
    int diffs = cli_check_page(out, "sample.png", &g.pages[0], &p.result, lim, stats);
    cli_golden_free(&g);
    return diffs;
}

static int count_lines(const struct cli_buf *b)
{
    int n = 0;
    for (size_t i = 0; i < b->len; i++)
        n += b->data[i] == '\n';
    return n;
}

static void expect_in(const struct cli_buf *b, const char *needle)
{
    if (!b->data || !strstr(b->data, needle))
        fail_msg("'%s' not in the diff: %s", needle, b->data ? b->data : "(empty)");
}

static void identical_matches(void **state)
{
    (void)state;
    struct cli_buf out;
    struct cli_check_stats st = {0};
    assert_int_equal(diff_count(sample, N_SAMPLE, sample, N_SAMPLE, &limits, &out, &st), 0);
    assert_int_equal(out.len, 0);
    assert_int_equal(st.matching, 1);
    assert_int_equal(st.differing, 0);
    /* exact limits: the written score (5 decimals) of an unrounded score is what the golden holds */
    const struct cli_check_limits exact = {.box_px = 0, .score = 0, .text_edits = 0, .drop_score = 0.5};
    struct spec unrounded[N_SAMPLE];
    memcpy(unrounded, sample, sizeof(unrounded));
    unrounded[0].score = 0.9628249f;
    assert_int_equal(diff_count(unrounded, N_SAMPLE, unrounded, N_SAMPLE, &exact, &out, NULL), 0);
    cli_buf_free(&out);
}

static void changed_character(void **state)
{
    (void)state;
    struct spec ours[N_SAMPLE];
    memcpy(ours, sample, sizeof(ours));
    ours[3].text = "The quick brown dig jumped over the";
    struct cli_buf out;
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE, &limits, &out, NULL), 1);
    assert_int_equal(count_lines(&out), 1);
    expect_in(&out, "sample.png: line 4: text \"The quick brown dig jumped over the\" != golden \"The quick brown dog "
                    "jumped over the\"");
    cli_buf_free(&out);

    /* one edit is within --check-edits 1, two are not */
    struct cli_check_limits one_edit = limits;
    one_edit.text_edits = 1;
    struct cli_check_stats st = {0};
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE, &one_edit, &out, &st), 0);
    assert_int_equal(st.text_within, 1);
    cli_buf_free(&out);
    ours[3].text = "The quick brown dig jumpod over the";
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE, &one_edit, &out, NULL), 1);
    expect_in(&out, "over 1 edits");
    cli_buf_free(&out);
    ours[3].text = "The quick brown dög jumped over the"; /* one code point of two bytes: one edit */
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE, &one_edit, &out, NULL), 0);
    cli_buf_free(&out);
}

static void box_limit(void **state)
{
    (void)state;
    struct spec ours[N_SAMPLE];
    memcpy(ours, sample, sizeof(ours));
    struct cli_buf out;
    ours[2].w += 2; /* corners 2 and 3 two pixels right: at the limit */
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE, &limits, &out, NULL), 0);
    cli_buf_free(&out);
    ours[2].w += 1; /* three */
    struct cli_check_stats st = {0};
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE, &limits, &out, &st), 1);
    assert_int_equal(count_lines(&out), 1);
    expect_in(&out, "sample.png: line 3: box corner 2 at 227,160 != golden 224,160: off by 3 px (limit 2)");
    assert_true(st.max_corner_px == 3);
    cli_buf_free(&out);
    ours[2] = sample[2];
    ours[2].y -= 3; /* every corner up: the first named */
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE, &limits, &out, NULL), 1);
    expect_in(&out, "line 3: box corner 1 at 36,157 != golden 36,160: off by 3 px");
    cli_buf_free(&out);
}

static void score_limit(void **state)
{
    (void)state;
    struct spec ours[N_SAMPLE];
    memcpy(ours, sample, sizeof(ours));
    ours[1].score -= 0.05f;
    struct cli_buf out;
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE, &limits, &out, NULL), 0);
    cli_buf_free(&out);
    ours[1].score -= 0.001f;
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE, &limits, &out, NULL), 1);
    expect_in(&out, "sample.png: line 2: score 0.93756 != golden 0.98856: off by 0.05100 (limit 0.05)");
    cli_buf_free(&out);
}

static void missing_line(void **state)
{
    (void)state;
    struct spec ours[N_SAMPLE - 1];
    for (int i = 0, k = 0; i < N_SAMPLE; i++)
        if (i != 2)
            ours[k++] = sample[i];
    struct cli_buf out;
    struct cli_check_stats st = {0};
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE - 1, &limits, &out, &st), 1);
    assert_int_equal(count_lines(&out), 1);
    expect_in(&out, "sample.png: line 3 missing: golden \"of file format.\" (score 0.98781, box 36,160 224,160 224,187 "
                    "36,187)");
    assert_int_equal(st.missing, 1);
    assert_int_equal(st.lines_differing, 0);
    cli_buf_free(&out);

    /* the first and the last line missing */
    assert_int_equal(diff_count(sample, N_SAMPLE, sample + 1, N_SAMPLE - 1, &limits, &out, NULL), 1);
    expect_in(&out, "line 1 missing");
    cli_buf_free(&out);
    assert_int_equal(diff_count(sample, N_SAMPLE, sample, N_SAMPLE - 1, &limits, &out, NULL), 1);
    expect_in(&out, "line 6 missing");
    cli_buf_free(&out);
    /* a missing line beside a changed one: each said once */
    ours[2].text = "The quick brown dog jumped over th";
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE - 1, &limits, &out, NULL), 2);
    expect_in(&out, "line 3 missing");
    expect_in(&out, "line 4 (line 3 here): text \"The quick brown dog jumped over th\"");
    cli_buf_free(&out);
}

static void extra_line(void **state)
{
    (void)state;
    struct spec ours[N_SAMPLE + 1];
    for (int i = 0, k = 0; i < N_SAMPLE; i++) {
        ours[k++] = sample[i];
        if (i == 3)
            ours[k++] = (struct spec){"a stray line", 0.91f, 36, 400, 200, 28};
    }
    struct cli_buf out;
    struct cli_check_stats st = {0};
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE + 1, &limits, &out, &st), 1);
    assert_int_equal(count_lines(&out), 1);
    expect_in(&out, "sample.png: extra line \"a stray line\" (line 5 here, score 0.91000, box 36,400 236,400 236,428 "
                    "36,428)");
    assert_int_equal(st.extra, 1);
    cli_buf_free(&out);

    /* scoring below --drop-score + --check-score: another device may have dropped it */
    ours[4].score = 0.54f;
    memset(&st, 0, sizeof(st));
    assert_int_equal(diff_count(sample, N_SAMPLE, ours, N_SAMPLE + 1, &limits, &out, &st), 0);
    assert_int_equal(st.borderline, 1);
    cli_buf_free(&out);
    /* and a golden line as near it may be missing */
    assert_int_equal(diff_count(ours, N_SAMPLE + 1, sample, N_SAMPLE, &limits, &out, NULL), 0);
    cli_buf_free(&out);
}

static void nothing_alike(void **state)
{
    (void)state;
    struct spec moved[N_SAMPLE];
    memcpy(moved, sample, sizeof(moved));
    for (int i = 0; i < N_SAMPLE; i++)
        moved[i].x += 600;
    struct cli_buf out;
    struct cli_check_stats st = {0};
    assert_int_equal(diff_count(sample, N_SAMPLE, moved, N_SAMPLE, &limits, &out, &st), 2 * N_SAMPLE);
    assert_int_equal(st.missing, N_SAMPLE);
    assert_int_equal(st.extra, N_SAMPLE);
    cli_buf_free(&out);
    /* nothing read where the golden has lines, and the reverse */
    assert_int_equal(diff_count(sample, N_SAMPLE, NULL, 0, &limits, &out, NULL), N_SAMPLE);
    cli_buf_free(&out);
    assert_int_equal(diff_count(NULL, 0, sample, N_SAMPLE, &limits, &out, NULL), N_SAMPLE);
    cli_buf_free(&out);
}

static void image_size(void **state)
{
    (void)state;
    struct cli_golden g;
    make_golden(sample, N_SAMPLE, "sample.png", &g);
    struct page p;
    make_page(&p, sample, N_SAMPLE);
    p.result.width = 320;
    struct cli_buf out = {0};
    assert_int_equal(cli_check_page(&out, "sample.png", &g.pages[0], &p.result, &limits, NULL), 1);
    expect_in(&out, "sample.png: image 320x480 != golden 640x480");
    cli_buf_free(&out);
    cli_golden_free(&g);
}

static void parse_ok(const char *text, struct cli_golden *g)
{
    char err[256];
    if (cli_golden_parse(text, strlen(text), "golden.jsonl", g, err, sizeof(err)))
        fail_msg("%s", err);
}

static void expect_parse_error(const char *text, const char *want)
{
    struct cli_golden g;
    char err[256] = "";
    assert_int_equal(cli_golden_parse(text, strlen(text), "golden.jsonl", &g, err, sizeof(err)), -1);
    assert_int_equal(g.n, 0);
    if (!strstr(err, want))
        fail_msg("'%s' not in '%s'", want, err);
    assert_null(strchr(err, '\n'));
}

static void lookup(void **state)
{
    (void)state;
    struct cli_golden g;
    parse_ok("{\"file\":\"/ci/data/a.png\",\"lines\":[]}\n"
             "{\"file\":\"doc.pdf\",\"page\":2,\"lines\":[]}\n"
             "{\"file\":\"doc.pdf\",\"page\":1,\"lines\":[]}\n"
             "\n"
             "{\"file\":\"x/b.png\",\"lines\":[]}\n{\"file\":\"y/b.png\",\"lines\":[]}\n",
             &g);
    assert_int_equal(g.n, 5);
    int i = cli_golden_find(&g, "doc.pdf", 2);
    assert_true(i >= 0);
    assert_int_equal(g.pages[i].page, 2);
    assert_int_equal(g.pages[i].source_line, 2);
    assert_int_equal(g.pages[i].width, -1);
    assert_int_equal(cli_golden_find(&g, "doc.pdf", 3), -1);
    assert_int_equal(cli_golden_find(&g, "doc.pdf", 0), -1);
    i = cli_golden_find(&g, "data/a.png", 0); /* by path suffix, either way */
    assert_true(i >= 0);
    assert_string_equal(g.pages[i].file, "/ci/data/a.png");
    assert_int_equal(cli_golden_find(&g, "/home/me/ci/data/a.png", 0), i);
    assert_int_equal(cli_golden_find(&g, "ta/a.png", 0), -1); /* not at a '/' */
    assert_int_equal(cli_golden_find(&g, "b.png", 0), -2);    /* two match */
    assert_true(cli_golden_find(&g, "x/b.png", 0) >= 0);
    cli_golden_free(&g);
}

static void malformed(void **state)
{
    (void)state;
    const char *good = "{\"file\":\"a.png\",\"width\":10,\"height\":10,\"lines\":[]}\n";
    char text[1024];
    snprintf(text, sizeof(text), "%s%s{\"file\":\"c.png\",\"lines\":[{\"text\":\"x\",\"score\":0.9}]}\n", good,
             "{\"file\":\"b.png\",\"lines\":[]}\n");
    expect_parse_error(text, "golden.jsonl: line 3: \"lines\" item 1 has no \"box\" of four [x,y] corners");
    snprintf(text, sizeof(text), "%s\n{\"file\":\"b.png\",\"lines\":[}\n", good);
    expect_parse_error(text, "golden.jsonl: line 3, column ");
    expect_parse_error("file\tline\tscore\n", "golden.jsonl: line 1, column "); /* TSV, not JSON */
    expect_parse_error("[1,2]\n", "golden.jsonl: line 1: not an object");
    expect_parse_error("{\"lines\":[]}", "line 1: no \"file\" string");
    expect_parse_error("{\"file\":\"a\"}", "line 1: no \"lines\" array");
    expect_parse_error("{\"file\":\"a\",\"page\":0,\"lines\":[]}", "line 1: \"page\" is not a page number");
    expect_parse_error("{\"file\":\"a\",\"width\":1.5,\"lines\":[]}", "line 1: \"width\" is not a whole number");
    expect_parse_error("{\"file\":\"a\",\"lines\":[{\"text\":1,\"score\":1,\"box\":[[0,0],[1,0],[1,1],[0,1]]}]}",
                       "no \"text\" string");
    expect_parse_error("{\"file\":\"a\",\"lines\":[{\"text\":\"t\",\"score\":1,\"box\":[[0,0],[1,0],[1,1]]}]}",
                       "no \"box\" of four");
    snprintf(text, sizeof(text), "%s\n\n%s", good, good);
    expect_parse_error(text, "golden.jsonl: line 4: a second entry for the same image (the first at line 1)");
    /* an empty golden is a golden of no images */
    struct cli_golden g;
    parse_ok("", &g);
    assert_int_equal(g.n, 0);
    cli_golden_free(&g);
}

static void missing_file(void **state)
{
    (void)state;
    struct cli_golden g;
    char err[256];
    assert_int_equal(cli_golden_load("/nonexistent/golden.jsonl", &g, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "/nonexistent/golden.jsonl: No such file or directory"));
    assert_int_equal(cli_golden_load("/", &g, err, sizeof(err)), -1); /* a folder */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(identical_matches), cmocka_unit_test(changed_character), cmocka_unit_test(box_limit),
        cmocka_unit_test(score_limit),       cmocka_unit_test(missing_line),      cmocka_unit_test(extra_line),
        cmocka_unit_test(nothing_alike),     cmocka_unit_test(image_size),        cmocka_unit_test(lookup),
        cmocka_unit_test(malformed),         cmocka_unit_test(missing_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
