/* The oneDNN executor's matrix ops: MATMUL, LAYERNORM, SOFTMAX and ATTENTION (two matmuls over
 * strided views of the packed qkv, with a softmax between them). */
#include "nn/cpu/cpu_net_internal.h"

/* ---- matrix ops ---------------------------------------------------------------------------- */

static int matmul_prim(struct cn_plan *p, int k, const char *what, int a, int b, dnnl_memory_t b_fixed,
                       const dnnl_memory_desc_t *b_md, dnnl_memory_t bias, const dnnl_memory_desc_t *bias_md, int y,
                       enum pvk_act act, float alpha, float beta, float scale)
{
    dnnl_matmul_desc_t d;
    CN_TRY(p, k, cpu_dnnl.dnnl_matmul_desc_init(&d, &p->values[a].md, b_md, bias ? bias_md : NULL, &p->values[y].md));
    dnnl_primitive_attr_t attr;
    if (cn_attr_act(p, k, act, alpha, beta, false, &attr))
        return -1;
    if (scale != 1.0f && cpu_dnnl.dnnl_primitive_attr_set_output_scales(attr, 1, 0, &scale) != dnnl_success) {
        cpu_dnnl.dnnl_primitive_attr_destroy(attr);
        return cn_fail(p, k, "oneDNN: output scale refused");
    }
    dnnl_primitive_desc_t pd;
    if (cn_pd(p, k, &d, attr, &pd))
        return -1;
    struct cn_arg args[4] = {{DNNL_ARG_SRC, a, NULL}, {DNNL_ARG_WEIGHTS, b, b_fixed}, {DNNL_ARG_DST, y, NULL}};
    if (bias)
        args[3] = (struct cn_arg){DNNL_ARG_BIAS, -1, bias};
    return cn_add_prim(p, k, what, pd, bias ? 4 : 3, args);
}

int cn_plan_matmul(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    const struct pvk_shape *ys = cn_out_shape(p, k);
    int a = cn_tensor_value(p, k, op->inputs[0]);
    if (a < 0 || (a = cn_to_plain(p, k, a)) < 0)
        return -1;
    const struct pvk_shape *as = &p->values[a].shape;
    int nd = ys->ndim;
    int64_t kk = as->d[as->ndim - 1], nn = ys->d[nd - 1];
    bool trans_b = op->attr.matmul.trans_b != 0;
    dnnl_memory_desc_t y_md, bias_md;
    if (cn_md_plain(p, k, ys, PVK_DTYPE_F32, &y_md))
        return -1;
    int y = cn_new_value(p, k, &y_md, ys, PVK_DTYPE_F32, -1, 0);
    if (y < 0)
        return -1;
    dnnl_memory_t bias = NULL;
    if (op->n_inputs == 1) {
        /* a constant B: the rows of a, whatever its leading dims, times B [K][N] */
        int64_t m = pvk_shape_numel(as) / kk;
        struct pvk_shape a2 = {2, {m, kk}}, y2 = {2, {m, nn}};
        int64_t bdims[2] = {kk, nn}, bstrides[2] = {trans_b ? 1 : nn, trans_b ? kk : 1}, bias_dims[2] = {1, nn};
        dnnl_memory_desc_t a2_md, y2_md, user_b, any_b;
        if (cn_md_plain(p, k, &a2, PVK_DTYPE_F32, &a2_md) || cn_md_plain(p, k, &y2, PVK_DTYPE_F32, &y2_md) ||
            cn_md_by_strides(p, k, 2, bdims, bstrides, &user_b) ||
            cn_md_by_tag(p, k, 2, bdims, dnnl_format_tag_any, &any_b) ||
            cn_md_by_tag(p, k, 2, bias_dims, dnnl_ab, &bias_md))
            return -1;
        int av = cn_view(p, k, a, &a2_md, &a2, 0), yv = cn_view(p, k, y, &y2_md, &y2, 0);
        if (av < 0 || yv < 0)
            return -1;
        if (op->weights[1] >= 0 && !(bias = cn_const_memory(p, k, op->weights[1], &bias_md)))
            return -1;
        /* the weights' layout is the primitive's choice: ask it, then repack */
        dnnl_matmul_desc_t d;
        CN_TRY(p, k, cpu_dnnl.dnnl_matmul_desc_init(&d, &a2_md, &any_b, bias ? &bias_md : NULL, &y2_md));
        dnnl_primitive_attr_t attr;
        dnnl_primitive_desc_t probe;
        if (cn_attr(p, k, &attr) || cn_pd(p, k, &d, attr, &probe))
            return -1;
        dnnl_memory_desc_t want = *cpu_dnnl.dnnl_primitive_desc_query_md(probe, dnnl_query_weights_md, 0);
        cpu_dnnl.dnnl_primitive_desc_destroy(probe);
        dnnl_memory_t b =
            cn_packed_memory(p, k, op->weights[0], trans_b ? CN_VIEW_TRANSPOSED : CN_VIEW_AS_IS, &user_b, NULL, &want);
        if (!b)
            return -1;
        if (matmul_prim(p, k, "matmul", av, -1, b, &want, bias, &bias_md, yv, (enum pvk_act)op->act, op->act_alpha,
                        op->act_beta, 1.0f))
            return -1;
        return cn_set_output(p, k, y);
    }
    /* two activations, batch dims broadcast */
    int b = cn_tensor_value(p, k, op->inputs[1]);
    if (b < 0 || (b = cn_to_plain(p, k, b)) < 0)
        return -1;
    const struct pvk_shape *bs = &p->values[b].shape;
    struct pvk_shape ap = {nd, {0}}, bp = {nd, {0}};
    int64_t bstrides[PVK_MAX_DIMS], st = 1;
    for (int i = 0; i < nd; i++) {
        int ia = i - (nd - as->ndim), ib = i - (nd - bs->ndim);
        ap.d[i] = ia >= 0 ? as->d[ia] : 1;
        bp.d[i] = ib >= 0 ? bs->d[ib] : 1;
    }
    /* b's logical [.., K, N]; stored [.., N, K] when transposed */
    struct pvk_shape bl = bp;
    if (trans_b) {
        bl.d[nd - 2] = bp.d[nd - 1];
        bl.d[nd - 1] = bp.d[nd - 2];
    }
    for (int i = nd - 1; i >= 0; i--) {
        bstrides[i] = st;
        st *= bp.d[i];
    }
    if (trans_b) {
        int64_t t = bstrides[nd - 1];
        bstrides[nd - 1] = bstrides[nd - 2];
        bstrides[nd - 2] = t;
    }
    dnnl_memory_desc_t ap_md, bp_md;
    struct pvk_shape bias_shape = {nd, {0}};
    for (int i = 0; i < nd; i++)
        bias_shape.d[i] = i == nd - 1 ? nn : 1;
    if (cn_md_plain(p, k, &ap, PVK_DTYPE_F32, &ap_md) || cn_md_by_strides(p, k, nd, bl.d, bstrides, &bp_md) ||
        cn_md_plain(p, k, &bias_shape, PVK_DTYPE_F32, &bias_md))
        return -1;
    int av = cn_view(p, k, a, &ap_md, &ap, 0), bv = cn_view(p, k, b, &bp_md, &bl, 0);
    if (av < 0 || bv < 0)
        return -1;
    if (op->weights[1] >= 0 && !(bias = cn_const_memory(p, k, op->weights[1], &bias_md)))
        return -1;
    if (matmul_prim(p, k, "matmul", av, bv, NULL, &bp_md, bias, &bias_md, y, (enum pvk_act)op->act, op->act_alpha,
                    op->act_beta, 1.0f))
        return -1;
    return cn_set_output(p, k, y);
}

