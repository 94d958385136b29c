/* ppocr-vk: the command. Owns arguments, input discovery and output; the OCR itself is the
 * engine's (src/ocr/engine.h). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/bench.h"
#include "cli/draw.h"
#include "cli/inputs.h"
#include "cli/output.h"
#include "cli/stream.h"
#include "ocr/engine.h"
#include "ocr/image.h"

enum { EXIT_ALL_OK = 0, EXIT_SOME_FAILED = 1, EXIT_USAGE = 2, EXIT_NO_DEVICE_OR_MODELS = 3 };

static volatile sig_atomic_t stop_requested;

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
    /* no SA_RESTART: a read blocked on stdin (an @- list, image bytes from a pipe whose writer
     * never closes) must return EINTR, so that the stop is seen and the wait ends */
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
static int load_item(const struct cli_item *item, int parity, struct ocr_image *img, char *err, size_t err_len)
{
    enum ocr_alpha_mode alpha = parity ? OCR_ALPHA_IGNORE : OCR_ALPHA_FLATTEN;
    if (strcmp(item->path, "-") != 0)
        return ocr_image_load_file(item->path, alpha, img, err, err_len) == OCR_IMAGE_OK ? 0 : -1;
    /* read here, not by ocr_image_load_fd, which reads on through signals until the end of input */
    char *data;
    size_t size;
    int rc = cli_read_stream(STDIN_FILENO, "stdin", (size_t)OCR_IMAGE_MAX_FILE_BYTES, &stop_requested, &data, &size,
                             err, err_len);
    if (rc)
        return rc;
    rc = ocr_image_load_memory(data, size, "stdin", alpha, img, err, err_len) == OCR_IMAGE_OK ? 0 : -1;
    free(data);
    return rc;
}

static int interrupted(void)
{
    fprintf(stderr, "ppocr-vk: interrupted; the remaining inputs were not processed\n");
    return EXIT_SOME_FAILED;
}

static void print_profile(const char *file, const struct ocr_result *r)
{
    fprintf(stderr, "profile %s:", file);
    for (int s = 0; s < OCR_STAGE_COUNT; s++)
        fprintf(stderr, " %s %.2f/%.2f ms", ocr_stage_name(s), r->wall_ms[s], r->gpu_ms[s]);
    fprintf(stderr, " (wall/gpu)\n");
}

