#include "nn/cpu/cpu_exec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/cpu/ref_ops.h"
#include "nn/half.h"

struct exec {
    const struct pvk_model *model;
    struct pvk_shape *shapes;
    enum pvk_dtype *dtypes;
    void **owned;      /* activations (and fp16 constants widened to fp32) this run allocated */
    const void **data; /* every tensor's data: owned, mapped constant or the caller's input */
    int32_t *last_use; /* index of the last op reading each tensor, -1 if none */
    size_t live_bytes, peak_bytes;
    char *err;
    size_t err_len;
};

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail_op(struct exec *e, int k, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (k < 0)
        snprintf(e->err, e->err_len, "%s", msg);
    else
        snprintf(e->err, e->err_len, "op %d (%.64s, %s): %s", k, e->model->ops[k].name,
                 pvk_op_type_name((enum pvk_op_type)e->model->ops[k].type), msg);
    return -1;
}

/* fp32 view of a constant (fp16 ones are widened once and kept for the run); NULL for id < 0. */
static const float *constant(struct exec *e, int k, int32_t id, int *bad)
{
    if (id < 0)
        return NULL;
    if (e->data[id])
        return e->data[id];
    const struct pvk_tensor *t = &e->model->tensors[id];
    const void *raw = pvk_tensor_data(e->model, id);
    if (!raw) {
        *bad = fail_op(e, k, "weight tensor %d '%.64s' has no data", id, t->name);
        return NULL;
    }
    if (t->dtype == PVK_DTYPE_F32) {
        e->data[id] = raw;
    } else if (t->dtype == PVK_DTYPE_F16) {
        size_t n = (size_t)pvk_tensor_numel(t);
        float *f = malloc(n * sizeof(float) + 1);
        if (!f) {
            *bad = fail_op(e, k, "out of memory widening '%.64s'", t->name);
            return NULL;
        }
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, (const char *)raw + 2 * i, 2);
            f[i] = nn_half_to_float(h);
        }
        e->owned[id] = f;
        e->data[id] = f;
    } else {
        *bad = fail_op(e, k, "weight tensor %d '%.64s' has dtype %u, expected f32 or f16", id, t->name, t->dtype);
        return NULL;
    }
    return e->data[id];
}

/* fp32 activation input `slot` of op k, or NULL with err set. */
static const float *act_input(struct exec *e, int k, int slot)
{
    int32_t id = e->model->ops[k].inputs[slot];
    if (e->dtypes[id] != PVK_DTYPE_F32) {
        fail_op(e, k, "input %d (tensor '%.64s') is not f32", slot, e->model->tensors[id].name);
        return NULL;
    }
    return e->data[id];
}

static const struct pvk_shape *in_shape(const struct exec *e, int k, int slot)
{
    return &e->shapes[e->model->ops[k].inputs[slot]];
}

/* One op's run: its inputs' and output's shapes, x (input 0, fp32) and its outputs. */
struct op_run {
    struct exec *e;
    int k;
    const struct pvk_op *op;
    const struct pvk_shape *xs, *ys;
    const float *x;
    float *y;
    void *out0, *out1;
};

/* What an op function returns when it has applied the op's activation itself (or takes none);
 * 0 has run_op apply it, -1 is a failure (err set). */
#define ACT_APPLIED 1

static int cpu_conv2d(const struct op_run *r)
{
    struct exec *e = r->e;
    const struct pvk_op *op = r->op;
    const struct pvk_shape *xs = r->xs;
    struct pvk_conv_params p;
    int bad = 0;
    const float *w = constant(e, r->k, op->weights[0], &bad), *b = constant(e, r->k, op->weights[1], &bad);
    const float *res = NULL;
    if (bad)
        return -1;
    pvk_conv_params_from_op(op, &p);
    if (p.residual != PVK_RESIDUAL_NONE && !(res = act_input(e, r->k, 1)))
        return -1;
    ref_conv2d(r->x, (int)xs->d[0], (int)xs->d[1], (int)xs->d[2], (int)xs->d[3], w, b, (int)r->ys->d[1], &p, res, r->y);
    return ACT_APPLIED; /* the activation is fused */
}

static int cpu_conv_transpose2d(const struct op_run *r)
{
    const struct pvk_shape *xs = r->xs;
    struct pvk_conv_params p;
    int bad = 0;
    const float *w = constant(r->e, r->k, r->op->weights[0], &bad), *b = constant(r->e, r->k, r->op->weights[1], &bad);
    if (bad)
        return -1;
    pvk_conv_params_from_op(r->op, &p);
    ref_conv_transpose2d(r->x, (int)xs->d[0], (int)xs->d[1], (int)xs->d[2], (int)xs->d[3], w, b, (int)r->ys->d[1], &p,
                         r->y);
    return 0;
}