int cn_plan_layernorm(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0 || (x = cn_to_plain(p, k, x)) < 0)
        return -1;
    const struct pvk_shape *xs = &p->values[x].shape;
    int64_t c = xs->d[xs->ndim - 1];
    unsigned flags = (op->weights[0] >= 0 ? dnnl_use_scale : 0) | (op->weights[1] >= 0 ? dnnl_use_shift : 0);
    dnnl_layer_normalization_desc_t d;
    CN_TRY(p, k,
           cpu_dnnl.dnnl_layer_normalization_forward_desc_init(&d, dnnl_forward_inference, &p->values[x].md, NULL,
                                                               op->attr.norm.eps, flags));
    dnnl_primitive_attr_t attr;
    dnnl_primitive_desc_t pd;
    if (cn_attr(p, k, &attr) || cn_pd(p, k, &d, attr, &pd))
        return -1;
    int64_t cdims[1] = {c};
    dnnl_memory_desc_t c_md;
    dnnl_memory_t gamma = NULL, beta = NULL;
    int y = -1;
    if (!cn_md_by_tag(p, k, 1, cdims, dnnl_x, &c_md) &&
        (op->weights[0] < 0 || (gamma = cn_const_memory(p, k, op->weights[0], &c_md))) &&
        (op->weights[1] < 0 || (beta = cn_const_memory(p, k, op->weights[1], &c_md))))
        y = cn_new_value(p, k, &p->values[x].md, xs, PVK_DTYPE_F32, -1, 0);
    if (y < 0) {
        cpu_dnnl.dnnl_primitive_desc_destroy(pd);
        return -1;
    }
    struct cn_arg args[4] = {{DNNL_ARG_SRC, x, NULL}, {DNNL_ARG_DST, y, NULL}};
    int n = 2;
    if (gamma)
        args[n++] = (struct cn_arg){DNNL_ARG_SCALE, -1, gamma};
    if (beta)
        args[n++] = (struct cn_arg){DNNL_ARG_SHIFT, -1, beta};
    if (cn_add_prim(p, k, "layernorm", pd, n, args) || cn_finish_act(p, k, y))
        return -1;
    return cn_set_output(p, k, y);
}

