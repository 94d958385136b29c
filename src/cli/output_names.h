/* Where -o and --draw put each image's file, DIR/NAME.EXT: NAME is the file's name for an input
 * file, its path below the folder for an image found in a folder walk, "stdin" for '-', and
 * NAME-pN for page N of a PDF. Two inputs of one NAME would write one file: the later ones are
 * refused. The folders are made before the first image. */
#ifndef PPOCR_CLI_OUTPUT_NAMES_H
#define PPOCR_CLI_OUTPUT_NAMES_H

#include <stddef.h>

#include "cli/inputs.h"

/* Creates `dir` (the value of `option`) and the folders above it, and checks that files can be
 * made in it. Returns 0, or -1 with a one-line reason. */
int cli_prepare_output_dir(const char *option, const char *dir, char *err, size_t err_len);

/* Every item whose output name an earlier item has becomes a failed item (its error says which).
 * Returns 0, or -1 when memory runs out. */
int cli_refuse_shared_names(struct cli_item_list *list);

#endif
