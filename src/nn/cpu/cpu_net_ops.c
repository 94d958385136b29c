/* The oneDNN executor's op planners (pooling, resize, element-wise, SE, layout ops; convolutions
 * are in cpu_net_conv.c, matrix ops in cpu_net_matrix.c), each appending the steps of its op
 * (oneDNN primitives where the library has the op, own kernels of cpu_net_host.c where it lacks
 * it) and giving its outputs their values, and the table of them by op type. An SE's residual
 * is one more step of its gate's activation (x g + x = x (g + 1)). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/cpu/cpu_net_internal.h"

/* ---- pooling and resize -------------------------------------------------------------------- */

static int host_op(struct cn_plan *p, int k, const char *what, cn_host_fn fn, const union cn_host_params *hp, int x)
{
    int y = cn_new_output(p, k, cn_out_shape(p, k));
    if (y < 0)
        return -1;
    struct cn_arg args[2] = {{0, x, NULL}, {1, y, NULL}};
    if (cn_add_host(p, k, what, fn, hp, 2, args) || cn_finish_act(p, k, y))
        return -1;
    return cn_set_output(p, k, y);
}

static int cn_plan_pool2d(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    struct pvk_pool_params pp;
    pvk_pool_params_from_op(op, &pp);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0)
        return -1;
    const struct pvk_shape *xs = &p->values[x].shape, *ys = cn_out_shape(p, k);
    int64_t h = xs->d[2], w = xs->d[3], oh = ys->d[2], ow = ys->d[3];
    dnnl_dims_t kernel, strides, pad_l, pad_r, dil = {0, 0};
    dnnl_alg_kind_t alg;
    if (pp.kind == PVK_POOL_GLOBAL_AVG) {
        kernel[0] = h, kernel[1] = w, strides[0] = strides[1] = 1;
        pad_l[0] = pad_l[1] = pad_r[0] = pad_r[1] = 0;
        alg = dnnl_pooling_avg_exclude_padding;
    } else {
        kernel[0] = pp.kh, kernel[1] = pp.kw, strides[0] = pp.sh, strides[1] = pp.sw;
        pad_l[0] = pp.pad_t, pad_l[1] = pp.pad_l;
        /* oneDNN's right padding gives the output size exactly: the model's, cut short (floor
         * mode) or extended (ceil mode) to the last window. */
        pad_r[0] = (oh - 1) * pp.sh + pp.kh - h - pp.pad_t;
        pad_r[1] = (ow - 1) * pp.sw + pp.kw - w - pp.pad_l;
        alg = pp.kind == PVK_POOL_MAX ? dnnl_pooling_max
              : pp.count_include_pad  ? dnnl_pooling_avg_include_padding
                                      : dnnl_pooling_avg_exclude_padding;
        /* An average over padding counts it only up to the model's padding, not over a ceil
         * mode's extension; a window cut short has no padding beyond the image to ignore.
         * Neither is oneDNN's: own kernel. */
        bool extended = pad_r[0] > pp.pad_b || pad_r[1] > pp.pad_r;
        if ((pp.kind == PVK_POOL_AVG && pp.count_include_pad && extended) || pad_r[0] < 0 || pad_r[1] < 0) {
            union cn_host_params hp;
            hp.pool = pp;
            return host_op(p, k, "pool", cn_host_pool, &hp, x);
        }
    }
    dnnl_memory_desc_t dst_md;
    if (cn_md_for(p, k, ys, PVK_DTYPE_F32, &dst_md))
        return -1;
    dnnl_pooling_v2_desc_t d;
    CN_TRY(p, k,
           cpu_dnnl.dnnl_pooling_v2_forward_desc_init(&d, dnnl_forward_inference, alg, &p->values[x].md, &dst_md,
                                                      strides, kernel, dil, pad_l, pad_r));
    int y = cn_src_dst_prim(p, k, &d, &dst_md, ys, x, "pool");
    if (y < 0 || cn_finish_act(p, k, y))
        return -1;
    return cn_set_output(p, k, y);
}

