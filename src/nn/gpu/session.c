/* nn_session on Vulkan (nn/session.h, the calls of nn/backend.h): nets and their plan caches, one
 * activation buffer, command buffers with split submissions, readbacks and the argmax of outputs. */
#include "nn/session.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/cmd.h"
#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pool.h"
#include "gpu/transfer.h"
#include "nn/backend.h"
#include "nn/gpu/net.h"
#include "nn/gpu/precision.h"
#include "nn/gpu/session_gpu.h"

/* Outputs read back one after another in one buffer, each from a multiple of this (bytes) */
#define READBACK_ALIGN 256u
#define NOT_COPIED SIZE_MAX /* an output not read back, or read in place */
#define PLAN_CACHE 24       /* input shapes kept per net (plans hold no device memory: see act) */
/* A run in parts: this many parts of doubling length, each submitted before the next is recorded.
 * The GPU then waits only while the first, short part is recorded, and runs each part while the
 * host records the next, which takes about a third as long (BENCHMARKS.md). */
#define RUN_PARTS 4
/* Timestamps per recording (with profile): one mark at its end, so a run's GPU time is the whole
 * recording's, its dispatches left free to overlap as they do unprofiled. */
#define MAX_TIMINGS 4
#define REPLAY_KEY_MAX 8

struct plan_entry {
    struct nn_plan handle; /* what the client holds: first, so that a handle is its entry */
    int64_t shape[4];
    struct nn_gpu_plan *plan;
    unsigned last_use;
    bool pinned; /* part of the run being assembled: not to be evicted */
};

/* A net with its plans for the input shapes seen lately. */
struct net_slot {
    const char *name;
    const struct pvk_model *model;
    struct nn_gpu_net *net;
    struct plan_entry plans[PLAN_CACHE];
    unsigned clock;
    unsigned evictions; /* plans destroyed so far: a recording of an older plan is stale */
    bool leave_softmax;
};

/* A host-visible buffer through which an output reaches the host, grown as needed: the copy is
 * recorded with the run when device memory is not mapped, so reading it costs no extra submit. */
struct readback {
    struct gpu_buffer buf;
    size_t cap;
};

/* What a replayed recording was made of: the client's key and the session's side. */
struct replay {
    struct gpu_cmd *cmd;
    struct readback readback; /* its own: the live recordings' readback may move meanwhile */
    bool valid;
    int key[REPLAY_KEY_MAX], key_len;
    const struct nn_gpu_plan *plans[NN_RUN_MAX_PLANS];
    unsigned evictions[NN_RUN_MAX_PLANS];
    int n_plans;
    unsigned generation;
};

struct vulkan_recorder {
    struct nn_recorder base;
    struct gpu_cmd *cmd;
};

struct vulkan_session {
    struct nn_session base;
    struct gpu_context *ctx;
    struct nn_gpu_config cfg, det_cfg; /* cls and rec; det */
    bool profile;
    struct net_slot slots[NN_NET_COUNT];
    /* by enum pvk_argmax_value: over probabilities, or over logits where the plan left the final
     * softmax out (the argmax then gives the maximum's probability) */
    struct nn_gpu_op *argmax[2];
    struct gpu_cmd *cmd;
    struct gpu_cmd *cmd_parts[RUN_PARTS - 1]; /* the later parts of a run begun in cmd */
    struct readback readback;
    struct replay replay;
    /* The activations of every plan, bound here before each run; grown when a run needs more.
     * generation counts the reallocations (recordings made before are stale). */
    struct gpu_buffer act;
    unsigned generation;
    /* argmax outputs: host-visible device buffers the kernels write, and their fp32 copy */
    struct gpu_buffer argmax_index, argmax_value;
    size_t argmax_rows_cap;
    int32_t *index;
    float *value;
    /* the last run */
    struct nn_gpu_plan *run_plans[NN_RUN_MAX_PLANS];
    enum nn_output_use run_output[NN_RUN_MAX_PLANS];
    size_t run_row0[NN_RUN_MAX_PLANS];    /* the first argmax row of each NN_OUTPUT_ARGMAX plan */
    size_t run_read_at[NN_RUN_MAX_PLANS]; /* where each output is in the readback, or NOT_COPIED */
    size_t run_read_bytes;
    int run_n_plans;
    bool run_replayed;
    double gpu_ms;
};

static int fail(char *err, size_t err_len, const char *fmt, const char *detail)
{
    snprintf(err, err_len, fmt, detail);
    return -1;
}

static struct vulkan_session *vulkan_session(struct nn_session *s)
{
    return (struct vulkan_session *)s;
}

static const struct vulkan_session *const_vulkan_session(const struct nn_session *s)
{
    return (const struct vulkan_session *)s;
}

