/* The oneDNN executor's own kernels, for what the library does not do as the model means it:
 * the spreading of a transposed convolution run as a 1x1 convolution (with its bias and a
 * ReLU), resizes with fractional scales or aligned corners, average pooling that counts
 * padding under ceil mode, element-wise ops whose first operand is the broadcast one, and ARGMAX.
 * Each reads its operands through their descriptors' strides, so any plain layout will do;
 * the rows are shared among the net's threads. */
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#include "nn/cpu/act_scalar.h"
#include "nn/cpu/cpu_net_internal.h"
#include "nn/cpu/resize_coord.h"

/* ---- rows over threads ---------------------------------------------------------------------- */

typedef void (*rows_fn)(const void *ctx, int64_t begin, int64_t end);

struct rows_share {
    rows_fn fn;
    const void *ctx;
    int64_t begin, end;
};

static void *rows_thread(void *arg)
{
    const struct rows_share *share = arg;
    share->fn(share->ctx, share->begin, share->end);
    return NULL;
}

/* The shares of a row range, taken in turn by the threads of an OpenMP team (which may have
 * fewer threads than shares). */
struct rows_team {
    rows_fn fn;
    const void *ctx;
    int64_t rows, shares;
};

static void rows_team_run(void *arg)
{
    const struct rows_team *t = arg;
    const int64_t me = cpu_dnnl.omp_get_thread_num(), team = cpu_dnnl.omp_get_num_threads();
    for (int64_t i = me; i < t->shares; i += team)
        t->fn(t->ctx, t->rows * i / t->shares, t->rows * (i + 1) / t->shares);
}

enum {
    ROWS_MAX_THREADS = 64,
    /* a thread's start and join cost tens of microseconds: a share smaller than this many output
     * floats is not worth one */
    ROWS_MIN_SHARE = 65536,
};

/* fn over rows [0, rows) in up to `threads` contiguous shares: on the OpenMP team where the
 * runtime lets us start one, else on threads of our own, the calling thread taking the first
 * share and any share whose thread cannot start. */
static void parallel_rows(int threads, int64_t rows, int64_t floats_per_row, rows_fn fn, const void *ctx)
{
    int64_t n = threads < ROWS_MAX_THREADS ? threads : ROWS_MAX_THREADS;
    const int64_t by_work = rows * floats_per_row / ROWS_MIN_SHARE;
    if (n > rows)
        n = rows;
    if (n > by_work)
        n = by_work;
    if (n <= 1) {
        fn(ctx, 0, rows);
        return;
    }
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
    if (cpu_dnnl.gomp_parallel) {
        struct rows_team team = {fn, ctx, rows, n};
        cpu_dnnl.gomp_parallel(rows_team_run, &team, (unsigned)n, 0);
        return;
    }
#endif
    struct rows_share share[ROWS_MAX_THREADS];
    pthread_t thread[ROWS_MAX_THREADS];
    bool started[ROWS_MAX_THREADS];
    for (int64_t i = 0; i < n; i++)
        share[i] = (struct rows_share){fn, ctx, rows * i / n, rows * (i + 1) / n};
    for (int64_t i = 1; i < n; i++)
        started[i] = pthread_create(&thread[i], NULL, rows_thread, &share[i]) == 0;
    fn(ctx, share[0].begin, share[0].end);
    for (int64_t i = 1; i < n; i++) {
        if (started[i])
            pthread_join(thread[i], NULL);
        else
            fn(ctx, share[i].begin, share[i].end);
    }
}

float cn_act_scalar(enum pvk_act act, float alpha, float beta, float x)
{
    return nn_act_scalar(act, alpha, beta, x);
}

/* An operand as its first element, dims and element strides. */
struct sview {
    float *base;
    int nd;
    int64_t dims[DNNL_MAX_NDIMS], strides[DNNL_MAX_NDIMS];
};

static void arg_view(const struct cn_plan *p, const struct cn_arg *a, struct sview *v)
{
    const dnnl_memory_desc_t *md;
    void *ptr = NULL;
    if (a->value >= 0) {
        md = &p->values[a->value].md;
        ptr = cn_value_ptr(p, a->value);
    } else {
        cpu_dnnl.dnnl_memory_get_memory_desc(a->fixed, &md);
        cpu_dnnl.dnnl_memory_get_data_handle(a->fixed, &ptr);
    }
    /* int32 and fp32 elements are both 4 bytes: index arrays are read through the same view */
    v->base = (float *)ptr + md->offset0;
    v->nd = md->ndims;
    for (int i = 0; i < md->ndims; i++) {
        v->dims[i] = md->dims[i];
        v->strides[i] = md->format_desc.blocking.strides[i];
    }
}

