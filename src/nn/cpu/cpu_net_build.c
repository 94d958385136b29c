/* The oneDNN executor's building blocks for the op planners: failures, descriptors, values and
 * their storages, constants and the weights repacked per net, primitives and own kernels as
 * steps, and layout changes. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/cpu/cpu_net_internal.h"
#include "nn/half.h"

/* ---- failures ------------------------------------------------------------------------------ */

static const char *status_name(dnnl_status_t st)
{
    switch (st) {
    case dnnl_success: return "success";
    case dnnl_out_of_memory: return "out of memory";
    case dnnl_invalid_arguments: return "invalid arguments";
    case dnnl_unimplemented: return "not implemented";
    case dnnl_iterator_ends: return "no implementation left";
    case dnnl_runtime_error: return "runtime error";
    case dnnl_not_required: return "not required";
    }
    return "unknown status";
}

static int vfail(char *err, size_t err_len, const struct pvk_model *m, int k, const char *fmt, va_list ap)
{
    char msg[256];
    vsnprintf(msg, sizeof msg, fmt, ap);
    if (k < 0 || !m || (uint32_t)k >= m->n_ops)
        snprintf(err, err_len, "%s", msg);
    else
        snprintf(err, err_len, "op %d (%.64s, %s): %s", k, m->ops[k].name,
                 pvk_op_type_name((enum pvk_op_type)m->ops[k].type), msg);
    return -1;
}

int cn_fail(struct cn_plan *p, int k, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(p->err, p->err_len, p->model, k, fmt, ap);
    va_end(ap);
    return -1;
}

int cn_fail_dnnl(struct cn_plan *p, int k, const char *call, dnnl_status_t st)
{
    /* "cpu_dnnl.dnnl_convolution_forward_desc_init(&d, ...)" -> "dnnl_convolution_forward_desc_init" */
    if (strncmp(call, "cpu_dnnl.", 9) == 0)
        call += 9;
    int len = (int)strcspn(call, "(");
    return cn_fail(p, k, "oneDNN %.*s: %s", len, call, status_name(st));
}

/* ---- growing arrays ------------------------------------------------------------------------ */

int cn_grow(void **items, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    int cap2 = *cap ? *cap * 2 : 64;
    while (cap2 < need)
        cap2 *= 2;
    void *n = realloc(*items, (size_t)cap2 * size);
    if (!n)
        return -1;
    memset((char *)n + (size_t)*cap * size, 0, (size_t)(cap2 - *cap) * size);
    *items = n;
    *cap = cap2;
    return 0;
}

/* ---- descriptors --------------------------------------------------------------------------- */

static dnnl_data_type_t dnnl_type(enum pvk_dtype dtype)
{
    return dtype == PVK_DTYPE_I32 ? dnnl_s32 : dnnl_f32;
}

int cn_md_plain(struct cn_plan *p, int k, const struct pvk_shape *s, enum pvk_dtype dtype, dnnl_memory_desc_t *md)
{
    static const dnnl_format_tag_t tags[PVK_MAX_DIMS + 1] = {
        dnnl_format_tag_undef, dnnl_a, dnnl_ab, dnnl_abc, dnnl_abcd, dnnl_abcde, dnnl_abcdef};
    if (s->ndim < 1 || s->ndim > PVK_MAX_DIMS)
        return cn_fail(p, k, "a tensor of rank %d", s->ndim);
    dnnl_dims_t dims;
    for (int i = 0; i < s->ndim; i++)
        dims[i] = s->d[i];
    CN_TRY(p, k, cpu_dnnl.dnnl_memory_desc_init_by_tag(md, s->ndim, dims, dnnl_type(dtype), tags[s->ndim]));
    return 0;
}

int cn_md_for(struct cn_plan *p, int k, const struct pvk_shape *s, enum pvk_dtype dtype, dnnl_memory_desc_t *md)
{
    if (s->ndim != 4)
        return cn_md_plain(p, k, s, dtype, md);
    dnnl_dims_t dims = {s->d[0], s->d[1], s->d[2], s->d[3]};
    CN_TRY(p, k, cpu_dnnl.dnnl_memory_desc_init_by_tag(md, 4, dims, dnnl_type(dtype), dnnl_nhwc));
    return 0;
}

