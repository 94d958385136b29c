/* `ppocr-vk --bench [IMAGES...]`: per-stage wall and GPU medians per image, end-to-end latency,
 * throughput over the set, memory peaks, and cold start with and without the pipeline cache.
 * Speed is shown by this table, never asserted by a test. */
#include "cli/bench.h"
#include "cli/messages.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli/output.h"
#include "ppocr.h"

/* The bundled sample: in the source tree this binary was built from, or under the working folder. */
static const char *sample_path(void)
{
    static const char *const places[] = {PPOCR_SOURCE_DIR "/tests/data/sample.png", "tests/data/sample.png"};
    for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++)
        if (access(places[i], R_OK) == 0)
            return places[i];
    return places[0];
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int compare_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double *s = malloc((size_t)n * sizeof(*s));
    if (!s || n == 0) {
        free(s);
        return 0;
    }
    memcpy(s, v, (size_t)n * sizeof(*s));
    qsort(s, (size_t)n, sizeof(*s), compare_double);
    double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

/* A white size x size page. */
static int blank_page(int size, struct ppocr_image *page)
{
    memset(page, 0, sizeof(*page));
    page->width = page->height = size;
    page->bgr = malloc((size_t)size * size * 3);
    if (!page->bgr)
        return -1;
    memset(page->bgr, 255, (size_t)size * size * 3);
    return 0;
}

/* A 960x960 page made of two copies of the sample, so that the det net runs at its limit. */
static int make_page(const struct ppocr_image *sample, struct ppocr_image *page)
{
    const int size = 960;
    if (blank_page(size, page))
        return -1;
    const int at[2][2] = {{0, 0}, {size - sample->width, size - sample->height}};
    for (int k = 0; k < 2; k++)
        for (int y = 0; y < sample->height && at[k][1] + y < size; y++) {
            int w = sample->width < size - at[k][0] ? sample->width : size - at[k][0];
            if (at[k][0] < 0 || at[k][1] < 0 || w <= 0)
                continue;
            memcpy(page->bgr + ((size_t)(at[k][1] + y) * size + at[k][0]) * 3,
                   sample->bgr + (size_t)y * sample->width * 3, (size_t)w * 3);
        }
    return 0;
}

static int is_ink(const struct ppocr_image *img, int x, int y)
{
    const uint8_t *px = img->bgr + ((size_t)y * img->width + x) * 3;
    return px[0] < 128 || px[1] < 128 || px[2] < 128;
}

static int column_blank(const struct ppocr_image *img, int x, int y0, int y1)
{
    for (int y = y0; y < y1; y++)
        if (is_ink(img, x, y))
            return 0;
    return 1;
}

static int row_blank(const struct ppocr_image *img, int y)
{
    for (int x = 0; x < img->width; x++)
        if (is_ink(img, x, y))
            return 0;
    return 1;
}

/* A 960x960 document page of about 30 lines of varied widths: the sample's text rows, each cut
 * after a word at one of several widths and indented by varying amounts, stacked at a document's
 * line pitch. A real page's lines fall into many widths, which is what recognition batches by. */
