/* The oneDNN executor's net, plans and runs: a plan made op by op by the planners (cpu_net_ops.c,
 * cpu_net_conv.c, cpu_net_matrix.c, from the blocks of cpu_net_build.c), its storages laid out by
 * liveness, the workspace bound and the steps run. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn/cpu/cpu_net.h"
#include "nn/cpu/cpu_net_internal.h"

/* ---- threads ------------------------------------------------------------------------------- */

/* The thread count of the calling thread while a call of the net runs (OpenMP keeps it per
 * thread); put back after, so that another net on the same thread keeps its own. */
static int threads_enter(const struct cpu_net *net)
{
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
    int prev = cpu_dnnl.omp_get_max_threads();
    cpu_dnnl.omp_set_num_threads(net->threads);
    return prev;
#else
    (void)net;
    return 0;
#endif
}

static void threads_leave(int prev)
{
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
    cpu_dnnl.omp_set_num_threads(prev);
#else
    (void)prev;
#endif
}

/* ---- the net ------------------------------------------------------------------------------- */

int cpu_net_available(char *err, size_t err_len)
{
    if (cpu_dnnl_load(err, err_len))
        return -1;
    dnnl_engine_t eng;
    if (cpu_dnnl.dnnl_engine_get_count(dnnl_cpu) < 1 ||
        cpu_dnnl.dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success) {
        snprintf(err, err_len, "oneDNN has no CPU engine on this machine");
        return -1;
    }
    cpu_dnnl.dnnl_engine_destroy(eng);
    return 0;
}

int cpu_net_create(const struct pvk_model *model, const struct cpu_net_options *opt, struct cpu_net **out, char *err,
                   size_t err_len)
{
    *out = NULL;
    if (cpu_dnnl_load(err, err_len))
        return -1;
    struct cpu_net *net = calloc(1, sizeof *net);
    if (!net) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    net->model = model;
    pthread_mutex_init(&net->weights_lock, NULL);
    net->threads = cpu_net_threads(opt ? opt->threads : 0); /* set at every call: see cpu_net_threads */
    net->f32 = calloc((size_t)model->n_tensors + 1, sizeof *net->f32);
    net->widened = calloc((size_t)model->n_tensors + 1, sizeof *net->widened);
    if (!net->f32 || !net->widened) {
        snprintf(err, err_len, "out of memory for %u tensors", model->n_tensors);
        cpu_net_destroy(net);
        return -1;
    }
    if (cpu_dnnl.dnnl_engine_create(&net->engine, dnnl_cpu, 0) != dnnl_success) {
        net->engine = NULL;
        snprintf(err, err_len, "oneDNN has no CPU engine on this machine");
        cpu_net_destroy(net);
        return -1;
    }
    if (cpu_dnnl.dnnl_stream_create(&net->stream, net->engine, dnnl_stream_default_flags) != dnnl_success) {
        net->stream = NULL;
        snprintf(err, err_len, "oneDNN: no CPU stream");
        cpu_net_destroy(net);
        return -1;
    }
    *out = net;
    return 0;
}

void cpu_net_destroy(struct cpu_net *net)
{
    if (!net)
        return;
    for (struct cn_packed *w = net->packed, *next; w; w = next) {
        next = w->next;
        free(w->data);
        free(w);
    }
    if (net->widened)
        for (uint32_t i = 0; i < net->model->n_tensors; i++)
            free(net->widened[i]);
    free(net->widened);
    free(net->f32);
    if (net->stream)
        cpu_dnnl.dnnl_stream_destroy(net->stream);
    if (net->engine)
        cpu_dnnl.dnnl_engine_destroy(net->engine);
    pthread_mutex_destroy(&net->weights_lock);
    free(net);
}

/* ---- planning ------------------------------------------------------------------------------ */

