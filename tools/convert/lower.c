/* ONNX nodes -> pvk ops. Multi-node spellings (attention, layer norm, HardSwish, Swish, GELU)
 * are recognised first (patterns.c) and replaced by one op each; every other live node must map
 * to one op or the conversion stops naming it. */
#include "convert/lower.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/fuse.h"
#include "convert/infer.h"
#include "convert/patterns.h"

struct lower {
    struct cv_graph *g;
    struct cv_op **pending; /* per node: the op a recognised pattern emits in its place */
    char *err;
    size_t err_len;
};

static int lfail(struct lower *L, int node, const char *msg)
{
    const struct cv_node *nd = &L->g->nodes[node];
    return cv_fail(L->err, L->err_len, "%s: node '%s' (%s): %s", L->g->file, nd->src->name, nd->op, msg);
}

static int out0(const struct cv_graph *g, int node)
{
    return g->nodes[node].out[0];
}

/* --- single nodes ------------------------------------------------------------------------------ */

static struct cv_op *emit(struct lower *L, int node, enum pvk_op_type type)
{
    struct cv_op *op = cv_add_op(L->g, type, L->g->nodes[node].src->name);
    if (op) {
        op->n_out = 1;
        op->out[0] = out0(L->g, node);
    }
    return op;
}

static int activation_input(struct lower *L, int node, int k, int *v)
{
    const struct cv_node *nd = &L->g->nodes[node];
    if (k >= nd->n_in || nd->in[k] < 0)
        return lfail(L, node, "missing input");
    const struct cv_value *val = &L->g->values[nd->in[k]];
    if (val->konst || val->part_val)
        return lfail(L, node, "a constant where a run-time tensor is expected is not supported");
    *v = nd->in[k];
    return 0;
}

static int conv_op(struct lower *L, int node, int transposed)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[node];
    const struct onnx_node *s = nd->src;
    struct cv_op *op = emit(L, node, transposed ? PVK_OP_CONV_TRANSPOSE2D : PVK_OP_CONV2D);
    if (!op)
        return lfail(L, node, "out of memory");
    if (activation_input(L, node, 0, &op->in[0]))
        return -1;
    op->n_in = 1;
    op->w[0] = nd->in[1];
    if (nd->n_in > 2 && nd->in[2] >= 0)
        op->w[1] = nd->in[2]; /* a float constant of OC values: checked by the inference */
    const struct cv_value *w = &g->values[nd->in[1]];
    const struct onnx_attr *pads = onnx_attr_find(s, "pads"), *st = onnx_attr_find(s, "strides"),
                           *dl = onnx_attr_find(s, "dilations");
    op->op.attr.conv.kh = (int32_t)w->dims[2];
    op->op.attr.conv.kw = (int32_t)w->dims[3];
    op->op.attr.conv.sh = st ? (int32_t)st->ints[0] : 1;
    op->op.attr.conv.sw = st ? (int32_t)st->ints[1] : 1;
    op->op.attr.conv.dh = dl ? (int32_t)dl->ints[0] : 1;
    op->op.attr.conv.dw = dl ? (int32_t)dl->ints[1] : 1;
    op->op.attr.conv.pad_t = pads ? (int32_t)pads->ints[0] : 0;
    op->op.attr.conv.pad_l = pads ? (int32_t)pads->ints[1] : 0;
    op->op.attr.conv.pad_b = pads ? (int32_t)pads->ints[2] : 0;
    op->op.attr.conv.pad_r = pads ? (int32_t)pads->ints[3] : 0;
    op->op.attr.conv.group = (int32_t)onnx_attr_int(s, "group", 1);
    return 0;
}