bool cn_md_same_bytes(const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b)
{
    if (cpu_dnnl.dnnl_memory_desc_equal(a, b))
        return true;
    if (a->ndims != b->ndims || a->data_type != b->data_type || a->format_kind != dnnl_blocked ||
        b->format_kind != dnnl_blocked || a->offset0 != b->offset0 || a->format_desc.blocking.inner_nblks ||
        b->format_desc.blocking.inner_nblks)
        return false;
    for (int i = 0; i < a->ndims; i++) {
        if (a->dims[i] != b->dims[i] || a->padded_dims[i] != b->padded_dims[i])
            return false;
        if (a->dims[i] > 1 && a->format_desc.blocking.strides[i] != b->format_desc.blocking.strides[i])
            return false;
    }
    return true;
}

/* ---- values and storages ------------------------------------------------------------------- */

int cn_new_storage(struct cn_plan *p, int k, size_t bytes)
{
    if (cn_grow((void **)&p->storages, &p->cap_storages, p->n_storages + 1, sizeof *p->storages))
        return cn_fail(p, k, "out of memory");
    struct cn_storage *s = &p->storages[p->n_storages];
    memset(s, 0, sizeof *s);
    s->bytes = bytes;
    s->first_step = s->last_step = -1;
    return p->n_storages++;
}

int cn_new_value(struct cn_plan *p, int k, const dnnl_memory_desc_t *md, const struct pvk_shape *shape,
                 enum pvk_dtype dtype, int storage, size_t byte_offset)
{
    size_t bytes = cpu_dnnl.dnnl_memory_desc_get_size(md);
    if (storage < 0 && (storage = cn_new_storage(p, k, bytes)) < 0)
        return -1;
    if (p->storages[storage].bytes < byte_offset + bytes && !p->storages[storage].scratch)
        p->storages[storage].bytes = byte_offset + bytes;
    if (cn_grow((void **)&p->values, &p->cap_values, p->n_values + 1, sizeof *p->values))
        return cn_fail(p, k, "out of memory");
    struct cn_value *v = &p->values[p->n_values];
    memset(v, 0, sizeof *v);
    v->md = *md;
    v->shape = *shape;
    v->dtype = dtype;
    v->storage = storage;
    v->byte_offset = byte_offset;
    v->last_reader = -1;
    dnnl_status_t st = cpu_dnnl.dnnl_memory_create(&v->mem, md, p->net->engine, DNNL_MEMORY_NONE);
    if (st != dnnl_success) {
        v->mem = NULL;
        return cn_fail_dnnl(p, k, "dnnl_memory_create", st);
    }
    return p->n_values++;
}

int cn_tensor_value(struct cn_plan *p, int k, int32_t t)
{
    if (t < 0 || (uint32_t)t >= p->model->n_tensors || p->tensor_value[t] < 0)
        return cn_fail(p, k, "input tensor %d is not computed before it is read", t);
    return p->tensor_value[t];
}

void cn_set_tensor_value(struct cn_plan *p, int32_t t, int v)
{
    p->tensor_value[t] = v;
    int last = t == p->output_tensor ? (int)p->model->n_ops : p->last_reader[t];
    if (last > p->values[v].last_reader)
        p->values[v].last_reader = last;
}

bool cn_can_overwrite(const struct cn_plan *p, int v, int k)
{
    int s = p->values[v].storage;
    if (p->storages[s].external || p->storages[s].scratch)
        return false;
    for (int u = 0; u < p->n_values; u++)
        if (p->values[u].storage == s && p->values[u].last_reader > k)
            return false;
    return true;
}

/* ---- constants ----------------------------------------------------------------------------- */

static const float *const_data(struct cn_plan *p, int k, int32_t tensor);

const float *cn_const_data(struct cn_plan *p, int k, int32_t tensor)
{
    pthread_mutex_lock(&p->net->weights_lock);
    const float *data = const_data(p, k, tensor);
    pthread_mutex_unlock(&p->net->weights_lock);
    return data;
}