static bool integral(float s)
{
    return s >= 1.0f && s < 65536.0f && s == floorf(s);
}

static int cn_plan_resize(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0)
        return -1;
    const struct pvk_shape *xs = &p->values[x].shape, *ys = cn_out_shape(p, k);
    enum pvk_resize_mode mode = (enum pvk_resize_mode)op->attr.resize.mode;
    float sh = op->attr.resize.scale_h, sw = op->attr.resize.scale_w;
    /* oneDNN's coordinates are the model's where the scales are whole numbers (its factors are
     * out / in, and its nearest rounds what asymmetric floor gives there); align-corners it has not. */
    if (mode == PVK_RESIZE_BILINEAR_ALIGN_CORNERS || !integral(sh) || !integral(sw) ||
        ys->d[2] != xs->d[2] * (int64_t)sh || ys->d[3] != xs->d[3] * (int64_t)sw) {
        union cn_host_params hp;
        hp.resize.mode = mode;
        hp.resize.scale_h = sh;
        hp.resize.scale_w = sw;
        return host_op(p, k, "resize", cn_host_resize, &hp, x);
    }
    dnnl_memory_desc_t dst_md;
    if (cn_md_for(p, k, ys, PVK_DTYPE_F32, &dst_md))
        return -1;
    dnnl_resampling_desc_t d;
    CN_TRY(p, k,
           cpu_dnnl.dnnl_resampling_forward_desc_init(&d, dnnl_forward_inference,
                                                      mode == PVK_RESIZE_NEAREST ? dnnl_resampling_nearest
                                                                                 : dnnl_resampling_linear,
                                                      NULL, &p->values[x].md, &dst_md));
    int y = cn_src_dst_prim(p, k, &d, &dst_md, ys, x, "resample");
    if (y < 0 || cn_finish_act(p, k, y))
        return -1;
    return cn_set_output(p, k, y);
}

/* ---- concat, binary, unary, affine --------------------------------------------------------- */

static int cn_plan_concat(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    const struct pvk_shape *ys = cn_out_shape(p, k);
    dnnl_memory_desc_t src[PVK_MAX_INPUTS], dst_md;
    struct cn_arg args[PVK_MAX_INPUTS + 1];
    int n = (int)op->n_inputs;
    for (int i = 0; i < n; i++) {
        int x = cn_tensor_value(p, k, op->inputs[i]);
        dnnl_memory_desc_t md;
        if (x < 0 || cn_md_for(p, k, &p->values[x].shape, PVK_DTYPE_F32, &md) || (x = cn_to_md(p, k, x, &md)) < 0)
            return -1;
        src[i] = p->values[x].md;
        args[i] = (struct cn_arg){DNNL_ARG_MULTIPLE_SRC + i, x, NULL};
    }
    if (cn_md_for(p, k, ys, PVK_DTYPE_F32, &dst_md))
        return -1;
    dnnl_primitive_attr_t attr;
    dnnl_primitive_desc_t pd;
    if (cn_attr(p, k, &attr))
        return -1;
    dnnl_status_t st =
        cpu_dnnl.dnnl_concat_primitive_desc_create(&pd, &dst_md, n, op->attr.axis.axis, src, attr, p->net->engine);
    cpu_dnnl.dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success)
        return cn_fail_dnnl(p, k, "dnnl_concat_primitive_desc_create", st);
    int y = cn_new_value(p, k, &dst_md, ys, PVK_DTYPE_F32, -1, 0);
    if (y < 0) {
        cpu_dnnl.dnnl_primitive_desc_destroy(pd);
        return -1;
    }
    args[n] = (struct cn_arg){DNNL_ARG_DST, y, NULL};
    if (cn_add_prim(p, k, "concat", pd, n + 1, args) || cn_finish_act(p, k, y))
        return -1;
    return cn_set_output(p, k, y);
}