static int lower_bn(struct lower *L, int node)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[node];
    if (nd->n_in != 5 || nd->n_out != 1)
        return lfail(L, node, "expected 5 inputs and 1 output (inference mode)");
    const struct onnx_tensor *t[4];
    for (int k = 0; k < 4; k++) {
        if (nd->in[k + 1] < 0 || !(t[k] = g->values[nd->in[k + 1]].konst) || !t[k]->f)
            return lfail(L, node, "parameters must be float constants");
    }
    int64_t C = t[0]->numel;
    for (int k = 1; k < 4; k++)
        if (t[k]->numel != C)
            return lfail(L, node, "parameters differ in length");
    struct cv_op *op = emit(L, node, PVK_OP_AFFINE);
    if (!op || activation_input(L, node, 0, &op->in[0]))
        return op ? -1 : lfail(L, node, "out of memory");
    op->n_in = 1;
    int sc = cv_new_const(g, nd->src->name, ".scale", 1, &C), sh = cv_new_const(g, nd->src->name, ".shift", 1, &C);
    if (sc < 0 || sh < 0)
        return lfail(L, node, "out of memory");
    cv_bn_to_affine(t[0]->f, t[1]->f, t[2]->f, t[3]->f, onnx_attr_float(nd->src, "epsilon", 1e-5), C,
                    g->values[sc].konst->f, g->values[sh].konst->f);
    op->w[0] = sc;
    op->w[1] = sh;
    return 0;
}

static int clip_act(struct lower *L, int node, struct cv_op *op)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[node];
    double lo = onnx_attr_float(nd->src, "min", -INFINITY), hi = onnx_attr_float(nd->src, "max", INFINITY);
    if (nd->n_in > 1 && nd->in[1] >= 0 && !cv_const_scalar(g, nd->in[1], &lo))
        return lfail(L, node, "min must be a constant scalar");
    if (nd->n_in > 2 && nd->in[2] >= 0 && !cv_const_scalar(g, nd->in[2], &hi))
        return lfail(L, node, "max must be a constant scalar");
    if (lo == 0.0 && hi == 6.0) {
        op->op.act = PVK_ACT_RELU6;
    } else if (lo == 0.0 && isinf(hi)) {
        op->op.act = PVK_ACT_RELU;
    } else {
        op->op.act = PVK_ACT_CLIP;
        op->op.act_alpha = isinf(lo) ? -INFINITY : (float)lo;
        op->op.act_beta = isinf(hi) ? INFINITY : (float)hi;
    }
    return 0;
}

static int lower_binary(struct lower *L, int node)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[node];
    static const char *names[] = {"Add", "Sub", "Mul", "Div"};
    int kind = 0;
    while (strcmp(names[kind], nd->op))
        kind++;
    int a = nd->in[0], b = nd->in[1];
    int ca = g->values[a].konst != NULL, cb = g->values[b].konst != NULL;
    if (ca && (kind == PVK_BIN_ADD || kind == PVK_BIN_MUL)) {
        int t = a;
        a = b;
        b = t;
        ca = 0;
        cb = 1;
    }
    if (ca)
        return lfail(L, node, "a constant first operand of Sub/Div is not supported");
    if (g->values[a].part_val || g->values[b].part_val)
        return lfail(L, node, "arithmetic between a tensor and a run-time shape is not supported");
    struct cv_op *op = emit(L, node, PVK_OP_BINARY);
    if (!op)
        return lfail(L, node, "out of memory");
    op->op.attr.binary.kind = kind;
    op->in[0] = a;
    op->n_in = 1;
    if (cb)
        op->w[0] = b;
    else
        op->in[op->n_in++] = b;
    return 0;
}

