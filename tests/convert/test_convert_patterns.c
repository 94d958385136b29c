/* Every fusion pattern on a small hand-built graph: the op list the converter writes and, where
 * weights move, the numbers. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "convert/convert.h"
#include "convert/onnx_build.h"
#include "model/model.h"
#include "support/test_env.h"

#define C 4

static float conv_w[C * C];

/* x [1, C, 4, 4] -> 1x1 Conv "conv" -> "c". */
static void begin(struct onnx_builder *b, int64_t opset)
{
    int64_t xd[] = {1, C, 4, 4}, wd[] = {C, C, 1, 1};
    for (int k = 0; k < C * C; k++)
        conv_w[k] = test_rand_uniform(-1, 1);
    ob_init(b, opset);
    ob_input(b, "x", 4, xd);
    ob_init_f32(b, "w", 4, wd, conv_w);
    ob_node(b, "Conv", "conv", "x,w", "c");
}

static int finish(struct onnx_builder *b, const char *out, int ndim, const int64_t *dims, struct pvk_model *m,
                  char *err, size_t err_len)
{
    uint8_t *onnx, *file = NULL;
    size_t len, file_len;
    ob_output(b, out, ndim, dims);
    assert_int_equal(ob_finish(b, &onnx, &len), 0);
    struct pvkc_options opt = {PVK_NET_DET, NULL};
    int rc = pvkc_convert_memory(onnx, len, "pattern.onnx", &opt, &file, &file_len, err, err_len);
    free(onnx);
    if (rc)
        return rc;
    rc = pvk_model_load_memory(file, file_len, m, err, err_len);
    free(file);
    assert_int_equal(rc, 0);
    return 0;
}

static void convert_ok(struct onnx_builder *b, const char *out, int ndim, const int64_t *dims, struct pvk_model *m)
{
    char err[512];
    int rc = finish(b, out, ndim, dims, m, err, sizeof err);
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
}

static const int64_t nchw[] = {1, C, 4, 4};

/* The graph collapsed into the conv with activation `act`. */
static void expect_conv_act(struct pvk_model *m, enum pvk_act act)
{
    assert_int_equal(m->n_ops, 1);
    assert_int_equal(m->ops[0].type, PVK_OP_CONV2D);
    assert_int_equal(m->ops[0].act, act);
    assert_int_equal(m->ops[0].outputs[0], m->output);
}

static void test_hardswish_spelled(void **state)
{
    (void)state;
    struct onnx_builder b;
    struct pvk_model m;
    begin(&b, 9);
    ob_const_scalar(&b, "three", 3);
    ob_const_scalar(&b, "six", 6);
    ob_node(&b, "Add", "a", "c,three", "a");
    ob_node(&b, "Clip", "clip", "a", "cl");
    ob_attr_float(&b, "min", 0);
    ob_attr_float(&b, "max", 6);
    ob_node(&b, "Mul", "m", "c,cl", "mm");
    ob_node(&b, "Div", "d", "mm,six", "y");
    convert_ok(&b, "y", 4, nchw, &m);
    expect_conv_act(&m, PVK_ACT_HARDSWISH);
    pvk_model_free(&m);
}

static void test_single_activations(void **state)
{
    (void)state;
    const char *ops[] = {"Relu", "Sigmoid", "HardSigmoid", "Clip6", "ClipAny", "ClipMin"};
    const enum pvk_act acts[] = {PVK_ACT_RELU,  PVK_ACT_SIGMOID, PVK_ACT_HARDSIGMOID,
                                 PVK_ACT_RELU6, PVK_ACT_CLIP,    PVK_ACT_RELU};
    for (int k = 0; k < 6; k++) {
        struct onnx_builder b;
        struct pvk_model m;
        begin(&b, 11);
        if (!strncmp(ops[k], "Clip", 4)) {
            ob_const_scalar(&b, "lo", k == 4 ? -1.0f : 0.0f);
            ob_const_scalar(&b, "hi", k == 4 ? 2.5f : 6.0f);
            ob_node(&b, "Clip", "act", k == 5 ? "c,lo" : "c,lo,hi", "y");
        } else {
            ob_node(&b, ops[k], "act", "c", "y");
            if (k == 2)
                ob_attr_float(&b, "alpha", 0.2f);
        }
        convert_ok(&b, "y", 4, nchw, &m);
        expect_conv_act(&m, acts[k]);
        if (k == 2) {
            assert_true(m.ops[0].act_alpha == 0.2f);
            assert_true(m.ops[0].act_beta == 0.5f);
        }
        if (k == 4) {
            assert_true(m.ops[0].act_alpha == -1.0f);
            assert_true(m.ops[0].act_beta == 2.5f);
        }
        pvk_model_free(&m);
    }
}

