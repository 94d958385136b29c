/* ppocr-bench-cpu-libs: every convolution of det, rec and cls (their real shapes, read from the
 * .pvk models) through oneDNN and through XNNPACK, fp32, on 1 and 2 threads, alternating the
 * libraries pass by pass so that a machine shared with other work slows them alike. Prints each
 * net's total and its largest layers (medians over the runs). This is how the CPU backend's library
 * was chosen (BENCHMARKS.md); it times the libraries' kernels only, not the executor.
 *
 *   ppocr-bench-cpu-libs [--models DIR] [--runs N] [--threads 1,2] [--top K] [--deconv-primitive]
 *   ppocr-bench-cpu-libs --nets [--models DIR] [--runs N] [--threads 1,2] [--top K]
 *
 * --nets times the CPU executor (nn/cpu/cpu_net.h) on the three nets instead: whole runs, and its
 * slowest steps.
 *
 * oneDNN gets each convolution in the layout it asks for (format "any": the blocked layout a net
 * executor keeps between its convolutions); XNNPACK gets NHWC, its only layout. Both add the bias
 * and no activation. oneDNN's deconvolution primitive is slow on det's two 2x2 stride-2 ones; they
 * run as a 1x1 convolution with OC x 2 x 2 outputs, spread by plain C (the CPU executor's form),
 * unless --deconv-primitive. */
#include <dnnl.h>
#include <math.h>
#include <omp.h>
#include <pthreadpool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xnnpack.h>

#include "model/model.h"
#include "nn/cpu/cpu_net.h"
#include "nn/shape.h"

/* oneDNN in the layout it picks (blocked: nChw16c with AVX-512, nChw8c with AVX2), in NHWC and in
 * NCHW; XNNPACK in NHWC. */
enum side { SIDE_DNNL_BLOCKED, SIDE_DNNL_NHWC, SIDE_DNNL_NCHW, SIDE_XNN, SIDE_COUNT };
#define DNNL_SIDES 3
static const char *const side_names[SIDE_COUNT] = {"oneDNN blk", "oneDNN nhwc", "oneDNN nchw", "XNNPACK"};
static const dnnl_format_tag_t side_tags[DNNL_SIDES] = {dnnl_format_tag_any, dnnl_nhwc, dnnl_nchw};

struct dnnl_side {
    dnnl_primitive_t prim;
    dnnl_memory_t src, wei, bia, dst;
    float *shuffled; /* a deconvolution done as a 1x1 convolution: its output, spread */
    int nhwc;        /* the layout of shuffled */
};

struct layer {
    int op_index;
    char name[PVK_NAME_LEN];
    int transposed, lowered; /* lowered: a transposed conv with stride = kernel, run as a 1x1 conv */
    int n, c, h, w, oc, oh, ow;
    struct pvk_conv_params p;
    const float *weight, *bias;
    double gflop;
    struct dnnl_side d[DNNL_SIDES];
    /* XNNPACK */
    xnn_operator_t xop;
    float *xin, *xout, *xkernel;
    double *t[SIDE_COUNT]; /* per run, ms */
};

struct net_bench {
    const char *file;
    int64_t shape[4];
    struct pvk_model model;
    struct layer *layers;
    int n_layers;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    double *s = malloc(sizeof(double) * (size_t)n);
    memcpy(s, v, sizeof(double) * (size_t)n);
    qsort(s, (size_t)n, sizeof(double), cmp_double);
    double m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

#define DNNL_TRY(call)                                                                                                 \
    do {                                                                                                               \
        dnnl_status_t st_ = (call);                                                                                    \
        if (st_ != dnnl_success) {                                                                                     \
            fprintf(stderr, "ppocr-bench-cpu-libs: %s: %s failed (%d)\n", l->name, #call, (int)st_);                   \
            return -1;                                                                                                 \
        }                                                                                                              \
    } while (0)

static void fill_random(float *x, size_t n, unsigned *seed)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)rand_r(seed) / (float)RAND_MAX - 0.5f;
}

/* The weights as oneDNN's goihw dims over the model's storage: conv [OC][IC/g][KH][KW],
 * transposed [IC][OC/g][KH][KW]; a lowered deconvolution is a 1x1 conv whose output channel
 * (oc, ky, kx) reads W[ic][oc][ky][kx]: dims {1, OC KH KW, IC, 1, 1}. */
