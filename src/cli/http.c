/* The HTTP server on libmicrohttpd: one polling thread of the library receives every request
 * (headers, body) and sends every answer; a request whose body is in is suspended and queued,
 * and one worker thread per engine takes it, reads its fields, decodes, runs the engine, writes
 * the answer and resumes the connection. So a slow OCR never holds up the other connections'
 * uploads, and a client that goes away mid-upload costs nothing but its buffer, freed when the
 * library reports the request over (on_completed). */
#include "cli/http.h"
#include "cli/engines.h"
#include "cli/exit_status.h"
#include "cli/http_paddle.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "cli/pdf.h"
#include "cli/signals.h"
#include "cli/write.h"

#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* PaddleX's serving reads the first 10 pages of a PDF (its max_num_input_imgs): the same bound
 * keeps one request from holding an engine for a whole book. */
#define HTTP_MAX_PDF_PAGES 10
#define HTTP_FORM_MAX_FIELDS 32
#define HTTP_FORM_MAX_TEXT 4096 /* a form's text field (an option, or "file" in base64 is an upload) */
#define HTTP_FORM_NAME_LEN 64
#define HTTP_DRAIN_TIMEOUT_S 30   /* at a stop, how long answers may take to reach their clients */
#define HTTP_EXTRA_CONNECTIONS 64 /* beyond the queue and the engines: uploads in progress, /health */

enum {
    HTTP_OK = 200,
    HTTP_BAD_REQUEST = 400,
    HTTP_NOT_FOUND = 404,
    HTTP_METHOD_NOT_ALLOWED = 405,
    HTTP_TOO_LARGE = 413,
    HTTP_UNPROCESSABLE = 422,
    HTTP_INTERNAL = 500,
    HTTP_UNAVAILABLE = 503,
};

struct form_part {
    char name[HTTP_FORM_NAME_LEN];
    int is_upload;
    struct cli_buf value;
};

struct server;

/* One HTTP request, from its headers until the library reports it over. While it is queued or
 * on a worker its connection is suspended, so the library's thread does not touch it. */
struct request {
    struct server *server;
    struct MHD_Connection *connection;
    char method[16], path[256];
    char log_id[37];
    struct timespec start;
    int ppocr_format; /* ?format=ppocr: ppocr-vk's own JSON lines (--format json) */
    uint64_t received;
    int too_large;                  /* the body passed --http-max-bytes: the rest is read and dropped */
    const char *bad_body;           /* why the body cannot be read (a broken form), or NULL */
    struct cli_buf body;            /* a JSON body */
    int is_form;                    /* multipart/form-data: the body is in parts */
    struct MHD_PostProcessor *form; /* reads the parts while the body comes */
    struct form_part parts[HTTP_FORM_MAX_FIELDS];
    int n_parts;
    char upload_name[256]; /* the uploaded file's name, for ?format=ppocr's "file" */
    int handed;            /* given to the workers: counted in server.in_flight until over */
    int answered;          /* a worker wrote status and answer */
    int status;
    struct cli_buf answer;
    const char *answer_type;
    size_t answer_len;
    struct request *next;
};

struct server {
    const struct cli_args *args;
    struct http_paddle_limits limits;
    struct ppocr_engine **engines;
    int n_engines;
    size_t max_bytes;
    unsigned timeout_s; /* --http-timeout; 0: none */
    pthread_mutex_t lock;
    pthread_cond_t work;
    struct request *head, *tail; /* waiting for an engine */
    int n_waiting, max_waiting;
    int stopping;         /* no request is queued any more; workers leave once the queue is empty */
    atomic_int in_flight; /* handed to the workers and not yet over (answered and sent, or given up) */
};

/* ---- answers ------------------------------------------------------------------------------- */

