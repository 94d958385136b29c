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
