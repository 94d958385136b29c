/* The HTTP server (--http [ADDR:]PORT): POST /ocr in PaddleOCR 3's serving API (cli/http_paddle.h),
 * with a JSON body (the file in base64) or a multipart/form-data upload (field "file"), and GET
 * /health. The engines are made once (-j of them, one thread each); requests whose body is in
 * wait in a bounded queue for the next free engine. Built with libmicrohttpd (Debian's
 * libmicrohttpd-dev); a build without it says so (http_none.c). */
#ifndef PPOCR_CLI_HTTP_H
#define PPOCR_CLI_HTTP_H

#include "cli/args.h"

#define CLI_HTTP_DEFAULT_MAX_BYTES (64 << 20) /* a request's body, at most */
#define CLI_HTTP_DEFAULT_QUEUE 256            /* requests waiting for an engine, at most */
#define CLI_HTTP_DEFAULT_TIMEOUT_S 60         /* seconds a connection may be silent */

/* Serves until SIGINT or SIGTERM, then answers the requests received and returns 0. Returns the
 * command's exit status otherwise (cli/exit_status.h): 1 when it cannot listen, 2 for an address
 * that is not [ADDR:]PORT (or a build without an HTTP server), 3 without a usable device or models. */
int cli_http_serve(const struct cli_args *args);

#endif