static int make_document(const struct ppocr_image *sample, struct ppocr_image *page)
{
    enum { SIZE = 960, MARGIN = 16, GAP = 3, MAX_ROWS = 64, WORD_GAP = 6 };
    int row0[MAX_ROWS], row1[MAX_ROWS], n_rows = 0;
    for (int y = 0; y < sample->height && n_rows < MAX_ROWS;) {
        if (row_blank(sample, y)) {
            y++;
            continue;
        }
        int end = y;
        while (end < sample->height && !row_blank(sample, end))
            end++;
        /* a run of ink rows joins the previous one when either is too short to be a line on its
         * own (the dots of i and j, accents) and only a few blank rows part them */
        if (n_rows && y - row1[n_rows - 1] < 4 && (end - y < 8 || row1[n_rows - 1] - row0[n_rows - 1] < 8))
            row1[n_rows - 1] = end;
        else {
            row0[n_rows] = y;
            row1[n_rows++] = end;
        }
        y = end;
    }
    int kept = 0;
    for (int r = 0; r < n_rows; r++)
        if (row1[r] - row0[r] >= 8) {
            row0[kept] = row0[r];
            row1[kept++] = row1[r];
        }
    n_rows = kept;
    if (n_rows == 0 || blank_page(SIZE, page))
        return -1;
    static const double widths[] = {1.0, 0.55, 0.8, 0.35, 0.95, 0.7, 0.45};
    const int n_widths = (int)(sizeof(widths) / sizeof(widths[0]));
    int y = MARGIN;
    for (int i = 0;; i++) {
        const int r = i % n_rows, h = row1[r] - row0[r];
        if (y + h + MARGIN > SIZE)
            break;
        int x0 = 0, x1 = sample->width;
        while (x0 < sample->width && column_blank(sample, x0, row0[r], row1[r]))
            x0++;
        while (x1 > x0 && column_blank(sample, x1 - 1, row0[r], row1[r]))
            x1--;
        /* cut at the last gap between words before the chosen width */
        int want = x0 + (int)(widths[i % n_widths] * (x1 - x0)), cut = x1;
        for (int x = want; x > x0 + WORD_GAP && cut == x1 && want < x1; x--) {
            int run = 0;
            while (run < WORD_GAP && column_blank(sample, x - run, row0[r], row1[r]))
                run++;
            if (run == WORD_GAP)
                cut = x - WORD_GAP + 1;
        }
        const int indent = MARGIN + (i * 53) % 120, w = cut - x0;
        const int copy = indent + w <= SIZE - MARGIN ? w : SIZE - MARGIN - indent;
        for (int k = 0; k < h && copy > 0; k++)
            memcpy(page->bgr + ((size_t)(y + k) * SIZE + indent) * 3,
                   sample->bgr + ((size_t)(row0[r] + k) * sample->width + x0) * 3, (size_t)copy * 3);
        y += h + GAP;
    }
    return 0;
}

struct bench_image {
    char name[256];
    struct ppocr_image img;
    char *path; /* NULL for the generated page */
};

/* Runs `exe` once on `image` with the pipeline cache in `cache_dir`; returns wall ms or -1. */
/* One run of an image through `engine` to its formatted result, as a caller would get it; *ms
 * is the wall time. Returns 0, or 1 after printing the reason. */
static int run_to_result(struct ppocr_engine *engine, const struct cli_args *args, const struct bench_image *image,
                         struct ppocr_result *res, double *ms)
{
    char err[1024];
    double t0 = now_ms();
    if (ppocr_engine_run(engine, &image->img, res, err, sizeof(err))) {
        cli_error("%s: %s", image->name, err);
        return 1;
    }
    struct cli_buf buf = {0};
    cli_format_result(&buf, args, image->name, 0, res);
    cli_buf_free(&buf);
    *ms = now_ms() - t0;
    return 0;
}

/* Runs the command on one image with the pipeline cache in cache_dir: *first_ms from process start
 * to its first byte of output (the first result), *exit_ms to its exit. Returns 0, or -1 if it
 * could not be run or failed. */