static const float *const_data(struct cn_plan *p, int k, int32_t tensor)
{
    struct cpu_net *net = p->net;
    const struct pvk_model *m = net->model;
    if (tensor < 0 || (uint32_t)tensor >= m->n_tensors || m->tensors[tensor].kind != PVK_TENSOR_CONSTANT) {
        cn_fail(p, k, "weight %d is not a constant", tensor);
        return NULL;
    }
    if (net->f32[tensor])
        return net->f32[tensor];
    const struct pvk_tensor *t = &m->tensors[tensor];
    const void *raw = pvk_tensor_data(m, tensor);
    if (!raw) {
        cn_fail(p, k, "weight tensor '%.64s' has no data", t->name);
        return NULL;
    }
    if (t->dtype == PVK_DTYPE_F32) {
        net->f32[tensor] = raw;
    } else if (t->dtype == PVK_DTYPE_F16) {
        size_t n = (size_t)pvk_tensor_numel(t);
        float *f = malloc(n * sizeof(float) + 1);
        if (!f) {
            cn_fail(p, k, "out of memory widening '%.64s'", t->name);
            return NULL;
        }
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, (const char *)raw + 2 * i, 2);
            f[i] = nn_half_to_float(h);
        }
        net->widened[tensor] = f;
        net->f32[tensor] = f;
    } else {
        cn_fail(p, k, "weight tensor '%.64s' has dtype %u, expected f32 or f16", t->name, t->dtype);
        return NULL;
    }
    return net->f32[tensor];
}

static dnnl_memory_t keep_fixed(struct cn_plan *p, int k, const dnnl_memory_desc_t *md, void *data)
{
    dnnl_memory_t mem;
    dnnl_status_t st = cpu_dnnl.dnnl_memory_create(&mem, md, p->net->engine, data);
    if (st != dnnl_success) {
        cn_fail_dnnl(p, k, "dnnl_memory_create", st);
        return NULL;
    }
    if (cn_grow((void **)&p->fixed, &p->cap_fixed, p->n_fixed + 1, sizeof *p->fixed)) {
        cpu_dnnl.dnnl_memory_destroy(mem);
        cn_fail(p, k, "out of memory");
        return NULL;
    }
    p->fixed[p->n_fixed++] = mem;
    return mem;
}

dnnl_memory_t cn_const_memory(struct cn_plan *p, int k, int32_t tensor, const dnnl_memory_desc_t *md)
{
    const float *data = cn_const_data(p, k, tensor);
    if (!data)
        return NULL;
    if (cpu_dnnl.dnnl_memory_desc_get_size(md) > (size_t)pvk_tensor_numel(&p->model->tensors[tensor]) * sizeof(float)) {
        cn_fail(p, k, "weight '%.64s' is smaller than its use", p->model->tensors[tensor].name);
        return NULL;
    }
    /* The library never writes a primitive's weights, bias or second source. */
    return keep_fixed(p, k, md, (void *)data);
}

static int repack(struct cn_plan *p, int k, const dnnl_memory_desc_t *user_md, const float *user,
                  const dnnl_memory_desc_t *want_md, void *dst)
{
    struct cpu_net *net = p->net;
    dnnl_memory_t from = NULL, to = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t reorder = NULL;
    dnnl_status_t st = cpu_dnnl.dnnl_memory_create(&from, user_md, net->engine, (void *)user);
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_memory_create(&to, want_md, net->engine, dst);
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_reorder_primitive_desc_create(&pd, user_md, net->engine, want_md, net->engine, NULL);
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_primitive_create(&reorder, pd);
    if (st == dnnl_success) {
        dnnl_exec_arg_t args[2] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
        st = cpu_dnnl.dnnl_primitive_execute(reorder, net->stream, 2, args);
    }
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_stream_wait(net->stream);
    cpu_dnnl.dnnl_primitive_destroy(reorder);
    cpu_dnnl.dnnl_primitive_desc_destroy(pd);
    cpu_dnnl.dnnl_memory_destroy(from);
    cpu_dnnl.dnnl_memory_destroy(to);
    return st == dnnl_success ? 0 : cn_fail_dnnl(p, k, "repacking weights: dnnl_reorder", st);
}

static dnnl_memory_t packed_memory(struct cn_plan *p, int k, int32_t tensor, int variant,
                                   const dnnl_memory_desc_t *user_md, const float *derived,
                                   const dnnl_memory_desc_t *want_md);

