/* The fused patterns keep the ONNX graph's numbers: small graphs in their exporter spellings
 * (HardSwish, SE with residual, GELU erf/tanh, Swish, LayerNorm, SVTR attention) converted and
 * run by the CPU reference executor, against the ONNX semantics computed here in float64. */
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
#include "nn/cpu/cpu_exec.h"
#include "support/test_env.h"

static void fill(float *p, int n, float lo, float hi)
{
    test_fill_uniform(p, (size_t)n, lo, hi);
}

static void run(struct onnx_builder *b, const char *out, int ndim, const int64_t *dims, const float *x,
                const int64_t nchw[4], const double *want, size_t n)
{
    uint8_t *onnx, *file;
    size_t len, file_len;
    char err[512];
    ob_output(b, out, ndim, dims);
    assert_int_equal(ob_finish(b, &onnx, &len), 0);
    struct pvkc_options opt = {PVK_NET_DET, NULL};
    int rc = pvkc_convert_memory(onnx, len, "numeric.onnx", &opt, &file, &file_len, err, sizeof err);
    free(onnx);
    if (rc)
        fail_msg("%s", err);
    struct pvk_model m;
    rc = pvk_model_load_memory(file, file_len, &m, err, sizeof err);
    free(file);
    assert_int_equal(rc, 0);
    struct pvk_cpu_result res;
    if (pvk_cpu_run(&m, x, nchw, NULL, NULL, &res, err, sizeof err))
        fail_msg("%s", err);
    assert_int_equal(pvk_shape_numel(&res.shape), (int64_t)n);
    float *w = malloc(n * sizeof *w);
    for (size_t k = 0; k < n; k++)
        w[k] = (float)want[k];
    double e = test_rel_l2(res.data, w, n);
    if (!(e < 1e-5))
        fail_msg("rel L2 %g", e);
    free(w);
    pvk_cpu_result_free(&res);
    pvk_model_free(&m);
}

static double hswish(double v)
{
    return v * fmin(fmax(v + 3, 0), 6) / 6;
}
static double sigmoid(double v)
{
    return 1 / (1 + exp(-v));
}
static double gelu_erf(double v)
{
    return 0.5 * v * (1 + erf(v / sqrt(2.0)));
}
static double gelu_tanh(double v)
{
    return 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
}

enum { C = 4, H = 5, W = 6, CR = 2 };

