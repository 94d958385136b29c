/* ppocr-vk: the command. Owns arguments, input discovery and output; the OCR itself is the
 * engine's (src/ocr/engine.h). */
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/bench.h"
#include "cli/draw.h"
#include "cli/inputs.h"
#include "cli/output.h"
#include "cli/pdf.h"
#include "cli/stream.h"
#include "cli/workers.h"
#include "ppocr.h"

enum { EXIT_ALL_OK = 0, EXIT_SOME_FAILED = 1, EXIT_USAGE = 2, EXIT_NO_DEVICE_OR_MODELS = 3 };

/* Read by the worker threads too, so an atomic rather than a volatile sig_atomic_t: a handler may
 * store to a lock-free one. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the stop flag is set from a signal handler");
static atomic_int stop_requested;

static void on_stop_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

static void install_signal_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    /* no SA_RESTART: getline blocked on an @- list from a pipe whose writer never closes must
     * return EINTR, so that the stop is seen and the wait ends (inputs.c) */
    sa.sa_flags = 0;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* A closed stdout must come back as a write error we report, not kill us silently. */
    signal(SIGPIPE, SIG_IGN);
}

static void progress(int done, int total)
{
    int width = 30, filled = total ? done * width / total : width;
    fprintf(stderr, "\r[%.*s%*s] %d/%d", filled, "##############################", width - filled, "", done, total);
    if (done == total)
        fputc('\n', stderr);
    fflush(stderr);
}

/* Decodes one item: a file, or image bytes on stdin. Alpha is flattened so that text drawn only
 * in the alpha channel stays visible, except in --paddle-parity, which drops it as cv2.imread.
 * Returns 0, -1 (reason in err), or 1 when a stop signal ended the read of stdin. */
static int load_item(const struct cli_item *item, int parity, struct ppocr_image *img, char *err, size_t err_len)
{
    enum ppocr_alpha_mode alpha = parity ? PPOCR_ALPHA_IGNORE : PPOCR_ALPHA_FLATTEN;
    if (strcmp(item->path, "-") != 0)
        return ppocr_image_load_file(item->path, alpha, img, err, err_len) == PPOCR_OK ? 0 : -1;
    /* read here, not by ppocr_image_load_fd, which reads on through signals until the end of input */
    char *data;
    size_t size;
    int rc = cli_read_stream(STDIN_FILENO, "stdin", (size_t)PPOCR_IMAGE_MAX_FILE_BYTES, &stop_requested, &data, &size,
                             err, err_len);
    if (rc)
        return rc;
    if (size >= 5 && memcmp(data, "%PDF-", 5) == 0) { /* pdftoppm reads its pages from a file */
        snprintf(err, err_len, "stdin: a PDF is read from its file, not from stdin: give its path");
        free(data);
        return -1;
    }
    rc = ppocr_image_load_memory(data, size, "stdin", alpha, img, err, err_len) == PPOCR_OK ? 0 : -1;
    free(data);
    return rc;
}

static int interrupted(void)
{
    fprintf(stderr, "ppocr-vk: interrupted; the remaining inputs were not processed\n");
    return EXIT_SOME_FAILED;
}

/* What one input produced, kept until it is written out in input order. */
struct outcome {
    struct cli_buf out;  /* formatted result, for stdout or the -o file */
    struct cli_buf errs; /* its stderr lines (errors, --profile) */
    int failed;
    int stopped; /* a stop signal ended the read of stdin: never begun */
};

struct run {
    const struct cli_args *args;
    struct cli_item_list items;
    struct ppocr_engine **engines; /* one per worker */
    struct outcome *outcomes;
    int text_headers, show_progress;
    int failed, output_broken;
};

