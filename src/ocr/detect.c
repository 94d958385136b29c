/* Detection: the image on the device, the det net at the longest side that fits, the probability
 * map thresholded on the device and DB boxes on the host; small print read again in strips. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ocr/det_tiles.h"
#include "ocr/engine_internal.h"
#include "ocr/fit.h"
#include "ocr/net_io.h"
#include "ocr/preprocess.h"

int ocr_upload(struct ppocr_engine *e, const struct ppocr_image *src, int margin, struct ppocr_result *r, char *err,
               size_t err_len)
{
    double t0 = ocr_now_ms();
    int rc = ocr_net_io_upload(e->io, src, margin, e->helpers, err, err_len);
    r->wall_ms[PPOCR_STAGE_UPLOAD] += ocr_now_ms() - t0;
    return rc;
}

struct det_fit {
    struct ppocr_engine *e;
    const struct ppocr_image *img;
};

/* fit_need_fn of the detector's input for img at a longest side of 32 k. */
static uint64_t det_need(void *ctx, int k)
{
    const struct det_fit *f = ctx;
    int w, h;
    ocr_det_resize_dims(f->img->width, f->img->height, 32 * k, &w, &h);
    const int64_t shape[4] = {1, 3, h, w};
    return nn_session_plan_bytes(f->e->nets, NN_NET_DET, shape);
}

/* The det plan for img at `limit` (its longer side), or, where its activations would not fit the
 * device, at the longest side that fits (a multiple of 32, as the detector's input sides are). */
static struct nn_plan *det_plan(struct ppocr_engine *e, const struct ppocr_image *img, int limit, int *det_w,
                                int *det_h, char *err, size_t err_len)
{
    ocr_det_resize_dims(img->width, img->height, limit, det_w, det_h);
    int64_t shape[4] = {1, 3, *det_h, *det_w};
    struct nn_plan *plan = nn_session_plan(e->nets, NN_NET_DET, shape, err, err_len);
    const uint64_t memory = nn_session_memory_limit(e->nets);
    if (!plan || nn_plan_bytes(plan) <= memory)
        return plan;
    struct det_fit f = {e, img};
    const int k = fit_most(limit / 32, memory, det_need, &f);
    if (k == 0) {
        snprintf(err, err_len, "detection needs more activation memory than the device takes at once (%llu bytes)",
                 (unsigned long long)memory);
        return NULL;
    }
    ocr_det_resize_dims(img->width, img->height, 32 * k, det_w, det_h);
    shape[2] = *det_h;
    shape[3] = *det_w;
    return nn_session_plan(e->nets, NN_NET_DET, shape, err, err_len);
}

int ocr_detect(struct ppocr_engine *e, const struct ppocr_image *img, int limit, double unclip_ratio,
               struct db_boxes *boxes, struct ppocr_result *r, char *err, size_t err_len)
{
    double t0 = ocr_now_ms();
    int det_w, det_h;
    struct nn_plan *plan = det_plan(e, img, limit, &det_w, &det_h, err, err_len);
    if (!plan)
        return -1;
    const struct pvk_shape *out = nn_plan_output_shape(plan);
    const int map_w = (int)out->d[3], map_h = (int)out->d[2];
    int key[OCR_NET_IO_DET_KEY];
    if (ocr_net_io_det_prepare(e->io, img->width, img->height, det_w, det_h, map_w, map_h, key, err, err_len))
        return -1;
    /* a folder of scans of one size records detection once */
    const struct nn_run run = {.plans = &plan,
                               .n_plans = 1,
                               .output = {NN_OUTPUT_READ},
                               .record_inputs = ocr_net_io_record_det_input,
                               .record_outputs = ocr_net_io_record_db_bitmap,
                               .ctx = e->io,
                               .replay_key = key,
                               .replay_key_len = OCR_NET_IO_DET_KEY};
    if (nn_session_run(e->nets, &run, err, err_len))
        return -1;
    r->gpu_ms[PPOCR_STAGE_DET] = nn_session_gpu_ms(e->nets);

