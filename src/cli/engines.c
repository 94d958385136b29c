#include "cli/engines.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/exit_status.h"
#include "cli/messages.h"

#define JOBS_MAX 64
#define DECODE_THREADS_MAX 16

/* Engines per device by default: one per two CPU cores on a discrete GPU (2 to 8), two on another
 * GPU, so that images' CPU stages (DB post-processing, CTC) overlap other images' GPU work. On a
 * GPU the images are decoded on threads of their own, one per core, and an engine reads the images
 * that are ready together in one run: on a discrete GPU's 16-core host, eight engines ran both a
 * folder of small images and one with large scans among them faster than sixteen, whose runs were
 * smaller and whose threads took cores from the decoders (BENCHMARKS.md). One on a CPU device,
 * whose driver already uses every core. Each engine adds its own activation memory, which an
 * integrated GPU shares with the host. */
static int default_jobs(const struct ppocr_engine *first)
{
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const int half = (int)(cores / 2), discrete = half > 8 ? 8 : half < 2 ? 2 : half;
    const int by_class[] = {
        [PPOCR_DEVICE_CPU] = 1, [PPOCR_DEVICE_DISCRETE_GPU] = discrete, [PPOCR_DEVICE_OTHER_GPU] = 2};
    return by_class[ppocr_engine_device_class(first)];
}

struct device_start {
    struct ppocr_options opt;
    struct ppocr_engine *engine;
    enum ppocr_status status;
    char err[1024];
};

static void *start_device(void *arg)
{
    struct device_start *d = arg;
    d->status = ppocr_engine_create(&d->opt, &d->engine, d->err, sizeof(d->err));
    return NULL;
}

/* The devices' options: the command's one device, or each of its list (all: every Vulkan GPU). */
static int choose_devices(const struct cli_args *args, struct device_start *out, int *n)
{
    struct ppocr_options one = args->ocr;
    if (!one.threads && args->jobs > 1 && !getenv("OMP_NUM_THREADS")) {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        one.threads = cores > args->jobs ? (int)(cores / args->jobs) : 1;
    }
    *n = 0;
    if (!args->n_devices && !args->all_devices) {
        out[(*n)++].opt = one;
        return 0;
    }
    enum ppocr_device_class classes[CLI_DEVICES_MAX];
    char err[512];
    const int n_vulkan = ppocr_vulkan_device_classes(classes, CLI_DEVICES_MAX, err, sizeof(err));
    if (args->all_devices) {
        for (int i = 0; i < n_vulkan && i < CLI_DEVICES_MAX; i++)
            if (classes[i] != PPOCR_DEVICE_CPU) {
                out[*n].opt = one;
                out[*n].opt.backend = PPOCR_BACKEND_VULKAN;
                out[(*n)++].opt.device_index = i;
            }
        if (*n == 0) /* no GPU: the device chosen without --device */
            out[(*n)++].opt = one;
        return 0;
    }
    int cpu_class = 0, gpu_class = 0;
    for (int k = 0; k < args->n_devices; k++) {
        out[*n].opt = one;
        out[*n].opt.backend = args->devices[k].backend;
        out[*n].opt.device_index = args->devices[k].index;
        (*n)++;
        const int index = args->devices[k].index;
        const int is_cpu = args->devices[k].backend == PPOCR_BACKEND_CPU ||
                           (index >= 0 && index < n_vulkan && classes[index] == PPOCR_DEVICE_CPU);
        cpu_class |= is_cpu;
        gpu_class |= !is_cpu;
    }
    if (cpu_class && gpu_class && !args->mixed_devices) {
        cli_error("--device: the list holds a CPU device and GPUs, and the CPU one would hold the output order "
                  "back: add --mixed-devices to run them together");
        return EXIT_USAGE;
    }
    return 0;
}

int cli_engines_open(const struct cli_args *args, int max_jobs, struct cli_engines *out)
{
    memset(out, 0, sizeof(*out));
    struct device_start starts[CLI_DEVICES_MAX];
    memset(starts, 0, sizeof(starts));
    int n;
    int rc = choose_devices(args, starts, &n);
    if (rc)
        return rc;
    pthread_t threads[CLI_DEVICES_MAX];
    int started[CLI_DEVICES_MAX] = {0};
    for (int k = 1; k < n; k++) /* device 0 on this thread */
        started[k] = pthread_create(&threads[k], NULL, start_device, &starts[k]) == 0;
    start_device(&starts[0]);
    for (int k = 1; k < n; k++) {
        if (started[k])
            pthread_join(threads[k], NULL);
        else
            start_device(&starts[k]);
    }
    for (int k = 0; k < n && !rc; k++) {
        if (starts[k].engine)
            continue;
        cli_error("%s", starts[k].err);
        rc = starts[k].status == PPOCR_ERR_NO_DEVICE || starts[k].status == PPOCR_ERR_MODELS
                 ? EXIT_NO_DEVICE_OR_MODELS
                 : EXIT_SOME_FAILED;
    }
    int jobs = 0;
    for (int k = 0; k < n; k++)
        jobs += starts[k].engine ? default_jobs(starts[k].engine) : 0;
    if (args->jobs)
        jobs = args->jobs;
    jobs = jobs > JOBS_MAX ? JOBS_MAX : jobs;
    jobs = jobs > max_jobs ? max_jobs : jobs < 1 ? 1 : jobs;
    out->engines = rc ? NULL : calloc((size_t)jobs, sizeof(*out->engines));
    if (!rc && !out->engines) {
        cli_error("out of memory");
        rc = EXIT_SOME_FAILED;
    }
    if (rc) {
        for (int k = n; k-- > 0;)
            ppocr_engine_destroy(starts[k].engine);
        return rc;
    }
    for (int k = jobs; k < n; k++) /* more devices than engines: those are not needed */
        ppocr_engine_destroy(starts[k].engine);
    out->n_devices = n < jobs ? n : jobs;
    out->jobs = jobs;
    for (int k = 0; k < out->n_devices; k++)
        out->engines[k] = starts[k].engine;
    if (args->ocr.profile)
        for (int k = 0; k < out->n_devices; k++) {
            struct ppocr_engine_startup st;
            ppocr_engine_startup(out->engines[k], &st);
            fprintf(stderr, "profile device: %s\n", ppocr_engine_device(out->engines[k]));
            fprintf(stderr, "profile startup: models %.2f ms device %.2f ms nets %.2f ms other %.2f ms\n",
                    st.models_ms, st.device_ms, st.nets_ms, st.other_ms);
        }
    return 0;
}

int cli_engines_decode_threads(const struct cli_engines *e, int asked)
{
    if (e->jobs < 2)
        return 0;
    if (asked >= 0)
        return asked;
    for (int k = 0; k < e->n_devices; k++)
        if (ppocr_engine_device_class(e->engines[k]) == PPOCR_DEVICE_CPU)
            return 0;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    return cores >= DECODE_THREADS_MAX ? DECODE_THREADS_MAX : cores >= 1 ? (int)cores : 1;
}

int cli_engines_sibling(struct cli_engines *e, int worker)
{
    if (e->engines[worker])
        return 0;
    char err[1024];
    ppocr_engine_create_sibling(e->engines[worker % e->n_devices], &e->engines[worker], err, sizeof(err));
    if (!e->engines[worker]) {
        cli_error("worker %d goes without an engine: %s", worker + 1, err);
        return -1;
    }
    return 0;
}

void cli_engines_close(struct cli_engines *e)
{
    for (int i = e->jobs; e->engines && i-- > 0;)
        ppocr_engine_destroy(e->engines[i]);
    free(e->engines);
    memset(e, 0, sizeof(*e));
}
