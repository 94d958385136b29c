#include "nn/gpu/net.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cmd.h"
#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pool.h"
#include "gpu/transfer.h"
#include "nn/gpu/op_se.h"
#include "nn/half.h"

/* Arena offsets are kept on this boundary (or the device's storage-buffer offset alignment when
 * larger) so that every tensor can be bound as its own range and vectorised loads stay aligned. */
#define ARENA_ALIGN 64u

struct nn_gpu_net {
    struct nn_gpu_config cfg;
    const struct pvk_model *model;
    struct nn_gpu_op **ops; /* one per model op; NULL for ops fused into an earlier one */
    /* Fusions (plan_fusions), per op index: */
    int *affine_of;  /* conv -> the AFFINE after it that its epilogue applies, or -1 */
    bool *absorbed;  /* that AFFINE: records nothing, its output is a view of the conv's */
    int *gate_of;    /* 1x1 conv, RESIZE or fused ADD -> the SE before it whose gate it applies, or -1 */
    bool *gate_only; /* that SE: records only its gate, its output is a view of its input */
    uint8_t *gated_inputs, *upsampled_inputs; /* fused ADD: which inputs (bit k: input k) */
    /* per tensor id: the RESIZE whose output it is, where the ADD reading it upsamples the resize's
     * input itself (the resize is `absorbed`: it records nothing); else -1 */
    int *upsampled_by;
    /* per tensor id: the channel CONCAT whose output it is written into as a slice, or -1 */
    int *slice_of;
};

/* A piece of storage that one or more tensors (a tensor and its reshape views) live in. */
struct storage {
    int64_t bytes;
    int first, last; /* op indices of its first write and last read; -1 / n_ops for net I/O */
    int arena;
    uint64_t offset;
};

struct nn_gpu_plan {
    struct nn_gpu_net *net;
    int n_tensors;
    struct pvk_shape *shapes;
    int *root;              /* tensor id -> storage index, -1 for constants and unused tensors */
    bool *is_view;          /* op index -> output is a view of its input: nothing to record */
    int *se_sums, *se_gate; /* op index -> storages of an SE's fp32 [N][C][parts] sums and [N][C] gate, or -1 */
    struct nn_gpu_tensor *tensors;
    struct storage *storages;
    int n_storages;
    struct gpu_buffer *arenas; /* with external memory: unallocated, keys of the hazard ranges */
    int n_arenas;
    bool external; /* memory from nn_gpu_plan_bind: arena a at arena_base[a] in it */
    bool bound;
    uint64_t *arena_base;
    int n_run;      /* ops recorded: all, or all but a final softmax left to the consumer */
    int32_t output; /* the tensor the plan ends with */
    /* Per storage: its range of an arena, as a buffer of its own. Ops bind exactly this range, so
     * the driver and the synchronization validator see which bytes each dispatch touches. */
    struct gpu_buffer *views;
    uint64_t align;
    unsigned *op_first, *op_end; /* op i's timed dispatches: [op_first[i], op_end[i]) */
    uint64_t arena_bytes, unshared_bytes;
};

size_t nn_dtype_size(enum nn_dtype dtype)
{
    return dtype == NN_F16 ? 2 : 4;
}

static void op_label(const struct pvk_model *m, int i, char *buf, size_t len)
{
    snprintf(buf, len, "op %d (%s '%s')", i, pvk_op_type_name(m->ops[i].type), m->ops[i].name);
}

/* A one-axis constant of exactly n floats. */
static bool is_vector(const struct pvk_model *m, int32_t id, int64_t n)
{
    if (id < 0 || (uint32_t)id >= m->n_tensors)
        return false;
    const struct pvk_tensor *t = &m->tensors[id];
    return t->dtype == PVK_DTYPE_F32 && t->ndim == 1 && t->shape[0] == (uint32_t)n;
}

/* The one op that reads each tensor: -1 none, -2 several (or the net output). */
static int *single_readers(const struct pvk_model *m)
{
    int *reader = malloc(((size_t)m->n_tensors + 1) * sizeof(int));
    if (!reader)
        return NULL;
    for (uint32_t t = 0; t < m->n_tensors; t++)
        reader[t] = -1;
    for (uint32_t i = 0; i < m->n_ops; i++)
        for (uint32_t k = 0; k < m->ops[i].n_inputs; k++) {
            int32_t id = m->ops[i].inputs[k];
            if (id >= 0 && (uint32_t)id < m->n_tensors)
                reader[id] = reader[id] == -1 ? (int)i : -2;
        }
    if (m->output >= 0 && (uint32_t)m->output < m->n_tensors)
        reader[m->output] = -2;
    return reader;
}

static bool is_pointwise_conv(const struct pvk_op *op)
{
    return op->type == PVK_OP_CONV2D && op->attr.conv.kh == 1 && op->attr.conv.kw == 1 && op->attr.conv.sh == 1 &&
           op->attr.conv.sw == 1 && !op->attr.conv.pad_t && !op->attr.conv.pad_l && !op->attr.conv.pad_b &&
           !op->attr.conv.pad_r && op->attr.conv.group == 1;
}

/* Ops whose kernels can write a channel slice of a wider NCHW tensor (dst_channels), and whose
 * output tensor is their own result. */
static bool writes_channel_slices(const struct nn_gpu_net *net, int i)
{
    if (net->absorbed[i] || net->gate_only[i] || net->affine_of[i] >= 0)
        return false;
    switch (net->model->ops[i].type) {
    case PVK_OP_CONV2D:
    case PVK_OP_CONV_TRANSPOSE2D:
    case PVK_OP_RESIZE:
    case PVK_OP_AFFINE:
    case PVK_OP_BINARY:
    case PVK_OP_POOL2D:
    case PVK_OP_SE: return true;
    default: return false;
    }
}

static bool integral_scale(float scale)
{
    return scale >= 1.0f && scale < 65536.0f && scale == floorf(scale);
}

/* An ADD of two maps, each read only by it, can take over what produced them (det's FPN:
 * out = SE(x) + Resize(top)): a nearest upsampling by integer factors, whose input it reads at
 * (h / fh, w / fw), and the apply step of an SE without activation, whose gate it applies to x
 * as it reads it. At most one of each per add. */
