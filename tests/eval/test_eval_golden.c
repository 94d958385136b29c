/* Golden regression: the real ppocr-vk binary on every image of tests/data/corpus, with the
 * direction classifier on and off. With --paddle-parity it must read what the reference
 * (PaddleOCR's pipeline) read, within ppocr-eval's default tolerances (line count, >= 98% identical
 * lines, CER <= 1%, boxes within 3 px, scores within 0.02); by default its CER against the ground
 * truth must not fall behind the reference's by more than 0.5 points. The goldens are
 * tests/golden/{cls,nocls}, made by tools/ref/make-goldens.sh. ppocr-vk is $PPOCR_VK or
 * <build>/ppocr-vk; its JSON Lines are kept in <build>/eval-golden[-DEVICE]-<mode>-{parity,default}.jsonl
 * for `ppocr-eval` by hand. $PPOCR_GOLDEN_DEVICE, when set, is given to --device (the same goldens
 * hold on every backend). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "eval/manifest.h"
#include "eval/results.h"
#include "eval/score.h"
#include "support/test_env.h"
#include "support/test_parts.h"

/* Overall strict CER of a page set against the manifest (missing pages score as empty). */
static double overall_cer(const eval_manifest *m, const eval_pageset *set)
{
    eval_gt_opts opt;
    eval_gt_opts_default(&opt);
    eval_gt_totals total = {0};
    for (size_t r = 0; r < m->n; r++) {
        const eval_manifest_row *row = &m->rows[r];
        const eval_page *p = eval_find_page(set, row->file);
        const char **out = calloc(p && p->n_lines ? p->n_lines : 1, sizeof *out);
        assert_non_null(out);
        for (size_t k = 0; p && k < p->n_lines; k++)
            out[k] = p->lines[k].text;
        eval_gt_result res;
        assert_int_equal(eval_score_gt((const char *const *)row->gt, row->n_gt, row->group, row->fold_case, out,
                                       p ? p->n_lines : 0, &opt, &res),
                         0);
        eval_gt_totals_add(&total, &res.group[0]);
        eval_gt_result_free(&res);
        free(out);
    }
    return 100.0 * eval_cer(&total);
}

/* Runs ppocr-vk with `flags` on every manifest image, from the corpus folder so that "file"
 * matches, into out_path, and loads the result. */
static void run_vk(const eval_manifest *m, const char *flags, const char *out_path, eval_pageset *ours)
{
    const char *vk = getenv("PPOCR_VK");
    char vk_default[4096], err[512];
    snprintf(vk_default, sizeof vk_default, "%s/ppocr-vk", test_binary_dir());
    if (!vk || !*vk)
        vk = vk_default;
    size_t cap = 16384, len = 0;
    char *cmd = malloc(cap);
    assert_non_null(cmd);
    /* under the sanitizers' options of the test (leak detection on): a report fails the run */
    const char *device = getenv("PPOCR_GOLDEN_DEVICE");
    if (device && *device) {
        assert_null(strchr(device, '\''));
        len += (size_t)snprintf(cmd, cap, "cd '%s/data/corpus' && '%s' --device '%s' --format json %s", test_data_dir(),
                                vk, device, flags);
    } else {
        len += (size_t)snprintf(cmd, cap, "cd '%s/data/corpus' && '%s' --format json %s", test_data_dir(), vk, flags);
    }
    for (size_t r = 0; r < m->n; r++) {
        assert_null(strchr(m->rows[r].file, '\'')); /* quoted below */
        assert_true(len + strlen(m->rows[r].file) + 4 < cap);
        len += (size_t)snprintf(cmd + len, cap - len, " '%s'", m->rows[r].file);
    }
    assert_true(len + strlen(out_path) + 8 < cap);
    snprintf(cmd + len, cap - len, " > '%s'", out_path);
    int status = system(cmd);
    free(cmd);
    if (status != 0)
        fail_msg("ppocr-vk (%s %s) failed with status %d", vk, flags, status);
    if (eval_load_results(out_path, ours, err, sizeof err))
        fail_msg("ppocr-vk output: %s", err);
}

/* One of the two runs of a mode: with --paddle-parity against the reference's goldens, or by
 * default against the ground truth (each its own test, so that ctest runs them side by side). */