/* Queues the answer in b (taken over) on the library's thread. */
static enum MHD_Result send_answer(struct request *r, int status, const char *type, struct cli_buf *b,
                                   const char *extra_header, const char *extra_value)
{
    static const char oom[] = "{\"errorCode\":500,\"errorMsg\":\"out of memory\"}\n";
    struct MHD_Response *resp;
    if (b->failed || !b->data) {
        cli_buf_free(b);
        status = HTTP_INTERNAL;
        type = "application/json";
        resp = MHD_create_response_from_buffer(sizeof(oom) - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
    } else {
        resp = MHD_create_response_from_buffer(b->len, b->data, MHD_RESPMEM_MUST_FREE);
        if (resp)
            r->answer_len = b->len;
        else
            cli_buf_free(b);
        *b = (struct cli_buf){0};
    }
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (extra_header)
        MHD_add_response_header(resp, extra_header, extra_value);
    r->status = status;
    enum MHD_Result ok = MHD_queue_response(r->connection, (unsigned)status, resp);
    MHD_destroy_response(resp);
    return ok;
}

/* A PaddleX-style failure ({logId, errorCode = the status, errorMsg}). */
static void format_failure(struct request *r, int status, const char *message)
{
    cli_buf_free(&r->answer);
    http_paddle_format_status(&r->answer, r->log_id, status, message);
    r->status = status;
    r->answer_type = "application/json";
}

static enum MHD_Result fail_now(struct request *r, int status, const char *message)
{
    format_failure(r, status, message);
    const char *header = NULL, *value = NULL;
    if (status == HTTP_METHOD_NOT_ALLOWED) {
        header = MHD_HTTP_HEADER_ALLOW;
        value = strcmp(r->path, "/health") ? "POST" : "GET, HEAD";
    } else if (status == HTTP_UNAVAILABLE) {
        header = MHD_HTTP_HEADER_RETRY_AFTER;
        value = "1";
    }
    return send_answer(r, status, r->answer_type, &r->answer, header, value);
}

/* ---- the OCR of a request (on a worker) ---------------------------------------------------- */

static int read_image(struct server *s, struct ppocr_engine *engine, struct http_paddle_request *req,
                      struct ppocr_result *page, char *err, size_t err_len)
{
    struct ppocr_image img;
    enum ppocr_alpha_mode alpha = s->args->ocr.paddle_parity ? PPOCR_ALPHA_IGNORE : PPOCR_ALPHA_FLATTEN;
    enum ppocr_status st = ppocr_image_load_memory(req->file, req->file_size, "file", alpha, &img, err, err_len);
    http_paddle_request_free(req); /* the pixels from here on */
    if (st)
        return st == PPOCR_ERR_NO_MEMORY ? HTTP_UNAVAILABLE : HTTP_UNPROCESSABLE;
    st = ppocr_engine_run_with(engine, &img, &req->run, page, err, err_len);
    ppocr_image_free(&img);
    return st ? HTTP_INTERNAL : 0;
}

/* pdftoppm reads a file: the bytes go to a temporary file that is unlinked at once and read
 * through /proc/PID/fd, so that nothing is left behind however the process ends. */
static int read_pdf(struct server *s, struct ppocr_engine *engine, struct http_paddle_request *req,
                    struct ppocr_result *pages, int *n_pages, char *err, size_t err_len)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof(path), "%s/ppocr-vk-http-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        snprintf(err, err_len, "cannot make a temporary file for the PDF: %s", strerror(errno));
        return HTTP_INTERNAL;
    }
    unlink(path);
    int failed = cli_write_all(fd, (const char *)req->file, req->file_size);
    http_paddle_request_free(req);
    if (failed) {
        snprintf(err, err_len, "cannot write the PDF to a temporary file: %s", strerror(errno));
        close(fd);
        return HTTP_INTERNAL;
    }
    snprintf(path, sizeof(path), "/proc/%ld/fd/%d", (long)getpid(), fd);
    int count, status = 0;
    char why[512];
    if (cli_pdf_page_count(path, &count, why, sizeof(why))) {
        snprintf(err, err_len, "file: %s", why);
        status = HTTP_UNPROCESSABLE;
    }
    for (int p = 1; !status && p <= count && p <= HTTP_MAX_PDF_PAGES; p++) {
        char label[32];
        snprintf(label, sizeof(label), "file page %d", p);
        struct ppocr_image img;
        if (cli_pdf_load_page(path, p, s->args->pdf_dpi, label, &img, err, err_len)) {
            status = HTTP_UNPROCESSABLE;
            break;
        }
        enum ppocr_status st = ppocr_engine_run_with(engine, &img, &req->run, &pages[*n_pages], err, err_len);
        ppocr_image_free(&img);
        if (st)
            status = HTTP_INTERNAL;
        else
            ++*n_pages;
    }
    close(fd);
    return status;
}