static int prepare(struct cn_plan *p, const int64_t in[4], const struct cpu_plan_options *opt)
{
    const struct pvk_model *m = p->model;
    size_t n = (size_t)m->n_tensors + 1;
    p->shapes = calloc(n, sizeof *p->shapes);
    p->tensor_value = malloc(n * sizeof *p->tensor_value);
    p->last_reader = malloc(n * sizeof *p->last_reader);
    p->reader_count = calloc(n, sizeof *p->reader_count);
    p->fused_into = malloc(((size_t)m->n_ops + 1) * sizeof *p->fused_into);
    if (!p->shapes || !p->tensor_value || !p->last_reader || !p->reader_count || !p->fused_into)
        return cn_fail(p, -1, "out of memory for %u tensors", m->n_tensors);
    if (m->input < 0 || (uint32_t)m->input >= m->n_tensors || m->output < 0 || (uint32_t)m->output >= m->n_tensors)
        return cn_fail(p, -1, "the model's input or output is not a tensor");
    if (m->output == m->input)
        return cn_fail(p, -1, "the model's output is its input");
    if (pvk_infer_shapes(m, in, p->shapes, p->err, p->err_len))
        return -1;
    for (size_t i = 0; i < n; i++) {
        p->tensor_value[i] = -1;
        p->last_reader[i] = -1;
    }
    for (uint32_t k = 0; k < m->n_ops; k++) {
        p->fused_into[k] = -1;
        if (m->ops[k].type < 1 || m->ops[k].type >= PVK_OP_COUNT)
            return cn_fail(p, (int)k, "unknown op type %u", m->ops[k].type);
        for (uint32_t i = 0; i < m->ops[k].n_inputs; i++) {
            int32_t t = m->ops[k].inputs[i];
            if (t >= 0) {
                p->last_reader[t] = (int)k;
                p->reader_count[t]++;
            }
        }
    }
    p->reader_count[m->output]++;
    p->output_tensor = m->output;
    p->keep_all = opt && opt->keep_all;
    /* The final softmax left to the argmax: the plan ends at its input. */
    for (int k = (int)m->n_ops - 1; k >= 0 && opt && opt->leave_final_softmax; k--) {
        const struct pvk_op *op = &m->ops[k];
        if (op->outputs[0] != m->output)
            continue;
        const struct pvk_shape *s = &p->shapes[op->inputs[0]];
        if (op->type == PVK_OP_SOFTMAX && op->act == PVK_ACT_NONE && op->attr.axis.axis == s->ndim - 1) {
            p->output_tensor = op->inputs[0];
            p->softmax_left = true;
            p->reader_count[m->output]--;
            p->reader_count[p->output_tensor]++;
        }
        break;
    }
    p->in_shape = p->shapes[m->input];
    p->out_shape = p->shapes[p->output_tensor];
    p->scratch_storage = cn_new_storage(p, -1, 0);
    if (p->scratch_storage < 0)
        return -1;
    p->storages[p->scratch_storage].scratch = true;
    /* The caller's input, NCHW, read in place. */
    int ext = cn_new_storage(p, -1, 0);
    if (ext < 0)
        return -1;
    p->storages[ext].external = true;
    dnnl_memory_desc_t md;
    if (cn_md_plain(p, -1, &p->in_shape, PVK_DTYPE_F32, &md))
        return -1;
    p->input_value = cn_new_value(p, -1, &md, &p->in_shape, PVK_DTYPE_F32, ext, 0);
    if (p->input_value < 0)
        return -1;
    cn_set_tensor_value(p, m->input, p->input_value);
    return 0;
}

/* Whether op k must run for the plan's output: ops after the output's producer (a left-out
 * softmax) do not. */
static bool op_needed(const struct cn_plan *p, int k)
{
    if (!p->softmax_left)
        return true;
    return p->model->ops[k].outputs[0] != p->model->output;
}

/* Places every storage of the workspace: by size, largest first, at the lowest offset where it
 * meets no storage alive at the same time. */
