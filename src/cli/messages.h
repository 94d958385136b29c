/* The command's stderr lines: "ppocr-vk: ..." one line each, whatever the file names and
 * reasons in them hold (control bytes escaped, cli/text_escape.h), written whole through signals. */
#ifndef PPOCR_CLI_MESSAGES_H
#define PPOCR_CLI_MESSAGES_H

#include "cli/output.h"

/* Appends one line, the formatted text made printable (cli_put_line_text) and a newline: fmt
 * ends without one. */
void cli_buf_line(struct cli_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Writes "ppocr-vk: " and the formatted text as one line to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Writes b's bytes to stderr. */
void cli_stderr_write(const struct cli_buf *b);

#endif
