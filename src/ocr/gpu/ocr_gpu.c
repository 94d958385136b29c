/* The OCR pipeline's GPU work around the nets (ocr_gpu.h) on the image kernels of image_ops.h and
 * db_bitmap.h. */
#include "ocr/gpu/ocr_gpu.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/error.h"
#include "gpu/pool.h"
#include "gpu/transfer.h"
#include "img/image.h"
#include "nn/gpu/precision.h"
#include "nn/gpu/session_gpu.h"
#include "ocr/gpu/db_bitmap.h"
#include "ocr/gpu/image_ops.h"
#include "ocr/pad.h"
#include "ocr/workers.h"

/* The image's copy into mapped device memory goes in this many pieces, on the helpers too, from
 * UPLOAD_SPLIT_BYTES on. */
#define UPLOAD_PIECES 8
#define UPLOAD_SPLIT_BYTES ((size_t)1 << 20)

struct ocr_gpu {
    struct gpu_context *ctx;
    struct image_ops *image_ops;
    struct db_bitmap *db_bitmap;
    float db_thresh;
    struct image_crop_batch *crops[OCR_CROP_BATCHES];
    /* images' BGR bytes, each read framed by its margin (image_ops.h), with their detection;
     * uploads and detection's preparation use slot `current` */
    struct image_slot {
        struct gpu_buffer buf;
        size_t cap;
        int width, height, margin; /* framed size */
        struct image_det_job *det_job;
        int det_job_key[5]; /* src w, h, det w, h and the image's margin of det_job */
        /* det's map thresholded by the GPU into the contour follower's work image: host-visible,
         * as DB post-processing labels it in place */
        struct gpu_buffer db_work;
        size_t db_work_cap;
    } images[OCR_IMAGE_SLOTS];
    int current;
    unsigned generation; /* counts the times an image, det_job or db_work moved */
};

static int fail(char *err, size_t err_len, const char *fmt, const char *detail)
{
    snprintf(err, err_len, fmt, detail);
    return -1;
}

int ocr_gpu_create(struct nn_device *dev, float db_thresh, struct ocr_gpu **out, char *err, size_t err_len)
{
    *out = NULL;
    struct ocr_gpu *g = calloc(1, sizeof(*g));
    if (!g)
        return fail(err, err_len, "%s", "out of memory");
    g->ctx = nn_gpu_device_context(dev);
    g->db_thresh = db_thresh;
    const struct nn_gpu_config det = nn_det_config(g->ctx), lines = nn_line_nets_config(g->ctx, false);
    if (image_ops_create(g->ctx, det.act_dtype, lines.act_dtype, &g->image_ops, err, err_len) ||
        db_bitmap_create(g->ctx, det.act_dtype, &g->db_bitmap, err, err_len))
        goto fail;
    for (int i = 0; i < OCR_CROP_BATCHES; i++)
        if (image_crop_batch_create(g->image_ops, &g->crops[i], err, err_len))
            goto fail;
    *out = g;
    return 0;
fail:
    ocr_gpu_destroy(g);
    return -1;
}

void ocr_gpu_destroy(struct ocr_gpu *g)
{
    if (!g)
        return;
    for (int i = 0; i < OCR_CROP_BATCHES; i++)
        image_crop_batch_destroy(g->crops[i]);
    image_ops_destroy(g->image_ops);
    db_bitmap_destroy(g->db_bitmap);
    for (int i = 0; i < OCR_IMAGE_SLOTS; i++) {
        image_det_job_destroy(g->images[i].det_job);
        gpu_buffer_free(&g->images[i].db_work);
        gpu_buffer_free(&g->images[i].buf);
    }
    free(g);
}

/* ---- the image ------------------------------------------------------------------------------ */

/* The image's bytes in pieces (ocr_workers_run): piece i of n. A failure leaves its reason in the
 * thread's gpu_last_error: the caller's own pieces are the ones it can report. */
struct upload_job {
    struct ocr_gpu *g;
    struct gpu_buffer *image;
    const uint8_t *bytes;
    size_t n_bytes;
    atomic_int failed;
    int pieces;
};

