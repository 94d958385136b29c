/* ONNX nodes -> pvk ops. Multi-node spellings (attention, layer norm, HardSwish, Swish, GELU)
 * are recognised first and replaced by one op each; every other live node must map to one op
 * or the conversion stops naming it. */
#include "convert/lower.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/fuse.h"
#include "convert/infer.h"

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

static int is_op(const struct cv_graph *g, int node, const char *op)
{
    return node >= 0 && !g->nodes[node].dead && !strcmp(g->nodes[node].op, op);
}

/* The only consumer of value v (a live node), or -1 if it has none or several. */
static int sole_consumer(const struct cv_graph *g, int v)
{
    int first;
    return cv_node_uses(g, v, &first) == 1 ? first : -1;
}

static int live_producer(const struct cv_graph *g, int v)
{
    int p = v >= 0 ? g->values[v].producer : -1;
    return p >= 0 && !g->nodes[p].dead ? p : -1;
}

static int const_scalar(const struct cv_graph *g, int v, double *out)
{
    if (v < 0 || !g->values[v].konst || g->values[v].konst->numel != 1)
        return 0;
    const struct onnx_tensor *t = g->values[v].konst;
    *out = t->f ? t->f[0] : (double)t->i[0];
    return 1;
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-6 * fmax(1.0, fabs(b));
}

/* For a binary node with one input `x`: the other input. -1 if x is not an input. */
static int other_input(const struct cv_graph *g, int node, int x)
{
    const struct cv_node *nd = &g->nodes[node];
    if (nd->n_in != 2)
        return -1;
    return nd->in[0] == x ? nd->in[1] : nd->in[1] == x ? nd->in[0] : -1;
}

/* A binary node `op` with inputs x and a scalar constant: returns the constant in *c. */
static int scalar_op(const struct cv_graph *g, int node, const char *op, int x, double *c)
{
    if (!is_op(g, node, op))
        return 0;
    const struct cv_node *nd = &g->nodes[node];
    if (!strcmp(op, "Sub") || !strcmp(op, "Div") || !strcmp(op, "Pow"))
        return nd->in[0] == x && const_scalar(g, nd->in[1], c);
    int o = other_input(g, node, x);
    return o >= 0 && const_scalar(g, o, c);
}

static int out0(const struct cv_graph *g, int node)
{
    return g->nodes[node].out[0];
}

static struct cv_op *new_pending(struct lower *L, int at, enum pvk_op_type type, int node_for_name)
{
    struct cv_op *op = calloc(1, sizeof *op);
    if (!op)
        return NULL;
    op->op.type = (uint32_t)type;
    snprintf(op->op.name, sizeof op->op.name, "%s", L->g->nodes[node_for_name].src->name);
    for (int k = 0; k < PVK_MAX_INPUTS; k++) op->in[k] = -1;
    for (int k = 0; k < 2; k++) op->out[k] = -1;
    for (int k = 0; k < PVK_MAX_WEIGHTS; k++) op->w[k] = -1;
    free(L->pending[at]);
    L->pending[at] = op;
    return op;
}

static void kill(struct cv_graph *g, const int *nodes, int n)
{
    for (int k = 0; k < n; k++)
        g->nodes[nodes[k]].dead = 1;
}

static int max_of(const int *v, int n)
{
    int m = v[0];
    for (int k = 1; k < n; k++)
        if (v[k] > m)
            m = v[k];
    return m;
}

static int emit_unary_pattern(struct lower *L, const int *nodes, int n, int x, int y, enum pvk_act act)
{
    int at = max_of(nodes, n);
    struct cv_op *op = new_pending(L, at, PVK_OP_UNARY, nodes[0]);
    if (!op)
        return -1;
    op->op.act = (uint32_t)act;
    op->n_in = 1;
    op->in[0] = x;
    op->n_out = 1;
    op->out[0] = y;
    kill(L->g, nodes, n);
    return 1;
}

