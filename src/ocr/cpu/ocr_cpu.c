/* The OCR pipeline's work around the nets on the CPU backend (ocr_cpu.h). */
#include "ocr/cpu/ocr_cpu.h"

#include <stdlib.h>
#include <string.h>

#include "img/image.h"
#include "nn/cpu/session_cpu.h"
#include "ocr/contour.h"
#include "ocr/pad.h"
#include "ocr/preprocess.h"

/* One batch's crops, as ocr_cpu_set_crops gave them. */
struct crop_batch {
    struct image_crop *crops;
    int n, cap;
    int target_h, target_w;
};

struct ocr_cpu {
    float db_thresh;
    /* images with their margins, BGR, with their detection; uploads and detection's preparation
     * use slot `current` */
    struct framed_image {
        uint8_t *bgr;
        size_t cap;
        int width, height, margin;
        int det_w, det_h, map_w, map_h, det_img_w, det_img_h; /* det_w 0: not prepared */
        int8_t *db_work;
        size_t db_work_cap;
    } images[OCR_IMAGE_SLOTS];
    int current;
    uint8_t *det_resized; /* the image being resized for det, BGR */
    size_t det_resized_cap;
    struct crop_batch batches[OCR_CROP_BATCHES];
};

static int fail(char *err, size_t err_len, const char *why)
{
    snprintf(err, err_len, "%s", why);
    return -1;
}

/* Grows *buf to at least `bytes`; its contents are not kept. */
static int reserve(void **buf, size_t *cap, size_t bytes)
{
    if (bytes <= *cap)
        return 0;
    void *p = malloc(bytes);
    if (!p)
        return -1;
    free(*buf);
    *buf = p;
    *cap = bytes;
    return 0;
}

int ocr_cpu_create(float db_thresh, struct ocr_cpu **out, char *err, size_t err_len)
{
    *out = calloc(1, sizeof(**out));
    if (!*out)
        return fail(err, err_len, "out of memory");
    (*out)->db_thresh = db_thresh;
    return 0;
}

void ocr_cpu_destroy(struct ocr_cpu *c)
{
    if (!c)
        return;
    for (int i = 0; i < OCR_CROP_BATCHES; i++)
        free(c->batches[i].crops);
    for (int i = 0; i < OCR_IMAGE_SLOTS; i++) {
        free(c->images[i].bgr);
        free(c->images[i].db_work);
    }
    free(c->det_resized);
    free(c);
}

/* ---- the image ------------------------------------------------------------------------------ */

static void fill_pixels(uint8_t *px, int n, const uint8_t bgr[3])
{
    for (int i = 0; i < n; i++)
        memcpy(px + (size_t)i * 3, bgr, 3);
}

int ocr_cpu_select_image(struct ocr_cpu *c, int slot, char *err, size_t err_len)
{
    if (slot < 0 || slot >= OCR_IMAGE_SLOTS)
        return fail(err, err_len, "no such image slot");
    c->current = slot;
    return 0;
}

int ocr_cpu_upload(struct ocr_cpu *c, const struct ppocr_image *src, int margin, char *err, size_t err_len)
{
    struct framed_image *f = &c->images[c->current];
    const int w = src->width + 2 * margin, h = src->height + 2 * margin;
    f->width = f->height = f->det_w = 0; /* until the bytes are there */
    if (reserve((void **)&f->bgr, &f->cap, (size_t)w * h * 3))
        return fail(err, err_len, "image memory: out of memory");
    const size_t row = (size_t)src->width * 3;
    uint8_t fill[3] = {0};
    if (margin)
        ocr_border_colour(src, fill);
    for (int y = 0; y < h; y++) {
        uint8_t *out = f->bgr + (size_t)y * w * 3;
        if (y < margin || y >= h - margin) {
            fill_pixels(out, w, fill);
            continue;
        }
        fill_pixels(out, margin, fill);
        memcpy(out + (size_t)margin * 3, src->bgr + (size_t)(y - margin) * row, row);
        fill_pixels(out + (size_t)(margin + src->width) * 3, margin, fill);
    }
    f->width = w;
    f->height = h;
    f->margin = margin;
    return 0;
}

int ocr_cpu_margin(const struct ocr_cpu *c)
{
    return c->images[c->current].margin;
}

/* ---- detection ------------------------------------------------------------------------------ */

int ocr_cpu_det_prepare(struct ocr_cpu *c, int img_w, int img_h, int det_w, int det_h, int map_w, int map_h, int *key,
                        int key_len, char *err, size_t err_len)
{
    struct framed_image *f = &c->images[c->current];
    if (img_w != f->width || img_h != f->height)
        return fail(err, err_len, "detection prepared for an image that was not uploaded");
    f->det_w = 0;
    if (reserve((void **)&c->det_resized, &c->det_resized_cap, (size_t)det_w * det_h * 3) ||
        reserve((void **)&f->db_work, &f->db_work_cap, contour_work_bytes(map_w, map_h)))
        return fail(err, err_len, "detection memory: out of memory");
    f->det_img_w = img_w;
    f->det_img_h = img_h;
    f->det_w = det_w;
    f->det_h = det_h;
    f->map_w = map_w;
    f->map_h = map_h;
    const int values[] = {img_w, img_h, det_w, det_h, map_w, map_h};
    for (int i = 0; i < key_len; i++)
        key[i] = i < (int)(sizeof values / sizeof *values) ? values[i] : 0;
    return 0;
}

static int dims_are(const struct pvk_shape *s, int64_t n, int64_t ch, int64_t h, int64_t w)
{
    return s->ndim == 4 && s->d[0] >= n && s->d[1] == ch && s->d[2] == h && s->d[3] == w;
}

