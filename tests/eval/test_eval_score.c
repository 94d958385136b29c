/* The evaluator's library (tools/eval): UTF-8 and Levenshtein, the corpus normalisation, the
 * JSON reader, ground-truth matching, golden comparison, and reading the committed corpus
 * manifest and goldens. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "cli/json.h"
#include "eval/manifest.h"
#include "eval/results.h"
#include "eval/score.h"
#include "eval/text.h"
#include "support/test_env.h"

/* ------------------------------------------------------------------------ text */

static size_t distance(const char *a, const char *b)
{
    uint32_t *ca, *cb;
    size_t na = text_utf8_decode(a, strlen(a), &ca), nb = text_utf8_decode(b, strlen(b), &cb);
    size_t d = text_levenshtein(ca, na, cb, nb);
    free(ca);
    free(cb);
    return d;
}

/* Distance after normalising both sides with the same rules. */
static size_t norm_distance(const char *a, const char *b, int remove_spaces, int fold_case)
{
    text_norm tn = {remove_spaces, fold_case};
    uint32_t *ca, *cb;
    size_t na = text_normalized_utf8(a, &tn, &ca), nb = text_normalized_utf8(b, &tn, &cb);
    size_t d = text_levenshtein(ca, na, cb, nb);
    free(ca);
    free(cb);
    return d;
}

static void test_utf8_decode(void **state)
{
    (void)state;
    uint32_t *cp;
    const char *s = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80"; /* a é 中 😀 */
    size_t n = text_utf8_decode(s, strlen(s), &cp);
    assert_int_equal(n, 4);
    assert_int_equal(cp[0], 'a');
    assert_int_equal(cp[1], 0xE9);
    assert_int_equal(cp[2], 0x4E2D);
    assert_int_equal(cp[3], 0x1F600);
    free(cp);
    /* a stray continuation byte, a truncated 3-byte sequence and an overlong '/' are errors */
    const char *bad = "\x80x\xE4\xB8y\xC0\xAF";
    n = text_utf8_decode(bad, strlen(bad), &cp);
    assert_int_equal(n, 7);
    assert_int_equal(cp[0], 0xFFFD);
    assert_int_equal(cp[1], 'x');
    assert_int_equal(cp[2], 0xFFFD);
    assert_int_equal(cp[3], 0xFFFD);
    assert_int_equal(cp[4], 'y');
    assert_int_equal(cp[5], 0xFFFD);
    assert_int_equal(cp[6], 0xFFFD);
    free(cp);
}

static void test_levenshtein(void **state)
{
    (void)state;
    assert_int_equal(distance("kitten", "sitting"), 3);
    assert_int_equal(distance("", "abc"), 3);
    assert_int_equal(distance("abc", ""), 3);
    assert_int_equal(distance("flaw", "lawn"), 2);
    /* code points, not bytes: one CJK character is one edit */
    assert_int_equal(distance("汉阳鹦鹉家居", "汉阳鹦家居"), 1);
    assert_int_equal(distance("实力活力", "实方活力"), 1);
    assert_int_equal(distance("西湾监管", "西湾"), 2);
    assert_int_equal(distance("😀a", "a"), 1);
}

static void test_normalisation(void **state)
{
    (void)state;
    /* full-width punctuation folds to ASCII */
    assert_int_equal(norm_distance("分开洗涤，不宜", "分开洗涤,不宜", 1, 0), 0);
    assert_int_equal(norm_distance("电话：159", "电话:159", 1, 0), 0);
    assert_int_equal(norm_distance("ＡＢＣ１２", "ABC12", 0, 0), 0);
    /* ℃ and °℃ read as °C */
    assert_int_equal(norm_distance("温度30℃", "温度30°C", 1, 0), 0);
    assert_int_equal(norm_distance("温度30°℃", "温度30°C", 1, 0), 0);
    assert_int_equal(norm_distance("温度30C", "温度30°C", 1, 0), 1);
    /* arrows are dropped */
    assert_int_equal(norm_distance("58.9↓", "58.9", 1, 0), 0);
    /* whitespace: removed, or collapsed and trimmed */
    assert_int_equal(norm_distance("洗 涤　说明", "洗涤说明", 1, 0), 0);
    assert_int_equal(norm_distance("  Hello \t  Google ", "Hello Google", 0, 0), 0);
    assert_int_equal(norm_distance("HelloGoogle", "Hello Google", 0, 0), 1);
    /* case folding only on request */
    assert_int_equal(norm_distance("DAVIDSON", "Davidson", 0, 1), 0);
    assert_int_equal(norm_distance("DAVIDSON", "Davidson", 0, 0), 7);
    assert_int_equal(norm_distance("ÜBER", "über", 0, 1), 0);

    uint32_t *cp;
    assert_true(text_utf8_decode("abc 中", strlen("abc 中"), &cp) == 5);
    assert_true(text_has_cjk(cp, 5));
    assert_false(text_has_cjk(cp, 3));
    free(cp);
}

