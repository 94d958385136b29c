/* The plain C reference ops on small cases: hand-computed values, and, for the indexing-heavy ops
 * (conv, conv transpose, attention), comparisons with a deliberately naive independent version. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nn/cpu/ref_ops.h"
#include "support/test_env.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void expect_near(const float *got, const float *want, size_t n, double tol)
{
    for (size_t i = 0; i < n; i++) {
        if (!(fabs((double)got[i] - (double)want[i]) <= tol)) {
            print_error("element %zu: got %.8g, want %.8g\n", i, (double)got[i], (double)want[i]);
            fail();
        }
    }
}

static struct pvk_conv_params conv_params(int k, int s, int pad, int group)
{
    struct pvk_conv_params p = {k, k, s, s, 1, 1, pad, pad, pad, pad, group, PVK_ACT_NONE, 0, 0, PVK_RESIDUAL_NONE};
    return p;
}

/* ---- conv -------------------------------------------------------------------------------- */

static void test_conv_3x3_by_hand(void **state)
{
    (void)state;
    const float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    float w[9], b = 1, y[9];
    for (int i = 0; i < 9; i++)
        w[i] = 1;
    struct pvk_conv_params p = conv_params(3, 1, 1, 1);
    int oh, ow;
    assert_int_equal(pvk_conv2d_out_hw(3, 3, &p, &oh, &ow), 0);
    assert_int_equal(oh, 3);
    assert_int_equal(ow, 3);
    test_fill_nan(y, 9);
    ref_conv2d(x, 1, 1, 3, 3, w, &b, 1, &p, NULL, y);
    /* neighbourhood sums of 1..9 with zero padding, plus the bias */
    const float want[9] = {13, 22, 17, 28, 46, 34, 25, 40, 29};
    expect_near(y, want, 9, 0);
}

static void test_conv_dilation_by_hand(void **state)
{
    (void)state;
    float x[25], w[9], y[1];
    for (int i = 0; i < 25; i++)
        x[i] = (float)i;
    for (int i = 0; i < 9; i++)
        w[i] = 1;
    struct pvk_conv_params p = conv_params(3, 1, 0, 1);
    p.dh = p.dw = 2;
    int oh, ow;
    assert_int_equal(pvk_conv2d_out_hw(5, 5, &p, &oh, &ow), 0);
    assert_int_equal(oh * ow, 1);
    ref_conv2d(x, 1, 1, 5, 5, w, NULL, 1, &p, NULL, y);
    assert_float_equal(y[0], 0 + 2 + 4 + 10 + 12 + 14 + 20 + 22 + 24, 0);
}

static void test_conv_asymmetric_pads_by_hand(void **state)
{
    (void)state;
    const float x[4] = {1, 2, 3, 4}, w[1] = {1};
    struct pvk_conv_params p = conv_params(1, 1, 0, 1);
    p.pad_t = 1;
    p.pad_r = 2;
    int oh, ow;
    assert_int_equal(pvk_conv2d_out_hw(2, 2, &p, &oh, &ow), 0);
    assert_int_equal(oh, 3);
    assert_int_equal(ow, 4);
    float y[12];
    test_fill_nan(y, 12);
    ref_conv2d(x, 1, 1, 2, 2, w, NULL, 1, &p, NULL, y);
    const float want[12] = {0, 0, 0, 0, 1, 2, 0, 0, 3, 4, 0, 0};
    expect_near(y, want, 12, 0);
}

static void test_conv_depthwise_stride2_by_hand(void **state)
{
    (void)state;
    /* Two channels of 4x4, 3x3 kernels, stride 2, pad 1 -> 2x2 per channel. Channel 0 has an
     * all-ones kernel, channel 1 only the centre tap (so it picks x[2i][2j]). */
    float x[32], w[18] = {0}, y[8];
    for (int i = 0; i < 32; i++)
        x[i] = (float)i;
    for (int i = 0; i < 9; i++)
        w[i] = 1;
    w[9 + 4] = 1;
    struct pvk_conv_params p = conv_params(3, 2, 1, 2);
    ref_conv2d(x, 1, 2, 4, 4, w, NULL, 2, &p, NULL, y);
    /* channel 0 (values r*4+c): window sums around (0,0), (0,2), (2,0), (2,2) */
    const float want[8] = {0 + 1 + 4 + 5,
                           1 + 2 + 3 + 5 + 6 + 7,
                           4 + 5 + 8 + 9 + 12 + 13,
                           5 + 6 + 7 + 9 + 10 + 11 + 13 + 14 + 15,
                           16,
                           18,
                           24,
                           26};
    expect_near(y, want, 8, 0);
}

/* Independent of ref_conv2d's loop structure: one output element at a time, bounds checked per tap. */
static void naive_conv(const float *x, int n, int c, int h, int w, const float *wt, const float *b, int oc,
                       const struct pvk_conv_params *p, int oh, int ow, float *y)
{
    int icg = c / p->group, ocg = oc / p->group;
    for (int bi = 0; bi < n; bi++)
        for (int o = 0; o < oc; o++)
            for (int i = 0; i < oh; i++)
                for (int j = 0; j < ow; j++) {
                    double s = b ? b[o] : 0;
                    for (int ci = 0; ci < icg; ci++)
                        for (int ky = 0; ky < p->kh; ky++)
                            for (int kx = 0; kx < p->kw; kx++) {
                                int iy = i * p->sh - p->pad_t + ky * p->dh, ix = j * p->sw - p->pad_l + kx * p->dw;
                                if (iy < 0 || iy >= h || ix < 0 || ix >= w)
                                    continue;
                                int cin = (o / ocg) * icg + ci;
                                s += (double)x[((bi * c + cin) * h + iy) * w + ix] *
                                     wt[((o * icg + ci) * p->kh + ky) * p->kw + kx];
                            }
                    y[((bi * oc + o) * oh + i) * ow + j] = (float)s;
                }
}