static void serve_ocr(struct server *s, struct ppocr_engine *engine, struct request *r)
{
    char err[1024] = "";
    struct http_paddle_request req;
    int status;
    if (r->is_form) {
        struct http_form_field fields[HTTP_FORM_MAX_FIELDS];
        int out_of_memory = 0;
        for (int i = 0; i < r->n_parts; i++) {
            struct form_part *p = &r->parts[i];
            cli_buf_append(&p->value, "", 1); /* a NUL after the bytes, not counted */
            out_of_memory |= p->value.failed;
            fields[i] = (struct http_form_field){p->name, p->value.data, p->value.len - 1, p->is_upload};
        }
        if (out_of_memory) {
            status = HTTP_UNAVAILABLE;
            snprintf(err, sizeof(err), "out of memory");
        } else {
            status = http_paddle_parse_form(fields, r->n_parts, &s->limits, &req, err, sizeof(err));
        }
        for (int i = 0; i < r->n_parts; i++) {
            if (!out_of_memory && !fields[i].value) /* taken over by the request */
                r->parts[i].value = (struct cli_buf){0};
            cli_buf_free(&r->parts[i].value);
        }
    } else {
        status = r->body.failed ? HTTP_UNAVAILABLE
                                : http_paddle_parse_json(r->body.data ? r->body.data : "", r->body.len, &s->limits,
                                                         &req, err, sizeof(err));
        if (r->body.failed)
            snprintf(err, sizeof(err), "out of memory");
        cli_buf_free(&r->body); /* the decoded file from here on */
    }
    if (status) {
        format_failure(r, status, err);
        return;
    }
    struct ppocr_result pages[HTTP_MAX_PDF_PAGES];
    int n_pages = 0;
    const int is_pdf = req.file_type == HTTP_FILE_PDF ||
                       (req.file_type == HTTP_FILE_GUESS && req.file_size >= 5 && !memcmp(req.file, "%PDF-", 5));
    const struct ppocr_run_options run = req.run;
    if (is_pdf) {
        status = read_pdf(s, engine, &req, pages, &n_pages, err, sizeof(err));
    } else {
        status = read_image(s, engine, &req, &pages[0], err, sizeof(err));
        n_pages = !status;
    }
    if (status) {
        format_failure(r, status, err);
    } else if (r->ppocr_format) {
        struct cli_args format = *s->args;
        format.format = CLI_FORMAT_JSON;
        for (int p = 0; p < n_pages; p++)
            cli_format_result(&r->answer, &format, r->upload_name[0] ? r->upload_name : "file", is_pdf ? p + 1 : 0,
                              &pages[p]);
        r->status = HTTP_OK;
        r->answer_type = "application/x-ndjson";
    } else {
        http_paddle_format_result(&r->answer, r->log_id, pages, n_pages, is_pdf, &run, s->limits.det_db_thresh);
        r->status = HTTP_OK;
        r->answer_type = "application/json";
    }
    for (int p = 0; p < n_pages; p++)
        ppocr_result_free(&pages[p]);
}

struct worker {
    struct server *server;
    struct ppocr_engine *engine;
    pthread_t thread;
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct server *s = w->server;
    for (;;) {
        pthread_mutex_lock(&s->lock);
        while (!s->head && !s->stopping)
            pthread_cond_wait(&s->work, &s->lock);
        struct request *r = s->head;
        if (r) {
            s->head = r->next;
            if (!s->head)
                s->tail = NULL;
            s->n_waiting--;
        }
        pthread_mutex_unlock(&s->lock);
        if (!r)
            return NULL; /* stopping, and nothing left to do */
        serve_ocr(s, w->engine, r);
        r->answered = 1;
        /* r belongs to the library's thread again from here */
        MHD_resume_connection(r->connection);
    }
}

/* ---- the library's callbacks (its polling thread) ------------------------------------------ */

