/* The OCR engine: det -> DB boxes -> crops -> cls -> rec -> CTC, PaddleOCR 2.x's default pipeline.
 * The nets and the image kernels run on the GPU, one command buffer per stage; DB post-processing
 * and CTC decoding run on the CPU. */
#include "ocr/engine.h"

#include <math.h>
#include <stdatomic.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu/cmd.h"
#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pool.h"
#include "gpu/transfer.h"
#include "model/model.h"
#include "nn/gpu/db_bitmap.h"
#include "nn/gpu/image_ops.h"
#include "nn/gpu/net.h"
#include "ocr/ctc.h"
#include "ocr/db_postprocess.h"
#include "ocr/det_tiles.h"
#include "ocr/fit.h"
#include "ocr/layout.h"
#include "ocr/models_path.h"
#include "ocr/pad.h"
#include "ocr/precision.h"
#include "ocr/preprocess.h"
#include "ocr/workers.h"
#include "ocr/word_boxes.h"

#define REC_HEIGHT 48
#define REC_MIN_WIDTH 320 /* PaddleOCR's rec_image_shape width: shorter lines are padded to it */
/* Longer lines are padded to the next width of a ladder from REC_MIN_WIDTH, each width 1/8 more
 * than the last rounded up to a multiple of REC_WIDTH_STEP (320, 384, 448, 512, 576, 672, 768,
 * 864, 992, ...): at most about 1/6 of a line is padding, and a page's lines share fewer widths,
 * so fewer batches. A 28-line page fell into 9 widths (10 batches) instead of 15 (steps of 32):
 * recognition on the H200 3.67 -> 3.40 ms of GPU time, the corpus's texts unchanged but for a
 * full stop gained. */
#define REC_WIDTH_STEP 32
#define CLS_BATCH_MAX 32
#define PLAN_CACHE 24    /* input shapes kept per net (plans hold no device memory: see e->act) */
/* rec batches (one plan per input width) recorded in lockstep into one submission: up to
 * REC_GROUP_GROWN when they fit in the activation memory the engine already has or in
 * REC_GROUP_MEMORY, else REC_GROUP; fewer than PLAN_CACHE so the group's plans stay cached
 * together. Without the allowance, the memory det leaves decides: when det's activations at 960
 * shrank from 70 to 49 MiB, the sample's eight lines took two submissions instead of one, and
 * recognition 2.42 ms of GPU time on the H200 instead of 2.00. A page of 28 lines fell into 15
 * widths when they were 32 px apart: one submission of 15 batches instead of two of 8 and 7 took
 * its recognition from 4.01 to 3.63 ms of GPU time there. */
#define REC_GROUP 4
#define REC_GROUP_GROWN 16
#define REC_GROUP_MEMORY ((uint64_t)64 << 20)
/* Plans recorded together: rec's batches and the direction classifier beside them */
#define GROUP_PLANS_MAX (REC_GROUP_GROWN + 1)
/* A group's steps are recorded in REC_PARTS parts of doubling length, each submitted before the
 * next is recorded: the GPU waits only while the first, short part is recorded, and then runs
 * each part while the host records the next. Recording a page's eight plans takes about a third
 * of the time the GPU takes to run them (on the H200, 0.7-1.2 ms of 2.2), so a part runs longer
 * than the next, twice as long, takes to record. */
#define REC_PARTS 4
/* Detection's preparation (not in --paddle-parity): images with a shorter side below DET_MIN_SIDE
 * are scaled up to it, and every image gets DET_MARGIN pixels of its border colour around it. On
 * the corpus's 14 word crops this takes detection from 5 found to 13 (see BENCHMARKS.md). */
#define DET_MIN_SIDE 48
#define DET_MARGIN 32
/* Threads that share the host's larger loops with the engine's own, where spare cores are likely:
 * the first engine on a GPU, with up to HELPERS of the CPUs the process may use beyond the first
 * (its siblings run beside other engines, and a CPU device uses every core already). The loops:
 * DB post-processing's boxes (their min-area rectangles, scores and growing: on the H200's host
 * the document's 28 boxes took 0.29 ms of its 0.51 ms of DB post-processing on one thread), the
 * image's copy into mapped device memory in UPLOAD_PIECES pieces from UPLOAD_SPLIT_BYTES on, and
 * a recognition group's crop tables. */
#define HELPERS 3
#define UPLOAD_PIECES 8
#define UPLOAD_SPLIT_BYTES ((size_t)1 << 20)
/* Pixels of the largest image the engine works on; larger ones are scaled down to it. */
#define ENGINE_MAX_PIXELS (16.0 * 1024 * 1024)
/* Timestamps per recording (with --profile): one mark at its end, so a stage's GPU time is the
 * whole recording's, its dispatches left free to overlap as they do unprofiled. */
#define MAX_TIMINGS 4

struct plan_entry {
    int64_t shape[4];
    struct nn_gpu_plan *plan;
    unsigned last_use;
    bool pinned; /* part of the recording being built: not to be evicted */
};

/* A net with its plans for the input shapes seen lately. */
struct net_slot {
    const char *name;
    struct pvk_model model;
    struct nn_gpu_net *net;
    struct plan_entry plans[PLAN_CACHE];
    unsigned clock;
    unsigned evictions; /* plans destroyed so far: a recording of an older plan is stale */
    bool leave_softmax; /* plans leave a final softmax to the argmax (rec) */
};

/* A host-visible buffer through which a stage's output reaches the host, grown as needed: a copy
 * recorded with the stage when device memory is not mapped (so reading it costs no extra submit),
 * or det's bitmap, which a kernel writes there. */
struct readback {
    struct gpu_buffer buf;
    size_t cap;
};

struct ocr_engine {
    struct ocr_options opt;
    char device[320];
    struct gpu_context *ctx;
    bool shares_ctx; /* a sibling's: the first engine owns and destroys it */
    struct nn_gpu_config cfg, det_cfg; /* cls and rec; det */
    struct net_slot det, cls, rec;
    struct image_ops *image_ops;
    struct image_crop_batch *crops[GROUP_PLANS_MAX]; /* one per plan recorded together */
    /* by enum pvk_argmax_value: over rec's probabilities, or over its logits where its plans
     * leave the final softmax out (the argmax then gives the maximum's probability) */
    struct nn_gpu_op *argmax[2];
    struct pvk_op argmax_op[2];
    struct gpu_cmd *cmd;
    struct gpu_cmd *cmd_parts[REC_PARTS - 1]; /* the later parts of a recording begun in cmd */

    struct gpu_buffer image; /* the current image's BGR bytes, framed by image_margin (image_ops.h) */
    int image_margin;
    size_t image_cap;
    struct image_det_job *det_job;
    int det_job_key[5]; /* src w, h, det w, h and the image's margin of det_job */
    struct gpu_buffer rec_index, rec_prob; /* argmax outputs, host-visible */
    size_t rec_rows_cap;
    struct readback det_readback, readback;
    /* det's map thresholded by the GPU into the contour follower's work image (db_bitmap.h):
     * host-visible, as DB post-processing labels it in place */
    struct db_bitmap *db_bitmap;
    struct readback db_work;
    struct ocr_workers *helpers; /* threads beside this one for the host's larger loops (see HELPERS) */
    /* Detection's recording is kept and replayed while the image size, the plan and the buffers
     * it binds stay the same (a folder of scans of one size records it once). */
    struct gpu_cmd *det_cmd;
    const struct nn_gpu_plan *det_recorded_plan; /* NULL: record again */
    int det_recorded_key[5];
    unsigned det_recorded_evictions;
    unsigned det_recorded_generation;
    /* The activations of every plan, bound here before each use: det, cls and each rec group run
     * one after another, so they share these bytes (a rec group's plans side by side), and the
     * engine holds the largest stage's activations instead of every cached plan's. Grown when a
     * stage needs more; act_generation counts the reallocations (recordings before are stale). */
    struct gpu_buffer act;
    unsigned act_generation;
    struct ocr_engine_startup startup;
};

/* ---- small helpers ------------------------------------------------------------------------ */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
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

static int fail(char *err, size_t err_len, const char *fmt, const char *detail)
{
    snprintf(err, err_len, fmt, detail);
    return -1;
}

/* ---- nets and their plans ------------------------------------------------------------------ */

static int slot_load(struct ocr_engine *e, struct net_slot *s, const char *dir, const char *file, char *err,
                     size_t err_len)
{
    char path[4096 + 64], why[512];
    snprintf(path, sizeof(path), "%s/%s", dir, file);
    s->name = file;
    if (pvk_model_load(path, &s->model, why, sizeof(why))) {
        snprintf(err, err_len, "%s", why);
        return -1;
    }
    return 0;
}

static int slot_create_net(struct ocr_engine *e, struct net_slot *s, const struct nn_gpu_config *cfg, char *err,
                           size_t err_len)
{
    char why[512];
    if (nn_gpu_net_create(cfg, &s->model, &s->net, why, sizeof(why))) {
        snprintf(err, err_len, "%s: %s", s->name, why);
        return -1;
    }
    return 0;
}

/* The nets are built side by side: most of their creation is pipelines, which the driver builds
 * (or reads from its cache) one at a time per thread. */
struct net_job {
    struct ocr_engine *e;
    struct net_slot *s;
    const struct nn_gpu_config *cfg;
    pthread_t thread;
    bool started;
    int rc;
    char err[1024];
};

static void *net_job_run(void *arg)
{
    struct net_job *j = arg;
    j->rc = slot_create_net(j->e, j->s, j->cfg, j->err, sizeof(j->err));
    return NULL;
}

/* Creates the n nets, all but the first on threads of their own (inline where no thread can be
 * started); the first failure in the order given is reported. */