static int user_weights_md(const struct layer *l, dnnl_memory_desc_t *md)
{
    const struct pvk_conv_params *p = &l->p;
    int g = p->group, icg = l->c / g, ocg = l->oc / g;
    int64_t khw = (int64_t)p->kh * p->kw;
    if (l->lowered) {
        dnnl_dims_t dims = {1, ocg * khw, icg, 1, 1}, st = {0, 1, ocg * khw, 1, 1};
        st[0] = icg * ocg * khw;
        return dnnl_memory_desc_init_by_strides(md, 5, dims, dnnl_f32, st) != dnnl_success;
    }
    dnnl_dims_t dims = {g, ocg, icg, p->kh, p->kw};
    dnnl_dims_t st = {ocg * icg * khw, icg * khw, khw, p->kw, 1};
    if (l->transposed) {
        dnnl_dims_t t = {icg * ocg * khw, khw, ocg * khw, p->kw, 1};
        memcpy(st, t, sizeof t);
    }
    return dnnl_memory_desc_init_by_strides(md, 5, dims, dnnl_f32, st) != dnnl_success;
}

static int dnnl_layer_create(struct layer *l, enum side side, dnnl_engine_t eng, dnnl_stream_t stream, unsigned *seed)
{
    const struct pvk_conv_params *p = &l->p;
    struct dnnl_side *ds = &l->d[side];
    int g = p->group, khw = p->kh * p->kw;
    dnnl_memory_desc_t src_md, dst_md, wei_md, bia_md, user_wei_md;
    dnnl_format_tag_t tag = side_tags[side];
    int conv_oc = l->lowered ? l->oc * khw : l->oc, conv_oh = l->lowered ? l->h : l->oh,
        conv_ow = l->lowered ? l->w : l->ow;
    dnnl_dims_t src_dims = {l->n, l->c, l->h, l->w}, dst_dims = {l->n, conv_oc, conv_oh, conv_ow};
    dnnl_dims_t bia_dims = {l->oc};
    dnnl_dims_t strides = {p->sh, p->sw}, dil = {p->dh - 1, p->dw - 1};
    dnnl_dims_t pad_l = {p->pad_t, p->pad_l}, pad_r = {p->pad_b, p->pad_r};
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_f32, tag));
    /* The lowered form spreads its output with plain C, which reads NCHW or NHWC. */
    ds->nhwc = side == SIDE_DNNL_NHWC;
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dnnl_f32,
                                          !l->lowered ? tag
                                          : ds->nhwc  ? dnnl_nhwc
                                                      : dnnl_nchw));
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&bia_md, 1, bia_dims, dnnl_f32, dnnl_x));
    const dnnl_memory_desc_t *bia_desc = l->bias && !l->lowered ? &bia_md : NULL;
    if (user_weights_md(l, &user_wei_md)) {
        fprintf(stderr, "ppocr-bench-cpu-libs: %s: weights descriptor refused\n", l->name);
        return -1;
    }
    dnnl_dims_t wdims = {l->lowered ? 1 : g, conv_oc / (l->lowered ? 1 : g), l->c / (l->lowered ? 1 : g),
                         l->lowered ? 1 : p->kh, l->lowered ? 1 : p->kw};
    DNNL_TRY(dnnl_memory_desc_init_by_tag(&wei_md, 5, wdims, dnnl_f32, dnnl_format_tag_any));
    dnnl_convolution_desc_t cd;
    dnnl_deconvolution_desc_t dd;
    const void *desc;
    if (l->lowered) {
        dnnl_dims_t one = {1, 1}, zero = {0, 0};
        DNNL_TRY(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                                            &src_md, &wei_md, NULL, &dst_md, one, zero, zero, zero));
        desc = &cd;
    } else if (!l->transposed) {
        DNNL_TRY(dnnl_dilated_convolution_forward_desc_init(&cd, dnnl_forward_inference, dnnl_convolution_direct,
                                                            &src_md, &wei_md, bia_desc, &dst_md, strides, dil, pad_l,
                                                            pad_r));
        desc = &cd;
    } else {
        DNNL_TRY(dnnl_dilated_deconvolution_forward_desc_init(&dd, dnnl_forward_inference, dnnl_deconvolution_direct,
                                                              &src_md, &wei_md, bia_desc, &dst_md, strides, dil, pad_l,
                                                              pad_r));
        desc = &dd;
    }
    dnnl_primitive_desc_t pd;
    DNNL_TRY(dnnl_primitive_desc_create(&pd, desc, NULL, eng, NULL));
    const dnnl_memory_desc_t *q_src = dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0);
    const dnnl_memory_desc_t *q_wei = dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    const dnnl_memory_desc_t *q_dst = dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0);
    DNNL_TRY(dnnl_memory_create(&ds->src, q_src, eng, DNNL_MEMORY_ALLOCATE));
    DNNL_TRY(dnnl_memory_create(&ds->wei, q_wei, eng, DNNL_MEMORY_ALLOCATE));
    DNNL_TRY(dnnl_memory_create(&ds->dst, q_dst, eng, DNNL_MEMORY_ALLOCATE));
    if (bia_desc)
        DNNL_TRY(dnnl_memory_create(&ds->bia, &bia_md, eng, (void *)l->bias));
    DNNL_TRY(dnnl_primitive_create(&ds->prim, pd));
    dnnl_primitive_desc_destroy(pd);
    if (l->lowered)
        ds->shuffled = malloc(sizeof(float) * (size_t)l->n * l->oc * l->oh * l->ow);

    void *src_data;
    DNNL_TRY(dnnl_memory_get_data_handle(ds->src, &src_data));
    fill_random(src_data, dnnl_memory_desc_get_size(q_src) / sizeof(float), seed);

    dnnl_memory_t user_wei;
    dnnl_primitive_desc_t rpd;
    dnnl_primitive_t reorder;
    DNNL_TRY(dnnl_memory_create(&user_wei, &user_wei_md, eng, (void *)l->weight));
    DNNL_TRY(dnnl_reorder_primitive_desc_create(&rpd, &user_wei_md, eng, q_wei, eng, NULL));
    DNNL_TRY(dnnl_primitive_create(&reorder, rpd));
    dnnl_exec_arg_t rargs[2] = {{DNNL_ARG_FROM, user_wei}, {DNNL_ARG_TO, ds->wei}};
    DNNL_TRY(dnnl_primitive_execute(reorder, stream, 2, rargs));
    DNNL_TRY(dnnl_stream_wait(stream));
    dnnl_primitive_destroy(reorder);
    dnnl_primitive_desc_destroy(rpd);
    dnnl_memory_destroy(user_wei);
    return 0;
}