static void test_swish(void **state)
{
    (void)state;
    for (int beta_one = 1; beta_one >= 0; beta_one--) {
        struct onnx_builder b;
        struct pvk_model m;
        begin(&b, 11);
        ob_const_scalar(&b, "beta", beta_one ? 1.0f : 2.0f);
        ob_node(&b, "Mul", "pre", "c,beta", "cb");
        ob_node(&b, "Sigmoid", "sig", "cb", "s");
        ob_node(&b, "Mul", "mul", "c,s", "y");
        convert_ok(&b, "y", 4, nchw, &m);
        if (beta_one) {
            expect_conv_act(&m, PVK_ACT_SWISH);
        } else { /* x * sigmoid(2x) is not Swish: kept as separate ops */
            assert_true(m.n_ops > 1);
            for (uint32_t i = 0; i < m.n_ops; i++)
                assert_int_not_equal(m.ops[i].act, PVK_ACT_SWISH);
        }
        pvk_model_free(&m);
    }
}

static void test_gelu(void **state)
{
    (void)state;
    struct onnx_builder b;
    struct pvk_model m;
    begin(&b, 13);
    ob_const_scalar(&b, "sqrt2", 1.4142135f);
    ob_const_scalar(&b, "one", 1);
    ob_const_scalar(&b, "half", 0.5f);
    ob_node(&b, "Div", "div", "c,sqrt2", "d");
    ob_node(&b, "Erf", "erf", "d", "e");
    ob_node(&b, "Add", "add", "e,one", "a");
    ob_node(&b, "Mul", "mx", "c,a", "m");
    ob_node(&b, "Mul", "mh", "m,half", "y");
    convert_ok(&b, "y", 4, nchw, &m);
    expect_conv_act(&m, PVK_ACT_GELU_ERF);
    pvk_model_free(&m);

    begin(&b, 13);
    ob_const_scalar(&b, "three", 3);
    ob_const_scalar(&b, "k", 0.044715f);
    ob_const_scalar(&b, "s", 0.7978845608f);
    ob_const_scalar(&b, "one", 1);
    ob_const_scalar(&b, "half", 0.5f);
    ob_node(&b, "Pow", "pow", "c,three", "p");
    ob_node(&b, "Mul", "mk", "p,k", "pk");
    ob_node(&b, "Add", "ax", "c,pk", "a");
    ob_node(&b, "Mul", "ms", "a,s", "as");
    ob_node(&b, "Tanh", "tanh", "as", "t");
    ob_node(&b, "Add", "a1", "t,one", "t1");
    ob_node(&b, "Mul", "hx", "c,half", "h");
    ob_node(&b, "Mul", "out", "h,t1", "y");
    convert_ok(&b, "y", 4, nchw, &m);
    expect_conv_act(&m, PVK_ACT_GELU_TANH);
    pvk_model_free(&m);
}

/* SE as in MobileNetV3/PP-LCNet; `spelled` squeezes with ReduceMean and writes the hard sigmoid
 * as Mul/Add/Clip(0, 1), which folds into the gate conv. */
