#include "ocr/gpu/image_ops.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/transfer.h"
#include "nn/gpu/op_helpers.h"
#include "ocr/preprocess.h"

/* crop_params.glsl */
#define CROP_WORDS 48u
#define CP_MATRIX 0u
#define CP_WARP_W 18u
#define CP_WARP_H 19u
#define CP_ROTATE 20u
#define CP_FLIP 21u
#define CP_SCRATCH 22u
#define CP_SLOT 23u
#define CP_RESIZED_W 24u
#define CP_RESIZE_MODE 25u
#define CP_TABLE 26u
#define CP_MATRIX64 27u
#define CP_BLOCK_W 45u
/* linear_u8.glsl */
#define RESIZE_TABLE 0u
#define RESIZE_HALF 1u
#define RESIZE_COPY 2u

#define IMAGE_WG 64u
#define DET_WG 64u
#define CUBIC_TAB 32 /* 1/32-pixel steps (INTER_TAB_SIZE) */

struct det_push {
    uint32_t src_w, src_h, margin, fill_word; /* the image as the kernels see it: image_bytes.glsl */
    uint32_t dst_w, dst_h, mode, y_off;
    float mean[3], std[3];
};

struct warp_push {
    uint32_t src_w, src_h, margin, fill_word, n_crops;
    uint32_t zero;    /* keeps the shader's float-float arithmetic from being optimised away */
    uint32_t tie_cap; /* (crop, pixel) pairs the tie list holds */
};

/* Workgroups of the tie fix-up pass, which walks the (short) list with a fixed grid: enough to
 * spread a GPU's emulated-double work, few on CPUs where each workgroup has a fixed cost. */
#define FIX_GROUPS 64u
#define FIX_GROUPS_CPU 4u

struct crop_resize_push {
    uint32_t n_crops, target_h, target_w, y_off;
};

struct image_ops {
    struct gpu_context *ctx;
    enum nn_dtype det_dtype, crop_dtype;
    const struct gpu_pipeline *det, *warp, *crop_resize;
    const struct gpu_pipeline *fix; /* NULL without 64-bit integers: ties keep float-float's rounding */
    struct gpu_buffer cubic;        /* 1024 sets of 16 int16 weights */
};

struct image_det_job {
    int src_w, src_h, dst_w, dst_h;
    uint32_t mode;
    struct gpu_buffer table;
};

struct image_crop_batch {
    struct gpu_buffer params, scratch, ties;
    uint32_t *host; /* the parameters as built on the host, kept between sets */
    size_t host_words;
    size_t params_cap, scratch_cap, ties_cap; /* bytes */
    uint32_t tie_pairs;
    int n, target_h, target_w;
    uint32_t max_pixels; /* largest warp output, for the grid */
    int max_slot;
};

size_t image_bgr_buffer_bytes(int width, int height)
{
    size_t bytes = (size_t)width * (size_t)height * 3;
    return (bytes + 3) & ~(size_t)3;
}

size_t image_framed_buffer_bytes(int width, int height, int margin)
{
    return image_bgr_buffer_bytes(width - 2 * margin, height - 2 * margin) + (margin ? 4 : 0);
}

/* The frame's checks and push-constant words: 0, or -1 with the reason in err. */
static int frame_words(const struct gpu_buffer *bgr, int width, int height, int margin, uint32_t *fill_word,
                       const char *what, char *err, size_t err_len)
{
    if (margin < 0 || width - 2 * margin < 1 || height - 2 * margin < 1)
        return nnh_fail(err, err_len, "%s: a %dx%d image cannot have a margin of %d", what, width, height, margin);
    size_t need = image_framed_buffer_bytes(width, height, margin);
    if (bgr->size < need)
        return nnh_fail(err, err_len, "%s: the image buffer holds %llu bytes, a %dx%d image (margin %d) needs %zu",
                        what, (unsigned long long)bgr->size, width, height, margin, need);
    *fill_word = (uint32_t)(image_bgr_buffer_bytes(width - 2 * margin, height - 2 * margin) / 4);
    return 0;
}

