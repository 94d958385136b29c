#include "nn/shape.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int64_t pvk_shape_numel(const struct pvk_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++)
        n *= s->d[i];
    return n;
}

int pvk_shape_equal(const struct pvk_shape *a, const struct pvk_shape *b)
{
    if (a->ndim != b->ndim)
        return 0;
    for (int i = 0; i < a->ndim; i++)
        if (a->d[i] != b->d[i])
            return 0;
    return 1;
}

const char *pvk_shape_str(const struct pvk_shape *s, char *buf, size_t len)
{
    size_t used = 0;
    if (!len)
        return buf;
    buf[0] = '\0';
    used += (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < s->ndim && used < len; i++)
        used += (size_t)snprintf(buf + used, len - used, i ? ", %lld" : "%lld", (long long)s->d[i]);
    if (used < len)
        snprintf(buf + used, len - used, "]");
    return buf;
}

/* ---- shape rules of single ops (shape.h) ------------------------------------------------------ */

void pvk_conv_params_from_op(const struct pvk_op *op, struct pvk_conv_params *p)
{
    p->kh = op->attr.conv.kh;
    p->kw = op->attr.conv.kw;
    p->sh = op->attr.conv.sh;
    p->sw = op->attr.conv.sw;
    p->dh = op->attr.conv.dh;
    p->dw = op->attr.conv.dw;
    p->pad_t = op->attr.conv.pad_t;
    p->pad_l = op->attr.conv.pad_l;
    p->pad_b = op->attr.conv.pad_b;
    p->pad_r = op->attr.conv.pad_r;
    p->group = op->attr.conv.group;
    p->act = (enum pvk_act)op->act;
    p->act_alpha = op->act_alpha;
    p->act_beta = op->act_beta;
    p->residual = (enum pvk_residual)op->attr.conv.residual;
}

int pvk_conv2d_out_hw(int h, int w, const struct pvk_conv_params *p, int *oh, int *ow)
{
    if (p->kh < 1 || p->kw < 1 || p->sh < 1 || p->sw < 1 || p->dh < 1 || p->dw < 1 || p->group < 1)
        return -1;
    int eh = h + p->pad_t + p->pad_b - p->dh * (p->kh - 1) - 1;
    int ew = w + p->pad_l + p->pad_r - p->dw * (p->kw - 1) - 1;
    if (eh < 0 || ew < 0)
        return -1;
    *oh = eh / p->sh + 1;
    *ow = ew / p->sw + 1;
    return 0;
}

int pvk_conv_transpose2d_out_hw(int h, int w, const struct pvk_conv_params *p, int *oh, int *ow)
{
    if (p->kh < 1 || p->kw < 1 || p->sh < 1 || p->sw < 1 || p->dh < 1 || p->dw < 1 || p->group < 1)
        return -1;
    *oh = (h - 1) * p->sh - p->pad_t - p->pad_b + p->dh * (p->kh - 1) + 1;
    *ow = (w - 1) * p->sw - p->pad_l - p->pad_r + p->dw * (p->kw - 1) + 1;
    return *oh >= 1 && *ow >= 1 ? 0 : -1;
}

void pvk_pool_params_from_op(const struct pvk_op *op, struct pvk_pool_params *p)
{
    p->kind = (enum pvk_pool_kind)op->attr.pool.kind;
    p->kh = op->attr.pool.kh;
    p->kw = op->attr.pool.kw;
    p->sh = op->attr.pool.sh;
    p->sw = op->attr.pool.sw;
    p->pad_t = op->attr.pool.pad_t;
    p->pad_l = op->attr.pool.pad_l;
    p->pad_b = op->attr.pool.pad_b;
    p->pad_r = op->attr.pool.pad_r;
    p->count_include_pad = op->attr.pool.count_include_pad;
    p->ceil_mode = op->attr.pool.ceil_mode;
}