static int cpu_pool2d(const struct op_run *r)
{
    const struct pvk_shape *xs = r->xs;
    struct pvk_pool_params p;
    pvk_pool_params_from_op(r->op, &p);
    ref_pool2d(r->x, (int)xs->d[0], (int)xs->d[1], (int)xs->d[2], (int)xs->d[3], &p, r->y);
    return 0;
}

static int cpu_resize(const struct op_run *r)
{
    const struct pvk_shape *xs = r->xs;
    const struct pvk_op *op = r->op;
    ref_resize(r->x, (int)xs->d[0], (int)xs->d[1], (int)xs->d[2], (int)xs->d[3],
               (enum pvk_resize_mode)op->attr.resize.mode, op->attr.resize.scale_h, op->attr.resize.scale_w,
               (int)r->ys->d[2], (int)r->ys->d[3], r->y);
    return 0;
}

static int cpu_concat(const struct op_run *r)
{
    const float *xv[PVK_MAX_INPUTS];
    struct pvk_shape sv[PVK_MAX_INPUTS];
    for (uint32_t i = 0; i < r->op->n_inputs; i++) {
        if (!(xv[i] = act_input(r->e, r->k, (int)i)))
            return -1;
        sv[i] = *in_shape(r->e, r->k, (int)i);
    }
    ref_concat((int)r->op->n_inputs, xv, sv, r->op->attr.axis.axis, r->y);
    return 0;
}

static int cpu_binary(const struct op_run *r)
{
    struct exec *e = r->e;
    const struct pvk_op *op = r->op;
    const float *b;
    const struct pvk_shape *bs;
    int bad = 0;
    if (op->n_inputs > 1) {
        b = act_input(e, r->k, 1);
        bs = in_shape(e, r->k, 1);
    } else {
        b = constant(e, r->k, op->weights[0], &bad);
        bs = &e->shapes[op->weights[0]];
    }
    if (!b)
        return -1;
    ref_binary((enum pvk_binary_kind)op->attr.binary.kind, r->x, r->xs, b, bs, r->ys, r->y);
    return 0;
}

static int cpu_unary(const struct op_run *r)
{
    memcpy(r->y, r->x, (size_t)pvk_shape_numel(r->xs) * sizeof(float));
    return 0;
}

static int cpu_reshape(const struct op_run *r)
{
    return cpu_unary(r);
}

static int cpu_affine(const struct op_run *r)
{
    const struct pvk_shape *xs = r->xs;
    int bad = 0;
    const float *s = constant(r->e, r->k, r->op->weights[0], &bad), *t = constant(r->e, r->k, r->op->weights[1], &bad);
    if (bad)
        return -1;
    int64_t inner = pvk_shape_numel(xs) / (xs->d[0] * xs->d[1]);
    ref_affine(r->x, xs->d[0], xs->d[1], inner, s, t, r->y);
    return 0;
}

static int cpu_se(const struct op_run *r)
{
    struct exec *e = r->e;
    const struct pvk_op *op = r->op;
    const struct pvk_shape *xs = r->xs;
    int k = r->k, bad = 0;
    const float *w1 = constant(e, k, op->weights[0], &bad), *b1 = constant(e, k, op->weights[1], &bad);
    const float *w2 = constant(e, k, op->weights[2], &bad), *b2 = constant(e, k, op->weights[3], &bad);
    if (bad)
        return -1;
    int cr = (int)(pvk_shape_numel(&e->shapes[op->weights[0]]) / xs->d[1]);
    if (ref_se(r->x, (int)xs->d[0], (int)xs->d[1], (int)xs->d[2], (int)xs->d[3], cr, w1, b1, w2, b2,
               (enum pvk_act)op->attr.se.gate_act, op->attr.se.gate_alpha, op->attr.se.gate_beta, op->attr.se.residual,
               r->y))
        return fail_op(e, k, "out of memory");
    return 0;
}