dnnl_memory_t cn_packed_memory(struct cn_plan *p, int k, int32_t tensor, int variant, const dnnl_memory_desc_t *user_md,
                               const float *derived, const dnnl_memory_desc_t *want_md)
{
    pthread_mutex_lock(&p->net->weights_lock);
    dnnl_memory_t mem = packed_memory(p, k, tensor, variant, user_md, derived, want_md);
    pthread_mutex_unlock(&p->net->weights_lock);
    return mem;
}

static dnnl_memory_t packed_memory(struct cn_plan *p, int k, int32_t tensor, int variant,
                                   const dnnl_memory_desc_t *user_md, const float *derived,
                                   const dnnl_memory_desc_t *want_md)
{
    struct cpu_net *net = p->net;
    const float *user = derived ? derived : const_data(p, k, tensor);
    if (!user)
        return NULL;
    if (cpu_dnnl.dnnl_memory_desc_get_size(user_md) >
        (size_t)pvk_tensor_numel(&p->model->tensors[tensor]) * sizeof(float)) {
        cn_fail(p, k, "weight '%.64s' is smaller than its use", p->model->tensors[tensor].name);
        return NULL;
    }
    if (!derived && cn_md_same_bytes(user_md, want_md))
        return keep_fixed(p, k, want_md, (void *)user);
    for (struct cn_packed *w = net->packed; w; w = w->next)
        if (w->tensor == tensor && w->variant == variant && cpu_dnnl.dnnl_memory_desc_equal(&w->md, want_md))
            return keep_fixed(p, k, want_md, w->data);
    size_t bytes = cpu_dnnl.dnnl_memory_desc_get_size(want_md);
    struct cn_packed *w = calloc(1, sizeof *w);
    void *data = aligned_alloc(CPU_PLAN_WORKSPACE_ALIGN, (bytes + CPU_PLAN_WORKSPACE_ALIGN - 1) /
                                                             CPU_PLAN_WORKSPACE_ALIGN * CPU_PLAN_WORKSPACE_ALIGN);
    if (!w || !data) {
        free(w);
        free(data);
        cn_fail(p, k, "out of memory for weights");
        return NULL;
    }
    if (repack(p, k, user_md, user, want_md, data)) {
        free(w);
        free(data);
        return NULL;
    }
    w->tensor = tensor;
    w->variant = variant;
    w->md = *want_md;
    w->data = data;
    w->next = net->packed;
    net->packed = w;
    return keep_fixed(p, k, want_md, data);
}

/* ---- primitives and steps ------------------------------------------------------------------ */

int cn_attr(struct cn_plan *p, int k, dnnl_primitive_attr_t *attr)
{
    CN_TRY(p, k, cpu_dnnl.dnnl_primitive_attr_create(attr));
    dnnl_status_t st = cpu_dnnl.dnnl_primitive_attr_set_scratchpad_mode(*attr, dnnl_scratchpad_mode_user);
    if (st != dnnl_success) {
        cpu_dnnl.dnnl_primitive_attr_destroy(*attr);
        return cn_fail_dnnl(p, k, "dnnl_primitive_attr_set_scratchpad_mode", st);
    }
    return 0;
}

static int append_eltwise(struct cn_plan *p, int k, dnnl_post_ops_t po, dnnl_alg_kind_t alg, float alpha, float beta)
{
    CN_TRY(p, k, cpu_dnnl.dnnl_post_ops_append_eltwise(po, 1.0f, alg, alpha, beta));
    return 0;
}