static int pool_out_len(int len, int k, int s, int pad0, int pad1, int ceil_mode)
{
    int span = len + pad0 + pad1 - k;
    if (span < 0)
        return -1;
    int out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (out - 1) * s >= len + pad0)
        out--;
    return out;
}

int pvk_pool2d_out_hw(int h, int w, const struct pvk_pool_params *p, int *oh, int *ow)
{
    if (p->kind == PVK_POOL_GLOBAL_AVG) {
        *oh = *ow = 1;
        return h >= 1 && w >= 1 ? 0 : -1;
    }
    if (p->kh < 1 || p->kw < 1 || p->sh < 1 || p->sw < 1)
        return -1;
    *oh = pool_out_len(h, p->kh, p->sh, p->pad_t, p->pad_b, p->ceil_mode);
    *ow = pool_out_len(w, p->kw, p->sw, p->pad_l, p->pad_r, p->ceil_mode);
    return *oh >= 1 && *ow >= 1 ? 0 : -1;
}

int pvk_resize_out_hw(int h, int w, float scale_h, float scale_w, int *oh, int *ow)
{
    if (!(scale_h > 0.0f) || !(scale_w > 0.0f))
        return -1;
    *oh = (int)floorf((float)h * scale_h);
    *ow = (int)floorf((float)w * scale_w);
    return *oh >= 1 && *ow >= 1 ? 0 : -1;
}

int pvk_concat_out_shape(int n_in, const struct pvk_shape *in, int axis, struct pvk_shape *out)
{
    if (n_in < 1 || axis < 0 || axis >= in[0].ndim)
        return -1;
    *out = in[0];
    for (int i = 1; i < n_in; i++) {
        if (in[i].ndim != in[0].ndim)
            return -1;
        for (int d = 0; d < in[0].ndim; d++)
            if (d != axis && in[i].d[d] != in[0].d[d])
                return -1;
        out->d[axis] += in[i].d[axis];
    }
    return 0;
}

int pvk_transpose_out_shape(const struct pvk_shape *in, const int32_t *perm, struct pvk_shape *out)
{
    int seen[PVK_MAX_DIMS] = {0};
    if (in->ndim < 1 || in->ndim > PVK_MAX_DIMS)
        return -1;
    out->ndim = in->ndim;
    for (int i = 0; i < in->ndim; i++) {
        if (perm[i] < 0 || perm[i] >= in->ndim || seen[perm[i]]++)
            return -1;
        out->d[i] = in->d[perm[i]];
    }
    return 0;
}

int pvk_reshape_out_shape(const struct pvk_shape *in, int ndim, const int32_t *spec, struct pvk_shape *out)
{
    if (ndim < 1 || ndim > PVK_MAX_DIMS)
        return -1;
    int infer = -1;
    int64_t known = 1;
    out->ndim = ndim;
    for (int i = 0; i < ndim; i++) {
        if (spec[i] == -1) {
            if (infer >= 0)
                return -1;
            infer = i;
            continue;
        }
        if (spec[i] == 0) {
            if (i >= in->ndim)
                return -1;
            out->d[i] = in->d[i];
        } else if (spec[i] > 0) {
            out->d[i] = spec[i];
        } else {
            return -1;
        }
        /* a hostile model's sizes can overflow the product (up to 6 int32 entries): refused
         * like any other mismatch */
        if (out->d[i] > 0 && known > INT64_MAX / out->d[i])
            return -1;
        known *= out->d[i];
    }
    int64_t total = pvk_shape_numel(in);
    if (infer >= 0) {
        if (known == 0 || total % known)
            return -1;
        out->d[infer] = total / known;
    } else if (known != total) {
        return -1;
    }
    return 0;
}

int pvk_slice_out_shape(const struct pvk_shape *in, int axis, int64_t start, int64_t end, int64_t step,
                        struct pvk_shape *out, int64_t *first)
{
    if (axis < 0 || axis >= in->ndim || step < 1)
        return -1;
    int64_t dim = in->d[axis];
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    start = start < 0 ? 0 : start > dim ? dim : start;
    end = end < 0 ? 0 : end > dim ? dim : end;
    *out = *in;
    out->d[axis] = end > start ? (end - start + step - 1) / step : 0;
    *first = start;
    return out->d[axis] >= 1 ? 0 : -1;
}