static int create_nets(struct net_job *jobs, int n, char *err, size_t err_len)
{
    for (int k = 1; k < n; k++)
        jobs[k].started = pthread_create(&jobs[k].thread, NULL, net_job_run, &jobs[k]) == 0;
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

static void slot_free(struct net_slot *s)
{
    for (int i = 0; i < PLAN_CACHE; i++)
        nn_gpu_plan_destroy(s->plans[i].plan);
    nn_gpu_net_destroy(s->net);
    if (s->model.impl_)
        pvk_model_free(&s->model);
    memset(s, 0, sizeof(*s));
}

static void slot_evict(struct net_slot *s, struct plan_entry *p)
{
    nn_gpu_plan_destroy(p->plan);
    p->plan = NULL;
    s->evictions++;
}

/* The least recently used plan other than `keep`, or NULL. */
static struct plan_entry *slot_lru(struct net_slot *s)
{
    struct plan_entry *lru = NULL;
    for (int i = 0; i < PLAN_CACHE; i++) {
        struct plan_entry *p = &s->plans[i];
        if (p->plan && !p->pinned && (!lru || p->last_use < lru->last_use))
            lru = p;
    }
    return lru;
}

/* The plan for an input shape: cached, at most PLAN_CACHE of them, the least recently used given
 * back first. Plans hold no device memory: bind_plans places them in the engine's. */
static struct nn_gpu_plan *slot_plan(struct net_slot *s, const int64_t shape[4], char *err, size_t err_len)
{
    struct plan_entry *slot = NULL;
    for (int i = 0; i < PLAN_CACHE; i++) {
        struct plan_entry *p = &s->plans[i];
        /* a pinned plan is bound for a batch of the recording being built: another batch of the
         * same shape in it gets a plan of its own */
        if (p->plan && !p->pinned && !memcmp(p->shape, shape, sizeof(p->shape))) {
            p->last_use = ++s->clock;
            return p->plan;
        }
        if (!p->plan && !slot)
            slot = p;
    }
    if (!slot) {
        if (!(slot = slot_lru(s))) {
            snprintf(err, err_len, "%s: every cached plan is in use", s->name);
            return NULL;
        }
        slot_evict(s, slot);
    }
    char why[512];
    const struct nn_gpu_plan_options opt = {.external_memory = true, .leave_final_softmax = s->leave_softmax};
    if (nn_gpu_plan_create(s->net, shape, &opt, &slot->plan, why, sizeof(why))) {
        snprintf(err, err_len, "%s: %s", s->name, why);
        return NULL;
    }
    memcpy(slot->shape, shape, sizeof(slot->shape));
    slot->last_use = ++s->clock;
    return slot->plan;
}

/* Offsets at[] of plans side by side from the start of one buffer, each at its alignment; returns
 * the bytes they need together. */
static uint64_t place_plans(struct nn_gpu_plan *const *plans, int n, uint64_t *at)
{
    uint64_t need = 0;
    for (int k = 0; k < n; k++) {
        uint64_t align = nn_gpu_plan_align(plans[k]);
        at[k] = (need + align - 1) / align * align;
        need = at[k] + nn_gpu_plan_arena_bytes(plans[k]);
    }
    return need;
}

/* The most activation memory the engine binds at once: one buffer, which the device must bind
 * whole (maxStorageBufferRange), and at most a quarter of its memory, which the image, the weights
 * and sibling engines share. Work that needs more is cut to fit (fit.h). */
static uint64_t act_limit(const struct ocr_engine *e)
{
    const struct gpu_caps *c = gpu_context_caps(e->ctx);
    uint64_t limit = c->max_storage_buffer_range;
    if (c->device_local_bytes && c->device_local_bytes / 4 < limit)
        limit = c->device_local_bytes / 4;
    return limit;
}

/* The activation bytes of s's plan for `shape`, made and dropped (not cached: the sizes of cuts
 * that were tried); UINT64_MAX when the net cannot be planned for it. */
static uint64_t plan_bytes(struct net_slot *s, const int64_t shape[4])
{
    const struct nn_gpu_plan_options opt = {.external_memory = true, .leave_final_softmax = s->leave_softmax};
    struct nn_gpu_plan *plan;
    char why[256];
    if (nn_gpu_plan_create(s->net, shape, &opt, &plan, why, sizeof(why)))
        return UINT64_MAX;
    uint64_t bytes = nn_gpu_plan_arena_bytes(plan);
    nn_gpu_plan_destroy(plan);
    return bytes;
}

/* Places plans side by side at the start of the engine's activation memory, growing it first if
 * they need more. When the device is out of memory, the pool's free blocks go back to the driver
 * and it is tried once more. */
static int bind_plans(struct ocr_engine *e, struct nn_gpu_plan *const *plans, int n, char *err, size_t err_len)
{
    uint64_t at[GROUP_PLANS_MAX], need = place_plans(plans, n, at);
    if (need > act_limit(e)) {
        snprintf(err, err_len, "activation memory (%llu bytes): more than the device takes at once (%llu)",
                 (unsigned long long)need, (unsigned long long)act_limit(e));
        return -1;
    }
    if (!e->act.block || e->act.size < need) {
        gpu_buffer_free(&e->act);
        e->act_generation++;
        if (gpu_buffer_alloc(e->ctx, GPU_MEMORY_DEVICE, need ? need : 256, &e->act)) {
            gpu_pool_trim(e->ctx);
            if (gpu_buffer_alloc(e->ctx, GPU_MEMORY_DEVICE, need ? need : 256, &e->act)) {
                snprintf(err, err_len, "activation memory (%llu bytes): %s", (unsigned long long)need,
                         gpu_last_error());
                return -1;
            }
        }
    }
    char why[512];
    for (int k = 0; k < n; k++)
        if (nn_gpu_plan_bind(plans[k], &e->act, at[k], why, sizeof(why)))
            return fail(err, err_len, "%s", why);
    return 0;
}

/* Classes the recogniser outputs, from its output shape at the standard input size. */
static int rec_classes(const struct pvk_model *m, int64_t *classes, char *err, size_t err_len)
{
    struct pvk_shape *shapes = calloc(m->n_tensors + 1, sizeof(*shapes));
    if (!shapes)
        return fail(err, err_len, "%s", "out of memory");
    const int64_t in[4] = {1, 3, REC_HEIGHT, REC_MIN_WIDTH};
    int rc = pvk_infer_shapes(m, in, shapes, err, err_len);
    if (rc == 0) {
        const struct pvk_shape *o = &shapes[m->output];
        *classes = o->ndim ? o->d[o->ndim - 1] : 0;
    }
    free(shapes);
    return rc;
}

/* ---- engine life ---------------------------------------------------------------------------- */

/* The models of opt (det, rec and, with use_cls, cls) from dir, checked against each other. */
static int load_models(struct ocr_engine *e, const struct ocr_options *opt, const char *dir, char *err,
                       size_t err_len)
{
    if (slot_load(e, &e->det, dir, "det.pvk", err, err_len) || slot_load(e, &e->rec, dir, "rec.pvk", err, err_len) ||
        (opt->use_cls && slot_load(e, &e->cls, dir, "cls.pvk", err, err_len)))
        return -1;
    if (e->det.model.net_kind != PVK_NET_DET || e->rec.model.net_kind != PVK_NET_REC ||
        (opt->use_cls && e->cls.model.net_kind != PVK_NET_CLS))
        return fail(err, err_len, "%s: det.pvk, cls.pvk and rec.pvk are not a detector, classifier and recogniser",
                    dir);
    int64_t classes = 0;
    if (rec_classes(&e->rec.model, &classes, err, err_len))
        return -1;
    if (!e->rec.model.dict || classes != (int64_t)e->rec.model.n_dict + 1) {
        snprintf(err, err_len, "rec.pvk: the recogniser has %lld classes but its dictionary %u entries (+1 blank)",
                 (long long)classes, e->rec.model.n_dict);
        return -1;
    }
    return 0;
}

struct context_job {
    struct gpu_options opt;
    struct gpu_context *ctx; /* NULL with err on failure */
    pthread_t thread;
    bool thread_started;
    char err[512];
};

static void *context_job_run(void *arg)
{
    struct context_job *j = arg;
    if (gpu_context_create(&j->opt, &j->ctx))
        snprintf(j->err, sizeof(j->err), "%s", gpu_last_error());
    return NULL;
}

static struct ocr_engine *engine_create(const struct ocr_options *opt, struct gpu_context *shared, int *err_kind,
                                        char *err, size_t err_len)
{
    *err_kind = 0;
    struct ocr_engine *e = calloc(1, sizeof(*e));
    if (!e) {
        fail(err, err_len, "%s", "out of memory");
        return NULL;
    }
    e->opt = *opt;
    double t0 = now_ms();

    char dir[4096];
    if (ocr_find_models_dir(opt->models_dir, dir, sizeof(dir))) {
        snprintf(err, err_len, "no models in %s (run tools/fetch-models.sh, or give --models DIR)", dir);
        *err_kind = 2;
        goto fail;
    }
    /* The Vulkan instance and device come up while the models are read. */
    struct context_job cj = {.thread_started = false};
    gpu_options_default(&cj.opt);
    cj.opt.device_index = opt->device_index;
    cj.opt.force_fp32 = opt->force_fp32;
    if (!shared)
        cj.thread_started = pthread_create(&cj.thread, NULL, context_job_run, &cj) == 0;
    int models_rc = load_models(e, opt, dir, err, err_len);
    double t1 = now_ms();
    if (cj.thread_started)
        pthread_join(cj.thread, NULL);
    else if (!shared && models_rc == 0)
        context_job_run(&cj);
    if (shared) {
        e->ctx = shared;
        e->shares_ctx = true;
    } else {
        e->ctx = cj.ctx; /* destroyed with the engine, also when the models failed */
    }
    if (models_rc) {
        *err_kind = 2;
        goto fail;
    }
    if (!e->ctx) {
        snprintf(err, err_len, "%s", cj.err);
        *err_kind = 1;
        goto fail;
    }
    double t2 = now_ms();
    e->cfg = ocr_line_nets_config(e->ctx, opt->fp16_math);
    e->det_cfg = ocr_det_config(e->ctx);
    const struct gpu_caps *caps = gpu_context_caps(e->ctx);
    snprintf(e->device, sizeof(e->device), "%s (%s), %s", caps->device_name, gpu_device_kind_name(caps->kind),
             e->cfg.act_dtype == NN_F16 ? "fp16 (det fp32)" : "fp32");

    /* From here on a failure means the device cannot run the nets (out of memory, a pipeline
     * the driver rejects): nothing could be processed, as with no device at all. */
    *err_kind = 1;
    struct net_job jobs[3] = {{.e = e, .s = &e->det, .cfg = &e->det_cfg},
                              {.e = e, .s = &e->rec, .cfg = &e->cfg},
                              {.e = e, .s = &e->cls, .cfg = &e->cfg}};
    if (create_nets(jobs, opt->use_cls ? 3 : 2, err, err_len))
        goto fail;
    double t3 = now_ms();
    if (image_ops_create(e->ctx, e->det_cfg.act_dtype, e->cfg.act_dtype, &e->image_ops, err, err_len) ||
        db_bitmap_create(e->ctx, e->det_cfg.act_dtype, &e->db_bitmap, err, err_len))
        goto fail;
    for (int i = 0; i < GROUP_PLANS_MAX; i++)
        if (image_crop_batch_create(e->image_ops, &e->crops[i], err, err_len))
            goto fail;
    e->rec.leave_softmax = true;
    for (int v = PVK_ARGMAX_VALUE_MAX; v <= PVK_ARGMAX_VALUE_SOFTMAX; v++) {
        struct pvk_op *op = &e->argmax_op[v];
        op->type = PVK_OP_ARGMAX;
        op->n_inputs = 1;
        op->n_outputs = 2;
        op->attr.argmax.value = v;
        snprintf(op->name, sizeof(op->name), "ctc_argmax");
        struct nn_gpu_weights none;
        memset(&none, 0, sizeof(none));
        if (nn_gpu_op_create(&e->cfg, op, &none, &e->argmax[v], err, err_len))
            goto fail;
    }
    struct gpu_cmd **cmds[REC_PARTS + 1] = {&e->cmd, &e->det_cmd};
    for (int p = 0; p < REC_PARTS - 1; p++)
        cmds[2 + p] = &e->cmd_parts[p];
    for (int c = 0; c < REC_PARTS + 1; c++) {
        if (gpu_cmd_create(e->ctx, opt->profile ? MAX_TIMINGS : 0, cmds[c])) {
            snprintf(err, err_len, "%s", gpu_last_error());
            goto fail;
        }
        gpu_cmd_time_dispatches(*cmds[c], false);
    }
    const int cpus = ocr_workers_cpus();
    const int helpers = shared || caps->is_cpu ? 0 : cpus - 1 < HELPERS ? cpus - 1 : HELPERS;
    if (ocr_workers_create(helpers, &e->helpers)) {
        fail(err, err_len, "%s", "cannot start helper threads");
        goto fail;
    }
    e->startup = (struct ocr_engine_startup){t1 - t0, t2 - t1, t3 - t2, now_ms() - t3};
    *err_kind = 0;
    return e;
fail:
    ocr_engine_destroy(e);
    return NULL;
}

void ocr_engine_destroy(struct ocr_engine *e)
{
    if (!e)
        return;
    ocr_workers_destroy(e->helpers);
    gpu_cmd_destroy(e->cmd);
    for (int p = 0; p < REC_PARTS - 1; p++)
        gpu_cmd_destroy(e->cmd_parts[p]);
    nn_gpu_op_destroy(e->argmax[PVK_ARGMAX_VALUE_MAX]);
    nn_gpu_op_destroy(e->argmax[PVK_ARGMAX_VALUE_SOFTMAX]);
    for (int i = 0; i < GROUP_PLANS_MAX; i++)
        image_crop_batch_destroy(e->crops[i]);
    image_det_job_destroy(e->det_job);
    image_ops_destroy(e->image_ops);
    db_bitmap_destroy(e->db_bitmap);
    gpu_buffer_free(&e->db_work.buf);
    gpu_buffer_free(&e->image);
    gpu_buffer_free(&e->rec_index);
    gpu_buffer_free(&e->rec_prob);
    gpu_buffer_free(&e->readback.buf);
    gpu_buffer_free(&e->det_readback.buf);
    gpu_cmd_destroy(e->det_cmd);
    slot_free(&e->det);
    gpu_buffer_free(&e->act);
    slot_free(&e->cls);
    slot_free(&e->rec);
    if (!e->shares_ctx)
        gpu_context_destroy(e->ctx);
    free(e);
}

struct ocr_engine *ocr_engine_create(const struct ocr_options *opt, int *err_kind, char *err, size_t err_len)
{
    return engine_create(opt, NULL, err_kind, err, err_len);
}

struct ocr_engine *ocr_engine_create_sibling(const struct ocr_engine *first, int *err_kind, char *err,
                                             size_t err_len)
{
    return engine_create(&first->opt, first->ctx, err_kind, err, err_len);
}

/* ---- stages --------------------------------------------------------------------------------- */

/* The image's bytes in pieces (ocr_workers_run): piece i of n. A failure leaves its reason in the
 * thread's gpu_last_error: the caller's own pieces are the ones it can report. */
struct upload_job {
    struct ocr_engine *e;
    const uint8_t *bytes;
    size_t n_bytes;
    atomic_int failed;
    int pieces;
};

static void upload_piece(void *arg, int i)
{
    struct upload_job *j = arg;
    const size_t piece = (j->n_bytes + (size_t)j->pieces - 1) / (size_t)j->pieces, at = (size_t)i * piece;
    if (at < j->n_bytes &&
        gpu_upload(j->e->ctx, &j->e->image, at, j->bytes + at, j->n_bytes - at < piece ? j->n_bytes - at : piece))
        atomic_store(&j->failed, 1);
}

/* Puts the image's bytes on the GPU (growing the buffer when needed): src, to be read framed by
 * `margin` pixels of its border colour (image_ops.h), which are not stored: no padded copy of the
 * image is made, nor uploaded. */
static int upload_image(struct ocr_engine *e, const struct ocr_image *src, int margin, char *err, size_t err_len)
{
    const int width = src->width + 2 * margin, height = src->height + 2 * margin;
    size_t bytes = image_framed_buffer_bytes(width, height, margin);
    if (bytes > e->image_cap) {
        gpu_buffer_free(&e->image);
        e->image_cap = 0;
        image_det_job_destroy(e->det_job);
        e->det_job = NULL;
        e->det_recorded_plan = NULL;
        if (gpu_buffer_alloc(e->ctx, GPU_MEMORY_DEVICE, bytes, &e->image))
            return fail(err, err_len, "image memory: %s", gpu_last_error());
        e->image_cap = bytes;
    }
    uint8_t fill[4] = {0};
    if (margin)
        ocr_border_colour(src, fill);
    const size_t packed = (size_t)src->width * src->height * 3;
    /* a host's copy into mapped memory: in pieces on the helpers too, where it is large */
    const int pieces =
        e->helpers && gpu_buffer_is_mapped(&e->image) && packed >= UPLOAD_SPLIT_BYTES ? UPLOAD_PIECES : 1;
    struct upload_job job = {e, src->bgr, packed, 0, pieces};
    ocr_workers_run(e->helpers, pieces, upload_piece, &job);
    if (atomic_load(&job.failed) || (margin && gpu_upload(e->ctx, &e->image, bytes - 4, fill, 4)))
        return fail(err, err_len, "uploading the image: %s", gpu_last_error());
    e->image_margin = margin;
    return 0;
}

/* Whether the host reads t in place: on unified memory (CPU devices, integrated GPUs). A discrete
 * GPU's device memory may be mapped too (resizable BAR), but reading it across the bus uncached
 * is slower than copying it on the GPU: a 960x960 map took 30 ms that way. */
static bool read_in_place(const struct ocr_engine *e, const struct nn_gpu_tensor *t)
{
    const struct gpu_caps *c = gpu_context_caps(e->ctx);
    return gpu_buffer_is_mapped(t->buf) && (c->is_cpu || c->kind == GPU_DEVICE_INTEGRATED);
}

/* Makes rb hold at least `bytes`, its contents lost when it grows; *moved tells whether rb's buffer
 * changed (recordings that bind it are stale). */
static int reserve_readback(struct ocr_engine *e, struct readback *rb, size_t bytes, bool *moved, char *err,
                            size_t err_len)
{
    *moved = bytes > rb->cap;
    if (!*moved)
        return 0;
    gpu_buffer_free(&rb->buf);
    rb->cap = 0;
    if (gpu_buffer_alloc(e->ctx, GPU_MEMORY_HOST, bytes, &rb->buf))
        return fail(err, err_len, "readback memory: %s", gpu_last_error());
    rb->cap = bytes;
    return 0;
}

/* Records the copy of `t` into rb, unless the host can read t in place. */
static int record_readback(struct ocr_engine *e, struct gpu_cmd *cmd, struct readback *rb,
                           const struct nn_gpu_tensor *t, char *err, size_t err_len)
{
    if (read_in_place(e, t))
        return 0;
    size_t es = nn_dtype_size(t->dtype), bytes = (size_t)pvk_shape_numel(&t->shape) * es;
    bool moved; /* the copy is recorded here, so nothing recorded before binds rb */
    if (reserve_readback(e, rb, bytes, &moved, err, err_len))
        return -1;
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_TRANSFER);
    if (gpu_cmd_copy(cmd, t->buf, (VkDeviceSize)t->elem_offset * es, &rb->buf, 0, bytes))
        return fail(err, err_len, "%s", gpu_last_error());
    return 0;
}

