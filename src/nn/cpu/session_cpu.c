/* nn_session on the CPU (nn/session.h, the calls of nn/backend.h): the nets on oneDNN
 * (nn/cpu/cpu_net.h), their plan caches, one workspace every run's plans are placed in side by
 * side, and the outputs read and reduced on the host. A run calls the client's record_inputs,
 * runs the plans one after another, then calls record_outputs: there is nothing to record, so
 * in_parts and replay_key mean nothing here (they are checked as on Vulkan, then ignored).
 * A plan whose output is an argmax is reduced as soon as it has run, so the run's argmax plans
 * (a page's recognition batches) take turns in one workspace of the largest one's size rather
 * than one each: less memory touched, which on a first image is page faults. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nn/cpu/cpu_net.h"
#include "nn/cpu/device_cpu.h"
#include "nn/cpu/session_cpu.h"

#define PLAN_CACHE 24 /* input shapes kept per net, as on Vulkan (plans hold no workspace) */
#define REPLAY_KEY_MAX 8

struct plan_entry {
    struct nn_plan handle; /* what the client holds: first, so that a handle is its entry */
    int64_t shape[4];
    struct cpu_plan *plan;
    unsigned last_use;
    bool pinned; /* part of the run being assembled: not to be evicted */
    /* where the last run placed it in the workspace: its input, then its own workspace */
    float *input;
    void *workspace;
    bool ran;
    bool turns; /* its workspace is the one the run's argmax plans take turns in */
};

struct net_slot {
    const char *name;
    struct cpu_net *net;
    struct plan_entry plans[PLAN_CACHE];
    unsigned clock;
    bool leave_softmax;
};

struct cpu_recorder {
    struct nn_recorder base;
};

struct cpu_session {
    struct nn_session base;
    struct cpu_device *dev;
    bool profile;
    struct net_slot slots[NN_NET_COUNT];
    /* every run's plans, side by side at CPU_PLAN_WORKSPACE_ALIGN; grown to the largest run */
    void *workspace;
    uint64_t workspace_bytes;
    /* argmax rows of the last run: [rows] */
    int32_t *index;
    float *value;
    size_t rows_cap;
    /* the last run */
    struct plan_entry *run_plans[NN_RUN_MAX_PLANS];
    enum nn_output_use run_output[NN_RUN_MAX_PLANS];
    size_t run_row0[NN_RUN_MAX_PLANS];
    int run_n_plans;
    double run_ms;
};

static int fail(char *err, size_t err_len, const char *fmt, const char *detail)
{
    snprintf(err, err_len, fmt, detail);
    return -1;
}

static struct cpu_session *cpu_session(struct nn_session *s)
{
    return (struct cpu_session *)s;
}

static const struct cpu_session *const_cpu_session(const struct nn_session *s)
{
    return (const struct cpu_session *)s;
}

static struct plan_entry *entry(const struct nn_plan *p)
{
    return (struct plan_entry *)p;
}

static uint64_t round_up(uint64_t x, uint64_t align)
{
    return (x + align - 1) / align * align;
}

/* A plan's bytes: its fp32 input, then the executor's workspace. */
static uint64_t input_bytes(const struct cpu_plan *plan)
{
    return round_up((uint64_t)pvk_shape_numel(cpu_plan_input_shape(plan)) * sizeof(float), CPU_PLAN_WORKSPACE_ALIGN);
}