/* softmax over `axis` of value x into y (which may be x). */
static int softmax_prim(struct cn_plan *p, int k, int x, int y, int axis)
{
    dnnl_softmax_v2_desc_t d;
    CN_TRY(p, k,
           cpu_dnnl.dnnl_softmax_v2_forward_desc_init(&d, dnnl_forward_inference, dnnl_softmax_accurate,
                                                      &p->values[x].md, &p->values[y].md, axis));
    dnnl_primitive_attr_t attr;
    dnnl_primitive_desc_t pd;
    if (cn_attr(p, k, &attr) || cn_pd(p, k, &d, attr, &pd))
        return -1;
    struct cn_arg args[2] = {{DNNL_ARG_SRC, x, NULL}, {DNNL_ARG_DST, y, NULL}};
    return cn_add_prim(p, k, "softmax", pd, 2, args);
}

int cn_plan_softmax(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    int x = cn_tensor_value(p, k, op->inputs[0]);
    if (x < 0 || (x = cn_to_plain(p, k, x)) < 0)
        return -1;
    int y = cn_new_value(p, k, &p->values[x].md, &p->values[x].shape, PVK_DTYPE_F32, -1, 0);
    if (y < 0 || softmax_prim(p, k, x, y, op->attr.axis.axis) || cn_finish_act(p, k, y))
        return -1;
    return cn_set_output(p, k, y);
}

/* Per head: softmax(scale q k^T) v, as two matmuls over strided views of the packed qkv
 * [N, T, 3][heads][d] and a softmax between them; the second writes [N, T, heads, d] directly. */
int cn_plan_attention(struct cn_plan *p, int k)
{
    const struct pvk_op *op = cn_op(p, k);
    int qkv = cn_tensor_value(p, k, op->inputs[0]);
    if (qkv < 0 || (qkv = cn_to_plain(p, k, qkv)) < 0)
        return -1;
    const struct pvk_shape *ys = cn_out_shape(p, k);
    int64_t n = ys->d[0], t = ys->d[1], c = ys->d[2], heads = op->attr.attention.heads, dh = c / heads;
    int64_t qdims[4] = {n, heads, t, dh}, qstrides[4] = {t * 3 * c, dh, 3 * c, 1};
    int64_t kdims[4] = {n, heads, dh, t}, kstrides[4] = {t * 3 * c, dh, 1, 3 * c};
    int64_t odims[4] = {n, heads, t, dh}, ostrides[4] = {t * c, dh, c, 1};
    struct pvk_shape ss = {4, {n, heads, t, t}}, qs = {4, {n, heads, t, dh}}, ks = {4, {n, heads, dh, t}};
    dnnl_memory_desc_t q_md, k_md, v_md, s_md, o_md, y_md;
    if (cn_md_by_strides(p, k, 4, qdims, qstrides, &q_md) || cn_md_by_strides(p, k, 4, kdims, kstrides, &k_md) ||
        cn_md_by_strides(p, k, 4, qdims, qstrides, &v_md) || cn_md_by_strides(p, k, 4, odims, ostrides, &o_md) ||
        cn_md_plain(p, k, &ss, PVK_DTYPE_F32, &s_md) || cn_md_plain(p, k, ys, PVK_DTYPE_F32, &y_md))
        return -1;
    int q = cn_view(p, k, qkv, &q_md, &qs, 0);
    int kv = cn_view(p, k, qkv, &k_md, &ks, (size_t)c * sizeof(float));
    int v = cn_view(p, k, qkv, &v_md, &qs, (size_t)(2 * c) * sizeof(float));
    int s = cn_new_value(p, k, &s_md, &ss, PVK_DTYPE_F32, -1, 0);
    int y = cn_new_value(p, k, &y_md, ys, PVK_DTYPE_F32, -1, 0);
    if (q < 0 || kv < 0 || v < 0 || s < 0 || y < 0)
        return -1;
    int o = cn_view(p, k, y, &o_md, &qs, 0);
    if (o < 0 ||
        matmul_prim(p, k, "qk", q, kv, NULL, &k_md, NULL, NULL, s, PVK_ACT_NONE, 0, 0, op->attr.attention.scale) ||
        softmax_prim(p, k, s, s, 3) ||
        matmul_prim(p, k, "pv", s, v, NULL, &v_md, NULL, NULL, o, PVK_ACT_NONE, 0, 0, 1.0f) || cn_finish_act(p, k, y))
        return -1;
    return cn_set_output(p, k, y);
}