static struct nn_gpu_plan *gpu_plan(const struct nn_plan *p)
{
    return ((const struct plan_entry *)p)->plan;
}

static double gpu_ms_of(const struct gpu_cmd *cmd)
{
    const struct gpu_timing *t;
    unsigned n;
    gpu_cmd_timings(cmd, &t, &n);
    double us = 0;
    for (unsigned i = 0; i < n; i++)
        us += t[i].us;
    return us / 1e3;
}

/* ---- nets ----------------------------------------------------------------------------------- */

/* The nets are made side by side: most of their creation is pipelines, which the driver builds
 * (or reads from its cache) one at a time per thread. */
struct net_job {
    struct net_slot *slot;
    const struct nn_gpu_config *cfg;
    pthread_t thread;
    bool started;
    int rc;
    char err[1024];
};

static void *net_job_run(void *arg)
{
    struct net_job *j = arg;
    char why[512];
    j->rc = nn_gpu_net_create(j->cfg, j->slot->model, &j->slot->net, why, sizeof(why));
    if (j->rc)
        snprintf(j->err, sizeof(j->err), "%s: %s", j->slot->name, why);
    return NULL;
}

/* Makes the n nets, all but the first on threads of their own (inline where no thread can be
 * started); the first failure in the order given is reported. */
static int create_nets(struct net_job *jobs, int n, char *err, size_t err_len)
{
    for (int k = 1; k < n; k++)
        jobs[k].started = pthread_create(&jobs[k].thread, NULL, net_job_run, &jobs[k]) == 0;
    if (n > 0)
        net_job_run(&jobs[0]);
    for (int k = 1; k < n; k++) {
        if (jobs[k].started)
            pthread_join(jobs[k].thread, NULL);
        else
            net_job_run(&jobs[k]);
    }
    for (int k = 0; k < n; k++)
        if (jobs[k].rc)
            return fail(err, err_len, "%s", jobs[k].err);
    return 0;
}

static int create_argmax(struct vulkan_session *s, char *err, size_t err_len)
{
    for (int v = PVK_ARGMAX_VALUE_MAX; v <= PVK_ARGMAX_VALUE_SOFTMAX; v++) {
        struct pvk_op op;
        memset(&op, 0, sizeof(op));
        op.type = PVK_OP_ARGMAX;
        op.n_inputs = 1;
        op.n_outputs = 2;
        op.attr.argmax.value = v;
        snprintf(op.name, sizeof(op.name), "ctc_argmax");
        struct nn_gpu_weights none;
        memset(&none, 0, sizeof(none));
        if (nn_gpu_op_create(&s->cfg, &op, &none, &s->argmax[v], err, err_len))
            return -1;
    }
    return 0;
}

static void session_destroy(struct vulkan_session *s);

int nn_vulkan_session_create(struct nn_device *dev, const struct nn_session_options *opt, struct nn_session **out,
                             char *err, size_t err_len)
{
    *out = NULL;
    struct vulkan_session *s = calloc(1, sizeof(*s));
    if (!s)
        return fail(err, err_len, "%s", "out of memory");
    s->base.backend = &nn_backend_vulkan;
    s->ctx = nn_gpu_device_context(dev);
    s->cfg = nn_line_nets_config(s->ctx, opt->fp16_math);
    s->det_cfg = nn_det_config(s->ctx);
    s->profile = opt->profile;
    /* det first: the order in which a failure is reported */
    static const enum nn_net_id order[NN_NET_COUNT] = {NN_NET_DET, NN_NET_REC, NN_NET_CLS};
    struct net_job jobs[NN_NET_COUNT];
    int n_jobs = 0;
    memset(jobs, 0, sizeof(jobs));
    for (int i = 0; i < NN_NET_COUNT; i++) {
        const enum nn_net_id id = order[i];
        struct net_slot *slot = &s->slots[id];
        slot->name = opt->names[id] ? opt->names[id] : "net";
        slot->model = opt->models[id];
        slot->leave_softmax = opt->leave_final_softmax[id];
        for (int p = 0; p < PLAN_CACHE; p++)
            slot->plans[p].handle.backend = &nn_backend_vulkan;
        if (slot->model)
            jobs[n_jobs++] = (struct net_job){.slot = slot, .cfg = id == NN_NET_DET ? &s->det_cfg : &s->cfg};
    }
    if (create_nets(jobs, n_jobs, err, err_len) || create_argmax(s, err, err_len))
        goto fail;
    struct gpu_cmd **cmds[RUN_PARTS + 1] = {&s->cmd, &s->replay.cmd};
    for (int p = 0; p < RUN_PARTS - 1; p++)
        cmds[2 + p] = &s->cmd_parts[p];
    /* one queue for all of them: a run's parts are ordered by their submission to it */
    const unsigned queue = gpu_context_take_queue(s->ctx);
    for (int c = 0; c < RUN_PARTS + 1; c++) {
        if (gpu_cmd_create_on(s->ctx, queue, opt->profile ? MAX_TIMINGS : 0, cmds[c])) {
            fail(err, err_len, "%s", gpu_last_error());
            goto fail;
        }
        gpu_cmd_time_dispatches(*cmds[c], false);
    }
    *out = &s->base;
    return 0;
fail:
    session_destroy(s);
    return -1;
}

