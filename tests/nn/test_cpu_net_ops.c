/* The oneDNN executor (nn/cpu/cpu_net.h) op by op against the reference executor (cpu_exec.h,
 * ref_ops.c): small hand-built nets of each op type on random inputs with odd shapes (batch > 1,
 * odd H and W, groups, strides, dilations, asymmetric padding, every activation, residuals in
 * place and copied, the fusions and their refusals, the own-C fallbacks). Every net runs twice:
 * on the plan's own workspace, then on a workspace poisoned with NaN, so that a step reading bytes
 * nothing wrote fails. Skipped where the build has no CPU executor. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/format.h"
#include "model/model.h"
#include "nn/cpu/cpu_exec.h"
#include "nn/cpu/cpu_net.h"
#include "nn/half.h"
#include "support/test_env.h"
#include "support/test_model.h"

#define TOL 1e-5 /* rel-L2: fp32 against fp32, only the summation order differs */

static double worst_rel;     /* the largest rel-L2 of any case, printed at the end */
static char worst_case[160]; /* and its name */

/* ---- hand-built nets ----------------------------------------------------------------------- */

#define TM_TENSORS 48
#define TM_OPS 16

struct tm {
    struct pvk_tensor t[TM_TENSORS];
    struct pvk_op ops[TM_OPS];
    float *data[TM_TENSORS];
    int n_t, n_ops, n_const;
};

/* Activations come first (the format's rule): make them all, then the constants. */
static int tm_act(struct tm *m)
{
    assert_true(m->n_t < TM_TENSORS && m->n_const == 0);
    struct pvk_tensor *t = &m->t[m->n_t];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "a%d", m->n_t);
    t->kind = PVK_TENSOR_ACTIVATION;
    t->dtype = PVK_DTYPE_F32;
    return m->n_t++;
}

static int tm_input(struct tm *m, int64_t c)
{
    int id = tm_act(m);
    m->t[id].ndim = 4;
    int64_t dims[4] = {-1, c, -1, -1};
    memcpy(m->t[id].shape, dims, sizeof dims);
    return id;
}

/* A random constant, uniform in [-scale, scale]. */
static int tm_const(struct tm *m, int ndim, const int64_t *dims, float scale)
{
    assert_true(m->n_t < TM_TENSORS);
    struct pvk_tensor *t = &m->t[m->n_t];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "c%d", m->n_t);
    t->kind = PVK_TENSOR_CONSTANT;
    t->dtype = PVK_DTYPE_F32;
    t->ndim = (uint32_t)ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = dims[i];
    size_t n = (size_t)pvk_tensor_numel(t);
    t->nbytes = n * sizeof(float);
    m->data[m->n_t] = malloc(n * sizeof(float) + 1);
    assert_non_null(m->data[m->n_t]);
    test_fill_uniform(m->data[m->n_t], n, -scale, scale);
    m->n_const++;
    return m->n_t++;
}

/* The same stored as fp16 (the format allows it; the executor widens such weights once). */
static int tm_const_f16(struct tm *m, int ndim, const int64_t *dims, float scale)
{
    int id = tm_const(m, ndim, dims, scale);
    struct pvk_tensor *t = &m->t[id];
    size_t n = (size_t)pvk_tensor_numel(t);
    uint16_t *h = malloc(n * sizeof *h + 1);
    assert_non_null(h);
    for (size_t i = 0; i < n; i++)
        h[i] = nn_float_to_half(m->data[id][i]);
    free(m->data[id]);
    m->data[id] = (float *)(void *)h; /* tm_load copies nbytes of it */
    t->dtype = PVK_DTYPE_F16;
    t->nbytes = n * sizeof(uint16_t);
    return id;
}

static int tm_vec(struct tm *m, int64_t n, float scale)
{
    return tm_const(m, 1, (int64_t[]){n}, scale);
}

static struct pvk_op *tm_op(struct tm *m, enum pvk_op_type type, enum pvk_act act, int n_in, const int *in, int out)
{
    assert_true(m->n_ops < TM_OPS);
    struct pvk_op *o = &m->ops[m->n_ops];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "op%d", m->n_ops++);
    o->type = type;
    o->act = act;
    if (act == PVK_ACT_CLIP) {
        o->act_alpha = -0.5f;
        o->act_beta = 0.7f;
    } else if (act == PVK_ACT_HARDSIGMOID) {
        o->act_alpha = 0.2f;
        o->act_beta = 0.5f;
    }
    test_op_wire(o, n_in, in, out);
    return o;
}

/* Loads the net (support/test_model.h); frees the builder's data. */
static void tm_load(struct tm *m, int input, int output, struct pvk_model *out)
{
    test_model_load(m->t, m->n_t, m->ops, m->n_ops, (const void *const *)m->data, input, output, "test.onnx", out);
    for (int i = 0; i < m->n_t; i++)
        free(m->data[i]);
}

/* ---- running a net both ways --------------------------------------------------------------- */

static bool have_executor(void)
{
    char err[256];
    if (cpu_net_available(err, sizeof err)) {
        print_message("skipped: %s\n", err);
        return false;
    }
    return true;
}

struct run_opts {
    struct cpu_plan_options plan;
    int threads;
    int min_reference_free; /* 1: no step may be one of oneDNN's reference kernels */
};

/* The net at `shape` on random input by pvk_cpu_run and by cpu_net; fails unless they agree.
 * Returns the executor's rel-L2 error. */