/* A row-major descriptor of shape s with leading 1s up to rank nd (numpy broadcasting's view). */
static int md_padded(struct cn_plan *p, int k, const struct pvk_shape *s, int nd, dnnl_memory_desc_t *md)
{
    struct pvk_shape padded = {nd, {0}};
    for (int i = 0; i < nd; i++) {
        int j = i - (nd - s->ndim);
        padded.d[i] = j >= 0 ? s->d[j] : 1;
    }
    return cn_md_plain(p, k, &padded, PVK_DTYPE_F32, md);
}

static dnnl_alg_kind_t binary_alg(enum pvk_binary_kind kind)
{
    switch (kind) {
    case PVK_BIN_ADD: return dnnl_binary_add;
    case PVK_BIN_SUB: return dnnl_binary_sub;
    case PVK_BIN_MUL: return dnnl_binary_mul;
    case PVK_BIN_DIV: return dnnl_binary_div;
    }
    return dnnl_binary_add;
}

/* dst = a (op) b, act after, with src1 a value (b >= 0) or a fixed memory. */
static int binary_prim(struct cn_plan *p, int k, dnnl_alg_kind_t alg, int a, int b, dnnl_memory_t b_fixed,
                       const dnnl_memory_desc_t *b_md, const struct pvk_shape *ys, enum pvk_act act, float alpha,
                       float beta, const char *what)
{
    dnnl_memory_desc_t dst_md;
    if (cn_md_for(p, k, ys, PVK_DTYPE_F32, &dst_md))
        return -1;
    dnnl_binary_desc_t d;
    CN_TRY(p, k, cpu_dnnl.dnnl_binary_desc_init(&d, alg, &p->values[a].md, b_md, &dst_md));
    dnnl_primitive_attr_t attr;
    if (cn_attr_act(p, k, act, alpha, beta, false, &attr))
        return -1;
    dnnl_primitive_desc_t pd;
    if (cn_pd(p, k, &d, attr, &pd))
        return -1;
    int y = cn_new_value(p, k, &dst_md, ys, PVK_DTYPE_F32, -1, 0);
    if (y < 0) {
        cpu_dnnl.dnnl_primitive_desc_destroy(pd);
        return -1;
    }
    struct cn_arg args[3] = {{DNNL_ARG_SRC_0, a, NULL}, {DNNL_ARG_SRC_1, b, b_fixed}, {DNNL_ARG_DST, y, NULL}};
    if (cn_add_prim(p, k, what, pd, 3, args))
        return -1;
    return y;
}

