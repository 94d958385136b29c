/* Shape inference and constant folding, one ONNX node at a time: static sizes where they are
 * known, symbols for run-time ones, and the values of every node whose inputs are constants
 * (including shape arithmetic on partly run-time shapes). */
#include "convert/infer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double tget(const struct onnx_tensor *t, int64_t k)
{
    return t->f ? t->f[k] : (double)t->i[k];
}

static int64_t tgeti(const struct onnx_tensor *t, int64_t k)
{
    return t->i ? t->i[k] : (int64_t)t->f[k];
}

static void tset(struct onnx_tensor *t, int64_t k, double f, int64_t i)
{
    if (t->f)
        t->f[k] = f;
    else
        t->i[k] = i;
}

static int64_t numel_of(int ndim, const int64_t *dims)
{
    int64_t n = 1;
    for (int k = 0; k < ndim; k++)
        n *= dims[k];
    return n;
}

/* --- shape inference helpers -------------------------------------------------------------------- */

struct ctx {
    struct cv_graph *g;
    struct cv_node *nd;
    char *err;
    size_t err_len;
    struct cv_value *x, *o;     /* the first input (NULL if omitted) and the first output */
    int all_const, any_partial; /* every input is a constant; some input is a shape with run-time sizes */
};

static int node_fail(struct ctx *c, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return cv_fail(c->err, c->err_len, "%s: node '%s' (%s): %s", c->g->file, c->nd->src->name, c->nd->op, msg);
}

static struct cv_value *in_val(struct ctx *c, int k)
{
    return k < c->nd->n_in && c->nd->in[k] >= 0 ? &c->g->values[c->nd->in[k]] : NULL;
}

static struct cv_value *out_val(struct ctx *c, int k)
{
    return &c->g->values[c->nd->out[k]];
}

static void set_shape(struct cv_value *v, int ndim, const int64_t *dims)
{
    v->ndim = ndim;
    for (int k = 0; k < ndim; k++)
        v->dims[k] = dims[k];
}

static int norm_axis(int64_t axis, int ndim)
{
    return (int)(axis < 0 ? axis + ndim : axis);
}

/* Integer elements of a constant or partial 1-D/0-D value: vals and syms (0 = concrete). */
static int int_elems(const struct cv_value *v, int64_t *vals, int64_t *syms, int max)
{
    if (v->konst) {
        if (v->konst->ndim > 1 || v->konst->numel > max)
            return -1;
        for (int64_t k = 0; k < v->konst->numel; k++) {
            vals[k] = tgeti(v->konst, k);
            syms[k] = 0;
        }
        return (int)v->konst->numel;
    }
    if (v->part_val) {
        int n = v->ndim == 0 ? 1 : (int)v->dims[0];
        if (n > max)
            return -1;
        memcpy(vals, v->part_val, (size_t)n * sizeof *vals);
        memcpy(syms, v->part_sym, (size_t)n * sizeof *syms);
        return n;
    }
    return -1;
}

/* Stores int elements as a constant (all concrete) or a partial value. */
static int set_int_elems(struct ctx *c, struct cv_value *o, int ndim, int n, const int64_t *vals, const int64_t *syms)
{
    int64_t dims[1] = {n};
    int concrete = 1;
    for (int k = 0; k < n; k++)
        if (syms[k])
            concrete = 0;
    set_shape(o, ndim, dims);
    o->is_int = 1;
    if (concrete) {
        if (!(o->konst = cv_tensor_new(1, ndim, dims)))
            return node_fail(c, "out of memory");
        memcpy(o->konst->i, vals, (size_t)n * sizeof *vals);
        return 0;
    }
    o->part_val = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    o->part_sym = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
    if (!o->part_val || !o->part_sym)
        return node_fail(c, "out of memory");
    memcpy(o->part_val, vals, (size_t)n * sizeof *vals);
    memcpy(o->part_sym, syms, (size_t)n * sizeof *syms);
    return 0;
}

static int broadcast(struct ctx *c, const struct cv_value *a, const struct cv_value *b, int *ndim, int64_t *dims)
{
    int n = a->ndim > b->ndim ? a->ndim : b->ndim;
    for (int k = 0; k < n; k++) {
        int ka = k - (n - a->ndim), kb = k - (n - b->ndim);
        int64_t da = ka >= 0 ? a->dims[ka] : 1, db = kb >= 0 ? b->dims[kb] : 1;
        if (da == db || db == 1)
            dims[k] = da;
        else if (da == 1)
            dims[k] = db;
        else if (da < 0)
            dims[k] = db; /* a run-time size meeting a static one: it must be that one */
        else if (db < 0)
            dims[k] = da;
        else
            return node_fail(c, "shapes do not broadcast (dim %d: %lld vs %lld)", k, (long long)da, (long long)db);
    }
    *ndim = n;
    return 0;
}

/* Output dims of a Reshape: resolves 0 (copy) and -1 (inferred) using symbols where the
 * sizes are run-time ones. */
static int reshape_dims(struct ctx *c, const struct cv_value *x, int n, const int64_t *vals, const int64_t *syms,
                        int64_t *out)
{
    int infer = -1;
    for (int k = 0; k < n; k++) {
        if (syms[k]) {
            out[k] = syms[k];
        } else if (vals[k] == 0) {
            if (k >= x->ndim)
                return node_fail(c, "reshape copies dim %d of a %d-D input", k, x->ndim);
            out[k] = x->dims[k];
        } else if (vals[k] == -1) {
            if (infer >= 0)
                return node_fail(c, "reshape target has two -1 entries");
            infer = k;
            out[k] = 1;
        } else if (vals[k] > 0) {
            out[k] = vals[k];
        } else {
            return node_fail(c, "invalid reshape target %lld", (long long)vals[k]);
        }
    }
    if (infer < 0)
        return 0;
    /* What the -1 stands for: input size divided by the other target sizes, with symbols
     * cancelling where they appear on both sides. */
    int64_t num = 1, den = 1, left[CV_MAX_DIMS];
    int n_left = 0;
    for (int k = 0; k < x->ndim; k++) {
        if (x->dims[k] >= 0)
            num *= x->dims[k];
        else
            left[n_left++] = x->dims[k];
    }
    int unmatched = 0;
    for (int k = 0; k < n; k++) {
        if (k == infer)
            continue;
        if (out[k] >= 0) {
            den *= out[k];
            continue;
        }
        int found = 0;
        for (int j = 0; j < n_left && !found; j++)
            if (left[j] == out[k]) {
                left[j] = left[--n_left];
                found = 1;
            }
        if (!found)
            unmatched = 1;
    }
    if (!unmatched && n_left == 0 && den > 0 && num % den == 0)
        out[infer] = num / den;
    else if (!unmatched && n_left == 1 && num == den)
        out[infer] = left[0];
    else
        out[infer] = cv_fresh_symbol(c->g);
    return 0;
}

