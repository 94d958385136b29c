/* A converted net on the GPU.
 *
 * nn_gpu_net: the model's ops created once (pipelines chosen, weights uploaded).
 *   Passes that only rescale a tensor are fused into the convolution next to them (a learnable
 *   affine after it, an SE gate before it).
 * nn_gpu_plan: the net for one input shape: every activation placed in a few large arena buffers
 *   by a liveness plan (tensors never alive together share memory; reshapes are views), and the
 *   dispatches recorded into a caller's command buffer with barriers only where a tensor written
 *   earlier is read, or memory read or written earlier is overwritten.
 *
 * The caller owns the command buffer so that one recording can hold the input preparation, the
 * net and the post-processing (argmax...) of one stage: it records its own dispatch that writes
 * the plan's input, then a compute->compute barrier, then nn_gpu_plan_record, then a barrier
 * before whatever reads the output. */
#ifndef PPOCR_NN_GPU_NET_H
#define PPOCR_NN_GPU_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "nn/gpu/gpu_op.h"

struct gpu_cmd;
struct nn_gpu_net;
struct nn_gpu_plan;

/* Creates every op of `model` (which must outlive the net). Returns 0, or -1 with a one-line
 * reason naming the op. */
int nn_gpu_net_create(const struct nn_gpu_config *cfg, const struct pvk_model *model, struct nn_gpu_net **out,
                      char *err, size_t err_len);
void nn_gpu_net_destroy(struct nn_gpu_net *net);
const struct pvk_model *nn_gpu_net_model(const struct nn_gpu_net *net);
/* False when op `op_index`'s output tensor does not hold its own result because of a fusion: a
 * convolution whose output already has the following AFFINE applied, or an SE whose gate the
 * following convolution applies (its output is then a view of its input). */
bool nn_gpu_net_result_stored(const struct nn_gpu_net *net, int op_index);

struct nn_gpu_plan_options {
    /* Give every tensor its own memory so that all intermediates can be read after a run
     * (layer-by-layer comparison with the CPU executor). */
    bool keep_all;
    /* Allocate nothing: the caller places the plan in memory of its own with nn_gpu_plan_bind
     * before recording it, so that plans run one after another (det, then cls, then rec) can
     * share one allocation. nn_gpu_plan_arena_bytes is then the bytes the plan needs there. */
    bool external_memory;
    /* When the net ends in a softmax over the last axis, leave it out: the plan's output is then
     * the softmax's input (logits), for a consumer that needs the softmax only at each row's
     * maximum (ARGMAX with PVK_ARGMAX_VALUE_SOFTMAX); nn_gpu_plan_left_softmax says whether it
     * did. */
    bool leave_final_softmax;
};

/* Places the activations for input shape (N, C, H, W) and allocates their memory. */
int nn_gpu_plan_create(struct nn_gpu_net *net, const int64_t input_nchw[4], const struct nn_gpu_plan_options *opt,
                       struct nn_gpu_plan **out, char *err, size_t err_len);
void nn_gpu_plan_destroy(struct nn_gpu_plan *plan);

/* Places a plan made with external_memory at `offset` (a multiple of nn_gpu_plan_align) of
 * `memory`, which must hold nn_gpu_plan_arena_bytes from there. Its tensors then live there until
 * the next bind: recordings made before a bind to other memory are stale. Whatever else uses
 * that memory must not overlap the plan's runs in time (or, recorded with it, its bytes). */
int nn_gpu_plan_bind(struct nn_gpu_plan *plan, const struct gpu_buffer *memory, uint64_t offset, char *err,
                     size_t err_len);
uint64_t nn_gpu_plan_align(const struct nn_gpu_plan *plan);

/* Records the net's dispatches (and the barriers between them) into cmd. */
int nn_gpu_plan_record(struct nn_gpu_plan *plan, struct gpu_cmd *cmd, char *err, size_t err_len);
/* Records several plans in lockstep: op k of every plan that has one, then op k + 1, behind one
 * barrier wherever any of them needs one. The plans' memory is disjoint, so the GPU runs them
 * side by side instead of each waiting out its own chain of barriers (recognition of lines of
 * several widths, one plan per width, and the direction classifier beside them). Plans of
 * different nets may be recorded together. */
int nn_gpu_plan_record_group(struct nn_gpu_plan *const *plans, int n_plans, struct gpu_cmd *cmd, char *err,
                             size_t err_len);
/* The same in parts, so that the GPU can start on one part while the next is recorded: the group
 * has nn_gpu_plan_group_steps steps (its plans' largest op count); this records steps
 * [first, end), opening with a barrier unless first is 0. Parts go into command buffers
 * submitted in order to one queue. */
int nn_gpu_plan_group_steps(struct nn_gpu_plan *const *plans, int n_plans);
int nn_gpu_plan_record_group_steps(struct nn_gpu_plan *const *plans, int n_plans, int first, int end,
                                   struct gpu_cmd *cmd, char *err, size_t err_len);

/* Where a tensor of the model lives in this plan (NULL for constants and unknown ids). */
const struct nn_gpu_tensor *nn_gpu_plan_tensor(const struct nn_gpu_plan *plan, int32_t tensor_id);
const struct nn_gpu_tensor *nn_gpu_plan_input(const struct nn_gpu_plan *plan);
const struct nn_gpu_tensor *nn_gpu_plan_output(const struct nn_gpu_plan *plan);
bool nn_gpu_plan_left_softmax(const struct nn_gpu_plan *plan);
/* Bytes of arena memory the plan holds, or with external_memory needs (what liveness sharing
 * achieved). */
uint64_t nn_gpu_plan_arena_bytes(const struct nn_gpu_plan *plan);
/* Bytes the activations would take without sharing. */
uint64_t nn_gpu_plan_unshared_bytes(const struct nn_gpu_plan *plan);

/* Timed dispatches of op `op_index` in the last recording: timings[*first .. *end) of the command
 * buffer (see gpu_cmd_timed_count); empty for views and ops recorded without timestamps. */
void nn_gpu_plan_op_timings(const struct nn_gpu_plan *plan, int op_index, unsigned *first, unsigned *end);
/* Work of op `op_index` at this plan's shapes, for profiles: 2 x multiply-adds of convolutions,
 * matrix products and attention (0 for the other ops), and bytes of activations read and written
 * plus weights read. */
void nn_gpu_plan_op_cost(const struct nn_gpu_plan *plan, int op_index, double *flops, double *bytes);
/* The shape of a tensor in this plan. */
const struct pvk_shape *nn_gpu_plan_shape(const struct nn_gpu_plan *plan, int32_t tensor_id);

/* Copies between host fp32 and a GPU tensor of any storage precision (converting fp16). No
 * recorded work may be using the tensor. */
int nn_gpu_tensor_write(struct gpu_context *ctx, const struct nn_gpu_tensor *t, const float *src, char *err,
                        size_t err_len);
int nn_gpu_tensor_read(struct gpu_context *ctx, const struct nn_gpu_tensor *t, float *dst, char *err, size_t err_len);

size_t nn_dtype_size(enum nn_dtype dtype);

#endif