static void fuse_into_add(struct nn_gpu_net *net, uint32_t j, const int *reader, const int *producer)
{
    const struct pvk_model *m = net->model;
    const struct pvk_op *add = &m->ops[j];
    if (add->type != PVK_OP_BINARY || add->attr.binary.kind != PVK_BIN_ADD || add->n_inputs != 2 ||
        add->inputs[0] < 0 || add->inputs[1] < 0 || add->inputs[0] == add->inputs[1] || add->outputs[0] < 0 ||
        m->tensors[add->outputs[0]].ndim != 4)
        return;
    for (int k = 0; k < 2; k++) {
        const int32_t t = add->inputs[k];
        const int i = producer[t];
        if (reader[t] != (int)j || i < 0 || m->tensors[t].ndim != 4)
            continue;
        const struct pvk_op *src = &m->ops[i];
        if (src->type == PVK_OP_RESIZE && !net->upsampled_inputs[j] && net->gate_of[i] < 0 &&
            src->attr.resize.mode == PVK_RESIZE_NEAREST && src->act == PVK_ACT_NONE && src->n_inputs >= 1 &&
            src->inputs[0] >= 0 && integral_scale(src->attr.resize.scale_h) &&
            integral_scale(src->attr.resize.scale_w)) {
            net->absorbed[i] = true;
            net->upsampled_inputs[j] |= (uint8_t)(1u << k);
            net->upsampled_by[t] = i;
        } else if (src->type == PVK_OP_SE && net->gate_of[j] < 0 && src->act == PVK_ACT_NONE && src->n_inputs == 1 &&
                   !net->gate_only[i]) {
            net->gate_of[j] = i;
            net->gate_only[i] = true;
            net->gated_inputs[j] |= (uint8_t)(1u << k);
        }
    }
}

/* Two passes over a whole tensor that the op next to them can do in its own dispatch:
 * - PP-LCNetV3 follows most convolutions with a learnable affine (a Mul and an Add the converter
 *   turns into AFFINE); where the AFFINE is the only reader of the convolution's result, the
 *   convolution's epilogue applies it.
 * - A squeeze-and-excitation block scales its input by a per-channel gate; where its only reader
 *   is a 1x1 convolution (and it adds no residual), the SE records just the gate and the
 *   convolution scales the rows of its GEMM as it loads them; where it is a RESIZE (det's neck),
 *   the resize scales its planes. An ADD can take both an SE's gate and a resize (fuse_into_add).
 * And a copy that the ops before it can do: where every input of a CONCAT along axis 1 is written
 * by an op that can write channel slices and read by the concat alone, the producers write
 * straight into the output (det's neck: four maps of 24 channels at a quarter of the image,
 * 22 MiB in fp32 at 960, otherwise alive twice) and the concat records nothing.
 * Fusion is an optimisation: without memory for the analysis the net runs unfused. */
static void plan_fusions(struct nn_gpu_net *net)
{
    const struct pvk_model *m = net->model;
    int *reader = single_readers(m);
    int *producer = malloc(((size_t)m->n_tensors + 1) * sizeof(int));
    if (!reader || !producer) {
        free(reader);
        free(producer);
        return;
    }
    for (uint32_t i = 0; i < m->n_ops; i++) {
        const struct pvk_op *op = &m->ops[i];
        int32_t y = op->outputs[0];
        if (y < 0 || (uint32_t)y >= m->n_tensors || reader[y] < 0)
            continue;
        const int j = reader[y];
        const struct pvk_op *next = &m->ops[j];
        if (op->type == PVK_OP_CONV2D && op->weights[0] >= 0 && next->type == PVK_OP_AFFINE &&
            next->act == PVK_ACT_NONE && next->n_inputs == 1 && next->inputs[0] == y && next->outputs[0] >= 0) {
            const struct pvk_tensor *w = &m->tensors[op->weights[0]];
            int64_t oc = w->ndim == 4 ? w->shape[0] : -1;
            if (is_vector(m, next->weights[0], oc) && is_vector(m, next->weights[1], oc)) {
                net->affine_of[i] = j;
                net->absorbed[j] = true;
            }
        }
        if (op->type == PVK_OP_SE && op->act == PVK_ACT_NONE && op->n_inputs == 1 && next->type == PVK_OP_RESIZE &&
            next->inputs[0] == y) {
            net->gate_of[j] = (int)i;
            net->gate_only[i] = true;
        }
        if (op->type == PVK_OP_SE && op->act == PVK_ACT_NONE && !op->attr.se.residual && op->n_inputs == 1 &&
            is_pointwise_conv(next) && next->inputs[0] == y) {
            bool residual_is_y = next->attr.conv.residual != PVK_RESIDUAL_NONE && next->inputs[1] == y;
            if (!residual_is_y) {
                net->gate_of[j] = (int)i;
                net->gate_only[i] = true;
            }
        }
    }

    for (uint32_t t = 0; t < m->n_tensors; t++)
        producer[t] = -1;
    for (uint32_t i = 0; i < m->n_ops; i++)
        if (m->ops[i].n_outputs == 1 && m->ops[i].outputs[0] >= 0)
            producer[m->ops[i].outputs[0]] = (int)i;
    for (uint32_t j = 0; j < m->n_ops; j++)
        fuse_into_add(net, j, reader, producer);
    for (uint32_t c = 0; c < m->n_ops; c++) {
        const struct pvk_op *op = &m->ops[c];
        if (op->type != PVK_OP_CONCAT || op->attr.axis.axis != 1 || op->outputs[0] < 0 ||
            m->tensors[op->outputs[0]].ndim != 4)
            continue;
        bool ok = op->n_inputs > 0;
        for (uint32_t k = 0; k < op->n_inputs && ok; k++) {
            int32_t t = op->inputs[k];
            ok = t >= 0 && producer[t] >= 0 && reader[t] == (int)c && writes_channel_slices(net, producer[t]) &&
                 m->tensors[t].ndim == 4;
        }
        for (uint32_t k = 0; k < op->n_inputs && ok; k++)
            net->slice_of[op->inputs[k]] = (int)c;
    }
    free(reader);
    free(producer);
}

/* The first channel of slice t in concat c's output: the channels of the inputs before it. */
static int64_t channel_at(const struct pvk_model *m, const struct pvk_shape *shapes, int c, int32_t t)
{
    int64_t at = 0;
    for (uint32_t k = 0; k < m->ops[c].n_inputs && m->ops[c].inputs[k] != t; k++)
        at += shapes[m->ops[c].inputs[k]].d[1];
    return at;
}

