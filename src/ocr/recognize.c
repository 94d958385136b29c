/* Recognition: lines grouped by input width, rec_batch_num at a time, and up to REC_GROUP (or
 * REC_GROUP_GROWN) such batches run in lockstep in one run (a page's lines fall into many widths,
 * and one batch alone leaves the GPU waiting on its chain of barriers); the argmax on the device,
 * CTC on the host. With cls, the classifier joins the first run's lockstep. */
#include <math.h>
#include <stdlib.h>

#include "ocr/engine_internal.h"
#include "ocr/fit.h"
#include "ocr/net_io.h"
#include "ocr/preprocess.h"

/* The rec input width of a line on its own: 320, or the line's width at height 48 rounded up to
 * the width ladder (see REC_WIDTH_STEP). A line's width depends on the line alone, so its text
 * does not depend on which lines share its batch. */
static int rec_bucket_width(const struct image_crop *c)
{
    int w = c->rotate ? c->height : c->width, h = c->rotate ? c->width : c->height;
    int resized = (int)ceil((double)REC_HEIGHT * w / (h > 0 ? h : 1));
    if (resized <= REC_MIN_WIDTH)
        return REC_MIN_WIDTH;
    int bucket = REC_MIN_WIDTH;
    while (bucket < resized)
        bucket = (bucket * 9 / 8 + REC_WIDTH_STEP - 1) / REC_WIDTH_STEP * REC_WIDTH_STEP;
    return bucket;
}

static double line_ratio(const struct line *l)
{
    const struct image_crop *c = &l->crop;
    int w = c->rotate ? c->height : c->width, h = c->rotate ? c->width : c->height;
    return (double)w / (h > 0 ? h : 1);
}

static int compare_lines_by_width(const void *a, const void *b)
{
    const struct line *la = *(const struct line *const *)a, *lb = *(const struct line *const *)b;
    if (la->width != lb->width)
        return la->width < lb->width ? -1 : 1;
    if (la->image != lb->image) /* a batch's lines of one image side by side: one crop set each */
        return la->image - lb->image;
    return la->box - lb->box;
}

static int compare_lines_by_ratio(const void *a, const void *b)
{
    const struct line *la = *(const struct line *const *)a, *lb = *(const struct line *const *)b;
    double ra = line_ratio(la), rb = line_ratio(lb);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    return la->box - lb->box; /* a stable argsort, as the reference's */
}

/* Orders the lines for recognition and gives each its input width. Default: by width bucket.
 * PaddleOCR (parity): by aspect ratio, and every batch of rec_batch_num lines padded to
 * trunc(48 * max(320/48, widest ratio of the batch)). */
static void plan_rec_batches(struct line **order, int n_lines, int batch_max, int parity)
{
    if (!parity) {
        for (int i = 0; i < n_lines; i++)
            order[i]->width = rec_bucket_width(&order[i]->crop);
        qsort(order, (size_t)n_lines, sizeof(*order), compare_lines_by_width);
        return;
    }
    qsort(order, (size_t)n_lines, sizeof(*order), compare_lines_by_ratio);
    for (int beg = 0; beg < n_lines; beg += batch_max) {
        int end = beg + batch_max < n_lines ? beg + batch_max : n_lines;
        double max_ratio = (double)REC_MIN_WIDTH / REC_HEIGHT;
        for (int k = beg; k < end; k++)
            max_ratio = fmax(max_ratio, line_ratio(order[k]));
        int width = (int)(REC_HEIGHT * max_ratio);
        for (int k = beg; k < end; k++)
            order[k]->width = width;
    }
}

/* One recognition batch: lines order[start .. start + n) at one input width. */
struct rec_batch {
    int start, n, width;
    struct nn_plan *plan;
    int64_t steps;
};

/* fit_need_fn of a recognition batch placed after `base` bytes of plans: `count` lines at `width`,
 * or with width 0 one line at a width of REC_MIN_WIDTH + (count - 1) REC_WIDTH_STEP. */
struct rec_fit {
    struct nn_session *nets;
    uint64_t base, align;
    int width;
};

