/* Scoring OCR output: against ground truth (CER, line recall) and against reference goldens
 * (parity: line count, text, boxes, scores). Pure functions over in-memory pages, so that the
 * tests call them directly; reading files is results.c / manifest.c. */
#ifndef PPOCR_EVAL_SCORE_H
#define PPOCR_EVAL_SCORE_H

#include <stddef.h>
#include <stdio.h>

#include "text.h"

/* One recognised line as ppocr-vk (and the golden files) write it. */
typedef struct {
    char *text;       /* UTF-8 */
    double score;     /* recognition confidence */
    double box[4][2]; /* corners in PaddleOCR's order: top-left, top-right, bottom-right, bottom-left */
} eval_line;

/* The OCR result of one image. */
typedef struct {
    char *file;        /* as written by the producer; matched to others by path suffix */
    int width, height; /* -1 when unknown */
    eval_line *lines;
    size_t n_lines;
} eval_page;

/* ------------------------------------------------------------------------ ground truth */

typedef struct {
    int remove_spaces; /* compare every line with whitespace removed (default: only CJK lines) */
    double line_cer;   /* a GT line counts as recalled when its CER <= this (default 0.10) */
    double pair_cer;   /* one-to-one pairing accepts a GT/output pair with CER <= this (0.5) */
} eval_gt_opts;

void eval_gt_opts_default(eval_gt_opts *o);

/* Per GT line: what it was matched with and how many edits that costs. */
typedef struct {
    char *matched;   /* the output line(s) assigned to it, joined (UTF-8; "" if none) */
    size_t gt_chars; /* code points of the normalised GT line */
    size_t edits;    /* Levenshtein distance, normalised GT vs normalised matched text */
    int recalled;    /* edits <= line_cer * gt_chars */
    int group;       /* 0: strict, 1: scored separately (e.g. eurotext lines 5+) */
} eval_gt_line;

/* Totals of one group (strict / separate) of one image or of several images. */
typedef struct {
    size_t gt_chars, edits, gt_lines, recalled;
} eval_gt_totals;

typedef struct {
    eval_gt_line *lines; /* n_gt of them, in GT order */
    size_t n_gt;
    eval_gt_totals group[2];         /* group[0].edits includes the noise insertions */
    size_t noise_lines, noise_chars; /* output that matched no GT line at all */
} eval_gt_result;

/* Scores output lines (in the producer's order) against GT lines (in reading order). Each output
 * line is first cut at its tabs (eval_split_fields): its fields are matched one by one.
 *
 * Matching, independent of reading order so that rotated pages and table cells are scored by
 * content:
 *   1. one-to-one: GT/output pairs are taken greedily by lowest CER (ties: closest relative
 *      position) while CER <= pair_cer;
 *   2. every output line left over is appended to the GT line where it lowers that line's edit
 *      distance most, so a line the detector split in two is scored as one line; output that
 *      lowers no line's distance below "all of it inserted" is noise: its length counts as
 *      insertions in the strict group, and no GT line is charged with it.
 * A GT line is normalised with text_normalize (spaces removed when it holds CJK or when
 * remove_spaces, else collapsed; case folded when fold_case), and its outputs with the same rules.
 * group_of: NULL (all strict) or one group (0/1) per GT line.
 * Returns 0, or -1 when out of memory. */
int eval_score_gt(const char *const *gt, size_t n_gt, const int *group_of, int fold_case, const char *const *out,
                  size_t n_out, const eval_gt_opts *opt, eval_gt_result *res);
void eval_gt_result_free(eval_gt_result *res);

void eval_gt_totals_add(eval_gt_totals *acc, const eval_gt_totals *t);
/* edits / gt_chars (0 when there are no GT characters). */
double eval_cer(const eval_gt_totals *t);

/* The order-free matching's output lines: each line cut at its tabs, which ppocr-vk writes between
 * the fields of one row (a table's cells, a receipt's item and price), so that a row is matched
 * cell by cell as its segments were before they were joined. *fields (free with
 * eval_fields_free) holds *n_fields strings. Returns 0, or -1 when out of memory. */
int eval_split_fields(const char *const *out, size_t n_out, char ***fields, size_t *n_fields);
void eval_fields_free(char **fields, size_t n_fields);

/* ------------------------------------------------------------------------ goldens */

typedef struct {
    double min_text_ratio; /* lines with identical text / golden lines, over all pages (0.98) */
    double max_cer;        /* raw-text CER over all pages, unpaired lines included (0.01) */
    double box_px;         /* each corner coordinate within this many pixels (3) */
    double score_tol;      /* |score difference| allowed (0.02) */
    double min_iou;        /* lines pair when their boxes' bounding rectangles overlap this much (0.5) */
} eval_golden_opts;

void eval_golden_opts_default(eval_golden_opts *o);

/* Accumulated over pages. */
typedef struct {
    size_t pages, missing_pages, count_mismatch_pages;
    size_t golden_lines, our_lines, paired, text_equal;
    size_t golden_chars, edits; /* raw code points, no normalisation: this is parity */
    size_t box_fail, score_fail;
    double max_corner_px, max_score_diff;
} eval_golden_totals;

/* Compares one page with its golden and adds to acc. ours == NULL means the page is missing.
 * Mismatches (unpaired lines, text, box, score) are printed to report (NULL: silent), one per
 * line, naming the image, the golden line and ours. Returns the number of mismatches printed. */
size_t eval_golden_compare_page(const eval_page *golden, const eval_page *ours, const eval_golden_opts *opt,
                                eval_golden_totals *acc, FILE *report);

/* 1 when the totals meet every threshold: no missing page, same line count everywhere, no box
 * or score beyond tolerance, text ratio and CER within bounds. */
int eval_golden_pass(const eval_golden_totals *t, const eval_golden_opts *opt);

/* Intersection over union of the axis-aligned bounding rectangles of two quadrilaterals. */
double eval_box_iou(const double a[4][2], const double b[4][2]);

#endif