static int cn_plan_binary(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    const struct pvk_shape *ys = cn_out_shape(p, k);
    enum pvk_binary_kind kind = (enum pvk_binary_kind)op->attr.binary.kind;
    int a = cn_tensor_value(p, k, op->inputs[0]), b = -1;
    int32_t b_const = -1;
    if (a < 0)
        return -1;
    if (op->n_inputs > 1) {
        if ((b = cn_tensor_value(p, k, op->inputs[1])) < 0)
            return -1;
    } else {
        b_const = op->weights[0];
    }
    struct pvk_shape as = p->values[a].shape, bs = b >= 0 ? p->values[b].shape : p->shapes[b_const];
    bool a_full = pvk_shape_equal(&as, ys), b_full = pvk_shape_equal(&bs, ys);
    if (!a_full && b_full && b >= 0 && (kind == PVK_BIN_ADD || kind == PVK_BIN_MUL)) {
        int t = a;
        a = b;
        b = t;
        struct pvk_shape ts = as;
        as = bs;
        bs = ts;
        a_full = true;
        b_full = pvk_shape_equal(&bs, ys);
    }
    if (!a_full) {
        /* oneDNN's first source has the output's shape: a broadcast first operand is own C */
        int y = cn_new_output(p, k, ys);
        if (y < 0)
            return -1;
        union cn_host_params hp;
        hp.binary.kind = kind;
        hp.binary.act = (enum pvk_act)op->act;
        hp.binary.alpha = op->act_alpha;
        hp.binary.beta = op->act_beta;
        dnnl_memory_t b_fixed = NULL;
        if (b < 0) {
            dnnl_memory_desc_t md;
            if (cn_md_plain(p, k, &bs, PVK_DTYPE_F32, &md) || !(b_fixed = cn_const_memory(p, k, b_const, &md)))
                return -1;
        }
        struct cn_arg args[3] = {{0, a, NULL}, {1, b, b_fixed}, {2, y, NULL}};
        if (cn_add_host(p, k, "binary", cn_host_binary, &hp, 3, args))
            return -1;
        return cn_set_output(p, k, y);
    }
    dnnl_memory_desc_t b_md;
    dnnl_memory_t b_fixed = NULL;
    if (b < 0) {
        if (md_padded(p, k, &bs, ys->ndim, &b_md) || !(b_fixed = cn_const_memory(p, k, b_const, &b_md)))
            return -1;
    } else if (b_full) {
        if ((b = cn_to_md(p, k, b, &p->values[a].md)) < 0)
            return -1;
        b_md = p->values[b].md;
    } else {
        struct pvk_shape padded = {ys->ndim, {0}};
        for (int i = 0; i < ys->ndim; i++) {
            int j = i - (ys->ndim - bs.ndim);
            padded.d[i] = j >= 0 ? bs.d[j] : 1;
        }
        if ((b = cn_to_plain(p, k, b)) < 0 || md_padded(p, k, &bs, ys->ndim, &b_md) ||
            (b = cn_view(p, k, b, &b_md, &padded, 0)) < 0)
            return -1;
    }
    int y = binary_prim(p, k, binary_alg(kind), a, b, b_fixed, &b_md, ys, (enum pvk_act)op->act, op->act_alpha,
                        op->act_beta, "binary");
    return y < 0 ? -1 : cn_set_output(p, k, y);
}

static int cn_plan_unary(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0)
        return -1;
    if (op->act == PVK_ACT_NONE)
        return cn_set_output(p, k, x);
    int y = cn_copy_to(p, k, x, &p->values[x].md);
    if (y < 0 || cn_finish_act(p, k, y))
        return -1;
    return cn_set_output(p, k, y);
}

static int cn_plan_affine(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0)
        return -1;
    const struct pvk_shape *xs = &p->values[x].shape, *ys = cn_out_shape(p, k);
    struct pvk_shape cs = {xs->ndim, {0}};
    for (int i = 0; i < xs->ndim; i++)
        cs.d[i] = i == 1 ? xs->d[1] : 1;
    dnnl_memory_desc_t c_md, dst_md;
    if (cn_md_plain(p, k, &cs, PVK_DTYPE_F32, &c_md) || cn_md_for(p, k, ys, PVK_DTYPE_F32, &dst_md))
        return -1;
    dnnl_memory_t scale = cn_const_memory(p, k, op->weights[0], &c_md);
    dnnl_memory_t shift = cn_const_memory(p, k, op->weights[1], &c_md);
    if (!scale || !shift)
        return -1;
    dnnl_binary_desc_t d;
    CN_TRY(p, k, cpu_dnnl.dnnl_binary_desc_init(&d, dnnl_binary_mul, &p->values[x].md, &c_md, &dst_md));
    dnnl_primitive_attr_t attr;
    dnnl_post_ops_t po;
    if (cn_attr_post_ops_begin(p, k, &attr, &po))
        return -1;
    int rc = cpu_dnnl.dnnl_post_ops_append_binary(po, dnnl_binary_add, &c_md) == dnnl_success
                 ? cn_post_ops_act(p, k, po, (enum pvk_act)op->act, op->act_alpha, op->act_beta, false)
                 : cn_fail(p, k, "oneDNN: binary post-op refused");
    if (cn_attr_post_ops_end(p, k, attr, po, rc))
        return -1;
    dnnl_primitive_desc_t pd;
    if (cn_pd(p, k, &d, attr, &pd))
        return -1;
    int y = cn_new_value(p, k, &dst_md, ys, PVK_DTYPE_F32, -1, 0);
    if (y < 0) {
        cpu_dnnl.dnnl_primitive_desc_destroy(pd);
        return -1;
    }
    struct cn_arg args[4] = {{DNNL_ARG_SRC_0, x, NULL},
                             {DNNL_ARG_SRC_1, -1, scale},
                             {DNNL_ARG_DST, y, NULL},
                             {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, -1, shift}};
    if (cn_add_prim(p, k, "affine", pd, 4, args))
        return -1;
    return cn_set_output(p, k, y);
}