    /* read where the device left it, where it can: no copy of the whole map on every page */
    float *owned;
    const float *map = nn_session_output(e->nets, 0, &owned, err, err_len);
    if (!map)
        return -1;
    double t1 = ocr_now_ms();
    r->wall_ms[PPOCR_STAGE_DET] = t1 - t0;

    struct db_params p;
    db_params_default(&p);
    p.thresh = e->opt.det_db_thresh;
    p.box_thresh = e->opt.det_db_box_thresh;
    p.unclip_ratio = unclip_ratio;
    p.workers = e->helpers;
    int rc =
        db_postprocess(map, ocr_net_io_db_work(e->io), map_w, map_h, img->width, img->height, &p, boxes, err, err_len);
    free(owned);
    r->wall_ms[PPOCR_STAGE_DB] = ocr_now_ms() - t1;
    return rc;
}

/* Each strip is src's rows framed by `margin` as the page is: a strip's row y' is the page's row
 * y' + (its first row in src). */
int ocr_detect_strips(struct ppocr_engine *e, const struct ppocr_image *src, int margin, struct db_boxes *boxes,
                      struct ppocr_result *r, char *err, size_t err_len)
{
    const int page_w = src->width + 2 * margin, page_h = src->height + 2 * margin;
    const int long_side = page_w > page_h ? page_w : page_h;
    struct det_tiling t;
    det_tiling_plan(page_w, page_h, fmin(1.0, (double)e->opt.det_limit_side_len / long_side), boxes,
                    e->opt.det_limit_side_len, &t);
    if (!t.n)
        return 0;
    struct db_boxes found = {0};
    struct ppocr_image strip = {.width = src->width, .had_alpha = src->had_alpha};
    int rc = 0;
    for (int i = 0; i < t.n && rc == 0; i++) {
        int a = t.strips[i].y0 - margin, b = t.strips[i].y1 - margin;
        a = a < 0 ? 0 : a;
        b = b > src->height ? src->height : b;
        strip.height = b - a;
        strip.bgr = (uint8_t *)src->bgr + (size_t)a * src->width * 3; /* read only */
        struct ppocr_result times = {0};
        struct db_boxes sb = {0};
        rc = ocr_upload(e, &strip, margin, r, err, err_len);
        const struct ppocr_image framed = {.width = page_w, .height = strip.height + 2 * margin};
        if (rc == 0)
            rc = ocr_detect(e, &framed, t.limit, e->opt.det_db_unclip_ratio * t.unclip_gain, &sb, &times, err, err_len);
        for (int s = PPOCR_STAGE_DET; s <= PPOCR_STAGE_DB; s++) {
            r->wall_ms[s] += times.wall_ms[s];
            r->gpu_ms[s] += times.gpu_ms[s];
        }
        if (rc)
            break;
        for (size_t k = 0; k < sb.count; k++)
            for (int c = 0; c < 4; c++) {
                int y = sb.boxes[k].pts[c][1] + a;
                sb.boxes[k].pts[c][1] = y < 0 ? 0 : y >= page_h ? page_h - 1 : y;
            }
        det_strip_keep_whole(&t, i, &sb);
        struct db_box *grown = realloc(found.boxes, (found.count + sb.count + 1) * sizeof(*grown));
        if (!grown) {
            rc = ocr_fail(err, err_len, "%s", "out of memory");
        } else {
            found.boxes = grown;
            memcpy(found.boxes + found.count, sb.boxes, sb.count * sizeof(*sb.boxes));
            found.count += sb.count;
        }
        db_boxes_free(&sb);
    }
    if (rc == 0 && det_tiles_merge(boxes, &found))
        rc = ocr_fail(err, err_len, "%s", "out of memory");
    db_boxes_free(&found);
    if (rc)
        return rc;
    db_boxes_sort(boxes);
    return ocr_upload(e, src, margin, r, err, err_len);
}
