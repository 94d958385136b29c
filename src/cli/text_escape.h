/* Names and texts made safe for where they are written: JSON strings that stay valid whatever
 * bytes a file name holds, and one-line text for stderr and text-mode headers that no name can
 * split or turn into a terminal's escape sequence. */
#ifndef PPOCR_CLI_TEXT_ESCAPE_H
#define PPOCR_CLI_TEXT_ESCAPE_H

#include <stddef.h>
#include <stdint.h>

#include "cli/buffer.h"

/* The length of the well-formed UTF-8 sequence at p (its code point in *c), or 0. */
size_t cli_utf8_next(const unsigned char *p, const unsigned char *end, uint32_t *c);

/* s as a JSON string, quotes included: '"', '\\' and control characters escaped, each byte that
 * is not part of well-formed UTF-8 replaced by U+FFFD. */
void cli_put_json_string(struct cli_buf *b, const char *s);

/* s as printable text on one line: tab, newline and carriage return as \t \n \r, the backslash
 * as \\, other control characters (C0, DEL, C1) and bytes that are not well-formed UTF-8 as \xHH
 * (each byte); other UTF-8 passes through. */
void cli_put_line_text(struct cli_buf *b, const char *s);

#endif
