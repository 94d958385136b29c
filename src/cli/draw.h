/* --draw: the image with its text boxes drawn, as a PNG. */
#ifndef PPOCR_CLI_DRAW_H
#define PPOCR_CLI_DRAW_H

#include <stddef.h>

#include "ppocr.h"

/* Writes DIR/NAME.png (cli_write_file_atomic: whole or not at all, creating sub-folders): img
 * with every line's and word's box outlined. Returns 0, or -1 with a one-line reason. */
int cli_draw_boxes(const char *dir, const char *name, const struct ppocr_image *img, const struct ppocr_result *r,
                   char *err, size_t err_len);

#endif
