/* The oneDNN executor's convolutions: CONV2D and CONV_TRANSPOSE2D, and the fusions into them.
 *
 * A convolution applies its activation, its residual (a sum post-op over the residual's bytes,
 * written in place where nothing reads them later) and the AFFINE after it (per-channel binary
 * post-ops), as the Vulkan planner fuses them; a 2x2 stride-2 transposed convolution (det's head)
 * is a 1x1 convolution to 4 OC channels whose spreading (own C) applies the bias and a ReLU, any
 * other activation following as the library's eltwise. */
#include <stdlib.h>
#include <string.h>

#include "nn/cpu/cpu_net_internal.h"

/* ---- fusions ------------------------------------------------------------------------------- */

void cn_plan_fusions(struct cn_plan *p)
{
    const struct pvk_model *m = p->model;
    for (uint32_t j = 0; j < m->n_ops; j++) {
        const struct pvk_op *aff = &m->ops[j];
        if (aff->type != PVK_OP_AFFINE || aff->n_inputs != 1 || aff->inputs[0] < 0 || aff->outputs[0] < 0)
            continue;
        int32_t y = aff->inputs[0];
        if (p->reader_count[y] != 1 || y == p->output_tensor || p->shapes[y].ndim != 4)
            continue;
        for (uint32_t k = 0; k < j; k++) {
            const struct pvk_op *conv = &m->ops[k];
            if (conv->outputs[0] != y)
                continue;
            int64_t oc = p->shapes[y].d[1];
            if (conv->type == PVK_OP_CONV2D && cn_numel(p, aff->weights[0]) == oc &&
                cn_numel(p, aff->weights[1]) == oc &&
                cn_acts_chain((enum pvk_act)conv->act, conv->act_alpha, conv->act_beta, (enum pvk_act)aff->act,
                              aff->act_alpha, aff->act_beta))
                p->fused_into[j] = (int)k;
            break;
        }
    }
}

static int affine_after(const struct cn_plan *p, int k)
{
    for (uint32_t j = (uint32_t)k + 1; j < p->model->n_ops; j++)
        if (p->fused_into[j] == k)
            return (int)j;
    return -1;
}

/* ---- convolution --------------------------------------------------------------------------- */

struct conv_post {
    int n_binary;
    int binary_index[2];   /* post-op index of the affine's mul and add */
    dnnl_memory_t src1[2]; /* their per-channel operands */
};

/* The post-ops of a convolution: residual, activation, the fused affine and its activation. */
static int conv_attr(struct cn_plan *p, int k, int affine, int64_t oc, struct conv_post *post,
                     dnnl_primitive_attr_t *attr)
{
    const struct pvk_op *op = cn_op(p, k);
    dnnl_post_ops_t po;
    if (cn_attr_post_ops_begin(p, k, attr, &po))
        return -1;
    int rc = 0;
    enum pvk_residual res = (enum pvk_residual)op->attr.conv.residual;
    if (res == PVK_RESIDUAL_BEFORE_ACT && cpu_dnnl.dnnl_post_ops_append_sum(po, 1.0f) != dnnl_success)
        rc = cn_fail(p, k, "oneDNN: sum post-op refused");
    if (!rc)
        rc = cn_post_ops_act(p, k, po, (enum pvk_act)op->act, op->act_alpha, op->act_beta, false);
    if (!rc && res == PVK_RESIDUAL_AFTER_ACT && cpu_dnnl.dnnl_post_ops_append_sum(po, 1.0f) != dnnl_success)
        rc = cn_fail(p, k, "oneDNN: sum post-op refused");
    post->n_binary = 0;
    if (!rc && affine >= 0) {
        const struct pvk_op *aff = cn_op(p, affine);
        int64_t dims[4] = {1, oc, 1, 1};
        dnnl_memory_desc_t md;
        rc = cn_md_by_tag(p, k, 4, dims, dnnl_abcd, &md);
        const dnnl_alg_kind_t alg[2] = {dnnl_binary_mul, dnnl_binary_add};
        for (int i = 0; i < 2 && !rc; i++) {
            post->binary_index[i] = cpu_dnnl.dnnl_post_ops_len(po);
            if (cpu_dnnl.dnnl_post_ops_append_binary(po, alg[i], &md) != dnnl_success)
                rc = cn_fail(p, k, "oneDNN: binary post-op refused");
            else if (!(post->src1[i] = cn_const_memory(p, affine, aff->weights[i], &md)))
                rc = -1;
            else
                post->n_binary++;
        }
        if (!rc)
            rc = cn_post_ops_act(p, k, po, (enum pvk_act)aff->act, aff->act_alpha, aff->act_beta, false);
    }
    return cn_attr_post_ops_end(p, k, *attr, po, rc);
}

