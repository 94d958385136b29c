/* The CPU executor's contract on the real converted nets: the layer callback sees every op once, in
 * order, with the shapes shape inference predicts; a callback can stop the run cleanly; bad input
 * shapes give a one-line error; intermediates are freed (peak well below the sum of all
 * activations); runs are deterministic. Parity itself is test_cpu_parity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "model/format.h"
#include "model/model.h"
#include "nn/cpu/cpu_exec.h"
#include "nn/cpu/ref_ops.h"
#include "nn/half.h"
#include "support/test_env.h"
#include "support/test_model.h"

static void load_model(const char *net, struct pvk_model *m)
{
    char path[1024], err[256];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s.pvk", test_models_dir(), net);
    if (stat(path, &st) != 0) {
        print_error("%s is missing: run tools/fetch-models.sh (or set PPOCR_MODELS)\n", path);
        fail();
    }
    if (pvk_model_load(path, m, err, sizeof err)) {
        print_error("%s: %s\n", path, err);
        fail();
    }
}

/* A real input of the given shape: uniform noise in the normalised pixel range. */
static float *noise_input(const int64_t *s)
{
    size_t n = (size_t)(s[0] * s[1] * s[2] * s[3]);
    float *x = malloc(n * sizeof *x);
    assert_non_null(x);
    test_fill_uniform(x, n, -1, 1);
    return x;
}

struct trace {
    const struct pvk_model *model;
    const struct pvk_shape *expected;
    int next_op;
    int stop_at;
    int bad;
    void *last_output; /* copy of the data of the op writing the net output */
    size_t last_len;
    float argmax_max[64]; /* ARGMAX's second output, when small */
};

static int on_layer(void *user, int op_index, const struct pvk_op *op, int slot, const struct pvk_shape *shape,
                    enum pvk_dtype dtype, const void *data)
{
    struct trace *t = user;
    char a[96], b[96];
    if (slot == 0) {
        if (op_index != t->next_op || op != &t->model->ops[op_index]) {
            print_error("callback for op %d, expected op %d\n", op_index, t->next_op);
            t->bad = 1;
        }
        t->next_op = op_index + 1;
    }
    const struct pvk_shape *want = &t->expected[op->outputs[slot]];
    if (!pvk_shape_equal(shape, want)) {
        print_error("op %d slot %d: shape %s, inference says %s\n", op_index, slot, pvk_shape_str(shape, a, sizeof a),
                    pvk_shape_str(want, b, sizeof b));
        t->bad = 1;
    }
    enum pvk_dtype want_dtype = op->type == PVK_OP_ARGMAX && slot == 0 ? PVK_DTYPE_I32 : PVK_DTYPE_F32;
    if (dtype != want_dtype) {
        print_error("op %d slot %d: dtype %d, expected %d\n", op_index, slot, dtype, want_dtype);
        t->bad = 1;
    }
    if (op->outputs[slot] == t->model->output) {
        t->last_len = (size_t)pvk_shape_numel(shape) * 4;
        free(t->last_output);
        t->last_output = malloc(t->last_len);
        if (t->last_output)
            memcpy(t->last_output, data, t->last_len);
    }
    if (op->type == PVK_OP_ARGMAX && slot == 1 && pvk_shape_numel(shape) <= 64)
        memcpy(t->argmax_max, data, (size_t)pvk_shape_numel(shape) * sizeof(float));
    return op_index == t->stop_at;
}

