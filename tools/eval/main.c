/* ppocr-eval: scores OCR output against ground truth or against the reference's goldens.
 *
 *   ppocr-eval gt [options] MANIFEST RESULTS [RESULTS...]
 *   ppocr-eval golden [options] GOLDEN_DIR RESULTS
 *
 * RESULTS is `ppocr-vk --format json` output (JSON Lines) or a folder of golden files; in gt
 * mode every RESULTS becomes one column of the table, so ppocr-vk and the reference are read side
 * by side. Run without arguments for the options. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"
#include "order.h"
#include "results.h"
#include "score.h"

static void usage(FILE *f)
{
    fputs("usage: ppocr-eval gt [options] MANIFEST RESULTS [RESULTS...]\n"
          "       ppocr-eval golden [options] GOLDEN_DIR RESULTS\n"
          "\n"
          "RESULTS: ppocr-vk --format json output (JSON Lines), or a folder of page files: *.json\n"
          "(goldens) and *.txt (plain text, one output line per line: IMAGE.txt, e.g. x.jpg.txt).\n"
          "\n"
          "gt: CER (Levenshtein over code points, corpus normalisation) and line recall per image and\n"
          "overall, one column per RESULTS (a markdown table); the ordered CER (the output's lines in\n"
          "their order against the GT in reading order) and, for images with a NAME.rows.tsv side\n"
          "file, row pairs (GT rows of 2+ segments that come out on one line, left to right).\n"
          "  --only GLOB         score only the manifest rows whose file matches GLOB (repeatable)\n"
          "  --compare RESULTS   add a column (same as a further RESULTS argument)\n"
          "  --names A,B,...     column names (default: the RESULTS paths' last components)\n"
          "  --line-cer X        a GT line is recalled when its CER <= X (default 0.10)\n"
          "  --remove-spaces     ignore whitespace in every line (default: only in CJK lines)\n"
          "  --verbose           print every GT line with the output matched to it\n"
          "  --max-cer PCT       exit 1 when the first column's overall CER exceeds PCT percent\n"
          "  --max-behind PTS    exit 1 when the first column's overall CER exceeds the last\n"
          "                      column's by more than PTS percentage points\n"
          "  --max-ordered-cer PCT  exit 1 when the first column's overall ordered CER exceeds PCT\n"
          "  --require-row-pairs exit 1 when the first column loses any row pair\n"
          "\n"
          "golden: parity of RESULTS with the goldens; exit 1 on failure.\n"
          "  --text-ratio X      lines with identical text / golden lines >= X (default 0.98)\n"
          "  --cer X             raw-text CER over all lines <= X (default 0.01)\n"
          "  --box-px X          every box corner within X px (default 3)\n"
          "  --score-tol X       every score within X (default 0.02)\n"
          "  --min-iou X         lines pair when their boxes overlap by IoU >= X (default 0.5)\n"
          "  --max-report N      print at most N mismatches (default 200)\n",
          f);
}

static int parse_double(const char *s, double *out)
{
    char *end;
    *out = strtod(s, &end);
    return end == s || *end != 0;
}

/* ------------------------------------------------------------------------ gt */

#define MAX_COLUMNS 8
#define MAX_ONLY 32

/* Ordered CER over pages: GT code points and edits. */
typedef struct {
    size_t gt_chars, edits;
} ordered_totals;

static double ordered_cer(const ordered_totals *t)
{
    return t->gt_chars ? (double)t->edits / (double)t->gt_chars : 0.0;
}

typedef struct {
    const char *path;
    char name[64];
    eval_pageset set;
    eval_gt_totals strict, separate, upright, rotated;
    ordered_totals ord_all, ord_upright, ord_rotated;
    size_t pairs, pairs_kept;
    double cer_sum, ord_sum; /* sums of per-image strict and ordered CER, for the means */
    size_t images, missing;
} column;

