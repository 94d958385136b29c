/* The direction classifier on its own: crops at 48x192 through cls, CLS_BATCH_MAX lines a run. */
#include "ocr/engine_internal.h"
#include "ocr/fit.h"
#include "ocr/net_io.h"
#include "ocr/preprocess.h"

int ocr_read_directions(struct ppocr_engine *e, const struct nn_plan *plan, int k, int n, bool *turn, char *err,
                        size_t err_len)
{
    const struct pvk_shape *out = nn_plan_output_shape(plan);
    int64_t classes = out->d[out->ndim - 1];
    float probs[CLS_BATCH_MAX * 2];
    if (n > CLS_BATCH_MAX || classes != 2 || pvk_shape_numel(out) != n * classes)
        return ocr_fail(err, err_len, "%s", "cls.pvk: the classifier does not output two directions");
    if (nn_session_read_output(e->nets, k, probs, err, err_len))
        return -1;
    for (int i = 0; i < n; i++) {
        const float *p = &probs[i * 2];
        /* argmax takes the first of equal scores, as numpy does */
        int label = p[1] > p[0];
        turn[i] = label == 1 && p[1] > e->opt.cls_thresh;
    }
    return 0;
}

/* fit_need_fn of a classifier batch of n lines (ctx: the session). */
static uint64_t cls_need(void *ctx, int n)
{
    const int64_t shape[4] = {n, 3, REC_HEIGHT, OCR_CLS_WIDTH};
    return nn_session_plan_bytes(ctx, NN_NET_CLS, shape);
}

/* The classifier's plan for a batch of *n lines, or for the most of them that fit the device
 * (*n is then that many). */
static struct nn_plan *cls_plan(struct ppocr_engine *e, int *n, char *err, size_t err_len)
{
    int64_t shape[4] = {*n, 3, REC_HEIGHT, OCR_CLS_WIDTH};
    struct nn_plan *plan = nn_session_plan(e->nets, NN_NET_CLS, shape, err, err_len);
    const uint64_t limit = nn_session_memory_limit(e->nets);
    if (!plan || nn_plan_bytes(plan) <= limit)
        return plan;
    if (!(shape[0] = *n = fit_most(*n, limit, cls_need, e->nets))) {
        snprintf(err, err_len,
                 "the direction classifier needs more activation memory than the device takes at "
                 "once (%llu bytes)",
                 (unsigned long long)limit);
        return NULL;
    }
    return nn_session_plan(e->nets, NN_NET_CLS, shape, err, err_len);
}

int ocr_classify(struct ppocr_engine *e, struct line *lines, int n_lines, struct ppocr_result *r, char *err,
                 size_t err_len)
{
    for (int start = 0, n; start < n_lines; start += n) {
        n = n_lines - start < CLS_BATCH_MAX ? n_lines - start : CLS_BATCH_MAX;
        struct line *batch[CLS_BATCH_MAX];
        for (int i = 0; i < n; i++)
            batch[i] = &lines[start + i];
        struct nn_plan *plan = cls_plan(e, &n, err, err_len);
        if (!plan)
            return -1;
        struct ocr_net_io_crops crops = {e->io, {.n = 0}};
        struct crop_set sets[OCR_CROP_BATCHES];
        if (ocr_crop_sets_add(sets, &crops.runs, 0, batch, n, OCR_CLS_WIDTH, 0))
            return ocr_fail(err, err_len, "%s", "the classifier's lines come from too many images");
        if (ocr_set_crops_all(e, sets, crops.runs.n, err, err_len))
            return -1;
        const struct nn_run run = {.plans = &plan,
                                   .n_plans = 1,
                                   .output = {NN_OUTPUT_READ},
                                   .record_inputs = ocr_net_io_record_crops,
                                   .ctx = &crops};
        if (nn_session_run(e->nets, &run, err, err_len))
            return -1;
        r->gpu_ms[PPOCR_STAGE_CLS] += nn_session_gpu_ms(e->nets);
        bool turn[CLS_BATCH_MAX];
        if (ocr_read_directions(e, plan, 0, n, turn, err, err_len))
            return -1;
        for (int i = 0; i < n; i++)
            batch[i]->crop.flip = turn[i];
    }
    return 0;
}