static void test_conv_matches_naive(void **state)
{
    (void)state;
    struct {
        int n, c, h, w, oc, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, g;
    } cases[] = {
        {1, 3, 9, 11, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}, /* full 3x3 */
        {2, 4, 8, 7, 4, 5, 5, 2, 1, 1, 1, 2, 2, 2, 2, 4},  /* depthwise 5x5, stride (2, 1) */
        {1, 6, 10, 9, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2}, /* grouped, stride 2 */
        {1, 2, 9, 9, 3, 3, 2, 1, 2, 2, 3, 0, 1, 2, 0, 1},  /* dilation, asymmetric pads */
        {1, 5, 4, 6, 7, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1},  /* 1x1 */
        {1, 2, 3, 12, 2, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1, 1}, /* rec's 1x3 */
        {1, 3, 7, 7, 3, 3, 3, 3, 3, 1, 1, 0, 0, 0, 0, 3},  /* stride larger than half the kernel */
    };
    for (size_t t = 0; t < ARRAY_LEN(cases); t++) {
        struct pvk_conv_params p = {cases[t].kh, cases[t].kw,  cases[t].sh, cases[t].sw, cases[t].dh,
                                    cases[t].dw, cases[t].pt,  cases[t].pl, cases[t].pb, cases[t].pr,
                                    cases[t].g,  PVK_ACT_NONE, 0,           0,           PVK_RESIDUAL_NONE};
        int n = cases[t].n, c = cases[t].c, h = cases[t].h, w = cases[t].w, oc = cases[t].oc, oh, ow;
        assert_int_equal(pvk_conv2d_out_hw(h, w, &p, &oh, &ow), 0);
        size_t nx = (size_t)n * c * h * w, nw = (size_t)oc * (c / p.group) * p.kh * p.kw, ny = (size_t)n * oc * oh * ow;
        float *x = malloc(nx * 4), *wt = malloc(nw * 4), *b = malloc((size_t)oc * 4);
        float *y = malloc(ny * 4), *want = malloc(ny * 4);
        test_fill_uniform(x, nx, -1, 1);
        test_fill_uniform(wt, nw, -1, 1);
        test_fill_uniform(b, (size_t)oc, -1, 1);
        test_fill_nan(y, ny);
        ref_conv2d(x, n, c, h, w, wt, b, oc, &p, NULL, y);
        naive_conv(x, n, c, h, w, wt, b, oc, &p, oh, ow, want);
        expect_near(y, want, ny, 1e-5);
        free(x), free(wt), free(b), free(y), free(want);
    }
}

static void test_conv_residual_and_act_order(void **state)
{
    (void)state;
    const float x[1] = {-2}, w[1] = {1}, r[1] = {1};
    float y[1];
    struct pvk_conv_params p = conv_params(1, 1, 0, 1);
    p.act = PVK_ACT_RELU;
    p.residual = PVK_RESIDUAL_AFTER_ACT;
    ref_conv2d(x, 1, 1, 1, 1, w, NULL, 1, &p, r, y);
    assert_float_equal(y[0], 1, 0); /* relu(-2) + 1 */
    p.residual = PVK_RESIDUAL_BEFORE_ACT;
    ref_conv2d(x, 1, 1, 1, 1, w, NULL, 1, &p, r, y);
    assert_float_equal(y[0], 0, 0); /* relu(-2 + 1) */
    p.residual = PVK_RESIDUAL_NONE;
    p.act = PVK_ACT_HARDSWISH;
    const float x2[1] = {1};
    ref_conv2d(x2, 1, 1, 1, 1, w, NULL, 1, &p, NULL, y);
    assert_float_equal(y[0], 4.0f / 6.0f, 1e-7);
}

static void test_conv_out_hw_rejects_empty(void **state)
{
    (void)state;
    struct pvk_conv_params p = conv_params(5, 1, 0, 1);
    int oh, ow;
    assert_int_equal(pvk_conv2d_out_hw(4, 8, &p, &oh, &ow), -1);
    p.sh = 0;
    assert_int_equal(pvk_conv2d_out_hw(8, 8, &p, &oh, &ow), -1);
}

/* ---- conv transpose ------------------------------------------------------------------------ */

static void test_conv_transpose_2x2_s2_by_hand(void **state)
{
    (void)state;
    const float x[4] = {1, 2, 3, 4}, w[4] = {1, 2, 3, 4};
    const float b = 0.5f;
    struct pvk_conv_params p = conv_params(2, 2, 0, 1);
    int oh, ow;
    assert_int_equal(pvk_conv_transpose2d_out_hw(2, 2, &p, &oh, &ow), 0);
    assert_int_equal(oh, 4);
    assert_int_equal(ow, 4);
    float y[16];
    test_fill_nan(y, 16);
    ref_conv_transpose2d(x, 1, 1, 2, 2, w, &b, 1, &p, y);
    /* each input pixel stamps x * w into its own 2x2 block */
    const float want[16] = {1, 2, 2, 4, 3, 4, 6, 8, 3, 6, 4, 8, 9, 12, 12, 16};
    for (int i = 0; i < 16; i++)
        assert_float_equal(y[i], want[i] + 0.5f, 0);
}