/* ------------------------------------------------------------------------ JSON */

static void test_json_values(void **state)
{
    (void)state;
    const char *doc = "{\"s\": \"q\\\"b\\\\s\\/n\\nt\\tr\\rb\\bf\\f\", \"n\": [-1.5e3, 0, 12.25, true, false, null],"
                      " \"u\": \"\\u00e9\\u4E2D\\ud83d\\ude00\", \"zero\": \"a\\u0000b\", \"e\": {}, \"a\": []}";
    json_value v;
    char err[200];
    assert_int_equal(json_parse(doc, strlen(doc), &v, err, sizeof err), 0);
    assert_int_equal(v.type, JSON_OBJECT);
    const json_value *s = json_get(&v, "s");
    assert_non_null(s);
    assert_string_equal(s->string, "q\"b\\s/n\nt\tr\rb\bf\f");
    const json_value *n = json_get(&v, "n");
    assert_int_equal(n->n_items, 6);
    assert_true(n->items[0].number == -1500.0);
    assert_true(n->items[2].number == 12.25);
    assert_int_equal(n->items[3].type, JSON_BOOL);
    assert_true(n->items[3].boolean);
    assert_false(n->items[4].boolean);
    assert_int_equal(n->items[5].type, JSON_NULL);
    /* \u escapes become UTF-8; a surrogate pair is one 4-byte character */
    assert_string_equal(json_get(&v, "u")->string, "\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x98\x80");
    const json_value *z = json_get(&v, "zero");
    assert_int_equal(z->string_len, 3);
    assert_memory_equal(z->string, "a\0b", 3);
    assert_int_equal(json_get(&v, "e")->type, JSON_OBJECT);
    assert_int_equal(json_get(&v, "a")->n_items, 0);
    assert_null(json_get(&v, "missing"));
    json_free(&v);
}

static void test_json_errors(void **state)
{
    (void)state;
    const char *bad[] = {
        "{\"a\": 1,}",        /* trailing comma */
        "[1 2]",              /* missing comma */
        "\"\\ud83d\"",        /* high surrogate alone */
        "\"\\ude00\"",        /* low surrogate alone */
        "\"\\ud83d\\u0041\"", /* high surrogate + non-surrogate */
        "\"\\x41\"",          /* unknown escape */
        "\"tab\tin string\"", /* raw control character */
        "\"open",             /* unterminated */
        "01",                 /* leading zero */
        "1.",                 /* empty fraction */
        "-",                  /* sign only */
        "tru",                /* bad literal */
        "{\"a\" 1}",          /* missing colon */
        "[1] 2",              /* two values where one is expected */
        "",                   /* nothing */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        json_value v;
        char err[200] = "";
        int rc = json_parse(bad[i], strlen(bad[i]), &v, err, sizeof err);
        if (rc != -1)
            fail_msg("accepted bad JSON #%zu: %s", i, bad[i]);
        assert_true(strncmp(err, "line ", 5) == 0);
        assert_int_equal(v.type, JSON_NULL);
    }
    /* nesting limit */
    char deep[300];
    memset(deep, '[', 200);
    memset(deep + 200, ']', 99);
    deep[299] = 0;
    json_value v;
    char err[200];
    assert_int_equal(json_parse(deep, strlen(deep), &v, err, sizeof err), -1);
}

