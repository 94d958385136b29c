#include "cli/http_paddle.h"
#include "cli/base64.h"
#include "cli/json.h"
#include "cli/text_escape.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

enum { STATUS_BAD_REQUEST = 400, STATUS_UNPROCESSABLE = 422, STATUS_NO_MEMORY = 503 };

static int refuse(int status, char *err, size_t err_len, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int refuse(int status, char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return status;
}

/* ---- the request's fields ----------------------------------------------------------------- */

/* A field given as null counts as absent, as PaddleX's Optional[...] = None. */
static int given(const json_value *v)
{
    return v && v->type != JSON_NULL;
}

static int get_bool(const char *key, const json_value *v, int *out, char *err, size_t err_len)
{
    if (!given(v))
        return 0;
    if (v->type != JSON_BOOL)
        return refuse(STATUS_UNPROCESSABLE, err, err_len, "%s: must be true, false or null", key);
    *out = v->boolean;
    return 0;
}

static int get_number(const char *key, const json_value *v, double lo, double hi, int integer, double *out, char *err,
                      size_t err_len)
{
    if (!given(v))
        return 0;
    if (v->type != JSON_NUMBER || (integer && v->number != floor(v->number)) || !(v->number >= lo && v->number <= hi))
        return refuse(STATUS_UNPROCESSABLE, err, err_len, "%s: must be %s from %g to %g, or null", key,
                      integer ? "an integer" : "a number", lo, hi);
    *out = v->number;
    return 0;
}

/* Decodes "file": base64 of the file's bytes. A URL is refused: this server fetches nothing (a
 * request must not make it reach other hosts). A data: URL's header is skipped. */
static int decode_file(const json_value *v, struct http_paddle_request *req, char *err, size_t err_len)
{
    if (!v || v->type != JSON_STRING)
        return refuse(STATUS_UNPROCESSABLE, err, err_len, "file: required, the file's bytes in base64");
    const char *text = v->string;
    size_t len = v->string_len;
    if (!strncmp(text, "http://", 7) || !strncmp(text, "https://", 8))
        return refuse(STATUS_UNPROCESSABLE, err, err_len,
                      "file: this server does not fetch URLs: send the file's bytes in base64");
    int is_base64; /* a data URL's payload is decoded as base64 whatever its header says */
    cli_data_url_payload(v->string, v->string_len, &text, &len, &is_base64);
    unsigned char *bytes;
    size_t n;
    char why[256];
    if (cli_base64_decode(text, len, &bytes, &n, why, sizeof(why)))
        return refuse(strstr(why, "out of memory") ? STATUS_NO_MEMORY : STATUS_UNPROCESSABLE, err, err_len,
                      "file: not base64 (%s), nor a URL (which is not fetched)", why);
    if (n == 0) {
        free(bytes);
        return refuse(STATUS_UNPROCESSABLE, err, err_len, "file: empty");
    }
    free(req->file);
    req->file = bytes;
    req->file_size = n;
    return 0;
}

/* Applies one option field; unknown names are ignored, as PaddleX's request models ignore them. */
static int apply_option(const char *key, const json_value *v, const struct http_paddle_limits *limits,
                        struct http_paddle_request *req, char *err, size_t err_len)
{
    struct ppocr_run_options *run = &req->run;
    double d;
    int b = 0, rc = 0;
    if (!strcmp(key, "fileType")) {
        if (given(v) && (v->type != JSON_NUMBER || (v->number != 0 && v->number != 1)))
            return refuse(STATUS_UNPROCESSABLE, err, err_len, "fileType: must be 0 (PDF), 1 (image) or null");
        req->file_type = given(v) ? (int)v->number : HTTP_FILE_GUESS;
    } else if (!strcmp(key, "useDocOrientationClassify") || !strcmp(key, "useDocUnwarping")) {
        /* PaddleOCR's document preprocessor (its own models) is not part of ppocr-vk: a page
         * that needs it would be read as it is, which the client must not mistake for done */
        rc = get_bool(key, v, &b, err, err_len);
        if (!rc && b)
            rc = refuse(STATUS_UNPROCESSABLE, err, err_len,
                        "%s: ppocr-vk has no document preprocessor: send false or null", key);
    } else if (!strcmp(key, "useTextlineOrientation")) {
        b = run->use_cls;
        rc = get_bool(key, v, &b, err, err_len);
        if (!rc && b && !limits->have_cls)
            rc = refuse(STATUS_UNPROCESSABLE, err, err_len,
                        "useTextlineOrientation: this server runs without the classifier (--no-cls)");
        run->use_cls = b;
    } else if (!strcmp(key, "textDetLimitSideLen")) {
        d = run->det_limit_side_len;
        rc = get_number(key, v, 32, 8192, 1, &d, err, err_len);
        run->det_limit_side_len = (int)d;
    } else if (!strcmp(key, "textDetLimitType")) {
        /* ppocr-vk limits the longest side (PaddleOCR 2's "max"), never the shortest */
        if (given(v) && (v->type != JSON_STRING || strcmp(v->string, "max")))
            rc =
                refuse(STATUS_UNPROCESSABLE, err, err_len, "textDetLimitType: ppocr-vk supports \"max\" only, or null");
    } else if (!strcmp(key, "textDetThresh")) {
        d = limits->det_db_thresh;
        rc = get_number(key, v, 0, 1, 0, &d, err, err_len);
        if (!rc && fabs(d - limits->det_db_thresh) > 1e-6)
            rc = refuse(STATUS_UNPROCESSABLE, err, err_len,
                        "textDetThresh: fixed at %g by this server (--det-db-thresh): send that or null",
                        limits->det_db_thresh);
    } else if (!strcmp(key, "textDetBoxThresh")) {
        d = run->det_db_box_thresh;
        rc = get_number(key, v, 0, 1, 0, &d, err, err_len);
        run->det_db_box_thresh = d;
    } else if (!strcmp(key, "textDetUnclipRatio")) {
        d = run->det_db_unclip_ratio;
        rc = get_number(key, v, 0, 100, 0, &d, err, err_len);
        run->det_db_unclip_ratio = d;
    } else if (!strcmp(key, "textRecScoreThresh")) {
        d = run->drop_score;
        rc = get_number(key, v, 0, 1, 0, &d, err, err_len);
        run->drop_score = (float)d;
    } else if (!strcmp(key, "visualize")) {
        rc = get_bool(key, v, &b, err, err_len); /* accepted; no image is drawn (ocrImage null) */
    }
    return rc;
}

static void request_start(const struct http_paddle_limits *limits, struct http_paddle_request *req)
{
    memset(req, 0, sizeof(*req));
    req->file_type = HTTP_FILE_GUESS;
    req->run = limits->defaults;
}

int http_paddle_parse_json(const char *body, size_t len, const struct http_paddle_limits *limits,
                           struct http_paddle_request *req, char *err, size_t err_len)
{
    request_start(limits, req);
    json_value root;
    char why[256];
    if (json_parse(body, len, &root, why, sizeof(why)))
        return refuse(STATUS_BAD_REQUEST, err, err_len, "the body is not JSON: %s", why);
    int rc = 0;
    if (root.type != JSON_OBJECT)
        rc = refuse(STATUS_UNPROCESSABLE, err, err_len, "the body must be a JSON object");
    for (size_t i = 0; !rc && root.type == JSON_OBJECT && i < root.n_items; i++)
        rc = apply_option(root.keys[i], &root.items[i], limits, req, err, err_len);
    if (!rc)
        rc = decode_file(json_get(&root, "file"), req, err, err_len);
    json_free(&root);
    if (rc)
        http_paddle_request_free(req);
    return rc;
}

int http_paddle_parse_form(struct http_form_field *fields, int n_fields, const struct http_paddle_limits *limits,
                           struct http_paddle_request *req, char *err, size_t err_len)
{
    request_start(limits, req);
    int rc = 0, have_file = 0;
    for (int i = 0; !rc && i < n_fields; i++) {
        struct http_form_field *f = &fields[i];
        if (!strcmp(f->name, "file")) {
            have_file = 1;
            if (f->is_upload) {
                if (!f->len) {
                    rc = refuse(STATUS_UNPROCESSABLE, err, err_len, "file: empty");
                    break;
                }
                free(req->file);
                req->file = (unsigned char *)f->value;
                req->file_size = f->len;
                f->value = NULL;
                continue;
            }
        }
        /* a text field holds a JSON value; one that is not JSON is a bare string */
        json_value v;
        if (json_parse(f->value, f->len, &v, NULL, 0)) {
            v = (json_value){.type = JSON_STRING, .string = f->value, .string_len = f->len};
            f->value = NULL;
        }
        rc = !strcmp(f->name, "file") ? decode_file(&v, req, err, err_len)
                                      : apply_option(f->name, &v, limits, req, err, err_len);
        json_free(&v);
    }
    if (!rc && !have_file)
        rc = refuse(STATUS_UNPROCESSABLE, err, err_len, "file: required, a form field holding the file");
    if (rc)
        http_paddle_request_free(req);
    return rc;
}

void http_paddle_request_free(struct http_paddle_request *req)
{
    free(req->file);
    req->file = NULL;
    req->file_size = 0;
}

void http_paddle_log_id(char out[37])
{
    unsigned char r[16];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
        /* no entropy yet (early boot): a log id only has to tell requests apart */
        static atomic_ulong counter;
        unsigned long long t = (unsigned long long)time(NULL) << 20 ^ atomic_fetch_add(&counter, 1);
        for (int i = 0; i < 16; i++)
            r[i] = (unsigned char)(t >> (i % 8 * 8) ^ (unsigned)i * 37u);
    }
    r[6] = (unsigned char)((r[6] & 0x0f) | 0x40); /* version 4 */
    r[8] = (unsigned char)((r[8] & 0x3f) | 0x80); /* RFC 4122 variant */
    snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", r[0], r[1], r[2], r[3],
             r[4], r[5], r[6], r[7], r[8], r[9], r[10], r[11], r[12], r[13], r[14], r[15]);
}

