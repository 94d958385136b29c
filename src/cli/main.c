/* ppocr-vk: the command. Owns arguments, input discovery and output; the OCR itself is the
 * engine's (src/ocr/engine.h). */
#include <pthread.h>
#include <stdio.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/bench.h"
#include "cli/check.h"
#include "cli/draw.h"
#include "cli/engines.h"
#include "cli/exit_status.h"
#include "cli/http.h"
#include "cli/inputs.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "cli/output_names.h"
#include "cli/pdf.h"
#include "cli/progress.h"
#include "cli/serve.h"
#include "cli/signals.h"
#include "cli/stream.h"
#include "cli/text_escape.h"
#include "cli/workers.h"
#include "cli/write.h"
#include "ppocr.h"

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
    int rc = cli_read_stream(STDIN_FILENO, "stdin", (size_t)PPOCR_IMAGE_MAX_FILE_BYTES, &cli_stop_requested, &data,
                             &size, err, err_len);
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
    cli_error("interrupted; the remaining inputs were not processed");
    return EXIT_SOME_FAILED;
}

/* Images one engine run takes at most (ppocr_engine_run_many). */
#define RUN_IMAGES_MAX 8

/* Results held for their turn to be written, beyond those of the images in flight: a large scan
 * takes a decoder and an engine far longer than a small image, and the images after it, finished
 * meanwhile, wait for it in input order. Each holds its formatted result only (its image is freed
 * once read), so the decoders and engines go on rather than stop at the scan. */
#define RESULTS_WAITING_MAX 256

/* What one input produced, kept until it is written out in input order. */
struct outcome {
    struct cli_buf out;  /* formatted result, for stdout or the -o file */
    struct cli_buf errs; /* its stderr lines (errors, --profile) */
    int failed;
    int stopped;                 /* a stop signal ended the read of stdin: never begun */
    int prepared;                /* load_outcome has run: img or the reason it is missing */
    int loaded;                  /* img holds the item's decoded image, for its recognition */
    struct ppocr_image img;
    struct cli_check_item check; /* --check: what the comparison found */
};

struct run {
    const struct cli_args *args;
    struct cli_item_list items;
    struct cli_engines engines; /* one per worker */
    struct outcome *outcomes;
    int text_headers, show_progress;
    struct cli_progress progress;
    int failed, output_broken;
    struct cli_check *check; /* --check: the golden that results are compared with */
};

/* How messages name item i: its path, or the page of a PDF (results carry the number apart). */
static const char *item_label(const struct cli_item *item, char *buf, size_t size)
{
    if (!item->page)
        return item->path;
    snprintf(buf, size, "%s page %d", item->path, item->page);
    return buf;
}

/* Decodes item i into its outcome (or notes why it cannot be), once; writes nothing. */
static void load_outcome(struct run *run, int i)
{
    const struct cli_args *args = run->args;
    const struct cli_item *item = &run->items.items[i];
    struct outcome *o = &run->outcomes[i];
    char err[1024], label[1024];
    const char *file = item_label(item, label, sizeof(label));
    if (o->prepared)
        return;
    o->prepared = 1;
    if (item->error) {
        cli_buf_line(&o->errs, "ppocr-vk: %s: %s", file, item->error);
        o->failed = 1;
        return;
    }
    int loaded = item->page ? cli_pdf_load_page(item->path, item->page, args->pdf_dpi, file, &o->img, err, sizeof(err))
                            : load_item(item, args->ocr.paddle_parity, &o->img, err, sizeof(err));
    if (loaded > 0) {
        o->stopped = 1;
    } else if (loaded) {
        cli_buf_line(&o->errs, "ppocr-vk: %s", err);
        o->failed = 1;
    } else {
        o->loaded = 1;
    }
}

/* Draws and formats item i's result (rc 0), or notes its failure (err), then frees its image and
 * the result; writes nothing. */
