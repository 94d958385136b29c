/* BatchNorm and constant affine folding, checked numerically: the folded convolution stored in
 * the .pvk file against the unfolded computation in float64. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "convert/convert.h"
#include "convert/fuse.h"
#include "convert/onnx_build.h"
#include "model/model.h"
#include "support/test_env.h"

#define IC 4
#define OC 6
#define HW 7

/* Direct NCHW convolution, stride 1, pad (k-1)/2, in float64; w is [OC][IC/g][k][k]. */
static void conv_ref(const double *x, const double *w, const double *b, int ic, int oc, int k, int groups, double *y)
{
    int icg = ic / groups, ocg = oc / groups, p = (k - 1) / 2;
    for (int o = 0; o < oc; o++)
        for (int i = 0; i < HW; i++)
            for (int j = 0; j < HW; j++) {
                double acc = b ? b[o] : 0.0;
                int g0 = o / ocg;
                for (int c = 0; c < icg; c++)
                    for (int u = 0; u < k; u++)
                        for (int v = 0; v < k; v++) {
                            int ii = i + u - p, jj = j + v - p;
                            if (ii >= 0 && ii < HW && jj >= 0 && jj < HW)
                                acc += w[((o * icg + c) * k + u) * k + v] * x[((g0 * icg + c) * HW + ii) * HW + jj];
                        }
                y[(o * HW + i) * HW + j] = acc;
            }
}

static void random_bn(double *gamma, double *beta, double *mean, double *var, int c)
{
    for (int k = 0; k < c; k++) {
        gamma[k] = test_rand_uniform(0.5f, 2.0f);
        beta[k] = test_rand_uniform(-1.0f, 1.0f);
        mean[k] = test_rand_uniform(-1e3f, 1e3f);
        var[k] = pow(10.0, test_rand_uniform(-2.0f, 8.0f)); /* the det head has variances near 1e8 */
    }
}

static double rel_l2_d(const double *a, const double *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t k = 0; k < n; k++) {
        num += (a[k] - b[k]) * (a[k] - b[k]);
        den += b[k] * b[k];
    }
    return sqrt(num / (den > 1e-300 ? den : 1e-300));
}

/* cv_fold_affine_into_conv with cv_bn_to_affine, weights then rounded to float32 as stored. */
static void test_bn_fold_numeric(void **state)
{
    (void)state;
    for (int groups = 1; groups <= 2; groups++) {
        int icg = IC / groups;
        double w[OC * IC * 9], b[OC], x[IC * HW * HW], y_ref[OC * HW * HW], y_fold[OC * HW * HW];
        double gamma[OC], beta[OC], mean[OC], var[OC], scale[OC], shift[OC], bias[OC];
        for (int k = 0; k < OC * icg * 9; k++)
            w[k] = test_rand_uniform(-1, 1);
        for (int k = 0; k < OC; k++)
            b[k] = test_rand_uniform(-1, 1);
        for (int k = 0; k < IC * HW * HW; k++)
            x[k] = test_rand_uniform(-1, 1);
        random_bn(gamma, beta, mean, var, OC);
        conv_ref(x, w, b, IC, OC, 3, groups, y_ref);
        for (int o = 0; o < OC; o++)
            for (int k = 0; k < HW * HW; k++) {
                double *v = &y_ref[o * HW * HW + k];
                *v = gamma[o] * (*v - mean[o]) / sqrt(var[o] + 1e-5) + beta[o];
            }
        cv_bn_to_affine(gamma, beta, mean, var, 1e-5, OC, scale, shift);
        cv_fold_affine_into_conv(w, b, bias, OC, icg, groups, 9, 0, scale, shift);
        for (int k = 0; k < OC * icg * 9; k++)
            w[k] = (float)w[k];
        for (int k = 0; k < OC; k++)
            bias[k] = (float)bias[k];
        conv_ref(x, w, bias, IC, OC, 3, groups, y_fold);
        double err = rel_l2_d(y_fold, y_ref, OC * HW * HW);
        assert_true(err < 1e-6);
    }
}

static uint8_t *convert(uint8_t *onnx, size_t len, const char *name, size_t *out_len, char *err)
{
    uint8_t *out = NULL;
    struct pvkc_options opt = {PVK_NET_DET, NULL};
    int rc = pvkc_convert_memory(onnx, len, name, &opt, &out, out_len, err, 512);
    free(onnx);
    if (rc)
        print_error("%s\n", err);
    assert_int_equal(rc, 0);
    return out;
}

static void to_f32(const double *src, float *dst, int n)
{
    for (int k = 0; k < n; k++)
        dst[k] = (float)src[k];
}

