#include "cli/buffer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Room for `more` bytes after b's content and a terminating NUL. Returns 0, or -1 with b failed. */
static int buf_reserve(struct cli_buf *b, size_t more)
{
    if (b->failed)
        return -1;
    if (b->cap - b->len > more)
        return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->len <= more)
        cap *= 2;
    char *grown = realloc(b->data, cap);
    if (!grown) {
        b->failed = 1;
        return -1;
    }
    b->data = grown;
    b->cap = cap;
    return 0;
}

void cli_buf_printf(struct cli_buf *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->data ? b->data + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = 1;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        if (buf_reserve(b, (size_t)n))
            return;
    }
}

void cli_buf_append(struct cli_buf *b, const void *data, size_t len)
{
    if (buf_reserve(b, len))
        return;
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = 0;
}

void cli_buf_free(struct cli_buf *b)
{
    free(b->data);
    memset(b, 0, sizeof(*b));
}

/* TSV field: tabs, newlines and backslashes escaped so that one record stays one line. */
