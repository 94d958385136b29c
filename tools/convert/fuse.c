/* Peephole rewrites on the lowered op list, repeated until nothing changes: folding linear
 * per-channel ops into convolutions (in float64), activations into their producers, residual
 * adds into convolutions, bias adds into matmuls, and the squeeze-excitation block into SE. */
#include "convert/fuse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cv_bn_to_affine(const double *gamma, const double *beta, const double *mean, const double *var, double eps,
                     int64_t c, double *scale, double *shift)
{
    for (int64_t k = 0; k < c; k++) {
        scale[k] = gamma[k] / sqrt(var[k] + eps);
        shift[k] = beta[k] - mean[k] * scale[k];
    }
}

void cv_fold_affine_into_conv(double *w, const double *bias, double *bias_out, int64_t oc, int64_t ic_per_group,
                              int64_t groups, int64_t ksize, int transposed, const double *scale, const double *shift)
{
    if (!transposed) {
        int64_t per_oc = ic_per_group * ksize;
        for (int64_t o = 0; o < oc; o++)
            for (int64_t k = 0; k < per_oc; k++)
                w[o * per_oc + k] *= scale[o];
    } else {
        int64_t ocg = oc / groups, ic = ic_per_group * groups;
        for (int64_t i = 0; i < ic; i++)
            for (int64_t j = 0; j < ocg; j++) {
                int64_t o = (i / ic_per_group) * ocg + j;
                for (int64_t k = 0; k < ksize; k++)
                    w[(i * ocg + j) * ksize + k] *= scale[o];
            }
    }
    for (int64_t o = 0; o < oc; o++)
        bias_out[o] = (bias ? bias[o] : 0.0) * scale[o] + shift[o];
}

struct fuse {
    struct cv_graph *g;
    char *err;
    size_t err_len;
};

static const struct onnx_tensor *K(const struct cv_graph *g, int v)
{
    return v >= 0 ? g->values[v].konst : NULL;
}

/* A private copy of constant v (so that folding never changes a weight another op shares). */
static int copy_const(struct cv_graph *g, int v, const char *suffix)
{
    const struct onnx_tensor *t = K(g, v);
    int id = cv_new_const(g, g->values[v].name, suffix, t->ndim, t->dims);
    if (id >= 0)
        memcpy(g->values[id].konst->f, K(g, v)->f, (size_t)t->numel * sizeof(double));
    return id;
}

/* The channel count of a 4-D activation, or -1 when not static. */
static int64_t channels(const struct cv_graph *g, int v)
{
    const struct cv_value *x = &g->values[v];
    return x->ndim == 4 && x->dims[1] > 0 ? x->dims[1] : -1;
}

/* Whether constant b broadcasts against an NCHW tensor of C channels per channel (or scalar). */
static int per_channel(const struct onnx_tensor *b, int64_t C)
{
    if (!b || !b->f)
        return 0;
    if (b->numel == 1)
        return 1;
    if (b->numel != C)
        return 0;
    /* shape [C,1,1] or [1,C,1,1] */
    return (b->ndim == 3 && b->dims[0] == C) || (b->ndim == 4 && b->dims[0] == 1 && b->dims[1] == C);
}

static double at(const struct onnx_tensor *t, int64_t k)
{
    return t->numel == 1 ? t->f[0] : t->f[k];
}

/* BINARY op with a per-channel constant on NCHW -> AFFINE. */
static int binary_to_affine(struct fuse *F, int i)
{
    struct cv_graph *g = F->g;
    struct cv_op *op = &g->ops[i];
    int64_t C = op->n_in == 1 ? channels(g, op->in[0]) : -1;
    const struct onnx_tensor *b = K(g, op->w[0]);
    if (op->op.type != PVK_OP_BINARY || C < 0 || !per_channel(b, C) || op->w[0] < 0)
        return 0;
    int sc = cv_new_const(g, op->op.name, ".scale", 1, &C), sh = cv_new_const(g, op->op.name, ".shift", 1, &C);
    if (sc < 0 || sh < 0)
        return -1;
    b = K(g, op->w[0]);
    double *s = g->values[sc].konst->f, *t = g->values[sh].konst->f;
    for (int64_t c = 0; c < C; c++) {
        double v = at(b, c);
        switch (op->op.attr.binary.kind) {
        case PVK_BIN_ADD:
            s[c] = 1;
            t[c] = v;
            break;
        case PVK_BIN_SUB:
            s[c] = 1;
            t[c] = -v;
            break;
        case PVK_BIN_MUL:
            s[c] = v;
            t[c] = 0;
            break;
        default:
            s[c] = 1.0 / v;
            t[c] = 0;
            break;
        }
    }
    op->op.type = PVK_OP_AFFINE;
    memset(&op->op.attr, 0, sizeof op->op.attr);
    op->w[0] = sc;
    op->w[1] = sh;
    return 1;
}