static int timed_child(const char *exe, const struct cli_args *args, const char *cache_dir, const char *image,
                       double *first_ms, double *exit_ms)
{
    char device[32];
    const char *argv[16];
    int n = 0;
    argv[n++] = exe;
    argv[n++] = "--format";
    argv[n++] = "json";
    if (args->ocr.models_dir) {
        argv[n++] = "--models";
        argv[n++] = args->ocr.models_dir;
    }
    if (args->ocr.device_index >= 0) {
        snprintf(device, sizeof(device), "%d", args->ocr.device_index);
        argv[n++] = "--device";
        argv[n++] = device;
    } else if (args->ocr.backend != PPOCR_BACKEND_AUTO) {
        argv[n++] = "--device";
        argv[n++] = args->ocr.backend == PPOCR_BACKEND_CPU ? "cpu" : "vulkan";
    }
    char threads[32];
    if (args->ocr.threads) {
        snprintf(threads, sizeof(threads), "%d", args->ocr.threads);
        argv[n++] = "--threads";
        argv[n++] = threads;
    }
    if (args->ocr.force_fp32)
        argv[n++] = "--fp32";
    if (args->ocr.fp16_math)
        argv[n++] = "--fp16-math";
    argv[n++] = image;
    argv[n] = NULL;
    int out[2];
    if (pipe(out))
        return -1;
    fflush(NULL);
    double t0 = now_ms();
    pid_t pid = fork();
    if (pid < 0) {
        close(out[0]);
        close(out[1]);
        return -1;
    }
    if (pid == 0) {
        setenv("PPOCR_CACHE_DIR", cache_dir, 1);
        close(out[0]);
        if (dup2(out[1], STDOUT_FILENO) < 0)
            _exit(127);
        execv(exe, (char *const *)argv);
        _exit(127);
    }
    close(out[1]);
    *first_ms = -1;
    char buf[4096];
    ssize_t got;
    while ((got = read(out[0], buf, sizeof buf)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        if (*first_ms < 0)
            *first_ms = now_ms() - t0;
    }
    close(out[0]);
    int status;
    pid_t waited;
    while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    *exit_ms = now_ms() - t0;
    return waited < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || *first_ms < 0 ? -1 : 0;
}

static void print_cold_start(const struct cli_args *args, const char *image, FILE *out)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        fprintf(out, "cold start: unknown (cannot find the executable)\n");
        return;
    }
    exe[n] = 0;
    char dir[] = "/tmp/ppocr-vk-bench-XXXXXX";
    if (!mkdtemp(dir)) {
        fprintf(out, "cold start: unknown (no temporary folder: %s)\n", strerror(errno));
        return;
    }
    double cold_first, cold_exit, warm_first, warm_exit;
    int rc = timed_child(exe, args, dir, image, &cold_first, &cold_exit);
    if (!rc)
        rc = timed_child(exe, args, dir, image, &warm_first, &warm_exit);
    char cmd[sizeof(dir) + 16];
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        cli_error("could not remove %s", dir);
    if (rc) {
        fprintf(out, "cold start: unknown (the command failed on %s)\n", image);
        return;
    }
    fprintf(out,
            "cold start to first result (%s): %.0f ms without pipeline cache, %.0f ms with it "
            "(process exit %.0f / %.0f ms)\n",
            image, cold_first, warm_first, cold_exit, warm_exit);
}