void nn_vulkan_session_destroy(struct nn_session *s)
{
    session_destroy(vulkan_session(s));
}

static void session_destroy(struct vulkan_session *s)
{
    if (!s)
        return;
    gpu_cmd_destroy(s->cmd);
    for (int p = 0; p < RUN_PARTS - 1; p++)
        gpu_cmd_destroy(s->cmd_parts[p]);
    gpu_cmd_destroy(s->replay.cmd);
    nn_gpu_op_destroy(s->argmax[PVK_ARGMAX_VALUE_MAX]);
    nn_gpu_op_destroy(s->argmax[PVK_ARGMAX_VALUE_SOFTMAX]);
    gpu_buffer_free(&s->argmax_index);
    gpu_buffer_free(&s->argmax_value);
    gpu_buffer_free(&s->readback.buf);
    gpu_buffer_free(&s->replay.readback.buf);
    for (int n = 0; n < NN_NET_COUNT; n++) {
        struct net_slot *slot = &s->slots[n];
        for (int i = 0; i < PLAN_CACHE; i++)
            nn_gpu_plan_destroy(slot->plans[i].plan);
        nn_gpu_net_destroy(slot->net);
    }
    gpu_buffer_free(&s->act);
    free(s->index);
    free(s->value);
    free(s);
}

/* ---- plans ---------------------------------------------------------------------------------- */

static struct plan_entry *entry_of(struct vulkan_session *s, const struct nn_gpu_plan *plan, struct net_slot **slot)
{
    for (int n = 0; n < NN_NET_COUNT; n++)
        for (int i = 0; i < PLAN_CACHE; i++)
            if (plan && s->slots[n].plans[i].plan == plan) {
                if (slot)
                    *slot = &s->slots[n];
                return &s->slots[n].plans[i];
            }
    return NULL;
}

/* The least recently used plan that is not pinned, or NULL. */
static struct plan_entry *slot_lru(struct net_slot *slot)
{
    struct plan_entry *lru = NULL;
    for (int i = 0; i < PLAN_CACHE; i++) {
        struct plan_entry *p = &slot->plans[i];
        if (p->plan && !p->pinned && (!lru || p->last_use < lru->last_use))
            lru = p;
    }
    return lru;
}

static struct net_slot *slot_of(struct vulkan_session *s, enum nn_net_id net, char *err, size_t err_len)
{
    if ((unsigned)net >= NN_NET_COUNT || !s->slots[net].net) {
        fail(err, err_len, "%s", "the session has no such net");
        return NULL;
    }
    return &s->slots[net];
}

struct nn_plan *nn_vulkan_session_plan(struct nn_session *session, enum nn_net_id net, const int64_t shape[4],
                                       char *err, size_t err_len)
{
    struct vulkan_session *s = vulkan_session(session);
    struct net_slot *slot = slot_of(s, net, err, err_len);
    if (!slot)
        return NULL;
    struct plan_entry *free_entry = NULL;
    for (int i = 0; i < PLAN_CACHE; i++) {
        struct plan_entry *p = &slot->plans[i];
        if (p->plan && !p->pinned && !memcmp(p->shape, shape, sizeof(p->shape))) {
            p->last_use = ++slot->clock;
            return &p->handle;
        }
        if (!p->plan && !free_entry)
            free_entry = p;
    }
    if (!free_entry) {
        if (!(free_entry = slot_lru(slot))) {
            snprintf(err, err_len, "%s: every cached plan is in use", slot->name);
            return NULL;
        }
        nn_gpu_plan_destroy(free_entry->plan);
        free_entry->plan = NULL;
        slot->evictions++;
    }
    char why[512];
    const struct nn_gpu_plan_options opt = {.external_memory = true, .leave_final_softmax = slot->leave_softmax};
    if (nn_gpu_plan_create(slot->net, shape, &opt, &free_entry->plan, why, sizeof(why))) {
        snprintf(err, err_len, "%s: %s", slot->name, why);
        return NULL;
    }
    memcpy(free_entry->shape, shape, sizeof(free_entry->shape));
    free_entry->last_use = ++slot->clock;
    return &free_entry->handle;
}