static void finish_outcome(struct run *run, int i, int rc, struct ppocr_result *result, const char *run_err)
{
    const struct cli_args *args = run->args;
    const struct cli_item *item = &run->items.items[i];
    struct outcome *o = &run->outcomes[i];
    char err[1024], label[1024];
    const char *file = item_label(item, label, sizeof(label));
    if (rc == 0 && args->draw_dir && cli_draw_boxes(args->draw_dir, item->name, &o->img, result, err, sizeof(err))) {
        cli_buf_line(&o->errs, "ppocr-vk: %s: %s", file, err);
        o->failed = 1;
    }
    ppocr_image_free(&o->img);
    o->loaded = 0;
    if (rc) {
        cli_buf_line(&o->errs, "ppocr-vk: %s: %s", file, run_err);
        o->failed = 1;
        return;
    }
    if (args->ocr.profile) {
        struct cli_buf stages = {0};
        for (int s = 0; s < PPOCR_STAGE_COUNT; s++)
            cli_buf_printf(&stages, " %s %.2f/%.2f ms", ppocr_stage_name(s), result->wall_ms[s], result->gpu_ms[s]);
        cli_buf_line(&o->errs, "profile %s:%s (wall/gpu)", file, stages.data ? stages.data : "");
        cli_buf_free(&stages);
    }
    if (args->format == CLI_FORMAT_TSV && args->output_dir)
        cli_format_tsv_header(&o->out);
    if (run->text_headers) { /* one line, whatever the name holds */
        cli_buf_printf(&o->out, "%s==> ", i ? "\n" : "");
        cli_put_line_text(&o->out, file);
        cli_buf_printf(&o->out, " <==\n");
    }
    if (run->check) /* the diff takes the formatted result's place */
        cli_check_item(run->check, &o->out, item->path, item->page, result, &o->check);
    else
        cli_format_result(&o->out, args, item->path, item->page, result);
    ppocr_result_free(result);
    if (o->out.failed) {
        cli_buf_line(&o->errs, "ppocr-vk: %s: out of memory formatting the result", file);
        o->failed = 1;
        cli_buf_free(&o->out);
    }
}

/* Recognises, draws and formats item i's decoded image on `engine`, then frees the image; writes
 * nothing. */
static void recognise_outcome(struct run *run, struct ppocr_engine *engine, int i)
{
    struct outcome *o = &run->outcomes[i];
    char err[1024];
    if (!o->loaded)
        return;
    struct ppocr_result result;
    int rc = ppocr_engine_run(engine, &o->img, &result, err, sizeof(err));
    finish_outcome(run, i, rc, &result, err);
}

/* recognise_outcome for items[0..n) (at most RUN_IMAGES_MAX) in one engine run: their images
 * share its batches. */
static void recognise_outcomes(struct run *run, struct ppocr_engine *engine, const int *items, int n)
{
    struct ppocr_image images[RUN_IMAGES_MAX];
    struct ppocr_result results[RUN_IMAGES_MAX];
    enum ppocr_status status[RUN_IMAGES_MAX];
    char errs[RUN_IMAGES_MAX][1024];
    int at[RUN_IMAGES_MAX], m = 0;
    for (int k = 0; k < n && k < RUN_IMAGES_MAX; k++)
        if (run->outcomes[items[k]].loaded) {
            at[m] = items[k];
            images[m++] = run->outcomes[items[k]].img;
        }
    if (m == 0)
        return;
    ppocr_engine_run_many(engine, images, m, results, status, errs[0], sizeof(errs[0]));
    for (int k = 0; k < m; k++)
        finish_outcome(run, at[k], status[k] != PPOCR_OK, &results[k], errs[k]);
}

/* Writes item i's outcome; non-zero once no further output can be written. */
static int emit_item(struct run *run, int i)
{
    const struct cli_args *args = run->args;
    const struct cli_item *item = &run->items.items[i];
    struct outcome *o = &run->outcomes[i];
    char err[1024];
    if (run->show_progress && o->errs.len) /* the bar's line cleared, so that an error line stands alone */
        (void)cli_write_all(STDERR_FILENO, "\r\033[K", 4);
    cli_stderr_write(&o->errs);
    run->failed += o->failed;
    if (run->check)
        cli_check_count(run->check, &o->check);
    if (o->out.len) {
        if (args->output_dir) {
            if (cli_write_file_atomic(args->output_dir, item->name, cli_format_extension(args->format), o->out.data,
                                      o->out.len, err, sizeof(err))) {
                cli_error("%s: %s", item->path, err);
                run->failed++;
            }
        } else if (cli_write_stdout(o->out.data, o->out.len, err, sizeof(err))) {
            cli_error("%s", err);
            run->output_broken = 1;
        }
    }
    cli_buf_free(&o->out);
    cli_buf_free(&o->errs);
    if (run->show_progress && !o->stopped)
        cli_progress_show(&run->progress, i + 1, i + 1 < run->items.n ? run->items.items[i + 1].path : NULL);
    return run->output_broken || o->stopped;
}