/* Conv transpose as the gradient-free definition: y[o][oy][ox] = sum over (ci, iy, ix, ky, kx) with
 * oy = iy s - pad + ky d. Loops over outputs and solves for the input (independent of the scatter). */
static void naive_conv_transpose(const float *x, int c, int h, int w, const float *wt, int oc,
                                 const struct pvk_conv_params *p, int oh, int ow, float *y)
{
    int icg = c / p->group, ocg = oc / p->group;
    for (int o = 0; o < oc; o++)
        for (int i = 0; i < oh; i++)
            for (int j = 0; j < ow; j++) {
                double s = 0;
                int g = o / ocg;
                for (int ci = g * icg; ci < (g + 1) * icg; ci++)
                    for (int ky = 0; ky < p->kh; ky++)
                        for (int kx = 0; kx < p->kw; kx++) {
                            int ny = i + p->pad_t - ky * p->dh, nx = j + p->pad_l - kx * p->dw;
                            if (ny < 0 || nx < 0 || ny % p->sh || nx % p->sw)
                                continue;
                            int iy = ny / p->sh, ix = nx / p->sw;
                            if (iy >= h || ix >= w)
                                continue;
                            s += (double)x[(ci * h + iy) * w + ix] *
                                 wt[((ci * ocg + (o - g * ocg)) * p->kh + ky) * p->kw + kx];
                        }
                y[(o * oh + i) * ow + j] = (float)s;
            }
}

static void test_conv_transpose_matches_naive(void **state)
{
    (void)state;
    struct pvk_conv_params cases[] = {
        {2, 2, 2, 2, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, PVK_RESIDUAL_NONE},
        {3, 3, 2, 2, 1, 1, 1, 1, 1, 1, 2, PVK_ACT_NONE, 0, 0, PVK_RESIDUAL_NONE},
        {4, 3, 3, 1, 1, 2, 1, 0, 2, 1, 1, PVK_ACT_NONE, 0, 0, PVK_RESIDUAL_NONE},
    };
    for (size_t t = 0; t < ARRAY_LEN(cases); t++) {
        const struct pvk_conv_params *p = &cases[t];
        int c = 4, h = 5, w = 6, oc = 6, oh, ow;
        assert_int_equal(pvk_conv_transpose2d_out_hw(h, w, p, &oh, &ow), 0);
        size_t nx = (size_t)c * h * w, nw = (size_t)c * (oc / p->group) * p->kh * p->kw, ny = (size_t)oc * oh * ow;
        float *x = malloc(nx * 4), *wt = malloc(nw * 4), *y = malloc(ny * 4), *want = malloc(ny * 4);
        test_fill_uniform(x, nx, -1, 1);
        test_fill_uniform(wt, nw, -1, 1);
        ref_conv_transpose2d(x, 1, c, h, w, wt, NULL, oc, p, y);
        naive_conv_transpose(x, c, h, w, wt, oc, p, oh, ow, want);
        expect_near(y, want, ny, 1e-5);
        free(x), free(wt), free(y), free(want);
    }
}

static int rand_int(int lo, int hi)
{
    return lo + (int)(test_rand_u32() % (uint32_t)(hi - lo + 1));
}

/* Random configurations (seeded, printed): kernel, stride, dilation, pads on each side, groups. */
static void test_conv_and_transpose_random_configs(void **state)
{
    (void)state;
    for (int t = 0; t < 60; t++) {
        int g = rand_int(1, 3);
        struct pvk_conv_params p = {rand_int(1, 5),
                                    rand_int(1, 5),
                                    rand_int(1, 3),
                                    rand_int(1, 3),
                                    rand_int(1, 2),
                                    rand_int(1, 2),
                                    rand_int(0, 2),
                                    rand_int(0, 2),
                                    rand_int(0, 2),
                                    rand_int(0, 2),
                                    g,
                                    PVK_ACT_NONE,
                                    0,
                                    0,
                                    PVK_RESIDUAL_NONE};
        int c = g * rand_int(1, 3), oc = g * rand_int(1, 3), h = rand_int(1, 12), w = rand_int(1, 12), oh, ow;
        int transpose = t % 2;
        if (transpose ? pvk_conv_transpose2d_out_hw(h, w, &p, &oh, &ow) : pvk_conv2d_out_hw(h, w, &p, &oh, &ow))
            continue;
        size_t nx = (size_t)c * h * w, nw = (size_t)oc * (c / g) * p.kh * p.kw, ny = (size_t)oc * oh * ow;
        float *x = malloc(nx * 4), *wt = malloc(nw * 4), *y = malloc(ny * 4), *want = malloc(ny * 4);
        test_fill_uniform(x, nx, -1, 1);
        test_fill_uniform(wt, nw, -1, 1);
        test_fill_nan(y, ny);
        if (transpose) {
            ref_conv_transpose2d(x, 1, c, h, w, wt, NULL, oc, &p, y);
            naive_conv_transpose(x, c, h, w, wt, oc, &p, oh, ow, want);
        } else {
            ref_conv2d(x, 1, c, h, w, wt, NULL, oc, &p, NULL, y);
            naive_conv(x, 1, c, h, w, wt, NULL, oc, &p, oh, ow, want);
        }
        expect_near(y, want, ny, 1e-5);
        free(x), free(wt), free(y), free(want);
    }
}

