/* The ground-truth manifest (the corpus's manifest.tsv): one image per row, expected lines, and
 * the scoring rules its notes column asks for. */
#ifndef PPOCR_EVAL_MANIFEST_H
#define PPOCR_EVAL_MANIFEST_H

#include <stddef.h>

typedef struct {
  char *file;        /* image path relative to the manifest's folder */
  char **gt;         /* expected lines in reading order */
  size_t n_gt;
  int *group;        /* per GT line: 0 strict, 1 scored separately */
  int fold_case;     /* notes say "case-insensitive(ly)" */
  int rotated;       /* notes say the page is rotated: a rotation-handling test */
} eval_manifest_row;

typedef struct {
  char *dir;         /* folder of the manifest: images and GT files are relative to it */
  eval_manifest_row *rows;
  size_t n;
} eval_manifest;

/* Reads a tab-separated manifest with a header row naming at least the columns `file` and
 * `ground_truth` (`notes` optional). ground_truth is either the expected lines joined by " | ",
 * or the path of a text file (relative to the manifest) with one expected line per text line
 * (empty lines skipped). The notes column switches rules on:
 *   "case-insensitiv"       -> fold_case
 *   "lines A-B strictly"    -> GT lines A..B (1-based) strict, the others scored separately
 *   "rotated"               -> rotated (reported as its own subtotal)
 * Returns 0 or -1 with a message in err. */
int eval_load_manifest(const char *path, eval_manifest *m, char *err, size_t err_size);

/* The rules above applied to one notes string (exposed for the tests). strict_first/last are
 * 0 when the notes name no strict range. */
void eval_notes_rules(const char *notes, int *fold_case, int *rotated, size_t *strict_first,
                      size_t *strict_last);

void eval_manifest_free(eval_manifest *m);

#endif