static int worker_init(void *ctx, int worker)
{
    struct run *run = ctx;
    return cli_engines_sibling(&run->engines, worker);
}

static void worker_prepare(void *ctx, int item)
{
    load_outcome(ctx, item);
}

static void worker_work(void *ctx, int worker, int item)
{
    struct run *run = ctx;
    recognise_outcome(run, run->engines.engines[worker], item);
}

static void worker_work_many(void *ctx, int worker, const int *items, int n)
{
    struct run *run = ctx;
    recognise_outcomes(run, run->engines.engines[worker], items, n);
}

static int worker_emit(void *ctx, int item)
{
    return emit_item(ctx, item);
}

/* The first input is decoded on a thread of its own while the engines open, which takes far
 * longer (the device's creation, the nets): its decoding is then off the path to the first result.
 * Not image bytes on stdin, whose reading answers stop signals on the main thread. */
struct early_load {
    pthread_t thread;
    int started;
};

static void *early_load_main(void *arg)
{
    load_outcome(arg, 0);
    return NULL;
}

static void early_load_start(struct early_load *e, struct run *run)
{
    e->started = run->items.n > 0 && strcmp(run->items.items[0].path, "-") != 0 &&
                 pthread_create(&e->thread, NULL, early_load_main, run) == 0;
}

static void early_load_join(struct early_load *e)
{
    if (e->started)
        pthread_join(e->thread, NULL);
    e->started = 0;
}

/* Frees what the outcomes still hold (those never written: the output broke, or no engine opened). */
static void free_outcomes(struct run *run)
{
    for (int i = 0; i < run->items.n; i++) {
        cli_buf_free(&run->outcomes[i].out);
        cli_buf_free(&run->outcomes[i].errs);
        if (run->outcomes[i].loaded)
            ppocr_image_free(&run->outcomes[i].img);
    }
    free(run->outcomes);
    run->outcomes = NULL;
}

/* The most engines this run's items can use: one per item, and one when image bytes come on
 * stdin, so that a stop signal reaches the thread that is reading them. */
static int jobs_usable(const struct cli_item_list *items)
{
    for (int i = 0; i < items->n; i++)
        if (!strcmp(items->items[i].path, "-"))
            return 1;
    return items->n > 1 ? items->n : 1;
}

/* Whether every file the run writes for the item (-o's, and --draw's) is there already. */
static int outputs_exist(const struct cli_args *args, const struct cli_item *item, int *no_memory)
{
    const char *const dirs[2] = {args->output_dir, args->draw_dir};
    const char *const exts[2] = {cli_format_extension(args->format), "png"};
    for (int k = 0; k < 2; k++) {
        if (!dirs[k])
            continue;
        char *path = cli_output_path(dirs[k], item->name, exts[k]);
        if (!path) {
            *no_memory = 1;
            return 0;
        }
        struct stat st;
        const int there = stat(path, &st) == 0 && S_ISREG(st.st_mode);
        free(path);
        if (!there)
            return 0;
    }
    return 1;
}

/* --skip-existing: the items whose outputs exist (written whole or not at all: cli/write.h) are
 * passed over, so that a run stopped part-way is resumed by running it again. Said in one line.
 * Returns -1 when memory runs out. */
static int skip_existing(const struct cli_args *args, struct cli_item_list *items)
{
    int kept = 0, no_memory = 0;
    for (int i = 0; i < items->n; i++) {
        struct cli_item *item = &items->items[i];
        if (!item->error && outputs_exist(args, item, &no_memory)) {
            free(item->path);
            free(item->name);
            continue;
        }
        items->items[kept++] = *item;
    }
    const int skipped = items->n - kept;
    items->n = kept;
    if (skipped)
        fprintf(stderr, "ppocr-vk: %d input%s passed over: %s output%s there already (--skip-existing)\n", skipped,
                skipped == 1 ? "" : "s", skipped == 1 ? "its" : "their", skipped == 1 ? " is" : "s are");
    return no_memory ? -1 : 0;
}

