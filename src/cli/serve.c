#include "cli/serve.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/engines.h"
#include "cli/exit_status.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "cli/pdf.h"
#include "cli/serve_request.h"
#include "cli/signals.h"
#include "cli/stream.h"
#include "cli/text_escape.h"
#include "cli/workers.h"
#include "ppocr.h"

/* A request line may carry the largest image file the decoder takes, in base64, and its options. */
#define SERVE_LINE_MAX ((size_t)PPOCR_IMAGE_MAX_FILE_BYTES / 3 * 4 + 4 + (1 << 20))

/* A request from its line to its answer. */
struct slot {
    struct serve_request req;
    int no_memory; /* the request could not even be read */
    struct cli_buf out;
    double taken_ms, work_ms; /* work: decoding and the engine's run, what one-shot runs pay too */
};

struct serve {
    const struct cli_args *args;
    struct cli_engines engines;
    struct ppocr_run_options defaults;
    struct cli_line_reader in;
    struct slot *slots; /* request i in slots[i % window] */
    int window;
    int input_failed, output_broken;
    /* --profile: each request's time from its line read to its answer written, less its work */
    double *overhead_ms;
    size_t n_overhead, cap_overhead;
};

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static struct slot *slot_of(struct serve *sv, int item)
{
    return &sv->slots[item % sv->window];
}

static int fetch_request(void *ctx, int item)
{
    struct serve *sv = ctx;
    struct slot *s = slot_of(sv, item);
    for (;;) {
        char *line, err[256];
        size_t len;
        const enum cli_line_status st =
            cli_read_line(&sv->in, SERVE_LINE_MAX, &cli_stop_requested, &line, &len, err, sizeof(err));
        if (st == CLI_LINE_END)
            return 1;
        if (st == CLI_LINE_ERROR) {
            cli_error("%s", err);
            sv->input_failed = 1;
            return 1;
        }
        memset(s, 0, sizeof(*s));
        s->taken_ms = now_ms();
        if (st == CLI_LINE_TOO_LONG) {
            s->req.error = strdup(err);
            s->no_memory = !s->req.error;
            return 0;
        }
        if (strspn(line, " \t") == len)
            continue; /* a blank line is no request */
        if (serve_request_parse(line, len, &sv->defaults, &s->req)) {
            serve_request_free(&s->req);
            s->no_memory = 1;
        }
        return 0;
    }
}

static void put_error(struct cli_buf *b, const char *lead, const char *name, int page, const char *why)
{
    cli_buf_printf(b, "{%s\"file\":", lead);
    if (name)
        cli_put_json_string(b, name);
    else
        cli_buf_printf(b, "null");
    if (page)
        cli_buf_printf(b, ",\"page\":%d", page);
    cli_buf_printf(b, ",\"error\":");
    cli_put_json_string(b, why);
    cli_buf_printf(b, "}");
}

/* Runs one image and appends its JSON object, or an error object. */
static void run_image(struct serve *sv, struct ppocr_engine *engine, struct slot *s, const char *lead,
                      const struct ppocr_image *img, int page)
{
    struct ppocr_result result;
    char err[1024];
    const double t0 = now_ms();
    const enum ppocr_status rc = ppocr_engine_run_with(engine, img, &s->req.run, &result, err, sizeof(err));
    s->work_ms += now_ms() - t0;
    if (rc) {
        put_error(&s->out, lead, s->req.name, page, err);
        return;
    }
    cli_format_json_object(&s->out, sv->args, lead, s->req.name, page, &result);
    ppocr_result_free(&result);
}

/* A PDF by its path: {"file": ..., "pages": [one object per page]}. */
static void run_pdf(struct serve *sv, struct ppocr_engine *engine, struct slot *s, const char *lead)
{
    char err[1024];
    int pages;
    if (cli_pdf_page_count(s->req.path, &pages, err, sizeof(err))) {
        put_error(&s->out, lead, s->req.name, 0, err);
        return;
    }
    cli_buf_printf(&s->out, "{%s\"file\":", lead);
    cli_put_json_string(&s->out, s->req.name);
    cli_buf_printf(&s->out, ",\"pages\":[");
    for (int p = 1; p <= pages; p++) {
        char label[1024];
        snprintf(label, sizeof(label), "%s page %d", s->req.name, p);
        struct ppocr_image img;
        if (p > 1)
            cli_buf_printf(&s->out, ",");
        if (cli_pdf_load_page(s->req.path, p, sv->args->pdf_dpi, label, &img, err, sizeof(err))) {
            put_error(&s->out, "", s->req.name, p, err);
            continue;
        }
        run_image(sv, engine, s, "", &img, p);
        ppocr_image_free(&img);
    }
    cli_buf_printf(&s->out, "]}");
}