/* Decodes, recognises, draws and formats item i on `engine`; writes nothing. */
static void process_item(struct run *run, struct ppocr_engine *engine, int i)
{
    const struct cli_args *args = run->args;
    const struct cli_item *item = &run->items.items[i];
    struct outcome *o = &run->outcomes[i];
    const char *file = item->path;
    char err[1024], page_label[1024];
    if (item->page) { /* messages name the page, results carry its number apart */
        snprintf(page_label, sizeof(page_label), "%s page %d", item->path, item->page);
        file = page_label;
    }
    if (item->error) {
        cli_buf_printf(&o->errs, "ppocr-vk: %s: %s\n", file, item->error);
        o->failed = 1;
        return;
    }
    struct ppocr_image img;
    int loaded = item->page ? cli_pdf_load_page(item->path, item->page, args->pdf_dpi, file, &img, err, sizeof(err))
                            : load_item(item, args->ocr.paddle_parity, &img, err, sizeof(err));
    if (loaded > 0) {
        o->stopped = 1;
        return;
    }
    if (loaded) {
        cli_buf_printf(&o->errs, "ppocr-vk: %s\n", err);
        o->failed = 1;
        return;
    }
    struct ppocr_result result;
    int rc = ppocr_engine_run(engine, &img, &result, err, sizeof(err));
    if (rc == 0 && args->draw_dir && cli_draw_boxes(args->draw_dir, item->name, &img, &result, err, sizeof(err))) {
        cli_buf_printf(&o->errs, "ppocr-vk: %s: %s\n", file, err);
        o->failed = 1;
    }
    ppocr_image_free(&img);
    if (rc) {
        cli_buf_printf(&o->errs, "ppocr-vk: %s: %s\n", file, err);
        o->failed = 1;
        return;
    }
    if (args->ocr.profile) {
        cli_buf_printf(&o->errs, "profile %s:", file);
        for (int s = 0; s < PPOCR_STAGE_COUNT; s++)
            cli_buf_printf(&o->errs, " %s %.2f/%.2f ms", ppocr_stage_name(s), result.wall_ms[s], result.gpu_ms[s]);
        cli_buf_printf(&o->errs, " (wall/gpu)\n");
    }
    if (args->format == CLI_FORMAT_TSV && args->output_dir)
        cli_format_tsv_header(&o->out);
    if (run->text_headers)
        cli_buf_printf(&o->out, "%s==> %s <==\n", i ? "\n" : "", file);
    cli_format_result(&o->out, args, item->path, item->page, &result);
    ppocr_result_free(&result);
    if (o->out.failed) {
        cli_buf_printf(&o->errs, "ppocr-vk: %s: out of memory formatting the result\n", file);
        o->failed = 1;
        cli_buf_free(&o->out);
    }
}

/* Writes item i's outcome; non-zero once no further output can be written. */
static int emit_item(struct run *run, int i)
{
    const struct cli_args *args = run->args;
    const struct cli_item *item = &run->items.items[i];
    struct outcome *o = &run->outcomes[i];
    char err[1024];
    if (o->errs.len)
        fwrite(o->errs.data, 1, o->errs.len, stderr);
    run->failed += o->failed;
    if (o->out.len) {
        if (args->output_dir) {
            if (cli_write_file_atomic(args->output_dir, item->name, cli_format_extension(args->format), o->out.data,
                                      o->out.len, err, sizeof(err))) {
                fprintf(stderr, "ppocr-vk: %s: %s\n", item->path, err);
                run->failed++;
            }
        } else if (cli_write_stdout(o->out.data, o->out.len, err, sizeof(err))) {
            fprintf(stderr, "ppocr-vk: %s\n", err);
            run->output_broken = 1;
        }
    }
    cli_buf_free(&o->out);
    cli_buf_free(&o->errs);
    if (run->show_progress && !o->stopped)
        progress(i + 1, run->items.n);
    return run->output_broken || o->stopped;
}

static int worker_init(void *ctx, int worker)
{
    struct run *run = ctx;
    if (run->engines[worker])
        return 0;
    char err[1024];
    ppocr_engine_create_sibling(run->engines[0], &run->engines[worker], err, sizeof(err));
    if (!run->engines[worker]) {
        fprintf(stderr, "ppocr-vk: worker %d goes without an engine: %s\n", worker + 1, err);
        return -1;
    }
    return 0;
}

static void worker_work(void *ctx, int worker, int item)
{
    struct run *run = ctx;
    process_item(run, run->engines[worker], item);
}

static int worker_emit(void *ctx, int item)
{
    return emit_item(ctx, item);
}

/* Engines to run: --jobs, or by default one per CPU core on a discrete GPU (2 to 16), two on
 * another GPU, so that images' CPU stages (decoding, DB post-processing) overlap other images'
 * GPU work. On a discrete GPU's 16-core host, both a folder of pages and a folder of varied
 * images (large scans among them, whose decoding holds an engine a long while) ran fastest with
 * eight to sixteen engines (BENCHMARKS.md). One on a CPU device, whose driver already uses every
 * core.
 * Each engine adds its own activation memory, which an integrated GPU shares with the host.
 * Image bytes on stdin keep one, so that a stop signal reaches the thread that is reading them. */
static int job_count(const struct run *run)
{
    if (run->items.n < 2)
        return 1;
    for (int i = 0; i < run->items.n; i++)
        if (!strcmp(run->items.items[i].path, "-"))
            return 1;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int discrete = cores >= 16 ? 16 : cores >= 2 ? (int)cores : 2;
    const int by_class[] = {
        [PPOCR_DEVICE_CPU] = 1, [PPOCR_DEVICE_DISCRETE_GPU] = discrete, [PPOCR_DEVICE_OTHER_GPU] = 2};
    int jobs = run->args->jobs ? run->args->jobs : by_class[ppocr_engine_device_class(run->engines[0])];
    return jobs < run->items.n ? jobs : run->items.n;
}