static void se_case(int spelled)
{
    struct onnx_builder b;
    struct pvk_model m;
    float w1[2 * C], b1[2], w2[C * 2], b2[C];
    for (int k = 0; k < 2 * C; k++) {
        w1[k] = test_rand_uniform(-1, 1);
        w2[k] = test_rand_uniform(-1, 1);
    }
    for (int k = 0; k < 2; k++)
        b1[k] = test_rand_uniform(-1, 1);
    for (int k = 0; k < C; k++)
        b2[k] = test_rand_uniform(-1, 1);
    int64_t w1d[] = {2, C, 1, 1}, w2d[] = {C, 2, 1, 1}, b1d[] = {2}, b2d[] = {C};
    begin(&b, 11);
    ob_init_f32(&b, "w1", 4, w1d, w1);
    ob_init_f32(&b, "b1", 1, b1d, b1);
    ob_init_f32(&b, "w2", 4, w2d, w2);
    ob_init_f32(&b, "b2", 1, b2d, b2);
    if (spelled) {
        int64_t axes[] = {2, 3};
        ob_node(&b, "ReduceMean", "gap", "c", "p");
        ob_attr_ints(&b, "axes", 2, axes);
    } else {
        ob_node(&b, "GlobalAveragePool", "gap", "c", "p");
    }
    ob_node(&b, "Conv", "se1", "p,w1,b1", "s1");
    ob_node(&b, "Relu", "relu", "s1", "r");
    ob_node(&b, "Conv", "se2", "r,w2,b2", "s2");
    if (spelled) {
        ob_const_scalar(&b, "alpha", 0.2f);
        ob_const_scalar(&b, "beta", 0.5f);
        ob_const_scalar(&b, "zero", 0);
        ob_const_scalar(&b, "one", 1);
        ob_node(&b, "Mul", "hs_mul", "s2,alpha", "hm");
        ob_node(&b, "Add", "hs_add", "hm,beta", "ha");
        ob_node(&b, "Clip", "hs_clip", "ha,zero,one", "gate");
    } else {
        ob_node(&b, "HardSigmoid", "hs", "s2", "gate");
        ob_attr_float(&b, "alpha", 0.2f);
        ob_attr_float(&b, "beta", 0.5f);
    }
    ob_node(&b, "Mul", "scale", "c,gate", "sc");
    ob_node(&b, "Add", "res", "c,sc", "y");
    convert_ok(&b, "y", 4, nchw, &m);
    assert_int_equal(m.n_ops, 2);
    assert_int_equal(m.ops[0].type, PVK_OP_CONV2D);
    const struct pvk_op *se = &m.ops[1];
    assert_int_equal(se->type, PVK_OP_SE);
    assert_int_equal(se->inputs[0], m.ops[0].outputs[0]);
    assert_int_equal(se->attr.se.residual, 1);
    assert_int_equal(se->attr.se.gate_act, PVK_ACT_HARDSIGMOID);
    const struct pvk_tensor *t = &m.tensors[se->weights[0]];
    assert_int_equal(t->ndim, 2);
    assert_int_equal(t->shape[0], 2);
    assert_int_equal(t->shape[1], C);
    assert_memory_equal(pvk_tensor_data(&m, se->weights[0]), w1, sizeof w1);
    assert_memory_equal(pvk_tensor_data(&m, se->weights[1]), b1, sizeof b1);
    if (!spelled) {
        assert_true(se->attr.se.gate_alpha == 0.2f && se->attr.se.gate_beta == 0.5f);
        assert_memory_equal(pvk_tensor_data(&m, se->weights[2]), w2, sizeof w2);
        assert_memory_equal(pvk_tensor_data(&m, se->weights[3]), b2, sizeof b2);
    } else { /* alpha and beta moved into the second conv */
        assert_true(se->attr.se.gate_alpha == 1.0f && se->attr.se.gate_beta == 0.0f);
        const float *fw = pvk_tensor_data(&m, se->weights[2]), *fb = pvk_tensor_data(&m, se->weights[3]);
        for (int k = 0; k < C * 2; k++)
            assert_true(fabs(fw[k] - 0.2 * w2[k]) <= 1e-6 * (1 + fabs(w2[k])));
        for (int k = 0; k < C; k++)
            assert_true(fabs(fb[k] - (0.2 * b2[k] + 0.5)) <= 1e-6 * (1 + fabs(b2[k])));
    }
    pvk_model_free(&m);
}

static void test_se_with_residual(void **state)
{
    (void)state;
    se_case(0);
    se_case(1);
}