void nn_vulkan_session_pin(struct nn_session *s, struct nn_plan *plan, bool pinned)
{
    struct plan_entry *p = plan ? entry_of(vulkan_session(s), gpu_plan(plan), NULL) : NULL;
    if (p)
        p->pinned = pinned;
}

/* Vulkan makes each plan when it is asked for: the net's pipelines were made with the session. */
void nn_vulkan_session_plan_ahead(struct nn_session *s, const struct nn_plan_request *requests, int n)
{
    (void)s;
    (void)requests;
    (void)n;
}

uint64_t nn_vulkan_session_plan_bytes(struct nn_session *s, enum nn_net_id net, const int64_t shape[4])
{
    char why[256];
    struct net_slot *slot = slot_of(vulkan_session(s), net, why, sizeof(why));
    if (!slot)
        return UINT64_MAX;
    const struct nn_gpu_plan_options opt = {.external_memory = true, .leave_final_softmax = slot->leave_softmax};
    struct nn_gpu_plan *plan;
    if (nn_gpu_plan_create(slot->net, shape, &opt, &plan, why, sizeof(why)))
        return UINT64_MAX;
    uint64_t bytes = nn_gpu_plan_arena_bytes(plan);
    nn_gpu_plan_destroy(plan);
    return bytes;
}

uint64_t nn_vulkan_plan_bytes(const struct nn_plan *plan)
{
    return nn_gpu_plan_arena_bytes(gpu_plan(plan));
}

uint64_t nn_vulkan_plan_align(const struct nn_plan *plan)
{
    return nn_gpu_plan_align(gpu_plan(plan));
}

/* Offsets at[] of plans side by side from the start of one buffer, each at its alignment; returns
 * the bytes they need together. */
static uint64_t place_plans(struct nn_plan *const *plans, int n, uint64_t *at)
{
    uint64_t need = 0;
    for (int k = 0; k < n; k++) {
        uint64_t align = nn_vulkan_plan_align(plans[k]);
        at[k] = (need + align - 1) / align * align;
        need = at[k] + nn_vulkan_plan_bytes(plans[k]);
    }
    return need;
}

const struct pvk_shape *nn_vulkan_plan_input_shape(const struct nn_plan *plan)
{
    return &nn_gpu_plan_input(gpu_plan(plan))->shape;
}

const struct pvk_shape *nn_vulkan_plan_output_shape(const struct nn_plan *plan)
{
    return &nn_gpu_plan_output(gpu_plan(plan))->shape;
}

/* NULL for a plan of another backend. */
const struct nn_gpu_tensor *nn_gpu_plan_input_tensor(const struct nn_plan *plan)
{
    return plan->backend == &nn_backend_vulkan ? nn_gpu_plan_input(gpu_plan(plan)) : NULL;
}

const struct nn_gpu_tensor *nn_gpu_plan_output_tensor(const struct nn_plan *plan)
{
    return plan->backend == &nn_backend_vulkan ? nn_gpu_plan_output(gpu_plan(plan)) : NULL;
}

/* One buffer, which the device must bind whole (maxStorageBufferRange), and at most a quarter of
 * its memory, which images, weights and sibling sessions share. */
static uint64_t memory_limit(const struct vulkan_session *s)
{
    const struct gpu_caps *c = gpu_context_caps(s->ctx);
    uint64_t limit = c->max_storage_buffer_range;
    if (c->device_local_bytes && c->device_local_bytes / 4 < limit)
        limit = c->device_local_bytes / 4;
    return limit;
}

uint64_t nn_vulkan_session_memory_limit(const struct nn_session *s)
{
    return memory_limit(const_vulkan_session(s));
}

uint64_t nn_vulkan_session_memory_held(const struct nn_session *session)
{
    const struct vulkan_session *s = const_vulkan_session(session);
    return s->act.block ? s->act.size : 0;
}

/* Places plans side by side at the start of the activation memory, growing it first if they need
 * more. When the device is out of memory, the pools' free blocks go back to the driver and it is
 * tried once more. */
static int bind_plans(struct vulkan_session *s, struct nn_plan *const *plans, int n, char *err, size_t err_len)
{
    uint64_t at[NN_RUN_MAX_PLANS], need = place_plans(plans, n, at);
    if (need > memory_limit(s)) {
        snprintf(err, err_len, "activation memory (%llu bytes): more than the device takes at once (%llu)",
                 (unsigned long long)need, (unsigned long long)memory_limit(s));
        return -1;
    }
    if (!s->act.block || s->act.size < need) {
        gpu_buffer_free(&s->act);
        s->generation++;
        if (gpu_buffer_alloc(s->ctx, GPU_MEMORY_DEVICE, need ? need : 256, &s->act)) {
            gpu_pool_trim(s->ctx);
            if (gpu_buffer_alloc(s->ctx, GPU_MEMORY_DEVICE, need ? need : 256, &s->act)) {
                snprintf(err, err_len, "activation memory (%llu bytes): %s", (unsigned long long)need,
                         gpu_last_error());
                return -1;
            }
        }
    }
    char why[512];
    for (int k = 0; k < n; k++)
        if (nn_gpu_plan_bind(gpu_plan(plans[k]), &s->act, at[k], why, sizeof(why)))
            return fail(err, err_len, "%s", why);
    return 0;
}