/* One column pair: CER % and recall ("*": the image had no result). */
static void print_cell(const eval_gt_totals *t, int missing)
{
    if (!t->gt_lines) {
        printf(" %12s | %15s |", "-", "-");
        return;
    }
    char recall[32];
    snprintf(recall, sizeof recall, "%zu/%zu%s", t->recalled, t->gt_lines, missing ? " *" : "");
    printf(" %12.2f | %15s |", 100.0 * eval_cer(t), recall);
}

/* The reading-order pair: ordered CER % and, when the table has the column, row pairs kept/total
 * (NULL: "-"). */
static void print_order_cell(const ordered_totals *t, int missing, int with_pairs, const size_t *kept,
                             const size_t *total)
{
    if (!t)
        printf(" %14s |", "-");
    else
        printf(" %12.2f%s |", 100.0 * ordered_cer(t), missing ? " *" : "  ");
    if (!with_pairs)
        return;
    if (!kept) {
        printf(" %12s |", "-");
        return;
    }
    char pairs[32];
    snprintf(pairs, sizeof pairs, "%zu/%zu", *kept, *total);
    printf(" %12s |", pairs);
}

static int run_gt(int argc, char **argv)
{
    eval_gt_opts opt;
    eval_gt_opts_default(&opt);
    const char *names = NULL, *manifest_path = NULL;
    const char *paths[MAX_COLUMNS], *only[MAX_ONLY];
    size_t ncol = 0, n_only = 0;
    int verbose = 0, require_pairs = 0;
    double max_cer = -1, max_behind = -1, max_ordered = -1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        if (!strcmp(a, "--compare") && has_val) {
            if (ncol == MAX_COLUMNS) {
                fprintf(stderr, "ppocr-eval: at most %d columns\n", MAX_COLUMNS);
                return 2;
            }
            paths[ncol++] = argv[++i];
        } else if (!strcmp(a, "--names") && has_val)
            names = argv[++i];
        else if (!strcmp(a, "--line-cer") && has_val) {
            if (parse_double(argv[++i], &opt.line_cer))
                goto bad;
        } else if (!strcmp(a, "--max-cer") && has_val) {
            if (parse_double(argv[++i], &max_cer))
                goto bad;
        } else if (!strcmp(a, "--max-behind") && has_val) {
            if (parse_double(argv[++i], &max_behind))
                goto bad;
        } else if (!strcmp(a, "--max-ordered-cer") && has_val) {
            if (parse_double(argv[++i], &max_ordered))
                goto bad;
        } else if (!strcmp(a, "--require-row-pairs"))
            require_pairs = 1;
        else if (!strcmp(a, "--only") && has_val) {
            if (n_only == MAX_ONLY) {
                fprintf(stderr, "ppocr-eval: at most %d --only\n", MAX_ONLY);
                return 2;
            }
            only[n_only++] = argv[++i];
        } else if (!strcmp(a, "--remove-spaces"))
            opt.remove_spaces = 1;
        else if (!strcmp(a, "--verbose"))
            verbose = 1;
        else if (a[0] == '-' && a[1])
            goto bad;
        else if (!manifest_path)
            manifest_path = a;
        else {
            if (ncol == MAX_COLUMNS) {
                fprintf(stderr, "ppocr-eval: at most %d columns\n", MAX_COLUMNS);
                return 2;
            }
            paths[ncol++] = a;
        }
        continue;
    bad:
        fprintf(stderr, "ppocr-eval gt: bad option or value: %s\n", a);
        return 2;
    }
    if (!manifest_path || !ncol) {
        usage(stderr);
        return 2;
    }

    char err[512];
    eval_manifest m;
    if (eval_load_manifest(manifest_path, &m, err, sizeof err)) {
        fprintf(stderr, "ppocr-eval: %s\n", err);
        return 2;
    }
    if (n_only && !eval_manifest_select(&m, only, n_only)) {
        fprintf(stderr, "ppocr-eval: no manifest row matches --only\n");
        eval_manifest_free(&m);
        return 2;
    }
    int with_pairs = 0;
    for (size_t r = 0; r < m.n; r++)
        with_pairs |= m.rows[r].has_rows;
    column *cols = calloc(ncol, sizeof *cols);
    if (!cols) {
        eval_manifest_free(&m);
        return 2;
    }
    int rc = 0;
    for (size_t c = 0; c < ncol; c++) {
        cols[c].path = paths[c];
        const char *nm = NULL;
        if (names) { /* the c-th comma-separated name */
            const char *p = names;
            for (size_t k = 0; k < c && p; k++) {
                p = strchr(p, ',');
                if (p)
                    p++;
            }
            if (p) {
                size_t n = strcspn(p, ",");
                snprintf(cols[c].name, sizeof cols[c].name, "%.*s", (int)n, p);
                nm = cols[c].name;
            }
        }
        if (!nm) {
            char tmp[1024];
            snprintf(tmp, sizeof tmp, "%s", paths[c]);
            size_t n = strlen(tmp);
            while (n > 1 && tmp[n - 1] == '/')
                tmp[--n] = 0;
            const char *slash = strrchr(tmp, '/');
            snprintf(cols[c].name, sizeof cols[c].name, "%.63s", slash ? slash + 1 : tmp);
        }
        if (eval_load_results(paths[c], &cols[c].set, err, sizeof err)) {
            fprintf(stderr, "ppocr-eval: %s\n", err);
            rc = 2;
        }
    }
    if (rc)
        goto out;

    printf("Ground truth: %s (%zu images). CER %% = edits / GT characters after normalisation; "
           "recall = GT lines with CER <= %.0f%%; ordered CER %% = the same over the page's lines "
           "joined in output order against the GT in reading order%s.\n\n",
           manifest_path, m.n, 100.0 * opt.line_cer,
           with_pairs ? "; row pairs = GT rows of 2+ segments output on one line, left to right" : "");
    printf("| %-36s | %5s |", "image", "lines");
    for (size_t c = 0; c < ncol; c++) {
        char h1[96], h2[96], h3[96], h4[96];
        snprintf(h1, sizeof h1, "%s CER %%", cols[c].name);
        snprintf(h2, sizeof h2, "%s recall", cols[c].name);
        snprintf(h3, sizeof h3, "%s ordered CER %%", cols[c].name);
        snprintf(h4, sizeof h4, "%s row pairs", cols[c].name);
        printf(" %12s | %15s | %14s |", h1, h2, h3);
        if (with_pairs)
            printf(" %12s |", h4);
    }
    printf("\n|%s|------:|", "--------------------------------------");
    for (size_t c = 0; c < ncol; c++) {
        printf("-------------:|----------------:|---------------:|");
        if (with_pairs)
            printf("-------------:|");
    }
    printf("\n");

    for (size_t r = 0; r < m.n; r++) {
        const eval_manifest_row *row = &m.rows[r];
        eval_gt_result res[MAX_COLUMNS];
        ordered_totals ord[MAX_COLUMNS];
        size_t kept[MAX_COLUMNS];
        int missing[MAX_COLUMNS];
        memset(res, 0, sizeof res);
        for (size_t c = 0; c < ncol; c++) {
            const eval_page *p = eval_find_page(&cols[c].set, row->file);
            missing[c] = !p;
            if (!p)
                fprintf(stderr, "ppocr-eval: %s: no result for %s (scored as empty)\n", cols[c].name, row->file);
            const char **out = calloc(p && p->n_lines ? p->n_lines : 1, sizeof *out);
            if (!out) {
                rc = 2;
                goto out;
            }
            size_t n_out = p ? p->n_lines : 0;
            for (size_t k = 0; k < n_out; k++)
                out[k] = p->lines[k].text;
            int e = eval_score_gt((const char *const *)row->gt, row->n_gt, row->group, row->fold_case, out, n_out, &opt,
                                  &res[c]);
            if (!e)
                e = eval_score_ordered((const char *const *)row->gt, row->n_gt, out, n_out, row->fold_case,
                                       opt.remove_spaces, &ord[c].gt_chars, &ord[c].edits);
            kept[c] = 0;
            for (size_t k = 0; k < row->n_rows && !e; k++) {
                size_t at;
                int ok = eval_row_kept((const char *const *)row->rows[k].seg, row->rows[k].n_seg, out, n_out,
                                       row->fold_case, &at);
                if (ok < 0)
                    e = -1;
                kept[c] += ok == 1;
                if (verbose && ok == 0) {
                    printf("    %s %s row pair lost: GT line %zu \"", cols[c].name, row->file, row->rows[k].index + 1);
                    for (size_t j = 0; j < row->rows[k].n_seg; j++)
                        printf("%s%s", j ? "\" | \"" : "", row->rows[k].seg[j]);
                    printf("\" is not on one output line, left to right\n");
                }
            }
            free(out);
            if (e) {
                fprintf(stderr, "ppocr-eval: out of memory\n");
                rc = 2;
                goto out;
            }
            column *col = &cols[c];
            eval_gt_totals_add(&col->strict, &res[c].group[0]);
            eval_gt_totals_add(&col->separate, &res[c].group[1]);
            eval_gt_totals_add(row->rotated ? &col->rotated : &col->upright, &res[c].group[0]);
            ordered_totals *ot = row->rotated ? &col->ord_rotated : &col->ord_upright;
            ot->gt_chars += ord[c].gt_chars;
            ot->edits += ord[c].edits;
            col->ord_all.gt_chars += ord[c].gt_chars;
            col->ord_all.edits += ord[c].edits;
            col->pairs += row->n_rows;
            col->pairs_kept += kept[c];
            col->cer_sum += eval_cer(&res[c].group[0]);
            col->ord_sum += ordered_cer(&ord[c]);
            col->images++;
            col->missing += (size_t)missing[c];
        }
        for (int g = 0; g < 2; g++) {
            if (!res[0].group[g].gt_lines)
                continue;
            char label[128];
            snprintf(label, sizeof label, "%s%s", row->file, g ? " (separate)" : "");
            printf("| %-36s | %5zu |", label, res[0].group[g].gt_lines);
            for (size_t c = 0; c < ncol; c++) {
                print_cell(&res[c].group[g], missing[c]);
                /* the ordered CER is the whole page's: on its first row */
                int first_row = g == 0 || !res[0].group[0].gt_lines;
                print_order_cell(first_row ? &ord[c] : NULL, missing[c], with_pairs,
                                 first_row && row->has_rows ? &kept[c] : NULL, &row->n_rows);
            }
            printf("\n");
        }
        if (verbose) {
            for (size_t c = 0; c < ncol; c++) {
                for (size_t k = 0; k < row->n_gt; k++) {
                    const eval_gt_line *l = &res[c].lines[k];
                    printf("    %s %s GT %zu%s: \"%s\" <- \"%s\" (%zu edits / %zu)%s\n", cols[c].name, row->file, k + 1,
                           l->group ? " (separate)" : "", row->gt[k], l->matched, l->edits, l->gt_chars,
                           l->recalled ? "" : " NOT RECALLED");
                }
                if (res[c].noise_lines)
                    printf("    %s %s noise: %zu output lines matching no GT line (%zu characters inserted)\n",
                           cols[c].name, row->file, res[c].noise_lines, res[c].noise_chars);
                printf("    %s %s ordered: %zu edits / %zu GT characters (order-free: %zu)\n", cols[c].name, row->file,
                       ord[c].edits, ord[c].gt_chars, res[c].group[0].edits + res[c].group[1].edits);
            }
        }
        for (size_t c = 0; c < ncol; c++)
            eval_gt_result_free(&res[c]);
    }

    const struct {
        const char *label;
        size_t off, ord_off;
        int pairs;
    } rows[] = {
        {"**overall** (all strict lines)", offsetof(column, strict), offsetof(column, ord_all), 1},
        {"upright pages", offsetof(column, upright), offsetof(column, ord_upright), 0},
        {"rotated pages", offsetof(column, rotated), offsetof(column, ord_rotated), 0},
        {"scored separately (eurotext 5+)", offsetof(column, separate), SIZE_MAX, 0},
    };
    for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
        const eval_gt_totals *t0 = (const eval_gt_totals *)((const char *)&cols[0] + rows[k].off);
        printf("| %-36s | %5zu |", rows[k].label, t0->gt_lines);
        for (size_t c = 0; c < ncol; c++) {
            const eval_gt_totals *t = (const eval_gt_totals *)((const char *)&cols[c] + rows[k].off);
            print_cell(t, 0);
            const ordered_totals *o = rows[k].ord_off == SIZE_MAX || !t->gt_lines
                                          ? NULL
                                          : (const ordered_totals *)((const char *)&cols[c] + rows[k].ord_off);
            print_order_cell(o, 0, with_pairs, rows[k].pairs ? &cols[c].pairs_kept : NULL, &cols[c].pairs);
        }
        printf("\n");
    }
    printf("| %-36s | %5s |", "mean of per-image CER (strict)", "");
    for (size_t c = 0; c < ncol; c++) {
        printf(" %12.2f | %15s |", cols[c].images ? 100.0 * cols[c].cer_sum / (double)cols[c].images : 0.0, "");
        printf(" %12.2f   |", cols[c].images ? 100.0 * cols[c].ord_sum / (double)cols[c].images : 0.0);
        if (with_pairs)
            printf(" %12s |", "");
    }
    printf("\n");
    for (size_t c = 0; c < ncol; c++)
        if (cols[c].missing)
            printf("\n* %s: %zu images had no result and were scored as empty.\n", cols[c].name, cols[c].missing);

    double first = 100.0 * eval_cer(&cols[0].strict), last = 100.0 * eval_cer(&cols[ncol - 1].strict);
    if (max_cer >= 0 && first > max_cer) {
        printf("\nFAIL: %s overall CER %.2f%% > %.2f%%\n", cols[0].name, first, max_cer);
        rc = 1;
    }
    if (max_behind >= 0 && ncol > 1 && first > last + max_behind) {
        printf("\nFAIL: %s overall CER %.2f%% is more than %.2f points behind %s (%.2f%%)\n", cols[0].name, first,
               max_behind, cols[ncol - 1].name, last);
        rc = 1;
    }
    double ordered = 100.0 * ordered_cer(&cols[0].ord_all);
    if (max_ordered >= 0 && ordered > max_ordered) {
        printf("\nFAIL: %s overall ordered CER %.2f%% > %.2f%%\n", cols[0].name, ordered, max_ordered);
        rc = 1;
    }
    if (require_pairs && cols[0].pairs_kept < cols[0].pairs) {
        printf("\nFAIL: %s kept %zu of %zu row pairs\n", cols[0].name, cols[0].pairs_kept, cols[0].pairs);
        rc = 1;
    }

