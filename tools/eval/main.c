/* ppocr-eval: scores OCR output against ground truth or against the reference's goldens.
 *
 *   ppocr-eval gt [options] MANIFEST RESULTS [RESULTS...]
 *   ppocr-eval golden [options] GOLDEN_DIR RESULTS
 *
 * RESULTS is `ppocr-vk --format json` output (JSON Lines) or a folder of golden files; in gt
 * mode every RESULTS becomes one column of the table, so ppocr-vk and the reference are read side
 * by side. Run without arguments for the options. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "manifest.h"
#include "results.h"
#include "score.h"

static void usage(FILE *f) {
  fputs(
      "usage: ppocr-eval gt [options] MANIFEST RESULTS [RESULTS...]\n"
      "       ppocr-eval golden [options] GOLDEN_DIR RESULTS\n"
      "\n"
      "RESULTS: ppocr-vk --format json output (JSON Lines), or a folder of golden files.\n"
      "\n"
      "gt: CER (Levenshtein over code points, corpus normalisation) and line recall per image and\n"
      "overall, one column per RESULTS (a markdown table).\n"
      "  --compare RESULTS   add a column (same as a further RESULTS argument)\n"
      "  --names A,B,...     column names (default: the RESULTS paths' last components)\n"
      "  --line-cer X        a GT line is recalled when its CER <= X (default 0.10)\n"
      "  --remove-spaces     ignore whitespace in every line (default: only in CJK lines)\n"
      "  --verbose           print every GT line with the output matched to it\n"
      "  --max-cer PCT       exit 1 when the first column's overall CER exceeds PCT percent\n"
      "  --max-behind PTS    exit 1 when the first column's overall CER exceeds the last\n"
      "                      column's by more than PTS percentage points\n"
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

static int parse_double(const char *s, double *out) {
  char *end;
  *out = strtod(s, &end);
  return end == s || *end != 0;
}

/* ------------------------------------------------------------------------ gt */

#define MAX_COLUMNS 8

typedef struct {
  const char *path;
  char name[64];
  eval_pageset set;
  eval_gt_totals strict, separate, upright, rotated;
  double cer_sum;   /* sum of per-image strict CER, for the mean */
  size_t images, missing;
} column;

/* One column pair: CER % and recall ("*": the image had no result). */
static void print_cell(const eval_gt_totals *t, int missing) {
  if (!t->gt_lines) { printf(" %12s | %15s |", "-", "-"); return; }
  char recall[32];
  snprintf(recall, sizeof recall, "%zu/%zu%s", t->recalled, t->gt_lines, missing ? " *" : "");
  printf(" %12.2f | %15s |", 100.0 * eval_cer(t), recall);
}