static uint64_t rec_need(void *ctx, int count)
{
    const struct rec_fit *f = ctx;
    const int64_t shape[4] = {f->width ? count : 1, 3, REC_HEIGHT,
                              f->width ? f->width : REC_MIN_WIDTH + (int64_t)(count - 1) * REC_WIDTH_STEP};
    const uint64_t bytes = nn_session_plan_bytes(f->nets, NN_NET_REC, shape);
    return bytes == UINT64_MAX ? bytes : (f->base + f->align - 1) / f->align * f->align + bytes;
}

/* Cuts batch b, the first of its group (after the classifier's plan all[0] when with_cls), to what
 * the activation memory holds: the most of its lines that fit, or, where one line alone does not
 * fit at its width, the batch's lines narrowed to the widest input that does (they are squeezed
 * into it). Sets b and its plan all[with_cls]; returns 1, 0 when not one line fits beside the
 * classifier, or -1. */
static int cut_rec_batch(struct ppocr_engine *e, struct nn_plan **all, int with_cls, struct line **order,
                         struct rec_batch *b, char *err, size_t err_len)
{
    const uint64_t limit = nn_session_memory_limit(e->nets);
    struct rec_fit f = {e->nets, with_cls ? nn_plans_bytes(all, 1) : 0, nn_plan_align(all[with_cls]), b->width};
    int rows = fit_most(b->n, limit, rec_need, &f);
    if (rows == 0 && with_cls)
        return 0;
    if (rows == 0) {
        struct rec_fit one = {e->nets, 0, 1, 0};
        const int steps = fit_most((b->width - REC_MIN_WIDTH) / REC_WIDTH_STEP + 1, limit, rec_need, &one);
        if (steps > 0) {
            f.width = b->width = REC_MIN_WIDTH + (steps - 1) * REC_WIDTH_STEP;
            for (int i = 0; i < b->n; i++)
                order[b->start + i]->width = b->width;
            rows = fit_most(b->n, limit, rec_need, &f);
        }
    }
    if (rows == 0)
        return ocr_fail(err, err_len, "%s", "a text line needs more activation memory than the device takes at once");
    b->n = rows;
    const int64_t shape[4] = {b->n, 3, REC_HEIGHT, b->width};
    return (all[with_cls] = nn_session_plan(e->nets, NN_NET_REC, shape, err, err_len)) ? 1 : -1;
}

/* The classifier's verdicts on its lines apart from recognition, where they do not fit beside it. */
static int cls_apart(struct ppocr_engine *e, const struct cls_beside *cls, struct ppocr_result *r, char *err,
                     size_t err_len)
{
    struct line copy[CLS_BATCH_MAX];
    for (int i = 0; i < cls->n; i++)
        copy[i] = *cls->lines[i];
    if (ocr_classify(e, copy, cls->n, r, err, err_len))
        return -1;
    for (int i = 0; i < cls->n; i++)
        cls->turn[i] = copy[i].crop.flip;
    return 0;
}

/* The lines of the batch that begins at order[start]: those after it of its input width, at most
 * batch_max. */
static int batch_lines(struct line *const *order, int start, int n_lines, int batch_max)
{
    int n = 0;
    while (start + n < n_lines && n < batch_max && order[start + n]->width == order[start]->width)
        n++;
    return n;
}

/* A group: batches g[0..*ng) from order[*start..), their plans in all[with_cls..] after the
 * classifier's (all[0] with cls). Stops where the device, or the memory allowance, or the crop
 * sets take no more; may run the classifier apart (*cls_read, *with_cls cleared) when not one line
 * fits beside it. */
