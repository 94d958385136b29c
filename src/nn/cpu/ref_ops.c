#include "nn/cpu/ref_ops.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "nn/cpu/act_scalar.h"
#include "nn/cpu/resize_coord.h"

/* ---- activations ------------------------------------------------------------------------- */

float ref_act_scalar(enum pvk_act act, float alpha, float beta, float x)
{
    return nn_act_scalar(act, alpha, beta, x);
}

void ref_act(enum pvk_act act, float alpha, float beta, float *x, size_t n)
{
    if (act == PVK_ACT_NONE)
        return;
    for (size_t i = 0; i < n; i++)
        x[i] = ref_act_scalar(act, alpha, beta, x[i]);
}

/* ---- convolution --------------------------------------------------------------------------- */

/* The range of output columns o for which o s - pad + k d lands inside [0, len). */
static void valid_range(int len, int out, int s, int pad, int kd, int *lo, int *hi)
{
    int off = kd - pad; /* input index of output 0 */
    int a = off >= 0 ? 0 : (-off + s - 1) / s;
    int b = len - 1 - off < 0 ? -1 : (len - 1 - off) / s; /* last valid, inclusive */
    if (b > out - 1)
        b = out - 1;
    *lo = a;
    *hi = b + 1;
    if (*hi < *lo)
        *hi = *lo;
}

void ref_conv2d(const float *x, int n, int c, int h, int w, const float *weight, const float *bias, int oc,
                const struct pvk_conv_params *p, const float *residual, float *y)
{
    int oh, ow;
    if (pvk_conv2d_out_hw(h, w, p, &oh, &ow))
        return;
    const int icg = c / p->group, ocg = oc / p->group;
    const size_t plane = (size_t)oh * ow;
    for (int b = 0; b < n; b++) {
        for (int o = 0; o < oc; o++) {
            float *yo = y + ((size_t)b * oc + o) * plane;
            float bv = bias ? bias[o] : 0.0f;
            for (size_t i = 0; i < plane; i++)
                yo[i] = bv;
            int g = o / ocg;
            for (int ci = 0; ci < icg; ci++) {
                const float *xc = x + ((size_t)b * c + (size_t)g * icg + ci) * h * w;
                const float *wk = weight + (((size_t)o * icg + ci) * p->kh) * p->kw;
                for (int ky = 0; ky < p->kh; ky++) {
                    int ylo, yhi;
                    valid_range(h, oh, p->sh, p->pad_t, ky * p->dh, &ylo, &yhi);
                    for (int kx = 0; kx < p->kw; kx++) {
                        float wv = wk[ky * p->kw + kx];
                        int xlo, xhi;
                        valid_range(w, ow, p->sw, p->pad_l, kx * p->dw, &xlo, &xhi);
                        /* Row by row so that the inner loop is a strided axpy the compiler vectorises;
                         * in-image taps only, so no pointer ever leaves the tensor. */
                        for (int r = ylo; r < yhi; r++) {
                            ptrdiff_t row = (ptrdiff_t)(r * p->sh - p->pad_t + ky * p->dh) * w;
                            ptrdiff_t col0 = kx * p->dw - p->pad_l;
                            float *yr = yo + (size_t)r * ow;
                            if (p->sw == 1) {
                                for (int q = xlo; q < xhi; q++)
                                    yr[q] += wv * xc[row + col0 + q];
                            } else {
                                for (int q = xlo; q < xhi; q++)
                                    yr[q] += wv * xc[row + col0 + (ptrdiff_t)q * p->sw];
                            }
                        }
                    }
                }
            }
            const float *ro = residual ? residual + ((size_t)b * oc + o) * plane : NULL;
            for (size_t i = 0; i < plane; i++) {
                float v = yo[i];
                if (ro && p->residual == PVK_RESIDUAL_BEFORE_ACT)
                    v += ro[i];
                v = ref_act_scalar(p->act, p->act_alpha, p->act_beta, v);
                if (ro && p->residual == PVK_RESIDUAL_AFTER_ACT)
                    v += ro[i];
                yo[i] = v;
            }
        }
    }
}