static void test_conv_residual(void **state)
{
    (void)state;
    for (int with_act = 0; with_act < 2; with_act++) {
        struct onnx_builder b;
        struct pvk_model m;
        begin(&b, 11);
        ob_node(&b, "Add", "res", with_act ? "x,c" : "c,x", with_act ? "s" : "y");
        if (with_act)
            ob_node(&b, "Relu", "relu", "s", "y");
        convert_ok(&b, "y", 4, nchw, &m);
        expect_conv_act(&m, with_act ? PVK_ACT_RELU : PVK_ACT_NONE);
        assert_int_equal(m.ops[0].n_inputs, 2);
        assert_int_equal(m.ops[0].inputs[1], m.input);
        assert_int_equal(m.ops[0].attr.conv.residual, PVK_RESIDUAL_BEFORE_ACT);
        pvk_model_free(&m);
    }
    /* act before the add: act(conv) + x */
    struct onnx_builder b;
    struct pvk_model m;
    begin(&b, 11);
    ob_node(&b, "Relu", "relu", "c", "r");
    ob_node(&b, "Add", "res", "r,x", "y");
    convert_ok(&b, "y", 4, nchw, &m);
    expect_conv_act(&m, PVK_ACT_RELU);
    assert_int_equal(m.ops[0].attr.conv.residual, PVK_RESIDUAL_AFTER_ACT);
    pvk_model_free(&m);
}

/* x [1, T, 8] (T dynamic) -> LayerNorm spelled out -> MatMul + bias. */
static void test_layernorm_and_matmul(void **state)
{
    (void)state;
    struct onnx_builder b;
    struct pvk_model m;
    float gamma[8], beta[8], w[8 * 3], bias[3];
    for (int k = 0; k < 8; k++) {
        gamma[k] = test_rand_uniform(0.5f, 1.5f);
        beta[k] = test_rand_uniform(-1, 1);
    }
    for (int k = 0; k < 24; k++)
        w[k] = test_rand_uniform(-1, 1);
    for (int k = 0; k < 3; k++)
        bias[k] = test_rand_uniform(-1, 1);
    int64_t xd[] = {1, -1, 8}, cd[] = {8}, wd[] = {8, 3}, bd[] = {3}, yd[] = {1, -1, 3}, axes[] = {-1};
    ob_init(&b, 11);
    ob_input(&b, "x", 3, xd);
    ob_init_f32(&b, "gamma", 1, cd, gamma);
    ob_init_f32(&b, "beta", 1, cd, beta);
    ob_init_f32(&b, "w", 2, wd, w);
    ob_init_f32(&b, "bias", 1, bd, bias);
    ob_const_scalar(&b, "two", 2);
    ob_const_scalar(&b, "eps", 1e-6f);
    ob_node(&b, "ReduceMean", "mean", "x", "mu");
    ob_attr_ints(&b, "axes", 1, axes);
    ob_node(&b, "Sub", "sub", "x,mu", "d");
    ob_node(&b, "Pow", "pow", "d,two", "d2");
    ob_node(&b, "ReduceMean", "var", "d2", "v");
    ob_attr_ints(&b, "axes", 1, axes);
    ob_node(&b, "Add", "addeps", "v,eps", "ve");
    ob_node(&b, "Sqrt", "sqrt", "ve", "sd");
    ob_node(&b, "Div", "div", "d,sd", "n");
    ob_node(&b, "Mul", "mulg", "n,gamma", "ng");
    ob_node(&b, "Add", "addb", "ng,beta", "ln");
    ob_node(&b, "MatMul", "mm", "ln,w", "mmo");
    ob_node(&b, "Add", "mmb", "mmo,bias", "y");
    convert_ok(&b, "y", 3, yd, &m);
    assert_int_equal(m.n_ops, 2);
    assert_int_equal(m.ops[0].type, PVK_OP_LAYERNORM);
    assert_true(fabsf(m.ops[0].attr.norm.eps - 1e-6f) < 1e-12f);
    assert_memory_equal(pvk_tensor_data(&m, m.ops[0].weights[0]), gamma, sizeof gamma);
    assert_memory_equal(pvk_tensor_data(&m, m.ops[0].weights[1]), beta, sizeof beta);
    assert_int_equal(m.ops[1].type, PVK_OP_MATMUL);
    assert_memory_equal(pvk_tensor_data(&m, m.ops[1].weights[0]), w, sizeof w);
    assert_memory_equal(pvk_tensor_data(&m, m.ops[1].weights[1]), bias, sizeof bias);
    assert_int_equal(m.tensors[m.output].shape[1], -1);
    pvk_model_free(&m);
}