/* x*relu6(x+3)/6: Add(x,3) -> Clip(0,6) -> Mul(x, .) -> Div(6) or Mul(1/6); also
 * Mul(x, HardSigmoid(x, 1/6, 0.5)). */
static int match_hardswish(struct lower *L, int n0)
{
    struct cv_graph *g = L->g;
    const struct cv_node *nd = &g->nodes[n0];
    double c;
    if (is_op(g, n0, "HardSigmoid")) {
        int x = nd->in[0], mul = sole_consumer(g, out0(g, n0));
        if (!near(onnx_attr_float(nd->src, "alpha", 0.2), 1.0 / 6) || !near(onnx_attr_float(nd->src, "beta", 0.5), 0.5) ||
            !is_op(g, mul, "Mul") || other_input(g, mul, out0(g, n0)) != x)
            return 0;
        int nodes[] = {n0, mul};
        return emit_unary_pattern(L, nodes, 2, x, out0(g, mul), PVK_ACT_HARDSWISH);
    }
    if (!is_op(g, n0, "Add") || nd->n_in != 2)
        return 0;
    for (int side = 0; side < 2; side++) {
        int x = nd->in[side];
        if (!scalar_op(g, n0, "Add", x, &c) || !near(c, 3.0) || g->values[x].konst)
            continue;
        int clip = sole_consumer(g, out0(g, n0));
        if (!is_op(g, clip, "Clip"))
            return 0;
        double lo = onnx_attr_float(g->nodes[clip].src, "min", -INFINITY), hi = onnx_attr_float(g->nodes[clip].src, "max", INFINITY);
        if (g->nodes[clip].n_in > 1 && !const_scalar(g, g->nodes[clip].in[1], &lo)) return 0;
        if (g->nodes[clip].n_in > 2 && !const_scalar(g, g->nodes[clip].in[2], &hi)) return 0;
        if (lo != 0.0 || hi != 6.0)
            return 0;
        int mul = sole_consumer(g, out0(g, clip));
        if (!is_op(g, mul, "Mul") || other_input(g, mul, out0(g, clip)) != x)
            return 0;
        int div = sole_consumer(g, out0(g, mul));
        if (!(scalar_op(g, div, "Div", out0(g, mul), &c) && near(c, 6.0)) &&
            !(scalar_op(g, div, "Mul", out0(g, mul), &c) && near(c, 1.0 / 6)))
            return 0;
        int nodes[] = {n0, clip, mul, div};
        return emit_unary_pattern(L, nodes, 4, x, out0(g, div), PVK_ACT_HARDSWISH);
    }
    return 0;
}

/* x*sigmoid(x), also spelled x*sigmoid(1.0*x). */
static int match_swish(struct lower *L, int n0)
{
    struct cv_graph *g = L->g;
    if (!is_op(g, n0, "Sigmoid"))
        return 0;
    int s_in = g->nodes[n0].in[0], x = s_in, pre = live_producer(g, s_in);
    double c;
    int nodes[3], n = 0;
    if (pre >= 0 && is_op(g, pre, "Mul") && sole_consumer(g, s_in) == n0) {
        const struct cv_node *p = &g->nodes[pre];
        int cand = const_scalar(g, p->in[1], &c) ? p->in[0] : const_scalar(g, p->in[0], &c) ? p->in[1] : -1;
        if (cand >= 0 && c == 1.0) {
            x = cand;
            nodes[n++] = pre;
        }
    }
    int mul = sole_consumer(g, out0(g, n0));
    if (!is_op(g, mul, "Mul") || other_input(g, mul, out0(g, n0)) != x)
        return 0;
    nodes[n++] = n0;
    nodes[n++] = mul;
    return emit_unary_pattern(L, nodes, n, x, out0(g, mul), PVK_ACT_SWISH);
}