/* Creates op i's GPU state (its pipelines, its weights packed and uploaded); 0, or -1 with why. */
static int create_op(struct nn_gpu_net *net, uint32_t i, char *err, size_t err_len)
{
    const struct pvk_model *model = net->model;
    const struct pvk_op *op = &model->ops[i];
    struct nn_gpu_weights w;
    memset(&w, 0, sizeof(w));
    if (net->affine_of[i] >= 0) {
        const struct pvk_op *aff = &model->ops[net->affine_of[i]];
        w.post_scale = pvk_tensor_data(model, aff->weights[0]);
        w.post_shift = pvk_tensor_data(model, aff->weights[1]);
    }
    if (op->type == PVK_OP_CONV2D || op->type == PVK_OP_RESIZE)
        w.input_gate = net->gate_of[i] >= 0;
    w.gated_inputs = net->gated_inputs[i];
    w.upsampled_inputs = net->upsampled_inputs[i];
    if (net->gate_of[i] >= 0)
        w.gate_residual = model->ops[net->gate_of[i]].attr.se.residual ? 1.0f : 0.0f;
    for (int k = 0; k < 2 && w.upsampled_inputs; k++) {
        if (w.upsampled_inputs & (1u << k)) {
            const struct pvk_op *resize = &model->ops[net->upsampled_by[op->inputs[k]]];
            w.upsample_h = (uint32_t)resize->attr.resize.scale_h;
            w.upsample_w = (uint32_t)resize->attr.resize.scale_w;
        }
    }
    char where[160];
    for (int k = 0; k < PVK_MAX_WEIGHTS; k++) {
        int32_t id = op->weights[k];
        if (id < 0)
            continue;
        const struct pvk_tensor *t = &model->tensors[id];
        if (t->dtype != PVK_DTYPE_F32) {
            op_label(model, (int)i, where, sizeof(where));
            snprintf(err, err_len, "%s: weight '%s' is not fp32", where, t->name);
            return -1;
        }
        w.data[k] = pvk_tensor_data(model, id);
        w.shape[k].ndim = (int32_t)t->ndim;
        for (uint32_t d = 0; d < t->ndim; d++)
            w.shape[k].d[d] = t->shape[d];
    }
    char why[256];
    if (nn_gpu_op_create(&net->cfg, op, &w, &net->ops[i], why, sizeof(why))) {
        op_label(model, (int)i, where, sizeof(where));
        snprintf(err, err_len, "%s: %s", where, why);
        return -1;
    }
    return 0;
}

/* On GPUs the ops are created on CREATE_THREADS threads, each taking the next op nobody has
 * taken: on one thread, creating det's ops (their pipelines, from the cache, and weights) was the
 * longest step of an engine's start after the driver's own (BENCHMARKS.md). On CPU devices on
 * one: lavapipe compiles every pipeline on the CPU, and on two cores four threads each made the
 * nets' creation slower (BENCHMARKS.md). */
#define CREATE_THREADS 4

struct create_job {
    struct nn_gpu_net *net;
    pthread_mutex_t lock;
    uint32_t next;      /* the next op to take */
    uint32_t failed_op; /* the first op that failed, or n_ops */
    char err[512];      /* why it failed */
};

static void *create_ops_run(void *arg)
{
    struct create_job *job = arg;
    const uint32_t n = job->net->model->n_ops;
    for (;;) {
        pthread_mutex_lock(&job->lock);
        uint32_t i = job->next;
        while (i < n && job->net->absorbed[i])
            i++;
        job->next = i + 1;
        const bool stop = i >= n || job->failed_op < n;
        pthread_mutex_unlock(&job->lock);
        if (stop)
            return NULL;
        char err[512];
        if (create_op(job->net, i, err, sizeof(err))) {
            pthread_mutex_lock(&job->lock);
            if (i < job->failed_op) { /* the same failure is reported whichever thread saw it */
                job->failed_op = i;
                snprintf(job->err, sizeof(job->err), "%s", err);
            }
            pthread_mutex_unlock(&job->lock);
        }
    }
}

int nn_gpu_net_create(const struct nn_gpu_config *cfg, const struct pvk_model *model, struct nn_gpu_net **out,
                      char *err, size_t err_len)
{
    *out = NULL;
    struct nn_gpu_net *net = calloc(1, sizeof(*net));
    size_t no = model->n_ops ? model->n_ops : 1;
    if (!net || !(net->ops = calloc(no, sizeof(*net->ops))) || !(net->affine_of = malloc(no * sizeof(int))) ||
        !(net->absorbed = calloc(no, sizeof(bool))) || !(net->gate_of = malloc(no * sizeof(int))) ||
        !(net->gate_only = calloc(no, sizeof(bool))) || !(net->gated_inputs = calloc(no, 1)) ||
        !(net->upsampled_inputs = calloc(no, 1)) ||
        !(net->upsampled_by = malloc(((size_t)model->n_tensors + 1) * sizeof(int))) ||
        !(net->slice_of = malloc(((size_t)model->n_tensors + 1) * sizeof(int)))) {
        nn_gpu_net_destroy(net);
        snprintf(err, err_len, "out of memory creating the net");
        return -1;
    }
    net->cfg = *cfg;
    net->model = model;
    for (size_t i = 0; i < no; i++)
        net->affine_of[i] = net->gate_of[i] = -1;
    for (uint32_t t = 0; t < model->n_tensors; t++)
        net->slice_of[t] = net->upsampled_by[t] = -1;
    plan_fusions(net);

    struct create_job job = {.net = net, .failed_op = model->n_ops};
    pthread_mutex_init(&job.lock, NULL);
    pthread_t helpers[CREATE_THREADS - 1];
    bool started[CREATE_THREADS - 1] = {false};
    const int n_helpers = gpu_context_caps(cfg->ctx)->is_cpu ? 0 : CREATE_THREADS - 1;
    for (int k = 0; k < n_helpers; k++)
        started[k] = pthread_create(&helpers[k], NULL, create_ops_run, &job) == 0;
    create_ops_run(&job);
    for (int k = 0; k < n_helpers; k++)
        if (started[k])
            pthread_join(helpers[k], NULL);
    pthread_mutex_destroy(&job.lock);
    if (job.failed_op < model->n_ops) {
        snprintf(err, err_len, "%s", job.err);
        nn_gpu_net_destroy(net);
        return -1;
    }
    *out = net;
    return 0;
}