static int gather_group(struct ppocr_engine *e, struct line **order, int n_lines, int *start,
                        const struct cls_beside *cls, int *with_cls, bool *cls_read, struct nn_plan **all,
                        struct rec_batch *g, int *ng, struct ppocr_result *r, char *err, size_t err_len)
{
    const int batch_max = e->opt.rec_batch_num > 0 ? e->opt.rec_batch_num : 1;
    const uint64_t limit = nn_session_memory_limit(e->nets);
    *ng = 0;
    int crop_sets = *with_cls ? ocr_crop_images(cls->lines, cls->n) : 0;
    if (*with_cls) {
        const int64_t shape[4] = {cls->n, 3, REC_HEIGHT, OCR_CLS_WIDTH};
        if (!(all[0] = nn_session_plan(e->nets, NN_NET_CLS, shape, err, err_len)))
            return -1;
    }
    while (*ng < REC_GROUP_GROWN && *start < n_lines) {
        struct nn_plan **plans = all + *with_cls;
        struct rec_batch *b = &g[*ng];
        b->start = *start;
        b->width = order[*start]->width;
        b->n = batch_lines(order, *start, n_lines, batch_max);
        const int sets = ocr_crop_images(order + *start, b->n);
        if (crop_sets + sets > OCR_CROP_BATCHES && *ng > 0)
            break; /* its crops wait for the next run */
        const int64_t shape[4] = {b->n, 3, REC_HEIGHT, b->width};
        if (!(plans[*ng] = nn_session_plan(e->nets, NN_NET_REC, shape, err, err_len)))
            return -1;
        uint64_t need = nn_plans_bytes(all, *with_cls + *ng + 1);
        if (need > limit && *ng > 0)
            break; /* the device takes no more at once: the batch waits for the next run */
        if (need > limit) {
            int cut = cut_rec_batch(e, all, *with_cls, order, b, err, err_len);
            if (cut == 0) { /* the classifier runs first, apart */
                *cls_read = true;
                *with_cls = 0;
                plans = all;
                crop_sets = 0;
                cut = cls_apart(e, cls, r, err, err_len) ? -1 : cut_rec_batch(e, all, 0, order, b, err, err_len);
            }
            if (cut < 0)
                return -1;
            need = nn_plans_bytes(all, *with_cls + *ng + 1);
        }
        const uint64_t held = nn_session_memory_held(e->nets), room = held > REC_GROUP_MEMORY ? held : REC_GROUP_MEMORY;
        if (*ng >= REC_GROUP && need > room)
            break; /* the batch waits for the next run rather than grow the memory further */
        b->plan = plans[*ng];
        nn_session_pin(e->nets, b->plan, true);
        b->steps = nn_plan_output_shape(b->plan)->d[1];
        crop_sets += ocr_crop_images(order + *start, b->n); /* a cut batch may take fewer */
        *start += b->n;
        (*ng)++;
    }
    return 0;
}

/* Runs a gathered group: the crops of every batch (and the classifier's) in one pass of each
 * kernel, the nets in lockstep and in parts, the argmax of each batch. */
static int run_group(struct ppocr_engine *e, struct line **order, const struct cls_beside *cls, int with_cls,
                     struct nn_plan **all, const struct rec_batch *g, int ng, char *err, size_t err_len)
{
    struct crop_set sets[OCR_CROP_BATCHES];
    struct ocr_net_io_crops crops = {e->io, {.n = 0}};
    struct nn_run run = {.plans = all,
                         .n_plans = with_cls + ng,
                         .record_inputs = ocr_net_io_record_crops,
                         .ctx = &crops,
                         .in_parts = true};
    int rc = 0;
    for (int k = 0; k < ng; k++) {
        rc |= ocr_crop_sets_add(sets, &crops.runs, with_cls + k, order + g[k].start, g[k].n, g[k].width, 1);
        run.output[with_cls + k] = NN_OUTPUT_ARGMAX;
    }
    if (with_cls) {
        rc |= ocr_crop_sets_add(sets, &crops.runs, 0, cls->lines, cls->n, OCR_CLS_WIDTH, 0);
        run.output[0] = NN_OUTPUT_READ;
    }
    if (rc) /* gather_group counted them */
        return ocr_fail(err, err_len, "%s", "a recognition group's crops from too many images");
    if (ocr_set_crops_all(e, sets, crops.runs.n, err, err_len))
        return -1;
    return nn_session_run(e->nets, &run, err, err_len);
}