static void get_weights(const struct pvk_model *m, int32_t id, double *dst, int64_t n)
{
    assert_true(id >= 0);
    assert_int_equal(pvk_tensor_numel(&m->tensors[id]), n);
    const float *p = pvk_tensor_data(m, id);
    assert_non_null(p);
    for (int64_t k = 0; k < n; k++)
        dst[k] = p[k];
}

/* Conv -> BatchNormalization through the whole converter: one CONV2D whose stored weights
 * reproduce conv + BN. */
static void test_bn_fold_through_converter(void **state)
{
    (void)state;
    double w[OC * IC * 9], gamma[OC], beta[OC], mean[OC], var[OC], x[IC * HW * HW];
    float wf[OC * IC * 9], gf[OC], bf[OC], mf[OC], vf[OC];
    for (int k = 0; k < OC * IC * 9; k++)
        w[k] = (float)test_rand_uniform(-1, 1);
    for (int k = 0; k < IC * HW * HW; k++)
        x[k] = test_rand_uniform(-1, 1);
    random_bn(gamma, beta, mean, var, OC);
    to_f32(w, wf, OC * IC * 9);
    to_f32(gamma, gf, OC);
    to_f32(beta, bf, OC);
    to_f32(mean, mf, OC);
    to_f32(var, vf, OC);
    for (int k = 0; k < OC; k++) { /* the reference uses exactly what the file holds */
        gamma[k] = gf[k];
        beta[k] = bf[k];
        mean[k] = mf[k];
        var[k] = vf[k];
    }
    struct onnx_builder b;
    ob_init(&b, 11);
    int64_t xd[] = {-1, IC, -1, -1}, wd[] = {OC, IC, 3, 3}, cd[] = {OC}, yd[] = {-1, OC, -1, -1};
    int64_t pads[] = {1, 1, 1, 1};
    ob_input(&b, "x", 4, xd);
    ob_init_f32(&b, "w", 4, wd, wf);
    ob_init_f32(&b, "gamma", 1, cd, gf);
    ob_init_f32(&b, "beta", 1, cd, bf);
    ob_init_f32(&b, "mean", 1, cd, mf);
    ob_init_f32(&b, "var", 1, cd, vf);
    ob_node(&b, "Conv", "conv", "x,w", "c");
    ob_attr_ints(&b, "pads", 4, pads);
    ob_node(&b, "BatchNormalization", "bn", "c,gamma,beta,mean,var", "y");
    ob_attr_float(&b, "epsilon", 1e-5f);
    ob_output(&b, "y", 4, yd);
    uint8_t *onnx;
    size_t len, out_len;
    char err[512];
    assert_int_equal(ob_finish(&b, &onnx, &len), 0);
    uint8_t *file = convert(onnx, len, "test_det.onnx", &out_len, err);
    struct pvk_model m;
    assert_int_equal(pvk_model_load_memory(file, out_len, &m, err, sizeof err), 0);
    free(file);
    assert_int_equal(m.n_ops, 1);
    const struct pvk_op *op = &m.ops[0];
    assert_int_equal(op->type, PVK_OP_CONV2D);
    assert_int_equal(op->act, PVK_ACT_NONE);
    double fw[OC * IC * 9], fb[OC], y_ref[OC * HW * HW], y_fold[OC * HW * HW];
    get_weights(&m, op->weights[0], fw, OC * IC * 9);
    get_weights(&m, op->weights[1], fb, OC);
    conv_ref(x, w, NULL, IC, OC, 3, 1, y_ref);
    for (int o = 0; o < OC; o++)
        for (int k = 0; k < HW * HW; k++) {
            double *v = &y_ref[o * HW * HW + k];
            *v = gamma[o] * (*v - mean[o]) / sqrt(var[o] + 1e-5) + beta[o];
        }
    conv_ref(x, fw, fb, IC, OC, 3, 1, y_fold);
    assert_true(rel_l2_d(y_fold, y_ref, OC * HW * HW) < 1e-6);
    pvk_model_free(&m);
}

static double hswish(double v)
{
    return v * fmin(fmax(v + 3, 0), 6) / 6;
}

/* PP-LCNetV3's learnable affine blocks: conv -> Mul(s) -> Add(t) -> HardSwish -> Mul(s2) ->
 * Add(t2) -> 1x1 conv. The first pair folds into the first conv, the second into the 1x1 conv's
 * input side (exact without padding). */