static void upload_piece(void *arg, int i)
{
    struct upload_job *j = arg;
    const size_t piece = (j->n_bytes + (size_t)j->pieces - 1) / (size_t)j->pieces, at = (size_t)i * piece;
    if (at < j->n_bytes &&
        gpu_upload(j->g->ctx, j->image, at, j->bytes + at, j->n_bytes - at < piece ? j->n_bytes - at : piece))
        atomic_store(&j->failed, 1);
}

int ocr_gpu_select_image(struct ocr_gpu *g, int slot, char *err, size_t err_len)
{
    if (slot < 0 || slot >= OCR_IMAGE_SLOTS)
        return fail(err, err_len, "%s", "no such image slot");
    g->current = slot;
    return 0;
}

int ocr_gpu_upload(struct ocr_gpu *g, const struct ppocr_image *src, int margin, struct ocr_workers *helpers, char *err,
                   size_t err_len)
{
    struct image_slot *slot = &g->images[g->current];
    const int width = src->width + 2 * margin, height = src->height + 2 * margin;
    size_t bytes = image_framed_buffer_bytes(width, height, margin);
    slot->width = slot->height = 0; /* until the bytes are there */
    if (bytes > slot->cap) {
        gpu_buffer_free(&slot->buf);
        slot->cap = 0;
        image_det_job_destroy(slot->det_job);
        slot->det_job = NULL;
        g->generation++;
        if (gpu_buffer_alloc(g->ctx, GPU_MEMORY_DEVICE, bytes, &slot->buf))
            return fail(err, err_len, "image memory: %s", gpu_last_error());
        slot->cap = bytes;
    }
    uint8_t fill[4] = {0};
    if (margin)
        ocr_border_colour(src, fill);
    const size_t packed = (size_t)src->width * src->height * 3;
    const int pieces = helpers && gpu_buffer_is_mapped(&slot->buf) && packed >= UPLOAD_SPLIT_BYTES ? UPLOAD_PIECES : 1;
    struct upload_job job = {g, &slot->buf, src->bgr, packed, 0, pieces};
    ocr_workers_run(helpers, pieces, upload_piece, &job);
    if (atomic_load(&job.failed) || (margin && gpu_upload(g->ctx, &slot->buf, bytes - 4, fill, 4)))
        return fail(err, err_len, "uploading the image: %s", gpu_last_error());
    slot->width = width;
    slot->height = height;
    slot->margin = margin;
    return 0;
}

int ocr_gpu_margin(const struct ocr_gpu *g)
{
    return g->images[g->current].margin;
}

/* ---- detection ------------------------------------------------------------------------------ */

int ocr_gpu_det_prepare(struct ocr_gpu *g, int img_w, int img_h, int det_w, int det_h, int map_w, int map_h,
                        int key[OCR_GPU_DET_KEY], char *err, size_t err_len)
{
    struct image_slot *slot = &g->images[g->current];
    if (img_w != slot->width || img_h != slot->height)
        return fail(err, err_len, "%s", "detection prepared for an image that was not uploaded");
    const int job_key[5] = {img_w, img_h, det_w, det_h, slot->margin};
    if (!slot->det_job || memcmp(job_key, slot->det_job_key, sizeof(job_key))) {
        image_det_job_destroy(slot->det_job);
        slot->det_job = NULL;
        g->generation++;
        if (image_det_job_create(g->image_ops, img_w, img_h, det_w, det_h, &slot->det_job, err, err_len))
            return -1;
        memcpy(slot->det_job_key, job_key, sizeof(job_key));
    }
    const size_t bytes = db_bitmap_bytes(map_w, map_h);
    if (bytes > slot->db_work_cap) {
        gpu_buffer_free(&slot->db_work);
        slot->db_work_cap = 0;
        g->generation++;
        if (gpu_buffer_alloc(g->ctx, GPU_MEMORY_HOST, bytes, &slot->db_work))
            return fail(err, err_len, "readback memory: %s", gpu_last_error());
        slot->db_work_cap = bytes;
    }
    memcpy(key, job_key, sizeof(job_key));
    key[5] = (int)g->generation;
    key[6] = g->current; /* the recording reads that slot's buffer */
    return 0;
}