/* The slot of plan k of a detection run, NULL when the run does not match what was prepared. */
static struct framed_image *det_slot(struct ocr_cpu *c, const int *slots, int n_slots, int n_plans, int k)
{
    if (n_plans != n_slots || slots[k] < 0 || slots[k] >= OCR_IMAGE_SLOTS || !c->images[slots[k]].det_w)
        return NULL;
    return &c->images[slots[k]];
}

int ocr_cpu_record_det_input(struct ocr_cpu *c, const int *slots, int n_slots, struct nn_plan *const *plans,
                             int n_plans, char *err, size_t err_len)
{
    for (int k = 0; k < n_plans; k++) {
        const struct framed_image *f = det_slot(c, slots, n_slots, n_plans, k);
        float *dst = nn_cpu_plan_input_data(plans[k]);
        if (!f || !dst || !c->det_resized || !dims_are(nn_plan_input_shape(plans[k]), 1, 3, f->det_h, f->det_w))
            return fail(err, err_len, "detection's input recorded without its preparation");
        if (ocr_resize_linear(f->bgr, f->det_img_w, f->det_img_h, c->det_resized, f->det_w, f->det_h, 3))
            return fail(err, err_len, "detection's input: a size the resize refuses");
        ocr_det_normalize(c->det_resized, f->det_w, f->det_h, dst);
    }
    return 0;
}

int ocr_cpu_record_db_bitmap(struct ocr_cpu *c, const int *slots, int n_slots, struct nn_plan *const *plans,
                             int n_plans, char *err, size_t err_len)
{
    for (int k = 0; k < n_plans; k++) {
        const struct framed_image *f = det_slot(c, slots, n_slots, n_plans, k);
        const float *map = nn_cpu_plan_output_data(plans[k]);
        if (!f || !map || !f->db_work || !dims_are(nn_plan_output_shape(plans[k]), 1, 1, f->map_h, f->map_w))
            return fail(err, err_len, "DB's bitmap recorded without detection's preparation");
        contour_work_above(map, f->map_w, f->map_h, c->db_thresh, f->db_work);
    }
    return 0;
}

int8_t *ocr_cpu_db_work(struct ocr_cpu *c, int slot)
{
    return slot >= 0 && slot < OCR_IMAGE_SLOTS ? c->images[slot].db_work : NULL;
}

/* ---- crops ---------------------------------------------------------------------------------- */

int ocr_cpu_set_crops(struct ocr_cpu *c, int batch, const struct image_crop *crops, int n, int target_h, int target_w,
                      char *err, size_t err_len)
{
    if (batch < 0 || batch >= OCR_CROP_BATCHES || n < 0)
        return fail(err, err_len, "no such crop batch");
    struct crop_batch *b = &c->batches[batch];
    if (n > b->cap) {
        struct image_crop *p = realloc(b->crops, (size_t)n * sizeof(*p));
        if (!p)
            return fail(err, err_len, "out of memory");
        b->crops = p;
        b->cap = n;
    }
    if (n)
        memcpy(b->crops, crops, (size_t)n * sizeof(*crops));
    b->n = n;
    b->target_h = target_h;
    b->target_w = target_w;
    return 0;
}

/* One crop into its slot of dst [N][3][target_h][target_w]: warp, turns, resize and normalise, as
 * the GPU's crop kernels do. */
static int make_crop(const struct framed_image *f, const struct image_crop *k, int target_h, int target_w, float *dst)
{
    const struct ppocr_image framed = {.width = f->width, .height = f->height, .bgr = f->bgr};
    struct ppocr_image crop;
    if (ocr_crop_warp(&framed, k->src_from_dst, k->width, k->height, k->rotate, &crop))
        return -1;
    if (k->flip)
        ocr_rotate180(&crop);
    const int rc = ocr_rec_preprocess(&crop, target_h, target_w, dst);
    ppocr_image_free(&crop);
    return rc;
}

int ocr_cpu_record_crops(struct ocr_cpu *c, const struct ocr_crop_runs *runs, struct nn_plan *const *plans, int n_plans,
                         char *err, size_t err_len)
{
    if (runs->n < 0 || runs->n > OCR_CROP_BATCHES)
        return fail(err, err_len, "too many crop batches");
    for (int r = 0; r < runs->n; r++) {
        if (runs->plan[r] < 0 || runs->plan[r] >= n_plans || runs->batch[r] < 0 || runs->batch[r] >= OCR_CROP_BATCHES)
            return fail(err, err_len, "a crop batch without its plan");
        if (runs->image[r] < 0 || runs->image[r] >= OCR_IMAGE_SLOTS || c->images[runs->image[r]].width < 1)
            return fail(err, err_len, "crops of an image that was not uploaded");
        const struct framed_image *f = &c->images[runs->image[r]];
        const struct crop_batch *b = &c->batches[runs->batch[r]];
        const struct nn_plan *plan = plans[runs->plan[r]];
        const struct pvk_shape *in = nn_plan_input_shape(plan);
        float *dst = nn_cpu_plan_input_data(plan);
        if (!dst || !dims_are(in, 1, 3, b->target_h, b->target_w))
            return fail(err, err_len, "a crop batch of another size than its plan's input");
        const size_t slot = (size_t)3 * b->target_h * b->target_w;
        for (int i = 0; i < b->n; i++) {
            const struct image_crop *k = &b->crops[i];
            if (k->slot < 0 || k->slot >= in->d[0] || k->width < 1 || k->height < 1)
                return fail(err, err_len, "a crop outside its batch");
            if (make_crop(f, k, b->target_h, b->target_w, dst + (size_t)k->slot * slot))
                return fail(err, err_len, "a crop: out of memory");
        }
    }
    return 0;
}