static int cpu_matmul(const struct op_run *r)
{
    struct exec *e = r->e;
    const struct pvk_op *op = r->op;
    int bad = 0;
    const float *b, *bias = constant(e, r->k, op->weights[1], &bad);
    const struct pvk_shape *bs;
    if (op->n_inputs > 1) {
        b = act_input(e, r->k, 1);
        bs = in_shape(e, r->k, 1);
    } else {
        b = constant(e, r->k, op->weights[0], &bad);
        bs = &e->shapes[op->weights[0]];
    }
    if (!b || bad)
        return -1;
    ref_matmul(r->x, r->xs, b, bs, op->attr.matmul.trans_b, bias, r->ys, r->y);
    return 0;
}

static int cpu_layernorm(const struct op_run *r)
{
    const struct pvk_shape *xs = r->xs;
    int bad = 0;
    const float *g = constant(r->e, r->k, r->op->weights[0], &bad), *b = constant(r->e, r->k, r->op->weights[1], &bad);
    if (bad)
        return -1;
    int64_t c = xs->d[xs->ndim - 1];
    ref_layernorm(r->x, pvk_shape_numel(xs) / c, c, g, b, r->op->attr.norm.eps, r->y);
    return 0;
}

static int cpu_softmax(const struct op_run *r)
{
    const struct pvk_shape *xs = r->xs;
    int a = r->op->attr.axis.axis;
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < a; i++)
        outer *= xs->d[i];
    for (int i = a + 1; i < xs->ndim; i++)
        inner *= xs->d[i];
    ref_softmax(r->x, outer, xs->d[a], inner, r->y);
    return 0;
}

static int cpu_attention(const struct op_run *r)
{
    ref_attention(r->x, (int)r->xs->d[0], (int)r->xs->d[1], (int)r->ys->d[2], r->op->attr.attention.heads,
                  r->op->attr.attention.scale, r->y);
    return 0;
}

static int cpu_transpose(const struct op_run *r)
{
    ref_transpose(r->x, r->xs, r->op->attr.transpose.perm, r->y);
    return 0;
}

static int cpu_slice(const struct op_run *r)
{
    const struct pvk_op *op = r->op;
    struct pvk_shape s;
    int64_t first;
    pvk_slice_out_shape(r->xs, op->attr.slice.axis, op->attr.slice.start, op->attr.slice.end, op->attr.slice.step, &s,
                        &first);
    ref_slice(r->x, r->xs, op->attr.slice.axis, first, op->attr.slice.step, r->ys, r->y);
    return 0;
}

static int cpu_argmax(const struct op_run *r)
{
    const struct pvk_shape *xs = r->xs;
    int softmax = r->op->attr.argmax.value == PVK_ARGMAX_VALUE_SOFTMAX;
    int64_t c = xs->d[xs->ndim - 1], rows = pvk_shape_numel(xs) / c;
    ref_argmax(r->x, rows, c, r->out0, softmax ? NULL : r->out1);
    if (softmax)
        ref_softmax_of_max(r->x, rows, c, r->out1);
    return ACT_APPLIED; /* an index takes no activation */
}

typedef int (*cpu_op_fn)(const struct op_run *r);
#define CPU_ROW(id, value, name, max_in, max_out) [PVK_OP_##id] = cpu_##name,
static const cpu_op_fn cpu_ops[PVK_OP_COUNT] = {PVK_OPS(CPU_ROW)};
#undef CPU_ROW

static int run_op(struct exec *e, int k, void *out0, void *out1)
{
    const struct pvk_op *op = &e->model->ops[k];
    struct op_run r = {e, k, op, in_shape(e, k, 0), &e->shapes[op->outputs[0]], act_input(e, k, 0), out0, out0, out1};
    if (!r.x)
        return -1;
    if (op->type < 1 || op->type >= PVK_OP_COUNT)
        return fail_op(e, k, "unknown op type %u", op->type);
    int rc = cpu_ops[op->type](&r);
    if (rc)
        return rc < 0 ? -1 : 0;
    ref_act((enum pvk_act)op->act, op->act_alpha, op->act_beta, r.y, (size_t)pvk_shape_numel(r.ys));
    return 0;
}

static void release(struct exec *e, int32_t id)
{
    if (e->owned[id])
        e->live_bytes -= (size_t)pvk_shape_numel(&e->shapes[id]) * 4;
    free(e->owned[id]);
    e->owned[id] = NULL;
    e->data[id] = NULL;
}