static int64_t conv_out(int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1, int ceil_mode)
{
    int64_t span = in + p0 + p1 - d * (k - 1) - 1;
    return (int)((ceil_mode ? (span + s - 1) / s : span / s) + 1);
}

static int64_t spatial_out(struct cv_graph *g, int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1,
                           int ceil_mode)
{
    if (in < 0)
        return (k == 1 && s == 1 && p0 == 0 && p1 == 0) || (s == 1 && d * (k - 1) == p0 + p1) ? in : cv_fresh_symbol(g);
    return conv_out(in, k, s, d, p0, p1, ceil_mode);
}

static const int64_t *ints_attr(const struct onnx_node *n, const char *name, int *count)
{
    const struct onnx_attr *a = onnx_attr_find(n, name);
    *count = a ? a->n_ints : 0;
    return a ? a->ints : NULL;
}

/* --- constant evaluation ---------------------------------------------------------------------- */

/* Index of element `k` of an output of shape `od` in an input of shape `id` broadcast to it. */
static int64_t bcast_index(int64_t k, int ond, const int64_t *od, int ind, const int64_t *idd)
{
    int64_t idx = 0, stride = 1;
    for (int d = ond - 1; d >= 0; d--) {
        int64_t coord = k % od[d];
        k /= od[d];
        int di = d - (ond - ind);
        if (di >= 0) {
            if (idd[di] != 1)
                idx += coord * stride;
            stride *= idd[di];
        }
    }
    return idx;
}

static int eval_binary(struct ctx *c, const char *op, const struct onnx_tensor *a, const struct onnx_tensor *b,
                       struct cv_value *o)
{
    int is_int = a->i && b->i;
    struct onnx_tensor *t = cv_tensor_new(is_int, o->ndim, o->dims);
    if (!t)
        return node_fail(c, "out of memory");
    for (int64_t k = 0; k < t->numel; k++) {
        int64_t ia = bcast_index(k, o->ndim, o->dims, a->ndim, a->dims);
        int64_t ib = bcast_index(k, o->ndim, o->dims, b->ndim, b->dims);
        if (is_int) {
            int64_t x = a->i[ia], y = b->i[ib], r;
            if (!strcmp(op, "Add"))
                r = x + y;
            else if (!strcmp(op, "Sub"))
                r = x - y;
            else if (!strcmp(op, "Mul"))
                r = x * y;
            else {
                if (y == 0) {
                    onnx_tensor_free(t);
                    free(t);
                    return node_fail(c, "integer division by zero");
                }
                r = x / y;
            }
            t->i[k] = r;
        } else {
            double x = tget(a, ia), y = tget(b, ib), r;
            if (!strcmp(op, "Add"))
                r = x + y;
            else if (!strcmp(op, "Sub"))
                r = x - y;
            else if (!strcmp(op, "Mul"))
                r = x * y;
            else if (!strcmp(op, "Div"))
                r = x / y;
            else
                r = pow(x, y);
            t->f[k] = r;
        }
    }
    o->konst = t;
    o->is_int = is_int;
    return 0;
}

/* Copies x's data into a new tensor of o's shape, element k of o taken from index src(k). */
static int eval_gather_like(struct ctx *c, const struct onnx_tensor *x, struct cv_value *o,
                            int64_t (*src)(int64_t k, const void *arg), const void *arg)
{
    struct onnx_tensor *t = cv_tensor_new(x->i != NULL, o->ndim, o->dims);
    if (!t)
        return node_fail(c, "out of memory");
    for (int64_t k = 0; k < t->numel; k++) {
        int64_t s = src ? src(k, arg) : k;
        tset(t, k, x->f ? x->f[s] : 0, x->i ? x->i[s] : 0);
    }
    o->konst = t;
    o->is_int = x->i != NULL;
    return 0;
}

struct transpose_arg {
    int ndim;
    const int64_t *in_dims, *out_dims;
    int perm[CV_MAX_DIMS];
};

static int64_t transpose_src(int64_t k, const void *p)
{
    const struct transpose_arg *a = p;
    int64_t coord[CV_MAX_DIMS], in_coord[CV_MAX_DIMS];
    for (int d = a->ndim - 1; d >= 0; d--) {
        coord[d] = k % a->out_dims[d];
        k /= a->out_dims[d];
    }
    for (int d = 0; d < a->ndim; d++)
        in_coord[a->perm[d]] = coord[d];
    int64_t idx = 0;
    for (int d = 0; d < a->ndim; d++)
        idx = idx * a->in_dims[d] + in_coord[d];
    return idx;
}

struct axis_arg {
    int64_t inner, out_axis, in_axis;
    const int64_t *index; /* per output position along the axis */
};

static int64_t axis_src(int64_t k, const void *p)
{
    const struct axis_arg *a = p;
    int64_t inner = k % a->inner, rest = k / a->inner;
    int64_t pos = rest % a->out_axis, outer = rest / a->out_axis;
    return (outer * a->in_axis + a->index[pos]) * a->inner + inner;
}

/* --- per-op inference ------------------------------------------------------------------------- */

int cv_split_sizes(const struct cv_graph *g, const struct cv_node *nd, int64_t *sizes)
{
    const struct cv_value *x = &g->values[nd->in[0]];
    int axis = norm_axis(onnx_attr_int(nd->src, "axis", 0), x->ndim);
    if (axis < 0 || axis >= x->ndim || nd->n_out > CV_MAX_DIMS * 2)
        return -1;
    const struct onnx_attr *a = onnx_attr_find(nd->src, "split");
    const struct onnx_tensor *t = nd->n_in > 1 && nd->in[1] >= 0 ? g->values[nd->in[1]].konst : NULL;
    if (nd->n_in > 1 && nd->in[1] >= 0 && !t)
        return -1;
    int64_t total = 0;
    for (int k = 0; k < nd->n_out; k++) {
        if (a && a->n_ints == nd->n_out)
            sizes[k] = a->ints[k];
        else if (t && t->numel == nd->n_out)
            sizes[k] = t->i ? t->i[k] : (int64_t)t->f[k];
        else if (!a && !t && x->dims[axis] >= 0 && x->dims[axis] % nd->n_out == 0)
            sizes[k] = x->dims[axis] / nd->n_out;
        else
            return -1;
        if (sizes[k] < 0)
            return -1;
        total += sizes[k];
    }
    return x->dims[axis] >= 0 && total != x->dims[axis] ? -1 : axis;
}

