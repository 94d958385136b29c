#include "cli/args.h"
#include "cli/check.h"
#include "cli/http.h"
#include "cli/messages.h"
#include "cli/output.h"
#include "cli/pdf.h"
#include "cli/shard.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_print_help(const char *prog)
{
    printf("Usage: %s [options] INPUT...\n"
           "OCR with PaddleOCR's PP-OCR models on any Vulkan GPU.\n"
           "\n"
           "INPUT is an image file, a PDF (each page read; needs pdftoppm, Debian package poppler-utils),\n"
           "a directory (images and PDFs found recursively, in sorted order), '-' for image bytes on\n"
           "stdin, or @FILE for a list of paths (one per line; @- reads it from stdin).\n"
           "\n"
           "Output:\n"
           "  --boxes                  add each line's box and score to text output\n"
           "  --format text|json|tsv   text (default), JSON Lines (one object per image), or TSV\n"
           "  --format hocr|alto       hOCR (Tesseract's form) or ALTO 4.4 XML: one document per image\n"
           "                           (with -o, one .hocr or .xml file each)\n"
           "  -o, --output DIR         write one output file per image into DIR: DIR/NAME.EXT, NAME the\n"
           "                           file's name (its path below a folder given), NAME-pN for PDF pages\n"
           "  --draw DIR               write a PNG of each image with its boxes drawn: DIR/NAME.png\n"
           "  --profile                per-stage timings (stderr; in JSON output too)\n"
           "  --shard K/N              process only the K-th (1..N) of N contiguous slices of the inputs;\n"
           "  --shard auto[/N]         K (and N) from a Slurm array job, a Kubernetes indexed Job\n"
           "                           (JOB_COMPLETION_INDEX) or GNU parallel (PARALLEL_SEQ); see README\n"
           "  --skip-existing          with -o: pass over inputs whose output file is already there\n"
           "  -j, --jobs N             images in flight at once, one engine each (default: one\n"
           "                           per two CPU cores, 2 to 8, on a discrete GPU, 2 on another GPU,\n"
           "                           1 on a CPU device); output keeps the input order\n"
           "  --decode-threads N       with -j 2 or more: threads decoding images ahead of the\n"
           "                           engines (default: one per core, at most 16, on GPUs; 0 on\n"
           "                           a CPU device); 0: each engine decodes its own images\n"
           "  --pdf-dpi N              resolution PDF pages are rasterised at (300)\n"
           "\n"
           "Golden check (README, \"Golden check for CI\"):\n"
           "  --check GOLDEN           run as usual, but compare each image with its entry in GOLDEN\n"
           "                           (JSON Lines as --format json writes them, matched by file and\n"
           "                           page) and print what differs, line by line, and a summary;\n"
           "                           exit 1 when an image differs or has no entry\n"
           "  --check-px N             box corners may be N px off the golden's (%g)\n"
           "  --check-score E          scores may be E off (%g); a line scoring below --drop-score + E\n"
           "                           may come or go\n"
           "  --check-edits N          texts may differ by N character edits (%d: exact)\n"
           "\n"
           "Pipeline (PaddleOCR's names and defaults):\n"
           "  --det-limit-side-len N   longest side given to detection (960)\n"
           "  --det-db-thresh F        probability threshold of the text map (0.3)\n"
           "  --det-db-box-thresh F    minimum mean probability inside a box (0.6)\n"
           "  --det-db-unclip-ratio F  box expansion (1.5)\n"
           "  --no-cls                 skip the text direction classifier\n"
           "  --cls-thresh F           score above which a line is turned over (0.9)\n"
           "  --rec-batch-num N        lines recognised per batch (6)\n"
           "  --drop-score F           drop lines scoring below this (0.5)\n"
           "  --paddle-parity          reproduce PaddleOCR's pipeline exactly, its limits included\n"
           "\n"
           "Device and models:\n"
           "  --models DIR             folder with det.pvk, cls.pvk, rec.pvk\n"
           "  --device N|vulkan|cpu    Vulkan device N, the best Vulkan device, or the CPU backend\n"
           "                           (default: a Vulkan GPU, else the CPU backend, else lavapipe;\n"
           "                           see --list-devices)\n"
           "  --device all|N,M,...     the -j engines spread over every Vulkan GPU, or over the devices\n"
           "                           listed (N or cpu); output as from one device\n"
           "  --mixed-devices          let a --device list hold a CPU device beside GPUs\n"
           "  --threads N              CPU backend: threads per engine (all cores, shared by -j)\n"
           "  --list-devices           list the devices and exit\n"
           "  --fp32                   never use fp16\n"
           "  --fp16-math              compute element-wise in fp16 where fp16 is stored (see README)\n"
           "  --self-check             run a small computation on the GPU and compare with the CPU\n"
           "\n"
           "Long-running:\n"
           "  --serve                  read requests from stdin, one per line: a path, or a JSON object\n"
           "                           {\"id\":..., \"path\":\"...\"} or {\"id\":..., \"image\":\"<base64>\"},\n"
           "                           with options as the flags above (\"drop_score\":0.6, ...);\n"
           "                           one JSON line per request on stdout, in order (see README)\n"
           "  --http [ADDR:]PORT       serve HTTP on ADDR (127.0.0.1 by default): POST /ocr in PaddleOCR 3's\n"
           "                           serving API (see README), GET /health; stops on SIGINT/SIGTERM\n"
           "  --http-max-bytes N       largest request body, 413 beyond (67108864: 64 MiB)\n"
           "  --http-queue N           requests waiting for an engine, 503 beyond (256)\n"
           "  --http-timeout SECONDS   close a connection silent that long: before its request, between\n"
           "                           requests, or with its headers or body stalled (60; 0: no\n"
           "                           timeout); never one whose request waits for or is on an engine\n"
           "\n"
           "Benchmarks (tables on stdout; see BENCHMARKS.md):\n"
           "  --bench [IMAGE...]       per-stage medians, throughput, memory and cold start\n"
           "                           (default: the bundled sample, and a 960x960 page and a 28-line\n"
           "                           document page made from it)\n"
           "  --bench-ops              every op of the nets at PP-OCR's shapes, timed on the device\n"
           "  --bench-runs N           timed runs per image or net (10)\n"
           "  --version, --help\n"
           "\n"
           "Exit status: 0 all inputs processed; 1 some inputs failed (the rest are still processed),\n"
           "or differ from the --check golden; 2 usage error (an output folder that cannot be made, a\n"
           "golden that cannot be read or is malformed); 3 no usable Vulkan device or\n"
           "unusable models. SIGINT/SIGTERM stop after the images in progress; a second stops at once.\n"
           "Environment: PPOCR_VK_VALIDATE=1 enables the Vulkan validation layer.\n"
           "Input limits and failure handling are described in README.md.\n",
           prog, CLI_CHECK_DEFAULT_PX, CLI_CHECK_DEFAULT_SCORE, CLI_CHECK_DEFAULT_EDITS);
}