void nn_gpu_net_destroy(struct nn_gpu_net *net)
{
    if (!net)
        return;
    if (net->ops)
        for (uint32_t i = 0; i < net->model->n_ops; i++)
            nn_gpu_op_destroy(net->ops[i]);
    free(net->ops);
    free(net->affine_of);
    free(net->absorbed);
    free(net->gate_of);
    free(net->gate_only);
    free(net->gated_inputs);
    free(net->upsampled_inputs);
    free(net->upsampled_by);
    free(net->slice_of);
    free(net);
}

bool nn_gpu_net_result_stored(const struct nn_gpu_net *net, int op_index)
{
    /* a conv whose tensor holds the affine after it, a gate-only SE, a resize its reader does */
    return net->affine_of[op_index] < 0 && !net->gate_only[op_index] &&
           !(net->absorbed[op_index] && net->model->ops[op_index].type == PVK_OP_RESIZE);
}

const struct pvk_model *nn_gpu_net_model(const struct nn_gpu_net *net)
{
    return net->model;
}

/* A reshape never moves data, so its output is the input's storage seen with another shape. */
static bool op_is_view(const struct pvk_op *op)
{
    return op->type == PVK_OP_RESHAPE && op->act == PVK_ACT_NONE && op->n_inputs == 1 && op->n_outputs == 1;
}

/* Storage indices by decreasing size (stable: equal sizes keep their order). Insertion sort:
 * a net has a few hundred storages at most. */
static void sort_by_size_desc(const struct storage *st, int *order, int n)
{
    for (int i = 1; i < n; i++) {
        int v = order[i], j = i;
        while (j > 0 && st[order[j - 1]].bytes < st[v].bytes) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = v;
    }
}

static uint64_t round_up(uint64_t x, uint64_t align)
{
    return (x + align - 1) / align * align;
}

static bool lifetimes_overlap(const struct storage *a, const struct storage *b)
{
    return a->first <= b->last && b->first <= a->last;
}

/* Greedy placement by decreasing size (as TFLite's arena planner): each storage goes to the
 * lowest offset of the first arena where it overlaps no placed storage that is alive at the same
 * time. Arenas stay within maxStorageBufferRange so that each binds whole. */
static int place_storages(struct nn_gpu_plan *plan, uint64_t arena_limit, uint64_t **arena_sizes)
{
    int n = plan->n_storages;
    int *order = malloc((size_t)(n ? n : 1) * sizeof(int));
    uint64_t *sizes = calloc((size_t)(n ? n : 1), sizeof(uint64_t));
    int *placed = malloc((size_t)(n ? n : 1) * sizeof(int));
    if (!order || !sizes || !placed) {
        free(order);
        free(sizes);
        free(placed);
        return -1;
    }
    for (int i = 0; i < n; i++)
        order[i] = i;
    sort_by_size_desc(plan->storages, order, n);

    int n_placed = 0, n_arenas = 0;
    for (int oi = 0; oi < n; oi++) {
        struct storage *s = &plan->storages[order[oi]];
        uint64_t need = round_up((uint64_t)s->bytes, plan->align);
        for (int a = 0;; a++) {
            /* Candidate offsets: 0 and the end of every conflicting storage in this arena. */
            uint64_t best = UINT64_MAX;
            for (int c = -1; c < n_placed; c++) {
                uint64_t off = 0;
                if (c >= 0) {
                    const struct storage *o = &plan->storages[placed[c]];
                    if (o->arena != a || !lifetimes_overlap(o, s))
                        continue;
                    off = o->offset + round_up((uint64_t)o->bytes, plan->align);
                }
                if (off >= best || off + need > arena_limit)
                    continue;
                bool fits = true;
                for (int q = 0; q < n_placed && fits; q++) {
                    const struct storage *o = &plan->storages[placed[q]];
                    if (o->arena != a || !lifetimes_overlap(o, s))
                        continue;
                    uint64_t o_end = o->offset + (uint64_t)o->bytes;
                    fits = off + (uint64_t)s->bytes <= o->offset || off >= o_end;
                }
                if (fits)
                    best = off;
            }
            if (best != UINT64_MAX || a >= n_arenas) {
                if (best == UINT64_MAX)
                    best = 0; /* a fresh arena; a storage larger than the limit gets its own */
                s->arena = a;
                s->offset = best;
                if (a >= n_arenas)
                    n_arenas = a + 1;
                if (best + need > sizes[a])
                    sizes[a] = best + need;
                break;
            }
        }
        placed[n_placed++] = order[oi];
    }
    free(order);
    free(placed);
    plan->n_arenas = n_arenas;
    *arena_sizes = sizes;
    return 0;
}

int nn_gpu_plan_create(struct nn_gpu_net *net, const int64_t input_nchw[4], const struct nn_gpu_plan_options *opt,
                       struct nn_gpu_plan **out, char *err, size_t err_len)
{
    int *concat_storage = NULL;
    *out = NULL;
    const struct pvk_model *m = net->model;
    int nt = (int)m->n_tensors, no = (int)m->n_ops;
    struct nn_gpu_plan *plan = calloc(1, sizeof(*plan));
    if (!plan)
        goto oom;
    plan->net = net;
    plan->n_tensors = nt;
    plan->shapes = calloc((size_t)nt + 1, sizeof(*plan->shapes));
    plan->root = malloc(((size_t)nt + 1) * sizeof(int));
    plan->is_view = calloc((size_t)no + 1, sizeof(bool));
    plan->tensors = calloc((size_t)nt + 1, sizeof(*plan->tensors));
    plan->storages = calloc((size_t)nt + 1 + 2 * (size_t)no, sizeof(*plan->storages));
    plan->op_first = calloc((size_t)no + 1, sizeof(*plan->op_first));
    plan->op_end = calloc((size_t)no + 1, sizeof(*plan->op_end));
    plan->se_sums = malloc(((size_t)no + 1) * sizeof(int));
    plan->se_gate = malloc(((size_t)no + 1) * sizeof(int));
    concat_storage = malloc(((size_t)no + 1) * sizeof(int));
    if (!plan->shapes || !plan->root || !plan->is_view || !plan->tensors || !plan->storages || !plan->op_first ||
        !plan->op_end || !plan->se_sums || !plan->se_gate || !concat_storage)
        goto oom;
    if (pvk_infer_shapes(m, input_nchw, plan->shapes, err, err_len))
        goto fail;
    bool keep_all = opt && opt->keep_all;
    /* keep_all leaves every tensor dense, to be read back and compared: no concat slices */
    const int *slice_of = keep_all ? NULL : net->slice_of;
    for (int i = 0; i < no; i++)
        concat_storage[i] = plan->se_sums[i] = plan->se_gate[i] = -1;
    plan->n_run = no;
    plan->output = m->output;
    if (opt && opt->leave_final_softmax && no > 0) {
        const struct pvk_op *last = &m->ops[no - 1];
        const struct pvk_shape *ys = &plan->shapes[m->output];
        if (last->type == PVK_OP_SOFTMAX && last->outputs[0] == m->output && last->act == PVK_ACT_NONE &&
            !net->absorbed[no - 1] && last->attr.axis.axis == ys->ndim - 1 && last->inputs[0] >= 0) {
            plan->n_run = no - 1;
            plan->output = last->inputs[0];
        }
    }
    const int run = plan->n_run;

