#include "cli/serve_request.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/base64.h"
#include "cli/json.h"
#include "cli/buffer.h"
#include "cli/text_escape.h"

static int set_error(struct serve_request *req, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int set_error(struct serve_request *req, const char *fmt, ...)
{
    char why[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    req->error = strdup(why);
    return req->error ? 0 : -1;
}

/* The id as JSON text: a string (escaped as every string the command writes) or a finite number. */
static int read_id(const json_value *v, struct serve_request *req)
{
    struct cli_buf text = {0};
    if (v->type == JSON_NUMBER) {
        if (!isfinite(v->number))
            return set_error(req, "\"id\" is not a finite number");
        if (v->number == floor(v->number) && fabs(v->number) < 9.007199254740992e15)
            cli_buf_printf(&text, "%.0f", v->number);
        else
            cli_buf_printf(&text, "%.17g", v->number);
    } else if (v->type == JSON_STRING && strlen(v->string) == v->string_len) {
        cli_put_json_string(&text, v->string);
    } else {
        return set_error(req, "\"id\" must be a string (without NUL characters) or a number");
    }
    if (text.failed) {
        cli_buf_free(&text);
        return -1;
    }
    req->id = text.data;
    return 0;
}

static int read_number(const json_value *v, const char *key, double *out, struct serve_request *req)
{
    if (v->type != JSON_NUMBER)
        return set_error(req, "\"%s\" must be a number", key) ? -1 : 1;
    *out = v->number;
    return 0;
}

/* Applies one option member; 1 when it is refused (req->error set), -1 out of memory. */
static int read_option(const char *key, const json_value *v, struct serve_request *req)
{
    struct ppocr_run_options *o = &req->run;
    double x;
    int rc;
    if (!strcmp(key, "use_cls")) {
        if (v->type != JSON_BOOL)
            return set_error(req, "\"use_cls\" must be true or false") ? -1 : 1;
        o->use_cls = v->boolean;
        return 0;
    }
    if (!strcmp(key, "det_db_thresh"))
        return set_error(req, "\"det_db_thresh\" is fixed when the engines are made: start --serve with "
                              "--det-db-thresh") ? -1 : 1;
    if (!strcmp(key, "det_limit_side_len")) {
        if ((rc = read_number(v, key, &x, req)))
            return rc;
        if (x != floor(x) || x < 32 || x > 8192)
            return set_error(req, "\"det_limit_side_len\" must be a whole number from 32 to 8192") ? -1 : 1;
        o->det_limit_side_len = (int)x;
        return 0;
    }
    /* the rest are numbers, checked by the engine's own ranges */
    double *as_double = !strcmp(key, "det_db_box_thresh")     ? &o->det_db_box_thresh
                        : !strcmp(key, "det_db_unclip_ratio") ? &o->det_db_unclip_ratio
                                                              : NULL;
    float *as_float = !strcmp(key, "cls_thresh") ? &o->cls_thresh : !strcmp(key, "drop_score") ? &o->drop_score : NULL;
    if (!as_double && !as_float)
        return set_error(req, "unknown member \"%s\"", key) ? -1 : 1;
    if ((rc = read_number(v, key, &x, req)))
        return rc;
    if (as_double)
        *as_double = x;
    else
        *as_float = (float)x;
    return 0;
}

static int read_object(const json_value *root, struct serve_request *req)
{
    const json_value *id = json_get(root, "id");
    if (id && id->type != JSON_NULL && (read_id(id, req) || req->error))
        return req->error ? 0 : -1;
    const json_value *path = NULL, *image = NULL, *name = NULL;
    for (size_t i = 0; i < root->n_items; i++) {
        const char *key = root->keys[i];
        const json_value *v = &root->items[i];
        if (!strcmp(key, "id"))
            continue;
        if (!strcmp(key, "path") || !strcmp(key, "image") || !strcmp(key, "name")) {
            if (v->type != JSON_STRING || strlen(v->string) != v->string_len)
                return set_error(req, "\"%s\" must be a string (without NUL characters)", key);
            *(key[0] == 'p' ? &path : key[0] == 'i' ? &image : &name) = v;
            continue;
        }
        int rc = read_option(key, v, req);
        if (rc)
            return rc < 0 ? -1 : 0;
    }
    if (!!path == !!image)
        return set_error(req, "a request gives either \"path\" or \"image\"");
    if (path) {
        if (!path->string_len)
            return set_error(req, "\"path\" is empty");
        req->path = strdup(path->string);
        req->name = strdup(name ? name->string : path->string);
        return req->path && req->name ? 0 : -1;
    }
    /* image bytes: base64, or a data URL of them */
    const char *text = image->string;
    size_t len = image->string_len;
    int is_base64;
    if (cli_data_url_payload(image->string, image->string_len, &text, &len, &is_base64) && !is_base64)
        return set_error(req, "\"image\" is a data URL that is not base64");
    char why[256];
    if (cli_base64_decode(text, len, &req->bytes, &req->n_bytes, why, sizeof(why)))
        return set_error(req, "\"image\": %s", why);
    req->name = strdup(name ? name->string : "-");
    return req->name ? 0 : -1;
}

int serve_request_parse(const char *line, size_t len, const struct ppocr_run_options *defaults,
                        struct serve_request *req)
{
    memset(req, 0, sizeof(*req));
    req->run = *defaults;
    size_t lead = 0;
    while (lead < len && (line[lead] == ' ' || line[lead] == '\t'))
        lead++;
    if (lead == len || line[lead] != '{') {
        if (memchr(line, '\0', len))
            return set_error(req, "a path with a NUL character");
        req->path = strndup(line, len);
        req->name = strndup(line, len);
        return req->path && req->name ? 0 : -1;
    }
    json_value root;
    char why[512];
    if (json_parse(line, len, &root, why, sizeof(why)))
        return set_error(req, "not a JSON request: %s", why);
    int rc = root.type == JSON_OBJECT ? read_object(&root, req) : set_error(req, "a request is a JSON object");
    json_free(&root);
    return rc;
}

void serve_request_free(struct serve_request *req)
{
    free(req->id);
    free(req->path);
    free(req->bytes);
    free(req->name);
    free(req->error);
    memset(req, 0, sizeof(*req));
}