static int place_storages(struct cn_plan *p)
{
    for (int i = 0; i < p->n_steps; i++)
        for (int a = 0; a < p->steps[i].n_args; a++) {
            int v = p->steps[i].args[a].value;
            if (v < 0)
                continue;
            struct cn_storage *s = &p->storages[p->values[v].storage];
            if (s->first_step < 0 || i < s->first_step)
                s->first_step = i;
            if (i > s->last_step)
                s->last_step = i;
        }
    struct cn_storage *out = &p->storages[p->values[p->output_value].storage];
    if (out->first_step < 0)
        out->first_step = 0;
    out->last_step = p->n_steps;
    int *order = malloc(((size_t)p->n_storages + 1) * sizeof *order), n = 0;
    int *placed = malloc(((size_t)p->n_storages + 1) * sizeof *placed), n_placed = 0;
    if (!order || !placed) {
        free(order);
        free(placed);
        return cn_fail(p, -1, "out of memory");
    }
    for (int i = 0; i < p->n_storages; i++) {
        const struct cn_storage *s = &p->storages[i];
        if (!s->external && !s->scratch && s->first_step >= 0 && s->bytes)
            order[n++] = i;
    }
    /* largest first (insertion sort: a few hundred storages) */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && p->storages[order[j]].bytes > p->storages[order[j - 1]].bytes; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    size_t end = 0;
    p->unshared_bytes = 0;
    for (int i = 0; i < n; i++) {
        struct cn_storage *s = &p->storages[order[i]];
        size_t bytes = (s->bytes + CPU_PLAN_WORKSPACE_ALIGN - 1) / CPU_PLAN_WORKSPACE_ALIGN * CPU_PLAN_WORKSPACE_ALIGN;
        p->unshared_bytes += bytes;
        size_t at = 0;
        for (bool moved = true; moved;) {
            moved = false;
            for (int j = 0; j < n_placed; j++) {
                const struct cn_storage *o = &p->storages[placed[j]];
                size_t ob =
                    (o->bytes + CPU_PLAN_WORKSPACE_ALIGN - 1) / CPU_PLAN_WORKSPACE_ALIGN * CPU_PLAN_WORKSPACE_ALIGN;
                bool same_time = p->keep_all || (o->first_step <= s->last_step && s->first_step <= o->last_step);
                if (same_time && at < o->offset + ob && o->offset < at + bytes) {
                    at = o->offset + ob;
                    moved = true;
                }
            }
        }
        s->offset = at;
        placed[n_placed++] = order[i];
        if (at + bytes > end)
            end = at + bytes;
    }
    free(order);
    free(placed);
    struct cn_storage *scratch = &p->storages[p->scratch_storage];
    scratch->offset = end;
    p->workspace_bytes =
        end + (scratch->bytes + CPU_PLAN_WORKSPACE_ALIGN - 1) / CPU_PLAN_WORKSPACE_ALIGN * CPU_PLAN_WORKSPACE_ALIGN;
    if (!p->workspace_bytes)
        p->workspace_bytes = CPU_PLAN_WORKSPACE_ALIGN;
    return 0;
}

int cpu_net_plan(struct cpu_net *net, const int64_t input_nchw[4], const struct cpu_plan_options *opt,
                 struct cpu_plan **out, char *err, size_t err_len)
{
    *out = NULL;
    struct cn_plan *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    p->net = net;
    p->model = net->model;
    p->err = err;
    p->err_len = err_len;
    int prev = threads_enter(net);
    int rc = prepare(p, input_nchw, opt);
    if (!rc)
        cn_plan_fusions(p);
    for (uint32_t k = 0; !rc && k < p->model->n_ops; k++)
        if (p->fused_into[k] < 0 && op_needed(p, (int)k))
            rc = cn_plan_op(p, (int)k);
    if (!rc) {
        int v = cn_tensor_value(p, -1, p->output_tensor);
        /* the output row-major, in bytes of its own when it would be the caller's input */
        if (v >= 0 && (v = cn_to_plain(p, -1, v)) >= 0 && p->storages[p->values[v].storage].external)
            v = cn_copy_to(p, -1, v, &p->values[v].md);
        if (v < 0)
            rc = -1;
        else
            p->output_value = v;
    }
    if (!rc)
        rc = place_storages(p);
    threads_leave(prev);
    p->err = NULL;
    p->err_len = 0;
    if (rc) {
        cpu_plan_destroy((struct cpu_plan *)p);
        return -1;
    }
    *out = (struct cpu_plan *)p;
    return 0;
}

void cpu_plan_destroy(struct cpu_plan *plan)
{
    struct cn_plan *p = (struct cn_plan *)plan;
    if (!p)
        return;
    for (int i = 0; i < p->n_steps; i++)
        if (p->steps[i].prim)
            cpu_dnnl.dnnl_primitive_destroy(p->steps[i].prim);
    for (int i = 0; i < p->n_values; i++)
        if (p->values[i].mem)
            cpu_dnnl.dnnl_memory_destroy(p->values[i].mem);
    for (int i = 0; i < p->n_fixed; i++)
        cpu_dnnl.dnnl_memory_destroy(p->fixed[i]);
    free(p->steps);
    free(p->values);
    free(p->storages);
    free(p->fixed);
    free(p->shapes);
    free(p->tensor_value);
    free(p->last_reader);
    free(p->reader_count);
    free(p->fused_into);
    free(p->own_workspace);
    free(p);
}