static enum MHD_Result on_form_data(void *cls, enum MHD_ValueKind kind, const char *key, const char *filename,
                                    const char *content_type, const char *transfer_encoding, const char *data,
                                    uint64_t off, size_t size)
{
    struct request *r = cls;
    key = key ? key : "";
    struct form_part *last = r->n_parts ? &r->parts[r->n_parts - 1] : NULL;
    /* a part's first chunk comes at offset 0; an empty first chunk may come before it */
    if (off == 0 && !(last && !last->value.len && !strncmp(last->name, key, sizeof(last->name) - 1))) {
        if (r->n_parts == HTTP_FORM_MAX_FIELDS) {
            r->bad_body = "too many form fields";
            return MHD_NO;
        }
        last = &r->parts[r->n_parts++];
        snprintf(last->name, sizeof(last->name), "%s", key);
        last->is_upload = filename != NULL;
        if (filename && !strcmp(last->name, "file"))
            snprintf(r->upload_name, sizeof(r->upload_name), "%s", filename);
    }
    if (!last->is_upload && last->value.len + size > HTTP_FORM_MAX_TEXT) {
        r->bad_body = "a form's text field is over 4096 bytes (send the file as an upload: a part with a filename)";
        return MHD_NO;
    }
    if (size)
        cli_buf_append(&last->value, data, size);
    return MHD_YES;
}

static void request_free(struct request *r)
{
    if (r->form)
        MHD_destroy_post_processor(r->form);
    for (int i = 0; i < r->n_parts; i++)
        cli_buf_free(&r->parts[i].value);
    cli_buf_free(&r->body);
    cli_buf_free(&r->answer);
    free(r);
}

static int content_type_is(struct MHD_Connection *c, const char *type)
{
    const char *v = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    return v && !strncasecmp(v, type, strlen(type));
}

/* The headers are in: routes the request, answering at once all but a POST /ocr to be read. */
static enum MHD_Result begin(struct server *s, struct request *r, const char *url, const char *method)
{
    struct MHD_Connection *c = r->connection;
    if (!strcmp(url, "/health")) {
        if (strcmp(method, "GET") && strcmp(method, "HEAD"))
            return fail_now(r, HTTP_METHOD_NOT_ALLOWED, "/health answers GET");
        struct cli_buf b = {0};
        http_paddle_format_status(&b, r->log_id, 0, "Healthy");
        return send_answer(r, HTTP_OK, "application/json", &b, NULL, NULL);
    }
    if (strcmp(url, "/ocr"))
        return fail_now(r, HTTP_NOT_FOUND, "no such path: this server answers POST /ocr and GET /health");
    if (strcmp(method, "POST"))
        return fail_now(r, HTTP_METHOD_NOT_ALLOWED, "/ocr answers POST");
    const char *format = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "format");
    if (format && strcmp(format, "ppocr") && strcmp(format, "paddle"))
        return fail_now(r, HTTP_BAD_REQUEST, "format: must be paddle (the default) or ppocr");
    r->ppocr_format = format && !strcmp(format, "ppocr");
    char message[256];
    const char *length = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (length && strtoull(length, NULL, 10) > s->max_bytes) {
        snprintf(message, sizeof(message), "the body is %s bytes, over this server's limit of %zu (--http-max-bytes)",
                 length, s->max_bytes);
        return fail_now(r, HTTP_TOO_LARGE, message);
    }
    pthread_mutex_lock(&s->lock);
    int stopping = s->stopping;
    pthread_mutex_unlock(&s->lock);
    if (stopping)
        return fail_now(r, HTTP_UNAVAILABLE, "the server is stopping");
    if (content_type_is(c, MHD_HTTP_POST_ENCODING_MULTIPART_FORMDATA)) {
        r->is_form = 1;
        r->form = MHD_create_post_processor(c, 16 * 1024, on_form_data, r);
        if (!r->form)
            return fail_now(r, HTTP_BAD_REQUEST, "multipart/form-data without a boundary");
    }
    return MHD_YES; /* JSON whatever the Content-Type says: clients send it as text/plain, as a form... */
}

/* A chunk of the body. Returns MHD_NO to close the connection: a body that goes on long past the
 * limit (no Content-Length said so first) is not read to its end. */
static enum MHD_Result receive(struct server *s, struct request *r, const char *data, size_t size)
{
    r->received += size;
    if (r->too_large || r->bad_body)
        return r->received > 2 * (uint64_t)s->max_bytes ? MHD_NO : MHD_YES;
    if (r->received > s->max_bytes) {
        r->too_large = 1;
        cli_buf_free(&r->body);
        for (int i = 0; i < r->n_parts; i++)
            cli_buf_free(&r->parts[i].value);
        r->n_parts = 0;
        return MHD_YES;
    }
    if (!r->form)
        cli_buf_append(&r->body, data, size);
    else if (MHD_post_process(r->form, data, size) != MHD_YES && !r->bad_body)
        r->bad_body = "the multipart/form-data body is malformed";
    return MHD_YES;
}

