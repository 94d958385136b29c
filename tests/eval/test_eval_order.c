/* The evaluator's reading-order measures (tools/eval/order.h): the ordered CER, row pairs, the
 * row side files and --only of the manifest, plain-text result pages, and the ppocr-eval
 * command's options for them (run on a small made-up manifest in a temporary folder). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "eval/manifest.h"
#include "eval/order.h"
#include "eval/results.h"
#include "eval/score.h"
#include "support/test_env.h"

static void ordered(const char *const *gt, size_t n_gt, const char *const *out, size_t n_out, int fold_case,
                    size_t *chars, size_t *edits)
{
    assert_int_equal(eval_score_ordered(gt, n_gt, out, n_out, fold_case, 0, chars, edits), 0);
}

/* Order-free edits of the same page, for contrast. */
static size_t order_free_edits(const char *const *gt, size_t n_gt, const char *const *out, size_t n_out)
{
    eval_gt_opts opt;
    eval_gt_opts_default(&opt);
    eval_gt_result r;
    assert_int_equal(eval_score_gt(gt, n_gt, NULL, 0, out, n_out, &opt, &r), 0);
    size_t e = r.group[0].edits;
    eval_gt_result_free(&r);
    return e;
}

static void test_ordered_same_order(void **state)
{
    (void)state;
    const char *gt[] = {"The quick brown fox", "jumps over the", "lazy dog."};
    size_t chars, edits;
    ordered(gt, 3, gt, 3, 0, &chars, &edits);
    assert_int_equal(edits, 0);
    assert_int_equal(chars, 19 + 14 + 9 + 2); /* the two line breaks count as spaces */

    /* a line split in two, two lines output as one row (joined by a tab), extra spaces: free */
    const char *out[] = {"The quick", "brown  fox", "jumps over the\tlazy dog."};
    ordered(gt, 3, out, 3, 0, &chars, &edits);
    assert_int_equal(edits, 0);

    /* recognition errors cost what they cost order-free */
    const char *out2[] = {"The quick brown f0x", "jumps over the", "lazy dog"};
    ordered(gt, 3, out2, 3, 0, &chars, &edits);
    assert_int_equal(edits, 2);
    assert_int_equal(order_free_edits(gt, 3, out2, 3), 2);

    /* nothing read: every GT character, 100 % */
    ordered(gt, 3, NULL, 0, 0, &chars, &edits);
    assert_int_equal(edits, chars);

    /* blank GT lines (block breaks) are ignored */
    const char *gt_blocks[] = {"The quick brown fox", "", "jumps over the", "  ", "lazy dog."};
    ordered(gt_blocks, 5, gt, 3, 0, &chars, &edits);
    assert_int_equal(edits, 0);
    assert_int_equal(chars, 19 + 14 + 9 + 2);
}

static void test_ordered_interleaved_columns(void **state)
{
    (void)state;
    /* two columns, left read first; the output sorted by top edge interleaves them */
    const char *gt[] = {"In the left column we",  "write about one thing", "and finish it here.",
                        "The right column holds", "another matter that",   "ends on this line."};
    const char *out[] = {"In the left column we", "The right column holds", "write about one thing",
                         "another matter that",   "and finish it here.",    "ends on this line."};
    size_t chars, edits;
    ordered(gt, 6, out, 6, 0, &chars, &edits);
    assert_int_equal(order_free_edits(gt, 6, out, 6), 0); /* every line is read right */
    assert_true((double)edits > 0.4 * (double)chars);

    /* a whole column read in the wrong place costs about its length twice, a line split nothing */
    const char *swapped[] = {"The right column holds", "another matter that",   "ends on this line.",
                             "In the left column we",  "write about one thing", "and finish it here."};
    ordered(gt, 6, swapped, 6, 0, &chars, &edits);
    assert_true((double)edits > 0.5 * (double)chars);

    /* a footnote read in the middle of a column */
    const char *gt2[] = {"First half of the column", "second half of it.", "1 A footnote."};
    const char *out2[] = {"First half of the column", "1 A footnote.", "second half of it."};
    ordered(gt2, 3, out2, 3, 0, &chars, &edits);
    assert_true(edits >= 20); /* about twice its 13 characters */
}