int image_resized_width(int width, int height, int target_h, int target_w)
{
    double ratio = (double)width / height; /* ratio first, then ceil(imgH * ratio), as PaddleOCR */
    double w = ceil(target_h * ratio);
    return w > target_w ? target_w : (int)w;
}

/* ---- OpenCV coefficient tables --------------------------------------------------------------
 * The same arithmetic as src/ocr/preprocess_resize.c and preprocess_crop.c (which this layer may
 * not call); tests/nn/test_gpu_image.c checks the kernels against those functions. */

/* The tables are rebuilt for every crop of every page, so their per-entry arithmetic avoids libm
 * calls; both helpers give exactly floorf and lrintf's results (round to nearest even) for the
 * values they see here. */
#if FLT_EVAL_METHOD == 0
/* v in [0, 1]: v 2048 < 2^22, where adding and removing 1.5 2^23 rounds to an integer as lrintf */
static int round_coef(float v)
{
    float x = v * 2048.0f;
    return (int)((x + 12582912.0f) - 12582912.0f);
}
#else
static int round_coef(float v)
{
    return (int)lrintf(v * 2048.0f);
}
#endif

/* v within int range */
static int floor_int(float v)
{
    int i = (int)v;
    return (float)i > v ? i - 1 : i;
}

/* cv::resize INTER_LINEAR's choice: a plain copy, the exact-2x box average, or the table. */
static uint32_t linear_mode(int src_w, int src_h, int dst_w, int dst_h)
{
    if (src_w == dst_w && src_h == dst_h)
        return RESIZE_COPY;
    double scale_x = 1. / ((double)dst_w / src_w), scale_y = 1. / ((double)dst_h / src_h);
    if (fabs(scale_x - 2) < DBL_EPSILON && fabs(scale_y - 2) < DBL_EPSILON)
        return RESIZE_HALF;
    return RESIZE_TABLE;
}

static uint32_t pack_weights(int w0, int w1)
{
    return (uint32_t)w0 | ((uint32_t)w1 << 16);
}

/* dst_w x-entries then dst_h y-entries of 3 words: index0, index1, weight0 | weight1 << 16. */
static void linear_table(int src_w, int src_h, int dst_w, int dst_h, uint32_t *t)
{
    double scale_x = 1. / ((double)dst_w / src_w), scale_y = 1. / ((double)dst_h / src_h);
    for (int dx = 0; dx < dst_w; dx++, t += 3) {
        float fx = (float)((dx + 0.5) * scale_x - 0.5);
        int sx = floor_int(fx);
        fx -= (float)sx;
        if (sx < 0)
            fx = 0, sx = 0;
        if (sx + 1 >= src_w)
            fx = 0, sx = src_w - 1;
        t[0] = (uint32_t)sx;
        t[1] = (uint32_t)(sx + 1 < src_w ? sx + 1 : src_w - 1);
        t[2] = pack_weights(round_coef(1.f - fx), round_coef(fx));
    }
    for (int dy = 0; dy < dst_h; dy++, t += 3) {
        float fy = (float)((dy + 0.5) * scale_y - 0.5);
        int sy = floor_int(fy);
        fy -= (float)sy;
        int r0 = sy < 0 ? 0 : sy >= src_h ? src_h - 1 : sy;
        int r1 = sy + 1 < 0 ? 0 : sy + 1 >= src_h ? src_h - 1 : sy + 1;
        t[0] = (uint32_t)r0;
        t[1] = (uint32_t)r1;
        t[2] = pack_weights(round_coef(1.f - fy), round_coef(fy));
    }
}