static void test_affine_fold(void **state)
{
    (void)state;
    float w1[OC * IC * 9], w2[OC * OC];
    double x[IC * HW * HW];
    for (int k = 0; k < OC * IC * 9; k++)
        w1[k] = test_rand_uniform(-1, 1);
    for (int k = 0; k < OC * OC; k++)
        w2[k] = test_rand_uniform(-1, 1);
    for (int k = 0; k < IC * HW * HW; k++)
        x[k] = test_rand_uniform(-2, 2);
    float s = test_rand_uniform(0.5f, 1.5f), t = test_rand_uniform(-1, 1), s2 = test_rand_uniform(0.5f, 1.5f),
          t2 = test_rand_uniform(-1, 1);
    struct onnx_builder b;
    ob_init(&b, 11);
    int64_t xd[] = {1, IC, HW, HW}, wd[] = {OC, IC, 3, 3}, w2d[] = {OC, OC, 1, 1}, yd[] = {1, OC, HW, HW}, one[] = {1};
    int64_t pads[] = {1, 1, 1, 1};
    ob_input(&b, "x", 4, xd);
    ob_init_f32(&b, "w1", 4, wd, w1);
    ob_init_f32(&b, "w2", 4, w2d, w2);
    ob_init_f32(&b, "s", 1, one, &s);
    ob_init_f32(&b, "t", 1, one, &t);
    ob_init_f32(&b, "s2", 1, one, &s2);
    ob_init_f32(&b, "t2", 1, one, &t2);
    ob_const_scalar(&b, "three", 3.0f);
    ob_const_scalar(&b, "zero", 0.0f);
    ob_const_scalar(&b, "six", 6.0f);
    ob_node(&b, "Conv", "conv1", "x,w1", "c1");
    ob_attr_ints(&b, "pads", 4, pads);
    ob_node(&b, "Mul", "mul_s", "s,c1", "m1");
    ob_node(&b, "Add", "add_t", "m1,t", "a1");
    ob_node(&b, "Add", "hs_add", "a1,three", "h1");
    ob_node(&b, "Clip", "hs_clip", "h1,zero,six", "h2");
    ob_node(&b, "Mul", "hs_mul", "a1,h2", "h3");
    ob_node(&b, "Div", "hs_div", "h3,six", "h4");
    ob_node(&b, "Mul", "mul_s2", "s2,h4", "m2");
    ob_node(&b, "Add", "add_t2", "m2,t2", "a2");
    ob_node(&b, "Conv", "conv2", "a2,w2", "y");
    ob_output(&b, "y", 4, yd);
    uint8_t *onnx;
    size_t len, out_len;
    char err[512];
    assert_int_equal(ob_finish(&b, &onnx, &len), 0);
    uint8_t *file = convert(onnx, len, "affine_det.onnx", &out_len, err);
    struct pvk_model m;
    assert_int_equal(pvk_model_load_memory(file, out_len, &m, err, sizeof err), 0);
    free(file);
    assert_int_equal(m.n_ops, 2);
    assert_int_equal(m.ops[0].type, PVK_OP_CONV2D);
    assert_int_equal(m.ops[0].act, PVK_ACT_HARDSWISH);
    assert_int_equal(m.ops[1].type, PVK_OP_CONV2D);
    assert_int_equal(m.ops[1].inputs[0], m.ops[0].outputs[0]);
    /* reference in float64 from the ONNX parameters */
    double wd1[OC * IC * 9], wd2[OC * OC], c1[OC * HW * HW], y_ref[OC * HW * HW];
    for (int k = 0; k < OC * IC * 9; k++)
        wd1[k] = w1[k];
    for (int k = 0; k < OC * OC; k++)
        wd2[k] = w2[k];
    conv_ref(x, wd1, NULL, IC, OC, 3, 1, c1);
    for (int k = 0; k < OC * HW * HW; k++)
        c1[k] = (double)s2 * hswish((double)s * c1[k] + t) + t2;
    conv_ref(c1, wd2, NULL, OC, OC, 1, 1, y_ref);
    /* the file's two convs */
    double fw1[OC * IC * 9], fb1[OC], fw2[OC * OC], fb2[OC], y[OC * HW * HW];
    get_weights(&m, m.ops[0].weights[0], fw1, OC * IC * 9);
    get_weights(&m, m.ops[0].weights[1], fb1, OC);
    get_weights(&m, m.ops[1].weights[0], fw2, OC * OC);
    get_weights(&m, m.ops[1].weights[1], fb2, OC);
    conv_ref(x, fw1, fb1, IC, OC, 3, 1, c1);
    for (int k = 0; k < OC * HW * HW; k++)
        c1[k] = hswish(c1[k]);
    conv_ref(c1, fw2, fb2, OC, OC, 1, 1, y);
    assert_true(rel_l2_d(y, y_ref, OC * HW * HW) < 1e-6);
    pvk_model_free(&m);
}