static int run_ocr(const struct cli_args *args)
{
    struct run run = {.args = args};
    if (cli_expand_inputs(args->inputs, args->n_inputs, &stop_requested, &run.items))
        return EXIT_SOME_FAILED;
    if (stop_requested) {
        /* stopped while listing (an @- list from a pipe): no image was begun, so none is finished,
         * and the nets are not even built */
        cli_free_items(&run.items);
        return interrupted();
    }
    cli_keep_shard(&run.items, args->shard_index, args->shard_count);

    char err[1024];
    struct ppocr_engine *first;
    const enum ppocr_status status = ppocr_engine_create(&args->ocr, &first, err, sizeof(err));
    if (!first) {
        fprintf(stderr, "ppocr-vk: %s\n", err);
        cli_free_items(&run.items);
        return status == PPOCR_ERR_NO_DEVICE || status == PPOCR_ERR_MODELS ? EXIT_NO_DEVICE_OR_MODELS
                                                                           : EXIT_SOME_FAILED;
    }
    if (args->ocr.profile) {
        struct ppocr_engine_startup st;
        ppocr_engine_startup(first, &st);
        fprintf(stderr, "profile startup: models %.2f ms device %.2f ms nets %.2f ms other %.2f ms\n", st.models_ms,
                st.device_ms, st.nets_ms, st.other_ms);
    }
    run.engines = &first;
    int jobs = job_count(&run);
    struct ppocr_engine **engines = calloc((size_t)jobs, sizeof(*engines));
    run.outcomes = calloc((size_t)run.items.n + 1, sizeof(*run.outcomes));
    if (!engines || !run.outcomes) {
        fprintf(stderr, "ppocr-vk: out of memory\n");
        ppocr_engine_destroy(first);
        free(engines);
        free(run.outcomes);
        cli_free_items(&run.items);
        return EXIT_SOME_FAILED;
    }
    engines[0] = first;
    run.engines = engines;
    run.show_progress = isatty(STDERR_FILENO) && run.items.n > 1;
    run.text_headers = args->format == CLI_FORMAT_TEXT && !args->output_dir && run.items.n > 1;
    if (args->format == CLI_FORMAT_TSV && !args->output_dir) {
        struct cli_buf header = {0};
        cli_format_tsv_header(&header);
        if (cli_write_stdout(header.data, header.len, err, sizeof(err))) {
            fprintf(stderr, "ppocr-vk: %s\n", err);
            run.output_broken = 1;
        }
        cli_buf_free(&header);
    }

    if (jobs == 1) {
        for (int i = 0; i < run.items.n && !stop_requested && !run.output_broken; i++) {
            process_item(&run, first, i);
            if (emit_item(&run, i))
                break;
        }
    } else if (!run.output_broken) {
        struct cli_workers w = {.n_items = run.items.n,
                                .n_workers = jobs,
                                .window = 4 * jobs,
                                .ctx = &run,
                                .init = worker_init,
                                .work = worker_work,
                                .emit = worker_emit,
                                .stop = &stop_requested};
        if (cli_workers_run(&w) < 0) {
            fprintf(stderr, "ppocr-vk: cannot start worker threads\n");
            run.failed++;
        }
    }
    if (stop_requested)
        interrupted();

    for (int i = jobs; i-- > 0;) /* the siblings before the first, whose device they share */
        ppocr_engine_destroy(engines[i]);
    free(engines);
    for (int i = 0; i < run.items.n; i++) { /* outcomes never written (output broken) */
        cli_buf_free(&run.outcomes[i].out);
        cli_buf_free(&run.outcomes[i].errs);
    }
    free(run.outcomes);
    cli_free_items(&run.items);
    if (fflush(stdout) != 0 && !run.output_broken) {
        fprintf(stderr, "ppocr-vk: cannot write to standard output\n");
        run.output_broken = 1;
    }
    return run.failed || run.output_broken || stop_requested ? EXIT_SOME_FAILED : EXIT_ALL_OK;
}

int main(int argc, char **argv)
{
    struct cli_args args;
    if (cli_parse_args(argc, argv, &args)) {
        free(args.inputs);
        return EXIT_USAGE;
    }
    install_signal_handlers();
    int rc = EXIT_ALL_OK;
    char err[1024];
    switch (args.action) {
    case CLI_HELP: cli_print_help(argv[0]); break;
    case CLI_VERSION: printf("ppocr-vk %s\n", PPOCR_VERSION); break;
    case CLI_LIST_DEVICES:
        if (ppocr_list_devices(stdout, err, sizeof(err)) < 0) {
            fprintf(stderr, "ppocr-vk: %s\n", err);
            rc = EXIT_NO_DEVICE_OR_MODELS;
        }
        break;
    case CLI_SELF_CHECK:
        if (ppocr_self_check(&args.ocr, stdout, err, sizeof(err))) {
            fprintf(stderr, "ppocr-vk: self-check failed: %s\n", err);
            rc = EXIT_NO_DEVICE_OR_MODELS;
        }
        break;
    case CLI_BENCH:
    case CLI_BENCH_OPS: rc = cli_bench(&args, stdout); break;
    case CLI_RUN: rc = run_ocr(&args); break;
    }
    free(args.inputs);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "ppocr-vk: cannot write to standard output\n");
        if (rc == EXIT_ALL_OK)
            rc = EXIT_SOME_FAILED;
    }
    return rc;
}