/* Identity, Dropout and Cast: the input's shape, and its values (as the output's element type)
 * where they are known. */
static int pass_through(struct ctx *c, int is_int)
{
    struct cv_value *x = c->x, *o = c->o;
    set_shape(o, x->ndim, x->dims);
    o->is_int = is_int;
    if (x->konst) {
        struct onnx_tensor *t = cv_tensor_new(o->is_int, x->ndim, x->dims);
        if (!t)
            return node_fail(c, "out of memory");
        for (int64_t k = 0; k < t->numel; k++)
            tset(t, k, tget(x->konst, k), tgeti(x->konst, k));
        o->konst = t;
    } else if (x->part_val) {
        int64_t vals[CV_MAX_DIMS * 2], syms[CV_MAX_DIMS * 2];
        int n = int_elems(x, vals, syms, CV_MAX_DIMS * 2);
        if (n < 0 || !o->is_int)
            return node_fail(c, "casts a run-time shape to float");
        return set_int_elems(c, o, x->ndim, n, vals, syms);
    }
    return 0;
}

static int infer_identity(struct ctx *c)
{
    return pass_through(c, c->x->is_int);
}

static int infer_cast(struct ctx *c)
{
    int64_t to = onnx_attr_int(c->nd->src, "to", 1);
    return pass_through(c, !onnx_elem_is_float((int32_t)to));
}

static int infer_shape(struct ctx *c)
{
    const struct cv_value *x = c->x;
    int64_t vals[CV_MAX_DIMS], syms[CV_MAX_DIMS];
    for (int k = 0; k < x->ndim; k++) {
        vals[k] = x->dims[k] >= 0 ? x->dims[k] : 0;
        syms[k] = x->dims[k] >= 0 ? 0 : x->dims[k];
    }
    return set_int_elems(c, c->o, 1, x->ndim, vals, syms);
}

/* Integer arithmetic on shapes holding run-time sizes: concrete where both sides are; a symbol
 * survives adding 0 or multiplying by 1, any other result is a new symbol. */
static int shape_arith(struct ctx *c, const struct cv_value *b, int ndim, const int64_t *dims)
{
    struct cv_graph *g = c->g;
    const char *op = c->nd->op;
    int64_t av[16], as[16], bv[16], bs[16], rv[16], rs[16];
    int na = int_elems(c->x, av, as, 16), nb = int_elems(b, bv, bs, 16);
    int n = ndim == 0 ? 1 : (int)dims[0];
    if (na < 0 || nb < 0 || n > 16)
        return node_fail(c, "shape arithmetic on a tensor that is not a shape");
    for (int k = 0; k < n; k++) {
        int ia = na == 1 ? 0 : k, ib = nb == 1 ? 0 : k;
        if (as[ia] || bs[ib]) {
            int one_a = !as[ia] && ((!strcmp(op, "Mul") && av[ia] == 1) || (!strcmp(op, "Add") && av[ia] == 0));
            int one_b = !bs[ib] && (((!strcmp(op, "Mul") || !strcmp(op, "Div")) && bv[ib] == 1) ||
                                    ((!strcmp(op, "Add") || !strcmp(op, "Sub")) && bv[ib] == 0));
            rs[k] = one_b ? as[ia] : one_a ? bs[ib] : cv_fresh_symbol(g);
            rv[k] = 0;
        } else {
            int64_t p = av[ia], q = bv[ib];
            rs[k] = 0;
            rv[k] = !strcmp(op, "Add")   ? p + q
                    : !strcmp(op, "Sub") ? p - q
                    : !strcmp(op, "Mul") ? p * q
                    : q                  ? p / q
                                         : 0;
        }
    }
    return set_int_elems(c, c->o, ndim, n, rv, rs);
}

/* Add, Sub, Mul, Div and Pow. */
static int infer_binary(struct ctx *c)
{
    struct cv_value *x = c->x, *b = in_val(c, 1), *o = c->o;
    int64_t dims[CV_MAX_DIMS];
    int ndim;
    if (!b)
        return node_fail(c, "needs two inputs");
    if (broadcast(c, x, b, &ndim, dims))
        return -1;
    set_shape(o, ndim, dims);
    o->is_int = x->is_int && b->is_int;
    if (c->all_const)
        return eval_binary(c, c->nd->op, x->konst, b->konst, o);
    if (c->any_partial && o->is_int && ndim <= 1)
        return shape_arith(c, b, ndim, dims);
    return 0;
}

/* Activations and normalisations: the input's shape; they are not folded on constants. */
static int infer_pointwise(struct ctx *c)
{
    set_shape(c->o, c->x->ndim, c->x->dims);
    if (c->x->konst)
        return node_fail(c, "constant input is not folded for this op");
    return 0;
}

/* Pointwise ops that are folded on constants. */
static int fold_pointwise(struct ctx *c, double (*f)(double))
{
    struct cv_value *x = c->x, *o = c->o;
    set_shape(o, x->ndim, x->dims);
    if (!x->konst)
        return 0;
    struct onnx_tensor *t = cv_tensor_new(0, x->ndim, x->dims);
    if (!t)
        return node_fail(c, "out of memory");
    for (int64_t k = 0; k < t->numel; k++)
        t->f[k] = f(tget(x->konst, k));
    o->konst = t;
    return 0;
}

static double negate(double v)
{
    return -v;
}

static double reciprocal(double v)
{
    return 1.0 / v;
}

static int infer_sqrt(struct ctx *c)
{
    return fold_pointwise(c, sqrt);
}

static int infer_neg(struct ctx *c)
{
    return fold_pointwise(c, negate);
}

static int infer_reciprocal(struct ctx *c)
{
    return fold_pointwise(c, reciprocal);
}

struct conv_attrs {
    const struct cv_value *w;
    int64_t group, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
    int n_opad;
    const int64_t *opad;
};