int pvk_broadcast_shape(const struct pvk_shape *a, const struct pvk_shape *b, struct pvk_shape *out)
{
    int nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    if (nd > PVK_MAX_DIMS)
        return -1;
    out->ndim = nd;
    for (int i = 0; i < nd; i++) {
        int ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
        int64_t da = ia >= 0 ? a->d[ia] : 1, db = ib >= 0 ? b->d[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return -1;
        out->d[i] = da == 1 ? db : da;
    }
    return 0;
}

int pvk_matmul_out_shape(const struct pvk_shape *a, const struct pvk_shape *b, int trans_b, struct pvk_shape *out)
{
    if (a->ndim < 2 || b->ndim < 2)
        return -1;
    int64_t k = a->d[a->ndim - 1];
    int64_t kb = trans_b ? b->d[b->ndim - 1] : b->d[b->ndim - 2];
    int64_t nn = trans_b ? b->d[b->ndim - 2] : b->d[b->ndim - 1];
    if (k != kb)
        return -1;
    struct pvk_shape ba = *a, bb = *b;
    ba.ndim -= 2;
    bb.ndim -= 2;
    if (pvk_broadcast_shape(&ba, &bb, out) || out->ndim + 2 > PVK_MAX_DIMS)
        return -1;
    out->d[out->ndim++] = a->d[a->ndim - 2];
    out->d[out->ndim++] = nn;
    return 0;
}

/* ---- shape inference over a net ------------------------------------------------------------- */

/* Context of one op's check, so that every message names the op the same way. */
struct shape_ctx {
    const struct pvk_model *model;
    struct pvk_shape *shapes;
    int index;
    const struct pvk_op *op;
    char *err;
    size_t err_len;
};

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int
fail(const struct shape_ctx *c, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (c->err && c->err_len)
        snprintf(c->err, c->err_len, "op %d (%.64s, %s): %s", c->index, c->op->name,
                 pvk_op_type_name((enum pvk_op_type)c->op->type), msg);
    return -1;
}

/* Shape of activation input `slot`, or NULL (with err set) if it has no value yet. */
static const struct pvk_shape *input(const struct shape_ctx *c, int slot)
{
    int32_t id = c->op->inputs[slot];
    if (slot >= (int)c->op->n_inputs || id < 0 || (uint32_t)id >= c->model->n_tensors) {
        fail(c, "input %d is missing", slot);
        return NULL;
    }
    if (c->shapes[id].ndim == 0) {
        fail(c, "input %d (tensor %d '%.64s') is used before any op produces it", slot, id, c->model->tensors[id].name);
        return NULL;
    }
    return &c->shapes[id];
}

/* Shape of constant `slot`, or NULL: if it is required, err is set. */
static const struct pvk_shape *weight(const struct shape_ctx *c, int slot, int required)
{
    int32_t id = c->op->weights[slot];
    if (id < 0 || (uint32_t)id >= c->model->n_tensors) {
        if (required)
            fail(c, "weight %d is missing", slot);
        return NULL;
    }
    return &c->shapes[id];
}

static int check_numel(const struct shape_ctx *c, const struct pvk_shape *s, int64_t want, const char *what)
{
    if (s && pvk_shape_numel(s) != want)
        return fail(c, "%s has %lld values, expected %lld", what, (long long)pvk_shape_numel(s), (long long)want);
    return 0;
}

/* s's element count; -1 when a dim is below 1 or the count passes PVK_SHAPE_MAX_NUMEL. Each factor
 * is compared before it multiplies, so that no shape, however hostile, overflows int64 on the way
 * (a wrapped product can look small). */
static int64_t capped_numel(const struct pvk_shape *s)
{
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) {
        if (s->d[i] < 1 || s->d[i] > PVK_SHAPE_MAX_NUMEL / n)
            return -1;
        n *= s->d[i];
    }
    return n;
}

