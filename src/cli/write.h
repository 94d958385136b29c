/* Writes that complete or fail loudly: all of a buffer through signals, and per-image files (-o,
 * --draw) that appear whole under their final name or not at all. A file is written under a
 * short temporary name in its folder and renamed when complete; the temporary names in flight
 * are kept in a list that a signal handler can remove (cli_write_abandon). */
#ifndef PPOCR_CLI_WRITE_H
#define PPOCR_CLI_WRITE_H

#include <stddef.h>

/* Writes all of data to fd, again after EINTR. Returns 0, or -1 with errno. */
int cli_write_all(int fd, const char *data, size_t len);

/* Creates the folder `dir` and those above it. Returns 0, or -1 with errno. */
int cli_make_dirs(const char *dir);

/* DIR/NAME.EXT, malloc'd (free it), or NULL when memory runs out. */
char *cli_output_path(const char *dir, const char *name, const char *ext);
/* Writes data to DIR/NAME.EXT through a temporary file and a rename, creating sub-folders (NAME
 * may hold '/'). Safe on several threads at once. Returns 0, or -1 with a one-line reason that
 * names the final file. */
int cli_write_file_atomic(const char *dir, const char *name, const char *ext, const char *data, size_t len, char *err,
                          size_t err_len);

/* Removes every temporary file being written and makes later ones fail: for a signal handler
 * about to end the process (async-signal-safe). */
void cli_write_abandon(void);

/* The temporary name's pattern, for messages and documentation: ".ppocr-vk-PID-N.tmp". */
#define CLI_WRITE_TEMP_PREFIX ".ppocr-vk-"

#endif