/* The weights of CONV2D as the model stores them: [OC][IC/g][KH][KW] (goihw with groups). */
static int conv_weights_md(struct cn_plan *p, int k, const struct pvk_conv_params *cp, int64_t oc, int64_t ic,
                           dnnl_format_tag_t tag_or_any, dnnl_memory_desc_t *md)
{
    int g = cp->group;
    if (g == 1) {
        int64_t dims[4] = {oc, ic, cp->kh, cp->kw};
        return cn_md_by_tag(p, k, 4, dims, tag_or_any == dnnl_format_tag_any ? tag_or_any : dnnl_oihw, md);
    }
    int64_t dims[5] = {g, oc / g, ic / g, cp->kh, cp->kw};
    return cn_md_by_tag(p, k, 5, dims, tag_or_any == dnnl_format_tag_any ? tag_or_any : dnnl_goihw, md);
}

static int conv_pd(struct cn_plan *p, int k, const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *wei,
                   const dnnl_memory_desc_t *bias, const dnnl_memory_desc_t *dst, const struct pvk_conv_params *cp,
                   dnnl_primitive_attr_t attr, dnnl_primitive_desc_t *pd)
{
    dnnl_convolution_desc_t d;
    dnnl_dims_t strides = {cp->sh, cp->sw}, dil = {cp->dh - 1, cp->dw - 1};
    dnnl_dims_t pad_l = {cp->pad_t, cp->pad_l}, pad_r = {cp->pad_b, cp->pad_r};
    dnnl_status_t st = cpu_dnnl.dnnl_dilated_convolution_forward_desc_init(
        &d, dnnl_forward_inference, dnnl_convolution_direct, src, wei, bias, dst, strides, dil, pad_l, pad_r);
    if (st != dnnl_success) {
        cpu_dnnl.dnnl_primitive_attr_destroy(attr);
        return cn_fail_dnnl(p, k, "dnnl_convolution_forward_desc_init", st);
    }
    return cn_pd(p, k, &d, attr, pd);
}

static int md_any(struct cn_plan *p, int k, const struct pvk_shape *s, dnnl_memory_desc_t *md)
{
    const int64_t dims[4] = {s->d[0], s->d[1], s->d[2], s->d[3]};
    return cn_md_by_tag(p, k, 4, dims, dnnl_format_tag_any, md);
}

/* CONV2D's primitive for a source and destination layout, with its fusions as post-ops. */
static int conv2d_pd(struct cn_plan *p, int k, const struct pvk_conv_params *cp, int affine, int64_t oc,
                     struct conv_post *post, const dnnl_memory_desc_t *src, const dnnl_memory_desc_t *wei,
                     const dnnl_memory_desc_t *bias, const dnnl_memory_desc_t *dst, dnnl_primitive_desc_t *pd)
{
    dnnl_primitive_attr_t attr;
    if (conv_attr(p, k, affine, oc, post, &attr))
        return -1;
    return conv_pd(p, k, src, wei, bias, dst, cp, attr, pd);
}

/* `better` (a primitive for the source layout `src`) in place of *pd, and the source x reordered
 * to that layout. */