/* The eltwise algorithms of act, one or two (HARDSIGMOID is a line, then a clip to [0, 1]). */
static int act_algs(enum pvk_act act, float alpha, float beta, dnnl_alg_kind_t *alg, float *a, float *b)
{
    switch (act) {
    case PVK_ACT_NONE: return 0;
    case PVK_ACT_RELU: alg[0] = dnnl_eltwise_relu, a[0] = 0, b[0] = 0; return 1;
    case PVK_ACT_RELU6: alg[0] = dnnl_eltwise_clip_v2, a[0] = 0, b[0] = 6; return 1;
    case PVK_ACT_CLIP: alg[0] = dnnl_eltwise_clip_v2, a[0] = alpha, b[0] = beta; return 1;
    case PVK_ACT_HARDSWISH: alg[0] = dnnl_eltwise_hardswish, a[0] = 0, b[0] = 0; return 1;
    case PVK_ACT_HARDSIGMOID:
        alg[0] = dnnl_eltwise_linear, a[0] = alpha, b[0] = beta;
        alg[1] = dnnl_eltwise_clip_v2, a[1] = 0, b[1] = 1;
        return 2;
    case PVK_ACT_SIGMOID: alg[0] = dnnl_eltwise_logistic, a[0] = 0, b[0] = 0; return 1;
    case PVK_ACT_SWISH: alg[0] = dnnl_eltwise_swish, a[0] = 1, b[0] = 0; return 1;
    case PVK_ACT_GELU_ERF: alg[0] = dnnl_eltwise_gelu_erf, a[0] = 0, b[0] = 0; return 1;
    case PVK_ACT_GELU_TANH: alg[0] = dnnl_eltwise_gelu_tanh, a[0] = 0, b[0] = 0; return 1;
    case PVK_ACT_COUNT: break;
    }
    return -1;
}

/* oneDNN 2.6 gives a second eltwise post-op of an algorithm the first one's alpha and beta
 * (seen with clip after clip and line after line): a chain holds each algorithm once, or with
 * the same parameters. */
static bool eltwise_conflicts(const_dnnl_post_ops_t po, dnnl_alg_kind_t alg, float alpha, float beta)
{
    for (int i = 0; i < cpu_dnnl.dnnl_post_ops_len(po); i++) {
        float scale, a, b;
        dnnl_alg_kind_t other;
        if (cpu_dnnl.dnnl_post_ops_get_kind(po, i) == dnnl_eltwise &&
            cpu_dnnl.dnnl_post_ops_get_params_eltwise(po, i, &scale, &other, &a, &b) == dnnl_success && other == alg &&
            (a != alpha || b != beta))
            return true;
    }
    return false;
}

bool cn_acts_chain(enum pvk_act first, float alpha1, float beta1, enum pvk_act second, float alpha2, float beta2)
{
    dnnl_alg_kind_t alg1[2], alg2[2];
    float a1[2], b1[2], a2[2], b2[2];
    int n1 = act_algs(first, alpha1, beta1, alg1, a1, b1), n2 = act_algs(second, alpha2, beta2, alg2, a2, b2);
    for (int i = 0; i < n1; i++)
        for (int j = 0; j < n2; j++)
            if (alg1[i] == alg2[j] && (a1[i] != a2[j] || b1[i] != b2[j]))
                return false;
    return n1 >= 0 && n2 >= 0;
}

int cn_post_ops_act(struct cn_plan *p, int k, dnnl_post_ops_t po, enum pvk_act act, float alpha, float beta,
                    bool plus_one)
{
    dnnl_alg_kind_t alg[3];
    float a[3], b[3];
    int n = act_algs(act, alpha, beta, alg, a, b);
    if (n < 0)
        return cn_fail(p, k, "unknown activation %d", (int)act);
    if (plus_one && act == PVK_ACT_HARDSIGMOID) {
        /* clip(a x + b, 0, 1) + 1 = clip(a x + b + 1, 1, 2): one line and one clip */
        b[0] += 1.0f;
        a[1] = 1.0f;
        b[1] = 2.0f;
    } else if (plus_one) {
        alg[n] = dnnl_eltwise_linear, a[n] = 1.0f, b[n] = 1.0f;
        n++;
    }
    for (int i = 0; i < n; i++) {
        if (eltwise_conflicts(po, alg[i], a[i], b[i]))
            return cn_fail(p, k, "two activations of one kind in one primitive (oneDNN would merge them)");
        if (append_eltwise(p, k, po, alg[i], a[i], b[i]))
            return -1;
    }
    return 0;
}

