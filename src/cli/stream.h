/* Reading a whole stream (image bytes on stdin) in a way SIGINT and SIGTERM can cut short: the
 * stop flag their handler sets is checked at least every 100 ms while the stream is quiet. A pipe
 * whose writer never closes would otherwise hold the command until it is killed. */
#ifndef PPOCR_CLI_STREAM_H
#define PPOCR_CLI_STREAM_H

#include <stdatomic.h>
#include <stddef.h>

/* Reads fd to its end, at most max bytes, into a malloc'd buffer (*data, *len; free it).
 * `name` is used in messages. Returns 0; 1 when *stop was set before the end (nothing kept);
 * -1 with a one-line reason in err. */
int cli_read_stream(int fd, const char *name, size_t max, const atomic_int *stop, char **data, size_t *len, char *err,
                    size_t err_len);

#endif