/* What Conv and ConvTranspose share: constant 4-D float weights, a bias with one value per
 * output channel, and 2-D pads, strides and dilations. */
static int conv_attrs(struct ctx *c, int transposed, struct conv_attrs *a)
{
    const struct onnx_node *src = c->nd->src;
    struct cv_value *x = c->x, *w = in_val(c, 1);
    if (!w || !w->konst || !w->konst->f || w->ndim != 4 || x->ndim != 4)
        return node_fail(c, "only 2-D convolutions with constant float weights are supported");
    struct cv_value *bias = in_val(c, 2);
    int64_t bias_len = !transposed ? w->dims[0] : w->dims[1] * onnx_attr_int(src, "group", 1);
    if (bias && (!bias->konst || !bias->konst->f || bias->konst->numel != bias_len))
        return node_fail(c, "bias must be a float constant with one value per output channel");
    int np, ns, nds;
    const int64_t *pads = ints_attr(src, "pads", &np), *strides = ints_attr(src, "strides", &ns);
    const int64_t *dil = ints_attr(src, "dilations", &nds);
    a->opad = ints_attr(src, "output_padding", &a->n_opad);
    const char *auto_pad = onnx_attr_string(src, "auto_pad", "NOTSET");
    if (strcmp(auto_pad, "NOTSET") && strcmp(auto_pad, "VALID"))
        return node_fail(c, "auto_pad %s is not supported", auto_pad);
    if ((np && np != 4) || (ns && ns != 2) || (nds && nds != 2))
        return node_fail(c, "expected 2-D pads/strides/dilations");
    a->w = w;
    a->group = onnx_attr_int(src, "group", 1);
    a->kh = w->dims[2];
    a->kw = w->dims[3];
    a->sh = ns ? strides[0] : 1;
    a->sw = ns ? strides[1] : 1;
    a->dh = nds ? dil[0] : 1;
    a->dw = nds ? dil[1] : 1;
    a->pt = np ? pads[0] : 0;
    a->pl = np ? pads[1] : 0;
    a->pb = np ? pads[2] : 0;
    a->pr = np ? pads[3] : 0;
    return 0;
}

static int infer_conv(struct ctx *c)
{
    const struct cv_value *x = c->x;
    struct conv_attrs a;
    if (conv_attrs(c, 0, &a))
        return -1;
    if (x->dims[1] >= 0 && x->dims[1] != a.w->dims[1] * a.group)
        return node_fail(c, "input has %lld channels, weights expect %lld", (long long)x->dims[1],
                         (long long)(a.w->dims[1] * a.group));
    int64_t dims[4];
    dims[0] = x->dims[0];
    dims[1] = a.w->dims[0];
    dims[2] = spatial_out(c->g, x->dims[2], a.kh, a.sh, a.dh, a.pt, a.pb, 0);
    dims[3] = spatial_out(c->g, x->dims[3], a.kw, a.sw, a.dw, a.pl, a.pr, 0);
    set_shape(c->o, 4, dims);
    return 0;
}

static int infer_conv_transpose(struct ctx *c)
{
    const struct cv_value *x = c->x;
    struct conv_attrs a;
    if (conv_attrs(c, 1, &a))
        return -1;
    if (a.n_opad && (a.opad[0] || a.opad[1]))
        return node_fail(c, "output_padding is not supported");
    if (x->dims[1] >= 0 && x->dims[1] != a.w->dims[0])
        return node_fail(c, "input has %lld channels, weights expect %lld", (long long)x->dims[1],
                         (long long)a.w->dims[0]);
    int64_t dims[4];
    dims[0] = x->dims[0];
    dims[1] = a.w->dims[1] * a.group;
    for (int d = 0; d < 2; d++) {
        int64_t in = x->dims[2 + d], k = d ? a.kw : a.kh, s = d ? a.sw : a.sh, dl = d ? a.dw : a.dh;
        int64_t p = d ? a.pl + a.pr : a.pt + a.pb;
        dims[2 + d] = in >= 0 ? (in - 1) * s + dl * (k - 1) + 1 - p : cv_fresh_symbol(c->g);
    }
    set_shape(c->o, 4, dims);
    return 0;
}

/* MaxPool and AveragePool. */
static int infer_pool(struct ctx *c)
{
    const struct onnx_node *src = c->nd->src;
    const struct cv_value *x = c->x;
    int nk, np, ns;
    const int64_t *ks = ints_attr(src, "kernel_shape", &nk), *pads = ints_attr(src, "pads", &np);
    const int64_t *strides = ints_attr(src, "strides", &ns);
    if (x->ndim != 4 || nk != 2)
        return node_fail(c, "only 2-D pooling is supported");
    const char *auto_pad = onnx_attr_string(src, "auto_pad", "NOTSET");
    if (strcmp(auto_pad, "NOTSET") && strcmp(auto_pad, "VALID"))
        return node_fail(c, "auto_pad %s is not supported", auto_pad);
    int ceil_mode = (int)onnx_attr_int(src, "ceil_mode", 0);
    int64_t dims[4];
    dims[0] = x->dims[0];
    dims[1] = x->dims[1];
    for (int d = 0; d < 2; d++)
        dims[2 + d] = spatial_out(c->g, x->dims[2 + d], ks[d], ns ? strides[d] : 1, 1, np ? pads[d] : 0,
                                  np ? pads[d + 2] : 0, ceil_mode);
    set_shape(c->o, 4, dims);
    return 0;
}

/* GlobalAveragePool and GlobalMaxPool. */
static int infer_global_pool(struct ctx *c)
{
    const struct cv_value *x = c->x;
    if (x->ndim != 4)
        return node_fail(c, "expects a 4-D input");
    int64_t d4[4] = {x->dims[0], x->dims[1], 1, 1};
    set_shape(c->o, 4, d4);
    return 0;
}

/* The `axes` attribute or, from the opsets that moved it, the constant second input; *axes is
 * NULL when there is neither. */
static int axes_of(struct ctx *c, const int64_t **axes, int *na, int64_t *buf)
{
    *axes = ints_attr(c->nd->src, "axes", na);
    struct cv_value *a = in_val(c, 1);
    if (!*axes && a) {
        int64_t syms[CV_MAX_DIMS];
        *na = int_elems(a, buf, syms, CV_MAX_DIMS);
        if (*na < 0 || !a->konst)
            return node_fail(c, "axes must be a constant");
        *axes = buf;
    }
    return 0;
}

