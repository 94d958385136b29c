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

/* Lines of a stream as they arrive (--serve's requests), read as cli_read_stream reads: the stop
 * flag checked at least every 100 ms while the stream is quiet. Zero-initialise, set fd. */
struct cli_line_reader {
    int fd;
    char *buf;
    size_t start, len, cap, scanned;
    int at_end;
};
enum cli_line_status { CLI_LINE_OK, CLI_LINE_END, CLI_LINE_TOO_LONG, CLI_LINE_ERROR };
/* The next line, without its "\n" (nor a "\r" before it), NUL-terminated in *line, valid until the
 * next call; a last line without "\n" is a line too. CLI_LINE_END: the end of the stream, or *stop
 * set. CLI_LINE_TOO_LONG: a line of more than max bytes, read past and dropped (the next call reads
 * the line after it); CLI_LINE_ERROR: a read error. Both with a one-line reason in err. */
enum cli_line_status cli_read_line(struct cli_line_reader *r, size_t max, const atomic_int *stop, char **line,
                                   size_t *len, char *err, size_t err_len);
void cli_line_reader_free(struct cli_line_reader *r);

#endif