static void dnnl_layer_destroy(struct dnnl_side *ds)
{
    dnnl_primitive_destroy(ds->prim);
    dnnl_memory_destroy(ds->src);
    dnnl_memory_destroy(ds->wei);
    dnnl_memory_destroy(ds->bia);
    dnnl_memory_destroy(ds->dst);
    free(ds->shuffled);
    memset(ds, 0, sizeof *ds);
}

/* The lowered deconvolution's second half, NHWC: z [n][h][w][oc][ky][kx] -> y [n][h ky][w kx][oc] + bias. */
static void spread_nhwc(const struct layer *l, const float *z, float *y)
{
    int kh = l->p.kh, kw = l->p.kw, oc = l->oc, zc = oc * kh * kw;
    for (int n = 0; n < l->n; n++)
        for (int i = 0; i < l->h; i++)
            for (int ky = 0; ky < kh; ky++)
                for (int j = 0; j < l->w; j++)
                    for (int kx = 0; kx < kw; kx++) {
                        const float *zp = z + (((size_t)n * l->h + i) * l->w + j) * zc + ky * kw + kx;
                        float *yp = y + (((size_t)n * l->oh + i * kh + ky) * l->ow + j * kw + kx) * oc;
                        for (int o = 0; o < oc; o++)
                            yp[o] = zp[o * kh * kw] + (l->bias ? l->bias[o] : 0);
                    }
}