static int infer_reduce_mean(struct ctx *c)
{
    const struct cv_value *x = c->x;
    const int64_t *axes;
    int64_t ax_buf[CV_MAX_DIMS];
    int na;
    int keep = (int)onnx_attr_int(c->nd->src, "keepdims", 1);
    if (axes_of(c, &axes, &na, ax_buf))
        return -1;
    if (!axes)
        return node_fail(c, "reducing over all axes is not supported");
    int reduced[CV_MAX_DIMS] = {0};
    for (int k = 0; k < na; k++) {
        int a = norm_axis(axes[k], x->ndim);
        if (a < 0 || a >= x->ndim)
            return node_fail(c, "axis %lld out of range", (long long)axes[k]);
        reduced[a] = 1;
    }
    int64_t dims[CV_MAX_DIMS];
    int ndim = 0;
    for (int k = 0; k < x->ndim; k++) {
        if (!reduced[k])
            dims[ndim++] = x->dims[k];
        else if (keep)
            dims[ndim++] = 1;
    }
    set_shape(c->o, ndim, dims);
    return 0;
}

/* Resize and Upsample, whose scales are input `scales_in`. */
static int resize_to(struct ctx *c, int scales_in)
{
    const struct cv_value *x = c->x;
    struct cv_value *sc = in_val(c, scales_in), *sz = in_val(c, 3);
    int64_t dims[4];
    if (sc && sc->konst && sc->konst->numel == 4) {
        for (int d = 0; d < 4; d++) {
            double s = tget(sc->konst, d);
            dims[d] = x->dims[d] >= 0 ? (int64_t)floor((double)x->dims[d] * s)
                      : s == 1.0      ? x->dims[d]
                                      : cv_fresh_symbol(c->g);
        }
    } else if (sz && sz->konst && sz->konst->numel == 4) {
        for (int d = 0; d < 4; d++)
            dims[d] = tgeti(sz->konst, d);
    } else {
        return node_fail(c, "scales must be a constant of 4 values (sizes from run-time shapes are not supported)");
    }
    set_shape(c->o, 4, dims);
    return 0;
}

static int infer_resize(struct ctx *c)
{
    if (c->x->ndim != 4)
        return node_fail(c, "only 4-D resize is supported");
    return resize_to(c, c->g->opset < 11 ? 1 : 2);
}

static int infer_upsample(struct ctx *c)
{
    if (c->x->ndim != 4)
        return node_fail(c, "only 4-D resize is supported");
    return resize_to(c, 1);
}

/* Concat of constants: the inputs' blocks along `axis`, one after another. */
static int concat_constants(struct ctx *c, int axis)
{
    struct cv_value *o = c->o;
    struct onnx_tensor *t = cv_tensor_new(c->x->konst->i != NULL, o->ndim, o->dims);
    if (!t)
        return node_fail(c, "out of memory");
    int64_t inner = 1, outer = 1;
    for (int d = axis + 1; d < o->ndim; d++)
        inner *= o->dims[d];
    for (int d = 0; d < axis; d++)
        outer *= o->dims[d];
    int64_t pos = 0;
    for (int64_t ou = 0; ou < outer; ou++)
        for (int k = 0; k < c->nd->n_in; k++) {
            const struct onnx_tensor *s = in_val(c, k)->konst;
            int64_t chunk = s->dims[axis] * inner;
            for (int64_t j = 0; j < chunk; j++, pos++)
                tset(t, pos, tget(s, ou * chunk + j), tgeti(s, ou * chunk + j));
        }
    o->konst = t;
    return 0;
}

/* Concat of 1-D integer inputs some of which are shapes with run-time sizes. */
static int concat_shapes(struct ctx *c)
{
    int64_t vals[64], syms[64];
    int n = 0;
    for (int k = 0; k < c->nd->n_in; k++) {
        int m = int_elems(in_val(c, k), vals + n, syms + n, 64 - n);
        if (m < 0) {
            if (!c->any_partial)
                return 0; /* an integer concat of run-time data: left to the lowering */
            return node_fail(c, "concatenates a shape with a run-time tensor");
        }
        n += m;
    }
    return set_int_elems(c, c->o, 1, n, vals, syms);
}

static int infer_concat(struct ctx *c)
{
    struct cv_value *x = c->x, *o = c->o;
    int axis = norm_axis(onnx_attr_int(c->nd->src, "axis", 0), x->ndim);
    if (axis < 0 || axis >= (x->ndim ? x->ndim : 1))
        return node_fail(c, "axis out of range");
    set_shape(o, x->ndim, x->dims);
    int64_t total = 0;
    int symbolic = 0;
    for (int k = 0; k < c->nd->n_in; k++) {
        struct cv_value *v = in_val(c, k);
        if (!v || v->ndim != x->ndim)
            return node_fail(c, "inputs differ in rank");
        if (v->dims[axis] < 0)
            symbolic = 1;
        else
            total += v->dims[axis];
    }
    o->dims[axis] = symbolic ? cv_fresh_symbol(c->g) : total;
    o->is_int = x->is_int;
    if (c->all_const)
        return concat_constants(c, axis);
    if (c->any_partial || (x->is_int && x->ndim == 1))
        return concat_shapes(c);
    return 0;
}