static void test_json_lines_page(void **state)
{
    (void)state;
    const char *jsonl =
        "{\"file\": \"x/a.png\", \"width\": 640, \"height\": 480, \"lines\": [{\"text\": \"\\u4f60\\u597d\","
        " \"score\": 0.98, \"box\": [[1,2],[30,2],[30,12.5],[1,12]]}]}\n"
        "{\"file\": \"x/b.png\", \"width\": 10, \"height\": 10, \"lines\": []}\n";
    size_t pos = 0, len = strlen(jsonl);
    json_value v;
    char err[200];
    eval_page page;
    assert_int_equal(json_parse_value(jsonl, len, &pos, &v, err, sizeof err), 0);
    assert_int_equal(eval_page_from_json(&v, NULL, &page, err, sizeof err), 0);
    json_free(&v);
    assert_string_equal(page.file, "x/a.png");
    assert_int_equal(page.width, 640);
    assert_int_equal(page.height, 480);
    assert_int_equal(page.n_lines, 1);
    assert_string_equal(page.lines[0].text, "你好");
    assert_true(page.lines[0].score == 0.98);
    assert_true(page.lines[0].box[2][1] == 12.5);
    eval_page_free(&page);
    assert_int_equal(json_parse_value(jsonl, len, &pos, &v, err, sizeof err), 0);
    assert_int_equal(eval_page_from_json(&v, NULL, &page, err, sizeof err), 0);
    assert_string_equal(page.file, "x/b.png");
    assert_int_equal(page.n_lines, 0);
    eval_page_free(&page);
    json_free(&v);
    assert_int_equal(pos, len);

    /* a line without a 4-point box is an error, not a silent zero box */
    const char *badbox = "{\"file\": \"c\", \"lines\": [{\"text\": \"t\", \"score\": 1, \"box\": [[1,2],[3,4]]}]}";
    assert_int_equal(json_parse(badbox, strlen(badbox), &v, err, sizeof err), 0);
    assert_int_equal(eval_page_from_json(&v, NULL, &page, err, sizeof err), -1);
    json_free(&v);
}

/* ------------------------------------------------------------------------ ground truth */

static eval_gt_result score(const char *const *gt, size_t n_gt, const int *group, int fold_case, const char *const *out,
                            size_t n_out)
{
    eval_gt_opts opt;
    eval_gt_opts_default(&opt);
    eval_gt_result res;
    assert_int_equal(eval_score_gt(gt, n_gt, group, fold_case, out, n_out, &opt, &res), 0);
    return res;
}

static void test_gt_exact_and_reordered(void **state)
{
    (void)state;
    const char *gt[] = {"This is a lot of text", "of file format.", "lazy fox."};
    const char *out[] = {"lazy fox.", "of file format.", "This is a lot of text"}; /* upside-down order */
    eval_gt_result r = score(gt, 3, NULL, 0, out, 3);
    assert_int_equal(r.group[0].edits, 0);
    assert_int_equal(r.group[0].gt_chars, 21 + 15 + 9);
    assert_int_equal(r.group[0].recalled, 3);
    assert_string_equal(r.lines[0].matched, "This is a lot of text");
    eval_gt_result_free(&r);

    /* nothing read: every GT character is an error, nothing recalled */
    r = score(gt, 3, NULL, 0, NULL, 0);
    assert_int_equal(r.group[0].edits, 45);
    assert_int_equal(r.group[0].recalled, 0);
    assert_true(eval_cer(&r.group[0]) == 1.0);
    eval_gt_result_free(&r);
}

static void test_gt_split_noise_and_errors(void **state)
{
    (void)state;
    /* a line split in two by the detector is scored as one line */
    const char *gt[] = {"This is a lot of 12 point text to test the", "of file format."};
    const char *out[] = {"This is a lot of 12", "of file format.", "point text to test the", "口"};
    eval_gt_result r = score(gt, 2, NULL, 0, out, 4);
    assert_int_equal(r.lines[0].edits, 0);
    assert_string_equal(r.lines[0].matched, "This is a lot of 12 point text to test the");
    assert_true(r.lines[0].recalled);
    /* the lone "口" matches nothing: one insertion for the page, no GT line blamed */
    assert_int_equal(r.noise_lines, 1);
    assert_int_equal(r.group[0].edits, 1);
    assert_int_equal(r.group[0].recalled, 2);
    eval_gt_result_free(&r);

    /* a misread line costs its edits; beyond the 10% line threshold it is not recalled */
    const char *gt2[] = {"To simple burn running of goods lately."};
    const char *out2[] = {"To simple burn ruming of goods lately"};
    r = score(gt2, 1, NULL, 0, out2, 1);
    assert_int_equal(r.group[0].edits, 3); /* nn->m (2) and the full stop */
    assert_true(r.lines[0].recalled);      /* 3/39 <= 10% */
    eval_gt_result_free(&r);
    const char *out3[] = {"To sinple bum ruming of goods latcly"};
    r = score(gt2, 1, NULL, 0, out3, 1);
    assert_false(r.lines[0].recalled);
    eval_gt_result_free(&r);
}