/* conv1x1 -> HardSwish (Add/Clip/Mul/Div) -> SE + residual -> GELU (tanh spelling) */
static void test_conv_se_gelu(void **state)
{
    (void)state;
    float x[C * H * W], w1[C * C], b1[C], wa[CR * C], ba[CR], wb[C * CR], bb[C];
    fill(x, C * H * W, -3, 3);
    fill(w1, C * C, -1, 1);
    fill(b1, C, -1, 1);
    fill(wa, CR * C, -1, 1);
    fill(ba, CR, -1, 1);
    fill(wb, C * CR, -1, 1);
    fill(bb, C, -1, 1);
    struct onnx_builder b;
    int64_t xd[] = {1, C, H, W}, w1d[] = {C, C, 1, 1}, cd[] = {C}, wad[] = {CR, C, 1, 1}, crd[] = {CR},
            wbd[] = {C, CR, 1, 1};
    ob_init(&b, 11);
    ob_input(&b, "x", 4, xd);
    ob_init_f32(&b, "w1", 4, w1d, w1);
    ob_init_f32(&b, "b1", 1, cd, b1);
    ob_init_f32(&b, "wa", 4, wad, wa);
    ob_init_f32(&b, "ba", 1, crd, ba);
    ob_init_f32(&b, "wb", 4, wbd, wb);
    ob_init_f32(&b, "bb", 1, cd, bb);
    ob_const_scalar(&b, "three", 3);
    ob_const_scalar(&b, "zero", 0);
    ob_const_scalar(&b, "six", 6);
    ob_const_scalar(&b, "cube", 3);
    ob_const_scalar(&b, "k", 0.044715f);
    ob_const_scalar(&b, "s", 0.7978845608f);
    ob_const_scalar(&b, "one", 1);
    ob_const_scalar(&b, "half", 0.5f);
    ob_node(&b, "Conv", "conv", "x,w1,b1", "c");
    ob_node(&b, "Add", "hs_a", "c,three", "h1");
    ob_node(&b, "Clip", "hs_c", "h1,zero,six", "h2");
    ob_node(&b, "Mul", "hs_m", "c,h2", "h3");
    ob_node(&b, "Div", "hs_d", "h3,six", "h");
    ob_node(&b, "GlobalAveragePool", "gap", "h", "p");
    ob_node(&b, "Conv", "se1", "p,wa,ba", "s1");
    ob_node(&b, "Relu", "relu", "s1", "r");
    ob_node(&b, "Conv", "se2", "r,wb,bb", "s2");
    ob_node(&b, "HardSigmoid", "hsig", "s2", "g");
    ob_node(&b, "Mul", "scale", "h,g", "sc");
    ob_node(&b, "Add", "res", "h,sc", "y");
    ob_node(&b, "Pow", "pow", "y,cube", "y3");
    ob_node(&b, "Mul", "mk", "y3,k", "y3k");
    ob_node(&b, "Add", "ax", "y,y3k", "a");
    ob_node(&b, "Mul", "ms", "a,s", "as");
    ob_node(&b, "Tanh", "tanh", "as", "t");
    ob_node(&b, "Add", "t1", "t,one", "tp");
    ob_node(&b, "Mul", "ty", "y,tp", "yt");
    ob_node(&b, "Mul", "out", "yt,half", "out");

    double h[C * H * W], want[C * H * W], mean[C], s1[CR], g[C];
    for (int o = 0; o < C; o++)
        for (int k = 0; k < H * W; k++) {
            double acc = b1[o];
            for (int i = 0; i < C; i++)
                acc += (double)w1[o * C + i] * x[i * H * W + k];
            h[o * H * W + k] = hswish(acc);
        }
    for (int o = 0; o < C; o++) {
        mean[o] = 0;
        for (int k = 0; k < H * W; k++)
            mean[o] += h[o * H * W + k] / (H * W);
    }
    for (int r = 0; r < CR; r++) {
        s1[r] = ba[r];
        for (int i = 0; i < C; i++)
            s1[r] += (double)wa[r * C + i] * mean[i];
        s1[r] = fmax(s1[r], 0);
    }
    for (int o = 0; o < C; o++) {
        double z = bb[o];
        for (int r = 0; r < CR; r++)
            z += (double)wb[o * CR + r] * s1[r];
        g[o] = fmax(0, fmin(1, 0.2 * z + 0.5));
    }
    for (int o = 0; o < C; o++)
        for (int k = 0; k < H * W; k++)
            want[o * H * W + k] = gelu_tanh(h[o * H * W + k] * g[o] + h[o * H * W + k]);
    const int64_t nchw[4] = {1, C, H, W};
    run(&b, "out", 4, xd, x, nchw, want, C * H * W);
}

enum { T = 5, E = 8, HEADS = 2, HD = 4 };

/* x [1, T, E] -> LayerNorm -> qkv MatMul+Add -> attention (Slice/Squeeze spelling) -> proj ->
 * residual -> Swish -> GELU (erf spelling). T is dynamic in the ONNX graph. */