/* The common tail of both GELU spellings: e = 1 + f(x); y = x * e * 0.5 in any grouping. */
static int gelu_tail(struct lower *L, int *nodes, int n, int x, int e, enum pvk_act act)
{
    struct cv_graph *g = L->g;
    double c;
    int m1 = sole_consumer(g, e);
    if (!is_op(g, m1, "Mul"))
        return 0;
    int other = other_input(g, m1, e);
    if (other == x) {
        /* (x * e) * 0.5 */
        int m2 = sole_consumer(g, out0(g, m1));
        if (!(scalar_op(g, m2, "Mul", out0(g, m1), &c) && near(c, 0.5)) && !(scalar_op(g, m2, "Div", out0(g, m1), &c) && near(c, 2.0)))
            return 0;
        nodes[n++] = m1;
        nodes[n++] = m2;
        return emit_unary_pattern(L, nodes, n, x, out0(g, m2), act);
    }
    if (const_scalar(g, other, &c) && near(c, 0.5)) {
        /* (e * 0.5) * x */
        int m2 = sole_consumer(g, out0(g, m1));
        if (!is_op(g, m2, "Mul") || other_input(g, m2, out0(g, m1)) != x)
            return 0;
        nodes[n++] = m1;
        nodes[n++] = m2;
        return emit_unary_pattern(L, nodes, n, x, out0(g, m2), act);
    }
    /* (x * 0.5) * e */
    int half = live_producer(g, other);
    if (half < 0 || !scalar_op(g, half, "Mul", x, &c) || !near(c, 0.5) || sole_consumer(g, other) != m1)
        return 0;
    nodes[n++] = half;
    nodes[n++] = m1;
    return emit_unary_pattern(L, nodes, n, x, out0(g, m1), act);
}

static int match_gelu(struct lower *L, int n0)
{
    struct cv_graph *g = L->g;
    int is_erf = is_op(g, n0, "Erf"), is_tanh = is_op(g, n0, "Tanh");
    if (!is_erf && !is_tanh)
        return 0;
    int nodes[10], n = 0, x = -1;
    double c;
    int in = g->nodes[n0].in[0], pre = live_producer(g, in);
    if (pre < 0 || sole_consumer(g, in) != n0)
        return 0;
    const struct cv_node *p = &g->nodes[pre];
    if (is_erf) {
        /* x / sqrt(2) or x * (1/sqrt(2)) */
        int cand = p->n_in == 2 ? p->in[0] : -1;
        if (is_op(g, pre, "Div") && scalar_op(g, pre, "Div", cand, &c) && near(c, sqrt(2.0)))
            x = cand;
        else if (is_op(g, pre, "Mul") && p->n_in == 2) {
            for (int s = 0; s < 2 && x < 0; s++)
                if (scalar_op(g, pre, "Mul", p->in[s], &c) && near(c, 1.0 / sqrt(2.0)))
                    x = p->in[s];
        }
        if (x < 0)
            return 0;
        nodes[n++] = pre;
    } else {
        /* sqrt(2/pi) * (x + 0.044715 * x^3) */
        int a = -1;
        if (!is_op(g, pre, "Mul") || p->n_in != 2)
            return 0;
        for (int s = 0; s < 2 && a < 0; s++)
            if (scalar_op(g, pre, "Mul", p->in[s], &c) && near(c, sqrt(2.0 / M_PI)))
                a = p->in[s];
        int add = live_producer(g, a);
        if (a < 0 || !is_op(g, add, "Add") || sole_consumer(g, a) != pre)
            return 0;
        for (int s = 0; s < 2 && x < 0; s++) {
            int cand = g->nodes[add].in[s], cube = g->nodes[add].in[1 - s];
            int m = live_producer(g, cube);
            if (m < 0 || !is_op(g, m, "Mul") || sole_consumer(g, cube) != add)
                continue;
            for (int t = 0; t < 2 && x < 0; t++) {
                int pw = g->nodes[m].in[t];
                int pn = live_producer(g, pw);
                if (scalar_op(g, m, "Mul", pw, &c) && near(c, 0.044715) && pn >= 0 && sole_consumer(g, pw) == m &&
                    scalar_op(g, pn, "Pow", cand, &c) && c == 3.0) {
                    x = cand;
                    nodes[n++] = pn;
                    nodes[n++] = m;
                }
            }
        }
        if (x < 0)
            return 0;
        nodes[n++] = add;
        nodes[n++] = pre;
    }
    nodes[n++] = n0;
    int one = sole_consumer(g, out0(g, n0));
    if (!scalar_op(g, one, "Add", out0(g, n0), &c) || c != 1.0)
        return 0;
    nodes[n++] = one;
    return gelu_tail(L, nodes, n, x, out0(g, one), is_erf ? PVK_ACT_GELU_ERF : PVK_ACT_GELU_TANH);
}