    enum nn_dtype dtype = net->cfg.act_dtype;
    size_t esize = nn_dtype_size(dtype);
    for (int t = 0; t < nt; t++)
        plan->root[t] = -1;

    /* Storage for the input, then for every op output; views (and the results of ops fused into
     * their producer) share their input's storage. */
    int ns = 0;
    plan->root[m->input] = ns;
    plan->storages[ns++] = (struct storage){pvk_shape_numel(&plan->shapes[m->input]) * (int64_t)esize, -1, -1, 0, 0};
    for (int i = 0; i < run; i++) {
        const struct pvk_op *op = &m->ops[i];
        plan->is_view[i] = op_is_view(op) || net->absorbed[i] ||
                           (slice_of && op->type == PVK_OP_CONCAT && op->n_inputs > 0 && op->inputs[0] >= 0 &&
                            slice_of[op->inputs[0]] == i);
        for (uint32_t k = 0; k < op->n_outputs; k++) {
            int32_t id = op->outputs[k];
            if (id < 0)
                continue;
            int c = slice_of ? slice_of[id] : -1;
            if (c >= 0) { /* a channel slice of concat c's output, whose storage the first slice opens */
                if (concat_storage[c] < 0) {
                    concat_storage[c] = ns;
                    plan->storages[ns++] = (struct storage){
                        pvk_shape_numel(&plan->shapes[m->ops[c].outputs[0]]) * (int64_t)esize, i, i, 0, 0};
                }
                plan->root[id] = concat_storage[c];
                continue;
            }
            if ((plan->is_view[i] || net->gate_only[i]) && plan->root[op->inputs[0]] >= 0) {
                plan->root[id] = plan->root[op->inputs[0]];
                continue;
            }
            size_t size = op->type == PVK_OP_ARGMAX ? 4 : esize;
            plan->root[id] = ns;
            plan->storages[ns++] = (struct storage){pvk_shape_numel(&plan->shapes[id]) * (int64_t)size, i, i, 0, 0};
        }
        if (op->type == PVK_OP_SE && op->inputs[0] >= 0) {
            const struct pvk_shape *x = &plan->shapes[op->inputs[0]];
            int64_t bytes = x->d[0] * x->d[1] * 4;
            plan->se_sums[i] = ns;
            int64_t parts = nn_gpu_se_sum_parts(&net->cfg, x->d[2] * x->d[3]);
            plan->storages[ns++] = (struct storage){bytes * parts, i, i, 0, 0};
            plan->se_gate[i] = ns;
            plan->storages[ns++] = (struct storage){bytes, i, i, 0, 0};
        }
    }
    plan->n_storages = ns;

    /* Lifetimes: from the first write to the last read of any tensor in the storage. */
    for (int i = 0; i < run; i++) {
        const struct pvk_op *op = &m->ops[i];
        for (uint32_t k = 0; k < op->n_inputs; k++) {
            int32_t id = op->inputs[k];
            if (id >= 0 && plan->root[id] >= 0 && plan->storages[plan->root[id]].last < i)
                plan->storages[plan->root[id]].last = i;
        }
    }
    for (int i = 0; i < run; i++)
        if (net->gate_of[i] >= 0)
            plan->storages[plan->se_gate[net->gate_of[i]]].last = i;
    plan->storages[plan->root[plan->output]].last = run;
    for (int s = 0; s < ns; s++) {
        plan->unshared_bytes += (uint64_t)plan->storages[s].bytes;
        if (keep_all) {
            plan->storages[s].first = -1;
            plan->storages[s].last = run;
        }
    }

    const struct gpu_caps *caps = gpu_context_caps(net->cfg.ctx);
    plan->align = ARENA_ALIGN;
    while (plan->align < caps->min_storage_buffer_offset_alignment)
        plan->align *= 2;
    uint64_t limit = caps->max_storage_buffer_range;
    if (limit > ((uint64_t)1 << 31))
        limit = (uint64_t)1 << 31; /* element offsets are 32-bit */
    uint64_t *arena_sizes = NULL;
    if (place_storages(plan, limit / plan->align * plan->align, &arena_sizes))
        goto oom;
    plan->arenas = calloc((size_t)plan->n_arenas + 1, sizeof(*plan->arenas));
    plan->views = calloc((size_t)ns + 1, sizeof(*plan->views));
    plan->arena_base = calloc((size_t)plan->n_arenas + 1, sizeof(*plan->arena_base));
    if (!plan->arenas || !plan->views || !plan->arena_base) {
        free(arena_sizes);
        goto oom;
    }
    plan->external = opt && opt->external_memory;
    for (int a = 0; a < plan->n_arenas && plan->external; a++) {
        /* the arenas one after another in the caller's memory */
        plan->arena_base[a] = plan->arena_bytes;
        plan->arena_bytes += (arena_sizes[a] + plan->align - 1) / plan->align * plan->align;
    }
    for (int a = 0; a < plan->n_arenas && !plan->external; a++) {
        if (gpu_buffer_alloc(net->cfg.ctx, GPU_MEMORY_DEVICE, arena_sizes[a] ? arena_sizes[a] : ARENA_ALIGN,
                             &plan->arenas[a])) {
            snprintf(err, err_len, "activation memory (%llu bytes): %s", (unsigned long long)arena_sizes[a],
                     gpu_last_error());
            free(arena_sizes);
            goto fail;
        }
        plan->arena_bytes += arena_sizes[a];
    }
    free(arena_sizes);