static int run_ops(struct exec *e, const float *input, pvk_cpu_layer_fn on_layer, void *user)
{
    const struct pvk_model *m = e->model;
    e->data[m->input] = input;
    e->dtypes[m->input] = PVK_DTYPE_F32;
    for (uint32_t k = 0; k < m->n_ops; k++) {
        const struct pvk_op *op = &m->ops[k];
        void *out[2] = {NULL, NULL};
        int n_out = op->type == PVK_OP_ARGMAX ? 2 : 1;
        for (int o = 0; o < n_out; o++) {
            int32_t id = op->outputs[o];
            size_t n = (size_t)pvk_shape_numel(&e->shapes[id < 0 ? op->outputs[0] : id]);
            /* ARGMAX's max value is computed even when the model drops it, into scratch. */
            out[o] = malloc(n * 4 + 1);
            if (!out[o]) {
                free(out[0]);
                return fail_op(e, (int)k, "out of memory for a %zu-element output", n);
            }
            e->live_bytes += n * 4;
            if (e->live_bytes > e->peak_bytes)
                e->peak_bytes = e->live_bytes;
            if (id >= 0) {
                e->owned[id] = out[o];
                e->data[id] = out[o];
                e->dtypes[id] = op->type == PVK_OP_ARGMAX && o == 0 ? PVK_DTYPE_I32 : PVK_DTYPE_F32;
            }
        }
        int rc = run_op(e, (int)k, out[0], out[1]);
        if (n_out == 2 && op->outputs[1] < 0) {
            free(out[1]);
            e->live_bytes -= (size_t)pvk_shape_numel(&e->shapes[op->outputs[0]]) * 4;
        }
        if (rc)
            return -1;
        for (int o = 0; o < n_out && on_layer; o++) {
            int32_t id = op->outputs[o];
            if (id >= 0 && on_layer(user, (int)k, op, o, &e->shapes[id], e->dtypes[id], e->data[id]))
                return fail_op(e, (int)k, "stopped by the layer callback");
        }
        /* Liveness: drop what no later op reads (the net output stays). */
        for (int o = 0; o < n_out; o++) {
            int32_t id = op->outputs[o];
            if (id >= 0 && id != m->output && e->last_use[id] < (int32_t)k)
                release(e, id);
        }
        for (uint32_t i = 0; i < op->n_inputs; i++) {
            int32_t id = op->inputs[i];
            if (id >= 0 && id != m->output && e->last_use[id] == (int32_t)k && e->owned[id] &&
                m->tensors[id].kind == PVK_TENSOR_ACTIVATION)
                release(e, id);
        }
    }
    return 0;
}

int pvk_cpu_run(const struct pvk_model *model, const float *input, const int64_t input_nchw[4],
                pvk_cpu_layer_fn on_layer, void *user, struct pvk_cpu_result *out, char *err, size_t err_len)
{
    struct exec e = {model, NULL, NULL, NULL, NULL, NULL, 0, 0, err, err_len};
    size_t n = model->n_tensors;
    int rc = -1;
    memset(out, 0, sizeof *out);
    e.shapes = calloc(n + 1, sizeof *e.shapes);
    e.dtypes = calloc(n + 1, sizeof *e.dtypes);
    e.owned = calloc(n + 1, sizeof *e.owned);
    e.data = calloc(n + 1, sizeof *e.data);
    e.last_use = malloc((n + 1) * sizeof *e.last_use);
    if (!e.shapes || !e.dtypes || !e.owned || !e.data || !e.last_use) {
        fail_op(&e, -1, "out of memory for %zu tensors", n);
        goto done;
    }
    if (pvk_infer_shapes(model, input_nchw, e.shapes, err, err_len))
        goto done;
    for (size_t i = 0; i < n; i++)
        e.last_use[i] = -1;
    for (uint32_t k = 0; k < model->n_ops; k++)
        for (uint32_t i = 0; i < model->ops[k].n_inputs; i++)
            if (model->ops[k].inputs[i] >= 0)
                e.last_use[model->ops[k].inputs[i]] = (int32_t)k;
    if (model->output == model->input) {
        fail_op(&e, -1, "the model's output is its input");
        goto done;
    }
    if (run_ops(&e, input, on_layer, user))
        goto done;
    out->shape = e.shapes[model->output];
    out->dtype = e.dtypes[model->output];
    out->data = e.owned[model->output];
    out->peak_bytes = e.peak_bytes;
    e.owned[model->output] = NULL;
    rc = 0;
done:
    if (e.owned)
        for (size_t i = 0; i < n; i++)
            free(e.owned[i]);
    free(e.shapes);
    free(e.dtypes);
    free(e.owned);
    free(e.data);
    free(e.last_use);
    return rc;
}

void pvk_cpu_result_free(struct pvk_cpu_result *result)
{
    free(result->data);
    memset(result, 0, sizeof *result);
}