static int infer_gather(struct ctx *c)
{
    struct cv_value *x = c->x, *o = c->o, *idx = in_val(c, 1);
    if (!idx || !idx->konst)
        return node_fail(c, "indices must be a constant");
    int axis = norm_axis(onnx_attr_int(c->nd->src, "axis", 0), x->ndim);
    if (axis < 0 || axis >= x->ndim)
        return node_fail(c, "axis out of range");
    int64_t dims[CV_MAX_DIMS * 2]; /* x->ndim - 1 + idx->ndim before the check below */
    int ndim = 0;
    for (int d = 0; d < axis; d++)
        dims[ndim++] = x->dims[d];
    for (int d = 0; d < idx->ndim; d++)
        dims[ndim++] = idx->dims[d];
    for (int d = axis + 1; d < x->ndim; d++)
        dims[ndim++] = x->dims[d];
    if (ndim > CV_MAX_DIMS)
        return node_fail(c, "too many dims");
    int64_t index[64];
    if (idx->konst->numel > 64)
        return node_fail(c, "too many indices");
    for (int64_t k = 0; k < idx->konst->numel; k++) {
        int64_t i = tgeti(idx->konst, k);
        if (x->dims[axis] >= 0 && i < 0)
            i += x->dims[axis];
        if (i < 0 || (x->dims[axis] >= 0 && i >= x->dims[axis]))
            return node_fail(c, "index %lld out of range", (long long)i);
        index[k] = i;
    }
    set_shape(o, ndim, dims);
    o->is_int = x->is_int;
    if (x->konst) {
        int64_t inner = 1;
        for (int d = axis + 1; d < x->ndim; d++)
            inner *= x->dims[d];
        struct axis_arg a = {inner, idx->konst->numel, x->dims[axis], index};
        return eval_gather_like(c, x->konst, o, axis_src, &a);
    }
    if (x->part_val) {
        int64_t vals[16], syms[16];
        for (int64_t k = 0; k < idx->konst->numel && k < 16; k++) {
            vals[k] = x->part_val[index[k]];
            syms[k] = x->part_sym[index[k]];
        }
        return set_int_elems(c, o, ndim, (int)idx->konst->numel, vals, syms);
    }
    return 0;
}

struct slice_ranges {
    int n;
    int64_t starts[CV_MAX_DIMS], ends[CV_MAX_DIMS], axes[CV_MAX_DIMS], steps[CV_MAX_DIMS];
};

/* Slice's ranges: attributes before opset 10, constant inputs from then on. */
static int slice_ranges(struct ctx *c, struct slice_ranges *r)
{
    int64_t syms[CV_MAX_DIMS];
    if (c->g->opset < 10) {
        const struct onnx_node *src = c->nd->src;
        int ns, ne, na;
        const int64_t *s = ints_attr(src, "starts", &ns), *e = ints_attr(src, "ends", &ne),
                      *a = ints_attr(src, "axes", &na);
        if (!s || !e || ns != ne || ns > CV_MAX_DIMS || (a && na != ns))
            return node_fail(c, "invalid starts/ends/axes");
        r->n = ns;
        for (int k = 0; k < r->n; k++) {
            r->starts[k] = s[k];
            r->ends[k] = e[k];
            r->axes[k] = a ? a[k] : k;
            r->steps[k] = 1;
        }
        return 0;
    }
    for (int k = 1; k < c->nd->n_in; k++)
        if (in_val(c, k) && !in_val(c, k)->konst)
            return node_fail(c, "starts/ends/axes/steps must be constants");
    r->n = int_elems(in_val(c, 1), r->starts, syms, CV_MAX_DIMS);
    if (r->n < 0 || int_elems(in_val(c, 2), r->ends, syms, CV_MAX_DIMS) != r->n)
        return node_fail(c, "invalid starts/ends");
    for (int k = 0; k < r->n; k++) {
        r->axes[k] = k;
        r->steps[k] = 1;
    }
    if (in_val(c, 3) && int_elems(in_val(c, 3), r->axes, syms, CV_MAX_DIMS) != r->n)
        return node_fail(c, "invalid axes");
    if (in_val(c, 4) && int_elems(in_val(c, 4), r->steps, syms, CV_MAX_DIMS) != r->n)
        return node_fail(c, "invalid steps");
    return 0;
}

/* The values of a slice of a constant or of a shape: element k of the output comes from
 * lo[d] + coord[d] * step[d] in the input. */
static int slice_values(struct ctx *c, const int64_t *lo, const int64_t *step)
{
    struct cv_value *x = c->x, *o = c->o;
    int64_t on = numel_of(o->ndim, o->dims);
    if (on < 0)
        return node_fail(c, "slice of a constant with run-time size");
    struct onnx_tensor *t = x->konst ? cv_tensor_new(x->konst->i != NULL, o->ndim, o->dims) : NULL;
    int64_t pv[CV_MAX_DIMS * 2], ps[CV_MAX_DIMS * 2];
    if (x->konst && !t)
        return node_fail(c, "out of memory");
    if (!x->konst && (x->ndim != 1 || on > CV_MAX_DIMS * 2))
        return node_fail(c, "unsupported slice of a shape");
    for (int64_t k = 0; k < on; k++) {
        int64_t rem = k, idx = 0, mul = 1;
        for (int d = o->ndim - 1; d >= 0; d--) {
            int64_t coord = rem % o->dims[d];
            rem /= o->dims[d];
            idx += (lo[d] + coord * step[d]) * mul;
            mul *= x->dims[d];
        }
        if (t)
            tset(t, k, tget(x->konst, idx), tgeti(x->konst, idx));
        else {
            pv[k] = x->part_val[idx];
            ps[k] = x->part_sym[idx];
        }
    }
    if (t) {
        o->konst = t;
        return 0;
    }
    return set_int_elems(c, o, 1, (int)on, pv, ps);
}

static int infer_slice(struct ctx *c)
{
    struct cv_value *x = c->x, *o = c->o;
    struct slice_ranges r;
    if (slice_ranges(c, &r))
        return -1;
    set_shape(o, x->ndim, x->dims);
    o->is_int = x->is_int;
    int64_t lo[CV_MAX_DIMS], step[CV_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        lo[d] = 0;
        step[d] = 1;
    }
    for (int k = 0; k < r.n; k++) {
        int a = norm_axis(r.axes[k], x->ndim);
        if (a < 0 || a >= x->ndim || r.steps[k] == 0)
            return node_fail(c, "invalid slice axis or step");
        int64_t dim = x->dims[a];
        if (dim < 0) {
            /* A run-time size: only "from s to the end" or fixed-length ranges are known. */
            if (r.steps[k] == 1 && r.starts[k] >= 0 && r.ends[k] >= ((int64_t)1 << 31))
                o->dims[a] = r.starts[k] == 0 ? dim : cv_fresh_symbol(c->g);
            else if (r.steps[k] == 1 && r.starts[k] >= 0 && r.ends[k] >= r.starts[k])
                o->dims[a] = r.ends[k] - r.starts[k];
            else
                o->dims[a] = cv_fresh_symbol(c->g);
            lo[a] = r.starts[k];
            step[a] = 1;
            continue;
        }
        int64_t s = r.starts[k], e = r.ends[k], st = r.steps[k];
        if (s < 0)
            s += dim;
        if (e < 0)
            e += dim;
        if (st > 0) {
            s = s < 0 ? 0 : s > dim ? dim : s;
            e = e < 0 ? 0 : e > dim ? dim : e;
            o->dims[a] = e > s ? (e - s + st - 1) / st : 0;
        } else {
            s = s < 0 ? -1 : s >= dim ? dim - 1 : s;
            e = e < -1 ? -1 : e >= dim ? dim - 1 : e;
            o->dims[a] = s > e ? (s - e - st - 1) / -st : 0;
        }
        lo[a] = s;
        step[a] = st;
    }
    return x->konst || x->part_val ? slice_values(c, lo, step) : 0;
}