/* The same in NCHW: z [n][oc][ky][kx][h][w] -> y [n][oc][h ky][w kx] + bias. */
static void spread(const struct layer *l, const float *z, float *y)
{
    int kh = l->p.kh, kw = l->p.kw;
    for (int n = 0; n < l->n; n++)
        for (int o = 0; o < l->oc; o++) {
            float b = l->bias ? l->bias[o] : 0;
            float *yo = y + ((size_t)n * l->oc + o) * l->oh * l->ow;
            for (int ky = 0; ky < kh; ky++)
                for (int kx = 0; kx < kw; kx++) {
                    const float *zp = z + ((((size_t)n * l->oc + o) * kh + ky) * kw + kx) * l->h * l->w;
                    for (int i = 0; i < l->h; i++) {
                        float *yr = yo + (size_t)(i * kh + ky) * l->ow + kx;
                        for (int j = 0; j < l->w; j++)
                            yr[j * kw] = zp[i * l->w + j] + b;
                    }
                }
        }
}

static int dnnl_layer_run(struct layer *l, struct dnnl_side *ds, dnnl_stream_t stream)
{
    dnnl_exec_arg_t args[4] = {
        {DNNL_ARG_SRC, ds->src}, {DNNL_ARG_WEIGHTS, ds->wei}, {DNNL_ARG_DST, ds->dst}, {DNNL_ARG_BIAS, ds->bia}};
    DNNL_TRY(dnnl_primitive_execute(ds->prim, stream, ds->bia ? 4 : 3, args));
    DNNL_TRY(dnnl_stream_wait(stream));
    if (ds->shuffled) {
        void *z;
        DNNL_TRY(dnnl_memory_get_data_handle(ds->dst, &z));
        (ds->nhwc ? spread_nhwc : spread)(l, z, ds->shuffled);
    }
    return 0;
}

/* XNNPACK wants the kernel as [g][OC/g][KH][KW][IC/g] for both kinds. */
static float *xnn_kernel(const struct layer *l)
{
    const struct pvk_conv_params *p = &l->p;
    int g = p->group, icg = l->c / g, ocg = l->oc / g;
    float *k = malloc(sizeof(float) * (size_t)l->oc * icg * p->kh * p->kw);
    for (int gi = 0; gi < g; gi++)
        for (int o = 0; o < ocg; o++)
            for (int y = 0; y < p->kh; y++)
                for (int x = 0; x < p->kw; x++)
                    for (int i = 0; i < icg; i++) {
                        size_t src = !l->transposed ? ((((size_t)gi * ocg + o) * icg + i) * p->kh + y) * p->kw + x
                                                    : ((((size_t)gi * icg + i) * ocg + o) * p->kh + y) * p->kw + x;
                        k[((((size_t)gi * ocg + o) * p->kh + y) * p->kw + x) * icg + i] = l->weight[src];
                    }
    return k;
}

static int xnn_layer_create(struct layer *l, pthreadpool_t pool, unsigned *seed)
{
    const struct pvk_conv_params *p = &l->p;
    int g = p->group;
    enum xnn_status st;
    l->xkernel = xnn_kernel(l);
    if (!l->transposed)
        st = xnn_create_convolution2d_nhwc_f32((uint32_t)p->pad_t, (uint32_t)p->pad_r, (uint32_t)p->pad_b,
                                               (uint32_t)p->pad_l, (uint32_t)p->kh, (uint32_t)p->kw, (uint32_t)p->sh,
                                               (uint32_t)p->sw, (uint32_t)p->dh, (uint32_t)p->dw, (uint32_t)g,
                                               (size_t)(l->c / g), (size_t)(l->oc / g), (size_t)l->c, (size_t)l->oc,
                                               l->xkernel, l->bias, -INFINITY, INFINITY, 0, &l->xop);
    else
        st = xnn_create_deconvolution2d_nhwc_f32((uint32_t)p->pad_t, (uint32_t)p->pad_r, (uint32_t)p->pad_b,
                                                 (uint32_t)p->pad_l, (uint32_t)p->kh, (uint32_t)p->kw, (uint32_t)p->sh,
                                                 (uint32_t)p->sw, (uint32_t)p->dh, (uint32_t)p->dw, (uint32_t)g,
                                                 (size_t)(l->c / g), (size_t)(l->oc / g), (size_t)l->c, (size_t)l->oc,
                                                 l->xkernel, l->bias, -INFINITY, INFINITY, 0, &l->xop);
    if (st != xnn_status_success) {
        fprintf(stderr, "ppocr-bench-cpu-libs: %s: XNNPACK refuses the layer (%d)\n", l->name, (int)st);
        return -1;
    }
    size_t in_n = (size_t)l->n * l->c * l->h * l->w, out_n = (size_t)l->n * l->oc * l->oh * l->ow;
    /* XNNPACK may read a few bytes past the input's end (XNN_EXTRA_BYTES). */
    l->xin = calloc(in_n + 64, sizeof(float));
    l->xout = calloc(out_n + 64, sizeof(float));
    fill_random(l->xin, in_n, seed);
    if (!l->transposed)
        st = xnn_setup_convolution2d_nhwc_f32(l->xop, (size_t)l->n, (size_t)l->h, (size_t)l->w, l->xin, l->xout, pool);
    else
        st = xnn_setup_deconvolution2d_nhwc_f32(l->xop, (size_t)l->n, (size_t)l->h, (size_t)l->w, 0, 0, l->xin, l->xout,
                                                pool);
    if (st != xnn_status_success) {
        fprintf(stderr, "ppocr-bench-cpu-libs: %s: XNNPACK setup failed (%d)\n", l->name, (int)st);
        return -1;
    }
    return 0;
}