static int switch_pd(struct cn_plan *p, int k, dnnl_primitive_desc_t *pd, dnnl_primitive_desc_t better, int *x,
                     const dnnl_memory_desc_t *src)
{
    cpu_dnnl.dnnl_primitive_desc_destroy(*pd);
    *pd = better;
    if ((*x = cn_to_md(p, k, *x, src)) < 0) {
        cpu_dnnl.dnnl_primitive_desc_destroy(*pd);
        return -1;
    }
    return 0;
}

/* Spatial convolutions over many channels are where the library's blocked layout beats its NHWC
 * kernel by more than the two reorders cost, on machines whose best kernel wants that layout
 * (BENCHMARKS.md: the CPU backend's blocked 3x3 convolutions); depthwise and 1x1 ones are not. */
static bool conv_blocked_pays(const struct pvk_conv_params *cp, const struct pvk_shape *xs)
{
    return cp->group == 1 && cp->kh * cp->kw > 1 && xs->d[1] >= 32;
}

int cn_plan_conv2d(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    struct pvk_conv_params cp;
    pvk_conv_params_from_op(op, &cp);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0)
        return -1;
    const struct pvk_shape *xs = &p->values[x].shape, *ys = cn_out_shape(p, k);
    int64_t oc = ys->d[1], ic = xs->d[1];
    int affine = affine_after(p, k);
    bool has_bias = op->weights[1] >= 0;
    dnnl_memory_desc_t user_w, any_w, bias_md, dst_md;
    int64_t bdims[1] = {oc};
    if (conv_weights_md(p, k, &cp, oc, ic, dnnl_oihw, &user_w) ||
        conv_weights_md(p, k, &cp, oc, ic, dnnl_format_tag_any, &any_w) ||
        cn_md_by_tag(p, k, 1, bdims, dnnl_x, &bias_md) || cn_md_for(p, k, ys, PVK_DTYPE_F32, &dst_md))
        return -1;
    const dnnl_memory_desc_t *bias = has_bias ? &bias_md : NULL;
    struct conv_post post;
    dnnl_primitive_desc_t pd;
    if (conv2d_pd(p, k, &cp, affine, oc, &post, &p->values[x].md, &any_w, bias, &dst_md, &pd))
        return -1;
    /* A source in another layout (the net's NCHW input) may only have the reference kernel:
     * then it is reordered to NHWC first. */
    if (cn_pd_is_reference(pd) && !cn_md_same_bytes(&p->values[x].md, &dst_md) && xs->d[1] > 1) {
        dnnl_memory_desc_t nhwc;
        dnnl_primitive_desc_t pd2;
        if (cn_md_for(p, k, xs, PVK_DTYPE_F32, &nhwc) ||
            conv2d_pd(p, k, &cp, affine, oc, &post, &nhwc, &any_w, bias, &dst_md, &pd2)) {
            cpu_dnnl.dnnl_primitive_desc_destroy(pd);
            return -1;
        }
        if (!cn_pd_is_reference(pd2)) {
            if (switch_pd(p, k, &pd, pd2, &x, &nhwc))
                return -1;
        } else {
            cpu_dnnl.dnnl_primitive_desc_destroy(pd2);
        }
    }
    /* The source and destination in the layout the library picks, where that is not the NHWC
     * the source is in and the convolution is one that pays for the reorders to it and back. */
    dnnl_memory_desc_t blocked_dst;
    bool blocked = false;
    if (cp.residual == PVK_RESIDUAL_NONE && conv_blocked_pays(&cp, xs)) {
        dnnl_memory_desc_t any_src, any_dst;
        dnnl_primitive_desc_t pd2;
        if (md_any(p, k, xs, &any_src) || md_any(p, k, ys, &any_dst) ||
            conv2d_pd(p, k, &cp, affine, oc, &post, &any_src, &any_w, bias, &any_dst, &pd2)) {
            cpu_dnnl.dnnl_primitive_desc_destroy(pd);
            return -1;
        }
        const dnnl_memory_desc_t *src2 = cpu_dnnl.dnnl_primitive_desc_query_md(pd2, dnnl_query_src_md, 0);
        if (!cn_pd_is_reference(pd2) && !cn_md_same_bytes(src2, &p->values[x].md)) {
            blocked_dst = *cpu_dnnl.dnnl_primitive_desc_query_md(pd2, dnnl_query_dst_md, 0);
            blocked = true;
            if (switch_pd(p, k, &pd, pd2, &x, src2))
                return -1;
        } else {
            cpu_dnnl.dnnl_primitive_desc_destroy(pd2);
        }
    }
    const dnnl_memory_desc_t *want_w = cpu_dnnl.dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    dnnl_memory_t w = cn_packed_memory(p, k, op->weights[0], CN_VIEW_AS_IS, &user_w, NULL, want_w);
    dnnl_memory_t b = has_bias ? cn_const_memory(p, k, op->weights[1], &bias_md) : NULL;
    int y = -1;
    if (w && (!has_bias || b)) {
        if (cp.residual == PVK_RESIDUAL_NONE) {
            y = cn_new_value(p, k, blocked ? &blocked_dst : &dst_md, ys, PVK_DTYPE_F32, -1, 0);
        } else {
            /* The sum post-op adds what dst holds: the residual, in place where it may be
             * overwritten, else a copy of it. */
            int r = cn_tensor_value(p, k, op->inputs[1]);
            if (r >= 0 && (!cn_md_same_bytes(&p->values[r].md, &dst_md) || !cn_can_overwrite(p, r, k) ||
                           p->values[r].storage == p->values[x].storage))
                r = cn_copy_to(p, k, r, &dst_md);
            if (r >= 0)
                y = cn_new_value(p, k, &dst_md, ys, PVK_DTYPE_F32, p->values[r].storage, p->values[r].byte_offset);
        }
    }
    if (y < 0) {
        cpu_dnnl.dnnl_primitive_desc_destroy(pd);
        return -1;
    }
    struct cn_arg args[8] = {{DNNL_ARG_SRC, x, NULL}, {DNNL_ARG_WEIGHTS, -1, w}, {DNNL_ARG_DST, y, NULL}};
    int n = 3;
    if (has_bias)
        args[n++] = (struct cn_arg){DNNL_ARG_BIAS, -1, b};
    for (int i = 0; i < post.n_binary; i++)
        args[n++] =
            (struct cn_arg){DNNL_ARG_ATTR_MULTIPLE_POST_OP(post.binary_index[i]) | DNNL_ARG_SRC_1, -1, post.src1[i]};
    if (cn_add_prim(p, k, affine >= 0 ? "conv+aff" : "conv", pd, n, args))
        return -1;
    if (blocked && (y = cn_to_md(p, k, y, &dst_md)) < 0)
        return -1;
    cn_set_tensor_value(p, affine >= 0 ? cn_op(p, affine)->outputs[0] : op->outputs[0], y);
    return 0;
}