static int usage_error(const char *fmt, const char *a, const char *b)
{
    struct cli_buf line = {0};
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    cli_buf_printf(&line, fmt, a, b);
#pragma GCC diagnostic pop
    cli_error("%s (see --help)", line.data ? line.data : "");
    cli_buf_free(&line);
    return -1;
}

static int parse_int(const char *opt, const char *s, int lo, int hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return usage_error("%s: '%s' is not a valid integer in range", opt, s);
    *out = (int)v;
    return 0;
}

static int parse_double(const char *opt, const char *s, double lo, double hi, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi))
        return usage_error("%s: '%s' is not a valid number in range", opt, s);
    *out = v;
    return 0;
}

static int parse_float(const char *opt, const char *s, double lo, double hi, float *out)
{
    double v;
    if (parse_double(opt, s, lo, hi, &v))
        return -1;
    *out = (float)v;
    return 0;
}

/* --device: cpu, vulkan, N, all, or a list of N and cpu ("0,2", "0,cpu"). */
static int parse_devices(const char *value, struct cli_args *args)
{
    args->n_devices = 0;
    args->all_devices = 0;
    args->ocr.device_index = -1;
    if (!strcmp(value, "all")) {
        args->ocr.backend = PPOCR_BACKEND_AUTO;
        args->all_devices = 1;
        return 0;
    }
    if (!strchr(value, ',')) {
        args->ocr.backend = !strcmp(value, "cpu") ? PPOCR_BACKEND_CPU : PPOCR_BACKEND_VULKAN;
        if (strcmp(value, "cpu") && strcmp(value, "vulkan"))
            return parse_int("--device", value, 0, 1024, &args->ocr.device_index);
        return 0;
    }
    const char *p = value;
    for (;;) {
        const size_t len = strcspn(p, ",");
        char one[16];
        if (len == 0 || len >= sizeof(one))
            return usage_error("--device: '%s' is not a list of device numbers and cpu%s", value, "");
        memcpy(one, p, len);
        one[len] = '\0';
        if (args->n_devices == CLI_DEVICES_MAX)
            return usage_error("--device: more than 64 devices in '%s'%s", value, "");
        struct cli_device *d = &args->devices[args->n_devices];
        d->backend = !strcmp(one, "cpu") ? PPOCR_BACKEND_CPU : PPOCR_BACKEND_VULKAN;
        d->index = -1;
        if (d->backend == PPOCR_BACKEND_VULKAN && parse_int("--device", one, 0, 1024, &d->index))
            return -1;
        for (int k = 0; k < args->n_devices; k++)
            if (args->devices[k].backend == d->backend && args->devices[k].index == d->index)
                return usage_error("--device: '%s' names %s twice", value, one);
        args->n_devices++;
        if (!p[len])
            break;
        p += len + 1;
    }
    args->ocr.backend = args->devices[0].backend;
    args->ocr.device_index = args->devices[0].index;
    return 0;
}