static void xnn_layer_destroy(struct layer *l)
{
    xnn_delete_operator(l->xop);
    free(l->xin);
    free(l->xout);
    free(l->xkernel);
}

static int collect_layers(struct net_bench *nb, int lower_deconv)
{
    const struct pvk_model *m = &nb->model;
    struct pvk_shape *shapes = calloc(m->n_tensors + 1, sizeof *shapes);
    char err[256];
    if (pvk_infer_shapes(m, nb->shape, shapes, err, sizeof err)) {
        fprintf(stderr, "ppocr-bench-cpu-libs: %s: %s\n", nb->file, err);
        free(shapes);
        return -1;
    }
    nb->layers = calloc(m->n_ops, sizeof *nb->layers);
    for (uint32_t k = 0; k < m->n_ops; k++) {
        const struct pvk_op *op = &m->ops[k];
        if (op->type != PVK_OP_CONV2D && op->type != PVK_OP_CONV_TRANSPOSE2D)
            continue;
        const struct pvk_tensor *wt = &m->tensors[op->weights[0]];
        if (wt->dtype != PVK_DTYPE_F32 || (op->weights[1] >= 0 && m->tensors[op->weights[1]].dtype != PVK_DTYPE_F32)) {
            fprintf(stderr, "ppocr-bench-cpu-libs: %s: op %u has non-fp32 weights\n", nb->file, k);
            continue;
        }
        struct layer *l = &nb->layers[nb->n_layers++];
        const struct pvk_shape *xs = &shapes[op->inputs[0]], *ys = &shapes[op->outputs[0]];
        l->op_index = (int)k;
        snprintf(l->name, sizeof l->name, "%s", op->name);
        l->transposed = op->type == PVK_OP_CONV_TRANSPOSE2D;
        pvk_conv_params_from_op(op, &l->p);
        l->lowered = l->transposed && lower_deconv && l->p.sh == l->p.kh && l->p.sw == l->p.kw && l->p.dh == 1 &&
                     l->p.dw == 1 && l->p.group == 1 && !l->p.pad_t && !l->p.pad_l && !l->p.pad_b && !l->p.pad_r;
        l->n = (int)xs->d[0], l->c = (int)xs->d[1], l->h = (int)xs->d[2], l->w = (int)xs->d[3];
        l->oc = (int)ys->d[1], l->oh = (int)ys->d[2], l->ow = (int)ys->d[3];
        l->weight = pvk_tensor_data(m, op->weights[0]);
        l->bias = op->weights[1] >= 0 ? pvk_tensor_data(m, op->weights[1]) : NULL;
        double macs =
            (double)l->n * (l->transposed ? (double)l->h * l->w * l->oc * l->p.kh * l->p.kw * (l->c / l->p.group)
                                          : (double)l->oh * l->ow * l->oc * l->p.kh * l->p.kw * (l->c / l->p.group));
        l->gflop = 2 * macs / 1e9;
    }
    free(shapes);
    return 0;
}

static void describe(const struct layer *l, char *buf, size_t len)
{
    snprintf(buf, len, "%s%dx%d%s s%d g%d %dx%dx%d->%d",
             l->lowered      ? "deconv(1x1) "
             : l->transposed ? "deconv "
                             : "",
             l->p.kh, l->p.kw, l->p.group == l->c && l->c > 1 ? " dw" : "", l->p.sh, l->p.group, l->c, l->h, l->w,
             l->oc);
}