static void test_gt_rules(void **state)
{
    (void)state;
    /* CJK lines ignore whitespace and width of punctuation; Latin lines keep single spaces */
    const char *gt[] = {"分开洗涤,不宜长时间浸泡,有", "Hello Google"};
    const char *out[] = {"分开 洗涤，不宜长时间浸泡，有", "HelloGoogle"};
    eval_gt_result r = score(gt, 2, NULL, 0, out, 2);
    assert_int_equal(r.lines[0].edits, 0);
    assert_int_equal(r.lines[1].edits, 1);
    eval_gt_result_free(&r);

    /* case folding when the manifest asks for it */
    const char *gt2[] = {"Davidson"};
    const char *out2[] = {"DAVIDSON"};
    r = score(gt2, 1, NULL, 1, out2, 1);
    assert_int_equal(r.group[0].edits, 0);
    eval_gt_result_free(&r);
    r = score(gt2, 1, NULL, 0, out2, 1);
    assert_int_equal(r.group[0].edits, 7);
    eval_gt_result_free(&r);

    /* repeated table items each need their own output line */
    const char *gt3[] = {"U/L", "U/L", "U/L"};
    const char *out3[] = {"U/L", "U/L"};
    r = score(gt3, 3, NULL, 0, out3, 2);
    assert_int_equal(r.group[0].recalled, 2);
    assert_int_equal(r.group[0].edits, 3);
    eval_gt_result_free(&r);

    /* groups: the separately scored lines do not count in the strict totals */
    const char *gt4[] = {"The quick fox", "über den Hund"};
    const char *out4[] = {"The quick fox", "uber den Hund"};
    int group[] = {0, 1};
    r = score(gt4, 2, group, 0, out4, 2);
    assert_int_equal(r.group[0].edits, 0);
    assert_int_equal(r.group[0].gt_lines, 1);
    assert_int_equal(r.group[1].edits, 1);
    assert_int_equal(r.group[1].gt_lines, 1);
    eval_gt_result_free(&r);
}

/* ------------------------------------------------------------------------ goldens */

static eval_line make_line(const char *text, double score, double x, double y, double w, double h)
{
    eval_line l;
    l.text = (char *)text;
    l.score = score;
    double pts[4][2] = {{x, y}, {x + w, y}, {x + w, y + h}, {x, y + h}};
    memcpy(l.box, pts, sizeof pts);
    return l;
}

static int golden_verdict(const eval_page *golden, const eval_page *ours, const eval_golden_opts *opt,
                          eval_golden_totals *t)
{
    memset(t, 0, sizeof *t);
    eval_golden_compare_page(golden, ours, opt, t, NULL);
    return eval_golden_pass(t, opt);
}

static void test_golden_boxes_and_scores(void **state)
{
    (void)state;
    eval_line g[3] = {make_line("first line", 0.98, 10, 10, 200, 30), make_line("second", 0.90, 10, 50, 120, 30),
                      make_line("第三行", 0.80, 10, 90, 90, 30)};
    eval_page golden = {"a.png", 300, 200, g, 3};
    eval_golden_opts opt;
    eval_golden_opts_default(&opt);
    eval_golden_totals t;

    /* identical, in another order: paired by box, not by index */
    eval_line o[3] = {g[2], g[0], g[1]};
    eval_page ours = {"/abs/a.png", 300, 200, o, 3};
    assert_true(golden_verdict(&golden, &ours, &opt, &t));
    assert_int_equal(t.paired, 3);
    assert_int_equal(t.text_equal, 3);

    /* one box shifted by 2 px passes, by 4 px fails (default tolerance 3 px) */
    o[1] = make_line("first line", 0.98, 12, 10, 200, 30);
    assert_true(golden_verdict(&golden, &ours, &opt, &t));
    assert_true(t.max_corner_px == 2.0);
    o[1] = make_line("first line", 0.98, 14, 10, 200, 30);
    assert_false(golden_verdict(&golden, &ours, &opt, &t));
    assert_int_equal(t.box_fail, 1);
    opt.box_px = 4.0; /* the threshold is an option */
    assert_true(golden_verdict(&golden, &ours, &opt, &t));
    eval_golden_opts_default(&opt);
    o[1] = g[0];

    /* score within 0.02 passes, 0.03 fails */
    o[2] = make_line("second", 0.915, 10, 50, 120, 30);
    assert_true(golden_verdict(&golden, &ours, &opt, &t));
    o[2] = make_line("second", 0.93, 10, 50, 120, 30);
    assert_false(golden_verdict(&golden, &ours, &opt, &t));
    assert_int_equal(t.score_fail, 1);
    o[2] = g[1];

    /* a text difference: 2/3 identical < 98%, and CER 1/18 > 1% */
    o[0] = make_line("第二行", 0.80, 10, 90, 90, 30);
    assert_false(golden_verdict(&golden, &ours, &opt, &t));
    assert_int_equal(t.text_equal, 2);
    assert_int_equal(t.edits, 1);
    assert_int_equal(t.golden_chars, 10 + 6 + 3);
    o[0] = g[2];

    /* a missing line fails on the line count; a missing page fails */
    ours.n_lines = 2;
    assert_false(golden_verdict(&golden, &ours, &opt, &t));
    assert_int_equal(t.count_mismatch_pages, 1);
    ours.n_lines = 3;
    assert_false(golden_verdict(&golden, NULL, &opt, &t));
    assert_int_equal(t.missing_pages, 1);
}