static int run_gt(int argc, char **argv) {
  eval_gt_opts opt;
  eval_gt_opts_default(&opt);
  const char *names = NULL, *manifest_path = NULL;
  const char *paths[MAX_COLUMNS];
  size_t ncol = 0;
  int verbose = 0;
  double max_cer = -1, max_behind = -1;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int has_val = i + 1 < argc;
    if (!strcmp(a, "--compare") && has_val) {
      if (ncol == MAX_COLUMNS) { fprintf(stderr, "ppocr-eval: at most %d columns\n", MAX_COLUMNS); return 2; }
      paths[ncol++] = argv[++i];
    } else if (!strcmp(a, "--names") && has_val) names = argv[++i];
    else if (!strcmp(a, "--line-cer") && has_val) { if (parse_double(argv[++i], &opt.line_cer)) goto bad; }
    else if (!strcmp(a, "--max-cer") && has_val) { if (parse_double(argv[++i], &max_cer)) goto bad; }
    else if (!strcmp(a, "--max-behind") && has_val) { if (parse_double(argv[++i], &max_behind)) goto bad; }
    else if (!strcmp(a, "--remove-spaces")) opt.remove_spaces = 1;
    else if (!strcmp(a, "--verbose")) verbose = 1;
    else if (a[0] == '-' && a[1]) goto bad;
    else if (!manifest_path) manifest_path = a;
    else {
      if (ncol == MAX_COLUMNS) { fprintf(stderr, "ppocr-eval: at most %d columns\n", MAX_COLUMNS); return 2; }
      paths[ncol++] = a;
    }
    continue;
  bad:
    fprintf(stderr, "ppocr-eval gt: bad option or value: %s\n", a);
    return 2;
  }
  if (!manifest_path || !ncol) { usage(stderr); return 2; }

  char err[512];
  eval_manifest m;
  if (eval_load_manifest(manifest_path, &m, err, sizeof err)) {
    fprintf(stderr, "ppocr-eval: %s\n", err);
    return 2;
  }
  column *cols = calloc(ncol, sizeof *cols);
  if (!cols) { eval_manifest_free(&m); return 2; }
  int rc = 0;
  for (size_t c = 0; c < ncol; c++) {
    cols[c].path = paths[c];
    const char *nm = NULL;
    if (names) { /* the c-th comma-separated name */
      const char *p = names;
      for (size_t k = 0; k < c && p; k++) { p = strchr(p, ','); if (p) p++; }
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
      while (n > 1 && tmp[n - 1] == '/') tmp[--n] = 0;
      const char *slash = strrchr(tmp, '/');
      snprintf(cols[c].name, sizeof cols[c].name, "%.63s", slash ? slash + 1 : tmp);
    }
    if (eval_load_results(paths[c], &cols[c].set, err, sizeof err)) {
      fprintf(stderr, "ppocr-eval: %s\n", err);
      rc = 2;
    }
  }
  if (rc) goto out;

  printf("Ground truth: %s (%zu images). CER %% = edits / GT characters after normalisation; "
         "recall = GT lines with CER <= %.0f%%.\n\n", manifest_path, m.n, 100.0 * opt.line_cer);
  printf("| %-36s | %5s |", "image", "lines");
  for (size_t c = 0; c < ncol; c++) {
    char h1[96], h2[96];
    snprintf(h1, sizeof h1, "%s CER %%", cols[c].name);
    snprintf(h2, sizeof h2, "%s recall", cols[c].name);
    printf(" %12s | %15s |", h1, h2);
  }
  printf("\n|%s|------:|", "--------------------------------------");
  for (size_t c = 0; c < ncol; c++) printf("-------------:|----------------:|");
  printf("\n");

  for (size_t r = 0; r < m.n; r++) {
    const eval_manifest_row *row = &m.rows[r];
    eval_gt_result res[MAX_COLUMNS];
    int missing[MAX_COLUMNS];
    memset(res, 0, sizeof res);
    for (size_t c = 0; c < ncol; c++) {
      const eval_page *p = eval_find_page(&cols[c].set, row->file);
      missing[c] = !p;
      if (!p) fprintf(stderr, "ppocr-eval: %s: no result for %s (scored as empty)\n", cols[c].name, row->file);
      const char **out = calloc(p && p->n_lines ? p->n_lines : 1, sizeof *out);
      if (!out) { rc = 2; goto out; }
      for (size_t k = 0; p && k < p->n_lines; k++) out[k] = p->lines[k].text;
      int e = eval_score_gt((const char *const *)row->gt, row->n_gt, row->group, row->fold_case,
                            out, p ? p->n_lines : 0, &opt, &res[c]);
      free(out);
      if (e) { fprintf(stderr, "ppocr-eval: out of memory\n"); rc = 2; goto out; }
      column *col = &cols[c];
      eval_gt_totals_add(&col->strict, &res[c].group[0]);
      eval_gt_totals_add(&col->separate, &res[c].group[1]);
      eval_gt_totals_add(row->rotated ? &col->rotated : &col->upright, &res[c].group[0]);
      col->cer_sum += eval_cer(&res[c].group[0]);
      col->images++;
      col->missing += (size_t)missing[c];
    }
    for (int g = 0; g < 2; g++) {
      if (!res[0].group[g].gt_lines) continue;
      char label[128];
      snprintf(label, sizeof label, "%s%s", row->file, g ? " (separate)" : "");
      printf("| %-36s | %5zu |", label, res[0].group[g].gt_lines);
      for (size_t c = 0; c < ncol; c++) print_cell(&res[c].group[g], missing[c]);
      printf("\n");
    }
    if (verbose) {
      for (size_t c = 0; c < ncol; c++) {
        for (size_t k = 0; k < row->n_gt; k++) {
          const eval_gt_line *l = &res[c].lines[k];
          printf("    %s %s GT %zu%s: \"%s\" <- \"%s\" (%zu edits / %zu)%s\n", cols[c].name,
                 row->file, k + 1, l->group ? " (separate)" : "", row->gt[k], l->matched, l->edits,
                 l->gt_chars, l->recalled ? "" : " NOT RECALLED");
        }
        if (res[c].noise_lines)
          printf("    %s %s noise: %zu output lines matching no GT line (%zu characters inserted)\n",
                 cols[c].name, row->file, res[c].noise_lines, res[c].noise_chars);
      }
    }
    for (size_t c = 0; c < ncol; c++) eval_gt_result_free(&res[c]);
  }

  const struct { const char *label; size_t off; } rows[] = {
      {"**overall** (all strict lines)", offsetof(column, strict)},
      {"upright pages", offsetof(column, upright)},
      {"rotated pages", offsetof(column, rotated)},
      {"scored separately (eurotext 5+)", offsetof(column, separate)},
  };
  for (size_t k = 0; k < sizeof rows / sizeof rows[0]; k++) {
    const eval_gt_totals *t0 = (const eval_gt_totals *)((const char *)&cols[0] + rows[k].off);
    printf("| %-36s | %5zu |", rows[k].label, t0->gt_lines);
    for (size_t c = 0; c < ncol; c++)
      print_cell((const eval_gt_totals *)((const char *)&cols[c] + rows[k].off), 0);
    printf("\n");
  }
  printf("| %-36s | %5s |", "mean of per-image CER (strict)", "");
  for (size_t c = 0; c < ncol; c++)
    printf(" %12.2f | %15s |", cols[c].images ? 100.0 * cols[c].cer_sum / (double)cols[c].images : 0.0, "");
  printf("\n");
  for (size_t c = 0; c < ncol; c++)
    if (cols[c].missing) printf("\n* %s: %zu images had no result and were scored as empty.\n", cols[c].name, cols[c].missing);

  double first = 100.0 * eval_cer(&cols[0].strict), last = 100.0 * eval_cer(&cols[ncol - 1].strict);
  if (max_cer >= 0 && first > max_cer) {
    printf("\nFAIL: %s overall CER %.2f%% > %.2f%%\n", cols[0].name, first, max_cer);
    rc = 1;
  }
  if (max_behind >= 0 && ncol > 1 && first > last + max_behind) {
    printf("\nFAIL: %s overall CER %.2f%% is more than %.2f points behind %s (%.2f%%)\n",
           cols[0].name, first, max_behind, cols[ncol - 1].name, last);
    rc = 1;
  }