static void test_ordered_rules(void **state)
{
    (void)state;
    size_t chars, edits;
    /* case folding when the manifest asks for it (SROIE's upper case) */
    const char *gt[] = {"SUB TOTAL : 20.00", "CASH : 20.00"};
    const char *out[] = {"Sub Total :\t20.00", "Cash : 20.00"};
    ordered(gt, 2, out, 2, 1, &chars, &edits);
    assert_int_equal(edits, 0);
    ordered(gt, 2, out, 2, 0, &chars, &edits);
    assert_int_equal(edits, 9); /* ub otal ash */

    /* ligatures of a PDF text layer are the letters a recogniser reads */
    const char *gt_lig[] = {"\xEF\xAC\x81nite e\xEF\xAC\x83\x63ient \xEF\xAC\x82ow"}; /* ﬁnite eﬃcient ﬂow */
    const char *out_lig[] = {"finite efficient flow"};
    ordered(gt_lig, 1, out_lig, 1, 0, &chars, &edits);
    assert_int_equal(edits, 0);
    assert_int_equal(chars, 21);

    /* a page with CJK is compared without whitespace and without separators */
    const char *gt_cjk[] = {"分开洗涤,不宜", "长时间浸泡"};
    const char *out_cjk[] = {"分开 洗涤，不宜长时间", "浸泡"};
    ordered(gt_cjk, 2, out_cjk, 2, 0, &chars, &edits);
    assert_int_equal(edits, 0);
    assert_int_equal(chars, 12);
    const char *out_cjk2[] = {"长时间浸泡", "分开洗涤,不宜"};
    ordered(gt_cjk, 2, out_cjk2, 2, 0, &chars, &edits);
    assert_true(edits >= 5);

    /* remove_spaces compares every page that way */
    const char *gt_sp[] = {"Hello Google"};
    const char *out_sp[] = {"HelloGoogle"};
    ordered(gt_sp, 1, out_sp, 1, 0, &chars, &edits);
    assert_int_equal(edits, 1);
    assert_int_equal(eval_score_ordered(gt_sp, 1, out_sp, 1, 0, 1, &chars, &edits), 0);
    assert_int_equal(edits, 0);
}

/* ------------------------------------------------------------------------ row pairs */

static int kept(const char *const *seg, size_t n_seg, const char *const *out, size_t n_out, int fold, size_t *line)
{
    int r = eval_row_kept(seg, n_seg, out, n_out, fold, line);
    assert_true(r == 0 || r == 1);
    return r;
}