/* The producer of op i's first input when that value is read by op i alone. */
static int sole_producer(const struct cv_graph *g, int i, int k)
{
    int v = g->ops[i].in[k], first;
    if (v < 0 || cv_op_uses(g, v, &first) != 1)
        return -1;
    return cv_op_producer(g, v);
}

static int is_conv(const struct cv_op *op)
{
    return op->op.type == PVK_OP_CONV2D || op->op.type == PVK_OP_CONV_TRANSPOSE2D;
}

/* Producer P takes consumer C's place: P's result becomes C's. */
static void absorb(struct cv_graph *g, int p, int c)
{
    g->ops[p].out[0] = g->ops[c].out[0];
    g->ops[c].dead = 1;
}

/* conv (no act) -> AFFINE: scale the weights and bias per output channel. */
static int fold_affine_into_conv(struct fuse *F, int c)
{
    struct cv_graph *g = F->g;
    int p = g->ops[c].op.type == PVK_OP_AFFINE ? sole_producer(g, c, 0) : -1;
    if (p < 0 || !is_conv(&g->ops[p]) || g->ops[p].op.act != PVK_ACT_NONE ||
        g->ops[p].op.attr.conv.residual != PVK_RESIDUAL_NONE)
        return 0;
    struct cv_op *P = &g->ops[p];
    int transposed = P->op.type == PVK_OP_CONV_TRANSPOSE2D;
    const struct onnx_tensor *w = K(g, P->w[0]);
    int64_t groups = P->op.attr.conv.group, ksize = w->dims[2] * w->dims[3];
    int64_t oc = transposed ? w->dims[1] * groups : w->dims[0];
    int64_t icg = transposed ? w->dims[0] / groups : w->dims[1];
    if (K(g, g->ops[c].w[0])->numel != oc)
        return 0;
    int nw = copy_const(g, P->w[0], ".fold"), nb = cv_new_const(g, g->values[P->w[0]].name, ".bias", 1, &oc);
    if (nw < 0 || nb < 0)
        return -1;
    P = &g->ops[p];
    cv_fold_affine_into_conv(K(g, nw)->f, P->w[1] >= 0 ? K(g, P->w[1])->f : NULL, K(g, nb)->f, oc, icg, groups, ksize,
                             transposed, K(g, g->ops[c].w[0])->f, K(g, g->ops[c].w[1])->f);
    P->w[0] = nw;
    P->w[1] = nb;
    P->op.act = g->ops[c].op.act;
    P->op.act_alpha = g->ops[c].op.act_alpha;
    P->op.act_beta = g->ops[c].op.act_beta;
    absorb(g, p, c);
    return 1;
}

/* AFFINE (no act) -> AFFINE: one affine. */
static int merge_affines(struct fuse *F, int c)
{
    struct cv_graph *g = F->g;
    int p = g->ops[c].op.type == PVK_OP_AFFINE ? sole_producer(g, c, 0) : -1;
    if (p < 0 || g->ops[p].op.type != PVK_OP_AFFINE || g->ops[p].op.act != PVK_ACT_NONE)
        return 0;
    double *s1 = K(g, g->ops[p].w[0])->f, *t1 = K(g, g->ops[p].w[1])->f;
    const double *s2 = K(g, g->ops[c].w[0])->f, *t2 = K(g, g->ops[c].w[1])->f;
    int64_t C = K(g, g->ops[p].w[0])->numel;
    for (int64_t k = 0; k < C; k++) {
        t1[k] = s2[k] * t1[k] + t2[k]; /* the producer's constants are its own (made by the lowering) */
        s1[k] = s2[k] * s1[k];
    }
    g->ops[p].op.act = g->ops[c].op.act;
    g->ops[p].op.act_alpha = g->ops[c].op.act_alpha;
    g->ops[p].op.act_beta = g->ops[c].op.act_beta;
    absorb(g, p, c);
    return 1;
}