const struct pvk_shape *cpu_plan_input_shape(const struct cpu_plan *plan)
{
    return &((const struct cn_plan *)plan)->in_shape;
}

const struct pvk_shape *cpu_plan_output_shape(const struct cpu_plan *plan)
{
    return &((const struct cn_plan *)plan)->out_shape;
}

enum pvk_dtype cpu_plan_output_dtype(const struct cpu_plan *plan)
{
    const struct cn_plan *p = (const struct cn_plan *)plan;
    return p->values[p->output_value].dtype;
}

size_t cpu_plan_workspace_bytes(const struct cpu_plan *plan)
{
    return ((const struct cn_plan *)plan)->workspace_bytes;
}

size_t cpu_plan_unshared_bytes(const struct cpu_plan *plan)
{
    return ((const struct cn_plan *)plan)->unshared_bytes;
}

/* ---- runs ---------------------------------------------------------------------------------- */

static int bind(struct cn_plan *p, char *ws, const float *input)
{
    for (int v = 0; v < p->n_values; v++) {
        const struct cn_value *val = &p->values[v];
        const struct cn_storage *s = &p->storages[val->storage];
        void *ptr = s->external ? (void *)input : ws + s->offset + val->byte_offset;
        if (!s->external && p->bound == ws)
            continue;
        dnnl_status_t st = cpu_dnnl.dnnl_memory_set_data_handle(val->mem, ptr);
        if (st != dnnl_success)
            return cn_fail_dnnl(p, -1, "dnnl_memory_set_data_handle", st);
    }
    p->bound = ws;
    return 0;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int run_steps(struct cn_plan *p, double *step_ms)
{
    struct cpu_net *net = p->net;
    for (int i = 0; i < p->n_steps; i++) {
        const struct cn_step *s = &p->steps[i];
        double t0 = step_ms ? now_ms() : 0;
        if (s->host) {
            s->host(p, s);
            if (step_ms)
                step_ms[i] = now_ms() - t0;
            continue;
        }
        dnnl_exec_arg_t args[CN_MAX_ARGS];
        for (int a = 0; a < s->n_args; a++) {
            args[a].arg = s->args[a].arg;
            args[a].memory = s->args[a].value >= 0 ? p->values[s->args[a].value].mem : s->args[a].fixed;
        }
        dnnl_status_t st = cpu_dnnl.dnnl_primitive_execute(s->prim, net->stream, s->n_args, args);
        if (st != dnnl_success)
            return cn_fail_dnnl(p, s->op, "dnnl_primitive_execute", st);
        if (step_ms) {
            /* the CPU stream runs each primitive before returning; the wait is for other runtimes */
            cpu_dnnl.dnnl_stream_wait(net->stream);
            step_ms[i] = now_ms() - t0;
        }
    }
    dnnl_status_t st = cpu_dnnl.dnnl_stream_wait(net->stream);
    return st == dnnl_success ? 0 : cn_fail_dnnl(p, -1, "dnnl_stream_wait", st);
}

int cpu_plan_run(struct cpu_plan *plan, const float *input, void *workspace, char *err, size_t err_len)
{
    return cpu_plan_run_timed(plan, input, workspace, NULL, err, err_len);
}

int cpu_plan_step_count(const struct cpu_plan *plan)
{
    return ((const struct cn_plan *)plan)->n_steps;
}

int cpu_plan_run_timed(struct cpu_plan *plan, const float *input, void *workspace, double *step_ms, char *err,
                       size_t err_len)
{
    struct cn_plan *p = (struct cn_plan *)plan;
    p->err = err;
    p->err_len = err_len;
    int rc = 0;
    char *ws = workspace;
    if (!ws) {
        if (!p->own_workspace)
            p->own_workspace = aligned_alloc(CPU_PLAN_WORKSPACE_ALIGN, p->workspace_bytes);
        if (!p->own_workspace)
            rc = cn_fail(p, -1, "out of memory for a %zu-byte workspace", p->workspace_bytes);
        ws = p->own_workspace;
    } else if ((uintptr_t)ws % CPU_PLAN_WORKSPACE_ALIGN) {
        rc = cn_fail(p, -1, "the workspace is not %d-byte aligned", CPU_PLAN_WORKSPACE_ALIGN);
    } else {
        p->bound = NULL; /* a shared workspace: bound again on every run */
    }
    if (!rc) {
        int prev = threads_enter(p->net);
        p->run_input = input;
        rc = bind(p, ws, input);
        if (!rc)
            rc = run_steps(p, step_ms);
        threads_leave(prev);
    }
    p->err = NULL;
    p->err_len = 0;
    return rc;
}

const void *cpu_plan_output(const struct cpu_plan *plan)
{
    const struct cn_plan *p = (const struct cn_plan *)plan;
    return cn_value_ptr(p, p->output_value);
}

int cpu_plan_argmax(const struct cpu_plan *plan, int32_t *index, float *value, char *err, size_t err_len)
{
    const struct cn_plan *p = (const struct cn_plan *)plan;
    const struct cn_value *out = &p->values[p->output_value];
    if (out->dtype != PVK_DTYPE_F32) {
        snprintf(err, err_len, "the net's output is not fp32");
        return -1;
    }
    int64_t c = out->shape.d[out->shape.ndim - 1];
    cn_argmax_rows(cn_value_ptr(p, p->output_value), pvk_shape_numel(&out->shape) / c, c, index, value, p->softmax_left,
                   p->net->threads);
    return 0;
}

int cpu_plan_read_tensor(const struct cpu_plan *plan, int32_t t, void *dst, char *err, size_t err_len)
{
    const struct cn_plan *p = (const struct cn_plan *)plan;
    if (t < 0 || (uint32_t)t >= p->model->n_tensors || p->tensor_value[t] < 0) {
        snprintf(err, err_len, "tensor %d is not held by the plan", t);
        return -1;
    }
    int v = p->tensor_value[t];
    if (!p->keep_all && t != p->output_tensor && t != p->model->input) {
        snprintf(err, err_len, "tensor %d: only a keep_all plan keeps its intermediates", t);
        return -1;
    }
    if (v == p->input_value && !p->run_input) {
        snprintf(err, err_len, "the plan has not run");
        return -1;
    }
    const struct cn_value *val = &p->values[v];
    const dnnl_memory_desc_t *md = &val->md;
    const uint32_t *src = (const uint32_t *)cn_value_ptr(p, v) + md->offset0;
    uint32_t *out = dst;
    int nd = md->ndims;
    int64_t idx[DNNL_MAX_NDIMS] = {0}, total = pvk_shape_numel(&val->shape);
    for (int64_t i = 0; i < total; i++) {
        int64_t off = 0;
        for (int d = 0; d < nd; d++)
            off += idx[d] * md->format_desc.blocking.strides[d];
        out[i] = src[off];
        for (int d = nd - 1; d >= 0; d--) {
            if (++idx[d] < md->dims[d])
                break;
            idx[d] = 0;
        }
    }
    return 0;
}

void cpu_plan_describe(const struct cpu_plan *plan, const double *step_ms, FILE *out)
{
    const struct cn_plan *p = (const struct cn_plan *)plan;
    for (int i = 0; i < p->n_steps; i++) {
        const struct cn_step *s = &p->steps[i];
        const char *name = s->op >= 0 ? p->model->ops[s->op].name : "(layout)";
        char shape[96] = "";
        for (int a = s->n_args - 1; a >= 0; a--)
            if (s->args[a].value >= 0 && s->args[a].arg != DNNL_ARG_SCRATCHPAD) {
                pvk_shape_str(&p->values[s->args[a].value].shape, shape, sizeof shape);
                break;
            }
        fprintf(out, "%4d  op %3d %-22.22s %-10s %-24.24s %-20s", i, s->op, name, s->what, s->impl, shape);
        if (step_ms)
            fprintf(out, " %9.3f ms", step_ms[i]);
        fputc('\n', out);
    }
}

int cpu_plan_reference_steps(const struct cpu_plan *plan)
{
    const struct cn_plan *p = (const struct cn_plan *)plan;
    int n = 0;
    for (int i = 0; i < p->n_steps; i++)
        n += strncmp(p->steps[i].impl, "ref", 3) == 0;
    return n;
}