static int lower_pool(struct lower *L, int node)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[node];
    struct cv_op *op = emit(L, node, PVK_OP_POOL2D);
    if (!op || activation_input(L, node, 0, &op->in[0]))
        return op ? -1 : lfail(L, node, "out of memory");
    op->n_in = 1;
    if (!strcmp(nd->op, "GlobalAveragePool") || !strcmp(nd->op, "ReduceMean")) {
        op->op.attr.pool.kind = PVK_POOL_GLOBAL_AVG;
        return 0;
    }
    if (!strcmp(nd->op, "GlobalMaxPool"))
        return lfail(L, node, "GlobalMaxPool is not supported");
    const struct onnx_attr *ks = onnx_attr_find(nd->src, "kernel_shape"), *st = onnx_attr_find(nd->src, "strides");
    const struct onnx_attr *pads = onnx_attr_find(nd->src, "pads");
    op->op.attr.pool.kind = !strcmp(nd->op, "MaxPool") ? PVK_POOL_MAX : PVK_POOL_AVG;
    if (onnx_attr_find(nd->src, "dilations")) {
        const struct onnx_attr *d = onnx_attr_find(nd->src, "dilations");
        for (int k = 0; k < d->n_ints; k++)
            if (d->ints[k] != 1)
                return lfail(L, node, "dilated pooling is not supported");
    }
    if (nd->n_out > 1 && nd->out[1] >= 0)
        return lfail(L, node, "MaxPool indices output is not supported");
    op->op.attr.pool.kh = (int32_t)ks->ints[0];
    op->op.attr.pool.kw = (int32_t)ks->ints[1];
    op->op.attr.pool.sh = st ? (int32_t)st->ints[0] : 1;
    op->op.attr.pool.sw = st ? (int32_t)st->ints[1] : 1;
    op->op.attr.pool.pad_t = pads ? (int32_t)pads->ints[0] : 0;
    op->op.attr.pool.pad_l = pads ? (int32_t)pads->ints[1] : 0;
    op->op.attr.pool.pad_b = pads ? (int32_t)pads->ints[2] : 0;
    op->op.attr.pool.pad_r = pads ? (int32_t)pads->ints[3] : 0;
    op->op.attr.pool.count_include_pad = (int32_t)onnx_attr_int(nd->src, "count_include_pad", 0);
    op->op.attr.pool.ceil_mode = (int32_t)onnx_attr_int(nd->src, "ceil_mode", 0);
    return 0;
}

static int lower_resize(struct lower *L, int node)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[node];
    const struct cv_value *x = &g->values[nd->in[0]], *y = &g->values[out0(g, node)];
    const char *mode = onnx_attr_string(nd->src, "mode", "nearest");
    const char *ctm =
        onnx_attr_string(nd->src, "coordinate_transformation_mode", g->opset < 11 ? "asymmetric" : "half_pixel");
    const char *nm = onnx_attr_string(nd->src, "nearest_mode", g->opset < 11 ? "floor" : "round_prefer_floor");
    struct cv_op *op = emit(L, node, PVK_OP_RESIZE);
    if (!op || activation_input(L, node, 0, &op->in[0]))
        return op ? -1 : lfail(L, node, "out of memory");
    op->n_in = 1;
    if (!strcmp(mode, "nearest")) {
        if (strcmp(ctm, "asymmetric") || strcmp(nm, "floor"))
            return lfail(L, node, "nearest resize is supported only with asymmetric coordinates and floor rounding");
        op->op.attr.resize.mode = PVK_RESIZE_NEAREST;
    } else if (!strcmp(mode, "linear") || !strcmp(mode, "bilinear")) {
        if (!strcmp(ctm, "half_pixel"))
            op->op.attr.resize.mode = PVK_RESIZE_BILINEAR_HALF_PIXEL;
        else if (!strcmp(ctm, "align_corners"))
            op->op.attr.resize.mode = PVK_RESIZE_BILINEAR_ALIGN_CORNERS;
        else
            return lfail(L, node, "bilinear resize is supported only with half_pixel or align_corners coordinates");
    } else {
        return lfail(L, node, "resize mode is not supported");
    }
    int scales_in = !strcmp(nd->op, "Upsample") || g->opset < 11 ? 1 : 2;
    const struct onnx_tensor *sc =
        scales_in < nd->n_in && nd->in[scales_in] >= 0 ? g->values[nd->in[scales_in]].konst : NULL;
    double s[4];
    for (int d = 0; d < 4; d++) {
        if (sc && sc->numel == 4)
            s[d] = sc->f ? sc->f[d] : (double)sc->i[d];
        else if (x->dims[d] > 0 && y->dims[d] >= 0)
            s[d] = (double)y->dims[d] / (double)x->dims[d];
        else
            return lfail(L, node, "output size depends on run-time sizes; only constant scales are supported");
    }
    if (s[0] != 1.0 || s[1] != 1.0)
        return lfail(L, node, "resizing the batch or channel axis is not supported");
    op->op.attr.resize.scale_h = (float)s[2];
    op->op.attr.resize.scale_w = (float)s[3];
    return 0;
}