/* ---- readbacks ------------------------------------------------------------------------------ */

/* Whether the host reads t in place: on unified memory (CPU devices, integrated GPUs). A discrete
 * GPU's device memory may be mapped too (resizable BAR), but reading it across the bus uncached
 * is slower than copying it on the GPU (BENCHMARKS.md). */
static bool read_in_place(const struct vulkan_session *s, const struct nn_gpu_tensor *t)
{
    const struct gpu_caps *c = gpu_context_caps(s->ctx);
    return gpu_buffer_is_mapped(t->buf) && (c->is_cpu || c->kind == GPU_DEVICE_INTEGRATED);
}

/* Makes rb hold at least `bytes`, its contents lost when it grows. */
static int reserve_readback(struct vulkan_session *s, struct readback *rb, size_t bytes, char *err, size_t err_len)
{
    if (bytes <= rb->cap)
        return 0;
    gpu_buffer_free(&rb->buf);
    rb->cap = 0;
    if (gpu_buffer_alloc(s->ctx, GPU_MEMORY_HOST, bytes, &rb->buf))
        return fail(err, err_len, "readback memory: %s", gpu_last_error());
    rb->cap = bytes;
    return 0;
}

/* Places the NN_OUTPUT_READ outputs of the run's first n plans that the host cannot read in place
 * one after another in the readback (s->run_read_at, s->run_read_bytes). */
static void place_readbacks(struct vulkan_session *s, int n)
{
    s->run_read_bytes = 0;
    for (int k = 0; k < n; k++) {
        const struct nn_gpu_tensor *t = nn_gpu_plan_output(s->run_plans[k]);
        s->run_read_at[k] = NOT_COPIED;
        if (s->run_output[k] != NN_OUTPUT_READ || read_in_place(s, t))
            continue;
        s->run_read_at[k] = s->run_read_bytes;
        const size_t bytes = (size_t)pvk_shape_numel(&t->shape) * nn_dtype_size(t->dtype);
        s->run_read_bytes += (bytes + READBACK_ALIGN - 1) / READBACK_ALIGN * READBACK_ALIGN;
    }
}

/* Records the copies of the run's outputs that the host reads into rb (after the run's last
 * compute work). */
static int record_readbacks(struct vulkan_session *s, struct gpu_cmd *cmd, struct readback *rb, int n, char *err,
                            size_t err_len)
{
    if (s->run_read_bytes == 0)
        return 0;
    if (reserve_readback(s, rb, s->run_read_bytes, err, err_len))
        return -1;
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_TRANSFER);
    for (int k = 0; k < n; k++) {
        if (s->run_read_at[k] == NOT_COPIED)
            continue;
        const struct nn_gpu_tensor *t = nn_gpu_plan_output(s->run_plans[k]);
        const size_t es = nn_dtype_size(t->dtype), bytes = (size_t)pvk_shape_numel(&t->shape) * es;
        if (gpu_cmd_copy(cmd, t->buf, (VkDeviceSize)t->elem_offset * es, &rb->buf, s->run_read_at[k], bytes))
            return fail(err, err_len, "%s", gpu_last_error());
    }
    return 0;
}

/* Output k of the last run, and the readback holding its copy; *at its bytes' offset there. */
static int read_output(struct vulkan_session *s, int k, const struct nn_gpu_tensor **t, const struct readback **rb,
                       size_t *at, char *err, size_t err_len)
{
    if (k < 0 || k >= s->run_n_plans || s->run_output[k] != NN_OUTPUT_READ)
        return fail(err, err_len, "%s", "that output of the run was not read back");
    *t = nn_gpu_plan_output(s->run_plans[k]);
    *rb = s->run_replayed ? &s->replay.readback : &s->readback;
    *at = s->run_read_at[k];
    return 0;
}

static int read_output_into(struct vulkan_session *s, int k, float *dst, char *err, size_t err_len)
{
    const struct nn_gpu_tensor *t;
    const struct readback *rb;
    size_t at;
    if (read_output(s, k, &t, &rb, &at, err, err_len))
        return -1;
    if (read_in_place(s, t))
        return nn_gpu_tensor_read(s->ctx, t, dst, err, err_len);
    struct nn_gpu_tensor staged = *t;
    staged.buf = &rb->buf;
    staged.elem_offset = (uint32_t)(at / nn_dtype_size(t->dtype));
    return nn_gpu_tensor_read(s->ctx, &staged, dst, err, err_len);
}