int cn_attr_post_ops_begin(struct cn_plan *p, int k, dnnl_primitive_attr_t *attr, dnnl_post_ops_t *po)
{
    if (cn_attr(p, k, attr))
        return -1;
    if (cpu_dnnl.dnnl_post_ops_create(po) != dnnl_success) {
        cpu_dnnl.dnnl_primitive_attr_destroy(*attr);
        return cn_fail(p, k, "oneDNN: no post-ops");
    }
    return 0;
}

int cn_attr_post_ops_end(struct cn_plan *p, int k, dnnl_primitive_attr_t attr, dnnl_post_ops_t po, int rc)
{
    if (!rc && cpu_dnnl.dnnl_primitive_attr_set_post_ops(attr, po) != dnnl_success)
        rc = cn_fail(p, k, "oneDNN: post-ops refused");
    cpu_dnnl.dnnl_post_ops_destroy(po);
    if (rc) {
        cpu_dnnl.dnnl_primitive_attr_destroy(attr);
        return -1;
    }
    return 0;
}

int cn_attr_act(struct cn_plan *p, int k, enum pvk_act act, float alpha, float beta, bool plus_one,
                dnnl_primitive_attr_t *attr)
{
    dnnl_post_ops_t po;
    if (cn_attr_post_ops_begin(p, k, attr, &po))
        return -1;
    return cn_attr_post_ops_end(p, k, *attr, po, cn_post_ops_act(p, k, po, act, alpha, beta, plus_one));
}

int cn_pd(struct cn_plan *p, int k, const void *desc, dnnl_primitive_attr_t attr, dnnl_primitive_desc_t *pd)
{
    dnnl_status_t st = cpu_dnnl.dnnl_primitive_desc_create(pd, desc, attr, p->net->engine, NULL);
    cpu_dnnl.dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success) {
        *pd = NULL;
        return cn_fail_dnnl(p, k, "dnnl_primitive_desc_create", st);
    }
    return 0;
}

int cn_src_dst_prim(struct cn_plan *p, int k, const void *desc, const dnnl_memory_desc_t *dst_md,
                    const struct pvk_shape *ys, int x, const char *what)
{
    dnnl_primitive_attr_t attr;
    dnnl_primitive_desc_t pd;
    if (cn_attr(p, k, &attr) || cn_pd(p, k, desc, attr, &pd))
        return -1;
    int y = cn_new_value(p, k, dst_md, ys, PVK_DTYPE_F32, -1, 0);
    if (y < 0) {
        cpu_dnnl.dnnl_primitive_desc_destroy(pd);
        return -1;
    }
    struct cn_arg args[2] = {{DNNL_ARG_SRC, x, NULL}, {DNNL_ARG_DST, y, NULL}};
    if (cn_add_prim(p, k, what, pd, 2, args))
        return -1;
    return y;
}

static const char *pd_impl(dnnl_primitive_desc_t pd)
{
    const char *impl = NULL;
    if (cpu_dnnl.dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) != dnnl_success || !impl)
        return "?";
    return impl;
}

bool cn_pd_is_reference(dnnl_primitive_desc_t pd)
{
    return strncmp(pd_impl(pd), "ref", 3) == 0;
}

static struct cn_step *new_step(struct cn_plan *p, int k, const char *what, int n_args, const struct cn_arg *args)
{
    if (n_args > CN_MAX_ARGS) {
        cn_fail(p, k, "a step of %d arguments", n_args);
        return NULL;
    }
    if (cn_grow((void **)&p->steps, &p->cap_steps, p->n_steps + 1, sizeof *p->steps)) {
        cn_fail(p, k, "out of memory");
        return NULL;
    }
    struct cn_step *s = &p->steps[p->n_steps];
    memset(s, 0, sizeof *s);
    s->op = k;
    s->what = what;
    s->n_args = n_args;
    memcpy(s->args, args, (size_t)n_args * sizeof *args);
    return s;
}