/* ---- transposed convolution ---------------------------------------------------------------- */

static bool deconv_is_spread(const struct pvk_conv_params *cp)
{
    return cp->sh == cp->kh && cp->sw == cp->kw && cp->dh == 1 && cp->dw == 1 && cp->group == 1 && !cp->pad_t &&
           !cp->pad_l && !cp->pad_b && !cp->pad_r;
}

/* A transposed convolution whose windows do not overlap (stride = kernel, no padding): each input
 * pixel becomes a KH x KW block of the output, a 1x1 convolution to KH KW OC channels, in the
 * order (ky, kx, oc) so that the spreading moves runs of OC floats. oneDNN's own deconvolution
 * runs det's two such layers 4-7 times slower (BENCHMARKS.md). */
static int deconv_spread(struct cn_plan *p, int k, int x, const struct pvk_conv_params *cp)
{
    const struct pvk_op *op = cn_op(p, k);
    const struct pvk_shape *xs = &p->values[x].shape, *ys = cn_out_shape(p, k);
    int64_t n = xs->d[0], ic = xs->d[1], h = xs->d[2], w = xs->d[3], oc = ys->d[1];
    int64_t khw = (int64_t)cp->kh * cp->kw, zc = oc * khw;
    struct pvk_shape zs = {4, {n, zc, h, w}};
    int64_t wdims[4] = {zc, ic, 1, 1};
    dnnl_memory_desc_t user_w, any_w, z_md, x_md;
    if (cn_md_by_tag(p, k, 4, wdims, dnnl_oihw, &user_w) || cn_md_by_tag(p, k, 4, wdims, dnnl_format_tag_any, &any_w) ||
        cn_md_for(p, k, &zs, PVK_DTYPE_F32, &z_md) || cn_md_for(p, k, xs, PVK_DTYPE_F32, &x_md))
        return -1;
    if ((x = cn_to_md(p, k, x, &x_md)) < 0)
        return -1;
    struct pvk_conv_params one = {1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 1, PVK_ACT_NONE, 0, 0, PVK_RESIDUAL_NONE};
    dnnl_primitive_attr_t attr;
    dnnl_primitive_desc_t pd;
    if (cn_attr(p, k, &attr) || conv_pd(p, k, &x_md, &any_w, NULL, &z_md, &one, attr, &pd))
        return -1;
    /* W[ic][oc][ky][kx] -> W'[(ky kw + kx) oc + oc][ic] */
    const float *wsrc = cn_const_data(p, k, op->weights[0]);
    float *wz = wsrc ? malloc((size_t)(zc * ic) * sizeof(float)) : NULL;
    if (!wz) {
        cpu_dnnl.dnnl_primitive_desc_destroy(pd);
        return wsrc ? cn_fail(p, k, "out of memory") : -1;
    }
    for (int64_t i = 0; i < ic; i++)
        for (int64_t o = 0; o < oc; o++)
            for (int64_t t = 0; t < khw; t++)
                wz[(t * oc + o) * ic + i] = wsrc[(i * oc + o) * khw + t];
    const dnnl_memory_desc_t *want_w = cpu_dnnl.dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    dnnl_memory_t wm = cn_packed_memory(p, k, op->weights[0], CN_VIEW_DECONV_AS_1X1, &user_w, wz, want_w);
    free(wz);
    int z = wm ? cn_new_value(p, k, &z_md, &zs, PVK_DTYPE_F32, -1, 0) : -1;
    if (z < 0) {
        cpu_dnnl.dnnl_primitive_desc_destroy(pd);
        return -1;
    }
    struct cn_arg args[3] = {{DNNL_ARG_SRC, x, NULL}, {DNNL_ARG_WEIGHTS, -1, wm}, {DNNL_ARG_DST, z, NULL}};
    if (cn_add_prim(p, k, "deconv 1x1", pd, 3, args))
        return -1;
    int y = cn_new_output(p, k, ys);
    if (y < 0)
        return -1;
    /* ReLU is one comparison as the spreading moves the floats; other activations (det's last
     * layer ends in a sigmoid) run as the library's vectorised eltwise over the result */
    const enum pvk_act act = (enum pvk_act)op->act;
    const bool act_in_spread = act == PVK_ACT_NONE || act == PVK_ACT_RELU;
    union cn_host_params hp;
    memset(&hp, 0, sizeof hp);
    hp.spread.kh = cp->kh;
    hp.spread.kw = cp->kw;
    hp.spread.act = act_in_spread ? act : PVK_ACT_NONE;
    hp.spread.alpha = op->act_alpha;
    hp.spread.beta = op->act_beta;
    if (op->weights[1] >= 0 && !(hp.spread.bias = cn_const_data(p, k, op->weights[1])))
        return -1;
    struct cn_arg hargs[2] = {{0, z, NULL}, {1, y, NULL}};
    if (cn_add_host(p, k, "spread", cn_host_spread, &hp, 2, hargs) ||
        (!act_in_spread && cn_act_in_place(p, k, y, act, op->act_alpha, op->act_beta)))
        return -1;
    return cn_set_output(p, k, y);
}