/* The SVTR attention spelling with the reshape targets computed from the dynamic T; q/k/v taken
 * with Slice+Squeeze (paddle2onnx) or with one Split (newer exporters). */
static void attention_case(int use_split)
{
    enum { CH = 8, HEADS = 2 };
    struct onnx_builder b;
    struct pvk_model m;
    float w[CH * 3 * CH], bias[3 * CH];
    for (int k = 0; k < CH * 3 * CH; k++)
        w[k] = test_rand_uniform(-1, 1);
    for (int k = 0; k < 3 * CH; k++)
        bias[k] = test_rand_uniform(-1, 1);
    int64_t xd[] = {-1, -1, CH}, wd[] = {CH, 3 * CH}, bd[] = {3 * CH}, yd[] = {-1, -1, CH};
    ob_init(&b, 11);
    ob_input(&b, "x", 3, xd);
    ob_init_f32(&b, "w", 2, wd, w);
    ob_init_f32(&b, "bias", 1, bd, bias);
    ob_node(&b, "MatMul", "qkv_mm", "x,w", "qkv0");
    ob_node(&b, "Add", "qkv_b", "qkv0,bias", "qkv");
    ob_svtr_attention(&b, "att.", "x", "qkv", "y", CH, HEADS, 0.5f, use_split);
    convert_ok(&b, "y", 3, yd, &m);
    assert_int_equal(m.n_ops, 2);
    assert_int_equal(m.ops[0].type, PVK_OP_MATMUL);
    assert_true(m.ops[0].weights[1] >= 0);
    const struct pvk_op *at = &m.ops[1];
    assert_int_equal(at->type, PVK_OP_ATTENTION);
    assert_int_equal(at->attr.attention.heads, HEADS);
    assert_true(at->attr.attention.scale == 0.5f);
    assert_int_equal(at->inputs[0], m.ops[0].outputs[0]);
    assert_int_equal(at->outputs[0], m.output);
    assert_int_equal(m.tensors[m.output].shape[2], CH);
    assert_int_equal(m.tensors[m.output].shape[1], -1);
    pvk_model_free(&m);
}

static void test_attention(void **state)
{
    (void)state;
    attention_case(0);
    attention_case(1);
}

/* PP-OCRv6-style ops: a GELU operator (opset 20), a dilated 7x7 depthwise conv, and a Split
 * whose parts are used separately. */
static void test_v6_ops(void **state)
{
    (void)state;
    struct onnx_builder b;
    struct pvk_model m;
    float dw[C * 49];
    for (int k = 0; k < C * 49; k++)
        dw[k] = test_rand_uniform(-1, 1);
    int64_t dwd[] = {C, 1, 7, 7}, pads[] = {6, 6, 6, 6}, dil[] = {2, 2}, split[] = {1, 3}, ad[] = {1, 1, 4, 4};
    begin(&b, 20);
    ob_init_f32(&b, "dw", 4, dwd, dw);
    ob_node(&b, "Gelu", "gelu", "c", "g");
    ob_node(&b, "Conv", "dwconv", "g,dw", "d");
    ob_attr_int(&b, "group", C);
    ob_attr_ints(&b, "pads", 4, pads);
    ob_attr_ints(&b, "dilations", 2, dil);
    ob_node(&b, "Gelu", "gelu_t", "d", "e");
    ob_attr_string(&b, "approximate", "tanh");
    ob_node(&b, "Split", "split", "e", "a,y");
    ob_attr_int(&b, "axis", 1);
    ob_attr_ints(&b, "split", 2, split);
    ob_node(&b, "Relu", "relu_a", "a", "ra");
    /* y, the split's second part, is read by nobody: no SLICE is written for it */
    convert_ok(&b, "ra", 4, ad, &m);
    assert_int_equal(m.n_ops, 4);
    assert_int_equal(m.ops[0].type, PVK_OP_CONV2D);
    assert_int_equal(m.ops[0].act, PVK_ACT_GELU_ERF);
    assert_int_equal(m.ops[1].type, PVK_OP_CONV2D);
    assert_int_equal(m.ops[1].act, PVK_ACT_GELU_TANH);
    assert_int_equal(m.ops[1].attr.conv.dh, 2);
    assert_int_equal(m.ops[1].attr.conv.kh, 7);
    assert_int_equal(m.ops[1].attr.conv.group, C);
    assert_int_equal(m.ops[2].type, PVK_OP_SLICE);
    assert_int_equal(m.ops[2].attr.slice.axis, 1);
    assert_int_equal(m.ops[2].attr.slice.start, 0);
    assert_int_equal(m.ops[2].attr.slice.end, 1);
    assert_int_equal(m.ops[3].type, PVK_OP_UNARY);
    assert_int_equal(m.ops[3].act, PVK_ACT_RELU);
    const int64_t dims[] = {1, 1, 4, 4};
    for (int d = 0; d < 4; d++)
        assert_int_equal(m.tensors[m.output].shape[d], dims[d]);
    pvk_model_free(&m);
}

