/* Fuzz target: a --serve request line (cli/serve_request.h), hostile by nature: the JSON reader,
 * base64, the id's re-escaping and the options' checks. A parsed request's fields must be
 * consistent: an error, or exactly one of a path and image bytes, with a name. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/serve_request.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct ppocr_run_options defaults = {.det_limit_side_len = 960,
                                               .det_db_box_thresh = 0.6,
                                               .det_db_unclip_ratio = 1.5,
                                               .use_cls = 1,
                                               .cls_thresh = 0.9f,
                                               .drop_score = 0.5f};
    struct serve_request req;
    if (serve_request_parse((const char *)data, size, &defaults, &req) == 0 && !req.error) {
        if (!req.name || !!req.path == !!req.bytes)
            abort();
        if (req.path)
            (void)strlen(req.path);
        if (req.id)
            (void)strlen(req.id);
    }
    serve_request_free(&req);
    return 0;
}