/* ---- squeeze-and-excitation ---------------------------------------------------------------- */

/* y = act(x W^T + bias) for x [N, IC] -> [N, OC] (an inner product, W [OC][IC] as the model
 * stores it), with the post-ops of act and, when plus_one, one more that adds 1. */
static int inner_product(struct cn_plan *p, int k, int x, int32_t w_t, int32_t b_t, int64_t oc, enum pvk_act act,
                         float alpha, float beta, bool plus_one)
{
    int64_t n = p->values[x].shape.d[0], ic = p->values[x].shape.d[1];
    int64_t wdims[2] = {oc, ic}, bdims[1] = {oc}, ddims[2] = {n, oc};
    dnnl_memory_desc_t user_w, any_w, bias_md, dst_md;
    if (cn_md_by_tag(p, k, 2, wdims, dnnl_oi, &user_w) || cn_md_by_tag(p, k, 2, wdims, dnnl_format_tag_any, &any_w) ||
        cn_md_by_tag(p, k, 1, bdims, dnnl_x, &bias_md) || cn_md_by_tag(p, k, 2, ddims, dnnl_nc, &dst_md))
        return -1;
    dnnl_inner_product_desc_t d;
    CN_TRY(p, k,
           cpu_dnnl.dnnl_inner_product_forward_desc_init(&d, dnnl_forward_inference, &p->values[x].md, &any_w,
                                                         b_t >= 0 ? &bias_md : NULL, &dst_md));
    dnnl_primitive_attr_t attr;
    if (cn_attr_act(p, k, act, alpha, beta, plus_one, &attr))
        return -1;
    dnnl_primitive_desc_t pd;
    if (cn_pd(p, k, &d, attr, &pd))
        return -1;
    const dnnl_memory_desc_t *want_w = cpu_dnnl.dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0);
    dnnl_memory_t w = cn_packed_memory(p, k, w_t, CN_VIEW_AS_IS, &user_w, NULL, want_w);
    dnnl_memory_t b = b_t >= 0 ? cn_const_memory(p, k, b_t, &bias_md) : NULL;
    struct pvk_shape ys = {2, {n, oc}};
    int y = w && (b_t < 0 || b) ? cn_new_value(p, k, &dst_md, &ys, PVK_DTYPE_F32, -1, 0) : -1;
    if (y < 0) {
        cpu_dnnl.dnnl_primitive_desc_destroy(pd);
        return -1;
    }
    struct cn_arg args[4] = {{DNNL_ARG_SRC, x, NULL}, {DNNL_ARG_WEIGHTS, -1, w}, {DNNL_ARG_DST, y, NULL}};
    if (b_t >= 0)
        args[3] = (struct cn_arg){DNNL_ARG_BIAS, -1, b};
    if (cn_add_prim(p, k, "se fc", pd, b_t >= 0 ? 4 : 3, args))
        return -1;
    return y;
}