/* The body is in: hands the request to the engines' queue, or answers why not. */
static enum MHD_Result finish(struct server *s, struct request *r)
{
    char message[256];
    if (r->answered) {
        /* the idle timeout again, counted from now (the library restarts the clock of a timeout
         * that leaves 0): a client that does not read its answer is closed like an idle one */
        if (s->timeout_s)
            MHD_set_connection_option(r->connection, MHD_CONNECTION_OPTION_TIMEOUT, s->timeout_s);
        return send_answer(r, r->status, r->answer_type, &r->answer, NULL, NULL);
    }
    if (r->too_large) {
        snprintf(message, sizeof(message), "the body is over this server's limit of %zu bytes (--http-max-bytes)",
                 s->max_bytes);
        return fail_now(r, HTTP_TOO_LARGE, message);
    }
    if (r->form) { /* its last part is given to on_form_data now */
        if (MHD_destroy_post_processor(r->form) != MHD_YES && !r->bad_body)
            r->bad_body = "the multipart/form-data body ends early";
        r->form = NULL;
    }
    if (r->bad_body)
        return fail_now(r, HTTP_BAD_REQUEST, r->bad_body);
    pthread_mutex_lock(&s->lock);
    const char *refused = s->stopping ? "the server is stopping" : NULL;
    if (!refused && s->n_waiting >= s->max_waiting) {
        snprintf(message, sizeof(message), "busy: %d requests wait for an engine (--http-queue); retry later",
                 s->n_waiting);
        refused = message;
    }
    if (!refused) {
        /* No idle timeout while the request waits for or runs on an engine, however long:
         * libmicrohttpd already exempts a suspended connection and restarts its clock on
         * resume, but that promise is this server's, so it rests on the connection's own
         * timeout, 0 until the answer is queued (above), not on the library's bookkeeping. */
        if (s->timeout_s)
            MHD_set_connection_option(r->connection, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
        /* suspended before any worker can see it, so that its resume never comes first */
        MHD_suspend_connection(r->connection);
        r->handed = 1;
        atomic_fetch_add(&s->in_flight, 1);
        if (s->tail)
            s->tail->next = r;
        else
            s->head = r;
        s->tail = r;
        s->n_waiting++;
        pthread_cond_signal(&s->work);
    }
    pthread_mutex_unlock(&s->lock);
    if (refused)
        return fail_now(r, HTTP_UNAVAILABLE, refused);
    return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_size, void **con_cls)
{
    struct server *s = cls;
    struct request *r = *con_cls;
    if (!r) {
        r = calloc(1, sizeof(*r));
        if (!r)
            return MHD_NO;
        r->server = s;
        r->connection = c;
        clock_gettime(CLOCK_MONOTONIC, &r->start);
        http_paddle_log_id(r->log_id);
        snprintf(r->method, sizeof(r->method), "%s", method);
        snprintf(r->path, sizeof(r->path), "%s", url);
        *con_cls = r;
        return begin(s, r, url, method);
    }
    if (*upload_size) {
        enum MHD_Result ok = receive(s, r, upload_data, *upload_size);
        *upload_size = 0;
        return ok;
    }
    return finish(s, r);
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls, enum MHD_RequestTerminationCode toe)
{
    struct server *s = cls;
    struct request *r = *con_cls;
    if (!r)
        return;
    struct timespec end;
    clock_gettime(CLOCK_MONOTONIC, &end);
    double ms = (double)(end.tv_sec - r->start.tv_sec) * 1e3 + (double)(end.tv_nsec - r->start.tv_nsec) / 1e6;
    /* a line that ends in the logId is an answer delivered; one that does not says what happened */
    static const char *const endings[] = {
        [MHD_REQUEST_TERMINATED_COMPLETED_OK] = "",
        [MHD_REQUEST_TERMINATED_WITH_ERROR] = "an error",
        [MHD_REQUEST_TERMINATED_TIMEOUT_REACHED] = "timed out",
        [MHD_REQUEST_TERMINATED_DAEMON_SHUTDOWN] = "the server stopped",
        [MHD_REQUEST_TERMINATED_READ_ERROR] = "the client went away",
        [MHD_REQUEST_TERMINATED_CLIENT_ABORT] = "the client went away",
    };
    const char *ending = (unsigned)toe < sizeof(endings) / sizeof(endings[0]) && endings[toe] ? endings[toe] : "";
    char status[16] = "-";
    if (r->status)
        snprintf(status, sizeof(status), "%d", r->status);
    char why[64] = "";
    if (*ending)
        snprintf(why, sizeof(why), " (%s: %s)", r->status ? "answer not delivered" : "not answered", ending);
    cli_error("http: %s %s %s %.1f ms, %llu bytes in, %zu out, logId %s%s", r->method, r->path, status, ms,
              (unsigned long long)r->received, r->answer_len, r->log_id, why);
    if (r->handed)
        atomic_fetch_sub(&s->in_flight, 1);
    request_free(r);
    *con_cls = NULL;
}

/* The library's own complaints, one line each like the command's; those about one request's
 * end are left out, which that request's own line says (on_completed). */
static void on_library_message(void *cls, const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof(line), fmt, ap);
    line[strcspn(line, "\r\n")] = 0;
    static const char *const request_endings[] = {"closed by remote side", "Application reported internal error"};
    for (size_t i = 0; i < sizeof(request_endings) / sizeof(request_endings[0]); i++)
        if (strstr(line, request_endings[i]))
            return;
    cli_error("http: libmicrohttpd: %s", line);
}