/* ---- pooling ------------------------------------------------------------------------------- */

static void test_pool_max_2x2(void **state)
{
    (void)state;
    float x[16], y[4];
    for (int i = 0; i < 16; i++)
        x[i] = (float)((i * 7) % 16) - 8; /* a permutation of -8..7 */
    struct pvk_pool_params p = {PVK_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0};
    int oh, ow;
    assert_int_equal(pvk_pool2d_out_hw(4, 4, &p, &oh, &ow), 0);
    assert_int_equal(oh * 10 + ow, 22);
    ref_pool2d(x, 1, 1, 4, 4, &p, y);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            float m = -100;
            for (int a = 0; a < 2; a++)
                for (int b = 0; b < 2; b++)
                    m = fmaxf(m, x[(2 * i + a) * 4 + 2 * j + b]);
            assert_float_equal(y[i * 2 + j], m, 0);
        }
}

static void test_pool_max_ignores_padding(void **state)
{
    (void)state;
    const float x[4] = {-5, -6, -7, -8};
    float y[9];
    struct pvk_pool_params p = {PVK_POOL_MAX, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0};
    ref_pool2d(x, 1, 1, 2, 2, &p, y);
    assert_float_equal(y[0], -5, 0); /* a zero pad would win otherwise */
    assert_float_equal(y[8], -8, 0);
}

static void test_pool_avg_count_include_pad(void **state)
{
    (void)state;
    const float x[4] = {1, 2, 3, 4};
    float y[9];
    struct pvk_pool_params p = {PVK_POOL_AVG, 2, 2, 1, 1, 1, 1, 1, 1, 0, 0};
    int oh, ow;
    assert_int_equal(pvk_pool2d_out_hw(2, 2, &p, &oh, &ow), 0);
    assert_int_equal(oh * 10 + ow, 33);
    ref_pool2d(x, 1, 1, 2, 2, &p, y);
    const float excl[9] = {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4};
    expect_near(y, excl, 9, 1e-7);
    p.count_include_pad = 1;
    ref_pool2d(x, 1, 1, 2, 2, &p, y);
    const float incl[9] = {0.25f, 0.75f, 0.5f, 1, 2.5f, 1.5f, 0.75f, 1.75f, 1};
    expect_near(y, incl, 9, 1e-7);
}