/* AFFINE (no act) -> CONV2D without padding: exact to fold into the conv's input side. */
static int fold_affine_into_next_conv(struct fuse *F, int c)
{
    struct cv_graph *g = F->g;
    struct cv_op *C = &g->ops[c];
    if (C->op.type != PVK_OP_CONV2D || C->op.attr.conv.pad_t || C->op.attr.conv.pad_l || C->op.attr.conv.pad_b ||
        C->op.attr.conv.pad_r)
        return 0;
    int p = sole_producer(g, c, 0);
    if (p < 0 || g->ops[p].op.type != PVK_OP_AFFINE || g->ops[p].op.act != PVK_ACT_NONE)
        return 0;
    const struct onnx_tensor *w = K(g, C->w[0]);
    int64_t oc = w->dims[0], icg = w->dims[1], ks = w->dims[2] * w->dims[3], groups = C->op.attr.conv.group;
    int nw = copy_const(g, C->w[0], ".fold"), nb = cv_new_const(g, g->values[C->w[0]].name, ".bias", 1, &oc);
    if (nw < 0 || nb < 0)
        return -1;
    C = &g->ops[c];
    double *W = K(g, nw)->f, *B = K(g, nb)->f;
    const double *s = K(g, g->ops[p].w[0])->f, *t = K(g, g->ops[p].w[1])->f;
    const double *b0 = C->w[1] >= 0 ? K(g, C->w[1])->f : NULL;
    for (int64_t o = 0; o < oc; o++) {
        double acc = b0 ? b0[o] : 0.0;
        int64_t g0 = o / (oc / groups);
        for (int64_t i = 0; i < icg; i++) {
            int64_t ch = g0 * icg + i;
            for (int64_t k = 0; k < ks; k++) {
                double *wv = &W[(o * icg + i) * ks + k];
                acc += *wv * t[ch];
                *wv *= s[ch];
            }
        }
        B[o] = acc;
    }
    C->w[0] = nw;
    C->w[1] = nb;
    C->in[0] = g->ops[p].in[0];
    g->ops[p].dead = 1;
    return 1;
}

static int takes_act(const struct cv_op *op)
{
    switch (op->op.type) {
    case PVK_OP_CONV2D:
    case PVK_OP_CONV_TRANSPOSE2D:
    case PVK_OP_MATMUL:
    case PVK_OP_BINARY:
    case PVK_OP_AFFINE: return 1;
    default: return 0;
    }
}

/* op (no act) -> UNARY act: the producer applies it. */
static int fuse_act(struct fuse *F, int c)
{
    struct cv_graph *g = F->g;
    int p = g->ops[c].op.type == PVK_OP_UNARY ? sole_producer(g, c, 0) : -1;
    if (p < 0 || !takes_act(&g->ops[p]) || g->ops[p].op.act != PVK_ACT_NONE)
        return 0;
    struct cv_op *P = &g->ops[p];
    if (is_conv(P) && P->op.attr.conv.residual == PVK_RESIDUAL_AFTER_ACT)
        P->op.attr.conv.residual = PVK_RESIDUAL_BEFORE_ACT; /* act(conv + r) */
    P->op.act = g->ops[c].op.act;
    P->op.act_alpha = g->ops[c].op.act_alpha;
    P->op.act_beta = g->ops[c].op.act_beta;
    absorb(g, p, c);
    return 1;
}

