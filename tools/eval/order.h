/* Reading order: the page's output text, in the producer's line order, against the ground truth
 * in reading order (ordered CER), and whether the segments of one ground-truth row (a receipt's
 * item and price, a label and its value) come out on one output line, left to right (row
 * pairs). Pure functions over in-memory lines, like score.h; the order-free CER is there. */
#ifndef PPOCR_EVAL_ORDER_H
#define PPOCR_EVAL_ORDER_H

#include <stddef.h>

/* Ordered CER of one page: edit distance between the two page strings, over the GT's code
 * points.
 *
 * Each side's lines (GT: all of them, whatever their group; output: as given) are normalised as
 * the order-free scorer does (text_normalize: whitespace collapsed, case folded when fold_case)
 * and the non-empty ones joined by one space, so the page is one run of words: a line the
 * detector split in two, or two GT lines the output joins into one row, costs nothing, while
 * text read out of order (interleaved columns, a footnote in mid-column) costs about its length
 * twice over (deleted where it belongs, inserted where it was read). When any GT line holds CJK,
 * or remove_spaces is set, every line is compared without whitespace and joined without a
 * separator. A tab inside an output line is whitespace like any other.
 *
 * *gt_chars is the length of the GT's page string, separators included (a line break is the
 * space between two words, as a space inside a line is; nothing read scores 100 %), *edits the
 * distance. Returns 0, or -1 when out of memory. */
int eval_score_ordered(const char *const *gt, size_t n_gt, const char *const *out, size_t n_out, int fold_case,
                       int remove_spaces, size_t *gt_chars, size_t *edits);

/* Row pairs: 1 when one output line holds the segments of a GT row (seg[0..n_seg), left to
 * right) in that order; 0 when none does. Compared without whitespace (a tab or a space between
 * item and price, or none, is the same), case folded when fold_case. A segment may be found
 * with one edit per four of its code points, or, when it has two or three, one substituted
 * character (no character missing or added: "TEA" is not the "TA" of "TOTAL"), so a misread
 * digit or letter does not break a row while another row's text seldom stands in for it. Left
 * out of the check: one-character segments (a quantity: any line holds one somewhere, so it says
 * nothing of where its row went), and segments no output line holds at all (never detected, or
 * misread beyond that: the order is not to blame). A row with fewer than two segments left
 * is not kept. *line (may be NULL) receives the index of the first line that holds the row,
 * else SIZE_MAX. Returns -1 when out of memory. */
int eval_row_kept(const char *const *seg, size_t n_seg, const char *const *out, size_t n_out, int fold_case,
                  size_t *line);

#endif