/* ---- the response --------------------------------------------------------------------------- */

static void put_polys(struct cli_buf *b, const struct ppocr_result *r)
{
    cli_buf_printf(b, "[");
    for (int i = 0; i < r->n_lines; i++) {
        const int(*q)[2] = r->lines[i].box;
        cli_buf_printf(b, "%s[[%d,%d],[%d,%d],[%d,%d],[%d,%d]]", i ? "," : "", q[0][0], q[0][1], q[1][0], q[1][1],
                       q[2][0], q[2][1], q[3][0], q[3][1]);
    }
    cli_buf_printf(b, "]");
}

/* One page as PaddleOCR's pipeline prints its "res", less input_path and page_index (what
 * PaddleX's prune_result drops). dt_polys are the lines kept: ppocr-vk does not return the boxes
 * that recognition then dropped. */
static void put_pruned_result(struct cli_buf *b, const struct ppocr_result *r, const struct ppocr_run_options *run,
                              float det_db_thresh)
{
    cli_buf_printf(b, "{\"model_settings\":{\"use_doc_preprocessor\":false,\"use_textline_orientation\":%s},",
                   run->use_cls ? "true" : "false");
    cli_buf_printf(b, "\"dt_polys\":");
    put_polys(b, r);
    cli_buf_printf(b,
                   ",\"text_det_params\":{\"limit_side_len\":%d,\"limit_type\":\"max\",\"thresh\":%g,"
                   "\"box_thresh\":%g,\"unclip_ratio\":%g},\"text_type\":\"general\"",
                   run->det_limit_side_len, det_db_thresh, run->det_db_box_thresh, run->det_db_unclip_ratio);
    /* the classifier's verdict per line: 1 turned 180 degrees, 0 not; -1 when it did not run */
    cli_buf_printf(b, ",\"textline_orientation_angles\":[");
    for (int i = 0; i < r->n_lines; i++)
        cli_buf_printf(b, "%s%d", i ? "," : "", run->use_cls ? r->lines[i].upside_down != 0 : -1);
    cli_buf_printf(b, "],\"text_rec_score_thresh\":%g,\"rec_texts\":[", run->drop_score);
    for (int i = 0; i < r->n_lines; i++) {
        cli_buf_printf(b, "%s", i ? "," : "");
        cli_put_json_string(b, r->lines[i].text);
    }
    cli_buf_printf(b, "],\"rec_scores\":[");
    for (int i = 0; i < r->n_lines; i++)
        cli_buf_printf(b, "%s%.9g", i ? "," : "", r->lines[i].score);
    cli_buf_printf(b, "],\"rec_polys\":");
    put_polys(b, r);
    cli_buf_printf(b, ",\"rec_boxes\":[");
    for (int i = 0; i < r->n_lines; i++) {
        const int(*q)[2] = r->lines[i].box;
        int x0 = q[0][0], y0 = q[0][1], x1 = x0, y1 = y0;
        for (int k = 1; k < 4; k++) {
            x0 = q[k][0] < x0 ? q[k][0] : x0;
            y0 = q[k][1] < y0 ? q[k][1] : y0;
            x1 = q[k][0] > x1 ? q[k][0] : x1;
            y1 = q[k][1] > y1 ? q[k][1] : y1;
        }
        cli_buf_printf(b, "%s[%d,%d,%d,%d]", i ? "," : "", x0, y0, x1, y1);
    }
    cli_buf_printf(b, "]}");
}

