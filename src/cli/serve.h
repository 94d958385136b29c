/* --serve: the long-running mode. Requests come one per line on standard input (a path, or a
 * JSON object: cli/serve_request.h) and each gets exactly one JSON line on standard output, in
 * request order, flushed as soon as it and those before it are done. The engines are made once;
 * -j requests are in flight at once. A bad request gets an error object and the process stays
 * up; the end of input, SIGINT or SIGTERM end it after the requests already begun. */
#ifndef PPOCR_CLI_SERVE_H
#define PPOCR_CLI_SERVE_H

#include "cli/args.h"

/* Returns the exit status: 0 after the end of input or a stop signal, 1 when standard input or
 * output failed, 3 when no engine could be made. */
int cli_serve(const struct cli_args *args);

#endif