int cn_add_prim(struct cn_plan *p, int k, const char *what, dnnl_primitive_desc_t pd, int n_args,
                const struct cn_arg *args)
{
    struct cn_arg all[CN_MAX_ARGS];
    int n = n_args;
    if (n_args >= CN_MAX_ARGS) {
        cpu_dnnl.dnnl_primitive_desc_destroy(pd);
        return cn_fail(p, k, "a step of %d arguments", n_args);
    }
    memcpy(all, args, (size_t)n_args * sizeof *args);
    const dnnl_memory_desc_t *scratch = cpu_dnnl.dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    size_t scratch_bytes = scratch ? cpu_dnnl.dnnl_memory_desc_get_size(scratch) : 0;
    if (scratch_bytes) {
        struct cn_storage *s = &p->storages[p->scratch_storage];
        if (s->bytes < scratch_bytes)
            s->bytes = scratch_bytes;
        struct pvk_shape none = {1, {(int64_t)(scratch_bytes / 4)}};
        int v = cn_new_value(p, k, scratch, &none, PVK_DTYPE_F32, p->scratch_storage, 0);
        if (v < 0) {
            cpu_dnnl.dnnl_primitive_desc_destroy(pd);
            return -1;
        }
        all[n++] = (struct cn_arg){DNNL_ARG_SCRATCHPAD, v, NULL};
    }
    struct cn_step *s = new_step(p, k, what, n, all);
    if (!s) {
        cpu_dnnl.dnnl_primitive_desc_destroy(pd);
        return -1;
    }
    snprintf(s->impl, sizeof s->impl, "%s", pd_impl(pd));
    dnnl_status_t st = cpu_dnnl.dnnl_primitive_create(&s->prim, pd);
    cpu_dnnl.dnnl_primitive_desc_destroy(pd);
    if (st != dnnl_success) {
        s->prim = NULL;
        return cn_fail_dnnl(p, k, "dnnl_primitive_create", st);
    }
    p->n_steps++;
    return 0;
}

int cn_add_host(struct cn_plan *p, int k, const char *what, cn_host_fn fn, const union cn_host_params *hp, int n_args,
                const struct cn_arg *args)
{
    struct cn_step *s = new_step(p, k, what, n_args, args);
    if (!s)
        return -1;
    snprintf(s->impl, sizeof s->impl, "own C");
    s->host = fn;
    if (hp)
        s->hp = *hp;
    p->n_steps++;
    return 0;
}

int cn_act_in_place(struct cn_plan *p, int k, int v, enum pvk_act act, float alpha, float beta)
{
    dnnl_alg_kind_t alg[2];
    float a[2], b[2];
    int n = act_algs(act, alpha, beta, alg, a, b);
    if (n < 0)
        return cn_fail(p, k, "unknown activation %d", (int)act);
    for (int i = 0; i < n; i++) {
        dnnl_eltwise_desc_t d;
        dnnl_primitive_attr_t attr;
        dnnl_primitive_desc_t pd;
        CN_TRY(
            p, k,
            cpu_dnnl.dnnl_eltwise_forward_desc_init(&d, dnnl_forward_inference, alg[i], &p->values[v].md, a[i], b[i]));
        if (cn_attr(p, k, &attr) || cn_pd(p, k, &d, attr, &pd))
            return -1;
        struct cn_arg args[2] = {{DNNL_ARG_SRC, v, NULL}, {DNNL_ARG_DST, v, NULL}};
        if (cn_add_prim(p, k, "eltwise", pd, 2, args))
            return -1;
    }
    return 0;
}

/* ---- layout changes ------------------------------------------------------------------------ */

static int reorder_into(struct cn_plan *p, int k, int from, int to)
{
    dnnl_primitive_desc_t pd;
    dnnl_primitive_attr_t attr;
    if (cn_attr(p, k, &attr))
        return -1;
    dnnl_status_t st = cpu_dnnl.dnnl_reorder_primitive_desc_create(&pd, &p->values[from].md, p->net->engine,
                                                                   &p->values[to].md, p->net->engine, attr);
    cpu_dnnl.dnnl_primitive_attr_destroy(attr);
    if (st != dnnl_success)
        return cn_fail_dnnl(p, k, "dnnl_reorder_primitive_desc_create", st);
    struct cn_arg args[2] = {{DNNL_ARG_FROM, from, NULL}, {DNNL_ARG_TO, to, NULL}};
    return cn_add_prim(p, k, "reorder", pd, 2, args);
}

int cn_copy_to(struct cn_plan *p, int k, int v, const dnnl_memory_desc_t *md)
{
    int c = cn_new_value(p, k, md, &p->values[v].shape, p->values[v].dtype, -1, 0);
    if (c < 0 || reorder_into(p, k, v, c))
        return -1;
    return c;
}

