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

int ocr_upload(struct ppocr_engine *e, int slot, const struct ppocr_image *src, int margin, struct ppocr_result *r,
               char *err, size_t err_len)
{
    double t0 = ocr_now_ms();
    int rc = ocr_net_io_select_image(e->io, slot, err, err_len) ||
             ocr_net_io_upload(e->io, src, margin, e->helpers, err, err_len);
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

/* What a detection run needs of one image: its plan (pinned), map size and replay key. */
struct det_ready {
    struct nn_plan *plan;
    int map_w, map_h;
    int key[OCR_NET_IO_DET_KEY];
    double ms; /* its planning and preparation */
};

/* Plans and prepares d's detection (its slot made the current one), its plan pinned. */
static int det_ready(struct ppocr_engine *e, const struct det_image *d, struct det_ready *out)
{
    const double t0 = ocr_now_ms();
    int det_w, det_h;
    if (ocr_net_io_select_image(e->io, d->slot, d->err, d->err_len) ||
        !(out->plan = det_plan(e, d->img, d->limit, &det_w, &det_h, d->err, d->err_len)))
        return -1;
    const struct pvk_shape *o = nn_plan_output_shape(out->plan);
    out->map_w = (int)o->d[3];
    out->map_h = (int)o->d[2];
    if (ocr_net_io_det_prepare(e->io, d->img->width, d->img->height, det_w, det_h, out->map_w, out->map_h, out->key,
                               d->err, d->err_len))
        return -1;
    nn_session_pin(e->nets, out->plan, true); /* a second image of its shape gets a plan of its own */
    out->ms = ocr_now_ms() - t0;
    return 0;
}

/* One run of det plans: images[k] with ready[k]. A run of one image is replayed while its key
 * holds (a folder of scans of one size records detection once). Returns 0, or -1 with the reason
 * in err. */
static int det_run(struct ppocr_engine *e, const struct det_image *images, const struct det_ready *ready, int n,
                   char *err, size_t err_len)
{
    struct nn_plan *plans[DET_GROUP_MAX];
    struct ocr_net_io_dets dets = {e->io, n, {0}};
    struct nn_run run = {.plans = plans,
                         .n_plans = n,
                         .record_inputs = ocr_net_io_record_det_input,
                         .record_outputs = ocr_net_io_record_db_bitmap,
                         .ctx = &dets,
                         .replay_key = n == 1 ? ready[0].key : NULL,
                         .replay_key_len = n == 1 ? OCR_NET_IO_DET_KEY : 0};
    for (int k = 0; k < n; k++) {
        plans[k] = ready[k].plan;
        dets.slot[k] = images[k].slot;
        run.output[k] = NN_OUTPUT_READ;
    }
    return nn_session_run(e->nets, &run, err, err_len);
}

/* DB's boxes of images[k] from the last run's output k; its times in its result, with `share` of
 * the run's GPU time and of its wall time from run_t0 (the images' shares by det input pixels). */
static int det_boxes(struct ppocr_engine *e, struct det_image *d, const struct det_ready *ready, int k, double share,
                     double gpu_ms, double run_t0)
{
    float *owned;
    const float *map = nn_session_output(e->nets, k, &owned, d->err, d->err_len);
    if (!map)
        return -1;
    const double t1 = ocr_now_ms();
    d->r->gpu_ms[PPOCR_STAGE_DET] += gpu_ms * share;
    d->r->wall_ms[PPOCR_STAGE_DET] += ready->ms + (t1 - run_t0) * share;

    struct db_params p;
    db_params_default(&p);
    p.thresh = e->opt.det_db_thresh;
    p.box_thresh = e->opt.det_db_box_thresh;
    p.unclip_ratio = d->unclip_ratio;
    p.workers = e->helpers;
    int rc = db_postprocess(map, ocr_net_io_db_work(e->io, d->slot), ready->map_w, ready->map_h, d->img->width,
                            d->img->height, &p, d->boxes, d->err, d->err_len);
    free(owned);
    d->r->wall_ms[PPOCR_STAGE_DB] += ocr_now_ms() - t1;
    return rc;
}

static double det_pixels(const struct det_ready *r)
{
    const struct pvk_shape *in = nn_plan_input_shape(r->plan);
    return (double)in->d[2] * (double)in->d[3];
}

/* Runs images[0..n) (ready) in one run, or, where that fails, each alone; their boxes. */
static void det_group(struct ppocr_engine *e, struct det_image *images, const struct det_ready *ready, int n)
{
    char shared_err[256];
    const double run_t0 = ocr_now_ms();
    if (det_run(e, images, ready, n, n == 1 ? images[0].err : shared_err,
                n == 1 ? images[0].err_len : sizeof(shared_err))) {
        if (n == 1) {
            images[0].rc = -1;
            return;
        }
        for (int k = 0; k < n; k++) /* one image's trouble is not the others' */
            det_group(e, images + k, ready + k, 1);
        return;
    }
    const double gpu_ms = nn_session_gpu_ms(e->nets);
    double pixels = 0;
    for (int k = 0; k < n; k++)
        pixels += det_pixels(&ready[k]);
    for (int k = 0; k < n; k++)
        images[k].rc = det_boxes(e, &images[k], &ready[k], k, det_pixels(&ready[k]) / pixels, gpu_ms, run_t0);
}

int ocr_detect_many(struct ppocr_engine *e, struct det_image *images, int n)
{
    struct det_ready ready[DET_GROUP_MAX];
    struct nn_plan *plans[DET_GROUP_MAX];
    int failed = 0;
    for (int i = 0; i < n;) {
        /* the next images that are ready, as many as fit in the memory the session holds or in
         * DET_GROUP_MEMORY */
        int first = i, k = 0;
        while (i < n && k < DET_GROUP_MAX) {
            struct det_image *d = &images[i];
            if (det_ready(e, d, &ready[k])) {
                d->rc = -1;
                failed++;
                i++;
                if (k)
                    break;
                first = i;
                continue;
            }
            plans[k] = ready[k].plan;
            const uint64_t held = nn_session_memory_held(e->nets),
                           room = held > DET_GROUP_MEMORY ? held : DET_GROUP_MEMORY;
            if (k && nn_plans_bytes(plans, k + 1) > room) {
                nn_session_pin(e->nets, ready[k].plan, false); /* it starts the next group */
                break;
            }
            d->rc = 0;
            k++;
            i++;
        }
        if (k)
            det_group(e, &images[first], ready, k);
        for (int j = 0; j < k; j++) {
            nn_session_pin(e->nets, ready[j].plan, false);
            failed += images[first + j].rc != 0;
        }
    }
    return failed;
}

int ocr_detect(struct ppocr_engine *e, int slot, const struct ppocr_image *img, int limit, double unclip_ratio,
               struct db_boxes *boxes, struct ppocr_result *r, char *err, size_t err_len)
{
    struct det_image d = {.img = img,
                          .slot = slot,
                          .limit = limit,
                          .unclip_ratio = unclip_ratio,
                          .boxes = boxes,
                          .r = r,
                          .err = err,
                          .err_len = err_len};
    return ocr_detect_many(e, &d, 1) ? -1 : 0;
}

/* Each strip is src's rows framed by `margin` as the page is: a strip's row y' is the page's row
 * y' + (its first row in src). */
int ocr_detect_strips(struct ppocr_engine *e, int slot, const struct ppocr_image *src, int margin,
                      struct db_boxes *boxes, struct ppocr_result *r, char *err, size_t err_len)
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
        rc = ocr_upload(e, slot, &strip, margin, r, err, err_len);
        const struct ppocr_image framed = {.width = page_w, .height = strip.height + 2 * margin};
        if (rc == 0)
            rc = ocr_detect(e, slot, &framed, t.limit, e->opt.det_db_unclip_ratio * t.unclip_gain, &sb, &times, err,
                            err_len);
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
    return ocr_upload(e, slot, src, margin, r, err, err_len);
}