static int run_ocr(const struct cli_args *args, struct cli_check *check)
{
    struct run run = {.args = args, .check = check};
    char err[1024];
    /* a folder that cannot be made fails every image: said once, before any is read */
    const char *const dir_options[2][2] = {{"-o", args->output_dir}, {"--draw", args->draw_dir}};
    for (int k = 0; k < 2; k++)
        if (dir_options[k][1] && cli_prepare_output_dir(dir_options[k][0], dir_options[k][1], err, sizeof(err))) {
            cli_error("%s", err);
            return EXIT_USAGE;
        }
    if (cli_expand_inputs(args->inputs, args->n_inputs, &cli_stop_requested, &run.items))
        return EXIT_SOME_FAILED;
    if (cli_stop_requested) {
        /* stopped while listing (an @- list from a pipe): no image was begun, so none is finished,
         * and the nets are not even built */
        cli_free_items(&run.items);
        return interrupted();
    }
    /* over all the inputs, so that the same input is refused whatever the sharding */
    if ((args->output_dir || args->draw_dir) && cli_refuse_shared_names(&run.items)) {
        cli_error("out of memory while listing inputs");
        cli_free_items(&run.items);
        return EXIT_SOME_FAILED;
    }
    cli_keep_shard(&run.items, args->shard_index, args->shard_count);
    if (args->skip_existing) {
        const int rc = skip_existing(args, &run.items);
        if (rc)
            cli_error("out of memory while listing inputs");
        if (rc || run.items.n == 0) { /* nothing left to do: no engine made */
            cli_free_items(&run.items);
            return rc ? EXIT_SOME_FAILED : EXIT_ALL_OK;
        }
    }

    run.outcomes = calloc((size_t)run.items.n + 1, sizeof(*run.outcomes));
    if (!run.outcomes) {
        cli_error("out of memory");
        cli_free_items(&run.items);
        return EXIT_SOME_FAILED;
    }
    struct early_load early;
    early_load_start(&early, &run);
    const int failed_start = cli_engines_open(args, jobs_usable(&run.items), &run.engines);
    early_load_join(&early);
    if (failed_start) {
        free_outcomes(&run);
        cli_free_items(&run.items);
        return failed_start;
    }
    const int jobs = run.engines.jobs;
    run.show_progress = isatty(STDERR_FILENO) && run.items.n > 1;
    run.text_headers = args->format == CLI_FORMAT_TEXT && !args->output_dir && run.items.n > 1;
    if (args->format == CLI_FORMAT_TSV && !args->output_dir) {
        struct cli_buf header = {0};
        cli_format_tsv_header(&header);
        if (cli_write_stdout(header.data, header.len, err, sizeof(err))) {
            cli_error("%s", err);
            run.output_broken = 1;
        }
        cli_buf_free(&header);
    }
    if (run.show_progress) {
        cli_progress_start(&run.progress, run.items.n);
        cli_progress_show(&run.progress, 0, run.items.items[0].path);
    }

    if (jobs == 1) {
        for (int i = 0; i < run.items.n && !cli_stop_requested && !run.output_broken; i++) {
            load_outcome(&run, i);
            recognise_outcome(&run, run.engines.engines[0], i);
            if (emit_item(&run, i))
                break;
        }
    } else if (!run.output_broken) {
        const int decoders = cli_engines_decode_threads(&run.engines, args->decode_threads);
        /* images decoded ahead are there to take: an engine reads those that are ready together */
        const int take_max = decoders > 0 ? RUN_IMAGES_MAX : 1;
        struct cli_workers w = {.n_items = run.items.n,
                                .n_workers = jobs,
                                .window = 4 * jobs + decoders + RESULTS_WAITING_MAX,
                                .ctx = &run,
                                .init = worker_init,
                                .prepare = worker_prepare,
                                .n_preparers = decoders,
                                .ahead = take_max > 1 ? 2 * decoders : decoders, /* groups to take */
                                .work = worker_work,
                                .work_many = worker_work_many,
                                .take_max = take_max,
                                .emit = worker_emit,
                                .stop = &cli_stop_requested};
        if (cli_workers_run(&w) < 0) {
            cli_error("cannot start worker threads");
            run.failed++;
        }
    }
    if (cli_stop_requested)
        interrupted();

    cli_engines_close(&run.engines);
    free_outcomes(&run);
    cli_free_items(&run.items);
    if (check && !run.output_broken) {
        struct cli_buf summary = {0};
        cli_check_summary(check, run.failed, &summary);
        if (cli_write_stdout(summary.data, summary.len, err, sizeof(err))) {
            cli_error("%s", err);
            run.output_broken = 1;
        }
        cli_buf_free(&summary);
    }
    if (fflush(stdout) != 0 && !run.output_broken) {
        cli_error("cannot write to standard output");
        run.output_broken = 1;
    }
    const int differs = check && !cli_check_all_matched(check);
    return run.failed || run.output_broken || cli_stop_requested || differs ? EXIT_SOME_FAILED : EXIT_ALL_OK;
}