/* Why capped_numel refused s: "has an empty or negative dimension" or "has more than N elements". */
static const char *numel_reason(const struct pvk_shape *s, char *buf, size_t len)
{
    for (int i = 0; i < s->ndim; i++)
        if (s->d[i] < 1)
            return "has an empty or negative dimension";
    snprintf(buf, len, "has more than %d elements (GPU element offsets are 32-bit)", PVK_SHAPE_MAX_NUMEL);
    return buf;
}

/* The spatial rules above compute in int. Activations are capped, but what an op's
 * attributes add to an extent (pads, a transposed conv's stride) can still carry the rule's
 * arithmetic past INT_MAX before it could refuse: eh x ew, the largest value the rule forms, is
 * computed here in int64 (attributes are at most 4096 after loading) and refused first. */
static int extent_fits(const struct shape_ctx *c, const struct pvk_shape *x, int64_t eh, int64_t ew)
{
    char a[64];
    if (eh <= INT32_MAX && ew <= INT32_MAX)
        return 0;
    return fail(c, "a %s input reaches an extent of %lld x %lld, more than the %d elements a tensor may have",
                pvk_shape_str(x, a, sizeof a), (long long)eh, (long long)ew, PVK_SHAPE_MAX_NUMEL);
}

static int check_rank(const struct shape_ctx *c, const struct pvk_shape *s, int ndim, const char *what)
{
    if (s->ndim != ndim)
        return fail(c, "%s has rank %d, expected %d", what, s->ndim, ndim);
    return 0;
}

static int shape_conv(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_op *op = c->op;
    const struct pvk_shape *x = input(c, 0), *w = weight(c, 0, 1), *b = weight(c, 1, 0);
    struct pvk_conv_params p;
    int oh, ow;
    if (!x || !w || check_rank(c, x, 4, "input") || check_rank(c, w, 4, "weight"))
        return -1;
    pvk_conv_params_from_op(op, &p);
    if (p.group < 1 || w->d[2] != p.kh || w->d[3] != p.kw)
        return fail(c, "weight is %lldx%lld, attributes say %dx%d (group %d)", (long long)w->d[2], (long long)w->d[3],
                    p.kh, p.kw, p.group);
    int transpose = op->type == PVK_OP_CONV_TRANSPOSE2D;
    int64_t in_c = transpose ? w->d[0] : w->d[1] * p.group;
    int64_t out_c = transpose ? w->d[1] * p.group : w->d[0];
    if (x->d[1] != in_c)
        return fail(c, "input has %lld channels, weight expects %lld (group %d)", (long long)x->d[1], (long long)in_c,
                    p.group);
    if (out_c % p.group || in_c % p.group)
        return fail(c, "channels %lld -> %lld do not split into %d groups", (long long)in_c, (long long)out_c, p.group);
    if (check_numel(c, b, out_c, "bias"))
        return -1;
    int64_t ih = x->d[2], iw = x->d[3];
    if (transpose ? extent_fits(c, x, (ih - 1) * p.sh + (int64_t)p.dh * (p.kh - 1) + 1,
                                (iw - 1) * p.sw + (int64_t)p.dw * (p.kw - 1) + 1)
                  : extent_fits(c, x, ih + p.pad_t + p.pad_b, iw + p.pad_l + p.pad_r))
        return -1;
    int bad = transpose ? pvk_conv_transpose2d_out_hw((int)x->d[2], (int)x->d[3], &p, &oh, &ow)
                        : pvk_conv2d_out_hw((int)x->d[2], (int)x->d[3], &p, &oh, &ow);
    if (bad)
        return fail(c, "a %lldx%lld input gives an empty output (k %dx%d, s %dx%d, pads %d %d %d %d)",
                    (long long)x->d[2], (long long)x->d[3], p.kh, p.kw, p.sh, p.sw, p.pad_t, p.pad_l, p.pad_b, p.pad_r);
    *out = (struct pvk_shape){4, {x->d[0], out_c, oh, ow}};
    if (!transpose && (p.residual != PVK_RESIDUAL_NONE || op->n_inputs > 1)) {
        const struct pvk_shape *r = input(c, 1);
        char a[64], e[64];
        if (!r)
            return -1;
        if (p.residual == PVK_RESIDUAL_NONE || !pvk_shape_equal(r, out))
            return fail(c, "residual %s does not match output %s (mode %d)", pvk_shape_str(r, a, sizeof a),
                        pvk_shape_str(out, e, sizeof e), p.residual);
    }
    return 0;
}