/* RESHAPE target: 0 where the output dim is the input's at the same position (also run-time
 * ones), the static size where known, and one -1 for what remains. */
static int lower_reshape(struct lower *L, int node)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[node];
    const struct cv_value *x = &g->values[nd->in[0]], *y = &g->values[out0(g, node)];
    struct cv_op *op = emit(L, node, PVK_OP_RESHAPE);
    if (!op || activation_input(L, node, 0, &op->in[0]))
        return op ? -1 : lfail(L, node, "out of memory");
    op->n_in = 1;
    if (y->ndim > PVK_MAX_DIMS)
        return lfail(L, node, "too many dims");
    int inferred = 0;
    op->op.attr.reshape.ndim = y->ndim;
    for (int k = 0; k < y->ndim; k++) {
        int64_t d = y->dims[k];
        if (d < 0 && k < x->ndim && x->dims[k] == d) {
            op->op.attr.reshape.shape[k] = 0;
        } else if (d >= 0) {
            op->op.attr.reshape.shape[k] = (int32_t)d;
        } else {
            if (inferred++)
                return lfail(L, node,
                             "target shape has more than one run-time size that cannot be expressed with 0/-1");
            op->op.attr.reshape.shape[k] = -1;
        }
    }
    return 0;
}

static int lower_slice(struct lower *L, int node)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[node];
    const struct cv_value *x = &g->values[nd->in[0]], *y = &g->values[out0(g, node)];
    int changed = -1;
    for (int d = 0; d < x->ndim; d++)
        if (x->dims[d] != y->dims[d]) {
            if (changed >= 0)
                return lfail(L, node, "slicing more than one axis is not supported");
            changed = d;
        }
    int64_t start = 0, end = INT32_MAX, step = 1;
    if (g->opset < 10) {
        const struct onnx_attr *s = onnx_attr_find(nd->src, "starts"), *e = onnx_attr_find(nd->src, "ends"),
                               *a = onnx_attr_find(nd->src, "axes");
        for (int k = 0; s && k < s->n_ints; k++)
            if ((a ? (int)(a->ints[k] < 0 ? a->ints[k] + x->ndim : a->ints[k]) : k) == changed) {
                start = s->ints[k];
                end = e->ints[k];
            }
    } else {
        const struct onnx_tensor *s = g->values[nd->in[1]].konst, *e = g->values[nd->in[2]].konst;
        const struct onnx_tensor *a = nd->n_in > 3 && nd->in[3] >= 0 ? g->values[nd->in[3]].konst : NULL;
        const struct onnx_tensor *st = nd->n_in > 4 && nd->in[4] >= 0 ? g->values[nd->in[4]].konst : NULL;
        for (int64_t k = 0; k < s->numel; k++) {
            int64_t ax = a ? a->i[k] : k;
            if ((ax < 0 ? ax + x->ndim : ax) == changed) {
                start = s->i[k];
                end = e->i[k];
                step = st ? st->i[k] : 1;
            }
        }
    }
    if (changed < 0)
        changed = 0;
    if (step != 1)
        return lfail(L, node, "slices with a step other than 1 are not supported");
    int64_t dim = x->dims[changed];
    if ((start < 0 || end < 0) && dim < 0)
        return lfail(L, node, "negative slice bounds on a run-time size are not supported");
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    if (dim >= 0 && end > dim)
        end = dim;
    if (start < 0)
        start = 0;
    struct cv_op *op = emit(L, node, PVK_OP_SLICE);
    if (!op || activation_input(L, node, 0, &op->in[0]))
        return op ? -1 : lfail(L, node, "out of memory");
    op->n_in = 1;
    op->op.attr.slice.axis = changed;
    op->op.attr.slice.start = (int32_t)start;
    op->op.attr.slice.end = end >= INT32_MAX ? INT32_MAX : (int32_t)end;
    op->op.attr.slice.step = 1;
    return 0;
}