static int infer_transpose(struct ctx *c)
{
    struct cv_value *x = c->x, *o = c->o;
    int np;
    const int64_t *perm = ints_attr(c->nd->src, "perm", &np);
    struct transpose_arg a = {x->ndim, x->dims, NULL, {0}};
    if (perm && np != x->ndim)
        return node_fail(c, "perm has %d entries for a %d-D input", np, x->ndim);
    int seen[CV_MAX_DIMS] = {0};
    int64_t dims[CV_MAX_DIMS];
    for (int d = 0; d < x->ndim; d++) {
        a.perm[d] = perm ? (int)perm[d] : x->ndim - 1 - d;
        if (a.perm[d] < 0 || a.perm[d] >= x->ndim || seen[a.perm[d]]++)
            return node_fail(c, "invalid perm");
        dims[d] = x->dims[a.perm[d]];
    }
    set_shape(o, x->ndim, dims);
    o->is_int = x->is_int;
    a.out_dims = o->dims;
    return x->konst ? eval_gather_like(c, x->konst, o, transpose_src, &a) : 0;
}

/* The end that Reshape, Flatten, Squeeze and Unsqueeze share: the new shape, and the values
 * carried over where they are known. */
static int reshaped(struct ctx *c, int ndim, const int64_t *dims)
{
    struct cv_value *x = c->x, *o = c->o;
    set_shape(o, ndim, dims);
    o->is_int = x->is_int;
    if (x->konst) {
        if (numel_of(ndim, dims) != x->konst->numel)
            return node_fail(c, "reshape of a constant changes its size");
        return eval_gather_like(c, x->konst, o, NULL, NULL);
    }
    if (x->part_val) {
        int64_t vals[16], syms[16];
        int n = int_elems(x, vals, syms, 16);
        if (n < 0 || ndim > 1)
            return node_fail(c, "unsupported reshape of a shape");
        return set_int_elems(c, o, ndim, n, vals, syms);
    }
    return 0;
}

static int infer_reshape(struct ctx *c)
{
    struct cv_value *s = in_val(c, 1);
    int64_t vals[CV_MAX_DIMS], syms[CV_MAX_DIMS], dims[CV_MAX_DIMS];
    int n = s ? int_elems(s, vals, syms, CV_MAX_DIMS) : -1;
    if (n < 0)
        return node_fail(c, "target shape must be a constant or computed from shapes");
    for (int k = 0; k < n && onnx_attr_int(c->nd->src, "allowzero", 0); k++)
        if (!syms[k] && vals[k] == 0)
            return node_fail(c, "allowzero with a 0 in the target (an empty tensor) is not supported");
    if (reshape_dims(c, c->x, n, vals, syms, dims))
        return -1;
    return reshaped(c, n, dims);
}

static int infer_flatten(struct ctx *c)
{
    const struct cv_value *x = c->x;
    int axis = norm_axis(onnx_attr_int(c->nd->src, "axis", 1), x->ndim);
    int64_t a = 1, b = 1, sym_a = 0, dims[2];
    int sa = 0, sb = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (x->dims[d] >= 0)
            *(d < axis ? &a : &b) *= x->dims[d];
        else if (d < axis)
            sa++, sym_a = x->dims[d];
        else
            sb++;
    }
    dims[0] = sa == 0 ? a : sa == 1 && a == 1 ? sym_a : cv_fresh_symbol(c->g);
    dims[1] = sb == 0 ? b : cv_fresh_symbol(c->g);
    return reshaped(c, 2, dims);
}

static int infer_squeeze(struct ctx *c)
{
    const struct cv_value *x = c->x;
    const int64_t *axes;
    int64_t ax_buf[CV_MAX_DIMS], dims[CV_MAX_DIMS];
    int na, ndim = 0;
    if (axes_of(c, &axes, &na, ax_buf))
        return -1;
    int mark[CV_MAX_DIMS + 1] = {0};
    for (int k = 0; k < na; k++) {
        int a = norm_axis(axes[k], x->ndim);
        if (a < 0 || a >= x->ndim || x->dims[a] != 1)
            return node_fail(c, "squeezes axis %lld which is not of size 1", (long long)axes[k]);
        mark[a] = 1;
    }
    for (int d = 0; d < x->ndim; d++)
        if (!(axes ? mark[d] : x->dims[d] == 1))
            dims[ndim++] = x->dims[d];
    return reshaped(c, ndim, dims);
}

static int infer_unsqueeze(struct ctx *c)
{
    const struct cv_value *x = c->x;
    const int64_t *axes;
    int64_t ax_buf[CV_MAX_DIMS], dims[CV_MAX_DIMS];
    int na;
    if (axes_of(c, &axes, &na, ax_buf))
        return -1;
    int ndim = x->ndim + na;
    if (ndim > CV_MAX_DIMS)
        return node_fail(c, "too many dims");
    int mark[CV_MAX_DIMS + 1] = {0};
    for (int k = 0; k < na; k++) {
        int a = norm_axis(axes[k], ndim);
        if (a < 0 || a >= ndim)
            return node_fail(c, "axis out of range");
        mark[a] = 1;
    }
    for (int d = 0, j = 0; d < ndim; d++)
        dims[d] = mark[d] ? 1 : x->dims[j++];
    return reshaped(c, ndim, dims);
}

static int infer_matmul(struct ctx *c)
{
    struct cv_value *x = c->x, *b = in_val(c, 1);
    if (!b || x->ndim < 2 || b->ndim < 2)
        return node_fail(c, "expects inputs of at least 2 dims");
    int64_t n = b->dims[b->ndim - 1], dims[CV_MAX_DIMS];
    int ndim;
    struct cv_value xa = *x, xb = *b;
    xa.ndim -= 2;
    xb.ndim -= 2;
    if (broadcast(c, &xa, &xb, &ndim, dims))
        return -1;
    dims[ndim++] = x->dims[x->ndim - 2];
    dims[ndim++] = n;
    set_shape(c->o, ndim, dims);
    return 0;
}

