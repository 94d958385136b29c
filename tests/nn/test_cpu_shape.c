/* Shape inference (src/nn/shape.c) over small op lists built in memory: every activation's shape
 * on a net that uses most op kinds, a clean error naming the op for each kind of inconsistency, and
 * the cap on a tensor's size (PVK_SHAPE_MAX_NUMEL) against huge inputs and hostile attributes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "model/model.h"
#include "nn/shape.h"
#include "support/test_env.h"
#include "support/test_model.h"

#define MAX_T 32
#define MAX_OPS 16

/* A model under construction: tensors and ops in fixed arrays. */
struct builder {
    struct pvk_tensor tensors[MAX_T];
    struct pvk_op ops[MAX_OPS];
    struct pvk_model model;
};

static int tensor(struct builder *b, const char *name, uint32_t kind, int ndim, const int64_t *dims)
{
    int id = (int)b->model.n_tensors++;
    struct pvk_tensor *t = &b->tensors[id];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->kind = kind;
    t->dtype = PVK_DTYPE_F32;
    t->ndim = (uint32_t)ndim;
    for (int i = 0; i < ndim; i++)
        t->shape[i] = dims[i];
    return id;
}

#define CONST(b, name, ...)                                                                                            \
    tensor(b, name, PVK_TENSOR_CONSTANT, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8), (int64_t[]){__VA_ARGS__})
/* An activation whose shape the file leaves to run time (rank 0: not recorded). */
#define ACT(b, name) tensor(b, name, PVK_TENSOR_ACTIVATION, 0, NULL)

static struct pvk_op *op(struct builder *b, enum pvk_op_type type, const char *name, int n_in, const int *in, int out)
{
    struct pvk_op *o = &b->ops[b->model.n_ops++];
    memset(o, 0, sizeof *o);
    o->type = type;
    snprintf(o->name, sizeof o->name, "%s", name);
    test_op_wire(o, n_in, in, out);
    return o;
}

static void builder_init(struct builder *b, const int64_t *input_dims)
{
    memset(b, 0, sizeof *b);
    b->model.tensors = b->tensors;
    b->model.ops = b->ops;
    b->model.input = tensor(b, "x", PVK_TENSOR_ACTIVATION, 4, input_dims);
}

static void set_conv(struct pvk_op *o, int k, int s, int pad, int group)
{
    o->attr.conv.kh = o->attr.conv.kw = k;
    o->attr.conv.sh = o->attr.conv.sw = s;
    o->attr.conv.dh = o->attr.conv.dw = 1;
    o->attr.conv.pad_t = o->attr.conv.pad_l = o->attr.conv.pad_b = o->attr.conv.pad_r = pad;
    o->attr.conv.group = group;
}

/* Kernel = stride, no padding. */
static void set_pool(struct pvk_op *o, enum pvk_pool_kind kind, int kh, int kw)
{
    o->attr.pool.kind = kind;
    o->attr.pool.kh = o->attr.pool.sh = kh;
    o->attr.pool.kw = o->attr.pool.sw = kw;
}

static void expect_shape(const struct pvk_shape *s, int ndim, const int64_t *d)
{
    char a[96];
    int ok = s->ndim == ndim;
    for (int i = 0; ok && i < ndim; i++)
        ok = s->d[i] == d[i];
    if (!ok) {
        print_error("shape %s differs from the expected one (rank %d, first dims %lld %lld)\n",
                    pvk_shape_str(s, a, sizeof a), ndim, (long long)d[0], (long long)(ndim > 1 ? d[1] : 0));
        fail();
    }
}
#define EXPECT_SHAPE(s, ...) expect_shape(s, (int)(sizeof((int64_t[]){__VA_ARGS__}) / 8), (int64_t[]){__VA_ARGS__})