/* ---- start and stop --------------------------------------------------------------------------- */

/* "[ADDR:]PORT", ADDR a name, an IPv4 address or an IPv6 one in brackets; 127.0.0.1 by default. */
static int resolve_listen(const char *spec, struct addrinfo **out, char *host, size_t host_len, char *err,
                          size_t err_len)
{
    const char *colon = strrchr(spec, ':');
    const char *port = colon ? colon + 1 : spec;
    size_t len = colon ? (size_t)(colon - spec) : 0;
    if (len >= 2 && spec[0] == '[' && spec[len - 1] == ']') {
        spec++;
        len -= 2;
    }
    if (!colon)
        snprintf(host, host_len, "127.0.0.1");
    else if (len < host_len)
        snprintf(host, host_len, "%.*s", (int)len, spec);
    char *end;
    long p = strtol(port, &end, 10);
    if (!*port || *end || p < 0 || p > 65535 || (colon && !len) || len >= host_len) {
        snprintf(err, err_len, "--http: '%s' is not [ADDR:]PORT (see --help)", spec);
        return 2;
    }
    struct addrinfo hints = {.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM};
    int rc = getaddrinfo(host, port, &hints, out);
    if (rc) {
        snprintf(err, err_len, "--http: cannot resolve '%s': %s", host, gai_strerror(rc));
        return 2;
    }
    return 0;
}

/* Answers what was received, then closes every connection. */
static void stop(struct server *s, struct MHD_Daemon *daemon, struct worker *workers, int n_workers)
{
    MHD_socket listener = MHD_quiesce_daemon(daemon); /* no new connections */
    if (listener != MHD_INVALID_SOCKET)
        close(listener);
    pthread_mutex_lock(&s->lock);
    s->stopping = 1;
    int waiting = s->n_waiting;
    pthread_cond_broadcast(&s->work);
    pthread_mutex_unlock(&s->lock);
    cli_error("http: stopping: answering the %d requests received (%d waiting for an engine)",
              atomic_load(&s->in_flight), waiting);
    for (int i = 0; i < n_workers; i++)
        pthread_join(workers[i].thread, NULL);
    /* every answer is made; give them a while to reach their clients */
    for (int t = 0; atomic_load(&s->in_flight) > 0 && t < HTTP_DRAIN_TIMEOUT_S * 100; t++)
        nanosleep(&(struct timespec){0, 10 * 1000 * 1000}, NULL);
    MHD_stop_daemon(daemon);
}