out:
  for (size_t c = 0; c < ncol; c++) eval_pageset_free(&cols[c].set);
  free(cols);
  eval_manifest_free(&m);
  return rc;
}

/* ------------------------------------------------------------------------ golden */

static int run_golden(int argc, char **argv) {
  eval_golden_opts opt;
  eval_golden_opts_default(&opt);
  const char *golden_dir = NULL, *results = NULL;
  double max_report = 200;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    int has_val = i + 1 < argc;
    double *target = NULL;
    if (!strcmp(a, "--text-ratio")) target = &opt.min_text_ratio;
    else if (!strcmp(a, "--cer")) target = &opt.max_cer;
    else if (!strcmp(a, "--box-px")) target = &opt.box_px;
    else if (!strcmp(a, "--score-tol")) target = &opt.score_tol;
    else if (!strcmp(a, "--min-iou")) target = &opt.min_iou;
    else if (!strcmp(a, "--max-report")) target = &max_report;
    if (target) {
      if (!has_val || parse_double(argv[++i], target)) {
        fprintf(stderr, "ppocr-eval golden: bad value for %s\n", a);
        return 2;
      }
    } else if (a[0] == '-' && a[1]) {
      fprintf(stderr, "ppocr-eval golden: unknown option %s\n", a);
      return 2;
    } else if (!golden_dir) golden_dir = a;
    else if (!results) results = a;
    else { usage(stderr); return 2; }
  }
  if (!golden_dir || !results) { usage(stderr); return 2; }

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
    if (!mem) { fprintf(stderr, "ppocr-eval: out of memory\n"); return 2; }
    problems += eval_golden_compare_page(&golden.pages[i], eval_find_page(&ours, golden.pages[i].file),
                                         &opt, &t, mem);
    fclose(mem);
    for (char *line = buf, *next; line && *line; line = next) {
      next = strchr(line, '\n');
      if (next) *next++ = 0;
      if ((double)reported < max_report) printf("%s\n", line);
      reported++;
    }
    free(buf);
  }
  if ((double)reported > max_report) printf("... %zu more mismatches not shown\n", reported - (size_t)max_report);

  int pass = eval_golden_pass(&t, &opt);
  double ratio = t.golden_lines ? (double)t.text_equal / (double)t.golden_lines : 1.0;
  double cer = t.golden_chars ? (double)t.edits / (double)t.golden_chars : 0.0;
  printf("\npages %zu (missing %zu, line count differs on %zu)\n", t.pages, t.missing_pages,
         t.count_mismatch_pages);
  printf("lines: golden %zu, ours %zu, paired %zu\n", t.golden_lines, t.our_lines, t.paired);
  printf("identical text: %zu/%zu = %.2f%% (need >= %.2f%%)\n", t.text_equal, t.golden_lines,
         100.0 * ratio, 100.0 * opt.min_text_ratio);
  printf("CER: %zu/%zu = %.3f%% (need <= %.3f%%)\n", t.edits, t.golden_chars, 100.0 * cer,
         100.0 * opt.max_cer);
  printf("boxes beyond %.1f px: %zu (largest corner difference %.1f px)\n", opt.box_px, t.box_fail,
         t.max_corner_px);
  printf("scores beyond %.3f: %zu (largest difference %.4f)\n", opt.score_tol, t.score_fail,
         t.max_score_diff);
  printf("%s (%zu mismatches)\n", pass ? "PASS" : "FAIL", problems);
  eval_pageset_free(&golden);
  eval_pageset_free(&ours);
  return pass ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc < 2) { usage(stderr); return 2; }
  if (!strcmp(argv[1], "gt")) return run_gt(argc - 2, argv + 2);
  if (!strcmp(argv[1], "golden")) return run_golden(argc - 2, argv + 2);
  if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) { usage(stdout); return 0; }
  usage(stderr);
  return 2;
}