/* Reads `t` as fp32 after the recording with record_readback(t) finished. */
static int read_back(struct ocr_engine *e, const struct readback *rb, const struct nn_gpu_tensor *t, float *dst,
                     char *err, size_t err_len)
{
    if (read_in_place(e, t))
        return nn_gpu_tensor_read(e->ctx, t, dst, err, err_len);
    struct nn_gpu_tensor staged = *t;
    staged.buf = &rb->buf;
    staged.elem_offset = 0;
    return nn_gpu_tensor_read(e->ctx, &staged, dst, err, err_len);
}

/* `t` as fp32 in host memory after the recording with record_readback(t) finished: in place
 * where it is fp32 in mapped memory (*owned NULL), else a copy the caller frees (*owned). */
static const float *floats_of(struct ocr_engine *e, const struct readback *rb, const struct nn_gpu_tensor *t,
                              float **owned, char *err, size_t err_len)
{
    *owned = NULL;
    const struct gpu_buffer *b = read_in_place(e, t) ? t->buf : &rb->buf;
    if (t->dtype == NN_F32 && gpu_buffer_is_mapped(b))
        return (const float *)b->mapped + (b == t->buf ? t->elem_offset : 0);
    size_t n = (size_t)pvk_shape_numel(&t->shape);
    if (!(*owned = malloc(n * sizeof(float)))) {
        fail(err, err_len, "%s", "out of memory for a net's output");
        return NULL;
    }
    if (read_back(e, rb, t, *owned, err, err_len)) {
        free(*owned);
        *owned = NULL;
        return NULL;
    }
    return *owned;
}

static int finish_recording(struct gpu_cmd *cmd, char *err, size_t err_len)
{
    gpu_cmd_mark(cmd, "recording");
    gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_HOST);
    gpu_cmd_barrier(cmd, GPU_STAGE_TRANSFER, GPU_STAGE_HOST);
    if (gpu_cmd_end(cmd))
        return fail(err, err_len, "%s", gpu_last_error());
    return 0;
}

static int run_recording(struct gpu_cmd *cmd, char *err, size_t err_len)
{
    if (gpu_cmd_run(cmd))
        return fail(err, err_len, "%s", gpu_last_error());
    return 0;
}