static void test_pool_avg_rec_3x2_and_global(void **state)
{
    (void)state;
    float x[2 * 6 * 4], y[2 * 2 * 2];
    for (int i = 0; i < 48; i++)
        x[i] = (float)i;
    struct pvk_pool_params p = {PVK_POOL_AVG, 3, 2, 3, 2, 0, 0, 0, 0, 0, 0};
    int oh, ow;
    assert_int_equal(pvk_pool2d_out_hw(6, 4, &p, &oh, &ow), 0);
    assert_int_equal(oh * 10 + ow, 22);
    ref_pool2d(x, 1, 2, 6, 4, &p, y);
    /* window (rows 0-2, cols 0-1) of channel 0: 0 1 4 5 8 9 */
    assert_float_equal(y[0], 27.0f / 6, 1e-6);
    /* channel 1, window (rows 3-5, cols 2-3): 24 + 14 15 18 19 22 23 */
    assert_float_equal(y[7], (6 * 24 + 14 + 15 + 18 + 19 + 22 + 23) / 6.0f, 1e-5);
    struct pvk_pool_params g = {PVK_POOL_GLOBAL_AVG, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    assert_int_equal(pvk_pool2d_out_hw(6, 4, &g, &oh, &ow), 0);
    assert_int_equal(oh * ow, 1);
    ref_pool2d(x, 1, 2, 6, 4, &g, y);
    assert_float_equal(y[0], 11.5f, 1e-6);
    assert_float_equal(y[1], 35.5f, 1e-6);
}

static void test_pool_ceil_mode(void **state)
{
    (void)state;
    struct pvk_pool_params p = {PVK_POOL_MAX, 2, 2, 2, 2, 0, 0, 0, 0, 0, 0};
    int oh, ow;
    assert_int_equal(pvk_pool2d_out_hw(5, 4, &p, &oh, &ow), 0);
    assert_int_equal(oh * 10 + ow, 22);
    p.ceil_mode = 1;
    assert_int_equal(pvk_pool2d_out_hw(5, 4, &p, &oh, &ow), 0);
    assert_int_equal(oh * 10 + ow, 32);
    float x[20], y[6];
    for (int i = 0; i < 20; i++)
        x[i] = (float)i;
    ref_pool2d(x, 1, 1, 5, 4, &p, y);
    assert_float_equal(y[4], 17, 0); /* the partial last row of windows */
    assert_float_equal(y[5], 19, 0);
}

/* ---- resize -------------------------------------------------------------------------------- */

static void test_resize_nearest(void **state)
{
    (void)state;
    const float x[6] = {1, 2, 3, 4, 5, 6}; /* 2x3 */
    float y[4 * 6];
    int oh, ow;
    assert_int_equal(pvk_resize_out_hw(2, 3, 2, 2, &oh, &ow), 0);
    assert_int_equal(oh * 10 + ow, 46);
    ref_resize(x, 1, 1, 2, 3, PVK_RESIZE_NEAREST, 2, 2, oh, ow, y);
    const float want[24] = {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 4, 4, 5, 5, 6, 6};
    expect_near(y, want, 24, 0);
    float y8[16 * 24];
    ref_resize(x, 1, 1, 2, 3, PVK_RESIZE_NEAREST, 8, 8, 16, 24, y8);
    assert_float_equal(y8[7 * 24 + 7], 1, 0);
    assert_float_equal(y8[8 * 24 + 16], 6, 0);
}

static void test_resize_bilinear(void **state)
{
    (void)state;
    const float x[2] = {0, 1}; /* 1x2 */
    float y[4];
    ref_resize(x, 1, 1, 1, 2, PVK_RESIZE_BILINEAR_HALF_PIXEL, 1, 2, 1, 4, y);
    const float half[4] = {0, 0.25f, 0.75f, 1};
    expect_near(y, half, 4, 1e-7);
    ref_resize(x, 1, 1, 1, 2, PVK_RESIZE_BILINEAR_ALIGN_CORNERS, 1, 1.5f, 1, 3, y);
    const float corners[3] = {0, 0.5f, 1};
    expect_near(y, corners, 3, 1e-7);
    const float sq[4] = {0, 1, 2, 3};
    float y2[9];
    ref_resize(sq, 1, 1, 2, 2, PVK_RESIZE_BILINEAR_ALIGN_CORNERS, 1.5f, 1.5f, 3, 3, y2);
    assert_float_equal(y2[4], 1.5f, 1e-7); /* the centre is the mean of the four corners */
}

/* ---- layout -------------------------------------------------------------------------------- */

static void test_concat_axes(void **state)
{
    (void)state;
    const float a[4] = {1, 2, 3, 4}, b[2] = {5, 6};
    const float *xs[2] = {a, b};
    struct pvk_shape in[2] = {{2, {2, 2}}, {2, {2, 1}}}, out;
    assert_int_equal(pvk_concat_out_shape(2, in, 1, &out), 0);
    assert_int_equal(out.d[1], 3);
    float y[6];
    ref_concat(2, xs, in, 1, y);
    const float want1[6] = {1, 2, 5, 3, 4, 6};
    expect_near(y, want1, 6, 0);
    assert_int_equal(pvk_concat_out_shape(2, in, 0, &out), -1); /* dims differ off the axis */
    struct pvk_shape in0[2] = {{2, {2, 2}}, {2, {1, 2}}};
    assert_int_equal(pvk_concat_out_shape(2, in0, 0, &out), 0);
    ref_concat(2, xs, in0, 0, y);
    const float want0[6] = {1, 2, 3, 4, 5, 6};
    expect_near(y, want0, 6, 0);
}

static void test_transpose_2d_and_6d(void **state)
{
    (void)state;
    const float x[6] = {1, 2, 3, 4, 5, 6};
    struct pvk_shape s = {2, {2, 3}}, o;
    const int32_t p2[2] = {1, 0};
    float y[6];
    assert_int_equal(pvk_transpose_out_shape(&s, p2, &o), 0);
    ref_transpose(x, &s, p2, y);
    const float want[6] = {1, 4, 2, 5, 3, 6};
    expect_near(y, want, 6, 0);

    struct pvk_shape s6 = {6, {2, 3, 1, 4, 2, 3}};
    const int32_t p6[6] = {3, 0, 5, 2, 4, 1};
    size_t n = 2 * 3 * 1 * 4 * 2 * 3;
    float *x6 = malloc(n * 4), *y6 = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        x6[i] = (float)i;
    assert_int_equal(pvk_transpose_out_shape(&s6, p6, &o), 0);
    ref_transpose(x6, &s6, p6, y6);
    size_t k = 0;
    int64_t idx[6];
    for (idx[0] = 0; idx[0] < o.d[0]; idx[0]++)
        for (idx[1] = 0; idx[1] < o.d[1]; idx[1]++)
            for (idx[2] = 0; idx[2] < o.d[2]; idx[2]++)
                for (idx[3] = 0; idx[3] < o.d[3]; idx[3]++)
                    for (idx[4] = 0; idx[4] < o.d[4]; idx[4]++)
                        for (idx[5] = 0; idx[5] < o.d[5]; idx[5]++, k++) {
                            int64_t src[6], off = 0;
                            for (int a = 0; a < 6; a++)
                                src[p6[a]] = idx[a];
                            for (int a = 0; a < 6; a++)
                                off = off * s6.d[a] + src[a];
                            assert_float_equal(y6[k], x6[off], 0);
                        }
    const int32_t bad[2] = {0, 0};
    assert_int_equal(pvk_transpose_out_shape(&s, bad, &o), -1);
    free(x6), free(y6);
}

static void test_reshape_rules(void **state)
{
    (void)state;
    struct pvk_shape s = {4, {2, 3, 4, 5}}, o;
    const int32_t spec[3] = {0, -1, 5};
    assert_int_equal(pvk_reshape_out_shape(&s, 3, spec, &o), 0);
    assert_int_equal(o.ndim, 3);
    assert_int_equal(o.d[0], 2);
    assert_int_equal(o.d[1], 12);
    const int32_t bad[2] = {7, -1};
    assert_int_equal(pvk_reshape_out_shape(&s, 2, bad, &o), -1);
    const int32_t two_infer[2] = {-1, -1};
    assert_int_equal(pvk_reshape_out_shape(&s, 2, two_infer, &o), -1);
    const int32_t wrong_total[2] = {2, 3};
    assert_int_equal(pvk_reshape_out_shape(&s, 2, wrong_total, &o), -1);
}

static void test_slice(void **state)
{
    (void)state;
    float x[24];
    for (int i = 0; i < 24; i++)
        x[i] = (float)i;
    struct pvk_shape s = {3, {2, 6, 2}}, o;
    int64_t first;
    assert_int_equal(pvk_slice_out_shape(&s, 1, -5, INT32_MAX, 2, &o, &first), 0);
    assert_int_equal(first, 1);
    assert_int_equal(o.d[1], 3);
    float y[12];
    ref_slice(x, &s, 1, first, 2, &o, y);
    const float want[12] = {2, 3, 6, 7, 10, 11, 14, 15, 18, 19, 22, 23};
    expect_near(y, want, 12, 0);
    assert_int_equal(pvk_slice_out_shape(&s, 0, 1, 2, 1, &o, &first), 0);
    assert_int_equal(o.d[0], 1);
    assert_int_equal(pvk_slice_out_shape(&s, 1, 4, 2, 1, &o, &first), -1);
}

/* ---- elementwise --------------------------------------------------------------------------- */

static void test_binary_broadcasting(void **state)
{
    (void)state;
    float a[6], b[4], y[24];
    for (int i = 0; i < 6; i++)
        a[i] = (float)(10 * i);
    for (int i = 0; i < 4; i++)
        b[i] = (float)(i + 1);
    struct pvk_shape as = {3, {2, 3, 1}}, bs = {2, {1, 4}}, o;
    assert_int_equal(pvk_broadcast_shape(&as, &bs, &o), 0);
    assert_int_equal(o.ndim, 3);
    assert_int_equal(o.d[0] * 100 + o.d[1] * 10 + o.d[2], 234);
    ref_binary(PVK_BIN_SUB, a, &as, b, &bs, &o, y);
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 4; k++)
            assert_float_equal(y[i * 4 + k], a[i] - b[k], 0);
    ref_binary(PVK_BIN_DIV, b, &bs, a + 1, &(struct pvk_shape){1, {1}}, &bs, y);
    assert_float_equal(y[3], 0.4f, 1e-7);
    struct pvk_shape cs = {4, {1, 3, 1, 1}}, ds = {4, {2, 3, 4, 5}};
    assert_int_equal(pvk_broadcast_shape(&ds, &cs, &o), 0);
    assert_true(o.d[0] * o.d[1] * o.d[2] * o.d[3] == 120);
    struct pvk_shape es = {2, {3, 2}};
    assert_int_equal(pvk_broadcast_shape(&as, &es, &o), 0);
    struct pvk_shape fs = {1, {5}};
    assert_int_equal(pvk_broadcast_shape(&ds, &fs, &o), 0);
    struct pvk_shape gs = {1, {4}};
    assert_int_equal(pvk_broadcast_shape(&ds, &gs, &o), -1);
}

