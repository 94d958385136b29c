/* A growing byte buffer that results are formatted into; out of memory leaves it marked failed
 * rather than failing each call. */
#ifndef PPOCR_CLI_BUFFER_H
#define PPOCR_CLI_BUFFER_H

#include <stddef.h>

struct cli_buf {
    char *data;
    size_t len, cap;
    int failed; /* out of memory: the content is incomplete */
};

void cli_buf_printf(struct cli_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends len bytes (binary data too). */
void cli_buf_append(struct cli_buf *b, const void *data, size_t len);
void cli_buf_free(struct cli_buf *b);

#endif
