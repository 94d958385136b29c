/* Turns the command line's INPUTs (files, directories, '-', @lists) into the ordered list of
 * images to process. An input that cannot be expanded becomes an item carrying its error, so it is
 * reported in order and costs nothing else. */
#ifndef PPOCR_CLI_INPUTS_H
#define PPOCR_CLI_INPUTS_H

#include <stdatomic.h>

/* The bounds of what is listed (README, "Input limits and failures"): an @list is at most
 * CLI_LIST_MAX_BYTES, each of its lines a path of at most CLI_PATH_MAX_BYTES (Linux's PATH_MAX less
 * its NUL), and a folder walk goes CLI_WALK_MAX_DEPTH folders down and keeps to paths of
 * CLI_PATH_MAX_BYTES. What a walk passes over is an item of its own: `skipped (reason)`. */
#define CLI_LIST_MAX_BYTES (64 << 20)
#define CLI_PATH_MAX_BYTES 4095
#define CLI_WALK_MAX_DEPTH 64

struct cli_item {
    char *path;  /* "-" for image bytes on stdin */
    char *name;  /* relative name for per-image output files */
    char *error; /* non-NULL: this input failed before decoding */
    int page;    /* from 1: this page of the PDF `path` (name: NAME-pN); 0: an image */
};

struct cli_item_list {
    int n, cap;
    struct cli_item *items;
};

/* Returns 0, or -1 when memory runs out (message printed). Once *stop is set (SIGINT or SIGTERM,
 * which also cut short a list read blocked on a pipe), the inputs not yet expanded are dropped:
 * the caller sees *stop and processes nothing. */
int cli_expand_inputs(char *const *inputs, int n_inputs, const atomic_int *stop, struct cli_item_list *list);
/* Keeps only the K-th (1-based) of N contiguous slices, so shard outputs concatenate in order. */
void cli_keep_shard(struct cli_item_list *list, int k, int n);
void cli_free_items(struct cli_item_list *list);

#endif