/* MATMUL without bias -> ADD of a constant over the last axis: the bias (and the ADD's act). */
static int fuse_matmul_bias(struct fuse *F, int c)
{
    struct cv_graph *g = F->g;
    struct cv_op *C = &g->ops[c];
    if (C->op.type != PVK_OP_BINARY || C->op.attr.binary.kind != PVK_BIN_ADD || C->w[0] < 0)
        return 0;
    int p = sole_producer(g, c, 0);
    if (p < 0 || g->ops[p].op.type != PVK_OP_MATMUL || g->ops[p].w[0] < 0 || g->ops[p].w[1] >= 0 || g->ops[p].op.act)
        return 0;
    const struct onnx_tensor *b = K(g, C->w[0]), *B = K(g, g->ops[p].w[0]);
    int64_t N = B->dims[1];
    if (!b->f || b->numel != N || b->dims[b->ndim - 1] != N)
        return 0;
    int nb = cv_new_const(g, g->values[C->w[0]].name, "", 1, &N);
    if (nb < 0)
        return -1;
    memcpy(K(g, nb)->f, K(g, g->ops[c].w[0])->f, (size_t)N * sizeof(double));
    g->ops[p].w[1] = nb;
    g->ops[p].op.act = g->ops[c].op.act;
    g->ops[p].op.act_alpha = g->ops[c].op.act_alpha;
    g->ops[p].op.act_beta = g->ops[c].op.act_beta;
    absorb(g, p, c);
    return 1;
}

static int same_shape(const struct cv_graph *g, int a, int b)
{
    const struct cv_value *x = &g->values[a], *y = &g->values[b];
    if (x->ndim != y->ndim)
        return 0;
    for (int d = 0; d < x->ndim; d++)
        if (x->dims[d] != y->dims[d])
            return 0;
    return 1;
}

/* ADD(conv(x), r) -> conv with residual r; ADD(se(x), x) -> SE with its residual. The fused op
 * moves to the ADD's place so that r is computed before it. */
static int fuse_residual(struct fuse *F, int c)
{
    struct cv_graph *g = F->g;
    struct cv_op *C = &g->ops[c];
    if (C->op.type != PVK_OP_BINARY || C->op.attr.binary.kind != PVK_BIN_ADD || C->n_in != 2 ||
        !same_shape(g, C->in[0], C->in[1]))
        return 0;
    for (int side = 0; side < 2; side++) {
        int p = sole_producer(g, c, side), r = C->in[1 - side];
        if (p < 0 || r == C->in[side])
            continue;
        struct cv_op P = g->ops[p];
        if (P.op.type == PVK_OP_SE && !P.op.attr.se.residual && P.in[0] == r && !P.op.act && !C->op.act) {
            P.op.attr.se.residual = 1;
        } else if (P.op.type == PVK_OP_CONV2D && P.op.attr.conv.residual == PVK_RESIDUAL_NONE &&
                   (!P.op.act || !C->op.act)) {
            P.op.attr.conv.residual = P.op.act ? PVK_RESIDUAL_AFTER_ACT : PVK_RESIDUAL_BEFORE_ACT;
            if (!P.op.act) {
                P.op.act = C->op.act;
                P.op.act_alpha = C->op.act_alpha;
                P.op.act_beta = C->op.act_beta;
            }
            P.in[1] = r;
            P.n_in = 2;
        } else {
            continue;
        }
        P.out[0] = C->out[0];
        g->ops[c] = P;
        g->ops[p].dead = 1;
        return 1;
    }
    return 0;
}

static int is_1x1(const struct cv_op *op, enum pvk_act act)
{
    const union pvk_op_attr *a = &op->op.attr;
    return op->op.type == PVK_OP_CONV2D && op->op.act == (uint32_t)act && a->conv.kh == 1 && a->conv.kw == 1 &&
           a->conv.sh == 1 && a->conv.sw == 1 && a->conv.group == 1 && !a->conv.pad_t && !a->conv.pad_l &&
           !a->conv.pad_b && !a->conv.pad_r && a->conv.residual == PVK_RESIDUAL_NONE && op->n_in == 1;
}

/* 2-D copy [rows][cols] of a 1x1 conv weight, and its bias (zeros when it has none). */
static int se_weights(struct cv_graph *g, const struct cv_op *conv, int *w, int *b)
{
    const struct onnx_tensor *t = K(g, conv->w[0]);
    int64_t d[2] = {t->dims[0], t->dims[1]};
    int src = conv->w[0], bsrc = conv->w[1];
    *w = cv_new_const(g, g->values[src].name, ".se", 2, d);
    *b = cv_new_const(g, g->values[src].name, ".se_bias", 1, d);
    if (*w < 0 || *b < 0)
        return -1;
    memcpy(K(g, *w)->f, K(g, src)->f, (size_t)(d[0] * d[1]) * sizeof(double));
    if (bsrc >= 0)
        memcpy(K(g, *b)->f, K(g, bsrc)->f, (size_t)d[0] * sizeof(double));
    return 0;
}