static void test_layout_ops(void **state)
{
    (void)state;
    struct onnx_builder b;
    struct pvk_model m;
    int64_t xd[] = {-1, C, 1, -1}, yd[] = {-1, -1, 2 * C};
    int64_t scales_d[] = {4}, minus1 = -1, one[] = {1}, s0 = 0, e2 = 2, ax0 = 0;
    float scales[] = {1, 1, 2, 2};
    ob_init(&b, 11);
    ob_input(&b, "x", 4, xd);
    ob_init_f32(&b, "scales", 1, scales_d, scales);
    ob_init_f32(&b, "roi", 0, NULL, scales);
    ob_init_i64(&b, "m1", 1, one, &minus1);
    ob_init_i64(&b, "s0", 1, one, &s0);
    ob_init_i64(&b, "e2", 1, one, &e2);
    ob_init_i64(&b, "ax0", 1, one, &ax0);
    ob_node(&b, "Resize", "up", "x,roi,scales", "u"); /* [N, C, 2, 2W] */
    ob_attr_string(&b, "mode", "nearest");
    ob_attr_string(&b, "coordinate_transformation_mode", "asymmetric");
    ob_attr_string(&b, "nearest_mode", "floor");
    int64_t k2[] = {2, 1};
    ob_node(&b, "MaxPool", "mp", "u", "mp"); /* [N, C, 1, 2W] */
    ob_attr_ints(&b, "kernel_shape", 2, k2);
    ob_attr_ints(&b, "strides", 2, k2);
    ob_node(&b, "Concat", "cat", "mp,mp", "cat"); /* [N, 2C, 1, 2W] */
    ob_attr_int(&b, "axis", -3);
    ob_node(&b, "Shape", "shape", "cat", "sh");
    ob_node(&b, "Slice", "sl", "sh,s0,e2,ax0", "nc");
    ob_node(&b, "Concat", "tgt", "nc,m1", "target");
    ob_attr_int(&b, "axis", 0);
    ob_node(&b, "Reshape", "flat", "cat,target", "f"); /* [N, 2C, 2W] */
    ob_node(&b, "Transpose", "tr", "f", "t");          /* [N, 2W, 2C] */
    int64_t perm[] = {0, 2, 1};
    ob_attr_ints(&b, "perm", 3, perm);
    ob_node(&b, "Softmax", "sm", "t", "y");
    ob_attr_int(&b, "axis", -1);
    convert_ok(&b, "y", 3, yd, &m);
    const enum pvk_op_type want[] = {PVK_OP_RESIZE,  PVK_OP_POOL2D,    PVK_OP_CONCAT,
                                     PVK_OP_RESHAPE, PVK_OP_TRANSPOSE, PVK_OP_SOFTMAX};
    assert_int_equal(m.n_ops, 6);
    for (int k = 0; k < 6; k++)
        assert_int_equal(m.ops[k].type, want[k]);
    assert_int_equal(m.ops[0].attr.resize.mode, PVK_RESIZE_NEAREST);
    assert_true(m.ops[0].attr.resize.scale_h == 2.0f && m.ops[0].attr.resize.scale_w == 2.0f);
    assert_int_equal(m.ops[1].attr.pool.kind, PVK_POOL_MAX);
    assert_int_equal(m.ops[1].attr.pool.kh, 2);
    assert_int_equal(m.ops[1].attr.pool.sw, 1);
    assert_int_equal(m.ops[2].attr.axis.axis, 1);
    assert_int_equal(m.ops[3].attr.reshape.ndim, 3);
    assert_int_equal(m.ops[3].attr.reshape.shape[0], 0);
    assert_int_equal(m.ops[3].attr.reshape.shape[1], 2 * C);
    assert_int_equal(m.ops[3].attr.reshape.shape[2], -1);
    assert_int_equal(m.ops[4].attr.transpose.perm[1], 2);
    assert_int_equal(m.ops[5].attr.axis.axis, 2);
    assert_int_equal(m.tensors[m.ops[3].outputs[0]].shape[1], 2 * C);
    pvk_model_free(&m);
}

