/* Reading order on real pages: ppocr-vk, in one process, on every page of the shared corpus's
 * layout/ set (two-column DocBank pages, book scans, receipts), held to these targets:
 *   - the ordered CER (tools/eval/order.h: the output's lines in their order against the GT in
 *     reading order) over the whole set at most 10 %;
 *   - the ordered CER over the DocBank pages (layout/docbank_*) below 8 %;
 *   - every receipt row pair (a NAME.rows.tsv row of two or more segments) on one output line,
 *     left to right;
 *   - every page read.
 * The corpus stays outside the project (DocBank's pages may not be copied into it): it is
 * ../shared/corpus beside the source tree, or $PPOCR_LAYOUT_CORPUS; without it the test is
 * skipped. ppocr-vk is $PPOCR_VK or <build>/ppocr-vk; its JSON Lines are kept in
 * <build>/eval-layout.jsonl for ppocr-eval by hand (tools/eval/README.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <fnmatch.h>

#include <cmocka.h>

#include "eval/manifest.h"
#include "eval/order.h"
#include "eval/results.h"
#include "eval/score.h"
#include "support/test_env.h"

typedef struct {
    size_t gt_chars, edits;
} totals;

static double rate(const totals *t)
{
    return t->gt_chars ? (double)t->edits / (double)t->gt_chars : 0.0;
}

/* Runs ppocr-vk on every manifest row from the corpus folder (so that "file" matches) into
 * out_path. Returns its exit status (-1: killed): a page it could not read is reported below. */