/* One SLICE per used output. */
static int lower_split(struct lower *L, int node)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[node];
    int64_t sizes[CV_MAX_DIMS * 2], start = 0;
    int axis = cv_split_sizes(g, nd, sizes);
    if (axis < 0)
        return lfail(L, node, "split sizes must be static");
    for (int k = 0; k < nd->n_out; k++) {
        int first;
        if (cv_node_uses(g, nd->out[k], &first) > 0) {
            struct cv_op *op = cv_add_op(g, PVK_OP_SLICE, nd->src->name);
            if (!op || activation_input(L, node, 0, &op->in[0]))
                return op ? -1 : lfail(L, node, "out of memory");
            op->n_in = 1;
            op->n_out = 1;
            op->out[0] = nd->out[k];
            op->op.attr.slice.axis = axis;
            op->op.attr.slice.start = (int32_t)start;
            op->op.attr.slice.end = (int32_t)(start + sizes[k]);
            op->op.attr.slice.step = 1;
        }
        start += sizes[k];
    }
    return 0;
}

static int matmul_op(struct lower *L, int node, int gemm)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[node];
    struct cv_op *op = emit(L, node, PVK_OP_MATMUL);
    if (!op || activation_input(L, node, 0, &op->in[0]))
        return op ? -1 : lfail(L, node, "out of memory");
    op->n_in = 1;
    int b = nd->in[1];
    const struct onnx_tensor *bt = g->values[b].konst;
    if (!bt) {
        if (gemm)
            return lfail(L, node, "Gemm with a run-time second operand is not supported");
        op->in[op->n_in++] = b;
        return 0;
    }
    if (bt->ndim != 2 || !bt->f)
        return lfail(L, node, "a constant second operand must be a 2-D float matrix");
    if (!gemm) {
        op->w[0] = b;
        return 0;
    }
    if (onnx_attr_float(nd->src, "alpha", 1.0) != 1.0 || onnx_attr_float(nd->src, "beta", 1.0) != 1.0)
        return lfail(L, node, "Gemm with alpha or beta other than 1 is not supported");
    int tb = (int)onnx_attr_int(nd->src, "transB", 0);
    int64_t K = tb ? bt->dims[1] : bt->dims[0], N = tb ? bt->dims[0] : bt->dims[1], kn[2] = {K, N};
    int w = cv_new_const(g, nd->src->name, ".B", 2, kn);
    if (w < 0)
        return lfail(L, node, "out of memory");
    bt = g->values[b].konst;
    for (int64_t k = 0; k < K; k++)
        for (int64_t n = 0; n < N; n++)
            g->values[w].konst->f[k * N + n] = tb ? bt->f[n * K + k] : bt->f[k * N + n];
    op = &g->ops[g->n_ops - 1];
    op->w[0] = w;
    if (nd->n_in > 2 && nd->in[2] >= 0) {
        const struct onnx_tensor *c = g->values[nd->in[2]].konst;
        if (!c || c->numel != N)
            return lfail(L, node, "Gemm bias must be a constant of N values");
        op->w[1] = cv_channel_const(g, nd->in[2], N, 0.0, nd->src->name, ".bias");
        if (op->w[1] < 0)
            return lfail(L, node, "out of memory");
    }
    return 0;
}