static double check_net_opts(struct tm *b, int input, int output, const int64_t shape[4], const char *what,
                             const struct run_opts *ro)
{
    struct pvk_model m;
    tm_load(b, input, output, &m);
    char err[512];
    size_t n_in = (size_t)(shape[0] * shape[1] * shape[2] * shape[3]);
    float *x = malloc(n_in * sizeof *x);
    assert_non_null(x);
    test_fill_uniform(x, n_in, -1.5f, 1.5f);
    struct pvk_cpu_result want;
    if (pvk_cpu_run(&m, x, shape, NULL, NULL, &want, err, sizeof err)) {
        print_error("%s: reference: %s\n", what, err);
        fail();
    }
    struct cpu_net *net;
    struct cpu_plan *plan;
    /* one thread unless a case asks for more: two threads on a machine whose other core is busy
     * wait a scheduler tick at every primitive (BENCHMARKS.md) */
    struct cpu_net_options no = {ro && ro->threads ? ro->threads : 1};
    if (cpu_net_create(&m, &no, &net, err, sizeof err) ||
        cpu_net_plan(net, shape, ro ? &ro->plan : NULL, &plan, err, sizeof err)) {
        print_error("%s: %s\n", what, err);
        fail();
    }
    assert_true(pvk_shape_equal(cpu_plan_output_shape(plan), &want.shape));
    assert_int_equal(cpu_plan_output_dtype(plan), want.dtype);
    size_t n_out = (size_t)pvk_shape_numel(&want.shape);
    double rel = 0;
    size_t ws_bytes = cpu_plan_workspace_bytes(plan);
    float *ws = aligned_alloc(CPU_PLAN_WORKSPACE_ALIGN, (ws_bytes + 63) / 64 * 64);
    assert_non_null(ws);
    for (int pass = 0; pass < 2; pass++) {
        if (pass == 1)
            test_fill_nan(ws, ws_bytes / sizeof(float));
        if (cpu_plan_run(plan, x, pass ? ws : NULL, err, sizeof err)) {
            print_error("%s: run: %s\n", what, err);
            fail();
        }
        const void *got = cpu_plan_output(plan);
        if (want.dtype == PVK_DTYPE_I32) {
            if (memcmp(got, want.data, n_out * 4)) {
                print_error("%s: int32 outputs differ\n", what);
                fail();
            }
            continue;
        }
        double r = test_rel_l2(got, want.data, n_out);
        if (r > TOL) {
            print_error("%s (%s workspace): rel-L2 %.3g > %.0e\n", what, pass ? "a NaN-filled" : "its own", r, TOL);
            cpu_plan_describe(plan, NULL, stderr);
            fail();
        }
        rel = r > rel ? r : rel;
        if (r > worst_rel) {
            worst_rel = r;
            snprintf(worst_case, sizeof worst_case, "%s", what);
        }
    }
    if (ro && ro->min_reference_free && cpu_plan_reference_steps(plan)) {
        print_error("%s: %d steps run oneDNN's reference kernels\n", what, cpu_plan_reference_steps(plan));
        cpu_plan_describe(plan, NULL, stderr);
        fail();
    }
    free(ws);
    cpu_plan_destroy(plan);
    cpu_net_destroy(net);
    pvk_cpu_result_free(&want);
    pvk_model_free(&m);
    free(x);
    return rel;
}

static int case_threads; /* the threads of check_net's runs: 0 for one */

static double check_net(struct tm *b, int input, int output, const int64_t shape[4], const char *what)
{
    const struct run_opts ro = {.threads = case_threads};
    return check_net_opts(b, input, output, shape, what, case_threads ? &ro : NULL);
}

/* ---- convolutions -------------------------------------------------------------------------- */

struct conv_case {
    int64_t n, c, h, w, oc;
    int kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, group;
    bool bias, on_input; /* on_input: reads the net's NCHW input, else a 1x1 conv's NHWC output */
};

static void set_conv(struct pvk_op *o, const struct conv_case *cc)
{
    o->attr.conv.kh = cc->kh, o->attr.conv.kw = cc->kw, o->attr.conv.sh = cc->sh, o->attr.conv.sw = cc->sw;
    o->attr.conv.dh = cc->dh, o->attr.conv.dw = cc->dw;
    o->attr.conv.pad_t = cc->pt, o->attr.conv.pad_l = cc->pl, o->attr.conv.pad_b = cc->pb, o->attr.conv.pad_r = cc->pr;
    o->attr.conv.group = cc->group;
}

static const struct conv_case one_by_one = {0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, false};

/* A conv of weights [oc][c / group][kh][kw] into `out`. */
static struct pvk_op *conv_op(struct tm *m, const struct conv_case *cc, int64_t c, int64_t oc, enum pvk_act act,
                              int n_in, const int *in, int out)
{
    float scale = 1.5f / sqrtf((float)(c / cc->group * cc->kh * cc->kw));
    int w = tm_const(m, 4, (int64_t[]){oc, c / cc->group, cc->kh, cc->kw}, scale);
    int b = cc->bias ? tm_vec(m, oc, 0.5f) : -1;
    struct pvk_op *o = tm_op(m, PVK_OP_CONV2D, act, n_in, in, out);
    set_conv(o, cc);
    o->weights[0] = w;
    o->weights[1] = b;
    return o;
}

static void check_conv(const struct conv_case *cc, enum pvk_act act)
{
    struct tm m = {0};
    int in = tm_input(&m, cc->c), mid = tm_act(&m), out = tm_act(&m);
    int src = cc->on_input ? in : mid;
    if (!cc->on_input)
        conv_op(&m, &one_by_one, cc->c, cc->c, PVK_ACT_NONE, 1, &in, mid);
    conv_op(&m, cc, cc->c, cc->oc, act, 1, &src, out);
    char what[160];
    snprintf(what, sizeof what, "conv %lldx%lldx%lldx%lld -> %lld, %dx%d s%d,%d d%d,%d p%d,%d,%d,%d g%d %s%s",
             (long long)cc->n, (long long)cc->c, (long long)cc->h, (long long)cc->w, (long long)cc->oc, cc->kh, cc->kw,
             cc->sh, cc->sw, cc->dh, cc->dw, cc->pt, cc->pl, cc->pb, cc->pr, cc->group, pvk_act_name(act),
             cc->on_input ? " on the input" : "");
    check_net(&m, in, out, (int64_t[]){cc->n, cc->c, cc->h, cc->w}, what);
}

