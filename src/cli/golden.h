/* Golden files for --check: JSON Lines as `ppocr-vk --format json` writes them, one object per
 * image ({"file", "page" for a PDF's page, "width", "height", "lines": [{"text", "score", "box"}]}),
 * read into memory and looked up by file and page. Only what the check compares is kept: words,
 * paragraphs, blocks and timings are read past. */
#ifndef PPOCR_CLI_GOLDEN_H
#define PPOCR_CLI_GOLDEN_H

#include <stddef.h>

/* A golden file is read whole: at most this many bytes. */
#define CLI_GOLDEN_MAX_BYTES (1LL << 30)

struct cli_golden_line {
    char *text;
    size_t text_len; /* a \u0000 escape keeps its NUL: the length, not strlen, is the text's */
    double score;
    double box[4][2];
};

struct cli_golden_page {
    char *file;
    int page;          /* from 1 for a page of a PDF; 0 for an image */
    int width, height; /* -1 when the entry does not give them */
    int n_lines;
    struct cli_golden_line *lines;
    int source_line; /* the golden file's line where the entry begins, for messages */
};

struct cli_golden {
    int n;
    struct cli_golden_page *pages; /* sorted by file, then page */
};

/* Parses JSON Lines text (`name` in messages). Returns 0, or -1 with a one-line reason naming the
 * file and the line ("NAME: line L[, column C]: why"); *g is then empty. */
int cli_golden_parse(const char *text, size_t len, const char *name, struct cli_golden *g, char *err, size_t err_len);
/* Reads and parses the file at path. */
int cli_golden_load(const char *path, struct cli_golden *g, char *err, size_t err_len);
void cli_golden_free(struct cli_golden *g);

/* The entry of `file` and `page`: the one naming it exactly, else the only one of which either
 * file name is a path suffix of the other at a '/' ("/ci/data/a.png" and "data/a.png"), so that
 * goldens made from another folder still match. Returns its index, -1 when there is none, -2 when
 * several entries match by suffix. */
int cli_golden_find(const struct cli_golden *g, const char *file, int page);

#endif