static int run_vk(const char *corpus, const eval_manifest *m, const char *out_path)
{
    const char *vk = getenv("PPOCR_VK");
    char vk_default[4096];
    snprintf(vk_default, sizeof vk_default, "%s/ppocr-vk", test_binary_dir());
    if (!vk || !*vk)
        vk = vk_default;
    size_t cap = 16384, len = 0;
    char *cmd = malloc(cap);
    assert_non_null(cmd);
    assert_null(strchr(corpus, '\''));
    assert_null(strchr(vk, '\''));
    /* under the sanitizers' options of the test (leak detection on): a report fails the run */
    len += (size_t)snprintf(cmd, cap, "cd '%s' && '%s' --format json", corpus, vk);
    for (size_t r = 0; r < m->n; r++) {
        assert_null(strchr(m->rows[r].file, '\''));
        assert_true(len + strlen(m->rows[r].file) + 4 < cap);
        len += (size_t)snprintf(cmd + len, cap - len, " '%s'", m->rows[r].file);
    }
    assert_true(len + strlen(out_path) + 8 < cap);
    snprintf(cmd + len, cap - len, " > '%s'", out_path);
    int status = system(cmd);
    free(cmd);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_layout_reading_order(void **state)
{
    (void)state;
    char corpus[4096], layout[4200], manifest_path[4200], out_path[4096], err[512];
    const char *env = getenv("PPOCR_LAYOUT_CORPUS");
    if (env && *env)
        snprintf(corpus, sizeof corpus, "%s", env);
    else
        snprintf(corpus, sizeof corpus, "%s/../../shared/corpus", test_data_dir());
    snprintf(layout, sizeof layout, "%s/layout", corpus);
    struct stat st;
    if (stat(layout, &st) || !S_ISDIR(st.st_mode)) {
        print_message("SKIP: no layout corpus at %s (the shared corpus beside the source tree, or "
                      "$PPOCR_LAYOUT_CORPUS)\n",
                      layout);
        skip();
    }
    snprintf(manifest_path, sizeof manifest_path, "%s/manifest.tsv", corpus);
    eval_manifest m;
    if (eval_load_manifest(manifest_path, &m, err, sizeof err))
        fail_msg("%s", err);
    const char *only[] = {"layout/*"};
    if (!eval_manifest_select(&m, only, 1))
        fail_msg("%s has no layout/ rows", manifest_path);

    snprintf(out_path, sizeof out_path, "%s/eval-layout.jsonl", test_binary_dir());
    int status = run_vk(corpus, &m, out_path);
    eval_pageset set;
    if (eval_load_results(out_path, &set, err, sizeof err))
        fail_msg("ppocr-vk output: %s", err);

    eval_gt_opts opt;
    eval_gt_opts_default(&opt);
    totals all = {0}, docbank = {0};
    size_t pairs = 0, pairs_kept = 0, missing = 0, docbank_pages = 0;
    print_message("| page | ordered CER %% | order-free CER %% | row pairs |\n|---|---:|---:|---:|\n");
    for (size_t r = 0; r < m.n; r++) {
        const eval_manifest_row *row = &m.rows[r];
        const eval_page *p = eval_find_page(&set, row->file);
        size_t n_out = p ? p->n_lines : 0;
        const char **out = calloc(n_out ? n_out : 1, sizeof *out);
        assert_non_null(out);
        for (size_t k = 0; k < n_out; k++)
            out[k] = p->lines[k].text;
        totals t;
        assert_int_equal(eval_score_ordered((const char *const *)row->gt, row->n_gt, out, n_out, row->fold_case, 0,
                                            &t.gt_chars, &t.edits),
                         0);
        eval_gt_result free_res;
        assert_int_equal(eval_score_gt((const char *const *)row->gt, row->n_gt, row->group, row->fold_case, out, n_out,
                                       &opt, &free_res),
                         0);
        size_t kept = 0;
        for (size_t k = 0; k < row->n_rows; k++) {
            int ok = eval_row_kept((const char *const *)row->rows[k].seg, row->rows[k].n_seg, out, n_out,
                                   row->fold_case, NULL);
            assert_true(ok >= 0);
            kept += (size_t)ok;
            if (!ok) {
                print_message("%s: row pair lost: GT line %zu \"", row->file, row->rows[k].index + 1);
                for (size_t j = 0; j < row->rows[k].n_seg; j++)
                    print_message("%s%s", j ? "\" | \"" : "", row->rows[k].seg[j]);
                print_message("\"\n");
            }
        }
        char pair_cell[32] = "-";
        if (row->has_rows)
            snprintf(pair_cell, sizeof pair_cell, "%zu/%zu", kept, row->n_rows);
        print_message("| %s%s | %.2f | %.2f | %s |\n", row->file, p ? "" : " (FAILED: no result)", 100.0 * rate(&t),
                      100.0 * eval_cer(&free_res.group[0]), pair_cell);
        eval_gt_result_free(&free_res);
        free(out);
        missing += !p;
        all.gt_chars += t.gt_chars;
        all.edits += t.edits;
        if (fnmatch("layout/docbank_*", row->file, 0) == 0) {
            docbank_pages++;
            docbank.gt_chars += t.gt_chars;
            docbank.edits += t.edits;
        }
        pairs += row->n_rows;
        pairs_kept += kept;
    }
    print_message("ordered CER: %.2f %% over %zu pages, %.2f %% over the %zu DocBank pages; row pairs "
                  "%zu/%zu; %zu pages without a result; ppocr-vk exit status %d\n",
                  100.0 * rate(&all), m.n, 100.0 * rate(&docbank), docbank_pages, pairs_kept, pairs, missing, status);
    size_t failures = 0;
    if (status != 0 || missing) {
        print_message("FAIL: ppocr-vk failed on %zu pages (exit status %d)\n", missing, status);
        failures++;
    }
    if (all.edits * 10 > all.gt_chars) { /* > 10 % */
        print_message("FAIL: ordered CER over the set %.2f %% > 10 %%\n", 100.0 * rate(&all));
        failures++;
    }
    if (!docbank_pages || docbank.edits * 100 >= docbank.gt_chars * 8) { /* >= 8 % */
        print_message("FAIL: ordered CER over the DocBank pages %.2f %% >= 8 %% (%zu pages)\n", 100.0 * rate(&docbank),
                      docbank_pages);
        failures++;
    }
    if (!pairs || pairs_kept < pairs) {
        print_message("FAIL: %zu of %zu receipt row pairs on one output line\n", pairs_kept, pairs);
        failures++;
    }
    eval_pageset_free(&set);
    eval_manifest_free(&m);
    if (failures)
        fail_msg("%zu of the layout targets missed (see above)", failures);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_reading_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