void http_paddle_format_result(struct cli_buf *b, const char *log_id, const struct ppocr_result *pages, int n_pages,
                               int is_pdf, const struct ppocr_run_options *run, float det_db_thresh)
{
    cli_buf_printf(b, "{\"logId\":\"%s\",\"errorCode\":0,\"errorMsg\":\"Success\",\"result\":{\"ocrResults\":[",
                   log_id);
    for (int p = 0; p < n_pages; p++) {
        cli_buf_printf(b, "%s{\"prunedResult\":", p ? "," : "");
        put_pruned_result(b, &pages[p], run, det_db_thresh);
        cli_buf_printf(b, ",\"ocrImage\":null,\"docPreprocessingImage\":null,\"inputImage\":null}");
    }
    cli_buf_printf(b, "],\"dataInfo\":");
    if (is_pdf) {
        cli_buf_printf(b, "{\"numPages\":%d,\"pages\":[", n_pages);
        for (int p = 0; p < n_pages; p++)
            cli_buf_printf(b, "%s{\"width\":%d,\"height\":%d}", p ? "," : "", pages[p].width, pages[p].height);
        cli_buf_printf(b, "],\"type\":\"pdf\"}");
    } else {
        cli_buf_printf(b, "{\"width\":%d,\"height\":%d,\"type\":\"image\"}", n_pages ? pages[0].width : 0,
                       n_pages ? pages[0].height : 0);
    }
    cli_buf_printf(b, "}}\n");
}

void http_paddle_format_status(struct cli_buf *b, const char *log_id, int error_code, const char *message)
{
    cli_buf_printf(b, "{\"logId\":\"%s\",\"errorCode\":%d,\"errorMsg\":", log_id, error_code);
    cli_put_json_string(b, message);
    cli_buf_printf(b, "}\n");
}