static void test_golden_text_ratio_over_pages(void **state)
{
    (void)state;
    /* 100 lines, one misread by one character out of 1000: 99% identical and CER 0.1% pass the
   * defaults; a stricter ratio fails. */
    enum { N = 100 };
    eval_line g[N], o[N];
    char texts[N][24];
    for (int i = 0; i < N; i++) {
        snprintf(texts[i], sizeof texts[i], "line %04d.", i); /* 10 characters */
        g[i] = make_line(texts[i], 0.9, 0, 40.0 * i, 300, 30);
        o[i] = g[i];
    }
    char misread[] = "line 00o7."; /* one substitution in "line 0007." */
    o[7].text = misread;
    eval_page golden = {"p.png", 300, 4000, g, N}, ours = {"p.png", 300, 4000, o, N};
    eval_golden_opts opt;
    eval_golden_opts_default(&opt);
    eval_golden_totals t;
    memset(&t, 0, sizeof t);
    size_t problems = eval_golden_compare_page(&golden, &ours, &opt, &t, NULL);
    assert_int_equal(problems, 1);
    assert_int_equal(t.text_equal, 99);
    assert_int_equal(t.edits, 1);
    assert_true(eval_golden_pass(&t, &opt));
    opt.min_text_ratio = 0.995;
    assert_false(eval_golden_pass(&t, &opt));
}

static void test_box_iou(void **state)
{
    (void)state;
    eval_line a = make_line("", 0, 0, 0, 10, 10), b = make_line("", 0, 5, 0, 10, 10),
              c = make_line("", 0, 20, 20, 5, 5);
    assert_true(eval_box_iou(a.box, a.box) == 1.0);
    assert_true(eval_box_iou(a.box, b.box) > 0.333 && eval_box_iou(a.box, b.box) < 0.334);
    assert_true(eval_box_iou(a.box, c.box) == 0.0);
}

/* ------------------------------------------------------------------------ files */

static void test_find_page(void **state)
{
    (void)state;
    eval_page pages[3] = {{"/tmp/x/tesseract/phototest.png", 0, 0, NULL, 0},
                          {"tesseract/phototest_2.png", 0, 0, NULL, 0},
                          {"paddleocr/00018069", 0, 0, NULL, 0}};
    eval_pageset set = {pages, 3};
    assert_ptr_equal(eval_find_page(&set, "tesseract/phototest.png"), &pages[0]);
    assert_ptr_equal(eval_find_page(&set, "phototest_2.png"), &pages[1]);
    assert_null(eval_find_page(&set, "otest.png"));                              /* suffix must start at a '/' */
    assert_ptr_equal(eval_find_page(&set, "paddleocr/00018069.jpg"), &pages[2]); /* by stem */
    assert_null(eval_find_page(&set, "eurotext.png"));
}

static void test_notes_rules(void **state)
{
    (void)state;
    int fold, rot;
    size_t a, b;
    eval_notes_rules("converted; Score lines 1-4 strictly, the rest as a stress test.", &fold, &rot, &a, &b);
    assert_int_equal(a, 1);
    assert_int_equal(b, 4);
    assert_false(fold);
    eval_notes_rules("printed mixed case, score case-insensitively", &fold, &rot, &a, &b);
    assert_true(fold);
    assert_int_equal(a, 0);
    eval_notes_rules("rotated 180 deg; used by tesseract OSD tests.", &fold, &rot, &a, &b);
    assert_true(rot);
}