static int infer_gemm(struct ctx *c)
{
    struct cv_value *x = c->x, *b = in_val(c, 1);
    if (!b || x->ndim < 2 || b->ndim < 2)
        return node_fail(c, "expects inputs of at least 2 dims");
    int ta = (int)onnx_attr_int(c->nd->src, "transA", 0), tb = (int)onnx_attr_int(c->nd->src, "transB", 0);
    if (ta || x->ndim != 2 || b->ndim != 2)
        return node_fail(c, "only Gemm with transA=0 on 2-D inputs is supported");
    int64_t d2[2] = {x->dims[0], tb ? b->dims[0] : b->dims[1]};
    set_shape(c->o, 2, d2);
    return 0;
}

static int infer_split(struct ctx *c)
{
    struct cv_value *x = c->x;
    const struct cv_node *nd = c->nd;
    int64_t sizes[CV_MAX_DIMS * 2];
    if (cv_split_sizes(c->g, nd, sizes) < 0)
        return node_fail(c, "split sizes must be static (a constant split or a static axis)");
    int axis = norm_axis(onnx_attr_int(nd->src, "axis", 0), x->ndim);
    for (int k = 0; k < nd->n_out; k++) {
        struct cv_value *ok = out_val(c, k);
        set_shape(ok, x->ndim, x->dims);
        ok->dims[axis] = sizes[k];
        ok->is_int = x->is_int;
    }
    if (!x->konst)
        return 0;
    int64_t inner = 1, index[64], start = 0;
    for (int d = axis + 1; d < x->ndim; d++)
        inner *= x->dims[d];
    for (int k = 0; k < nd->n_out; k++) {
        if (sizes[k] > 64)
            return node_fail(c, "constant split too large");
        for (int64_t i = 0; i < sizes[k]; i++)
            index[i] = start + i;
        struct axis_arg a = {inner, sizes[k], x->dims[axis], index};
        if (eval_gather_like(c, x->konst, out_val(c, k), axis_src, &a))
            return -1;
        start += sizes[k];
    }
    return 0;
}

static int infer_constant_of_shape(struct ctx *c)
{
    struct cv_value *x = c->x, *o = c->o;
    int64_t vals[CV_MAX_DIMS], syms[CV_MAX_DIMS];
    int n = x ? int_elems(x, vals, syms, CV_MAX_DIMS) : -1;
    if (n < 0 || !x->konst)
        return node_fail(c, "shape must be a constant");
    const struct onnx_attr *a = onnx_attr_find(c->nd->src, "value");
    struct onnx_tensor *t = cv_tensor_new(a && a->t ? a->t->i != NULL : 0, n, vals);
    if (!t)
        return node_fail(c, "out of memory");
    for (int64_t k = 0; k < t->numel; k++)
        tset(t, k, a && a->t ? tget(a->t, 0) : 0, a && a->t ? tgeti(a->t, 0) : 0);
    set_shape(o, n, vals);
    o->konst = t;
    o->is_int = t->i != NULL;
    return 0;
}

struct infer_op {
    const char *name;
    int (*infer)(struct ctx *c);
};

/* Looked up by name, one by one: the order is free. */
static const struct infer_op infer_ops[] = {
    {"Add", infer_binary},
    {"AveragePool", infer_pool},
    {"BatchNormalization", infer_pointwise},
    {"Cast", infer_cast},
    {"Clip", infer_pointwise},
    {"Concat", infer_concat},
    {"ConstantOfShape", infer_constant_of_shape},
    {"Conv", infer_conv},
    {"ConvTranspose", infer_conv_transpose},
    {"Div", infer_binary},
    {"Dropout", infer_identity},
    {"Erf", infer_pointwise},
    {"Exp", infer_pointwise},
    {"Flatten", infer_flatten},
    {"Gather", infer_gather},
    {"Gelu", infer_pointwise},
    {"Gemm", infer_gemm},
    {"GlobalAveragePool", infer_global_pool},
    {"GlobalMaxPool", infer_global_pool},
    {"HardSigmoid", infer_pointwise},
    {"HardSwish", infer_pointwise},
    {"Identity", infer_identity},
    {"LayerNormalization", infer_pointwise},
    {"LeakyRelu", infer_pointwise},
    {"MatMul", infer_matmul},
    {"MaxPool", infer_pool},
    {"Mul", infer_binary},
    {"Neg", infer_neg},
    {"Pow", infer_binary},
    {"Reciprocal", infer_reciprocal},
    {"ReduceMean", infer_reduce_mean},
    {"Relu", infer_pointwise},
    {"Reshape", infer_reshape},
    {"Resize", infer_resize},
    {"Shape", infer_shape},
    {"Sigmoid", infer_pointwise},
    {"Slice", infer_slice},
    {"Softmax", infer_pointwise},
    {"Split", infer_split},
    {"Sqrt", infer_sqrt},
    {"Squeeze", infer_squeeze},
    {"Sub", infer_binary},
    {"Tanh", infer_pointwise},
    {"Transpose", infer_transpose},
    {"Unsqueeze", infer_unsqueeze},
    {"Upsample", infer_upsample},
};

static const struct infer_op *infer_op_named(const char *name)
{
    for (size_t i = 0; i < sizeof infer_ops / sizeof *infer_ops; i++)
        if (!strcmp(name, infer_ops[i].name))
            return &infer_ops[i];
    return NULL;
}

int cv_infer_node(struct cv_graph *g, int node, char *err, size_t err_len)
{
    struct ctx c = {g, &g->nodes[node], err, err_len, NULL, NULL, 1, 0};
    c.x = in_val(&c, 0);
    c.o = out_val(&c, 0);
    for (int k = 0; k < c.nd->n_in; k++) {
        struct cv_value *v = in_val(&c, k);
        if (!v)
            continue;
        if (v->ndim < 0)
            return node_fail(&c, "input '%s' has an unknown shape", v->name);
        if (!v->konst)
            c.all_const = 0;
        if (v->part_val)
            c.any_partial = 1;
    }
    const struct infer_op *op = infer_op_named(c.nd->op);
    return op ? op->infer(&c) : node_fail(&c, "operator is not supported");
}