static float *at4(const struct sview *v, int64_t n, int64_t c, int64_t h, int64_t w)
{
    return v->base + n * v->strides[0] + c * v->strides[1] + h * v->strides[2] + w * v->strides[3];
}

/* act over n floats (a loop per activation, so that the common ones vectorise). */
static void act_row(enum pvk_act act, float alpha, float beta, float *x, int64_t n)
{
    switch (act) {
    case PVK_ACT_NONE: return;
    case PVK_ACT_RELU:
        /* not fmaxf: a library call per element where gcc keeps NaN semantics */
        for (int64_t i = 0; i < n; i++)
            x[i] = x[i] > 0.0f ? x[i] : 0.0f;
        return;
    case PVK_ACT_SIGMOID:
        for (int64_t i = 0; i < n; i++)
            x[i] = 1.0f / (1.0f + expf(-x[i]));
        return;
    default:
        for (int64_t i = 0; i < n; i++)
            x[i] = cn_act_scalar(act, alpha, beta, x[i]);
        return;
    }
}

struct spread_job {
    struct sview z, y;
    int kh, kw;
    const float *bias;
    enum pvk_act act;
    float alpha, beta;
};

/* One input pixel's kw runs of oc channels, made contiguous in the output row: dst = src + bias. */
static void spread_pixel(float *restrict dst, const float *restrict src, const float *restrict bias, int64_t oc,
                         int kw)
{
    if (!bias) {
        memcpy(dst, src, (size_t)(oc * kw) * sizeof(float));
    } else if (oc == 1) {
        for (int kx = 0; kx < kw; kx++)
            dst[kx] = src[kx] + bias[0];
    } else {
        for (int kx = 0; kx < kw; kx++)
            for (int64_t o = 0; o < oc; o++)
                dst[kx * oc + o] = src[kx * oc + o] + bias[o];
    }
}

static void spread_rows(const void *ctx, int64_t begin, int64_t end)
{
    const struct spread_job *jb = ctx;
    const struct sview *z = &jb->z, *y = &jb->y;
    const int64_t oc = y->dims[1], h = z->dims[2], w = z->dims[3];
    const int kh = jb->kh, kw = jb->kw;
    /* Both are NHWC (the planner makes them so): output row (b, i kh + ky) is w kw pixels of oc
     * channels, pixel j kw + kx being channels (ky kw + kx) oc .. + oc of input pixel j, so each
     * input pixel gives the row kw oc contiguous floats where the output's pixels are dense. */
    const int64_t z_px = z->strides[3], y_px = y->strides[3], y_row = y->strides[2];
    /* an input pixel's output pixels in runs of `run` contiguous ones: all kw where they are dense */
    const bool dense = y_px == oc;
    const int run = dense ? kw : 1;
    const int64_t act_count = dense ? 1 : w * kw, act_len = dense ? w * kw * oc : oc;
    for (int64_t row = begin; row < end; row++) {
        int64_t b = row / (h * kh), i = row / kh % h, ky = row % kh;
        float *yr = y->base + b * y->strides[0] + (i * kh + ky) * y_row;
        const float *zr = z->base + b * z->strides[0] + i * z->strides[2] + ky * kw * oc;
        for (int64_t j = 0; j < w; j++)
            for (int kx = 0; kx < kw; kx += run)
                spread_pixel(yr + (j * kw + kx) * y_px, zr + j * z_px + kx * oc, jb->bias, oc, run);
        for (int64_t a = 0; a < act_count; a++)
            act_row(jb->act, jb->alpha, jb->beta, yr + a * y_px, act_len);
    }
}