static int nonneg_axis(struct lower *L, int node, int64_t axis, int ndim, int32_t *out)
{
    if (axis < 0)
        axis += ndim;
    if (axis < 0 || axis >= ndim)
        return lfail(L, node, "axis out of range");
    *out = (int32_t)axis;
    return 0;
}

/* Replaces every later use of `from` by `to` (Identity, Dropout). */
static void alias(struct cv_graph *g, int from, int to)
{
    for (int i = 0; i < g->n_nodes; i++)
        for (int k = 0; k < g->nodes[i].n_in; k++)
            if (g->nodes[i].in[k] == from)
                g->nodes[i].in[k] = to;
    if (g->output == from)
        g->output = to;
}

static int lower_conv(struct lower *L, int node)
{
    return conv_op(L, node, 0);
}

static int lower_conv_transpose(struct lower *L, int node)
{
    return conv_op(L, node, 1);
}

static int lower_matmul(struct lower *L, int node)
{
    return matmul_op(L, node, 0);
}

static int lower_gemm(struct lower *L, int node)
{
    return matmul_op(L, node, 1);
}

static int lower_reduce_mean(struct lower *L, int node)
{
    const struct cv_graph *g = L->g;
    const struct cv_value *x = &g->values[g->nodes[node].in[0]], *y = &g->values[out0(g, node)];
    if (x->ndim == 4 && y->ndim == 4 && y->dims[2] == 1 && y->dims[3] == 1 && y->dims[1] == x->dims[1])
        return lower_pool(L, node);
    return lfail(L, node, "only a mean over H and W (or inside a LayerNorm) is supported");
}

/* Identity and Dropout: no op; their readers read the input instead. */
static int lower_identity(struct lower *L, int node)
{
    alias(L->g, out0(L->g, node), L->g->nodes[node].in[0]);
    return 0;
}

static int lower_concat(struct lower *L, int node)
{
    const struct cv_node *nd = &L->g->nodes[node];
    struct cv_op *op = emit(L, node, PVK_OP_CONCAT);
    if (!op)
        return lfail(L, node, "out of memory");
    if (nd->n_in > PVK_MAX_INPUTS)
        return lfail(L, node, "more than 8 inputs");
    for (int k = 0; k < nd->n_in; k++)
        if (activation_input(L, node, k, &op->in[k]))
            return -1;
    op->n_in = nd->n_in;
    return nonneg_axis(L, node, onnx_attr_int(nd->src, "axis", 0), L->g->values[out0(L->g, node)].ndim,
                       &op->op.attr.axis.axis);
}

/* An op of `type` on the node's first input, which must be a run-time tensor. */
static int emit_on_input(struct lower *L, int node, enum pvk_op_type type, struct cv_op **op)
{
    if (!(*op = emit(L, node, type)))
        return lfail(L, node, "out of memory");
    if (activation_input(L, node, 0, &(*op)->in[0]))
        return -1;
    (*op)->n_in = 1;
    return 0;
}

static int lower_act(struct lower *L, int node, enum pvk_act act)
{
    struct cv_op *op;
    if (emit_on_input(L, node, PVK_OP_UNARY, &op))
        return -1;
    op->op.act = act;
    return 0;
}

static int lower_relu(struct lower *L, int node)
{
    return lower_act(L, node, PVK_ACT_RELU);
}

static int lower_sigmoid(struct lower *L, int node)
{
    return lower_act(L, node, PVK_ACT_SIGMOID);
}

static int lower_hardswish(struct lower *L, int node)
{
    return lower_act(L, node, PVK_ACT_HARDSWISH);
}

static int lower_gelu(struct lower *L, int node)
{
    struct cv_op *op;
    if (emit_on_input(L, node, PVK_OP_UNARY, &op))
        return -1;
    const char *approx = onnx_attr_string(L->g->nodes[node].src, "approximate", "none");
    if (strcmp(approx, "none") && strcmp(approx, "tanh"))
        return lfail(L, node, "unknown GELU approximation");
    op->op.act = strcmp(approx, "tanh") ? PVK_ACT_GELU_ERF : PVK_ACT_GELU_TANH;
    return 0;
}

