#include "ppocr.h"

#include <string.h>

#include "ocr/engine_internal.h"

struct nn_device_options ocr_device_options(const struct ppocr_options *opt)
{
    const enum nn_backend_kind backend = opt->backend == PPOCR_BACKEND_CPU      ? NN_BACKEND_CPU
                                         : opt->backend == PPOCR_BACKEND_VULKAN ? NN_BACKEND_VULKAN
                                                                                : NN_BACKEND_AUTO;
    return (struct nn_device_options){
        .backend = backend, .index = opt->device_index, .force_fp32 = opt->force_fp32, .threads = opt->threads};
}

void ppocr_options_default(struct ppocr_options *opt)
{
    memset(opt, 0, sizeof(*opt));
    opt->device_index = -1;
    opt->use_cls = 1;
    opt->det_limit_side_len = 960;
    opt->det_db_thresh = 0.3f;
    opt->det_db_box_thresh = 0.6;
    opt->det_db_unclip_ratio = 1.5;
    opt->cls_thresh = 0.9f;
    opt->drop_score = 0.5f;
    opt->rec_batch_num = 6;
}

const char *ppocr_stage_name(enum ppocr_stage stage)
{
    static const char *const names[PPOCR_STAGE_COUNT] = {"upload", "det_pre", "det", "db_post",
                                                         "cls",    "rec",     "ctc", "layout"};
    return (unsigned)stage < PPOCR_STAGE_COUNT ? names[stage] : "?";
}