void ref_conv_transpose2d(const float *x, int n, int c, int h, int w, const float *weight, const float *bias, int oc,
                          const struct pvk_conv_params *p, float *y)
{
    int oh, ow;
    if (pvk_conv_transpose2d_out_hw(h, w, p, &oh, &ow))
        return;
    const int icg = c / p->group, ocg = oc / p->group;
    const size_t plane = (size_t)oh * ow;
    for (int b = 0; b < n; b++) {
        for (int o = 0; o < oc; o++) {
            float *yo = y + ((size_t)b * oc + o) * plane;
            float bv = bias ? bias[o] : 0.0f;
            for (size_t i = 0; i < plane; i++)
                yo[i] = bv;
        }
        for (int ci = 0; ci < c; ci++) {
            int g = ci / icg;
            const float *xc = x + ((size_t)b * c + ci) * h * w;
            for (int oo = 0; oo < ocg; oo++) {
                int o = g * ocg + oo;
                float *yo = y + ((size_t)b * oc + o) * plane;
                const float *wk = weight + (((size_t)ci * ocg + oo) * p->kh) * p->kw;
                for (int iy = 0; iy < h; iy++) {
                    for (int ky = 0; ky < p->kh; ky++) {
                        int oy = iy * p->sh - p->pad_t + ky * p->dh;
                        if (oy < 0 || oy >= oh)
                            continue;
                        for (int ix = 0; ix < w; ix++) {
                            float xv = xc[(size_t)iy * w + ix];
                            for (int kx = 0; kx < p->kw; kx++) {
                                int ox = ix * p->sw - p->pad_l + kx * p->dw;
                                if (ox >= 0 && ox < ow)
                                    yo[(size_t)oy * ow + ox] += xv * wk[ky * p->kw + kx];
                            }
                        }
                    }
                }
            }
        }
    }
}

/* ---- pooling ------------------------------------------------------------------------------- */

static int imin(int a, int b)
{
    return a < b ? a : b;
}
static int imax(int a, int b)
{
    return a > b ? a : b;
}

void ref_pool2d(const float *x, int n, int c, int h, int w, const struct pvk_pool_params *p, float *y)
{
    int oh, ow;
    if (pvk_pool2d_out_hw(h, w, p, &oh, &ow))
        return;
    for (size_t ch = 0; ch < (size_t)n * c; ch++) {
        const float *xc = x + ch * h * w;
        float *yc = y + ch * oh * ow;
        if (p->kind == PVK_POOL_GLOBAL_AVG) {
            double s = 0;
            for (size_t i = 0; i < (size_t)h * w; i++)
                s += xc[i];
            yc[0] = (float)(s / ((double)h * w));
            continue;
        }
        for (int oy = 0; oy < oh; oy++) {
            for (int ox = 0; ox < ow; ox++) {
                int y0 = oy * p->sh - p->pad_t, x0 = ox * p->sw - p->pad_l;
                int y1 = imin(y0 + p->kh, h + p->pad_b), x1 = imin(x0 + p->kw, w + p->pad_r);
                int padded_taps = (y1 - y0) * (x1 - x0);
                int ya = imax(y0, 0), yb = imin(y1, h), xa = imax(x0, 0), xb = imin(x1, w);
                if (p->kind == PVK_POOL_MAX) {
                    float m = -FLT_MAX;
                    for (int iy = ya; iy < yb; iy++)
                        for (int ix = xa; ix < xb; ix++)
                            m = fmaxf(m, xc[(size_t)iy * w + ix]);
                    yc[(size_t)oy * ow + ox] = m;
                } else {
                    double s = 0;
                    for (int iy = ya; iy < yb; iy++)
                        for (int ix = xa; ix < xb; ix++)
                            s += xc[(size_t)iy * w + ix];
                    int taps = p->count_include_pad ? padded_taps : (yb - ya) * (xb - xa);
                    yc[(size_t)oy * ow + ox] = taps > 0 ? (float)(s / taps) : 0.0f;
                }
            }
        }
    }
}

/* ---- resize -------------------------------------------------------------------------------- */