static void test_callback_sees_every_op_in_order(void **state)
{
    (void)state;
    struct pvk_model m;
    char err[256];
    load_model("rec", &m);
    const int64_t in[4] = {2, 3, 48, 200};
    struct pvk_shape *shapes = calloc(m.n_tensors, sizeof *shapes);
    assert_non_null(shapes);
    if (pvk_infer_shapes(&m, in, shapes, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    float *x = noise_input(in);
    struct trace t = {&m, shapes, 0, -1, 0, NULL, 0, {0}};
    struct pvk_cpu_result out;
    if (pvk_cpu_run(&m, x, in, on_layer, &t, &out, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    assert_false(t.bad);
    assert_int_equal(t.next_op, (int)m.n_ops);
    assert_true(pvk_shape_equal(&out.shape, &shapes[m.output]));
    /* what the callback saw of the output layer is what the run returns */
    assert_non_null(t.last_output);
    assert_int_equal(t.last_len, (size_t)pvk_shape_numel(&out.shape) * 4);
    assert_memory_equal(t.last_output, out.data, t.last_len);
    free(t.last_output);
    pvk_cpu_result_free(&out);
    free(x);
    free(shapes);
    pvk_model_free(&m);
}

static void test_callback_can_stop_the_run(void **state)
{
    (void)state;
    struct pvk_model m;
    char err[256] = "", want[32];
    load_model("cls", &m);
    const int64_t in[4] = {1, 3, 48, 192};
    struct pvk_shape *shapes = calloc(m.n_tensors, sizeof *shapes);
    assert_non_null(shapes);
    assert_int_equal(pvk_infer_shapes(&m, in, shapes, err, sizeof err), 0);
    float *x = noise_input(in);
    int stop = (int)m.n_ops / 2;
    struct trace t = {&m, shapes, 0, stop, 0, NULL, 0, {0}};
    struct pvk_cpu_result out;
    assert_int_equal(pvk_cpu_run(&m, x, in, on_layer, &t, &out, err, sizeof err), -1);
    print_message("stopped as asked: %s\n", err);
    snprintf(want, sizeof want, "op %d (", stop);
    assert_non_null(strstr(err, want));
    assert_non_null(strstr(err, "stopped"));
    assert_null(out.data);
    assert_int_equal(t.next_op, stop + 1);
    free(t.last_output);
    free(x);
    free(shapes);
    pvk_model_free(&m);
}

static void test_bad_input_shape_is_a_clean_error(void **state)
{
    (void)state;
    struct pvk_model m;
    char err[256] = "";
    load_model("det", &m);
    const int64_t in[4] = {1, 4, 64, 64};
    float *x = noise_input(in);
    struct pvk_cpu_result out;
    assert_int_equal(pvk_cpu_run(&m, x, in, NULL, NULL, &out, err, sizeof err), -1);
    print_message("as expected: %s\n", err);
    assert_non_null(strstr(err, "[1, 4, 64, 64]"));
    assert_null(strchr(err, '\n'));
    free(x);
    pvk_model_free(&m);
}

static void test_intermediates_are_freed(void **state)
{
    (void)state;
    struct pvk_model m;
    char err[256];
    load_model("det", &m);
    const int64_t in[4] = {1, 3, 128, 160};
    struct pvk_shape *shapes = calloc(m.n_tensors, sizeof *shapes);
    assert_non_null(shapes);
    assert_int_equal(pvk_infer_shapes(&m, in, shapes, err, sizeof err), 0);
    size_t total = 0;
    for (uint32_t i = 0; i < m.n_tensors; i++)
        if (m.tensors[i].kind == PVK_TENSOR_ACTIVATION && (int32_t)i != m.input)
            total += (size_t)pvk_shape_numel(&shapes[i]) * 4;
    float *x = noise_input(in);
    struct pvk_cpu_result out;
    if (pvk_cpu_run(&m, x, in, NULL, NULL, &out, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    print_message("det 128x160: peak %zu KiB of activations held, %zu KiB in all\n", out.peak_bytes >> 10, total >> 10);
    assert_true(out.peak_bytes > 0);
    assert_true(out.peak_bytes * 4 < total);
    pvk_cpu_result_free(&out);
    free(x);
    free(shapes);
    pvk_model_free(&m);
}

static void test_runs_are_deterministic(void **state)
{
    (void)state;
    struct pvk_model m;
    char err[256];
    load_model("det", &m);
    const int64_t in[4] = {1, 3, 96, 64};
    float *x = noise_input(in);
    struct pvk_cpu_result a, b;
    assert_int_equal(pvk_cpu_run(&m, x, in, NULL, NULL, &a, err, sizeof err), 0);
    assert_int_equal(pvk_cpu_run(&m, x, in, NULL, NULL, &b, err, sizeof err), 0);
    assert_true(pvk_shape_equal(&a.shape, &b.shape));
    assert_memory_equal(a.data, b.data, (size_t)pvk_shape_numel(&a.shape) * 4);
    pvk_cpu_result_free(&a);
    pvk_cpu_result_free(&b);
    free(x);
    pvk_model_free(&m);
}

/* ---- a tiny hand-built .pvk for the executor paths the real nets do not take ---------------- */

#define TINY_T 16
#define TINY_OPS 8

struct tiny {
    struct pvk_tensor t[TINY_T];
    struct pvk_op ops[TINY_OPS];
    const void *data[TINY_T]; /* constant contents */
    int n_t, n_ops;
};

static int tiny_tensor(struct tiny *m, uint32_t kind, uint32_t dtype, int ndim, const int64_t *dims, const void *data)
{
    struct pvk_tensor *t = &m->t[m->n_t];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "t%d", m->n_t);
    t->kind = kind;
    t->dtype = dtype;
    t->ndim = (uint32_t)ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = dims[i];
    if (kind == PVK_TENSOR_CONSTANT)
        t->nbytes = (uint64_t)pvk_tensor_numel(t) * (dtype == PVK_DTYPE_F16 ? 2 : 4);
    m->data[m->n_t] = data;
    return m->n_t++;
}

static struct pvk_op *tiny_op(struct tiny *m, enum pvk_op_type type, enum pvk_act act, int n_in, const int *in, int out)
{
    struct pvk_op *o = &m->ops[m->n_ops];
    memset(o, 0, sizeof *o);
    snprintf(o->name, sizeof o->name, "op%d", m->n_ops++);
    o->type = type;
    o->act = act;
    test_op_wire(o, n_in, in, out);
    return o;
}

static void tiny_load(struct tiny *m, int input, int output, struct pvk_model *out)
{
    test_model_load(m->t, m->n_t, m->ops, m->n_ops, m->data, input, output, "tiny.onnx", out);
}

/* fp16 weights, a residual conv, a stand-alone activation, slice, reshape, transpose, a matmul of
 * two activations and a net that ends in ARGMAX (int32 output, max value via the callback),
 * checked against the same chain composed from ref_ops.h by hand. */
static void test_tiny_net_glue(void **state)
{
    (void)state;
    enum { C = 2, H = 3, W = 4, OC = 3 };
    float w0[OC * C], b0[OC], w1[OC * OC], x[C * H * W];
    uint16_t w0h[OC * C];
    for (int i = 0; i < OC * C; i++) {
        w0[i] = (float)((i * 5) % 7 - 3) * 0.25f; /* exact in fp16 */
        w0h[i] = nn_float_to_half(w0[i]);
    }
    test_fill_uniform(b0, OC, -0.5f, 0.5f);
    test_fill_uniform(w1, OC * OC, -1, 1);
    test_fill_uniform(x, C * H * W, -1, 1);

    struct tiny m = {0};
    int in = tiny_tensor(&m, PVK_TENSOR_ACTIVATION, PVK_DTYPE_F32, 4, (int64_t[]){-1, C, -1, -1}, NULL);
    int t1 = tiny_tensor(&m, PVK_TENSOR_ACTIVATION, PVK_DTYPE_F32, 0, NULL, NULL);
    int t2 = tiny_tensor(&m, PVK_TENSOR_ACTIVATION, PVK_DTYPE_F32, 0, NULL, NULL);
    int t3 = tiny_tensor(&m, PVK_TENSOR_ACTIVATION, PVK_DTYPE_F32, 0, NULL, NULL);
    int t4 = tiny_tensor(&m, PVK_TENSOR_ACTIVATION, PVK_DTYPE_F32, 0, NULL, NULL);
    int t5 = tiny_tensor(&m, PVK_TENSOR_ACTIVATION, PVK_DTYPE_F32, 0, NULL, NULL);
    int t6 = tiny_tensor(&m, PVK_TENSOR_ACTIVATION, PVK_DTYPE_F32, 0, NULL, NULL);
    int t7 = tiny_tensor(&m, PVK_TENSOR_ACTIVATION, PVK_DTYPE_F32, 0, NULL, NULL);
    int t8 = tiny_tensor(&m, PVK_TENSOR_ACTIVATION, PVK_DTYPE_I32, 0, NULL, NULL);
    int t9 = tiny_tensor(&m, PVK_TENSOR_ACTIVATION, PVK_DTYPE_F32, 0, NULL, NULL);
    int cw0 = tiny_tensor(&m, PVK_TENSOR_CONSTANT, PVK_DTYPE_F16, 4, (int64_t[]){OC, C, 1, 1}, w0h);
    int cb0 = tiny_tensor(&m, PVK_TENSOR_CONSTANT, PVK_DTYPE_F32, 1, (int64_t[]){OC}, b0);
    int cw1 = tiny_tensor(&m, PVK_TENSOR_CONSTANT, PVK_DTYPE_F32, 4, (int64_t[]){OC, OC, 1, 1}, w1);

    struct pvk_op *o = tiny_op(&m, PVK_OP_CONV2D, PVK_ACT_RELU, 1, &in, t1);
    struct pvk_conv_params p = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_RELU, 0, 0, PVK_RESIDUAL_NONE};
    o->attr.conv.kh = o->attr.conv.kw = o->attr.conv.sh = o->attr.conv.sw = o->attr.conv.dh = o->attr.conv.dw = 1;
    o->attr.conv.group = 1;
    o->weights[0] = cw0;
    o->weights[1] = cb0;
    o = tiny_op(&m, PVK_OP_CONV2D, PVK_ACT_HARDSWISH, 2, (int[]){t1, t1}, t2);
    o->attr.conv = m.ops[0].attr.conv;
    o->attr.conv.residual = PVK_RESIDUAL_AFTER_ACT;
    o->weights[0] = cw1;
    tiny_op(&m, PVK_OP_UNARY, PVK_ACT_SIGMOID, 1, &t2, t3);
    o = tiny_op(&m, PVK_OP_SLICE, PVK_ACT_NONE, 1, &t3, t4);
    o->attr.slice.axis = 1;
    o->attr.slice.start = 1;
    o->attr.slice.end = INT32_MAX;
    o->attr.slice.step = 1;
    o = tiny_op(&m, PVK_OP_RESHAPE, PVK_ACT_NONE, 1, &t4, t5);
    o->attr.reshape.ndim = 3;
    o->attr.reshape.shape[2] = -1;
    o = tiny_op(&m, PVK_OP_TRANSPOSE, PVK_ACT_NONE, 1, &t5, t6);
    o->attr.transpose.ndim = 3;
    o->attr.transpose.perm[1] = 2;
    o->attr.transpose.perm[2] = 1;
    tiny_op(&m, PVK_OP_MATMUL, PVK_ACT_NONE, 2, (int[]){t6, t5}, t7);
    o = tiny_op(&m, PVK_OP_ARGMAX, PVK_ACT_NONE, 1, &t7, t8);
    o->n_outputs = 2;
    o->outputs[1] = t9;

    struct pvk_model model;
    tiny_load(&m, in, t8, &model);
    const int64_t shape[4] = {1, C, H, W};
    struct pvk_shape *shapes = calloc(model.n_tensors, sizeof *shapes);
    char err[256];
    assert_non_null(shapes);
    assert_int_equal(pvk_infer_shapes(&model, shape, shapes, err, sizeof err), 0);
    struct trace t = {&model, shapes, 0, -1, 0, NULL, 0, {0}};
    struct pvk_cpu_result out;
    if (pvk_cpu_run(&model, x, shape, on_layer, &t, &out, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    assert_false(t.bad);
    assert_int_equal(out.dtype, PVK_DTYPE_I32);

    /* the same chain by hand */
    float a1[OC * H * W], a2[OC * H * W], a4[2 * H * W], a6[2 * H * W], a7[H * W * H * W], mx[H * W];
    int32_t idx[H * W];
    ref_conv2d(x, 1, C, H, W, w0, b0, OC, &p, NULL, a1);
    p.act = PVK_ACT_HARDSWISH;
    p.residual = PVK_RESIDUAL_AFTER_ACT;
    ref_conv2d(a1, 1, OC, H, W, w1, NULL, OC, &p, a1, a2);
    ref_act(PVK_ACT_SIGMOID, 0, 0, a2, OC * H * W);
    memcpy(a4, a2 + H * W, sizeof a4); /* channels 1..2 */
    struct pvk_shape s5 = {3, {1, 2, H * W}}, s6 = {3, {1, H * W, 2}}, s7;
    ref_transpose(a4, &s5, (int32_t[]){0, 2, 1}, a6);
    assert_int_equal(pvk_matmul_out_shape(&s6, &s5, 0, &s7), 0);
    ref_matmul(a6, &s6, a4, &s5, 0, NULL, &s7, a7);
    ref_argmax(a7, H * W, H * W, idx, mx);

    struct pvk_shape want = {2, {1, H * W}};
    assert_true(pvk_shape_equal(&out.shape, &want));
    assert_memory_equal(out.data, idx, sizeof idx);
    assert_non_null(t.last_output);
    assert_memory_equal(t.last_output, idx, sizeof idx);
    assert_memory_equal(t.argmax_max, mx, sizeof mx);
    assert_int_equal(t.next_op, (int)model.n_ops);
    free(t.last_output);
    pvk_cpu_result_free(&out);
    free(shapes);
    pvk_model_free(&model);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_callback_sees_every_op_in_order),  cmocka_unit_test(test_callback_can_stop_the_run),
        cmocka_unit_test(test_bad_input_shape_is_a_clean_error), cmocka_unit_test(test_intermediates_are_freed),
        cmocka_unit_test(test_runs_are_deterministic),           cmocka_unit_test(test_tiny_net_glue),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