int cli_http_serve(const struct cli_args *args)
{
    char err[1024], host[256];
    struct addrinfo *addr;
    if (resolve_listen(args->http_listen, &addr, host, sizeof(host), err, sizeof(err))) {
        cli_error("%s", err);
        return EXIT_USAGE;
    }
    struct cli_engines engines;
    int rc = cli_engines_open(args, INT_MAX, &engines);
    if (rc) {
        freeaddrinfo(addr);
        return rc;
    }
    struct server s = {.args = args,
                       .max_bytes = (size_t)args->http_max_bytes,
                       .timeout_s = (unsigned)args->http_timeout,
                       .max_waiting = args->http_queue,
                       .lock = PTHREAD_MUTEX_INITIALIZER,
                       .work = PTHREAD_COND_INITIALIZER};
    ppocr_engine_run_options(engines.engines[0], &s.limits.defaults);
    s.limits.det_db_thresh = args->ocr.det_db_thresh;
    s.limits.have_cls = args->ocr.use_cls;
    /* made here, not on the workers' threads: a server says how many engines it has before it
     * listens, and one that could not be made is one worker fewer */
    struct worker *workers = calloc((size_t)engines.jobs, sizeof(*workers));
    if (!workers) {
        cli_error("out of memory");
        cli_engines_close(&engines);
        freeaddrinfo(addr);
        return EXIT_SOME_FAILED;
    }
    int n_workers = 0;
    for (int i = 0; i < engines.jobs; i++)
        if (!cli_engines_sibling(&engines, i))
            workers[n_workers++].engine = engines.engines[i];

    /* the threads started from here on (the library's, the workers', OpenMP's) inherit a mask
     * that leaves SIGINT and SIGTERM to this thread, which waits for them below */
    sigset_t stop_signals, previous;
    sigemptyset(&stop_signals);
    sigaddset(&stop_signals, SIGINT);
    sigaddset(&stop_signals, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_signals, &previous);
    int started = 0;
    for (; started < n_workers; started++) {
        workers[started].server = &s;
        if (pthread_create(&workers[started].thread, NULL, worker_main, &workers[started]))
            break;
    }
    struct MHD_Daemon *daemon = NULL;
    if (started == n_workers) {
        unsigned flags = MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG;
        if (addr->ai_family == AF_INET6)
            flags |= MHD_USE_IPv6;
        /* the logger first, so that the library's complaints about the other options go through it.
         * The idle timeout closes a connection silent that long: before its request, between
         * requests, or with its headers or body stalled; a request handed to the engines has
         * none until its answer is queued (finish). */
        daemon = MHD_start_daemon(flags, 0, NULL, NULL, on_request, &s, MHD_OPTION_EXTERNAL_LOGGER, on_library_message,
                                  &s, MHD_OPTION_SOCK_ADDR, addr->ai_addr, MHD_OPTION_NOTIFY_COMPLETED, on_completed,
                                  &s, MHD_OPTION_CONNECTION_TIMEOUT, s.timeout_s, MHD_OPTION_CONNECTION_LIMIT,
                                  (unsigned)(s.max_waiting + n_workers + HTTP_EXTRA_CONNECTIONS), MHD_OPTION_END);
        if (!daemon) /* the library said why (on_library_message) */
            cli_error("http: cannot listen on %s", args->http_listen);
    } else {
        cli_error("http: cannot start the worker threads");
    }
    freeaddrinfo(addr);
    if (daemon) {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
        const int v6 = strchr(host, ':') != NULL;
        cli_error("http: listening on http://%s%s%s:%u/ocr (%d engine%s on %s%s; bodies up to %zu bytes)",
                  v6 ? "[" : "", host, v6 ? "]" : "", info ? info->port : 0, n_workers, n_workers > 1 ? "s" : "",
                  ppocr_engine_device(engines.engines[0]), engines.n_devices > 1 ? " and other devices" : "",
                  s.max_bytes);
        sigset_t wait_mask = previous;
        sigdelset(&wait_mask, SIGINT);
        sigdelset(&wait_mask, SIGTERM);
        while (!atomic_load(&cli_stop_requested))
            sigsuspend(&wait_mask);
        pthread_sigmask(SIG_SETMASK, &previous, NULL); /* a second signal stops at once */
        stop(&s, daemon, workers, started);
    } else {
        pthread_mutex_lock(&s.lock);
        s.stopping = 1;
        pthread_cond_broadcast(&s.work);
        pthread_mutex_unlock(&s.lock);
        for (int i = 0; i < started; i++)
            pthread_join(workers[i].thread, NULL);
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    cli_engines_close(&engines);
    free(workers);
    if (daemon)
        cli_error("http: stopped");
    return daemon ? EXIT_ALL_OK : EXIT_SOME_FAILED;
}