static int reduce_last_axis(const struct cv_graph *g, int node, int x)
{
    const struct cv_node *nd = &g->nodes[node];
    const struct onnx_attr *a = onnx_attr_find(nd->src, "axes");
    int ndim = g->values[x].ndim;
    if (!is_op(g, node, "ReduceMean") || nd->in[0] != x || !a || a->n_ints != 1 || onnx_attr_int(nd->src, "keepdims", 1) != 1)
        return 0;
    return a->ints[0] == -1 || a->ints[0] == ndim - 1;
}

/* Per-channel constant of C values (a scalar is broadcast) copied into a new constant. */
static int channel_const(struct cv_graph *g, int v, int64_t C, double fill, const char *base, const char *suffix)
{
    int id = cv_new_const(g, base, suffix, 1, &C);
    if (id < 0)
        return -1;
    double *dst = g->values[id].konst->f;
    const struct onnx_tensor *t = v >= 0 ? g->values[v].konst : NULL;
    for (int64_t k = 0; k < C; k++)
        dst[k] = !t ? fill : t->numel == 1 ? (t->f ? t->f[0] : (double)t->i[0]) : (t->f ? t->f[k] : (double)t->i[k]);
    return id;
}

static int match_layernorm(struct lower *L, int n0)
{
    struct cv_graph *g = L->g;
    if (!is_op(g, n0, "ReduceMean"))
        return 0;
    int x = g->nodes[n0].in[0];
    if (!reduce_last_axis(g, n0, x))
        return 0;
    int64_t C = g->values[x].dims[g->values[x].ndim - 1];
    int sub = sole_consumer(g, out0(g, n0));
    if (C <= 0 || !is_op(g, sub, "Sub") || g->nodes[sub].in[0] != x || g->nodes[sub].in[1] != out0(g, n0))
        return 0;
    int d = out0(g, sub), first, uses = cv_node_uses(g, d, &first);
    if (uses != 2)
        return 0;
    int sq = -1, div = -1;
    double c, eps;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].dead || i == sub)
            continue;
        if (scalar_op(g, i, "Pow", d, &c) && c == 2.0)
            sq = i;
        else if (is_op(g, i, "Mul") && g->nodes[i].in[0] == d && g->nodes[i].in[1] == d)
            sq = i;
        else if (is_op(g, i, "Div") && g->nodes[i].in[0] == d)
            div = i;
    }
    if (sq < 0 || div < 0)
        return 0;
    int var = sole_consumer(g, out0(g, sq));
    if (var < 0 || !reduce_last_axis(g, var, out0(g, sq)))
        return 0;
    int add = sole_consumer(g, out0(g, var));
    if (!scalar_op(g, add, "Add", out0(g, var), &eps))
        return 0;
    int sqrt_n = sole_consumer(g, out0(g, add));
    if (!is_op(g, sqrt_n, "Sqrt") || sole_consumer(g, out0(g, sqrt_n)) != div || g->nodes[div].in[1] != out0(g, sqrt_n))
        return 0;
    int nodes[9] = {n0, sub, sq, var, add, sqrt_n, div}, n = 7;
    int y = out0(g, div), gamma = -1, beta = -1;
    int mul = sole_consumer(g, y);
    if (is_op(g, mul, "Mul")) {
        int o = other_input(g, mul, y);
        if (o >= 0 && g->values[o].konst && (g->values[o].konst->numel == C || g->values[o].konst->numel == 1)) {
            gamma = o;
            nodes[n++] = mul;
            y = out0(g, mul);
        }
    }
    int addb = sole_consumer(g, y);
    if (is_op(g, addb, "Add")) {
        int o = other_input(g, addb, y);
        if (o >= 0 && g->values[o].konst && (g->values[o].konst->numel == C || g->values[o].konst->numel == 1)) {
            beta = o;
            nodes[n++] = addb;
            y = out0(g, addb);
        }
    }
    struct cv_op *op = new_pending(L, max_of(nodes, n), PVK_OP_LAYERNORM, n0);
    if (!op)
        return -1;
    const char *base = g->nodes[n0].src->name;
    op->n_in = 1;
    op->in[0] = x;
    op->n_out = 1;
    op->out[0] = y;
    op->op.attr.norm.eps = (float)eps;
    if ((op->w[0] = channel_const(g, gamma, C, 1.0, base, ".gamma")) < 0 || (op->w[1] = channel_const(g, beta, C, 0.0, base, ".beta")) < 0)
        return -1;
    kill(g, nodes, n);
    return 1;
}