static int cn_plan_se(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0)
        return -1;
    const struct pvk_shape *xs = &p->values[x].shape, *ys = cn_out_shape(p, k);
    int64_t n = xs->d[0], c = xs->d[1], h = xs->d[2], w = xs->d[3];
    int64_t cr = cn_numel(p, op->weights[0]) / c;
    struct pvk_shape ps = {4, {n, c, 1, 1}}, gs = {2, {n, c}};
    dnnl_memory_desc_t pooled_md, gate2_md, gate4_md;
    if (cn_md_for(p, k, &ps, PVK_DTYPE_F32, &pooled_md) || cn_md_plain(p, k, &gs, PVK_DTYPE_F32, &gate2_md) ||
        cn_md_plain(p, k, &ps, PVK_DTYPE_F32, &gate4_md))
        return -1;
    /* mean over H W */
    dnnl_pooling_v2_desc_t d;
    dnnl_dims_t kernel = {h, w}, ones = {1, 1}, zeros = {0, 0};
    CN_TRY(p, k,
           cpu_dnnl.dnnl_pooling_v2_forward_desc_init(&d, dnnl_forward_inference, dnnl_pooling_avg_exclude_padding,
                                                      &p->values[x].md, &pooled_md, ones, kernel, zeros, zeros, zeros));
    int pooled = cn_src_dst_prim(p, k, &d, &pooled_md, &ps, x, "se mean");
    if (pooled < 0)
        return -1;
    /* [N, C, 1, 1] in NHWC is [N, C] row-major */
    int s = cn_view(p, k, pooled, &gate2_md, &gs, 0);
    int z = s < 0 ? -1 : inner_product(p, k, s, op->weights[0], op->weights[1], cr, PVK_ACT_RELU, 0, 0, false);
    int g = z < 0 ? -1
                  : inner_product(p, k, z, op->weights[2], op->weights[3], c, (enum pvk_act)op->attr.se.gate_act,
                                  op->attr.se.gate_alpha, op->attr.se.gate_beta, op->attr.se.residual != 0);
    int g4 = g < 0 ? -1 : cn_view(p, k, g, &gate4_md, &ps, 0);
    if (g4 < 0)
        return -1;
    int y = binary_prim(p, k, dnnl_binary_mul, x, g4, NULL, &gate4_md, ys, (enum pvk_act)op->act, op->act_alpha,
                        op->act_beta, "se scale");
    return y < 0 ? -1 : cn_set_output(p, k, y);
}

/* ---- layout ops ---------------------------------------------------------------------------- */

static int reorder_view(struct cn_plan *p, int k, int from, const struct pvk_shape *ys)
{
    int y = cn_new_output(p, k, ys);
    if (y < 0)
        return -1;
    dnnl_primitive_attr_t attr;
    dnnl_primitive_desc_t pd;
    if (cn_attr(p, k, &attr))
        return -1;
    dnnl_status_t st = cpu_dnnl.dnnl_reorder_primitive_desc_create(&pd, &p->values[from].md, p->net->engine,
                                                                   &p->values[y].md, p->net->engine, attr);
    cpu_dnnl.dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success)
        return cn_fail_dnnl(p, k, "dnnl_reorder_primitive_desc_create", st);
    struct cn_arg args[2] = {{DNNL_ARG_FROM, from, NULL}, {DNNL_ARG_TO, y, NULL}};
    if (cn_add_prim(p, k, "reorder", pd, 2, args) || cn_finish_act(p, k, y))
        return -1;
    return cn_set_output(p, k, y);
}

static int cn_plan_transpose(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0)
        return -1;
    const struct pvk_shape *ys = cn_out_shape(p, k);
    int nd = p->values[x].shape.ndim;
    /* oneDNN's permutation sends input axis i to output axis perm_d[i] */
    int perm_d[PVK_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        perm_d[op->attr.transpose.perm[i]] = i;
    dnnl_memory_desc_t pmd;
    CN_TRY(p, k, cpu_dnnl.dnnl_memory_desc_permute_axes(&pmd, &p->values[x].md, perm_d));
    int xv = cn_view(p, k, x, &pmd, ys, 0);
    return xv < 0 ? -1 : reorder_view(p, k, xv, ys);
}