/* --check: the golden is read before anything else, so that a malformed one is a usage error
 * that costs no device start. */
static int run_check(const struct cli_args *args)
{
    struct cli_check check;
    char err[1024];
    if (cli_check_open(&check, args, err, sizeof(err))) {
        cli_error("--check: %s", err);
        return EXIT_USAGE;
    }
    int rc = run_ocr(args, &check);
    cli_check_close(&check);
    return rc;
}

/* Blocks up to this size (decoded images, their scaled copies) stay with the allocator once freed,
 * for the next image to reuse. glibc would map each one afresh and give it back when freed, and the
 * kernel clears every page of it again: most of a 3600x4800 scan's decoding went there. What is
 * kept is bounded by the most memory the images in flight took at once. */
#define FREED_BLOCK_KEPT_MAX (128 << 20)

/* Unless the user tuned the allocator through the environment. */
static void keep_freed_blocks(void)
{
#if defined(__GLIBC__)
    const char *tunables = getenv("GLIBC_TUNABLES");
    if ((tunables && strstr(tunables, "glibc.malloc.")) || getenv("MALLOC_MMAP_THRESHOLD_") ||
        getenv("MALLOC_TRIM_THRESHOLD_"))
        return;
    if (mallopt(M_MMAP_THRESHOLD, FREED_BLOCK_KEPT_MAX))
        mallopt(M_TRIM_THRESHOLD, 2 * FREED_BLOCK_KEPT_MAX);
#endif
}

int main(int argc, char **argv)
{
    keep_freed_blocks();
    struct cli_args args;
    if (cli_parse_args(argc, argv, &args)) {
        free(args.inputs);
        return EXIT_USAGE;
    }
    cli_signals_install();
    int rc = EXIT_ALL_OK;
    char err[1024];
    switch (args.action) {
    case CLI_HELP: cli_print_help(argv[0]); break;
    case CLI_VERSION: printf("ppocr-vk %s\n", PPOCR_VERSION); break;
    case CLI_LIST_DEVICES:
        if (ppocr_list_devices(stdout, err, sizeof(err)) < 0) {
            cli_error("%s", err);
            rc = EXIT_NO_DEVICE_OR_MODELS;
        }
        break;
    case CLI_SELF_CHECK:
        if (ppocr_self_check(&args.ocr, stdout, err, sizeof(err))) {
            cli_error("self-check failed: %s", err);
            rc = EXIT_NO_DEVICE_OR_MODELS;
        }
        break;
    case CLI_BENCH:
    case CLI_BENCH_OPS: rc = cli_bench(&args, stdout); break;
    case CLI_RUN: rc = args.check_golden ? run_check(&args) : run_ocr(&args, NULL); break;
    case CLI_SERVE: rc = cli_serve(&args); break;
    case CLI_HTTP: rc = cli_http_serve(&args); break;
    }
    free(args.inputs);
    if (fflush(stdout) != 0) {
        cli_error("cannot write to standard output");
        if (rc == EXIT_ALL_OK)
            rc = EXIT_SOME_FAILED;
    }
    return rc;
}