/* ConvTranspose -> Add(bias [1,C,1,1]) -> BN -> Relu: one CONV_TRANSPOSE2D with relu; its
 * per-output-channel scaling follows the W[IC][OC/g] layout. */
static void test_conv_transpose_fold(void **state)
{
    (void)state;
    enum { CI = 3, CO = 4, H = 3 };
    float w[CI * CO * 4], bias[CO], g[CO], be[CO], mu[CO], va[CO];
    double x[CI * H * H];
    for (int k = 0; k < CI * CO * 4; k++)
        w[k] = test_rand_uniform(-1, 1);
    for (int k = 0; k < CO; k++) {
        bias[k] = test_rand_uniform(-1, 1);
        g[k] = test_rand_uniform(0.5f, 2);
        be[k] = test_rand_uniform(-1, 1);
        mu[k] = test_rand_uniform(-10, 10);
        va[k] = (float)pow(10.0, test_rand_uniform(0, 8));
    }
    for (int k = 0; k < CI * H * H; k++)
        x[k] = test_rand_uniform(-1, 1);
    struct onnx_builder b;
    ob_init(&b, 11);
    int64_t xd[] = {1, CI, H, H}, wd[] = {CI, CO, 2, 2}, bd[] = {1, CO, 1, 1}, cd[] = {CO},
            yd[] = {1, CO, 2 * H, 2 * H};
    int64_t k2[] = {2, 2};
    ob_input(&b, "x", 4, xd);
    ob_init_f32(&b, "w", 4, wd, w);
    ob_init_f32(&b, "bias", 4, bd, bias);
    ob_init_f32(&b, "g", 1, cd, g);
    ob_init_f32(&b, "be", 1, cd, be);
    ob_init_f32(&b, "mu", 1, cd, mu);
    ob_init_f32(&b, "va", 1, cd, va);
    ob_node(&b, "ConvTranspose", "ct", "x,w", "c");
    ob_attr_ints(&b, "strides", 2, k2);
    ob_node(&b, "Add", "add_bias", "c,bias", "cb");
    ob_node(&b, "BatchNormalization", "bn", "cb,g,be,mu,va", "n");
    ob_node(&b, "Relu", "relu", "n", "y");
    ob_output(&b, "y", 4, yd);
    uint8_t *onnx;
    size_t len, out_len;
    char err[512];
    assert_int_equal(ob_finish(&b, &onnx, &len), 0);
    uint8_t *file = convert(onnx, len, "ct_det.onnx", &out_len, err);
    struct pvk_model m;
    assert_int_equal(pvk_model_load_memory(file, out_len, &m, err, sizeof err), 0);
    free(file);
    assert_int_equal(m.n_ops, 1);
    assert_int_equal(m.ops[0].type, PVK_OP_CONV_TRANSPOSE2D);
    assert_int_equal(m.ops[0].act, PVK_ACT_RELU);
    double fw[CI * CO * 4], fb[CO], y[CO * 4 * H * H], y_ref[CO * 4 * H * H];
    get_weights(&m, m.ops[0].weights[0], fw, CI * CO * 4);
    get_weights(&m, m.ops[0].weights[1], fb, CO);
    /* stride-2 2x2 transposed conv: each input pixel writes a 2x2 block */
    for (int o = 0; o < CO; o++)
        for (int i = 0; i < 2 * H; i++)
            for (int j = 0; j < 2 * H; j++) {
                double acc = 0, acc_f = fb[o];
                for (int c = 0; c < CI; c++) {
                    int widx = ((c * CO + o) * 2 + i % 2) * 2 + j % 2;
                    acc += w[widx] * x[(c * H + i / 2) * H + j / 2];
                    acc_f += fw[widx] * x[(c * H + i / 2) * H + j / 2];
                }
                double r = g[o] * (acc + bias[o] - mu[o]) / sqrt((double)va[o] + 1e-5) + be[o];
                y_ref[(o * 2 * H + i) * 2 * H + j] = r > 0 ? r : 0;
                y[(o * 2 * H + i) * 2 * H + j] = acc_f > 0 ? acc_f : 0;
            }
    assert_true(rel_l2_d(y, y_ref, CO * 4 * H * H) < 1e-6);
    pvk_model_free(&m);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bn_fold_numeric),
        cmocka_unit_test(test_bn_fold_through_converter),
        cmocka_unit_test(test_affine_fold),
        cmocka_unit_test(test_conv_transpose_fold),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