static int bench_net(struct net_bench *nb, int threads, int runs, int top, dnnl_engine_t eng, dnnl_stream_t stream)
{
    unsigned seed = 1234;
    pthreadpool_t pool = threads > 1 ? pthreadpool_create((size_t)threads) : NULL;
    omp_set_num_threads(threads);
    int rc = 0;
    for (int i = 0; i < nb->n_layers && !rc; i++) {
        struct layer *l = &nb->layers[i];
        for (int s = 0; s < SIDE_COUNT; s++)
            l->t[s] = calloc((size_t)runs, sizeof(double));
        for (int s = 0; s < DNNL_SIDES && !rc; s++)
            rc = dnnl_layer_create(l, (enum side)s, eng, stream, &seed);
        if (!rc)
            rc = xnn_layer_create(l, pool, &seed);
    }
    double *tot[SIDE_COUNT];
    for (int s = 0; s < SIDE_COUNT; s++)
        tot[s] = calloc((size_t)runs, sizeof(double));
    /* One warm-up pass, then `runs` passes over the net, the libraries taking turns pass by pass
     * (which goes first rotates from run to run). Each turn starts after a pause: OpenMP's and
     * pthreadpool's workers spin for a while after their last job, and two libraries' spinning
     * workers on two cores would time each other's wake-ups instead of the kernels. */
    for (int r = -1; r < runs && !rc; r++) {
        for (int turn = 0; turn < SIDE_COUNT && !rc; turn++) {
            int s = (turn + (r + SIDE_COUNT)) % SIDE_COUNT;
            struct timespec pause = {0, 30 * 1000 * 1000};
            nanosleep(&pause, NULL);
            for (int i = 0; i < nb->n_layers && !rc; i++) {
                struct layer *l = &nb->layers[i];
                double t0 = now_ms();
                if (s != SIDE_XNN)
                    rc = dnnl_layer_run(l, &l->d[s], stream);
                else if (xnn_run_operator(l->xop, pool) != xnn_status_success) {
                    fprintf(stderr, "ppocr-bench-cpu-libs: %s: XNNPACK run failed\n", l->name);
                    rc = -1;
                }
                double dt = now_ms() - t0;
                if (r >= 0) {
                    l->t[s][r] = dt;
                    tot[s][r] += dt;
                }
            }
        }
    }
    if (!rc) {
        double gflop = 0, m[SIDE_COUNT];
        for (int i = 0; i < nb->n_layers; i++)
            gflop += nb->layers[i].gflop;
        for (int s = 0; s < SIDE_COUNT; s++)
            m[s] = median(tot[s], runs);
        printf("\n%s %lldx%lldx%lldx%lld, %d convolutions, %.2f GFLOP, %d thread%s, %d runs\n", nb->file,
               (long long)nb->shape[0], (long long)nb->shape[1], (long long)nb->shape[2], (long long)nb->shape[3],
               nb->n_layers, gflop, threads, threads > 1 ? "s" : "", runs);
        printf("  %-42s", "ms");
        for (int s = 0; s < SIDE_COUNT; s++)
            printf(" %11s", side_names[s]);
        printf(" %9s %9s\n", "blk/nhwc", "XNN/nhwc");
        printf("  %-42s %11.2f %11.2f %11.2f %11.2f %9.2f %9.2f\n", "every convolution (median of run totals)", m[0],
               m[1], m[2], m[3], m[0] / m[1], m[3] / m[1]);
        /* The largest layers by the slowest library's median. */
        int *order = malloc(sizeof(int) * (size_t)nb->n_layers);
        double *key = malloc(sizeof(double) * (size_t)nb->n_layers);
        for (int i = 0; i < nb->n_layers; i++) {
            order[i] = i;
            key[i] = 0;
            for (int s = 0; s < SIDE_COUNT; s++) {
                double v = median(nb->layers[i].t[s], runs);
                key[i] = v > key[i] ? v : key[i];
            }
        }
        for (int i = 0; i < nb->n_layers; i++)
            for (int j = i + 1; j < nb->n_layers; j++)
                if (key[order[j]] > key[order[i]]) {
                    int t = order[i];
                    order[i] = order[j];
                    order[j] = t;
                }
        for (int i = 0; i < top && i < nb->n_layers; i++) {
            struct layer *l = &nb->layers[order[i]];
            char d[96], row[128];
            describe(l, d, sizeof d);
            snprintf(row, sizeof row, "op %d %s", l->op_index, d);
            for (int s = 0; s < SIDE_COUNT; s++)
                m[s] = median(l->t[s], runs);
            printf("  %-42s %11.3f %11.3f %11.3f %11.3f %9.2f %9.2f\n", row, m[0], m[1], m[2], m[3], m[0] / m[1],
                   m[3] / m[1]);
        }
        free(order);
        free(key);
    }
    for (int i = 0; i < nb->n_layers; i++) {
        struct layer *l = &nb->layers[i];
        for (int s = 0; s < DNNL_SIDES; s++)
            if (l->d[s].prim)
                dnnl_layer_destroy(&l->d[s]);
        if (l->xop)
            xnn_layer_destroy(l);
        l->xop = NULL;
        for (int s = 0; s < SIDE_COUNT; s++) {
            free(l->t[s]);
            l->t[s] = NULL;
        }
    }
    for (int s = 0; s < SIDE_COUNT; s++)
        free(tot[s]);
    if (pool)
        pthreadpool_destroy(pool);
    return rc;
}