static void test_affine_and_se(void **state)
{
    (void)state;
    const float x[8] = {1, 2, 3, 4, -1, -2, -3, -4}; /* [1][2][2][2] */
    const float scale[2] = {2, 3}, shift[2] = {1, -1};
    float y[8];
    ref_affine(x, 1, 2, 4, scale, shift, y);
    const float want[8] = {3, 5, 7, 9, -4, -7, -10, -13};
    expect_near(y, want, 8, 0);

    /* means 2.5 and -2.5; one hidden unit h = relu(s0 - s1) = 5; gates hardsigmoid(0.2 [1, -1] h + 0.5) */
    const float w1[2] = {1, -1}, w2[2] = {1, -1};
    assert_int_equal(ref_se(x, 1, 2, 2, 2, 1, w1, NULL, w2, NULL, PVK_ACT_HARDSIGMOID, 0.2f, 0.5f, 0, y), 0);
    const float gated[8] = {1, 2, 3, 4, -0.f, -0.f, -0.f, -0.f};
    expect_near(y, gated, 8, 1e-7);
    const float b2[2] = {-5, 0};
    assert_int_equal(ref_se(x, 1, 2, 2, 2, 1, w1, NULL, w2, b2, PVK_ACT_HARDSIGMOID, 0.2f, 0.5f, 1, y), 0);
    /* gate 0 = hardsigmoid(0) = 0.5, gate 1 = 0; residual adds x */
    const float res[8] = {1.5f, 3, 4.5f, 6, -1, -2, -3, -4};
    expect_near(y, res, 8, 1e-6);
}