static void run_mode(int use_cls, int parity_run_wanted)
{
    const char *device = getenv("PPOCR_GOLDEN_DEVICE");
    char mode[64];
    snprintf(mode, sizeof mode, "%s%s%s", device && *device ? device : "", device && *device ? "-" : "",
             use_cls ? "cls" : "nocls");
    char manifest_path[4096], golden_dir[4096], out_path[4096], err[512];
    snprintf(manifest_path, sizeof manifest_path, "%s/data/corpus/manifest.tsv", test_data_dir());
    snprintf(golden_dir, sizeof golden_dir, "%s/golden/%s", test_data_dir(), use_cls ? "cls" : "nocls");

    eval_manifest m;
    if (eval_load_manifest(manifest_path, &m, err, sizeof err))
        fail_msg("%s", err);
    eval_pageset parity_run, default_run, golden;
    if (eval_load_results(golden_dir, &golden, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(golden.n, m.n);

    if (!parity_run_wanted) {
        /* Against the ground truth, by default ppocr-vk may be at most 0.5 points behind the
         * reference. */
        snprintf(out_path, sizeof out_path, "%s/eval-golden-%s-default.jsonl", test_binary_dir(), mode);
        run_vk(&m, use_cls ? "" : "--no-cls", out_path, &default_run);
        double ours_cer = overall_cer(&m, &default_run), ref_cer = overall_cer(&m, &golden);
        fprintf(stderr, "%s: ground-truth CER ppocr-vk %.2f%%, reference %.2f%%\n", mode, ours_cer, ref_cer);
        eval_pageset_free(&default_run);
        eval_pageset_free(&golden);
        eval_manifest_free(&m);
        if (ours_cer > ref_cer + 0.5)
            fail_msg("%s: CER %.2f%% is more than 0.5 points behind the reference's %.2f%%", mode, ours_cer, ref_cer);
        return;
    }

    /* With --paddle-parity ppocr-vk must read what the reference reads; every mismatch is printed. */
    snprintf(out_path, sizeof out_path, "%s/eval-golden-%s-parity.jsonl", test_binary_dir(), mode);
    run_vk(&m, use_cls ? "--paddle-parity" : "--paddle-parity --no-cls", out_path, &parity_run);
    eval_golden_opts gopt;
    eval_golden_opts_default(&gopt);
    eval_golden_totals t;
    memset(&t, 0, sizeof t);
    for (size_t i = 0; i < golden.n; i++)
        eval_golden_compare_page(&golden.pages[i], eval_find_page(&parity_run, golden.pages[i].file), &gopt, &t,
                                 stderr);
    fprintf(stderr,
            "%s: pages %zu (missing %zu, line count differs on %zu); identical text %zu/%zu; "
            "CER %zu/%zu; boxes beyond %.0f px %zu (max %.1f); scores beyond %.2f %zu (max %.4f)\n",
            mode, t.pages, t.missing_pages, t.count_mismatch_pages, t.text_equal, t.golden_lines, t.edits,
            t.golden_chars, gopt.box_px, t.box_fail, t.max_corner_px, gopt.score_tol, t.score_fail, t.max_score_diff);
    int parity = eval_golden_pass(&t, &gopt);
    fprintf(stderr, "%s: ground-truth CER ppocr-vk --paddle-parity %.2f%%\n", mode, overall_cer(&m, &parity_run));

    eval_pageset_free(&parity_run);
    eval_pageset_free(&golden);
    eval_manifest_free(&m);
    if (!parity)
        fail_msg("%s: ppocr-vk --paddle-parity differs from the reference's goldens (mismatches above)", mode);
}

static void test_golden_cls_parity(void **state)
{
    (void)state;
    run_mode(1, 1);
}

static void test_golden_cls_default(void **state)
{
    (void)state;
    run_mode(1, 0);
}

static void test_golden_nocls_parity(void **state)
{
    (void)state;
    run_mode(0, 1);
}

static void test_golden_nocls_default(void **state)
{
    (void)state;
    run_mode(0, 0);
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden_cls_parity),
        cmocka_unit_test(test_golden_cls_default),
        cmocka_unit_test(test_golden_nocls_parity),
        cmocka_unit_test(test_golden_nocls_default),
    };
    /* one ctest entry each (test_eval_golden_1..4): each runs the command over the whole corpus */
    static const unsigned char parts[] = {1, 2, 3, 4};
    return TEST_RUN_PARTS("eval_golden", tests, parts, argc, argv, NULL, NULL);
}