int nn_vulkan_session_read_output(struct nn_session *s, int k, float *dst, char *err, size_t err_len)
{
    return read_output_into(vulkan_session(s), k, dst, err, err_len);
}

const float *nn_vulkan_session_output(struct nn_session *session, int k, float **owned, char *err, size_t err_len)
{
    struct vulkan_session *s = vulkan_session(session);
    *owned = NULL;
    const struct nn_gpu_tensor *t;
    const struct readback *rb;
    size_t at;
    if (read_output(s, k, &t, &rb, &at, err, err_len))
        return NULL;
    const struct gpu_buffer *b = read_in_place(s, t) ? t->buf : &rb->buf;
    if (t->dtype == NN_F32 && gpu_buffer_is_mapped(b))
        return (const float *)b->mapped + (b == t->buf ? t->elem_offset : at / sizeof(float));
    size_t n = (size_t)pvk_shape_numel(&t->shape);
    if (!(*owned = malloc(n * sizeof(float)))) {
        fail(err, err_len, "%s", "out of memory for a net's output");
        return NULL;
    }
    if (read_output_into(s, k, *owned, err, err_len)) {
        free(*owned);
        *owned = NULL;
        return NULL;
    }
    return *owned;
}

/* ---- argmax --------------------------------------------------------------------------------- */

/* Each plan's rows start on the storage offset alignment: its argmax then binds its rows alone,
 * and the plans' argmaxes run side by side without barriers. Returns the rows of the run. */
static size_t place_argmax_rows(struct vulkan_session *s, const struct nn_run *run)
{
    const size_t align = (size_t)gpu_context_caps(s->ctx)->min_storage_buffer_offset_alignment,
                 value_size = nn_dtype_size(s->cfg.act_dtype), row_align = align > value_size ? align / value_size : 1;
    size_t rows = 0;
    for (int k = 0; k < run->n_plans; k++) {
        if (run->output[k] != NN_OUTPUT_ARGMAX)
            continue;
        const struct pvk_shape *o = nn_vulkan_plan_output_shape(run->plans[k]);
        s->run_row0[k] = (rows + row_align - 1) / row_align * row_align;
        rows = s->run_row0[k] + (size_t)o->d[0] * (size_t)o->d[1];
    }
    return rows;
}

static int reserve_argmax(struct vulkan_session *s, size_t rows, char *err, size_t err_len)
{
    if (rows <= s->argmax_rows_cap)
        return 0;
    gpu_buffer_free(&s->argmax_index);
    gpu_buffer_free(&s->argmax_value);
    s->argmax_rows_cap = 0;
    /* Host-visible: the argmax writes a few bytes per step, which the host reads in place. */
    if (gpu_buffer_alloc(s->ctx, GPU_MEMORY_HOST, rows * 4, &s->argmax_index) ||
        gpu_buffer_alloc(s->ctx, GPU_MEMORY_HOST, rows * 4, &s->argmax_value))
        return fail(err, err_len, "argmax output memory: %s", gpu_last_error());
    int32_t *index = realloc(s->index, rows * sizeof(*index));
    if (index)
        s->index = index;
    float *value = realloc(s->value, rows * sizeof(*value));
    if (value)
        s->value = value;
    if (!index || !value)
        return fail(err, err_len, "%s", "out of memory");
    s->argmax_rows_cap = rows;
    return 0;
}

static int record_argmax(struct vulkan_session *s, struct gpu_cmd *cmd, int k, char *err, size_t err_len)
{
    const struct nn_gpu_tensor *out = nn_gpu_plan_output(s->run_plans[k]);
    if (out->dtype != s->cfg.act_dtype || out->shape.ndim != 3)
        return fail(err, err_len, "%s", "an argmax over an output of another precision or rank");
    const int64_t n = out->shape.d[0], steps = out->shape.d[1];
    struct nn_gpu_tensor argmax_out[2] = {
        {&s->argmax_index, (uint32_t)s->run_row0[k], NN_I32, {2, {n, steps}}, 0},
        {&s->argmax_value, (uint32_t)s->run_row0[k], s->cfg.act_dtype, {2, {n, steps}}, 0},
    };
    const int v = nn_gpu_plan_left_softmax(s->run_plans[k]) ? PVK_ARGMAX_VALUE_SOFTMAX : PVK_ARGMAX_VALUE_MAX;
    return nn_gpu_op_record(s->argmax[v], cmd, out, 1, argmax_out, 2, err, err_len);
}

