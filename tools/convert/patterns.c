/* The multi-node spellings of single pvk ops (attention, layer norm, GELU, HardSwish, Swish):
 * each one found becomes a pending op at the position of its last node, and its nodes die. */
#include "convert/patterns.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/infer.h"

struct match {
    struct cv_graph *g;
    struct cv_op **pending; /* per node: the op a recognised pattern emits in its place */
};

static int is_op(const struct cv_graph *g, int node, const char *op)
{
    return node >= 0 && !g->nodes[node].dead && !strcmp(g->nodes[node].op, op);
}

static int out0(const struct cv_graph *g, int node)
{
    return g->nodes[node].out[0];
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
        return nd->in[0] == x && cv_const_scalar(g, nd->in[1], c);
    int o = other_input(g, node, x);
    return o >= 0 && cv_const_scalar(g, o, c);
}

static struct cv_op *new_pending(struct match *M, int at, enum pvk_op_type type, int node_for_name)
{
    struct cv_op *op = calloc(1, sizeof *op);
    if (!op)
        return NULL;
    op->op.type = (uint32_t)type;
    snprintf(op->op.name, sizeof op->op.name, "%s", M->g->nodes[node_for_name].src->name);
    for (int k = 0; k < PVK_MAX_INPUTS; k++)
        op->in[k] = -1;
    for (int k = 0; k < 2; k++)
        op->out[k] = -1;
    for (int k = 0; k < PVK_MAX_WEIGHTS; k++)
        op->w[k] = -1;
    free(M->pending[at]);
    M->pending[at] = op;
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

static int emit_unary_pattern(struct match *M, const int *nodes, int n, int x, int y, enum pvk_act act)
{
    int at = max_of(nodes, n);
    struct cv_op *op = new_pending(M, at, PVK_OP_UNARY, nodes[0]);
    if (!op)
        return -1;
    op->op.act = (uint32_t)act;
    op->n_in = 1;
    op->in[0] = x;
    op->n_out = 1;
    op->out[0] = y;
    kill(M->g, nodes, n);
    return 1;
}

/* x*relu6(x+3)/6: Add(x,3) -> Clip(0,6) -> Mul(x, .) -> Div(6) or Mul(1/6); also
 * Mul(x, HardSigmoid(x, 1/6, 0.5)). */
static int match_hardswish(struct match *M, int n0)
{
    struct cv_graph *g = M->g;
    const struct cv_node *nd = &g->nodes[n0];
    double c;
    if (is_op(g, n0, "HardSigmoid")) {
        int x = nd->in[0], mul = sole_consumer(g, out0(g, n0));
        if (!near(onnx_attr_float(nd->src, "alpha", 0.2), 1.0 / 6) ||
            !near(onnx_attr_float(nd->src, "beta", 0.5), 0.5) || !is_op(g, mul, "Mul") ||
            other_input(g, mul, out0(g, n0)) != x)
            return 0;
        int nodes[] = {n0, mul};
        return emit_unary_pattern(M, nodes, 2, x, out0(g, mul), PVK_ACT_HARDSWISH);
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
        double lo = onnx_attr_float(g->nodes[clip].src, "min", -INFINITY),
               hi = onnx_attr_float(g->nodes[clip].src, "max", INFINITY);
        if (g->nodes[clip].n_in > 1 && !cv_const_scalar(g, g->nodes[clip].in[1], &lo))
            return 0;
        if (g->nodes[clip].n_in > 2 && !cv_const_scalar(g, g->nodes[clip].in[2], &hi))
            return 0;
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
        return emit_unary_pattern(M, nodes, 4, x, out0(g, div), PVK_ACT_HARDSWISH);
    }
    return 0;
}

/* x*sigmoid(x), also spelled x*sigmoid(1.0*x). */
static int match_swish(struct match *M, int n0)
{
    struct cv_graph *g = M->g;
    if (!is_op(g, n0, "Sigmoid"))
        return 0;
    int s_in = g->nodes[n0].in[0], x = s_in, pre = live_producer(g, s_in);
    double c;
    int nodes[3], n = 0;
    if (pre >= 0 && is_op(g, pre, "Mul") && sole_consumer(g, s_in) == n0) {
        const struct cv_node *p = &g->nodes[pre];
        int cand = cv_const_scalar(g, p->in[1], &c) ? p->in[0] : cv_const_scalar(g, p->in[0], &c) ? p->in[1] : -1;
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
    return emit_unary_pattern(M, nodes, n, x, out0(g, mul), PVK_ACT_SWISH);
}

/* The common tail of both GELU spellings: e = 1 + f(x); y = x * e * 0.5 in any grouping. */
static int gelu_tail(struct match *M, int *nodes, int n, int x, int e, enum pvk_act act)
{
    struct cv_graph *g = M->g;
    double c;
    int m1 = sole_consumer(g, e);
    if (!is_op(g, m1, "Mul"))
        return 0;
    int other = other_input(g, m1, e);
    if (other == x) {
        /* (x * e) * 0.5 */
        int m2 = sole_consumer(g, out0(g, m1));
        if (!(scalar_op(g, m2, "Mul", out0(g, m1), &c) && near(c, 0.5)) &&
            !(scalar_op(g, m2, "Div", out0(g, m1), &c) && near(c, 2.0)))
            return 0;
        nodes[n++] = m1;
        nodes[n++] = m2;
        return emit_unary_pattern(M, nodes, n, x, out0(g, m2), act);
    }
    if (cv_const_scalar(g, other, &c) && near(c, 0.5)) {
        /* (e * 0.5) * x */
        int m2 = sole_consumer(g, out0(g, m1));
        if (!is_op(g, m2, "Mul") || other_input(g, m2, out0(g, m1)) != x)
            return 0;
        nodes[n++] = m1;
        nodes[n++] = m2;
        return emit_unary_pattern(M, nodes, n, x, out0(g, m2), act);
    }
    /* (x * 0.5) * e */
    int half = live_producer(g, other);
    if (half < 0 || !scalar_op(g, half, "Mul", x, &c) || !near(c, 0.5) || sole_consumer(g, other) != m1)
        return 0;
    nodes[n++] = half;
    nodes[n++] = m1;
    return emit_unary_pattern(M, nodes, n, x, out0(g, m1), act);
}

static int match_gelu(struct match *M, int n0)
{
    struct cv_graph *g = M->g;
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
    return gelu_tail(M, nodes, n, x, out0(g, one), is_erf ? PVK_ACT_GELU_ERF : PVK_ACT_GELU_TANH);
}

static int reduce_last_axis(const struct cv_graph *g, int node, int x)
{
    const struct cv_node *nd = &g->nodes[node];
    const struct onnx_attr *a = onnx_attr_find(nd->src, "axes");
    int ndim = g->values[x].ndim;
    if (!is_op(g, node, "ReduceMean") || nd->in[0] != x || !a || a->n_ints != 1 ||
        onnx_attr_int(nd->src, "keepdims", 1) != 1)
        return 0;
    return a->ints[0] == -1 || a->ints[0] == ndim - 1;
}

static int match_layernorm(struct match *M, int n0)
{
    struct cv_graph *g = M->g;
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
    struct cv_op *op = new_pending(M, max_of(nodes, n), PVK_OP_LAYERNORM, n0);
    if (!op)
        return -1;
    const char *base = g->nodes[n0].src->name;
    op->n_in = 1;
    op->in[0] = x;
    op->n_out = 1;
    op->out[0] = y;
    op->op.attr.norm.eps = (float)eps;
    if ((op->w[0] = cv_channel_const(g, gamma, C, 1.0, base, ".gamma")) < 0 ||
        (op->w[1] = cv_channel_const(g, beta, C, 0.0, base, ".beta")) < 0)
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
                                       (g->nodes[sq].n_in > 1 && cv_const_scalar(g, g->nodes[sq].in[1], &c) && c == 0));
}

/* Which of q/k/v a consumer of the transposed qkv selects: Slice(axis 0, i:i+1) -> Squeeze(0),
 * or Gather(axis 0, i). Returns the selected value and adds the nodes. */
static int qkv_pick(struct cv_graph *g, int node, int tv, int *which, int *nodes, int *n)
{
    const struct cv_node *nd = &g->nodes[node];
    if (is_op(g, node, "Gather") && onnx_attr_int(nd->src, "axis", 0) == 0) {
        double c;
        if (!cv_const_scalar(g, nd->in[1], &c) || g->values[nd->in[1]].konst->ndim != 0)
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
        if (cv_const_scalar(g, nd->in[1], &c) &&
            (nd->n_in < 4 || nd->in[3] < 0 || cv_const_scalar(g, nd->in[3], &ax)) && ax == 0)
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

static int match_attention(struct match *M, int n0)
{
    struct cv_graph *g = M->g;
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
    if (!is_op(g, fr, "Reshape") || g->values[out0(g, fr)].ndim != 3 ||
        g->values[out0(g, fr)].dims[2] != (int64_t)heads * hd)
        return 0;
    nodes[n++] = fr;
    struct cv_op *op = new_pending(M, max_of(nodes, n), PVK_OP_ATTENTION, n0);
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

int cv_match_patterns(struct cv_graph *g, struct cv_op **pending)
{
    struct match M = {g, pending};
    int (*const matchers[])(struct match *, int) = {match_attention, match_layernorm, match_gelu, match_hardswish,
                                                    match_swish};
    for (size_t m = 0; m < sizeof matchers / sizeof *matchers; m++)
        for (int i = 0; i < g->n_nodes; i++)
            if (!g->nodes[i].dead && matchers[m](&M, i) < 0)
                return -1;
    return 0;
}