/* The executor on one net: `runs` whole runs after a warm-up (median), then as many timed step by
 * step for the table of its slowest steps (medians per step). */
static int bench_executor(struct net_bench *nb, int threads, int runs, int top)
{
    char err[512];
    struct cpu_net *net;
    struct cpu_plan *plan;
    struct cpu_net_options opt = {threads};
    float *x = malloc(sizeof(float) * (size_t)(nb->shape[0] * nb->shape[1] * nb->shape[2] * nb->shape[3]));
    unsigned seed = 99;
    fill_random(x, (size_t)(nb->shape[0] * nb->shape[1] * nb->shape[2] * nb->shape[3]), &seed);
    double t0 = now_ms();
    if (cpu_net_create(&nb->model, &opt, &net, err, sizeof err) ||
        cpu_net_plan(net, nb->shape, NULL, &plan, err, sizeof err)) {
        fprintf(stderr, "ppocr-bench-cpu-libs: %s: %s\n", nb->file, err);
        free(x);
        return -1;
    }
    double plan_ms = now_ms() - t0;
    int n_steps = cpu_plan_step_count(plan);
    double *total = calloc((size_t)runs, sizeof(double)), *steps = calloc((size_t)runs * n_steps, sizeof(double));
    double *step_med = calloc((size_t)n_steps, sizeof(double)), *col = calloc((size_t)runs, sizeof(double));
    int *order = calloc((size_t)n_steps, sizeof(int)), rc = 0;
    double first = 0;
    for (int r = -1; r < runs && !rc; r++) {
        double a = now_ms();
        rc = cpu_plan_run(plan, x, NULL, err, sizeof err);
        if (r < 0)
            first = now_ms() - a;
        else
            total[r] = now_ms() - a;
    }
    for (int r = 0; r < runs && !rc; r++)
        rc = cpu_plan_run_timed(plan, x, NULL, steps + (size_t)r * n_steps, err, sizeof err);
    if (rc) {
        fprintf(stderr, "ppocr-bench-cpu-libs: %s: %s\n", nb->file, err);
    } else {
        for (int i = 0; i < n_steps; i++) {
            for (int r = 0; r < runs; r++)
                col[r] = steps[(size_t)r * n_steps + i];
            step_med[i] = median(col, runs);
            order[i] = i;
        }
        for (int i = 1; i < n_steps; i++) /* slowest first */
            for (int j = i; j > 0 && step_med[order[j]] > step_med[order[j - 1]]; j--) {
                int t = order[j];
                order[j] = order[j - 1];
                order[j - 1] = t;
            }
        printf("\n%s %lldx%lldx%lldx%lld, the CPU executor, %d thread%s: plan %.1f ms, first run %.2f ms, "
               "runs %.2f ms (median of %d), workspace %.1f MB\n",
               nb->file, (long long)nb->shape[0], (long long)nb->shape[1], (long long)nb->shape[2],
               (long long)nb->shape[3], threads, threads > 1 ? "s" : "", plan_ms, first, median(total, runs), runs,
               (double)cpu_plan_workspace_bytes(plan) / 1e6);
        printf("  slowest steps (medians, ms):\n");
        /* cpu_plan_describe prints every step; the slowest are picked from its lines */
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        cpu_plan_describe(plan, step_med, mem);
        fclose(mem);
        char **lines = calloc((size_t)n_steps + 1, sizeof(char *));
        int n_lines = 0;
        for (char *line = strtok(buf, "\n"); line && n_lines < n_steps; line = strtok(NULL, "\n"))
            lines[n_lines++] = line;
        for (int i = 0; i < top && i < n_lines; i++)
            printf("  %s\n", lines[order[i]]);
        free(lines);
        free(buf);
    }
    free(order);
    free(col);
    free(step_med);
    free(steps);
    free(total);
    free(x);
    cpu_plan_destroy(plan);
    cpu_net_destroy(net);
    return rc;
}

