/* A net session: the layer that runs a client's nets on a device. It holds the nets (made side by
 * side on threads), a cache of plans per input shape, the activation memory every plan is bound
 * into before it runs (det, cls and each rec group run one after another, so they share it),
 * the readbacks of outputs, the command recordings with their split submissions and lockstep
 * groups, and their GPU timings. The OCR pipeline decides what to run (shapes, batches, what
 * fits); the session decides how.
 *
 * A run is one submission of one or more plans, recorded side by side (op k of every plan, then
 * op k + 1, behind one barrier wherever one of them needs it). The client records the plans'
 * inputs through a callback (its own kernels: image resize, crops), and may record work that
 * consumes the outputs through another (DB's bitmap); each output is then kept on the device,
 * read back as fp32, or reduced by an argmax over its last axis.
 *
 * A backend implements this interface (nn/backend.h: src/nn/gpu/session.c on Vulkan,
 * src/nn/cpu/session_cpu.c on the CPU); callbacks reach the backend's recording through its own
 * header (src/nn/gpu/session_gpu.h; src/nn/cpu/session_cpu.h, where a callback does its work when
 * called, and the plans run one after another). On the CPU fp16_math is ignored (fp32), profile
 * times the run's wall clock, and in_parts and replay_key mean nothing (checked, then ignored).
 *
 * Threads: one session is used from one thread at a time; sessions of sibling engines on the
 * same device run on threads of their own. */
#ifndef PPOCR_NN_SESSION_H
#define PPOCR_NN_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "nn/shape.h"

struct nn_device;
struct nn_session;
struct nn_plan;     /* a net planned for one input shape, owned by the session's cache */
struct nn_recorder; /* the recording of a run, handed to the client's callbacks */

enum nn_net_id { NN_NET_DET, NN_NET_CLS, NN_NET_REC, NN_NET_COUNT };

/* Plans in one run, at most. */
#define NN_RUN_MAX_PLANS 17

struct nn_session_options {
    const struct pvk_model *models[NN_NET_COUNT]; /* NULL: the net is not used */
    const char *names[NN_NET_COUNT];              /* for failure reasons: "rec.pvk: ..." */
    /* Plans of the net end before its final softmax over the last axis (when it has one), for
     * outputs reduced by NN_OUTPUT_ARGMAX, which then gives the maximum's probability. */
    bool leave_final_softmax[NN_NET_COUNT];
    bool fp16_math; /* cls and rec: fp16 element-wise arithmetic over fp16 storage (nn/gpu/precision.h) */
    bool profile;   /* time every run on the GPU (nn_session_gpu_ms) */
};

/* Makes every net of opt on dev (which must outlive the session). Returns 0, or -1 with a
 * one-line reason naming the net. */
int nn_session_create(struct nn_device *dev, const struct nn_session_options *opt, struct nn_session **out, char *err,
                      size_t err_len);
void nn_session_destroy(struct nn_session *s);

/* ---- plans ----------------------------------------------------------------------------------- */

/* The plan of `net` for input shape (N, C, H, W), from the cache (the least recently used of a
 * full cache is given back) or made; NULL with a reason. Plans stay valid until a later call
 * evicts them: pin the plans of a run being assembled. */
struct nn_plan *nn_session_plan(struct nn_session *s, enum nn_net_id net, const int64_t shape[4], char *err,
                                size_t err_len);
/* Keeps plan in the cache while pinned; a second request for its shape meanwhile gets a plan of
 * its own (two batches of one shape in one run). */
void nn_session_pin(struct nn_session *s, struct nn_plan *plan, bool pinned);

/* A plan the client is about to ask nn_session_plan for. */
struct nn_plan_request {
    enum nn_net_id net;
    int64_t shape[4];
};
#define NN_PLAN_AHEAD_MAX 32
/* Makes those of the first NN_PLAN_AHEAD_MAX requests that the cache lacks, side by side where the
 * backend can, for the nn_session_plan calls that follow to find: the CPU backend builds them on
 * its threads (a page's first recognition batches and the classifier beside them), Vulkan makes
 * each when it is asked for, so this does nothing there. What cannot be made is left for
 * nn_session_plan to report; no pinned plan is evicted. */