static int shape_pool2d(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *x = input(c, 0);
    struct pvk_pool_params p;
    int oh, ow;
    if (!x || check_rank(c, x, 4, "input"))
        return -1;
    pvk_pool_params_from_op(c->op, &p);
    /* span + stride bounds every value the window count forms (ceil mode included) */
    if (p.kind != PVK_POOL_GLOBAL_AVG &&
        extent_fits(c, x, x->d[2] + p.pad_t + p.pad_b + p.sh, x->d[3] + p.pad_l + p.pad_r + p.sw))
        return -1;
    if (p.kind > PVK_POOL_GLOBAL_AVG || pvk_pool2d_out_hw((int)x->d[2], (int)x->d[3], &p, &oh, &ow))
        return fail(c, "pool (kind %d) k %dx%d, s %dx%d does not fit a %lldx%lld input", p.kind, p.kh, p.kw, p.sh, p.sw,
                    (long long)x->d[2], (long long)x->d[3]);
    *out = (struct pvk_shape){4, {x->d[0], x->d[1], oh, ow}};
    return 0;
}

static int shape_resize(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *x = input(c, 0);
    float sh = c->op->attr.resize.scale_h, sw = c->op->attr.resize.scale_w;
    char a[64];
    int oh, ow;
    if (!x || check_rank(c, x, 4, "input"))
        return -1;
    /* the products exactly as pvk_resize_out_hw forms them in float: an int conversion of one at
     * 2^31 or more (an infinite scale) is undefined */
    if (!((float)x->d[2] * sh < 0x1p31f) || !((float)x->d[3] * sw < 0x1p31f))
        return fail(c, "scales %g x %g take a %s input past %d elements", (double)sh, (double)sw,
                    pvk_shape_str(x, a, sizeof a), PVK_SHAPE_MAX_NUMEL);
    if (c->op->attr.resize.mode < 0 || c->op->attr.resize.mode > PVK_RESIZE_BILINEAR_ALIGN_CORNERS ||
        pvk_resize_out_hw((int)x->d[2], (int)x->d[3], sh, sw, &oh, &ow))
        return fail(c, "resize mode %d with scales %g x %g is invalid", c->op->attr.resize.mode, (double)sh,
                    (double)sw);
    *out = (struct pvk_shape){4, {x->d[0], x->d[1], oh, ow}};
    return 0;
}

static int shape_concat(const struct shape_ctx *c, struct pvk_shape *out)
{
    struct pvk_shape in[PVK_MAX_INPUTS];
    int n = (int)c->op->n_inputs;
    if (n < 1 || n > PVK_MAX_INPUTS)
        return fail(c, "%d inputs", n);
    for (int i = 0; i < n; i++) {
        const struct pvk_shape *s = input(c, i);
        if (!s)
            return -1;
        in[i] = *s;
    }
    if (pvk_concat_out_shape(n, in, c->op->attr.axis.axis, out)) {
        char a[64], b[64];
        for (int i = 1; i < n; i++)
            if (pvk_concat_out_shape(2, (struct pvk_shape[]){in[0], in[i]}, c->op->attr.axis.axis, out))
                return fail(c, "input %d %s does not concatenate with input 0 %s on axis %d", i,
                            pvk_shape_str(&in[i], a, sizeof a), pvk_shape_str(&in[0], b, sizeof b),
                            c->op->attr.axis.axis);
        return fail(c, "axis %d is out of range for rank %d", c->op->attr.axis.axis, in[0].ndim);
    }
    return 0;
}

