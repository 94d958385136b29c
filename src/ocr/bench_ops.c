/* `ppocr-vk --bench-ops`: the nets' ops timed one by one (nn/bench.h) on the engine's models. */
#include <stdio.h>

#include "nn/bench.h"
#include "ocr/engine_internal.h"
#include "ocr/models_path.h"
#include "ppocr.h"

enum ppocr_status ppocr_bench_ops(const struct ppocr_options *opt, int runs, FILE *out, char *err, size_t err_len)
{
    char dir[4096];
    if (ocr_find_models_dir(opt->models_dir, dir, sizeof(dir))) {
        snprintf(err, err_len, "no models in %s (run tools/fetch-models.sh, or give --models DIR)", dir);
        return PPOCR_ERR_MODELS;
    }
    const struct nn_device_options dev = ocr_device_options(opt);
    return nn_bench_ops(&dev, dir, opt->fp16_math, runs, out, err, err_len) ? PPOCR_ERR_FAILED : PPOCR_OK;
}
