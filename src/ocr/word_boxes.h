/* The words of a recognised line and their boxes in the source image, as PaddleOCR 3's
 * return_word_box finds them: each kept character's CTC steps are columns of the recogniser's
 * input, which map back through the resize, the turns and the perspective warp of the line's crop.
 * Words are split at spaces; a CJK character (ideographs, kana, hangul, full-width forms) is a
 * word of its own. */
#ifndef PPOCR_OCR_WORD_BOXES_H
#define PPOCR_OCR_WORD_BOXES_H

#include <stddef.h>

#include "ocr/ctc.h"
#include "ppocr.h"

/* CTC's steps for a word begin after its first glyph's ink starts and end before its last glyph's
 * ends, by about a step and a varying part of another: a word reaches these many steps further
 * each way, which covers nearly all of its ink on the corpus's printed Latin lines while leaving
 * the box a pixel or two loose on average, and never past the middle of the gap to its neighbour.
 * A CJK character spans the line's character pitch around the middle of its steps. */
#define OCR_WORD_REACH_BEFORE 1.2
#define OCR_WORD_REACH_AFTER 1.5

/* How a line's recognition input was made from the source image. */
struct word_geometry {
    double src_from_dst[9]; /* the warp: warped crop pixel (u, v) -> source pixel, row-major */
    int crop_w, crop_h;     /* the warp's size */
    int rotate;             /* the warped crop was turned 90 degrees counter-clockwise */
    int flip;               /* and then 180 degrees (after the turn) */
    int input_w;            /* the recogniser's input width */
    int resized_w;          /* its first columns, which the crop fills (the rest is padding) */
};

/* A word: characters first .. first + count - 1 of a ctc_text. */
struct word_span {
    size_t first, count;
    int cjk; /* one CJK character */
};

/* Whether a code point is a CJK character: a word of its own. */
int ocr_word_is_cjk(unsigned cp);

/* Splits t into words (spaces dropped) into spans, which has room for t->n_chars. Returns the
 * count. */
size_t ocr_word_spans(const struct ctc_text *t, struct word_span *spans);

/* The extent [x0, x1] of each word along the crop as the recogniser reads it (0 .. its width),
 * from the steps of its characters: x0[i], x1[i] for spans[i]. */
void ocr_word_extents(const struct ctc_text *t, const struct word_span *spans, size_t n, const struct word_geometry *g,
                      double *x0, double *x1);

/* The quad in the source image of [x0, x1] across the crop's whole height, clockwise from the
 * top-left as the text is read. */
void ocr_word_quad(const struct word_geometry *g, double x0, double x1, int box[4][2]);

/* The words of t with their scores (the mean probability of their characters) and boxes.
 * *words is NULL when there are none. Returns 0, or -1 when out of memory. */
int ocr_words_make(const struct ctc_text *t, const struct word_geometry *g, struct ppocr_word **words, int *n_words);

#endif