static void test_row_pairs(void **state)
{
    (void)state;
    const char *row[] = {"SUB TOTAL :", "20.00"};
    size_t line;
    /* item and price on one line, joined by a tab or a space or nothing */
    const char *tab[] = {"TAX INVOICE", "SUB TOTAL :\t20.00", "CASH : 20.00"};
    assert_true(kept(row, 2, tab, 3, 0, &line));
    assert_int_equal(line, 1);
    const char *tight[] = {"SUBTOTAL:20.00"};
    assert_true(kept(row, 2, tight, 1, 0, NULL));
    /* each on its own line: lost */
    const char *split[] = {"SUB TOTAL :", "20.00", "CASH : 20.00"};
    assert_false(kept(row, 2, split, 3, 0, &line));
    assert_int_equal(line, SIZE_MAX);
    /* on one line but right to left: lost */
    const char *reversed[] = {"20.00 SUB TOTAL :"};
    assert_false(kept(row, 2, reversed, 1, 0, NULL));
    /* the price of another row on the item's line does not stand in for it */
    const char *other[] = {"SUB TOTAL : 31.80", "20.00"};
    assert_false(kept(row, 2, other, 2, 0, NULL));
    /* case as the manifest says */
    const char *lower[] = {"Sub Total : 20.00"};
    assert_true(kept(row, 2, lower, 1, 1, NULL));
    assert_false(kept(row, 2, lower, 1, 0, NULL));
    /* one misread character in four is tolerated, so a misread digit does not break a row */
    const char *misread[] = {"SUB T0TAL : 20.0O"};
    assert_true(kept(row, 2, misread, 1, 0, NULL));
    /* short segments may have one character substituted (the dot-matrix m read as n, the
   * receipt's x read as ×, also where the same word is read right elsewhere on the page)... */
    const char *row_dm[] = {"DATE", "TIME", "NUM", "OPT"};
    const char *out_dm[] = {"Invoice number", "Date\tTine\tNun\tOPT"};
    assert_true(kept(row_dm, 4, out_dm, 2, 1, NULL));
    const char *split_dm[] = {"Date\tTime", "Nun\tOPT"};
    assert_false(kept(row_dm, 4, split_dm, 2, 1, NULL));
    const char *row_x[] = {"1 X", "1.70", "1.70", "SR"};
    const char *out_x[] = {"1x\t2.20", "1\xC3\x97\t1.70\t1.70\tSR"};
    assert_true(kept(row_x, 4, out_x, 2, 0, NULL));
    /* ...but none missing or added: "TEA" is not the "TA" inside "TOTAL" */
    const char *row_tea[] = {"TEA", "2.50"};
    const char *out_tea[] = {"Tea", "2.50", "Total :\t2.50"};
    assert_false(kept(row_tea, 2, out_tea, 3, 1, NULL));
    const char *out_tea2[] = {"Tex\t2.50"};
    assert_true(kept(row_tea, 2, out_tea2, 1, 1, NULL));
    /* a segment misread everywhere, or never detected, is left out: the order is not to blame */
    const char *row_l[] = {"2.170", "RM", "/", "LITRE"};
    const char *out_l[] = {"2.170\tRM\tlitre"};
    assert_true(kept(row_l, 4, out_l, 1, 1, NULL));
    /* ...but a segment read elsewhere must be on the row's line */
    const char *row3[] = {"4132", "1", "20.00", "SR"};
    const char *ok3[] = {"4132 1 20.00\tSR"};
    const char *gap3[] = {"4132 1 20.00", "SR"};
    const char *far3[] = {"4132 1", "20.00 SR"};
    assert_true(kept(row3, 4, ok3, 1, 0, NULL));
    assert_false(kept(row3, 4, gap3, 2, 0, NULL));
    assert_false(kept(row3, 4, far3, 2, 0, NULL));
    /* one-character segments say nothing: a quantity read elsewhere does not lose the row */
    const char *no_qty[] = {"4132 20.00 SR", "1"};
    assert_true(kept(row3, 4, no_qty, 2, 0, NULL));
    /* a row needs two segments read to be kept */
    const char *lost_price[] = {"SUB TOTAL :", "CASH : 2O.OO"};
    assert_false(kept(row, 2, lost_price, 2, 0, NULL));
    /* nothing read */
    assert_false(kept(row, 2, NULL, 0, 0, NULL));
}

/* ------------------------------------------------------------------------ files */

static char tmp_dir[] = "/tmp/test_eval_order.XXXXXX";

static void write_file(const char *name, const char *text)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", tmp_dir, name);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    assert_int_equal(fclose(f), 0);
}