static int perm_is(const struct cv_graph *g, int node, const int64_t *perm, int n)
{
    const struct onnx_attr *a = onnx_attr_find(g->nodes[node].src, "perm");
    if (!is_op(g, node, "Transpose") || !a || a->n_ints != n)
        return 0;
    for (int k = 0; k < n; k++)
        if (a->ints[k] != perm[k])
            return 0;
    return 1;
}

static int squeezes_axis0(const struct cv_graph *g, int sq)
{
    double c;
    const struct onnx_attr *axes = sq >= 0 ? onnx_attr_find(g->nodes[sq].src, "axes") : NULL;
    return is_op(g, sq, "Squeeze") && ((axes && axes->n_ints == 1 && axes->ints[0] == 0) ||
                                       (g->nodes[sq].n_in > 1 && const_scalar(g, g->nodes[sq].in[1], &c) && c == 0));
}

/* Which of q/k/v a consumer of the transposed qkv selects: Slice(axis 0, i:i+1) -> Squeeze(0),
 * or Gather(axis 0, i). Returns the selected value and adds the nodes. */
static int qkv_pick(struct cv_graph *g, int node, int tv, int *which, int *nodes, int *n)
{
    const struct cv_node *nd = &g->nodes[node];
    if (is_op(g, node, "Gather") && onnx_attr_int(nd->src, "axis", 0) == 0) {
        double c;
        if (!const_scalar(g, nd->in[1], &c) || g->values[nd->in[1]].konst->ndim != 0)
            return -1;
        *which = (int)c;
        nodes[(*n)++] = node;
        return out0(g, node);
    }
    if (!is_op(g, node, "Slice") || nd->in[0] != tv)
        return -1;
    const struct cv_value *sv = &g->values[out0(g, node)];
    if (sv->ndim != 5 || sv->dims[0] != 1)
        return -1;
    /* The slice's start: the one position whose shape dropped; recovered from the inputs. */
    int start = -1;
    if (g->opset < 10) {
        const struct onnx_attr *s = onnx_attr_find(nd->src, "starts"), *a = onnx_attr_find(nd->src, "axes");
        if (s && s->n_ints == 1 && (!a || (a->n_ints == 1 && a->ints[0] == 0)))
            start = (int)s->ints[0];
    } else {
        double c, ax = 0;
        if (const_scalar(g, nd->in[1], &c) && (nd->n_in < 4 || nd->in[3] < 0 || const_scalar(g, nd->in[3], &ax)) && ax == 0)
            start = (int)c;
    }
    int sq = sole_consumer(g, out0(g, node));
    if (start < 0 || !squeezes_axis0(g, sq))
        return -1;
    *which = start;
    nodes[(*n)++] = node;
    nodes[(*n)++] = sq;
    return out0(g, sq);
}