int main(int argc, char **argv)
{
    const char *dir = getenv("PPOCR_MODELS");
    int runs = 9, top = 5, lower_deconv = 1, executor = 0;
    int thread_counts[8] = {1, 2}, n_threads = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--models") && i + 1 < argc)
            dir = argv[++i];
        else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
            runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--nets"))
            executor = 1;
        else if (!strcmp(argv[i], "--deconv-primitive"))
            lower_deconv = 0;
        else if (!strcmp(argv[i], "--top") && i + 1 < argc)
            top = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            n_threads = 0;
            for (char *s = strtok(argv[++i], ","); s && n_threads < 8; s = strtok(NULL, ","))
                thread_counts[n_threads++] = atoi(s);
        } else {
            fprintf(
                stderr,
                "usage: ppocr-bench-cpu-libs [--models DIR] [--runs N] [--threads 1,2] [--top K] [--deconv-primitive]\n"
                "       ppocr-bench-cpu-libs --nets [--models DIR] [--runs N] [--threads 1,2] [--top K]\n");
            return 2;
        }
    }
    if (!dir)
        dir = PPOCR_BUILD_MODELS_DIR;
    if (runs < 1 || top < 0) {
        fprintf(stderr, "ppocr-bench-cpu-libs: --runs must be at least 1\n");
        return 2;
    }
    struct net_bench nets[3] = {{.file = "det.pvk", .shape = {1, 3, 960, 960}},
                                {.file = "rec.pvk", .shape = {1, 3, 48, 320}},
                                {.file = "cls.pvk", .shape = {1, 3, 48, 192}}};
    if (xnn_initialize(NULL) != xnn_status_success) {
        fprintf(stderr, "ppocr-bench-cpu-libs: XNNPACK does not run on this processor\n");
        return 1;
    }
    dnnl_engine_t eng;
    dnnl_stream_t stream;
    if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&stream, eng, dnnl_stream_default_flags) != dnnl_success) {
        fprintf(stderr, "ppocr-bench-cpu-libs: oneDNN has no CPU engine\n");
        return 1;
    }
    const dnnl_version_t *v = dnnl_version();
    printf("oneDNN %d.%d.%d (%s runtime), XNNPACK (Debian snapshot); medians of %d runs\n", v->major, v->minor,
           v->patch, v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "other", runs);
    int rc = 0;
    for (int i = 0; i < 3 && !rc; i++) {
        char path[4096];
        char err[256];
        snprintf(path, sizeof path, "%s/%s", dir, nets[i].file);
        if (pvk_model_load(path, &nets[i].model, err, sizeof err)) {
            fprintf(stderr, "ppocr-bench-cpu-libs: %s\n", err);
            rc = 1;
            break;
        }
        if (collect_layers(&nets[i], lower_deconv))
            rc = 1;
    }
    for (int t = 0; t < n_threads && !rc; t++)
        for (int i = 0; i < 3 && !rc; i++)
            if (executor ? bench_executor(&nets[i], thread_counts[t], runs, top)
                         : bench_net(&nets[i], thread_counts[t], runs, top, eng, stream))
                rc = 1;
    for (int i = 0; i < 3; i++) {
        free(nets[i].layers);
        if (nets[i].model.impl_)
            pvk_model_free(&nets[i].model);
    }
    dnnl_stream_destroy(stream);
    dnnl_engine_destroy(eng);
    xnn_deinitialize();
    return rc;
}