static int shape_binary(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *a = input(c, 0);
    const struct pvk_shape *b = c->op->n_inputs > 1 ? input(c, 1) : weight(c, 0, 1);
    char sa[64], sb[64];
    if (!a || !b)
        return -1;
    if (c->op->attr.binary.kind < PVK_BIN_ADD || c->op->attr.binary.kind > PVK_BIN_DIV)
        return fail(c, "unknown binary kind %d", c->op->attr.binary.kind);
    if (pvk_broadcast_shape(a, b, out))
        return fail(c, "%s and %s do not broadcast", pvk_shape_str(a, sa, sizeof sa), pvk_shape_str(b, sb, sizeof sb));
    return 0;
}

static int shape_affine(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *x = input(c, 0), *s = weight(c, 0, 1), *t = weight(c, 1, 1);
    if (!x || !s || !t)
        return -1;
    if (x->ndim < 2)
        return fail(c, "input has rank %d, needs an axis 1", x->ndim);
    if (check_numel(c, s, x->d[1], "scale") || check_numel(c, t, x->d[1], "shift"))
        return -1;
    *out = *x;
    return 0;
}

static int shape_se(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *x = input(c, 0), *w1 = weight(c, 0, 1), *b1 = weight(c, 1, 0);
    const struct pvk_shape *w2 = weight(c, 2, 1), *b2 = weight(c, 3, 0);
    if (!x || !w1 || !w2 || check_rank(c, x, 4, "input"))
        return -1;
    int64_t ch = x->d[1], n1 = pvk_shape_numel(w1);
    if (ch < 1 || n1 % ch || n1 == 0)
        return fail(c, "W1 has %lld values, not a multiple of the %lld channels", (long long)n1, (long long)ch);
    int64_t cr = n1 / ch;
    if (check_numel(c, w2, ch * cr, "W2") || check_numel(c, b1, cr, "b1") || check_numel(c, b2, ch, "b2"))
        return -1;
    *out = *x;
    return 0;
}

static int shape_matmul(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *a = input(c, 0);
    const struct pvk_shape *b = c->op->n_inputs > 1 ? input(c, 1) : weight(c, 0, 1);
    const struct pvk_shape *bias = weight(c, 1, 0);
    char sa[64], sb[64];
    if (!a || !b)
        return -1;
    if (pvk_matmul_out_shape(a, b, c->op->attr.matmul.trans_b, out))
        return fail(c, "%s times %s%s does not multiply", pvk_shape_str(a, sa, sizeof sa),
                    pvk_shape_str(b, sb, sizeof sb), c->op->attr.matmul.trans_b ? "^T" : "");
    return check_numel(c, bias, out->d[out->ndim - 1], "bias");
}

static int shape_layernorm(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *x = input(c, 0), *g = weight(c, 0, 0), *b = weight(c, 1, 0);
    if (!x)
        return -1;
    if (check_numel(c, g, x->d[x->ndim - 1], "gamma") || check_numel(c, b, x->d[x->ndim - 1], "beta"))
        return -1;
    if (!(c->op->attr.norm.eps >= 0.0f))
        return fail(c, "eps %g is negative", (double)c->op->attr.norm.eps);
    *out = *x;
    return 0;
}

static int shape_attention(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *x = input(c, 0);
    int heads = c->op->attr.attention.heads;
    if (!x || check_rank(c, x, 3, "qkv"))
        return -1;
    if (x->d[2] % 3 || heads < 1 || (x->d[2] / 3) % heads)
        return fail(c, "qkv width %lld is not 3 x (a multiple of %d heads)", (long long)x->d[2], heads);
    *out = (struct pvk_shape){3, {x->d[0], x->d[1], x->d[2] / 3}};
    return 0;
}