static void test_conv_shapes(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    const struct conv_case cases[] = {
        {2, 3, 7, 9, 5, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false},
        {1, 3, 17, 15, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true, true},    /* the first conv, NCHW input */
        {2, 4, 11, 6, 6, 3, 3, 2, 2, 1, 1, 1, 0, 0, 1, 2, true, false},     /* groups, asymmetric pads */
        {2, 8, 9, 9, 8, 5, 5, 1, 2, 1, 1, 2, 2, 2, 2, 8, false, false},     /* depthwise, no bias */
        {1, 16, 13, 11, 16, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 16, true, false}, /* depthwise stride 2 */
        {1, 6, 10, 13, 4, 3, 3, 1, 1, 2, 2, 2, 2, 2, 2, 1, true, false},    /* dilation */
        {3, 5, 5, 7, 7, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1, true, false},      /* rec's 1x3 */
        {2, 16, 6, 5, 24, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, true, false},    /* pointwise */
        {1, 7, 9, 8, 3, 2, 3, 3, 1, 1, 3, 0, 2, 1, 0, 1, false, true},      /* odd everything, NCHW input */
        {2, 40, 9, 11, 13, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false},   /* many channels: a blocked layout */
        {1, 33, 8, 7, 21, 3, 3, 2, 1, 1, 1, 1, 0, 1, 1, 1, false, false},   /* the same, odd widths, stride 2,1 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_conv(&cases[i], PVK_ACT_HARDSWISH);
}

static void test_fp16_weights(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    const struct conv_case cc = {2, 6, 7, 9, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, true, false};
    struct tm m = {0};
    int in = tm_input(&m, 6), x = tm_act(&m), y = tm_act(&m);
    conv_op(&m, &one_by_one, 6, 6, PVK_ACT_NONE, 1, &in, x);
    int w = tm_const_f16(&m, 4, (int64_t[]){8, 3, 3, 3}, 0.5f), b = tm_const_f16(&m, 1, (int64_t[]){8}, 0.5f);
    struct pvk_op *o = tm_op(&m, PVK_OP_CONV2D, PVK_ACT_RELU6, 1, &x, y);
    set_conv(o, &cc);
    o->weights[0] = w;
    o->weights[1] = b;
    check_net(&m, in, y, (int64_t[]){2, 6, 7, 9}, "conv with fp16 weights and bias");
}

static void test_conv_activations(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    const struct conv_case cc = {2, 4, 7, 5, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 2, true, false};
    for (int act = 0; act < PVK_ACT_COUNT; act++)
        check_conv(&cc, (enum pvk_act)act);
}

/* y = conv(x) + r in both residual orders: r read only by the conv (summed in place), r read
 * again later (a copy is summed), and r the conv's own input. */
static void test_conv_residual(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    const struct conv_case cc = {2, 6, 9, 7, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, true, false};
    for (int order = PVK_RESIDUAL_AFTER_ACT; order <= PVK_RESIDUAL_BEFORE_ACT; order++)
        for (int use = 0; use < 3; use++) {
            struct tm m = {0};
            int in = tm_input(&m, 6), x = tm_act(&m), r = tm_act(&m), y = tm_act(&m), z = tm_act(&m);
            conv_op(&m, &one_by_one, 6, 6, PVK_ACT_NONE, 1, &in, x);
            conv_op(&m, &one_by_one, 6, 6, PVK_ACT_RELU, 1, &x, r);
            int res = use == 2 ? x : r;
            struct pvk_op *o = conv_op(&m, &cc, 6, 6, PVK_ACT_HARDSWISH, 2, (int[]){x, res}, y);
            o->attr.conv.residual = order;
            int out = y;
            if (use == 1) { /* r is read after the conv */
                tm_op(&m, PVK_OP_BINARY, PVK_ACT_NONE, 2, (int[]){y, r}, z)->attr.binary.kind = PVK_BIN_SUB;
                out = z;
            }
            char what[96];
            snprintf(what, sizeof what, "conv residual %s, %s", order == PVK_RESIDUAL_AFTER_ACT ? "after" : "before",
                     use == 0   ? "in place"
                     : use == 1 ? "read later"
                                : "the conv's input");
            check_net(&m, in, out, (int64_t[]){2, 6, 9, 7}, what);
        }
}

/* conv -> AFFINE, fused into the conv's post-ops; not fused where the conv's result has another
 * reader, or where oneDNN would merge two activations of one kind (hardsigmoid after hardsigmoid). */
static void test_conv_affine(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    const struct conv_case cc = {2, 5, 8, 9, 7, 3, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, true, false};
    const int64_t widths[][2] = {{5, 7}, {40, 11}}; /* the second in a blocked layout where the library prefers it */
    const enum pvk_act pairs[][2] = {{PVK_ACT_HARDSWISH, PVK_ACT_NONE},
                                     {PVK_ACT_NONE, PVK_ACT_RELU},
                                     {PVK_ACT_HARDSIGMOID, PVK_ACT_HARDSIGMOID},
                                     {PVK_ACT_CLIP, PVK_ACT_RELU6}};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
            for (int shared = 0; shared < 2; shared++) {
                const int64_t c = widths[wi][0], oc = widths[wi][1];
                struct tm m = {0};
                int in = tm_input(&m, c), x = tm_act(&m), y = tm_act(&m), a = tm_act(&m), z = tm_act(&m);
                conv_op(&m, &one_by_one, c, c, PVK_ACT_NONE, 1, &in, x);
                conv_op(&m, &cc, c, oc, pairs[i][0], 1, &x, y);
                struct pvk_op *o = tm_op(&m, PVK_OP_AFFINE, pairs[i][1], 1, &y, a);
                if (pairs[i][1] == PVK_ACT_HARDSIGMOID)
                    o->act_alpha = 1.0f / 6, o->act_beta = 0.4f;
                o->weights[0] = tm_vec(&m, oc, 1.5f);
                o->weights[1] = tm_vec(&m, oc, 0.5f);
                int out = a;
                if (shared) {
                    tm_op(&m, PVK_OP_BINARY, PVK_ACT_NONE, 2, (int[]){a, y}, z)->attr.binary.kind = PVK_BIN_MUL;
                    out = z;
                }
                char what[96];
                snprintf(what, sizeof what, "conv %lld -> %lld %s -> affine %s%s", (long long)c, (long long)oc,
                         pvk_act_name(pairs[i][0]), pvk_act_name(pairs[i][1]),
                         shared ? ", conv output read twice" : "");
                check_net(&m, in, out, (int64_t[]){2, c, 8, 9}, what);
            }
}

static void check_deconv(const struct conv_case *cc, enum pvk_act act, const char *what)
{
    struct tm m = {0};
    int in = tm_input(&m, cc->c), x = tm_act(&m), y = tm_act(&m);
    conv_op(&m, &one_by_one, cc->c, cc->c, PVK_ACT_NONE, 1, &in, x);
    float scale = 1.5f / sqrtf((float)(cc->c / cc->group));
    int w = tm_const(&m, 4, (int64_t[]){cc->c, cc->oc / cc->group, cc->kh, cc->kw}, scale);
    int b = cc->bias ? tm_vec(&m, cc->oc, 0.5f) : -1;
    struct pvk_op *o = tm_op(&m, PVK_OP_CONV_TRANSPOSE2D, act, 1, &x, y);
    set_conv(o, cc);
    o->weights[0] = w;
    o->weights[1] = b;
    check_net(&m, in, y, (int64_t[]){cc->n, cc->c, cc->h, cc->w}, what);
}

static void test_conv_transpose(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    const struct conv_case spread = {2, 6, 5, 7, 4, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, true, false};
    const struct conv_case spread1 = {1, 8, 6, 3, 1, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, false, false};
    const struct conv_case spread3 = {1, 4, 3, 5, 5, 3, 2, 3, 2, 1, 1, 0, 0, 0, 0, 1, true, false};
    const struct conv_case general = {2, 4, 5, 6, 6, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 1, true, false};
    const struct conv_case grouped = {1, 6, 7, 5, 4, 3, 3, 1, 2, 2, 1, 2, 1, 0, 1, 2, false, false};
    check_deconv(&spread, PVK_ACT_RELU, "deconv 2x2 s2 (a 1x1 conv, spread), relu");
    check_deconv(&spread1, PVK_ACT_SIGMOID, "deconv 2x2 s2 to 1 channel, no bias, sigmoid");
    check_deconv(&spread3, PVK_ACT_HARDSWISH, "deconv 3x2 s3,2 (spread)");
    /* large enough that the rows are shared among the net's threads */
    const struct conv_case spread_rows = {1, 8, 97, 101, 4, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, true, false};
    const struct conv_case spread_det = {1, 8, 181, 187, 1, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, true, false};
    check_deconv(&spread_rows, PVK_ACT_RELU, "deconv 2x2 s2, 4 channels of 194x202 rows, relu");
    check_deconv(&spread_det, PVK_ACT_SIGMOID, "deconv 2x2 s2 to 1 channel of 362x374, bias, sigmoid (det's last)");
    check_deconv(&general, PVK_ACT_NONE, "deconv 3x3 s2 p1");
    check_deconv(&grouped, PVK_ACT_SWISH, "deconv 3x3 s1,2 d2,1 groups 2");
}

/* ---- pooling, resize ----------------------------------------------------------------------- */

static void check_pool(int kind, int kh, int kw, int sh, int sw, int pt, int pl, int pb, int pr, int cip, int ceil,
                       const int64_t shape[4], const char *what)
{
    struct tm m = {0};
    int in = tm_input(&m, shape[1]), x = tm_act(&m), y = tm_act(&m);
    conv_op(&m, &one_by_one, shape[1], shape[1], PVK_ACT_NONE, 1, &in, x);
    struct pvk_op *o = tm_op(&m, PVK_OP_POOL2D, PVK_ACT_NONE, 1, &x, y);
    o->attr.pool.kind = kind;
    o->attr.pool.kh = kh, o->attr.pool.kw = kw, o->attr.pool.sh = sh, o->attr.pool.sw = sw;
    o->attr.pool.pad_t = pt, o->attr.pool.pad_l = pl, o->attr.pool.pad_b = pb, o->attr.pool.pad_r = pr;
    o->attr.pool.count_include_pad = cip;
    o->attr.pool.ceil_mode = ceil;
    check_net(&m, in, y, shape, what);
}

static void test_pool(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    const int64_t odd[4] = {2, 5, 9, 11};
    check_pool(PVK_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0, odd, "max 2x2 s2, odd sizes (the last row cut)");
    check_pool(PVK_POOL_MAX, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1, odd, "max 3x3 s2 p1 ceil");
    check_pool(PVK_POOL_AVG, 3, 2, 3, 2, 0, 0, 0, 0, 0, 0, (int64_t[]){2, 7, 6, 10}, "avg 3x2 s3,2 (rec's)");
    check_pool(PVK_POOL_AVG, 3, 3, 2, 2, 1, 1, 1, 1, 0, 1, odd, "avg 3x3 s2 p1 ceil, padding not counted");
    check_pool(PVK_POOL_AVG, 3, 3, 2, 2, 1, 1, 1, 1, 1, 0, odd, "avg 3x3 s2 p1, padding counted");
    check_pool(PVK_POOL_AVG, 3, 3, 2, 2, 1, 0, 1, 0, 1, 1, odd, "avg ceil, padding counted (own C)");
    check_pool(PVK_POOL_AVG, 2, 3, 2, 2, 0, 0, 0, 0, 0, 0, odd, "avg 2x3 s2, the last column cut (own C)");
    check_pool(PVK_POOL_GLOBAL_AVG, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, odd, "global average");
}

static void check_resize_at(int mode, float sh, float sw, const int64_t shape[4], const char *what)
{
    struct tm m = {0};
    int in = tm_input(&m, 3), x = tm_act(&m), y = tm_act(&m);
    conv_op(&m, &one_by_one, 3, 3, PVK_ACT_NONE, 1, &in, x);
    struct pvk_op *o = tm_op(&m, PVK_OP_RESIZE, PVK_ACT_NONE, 1, &x, y);
    o->attr.resize.mode = mode;
    o->attr.resize.scale_h = sh;
    o->attr.resize.scale_w = sw;
    check_net(&m, in, y, shape, what);
}

static void check_resize(int mode, float sh, float sw, const char *what)
{
    check_resize_at(mode, sh, sw, (int64_t[]){2, 3, 5, 7}, what);
}

static void test_resize(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    check_resize(PVK_RESIZE_NEAREST, 2, 2, "nearest x2");
    check_resize(PVK_RESIZE_NEAREST, 4, 3, "nearest x4, x3");
    check_resize(PVK_RESIZE_BILINEAR_HALF_PIXEL, 2, 2, "bilinear half-pixel x2");
    check_resize(PVK_RESIZE_NEAREST, 1.5f, 2.5f, "nearest x1.5, x2.5 (own C)");
    check_resize(PVK_RESIZE_BILINEAR_HALF_PIXEL, 1.7f, 2, "bilinear x1.7 (own C)");
    check_resize(PVK_RESIZE_BILINEAR_ALIGN_CORNERS, 2, 3, "bilinear, aligned corners (own C)");
}

/* ---- element-wise -------------------------------------------------------------------------- */

static void test_concat(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    for (int axis = 1; axis <= 3; axis++) {
        struct tm m = {0};
        int in = tm_input(&m, 4), a = tm_act(&m), b = tm_act(&m), c = tm_act(&m), y = tm_act(&m);
        conv_op(&m, &one_by_one, 4, axis == 1 ? 3 : 4, PVK_ACT_NONE, 1, &in, a);
        conv_op(&m, &one_by_one, 4, 4, PVK_ACT_RELU, 1, &in, b);
        conv_op(&m, &one_by_one, 4, axis == 1 ? 5 : 4, PVK_ACT_NONE, 1, &in, c);
        tm_op(&m, PVK_OP_CONCAT, PVK_ACT_NONE, 3, (int[]){a, b, c}, y)->attr.axis.axis = axis;
        char what[64];
        snprintf(what, sizeof what, "concat of three on axis %d", axis);
        check_net(&m, in, y, (int64_t[]){2, 4, 5, 3}, what);
    }
    /* with the net's NCHW input as one operand */
    struct tm m = {0};
    int in = tm_input(&m, 4), a = tm_act(&m), y = tm_act(&m);
    conv_op(&m, &one_by_one, 4, 2, PVK_ACT_NONE, 1, &in, a);
    tm_op(&m, PVK_OP_CONCAT, PVK_ACT_NONE, 2, (int[]){in, a}, y)->attr.axis.axis = 1;
    check_net(&m, in, y, (int64_t[]){2, 4, 5, 3}, "concat of the input and a conv");
}

/* a (op) b for: both full, b a constant per channel, b an activation per (n, c), b a constant
 * scalar, a the broadcast one (swapped for + and x, own C for - and /), both broadcast. */
static void test_binary(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    const char *names[] = {"add", "sub", "mul", "div"};
    for (int kind = PVK_BIN_ADD; kind <= PVK_BIN_DIV; kind++)
        for (int form = 0; form < 6; form++) {
            struct tm m = {0};
            int in = tm_input(&m, 4), a = tm_act(&m), b = tm_act(&m), g = tm_act(&m), y = tm_act(&m);
            conv_op(&m, &one_by_one, 4, 4, PVK_ACT_NONE, 1, &in, a);
            /* a divisor away from 0 */
            conv_op(&m, &one_by_one, 4, 4, kind == PVK_BIN_DIV ? PVK_ACT_SIGMOID : PVK_ACT_NONE, 1, &in, b);
            struct pvk_op *pool = tm_op(&m, PVK_OP_POOL2D, PVK_ACT_NONE, 1, &b, g);
            pool->attr.pool.kind = PVK_POOL_GLOBAL_AVG;
            int ops_in[2] = {a, b}, n_in = 2;
            int32_t konst = -1;
            switch (form) {
            case 0: break;
            case 1: konst = tm_const(&m, 4, (int64_t[]){1, 4, 1, 1}, 1), n_in = 1; break;
            case 2: ops_in[1] = g; break;
            case 3: konst = tm_const(&m, 1, (int64_t[]){1}, 1), n_in = 1; break;
            case 4: ops_in[0] = g, ops_in[1] = kind == PVK_BIN_DIV ? b : a; break; /* b: the divisor away from 0 */
            case 5: ops_in[0] = g, konst = tm_const(&m, 4, (int64_t[]){1, 1, 1, 3}, 1), n_in = 1; break;
            }
            if (konst >= 0 && kind == PVK_BIN_DIV)
                for (int i = 0; i < (int)pvk_tensor_numel(&m.t[konst]); i++)
                    m.data[konst][i] += m.data[konst][i] >= 0 ? 1.0f : -1.0f;
            struct pvk_op *o = tm_op(&m, PVK_OP_BINARY, form == 2 ? PVK_ACT_RELU : PVK_ACT_NONE, n_in, ops_in, y);
            o->attr.binary.kind = kind;
            o->weights[0] = konst;
            const char *forms[] = {"full",   "constant per channel", "per (n, c)",
                                   "scalar", "a broadcast",          "both broadcast"};
            char what[96];
            snprintf(what, sizeof what, "binary %s, %s", names[kind], forms[form]);
            check_net(&m, in, y, (int64_t[]){2, 4, 5, 3}, what);
        }
}

static void test_unary_and_affine(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    for (int act = 0; act < PVK_ACT_COUNT; act++) {
        struct tm m = {0};
        int in = tm_input(&m, 3), x = tm_act(&m), y = tm_act(&m);
        conv_op(&m, &one_by_one, 3, 3, PVK_ACT_NONE, 1, &in, x);
        tm_op(&m, PVK_OP_UNARY, (enum pvk_act)act, 1, &x, y);
        char what[64];
        snprintf(what, sizeof what, "unary %s", pvk_act_name((enum pvk_act)act));
        check_net(&m, in, y, (int64_t[]){2, 3, 4, 5}, what);
    }
    for (int on_input = 0; on_input < 2; on_input++) {
        struct tm m = {0};
        int in = tm_input(&m, 5), x = tm_act(&m), y = tm_act(&m);
        int src = on_input ? in : x;
        if (!on_input) { /* a pool, not a conv: nothing to fuse into */
            struct pvk_op *pool = tm_op(&m, PVK_OP_POOL2D, PVK_ACT_NONE, 1, &in, x);
            pool->attr.pool.kind = PVK_POOL_MAX;
            pool->attr.pool.kh = pool->attr.pool.kw = 2;
            pool->attr.pool.sh = pool->attr.pool.sw = 1;
        }
        struct pvk_op *o = tm_op(&m, PVK_OP_AFFINE, PVK_ACT_HARDSWISH, 1, &src, y);
        o->weights[0] = tm_vec(&m, 5, 1.5f);
        o->weights[1] = tm_vec(&m, 5, 1);
        check_net(&m, in, y, (int64_t[]){3, 5, 6, 7}, on_input ? "affine of the input" : "affine after a pool");
    }
}

static void test_se(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    for (int residual = 0; residual < 2; residual++)
        for (int gate = 0; gate < 2; gate++)
            for (int batch = 1; batch <= 2; batch++) {
                struct tm m = {0};
                int in = tm_input(&m, 8), x = tm_act(&m), y = tm_act(&m);
                conv_op(&m, &one_by_one, 8, 8, PVK_ACT_NONE, 1, &in, x);
                struct pvk_op *o = tm_op(&m, PVK_OP_SE, gate ? PVK_ACT_HARDSWISH : PVK_ACT_NONE, 1, &x, y);
                o->attr.se.residual = residual;
                o->attr.se.gate_act = gate ? PVK_ACT_SIGMOID : PVK_ACT_HARDSIGMOID;
                o->attr.se.gate_alpha = 1.0f / 6;
                o->attr.se.gate_beta = 0.5f;
                o->weights[0] = tm_const(&m, 2, (int64_t[]){3, 8}, 1);
                o->weights[1] = tm_vec(&m, 3, 0.5f);
                o->weights[2] = tm_const(&m, 2, (int64_t[]){8, 3}, 1);
                o->weights[3] = tm_vec(&m, 8, 0.5f);
                char what[96];
                snprintf(what, sizeof what, "se, residual %d, gate %s, batch %d", residual,
                         gate ? "sigmoid" : "hardsigmoid", batch);
                check_net(&m, in, y, (int64_t[]){batch, 8, 5, 7}, what);
            }
}

/* ---- matrix ops ---------------------------------------------------------------------------- */

/* [N, C, H, W] -> [N, C, H W] -> [N, H W, C]: the input as a sequence of H W tokens of C values. */
static int tokens(struct tm *m, int in, int t_reshaped, int t_tokens)
{
    struct pvk_op *o = tm_op(m, PVK_OP_RESHAPE, PVK_ACT_NONE, 1, &in, t_reshaped);
    o->attr.reshape.ndim = 3;
    o->attr.reshape.shape[2] = -1;
    o = tm_op(m, PVK_OP_TRANSPOSE, PVK_ACT_NONE, 1, &t_reshaped, t_tokens);
    o->attr.transpose.ndim = 3;
    o->attr.transpose.perm[0] = 0, o->attr.transpose.perm[1] = 2, o->attr.transpose.perm[2] = 1;
    return t_tokens;
}

static void test_matmul(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    /* tokens [2, 14, 6] times a constant [6][5], with a bias and an activation */
    for (int trans = 0; trans < 2; trans++) {
        struct tm m = {0};
        int in = tm_input(&m, 6), r = tm_act(&m), t = tm_act(&m), y = tm_act(&m);
        tokens(&m, in, r, t);
        struct pvk_op *o = tm_op(&m, PVK_OP_MATMUL, PVK_ACT_SWISH, 1, &t, y);
        o->attr.matmul.trans_b = trans;
        o->weights[0] = tm_const(&m, 2, trans ? (int64_t[]){5, 6} : (int64_t[]){6, 5}, 0.5f);
        o->weights[1] = tm_vec(&m, 5, 0.5f);
        check_net(&m, in, y, (int64_t[]){2, 6, 2, 7},
                  trans ? "matmul by a constant, transposed" : "matmul by a constant");
    }
    /* two activations: [N, C, H, W] @ [N, C, W, H] and, broadcast, @ [1, C, W, H] */
    for (int form = 0; form < 3; form++) {
        struct tm m = {0};
        int in = tm_input(&m, 3), a = tm_act(&m), s = tm_act(&m), bt = tm_act(&m), y = tm_act(&m);
        conv_op(&m, &one_by_one, 3, 3, PVK_ACT_NONE, 1, &in, a);
        int b = a;
        if (form == 1) {
            struct pvk_op *o = tm_op(&m, PVK_OP_SLICE, PVK_ACT_NONE, 1, &a, s);
            o->attr.slice.axis = 0, o->attr.slice.start = 1, o->attr.slice.end = 2, o->attr.slice.step = 1;
            b = s;
        }
        if (form < 2) {
            struct pvk_op *o = tm_op(&m, PVK_OP_TRANSPOSE, PVK_ACT_NONE, 1, &b, bt);
            o->attr.transpose.ndim = 4;
            o->attr.transpose.perm[0] = 0, o->attr.transpose.perm[1] = 1;
            o->attr.transpose.perm[2] = 3, o->attr.transpose.perm[3] = 2;
            b = bt;
        }
        struct pvk_op *o = tm_op(&m, PVK_OP_MATMUL, PVK_ACT_NONE, 2, (int[]){a, b}, y);
        o->attr.matmul.trans_b = form == 2;
        const char *names[] = {"a @ a^T", "a @ a[1:2]^T (batch broadcast)", "a @ a, b transposed"};
        check_net(&m, in, y, (int64_t[]){2, 3, 4, 5}, names[form]);
    }
}

static void test_layernorm_softmax(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    {
        struct tm m = {0};
        int in = tm_input(&m, 12), r = tm_act(&m), t = tm_act(&m), y = tm_act(&m);
        tokens(&m, in, r, t);
        struct pvk_op *o = tm_op(&m, PVK_OP_LAYERNORM, PVK_ACT_NONE, 1, &t, y);
        o->attr.norm.eps = 1e-5f;
        o->weights[0] = tm_vec(&m, 12, 1.5f);
        o->weights[1] = tm_vec(&m, 12, 1);
        check_net(&m, in, y, (int64_t[]){2, 12, 3, 3}, "layernorm [2, 9, 12]");
    }
    for (int axis = 1; axis <= 3; axis++) {
        struct tm m = {0};
        int in = tm_input(&m, 5), x = tm_act(&m), y = tm_act(&m);
        conv_op(&m, &one_by_one, 5, 5, PVK_ACT_NONE, 1, &in, x);
        tm_op(&m, PVK_OP_SOFTMAX, PVK_ACT_NONE, 1, &x, y)->attr.axis.axis = axis;
        char what[64];
        snprintf(what, sizeof what, "softmax of a 4-D tensor on axis %d", axis);
        check_net(&m, in, y, (int64_t[]){2, 5, 3, 7}, what);
    }
    {
        struct tm m = {0};
        int in = tm_input(&m, 2), r = tm_act(&m), t = tm_act(&m), y = tm_act(&m);
        tokens(&m, in, r, t);
        tm_op(&m, PVK_OP_SOFTMAX, PVK_ACT_NONE, 1, &t, y)->attr.axis.axis = 2;
        check_net(&m, in, y, (int64_t[]){3, 2, 5, 4}, "softmax over the last axis of tokens");
    }
}

static void test_attention(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    /* tokens [2, 9, 36] = qkv of C = 12 in 3 heads of 4 */
    struct tm m = {0};
    int in = tm_input(&m, 36), r = tm_act(&m), t = tm_act(&m), y = tm_act(&m);
    tokens(&m, in, r, t);
    struct pvk_op *o = tm_op(&m, PVK_OP_ATTENTION, PVK_ACT_NONE, 1, &t, y);
    o->attr.attention.heads = 3;
    o->attr.attention.scale = 0.5f;
    check_net(&m, in, y, (int64_t[]){2, 36, 3, 3}, "attention, 3 heads of 4, 9 tokens");
}

/* ---- layout ops and ARGMAX ----------------------------------------------------------------- */

static void test_layout_ops(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    const int32_t perms[][4] = {{0, 2, 3, 1}, {3, 1, 0, 2}, {0, 1, 3, 2}};
    for (size_t i = 0; i < 3; i++) {
        struct tm m = {0};
        int in = tm_input(&m, 3), x = tm_act(&m), y = tm_act(&m);
        conv_op(&m, &one_by_one, 3, 3, PVK_ACT_NONE, 1, &in, x);
        struct pvk_op *o = tm_op(&m, PVK_OP_TRANSPOSE, PVK_ACT_NONE, 1, &x, y);
        o->attr.transpose.ndim = 4;
        memcpy(o->attr.transpose.perm, perms[i], sizeof perms[i]);
        char what[64];
        snprintf(what, sizeof what, "transpose (%d, %d, %d, %d)", perms[i][0], perms[i][1], perms[i][2], perms[i][3]);
        check_net(&m, in, y, (int64_t[]){2, 3, 4, 5}, what);
    }
    const int slices[][4] = {{1, 1, 4, 1}, {3, 1, INT32_MAX, 2}, {2, 0, 3, 1}};
    for (size_t i = 0; i < 3; i++) {
        struct tm m = {0};
        int in = tm_input(&m, 5), x = tm_act(&m), y = tm_act(&m);
        conv_op(&m, &one_by_one, 5, 5, PVK_ACT_NONE, 1, &in, x);
        struct pvk_op *o = tm_op(&m, PVK_OP_SLICE, PVK_ACT_NONE, 1, &x, y);
        o->attr.slice.axis = slices[i][0], o->attr.slice.start = slices[i][1];
        o->attr.slice.end = slices[i][2], o->attr.slice.step = slices[i][3];
        char what[64];
        snprintf(what, sizeof what, "slice axis %d from %d step %d", slices[i][0], slices[i][1], slices[i][3]);
        check_net(&m, in, y, (int64_t[]){2, 5, 4, 7}, what);
    }
    {
        struct tm m = {0};
        int in = tm_input(&m, 4), x = tm_act(&m), y = tm_act(&m), z = tm_act(&m);
        conv_op(&m, &one_by_one, 4, 4, PVK_ACT_NONE, 1, &in, x);
        struct pvk_op *o = tm_op(&m, PVK_OP_RESHAPE, PVK_ACT_NONE, 1, &x, y);
        o->attr.reshape.ndim = 4;
        o->attr.reshape.shape[0] = 0, o->attr.reshape.shape[1] = 2, o->attr.reshape.shape[2] = -1;
        o->attr.reshape.shape[3] = 3;
        conv_op(&m, &one_by_one, 2, 2, PVK_ACT_RELU, 1, &y, z); /* a conv reads the reshaped NCHW bytes */
        check_net(&m, in, z, (int64_t[]){2, 4, 5, 3}, "reshape then conv");
    }
}

static void check_argmax(int value_kind, bool output_value)
{
    struct tm m = {0};
    int in = tm_input(&m, 3), r = tm_act(&m), t = tm_act(&m), idx = tm_act(&m), val = tm_act(&m);
    m.t[idx].dtype = PVK_DTYPE_I32;
    tokens(&m, in, r, t);
    struct pvk_op *o = tm_op(&m, PVK_OP_ARGMAX, PVK_ACT_NONE, 1, &t, idx);
    o->n_outputs = 2;
    o->outputs[1] = val;
    o->attr.argmax.value = value_kind;
    check_net(&m, in, output_value ? val : idx, (int64_t[]){2, 3, 5, 6},
              output_value ? (value_kind ? "argmax's softmax value" : "argmax's max value") : "argmax index");
}

static void test_argmax(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    check_argmax(PVK_ARGMAX_VALUE_MAX, false);
    check_argmax(PVK_ARGMAX_VALUE_MAX, true);
    check_argmax(PVK_ARGMAX_VALUE_SOFTMAX, true);
}

/* ---- plans --------------------------------------------------------------------------------- */

/* A net ending in a softmax over its last axis, planned without it: cpu_plan_argmax gives the
 * reference softmax's argmax and maximum. */
static void test_leave_final_softmax(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    struct tm b = {0};
    int in = tm_input(&b, 4), r = tm_act(&b), t = tm_act(&b), l = tm_act(&b), y = tm_act(&b);
    tokens(&b, in, r, t);
    struct pvk_op *o = tm_op(&b, PVK_OP_MATMUL, PVK_ACT_NONE, 1, &t, l);
    o->weights[0] = tm_const(&b, 2, (int64_t[]){4, 11}, 1);
    tm_op(&b, PVK_OP_SOFTMAX, PVK_ACT_NONE, 1, &l, y)->attr.axis.axis = 2;
    struct pvk_model m;
    tm_load(&b, in, y, &m);
    const int64_t shape[4] = {2, 4, 3, 7};
    float x[2 * 4 * 3 * 7];
    test_fill_uniform(x, sizeof x / sizeof x[0], -1, 1);
    char err[256];
    struct pvk_cpu_result want;
    assert_int_equal(pvk_cpu_run(&m, x, shape, NULL, NULL, &want, err, sizeof err), 0);
    struct cpu_net *net;
    struct cpu_plan *plan;
    struct cpu_plan_options po = {.leave_final_softmax = true};
    struct cpu_net_options no = {1};
    if (cpu_net_create(&m, &no, &net, err, sizeof err) || cpu_net_plan(net, shape, &po, &plan, err, sizeof err) ||
        cpu_plan_run(plan, x, NULL, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    struct pvk_shape logits = {3, {2, 21, 11}};
    assert_true(pvk_shape_equal(cpu_plan_output_shape(plan), &logits));
    int32_t idx[42];
    float val[42];
    assert_int_equal(cpu_plan_argmax(plan, idx, val, err, sizeof err), 0);
    const float *p = want.data;
    for (int row = 0; row < 42; row++) {
        int best = 0;
        for (int i = 1; i < 11; i++)
            if (p[row * 11 + i] > p[row * 11 + best])
                best = i;
        assert_int_equal(idx[row], best);
        assert_true(fabsf(val[row] - p[row * 11 + best]) < 1e-6f);
    }
    cpu_plan_destroy(plan);
    cpu_net_destroy(net);
    pvk_cpu_result_free(&want);
    pvk_model_free(&m);
}

/* One thread or two, the same answer (within fp32 rounding); no reference kernels on a conv
 * chain; the own-C kernels' rows shared among three threads (outputs large enough to be split,
 * odd sizes so that the shares differ); the plan refuses an input whose channels the model does
 * not take, in one line. */
static void test_threads_and_errors(void **state)
{
    (void)state;
    if (!have_executor())
        skip();
    const struct conv_case dw = {1, 16, 9, 9, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 16, true, false};
    for (int threads = 1; threads <= 2; threads++) {
        struct tm m = {0};
        int in = tm_input(&m, 16), x = tm_act(&m), y = tm_act(&m), z = tm_act(&m);
        conv_op(&m, &one_by_one, 16, 16, PVK_ACT_HARDSWISH, 1, &in, x);
        conv_op(&m, &dw, 16, 16, PVK_ACT_HARDSWISH, 1, &x, y);
        conv_op(&m, &one_by_one, 16, 32, PVK_ACT_NONE, 1, &y, z);
        struct run_opts ro = {.threads = threads, .min_reference_free = 1};
        char what[64];
        snprintf(what, sizeof what, "a conv chain on %d thread%s", threads, threads > 1 ? "s" : "");
        check_net_opts(&m, in, z, (int64_t[]){2, 16, 9, 13}, what, &ro);
    }
    case_threads = 3;
    const struct conv_case spread = {3, 6, 41, 67, 8, 2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, true, false};
    check_deconv(&spread, PVK_ACT_RELU, "deconv 2x2 s2 (spread) on 3 threads");
    check_resize_at(PVK_RESIZE_BILINEAR_HALF_PIXEL, 1.7f, 2, (int64_t[]){3, 3, 89, 103},
                    "bilinear x1.7 (own C) on 3 threads");
    case_threads = 0;
    struct tm b = {0};
    int in = tm_input(&b, 4), y = tm_act(&b);
    conv_op(&b, &one_by_one, 4, 4, PVK_ACT_NONE, 1, &in, y);
    struct pvk_model m;
    tm_load(&b, in, y, &m);
    struct cpu_net *net;
    struct cpu_plan *plan = (struct cpu_plan *)&m;
    char err[256] = "";
    assert_int_equal(cpu_net_create(&m, NULL, &net, err, sizeof err), 0);
    assert_int_equal(cpu_net_plan(net, (int64_t[]){1, 3, 8, 8}, NULL, &plan, err, sizeof err), -1);
    assert_null(plan);
    print_message("three channels into a net of four: %s\n", err);
    assert_non_null(strstr(err, "[1, 3, 8, 8]"));
    assert_null(strchr(err, '\n'));
    /* a workspace off the alignment */
    assert_int_equal(cpu_net_plan(net, (int64_t[]){1, 4, 8, 8}, NULL, &plan, err, sizeof err), 0);
    char *ws = aligned_alloc(64, cpu_plan_workspace_bytes(plan) + 64);
    float x[4 * 8 * 8] = {0};
    assert_non_null(ws);
    assert_int_equal(cpu_plan_run(plan, x, ws + 4, err, sizeof err), -1);
    print_message("a misaligned workspace: %s\n", err);
    assert_int_equal(cpu_plan_run(plan, x, ws, err, sizeof err), 0);
    free(ws);
    cpu_plan_destroy(plan);
    cpu_net_destroy(net);
    pvk_model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_shapes),
        cmocka_unit_test(test_fp16_weights),
        cmocka_unit_test(test_conv_activations),
        cmocka_unit_test(test_conv_residual),
        cmocka_unit_test(test_conv_affine),
        cmocka_unit_test(test_conv_transpose),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_resize),
        cmocka_unit_test(test_concat),
        cmocka_unit_test(test_binary),
        cmocka_unit_test(test_unary_and_affine),
        cmocka_unit_test(test_se),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_layernorm_softmax),
        cmocka_unit_test(test_attention),
        cmocka_unit_test(test_layout_ops),
        cmocka_unit_test(test_argmax),
        cmocka_unit_test(test_leave_final_softmax),
        cmocka_unit_test(test_threads_and_errors),
    };
    test_seed();
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    if (worst_case[0])
        fprintf(stderr, "largest rel-L2 against the reference: %.3g (%s)\n", worst_rel, worst_case);
    return rc;
}
