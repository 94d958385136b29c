#include "cli/stream.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_read_stream(int fd, const char *name, size_t max, const atomic_int *stop, char **data, size_t *len, char *err,
                    size_t err_len)
{
    size_t cap = max < (1 << 16) ? max + 1 : 1 << 16, n = 0;
    char *buf = malloc(cap);
    *data = NULL;
    *len = 0;
    if (!buf) {
        snprintf(err, err_len, "%s: out of memory reading the input", name);
        return -1;
    }
    for (;;) {
        if (*stop) {
            free(buf);
            return 1;
        }
        /* waited for in slices, the flag checked between them: EINTR alone is not enough, as a
         * signal that lands just before read() interrupts nothing, and under -j the signal may be
         * taken by another thread than this one */
        struct pollfd pfd = {.fd = fd, .events = POLLIN};
        int ready = poll(&pfd, 1, 100);
        if (ready == 0 || (ready < 0 && errno == EINTR))
            continue;
        if (n == cap) {
            /* one byte over the limit is read, so that exactly max bytes are accepted */
            if (cap > max) {
                free(buf);
                snprintf(err, err_len, "%s: input too large (more than %zu bytes)", name, max);
                return -1;
            }
            size_t grown_cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
            char *grown = realloc(buf, grown_cap);
            if (!grown) {
                free(buf);
                snprintf(err, err_len, "%s: out of memory reading the input", name);
                return -1;
            }
            buf = grown;
            cap = grown_cap;
        }
        ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue; /* the stop check above decides; a FIFO opened without waiting has no data yet */
        if (got < 0) {
            int e = errno;
            free(buf);
            snprintf(err, err_len, "%s: cannot read: %s", name, strerror(e));
            return -1;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    *data = buf;
    *len = n;
    return 0;
}

/* Waits up to 100 ms for fd to be readable, then reads what is there into r->buf. Returns the bytes
 * read (0: nothing yet, or the end: r->at_end), or -1 with errno. */
static ssize_t fill(struct cli_line_reader *r)
{
    struct pollfd pfd = {.fd = r->fd, .events = POLLIN};
    int ready = poll(&pfd, 1, 100);
    if (ready == 0 || (ready < 0 && errno == EINTR))
        return 0;
    ssize_t got = read(r->fd, r->buf + r->len, r->cap - r->len);
    if (got < 0 && (errno == EINTR || errno == EAGAIN))
        return 0;
    if (got == 0)
        r->at_end = 1;
    if (got > 0)
        r->len += (size_t)got;
    return got;
}

enum cli_line_status cli_read_line(struct cli_line_reader *r, size_t max, const atomic_int *stop, char **line,
                                   size_t *len, char *err, size_t err_len)
{
    int dropping = 0; /* reading past a line over max */
    size_t dropped = 0;
    for (;;) {
        char *nl = r->scanned < r->len ? memchr(r->buf + r->scanned, '\n', r->len - r->scanned) : NULL;
        if (nl || (r->at_end && r->len > r->start)) {
            size_t end = nl ? (size_t)(nl - r->buf) : r->len;
            size_t n = end - r->start;
            char *s = r->buf + r->start;
            r->start = r->scanned = nl ? end + 1 : end;
            if (dropping) {
                snprintf(err, err_len, "a request line of more than %zu bytes (%zu)", max, dropped + n);
                return CLI_LINE_TOO_LONG;
            }
            if (n > max) {
                snprintf(err, err_len, "a request line of more than %zu bytes (%zu)", max, n);
                return CLI_LINE_TOO_LONG;
            }
            if (n && s[n - 1] == '\r')
                n--;
            s[n] = '\0'; /* over the newline, or the byte kept free at the end */
            *line = s;
            *len = n;
            return CLI_LINE_OK;
        }
        if (r->at_end)
            return CLI_LINE_END;
        if (*stop)
            return CLI_LINE_END;
        r->scanned = r->len;
        if (r->len - r->start > max) { /* no newline within max: drop what is held, read on to it */
            dropping = 1;
            dropped += r->len - r->start;
            r->start = r->scanned = r->len = 0;
        }
        if (r->start > 0 && r->start == r->len)
            r->start = r->scanned = r->len = 0;
        if (r->len + 1 >= r->cap) { /* room for one more byte than is held, the NUL's */
            if (r->start > 0) {
                memmove(r->buf, r->buf + r->start, r->len - r->start);
                r->len -= r->start;
                r->scanned -= r->start;
                r->start = 0;
            } else {
                size_t grown_cap = r->cap ? r->cap * 2 : 1 << 16;
                char *grown = realloc(r->buf, grown_cap);
                if (!grown) {
                    snprintf(err, err_len, "out of memory reading a request line");
                    return CLI_LINE_ERROR;
                }
                r->buf = grown;
                r->cap = grown_cap;
            }
        }
        r->cap--; /* fill() leaves the last byte free for the NUL */
        ssize_t got = fill(r);
        r->cap++;
        if (got < 0) {
            snprintf(err, err_len, "cannot read standard input: %s", strerror(errno));
            return CLI_LINE_ERROR;
        }
    }
}

void cli_line_reader_free(struct cli_line_reader *r)
{
    free(r->buf);
    r->buf = NULL;
    r->start = r->len = r->cap = r->scanned = 0;
}