void ref_resize(const float *x, int n, int c, int h, int w, enum pvk_resize_mode mode, float scale_h, float scale_w,
                int oh, int ow, float *y)
{
    for (size_t ch = 0; ch < (size_t)n * c; ch++) {
        const float *xc = x + ch * h * w;
        float *yc = y + ch * oh * ow;
        for (int oy = 0; oy < oh; oy++) {
            float sy = nn_resize_src(mode, oy, h, oh, scale_h);
            for (int ox = 0; ox < ow; ox++) {
                float sx = nn_resize_src(mode, ox, w, ow, scale_w);
                float v;
                if (mode == PVK_RESIZE_NEAREST) {
                    int iy = imin((int)floorf(sy), h - 1), ix = imin((int)floorf(sx), w - 1);
                    v = xc[(size_t)iy * w + ix];
                } else {
                    int y0 = imin((int)floorf(sy), h - 1), x0 = imin((int)floorf(sx), w - 1);
                    int y1 = imin(y0 + 1, h - 1), x1 = imin(x0 + 1, w - 1);
                    float fy = sy - (float)y0, fx = sx - (float)x0;
                    float top = xc[(size_t)y0 * w + x0] * (1 - fx) + xc[(size_t)y0 * w + x1] * fx;
                    float bot = xc[(size_t)y1 * w + x0] * (1 - fx) + xc[(size_t)y1 * w + x1] * fx;
                    v = top * (1 - fy) + bot * fy;
                }
                yc[(size_t)oy * ow + ox] = v;
            }
        }
    }
}

/* ---- layout ops ---------------------------------------------------------------------------- */

static int64_t prod(const int64_t *d, int from, int to)
{
    int64_t p = 1;
    for (int i = from; i < to; i++)
        p *= d[i];
    return p;
}

void ref_concat(int n_in, const float *const *x, const struct pvk_shape *in, int axis, float *y)
{
    int64_t outer = prod(in[0].d, 0, axis), inner = prod(in[0].d, axis + 1, in[0].ndim);
    int64_t total = 0;
    for (int i = 0; i < n_in; i++)
        total += in[i].d[axis];
    for (int64_t o = 0; o < outer; o++) {
        float *dst = y + o * total * inner;
        for (int i = 0; i < n_in; i++) {
            size_t chunk = (size_t)(in[i].d[axis] * inner);
            memcpy(dst, x[i] + o * chunk, chunk * sizeof(float));
            dst += chunk;
        }
    }
}

void ref_transpose(const float *x, const struct pvk_shape *in, const int32_t *perm, float *y)
{
    int nd = in->ndim;
    int64_t in_stride[PVK_MAX_DIMS], out_dim[PVK_MAX_DIMS], stride[PVK_MAX_DIMS], idx[PVK_MAX_DIMS] = {0};
    int64_t s = 1;
    for (int i = nd - 1; i >= 0; i--) {
        in_stride[i] = s;
        s *= in->d[i];
    }
    for (int i = 0; i < nd; i++) {
        out_dim[i] = in->d[perm[i]];
        stride[i] = in_stride[perm[i]]; /* input stride of output axis i */
    }
    int64_t total = prod(in->d, 0, nd);
    int64_t src = 0;
    for (int64_t k = 0; k < total; k++) {
        y[k] = x[src];
        for (int i = nd - 1; i >= 0; i--) { /* odometer over the output index */
            src += stride[i];
            if (++idx[i] < out_dim[i])
                break;
            src -= stride[i] * out_dim[i];
            idx[i] = 0;
        }
    }
}

void ref_slice(const float *x, const struct pvk_shape *in, int axis, int64_t first, int64_t step,
               const struct pvk_shape *out, float *y)
{
    int64_t outer = prod(in->d, 0, axis), inner = prod(in->d, axis + 1, in->ndim);
    int64_t len = in->d[axis], count = out->d[axis];
    for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < count; i++)
            memcpy(y + (o * count + i) * inner, x + (o * len + first + i * step) * inner,
                   (size_t)inner * sizeof(float));
}

/* ---- elementwise --------------------------------------------------------------------------- */