int cn_to_md(struct cn_plan *p, int k, int v, const dnnl_memory_desc_t *md)
{
    if (cn_md_same_bytes(&p->values[v].md, md)) {
        if (cpu_dnnl.dnnl_memory_desc_equal(&p->values[v].md, md))
            return v;
        /* the same bytes described otherwise: a view */
        int w = cn_new_value(p, k, md, &p->values[v].shape, p->values[v].dtype, p->values[v].storage,
                             p->values[v].byte_offset);
        if (w >= 0)
            p->values[w].last_reader = p->values[v].last_reader > k ? p->values[v].last_reader : k;
        return w;
    }
    int c = cn_copy_to(p, k, v, md);
    if (c >= 0)
        p->values[c].last_reader = k;
    return c;
}

int cn_to_plain(struct cn_plan *p, int k, int v)
{
    dnnl_memory_desc_t md;
    if (cn_md_plain(p, k, &p->values[v].shape, p->values[v].dtype, &md))
        return -1;
    return cn_to_md(p, k, v, &md);
}

void *cn_value_ptr(const struct cn_plan *p, int v)
{
    void *ptr = NULL;
    cpu_dnnl.dnnl_memory_get_data_handle(p->values[v].mem, &ptr);
    return ptr;
}

/* ---- helpers of the op planners ----------------------------------------------------------- */

const struct pvk_op *cn_op(const struct cn_plan *p, int k)
{
    return &p->model->ops[k];
}

const struct pvk_shape *cn_out_shape(const struct cn_plan *p, int k)
{
    return &p->shapes[cn_op(p, k)->outputs[0]];
}

int64_t cn_numel(const struct cn_plan *p, int32_t t)
{
    return t >= 0 ? pvk_shape_numel(&p->shapes[t]) : 0;
}

/* A new value of the op's output shape in the plan's layout for it. */
int cn_new_output(struct cn_plan *p, int k, const struct pvk_shape *s)
{
    dnnl_memory_desc_t md;
    if (cn_md_for(p, k, s, PVK_DTYPE_F32, &md))
        return -1;
    return cn_new_value(p, k, &md, s, PVK_DTYPE_F32, -1, 0);
}

/* A view of value v's bytes as md (logical shape s). */
int cn_view(struct cn_plan *p, int k, int v, const dnnl_memory_desc_t *md, const struct pvk_shape *s,
            size_t extra_offset)
{
    int w =
        cn_new_value(p, k, md, s, p->values[v].dtype, p->values[v].storage, p->values[v].byte_offset + extra_offset);
    if (w >= 0)
        p->values[w].last_reader = p->values[v].last_reader > k ? p->values[v].last_reader : k;
    return w;
}

int cn_md_by_strides(struct cn_plan *p, int k, int nd, const int64_t *dims, const int64_t *strides,
                     dnnl_memory_desc_t *md)
{
    dnnl_dims_t d, s;
    for (int i = 0; i < nd; i++) {
        d[i] = dims[i];
        s[i] = strides[i];
    }
    CN_TRY(p, k, cpu_dnnl.dnnl_memory_desc_init_by_strides(md, nd, d, dnnl_f32, s));
    return 0;
}

int cn_md_by_tag(struct cn_plan *p, int k, int nd, const int64_t *dims, dnnl_format_tag_t tag, dnnl_memory_desc_t *md)
{
    dnnl_dims_t d;
    for (int i = 0; i < nd; i++)
        d[i] = dims[i];
    CN_TRY(p, k, cpu_dnnl.dnnl_memory_desc_init_by_tag(md, nd, d, dnnl_f32, tag));
    return 0;
}

/* Activation steps after a primitive that took none. */
int cn_finish_act(struct cn_plan *p, int k, int y)
{
    const struct pvk_op *op = cn_op(p, k);
    return cn_act_in_place(p, k, y, (enum pvk_act)op->act, op->act_alpha, op->act_beta);
}

int cn_set_output(struct cn_plan *p, int k, int y)
{
    cn_set_tensor_value(p, cn_op(p, k)->outputs[0], y);
    return 0;
}