/* A chain of scalar Mul/Div by constants after v; multiplies *scale and returns the end. */
static int scale_chain(struct cv_graph *g, int v, double *scale, int *nodes, int *n)
{
    for (;;) {
        int m = sole_consumer(g, v);
        double c;
        if (scalar_op(g, m, "Mul", v, &c))
            *scale *= c;
        else if (scalar_op(g, m, "Div", v, &c))
            *scale /= c;
        else
            return v;
        nodes[(*n)++] = m;
        v = out0(g, m);
    }
}

static int match_attention(struct lower *L, int n0)
{
    struct cv_graph *g = L->g;
    if (!is_op(g, n0, "Reshape"))
        return 0;
    int qkv = g->nodes[n0].in[0], rv = out0(g, n0);
    const struct cv_value *r = &g->values[rv];
    if (r->ndim != 5 || r->dims[2] != 3 || r->dims[3] <= 0 || r->dims[4] <= 0 || g->values[qkv].ndim != 3)
        return 0;
    int heads = (int)r->dims[3], hd = (int)r->dims[4];
    static const int64_t p_qkv[] = {2, 0, 3, 1, 4}, p_k[] = {0, 1, 3, 2}, p_out[] = {0, 2, 1, 3};
    int tr = sole_consumer(g, rv);
    if (tr < 0 || !perm_is(g, tr, p_qkv, 5))
        return 0;
    int tv = out0(g, tr);
    int nodes[32], n = 0, qkv_v[3] = {-1, -1, -1};
    nodes[n++] = n0;
    nodes[n++] = tr;
    for (int i = 0; i < g->n_nodes; i++) {
        if (g->nodes[i].dead)
            continue;
        int uses_tv = 0;
        for (int k = 0; k < g->nodes[i].n_in; k++)
            uses_tv |= g->nodes[i].in[k] == tv;
        if (!uses_tv)
            continue;
        if (is_op(g, i, "Split") && g->nodes[i].n_out == 3 && g->nodes[i].in[0] == tv) {
            int64_t sizes[CV_MAX_DIMS * 2];
            if (cv_split_sizes(g, &g->nodes[i], sizes) != 0 || sizes[0] != 1 || sizes[1] != 1 || sizes[2] != 1)
                return 0;
            nodes[n++] = i;
            for (int k = 0; k < 3; k++) {
                int sq = sole_consumer(g, g->nodes[i].out[k]);
                if (!squeezes_axis0(g, sq) || qkv_v[k] >= 0)
                    return 0;
                nodes[n++] = sq;
                qkv_v[k] = out0(g, sq);
            }
            continue;
        }
        int which = -1, v = qkv_pick(g, i, tv, &which, nodes, &n);
        if (v < 0 || which < 0 || which > 2 || qkv_v[which] >= 0)
            return 0;
        qkv_v[which] = v;
    }
    if (qkv_v[0] < 0 || qkv_v[1] < 0 || qkv_v[2] < 0)
        return 0;
    double scale = 1.0;
    int q = scale_chain(g, qkv_v[0], &scale, nodes, &n);
    int kt = sole_consumer(g, qkv_v[1]);
    if (kt < 0 || !perm_is(g, kt, p_k, 4))
        return 0;
    nodes[n++] = kt;
    int mm1 = sole_consumer(g, q);
    if (!is_op(g, mm1, "MatMul") || g->nodes[mm1].in[0] != q || g->nodes[mm1].in[1] != out0(g, kt))
        return 0;
    nodes[n++] = mm1;
    int s = scale_chain(g, out0(g, mm1), &scale, nodes, &n);
    int sm = sole_consumer(g, s);
    if (!is_op(g, sm, "Softmax"))
        return 0;
    int64_t axis = onnx_attr_int(g->nodes[sm].src, "axis", g->opset < 13 ? 1 : -1);
    if (axis != -1 && axis != 3)
        return 0;
    nodes[n++] = sm;
    int mm2 = sole_consumer(g, out0(g, sm));
    if (!is_op(g, mm2, "MatMul") || g->nodes[mm2].in[0] != out0(g, sm) || g->nodes[mm2].in[1] != qkv_v[2] ||
        sole_consumer(g, qkv_v[2]) != mm2)
        return 0;
    nodes[n++] = mm2;
    int to = sole_consumer(g, out0(g, mm2));
    if (to < 0 || !perm_is(g, to, p_out, 4))
        return 0;
    nodes[n++] = to;
    int fr = sole_consumer(g, out0(g, to));
    if (!is_op(g, fr, "Reshape") || g->values[out0(g, fr)].ndim != 3 || g->values[out0(g, fr)].dims[2] != (int64_t)heads * hd)
        return 0;
    nodes[n++] = fr;
    struct cv_op *op = new_pending(L, max_of(nodes, n), PVK_OP_ATTENTION, n0);
    if (!op)
        return -1;
    op->n_in = 1;
    op->in[0] = qkv;
    op->n_out = 1;
    op->out[0] = out0(g, fr);
    op->op.attr.attention.heads = heads;
    op->op.attr.attention.scale = (float)scale;
    kill(g, nodes, n);
    return 1;
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
    const struct onnx_attr *pads = onnx_attr_find(s, "pads"), *st = onnx_attr_find(s, "strides"), *dl = onnx_attr_find(s, "dilations");
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
    if (nd->n_in > 1 && nd->in[1] >= 0 && !const_scalar(g, nd->in[1], &lo))
        return lfail(L, node, "min must be a constant scalar");
    if (nd->n_in > 2 && nd->in[2] >= 0 && !const_scalar(g, nd->in[2], &hi))
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
    const char *ctm = onnx_attr_string(nd->src, "coordinate_transformation_mode", g->opset < 11 ? "asymmetric" : "half_pixel");
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
    const struct onnx_tensor *sc = scales_in < nd->n_in && nd->in[scales_in] >= 0 ? g->values[nd->in[scales_in]].konst : NULL;
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
                return lfail(L, node, "target shape has more than one run-time size that cannot be expressed with 0/-1");
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
        const struct onnx_attr *s = onnx_attr_find(nd->src, "starts"), *e = onnx_attr_find(nd->src, "ends"), *a = onnx_attr_find(nd->src, "axes");
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
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (dim >= 0 && end > dim) end = dim;
    if (start < 0) start = 0;
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
        op->w[1] = channel_const(g, nd->in[2], N, 0.0, nd->src->name, ".bias");
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
    int gm = channel_const(g, nd->n_in > 1 ? nd->in[1] : -1, C, 1.0, base, ".gamma");
    int bt = channel_const(g, nd->n_in > 2 ? nd->in[2] : -1, C, 0.0, base, ".beta");
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

/* In strcmp order, for bsearch. */
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

static int lower_op_cmp(const void *name, const void *op)
{
    return strcmp(name, ((const struct lower_op *)op)->name);
}

static int lower_node(struct lower *L, int node)
{
    const struct lower_op *op = bsearch(L->g->nodes[node].op, lower_ops, sizeof lower_ops / sizeof *lower_ops,
                                        sizeof *lower_ops, lower_op_cmp);
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
    int (*const matchers[])(struct lower *, int) = {match_attention, match_layernorm, match_gelu, match_hardswish, match_swish};
    for (size_t m = 0; m < sizeof matchers / sizeof *matchers; m++)
        for (int i = 0; i < g->n_nodes; i++)
            if (!g->nodes[i].dead && matchers[m](&L, i) < 0) {
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