static int lower_hardsigmoid(struct lower *L, int node)
{
    struct cv_op *op;
    if (emit_on_input(L, node, PVK_OP_UNARY, &op))
        return -1;
    op->op.act = PVK_ACT_HARDSIGMOID;
    op->op.act_alpha = (float)onnx_attr_float(L->g->nodes[node].src, "alpha", 0.2);
    op->op.act_beta = (float)onnx_attr_float(L->g->nodes[node].src, "beta", 0.5);
    return 0;
}

static int lower_clip(struct lower *L, int node)
{
    struct cv_op *op;
    if (emit_on_input(L, node, PVK_OP_UNARY, &op))
        return -1;
    return clip_act(L, node, op);
}

static int lower_softmax(struct lower *L, int node)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[node];
    struct cv_op *op;
    if (emit_on_input(L, node, PVK_OP_SOFTMAX, &op))
        return -1;
    int ndim = g->values[nd->in[0]].ndim;
    int64_t axis = onnx_attr_int(nd->src, "axis", g->opset < 13 ? 1 : -1);
    if (nonneg_axis(L, node, axis, ndim, &op->op.attr.axis.axis))
        return -1;
    /* Before opset 13 Softmax works on the input flattened to 2-D at `axis`; that is the
     * same as a softmax over `axis` only when the dims after it are all 1. */
    for (int d = op->op.attr.axis.axis + 1; g->opset < 13 && d < ndim; d++)
        if (g->values[nd->in[0]].dims[d] != 1)
            return lfail(L, node, "opset < 13 Softmax over a non-last axis is not supported");
    return 0;
}

static int lower_transpose(struct lower *L, int node)
{
    const struct cv_node *nd = &L->g->nodes[node];
    struct cv_op *op;
    if (emit_on_input(L, node, PVK_OP_TRANSPOSE, &op))
        return -1;
    const struct onnx_attr *p = onnx_attr_find(nd->src, "perm");
    int ndim = L->g->values[nd->in[0]].ndim;
    if (ndim > PVK_MAX_DIMS)
        return lfail(L, node, "too many dims");
    op->op.attr.transpose.ndim = ndim;
    for (int d = 0; d < ndim; d++)
        op->op.attr.transpose.perm[d] = p ? (int32_t)p->ints[d] : ndim - 1 - d;
    return 0;
}

/* A LayerNormalization node (the decomposed spelling is matched by match_layernorm). */
static int lower_layer_norm(struct lower *L, int node)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[node];
    struct cv_op *op;
    if (emit_on_input(L, node, PVK_OP_LAYERNORM, &op))
        return -1;
    const struct cv_value *x = &g->values[nd->in[0]];
    int64_t C = x->dims[x->ndim - 1];
    int64_t axis = onnx_attr_int(nd->src, "axis", -1);
    if ((axis != -1 && axis != x->ndim - 1) || C <= 0)
        return lfail(L, node, "only normalisation over a static last axis is supported");
    for (int k = 1; k < nd->n_in && k < 3; k++)
        if (nd->in[k] >= 0 && !g->values[nd->in[k]].konst)
            return lfail(L, node, "scale and bias must be constants");
    op->op.attr.norm.eps = (float)onnx_attr_float(nd->src, "epsilon", 1e-5);
    const char *base = nd->src->name;
    int gm = cv_channel_const(g, nd->n_in > 1 ? nd->in[1] : -1, C, 1.0, base, ".gamma");
    int bt = cv_channel_const(g, nd->n_in > 2 ? nd->in[2] : -1, C, 0.0, base, ".beta");
    if (gm < 0 || bt < 0)
        return lfail(L, node, "out of memory");
    g->ops[g->n_ops - 1].w[0] = gm;
    g->ops[g->n_ops - 1].w[1] = bt;
    return 0;
}