    for (int i = 0; i < ns && !plan->external; i++) {
        const struct storage *s = &plan->storages[i];
        const struct gpu_buffer *arena = &plan->arenas[s->arena];
        struct gpu_buffer *v = &plan->views[i];
        *v = *arena;
        v->offset = arena->offset + s->offset;
        v->size = (VkDeviceSize)s->bytes;
        v->mapped = arena->mapped ? (unsigned char *)arena->mapped + s->offset : NULL;
    }
    for (int t = 0; t < nt; t++) {
        if (plan->root[t] < 0)
            continue;
        struct nn_gpu_tensor *g = &plan->tensors[t];
        g->buf = &plan->views[plan->root[t]];
        g->dtype = dtype;
        g->shape = plan->shapes[t];
        g->elem_offset = 0;
        int c = slice_of ? slice_of[t] : -1;
        if (c >= 0) {
            const struct pvk_shape *y = &plan->shapes[m->ops[c].outputs[0]];
            g->elem_offset = (uint32_t)(channel_at(m, plan->shapes, c, t) * y->d[2] * y->d[3]);
            g->dst_channels = y->d[1];
        }
    }
    /* ARGMAX writes int32 indices in slot 0. */
    for (int i = 0; i < run; i++) {
        const struct pvk_op *op = &m->ops[i];
        if (op->type == PVK_OP_ARGMAX && op->outputs[0] >= 0)
            plan->tensors[op->outputs[0]].dtype = NN_I32;
    }
    free(concat_storage);
    *out = plan;
    return 0;
oom:
    snprintf(err, err_len, "out of memory planning the net");
fail:
    free(concat_storage);
    nn_gpu_plan_destroy(plan);
    return -1;
}

void nn_gpu_plan_destroy(struct nn_gpu_plan *plan)
{
    if (!plan)
        return;
    if (plan->arenas && !plan->external)
        for (int a = 0; a < plan->n_arenas; a++)
            gpu_buffer_free(&plan->arenas[a]);
    free(plan->arenas);
    free(plan->arena_base);
    free(plan->views);
    free(plan->op_first);
    free(plan->op_end);
    free(plan->shapes);
    free(plan->root);
    free(plan->is_view);
    free(plan->se_sums);
    free(plan->se_gate);
    free(plan->tensors);
    free(plan->storages);
    free(plan);
}

/* Byte ranges touched since the last barrier, to decide whether the next op needs one. An arena
 * is named by its buffer, so plans recorded together never alias each other's ranges. */
struct hazard_range {
    const struct gpu_buffer *arena;
    uint64_t begin, end;
};

struct hazards {
    struct hazard_range *reads, *writes;
    int n_reads, n_writes, cap;
};

static struct hazard_range storage_range(const struct nn_gpu_plan *plan, int index)
{
    const struct storage *s = &plan->storages[index];
    return (struct hazard_range){&plan->arenas[s->arena], s->offset, s->offset + (uint64_t)s->bytes};
}

static struct hazard_range tensor_range(const struct nn_gpu_plan *plan, int32_t id)
{
    return storage_range(plan, plan->root[id]);
}

/* An SE's gate storage as a tensor: fp32 [N][C] of the SE's input x; its sums with parts: fp32
 * [N][C][parts]. */
static struct nn_gpu_tensor se_scratch(const struct nn_gpu_plan *plan, int storage, const struct pvk_shape *x,
                                       int64_t parts)
{
    struct pvk_shape s = {2, {x->d[0], x->d[1]}};
    if (parts)
        s = (struct pvk_shape){3, {x->d[0], x->d[1], parts}};
    return (struct nn_gpu_tensor){&plan->views[storage], 0, NN_F32, s, 0};
}

static bool overlaps_any(const struct hazard_range *r, const struct hazard_range *set, int n)
{
    for (int i = 0; i < n; i++)
        if (set[i].arena == r->arena && set[i].begin < r->end && r->begin < set[i].end)
            return true;
    return false;
}

/* One op of one plan, ready to record: its tensors and the ranges they touch. */
struct op_call {
    struct nn_gpu_tensor ins[PVK_MAX_INPUTS + 1], outs[3];
    struct hazard_range in_r[PVK_MAX_INPUTS + 1], out_r[3];
    int n_in, n_out, first_out;
    int phases; /* nn_gpu_op_phases */
};

static void op_call_prepare(const struct nn_gpu_plan *plan, int i, struct op_call *c)
{
    const struct pvk_op *op = &plan->net->model->ops[i];
    const bool gate_only = plan->net->gate_only[i];
    const int gate_se = plan->net->gate_of[i];
    c->n_in = c->n_out = 0;
    c->phases = nn_gpu_op_phases(plan->net->ops[i], gate_only);
    for (uint32_t k = 0; k < op->n_inputs; k++) {
        int32_t id = op->inputs[k];
        if (id < 0)
            continue;
        if (plan->net->upsampled_by[id] >= 0) /* the add reads the resize's input */
            id = plan->net->model->ops[plan->net->upsampled_by[id]].inputs[0];
        c->ins[c->n_in] = plan->tensors[id];
        c->in_r[c->n_in++] = tensor_range(plan, id);
    }
    /* A gate-only SE writes no y (its output is a view of its input): a placeholder stands in,
     * outside the hazard ranges. The convolution or add after it reads the gate as one more
     * input. */
    c->first_out = gate_only ? 1 : 0;
    for (uint32_t k = 0; k < op->n_outputs; k++) {
        int32_t id = op->outputs[k];
        if (id < 0)
            continue;
        c->outs[c->n_out] = plan->tensors[id];
        c->out_r[c->n_out++] = tensor_range(plan, id);
    }
    if (plan->se_sums[i] >= 0) {
        const struct pvk_shape *x = &plan->shapes[op->inputs[0]];
        const int64_t parts = nn_gpu_se_sum_parts(&plan->net->cfg, x->d[2] * x->d[3]);
        c->outs[c->n_out] = se_scratch(plan, plan->se_sums[i], x, parts);
        c->out_r[c->n_out++] = storage_range(plan, plan->se_sums[i]);
        c->outs[c->n_out] = se_scratch(plan, plan->se_gate[i], x, 0);
        c->out_r[c->n_out++] = storage_range(plan, plan->se_gate[i]);
    }
    if (gate_se >= 0) {
        const int32_t x = plan->net->model->ops[gate_se].inputs[0];
        c->ins[c->n_in] = se_scratch(plan, plan->se_gate[gate_se], &plan->shapes[x], 0);
        c->in_r[c->n_in++] = storage_range(plan, plan->se_gate[gate_se]);
    }
}