static int run_ocr(const struct cli_args *args)
{
    struct cli_item_list items;
    if (cli_expand_inputs(args->inputs, args->n_inputs, &stop_requested, &items))
        return EXIT_SOME_FAILED;
    if (stop_requested) {
        /* stopped while listing (an @- list from a pipe): no image was begun, so none is finished,
         * and the nets are not even built */
        cli_free_items(&items);
        return interrupted();
    }
    cli_keep_shard(&items, args->shard_index, args->shard_count);

    char err[1024];
    int err_kind = 0;
    struct ocr_engine *engine = ocr_engine_create(&args->ocr, &err_kind, err, sizeof(err));
    if (!engine) {
        fprintf(stderr, "ppocr-vk: %s\n", err);
        cli_free_items(&items);
        return err_kind ? EXIT_NO_DEVICE_OR_MODELS : EXIT_SOME_FAILED;
    }

    int failed = 0, output_broken = 0;
    int show_progress = isatty(STDERR_FILENO) && items.n > 1;
    int text_headers = args->format == CLI_FORMAT_TEXT && !args->output_dir && items.n > 1;
    if (args->format == CLI_FORMAT_TSV && !args->output_dir) {
        struct cli_buf header = {0};
        cli_format_tsv_header(&header);
        if (cli_write_stdout(header.data, header.len, err, sizeof(err))) {
            fprintf(stderr, "ppocr-vk: %s\n", err);
            output_broken = 1;
        }
        cli_buf_free(&header);
    }

    for (int i = 0; i < items.n && !stop_requested && !output_broken; i++) {
        const struct cli_item *item = &items.items[i];
        const char *file = item->path;
        if (item->error) {
            fprintf(stderr, "ppocr-vk: %s: %s\n", file, item->error);
            failed++;
            continue;
        }
        struct ocr_image img;
        int loaded = load_item(item, args->ocr.paddle_parity, &img, err, sizeof(err));
        if (loaded > 0)
            break; /* stopped while reading stdin: this image was never begun */
        if (loaded) {
            fprintf(stderr, "ppocr-vk: %s\n", err);
            failed++;
            continue;
        }
        struct ocr_result result;
        int rc = ocr_engine_run(engine, &img, &result, err, sizeof(err));
        if (rc == 0 && args->draw_dir && cli_draw_boxes(args->draw_dir, item->name, &img, &result, err, sizeof(err))) {
            fprintf(stderr, "ppocr-vk: %s: %s\n", file, err);
            failed++;
        }
        ocr_image_free(&img);
        if (rc) {
            fprintf(stderr, "ppocr-vk: %s: %s\n", file, err);
            failed++;
            continue;
        }
        if (args->ocr.profile)
            print_profile(file, &result);

        struct cli_buf out = {0};
        if (args->format == CLI_FORMAT_TSV && args->output_dir)
            cli_format_tsv_header(&out);
        if (text_headers)
            cli_buf_printf(&out, "%s==> %s <==\n", i ? "\n" : "", file);
        cli_format_result(&out, args, file, &result);
        ocr_result_free(&result);
        if (out.failed) {
            fprintf(stderr, "ppocr-vk: %s: out of memory formatting the result\n", file);
            failed++;
        } else if (args->output_dir) {
            if (cli_write_file_atomic(args->output_dir, item->name, cli_format_extension(args->format), out.data,
                                      out.len, err, sizeof(err))) {
                fprintf(stderr, "ppocr-vk: %s: %s\n", file, err);
                failed++;
            }
        } else if (cli_write_stdout(out.data, out.len, err, sizeof(err))) {
            fprintf(stderr, "ppocr-vk: %s\n", err);
            output_broken = 1;
        }
        cli_buf_free(&out);
        if (show_progress)
            progress(i + 1, items.n);
    }
    if (stop_requested)
        interrupted();

    ocr_engine_destroy(engine);
    cli_free_items(&items);
    if (fflush(stdout) != 0 && !output_broken) {
        fprintf(stderr, "ppocr-vk: cannot write to standard output\n");
        output_broken = 1;
    }
    return failed || output_broken || stop_requested ? EXIT_SOME_FAILED : EXIT_ALL_OK;
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
    case CLI_HELP:
        cli_print_help(argv[0]);
        break;
    case CLI_VERSION:
        printf("ppocr-vk %s\n", PPOCR_VERSION);
        break;
    case CLI_LIST_DEVICES:
        if (ocr_list_devices(stdout, err, sizeof(err)) < 0) {
            fprintf(stderr, "ppocr-vk: %s\n", err);
            rc = EXIT_NO_DEVICE_OR_MODELS;
        }
        break;
    case CLI_SELF_CHECK:
        if (ocr_self_check(&args.ocr, stdout, err, sizeof(err))) {
            fprintf(stderr, "ppocr-vk: self-check failed: %s\n", err);
            rc = EXIT_NO_DEVICE_OR_MODELS;
        }
        break;
    case CLI_BENCH:
    case CLI_BENCH_OPS:
        rc = cli_bench(&args, stdout);
        break;
    case CLI_RUN:
        rc = run_ocr(&args);
        break;
    }
    free(args.inputs);
    if (fflush(stdout) != 0) {
        fprintf(stderr, "ppocr-vk: cannot write to standard output\n");
        if (rc == EXIT_ALL_OK)
            rc = EXIT_SOME_FAILED;
    }
    return rc;
}