struct lower_op {
    const char *name;
    int (*lower)(struct lower *L, int node);
};

/* Looked up by name, one by one: the order is free. */
static const struct lower_op lower_ops[] = {
    {"Add", lower_binary},
    {"AveragePool", lower_pool},
    {"BatchNormalization", lower_bn},
    {"Clip", lower_clip},
    {"Concat", lower_concat},
    {"Conv", lower_conv},
    {"ConvTranspose", lower_conv_transpose},
    {"Div", lower_binary},
    {"Dropout", lower_identity},
    {"Flatten", lower_reshape},
    {"Gelu", lower_gelu},
    {"Gemm", lower_gemm},
    {"GlobalAveragePool", lower_pool},
    {"GlobalMaxPool", lower_pool},
    {"HardSigmoid", lower_hardsigmoid},
    {"HardSwish", lower_hardswish},
    {"Identity", lower_identity},
    {"LayerNormalization", lower_layer_norm},
    {"MatMul", lower_matmul},
    {"MaxPool", lower_pool},
    {"Mul", lower_binary},
    {"ReduceMean", lower_reduce_mean},
    {"Relu", lower_relu},
    {"Reshape", lower_reshape},
    {"Resize", lower_resize},
    {"Sigmoid", lower_sigmoid},
    {"Slice", lower_slice},
    {"Softmax", lower_softmax},
    {"Split", lower_split},
    {"Squeeze", lower_reshape},
    {"Sub", lower_binary},
    {"Transpose", lower_transpose},
    {"Unsqueeze", lower_reshape},
    {"Upsample", lower_resize},
};

static const struct lower_op *lower_op_named(const char *name)
{
    for (size_t i = 0; i < sizeof lower_ops / sizeof *lower_ops; i++)
        if (!strcmp(name, lower_ops[i].name))
            return &lower_ops[i];
    return NULL;
}

static int lower_node(struct lower *L, int node)
{
    const struct lower_op *op = lower_op_named(L->g->nodes[node].op);
    if (op)
        return op->lower(L, node);
    /* Inferred but not lowered (Erf, Tanh, ...): the input is checked first so that a constant
     * input is named as the reason. */
    struct cv_op *unused;
    if (emit_on_input(L, node, PVK_OP_UNARY, &unused))
        return -1;
    return lfail(L, node, "operator (or this use of it) is not supported");
}

int cv_lower(struct cv_graph *g, char *err, size_t err_len)
{
    struct lower L = {g, calloc((size_t)g->n_nodes + 1, sizeof(struct cv_op *)), err, err_len};
    int status = -1;
    if (!L.pending)
        return cv_fail(err, err_len, "out of memory");
    /* Drop what nothing reads (shape arithmetic left over from folding), last node first so
     * that whole chains go. */
    for (int i = g->n_nodes - 1; i >= 0; i--) {
        int used = 0, first;
        for (int k = 0; k < g->nodes[i].n_out && !g->nodes[i].dead; k++)
            used |= cv_node_uses(g, g->nodes[i].out[k], &first) > 0;
        if (!used)
            g->nodes[i].dead = 1;
    }
    if (cv_match_patterns(g, L.pending)) {
        cv_fail(err, err_len, "out of memory");
        goto out;
    }
    for (int i = 0; i < g->n_nodes; i++) {
        if (L.pending[i]) {
            struct cv_op *op = cv_add_op(g, PVK_OP_UNARY, "");
            if (!op) {
                cv_fail(err, err_len, "out of memory");
                goto out;
            }
            *op = *L.pending[i];
        }
        if (!g->nodes[i].dead && lower_node(&L, i))
            goto out;
    }
    status = 0;
out:
    for (int i = 0; i < g->n_nodes; i++)
        free(L.pending[i]);
    free(L.pending);
    return status;
}