static int cn_plan_reshape(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0 || (x = cn_to_plain(p, k, x)) < 0)
        return -1;
    const struct pvk_shape *ys = cn_out_shape(p, k);
    dnnl_memory_desc_t md;
    if (cn_md_plain(p, k, ys, PVK_DTYPE_F32, &md))
        return -1;
    int y = cn_view(p, k, x, &md, ys, 0);
    if (y < 0)
        return -1;
    if (op->act != PVK_ACT_NONE) {
        if ((y = cn_copy_to(p, k, y, &md)) < 0 || cn_finish_act(p, k, y))
            return -1;
    }
    return cn_set_output(p, k, y);
}

static int cn_plan_slice(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0 || (x = cn_to_plain(p, k, x)) < 0)
        return -1;
    const struct pvk_shape *xs = &p->values[x].shape, *ys = cn_out_shape(p, k);
    struct pvk_shape s;
    int64_t first;
    int axis = op->attr.slice.axis;
    if (pvk_slice_out_shape(xs, axis, op->attr.slice.start, op->attr.slice.end, op->attr.slice.step, &s, &first))
        return cn_fail(p, k, "the slice is empty");
    int64_t strides[PVK_MAX_DIMS], st = 1;
    for (int i = xs->ndim - 1; i >= 0; i--) {
        strides[i] = st;
        st *= xs->d[i];
    }
    size_t offset = (size_t)(first * strides[axis]) * sizeof(float);
    strides[axis] *= op->attr.slice.step;
    dnnl_memory_desc_t md;
    if (cn_md_by_strides(p, k, ys->ndim, ys->d, strides, &md))
        return -1;
    int xv = cn_view(p, k, x, &md, ys, offset);
    return xv < 0 ? -1 : reorder_view(p, k, xv, ys);
}

static int cn_plan_argmax(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0 || (x = cn_to_plain(p, k, x)) < 0)
        return -1;
    const struct pvk_shape *ys = cn_out_shape(p, k);
    dnnl_memory_desc_t i_md, v_md;
    if (cn_md_plain(p, k, ys, PVK_DTYPE_I32, &i_md) || cn_md_plain(p, k, ys, PVK_DTYPE_F32, &v_md))
        return -1;
    int index = cn_new_value(p, k, &i_md, ys, PVK_DTYPE_I32, -1, 0);
    int value = cn_new_value(p, k, &v_md, ys, PVK_DTYPE_F32, -1, 0);
    if (index < 0 || value < 0)
        return -1;
    union cn_host_params hp;
    hp.argmax.softmax = op->attr.argmax.value == PVK_ARGMAX_VALUE_SOFTMAX;
    struct cn_arg args[3] = {{0, x, NULL}, {1, index, NULL}, {2, value, NULL}};
    if (cn_add_host(p, k, "argmax", cn_host_argmax, &hp, 3, args))
        return -1;
    cn_set_tensor_value(p, op->outputs[0], index);
    if (op->outputs[1] >= 0)
        cn_set_tensor_value(p, op->outputs[1], value);
    return 0;
}

/* ---- the table ----------------------------------------------------------------------------- */

typedef int (*plan_fn)(struct cn_plan *p, int k);
#define PLAN_ROW(id, value, name, max_in, max_out) [PVK_OP_##id] = cn_plan_##name,
static const plan_fn planners[PVK_OP_COUNT] = {PVK_OPS(PLAN_ROW)};
#undef PLAN_ROW

int cn_plan_op(struct cn_plan *p, int k)
{
    uint32_t type = cn_op(p, k)->type;
    if (type < 1 || type >= PVK_OP_COUNT || !planners[type])
        return cn_fail(p, k, "unknown op type %u", type);
    return planners[type](p, k);
}