static int setup_files(void **state)
{
    (void)state;
    if (!mkdtemp(tmp_dir))
        return -1;
    const char *dirs[] = {"layout", "tess", "tess/layout"};
    for (size_t i = 0; i < 3; i++) {
        char sub[4096];
        snprintf(sub, sizeof sub, "%s/%s", tmp_dir, dirs[i]);
        if (mkdir(sub, 0700))
            return -1;
    }
    write_file("manifest.tsv", "file\tground_truth\tnotes\n"
                               "layout/cols.png\tlayout/cols.gt.txt\ttwo columns\n"
                               "layout/shop.jpg\tlayout/shop.gt.txt\tscore case-insensitively\n"
                               "other/word.png\tHELLO\t\n");
    write_file("layout/cols.gt.txt", "Left one\nleft two\n\nRight one\nright two\n");
    write_file("layout/shop.gt.txt", "SHOP\nTEA 2.50\nTOTAL : 2.50\n");
    /* segments out of order in the file, a one-segment row, CRLF */
    write_file("layout/shop.rows.tsv", "row\tsegment\tx0\ty0\tx1\ty1\ttext\r\n"
                                       "0\t0\t1\t1\t9\t9\tSHOP\r\n"
                                       "2\t1\t50\t30\t60\t40\t2.50\r\n"
                                       "1\t0\t1\t20\t20\t30\tTEA\r\n"
                                       "1\t1\t50\t20\t60\t30\t2.50\r\n"
                                       "2\t0\t1\t30\t40\t40\tTOTAL :\r\n");
    /* the layout step's output: columns in order, item and price joined by a tab */
    write_file("good.jsonl", "{\"file\":\"layout/cols.png\",\"lines\":["
                             "{\"text\":\"Left one\",\"score\":0.9,\"box\":[[0,0],[9,0],[9,9],[0,9]]},"
                             "{\"text\":\"left two\",\"score\":0.9,\"box\":[[0,10],[9,10],[9,19],[0,19]]},"
                             "{\"text\":\"Right one\",\"score\":0.9,\"box\":[[20,0],[29,0],[29,9],[20,9]]},"
                             "{\"text\":\"right two\",\"score\":0.9,\"box\":[[20,10],[29,10],[29,19],[20,19]]}]}\n"
                             "{\"file\":\"layout/shop.jpg\",\"lines\":["
                             "{\"text\":\"Shop\",\"score\":0.9,\"box\":[[0,0],[9,0],[9,9],[0,9]]},"
                             "{\"text\":\"Tea\\t2.50\",\"score\":0.9,\"box\":[[0,20],[60,20],[60,30],[0,30]]},"
                             "{\"text\":\"Total :\\t2.50\",\"score\":0.9,\"box\":[[0,30],[60,30],[60,40],[0,40]]}]}\n");
    /* sorted by top edge: columns interleaved, prices on their own lines */
    write_file("bad.jsonl", "{\"file\":\"layout/cols.png\",\"lines\":["
                            "{\"text\":\"Left one\",\"score\":0.9,\"box\":[[0,0],[9,0],[9,9],[0,9]]},"
                            "{\"text\":\"Right one\",\"score\":0.9,\"box\":[[20,0],[29,0],[29,9],[20,9]]},"
                            "{\"text\":\"left two\",\"score\":0.9,\"box\":[[0,10],[9,10],[9,19],[0,19]]},"
                            "{\"text\":\"right two\",\"score\":0.9,\"box\":[[20,10],[29,10],[29,19],[20,19]]}]}\n"
                            "{\"file\":\"layout/shop.jpg\",\"lines\":["
                            "{\"text\":\"Shop\",\"score\":0.9,\"box\":[[0,0],[9,0],[9,9],[0,9]]},"
                            "{\"text\":\"Tea\",\"score\":0.9,\"box\":[[0,20],[20,20],[20,30],[0,30]]},"
                            "{\"text\":\"2.50\",\"score\":0.9,\"box\":[[50,20],[60,20],[60,30],[50,30]]},"
                            "{\"text\":\"Total :\\t2.50\",\"score\":0.9,\"box\":[[0,30],[60,30],[60,40],[0,40]]}]}\n");
    /* another tool's plain text, one file per image */
    write_file("tess/layout/cols.png.txt", "Left one\nleft two\n\nRight one\nright two\n\f");
    write_file("tess/layout/shop.txt", "SHOP\n\nTEA 2.50\r\nTOTAL : 2.50\n");
    return 0;
}