/* The slot of plan k of a detection run, NULL when the run does not match what was prepared. */
static const struct image_slot *det_slot(const struct ocr_gpu *g, const int *slots, int n_slots, int n_plans, int k)
{
    if (n_plans != n_slots || slots[k] < 0 || slots[k] >= OCR_IMAGE_SLOTS || !g->images[slots[k]].det_job)
        return NULL;
    return &g->images[slots[k]];
}

int ocr_gpu_record_det_input(struct ocr_gpu *g, const int *slots, int n_slots, struct nn_recorder *rec,
                             struct nn_plan *const *plans, int n_plans, char *err, size_t err_len)
{
    for (int k = 0; k < n_plans; k++) {
        const struct image_slot *slot = det_slot(g, slots, n_slots, n_plans, k);
        if (!slot)
            return fail(err, err_len, "%s", "detection's input recorded without its preparation");
        if (image_det_record(g->image_ops, slot->det_job, nn_gpu_recorder_cmd(rec), &slot->buf, slot->margin,
                             nn_gpu_plan_input_tensor(plans[k]), err, err_len))
            return -1;
    }
    return 0;
}

int ocr_gpu_record_db_bitmap(struct ocr_gpu *g, const int *slots, int n_slots, struct nn_recorder *rec,
                             struct nn_plan *const *plans, int n_plans, char *err, size_t err_len)
{
    for (int k = 0; k < n_plans; k++) {
        const struct image_slot *slot = det_slot(g, slots, n_slots, n_plans, k);
        if (!slot)
            return fail(err, err_len, "%s", "DB's bitmap recorded without detection's preparation");
        if (db_bitmap_record(g->db_bitmap, nn_gpu_recorder_cmd(rec), nn_gpu_plan_output_tensor(plans[k]), g->db_thresh,
                             &slot->db_work, err, err_len))
            return -1;
    }
    return 0;
}

int8_t *ocr_gpu_db_work(struct ocr_gpu *g, int slot)
{
    return slot >= 0 && slot < OCR_IMAGE_SLOTS ? (int8_t *)g->images[slot].db_work.mapped : NULL;
}

/* ---- crops ---------------------------------------------------------------------------------- */

int ocr_gpu_set_crops(struct ocr_gpu *g, int batch, const struct image_crop *crops, int n, int target_h, int target_w,
                      char *err, size_t err_len)
{
    if (batch < 0 || batch >= OCR_CROP_BATCHES)
        return fail(err, err_len, "%s", "no such crop batch");
    return image_crop_batch_set(g->image_ops, g->crops[batch], crops, n, target_h, target_w, err, err_len);
}

int ocr_gpu_record_crops(struct ocr_gpu *g, const struct ocr_crop_runs *c, struct nn_recorder *rec,
                         struct nn_plan *const *plans, int n_plans, char *err, size_t err_len)
{
    struct image_crop_batch *batches[OCR_CROP_BATCHES];
    const struct nn_gpu_tensor *dsts[OCR_CROP_BATCHES];
    struct image_crop_source sources[OCR_CROP_BATCHES];
    if (c->n < 0 || c->n > OCR_CROP_BATCHES)
        return fail(err, err_len, "%s", "too many crop batches");
    for (int k = 0; k < c->n; k++) {
        if (c->plan[k] < 0 || c->plan[k] >= n_plans || c->batch[k] < 0 || c->batch[k] >= OCR_CROP_BATCHES)
            return fail(err, err_len, "%s", "a crop batch without its plan");
        if (c->image[k] < 0 || c->image[k] >= OCR_IMAGE_SLOTS || g->images[c->image[k]].width < 1)
            return fail(err, err_len, "%s", "crops of an image that was not uploaded");
        const struct image_slot *slot = &g->images[c->image[k]];
        batches[k] = g->crops[c->batch[k]];
        dsts[k] = nn_gpu_plan_input_tensor(plans[c->plan[k]]);
        sources[k] = (struct image_crop_source){&slot->buf, slot->width, slot->height, slot->margin};
    }
    if (c->n == 0)
        return 0;
    return image_crop_record_many(g->image_ops, batches, dsts, sources, c->n, nn_gpu_recorder_cmd(rec), err, err_len);
}