static void test_transformer_block(void **state)
{
    (void)state;
    float x[T * E], gm[E], bt[E], wq[E * 3 * E], bq[3 * E], wp[E * E], bp[E];
    fill(x, T * E, -2, 2);
    fill(gm, E, 0.5f, 1.5f);
    fill(bt, E, -0.5f, 0.5f);
    fill(wq, E * 3 * E, -1, 1);
    fill(bq, 3 * E, -0.5f, 0.5f);
    fill(wp, E * E, -1, 1);
    fill(bp, E, -0.5f, 0.5f);
    const float scale = 0.5f, eps = 1e-5f;
    struct onnx_builder b;
    int64_t xd[] = {1, 1, -1, E}, sq1[] = {1}, ed[] = {E}, wqd[] = {E, 3 * E}, bqd[] = {3 * E}, wpd[] = {E, E},
            axes[] = {-1};
    ob_init(&b, 11);
    ob_input(&b, "x4", 4, xd); /* the executor takes 4-D inputs: [1, 1, T, E] -> [1, T, E] */
    ob_init_f32(&b, "gm", 1, ed, gm);
    ob_init_f32(&b, "bt", 1, ed, bt);
    ob_init_f32(&b, "wq", 2, wqd, wq);
    ob_init_f32(&b, "bq", 1, bqd, bq);
    ob_init_f32(&b, "wp", 2, wpd, wp);
    ob_init_f32(&b, "bp", 1, ed, bp);
    ob_const_scalar(&b, "two", 2);
    ob_const_scalar(&b, "eps", eps);
    ob_const_scalar(&b, "sqrt2", 1.41421356f);
    ob_const_scalar(&b, "onef", 1);
    ob_const_scalar(&b, "half", 0.5f);
    ob_node(&b, "Squeeze", "sq1", "x4", "x");
    ob_attr_ints(&b, "axes", 1, sq1);
    ob_node(&b, "ReduceMean", "ln_m", "x", "mu");
    ob_attr_ints(&b, "axes", 1, axes);
    ob_node(&b, "Sub", "ln_s", "x,mu", "d");
    ob_node(&b, "Pow", "ln_p", "d,two", "d2");
    ob_node(&b, "ReduceMean", "ln_v", "d2", "v");
    ob_attr_ints(&b, "axes", 1, axes);
    ob_node(&b, "Add", "ln_e", "v,eps", "ve");
    ob_node(&b, "Sqrt", "ln_q", "ve", "sd");
    ob_node(&b, "Div", "ln_d", "d,sd", "n");
    ob_node(&b, "Mul", "ln_g", "n,gm", "ng");
    ob_node(&b, "Add", "ln_b", "ng,bt", "ln");
    ob_node(&b, "MatMul", "qkv_mm", "ln,wq", "qkv0");
    ob_node(&b, "Add", "qkv_b", "qkv0,bq", "qkv");
    ob_svtr_attention(&b, "att.", "ln", "qkv", "ao", E, HEADS, scale, 0);
    ob_node(&b, "MatMul", "proj", "ao,wp", "pr0");
    ob_node(&b, "Add", "proj_b", "pr0,bp", "pr");
    ob_node(&b, "Add", "res", "x,pr", "rs");
    ob_node(&b, "Sigmoid", "sw_s", "rs", "sg");
    ob_node(&b, "Mul", "sw_m", "rs,sg", "sw");
    ob_node(&b, "Div", "ge_d", "sw,sqrt2", "gd");
    ob_node(&b, "Erf", "ge_e", "gd", "ge");
    ob_node(&b, "Add", "ge_a", "ge,onef", "ga");
    ob_node(&b, "Mul", "ge_m", "sw,ga", "gmx");
    ob_node(&b, "Mul", "ge_h", "gmx,half", "out");

    double ln[T * E], qkv[T * 3 * E], ao[T * E], want[T * E];
    for (int t = 0; t < T; t++) {
        double mu = 0, var = 0;
        for (int e = 0; e < E; e++)
            mu += x[t * E + e] / (double)E;
        for (int e = 0; e < E; e++)
            var += (x[t * E + e] - mu) * (x[t * E + e] - mu) / E;
        for (int e = 0; e < E; e++)
            ln[t * E + e] = (x[t * E + e] - mu) / sqrt(var + (double)eps) * gm[e] + bt[e];
        for (int j = 0; j < 3 * E; j++) {
            double acc = bq[j];
            for (int e = 0; e < E; e++)
                acc += ln[t * E + e] * wq[e * 3 * E + j];
            qkv[t * 3 * E + j] = acc;
        }
    }
    for (int hh = 0; hh < HEADS; hh++)
        for (int t = 0; t < T; t++) {
            double s[T], mx = -INFINITY, sum = 0;
            for (int u = 0; u < T; u++) {
                double dot = 0;
                for (int j = 0; j < HD; j++)
                    dot += (double)scale * qkv[t * 3 * E + hh * HD + j] * qkv[u * 3 * E + E + hh * HD + j];
                s[u] = dot;
                mx = fmax(mx, dot);
            }
            for (int u = 0; u < T; u++)
                sum += (s[u] = exp(s[u] - mx));
            for (int j = 0; j < HD; j++) {
                double acc = 0;
                for (int u = 0; u < T; u++)
                    acc += s[u] / sum * qkv[u * 3 * E + 2 * E + hh * HD + j];
                ao[t * E + hh * HD + j] = acc;
            }
        }
    for (int t = 0; t < T; t++)
        for (int e = 0; e < E; e++) {
            double acc = bp[e];
            for (int i = 0; i < E; i++)
                acc += ao[t * E + i] * wp[i * E + e];
            double r = x[t * E + e] + acc;
            want[t * E + e] = gelu_erf(r * sigmoid(r));
        }
    const int64_t nchw[4] = {1, 1, T, E};
    int64_t od[] = {1, -1, E};
    run(&b, "out", 3, od, x, nchw, want, T * E);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_se_gelu),
        cmocka_unit_test(test_transformer_block),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