int cn_plan_conv_transpose2d(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    struct pvk_conv_params cp;
    pvk_conv_params_from_op(op, &cp);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0)
        return -1;
    if (deconv_is_spread(&cp))
        return deconv_spread(p, k, x, &cp);
    const struct pvk_shape *xs = &p->values[x].shape, *ys = cn_out_shape(p, k);
    int64_t oc = ys->d[1], ic = xs->d[1], g = cp.group, khw = (int64_t)cp.kh * cp.kw;
    int64_t icg = ic / g, ocg = oc / g;
    bool has_bias = op->weights[1] >= 0;
    dnnl_memory_desc_t user_w, any_w, bias_md, dst_md;
    /* the model's W[IC][OC/g][KH][KW] seen as oneDNN's (g,) oc, ic, kh, kw */
    int nd = g == 1 ? 4 : 5;
    int64_t dims5[5] = {g, ocg, icg, cp.kh, cp.kw}, strides5[5] = {icg * ocg * khw, khw, ocg * khw, cp.kw, 1};
    const int64_t *dims = g == 1 ? dims5 + 1 : dims5, *strides = g == 1 ? strides5 + 1 : strides5;
    int64_t bdims[1] = {oc};
    if (cn_md_by_strides(p, k, nd, dims, strides, &user_w) ||
        cn_md_by_tag(p, k, nd, dims, dnnl_format_tag_any, &any_w) || cn_md_by_tag(p, k, 1, bdims, dnnl_x, &bias_md) ||
        cn_md_for(p, k, ys, PVK_DTYPE_F32, &dst_md))
        return -1;
    dnnl_primitive_attr_t attr;
    if (cn_attr_act(p, k, (enum pvk_act)op->act, op->act_alpha, op->act_beta, false, &attr))
        return -1;
    dnnl_deconvolution_desc_t d;
    dnnl_dims_t st = {cp.sh, cp.sw}, dil = {cp.dh - 1, cp.dw - 1};
    dnnl_dims_t pad_l = {cp.pad_t, cp.pad_l}, pad_r = {cp.pad_b, cp.pad_r};
    dnnl_status_t s = cpu_dnnl.dnnl_dilated_deconvolution_forward_desc_init(
        &d, dnnl_forward_inference, dnnl_deconvolution_direct, &p->values[x].md, &any_w, has_bias ? &bias_md : NULL,
        &dst_md, st, dil, pad_l, pad_r);
    if (s != dnnl_success) {
        cpu_dnnl.dnnl_primitive_attr_destroy(attr);
        return cn_fail_dnnl(p, k, "dnnl_deconvolution_forward_desc_init", s);
    }
    dnnl_primitive_desc_t pd;
    if (cn_pd(p, k, &d, attr, &pd))
        return -1;
    const dnnl_memory_desc_t *want_w = cpu_dnnl.dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    dnnl_memory_t w = cn_packed_memory(p, k, op->weights[0], CN_VIEW_AS_IS, &user_w, NULL, want_w);
    dnnl_memory_t b = has_bias ? cn_const_memory(p, k, op->weights[1], &bias_md) : NULL;
    int y = w && (!has_bias || b) ? cn_new_value(p, k, &dst_md, ys, PVK_DTYPE_F32, -1, 0) : -1;
    if (y < 0) {
        cpu_dnnl.dnnl_primitive_desc_destroy(pd);
        return -1;
    }
    struct cn_arg args[4] = {{DNNL_ARG_SRC, x, NULL}, {DNNL_ARG_WEIGHTS, -1, w}, {DNNL_ARG_DST, y, NULL}};
    if (has_bias)
        args[3] = (struct cn_arg){DNNL_ARG_BIAS, -1, b};
    if (cn_add_prim(p, k, "deconv", pd, has_bias ? 4 : 3, args))
        return -1;
    return cn_set_output(p, k, y);
}