static void cubic_coeffs(float x, float c[4])
{
    const float A = -0.75f;
    c[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    c[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    c[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    c[3] = 1.f - c[0] - c[1] - c[2];
}

static int sat_short(int v)
{
    return v < -32768 ? -32768 : v > 32767 ? 32767 : v;
}

/* initInterTab2D(INTER_CUBIC): 15-bit 4x4 weights per 1/32-pixel offset saturated to short (1.0
 * becomes 32767), each set nudged to sum to exactly 1 << 15 at the largest or smallest of the
 * weights at rows/columns 2..3, the way OpenCV does it (and src/ocr/preprocess_crop.c after it:
 * the two must stay identical, the image test compares them). */
static void cubic_table(int16_t tab[CUBIC_TAB * CUBIC_TAB][16])
{
    float c1[CUBIC_TAB][4];
    for (int i = 0; i < CUBIC_TAB; i++)
        cubic_coeffs((float)i * (1.f / CUBIC_TAB), c1[i]);
    for (int i = 0; i < CUBIC_TAB; i++)
        for (int j = 0; j < CUBIC_TAB; j++) {
            int16_t *t = tab[i * CUBIC_TAB + j];
            int isum = 0;
            for (int k1 = 0; k1 < 4; k1++)
                for (int k2 = 0; k2 < 4; k2++) {
                    float v = c1[i][k1] * c1[j][k2];
                    isum += t[k1 * 4 + k2] = (int16_t)sat_short((int)lrintf(v * 32768.0f));
                }
            if (isum != 32768) {
                int diff = isum - 32768, mk1 = 2, mk2 = 2, Mk1 = 2, Mk2 = 2;
                for (int k1 = 2; k1 < 4; k1++)
                    for (int k2 = 2; k2 < 4; k2++) {
                        if (t[k1 * 4 + k2] < t[mk1 * 4 + mk2])
                            mk1 = k1, mk2 = k2;
                        else if (t[k1 * 4 + k2] > t[Mk1 * 4 + Mk2])
                            Mk1 = k1, Mk2 = k2;
                    }
                if (diff < 0)
                    t[Mk1 * 4 + Mk2] = (int16_t)(t[Mk1 * 4 + Mk2] - diff);
                else
                    t[mk1 * 4 + mk2] = (int16_t)(t[mk1 * 4 + mk2] - diff);
            }
        }
}

/* ---- ops ------------------------------------------------------------------------------------- */

void image_ops_destroy(struct image_ops *ops)
{
    if (!ops)
        return;
    gpu_buffer_free(&ops->cubic);
    free(ops);
}

int image_ops_create(struct gpu_context *ctx, enum nn_dtype det_dtype, enum nn_dtype crop_dtype, struct image_ops **out,
                     char *err, size_t err_len)
{
    *out = NULL;
    struct image_ops *ops = calloc(1, sizeof *ops);
    if (!ops)
        return nnh_fail(err, err_len, "out of memory");
    ops->ctx = ctx;
    ops->det_dtype = det_dtype;
    ops->crop_dtype = crop_dtype;
    /* on the heap, not static: engines are created on several threads at once */
    int16_t(*tab)[16] = malloc(sizeof(int16_t[CUBIC_TAB * CUBIC_TAB][16]));
    if (!tab) {
        image_ops_destroy(ops);
        return nnh_fail(err, err_len, "out of memory");
    }
    cubic_table(tab);
    int rc =
        nnh_pipeline(ctx, NNH_SHADERS(det_preprocess), false, det_dtype, DET_WG, NULL, 0, 3, sizeof(struct det_push),
                     &ops->det, err, err_len) ||
        /* with 64-bit integers: the twin that lists near-tie pixels, and the pass that settles them
              * in emulated double */
        nnh_pipeline(ctx,
                     gpu_context_caps(ctx)->shader_int64 ? NNH_SHADERS_F32(crop_warp_ties) : NNH_SHADERS_F32(crop_warp),
                     false, NN_F32, IMAGE_WG, NULL, 0, 5, sizeof(struct warp_push), &ops->warp, err, err_len) ||
        (gpu_context_caps(ctx)->shader_int64 &&
         nnh_pipeline(ctx, NNH_SHADERS_F32(crop_fix), false, NN_F32, IMAGE_WG, NULL, 0, 5, sizeof(struct warp_push),
                      &ops->fix, err, err_len)) ||
        nnh_pipeline(ctx, NNH_SHADERS(crop_resize), false, crop_dtype, IMAGE_WG, NULL, 0, 3,
                     sizeof(struct crop_resize_push), &ops->crop_resize, err, err_len);
    const size_t tab_bytes = sizeof(int16_t[CUBIC_TAB * CUBIC_TAB][16]);
    if (!rc && gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, tab_bytes, &ops->cubic) != GPU_OK)
        rc = nnh_fail(err, err_len, "cubic table: %s", gpu_last_error());
    if (!rc && gpu_upload(ctx, &ops->cubic, 0, tab, tab_bytes) != GPU_OK)
        rc = nnh_fail(err, err_len, "cubic table: %s", gpu_last_error());
    free(tab);
    if (rc) {
        image_ops_destroy(ops);
        return -1;
    }
    *out = ops;
    return 0;
}

/* ---- detection input ------------------------------------------------------------------------ */

void image_det_job_destroy(struct image_det_job *job)
{
    if (!job)
        return;
    gpu_buffer_free(&job->table);
    free(job);
}

int image_det_job_create(struct image_ops *ops, int src_w, int src_h, int dst_w, int dst_h, struct image_det_job **out,
                         char *err, size_t err_len)
{
    *out = NULL;
    if (src_w < 1 || src_h < 1 || dst_w < 1 || dst_h < 1 || src_w > 65535 || src_h > 65535)
        return nnh_fail(err, err_len, "det resize %dx%d -> %dx%d: bad size", src_w, src_h, dst_w, dst_h);
    struct image_det_job *job = calloc(1, sizeof *job);
    if (!job)
        return nnh_fail(err, err_len, "out of memory");
    *job = (struct image_det_job){src_w, src_h, dst_w, dst_h, linear_mode(src_w, src_h, dst_w, dst_h), {0}};
    size_t words = 3 * (size_t)(dst_w + dst_h);
    uint32_t *t = calloc(words, sizeof *t);
    int rc = 0;
    if (!t)
        rc = nnh_fail(err, err_len, "out of memory");
    if (!rc) {
        linear_table(src_w, src_h, dst_w, dst_h, t);
        if (gpu_buffer_alloc(ops->ctx, GPU_MEMORY_DEVICE, words * 4, &job->table) != GPU_OK ||
            gpu_upload(ops->ctx, &job->table, 0, t, words * 4) != GPU_OK)
            rc = nnh_fail(err, err_len, "det resize table: %s", gpu_last_error());
    }
    free(t);
    if (rc) {
        image_det_job_destroy(job);
        return -1;
    }
    *out = job;
    return 0;
}

int image_det_record(struct image_ops *ops, const struct image_det_job *job, struct gpu_cmd *cmd,
                     const struct gpu_buffer *bgr, int margin, const struct nn_gpu_tensor *dst, char *err,
                     size_t err_len)
{
    const struct pvk_shape *s = &dst->shape;
    if (nnh_check_tensor(dst, ops->det_dtype, false, "det input", err, err_len))
        return -1;
    if (s->ndim != 4 || s->d[0] != 1 || s->d[1] != 3 || s->d[2] != job->dst_h || s->d[3] != job->dst_w)
        return nnh_fail(err, err_len, "det input must be [1, 3, %d, %d]", job->dst_h, job->dst_w);
    uint32_t fill_word = 0;
    if (frame_words(bgr, job->src_w, job->src_h, margin, &fill_word, "det", err, err_len))
        return -1;
    struct det_push pc = {(uint32_t)job->src_w,
                          (uint32_t)job->src_h,
                          (uint32_t)margin,
                          fill_word,
                          (uint32_t)job->dst_w,
                          (uint32_t)job->dst_h,
                          job->mode,
                          dst->elem_offset,
                          {0},
                          {0}};
    memcpy(pc.mean, ocr_det_mean, sizeof(pc.mean));
    memcpy(pc.std, ocr_det_std, sizeof(pc.std));
    struct gpu_binding b[3] = {gpu_bind(bgr), gpu_bind(&job->table), gpu_bind(dst->buf)};
    /* DET_WG x 1 workgroups over (x, y): rows of the output stay contiguous per workgroup */
    uint32_t groups[3] = {((uint32_t)job->dst_w + DET_WG - 1) / DET_WG, (uint32_t)job->dst_h, 1};
    return nnh_dispatch(cmd, ops->det, b, &pc, groups, "det_preprocess", err, err_len);
}

/* ---- crops ----------------------------------------------------------------------------------- */

void image_crop_batch_destroy(struct image_crop_batch *batch)
{
    if (!batch)
        return;
    gpu_buffer_free(&batch->params);
    gpu_buffer_free(&batch->scratch);
    gpu_buffer_free(&batch->ties);
    free(batch->host);
    free(batch);
}

int image_crop_batch_create(struct image_ops *ops, struct image_crop_batch **out, char *err, size_t err_len)
{
    (void)ops;
    *out = calloc(1, sizeof **out);
    return *out ? 0 : nnh_fail(err, err_len, "out of memory");
}

/* Grows a buffer to at least `bytes` (contents dropped). */
static int reserve(struct gpu_context *ctx, struct gpu_buffer *b, size_t *cap, size_t bytes, const char *what,
                   char *err, size_t err_len)
{
    if (bytes <= *cap)
        return 0;
    gpu_buffer_free(b);
    *cap = 0;
    size_t want = bytes + bytes / 2;
    const uint64_t range = gpu_context_caps(ctx)->max_storage_buffer_range;
    if (want > range && bytes <= range)
        want = (size_t)range; /* the room to grow stops where a buffer no longer binds */
    if (gpu_buffer_alloc(ctx, GPU_MEMORY_DEVICE, want, b) != GPU_OK)
        return nnh_fail(err, err_len, "%s (%zu bytes): %s", what, want, gpu_last_error());
    *cap = want;
    return 0;
}

static uint32_t float_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

int image_crop_batch_set(struct image_ops *ops, struct image_crop_batch *batch, const struct image_crop *crops, int n,
                         int target_h, int target_w, char *err, size_t err_len)
{
    if (n < 1 || target_h < 1 || target_w < 1)
        return nnh_fail(err, err_len, "crop batch: %d crops into %dx%d", n, target_h, target_w);
    /* layout: n records, then the resize tables */
    size_t words = (size_t)n * CROP_WORDS, pixels = 0;
    uint32_t max_pixels = 0;
    int max_slot = 0;
    for (int i = 0; i < n; i++) {
        const struct image_crop *c = &crops[i];
        if (c->width < 1 || c->height < 1 || c->width > 65535 || c->height > 65535 || c->slot < 0)
            return nnh_fail(err, err_len, "crop %d: bad size %dx%d or slot %d", i, c->width, c->height, c->slot);
        words += 3 * (size_t)(target_w + target_h);
        pixels += (size_t)c->width * (size_t)c->height;
        if (c->slot > max_slot)
            max_slot = c->slot;
        if ((uint64_t)c->width * c->height > max_pixels)
            max_pixels = (uint32_t)((uint64_t)c->width * c->height);
    }
    if (words > batch->host_words) {
        uint32_t *grown = realloc(batch->host, words * sizeof *grown);
        if (!grown)
            return nnh_fail(err, err_len, "out of memory");
        batch->host = grown;
        batch->host_words = words;
    }
    uint32_t *w = batch->host;
    memset(w, 0, words * sizeof *w);
    size_t table_at = (size_t)n * CROP_WORDS, scratch_at = 0;
    for (int i = 0; i < n; i++) {
        const struct image_crop *c = &crops[i];
        uint32_t *r = w + (size_t)i * CROP_WORDS;
        for (int k = 0; k < 9; k++) {
            /* volatile: GCC 12 -O3 vectorises this loop into m - m (the float round trip
             * dropped), which zeroed the low parts */
            volatile float hi = (float)c->src_from_dst[k];
            r[CP_MATRIX + k] = float_bits(hi);
            r[CP_MATRIX + 9 + k] = float_bits((float)(c->src_from_dst[k] - (double)hi));
        }
        for (int k = 0; k < 9; k++) {
            uint64_t bits;
            memcpy(&bits, &c->src_from_dst[k], 8);
            r[CP_MATRIX64 + 2 * k] = (uint32_t)bits;
            r[CP_MATRIX64 + 2 * k + 1] = (uint32_t)(bits >> 32);
        }
        /* WarpPerspectiveInvoker's block width (BLOCK_SZ 32), part of its rounding */
        int bh0 = c->height < 16 ? c->height : 16;
        r[CP_BLOCK_W] = (uint32_t)(1024 / bh0 < c->width ? 1024 / bh0 : c->width);
        int out_w = c->rotate ? c->height : c->width, out_h = c->rotate ? c->width : c->height;
        int rw = image_resized_width(out_w, out_h, target_h, target_w);
        if (rw < 1)
            rw = 1;
        r[CP_WARP_W] = (uint32_t)c->width;
        r[CP_WARP_H] = (uint32_t)c->height;
        r[CP_ROTATE] = c->rotate != 0;
        r[CP_FLIP] = c->flip != 0;
        r[CP_SCRATCH] = (uint32_t)scratch_at;
        r[CP_SLOT] = (uint32_t)c->slot;
        r[CP_RESIZED_W] = (uint32_t)rw;
        r[CP_RESIZE_MODE] = linear_mode(out_w, out_h, rw, target_h);
        r[CP_TABLE] = (uint32_t)table_at;
        if (r[CP_RESIZE_MODE] == RESIZE_TABLE)
            linear_table(out_w, out_h, rw, target_h, w + table_at);
        table_at += 3 * (size_t)(rw + target_h);
        scratch_at += (size_t)c->width * (size_t)c->height;
    }
    words = table_at;
    /* ties are rare (exact ones come from whole-pixel box edges): room for one pixel in 16 */
    size_t tie_pairs = 256 + pixels / 16;
    int rc = reserve(ops->ctx, &batch->params, &batch->params_cap, words * 4, "crop parameters", err, err_len) ||
             reserve(ops->ctx, &batch->scratch, &batch->scratch_cap, pixels * 4, "crop scratch", err, err_len) ||
             reserve(ops->ctx, &batch->ties, &batch->ties_cap, (1 + 2 * tie_pairs) * 4, "crop tie list", err, err_len);
    batch->tie_pairs = (uint32_t)((batch->ties_cap / 4 - 1) / 2);
    if (!rc && gpu_upload(ops->ctx, &batch->params, 0, w, words * 4) != GPU_OK)
        rc = nnh_fail(err, err_len, "crop parameters: %s", gpu_last_error());
    if (rc)
        return -1;
    batch->n = n;
    batch->target_h = target_h;
    batch->target_w = target_w;
    batch->max_pixels = max_pixels;
    batch->max_slot = max_slot;
    return 0;
}

/* Checks a batch and its destination before anything is recorded. */
static int check_crop_batch(struct image_ops *ops, const struct image_crop_batch *batch,
                            const struct nn_gpu_tensor *dst, char *err, size_t err_len)
{
    if (batch->n < 1)
        return nnh_fail(err, err_len, "crop batch: record before set");
    if (nnh_check_tensor(dst, ops->crop_dtype, false, "crop output", err, err_len))
        return -1;
    const struct pvk_shape *s = &dst->shape;
    if (s->ndim != 4 || s->d[1] != 3 || s->d[2] != batch->target_h || s->d[3] != batch->target_w)
        return nnh_fail(err, err_len, "crop output must be [N, 3, %d, %d]", batch->target_h, batch->target_w);
    if (batch->max_slot >= s->d[0])
        return nnh_fail(err, err_len, "crop slot %d outside a batch of %lld", batch->max_slot, (long long)s->d[0]);
    return 0;
}

/* One dispatch of the warp or its tie fix-up (they share push constants and bindings) over a
 * batch's crops. */
static int dispatch_warp_pass(struct image_ops *ops, const struct gpu_pipeline *pipeline,
                              struct image_crop_batch *batch, struct gpu_cmd *cmd, const struct image_crop_source *src,
                              uint32_t fill_word, const uint32_t groups[3], const char *label, char *err,
                              size_t err_len)
{
    struct warp_push wp = {
        (uint32_t)src->src_w, (uint32_t)src->src_h, (uint32_t)src->margin, fill_word, (uint32_t)batch->n, 0,
        batch->tie_pairs};
    struct gpu_binding wb[5] = {gpu_bind(src->bgr), gpu_bind(&batch->params), gpu_bind(&ops->cubic),
                                gpu_bind(&batch->scratch), gpu_bind(&batch->ties)};
    return nnh_dispatch(cmd, pipeline, wb, &wp, groups, label, err, err_len);
}

int image_crop_record_many(struct image_ops *ops, struct image_crop_batch *const *batches,
                           const struct nn_gpu_tensor *const *dsts, const struct image_crop_source *sources,
                           int n_batches, struct gpu_cmd *cmd, char *err, size_t err_len)
{
    uint32_t fill_words[OCR_CROP_BATCHES] = {0};
    if (n_batches < 1 || n_batches > OCR_CROP_BATCHES)
        return nnh_fail(err, err_len, "crops: %d batches to record at once", n_batches);
    for (int i = 0; i < n_batches; i++) {
        const struct image_crop_source *src = &sources[i];
        if (frame_words(src->bgr, src->src_w, src->src_h, src->margin, &fill_words[i], "crops", err, err_len) ||
            check_crop_batch(ops, batches[i], dsts[i], err, err_len))
            return -1;
    }
    /* each phase for every batch, then one barrier: the batches do not wait on each other */
    if (ops->fix) {
        for (int i = 0; i < n_batches; i++)
            if (gpu_cmd_fill(cmd, &batches[i]->ties, 0, 4, 0) != GPU_OK)
                return nnh_fail(err, err_len, "crop tie list: %s", gpu_last_error());
        gpu_cmd_barrier(cmd, GPU_STAGE_TRANSFER, GPU_STAGE_COMPUTE);
    }
    for (int i = 0; i < n_batches; i++) {
        uint32_t wg[3]; /* a crop's pixels along x, wrapping onto z (crop_warp.glsl), crops along y */
        nnh_grid_1d(batches[i]->max_pixels, IMAGE_WG, wg);
        wg[2] = wg[1];
        wg[1] = (uint32_t)batches[i]->n;
        if (dispatch_warp_pass(ops, ops->warp, batches[i], cmd, &sources[i], fill_words[i], wg, "crop_warp", err,
                               err_len))
            return -1;
    }
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
    if (ops->fix) {
        const uint32_t fg[3] = {gpu_context_caps(ops->ctx)->is_cpu ? FIX_GROUPS_CPU : FIX_GROUPS, 1, 1};
        for (int i = 0; i < n_batches; i++)
            if (dispatch_warp_pass(ops, ops->fix, batches[i], cmd, &sources[i], fill_words[i], fg, "crop_fix", err,
                                   err_len))
                return -1;
        gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
    }
    for (int i = 0; i < n_batches; i++) {
        struct image_crop_batch *batch = batches[i];
        const struct nn_gpu_tensor *dst = dsts[i];
        struct crop_resize_push rp = {(uint32_t)batch->n, (uint32_t)batch->target_h, (uint32_t)batch->target_w,
                                      dst->elem_offset};
        struct gpu_binding rb[3] = {gpu_bind(&batch->scratch), gpu_bind(&batch->params), gpu_bind(dst->buf)};
        uint32_t rg[3];
        nnh_grid_1d((uint64_t)batch->target_w * (uint64_t)batch->target_h, IMAGE_WG, rg);
        rg[2] = rg[1];
        rg[1] = (uint32_t)batch->n;
        if (nnh_dispatch(cmd, ops->crop_resize, rb, &rp, rg, "crop_resize", err, err_len))
            return -1;
    }
    return 0;
}

int image_crop_record(struct image_ops *ops, struct image_crop_batch *batch, struct gpu_cmd *cmd,
                      const struct gpu_buffer *bgr, int src_w, int src_h, int margin, const struct nn_gpu_tensor *dst,
                      char *err, size_t err_len)
{
    const struct image_crop_source src = {bgr, src_w, src_h, margin};
    return image_crop_record_many(ops, &batch, &dst, &src, 1, cmd, err, err_len);
}