out:
    for (size_t c = 0; c < ncol; c++)
        eval_pageset_free(&cols[c].set);
    free(cols);
    eval_manifest_free(&m);
    return rc;
}

/* ------------------------------------------------------------------------ golden */

static int run_golden(int argc, char **argv)
{
    eval_golden_opts opt;
    eval_golden_opts_default(&opt);
    const char *golden_dir = NULL, *results = NULL;
    double max_report = 200;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int has_val = i + 1 < argc;
        double *target = NULL;
        if (!strcmp(a, "--text-ratio"))
            target = &opt.min_text_ratio;
        else if (!strcmp(a, "--cer"))
            target = &opt.max_cer;
        else if (!strcmp(a, "--box-px"))
            target = &opt.box_px;
        else if (!strcmp(a, "--score-tol"))
            target = &opt.score_tol;
        else if (!strcmp(a, "--min-iou"))
            target = &opt.min_iou;
        else if (!strcmp(a, "--max-report"))
            target = &max_report;
        if (target) {
            if (!has_val || parse_double(argv[++i], target)) {
                fprintf(stderr, "ppocr-eval golden: bad value for %s\n", a);
                return 2;
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "ppocr-eval golden: unknown option %s\n", a);
            return 2;
        } else if (!golden_dir)
            golden_dir = a;
        else if (!results)
            results = a;
        else {
            usage(stderr);
            return 2;
        }
    }
    if (!golden_dir || !results) {
        usage(stderr);
        return 2;
    }

    char err[512];
    eval_pageset golden, ours;
    if (eval_load_results(golden_dir, &golden, err, sizeof err)) {
        fprintf(stderr, "ppocr-eval: %s\n", err);
        return 2;
    }
    if (eval_load_results(results, &ours, err, sizeof err)) {
        fprintf(stderr, "ppocr-eval: %s\n", err);
        eval_pageset_free(&golden);
        return 2;
    }
    if (!golden.n) {
        fprintf(stderr, "ppocr-eval: no golden pages in %s\n", golden_dir);
        eval_pageset_free(&golden);
        eval_pageset_free(&ours);
        return 2;
    }
    eval_golden_totals t;
    memset(&t, 0, sizeof t);
    size_t reported = 0, problems = 0;
    /* Mismatches go to a memory stream first so that only the first --max-report are printed. */
    for (size_t i = 0; i < golden.n; i++) {
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        if (!mem) {
            fprintf(stderr, "ppocr-eval: out of memory\n");
            return 2;
        }
        problems +=
            eval_golden_compare_page(&golden.pages[i], eval_find_page(&ours, golden.pages[i].file), &opt, &t, mem);
        fclose(mem);
        for (char *line = buf, *next; line && *line; line = next) {
            next = strchr(line, '\n');
            if (next)
                *next++ = 0;
            if ((double)reported < max_report)
                printf("%s\n", line);
            reported++;
        }
        free(buf);
    }
    if ((double)reported > max_report)
        printf("... %zu more mismatches not shown\n", reported - (size_t)max_report);

    int pass = eval_golden_pass(&t, &opt);
    double ratio = t.golden_lines ? (double)t.text_equal / (double)t.golden_lines : 1.0;
    double cer = t.golden_chars ? (double)t.edits / (double)t.golden_chars : 0.0;
    printf("\npages %zu (missing %zu, line count differs on %zu)\n", t.pages, t.missing_pages, t.count_mismatch_pages);
    printf("lines: golden %zu, ours %zu, paired %zu\n", t.golden_lines, t.our_lines, t.paired);
    printf("identical text: %zu/%zu = %.2f%% (need >= %.2f%%)\n", t.text_equal, t.golden_lines, 100.0 * ratio,
           100.0 * opt.min_text_ratio);
    printf("CER: %zu/%zu = %.3f%% (need <= %.3f%%)\n", t.edits, t.golden_chars, 100.0 * cer, 100.0 * opt.max_cer);
    printf("boxes beyond %.1f px: %zu (largest corner difference %.1f px)\n", opt.box_px, t.box_fail, t.max_corner_px);
    printf("scores beyond %.3f: %zu (largest difference %.4f)\n", opt.score_tol, t.score_fail, t.max_score_diff);
    printf("%s (%zu mismatches)\n", pass ? "PASS" : "FAIL", problems);
    eval_pageset_free(&golden);
    eval_pageset_free(&ours);
    return pass ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "gt"))
        return run_gt(argc - 2, argv + 2);
    if (!strcmp(argv[1], "golden"))
        return run_golden(argc - 2, argv + 2);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return 2;
}
