/* One request of --serve: a line of standard input, either a path or a JSON object
 *   {"id": ..., "path": "scan.png"}  or  {"id": ..., "image": "<base64>", "name": "..."}
 * with optional per-request options named as the command's flags (det_limit_side_len,
 * det_db_box_thresh, det_db_unclip_ratio, use_cls, cls_thresh, drop_score). */
#ifndef PPOCR_CLI_SERVE_REQUEST_H
#define PPOCR_CLI_SERVE_REQUEST_H

#include <stddef.h>

#include "ppocr.h"

struct serve_request {
    char *id;             /* the request's "id" as JSON text (a string or a number), or NULL */
    char *path;           /* a file to read, or NULL */
    unsigned char *bytes; /* image bytes sent in the request ("image"), or NULL */
    size_t n_bytes;
    char *name;                   /* what the result's "file" says: the path, "name", or "-" */
    struct ppocr_run_options run; /* the engine's own, changed by the request's options */
    char *error;                  /* non-NULL: the request cannot be run, and why (one line) */
};

/* Reads a request line (not empty). A line that does not begin with '{' is a path, as it is.
 * Always fills *req (free it with serve_request_free); a bad request gets req->error, and
 * req->id when the id could still be read, so that the answer names it. Returns -1 only when
 * memory runs out. */
int serve_request_parse(const char *line, size_t len, const struct ppocr_run_options *defaults,
                        struct serve_request *req);
void serve_request_free(struct serve_request *req);

#endif