static void test_activations(void **state)
{
    (void)state;
    assert_float_equal(ref_act_scalar(PVK_ACT_RELU6, 0, 0, 7), 6, 0);
    assert_float_equal(ref_act_scalar(PVK_ACT_CLIP, -1, 2, -3), -1, 0);
    assert_float_equal(ref_act_scalar(PVK_ACT_HARDSWISH, 0, 0, -4), 0, 0);
    assert_float_equal(ref_act_scalar(PVK_ACT_HARDSWISH, 0, 0, 4), 4, 0);
    assert_float_equal(ref_act_scalar(PVK_ACT_HARDSIGMOID, 1.0f / 6, 0.5f, 1.5f), 0.75f, 1e-7);
    assert_float_equal(ref_act_scalar(PVK_ACT_SIGMOID, 0, 0, 0), 0.5f, 0);
    assert_float_equal(ref_act_scalar(PVK_ACT_SWISH, 0, 0, 2), 2 / (1 + exp(-2)), 1e-6);
    assert_float_equal(ref_act_scalar(PVK_ACT_GELU_ERF, 0, 0, 1), 0.8413447f, 1e-6);
    assert_float_equal(ref_act_scalar(PVK_ACT_GELU_TANH, 0, 0, 1), 0.8411920f, 1e-6);
    float v[3] = {-1, 0.5f, 9};
    ref_act(PVK_ACT_RELU6, 0, 0, v, 3);
    assert_float_equal(v[0] + v[1] + v[2], 6.5f, 0);
}

/* ---- matrix ops ---------------------------------------------------------------------------- */

static void test_matmul(void **state)
{
    (void)state;
    const float a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, bias[2] = {1, -1};
    struct pvk_shape s = {2, {2, 2}}, o;
    float y[4];
    assert_int_equal(pvk_matmul_out_shape(&s, &s, 0, &o), 0);
    ref_matmul(a, &s, b, &s, 0, bias, &o, y);
    const float want[4] = {20, 21, 44, 49};
    expect_near(y, want, 4, 0);
    ref_matmul(a, &s, b, &s, 1, NULL, &o, y); /* b^T = [[5, 7], [6, 8]] */
    const float want_t[4] = {17, 23, 39, 53};
    expect_near(y, want_t, 4, 0);

    /* batched with broadcasting: a [2, 1, 2, 3] times b [3, 3, 2] -> [2, 3, 2, 2] */
    struct pvk_shape as = {4, {2, 1, 2, 3}}, bs = {3, {3, 3, 2}};
    float A[12], B[18], Y[24];
    test_fill_uniform(A, 12, -1, 1);
    test_fill_uniform(B, 18, -1, 1);
    assert_int_equal(pvk_matmul_out_shape(&as, &bs, 0, &o), 0);
    assert_int_equal(o.ndim, 4);
    assert_int_equal(o.d[1], 3);
    ref_matmul(A, &as, B, &bs, 0, NULL, &o, Y);
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int m = 0; m < 2; m++)
                for (int n = 0; n < 2; n++) {
                    double acc = 0;
                    for (int k = 0; k < 3; k++)
                        acc += (double)A[i * 6 + m * 3 + k] * B[j * 6 + k * 2 + n];
                    assert_float_equal(Y[((i * 3 + j) * 2 + m) * 2 + n], acc, 1e-6);
                }
    struct pvk_shape bad = {2, {4, 2}};
    assert_int_equal(pvk_matmul_out_shape(&as, &bad, 0, &o), -1);
}

static void test_layernorm(void **state)
{
    (void)state;
    enum { ROWS = 5, C = 64 };
    float x[ROWS * C], y[ROWS * C], g[C], b[C], y2[ROWS * C];
    test_fill_uniform(x, ROWS * C, -3, 5);
    ref_layernorm(x, ROWS, C, NULL, NULL, 1e-6f, y);
    for (int r = 0; r < ROWS; r++) {
        double m = 0, v = 0;
        for (int i = 0; i < C; i++)
            m += y[r * C + i];
        m /= C;
        for (int i = 0; i < C; i++)
            v += (y[r * C + i] - m) * (y[r * C + i] - m);
        v /= C;
        assert_float_equal(m, 0, 1e-6);
        assert_float_equal(v, 1, 1e-4);
    }
    test_fill_uniform(g, C, 0.5f, 2);
    test_fill_uniform(b, C, -1, 1);
    ref_layernorm(x, ROWS, C, g, b, 1e-6f, y2);
    for (int i = 0; i < ROWS * C; i++)
        assert_float_equal(y2[i], y[i] * g[i % C] + b[i % C], 1e-5);
}

static void test_softmax(void **state)
{
    (void)state;
    const float x[2] = {0, (float)M_LN2};
    float y[2];
    ref_softmax(x, 1, 2, 1, y);
    assert_float_equal(y[0], 1.0f / 3, 1e-7);
    assert_float_equal(y[1], 2.0f / 3, 1e-7);
    /* axis 1 of [2, 3, 4]: sums over the middle axis are 1, and order is kept */
    float a[24], b[24];
    test_fill_uniform(a, 24, -20, 20);
    ref_softmax(a, 2, 3, 4, b);
    for (int o = 0; o < 2; o++)
        for (int i = 0; i < 4; i++) {
            double s = 0;
            for (int j = 0; j < 3; j++) {
                s += b[(o * 3 + j) * 4 + i];
                for (int k = 0; k < 3; k++)
                    if (a[(o * 3 + j) * 4 + i] > a[(o * 3 + k) * 4 + i])
                        assert_true(b[(o * 3 + j) * 4 + i] >= b[(o * 3 + k) * 4 + i]);
            }
            assert_float_equal(s, 1, 1e-6);
        }
    const float big[3] = {1000, 1000, -1000};
    float yb[3];
    ref_softmax(big, 1, 3, 1, yb);
    assert_float_equal(yb[0], 0.5f, 1e-7);
    assert_float_equal(yb[2], 0, 0);
}