/* Element strides of `s` as seen from a broadcast output of rank nd: 0 on broadcast axes. */
static void broadcast_strides(const struct pvk_shape *s, int nd, int64_t *stride)
{
    int64_t st = 1;
    for (int i = nd - 1; i >= 0; i--) {
        int is = i - (nd - s->ndim);
        int64_t d = is >= 0 ? s->d[is] : 1;
        stride[i] = d == 1 ? 0 : st;
        st *= d;
    }
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

void ref_binary(enum pvk_binary_kind kind, const float *a, const struct pvk_shape *as, const float *b,
                const struct pvk_shape *bs, const struct pvk_shape *out, float *y)
{
    int nd = out->ndim;
    int64_t sa[PVK_MAX_DIMS], sb[PVK_MAX_DIMS], idx[PVK_MAX_DIMS] = {0};
    broadcast_strides(as, nd, sa);
    broadcast_strides(bs, nd, sb);
    int64_t total = pvk_shape_numel(out), ia = 0, ib = 0;
    for (int64_t k = 0; k < total; k++) {
        y[k] = binary_apply(kind, a[ia], b[ib]);
        for (int i = nd - 1; i >= 0; i--) {
            ia += sa[i];
            ib += sb[i];
            if (++idx[i] < out->d[i])
                break;
            ia -= sa[i] * out->d[i];
            ib -= sb[i] * out->d[i];
            idx[i] = 0;
        }
    }
}

void ref_affine(const float *x, int64_t outer, int64_t c, int64_t inner, const float *scale, const float *shift,
                float *y)
{
    for (int64_t o = 0; o < outer; o++)
        for (int64_t ch = 0; ch < c; ch++) {
            const float *xi = x + (o * c + ch) * inner;
            float *yi = y + (o * c + ch) * inner;
            for (int64_t i = 0; i < inner; i++)
                yi[i] = xi[i] * scale[ch] + shift[ch];
        }
}

int ref_se(const float *x, int n, int c, int h, int w, int cr, const float *w1, const float *b1, const float *w2,
           const float *b2, enum pvk_act gate_act, float gate_alpha, float gate_beta, int residual, float *y)
{
    size_t plane = (size_t)h * w;
    double *mean = malloc(sizeof(double) * ((size_t)c + (size_t)cr));
    if (!mean)
        return -1;
    double *hid = mean + c;
    for (int b = 0; b < n; b++) {
        const float *xb = x + (size_t)b * c * plane;
        float *yb = y + (size_t)b * c * plane;
        for (int ch = 0; ch < c; ch++) {
            double s = 0;
            for (size_t i = 0; i < plane; i++)
                s += xb[(size_t)ch * plane + i];
            mean[ch] = s / (double)plane;
        }
        for (int r = 0; r < cr; r++) {
            double s = b1 ? b1[r] : 0.0;
            for (int ch = 0; ch < c; ch++)
                s += (double)w1[(size_t)r * c + ch] * mean[ch];
            hid[r] = s > 0 ? s : 0;
        }
        for (int ch = 0; ch < c; ch++) {
            double s = b2 ? b2[ch] : 0.0;
            for (int r = 0; r < cr; r++)
                s += (double)w2[(size_t)ch * cr + r] * hid[r];
            float g = ref_act_scalar(gate_act, gate_alpha, gate_beta, (float)s);
            const float *xc = xb + (size_t)ch * plane;
            float *yc = yb + (size_t)ch * plane;
            for (size_t i = 0; i < plane; i++)
                yc[i] = residual ? xc[i] * g + xc[i] : xc[i] * g;
        }
    }
    free(mean);
    return 0;
}

/* ---- matrix ops ---------------------------------------------------------------------------- */

void ref_matmul(const float *a, const struct pvk_shape *as, const float *b, const struct pvk_shape *bs, int trans_b,
                const float *bias, const struct pvk_shape *out, float *y)
{
    int nd = out->ndim - 2;
    int64_t m = as->d[as->ndim - 2], k = as->d[as->ndim - 1], nn = out->d[out->ndim - 1];
    struct pvk_shape ba = *as, bb = *bs, bo = *out;
    ba.ndim -= 2;
    bb.ndim -= 2;
    bo.ndim -= 2;
    int64_t sa[PVK_MAX_DIMS], sb[PVK_MAX_DIMS], idx[PVK_MAX_DIMS] = {0};
    broadcast_strides(&ba, nd, sa);
    broadcast_strides(&bb, nd, sb);
    int64_t batches = pvk_shape_numel(&bo), ia = 0, ib = 0;
    for (int64_t t = 0; t < batches; t++) {
        const float *am = a + ia * m * k;
        const float *bm = b + ib * k * nn;
        float *ym = y + t * m * nn;
        for (int64_t i = 0; i < m; i++) {
            float *yr = ym + i * nn;
            for (int64_t j = 0; j < nn; j++)
                yr[j] = bias ? bias[j] : 0.0f;
            if (trans_b) {
                for (int64_t j = 0; j < nn; j++) {
                    float s = 0;
                    for (int64_t q = 0; q < k; q++)
                        s += am[i * k + q] * bm[j * k + q];
                    yr[j] += s;
                }
            } else {
                for (int64_t q = 0; q < k; q++) {
                    float av = am[i * k + q];
                    const float *br = bm + q * nn;
                    for (int64_t j = 0; j < nn; j++)
                        yr[j] += av * br[j];
                }
            }
        }
        for (int i = nd - 1; i >= 0; i--) {
            ia += sa[i];
            ib += sb[i];
            if (++idx[i] < bo.d[i])
                break;
            ia -= sa[i] * bo.d[i];
            ib -= sb[i] * bo.d[i];
            idx[i] = 0;
        }
    }
}

void ref_layernorm(const float *x, int64_t rows, int64_t c, const float *gamma, const float *beta, float eps, float *y)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * c;
        float *yr = y + r * c;
        double mean = 0, var = 0;
        for (int64_t i = 0; i < c; i++)
            mean += xr[i];
        mean /= (double)c;
        for (int64_t i = 0; i < c; i++)
            var += ((double)xr[i] - mean) * ((double)xr[i] - mean);
        var /= (double)c;
        double inv = 1.0 / sqrt(var + (double)eps);
        for (int64_t i = 0; i < c; i++) {
            double v = ((double)xr[i] - mean) * inv;
            yr[i] = (float)(v * (gamma ? gamma[i] : 1.0f) + (beta ? beta[i] : 0.0f));
        }
    }
}