static uint64_t plan_bytes(const struct cpu_plan *plan)
{
    return input_bytes(plan) + cpu_plan_workspace_bytes(plan);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- nets ----------------------------------------------------------------------------------- */

static void session_destroy(struct cpu_session *s);

int nn_cpu_session_create(struct nn_device *dev, const struct nn_session_options *opt, struct nn_session **out,
                          char *err, size_t err_len)
{
    *out = NULL;
    if (dev->backend != &nn_backend_cpu)
        return fail(err, err_len, "%s", "a CPU session on a device of another backend");
    struct cpu_session *s = calloc(1, sizeof(*s));
    if (!s)
        return fail(err, err_len, "%s", "out of memory");
    s->base.backend = &nn_backend_cpu;
    s->dev = (struct cpu_device *)dev;
    s->profile = opt->profile;
    /* det first: the order in which a failure is reported, as on Vulkan (the nets are made in a
     * moment here: their weights are repacked when a plan first needs them) */
    static const enum nn_net_id order[NN_NET_COUNT] = {NN_NET_DET, NN_NET_REC, NN_NET_CLS};
    const struct cpu_net_options net_opt = {.threads = s->dev->threads};
    for (int i = 0; i < NN_NET_COUNT; i++) {
        const enum nn_net_id id = order[i];
        struct net_slot *slot = &s->slots[id];
        slot->name = opt->names[id] ? opt->names[id] : "net";
        slot->leave_softmax = opt->leave_final_softmax[id];
        for (int p = 0; p < PLAN_CACHE; p++)
            slot->plans[p].handle.backend = &nn_backend_cpu;
        char why[512];
        if (opt->models[id] && cpu_net_create(opt->models[id], &net_opt, &slot->net, why, sizeof(why))) {
            snprintf(err, err_len, "%s: %s", slot->name, why);
            session_destroy(s);
            return -1;
        }
    }
    *out = &s->base;
    return 0;
}

static void session_destroy(struct cpu_session *s)
{
    for (int n = 0; n < NN_NET_COUNT; n++) {
        struct net_slot *slot = &s->slots[n];
        for (int i = 0; i < PLAN_CACHE; i++)
            cpu_plan_destroy(slot->plans[i].plan);
        cpu_net_destroy(slot->net);
    }
    cpu_device_account(s->dev, s->workspace_bytes, 0);
    free(s->workspace);
    free(s->index);
    free(s->value);
    free(s);
}

void nn_cpu_session_destroy(struct nn_session *s)
{
    session_destroy(cpu_session(s));
}

/* ---- plans ---------------------------------------------------------------------------------- */

static struct net_slot *slot_of(struct cpu_session *s, enum nn_net_id net, char *err, size_t err_len)
{
    if ((unsigned)net >= NN_NET_COUNT || !s->slots[net].net) {
        fail(err, err_len, "%s", "the session has no such net");
        return NULL;
    }
    return &s->slots[net];
}

/* The entry of plan in s, or NULL (a plan of another session or backend, or evicted). */
static struct plan_entry *entry_of(struct cpu_session *s, const struct nn_plan *plan)
{
    for (int n = 0; n < NN_NET_COUNT; n++)
        for (int i = 0; i < PLAN_CACHE; i++)
            if (&s->slots[n].plans[i].handle == plan)
                return s->slots[n].plans[i].plan ? &s->slots[n].plans[i] : NULL;
    return NULL;
}

static struct net_slot *net_of(struct cpu_session *s, const struct plan_entry *p)
{
    for (int n = 0; n < NN_NET_COUNT; n++)
        if (p >= s->slots[n].plans && p < s->slots[n].plans + PLAN_CACHE)
            return &s->slots[n];
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

/* Makes the plan of slot's net for shape; the reason names the net. */
static int make_plan(struct net_slot *slot, const int64_t shape[4], struct cpu_plan **out, char *err, size_t err_len)
{
    for (int d = 0; d < 4; d++)
        if (shape[d] < 1) {
            snprintf(err, err_len, "%s: input shape [%lld, %lld, %lld, %lld] has a dimension under 1", slot->name,
                     (long long)shape[0], (long long)shape[1], (long long)shape[2], (long long)shape[3]);
            return -1;
        }
    const struct cpu_plan_options opt = {.leave_final_softmax = slot->leave_softmax};
    char why[512];
    if (cpu_net_plan(slot->net, shape, &opt, out, why, sizeof(why))) {
        snprintf(err, err_len, "%s: %s", slot->name, why);
        return -1;
    }
    return 0;
}

/* The cached plan of slot's net for shape that a run may take (not pinned), or NULL. */
static struct plan_entry *cached(struct net_slot *slot, const int64_t shape[4])
{
    for (int i = 0; i < PLAN_CACHE; i++) {
        struct plan_entry *p = &slot->plans[i];
        if (p->plan && !p->pinned && !memcmp(p->shape, shape, sizeof(p->shape)))
            return p;
    }
    return NULL;
}

/* An entry for a new plan of slot's net: a free one, or the least recently used plan that is not
 * pinned, destroyed; NULL when every plan is pinned. */
static struct plan_entry *entry_for_new(struct net_slot *slot)
{
    for (int i = 0; i < PLAN_CACHE; i++)
        if (!slot->plans[i].plan)
            return &slot->plans[i];
    struct plan_entry *lru = slot_lru(slot);
    if (lru) {
        cpu_plan_destroy(lru->plan);
        lru->plan = NULL;
    }
    return lru;
}

static void entry_set(struct net_slot *slot, struct plan_entry *e, const int64_t shape[4], struct cpu_plan *plan)
{
    e->plan = plan;
    memcpy(e->shape, shape, sizeof(e->shape));
    e->input = NULL;
    e->workspace = NULL;
    e->ran = false;
    e->turns = false;
    e->last_use = ++slot->clock;
}

struct nn_plan *nn_cpu_session_plan(struct nn_session *session, enum nn_net_id net, const int64_t shape[4], char *err,
                                    size_t err_len)
{
    struct net_slot *slot = slot_of(cpu_session(session), net, err, err_len);
    if (!slot)
        return NULL;
    struct plan_entry *e = cached(slot, shape);
    if (e) {
        e->last_use = ++slot->clock;
        return &e->handle;
    }
    if (!(e = entry_for_new(slot))) {
        snprintf(err, err_len, "%s: every cached plan is in use", slot->name);
        return NULL;
    }
    struct cpu_plan *plan;
    if (make_plan(slot, shape, &plan, err, err_len))
        return NULL;
    entry_set(slot, e, shape, plan);
    return &e->handle;
}

/* ---- plans made ahead, side by side ---------------------------------------------------------- */

#define AHEAD_THREADS_MAX 8

struct ahead_plan {
    struct net_slot *slot;
    int64_t shape[4];
    struct cpu_plan *plan; /* made, or NULL */
};

struct ahead_work {
    struct ahead_plan *plans;
    int n;
    atomic_int next;
};

static void *make_ahead(void *arg)
{
    struct ahead_work *w = arg;
    for (int k; (k = atomic_fetch_add(&w->next, 1)) < w->n;) {
        char why[1024]; /* room for the net's name before the executor's reason */
        if (make_plan(w->plans[k].slot, w->plans[k].shape, &w->plans[k].plan, why, sizeof(why)))
            w->plans[k].plan = NULL; /* nn_session_plan says why, if it is asked for */
    }
    return NULL;
}

/* Planning a net is mostly the library compiling its kernels, one thread's work: the plans of a
 * page's first recognition run are made on the session's threads at once, which are idle then. */
void nn_cpu_session_plan_ahead(struct nn_session *session, const struct nn_plan_request *requests, int n)
{
    struct cpu_session *s = cpu_session(session);
    struct ahead_plan plans[NN_PLAN_AHEAD_MAX];
    int n_plans = 0;
    for (int i = 0; i < n && i < NN_PLAN_AHEAD_MAX; i++) {
        const struct nn_plan_request *r = &requests[i];
        if ((unsigned)r->net >= NN_NET_COUNT || !s->slots[r->net].net)
            continue;
        struct net_slot *slot = &s->slots[r->net];
        bool known = cached(slot, r->shape) != NULL;
        for (int j = 0; j < n_plans && !known; j++)
            known = plans[j].slot == slot && !memcmp(plans[j].shape, r->shape, sizeof(r->shape));
        if (!known) {
            plans[n_plans] = (struct ahead_plan){.slot = slot};
            memcpy(plans[n_plans++].shape, r->shape, sizeof(r->shape));
        }
    }
    int threads = s->dev->threads_used < n_plans ? s->dev->threads_used : n_plans;
    threads = threads < AHEAD_THREADS_MAX ? threads : AHEAD_THREADS_MAX;
    if (threads < 2)
        return; /* one at a time, as nn_session_plan makes them */
    struct ahead_work w = {.plans = plans, .n = n_plans};
    atomic_init(&w.next, 0);
    pthread_t helpers[AHEAD_THREADS_MAX];
    int started = 0;
    for (int t = 1; t < threads; t++)
        if (pthread_create(&helpers[started], NULL, make_ahead, &w) == 0)
            started++;
    make_ahead(&w);
    for (int t = 0; t < started; t++)
        pthread_join(helpers[t], NULL);
    for (int k = 0; k < n_plans; k++) {
        if (!plans[k].plan)
            continue;
        struct plan_entry *e = entry_for_new(plans[k].slot);
        if (e)
            entry_set(plans[k].slot, e, plans[k].shape, plans[k].plan);
        else
            cpu_plan_destroy(plans[k].plan);
    }
}

void nn_cpu_session_pin(struct nn_session *s, struct nn_plan *plan, bool pinned)
{
    struct plan_entry *p = entry_of(cpu_session(s), plan);
    if (p)
        p->pinned = pinned;
}

uint64_t nn_cpu_session_plan_bytes(struct nn_session *s, enum nn_net_id net, const int64_t shape[4])
{
    char why[1024]; /* room for the net's name before the executor's reason */
    struct net_slot *slot = slot_of(cpu_session(s), net, why, sizeof(why));
    struct cpu_plan *plan;
    if (!slot || make_plan(slot, shape, &plan, why, sizeof(why)))
        return UINT64_MAX;
    const uint64_t bytes = plan_bytes(plan);
    cpu_plan_destroy(plan);
    return bytes;
}

uint64_t nn_cpu_plan_bytes(const struct nn_plan *plan)
{
    return plan_bytes(entry(plan)->plan);
}

uint64_t nn_cpu_plan_align(const struct nn_plan *plan)
{
    (void)plan;
    return CPU_PLAN_WORKSPACE_ALIGN;
}

const struct pvk_shape *nn_cpu_plan_input_shape(const struct nn_plan *plan)
{
    return cpu_plan_input_shape(entry(plan)->plan);
}

const struct pvk_shape *nn_cpu_plan_output_shape(const struct nn_plan *plan)
{
    return cpu_plan_output_shape(entry(plan)->plan);
}

float *nn_cpu_plan_input_data(const struct nn_plan *plan)
{
    return plan && plan->backend == &nn_backend_cpu ? entry(plan)->input : NULL;
}

const float *nn_cpu_plan_output_data(const struct nn_plan *plan)
{
    if (!plan || plan->backend != &nn_backend_cpu)
        return NULL;
    const struct plan_entry *p = entry(plan);
    if (!p->ran || p->turns || cpu_plan_output_dtype(p->plan) != PVK_DTYPE_F32)
        return NULL;
    return cpu_plan_output(p->plan);
}

uint64_t nn_cpu_session_memory_limit(const struct nn_session *s)
{
    return const_cpu_session(s)->dev->memory_limit;
}

uint64_t nn_cpu_session_memory_held(const struct nn_session *s)
{
    return const_cpu_session(s)->workspace_bytes;
}

/* Places the run's inputs side by side in the workspace, then the workspaces of the plans whose
 * outputs outlive their turn, then the one that the argmax plans take turns in; grows it first if
 * they need more. */
static int bind_plans(struct cpu_session *s, int n, char *err, size_t err_len)
{
    uint64_t in_at[NN_RUN_MAX_PLANS], ws_at[NN_RUN_MAX_PLANS] = {0}, need = 0, turns_bytes = 0;
    for (int k = 0; k < n; k++) {
        in_at[k] = round_up(need, CPU_PLAN_WORKSPACE_ALIGN);
        need = in_at[k] + input_bytes(s->run_plans[k]->plan);
    }
    for (int k = 0; k < n; k++) {
        const uint64_t bytes = cpu_plan_workspace_bytes(s->run_plans[k]->plan);
        if (s->run_output[k] == NN_OUTPUT_ARGMAX) {
            turns_bytes = bytes > turns_bytes ? bytes : turns_bytes;
            continue;
        }
        ws_at[k] = round_up(need, CPU_PLAN_WORKSPACE_ALIGN);
        need = ws_at[k] + bytes;
    }
    const uint64_t turns_at = round_up(need, CPU_PLAN_WORKSPACE_ALIGN);
    need = turns_at + turns_bytes;
    if (need > s->dev->memory_limit) {
        snprintf(err, err_len, "activation memory (%llu bytes): more than the device takes at once (%llu)",
                 (unsigned long long)need, (unsigned long long)s->dev->memory_limit);
        return -1;
    }
    if (s->workspace_bytes < need) {
        const uint64_t bytes = round_up(need, CPU_PLAN_WORKSPACE_ALIGN);
        free(s->workspace);
        cpu_device_account(s->dev, s->workspace_bytes, 0);
        s->workspace_bytes = 0;
        if (!(s->workspace = aligned_alloc(CPU_PLAN_WORKSPACE_ALIGN, (size_t)bytes))) {
            snprintf(err, err_len, "activation memory (%llu bytes): out of memory", (unsigned long long)need);
            return -1;
        }
        s->workspace_bytes = bytes;
        cpu_device_account(s->dev, 0, bytes);
    }
    for (int k = 0; k < n; k++) {
        struct plan_entry *p = s->run_plans[k];
        p->turns = s->run_output[k] == NN_OUTPUT_ARGMAX;
        p->input = (float *)((char *)s->workspace + in_at[k]);
        p->workspace = (char *)s->workspace + (p->turns ? turns_at : ws_at[k]);
        p->ran = false;
    }
    return 0;
}

/* ---- outputs -------------------------------------------------------------------------------- */

static int read_output(const struct cpu_session *s, int k, const struct plan_entry **p, char *err, size_t err_len)
{
    if (k < 0 || k >= s->run_n_plans || s->run_output[k] != NN_OUTPUT_READ)
        return fail(err, err_len, "%s", "that output of the run was not read back");
    *p = s->run_plans[k];
    return 0;
}

int nn_cpu_session_read_output(struct nn_session *session, int k, float *dst, char *err, size_t err_len)
{
    const struct plan_entry *p;
    if (read_output(cpu_session(session), k, &p, err, err_len))
        return -1;
    const size_t n = (size_t)pvk_shape_numel(cpu_plan_output_shape(p->plan));
    if (cpu_plan_output_dtype(p->plan) == PVK_DTYPE_I32) {
        const int32_t *src = cpu_plan_output(p->plan);
        for (size_t i = 0; i < n; i++)
            dst[i] = (float)src[i];
    } else {
        memcpy(dst, cpu_plan_output(p->plan), n * sizeof(float));
    }
    return 0;
}

const float *nn_cpu_session_output(struct nn_session *session, int k, float **owned, char *err, size_t err_len)
{
    *owned = NULL;
    const struct plan_entry *p;
    if (read_output(cpu_session(session), k, &p, err, err_len))
        return NULL;
    if (cpu_plan_output_dtype(p->plan) == PVK_DTYPE_F32)
        return cpu_plan_output(p->plan);
    const size_t n = (size_t)pvk_shape_numel(cpu_plan_output_shape(p->plan));
    if (!(*owned = malloc(n * sizeof(float)))) {
        fail(err, err_len, "%s", "out of memory for a net's output");
        return NULL;
    }
    nn_cpu_session_read_output(session, k, *owned, err, err_len);
    return *owned;
}

/* Rows of the run's NN_OUTPUT_ARGMAX plans, one after another; returns their count, or -1 with
 * a reason (an output that is not [N, T, C] fp32). */
static int64_t place_argmax_rows(struct cpu_session *s, int n, char *err, size_t err_len)
{
    size_t rows = 0;
    for (int k = 0; k < n; k++) {
        if (s->run_output[k] != NN_OUTPUT_ARGMAX)
            continue;
        const struct pvk_shape *o = cpu_plan_output_shape(s->run_plans[k]->plan);
        if (o->ndim != 3 || cpu_plan_output_dtype(s->run_plans[k]->plan) != PVK_DTYPE_F32)
            return fail(err, err_len, "%s", "an argmax over an output of another precision or rank");
        s->run_row0[k] = rows;
        rows += (size_t)o->d[0] * (size_t)o->d[1];
    }
    if (rows > s->rows_cap) {
        int32_t *index = realloc(s->index, rows * sizeof(*index));
        if (index)
            s->index = index;
        float *value = realloc(s->value, rows * sizeof(*value));
        if (value)
            s->value = value;
        if (!index || !value)
            return fail(err, err_len, "%s", "out of memory");
        s->rows_cap = rows;
    }
    return (int64_t)rows;
}

int nn_cpu_session_argmax(const struct nn_session *session, int k, const int32_t **index, const float **value)
{
    const struct cpu_session *s = const_cpu_session(session);
    if (k < 0 || k >= s->run_n_plans || s->run_output[k] != NN_OUTPUT_ARGMAX || !s->index)
        return -1;
    *index = s->index + s->run_row0[k];
    *value = s->value + s->run_row0[k];
    return 0;
}

/* ---- runs ----------------------------------------------------------------------------------- */

static int run_plans(struct cpu_session *s, const struct nn_run *run, char *err, size_t err_len)
{
    struct cpu_recorder rec = {{&nn_backend_cpu}};
    if (run->record_inputs(run->ctx, &rec.base, run->plans, run->n_plans, err, err_len))
        return -1;
    for (int k = 0; k < run->n_plans; k++) {
        struct plan_entry *p = s->run_plans[k];
        char why[512];
        if (cpu_plan_run(p->plan, p->input, p->workspace, why, sizeof(why))) {
            const struct net_slot *slot = net_of(s, p);
            snprintf(err, err_len, "%s: %s", slot ? slot->name : "net", why);
            return -1;
        }
        p->ran = true;
        /* before the next argmax plan's turn in the same workspace */
        if (p->turns &&
            cpu_plan_argmax(p->plan, s->index + s->run_row0[k], s->value + s->run_row0[k], why, sizeof(why)))
            return fail(err, err_len, "argmax: %s", why);
    }
    if (run->record_outputs && run->record_outputs(run->ctx, &rec.base, run->plans, run->n_plans, err, err_len))
        return -1;
    return 0;
}

int nn_cpu_session_run(struct nn_session *session, const struct nn_run *run, char *err, size_t err_len)
{
    struct cpu_session *s = cpu_session(session);
    s->run_n_plans = 0;
    s->run_ms = 0;
    if (run->n_plans < 1 || run->n_plans > NN_RUN_MAX_PLANS || !run->record_inputs ||
        (run->replay_key && (run->replay_key_len > REPLAY_KEY_MAX || run->in_parts)))
        return fail(err, err_len, "%s", "a run the session cannot make");
    for (int k = 0; k < run->n_plans; k++) {
        if (!(s->run_plans[k] = entry_of(s, run->plans[k])))
            return fail(err, err_len, "%s", "a plan that is not in the session's cache");
        for (int j = 0; j < k; j++)
            if (s->run_plans[j] == s->run_plans[k])
                return fail(err, err_len, "%s", "one plan twice in a run (pin it to get a second of its shape)");
        s->run_output[k] = run->output[k];
    }
    const double t0 = s->profile ? now_ms() : 0;
    if (place_argmax_rows(s, run->n_plans, err, err_len) < 0 || bind_plans(s, run->n_plans, err, err_len) ||
        run_plans(s, run, err, err_len))
        return -1;
    if (s->profile)
        s->run_ms = now_ms() - t0;
    s->run_n_plans = run->n_plans; /* the outputs are readable from here on */
    return 0;
}

double nn_cpu_session_gpu_ms(const struct nn_session *s)
{
    return const_cpu_session(s)->run_ms;
}