static int shape_transpose(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *x = input(c, 0);
    if (!x)
        return -1;
    if (c->op->attr.transpose.ndim != x->ndim || pvk_transpose_out_shape(x, c->op->attr.transpose.perm, out))
        return fail(c, "perm of rank %d is not a permutation for an input of rank %d", c->op->attr.transpose.ndim,
                    x->ndim);
    return 0;
}

static int shape_reshape(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *x = input(c, 0);
    char sa[64], spec[96];
    if (!x)
        return -1;
    int nd = c->op->attr.reshape.ndim;
    if (pvk_reshape_out_shape(x, nd, c->op->attr.reshape.shape, out)) {
        struct pvk_shape s = {nd < 0 ? 0 : nd > PVK_MAX_DIMS ? PVK_MAX_DIMS : nd, {0}};
        for (int i = 0; i < s.ndim; i++)
            s.d[i] = c->op->attr.reshape.shape[i];
        return fail(c, "cannot reshape %s (%lld values) to %s (0: copy, -1: inferred)", pvk_shape_str(x, sa, sizeof sa),
                    (long long)pvk_shape_numel(x), pvk_shape_str(&s, spec, sizeof spec));
    }
    return 0;
}

static int shape_slice(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *x = input(c, 0);
    int64_t first;
    char sa[64];
    if (!x)
        return -1;
    if (pvk_slice_out_shape(x, c->op->attr.slice.axis, c->op->attr.slice.start, c->op->attr.slice.end,
                            c->op->attr.slice.step, out, &first))
        return fail(c, "slice axis %d [%d:%d:%d] of %s is empty or invalid", c->op->attr.slice.axis,
                    c->op->attr.slice.start, c->op->attr.slice.end, c->op->attr.slice.step,
                    pvk_shape_str(x, sa, sizeof sa));
    return 0;
}

static int shape_softmax(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *x = input(c, 0);
    if (!x)
        return -1;
    if (c->op->attr.axis.axis < 0 || c->op->attr.axis.axis >= x->ndim)
        return fail(c, "axis %d out of range for rank %d", c->op->attr.axis.axis, x->ndim);
    *out = *x;
    return 0;
}

static int shape_argmax(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *x = input(c, 0);
    if (!x)
        return -1;
    if (x->ndim < 2)
        return fail(c, "input has rank %d; argmax keeps at least one axis", x->ndim);
    *out = *x;
    out->ndim--;
    return 0;
}

static int shape_conv2d(const struct shape_ctx *c, struct pvk_shape *out)
{
    return shape_conv(c, out);
}
static int shape_conv_transpose2d(const struct shape_ctx *c, struct pvk_shape *out)
{
    return shape_conv(c, out);
}

static int shape_unary(const struct shape_ctx *c, struct pvk_shape *out)
{
    const struct pvk_shape *x = input(c, 0);
    if (!x)
        return -1;
    *out = *x;
    return 0;
}

/* The shape of the op's first output (ARGMAX's second output has the same shape), by op type. */
typedef int (*shape_rule_fn)(const struct shape_ctx *c, struct pvk_shape *out);
#define RULE_ROW(id, value, name, max_in, max_out) [PVK_OP_##id] = shape_##name,
static const shape_rule_fn shape_rules[PVK_OP_COUNT] = {PVK_OPS(RULE_ROW)};
#undef RULE_ROW

static int op_out_shape(const struct shape_ctx *c, struct pvk_shape *out)
{
    if (c->op->type < 1 || c->op->type >= PVK_OP_COUNT)
        return fail(c, "unknown op type %u", c->op->type);
    return shape_rules[c->op->type](c, out);
}

static void from_tensor(const struct pvk_tensor *t, struct pvk_shape *s)
{
    s->ndim = (int32_t)(t->ndim <= PVK_MAX_DIMS ? t->ndim : PVK_MAX_DIMS);
    for (int i = 0; i < s->ndim; i++)
        s->d[i] = t->shape[i];
}