/* Read after write, write after read, write after write: only those need a barrier. */
static bool op_call_needs_barrier(const struct op_call *c, const struct hazards *hz)
{
    for (int k = 0; k < c->n_in; k++)
        if (overlaps_any(&c->in_r[k], hz->writes, hz->n_writes))
            return true;
    for (int k = c->first_out; k < c->n_out; k++)
        if (overlaps_any(&c->out_r[k], hz->writes, hz->n_writes) || overlaps_any(&c->out_r[k], hz->reads, hz->n_reads))
            return true;
    return false;
}

/* Records phase `phase` of op i (the caller puts barriers between phases); the op's ranges join
 * the hazards with its first phase. */
static int op_call_record(struct nn_gpu_plan *plan, int i, struct op_call *c, int phase, struct hazards *hz,
                          struct gpu_cmd *cmd, char *err, size_t err_len)
{
    if (phase == 0) {
        for (int k = 0; k < c->n_in; k++)
            hz->reads[hz->n_reads++] = c->in_r[k];
        for (int k = c->first_out; k < c->n_out; k++)
            hz->writes[hz->n_writes++] = c->out_r[k];
        plan->op_first[i] = gpu_cmd_timed_count(cmd);
    }
    char why[256];
    int rc = nn_gpu_op_record_phase(plan->net->ops[i], cmd, phase, plan->net->gate_only[i], c->ins, c->n_in, c->outs,
                                    c->n_out, why, sizeof(why));
    plan->op_end[i] = gpu_cmd_timed_count(cmd);
    if (rc) {
        char where[160];
        op_label(plan->net->model, i, where, sizeof(where));
        snprintf(err, err_len, "%s: %s", where, why);
    }
    return rc;
}

int nn_gpu_plan_group_steps(struct nn_gpu_plan *const *plans, int n_plans)
{
    int steps = 0;
    for (int p = 0; p < n_plans; p++)
        if (plans[p]->n_run > steps)
            steps = plans[p]->n_run;
    return steps;
}

int nn_gpu_plan_record_group_steps(struct nn_gpu_plan *const *plans, int n_plans, int first, int end,
                                   struct gpu_cmd *cmd, char *err, size_t err_len)
{
    if (n_plans < 1) {
        snprintf(err, err_len, "no plans to record");
        return -1;
    }
    struct hazards hz = {0};
    hz.cap = 1; /* enough for every range of every op: the sets only grow between barriers */
    for (int p = 0; p < n_plans; p++) {
        if (plans[p]->external && !plans[p]->bound) {
            snprintf(err, err_len, "a plan without memory of its own was recorded before nn_gpu_plan_bind");
            return -1;
        }
        const struct pvk_model *m = plans[p]->net->model;
        for (uint32_t i = 0; i < m->n_ops; i++)
            hz.cap += (int)(m->ops[i].n_inputs + m->ops[i].n_outputs) + 3; /* + SE scratch and gate */
    }
    hz.reads = malloc((size_t)hz.cap * sizeof(*hz.reads));
    hz.writes = malloc((size_t)hz.cap * sizeof(*hz.writes));
    struct op_call *calls = malloc((size_t)n_plans * sizeof(*calls));
    if (!hz.reads || !hz.writes || !calls) {
        free(hz.reads);
        free(hz.writes);
        free(calls);
        snprintf(err, err_len, "out of memory recording the net");
        return -1;
    }

    int rc = 0;
    /* the steps before `first` were recorded elsewhere: their hazards are unknown here */
    if (first > 0)
        gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
    gpu_cmd_set_side_by_side(cmd, (unsigned)n_plans);
    for (int i = first; i < end && rc == 0; i++) {
        /* op i of every plan that has one, behind one barrier if any of them needs it; an op of
         * several phases, phase by phase across the plans with one barrier between */
        bool need = false;
        int phases = 0;
        for (int p = 0; p < n_plans; p++) {
            if (i >= plans[p]->n_run)
                continue;
            plans[p]->op_first[i] = plans[p]->op_end[i] = gpu_cmd_timed_count(cmd);
            if (plans[p]->is_view[i])
                continue;
            op_call_prepare(plans[p], i, &calls[p]);
            need = need || op_call_needs_barrier(&calls[p], &hz);
            if (calls[p].phases > phases)
                phases = calls[p].phases;
        }
        if (need) {
            gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
            hz.n_reads = hz.n_writes = 0;
        }
        for (int phase = 0; phase < phases && rc == 0; phase++) {
            if (phase)
                gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
            for (int p = 0; p < n_plans && rc == 0; p++)
                if (i < plans[p]->n_run && !plans[p]->is_view[i] && phase < calls[p].phases)
                    rc = op_call_record(plans[p], i, &calls[p], phase, &hz, cmd, err, err_len);
        }
    }
    gpu_cmd_set_side_by_side(cmd, 1);
    free(hz.reads);
    free(hz.writes);
    free(calls);
    return rc;
}

int nn_gpu_plan_record_group(struct nn_gpu_plan *const *plans, int n_plans, struct gpu_cmd *cmd, char *err,
                             size_t err_len)
{
    return nn_gpu_plan_record_group_steps(plans, n_plans, 0, nn_gpu_plan_group_steps(plans, n_plans), cmd, err,
                                          err_len);
}

int nn_gpu_plan_bind(struct nn_gpu_plan *plan, const struct gpu_buffer *memory, uint64_t offset, char *err,
                     size_t err_len)
{
    if (!plan->external) {
        snprintf(err, err_len, "the plan has memory of its own");
        return -1;
    }
    if (offset % plan->align || memory->size < plan->arena_bytes || offset > memory->size - plan->arena_bytes) {
        snprintf(err, err_len, "activation memory: %llu bytes at %llu do not hold the plan's %llu (aligned to %llu)",
                 (unsigned long long)memory->size, (unsigned long long)offset, (unsigned long long)plan->arena_bytes,
                 (unsigned long long)plan->align);
        return -1;
    }
    for (int i = 0; i < plan->n_storages; i++) {
        const struct storage *s = &plan->storages[i];
        const uint64_t at = offset + plan->arena_base[s->arena] + s->offset;
        struct gpu_buffer *v = &plan->views[i];
        *v = *memory;
        v->offset = memory->offset + at;
        v->size = (VkDeviceSize)s->bytes;
        v->mapped = memory->mapped ? (unsigned char *)memory->mapped + at : NULL;
    }
    plan->bound = true;
    return 0;
}

