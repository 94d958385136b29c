/* Reading OCR results into pages: ppocr-vk's JSON Lines, or a folder of golden files. */
#ifndef PPOCR_EVAL_RESULTS_H
#define PPOCR_EVAL_RESULTS_H

#include <stddef.h>

#include "cli/json.h"
#include "score.h"

typedef struct {
    eval_page *pages;
    size_t n;
} eval_pageset;

/* One page from a parsed JSON object {"file", "width", "height", "lines": [{"text", "score",
 * "box"}]} (ppocr-vk's --format json line, and the golden files). A bare array of lines (the
 * reference's own output file) is accepted too, with file = fallback_file. Returns 0 or -1 with
 * a message in err. */
int eval_page_from_json(const json_value *v, const char *fallback_file, eval_page *page, char *err, size_t err_size);
void eval_page_free(eval_page *page);

/* One page from plain text, one output line per text line (another OCR tool's text output, such
 * as Tesseract's): blank lines and form feeds are dropped, lines keep their order and have no
 * box (all zero) and score -1. text is modified. Returns 0, or -1 when out of memory. */
int eval_page_from_text(char *text, const char *file, eval_page *page);

/* path is either a file of JSON Lines (one page object per line, as `ppocr-vk --format json`
 * writes) or a folder searched recursively for *.json files, each one page (goldens:
 * {"file":...,"lines":[...]}; the reference's bare arrays are named by their path relative to the
 * folder without ".json"), and *.txt files, each one page of plain text (eval_page_from_text),
 * named by their path without ".txt" (so "x.jpg.txt" is the page of x.jpg; "x.txt" matches it
 * by stem, which fails when the stem holds a dot). JSON files that are not pages (the reference's
 * timings.json) are skipped. Returns 0 or -1 with a message in err. */
int eval_load_results(const char *path, eval_pageset *set, char *err, size_t err_size);
void eval_pageset_free(eval_pageset *set);

/* The page whose file names `file`: equal, or one ends with "/" + the other; failing that the
 * same comparison without file extensions ("tesseract/phototest" matches
 * "/x/tesseract/phototest.png"). NULL when none or more than one page matches. */
const eval_page *eval_find_page(const eval_pageset *set, const char *file);

/* Reads a whole file into a NUL-terminated buffer (free() it); NULL on error (errno set). */
char *eval_read_file(const char *path, size_t *len);

#endif
