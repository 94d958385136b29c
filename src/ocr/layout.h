/* The page's structure from its recognised lines: segments that share a row joined into one line,
 * lines grouped into paragraphs and blocks (columns, headings, captions, table cells, sidebars),
 * and all of them put in the order a reader takes them. */
#ifndef PPOCR_OCR_LAYOUT_H
#define PPOCR_OCR_LAYOUT_H

#include <stddef.h>

#include "ppocr.h"

/* Leaves the lines in their order and makes the page one block of one paragraph (--paddle-parity).
 * Returns 0, or -1 when out of memory (the result is left as it was). */
int ocr_layout_single(struct ppocr_result *r);

/* Reorders r->lines into reading order, joins the segments of each row and fills r->paragraphs
 * and r->blocks. Returns 0, or -1 when out of memory (the result is left as it was). */
int ocr_layout_page(struct ppocr_result *r);

#endif