uint64_t nn_gpu_plan_align(const struct nn_gpu_plan *plan)
{
    return plan->align;
}

int nn_gpu_plan_record(struct nn_gpu_plan *plan, struct gpu_cmd *cmd, char *err, size_t err_len)
{
    return nn_gpu_plan_record_group(&plan, 1, cmd, err, err_len);
}

const struct nn_gpu_tensor *nn_gpu_plan_tensor(const struct nn_gpu_plan *plan, int32_t tensor_id)
{
    if (tensor_id < 0 || tensor_id >= plan->n_tensors || plan->root[tensor_id] < 0)
        return NULL;
    return &plan->tensors[tensor_id];
}

const struct nn_gpu_tensor *nn_gpu_plan_input(const struct nn_gpu_plan *plan)
{
    return nn_gpu_plan_tensor(plan, plan->net->model->input);
}

bool nn_gpu_plan_left_softmax(const struct nn_gpu_plan *plan)
{
    return plan->n_run < (int)plan->net->model->n_ops;
}

const struct nn_gpu_tensor *nn_gpu_plan_output(const struct nn_gpu_plan *plan)
{
    return nn_gpu_plan_tensor(plan, plan->output);
}

void nn_gpu_plan_op_timings(const struct nn_gpu_plan *plan, int op_index, unsigned *first, unsigned *end)
{
    *first = plan->op_first[op_index];
    *end = plan->op_end[op_index];
}

const struct pvk_shape *nn_gpu_plan_shape(const struct nn_gpu_plan *plan, int32_t tensor_id)
{
    return &plan->shapes[tensor_id];
}

void nn_gpu_plan_op_cost(const struct nn_gpu_plan *plan, int op_index, double *flops, double *bytes)
{
    const struct pvk_model *m = plan->net->model;
    const struct pvk_op *op = &m->ops[op_index];
    double es = (double)nn_dtype_size(plan->net->cfg.act_dtype);
    *flops = 0;
    *bytes = 0;
    if (plan->is_view[op_index])
        return;
    for (uint32_t k = 0; k < op->n_inputs; k++)
        if (op->inputs[k] >= 0)
            *bytes += (double)pvk_shape_numel(&plan->shapes[op->inputs[k]]) * es;
    for (uint32_t k = 0; k < op->n_outputs; k++)
        if (op->outputs[k] >= 0)
            *bytes += (double)pvk_shape_numel(&plan->shapes[op->outputs[k]]) * es;
    for (int k = 0; k < PVK_MAX_WEIGHTS; k++)
        if (op->weights[k] >= 0)
            *bytes += (double)m->tensors[op->weights[k]].nbytes;
    if (op->outputs[0] < 0 || op->inputs[0] < 0)
        return;
    const struct pvk_shape *x = &plan->shapes[op->inputs[0]], *y = &plan->shapes[op->outputs[0]];
    const struct pvk_tensor *w = op->weights[0] >= 0 ? &m->tensors[op->weights[0]] : NULL;
    switch (op->type) {
    case PVK_OP_CONV2D: /* each output: IC/g * KH * KW multiply-adds */
        if (w && w->ndim == 4)
            *flops = 2.0 * (double)pvk_shape_numel(y) * (double)(w->shape[1] * w->shape[2] * w->shape[3]);
        break;
    case PVK_OP_CONV_TRANSPOSE2D: /* each input: OC/g * KH * KW */
        if (w && w->ndim == 4)
            *flops = 2.0 * (double)pvk_shape_numel(x) * (double)(w->shape[1] * w->shape[2] * w->shape[3]);
        break;
    case PVK_OP_MATMUL: /* each output: K */
        *flops = 2.0 * (double)pvk_shape_numel(y) * (double)x->d[x->ndim - 1];
        break;
    case PVK_OP_ATTENTION: { /* q k^T and p v: 2 T^2 C per image */
        double t = (double)x->d[1], c = (double)x->d[2] / 3.0;
        *flops = 2.0 * 2.0 * (double)x->d[0] * t * t * c;
        break;
    }
    default: break;
    }
}

uint64_t nn_gpu_plan_arena_bytes(const struct nn_gpu_plan *plan)
{
    return plan->arena_bytes;
}

uint64_t nn_gpu_plan_unshared_bytes(const struct nn_gpu_plan *plan)
{
    return plan->unshared_bytes;
}

int nn_gpu_tensor_write(struct gpu_context *ctx, const struct nn_gpu_tensor *t, const float *src, char *err,
                        size_t err_len)
{
    size_t n = (size_t)pvk_shape_numel(&t->shape), es = nn_dtype_size(t->dtype);
    const void *data = src;
    uint16_t *halves = NULL;
    if (t->dtype == NN_F16) {
        if (!(halves = malloc(n * 2 + 2))) {
            snprintf(err, err_len, "out of memory");
            return -1;
        }
        nn_floats_to_halves(src, halves, n);
        data = halves;
    }
    int rc = gpu_upload(ctx, t->buf, (VkDeviceSize)t->elem_offset * es, data, n * es);
    free(halves);
    if (rc) {
        snprintf(err, err_len, "writing a tensor: %s", gpu_last_error());
        return -1;
    }
    return 0;
}

int nn_gpu_tensor_read(struct gpu_context *ctx, const struct nn_gpu_tensor *t, float *dst, char *err, size_t err_len)
{
    size_t n = (size_t)pvk_shape_numel(&t->shape), es = nn_dtype_size(t->dtype);
    void *data = dst;
    uint16_t *halves = NULL;
    if (t->dtype == NN_F16) {
        if (!(halves = malloc(n * 2 + 2))) {
            snprintf(err, err_len, "out of memory");
            return -1;
        }
        data = halves;
    }
    int rc = gpu_download(ctx, t->buf, (VkDeviceSize)t->elem_offset * es, data, n * es);
    if (rc == 0 && halves)
        nn_halves_to_floats(halves, dst, n);
    free(halves);
    if (rc) {
        snprintf(err, err_len, "reading a tensor: %s", gpu_last_error());
        return -1;
    }
    return 0;
}