static void test_attention_matches_composition(void **state)
{
    (void)state;
    enum { N = 2, T = 5, HEADS = 2, DH = 3, C = HEADS * DH };
    const float scale = 0.37f;
    float qkv[N * T * 3 * C], y[N * T * C];
    test_fill_uniform(qkv, N * T * 3 * C, -2, 2);
    ref_attention(qkv, N, T, C, HEADS, scale, y);

    /* The ONNX graph's way: reshape [N, T, 3, H, D], transpose (2, 0, 3, 1, 4) -> [3, N, H, T, D],
     * q k^T * scale, softmax over the last axis, times v, transpose (0, 2, 1, 3), reshape [N, T, C]. */
    struct pvk_shape s5 = {5, {N, T, 3, HEADS, DH}}, t5, qs = {4, {N, HEADS, T, DH}}, ss, os = {4, {N, HEADS, T, DH}};
    const int32_t perm[5] = {2, 0, 3, 1, 4}, perm_out[4] = {0, 2, 1, 3};
    float packed[3 * N * HEADS * T * DH], scores[N * HEADS * T * T], probs[N * HEADS * T * T];
    float heads_out[N * HEADS * T * DH], want[N * T * C];
    assert_int_equal(pvk_transpose_out_shape(&s5, perm, &t5), 0);
    ref_transpose(qkv, &s5, perm, packed);
    const float *q = packed, *k = packed + N * HEADS * T * DH, *v = packed + 2 * N * HEADS * T * DH;
    assert_int_equal(pvk_matmul_out_shape(&qs, &qs, 1, &ss), 0);
    ref_matmul(q, &qs, k, &qs, 1, NULL, &ss, scores);
    const float sc[1] = {scale};
    ref_binary(PVK_BIN_MUL, scores, &ss, sc, &(struct pvk_shape){1, {1}}, &ss, scores);
    ref_softmax(scores, N * HEADS * T, T, 1, probs);
    ref_matmul(probs, &ss, v, &qs, 0, NULL, &os, heads_out);
    ref_transpose(heads_out, &os, perm_out, want);
    expect_near(y, want, N * T * C, 1e-5);
}

static void test_argmax_ties_first(void **state)
{
    (void)state;
    const float x[8] = {1, 3, 3, 2, -1, -1, -1, -1};
    int32_t idx[2];
    float m[2];
    ref_argmax(x, 2, 4, idx, m);
    assert_int_equal(idx[0], 1);
    assert_int_equal(idx[1], 0);
    assert_float_equal(m[0], 3, 0);
    assert_float_equal(m[1], -1, 0);
}

/* The softmax probability of a row's maximum is what softmax gives there, by hand and against
 * ref_softmax on random logits. */
static void test_softmax_of_max(void **state)
{
    (void)state;
    const float x[4] = {0, 0, 0, 0};
    float p;
    ref_softmax_of_max(x, 1, 4, &p);
    assert_float_equal(p, 0.25, 1e-7);
    enum { ROWS = 3, C = 50 };
    float logits[ROWS * C], probs[ROWS * C], want[ROWS], got[ROWS];
    test_fill_uniform(logits, ROWS * C, -8, 8);
    ref_softmax(logits, ROWS, C, 1, probs);
    ref_argmax(probs, ROWS, C, NULL, want);
    ref_softmax_of_max(logits, ROWS, C, got);
    for (int r = 0; r < ROWS; r++)
        assert_float_equal(got[r], want[r], 1e-6 * want[r]);
}

int main(void)
{
    test_seed();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_3x3_by_hand),
        cmocka_unit_test(test_conv_dilation_by_hand),
        cmocka_unit_test(test_conv_asymmetric_pads_by_hand),
        cmocka_unit_test(test_conv_depthwise_stride2_by_hand),
        cmocka_unit_test(test_conv_matches_naive),
        cmocka_unit_test(test_conv_residual_and_act_order),
        cmocka_unit_test(test_conv_out_hw_rejects_empty),
        cmocka_unit_test(test_conv_transpose_2x2_s2_by_hand),
        cmocka_unit_test(test_conv_transpose_matches_naive),
        cmocka_unit_test(test_conv_and_transpose_random_configs),
        cmocka_unit_test(test_pool_max_2x2),
        cmocka_unit_test(test_pool_max_ignores_padding),
        cmocka_unit_test(test_pool_avg_count_include_pad),
        cmocka_unit_test(test_pool_avg_rec_3x2_and_global),
        cmocka_unit_test(test_pool_ceil_mode),
        cmocka_unit_test(test_resize_nearest),
        cmocka_unit_test(test_resize_bilinear),
        cmocka_unit_test(test_concat_axes),
        cmocka_unit_test(test_transpose_2d_and_6d),
        cmocka_unit_test(test_reshape_rules),
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_binary_broadcasting),
        cmocka_unit_test(test_affine_and_se),
        cmocka_unit_test(test_activations),
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_layernorm),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_attention_matches_composition),
        cmocka_unit_test(test_argmax_ties_first),
        cmocka_unit_test(test_softmax_of_max),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
