#include "cli/engines.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/exit_status.h"
#include "cli/messages.h"

int cli_engine_first(const struct cli_args *args, struct ppocr_engine **out)
{
    struct ppocr_options ocr = args->ocr;
    if (!ocr.threads && args->jobs > 1 && !getenv("OMP_NUM_THREADS")) {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        ocr.threads = cores > args->jobs ? (int)(cores / args->jobs) : 1;
    }
    char err[1024];
    const enum ppocr_status status = ppocr_engine_create(&ocr, out, err, sizeof(err));
    if (!*out) {
        cli_error("%s", err);
        return status == PPOCR_ERR_NO_DEVICE || status == PPOCR_ERR_MODELS ? EXIT_NO_DEVICE_OR_MODELS : EXIT_SOME_FAILED;
    }
    if (args->ocr.profile) {
        struct ppocr_engine_startup st;
        ppocr_engine_startup(*out, &st);
        fprintf(stderr, "profile device: %s\n", ppocr_engine_device(*out));
        fprintf(stderr, "profile startup: models %.2f ms device %.2f ms nets %.2f ms other %.2f ms\n", st.models_ms,
                st.device_ms, st.nets_ms, st.other_ms);
    }
    return 0;
}

int cli_engine_jobs(const struct cli_args *args, const struct ppocr_engine *first)
{
    if (args->jobs)
        return args->jobs;
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const int discrete = cores >= 16 ? 16 : cores >= 2 ? (int)cores : 2;
    const int by_class[] = {
        [PPOCR_DEVICE_CPU] = 1, [PPOCR_DEVICE_DISCRETE_GPU] = discrete, [PPOCR_DEVICE_OTHER_GPU] = 2};
    return by_class[ppocr_engine_device_class(first)];
}

int cli_engine_sibling(struct ppocr_engine **engines, int worker)
{
    if (engines[worker])
        return 0;
    char err[1024];
    ppocr_engine_create_sibling(engines[0], &engines[worker], err, sizeof(err));
    if (!engines[worker]) {
        cli_error("worker %d goes without an engine: %s", worker + 1, err);
        return -1;
    }
    return 0;
}