void cn_host_spread(const struct cn_plan *p, const struct cn_step *s)
{
    struct spread_job jb = {.kh = s->hp.spread.kh,
                            .kw = s->hp.spread.kw,
                            .bias = s->hp.spread.bias,
                            .act = s->hp.spread.act,
                            .alpha = s->hp.spread.alpha,
                            .beta = s->hp.spread.beta};
    arg_view(p, &s->args[0], &jb.z);
    arg_view(p, &s->args[1], &jb.y);
    const int64_t rows = jb.y.dims[0] * jb.z.dims[2] * jb.kh;
    parallel_rows(p->net->threads, rows, jb.z.dims[3] * jb.kw * jb.y.dims[1], spread_rows, &jb);
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int64_t max64(int64_t a, int64_t b)
{
    return a > b ? a : b;
}

struct resize_job {
    struct sview x, y;
    enum pvk_resize_mode mode;
    float sh, sw;
};

static void resize_rows(const void *ctx, int64_t begin, int64_t end)
{
    const struct resize_job *jb = ctx;
    const struct sview *x = &jb->x, *y = &jb->y;
    const int64_t c = y->dims[1], oh = y->dims[2], ow = y->dims[3], h = x->dims[2], w = x->dims[3];
    const enum pvk_resize_mode mode = jb->mode;
    for (int64_t row = begin; row < end; row++) {
        int64_t b = row / oh, oy = row % oh;
        float fy = nn_resize_src(mode, oy, h, oh, jb->sh);
        int64_t y0 = min64((int64_t)floorf(fy), h - 1), y1 = min64(y0 + 1, h - 1);
        float wy = fy - (float)y0;
        for (int64_t ox = 0; ox < ow; ox++) {
            float fx = nn_resize_src(mode, ox, w, ow, jb->sw);
            int64_t x0 = min64((int64_t)floorf(fx), w - 1), x1 = min64(x0 + 1, w - 1);
            float wx = fx - (float)x0;
            for (int64_t ch = 0; ch < c; ch++) {
                float v;
                if (mode == PVK_RESIZE_NEAREST) {
                    v = *at4(x, b, ch, y0, x0);
                } else {
                    float top = *at4(x, b, ch, y0, x0) * (1 - wx) + *at4(x, b, ch, y0, x1) * wx;
                    float bot = *at4(x, b, ch, y1, x0) * (1 - wx) + *at4(x, b, ch, y1, x1) * wx;
                    v = top * (1 - wy) + bot * wy;
                }
                *at4(y, b, ch, oy, ox) = v;
            }
        }
    }
}

void cn_host_resize(const struct cn_plan *p, const struct cn_step *s)
{
    struct resize_job jb = {.mode = s->hp.resize.mode, .sh = s->hp.resize.scale_h, .sw = s->hp.resize.scale_w};
    arg_view(p, &s->args[0], &jb.x);
    arg_view(p, &s->args[1], &jb.y);
    parallel_rows(p->net->threads, jb.y.dims[0] * jb.y.dims[2], jb.y.dims[1] * jb.y.dims[3], resize_rows, &jb);
}

struct pool_job {
    struct sview x, y;
    const struct pvk_pool_params *pp;
};

static void pool_rows(const void *ctx, int64_t begin, int64_t end)
{
    const struct pool_job *jb = ctx;
    const struct sview *x = &jb->x, *y = &jb->y;
    const struct pvk_pool_params *pp = jb->pp;
    const int64_t c = y->dims[1], oh = y->dims[2], ow = y->dims[3], h = x->dims[2], w = x->dims[3];
    for (int64_t row = begin; row < end; row++) {
        int64_t b = row / oh, oy = row % oh;
        for (int64_t ox = 0; ox < ow; ox++) {
            int64_t y0 = oy * pp->sh - pp->pad_t, x0 = ox * pp->sw - pp->pad_l;
            int64_t y1 = min64(y0 + pp->kh, h + pp->pad_b), x1 = min64(x0 + pp->kw, w + pp->pad_r);
            int64_t ya = max64(y0, 0), yb = min64(y1, h), xa = max64(x0, 0), xb = min64(x1, w);
            int64_t taps = pp->count_include_pad ? (y1 - y0) * (x1 - x0) : (yb - ya) * (xb - xa);
            for (int64_t ch = 0; ch < c; ch++) {
                float m = -FLT_MAX;
                double sum = 0;
                for (int64_t iy = ya; iy < yb; iy++)
                    for (int64_t ix = xa; ix < xb; ix++) {
                        float v = *at4(x, b, ch, iy, ix);
                        m = fmaxf(m, v);
                        sum += v;
                    }
                *at4(y, b, ch, oy, ox) = pp->kind == PVK_POOL_MAX ? m : taps > 0 ? (float)(sum / (double)taps) : 0.0f;
            }
        }
    }
}

void cn_host_pool(const struct cn_plan *p, const struct cn_step *s)
{
    struct pool_job jb = {.pp = &s->hp.pool};
    arg_view(p, &s->args[0], &jb.x);
    arg_view(p, &s->args[1], &jb.y);
    parallel_rows(p->net->threads, jb.y.dims[0] * jb.y.dims[2], jb.y.dims[1] * jb.y.dims[3] * jb.pp->kh * jb.pp->kw,
                  pool_rows, &jb);
}

static float binary_apply(enum pvk_binary_kind kind, float a, float b)
{
    switch (kind) {
    case PVK_BIN_ADD: return a + b;
    case PVK_BIN_SUB: return a - b;
    case PVK_BIN_MUL: return a * b;
    case PVK_BIN_DIV: return a / b;
    }
    return a;
}

/* Strides of v seen from an output of rank nd (numpy broadcasting): 0 on broadcast axes. */
static void broadcast(const struct sview *v, int nd, int64_t *strides)
{
    for (int i = 0; i < nd; i++) {
        int j = i - (nd - v->nd);
        strides[i] = j >= 0 && v->dims[j] > 1 ? v->strides[j] : 0;
    }
}

struct binary_job {
    struct sview a, b, y;
    int64_t sa[DNNL_MAX_NDIMS], sb[DNNL_MAX_NDIMS];
    enum pvk_binary_kind kind;
    enum pvk_act act;
    float alpha, beta;
};

static void binary_rows(const void *ctx, int64_t begin, int64_t end)
{
    const struct binary_job *jb = ctx;
    const struct sview *y = &jb->y;
    const int64_t last = y->dims[y->nd - 1];
    for (int64_t r = begin; r < end; r++) {
        int64_t rest = r, oa = 0, ob = 0, oy = 0;
        for (int i = y->nd - 2; i >= 0; i--) {
            int64_t idx = rest % y->dims[i];
            rest /= y->dims[i];
            oa += idx * jb->sa[i];
            ob += idx * jb->sb[i];
            oy += idx * y->strides[i];
        }
        for (int64_t j = 0; j < last; j++) {
            float v =
                binary_apply(jb->kind, jb->a.base[oa + j * jb->sa[y->nd - 1]], jb->b.base[ob + j * jb->sb[y->nd - 1]]);
            y->base[oy + j * y->strides[y->nd - 1]] = cn_act_scalar(jb->act, jb->alpha, jb->beta, v);
        }
    }
}

void cn_host_binary(const struct cn_plan *p, const struct cn_step *s)
{
    struct binary_job jb = {
        .kind = s->hp.binary.kind, .act = s->hp.binary.act, .alpha = s->hp.binary.alpha, .beta = s->hp.binary.beta};
    arg_view(p, &s->args[0], &jb.a);
    arg_view(p, &s->args[1], &jb.b);
    arg_view(p, &s->args[2], &jb.y);
    broadcast(&jb.a, jb.y.nd, jb.sa);
    broadcast(&jb.b, jb.y.nd, jb.sb);
    /* rows: every index but the last */
    int64_t rows = 1;
    for (int i = 0; i < jb.y.nd - 1; i++)
        rows *= jb.y.dims[i];
    parallel_rows(p->net->threads, rows, jb.y.dims[jb.y.nd - 1], binary_rows, &jb);
}

struct argmax_job {
    const float *x;
    int64_t c;
    int32_t *index;
    float *value;
    bool softmax;
};

static void argmax_rows(const void *ctx, int64_t begin, int64_t end)
{
    const struct argmax_job *jb = ctx;
    const int64_t c = jb->c;
    for (int64_t r = begin; r < end; r++) {
        const float *row = jb->x + r * c;
        int64_t best = 0;
        for (int64_t i = 1; i < c; i++)
            if (row[i] > row[best])
                best = i;
        jb->index[r] = (int32_t)best;
        if (!jb->softmax) {
            jb->value[r] = row[best];
            continue;
        }
        double sum = 0;
        for (int64_t i = 0; i < c; i++)
            sum += exp((double)row[i] - (double)row[best]);
        jb->value[r] = (float)(1.0 / sum);
    }
}

void cn_argmax_rows(const float *x, int64_t rows, int64_t c, int32_t *index, float *value, bool softmax, int threads)
{
    const struct argmax_job jb = {x, c, index, value, softmax};
    /* a softmax row costs an exp per element: count it as several floats of work */
    parallel_rows(threads, rows, softmax ? 8 * c : c, argmax_rows, &jb);
}

void cn_host_argmax(const struct cn_plan *p, const struct cn_step *s)
{
    struct sview x, index, value;
    arg_view(p, &s->args[0], &x);
    arg_view(p, &s->args[1], &index);
    arg_view(p, &s->args[2], &value);
    int64_t c = x.dims[x.nd - 1], rows = 1;
    for (int i = 0; i < x.nd - 1; i++)
        rows *= x.dims[i];
    cn_argmax_rows(x.base, rows, c, (int32_t *)(void *)index.base, value.base, s->hp.argmax.softmax, p->net->threads);
}