/* BatchNorm where no conv precedes it stays a per-channel AFFINE; bilinear resize, average
 * pooling with its padding rule, Flatten and Gemm (transB) map to their ops. */
static void test_standalone_ops(void **state)
{
    (void)state;
    struct onnx_builder b;
    struct pvk_model m;
    float g[2 * C], be[2 * C], mu[2 * C], va[2 * C], gw[3 * 2 * C], gb[3], sc[] = {1, 1, 2, 2};
    for (int k = 0; k < 2 * C; k++) {
        g[k] = test_rand_uniform(0.5f, 2);
        be[k] = test_rand_uniform(-1, 1);
        mu[k] = test_rand_uniform(-1, 1);
        va[k] = test_rand_uniform(0.5f, 2);
    }
    for (int k = 0; k < 6 * C; k++)
        gw[k] = test_rand_uniform(-1, 1);
    for (int k = 0; k < 3; k++)
        gb[k] = test_rand_uniform(-1, 1);
    int64_t cd[] = {2 * C}, gwd[] = {3, 2 * C}, gbd[] = {3}, sd[] = {4}, k3[] = {3, 3}, p1[] = {1, 1, 1, 1},
            yd[] = {1, 3};
    begin(&b, 11);
    ob_init_f32(&b, "g", 1, cd, g);
    ob_init_f32(&b, "be", 1, cd, be);
    ob_init_f32(&b, "mu", 1, cd, mu);
    ob_init_f32(&b, "va", 1, cd, va);
    ob_init_f32(&b, "gw", 2, gwd, gw);
    ob_init_f32(&b, "gb", 1, gbd, gb);
    ob_init_f32(&b, "scales", 1, sd, sc);
    ob_node(&b, "Concat", "cat", "c,x", "cat"); /* [1, 2C, 4, 4] */
    ob_attr_int(&b, "axis", 1);
    ob_node(&b, "BatchNormalization", "bn", "cat,g,be,mu,va", "n");
    ob_node(&b, "Resize", "up", "n,,scales", "u"); /* [1, 2C, 8, 8] */
    ob_attr_string(&b, "mode", "linear");
    ob_attr_string(&b, "coordinate_transformation_mode", "half_pixel");
    ob_node(&b, "AveragePool", "ap", "u", "p");
    ob_attr_ints(&b, "kernel_shape", 2, k3);
    ob_attr_ints(&b, "strides", 2, k3);
    ob_attr_ints(&b, "pads", 4, p1);
    ob_attr_int(&b, "count_include_pad", 1);
    ob_node(&b, "GlobalAveragePool", "gap", "p", "q");
    ob_node(&b, "Flatten", "flat", "q", "f");
    ob_node(&b, "Gemm", "fc", "f,gw,gb", "y");
    ob_attr_int(&b, "transB", 1);
    convert_ok(&b, "y", 2, yd, &m);
    const enum pvk_op_type want[] = {PVK_OP_CONV2D, PVK_OP_CONCAT, PVK_OP_AFFINE,  PVK_OP_RESIZE,
                                     PVK_OP_POOL2D, PVK_OP_POOL2D, PVK_OP_RESHAPE, PVK_OP_MATMUL};
    assert_int_equal(m.n_ops, 8);
    for (int k = 0; k < 8; k++)
        assert_int_equal(m.ops[k].type, want[k]);
    const float *scale = pvk_tensor_data(&m, m.ops[2].weights[0]), *shift = pvk_tensor_data(&m, m.ops[2].weights[1]);
    for (int k = 0; k < 2 * C; k++) {
        double s = g[k] / sqrt((double)va[k] + 1e-5);
        assert_true(fabs(scale[k] - s) <= 1e-6 * fabs(s));
        assert_true(fabs(shift[k] - (be[k] - mu[k] * s)) <= 1e-6 * (1 + fabs(mu[k] * s)));
    }
    assert_int_equal(m.ops[3].attr.resize.mode, PVK_RESIZE_BILINEAR_HALF_PIXEL);
    assert_int_equal(m.ops[4].attr.pool.kind, PVK_POOL_AVG);
    assert_int_equal(m.ops[4].attr.pool.count_include_pad, 1);
    assert_int_equal(m.ops[4].attr.pool.pad_t, 1);
    assert_int_equal(m.tensors[m.ops[4].outputs[0]].shape[2], 3); /* floor((8 + 2 - 3) / 3) + 1 */
    assert_int_equal(m.ops[5].attr.pool.kind, PVK_POOL_GLOBAL_AVG);
    assert_int_equal(m.ops[6].attr.reshape.shape[1], 2 * C);
    /* Gemm's B^T stored as B[K][N] */
    const float *B = pvk_tensor_data(&m, m.ops[7].weights[0]);
    assert_int_equal(m.tensors[m.ops[7].weights[0]].shape[0], 2 * C);
    for (int k = 0; k < 2 * C; k++)
        for (int n = 0; n < 3; n++)
            assert_true(B[k * 3 + n] == gw[n * 2 * C + k]);
    assert_memory_equal(pvk_tensor_data(&m, m.ops[7].weights[1]), gb, sizeof gb);
    pvk_model_free(&m);
}