static int read_argmax(struct vulkan_session *s, size_t rows, char *err, size_t err_len)
{
    struct nn_gpu_tensor value = {&s->argmax_value, 0, s->cfg.act_dtype, {1, {(int64_t)rows}}, 0};
    if (gpu_download(s->ctx, &s->argmax_index, 0, s->index, rows * 4) ||
        nn_gpu_tensor_read(s->ctx, &value, s->value, err, err_len))
        return fail(err, err_len, "reading argmax results: %s", gpu_last_error());
    return 0;
}

int nn_vulkan_session_argmax(const struct nn_session *session, int k, const int32_t **index, const float **value)
{
    const struct vulkan_session *s = const_vulkan_session(session);
    if (k < 0 || k >= s->run_n_plans || s->run_output[k] != NN_OUTPUT_ARGMAX || !s->index)
        return -1;
    *index = s->index + s->run_row0[k];
    *value = s->value + s->run_row0[k];
    return 0;
}

/* ---- runs ----------------------------------------------------------------------------------- */

static int finish_recording(struct gpu_cmd *cmd, char *err, size_t err_len)
{
    gpu_cmd_mark(cmd, "recording");
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    gpu_cmd_barrier(cmd, GPU_STAGE_TRANSFER, GPU_STAGE_HOST);
    if (gpu_cmd_end(cmd))
        return fail(err, err_len, "%s", gpu_last_error());
    return 0;
}

/* The step at which part `part` of a run's `steps` ends: the parts' lengths double. */
static int part_end(int steps, int part)
{
    if (part == RUN_PARTS - 1)
        return steps;
    return (int)((int64_t)steps * ((1 << (part + 1)) - 1) / ((1 << RUN_PARTS) - 1));
}

/* Records the nets into *cmd: in one go, or (in_parts) in parts, each but the last submitted as it
 * is recorded; *cmd is then the last part's, still open, and running[] the submitted ones. */
static int record_nets(struct vulkan_session *s, const struct nn_run *run, struct gpu_cmd **cmd,
                       struct gpu_cmd **running, int *n_running, char *err, size_t err_len)
{
    struct nn_gpu_plan *const *plans = s->run_plans;
    const int n = run->n_plans;
    if (!run->in_parts)
        return n == 1 ? nn_gpu_plan_record(plans[0], *cmd, err, err_len)
                      : nn_gpu_plan_record_group(plans, n, *cmd, err, err_len);
    const int steps = nn_gpu_plan_group_steps(plans, n);
    for (int part = 0, from = 0; part < RUN_PARTS; part++) {
        const int to = part_end(steps, part);
        if (to == from)
            continue;
        if (nn_gpu_plan_record_group_steps(plans, n, from, to, *cmd, err, err_len))
            return -1;
        from = to;
        if (to == steps)
            break; /* the last part stays open for what follows the nets */
        gpu_cmd_mark(*cmd, "recording");
        if (gpu_cmd_end(*cmd) || gpu_cmd_submit(*cmd))
            return fail(err, err_len, "%s", gpu_last_error());
        running[*n_running] = *cmd;
        *cmd = s->cmd_parts[(*n_running)++];
        if (gpu_cmd_begin(*cmd))
            return fail(err, err_len, "%s", gpu_last_error());
    }
    return 0;
}

