/* The ground-truth manifest (the corpus's manifest.tsv): one image per row, expected lines, and
 * the scoring rules its notes column asks for. */
#ifndef PPOCR_EVAL_MANIFEST_H
#define PPOCR_EVAL_MANIFEST_H

#include <stddef.h>

/* A ground-truth row printed as separate pieces (a receipt's item and price): its segments. */
typedef struct {
    size_t index; /* the row's GT line, 0-based (the side file's `row`) */
    char **seg;   /* the segments' text, left to right */
    size_t n_seg;
} eval_gt_row;

typedef struct {
    char *file; /* image path relative to the manifest's folder */
    char **gt;  /* expected lines in reading order */
    size_t n_gt;
    int *group;        /* per GT line: 0 strict, 1 scored separately */
    int fold_case;     /* notes say "case-insensitive(ly)" */
    int rotated;       /* notes say the page is rotated: a rotation-handling test */
    int has_rows;      /* a row side file was found (see eval_load_manifest) */
    eval_gt_row *rows; /* its rows of two or more segments, in GT order */
    size_t n_rows;
} eval_manifest_row;

typedef struct {
    char *dir; /* folder of the manifest: images and GT files are relative to it */
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
 * A row side file next to the image, the image's name with its extension replaced by
 * ".rows.tsv" (tab-separated, a header naming the columns `row`, `segment` and `text`; the
 * corpus's receipts have one), gives the rows: segments of one `row` sorted by `segment`.
 * Returns 0 or -1 with a message in err. */
int eval_load_manifest(const char *path, eval_manifest *m, char *err, size_t err_size);

/* The rules above applied to one notes string (exposed for the tests). strict_first/last are
 * 0 when the notes name no strict range. */
void eval_notes_rules(const char *notes, int *fold_case, int *rotated, size_t *strict_first, size_t *strict_last);

/* Keeps the rows whose file matches one of the shell patterns (fnmatch, no flags), in manifest
 * order, and frees the others. Returns the number kept. */
size_t eval_manifest_select(eval_manifest *m, const char *const *globs, size_t n_globs);

void eval_manifest_free(eval_manifest *m);

#endif