/* MUL(x, hardsigmoid(conv1x1(relu(conv1x1(global_avg(x)))))) -> SE. */
static int fuse_se(struct fuse *F, int c)
{
    struct cv_graph *g = F->g;
    struct cv_op *C = &g->ops[c];
    if (C->op.type != PVK_OP_BINARY || C->op.attr.binary.kind != PVK_BIN_MUL || C->n_in != 2 || C->op.act)
        return 0;
    for (int side = 0; side < 2; side++) {
        int x = C->in[1 - side];
        int gi = sole_producer(g, c, side);
        /* clip(a z + b, 0, 1) with a, b folded into the conv is hardsigmoid(z) with alpha 1, beta 0 */
        if (gi >= 0 && is_1x1(&g->ops[gi], PVK_ACT_CLIP) && g->ops[gi].op.act_alpha == 0.0f &&
            g->ops[gi].op.act_beta == 1.0f) {
            g->ops[gi].op.act = PVK_ACT_HARDSIGMOID;
            g->ops[gi].op.act_alpha = 1.0f;
            g->ops[gi].op.act_beta = 0.0f;
        }
        if (gi < 0 || !is_1x1(&g->ops[gi], PVK_ACT_HARDSIGMOID))
            continue;
        int ri = sole_producer(g, gi, 0);
        if (ri < 0 || !is_1x1(&g->ops[ri], PVK_ACT_RELU))
            continue;
        int ai = sole_producer(g, ri, 0);
        if (ai < 0 || g->ops[ai].op.type != PVK_OP_POOL2D || g->ops[ai].op.attr.pool.kind != PVK_POOL_GLOBAL_AVG ||
            g->ops[ai].in[0] != x || g->ops[ai].op.act)
            continue;
        int w1, b1, w2, b2;
        if (se_weights(g, &g->ops[ri], &w1, &b1) || se_weights(g, &g->ops[gi], &w2, &b2))
            return -1;
        C = &g->ops[c];
        float alpha = g->ops[gi].op.act_alpha, beta = g->ops[gi].op.act_beta;
        C->op.type = PVK_OP_SE;
        memset(&C->op.attr, 0, sizeof C->op.attr);
        C->op.attr.se.gate_act = PVK_ACT_HARDSIGMOID;
        C->op.attr.se.gate_alpha = alpha;
        C->op.attr.se.gate_beta = beta;
        C->in[0] = x;
        C->in[1] = -1;
        C->n_in = 1;
        C->w[0] = w1;
        C->w[1] = b1;
        C->w[2] = w2;
        C->w[3] = b2;
        g->ops[ai].dead = g->ops[ri].dead = g->ops[gi].dead = 1;
        return 1;
    }
    return 0;
}

int cv_fuse(struct cv_graph *g, char *err, size_t err_len)
{
    struct fuse F = {g, err, err_len};
    int (*const rules[])(struct fuse *, int) = {binary_to_affine, fold_affine_into_conv,     merge_affines,
                                                fuse_act,         fuse_matmul_bias,          fuse_se,
                                                fuse_residual,    fold_affine_into_next_conv};
    for (int changed = 1; changed;) {
        changed = 0;
        for (size_t r = 0; r < sizeof rules / sizeof *rules; r++)
            for (int i = 0; i < g->n_ops; i++) {
                if (g->ops[i].dead)
                    continue;
                int rc = rules[r](&F, i);
                if (rc < 0)
                    return cv_fail(err, err_len, "%s: out of memory", g->file);
                changed |= rc;
            }
    }
    int n = 0;
    for (int i = 0; i < g->n_ops; i++)
        if (!g->ops[i].dead)
            g->ops[n++] = g->ops[i];
    g->n_ops = n;
    return 0;
}