/* Records the whole run into cmd (begun) and ends it; the parts already submitted go to running. */
static int record_run(struct vulkan_session *s, const struct nn_run *run, struct gpu_cmd **cmd, struct readback *rb,
                      struct gpu_cmd **running, int *n_running, char *err, size_t err_len)
{
    struct vulkan_recorder rec = {{&nn_backend_vulkan}, *cmd};
    if (run->record_inputs(run->ctx, &rec.base, run->plans, run->n_plans, err, err_len))
        return -1;
    gpu_cmd_barrier(*cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
    if (record_nets(s, run, cmd, running, n_running, err, err_len))
        return -1;
    bool argmax = false;
    for (int k = 0; k < run->n_plans; k++)
        argmax |= run->output[k] == NN_OUTPUT_ARGMAX;
    if (run->record_outputs || argmax)
        gpu_cmd_barrier(*cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
    rec.cmd = *cmd;
    if (run->record_outputs && run->record_outputs(run->ctx, &rec.base, run->plans, run->n_plans, err, err_len))
        return -1;
    for (int k = 0; k < run->n_plans; k++)
        if (run->output[k] == NN_OUTPUT_ARGMAX && record_argmax(s, *cmd, k, err, err_len))
            return -1;
    if (record_readbacks(s, *cmd, rb, run->n_plans, err, err_len))
        return -1;
    return finish_recording(*cmd, err, err_len);
}

/* Whether the replayed recording is the one `run` asks for. */
static bool replay_matches(struct vulkan_session *s, const struct nn_run *run)
{
    const struct replay *r = &s->replay;
    if (!r->valid || r->key_len != run->replay_key_len || r->n_plans != run->n_plans ||
        r->generation != s->generation || memcmp(r->key, run->replay_key, sizeof(int) * (size_t)r->key_len))
        return false;
    for (int k = 0; k < r->n_plans; k++) {
        struct net_slot *slot = NULL;
        if (r->plans[k] != s->run_plans[k] || !entry_of(s, s->run_plans[k], &slot) ||
            slot->evictions != r->evictions[k])
            return false;
    }
    return true;
}

static void replay_remember(struct vulkan_session *s, const struct nn_run *run)
{
    struct replay *r = &s->replay;
    r->key_len = run->replay_key_len;
    memcpy(r->key, run->replay_key, sizeof(int) * (size_t)r->key_len);
    r->n_plans = run->n_plans;
    for (int k = 0; k < r->n_plans; k++) {
        struct net_slot *slot = NULL;
        entry_of(s, s->run_plans[k], &slot);
        r->plans[k] = s->run_plans[k];
        r->evictions[k] = slot ? slot->evictions : 0;
    }
    r->generation = s->generation;
    r->valid = true;
}

static int run_replayed(struct vulkan_session *s, const struct nn_run *run, char *err, size_t err_len)
{
    s->run_replayed = true;
    if (!replay_matches(s, run)) {
        s->replay.valid = false;
        struct gpu_cmd *cmd = s->replay.cmd;
        int n_running = 0;
        if (gpu_cmd_begin(cmd))
            return fail(err, err_len, "%s", gpu_last_error());
        if (record_run(s, run, &cmd, &s->replay.readback, NULL, &n_running, err, err_len))
            return -1;
        replay_remember(s, run);
    }
    if (gpu_cmd_run(s->replay.cmd))
        return fail(err, err_len, "%s", gpu_last_error());
    s->gpu_ms = gpu_ms_of(s->replay.cmd);
    return 0;
}

int nn_vulkan_session_run(struct nn_session *session, const struct nn_run *run, char *err, size_t err_len)
{
    struct vulkan_session *s = vulkan_session(session);
    s->run_n_plans = 0;
    s->gpu_ms = 0;
    if (run->n_plans < 1 || run->n_plans > NN_RUN_MAX_PLANS || !run->record_inputs ||
        (run->replay_key && (run->replay_key_len > REPLAY_KEY_MAX || run->in_parts)))
        return fail(err, err_len, "%s", "a run the session cannot make");
    for (int k = 0; k < run->n_plans; k++) {
        s->run_plans[k] = gpu_plan(run->plans[k]);
        s->run_output[k] = run->output[k];
    }
    const size_t rows = place_argmax_rows(s, run);
    if (bind_plans(s, run->plans, run->n_plans, err, err_len) || reserve_argmax(s, rows, err, err_len))
        return -1;
    place_readbacks(s, run->n_plans);
    int rc = 0;
    if (run->replay_key) {
        rc = run_replayed(s, run, err, err_len);
    } else {
        s->run_replayed = false;
        struct gpu_cmd *cmd = s->cmd, *running[RUN_PARTS];
        int n_running = 0;
        if (gpu_cmd_begin(cmd))
            return fail(err, err_len, "%s", gpu_last_error());
        rc = record_run(s, run, &cmd, &s->readback, running, &n_running, err, err_len);
        if (rc == 0 && gpu_cmd_run(cmd))
            rc = fail(err, err_len, "%s", gpu_last_error());
        /* the earlier parts finished before the last; after a failure they are still waited out
         * before their command buffers are used again */
        double gpu_ms = rc == 0 ? gpu_ms_of(cmd) : 0;
        for (int p = 0; p < n_running; p++) {
            if (gpu_cmd_wait(running[p]) && rc == 0)
                rc = fail(err, err_len, "%s", gpu_last_error());
            gpu_ms += gpu_ms_of(running[p]);
        }
        s->gpu_ms = rc == 0 ? gpu_ms : 0;
    }
    if (rc == 0 && rows)
        rc = read_argmax(s, rows, err, err_len);
    if (rc == 0)
        s->run_n_plans = run->n_plans; /* the outputs are readable from here on */
    return rc;
}

double nn_vulkan_session_gpu_ms(const struct nn_session *s)
{
    return const_vulkan_session(s)->gpu_ms;
}

/* NULL for a recorder of another backend. */
struct gpu_cmd *nn_gpu_recorder_cmd(struct nn_recorder *rec)
{
    return rec->backend == &nn_backend_vulkan ? ((struct vulkan_recorder *)rec)->cmd : NULL;
}