static const char *process_env(const char *name)
{
    return getenv(name);
}

int cli_parse_args(int argc, char **argv, struct cli_args *args)
{
    memset(args, 0, sizeof(*args));
    ppocr_options_default(&args->ocr);
    args->action = CLI_RUN;
    args->shard_index = args->shard_count = 1;
    args->pdf_dpi = CLI_PDF_DEFAULT_DPI;
    args->check_px = args->check_score = -1;
    args->check_edits = -1;
    args->http_max_bytes = CLI_HTTP_DEFAULT_MAX_BYTES;
    args->http_queue = CLI_HTTP_DEFAULT_QUEUE;
    args->http_timeout = CLI_HTTP_DEFAULT_TIMEOUT_S;
    args->decode_threads = -1;
    args->inputs = calloc((size_t)argc + 1, sizeof(char *));
    if (!args->inputs)
        return usage_error("out of memory%s%s", "", "");

    int only_inputs = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (only_inputs || a[0] != '-' || strcmp(a, "-") == 0) {
            args->inputs[args->n_inputs++] = argv[i];
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_inputs = 1;
            continue;
        }
        /* Flags without a value. */
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            args->action = CLI_HELP;
            continue;
        }
        if (!strcmp(a, "--version")) {
            args->action = CLI_VERSION;
            continue;
        }
        if (!strcmp(a, "--list-devices")) {
            args->action = CLI_LIST_DEVICES;
            continue;
        }
        if (!strcmp(a, "--self-check")) {
            args->action = CLI_SELF_CHECK;
            continue;
        }
        if (!strcmp(a, "--bench")) {
            args->action = CLI_BENCH;
            continue;
        }
        if (!strcmp(a, "--bench-ops")) {
            args->action = CLI_BENCH_OPS;
            continue;
        }
        if (!strcmp(a, "--serve")) {
            args->action = CLI_SERVE;
            continue;
        }
        if (!strcmp(a, "--boxes")) {
            args->boxes = 1;
            continue;
        }
        if (!strcmp(a, "--mixed-devices")) {
            args->mixed_devices = 1;
            continue;
        }
        if (!strcmp(a, "--skip-existing")) {
            args->skip_existing = 1;
            continue;
        }
        if (!strcmp(a, "--no-cls")) {
            args->ocr.use_cls = 0;
            continue;
        }
        if (!strcmp(a, "--fp32")) {
            args->ocr.force_fp32 = 1;
            continue;
        }
        if (!strcmp(a, "--fp16-math")) {
            args->ocr.fp16_math = 1;
            continue;
        }
        if (!strcmp(a, "--profile")) {
            args->ocr.profile = 1;
            continue;
        }
        if (!strcmp(a, "--paddle-parity")) {
            args->ocr.paddle_parity = 1;
            continue;
        }

        /* Options with a value: "--opt VALUE" or "--opt=VALUE". */
        char name[64];
        const char *value = NULL;
        const char *eq = strchr(a, '=');
        if (eq && a[1] == '-') {
            size_t len = (size_t)(eq - a);
            if (len >= sizeof(name))
                return usage_error("unknown option '%s'%s", a, "");
            memcpy(name, a, len);
            name[len] = 0;
            value = eq + 1;
        } else {
            snprintf(name, sizeof(name), "%s", a);
        }
        static const char *const valued[] = {"--format",
                                             "-o",
                                             "--output",
                                             "--draw",
                                             "--shard",
                                             "--det-limit-side-len",
                                             "--det-db-thresh",
                                             "--det-db-box-thresh",
                                             "--det-db-unclip-ratio",
                                             "--drop-score",
                                             "--cls-thresh",
                                             "--rec-batch-num",
                                             "--models",
                                             "--device",
                                             "--threads",
                                             "--bench-runs",
                                             "-j",
                                             "--jobs",
                                             "--decode-threads",
                                             "--pdf-dpi",
                                             "--check",
                                             "--check-px",
                                             "--check-score",
                                             "--check-edits",
                                             "--http",
                                             "--http-max-bytes",
                                             "--http-queue",
                                             "--http-timeout",
                                             NULL};
        int known = 0;
        for (int k = 0; valued[k]; k++)
            known |= strcmp(name, valued[k]) == 0;
        if (!known)
            return usage_error("unknown option '%s'%s", a, "");
        if (!value) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value%s", name, "");
            value = argv[++i];
        }

        int rc = 0;
        if (!strcmp(name, "--format")) {
            if (!strcmp(value, "text"))
                args->format = CLI_FORMAT_TEXT;
            else if (!strcmp(value, "json"))
                args->format = CLI_FORMAT_JSON;
            else if (!strcmp(value, "tsv"))
                args->format = CLI_FORMAT_TSV;
            else if (!strcmp(value, "hocr"))
                args->format = CLI_FORMAT_HOCR;
            else if (!strcmp(value, "alto"))
                args->format = CLI_FORMAT_ALTO;
            else
                rc = usage_error("--format: '%s' is not text, json, tsv, hocr or alto%s", value, "");
        } else if (!strcmp(name, "-o") || !strcmp(name, "--output") || !strcmp(name, "--draw")) {
            if (!*value) /* "" would put every file at the root: "/NAME.EXT" */
                rc = usage_error("%s: the folder name is empty%s", name, "");
            else if (name[2] == 'd')
                args->draw_dir = value;
            else
                args->output_dir = value;
        } else if (!strcmp(name, "--shard")) {
            char why[512];
            if (cli_shard_parse(value, process_env, &args->shard_index, &args->shard_count, why, sizeof(why)))
                rc = usage_error("%s%s", why, "");
        } else if (!strcmp(name, "--det-limit-side-len")) {
            rc = parse_int(name, value, 32, 8192, &args->ocr.det_limit_side_len);
        } else if (!strcmp(name, "--det-db-thresh")) {
            rc = parse_float(name, value, 0, 1, &args->ocr.det_db_thresh);
        } else if (!strcmp(name, "--det-db-box-thresh")) {
            rc = parse_double(name, value, 0, 1, &args->ocr.det_db_box_thresh);
        } else if (!strcmp(name, "--det-db-unclip-ratio")) {
            rc = parse_double(name, value, 0, 100, &args->ocr.det_db_unclip_ratio);
        } else if (!strcmp(name, "--drop-score")) {
            rc = parse_float(name, value, 0, 1, &args->ocr.drop_score);
        } else if (!strcmp(name, "--cls-thresh")) {
            rc = parse_float(name, value, 0, 1, &args->ocr.cls_thresh);
        } else if (!strcmp(name, "--rec-batch-num")) {
            rc = parse_int(name, value, 1, 1024, &args->ocr.rec_batch_num);
        } else if (!strcmp(name, "--models")) {
            args->ocr.models_dir = value;
        } else if (!strcmp(name, "--bench-runs")) {
            rc = parse_int(name, value, 1, 10000, &args->bench_runs);
        } else if (!strcmp(name, "-j") || !strcmp(name, "--jobs")) {
            rc = parse_int(name, value, 1, 64, &args->jobs);
        } else if (!strcmp(name, "--decode-threads")) {
            rc = parse_int(name, value, 0, 64, &args->decode_threads);
        } else if (!strcmp(name, "--pdf-dpi")) {
            rc = parse_double(name, value, 10, 2400, &args->pdf_dpi);
        } else if (!strcmp(name, "--device")) {
            rc = parse_devices(value, args);
        } else if (!strcmp(name, "--threads")) {
            rc = parse_int(name, value, 1, 1024, &args->ocr.threads);
        } else if (!strcmp(name, "--check")) {
            args->check_golden = value;
        } else if (!strcmp(name, "--check-px")) {
            rc = parse_double(name, value, 0, 100000, &args->check_px);
        } else if (!strcmp(name, "--check-score")) {
            rc = parse_double(name, value, 0, 1, &args->check_score);
        } else if (!strcmp(name, "--check-edits")) {
            rc = parse_int(name, value, 0, 100000, &args->check_edits);
        } else if (!strcmp(name, "--http")) {
            args->action = CLI_HTTP;
            args->http_listen = value; /* checked when the server starts (cli/http.c) */
        } else if (!strcmp(name, "--http-max-bytes")) {
            rc = parse_int(name, value, 1024, 1 << 30, &args->http_max_bytes);
        } else if (!strcmp(name, "--http-queue")) {
            rc = parse_int(name, value, 1, 65536, &args->http_queue);
        } else if (!strcmp(name, "--http-timeout")) {
            rc = parse_int(name, value, 0, 86400, &args->http_timeout);
        }
        if (rc)
            return rc;
    }
    if (args->action == CLI_RUN && args->n_inputs == 0)
        return usage_error("no input given%s%s", "", "");
    if (args->skip_existing && !args->output_dir)
        return usage_error("--skip-existing needs -o DIR: it passes over inputs whose file there exists%s%s", "", "");
    if (args->action == CLI_SERVE) {
        /* requests come on stdin and answers go to stdout, as JSON lines */
        if (args->n_inputs)
            return usage_error("--serve reads its requests from standard input, not from arguments ('%s')%s",
                               args->inputs[0], "");
        if (args->format != CLI_FORMAT_TEXT && args->format != CLI_FORMAT_JSON)
            return usage_error("--serve answers in JSON lines, in no other --format%s%s", "", "");
        if (args->output_dir || args->draw_dir || args->shard_count > 1 || args->boxes)
            return usage_error("--serve takes none of -o, --draw, --shard and --boxes%s%s", "", "");
        args->format = CLI_FORMAT_JSON;
    }
    if (!args->check_golden && (args->check_px >= 0 || args->check_score >= 0 || args->check_edits >= 0))
        return usage_error("--check-px, --check-score and --check-edits need --check GOLDEN%s%s", "", "");
    if (args->check_golden && args->action == CLI_SERVE)
        return usage_error("--check compares the results of INPUTs, not of --serve's requests%s%s", "", "");
    if (args->check_golden && args->output_dir) /* the report is one, on stdout */
        return usage_error("--check writes its report to stdout: -o does not apply%s%s", "", "");
    if (args->check_golden) /* no format's headers around the report (the golden is JSON whatever --format says) */
        args->format = CLI_FORMAT_JSON;
    if (args->action == CLI_HTTP) {
        if (args->n_inputs)
            return usage_error("--http takes no INPUT ('%s'): images come in requests%s", args->inputs[0], "");
        if (args->output_dir || args->draw_dir || args->shard_count > 1 || args->boxes)
            return usage_error("--http takes none of -o, --draw, --shard and --boxes%s%s", "", "");
    }
    return 0;
}