static int submit(struct gpu_cmd *cmd, char *err, size_t err_len)
{
    return finish_recording(cmd, err, err_len) || run_recording(cmd, err, err_len) ? -1 : 0;
}

struct det_fit {
    struct ocr_engine *e;
    const struct ocr_image *img;
};

/* fit_need_fn of the detector's input for img at a longest side of 32 k. */
static uint64_t det_need(void *ctx, int k)
{
    const struct det_fit *f = ctx;
    int w, h;
    ocr_det_resize_dims(f->img->width, f->img->height, 32 * k, &w, &h);
    const int64_t shape[4] = {1, 3, h, w};
    return plan_bytes(&f->e->det, shape);
}

/* The det plan for img at `limit` (its longer side), or, where its activations would not fit the
 * device, at the longest side that fits (a multiple of 32, as the detector's input sides are). */
static struct nn_gpu_plan *det_plan(struct ocr_engine *e, const struct ocr_image *img, int limit, int *det_w,
                                    int *det_h, char *err, size_t err_len)
{
    ocr_det_resize_dims(img->width, img->height, limit, det_w, det_h);
    int64_t shape[4] = {1, 3, *det_h, *det_w};
    struct nn_gpu_plan *plan = slot_plan(&e->det, shape, err, err_len);
    if (!plan || nn_gpu_plan_arena_bytes(plan) <= act_limit(e))
        return plan;
    struct det_fit f = {e, img};
    const int k = fit_most(limit / 32, act_limit(e), det_need, &f);
    if (k == 0) {
        snprintf(err, err_len, "detection needs more activation memory than the device takes at once (%llu bytes)",
                 (unsigned long long)act_limit(e));
        return NULL;
    }
    ocr_det_resize_dims(img->width, img->height, 32 * k, det_w, det_h);
    shape[2] = *det_h;
    shape[3] = *det_w;
    return slot_plan(&e->det, shape, err, err_len);
}

/* Detection at `limit`: resize + normalise, the det net, the probability map back, DB boxes grown
 * by `unclip_ratio`. */