/* The committed corpus manifest and goldens are readable and consistent with each other. */
static void test_corpus_manifest_and_goldens(void **state)
{
    (void)state;
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/data/corpus/manifest.tsv", test_data_dir());
    eval_manifest m;
    if (eval_load_manifest(path, &m, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(m.n, 25);
    int seen_euro = 0, seen_case = 0, seen_table = 0;
    for (size_t i = 0; i < m.n; i++) {
        const eval_manifest_row *r = &m.rows[i];
        assert_true(r->n_gt >= 1);
        if (strstr(r->file, "eurotext")) { /* GT from eurotext.txt: 12 lines, the first 4 strict */
            seen_euro = 1;
            assert_int_equal(r->n_gt, 12);
            assert_string_equal(r->gt[0], "The (quick) [brown] {fox} jumps!");
            for (size_t k = 0; k < r->n_gt; k++)
                assert_int_equal(r->group[k], k >= 4);
        }
        if (r->fold_case) {
            seen_case++;
            assert_string_equal(r->gt[0], "Davidson");
        }
        if (strstr(r->file, "00018069")) {
            seen_table = 1;
            assert_int_equal(r->n_gt, 69);
        }
    }
    assert_true(seen_euro && seen_table);
    assert_int_equal(seen_case, 1);

    for (int mode = 0; mode < 2; mode++) {
        snprintf(path, sizeof path, "%s/golden/%s", test_data_dir(), mode ? "nocls" : "cls");
        eval_pageset set;
        if (eval_load_results(path, &set, err, sizeof err))
            fail_msg("%s", err);
        assert_int_equal(set.n, m.n);
        for (size_t i = 0; i < m.n; i++) {
            const eval_page *p = eval_find_page(&set, m.rows[i].file);
            if (!p)
                fail_msg("no golden for %s in %s", m.rows[i].file, path);
            assert_string_equal(p->file, m.rows[i].file);
            assert_true(p->width > 0 && p->height > 0);
            for (size_t k = 0; k < p->n_lines; k++) {
                assert_true(p->lines[k].score >= 0.5 && p->lines[k].score <= 1.0); /* drop_score 0.5 */
                for (int c = 0; c < 4; c++) {
                    assert_true(p->lines[k].box[c][0] >= 0 && p->lines[k].box[c][0] <= p->width);
                    assert_true(p->lines[k].box[c][1] >= 0 && p->lines[k].box[c][1] <= p->height);
                }
            }
        }
        eval_pageset_free(&set);
    }
    eval_manifest_free(&m);
}

/* Order-free matching takes a row's tab-separated fields one by one. */
static void test_fields_split_at_tabs(void **state)
{
    (void)state;
    const char *out[] = {"ALT\t\xe8\xb0\xb7\t25.6 0--40 U/L", "no tab", ""};
    char **f;
    size_t n;
    assert_int_equal(eval_split_fields(out, 3, &f, &n), 0);
    assert_int_equal(n, 5);
    assert_string_equal(f[0], "ALT");
    assert_string_equal(f[1], "\xe8\xb0\xb7");
    assert_string_equal(f[2], "25.6 0--40 U/L");
    assert_string_equal(f[3], "no tab");
    assert_string_equal(f[4], "");
    eval_fields_free(f, n);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fields_split_at_tabs),
        cmocka_unit_test(test_utf8_decode),
        cmocka_unit_test(test_levenshtein),
        cmocka_unit_test(test_normalisation),
        cmocka_unit_test(test_json_values),
        cmocka_unit_test(test_json_errors),
        cmocka_unit_test(test_json_lines_page),
        cmocka_unit_test(test_gt_exact_and_reordered),
        cmocka_unit_test(test_gt_split_noise_and_errors),
        cmocka_unit_test(test_gt_rules),
        cmocka_unit_test(test_golden_boxes_and_scores),
        cmocka_unit_test(test_golden_text_ratio_over_pages),
        cmocka_unit_test(test_box_iou),
        cmocka_unit_test(test_find_page),
        cmocka_unit_test(test_notes_rules),
        cmocka_unit_test(test_corpus_manifest_and_goldens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