int cli_bench(const struct cli_args *args, FILE *out)
{
    int runs = args->bench_runs > 0 ? args->bench_runs : 10;
    char err[1024];
    if (args->action == CLI_BENCH_OPS) {
        if (ppocr_bench_ops(&args->ocr, runs, out, err, sizeof(err))) {
            cli_error("%s", err);
            return 3;
        }
        return 0;
    }

    /* The images: those given, else the bundled sample and two 960x960 pages made from it. */
    int n_images = args->n_inputs ? args->n_inputs : 3;
    struct bench_image *images = calloc((size_t)n_images, sizeof(*images));
    if (!images)
        return 1;
    int rc = 0;
    double decode_ms[64] = {0};
    for (int i = 0; i < (args->n_inputs ? n_images : 1); i++) {
        const char *path = args->n_inputs ? args->inputs[i] : sample_path();
        images[i].path = (char *)path;
        snprintf(images[i].name, sizeof(images[i].name), "%s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
        int k = 0;
        for (; k < runs && k < 64; k++) {
            struct ppocr_image tmp;
            double t0 = now_ms();
            if (ppocr_image_load_file(path, PPOCR_ALPHA_IGNORE, &tmp, err, sizeof(err)) != PPOCR_OK) {
                cli_error("%s", err);
                rc = 1;
                break;
            }
            decode_ms[k] = now_ms() - t0;
            if (k == 0)
                images[i].img = tmp;
            else
                ppocr_image_free(&tmp);
        }
        if (rc)
            break;
        fprintf(out, "decode %s: %.2f ms median\n", images[i].name, median(decode_ms, k));
    }
    if (rc == 0 && !args->n_inputs) {
        if (make_page(&images[0].img, &images[1].img)) {
            cli_error("out of memory");
            rc = 1;
        }
        snprintf(images[1].name, sizeof(images[1].name), "generated 960x960 page");
        if (rc == 0 && make_document(&images[0].img, &images[2].img)) {
            cli_error("cannot make a document page from the sample");
            rc = 1;
        }
        snprintf(images[2].name, sizeof(images[2].name), "generated 960x960 document");
    }

    struct ppocr_options opt = args->ocr;
    opt.profile = 1;
    struct ppocr_engine *engine = NULL;
    if (!rc)
        ppocr_engine_create(&opt, &engine, err, sizeof(err));
    if (!rc && !engine) {
        cli_error("%s", err);
        rc = 3;
    }
    if (engine)
        fprintf(out, "device: %s; %d runs per image after one warm-up\n\n", ppocr_engine_device(engine), runs);
    struct ppocr_engine *plain = NULL;
    if (engine) {
        opt.profile = 0;
        if (ppocr_engine_create(&opt, &plain, err, sizeof(err))) {
            cli_error("%s", err);
            rc = 3;
        }
    }

    double *wall = calloc((size_t)runs * PPOCR_STAGE_COUNT, sizeof(double));
    double *gpu = calloc((size_t)runs * PPOCR_STAGE_COUNT, sizeof(double));
    double *total = calloc((size_t)runs, sizeof(double));
    if (!wall || !gpu || !total)
        rc = 1;
    for (int i = 0; i < n_images && rc == 0; i++) {
        int lines = 0;
        for (int r = -1; r < runs && rc == 0; r++) {
            struct ppocr_result res;
            double t;
            if ((rc = run_to_result(engine, args, &images[i], &res, &t)))
                break;
            lines = res.n_lines;
            if (r >= 0) {
                total[r] = t;
                for (int s = 0; s < PPOCR_STAGE_COUNT; s++) {
                    wall[s * runs + r] = res.wall_ms[s];
                    gpu[s * runs + r] = res.gpu_ms[s];
                }
            }
            ppocr_result_free(&res);
        }
        if (rc)
            break;
        fprintf(out, "%s (%dx%d, %d lines)\n", images[i].name, images[i].img.width, images[i].img.height, lines);
        fprintf(out, "  %-10s %12s %12s\n", "stage", "wall ms", "GPU ms");
        for (int s = 0; s < PPOCR_STAGE_COUNT; s++)
            fprintf(out, "  %-10s %12.3f %12.3f\n", ppocr_stage_name(s), median(wall + s * runs, runs),
                    median(gpu + s * runs, runs));
        fprintf(out, "  %-10s %12.3f\n", "end-to-end", median(total, runs));
        /* The stage timings cost a timestamp and a host clock reading per recording: the same
         * image again on an engine without them. */
        for (int r = -1; r < runs && rc == 0 && plain; r++) {
            struct ppocr_result res;
            double t;
            if ((rc = run_to_result(plain, args, &images[i], &res, &t)))
                break;
            if (r >= 0)
                total[r] = t;
            ppocr_result_free(&res);
        }
        if (rc == 0 && plain)
            fprintf(out, "  %-10s %12.3f   (no timestamps)\n", "end-to-end", median(total, runs));
        fprintf(out, "\n");
    }

    /* Throughput: the whole set, decode included where the image came from a file. */
    if (rc == 0) {
        int done = 0;
        double t0 = now_ms();
        for (int r = 0; r < runs && rc == 0; r++)
            for (int i = 0; i < n_images && rc == 0; i++) {
                struct ppocr_image tmp, *img = &images[i].img;
                if (images[i].path) {
                    if (ppocr_image_load_file(images[i].path, PPOCR_ALPHA_IGNORE, &tmp, err, sizeof(err)) != PPOCR_OK) {
                        rc = 1;
                        break;
                    }
                    img = &tmp;
                }
                struct ppocr_result res;
                rc = ppocr_engine_run(plain, img, &res, err, sizeof(err)) ? 1 : 0;
                if (rc == 0)
                    ppocr_result_free(&res);
                if (images[i].path)
                    ppocr_image_free(&tmp);
                done++;
            }
        double secs = (now_ms() - t0) / 1e3;
        fprintf(out, "throughput: %.2f images/s over %d images (one image in flight at a time)\n",
                secs > 0 ? done / secs : 0, done);
        struct ppocr_engine_memory mem;
        ppocr_engine_memory(plain, &mem);
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        fprintf(out, "peak device memory: %.1f MiB device-local pool, %.1f MiB staging pool; peak RSS %.1f MiB\n",
                mem.device_peak / 1048576.0, mem.host_peak / 1048576.0, ru.ru_maxrss / 1024.0);
    }
    ppocr_engine_destroy(engine);
    ppocr_engine_destroy(plain);
    if (rc == 0) {
        const char *image = args->n_inputs ? args->inputs[0] : sample_path();
        print_cold_start(args, image, out);
    }
    for (int i = 0; i < n_images; i++)
        ppocr_image_free(&images[i].img);
    free(images);
    free(wall);
    free(gpu);
    free(total);
    return rc;
}