/* The file records a shape per activation, with -1 for run-time dims: the inferred one must agree. */
static int agrees_with_file(const struct pvk_tensor *t, const struct pvk_shape *s)
{
    if (t->ndim == 0)
        return 1; /* no recorded shape */
    if ((int)t->ndim != s->ndim)
        return 0;
    for (int i = 0; i < s->ndim; i++)
        if (t->shape[i] >= 0 && t->shape[i] != s->d[i])
            return 0;
    return 1;
}

int pvk_infer_shapes(const struct pvk_model *model, const int64_t input_nchw[4], struct pvk_shape *shapes, char *err,
                     size_t err_len)
{
    char a[96], b[96];
    memset(shapes, 0, sizeof(*shapes) * model->n_tensors);
    for (uint32_t i = 0; i < model->n_tensors; i++)
        if (model->tensors[i].kind == PVK_TENSOR_CONSTANT)
            from_tensor(&model->tensors[i], &shapes[i]);
    if (model->input < 0 || (uint32_t)model->input >= model->n_tensors) {
        snprintf(err, err_len, "model input tensor id %d is out of range", model->input);
        return -1;
    }
    struct pvk_shape *in = &shapes[model->input];
    *in = (struct pvk_shape){4, {input_nchw[0], input_nchw[1], input_nchw[2], input_nchw[3]}};
    if (capped_numel(in) < 0) {
        snprintf(err, err_len, "input shape %s %s", pvk_shape_str(in, a, sizeof a), numel_reason(in, b, sizeof b));
        return -1;
    }
    if (!agrees_with_file(&model->tensors[model->input], in)) {
        struct pvk_shape want;
        from_tensor(&model->tensors[model->input], &want);
        snprintf(err, err_len, "input shape %s does not fit the model's input %s (-1: any)",
                 pvk_shape_str(in, a, sizeof a), pvk_shape_str(&want, b, sizeof b));
        return -1;
    }
    for (uint32_t k = 0; k < model->n_ops; k++) {
        const struct pvk_op *op = &model->ops[k];
        struct shape_ctx c = {model, shapes, (int)k, op, err, err_len};
        struct pvk_shape out;
        if (op_out_shape(&c, &out))
            return -1;
        /* the one check every op's output passes: the rules above refuse what their own op gets
         * wrong, this what any of them could still give (a broadcast against an empty constant,
         * a concat or a matmul past the cap) */
        if (capped_numel(&out) < 0)
            return fail(&c, "output %s %s", pvk_shape_str(&out, a, sizeof a), numel_reason(&out, b, sizeof b));
        int n_out = op->type == PVK_OP_ARGMAX ? 2 : 1;
        for (int o = 0; o < n_out; o++) {
            int32_t id = op->outputs[o];
            if (o >= (int)op->n_outputs || id < 0) {
                if (o == 0)
                    return fail(&c, "has no output tensor");
                continue; /* ARGMAX's max value may be dropped */
            }
            if ((uint32_t)id >= model->n_tensors || model->tensors[id].kind != PVK_TENSOR_ACTIVATION)
                return fail(&c, "output %d (tensor %d) is not an activation", o, id);
            if (shapes[id].ndim != 0)
                return fail(&c, "output %d (tensor %d '%.64s') is written twice", o, id, model->tensors[id].name);
            if (!agrees_with_file(&model->tensors[id], &out)) {
                struct pvk_shape want;
                from_tensor(&model->tensors[id], &want);
                return fail(&c, "output %d is %s but the model records %s for '%.64s'", o,
                            pvk_shape_str(&out, a, sizeof a), pvk_shape_str(&want, b, sizeof b),
                            model->tensors[id].name);
            }
            shapes[id] = out;
        }
    }
    if (model->output < 0 || (uint32_t)model->output >= model->n_tensors || shapes[model->output].ndim == 0) {
        snprintf(err, err_len, "model output tensor %d is never produced", model->output);
        return -1;
    }
    return 0;
}