void nn_session_plan_ahead(struct nn_session *s, const struct nn_plan_request *requests, int n);
/* The activation bytes `net` needs at `shape`, from a plan made and dropped (not cached: for
 * sizes that are only tried); UINT64_MAX when the net cannot be planned for it. */
uint64_t nn_session_plan_bytes(struct nn_session *s, enum nn_net_id net, const int64_t shape[4]);
uint64_t nn_plan_bytes(const struct nn_plan *plan);
uint64_t nn_plan_align(const struct nn_plan *plan);
/* The bytes plans need side by side, each at its alignment. */
uint64_t nn_plans_bytes(struct nn_plan *const *plans, int n);
const struct pvk_shape *nn_plan_input_shape(const struct nn_plan *plan);
const struct pvk_shape *nn_plan_output_shape(const struct nn_plan *plan);

/* The most activation memory a run binds at once (one buffer the device binds whole, and a share
 * of its memory): work that needs more must be cut to fit. */
uint64_t nn_session_memory_limit(const struct nn_session *s);
/* The activation memory the session holds now (it grows to the largest run so far). */
uint64_t nn_session_memory_held(const struct nn_session *s);

/* ---- runs ------------------------------------------------------------------------------------ */

enum nn_output_use {
    NN_OUTPUT_KEEP,   /* stays on the device (a callback consumes it) */
    NN_OUTPUT_READ,   /* read back as fp32: nn_session_output */
    NN_OUTPUT_ARGMAX, /* index and value of the maximum over the last axis: nn_session_argmax */
};

/* A callback recording the client's work into a run: the plans' inputs before the nets, or what
 * consumes their outputs after them. Returns 0, or -1 with a reason. */
typedef int (*nn_record_fn)(void *ctx, struct nn_recorder *rec, struct nn_plan *const *plans, int n_plans, char *err,
                            size_t err_len);

struct nn_run {
    struct nn_plan *const *plans;
    int n_plans;
    enum nn_output_use output[NN_RUN_MAX_PLANS];
    nn_record_fn record_inputs, record_outputs; /* record_outputs may be NULL */
    void *ctx;
    /* Long runs are submitted in parts of doubling length, each recorded while the GPU runs the
     * one before. */
    bool in_parts;
    /* Kept and replayed: the recording is made once and run again as long as replay_key (the
     * client's description of what its callbacks record: sizes, and a count of the times its
     * buffers moved) and the session's side (the plans, their memory) stay the same. NULL:
     * recorded every time. */
    const int *replay_key;
    int replay_key_len; /* at most 8 */
};

/* Binds the plans side by side in the activation memory (growing it when they need more), records
 * and submits the run, and waits for it. Returns 0, or -1 with a reason; the session stays usable. */
int nn_session_run(struct nn_session *s, const struct nn_run *run, char *err, size_t err_len);
/* GPU milliseconds of the last run (0 without opt.profile). */
double nn_session_gpu_ms(const struct nn_session *s);
/* The fp32 values of the last run's NN_OUTPUT_READ output (plan `k` of the run): in place where
 * the device left them in host memory as fp32 (*owned NULL), else a copy the caller frees
 * (*owned). NULL with a reason. */
const float *nn_session_output(struct nn_session *s, int k, float **owned, char *err, size_t err_len);
/* The same into dst (numel of the plan's output). */
int nn_session_read_output(struct nn_session *s, int k, float *dst, char *err, size_t err_len);
/* The last run's NN_OUTPUT_ARGMAX output of plan k: rows [N][T] of a [N, T, C] output, index and
 * value (probability after a left-out softmax). Valid until the next run. */
int nn_session_argmax(const struct nn_session *s, int k, const int32_t **index, const float **value);

#endif