static int teardown_files(void **state)
{
    (void)state;
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_manifest_rows_and_select(void **state)
{
    (void)state;
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/manifest.tsv", tmp_dir);
    eval_manifest m;
    if (eval_load_manifest(path, &m, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(m.n, 3);
    assert_false(m.rows[0].has_rows); /* no side file */
    const eval_manifest_row *shop = &m.rows[1];
    assert_true(shop->has_rows);
    assert_true(shop->fold_case);
    assert_int_equal(shop->n_rows, 2); /* SHOP has one segment: not a row pair */
    assert_int_equal(shop->rows[0].index, 1);
    assert_int_equal(shop->rows[0].n_seg, 2);
    assert_string_equal(shop->rows[0].seg[0], "TEA");
    assert_string_equal(shop->rows[0].seg[1], "2.50");
    assert_int_equal(shop->rows[1].index, 2);
    assert_string_equal(shop->rows[1].seg[0], "TOTAL :"); /* sorted by segment */
    assert_string_equal(shop->rows[1].seg[1], "2.50");
    assert_int_equal(m.rows[0].n_gt, 4); /* blank lines skipped */

    const char *globs[] = {"other/*", "layout/s*"};
    assert_int_equal(eval_manifest_select(&m, globs, 2), 2);
    assert_string_equal(m.rows[0].file, "layout/shop.jpg");
    assert_string_equal(m.rows[1].file, "other/word.png");
    const char *none[] = {"nothing/*"};
    assert_int_equal(eval_manifest_select(&m, none, 1), 0);
    eval_manifest_free(&m);

    /* a side file that is not one is an error naming it */
    write_file("layout/cols.rows.tsv", "row\tsegment\ttext\nx\t0\tLeft one\n");
    assert_int_equal(eval_load_manifest(path, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "cols.rows.tsv:2"));
    write_file("layout/cols.rows.tsv", "line\tsegment\ttext\n");
    assert_int_equal(eval_load_manifest(path, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "header"));
    snprintf(path, sizeof path, "%s/layout/cols.rows.tsv", tmp_dir);
    assert_int_equal(unlink(path), 0);
}

static void test_text_pages(void **state)
{
    (void)state;
    char path[4096], err[512];
    snprintf(path, sizeof path, "%s/tess", tmp_dir);
    eval_pageset set;
    if (eval_load_results(path, &set, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(set.n, 2);
    const eval_page *p = eval_find_page(&set, "layout/cols.png");
    assert_non_null(p);
    assert_string_equal(p->file, "layout/cols.png");
    assert_int_equal(p->n_lines, 4); /* the blank line and the form feed are gone */
    assert_string_equal(p->lines[2].text, "Right one");
    p = eval_find_page(&set, "layout/shop.jpg"); /* named without the image's extension: by stem */
    assert_non_null(p);
    assert_int_equal(p->n_lines, 3);
    assert_string_equal(p->lines[1].text, "TEA 2.50");
    eval_pageset_free(&set);
}

/* ppocr-eval gt on the made-up manifest: exit status and what it prints. */
static int run_eval(const char *args, char *out, size_t out_size)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s/ppocr-eval' gt %s > out.txt 2> err.txt", tmp_dir, test_binary_dir(),
             args);
    int status = system(cmd);
    assert_true(WIFEXITED(status));
    char path[4096];
    snprintf(path, sizeof path, "%s/out.txt", tmp_dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = fread(out, 1, out_size - 1, f);
    out[n] = 0;
    fclose(f);
    return WEXITSTATUS(status);
}

static void test_command(void **state)
{
    (void)state;
    static char out[65536];
    const char *only = "--only 'layout/*' manifest.tsv";
    char args[1024];

    snprintf(args, sizeof args, "--max-ordered-cer 0 --require-row-pairs %s good.jsonl", only);
    assert_int_equal(run_eval(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "(2 images)"));
    assert_null(strstr(out, "other/word.png"));
    assert_non_null(strstr(out, "row pairs"));
    assert_non_null(strstr(out, "2/2"));

    /* interleaved columns: the order-free CER stays 0 but the ordered CER does not */
    snprintf(args, sizeof args, "--max-cer 0 %s bad.jsonl", only);
    assert_int_equal(run_eval(args, out, sizeof out), 0);
    snprintf(args, sizeof args, "--max-ordered-cer 10 %s bad.jsonl", only);
    assert_int_equal(run_eval(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "FAIL: bad.jsonl overall ordered CER"));
    /* the tea row lost, the total row kept */
    snprintf(args, sizeof args, "--require-row-pairs --verbose %s bad.jsonl", only);
    assert_int_equal(run_eval(args, out, sizeof out), 1);
    assert_non_null(strstr(out, "1/2"));
    assert_non_null(strstr(out, "row pair lost: GT line 2 \"TEA\" | \"2.50\""));
    assert_non_null(strstr(out, "FAIL: bad.jsonl kept 1 of 2 row pairs"));

    /* plain-text pages as a column beside JSON Lines */
    snprintf(args, sizeof args, "--max-ordered-cer 0 --require-row-pairs --names vk,tess %s good.jsonl tess", only);
    assert_int_equal(run_eval(args, out, sizeof out), 0);
    assert_non_null(strstr(out, "tess ordered CER %"));

    /* a pattern that matches nothing is a usage error */
    assert_int_equal(run_eval("--only 'x/*' manifest.tsv good.jsonl", out, sizeof out), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ordered_same_order),
        cmocka_unit_test(test_ordered_interleaved_columns),
        cmocka_unit_test(test_ordered_rules),
        cmocka_unit_test(test_row_pairs),
        cmocka_unit_test(test_manifest_rows_and_select),
        cmocka_unit_test(test_text_pages),
        cmocka_unit_test(test_command),
    };
    return cmocka_run_group_tests(tests, setup_files, teardown_files);
}
