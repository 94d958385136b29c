#include "cli/messages.h"
#include "cli/text_escape.h"
#include "cli/write.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void put_line_v(struct cli_buf *b, const char *fmt, va_list ap)
{
    char small[1024], *big = NULL;
    va_list copy;
    va_copy(copy, ap);
    int n = vsnprintf(small, sizeof(small), fmt, copy);
    va_end(copy);
    const char *text = small;
    if (n < 0) {
        text = "(message cannot be formatted)";
    } else if ((size_t)n >= sizeof(small)) {
        big = malloc((size_t)n + 1);
        if (big) {
            vsnprintf(big, (size_t)n + 1, fmt, ap);
            text = big;
        } /* else: the first 1023 bytes */
    }
    cli_put_line_text(b, text);
    cli_buf_printf(b, "\n");
    free(big);
}

void cli_buf_line(struct cli_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    put_line_v(b, fmt, ap);
    va_end(ap);
}

void cli_stderr_write(const struct cli_buf *b)
{
    if (b->len)
        (void)cli_write_all(STDERR_FILENO, b->data, b->len);
}

void cli_error(const char *fmt, ...)
{
    struct cli_buf b = {0};
    cli_buf_printf(&b, "ppocr-vk: ");
    va_list ap;
    va_start(ap, fmt);
    put_line_v(&b, fmt, ap);
    va_end(ap);
    if (b.failed) { /* out of memory: the line as it is */
        cli_buf_free(&b);
        static const char oom[] = "ppocr-vk: out of memory writing a message\n";
        (void)cli_write_all(STDERR_FILENO, oom, sizeof(oom) - 1);
        return;
    }
    cli_stderr_write(&b);
    cli_buf_free(&b);
}