void ref_softmax(const float *x, int64_t outer, int64_t len, int64_t inner, float *y)
{
    for (int64_t o = 0; o < outer; o++) {
        for (int64_t i = 0; i < inner; i++) {
            const float *xs = x + o * len * inner + i;
            float *ys = y + o * len * inner + i;
            float m = -INFINITY;
            for (int64_t j = 0; j < len; j++)
                m = fmaxf(m, xs[j * inner]);
            double s = 0;
            for (int64_t j = 0; j < len; j++) {
                float e = expf(xs[j * inner] - m);
                ys[j * inner] = e;
                s += e;
            }
            for (int64_t j = 0; j < len; j++)
                ys[j * inner] = (float)(ys[j * inner] / s);
        }
    }
}

void ref_attention(const float *qkv, int n, int t, int c, int heads, float scale, float *y)
{
    int dh = c / heads;
    for (int b = 0; b < n; b++) {
        const float *base = qkv + (size_t)b * t * 3 * c;
        for (int hd = 0; hd < heads; hd++) {
            for (int i = 0; i < t; i++) {
                const float *q = base + (size_t)i * 3 * c + hd * dh;
                float *yi = y + ((size_t)b * t + i) * c + hd * dh;
                /* Two passes over the keys (max, then weighted sum) keep the scratch to one row. */
                float m = -INFINITY;
                for (int j = 0; j < t; j++) {
                    const float *k = base + (size_t)j * 3 * c + c + hd * dh;
                    float s = 0;
                    for (int e = 0; e < dh; e++)
                        s += q[e] * k[e];
                    m = fmaxf(m, s * scale);
                }
                double den = 0;
                for (int e = 0; e < dh; e++)
                    yi[e] = 0;
                for (int j = 0; j < t; j++) {
                    const float *k = base + (size_t)j * 3 * c + c + hd * dh;
                    const float *v = base + (size_t)j * 3 * c + 2 * c + hd * dh;
                    float s = 0;
                    for (int e = 0; e < dh; e++)
                        s += q[e] * k[e];
                    float p = expf(s * scale - m);
                    den += p;
                    for (int e = 0; e < dh; e++)
                        yi[e] += p * v[e];
                }
                for (int e = 0; e < dh; e++)
                    yi[e] = (float)(yi[e] / den);
            }
        }
    }
}

void ref_softmax_of_max(const float *x, int64_t rows, int64_t c, float *prob)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * c;
        float m = xr[0];
        for (int64_t i = 1; i < c; i++)
            m = xr[i] > m ? xr[i] : m;
        double s = 0.0;
        for (int64_t i = 0; i < c; i++)
            s += exp((double)xr[i] - m);
        prob[r] = (float)(1.0 / s);
    }
}

void ref_argmax(const float *x, int64_t rows, int64_t c, int32_t *index, float *max_value)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * c;
        int64_t best = 0;
        for (int64_t i = 1; i < c; i++)
            if (xr[i] > xr[best])
                best = i;
        if (index)
            index[r] = (int32_t)best;
        if (max_value)
            max_value[r] = xr[best];
    }
}