static void work_request(void *ctx, int worker, int item)
{
    struct serve *sv = ctx;
    struct slot *s = slot_of(sv, item);
    struct ppocr_engine *engine = sv->engines.engines[worker];
    struct cli_buf lead = {0};
    if (s->req.id)
        cli_buf_printf(&lead, "\"id\":%s,", s->req.id);
    const char *lead_text = lead.data ? lead.data : "";
    const enum ppocr_alpha_mode alpha = sv->args->ocr.paddle_parity ? PPOCR_ALPHA_IGNORE : PPOCR_ALPHA_FLATTEN;
    char err[1024];
    struct ppocr_image img;
    const double t0 = now_ms();
    if (s->no_memory || lead.failed) {
        put_error(&s->out, "", NULL, 0, "out of memory reading the request");
    } else if (s->req.error) {
        put_error(&s->out, lead_text, s->req.name, 0, s->req.error);
    } else if (s->req.path && cli_pdf_is_pdf(s->req.path)) {
        run_pdf(sv, engine, s, lead_text);
    } else if (s->req.bytes && s->req.n_bytes >= 5 && memcmp(s->req.bytes, "%PDF-", 5) == 0) {
        put_error(&s->out, lead_text, s->req.name, 0, "a PDF is given by its \"path\", not as \"image\" bytes");
    } else if ((s->req.path ? ppocr_image_load_file(s->req.path, alpha, &img, err, sizeof(err))
                            : ppocr_image_load_memory(s->req.bytes, s->req.n_bytes, s->req.name, alpha, &img, err,
                                                      sizeof(err))) != PPOCR_OK) {
        put_error(&s->out, lead_text, s->req.name, 0, err);
    } else {
        free(s->req.bytes); /* the encoded image is not needed while the engine runs */
        s->req.bytes = NULL;
        s->work_ms += now_ms() - t0;
        run_image(sv, engine, s, lead_text, &img, 0);
        ppocr_image_free(&img);
    }
    cli_buf_printf(&s->out, "\n");
    cli_buf_free(&lead);
    if (s->out.failed) {
        cli_buf_free(&s->out);
        put_error(&s->out, "", NULL, 0, "out of memory formatting the result");
        cli_buf_printf(&s->out, "\n");
    }
}

static void note_overhead(struct serve *sv, double ms)
{
    if (sv->n_overhead == sv->cap_overhead) {
        size_t cap = sv->cap_overhead ? sv->cap_overhead * 2 : 1024;
        double *grown = realloc(sv->overhead_ms, cap * sizeof(*grown));
        if (!grown)
            return;
        sv->overhead_ms = grown;
        sv->cap_overhead = cap;
    }
    sv->overhead_ms[sv->n_overhead++] = ms;
}

static int emit_answer(void *ctx, int item)
{
    struct serve *sv = ctx;
    struct slot *s = slot_of(sv, item);
    char err[256];
    if (cli_write_stdout(s->out.data, s->out.len, err, sizeof(err))) {
        cli_error("%s", err);
        sv->output_broken = 1;
    }
    if (sv->args->ocr.profile)
        note_overhead(sv, now_ms() - s->taken_ms - s->work_ms);
    serve_request_free(&s->req);
    cli_buf_free(&s->out);
    return sv->output_broken;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void report_overhead(struct serve *sv)
{
    if (!sv->n_overhead)
        return;
    qsort(sv->overhead_ms, sv->n_overhead, sizeof(double), by_value);
    const size_t n = sv->n_overhead;
    fprintf(stderr, "profile serve: %zu requests, overhead (read to written, less decoding and the engine) median %.3f ms, "
                    "p99 %.3f ms, max %.3f ms\n",
            n, sv->overhead_ms[n / 2], sv->overhead_ms[(n * 99) / 100], sv->overhead_ms[n - 1]);
}

static int worker_init(void *ctx, int worker)
{
    struct serve *sv = ctx;
    return cli_engines_sibling(&sv->engines, worker);
}

int cli_serve(const struct cli_args *args)
{
    struct serve sv = {.args = args, .in = {.fd = STDIN_FILENO}};
    const int failed_start = cli_engines_open(args, INT_MAX, &sv.engines);
    if (failed_start)
        return failed_start;
    const int jobs = sv.engines.jobs;
    sv.window = 4 * jobs;
    sv.slots = calloc((size_t)sv.window, sizeof(*sv.slots));
    int rc = EXIT_ALL_OK;
    if (!sv.slots) {
        cli_error("out of memory");
        rc = EXIT_SOME_FAILED;
    } else {
        ppocr_engine_run_options(sv.engines.engines[0], &sv.defaults);
        const struct cli_workers w = {.n_items = INT_MAX,
                                      .n_workers = jobs,
                                      .window = sv.window,
                                      .ctx = &sv,
                                      .init = worker_init,
                                      .fetch = fetch_request,
                                      .work = work_request,
                                      .emit = emit_answer,
                                      .stop = &cli_stop_requested};
        if (cli_workers_run(&w) < 0) {
            cli_error("cannot start worker threads");
            rc = EXIT_SOME_FAILED;
        }
        if (sv.input_failed || sv.output_broken)
            rc = EXIT_SOME_FAILED;
        report_overhead(&sv);
    }
    cli_engines_close(&sv.engines);
    for (int i = 0; sv.slots && i < sv.window; i++) { /* answers begun but never written */
        serve_request_free(&sv.slots[i].req);
        cli_buf_free(&sv.slots[i].out);
    }
    free(sv.slots);
    free(sv.overhead_ms);
    cli_line_reader_free(&sv.in);
    return rc;
}
