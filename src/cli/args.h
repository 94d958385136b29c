/* Command-line options of ppocr-vk. */
#ifndef PPOCR_CLI_ARGS_H
#define PPOCR_CLI_ARGS_H

#include "ppocr.h"

enum cli_format { CLI_FORMAT_TEXT, CLI_FORMAT_JSON, CLI_FORMAT_TSV, CLI_FORMAT_HOCR, CLI_FORMAT_ALTO };
enum cli_action {
    CLI_RUN,
    CLI_HELP,
    CLI_VERSION,
    CLI_LIST_DEVICES,
    CLI_SELF_CHECK,
    CLI_BENCH,
    CLI_BENCH_OPS,
    CLI_SERVE,
    CLI_HTTP
};

#define CLI_DEVICES_MAX 64

/* One device of a --device list: a Vulkan device's index, or the CPU backend (index -1). */
struct cli_device {
    enum ppocr_backend backend;
    int index;
};

struct cli_args {
    enum cli_action action;
    enum cli_format format;
    int boxes;
    const char *output_dir;       /* -o: one output file per image */
    const char *draw_dir;         /* --draw: PNG with the boxes drawn */
    int shard_index, shard_count; /* --shard K/N, 1-based K; 1/1 when not given */
    int skip_existing;            /* --skip-existing: inputs whose -o file exists are passed over */
    int bench_runs;               /* --bench-runs: timed runs per image (10) */
    int jobs;                     /* -j/--jobs: engines working at once; 0 = by device */
    int decode_threads;           /* --decode-threads: decoding ahead of the engines; -1 = by device */
    double pdf_dpi;               /* --pdf-dpi: resolution PDF pages are rasterised at */
    const char *check_golden;     /* --check: compare with this golden file instead of printing */
    double check_px, check_score; /* --check-px, --check-score; -1: the default (cli/check.h) */
    int check_edits;              /* --check-edits; -1: the default */
    const char *http_listen;      /* --http [ADDR:]PORT: serve HTTP (cli/http.h) */
    int http_max_bytes;           /* --http-max-bytes: a request's body, at most */
    int http_queue;               /* --http-queue: requests waiting for an engine, at most */
    int http_timeout;             /* --http-timeout: seconds a connection may be silent; 0: no limit */
    struct ppocr_options ocr;     /* its backend and device_index: the one device, without a list */
    int n_devices;                /* --device LIST (2 or more), else 0 */
    struct cli_device devices[CLI_DEVICES_MAX];
    int all_devices;   /* --device all: every Vulkan GPU */
    int mixed_devices; /* --mixed-devices: a list may hold a CPU device beside GPUs */
    int n_inputs;
    char **inputs; /* points into argv */
};

/* Parses argv. Returns 0, or -1 after printing a one-line usage error to stderr. */
int cli_parse_args(int argc, char **argv, struct cli_args *args);
void cli_print_help(const char *prog);

#endif