static void expect_error(struct builder *b, const int64_t *in, const char *part1, const char *part2)
{
    struct pvk_shape shapes[MAX_T];
    char err[256] = "";
    assert_int_equal(pvk_infer_shapes(&b->model, in, shapes, err, sizeof err), -1);
    print_message("error as expected: %s\n", err);
    assert_non_null(strstr(err, part1));
    assert_non_null(strstr(err, part2));
}

/* x [1,3,32,48] -> conv 3x3 s2 (8) -> SE -> dw conv 5x5 s(2,1) residual-free -> avg pool 3x2
 * -> conv transpose 2x2 s2 -> resize x2 -> concat with the resized first conv output on C
 * -> reshape [0, 0, -1] -> transpose (0, 2, 1) -> matmul const [C, 5] + bias -> layernorm
 * -> softmax -> argmax (index + max). */
static void test_shapes_of_a_mixed_net(void **state)
{
    (void)state;
    struct builder b;
    const int64_t in[4] = {1, 3, 32, 48};
    builder_init(&b, (int64_t[]){-1, 3, -1, -1});
    int x = b.model.input;
    int w0 = CONST(&b, "w0", 8, 3, 3, 3), b0 = CONST(&b, "b0", 8), t0 = ACT(&b, "t0");
    struct pvk_op *o = op(&b, PVK_OP_CONV2D, "conv0", 1, &x, t0);
    set_conv(o, 3, 2, 1, 1);
    o->weights[0] = w0;
    o->weights[1] = b0;
    o->act = PVK_ACT_HARDSWISH;
    int s1 = CONST(&b, "se_w1", 2, 8), s2 = CONST(&b, "se_w2", 8, 2), t1 = ACT(&b, "t1");
    o = op(&b, PVK_OP_SE, "se", 1, &t0, t1);
    o->weights[0] = s1;
    o->weights[2] = s2;
    int wd = CONST(&b, "wd", 8, 1, 5, 5), t2 = ACT(&b, "t2");
    o = op(&b, PVK_OP_CONV2D, "dw", 1, &t1, t2);
    set_conv(o, 5, 1, 2, 8);
    o->attr.conv.sh = 2;
    o->weights[0] = wd;
    int t3 = ACT(&b, "t3");
    o = op(&b, PVK_OP_POOL2D, "pool", 1, &t2, t3);
    set_pool(o, PVK_POOL_AVG, 3, 2);
    int wt = CONST(&b, "wt", 8, 4, 2, 2), t4 = ACT(&b, "t4");
    o = op(&b, PVK_OP_CONV_TRANSPOSE2D, "up", 1, &t3, t4);
    set_conv(o, 2, 2, 0, 1);
    o->weights[0] = wt;
    int t5 = ACT(&b, "t5");
    o = op(&b, PVK_OP_RESIZE, "resize", 1, &t4, t5);
    o->attr.resize.mode = PVK_RESIZE_NEAREST;
    o->attr.resize.scale_h = 2;
    o->attr.resize.scale_w = 2;
    int t6 = ACT(&b, "t6");
    o = op(&b, PVK_OP_RESIZE, "resize_skip", 1, &t3, t6);
    o->attr.resize.mode = PVK_RESIZE_BILINEAR_HALF_PIXEL;
    o->attr.resize.scale_h = 4;
    o->attr.resize.scale_w = 4;
    int t7 = ACT(&b, "t7");
    o = op(&b, PVK_OP_CONCAT, "concat", 2, (int[]){t5, t6}, t7);
    o->attr.axis.axis = 1;
    int t8 = ACT(&b, "t8");
    o = op(&b, PVK_OP_RESHAPE, "flatten", 1, &t7, t8);
    o->attr.reshape.ndim = 3;
    o->attr.reshape.shape[0] = 0;
    o->attr.reshape.shape[1] = 0;
    o->attr.reshape.shape[2] = -1;
    int t9 = ACT(&b, "t9");
    o = op(&b, PVK_OP_TRANSPOSE, "to_tokens", 1, &t8, t9);
    o->attr.transpose.ndim = 3;
    memcpy(o->attr.transpose.perm, (int32_t[]){0, 2, 1}, 3 * sizeof(int32_t));
    int wm = CONST(&b, "wm", 12, 5), bm = CONST(&b, "bm", 5), t10 = ACT(&b, "t10");
    o = op(&b, PVK_OP_MATMUL, "fc", 1, &t9, t10);
    o->weights[0] = wm;
    o->weights[1] = bm;
    int g = CONST(&b, "gamma", 5), t11 = ACT(&b, "t11");
    o = op(&b, PVK_OP_LAYERNORM, "ln", 1, &t10, t11);
    o->weights[0] = g;
    o->attr.norm.eps = 1e-5f;
    int t12 = ACT(&b, "t12");
    o = op(&b, PVK_OP_SOFTMAX, "softmax", 1, &t11, t12);
    o->attr.axis.axis = 2;
    int t13 = ACT(&b, "t13"), t14 = ACT(&b, "t14");
    o = op(&b, PVK_OP_ARGMAX, "argmax", 1, &t12, t13);
    o->n_outputs = 2;
    o->outputs[1] = t14;
    b.model.output = t13;

    struct pvk_shape s[MAX_T];
    char err[256] = "";
    if (pvk_infer_shapes(&b.model, in, s, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    EXPECT_SHAPE(&s[t0], 1, 8, 16, 24);
    EXPECT_SHAPE(&s[t1], 1, 8, 16, 24);
    EXPECT_SHAPE(&s[t2], 1, 8, 8, 24);
    EXPECT_SHAPE(&s[t3], 1, 8, 2, 12);
    EXPECT_SHAPE(&s[t4], 1, 4, 4, 24);
    EXPECT_SHAPE(&s[t5], 1, 4, 8, 48);
    EXPECT_SHAPE(&s[t6], 1, 8, 8, 48);
    EXPECT_SHAPE(&s[t7], 1, 12, 8, 48);
    EXPECT_SHAPE(&s[t8], 1, 12, 384);
    EXPECT_SHAPE(&s[t9], 1, 384, 12);
    EXPECT_SHAPE(&s[t10], 1, 384, 5);
    EXPECT_SHAPE(&s[t12], 1, 384, 5);
    EXPECT_SHAPE(&s[t13], 1, 384);
    EXPECT_SHAPE(&s[t14], 1, 384);
    EXPECT_SHAPE(&s[wm], 12, 5); /* constants keep their file shape */

    /* the same net rejects an input the model's recorded input shape excludes */
    expect_error(&b, (int64_t[]){1, 4, 32, 48}, "input shape [1, 4, 32, 48]", "[-1, 3, -1, -1]");
    /* and an input too small for the pooling */
    expect_error(&b, (int64_t[]){1, 3, 4, 48}, "op 3 (pool, POOL2D)", "does not fit");
}

static void test_channel_mismatch(void **state)
{
    (void)state;
    struct builder b;
    const int64_t in[4] = {1, 3, 8, 8};
    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    int x = b.model.input, w = CONST(&b, "w", 6, 2, 3, 3), y = ACT(&b, "y");
    struct pvk_op *o = op(&b, PVK_OP_CONV2D, "conv_bad", 1, &x, y);
    set_conv(o, 3, 1, 1, 2); /* 2 per group x 2 groups = 4 channels, input has 3 */
    o->weights[0] = w;
    b.model.output = y;
    expect_error(&b, in, "op 0 (conv_bad, CONV2D)", "input has 3 channels, weight expects 4");
}

static void test_bad_bias_and_residual(void **state)
{
    (void)state;
    struct builder b;
    const int64_t in[4] = {1, 4, 8, 8};
    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    int x = b.model.input, w = CONST(&b, "w", 4, 4, 1, 1), bias = CONST(&b, "bias", 5), y = ACT(&b, "y");
    struct pvk_op *o = op(&b, PVK_OP_CONV2D, "conv", 1, &x, y);
    set_conv(o, 1, 1, 0, 1);
    o->weights[0] = w;
    o->weights[1] = bias;
    b.model.output = y;
    expect_error(&b, in, "bias", "5 values, expected 4");

    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    x = b.model.input;
    w = CONST(&b, "w", 4, 4, 1, 1);
    int y0 = ACT(&b, "y0"), y1 = ACT(&b, "y1");
    o = op(&b, PVK_OP_CONV2D, "conv_s2", 1, &x, y0);
    set_conv(o, 1, 2, 0, 1);
    o->weights[0] = w;
    o = op(&b, PVK_OP_CONV2D, "conv_res", 2, (int[]){y0, x}, y1);
    set_conv(o, 1, 1, 0, 1);
    o->weights[0] = w;
    o->attr.conv.residual = PVK_RESIDUAL_AFTER_ACT;
    b.model.output = y1;
    expect_error(&b, in, "op 1 (conv_res, CONV2D)", "residual [1, 4, 8, 8] does not match output [1, 4, 4, 4]");
}

static void test_bad_reshape(void **state)
{
    (void)state;
    struct builder b;
    const int64_t in[4] = {2, 3, 5, 7};
    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    int x = b.model.input, y = ACT(&b, "y");
    struct pvk_op *o = op(&b, PVK_OP_RESHAPE, "reshape", 1, &x, y);
    o->attr.reshape.ndim = 2;
    o->attr.reshape.shape[0] = 4;
    o->attr.reshape.shape[1] = -1;
    b.model.output = y;
    expect_error(&b, in, "op 0 (reshape, RESHAPE)", "210 values");
}

static void test_concat_mismatch(void **state)
{
    (void)state;
    struct builder b;
    const int64_t in[4] = {1, 4, 8, 8};
    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    int x = b.model.input, p = ACT(&b, "p"), y = ACT(&b, "y");
    struct pvk_op *o = op(&b, PVK_OP_POOL2D, "pool", 1, &x, p);
    set_pool(o, PVK_POOL_MAX, 2, 2);
    o = op(&b, PVK_OP_CONCAT, "cat", 2, (int[]){x, p}, y);
    o->attr.axis.axis = 1;
    b.model.output = y;
    expect_error(&b, in, "op 1 (cat, CONCAT)", "input 1 [1, 4, 4, 4] does not concatenate");
}

static void test_use_before_definition_and_broadcast(void **state)
{
    (void)state;
    struct builder b;
    const int64_t in[4] = {1, 4, 8, 8};
    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    int x = b.model.input, later = ACT(&b, "later"), y = ACT(&b, "y");
    op(&b, PVK_OP_BINARY, "add", 2, (int[]){x, later}, y);
    op(&b, PVK_OP_UNARY, "make_later", 1, &x, later);
    b.model.output = y;
    expect_error(&b, in, "op 0 (add, BINARY)", "used before any op produces it");

    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    x = b.model.input;
    int c = CONST(&b, "c", 3, 1, 1);
    y = ACT(&b, "y");
    struct pvk_op *o = op(&b, PVK_OP_BINARY, "mul_const", 1, &x, y);
    o->weights[0] = c;
    o->attr.binary.kind = PVK_BIN_MUL;
    b.model.output = y;
    expect_error(&b, in, "mul_const", "[1, 4, 8, 8] and [3, 1, 1] do not broadcast");
}

static void test_recorded_shape_disagreement(void **state)
{
    (void)state;
    struct builder b;
    const int64_t in[4] = {1, 4, 8, 8};
    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    int x = b.model.input;
    int y = tensor(&b, "y", PVK_TENSOR_ACTIVATION, 4, (int64_t[]){-1, 4, -1, 9});
    op(&b, PVK_OP_UNARY, "id", 1, &x, y);
    b.model.output = y;
    expect_error(&b, in, "output 0 is [1, 4, 8, 8]", "records [-1, 4, -1, 9]");
}

/* An input whose element count wraps int64 to 0 (2^64): refused as the input, before any op. */
static void test_huge_input(void **state)
{
    (void)state;
    struct builder b;
    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    int x = b.model.input, y = ACT(&b, "y");
    op(&b, PVK_OP_UNARY, "id", 1, &x, y);
    b.model.output = y;
    expect_error(&b, (int64_t[]){65536, 65536, 65536, 65536}, "input shape [65536, 65536, 65536, 65536]",
                 "more than 2147483647 elements");
    /* one element over the cap */
    expect_error(&b, (int64_t[]){2, 1, 32768, 32768}, "input shape [2, 1, 32768, 32768]", "more than 2147483647");
}

/* A 2^24-element input (within the cap) broadcast against a constant of 2^40 values (as large as a
 * model file may hold): 2^64 elements, which a plain product wraps to 0. */
static void test_broadcast_overflows_int64(void **state)
{
    (void)state;
    struct builder b;
    builder_init(&b, (int64_t[]){1, 1, 1, -1});
    int x = b.model.input, k = CONST(&b, "k", 1048576, 1048576, 1), y = ACT(&b, "y");
    struct pvk_op *o = op(&b, PVK_OP_BINARY, "mul", 1, &x, y);
    o->weights[0] = k;
    o->attr.binary.kind = PVK_BIN_MUL;
    b.model.output = y;
    expect_error(&b, (int64_t[]){1, 1, 1, 16777216}, "op 0 (mul, BINARY): output [1, 1048576, 1048576, 16777216]",
                 "more than 2147483647 elements");
}

/* A broadcast against a constant with an empty dim (the file allows 0) gives an empty tensor. */
static void test_broadcast_to_empty(void **state)
{
    (void)state;
    struct builder b;
    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    int x = b.model.input, k = CONST(&b, "k", 4, 0, 1), y = ACT(&b, "y");
    struct pvk_op *o = op(&b, PVK_OP_BINARY, "add_empty", 1, &x, y);
    o->weights[0] = k;
    b.model.output = y;
    expect_error(&b, (int64_t[]){1, 4, 1, 8}, "op 0 (add_empty, BINARY): output [1, 4, 0, 8]",
                 "empty or negative dimension");
}

/* A 7x7 window on a 4x4 input padded by 1: no output position. */
static void test_conv_window_larger_than_input(void **state)
{
    (void)state;
    struct builder b;
    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    int x = b.model.input, w = CONST(&b, "w", 2, 1, 7, 7), y = ACT(&b, "y");
    struct pvk_op *o = op(&b, PVK_OP_CONV2D, "conv7", 1, &x, y);
    set_conv(o, 7, 1, 1, 1);
    o->weights[0] = w;
    b.model.output = y;
    expect_error(&b, (int64_t[]){1, 1, 4, 4}, "op 0 (conv7, CONV2D)", "a 4x4 input gives an empty output (k 7x7");
}

/* Attributes within the loader's range (at most 4096) that carry the int shape rules past
 * INT_MAX: a transposed conv of stride 4096 on 2^20 rows (2^32 rows out), a resize by 10^9, and
 * padding on a column of INT_MAX rows (a tensor exactly at the cap) before a conv or a pool. */
static void test_spatial_rules_past_int(void **state)
{
    (void)state;
    struct builder b;
    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    int x = b.model.input, w = CONST(&b, "w", 1, 1, 4096, 1), y = ACT(&b, "y");
    struct pvk_op *o = op(&b, PVK_OP_CONV_TRANSPOSE2D, "up", 1, &x, y);
    set_conv(o, 1, 1, 0, 1);
    o->attr.conv.kh = o->attr.conv.sh = 4096;
    o->weights[0] = w;
    b.model.output = y;
    expect_error(&b, (int64_t[]){1, 1, 1048576, 1}, "op 0 (up, CONV_TRANSPOSE2D): a [1, 1, 1048576, 1] input",
                 "extent of 4294967296 x 1");

    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    x = b.model.input;
    y = ACT(&b, "y");
    o = op(&b, PVK_OP_RESIZE, "zoom", 1, &x, y);
    o->attr.resize.mode = PVK_RESIZE_NEAREST;
    o->attr.resize.scale_h = 1e9f;
    o->attr.resize.scale_w = 1;
    b.model.output = y;
    expect_error(&b, (int64_t[]){1, 1, 8, 8}, "op 0 (zoom, RESIZE): scales 1e+09 x 1 take a [1, 1, 8, 8] input",
                 "past 2147483647 elements");

    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    x = b.model.input;
    w = CONST(&b, "w", 1, 1, 3, 1);
    y = ACT(&b, "y");
    o = op(&b, PVK_OP_CONV2D, "conv_pad", 1, &x, y);
    set_conv(o, 3, 1, 1, 1);
    o->attr.conv.kw = 1;
    o->attr.conv.pad_l = o->attr.conv.pad_r = 0;
    o->weights[0] = w;
    b.model.output = y;
    expect_error(&b, (int64_t[]){1, 1, INT32_MAX, 1}, "op 0 (conv_pad, CONV2D): a [1, 1, 2147483647, 1] input",
                 "extent of 2147483649 x 1");

    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    x = b.model.input;
    y = ACT(&b, "y");
    o = op(&b, PVK_OP_POOL2D, "pool_pad", 1, &x, y);
    set_pool(o, PVK_POOL_MAX, 2, 1);
    o->attr.pool.pad_b = 1;
    b.model.output = y;
    expect_error(&b, (int64_t[]){1, 1, INT32_MAX, 1}, "op 0 (pool_pad, POOL2D): a [1, 1, 2147483647, 1] input",
                 "extent of 2147483650 x 2");
}

/* Two inputs each within the cap, concatenated past it by one element; the same concat one
 * column narrower stays within it. */
static void test_concat_past_the_cap(void **state)
{
    (void)state;
    struct builder b;
    builder_init(&b, (int64_t[]){-1, -1, -1, -1});
    int x = b.model.input, y = ACT(&b, "y");
    struct pvk_op *o = op(&b, PVK_OP_CONCAT, "cat", 2, (int[]){x, x}, y);
    o->attr.axis.axis = 1;
    b.model.output = y;
    expect_error(&b, (int64_t[]){1, 1, 32768, 32768}, "op 0 (cat, CONCAT): output [1, 2, 32768, 32768]",
                 "more than 2147483647 elements");

    struct pvk_shape s[MAX_T];
    char err[256] = "";
    if (pvk_infer_shapes(&b.model, (int64_t[]){1, 1, 32768, 32767}, s, err, sizeof err)) {
        print_error("%s\n", err);
        fail();
    }
    EXPECT_SHAPE(&s[y], 1, 2, 32768, 32767);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_shapes_of_a_mixed_net),
        cmocka_unit_test(test_channel_mismatch),
        cmocka_unit_test(test_bad_bias_and_residual),
        cmocka_unit_test(test_bad_reshape),
        cmocka_unit_test(test_concat_mismatch),
        cmocka_unit_test(test_use_before_definition_and_broadcast),
        cmocka_unit_test(test_recorded_shape_disagreement),
        cmocka_unit_test(test_huge_input),
        cmocka_unit_test(test_broadcast_overflows_int64),
        cmocka_unit_test(test_broadcast_to_empty),
        cmocka_unit_test(test_conv_window_larger_than_input),
        cmocka_unit_test(test_spatial_rules_past_int),
        cmocka_unit_test(test_concat_past_the_cap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