static void test_unsupported_names_the_node(void **state)
{
    (void)state;
    struct onnx_builder b;
    struct pvk_model m;
    char err[512];
    begin(&b, 11);
    ob_node(&b, "Tile", "tile_node", "c,c", "y");
    assert_int_equal(finish(&b, "y", 4, nchw, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "pattern.onnx"));
    assert_non_null(strstr(err, "tile_node"));
    assert_non_null(strstr(err, "Tile"));
    /* an op that exists only inside patterns, used on its own */
    begin(&b, 11);
    ob_node(&b, "Erf", "lonely_erf", "c", "y");
    assert_int_equal(finish(&b, "y", 4, nchw, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "lonely_erf"));
    assert_non_null(strstr(err, "Erf"));
    /* a nearest resize with another rounding would be silently wrong: refused */
    begin(&b, 11);
    int64_t sd[] = {4};
    float sc[] = {1, 1, 2, 2};
    ob_init_f32(&b, "scales", 1, sd, sc);
    ob_node(&b, "Resize", "rs_node", "c,,scales", "y");
    ob_attr_string(&b, "mode", "nearest");
    int64_t yd[] = {1, C, 8, 8};
    assert_int_equal(finish(&b, "y", 4, yd, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "rs_node"));
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hardswish_spelled),
        cmocka_unit_test(test_single_activations),
        cmocka_unit_test(test_swish),
        cmocka_unit_test(test_gelu),
        cmocka_unit_test(test_se_with_residual),
        cmocka_unit_test(test_conv_residual),
        cmocka_unit_test(test_layernorm_and_matmul),
        cmocka_unit_test(test_attention),
        cmocka_unit_test(test_v6_ops),
        cmocka_unit_test(test_layout_ops),
        cmocka_unit_test(test_standalone_ops),
        cmocka_unit_test(test_unsupported_names_the_node),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