static int run_det(struct ocr_engine *e, const struct ocr_image *img, int limit, double unclip_ratio,
                   struct db_boxes *boxes, struct ocr_result *r, char *err, size_t err_len)
{
    double t0 = now_ms();
    int det_w, det_h;
    struct nn_gpu_plan *plan = det_plan(e, img, limit, &det_w, &det_h, err, err_len);
    if (!plan)
        return -1;
    int key[5] = {img->width, img->height, det_w, det_h, e->image_margin};
    if (!e->det_job || memcmp(key, e->det_job_key, sizeof(key))) {
        image_det_job_destroy(e->det_job);
        e->det_job = NULL;
        e->det_recorded_plan = NULL;
        if (image_det_job_create(e->image_ops, img->width, img->height, det_w, det_h, &e->det_job, err, err_len))
            return -1;
        memcpy(e->det_job_key, key, sizeof(key));
    }
    if (bind_plans(e, &plan, 1, err, err_len))
        return -1;
    const struct nn_gpu_tensor *out = nn_gpu_plan_output(plan);
    const int map_w = (int)out->shape.d[3], map_h = (int)out->shape.d[2];
    bool moved;
    if (reserve_readback(e, &e->db_work, db_bitmap_bytes(map_w, map_h), &moved, err, err_len))
        return -1;
    if (moved)
        e->det_recorded_plan = NULL; /* it binds the old buffer */
    if (e->det_recorded_plan != plan || memcmp(key, e->det_recorded_key, sizeof(key)) ||
        e->det_recorded_evictions != e->det.evictions || e->det_recorded_generation != e->act_generation) {
        e->det_recorded_plan = NULL;
        if (gpu_cmd_begin(e->det_cmd))
            return fail(err, err_len, "%s", gpu_last_error());
        if (image_det_record(e->image_ops, e->det_job, e->det_cmd, &e->image, e->image_margin,
                             nn_gpu_plan_input(plan), err, err_len))
            return -1;
        gpu_cmd_barrier(e->det_cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
        if (nn_gpu_plan_record(plan, e->det_cmd, err, err_len))
            return -1;
        gpu_cmd_barrier(e->det_cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
        if (db_bitmap_record(e->db_bitmap, e->det_cmd, out, e->opt.det_db_thresh, &e->db_work.buf, err, err_len) ||
            record_readback(e, e->det_cmd, &e->det_readback, out, err, err_len) ||
            finish_recording(e->det_cmd, err, err_len))
            return -1;
        e->det_recorded_plan = plan;
        memcpy(e->det_recorded_key, key, sizeof(key));
        e->det_recorded_evictions = e->det.evictions;
        e->det_recorded_generation = e->act_generation;
    }
    if (run_recording(e->det_cmd, err, err_len))
        return -1;
    r->gpu_ms[OCR_STAGE_DET] = gpu_ms_of(e->det_cmd);

    /* read where the GPU left it: no copy of the 3.7 MB map at 960 on every page */
    float *owned;
    const float *map = floats_of(e, &e->det_readback, out, &owned, err, err_len);
    if (!map)
        return -1;
    double t1 = now_ms();
    r->wall_ms[OCR_STAGE_DET] = t1 - t0;

    struct db_params p;
    db_params_default(&p);
    p.thresh = e->opt.det_db_thresh;
    p.box_thresh = e->opt.det_db_box_thresh;
    p.unclip_ratio = unclip_ratio;
    p.workers = e->helpers;
    int rc = db_postprocess(map, (int8_t *)e->db_work.buf.mapped, map_w, map_h, img->width, img->height, &p, boxes, err,
                            err_len);
    free(owned);
    r->wall_ms[OCR_STAGE_DB] = now_ms() - t1;
    return rc;
}

/* One text line on its way through cls and rec. */
struct line {
    struct image_crop crop;
    int box; /* index in the DB boxes */
    int width; /* rec input width (bucket) */
    int twin;  /* a second reading: the index of the line it reads again */
    struct ctc_text text;
};

/* Sets `batch` to crop `n` lines into batch slots 0..n-1 of an input of width target_w. */
static int set_crops(struct ocr_engine *e, struct image_crop_batch *batch, struct line *const *lines, int n,
                     int target_w, int use_flip, char *err, size_t err_len)
{
    struct image_crop *crops = malloc((size_t)n * sizeof(*crops));
    if (!crops)
        return fail(err, err_len, "%s", "out of memory");
    for (int i = 0; i < n; i++) {
        crops[i] = lines[i]->crop;
        crops[i].slot = i;
        if (!use_flip)
            crops[i].flip = 0;
    }
    int rc = image_crop_batch_set(e->image_ops, batch, crops, n, REC_HEIGHT, target_w, err, err_len);
    free(crops);
    return rc;
}

/* One batch's set_crops, as a task of a group's (ocr_workers_run): each batch's tables are its
 * own. */
struct crop_set {
    struct image_crop_batch *batch;
    struct line *const *lines;
    int n, target_w, use_flip;
    int rc;
    char err[256];
};

struct crop_set_job {
    struct ocr_engine *e;
    struct crop_set *sets;
};

static void crop_set_task(void *arg, int i)
{
    struct crop_set_job *j = arg;
    struct crop_set *c = &j->sets[i];
    c->rc = set_crops(j->e, c->batch, c->lines, c->n, c->target_w, c->use_flip, c->err, sizeof(c->err));
}

/* set_crops for n batches, on the helpers too: a page's eleven batches took about 0.2 ms on the
 * H200's host before recognition's first submission, the GPU waiting. */
static int set_crops_all(struct ocr_engine *e, struct crop_set *sets, int n, char *err, size_t err_len)
{
    struct crop_set_job job = {e, sets};
    ocr_workers_run(e->helpers, n, crop_set_task, &job);
    for (int i = 0; i < n; i++)
        if (sets[i].rc)
            return fail(err, err_len, "%s", sets[i].err);
    return 0;
}

/* Records the crops of the n batches set last into their destinations, side by side. */
static int record_crops(struct ocr_engine *e, struct image_crop_batch *const *batches,
                        const struct nn_gpu_tensor *const *dsts, int n, const struct ocr_image *img, char *err,
                        size_t err_len)
{
    return image_crop_record_many(e->image_ops, batches, dsts, n, e->cmd, &e->image, img->width, img->height,
                                  e->image_margin, err, err_len);
}

/* The classifier's verdicts from its output `out` of n lines (recorded with record_readback): turn
 * line i over where its best label is 180 degrees with a score above cls_thresh. */
static int read_directions(struct ocr_engine *e, const struct nn_gpu_tensor *out, int n, bool *turn, char *err,
                           size_t err_len)
{
    int64_t classes = out->shape.d[out->shape.ndim - 1];
    float probs[CLS_BATCH_MAX * 2];
    if (n > CLS_BATCH_MAX || classes != 2 || pvk_shape_numel(&out->shape) != n * classes)
        return fail(err, err_len, "%s", "cls.pvk: the classifier does not output two directions");
    if (read_back(e, &e->readback, out, probs, err, err_len))
        return -1;
    for (int i = 0; i < n; i++) {
        const float *p = &probs[i * 2];
        /* argmax takes the first of equal scores, as numpy does */
        int label = p[1] > p[0];
        turn[i] = label == 1 && p[1] > e->opt.cls_thresh;
    }
    return 0;
}

/* fit_need_fn of a classifier batch of n lines (ctx: the cls slot). */
static uint64_t cls_need(void *ctx, int n)
{
    const int64_t shape[4] = {n, 3, REC_HEIGHT, OCR_CLS_WIDTH};
    return plan_bytes(ctx, shape);
}

/* The classifier's plan for a batch of *n lines, or for the most of them that fit the device
 * (*n is then that many). */
static struct nn_gpu_plan *cls_plan(struct ocr_engine *e, int *n, char *err, size_t err_len)
{
    int64_t shape[4] = {*n, 3, REC_HEIGHT, OCR_CLS_WIDTH};
    struct nn_gpu_plan *plan = slot_plan(&e->cls, shape, err, err_len);
    if (!plan || nn_gpu_plan_arena_bytes(plan) <= act_limit(e))
        return plan;
    if (!(shape[0] = *n = fit_most(*n, act_limit(e), cls_need, &e->cls))) {
        snprintf(err, err_len, "the direction classifier needs more activation memory than the device takes at "
                 "once (%llu bytes)", (unsigned long long)act_limit(e));
        return NULL;
    }
    return slot_plan(&e->cls, shape, err, err_len);
}

/* Direction: crops at 48x192 through cls; a line whose best label is 180 degrees with a score above
 * cls_thresh is turned over before recognition. */
static int run_cls(struct ocr_engine *e, const struct ocr_image *img, struct line *lines, int n_lines,
                   struct ocr_result *r, char *err, size_t err_len)
{
    for (int start = 0, n; start < n_lines; start += n) {
        n = n_lines - start < CLS_BATCH_MAX ? n_lines - start : CLS_BATCH_MAX;
        struct line *batch[CLS_BATCH_MAX];
        for (int i = 0; i < n; i++)
            batch[i] = &lines[start + i];
        struct nn_gpu_plan *plan = cls_plan(e, &n, err, err_len);
        if (!plan || bind_plans(e, &plan, 1, err, err_len))
            return -1;
        if (gpu_cmd_begin(e->cmd))
            return fail(err, err_len, "%s", gpu_last_error());
        const struct nn_gpu_tensor *in = nn_gpu_plan_input(plan);
        if (set_crops(e, e->crops[0], batch, n, OCR_CLS_WIDTH, 0, err, err_len) ||
            record_crops(e, e->crops, &in, 1, img, err, err_len))
            return -1;
        gpu_cmd_barrier(e->cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
        const struct nn_gpu_tensor *out = nn_gpu_plan_output(plan);
        if (nn_gpu_plan_record(plan, e->cmd, err, err_len) ||
            record_readback(e, e->cmd, &e->readback, out, err, err_len) || submit(e->cmd, err, err_len))
            return -1;
        r->gpu_ms[OCR_STAGE_CLS] += gpu_ms_of(e->cmd);
        bool turn[CLS_BATCH_MAX];
        if (read_directions(e, out, n, turn, err, err_len))
            return -1;
        for (int i = 0; i < n; i++)
            batch[i]->crop.flip = turn[i];
    }
    return 0;
}

/* The rec input width of a line on its own: 320, or the line's width at height 48 rounded up to
 * the width ladder (see REC_WIDTH_STEP). A line's width depends on the line alone, so its text
 * does not depend on which lines share its batch. */
static int rec_bucket_width(const struct image_crop *c)
{
    int w = c->rotate ? c->height : c->width, h = c->rotate ? c->width : c->height;
    int resized = (int)ceil((double)REC_HEIGHT * w / (h > 0 ? h : 1));
    if (resized <= REC_MIN_WIDTH)
        return REC_MIN_WIDTH;
    int bucket = REC_MIN_WIDTH;
    while (bucket < resized)
        bucket = (bucket * 9 / 8 + REC_WIDTH_STEP - 1) / REC_WIDTH_STEP * REC_WIDTH_STEP;
    return bucket;
}

static double line_ratio(const struct line *l)
{
    const struct image_crop *c = &l->crop;
    int w = c->rotate ? c->height : c->width, h = c->rotate ? c->width : c->height;
    return (double)w / (h > 0 ? h : 1);
}

static int compare_lines_by_width(const void *a, const void *b)
{
    const struct line *la = *(const struct line *const *)a, *lb = *(const struct line *const *)b;
    if (la->width != lb->width)
        return la->width < lb->width ? -1 : 1;
    return la->box - lb->box;
}

static int compare_lines_by_ratio(const void *a, const void *b)
{
    const struct line *la = *(const struct line *const *)a, *lb = *(const struct line *const *)b;
    double ra = line_ratio(la), rb = line_ratio(lb);
    if (ra != rb)
        return ra < rb ? -1 : 1;
    return la->box - lb->box; /* a stable argsort, as the reference's */
}

/* Orders the lines for recognition and gives each its input width. Default: by width bucket.
 * PaddleOCR (parity): by aspect ratio, and every batch of rec_batch_num lines padded to
 * trunc(48 * max(320/48, widest ratio of the batch)). */
static void plan_rec_batches(struct line **order, int n_lines, int batch_max, int parity)
{
    if (!parity) {
        for (int i = 0; i < n_lines; i++)
            order[i]->width = rec_bucket_width(&order[i]->crop);
        qsort(order, (size_t)n_lines, sizeof(*order), compare_lines_by_width);
        return;
    }
    qsort(order, (size_t)n_lines, sizeof(*order), compare_lines_by_ratio);
    for (int beg = 0; beg < n_lines; beg += batch_max) {
        int end = beg + batch_max < n_lines ? beg + batch_max : n_lines;
        double max_ratio = (double)REC_MIN_WIDTH / REC_HEIGHT;
        for (int k = beg; k < end; k++)
            max_ratio = fmax(max_ratio, line_ratio(order[k]));
        int width = (int)(REC_HEIGHT * max_ratio);
        for (int k = beg; k < end; k++)
            order[k]->width = width;
    }
}

static int ensure_rec_outputs(struct ocr_engine *e, size_t rows, char *err, size_t err_len)
{
    if (rows <= e->rec_rows_cap)
        return 0;
    gpu_buffer_free(&e->rec_index);
    gpu_buffer_free(&e->rec_prob);
    e->rec_rows_cap = 0;
    /* Host-visible: the argmax writes a few bytes per step, which the host reads in place. */
    if (gpu_buffer_alloc(e->ctx, GPU_MEMORY_HOST, rows * 4, &e->rec_index) ||
        gpu_buffer_alloc(e->ctx, GPU_MEMORY_HOST, rows * 4, &e->rec_prob))
        return fail(err, err_len, "recognition output memory: %s", gpu_last_error());
    e->rec_rows_cap = rows;
    return 0;
}

/* The step at which part `part` of a group's `steps` ends: the parts' lengths double. */
static int rec_part_end(int steps, int part)
{
    if (part == REC_PARTS - 1)
        return steps;
    return (int)((int64_t)steps * ((1 << (part + 1)) - 1) / ((1 << REC_PARTS) - 1));
}

/* One recognition batch: lines order[start .. start + n) at one input width. */
struct rec_batch {
    int start, n, width;
    struct plan_entry *entry;
    int64_t steps;
    size_t row0; /* its first row in the argmax outputs */
};

static struct plan_entry *slot_entry(struct net_slot *s, const struct nn_gpu_plan *plan)
{
    for (int i = 0; i < PLAN_CACHE; i++)
        if (s->plans[i].plan == plan)
            return &s->plans[i];
    return NULL;
}

/* The direction classifier recorded beside recognition's first submission: its lines (up to
 * CLS_BATCH_MAX), cropped unturned, and its verdicts. */
struct cls_beside {
    struct line *const *lines;
    int n;
    bool *turn; /* out: the classifier turns line i over */
};

/* fit_need_fn of a recognition batch placed after `base` bytes of plans: `count` lines at `width`,
 * or with width 0 one line at a width of REC_MIN_WIDTH + (count - 1) REC_WIDTH_STEP. */
struct rec_fit {
    struct net_slot *s;
    uint64_t base, align;
    int width;
};

static uint64_t rec_need(void *ctx, int count)
{
    const struct rec_fit *f = ctx;
    const int64_t shape[4] = {f->width ? count : 1, 3, REC_HEIGHT,
                              f->width ? f->width : REC_MIN_WIDTH + (int64_t)(count - 1) * REC_WIDTH_STEP};
    const uint64_t bytes = plan_bytes(f->s, shape);
    return bytes == UINT64_MAX ? bytes : (f->base + f->align - 1) / f->align * f->align + bytes;
}

/* Cuts batch b, the first of its group (after the classifier's plan all[0] when with_cls), to what
 * the activation memory holds: the most of its lines that fit, or, where one line alone does not
 * fit at its width, the batch's lines narrowed to the widest input that does (they are squeezed
 * into it). Sets b and its plan all[with_cls]; returns 1, 0 when not one line fits beside the
 * classifier, or -1. */
static int cut_rec_batch(struct ocr_engine *e, struct nn_gpu_plan **all, int with_cls, struct line **order,
                         struct rec_batch *b, char *err, size_t err_len)
{
    const uint64_t limit = act_limit(e);
    uint64_t at[1];
    struct rec_fit f = {&e->rec, with_cls ? place_plans(all, 1, at) : 0, nn_gpu_plan_align(all[with_cls]), b->width};
    int rows = fit_most(b->n, limit, rec_need, &f);
    if (rows == 0 && with_cls)
        return 0;
    if (rows == 0) {
        struct rec_fit one = {&e->rec, 0, 1, 0};
        const int steps = fit_most((b->width - REC_MIN_WIDTH) / REC_WIDTH_STEP + 1, limit, rec_need, &one);
        if (steps > 0) {
            f.width = b->width = REC_MIN_WIDTH + (steps - 1) * REC_WIDTH_STEP;
            for (int i = 0; i < b->n; i++)
                order[b->start + i]->width = b->width;
            rows = fit_most(b->n, limit, rec_need, &f);
        }
    }
    if (rows == 0)
        return fail(err, err_len, "%s", "a text line needs more activation memory than the device takes at once");
    b->n = rows;
    const int64_t shape[4] = {b->n, 3, REC_HEIGHT, b->width};
    return (all[with_cls] = slot_plan(&e->rec, shape, err, err_len)) ? 1 : -1;
}

/* The classifier's verdicts on its lines apart from recognition, where they do not fit beside it. */
static int cls_apart(struct ocr_engine *e, const struct ocr_image *img, const struct cls_beside *cls,
                     struct ocr_result *r, char *err, size_t err_len)
{
    struct line copy[CLS_BATCH_MAX];
    for (int i = 0; i < cls->n; i++)
        copy[i] = *cls->lines[i];
    if (run_cls(e, img, copy, cls->n, r, err, err_len))
        return -1;
    for (int i = 0; i < cls->n; i++)
        cls->turn[i] = copy[i].crop.flip;
    return 0;
}

/* Recognition: lines grouped by input width, rec_batch_num at a time, and up to REC_GROUP (or
 * REC_GROUP_GROWN) such batches recorded in lockstep into one submission (a page's lines fall
 * into many widths, and one batch alone leaves the GPU waiting on its chain of barriers); argmax
 * on the GPU, CTC on the CPU. With cls, the classifier joins the first submission's lockstep. */
static int run_rec(struct ocr_engine *e, const struct ocr_image *img, struct line *lines, int n_lines,
                   const struct cls_beside *cls, struct ocr_result *r, char *err, size_t err_len)
{
    struct line **order = malloc((size_t)n_lines * sizeof(*order));
    if (!order)
        return fail(err, err_len, "%s", "out of memory");
    int rc = 0, batch_max = e->opt.rec_batch_num > 0 ? e->opt.rec_batch_num : 1;
    for (int i = 0; i < n_lines; i++)
        order[i] = &lines[i];
    plan_rec_batches(order, n_lines, batch_max, e->opt.paddle_parity);
    int32_t *index = NULL;
    float *prob = NULL;
    /* Each batch's rows in the argmax outputs start on the storage offset alignment: its argmax
     * then binds its rows alone, and the batches' argmaxes run side by side without barriers. */
    const size_t align = (size_t)gpu_context_caps(e->ctx)->min_storage_buffer_offset_alignment,
                 value_size = nn_dtype_size(e->cfg.act_dtype), row_align = align > value_size ? align / value_size : 1;
    bool cls_read = false;
    for (int start = 0; start < n_lines && rc == 0;) {
        struct rec_batch g[REC_GROUP_GROWN];
        /* the classifier's plan first (this submission only), then one per batch */
        struct nn_gpu_plan *all[GROUP_PLANS_MAX], **plans = all;
        int with_cls = cls && !cls_read;
        int ng = 0;
        size_t rows = 0;
        double t0 = now_ms();
        if (with_cls) {
            const int64_t shape[4] = {cls->n, 3, REC_HEIGHT, OCR_CLS_WIDTH};
            if (!(all[0] = slot_plan(&e->cls, shape, err, err_len))) {
                rc = -1;
                break;
            }
            plans = all + 1;
        }
        while (ng < REC_GROUP_GROWN && start < n_lines) {
            struct rec_batch *b = &g[ng];
            b->start = start;
            b->width = order[start]->width;
            b->n = 0;
            while (start + b->n < n_lines && b->n < batch_max && order[start + b->n]->width == b->width)
                b->n++;
            const int64_t shape[4] = {b->n, 3, REC_HEIGHT, b->width};
            if (!(plans[ng] = slot_plan(&e->rec, shape, err, err_len))) {
                rc = -1;
                break;
            }
            uint64_t at[GROUP_PLANS_MAX], need = place_plans(all, with_cls + ng + 1, at);
            if (need > act_limit(e) && ng > 0)
                break; /* the device takes no more at once: the batch waits for the next submission */
            if (need > act_limit(e)) {
                int cut = cut_rec_batch(e, all, with_cls, order, b, err, err_len);
                if (cut == 0) { /* the classifier runs first, apart */
                    cls_read = true;
                    with_cls = 0;
                    plans = all;
                    cut = cls_apart(e, img, cls, r, err, err_len) ? -1 : cut_rec_batch(e, all, 0, order, b, err, err_len);
                }
                if (cut < 0) {
                    rc = -1;
                    break;
                }
                need = place_plans(all, with_cls + ng + 1, at);
            }
            const uint64_t room = e->act.size > REC_GROUP_MEMORY ? e->act.size : REC_GROUP_MEMORY;
            if (ng >= REC_GROUP && need > room)
                break; /* the batch waits for the next submission rather than grow the memory further */
            b->entry = slot_entry(&e->rec, plans[ng]);
            b->entry->pinned = true;
            b->steps = nn_gpu_plan_output(plans[ng])->shape.d[1];
            b->row0 = (rows + row_align - 1) / row_align * row_align;
            rows = b->row0 + (size_t)b->n * (size_t)b->steps;
            start += b->n;
            ng++;
        }
        if (rc == 0 && (bind_plans(e, all, with_cls + ng, err, err_len) || ensure_rec_outputs(e, rows, err, err_len) ||
                        gpu_cmd_begin(e->cmd)))
            rc = -1;
        /* the crops of every batch (and the classifier's) in one pass of each kernel */
        struct image_crop_batch *batches[GROUP_PLANS_MAX];
        const struct nn_gpu_tensor *inputs[GROUP_PLANS_MAX];
        struct crop_set sets[GROUP_PLANS_MAX];
        int n_batches = 0;
        for (int k = 0; k < ng && rc == 0; k++) {
            batches[n_batches] = e->crops[k];
            inputs[n_batches] = nn_gpu_plan_input(plans[k]);
            sets[n_batches++] = (struct crop_set){e->crops[k], order + g[k].start, g[k].n, g[k].width, 1, 0, ""};
        }
        if (rc == 0 && with_cls) {
            batches[n_batches] = e->crops[REC_GROUP_GROWN];
            inputs[n_batches] = nn_gpu_plan_input(all[0]);
            sets[n_batches++] =
                (struct crop_set){e->crops[REC_GROUP_GROWN], cls->lines, cls->n, OCR_CLS_WIDTH, 0, 0, ""};
        }
        if (rc == 0)
            rc = set_crops_all(e, sets, n_batches, err, err_len);
        if (rc == 0 && n_batches)
            rc = record_crops(e, batches, inputs, n_batches, img, err, err_len);
        /* the group's steps in parts (see REC_PARTS): each submitted, then the next recorded */
        const int n_plans = with_cls + ng, steps = nn_gpu_plan_group_steps(all, n_plans);
        struct gpu_cmd *cmd = e->cmd, *running[REC_PARTS];
        int n_running = 0;
        if (rc == 0)
            gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
        for (int part = 0, from = 0; part < REC_PARTS && rc == 0; part++) {
            const int to = rec_part_end(steps, part);
            if (to == from)
                continue;
            rc = nn_gpu_plan_record_group_steps(all, n_plans, from, to, cmd, err, err_len);
            from = to;
            if (rc || to == steps)
                break; /* the last part stays open for the argmax and the readback */
            gpu_cmd_mark(cmd, "recording");
            if (gpu_cmd_end(cmd) || gpu_cmd_submit(cmd)) {
                rc = fail(err, err_len, "%s", gpu_last_error());
                break;
            }
            running[n_running] = cmd;
            cmd = e->cmd_parts[n_running++];
            if (gpu_cmd_begin(cmd))
                rc = fail(err, err_len, "%s", gpu_last_error());
        }
        if (rc == 0)
            gpu_cmd_barrier(cmd, GPU_STAGE_COMPUTE, GPU_STAGE_COMPUTE);
        for (int k = 0; k < ng && rc == 0; k++) {
            const struct nn_gpu_tensor *out = nn_gpu_plan_output(plans[k]);
            struct nn_gpu_tensor argmax_out[2] = {
                {&e->rec_index, (uint32_t)g[k].row0, NN_I32, {2, {g[k].n, g[k].steps}}, 0},
                {&e->rec_prob, (uint32_t)g[k].row0, e->cfg.act_dtype, {2, {g[k].n, g[k].steps}}, 0},
            };
            const int v = nn_gpu_plan_left_softmax(plans[k]) ? PVK_ARGMAX_VALUE_SOFTMAX : PVK_ARGMAX_VALUE_MAX;
            rc = nn_gpu_op_record(e->argmax[v], cmd, out, 1, argmax_out, 2, err, err_len);
        }
        if (rc == 0 && with_cls)
            rc = record_readback(e, cmd, &e->readback, nn_gpu_plan_output(all[0]), err, err_len);
        if (rc == 0)
            rc = submit(cmd, err, err_len);
        /* the earlier parts finished before the last; after a failure they are still waited out
         * before their command buffers are used again */
        double gpu_ms = rc == 0 ? gpu_ms_of(cmd) : 0;
        for (int p = 0; p < n_running; p++) {
            if (gpu_cmd_wait(running[p]) && rc == 0)
                rc = fail(err, err_len, "%s", gpu_last_error());
            gpu_ms += gpu_ms_of(running[p]);
        }
        for (int k = 0; k < ng; k++)
            g[k].entry->pinned = false;
        if (rc == 0 && with_cls) {
            rc = read_directions(e, nn_gpu_plan_output(all[0]), cls->n, cls->turn, err, err_len);
            cls_read = true;
        }
        if (rc)
            break;
        r->gpu_ms[OCR_STAGE_REC] += gpu_ms;
        int32_t *grown_index = realloc(index, rows * sizeof(*index));
        if (grown_index)
            index = grown_index;
        float *grown_prob = realloc(prob, rows * sizeof(*prob));
        if (grown_prob)
            prob = grown_prob;
        if (!grown_index || !grown_prob) {
            rc = fail(err, err_len, "%s", "out of memory");
            break;
        }
        struct nn_gpu_tensor prob_t = {&e->rec_prob, 0, e->cfg.act_dtype, {1, {(int64_t)rows}}, 0};
        if (gpu_download(e->ctx, &e->rec_index, 0, index, rows * 4) ||
            nn_gpu_tensor_read(e->ctx, &prob_t, prob, err, err_len)) {
            rc = fail(err, err_len, "reading recognition results: %s", gpu_last_error());
            break;
        }
        double t1 = now_ms();
        r->wall_ms[OCR_STAGE_REC] += t1 - t0;
        for (int k = 0; k < ng && rc == 0; k++)
            for (int i = 0; i < g[k].n && rc == 0; i++) {
                size_t at = g[k].row0 + (size_t)i * (size_t)g[k].steps;
                rc = ctc_decode_argmax(index + at, prob + at, (size_t)g[k].steps, e->rec.model.dict,
                                       e->rec.model.n_dict, &order[g[k].start + i]->text, err, err_len);
                order[g[k].start + i]->text.input_width = g[k].width;
            }
        r->wall_ms[OCR_STAGE_CTC] += now_ms() - t1;
    }
    free(index);
    free(prob);
    free(order);
    return rc;
}

/* ---- one image ------------------------------------------------------------------------------ */

/* Lines whose direction is a guess get a second reading turned 180 degrees: tall boxes (turned
 * 90 degrees one way, though the text may run the other way) and lines the classifier turned
 * over (it does so to some upright Latin lines with high confidence). The recogniser's own score
 * then decides. The readings go after the n lines, each pointing back with `twin`; returns the
 * count of lines and readings. */
static int add_turned_readings(struct line *lines, int n)
{
    int total = n;
    for (int i = 0; i < n; i++) {
        if (!lines[i].crop.rotate && !lines[i].crop.flip)
            continue;
        lines[total] = lines[i];
        lines[total].crop.flip = !lines[i].crop.flip;
        lines[total].twin = i;
        total++;
    }
    return total;
}

static void keep_better_readings(struct line *lines, int n, int total)
{
    for (int i = n; i < total; i++) {
        struct line *first = &lines[lines[i].twin], *second = &lines[i];
        if (second->text.score > first->text.score) {
            struct ctc_text t = first->text;
            first->text = second->text;
            second->text = t;
            first->crop.flip = second->crop.flip;
        }
    }
}

/* The readings of add_turned_readings with the classifier run beside recognition instead of
 * before it (default mode): every line is read as it stands and tall ones turned over too, in
 * submissions whose first also classifies the lines; a line the classifier turns over is then
 * read turned as well. The readings come out as add_turned_readings orders them (the first in
 * the classifier's direction, the twin the other way), so results are the same; the classifier's
 * barriers overlap recognition's instead of adding to them. Its time is counted in rec's. */
static int read_beside_cls(struct ocr_engine *e, const struct ocr_image *img, struct line *lines, int n_lines,
                           int *n_readings, struct ocr_result *r, char *err, size_t err_len)
{
    bool turn[CLS_BATCH_MAX];
    struct line *cls_lines[CLS_BATCH_MAX];
    for (int i = 0; i < n_lines; i++)
        cls_lines[i] = &lines[i];
    struct cls_beside cls = {cls_lines, n_lines, turn};
    int total = add_turned_readings(lines, n_lines);
    *n_readings = total; /* the caller frees every reading's text, failed or not */
    if (run_rec(e, img, lines, total, &cls, r, err, err_len))
        return -1;
    int twin_of[CLS_BATCH_MAX];
    for (int i = 0; i < n_lines; i++)
        twin_of[i] = -1;
    for (int t = n_lines; t < total; t++)
        twin_of[lines[t].twin] = t;
    struct line again[CLS_BATCH_MAX];
    int from[CLS_BATCH_MAX], n_again = 0;
    for (int i = 0; i < n_lines; i++) {
        if (!turn[i])
            continue;
        if (twin_of[i] >= 0) { /* read both ways already: the turned reading becomes the first */
            struct line *t = &lines[twin_of[i]];
            struct ctc_text text = lines[i].text;
            lines[i].text = t->text;
            t->text = text;
            lines[i].crop.flip = 1;
            t->crop.flip = 0;
            continue;
        }
        lines[total] = lines[i]; /* the reading as it stands becomes the twin */
        lines[total].twin = i;
        total++;
        lines[i].crop.flip = 1;
        lines[i].text = (struct ctc_text){0};
        again[n_again] = lines[i];
        from[n_again++] = i;
    }
    *n_readings = total;
    if (n_again && run_rec(e, img, again, n_again, NULL, r, err, err_len)) {
        for (int k = 0; k < n_again; k++)
            ctc_text_free(&again[k].text);
        return -1;
    }
    for (int k = 0; k < n_again; k++)
        lines[from[k]].text = again[k].text;
    return 0;
}

/* The words of a line's reading (word_boxes.h), boxes in the image the pipeline sees: the crop
 * turned as that reading was (crop.flip follows the text kept), at its input width. */
static int line_words(const struct line *l, struct ocr_line *o)
{
    const struct image_crop *c = &l->crop;
    const int input_w = l->text.input_width;
    struct word_geometry g = {.crop_w = c->width, .crop_h = c->height, .rotate = c->rotate, .flip = c->flip,
                              .input_w = input_w};
    memcpy(g.src_from_dst, c->src_from_dst, sizeof(g.src_from_dst));
    g.resized_w = c->rotate ? image_resized_width(c->height, c->width, REC_HEIGHT, input_w)
                            : image_resized_width(c->width, c->height, REC_HEIGHT, input_w);
    return ocr_words_make(&l->text, &g, &o->words, &o->n_words);
}

/* OCR of src framed by `margin` pixels of its border colour (upload_image): the image the
 * pipeline sees. */
/* Small print on a large page (det_tiles.h): the framed page read again in strips where the first
 * pass found its smallest text near the detector's floor, the strips' boxes merged into `boxes`,
 * and the whole image uploaded again for the crops. Each strip is src's rows framed by `margin`
 * as the page is: a strip's row y' is the page's row y' + (its first row in src). */
static int read_strips(struct ocr_engine *e, const struct ocr_image *src, int margin, struct db_boxes *boxes,
                       struct ocr_result *r, char *err, size_t err_len)
{
    const int page_w = src->width + 2 * margin, page_h = src->height + 2 * margin;
    const int long_side = page_w > page_h ? page_w : page_h;
    struct det_tiling t;
    det_tiling_plan(page_w, page_h, fmin(1.0, (double)e->opt.det_limit_side_len / long_side), boxes,
                    e->opt.det_limit_side_len, &t);
    if (!t.n)
        return 0;
    struct db_boxes found = {0};
    struct ocr_image strip = {.width = src->width, .had_alpha = src->had_alpha};
    int rc = 0;
    for (int i = 0; i < t.n && rc == 0; i++) {
        int a = t.strips[i].y0 - margin, b = t.strips[i].y1 - margin;
        a = a < 0 ? 0 : a;
        b = b > src->height ? src->height : b;
        strip.height = b - a;
        strip.bgr = (uint8_t *)src->bgr + (size_t)a * src->width * 3; /* read only */
        struct ocr_result times = {0};
        struct db_boxes sb = {0};
        double t0 = now_ms();
        rc = upload_image(e, &strip, margin, err, err_len);
        r->wall_ms[OCR_STAGE_UPLOAD] += now_ms() - t0;
        const struct ocr_image framed = {.width = page_w, .height = strip.height + 2 * margin};
        if (rc == 0)
            rc = run_det(e, &framed, t.limit, e->opt.det_db_unclip_ratio * t.unclip_gain, &sb, &times, err, err_len);
        for (int s = OCR_STAGE_DET; s <= OCR_STAGE_DB; s++) {
            r->wall_ms[s] += times.wall_ms[s];
            r->gpu_ms[s] += times.gpu_ms[s];
        }
        if (rc)
            break;
        for (size_t k = 0; k < sb.count; k++)
            for (int c = 0; c < 4; c++) {
                int y = sb.boxes[k].pts[c][1] + a;
                sb.boxes[k].pts[c][1] = y < 0 ? 0 : y >= page_h ? page_h - 1 : y;
            }
        det_strip_keep_whole(&t, i, &sb);
        struct db_box *grown = realloc(found.boxes, (found.count + sb.count + 1) * sizeof(*grown));
        if (!grown) {
            rc = fail(err, err_len, "%s", "out of memory");
        } else {
            found.boxes = grown;
            memcpy(found.boxes + found.count, sb.boxes, sb.count * sizeof(*sb.boxes));
            found.count += sb.count;
        }
        db_boxes_free(&sb);
    }
    if (rc == 0 && det_tiles_merge(boxes, &found))
        rc = fail(err, err_len, "%s", "out of memory");
    db_boxes_free(&found);
    if (rc)
        return rc;
    db_boxes_sort(boxes);
    double t0 = now_ms();
    rc = upload_image(e, src, margin, err, err_len);
    r->wall_ms[OCR_STAGE_UPLOAD] += now_ms() - t0;
    return rc;
}

static int run_image(struct ocr_engine *e, const struct ocr_image *src, int margin, struct ocr_result *r, char *err,
                     size_t err_len)
{
    const struct ocr_image framed = {.width = src->width + 2 * margin, .height = src->height + 2 * margin,
                                     .had_alpha = src->had_alpha};
    const struct ocr_image *img = &framed; /* its bytes are on the GPU only */
    r->width = img->width;
    r->height = img->height;
    double t0 = now_ms();
    if (upload_image(e, src, margin, err, err_len))
        return -1;
    r->wall_ms[OCR_STAGE_UPLOAD] = now_ms() - t0;

    struct db_boxes boxes = {0};
    if (run_det(e, img, e->opt.det_limit_side_len, e->opt.det_db_unclip_ratio, &boxes, r, err, err_len))
        return -1;
    if (!e->opt.paddle_parity && read_strips(e, src, margin, &boxes, r, err, err_len)) {
        db_boxes_free(&boxes);
        return -1;
    }

    /* Room for a second reading of every line (see add_turned_readings). */
    struct line *lines = calloc(2 * boxes.count + 1, sizeof(*lines));
    if (!lines) {
        db_boxes_free(&boxes);
        return fail(err, err_len, "%s", "out of memory");
    }
    int n_lines = 0;
    for (size_t b = 0; b < boxes.count; b++) {
        float pts[4][2];
        for (int k = 0; k < 4; k++) {
            pts[k][0] = (float)boxes.boxes[b].pts[k][0];
            pts[k][1] = (float)boxes.boxes[b].pts[k][1];
        }
        struct ocr_crop_plan plan;
        if (ocr_crop_plan_make(pts, &plan))
            continue; /* a degenerate box has nothing to read */
        struct line *l = &lines[n_lines++];
        memcpy(l->crop.src_from_dst, plan.src_from_dst, sizeof(plan.src_from_dst));
        l->crop.width = plan.width;
        l->crop.height = plan.height;
        l->crop.rotate = plan.rotate;
        l->box = (int)b;
    }

    int rc = 0, n_readings = n_lines;
    if (n_lines && e->opt.use_cls && !e->opt.paddle_parity && n_lines <= CLS_BATCH_MAX) {
        rc = read_beside_cls(e, img, lines, n_lines, &n_readings, r, err, err_len);
    } else {
        double t1 = now_ms();
        if (n_lines && e->opt.use_cls)
            rc = run_cls(e, img, lines, n_lines, r, err, err_len);
        r->wall_ms[OCR_STAGE_CLS] = now_ms() - t1;
        n_readings = e->opt.paddle_parity ? n_lines : add_turned_readings(lines, n_lines);
        if (rc == 0 && n_lines)
            rc = run_rec(e, img, lines, n_readings, NULL, r, err, err_len);
    }
    if (rc == 0)
        keep_better_readings(lines, n_lines, n_readings);

    if (rc == 0) {
        r->lines = calloc((size_t)n_lines + 1, sizeof(*r->lines));
        if (!r->lines)
            rc = fail(err, err_len, "%s", "out of memory");
    }
    for (int i = n_lines; i < n_readings; i++)
        ctc_text_free(&lines[i].text);
    for (int i = 0; i < n_lines; i++) {
        struct line *l = &lines[i];
        if (rc == 0 && l->text.text && l->text.score >= e->opt.drop_score) {
            struct ocr_line *o = &r->lines[r->n_lines++];
            o->text = l->text.text;
            o->score = l->text.score;
            o->upside_down = l->crop.flip;
            memcpy(o->box, boxes.boxes[l->box].pts, sizeof(o->box));
            if (line_words(l, o))
                rc = fail(err, err_len, "%s", "out of memory");
            l->text.text = NULL;
        }
        ctc_text_free(&l->text);
    }
    free(lines);
    db_boxes_free(&boxes);
    if (rc)
        ocr_result_free(r);
    return rc;
}

/* How an image is prepared for detection beyond PaddleOCR's pipeline: small images are scaled
 * up so that their text reaches the sizes the detector was trained on, and a margin in the
 * border's colour is added so that text touching the edges (word crops) is found. */
struct prepare {
    double scale; /* 1: none */
    int margin;   /* pixels on every side, after scaling */
};

static struct prepare detection_prepare(const struct ocr_engine *e, const struct ocr_image *img)
{
    struct prepare p = {1.0, 0};
    /* A very large image is scaled down to ENGINE_MAX_PIXELS (the detector sees at most 960
     * pixels a side anyway, the recogniser 48 pixels a line), and in every mode to what one storage
     * buffer of the device holds: it could not be read at all otherwise. */
    double limit = (double)gpu_context_caps(e->ctx)->max_storage_buffer_range / 3.0;
    if (!e->opt.paddle_parity)
        limit = fmin(limit, ENGINE_MAX_PIXELS);
    double pixels = (img->width + 2.0 * DET_MARGIN) * (img->height + 2.0 * DET_MARGIN);
    if (pixels > limit)
        p.scale = sqrt(limit / pixels) * 0.98;
    if (e->opt.paddle_parity)
        return p;
    p.margin = DET_MARGIN;
    int short_side = img->width < img->height ? img->width : img->height;
    int long_side = img->width < img->height ? img->height : img->width;
    if (p.scale == 1.0 && short_side < DET_MIN_SIDE) {
        p.scale = (double)DET_MIN_SIDE / short_side;
        if (long_side * p.scale > e->opt.det_limit_side_len)
            p.scale = fmax(1.0, (double)e->opt.det_limit_side_len / long_side);
    }
    return p;
}

/* A point of the prepared image back in img, clipped to it. */
static void unprepare_point(int pt[2], struct prepare p, double sx, double sy, const struct ocr_image *img)
{
    long x = lround((pt[0] - p.margin) / sx);
    long y = lround((pt[1] - p.margin) / sy);
    pt[0] = (int)(x < 0 ? 0 : x >= img->width ? img->width - 1 : x);
    pt[1] = (int)(y < 0 ? 0 : y >= img->height ? img->height - 1 : y);
}

static int run_prepared(struct ocr_engine *e, const struct ocr_image *img, struct ocr_result *r, char *err,
                        size_t err_len)
{
    memset(r, 0, sizeof(*r));
    struct prepare p = detection_prepare(e, img);
    if (p.scale == 1.0 && p.margin == 0)
        return run_image(e, img, 0, r, err, err_len);

    struct ocr_image scaled = *img;
    scaled.bgr = NULL;
    if (p.scale != 1.0) {
        scaled.width = (int)lround(img->width * p.scale);
        scaled.height = (int)lround(img->height * p.scale);
        scaled.bgr = malloc((size_t)scaled.width * scaled.height * 3);
        if (!scaled.bgr ||
            ocr_resize_linear(img->bgr, img->width, img->height, scaled.bgr, scaled.width, scaled.height, 3)) {
            free(scaled.bgr);
            return fail(err, err_len, "%s", "out of memory scaling the image");
        }
    }
    const struct ocr_image *src = scaled.bgr ? &scaled : img;
    if (src->width > OCR_IMAGE_MAX_SIDE - 2 * p.margin || src->height > OCR_IMAGE_MAX_SIDE - 2 * p.margin) {
        free(scaled.bgr);
        return fail(err, err_len, "%s", "the image is too large for the margin detection adds");
    }
    double sx = (double)src->width / img->width, sy = (double)src->height / img->height;
    int rc = run_image(e, src, p.margin, r, err, err_len);
    free(scaled.bgr);
    /* Back to the caller's image: unscale, and clip what reaches into the margin. */
    for (int i = 0; rc == 0 && i < r->n_lines; i++)
        for (int k = 0; k < 4; k++) {
            unprepare_point(r->lines[i].box[k], p, sx, sy, img);
            for (int w = 0; w < r->lines[i].n_words; w++)
                unprepare_point(r->lines[i].words[w].box[k], p, sx, sy, img);
        }
    r->width = img->width;
    r->height = img->height;
    return rc;
}

/* Whether most lines stand upright (taller than wide by half): text running up or down the page. */
static int mostly_vertical(const struct ocr_result *r)
{
    int tall = 0;
    for (int i = 0; i < r->n_lines; i++) {
        const int(*b)[2] = r->lines[i].box;
        double w = hypot(b[1][0] - b[0][0], b[1][1] - b[0][1]), h = hypot(b[3][0] - b[0][0], b[3][1] - b[0][1]);
        tall += h >= 1.5 * w;
    }
    return r->n_lines >= 2 && 2 * tall > r->n_lines;
}

/* Characters read, weighted by confidence: how much of a page a reading got. */
static double reading_weight(const struct ocr_result *r)
{
    double sum = 0;
    for (int i = 0; i < r->n_lines; i++)
        sum += r->lines[i].score * (double)strlen(r->lines[i].text);
    return sum;
}

/* A page turned 90 degrees counter-clockwise back in the caller's frame: (x', y') -> (W-1-y', x'),
 * corners restarted at the top-left so they stay clockwise from there. Its reading order was made
 * in the turned frame, where its lines run across (the other quarter turn included: the layout
 * reads a page whose lines were read upside down from its far end). */
static void unturn_boxes(struct ocr_result *r, int width)
{
    struct ocr_span *spans[2] = {r->paragraphs, r->blocks};
    int n_spans[2] = {r->n_paragraphs, r->n_blocks};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < n_spans[k]; i++) {
            struct ocr_span *s = &spans[k][i], t = *s;
            s->x0 = width - 1 - t.y1;
            s->x1 = width - 1 - t.y0;
            s->y0 = t.x0;
            s->y1 = t.x1;
        }
    for (int i = 0; i < r->n_lines; i++) {
        int(*b)[2] = r->lines[i].box, t[4][2], first = 0;
        for (int k = 0; k < 4; k++) {
            t[k][0] = width - 1 - b[k][1];
            t[k][1] = b[k][0];
            if (t[k][0] + t[k][1] < t[first][0] + t[first][1])
                first = k;
        }
        for (int k = 0; k < 4; k++) {
            b[k][0] = t[(first + k) % 4][0];
            b[k][1] = t[(first + k) % 4][1];
        }
        /* a word's corners keep their order: its first is where its reading starts */
        for (int w = 0; w < r->lines[i].n_words; w++)
            for (int k = 0; k < 4; k++) {
                int *q = r->lines[i].words[w].box[k], x = q[0];
                q[0] = width - 1 - q[1];
                q[1] = x;
            }
    }
}

/* The page's structure and reading order (layout.h); PaddleOCR's order with --paddle-parity. On
 * failure the result is freed. */
static int lay_out(const struct ocr_engine *e, struct ocr_result *r, char *err, size_t err_len)
{
    double t0 = now_ms();
    int rc = e->opt.paddle_parity ? ocr_layout_single(r) : ocr_layout_page(r);
    r->wall_ms[OCR_STAGE_LAYOUT] += now_ms() - t0;
    if (rc == 0)
        return 0;
    ocr_result_free(r);
    return fail(err, err_len, "%s", "out of memory ordering the page");
}

/* OCR of an image: its lines, their words, and the page's structure. A page whose lines mostly
 * run up or down is read turned a quarter too, and the better reading kept. */
int ocr_engine_run(struct ocr_engine *e, const struct ocr_image *img, struct ocr_result *r, char *err,
                   size_t err_len)
{
    memset(r, 0, sizeof(*r));
    r->width = img->width;
    r->height = img->height;
    if (img->width < 1 || img->height < 1 || !img->bgr)
        return fail(err, err_len, "%s", "empty image");
    if (run_prepared(e, img, r, err, err_len))
        return -1;
    int on_its_side = !e->opt.paddle_parity && mostly_vertical(r);
    if (lay_out(e, r, err, err_len))
        return -1;
    if (!on_its_side)
        return 0;

    /* A page on its side: the detector, trained on horizontal text, misses lines of it. Read the
     * page turned a quarter and keep the reading that got more. */
    struct ocr_image turned = {img->height, img->width, malloc((size_t)img->width * img->height * 3), img->had_alpha};
    if (!turned.bgr)
        return 0;
    ocr_rotate90_ccw(img->bgr, img->width, img->height, turned.bgr);
    struct ocr_result second;
    char why[256];
    int rc = run_prepared(e, &turned, &second, why, sizeof(why));
    ocr_image_free(&turned);
    if (rc || lay_out(e, &second, why, sizeof(why)))
        return 0; /* the first reading stands */
    unturn_boxes(&second, img->width);
    second.width = img->width;
    second.height = img->height;
    for (int s = 0; s < OCR_STAGE_COUNT; s++) {
        second.wall_ms[s] += r->wall_ms[s];
        second.gpu_ms[s] += r->gpu_ms[s];
    }
    if (reading_weight(&second) > reading_weight(r)) {
        ocr_result_free(r);
        *r = second;
    } else {
        for (int s = 0; s < OCR_STAGE_COUNT; s++) {
            r->wall_ms[s] = second.wall_ms[s];
            r->gpu_ms[s] = second.gpu_ms[s];
        }
        ocr_result_free(&second);
    }
    return 0;
}

void ocr_engine_memory(const struct ocr_engine *e, struct ocr_engine_memory *out)
{
    struct gpu_pool_stats dev, host;
    gpu_pool_stats(e->ctx, GPU_MEMORY_DEVICE, &dev);
    gpu_pool_stats(e->ctx, GPU_MEMORY_HOST, &host);
    out->device_in_use = dev.in_use;
    out->device_peak = dev.peak;
    out->host_in_use = host.in_use;
    out->host_peak = host.peak;
}

void ocr_engine_startup(const struct ocr_engine *e, struct ocr_engine_startup *out)
{
    *out = e->startup;
}

enum ocr_device_class ocr_engine_device_class(const struct ocr_engine *e)
{
    const struct gpu_caps *caps = gpu_context_caps(e->ctx);
    if (caps->is_cpu)
        return OCR_DEVICE_CPU;
    return caps->kind == GPU_DEVICE_DISCRETE ? OCR_DEVICE_DISCRETE_GPU : OCR_DEVICE_OTHER_GPU;
}

const char *ocr_engine_device(const struct ocr_engine *e)
{
    return e->device;
}

void ocr_result_free(struct ocr_result *r)
{
    for (int i = 0; i < r->n_lines; i++) {
        for (int w = 0; w < r->lines[i].n_words; w++)
            free(r->lines[i].words[w].text);
        free(r->lines[i].words);
        free(r->lines[i].text);
    }
    free(r->lines);
    free(r->paragraphs);
    free(r->blocks);
    r->lines = NULL;
    r->paragraphs = r->blocks = NULL;
    r->n_lines = r->n_paragraphs = r->n_blocks = 0;
}
