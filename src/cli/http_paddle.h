/* PaddleOCR 3's serving API for its OCR pipeline (PaddleX basic serving, POST /ocr), as far as
 * ppocr-vk's results carry it: the request's fields read into a file and one run's options, and
 * the response's JSON written from results. README.md ("HTTP server") lists which fields are
 * filled and which are null. No HTTP here: the server is cli/http.c. */
#ifndef PPOCR_CLI_HTTP_PADDLE_H
#define PPOCR_CLI_HTTP_PADDLE_H

#include <stddef.h>

#include "cli/buffer.h"
#include "ppocr.h"

/* "fileType": 0 a PDF, 1 an image; null or absent: told by the bytes' signature. */
enum http_file_type { HTTP_FILE_GUESS = -1, HTTP_FILE_PDF = 0, HTTP_FILE_IMAGE = 1 };

/* What the server's engines were made with: the options a request starts from, and those it
 * cannot change. */
struct http_paddle_limits {
    struct ppocr_run_options defaults; /* the engines' own (ppocr_engine_run_options) */
    float det_db_thresh;               /* fixed when an engine is made: a request may only repeat it */
    int have_cls;                      /* the classifier is loaded: useTextlineOrientation may be true */
};

struct http_paddle_request {
    unsigned char *file; /* the file's bytes (malloc'd; free with http_paddle_request_free) */
    size_t file_size;
    int file_type; /* enum http_file_type */
    struct ppocr_run_options run;
};

/* One field of a multipart/form-data body, as the server gathered it. */
struct http_form_field {
    char *name;
    char *value; /* malloc'd, NUL-terminated after len bytes; parsing may take it over (then NULL) */
    size_t len;
    int is_upload; /* the part named a filename: a file's raw bytes, not text */
};

/* Reads a JSON body (an object with "file" in base64 and the options). Returns 0 with req filled,
 * or the HTTP status to answer with a one-line reason in err: 400 when the body is not JSON, 422
 * when a field is missing, of the wrong type, out of range, asks for what this server cannot do
 * (a URL to fetch, a document preprocessor, another textDetThresh), or "file" is not base64. */
int http_paddle_parse_json(const char *body, size_t len, const struct http_paddle_limits *limits,
                           struct http_paddle_request *req, char *err, size_t err_len);
/* The same from a form's fields: "file" an uploaded file (its bytes as they are) or a text field
 * (base64, as in JSON), the options text fields holding JSON values (960, true, null) or a bare
 * string ("max"). */
int http_paddle_parse_form(struct http_form_field *fields, int n_fields, const struct http_paddle_limits *limits,
                           struct http_paddle_request *req, char *err, size_t err_len);
void http_paddle_request_free(struct http_paddle_request *req);

/* A request's logId: a random UUID (version 4), 36 characters and a NUL. */
void http_paddle_log_id(char out[37]);

/* The success body: one entry of ocrResults per page (one for an image), dataInfo of an image
 * or of a PDF's pages rendered. */
void http_paddle_format_result(struct cli_buf *b, const char *log_id, const struct ppocr_result *pages, int n_pages,
                               int is_pdf, const struct ppocr_run_options *run, float det_db_thresh);
/* A body without a result: {"logId", "errorCode", "errorMsg"}. errorCode is the HTTP status of a
 * failure (as PaddleX answers), 0 for /health's "Healthy". */
void http_paddle_format_status(struct cli_buf *b, const char *log_id, int error_code, const char *message);

#endif
