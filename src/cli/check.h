/* --check GOLDEN: each image's result compared with its entry in a golden file (cli/golden.h),
 * a line-by-line diff of what differs, and a summary. Lines are aligned by a diff over the two
 * lists in reading order (lines pair when their boxes overlap), so that one missing or extra line
 * reads as that one line, not as every later line differing. Paired lines compare text (exact,
 * or within --check-edits), box corners (within --check-px) and score (within --check-score).
 * Words, paragraphs and blocks are not compared: they are derived from the lines (README). */
#ifndef PPOCR_CLI_CHECK_H
#define PPOCR_CLI_CHECK_H

#include "cli/args.h"
#include "cli/golden.h"
#include "cli/output.h"
#include "ppocr.h"

/* The defaults, with a margin over the largest differences between devices and precisions on
 * the corpus (README, "Golden check for CI"): line boxes 0 px apart, scores 0.036. */
#define CLI_CHECK_DEFAULT_PX 2.0
#define CLI_CHECK_DEFAULT_SCORE 0.05
#define CLI_CHECK_DEFAULT_EDITS 0

struct cli_check_limits {
    double box_px;     /* each corner's x and y within this many pixels of the golden's */
    double score;      /* |score - golden score| at most this */
    int text_edits;    /* character edits (insert, delete, replace a code point) a text may differ by */
    double drop_score; /* the run's --drop-score: a line scoring below drop_score + score, which
                        * another device may score on the other side of it, may come or go */
};

/* What comparisons found, per image and summed. */
struct cli_check_stats {
    int images, matching, differing;
    int lines_differing, missing, extra;
    int borderline;                  /* unpaired lines near --drop-score, allowed */
    int text_within;                 /* paired lines whose texts differ within --check-edits */
    double max_corner_px, max_score; /* the largest differences of paired lines */
};

/* Compares one image's result with its golden entry: one line per difference appended to out,
 * each beginning "LABEL: ", and the findings added to stats. Returns the number of differences
 * (0: the image matches). */
int cli_check_page(struct cli_buf *out, const char *label, const struct cli_golden_page *golden,
                   const struct ppocr_result *result, const struct cli_check_limits *limits,
                   struct cli_check_stats *stats);

/* A whole --check run: the golden, the limits, what every input found. */
struct cli_check {
    const char *path;
    struct cli_golden golden;
    struct cli_check_limits limits;
    unsigned char *compared; /* per golden entry: an input was compared with it */
    struct cli_check_stats totals;
};

/* One input's comparison, made on a worker's thread and counted in input order. */
struct cli_check_item {
    struct cli_check_stats stats;
    int golden_index; /* -1: none */
};

/* Reads args->check_golden, takes the limits from args (defaults where not given). Returns 0, or
 * -1 with a one-line reason (the file and line of a malformed entry). */
int cli_check_open(struct cli_check *c, const struct cli_args *args, char *err, size_t err_len);
/* The result of input `file` (page: as cli_format_result) against its golden entry; an input
 * that has none differs. Thread-safe: it only reads c. */
void cli_check_item(const struct cli_check *c, struct cli_buf *out, const char *file, int page,
                    const struct ppocr_result *result, struct cli_check_item *item);
/* Adds an item's findings to the totals (on one thread). */
void cli_check_count(struct cli_check *c, const struct cli_check_item *item);
/* The summary line: images matching and differing, `failed` inputs, the limits, the largest
 * differences seen, golden entries no input was compared with. */
void cli_check_summary(const struct cli_check *c, int failed, struct cli_buf *out);
/* Whether every image compared matched. */
int cli_check_all_matched(const struct cli_check *c);
void cli_check_close(struct cli_check *c);

#endif