/* CTC of every line of the group from the last run's argmax. */
static int decode_group(struct ppocr_engine *e, struct line **order, int with_cls, const struct rec_batch *g, int ng,
                        char *err, size_t err_len)
{
    const struct pvk_model *rec = &e->models[NN_NET_REC];
    int rc = 0;
    for (int k = 0; k < ng && rc == 0; k++) {
        const int32_t *index;
        const float *prob;
        if (nn_session_argmax(e->nets, with_cls + k, &index, &prob))
            return ocr_fail(err, err_len, "%s", "recognition results missing");
        for (int i = 0; i < g[k].n && rc == 0; i++) {
            const size_t at = (size_t)i * (size_t)g[k].steps;
            rc = ctc_decode_argmax(index + at, prob + at, (size_t)g[k].steps, rec->dict, rec->n_dict,
                                   &order[g[k].start + i]->text, err, err_len);
            order[g[k].start + i]->text.input_width = g[k].width;
        }
    }
    return rc;
}

/* The plans of the classifier beside recognition and of the batches that the groups will ask for,
 * made ahead, side by side where the session can (gather_group may still cut a batch to the
 * memory, and then asks for that plan itself). */
static void plan_ahead(struct ppocr_engine *e, struct line **order, int n_lines, int batch_max,
                       const struct cls_beside *cls)
{
    struct nn_plan_request requests[GROUP_PLANS_MAX];
    int n = 0;
    if (cls)
        requests[n++] = (struct nn_plan_request){NN_NET_CLS, {cls->n, 3, REC_HEIGHT, OCR_CLS_WIDTH}};
    for (int start = 0; start < n_lines && n < GROUP_PLANS_MAX;) {
        const int count = batch_lines(order, start, n_lines, batch_max);
        requests[n++] = (struct nn_plan_request){NN_NET_REC, {count, 3, REC_HEIGHT, order[start]->width}};
        start += count;
    }
    nn_session_plan_ahead(e->nets, requests, n);
}

int ocr_recognize(struct ppocr_engine *e, struct line *lines, int n_lines, const struct cls_beside *cls,
                  struct ppocr_result *r, char *err, size_t err_len)
{
    struct line **order = malloc((size_t)n_lines * sizeof(*order) + 1);
    if (!order)
        return ocr_fail(err, err_len, "%s", "out of memory");
    const int batch_max = e->opt.rec_batch_num > 0 ? e->opt.rec_batch_num : 1;
    for (int i = 0; i < n_lines; i++)
        order[i] = &lines[i];
    plan_rec_batches(order, n_lines, batch_max, e->opt.paddle_parity);
    const double ahead_t0 = ocr_now_ms();
    plan_ahead(e, order, n_lines, batch_max, cls);
    r->wall_ms[PPOCR_STAGE_REC] += ocr_now_ms() - ahead_t0;
    int rc = 0;
    bool cls_read = false;
    for (int start = 0; start < n_lines && rc == 0;) {
        struct rec_batch g[REC_GROUP_GROWN];
        /* the classifier's plan first (this run only), then one per batch */
        struct nn_plan *all[GROUP_PLANS_MAX];
        int with_cls = cls && !cls_read, ng = 0;
        double t0 = ocr_now_ms();
        rc = gather_group(e, order, n_lines, &start, cls, &with_cls, &cls_read, all, g, &ng, r, err, err_len);
        if (rc == 0)
            rc = run_group(e, order, cls, with_cls, all, g, ng, err, err_len);
        for (int k = 0; k < ng; k++)
            nn_session_pin(e->nets, g[k].plan, false);
        if (rc == 0 && with_cls) {
            rc = ocr_read_directions(e, all[0], 0, cls->n, cls->turn, err, err_len);
            cls_read = true;
        }
        if (rc)
            break;
        r->gpu_ms[PPOCR_STAGE_REC] += nn_session_gpu_ms(e->nets);
        double t1 = ocr_now_ms();
        r->wall_ms[PPOCR_STAGE_REC] += t1 - t0;
        rc = decode_group(e, order, with_cls, g, ng, err, err_len);
        r->wall_ms[PPOCR_STAGE_CTC] += ocr_now_ms() - t1;
    }
    free(order);
    return rc;
}
