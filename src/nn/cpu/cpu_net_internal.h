/* Inside the oneDNN executor (cpu_net.h): the plan as a list of steps over values.
 *
 * A value is one tensor as the plan holds it: a oneDNN memory descriptor (its layout) over a
 * storage, at a byte offset. Several values may share a storage: views (a RESHAPE, attention's
 * q/k/v inside qkv) and results written in place over a residual they add. Storages get their
 * place in the workspace after planning, from the steps that touch them (liveness), and are
 * all dense: no layout in a plan pads channels (NHWC, row-major), so a storage can follow any
 * other in the same bytes.
 *
 * A step is one oneDNN primitive with its arguments, or one of this folder's own C kernels
 * (cpu_net_host.c) for what the library lacks. The op planners (cpu_net_ops.c) append steps;
 * cpu_net.c drives them, places the storages and runs the steps. */
#ifndef PPOCR_NN_CPU_CPU_NET_INTERNAL_H
#define PPOCR_NN_CPU_CPU_NET_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "nn/cpu/dnnl_api.h"

#include "model/model.h"
#include "nn/cpu/cpu_net.h"
#include "nn/shape.h"

struct cn_value {
    dnnl_memory_desc_t md;
    struct pvk_shape shape; /* logical (NCHW order for 4-D) */
    enum pvk_dtype dtype;   /* F32, or I32 for an ARGMAX index */
    int storage;
    size_t byte_offset; /* inside the storage */
    int last_reader;    /* the last model op that reads it (-1: none); n_ops: the plan's output */
    dnnl_memory_t mem;  /* bound to the workspace by cn_bind */
};

struct cn_storage {
    size_t bytes;
    int first_step, last_step; /* -1 until a step touches it */
    bool external;             /* the caller's input: never written, not in the workspace */
    bool scratch;              /* the library's scratchpads, one region for every step */
    size_t offset;             /* in the workspace */
};

/* A step's argument: a value, or a fixed memory (weights, bias, the model's constants). */
struct cn_arg {
    int arg;   /* DNNL_ARG_* (own kernels: their own numbering) */
    int value; /* -1: fixed */
    dnnl_memory_t fixed;
};

#define CN_MAX_ARGS 12

struct cn_plan;
struct cn_step;
typedef void (*cn_host_fn)(const struct cn_plan *p, const struct cn_step *s);

/* What own kernels need besides their arguments. */
union cn_host_params {
    struct {
        int kh, kw;
        const float *bias; /* [OC] or NULL */
        enum pvk_act act;
        float alpha, beta;
    } spread;
    struct {
        enum pvk_resize_mode mode;
        float scale_h, scale_w;
    } resize;
    struct pvk_pool_params pool;
    struct {
        enum pvk_binary_kind kind;
        enum pvk_act act;
        float alpha, beta;
    } binary;
    struct {
        bool softmax; /* the value is the max's softmax probability */
    } argmax;
};

struct cn_step {
    int op;           /* the model op it comes from; -1 for a layout change */
    const char *what; /* "conv", "reorder", ... */
    char impl[48];    /* the library's implementation, or "own C" */
    dnnl_primitive_t prim;
    cn_host_fn host;
    union cn_host_params hp;
    int n_args;
    struct cn_arg args[CN_MAX_ARGS];
};

/* Weights repacked for a primitive, kept by the net for every plan that asks the same layout. */
struct cn_packed {
    int32_t tensor;
    int variant; /* how the model's array is viewed (plain, as a 1x1 conv of a deconvolution...) */
    dnnl_memory_desc_t md;
    void *data;
    struct cn_packed *next;
};

struct cpu_net {
    const struct pvk_model *model;
    int threads;
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    /* held while f32, widened and packed change and while weights are repacked on `stream`, so
     * that plans of the net may be made on several threads at once */
    pthread_mutex_t weights_lock;
    const float **f32; /* per tensor: a constant's fp32 data (the model's own, or widened from fp16) */
    float **widened;
    struct cn_packed *packed;
};

struct cn_plan {
    struct cpu_net *net;
    const struct pvk_model *model;
    struct pvk_shape *shapes; /* every model tensor's shape at this input */
    int *tensor_value;        /* model tensor -> value, -1 before it is made */
    int *last_reader;         /* model tensor -> the last op reading it */
    int *fused_into;          /* op -> the op that does its work (an AFFINE after a conv), or -1 */
    int *reader_count;        /* model tensor -> ops reading it (+1 for the net output) */
    struct cn_value *values;
    int n_values, cap_values;
    struct cn_storage *storages;
    int n_storages, cap_storages;
    struct cn_step *steps;
    int n_steps, cap_steps;
    /* what planning made and the plan destroys */
    dnnl_memory_t *fixed;
    int n_fixed, cap_fixed;
    int scratch_storage;
    int input_value, output_value;
    int32_t output_tensor; /* the model tensor the plan ends at */
    bool softmax_left;     /* the final softmax was left out */
    bool keep_all;         /* no storage shares bytes with another */
    struct pvk_shape in_shape, out_shape;
    size_t workspace_bytes, unshared_bytes;
    void *own_workspace;
    void *bound; /* the workspace the values were last bound to */
    const float *run_input;
    char *err;
    size_t err_len;
};

/* ---- cpu_net_build.c: building blocks for the op planners --------------------------------- */

/* Sets the reason for op k (-1: none) and returns -1. */
int cn_fail(struct cn_plan *p, int k, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* The same for a failed library call. */
int cn_fail_dnnl(struct cn_plan *p, int k, const char *call, dnnl_status_t st);
#define CN_TRY(p, k, call)                                                                                             \
    do {                                                                                                               \
        dnnl_status_t st_ = (call);                                                                                    \
        if (st_ != dnnl_success)                                                                                       \
            return cn_fail_dnnl((p), (k), #call, st_);                                                                 \
    } while (0)

/* A new storage of `bytes` (grown by the values placed on it); its index, or -1. */
int cn_new_storage(struct cn_plan *p, int k, size_t bytes);
/* Grows *items (of `size` bytes each, *cap of them) to hold need; 0 or -1. */
int cn_grow(void **items, int *cap, int need, size_t size);
/* A new value of md on a new storage (or on `storage` at byte_offset when storage >= 0). -1 on
 * failure (reason set). */
int cn_new_value(struct cn_plan *p, int k, const dnnl_memory_desc_t *md, const struct pvk_shape *shape,
                 enum pvk_dtype dtype, int storage, size_t byte_offset);
/* The value of model tensor t (its producer ran before). */
int cn_tensor_value(struct cn_plan *p, int k, int32_t t);
/* Makes v the value of model tensor t. */
void cn_set_tensor_value(struct cn_plan *p, int32_t t, int v);
/* Whether value v's bytes may be overwritten by op k: no value on its storage is read after k,
 * and it is neither the caller's input nor the plan's output. */
bool cn_can_overwrite(const struct cn_plan *p, int v, int k);

/* The value of v in layout md: v itself when its layout is md (or the same bytes), else a reorder
 * step into a new value. -1 on failure. */
int cn_to_md(struct cn_plan *p, int k, int v, const dnnl_memory_desc_t *md);
/* v row-major (dense, logical order). */
int cn_to_plain(struct cn_plan *p, int k, int v);
/* A copy of v in layout md on a storage of its own (to be written in place). */
int cn_copy_to(struct cn_plan *p, int k, int v, const dnnl_memory_desc_t *md);

/* Descriptors: 4-D in NHWC, other ranks row-major, for a logical shape. */
int cn_md_for(struct cn_plan *p, int k, const struct pvk_shape *s, enum pvk_dtype dtype, dnnl_memory_desc_t *md);
int cn_md_plain(struct cn_plan *p, int k, const struct pvk_shape *s, enum pvk_dtype dtype, dnnl_memory_desc_t *md);
/* Whether a describes the same bytes as b (equal, or differing only in strides of size-1 dims). */
bool cn_md_same_bytes(const dnnl_memory_desc_t *a, const dnnl_memory_desc_t *b);

/* A fixed memory over a model constant's fp32 data seen as md (no copy). NULL on failure. */
dnnl_memory_t cn_const_memory(struct cn_plan *p, int k, int32_t tensor, const dnnl_memory_desc_t *md);
/* A fixed memory over constant `tensor` viewed as user_md, repacked into want_md (once per net and
 * layout; variant names the view). derived: the caller's rearranged copy of the constant (which it
 * may free after the call) instead of the model's array. NULL on failure. */
dnnl_memory_t cn_packed_memory(struct cn_plan *p, int k, int32_t tensor, int variant, const dnnl_memory_desc_t *user_md,
                               const float *derived, const dnnl_memory_desc_t *want_md);
/* A constant's fp32 data (NULL with the reason set when it has none). */
const float *cn_const_data(struct cn_plan *p, int k, int32_t tensor);

/* A primitive attribute with the user scratchpad, to which callers append post-ops. */
int cn_attr(struct cn_plan *p, int k, dnnl_primitive_attr_t *attr);
/* Appends act as eltwise post-ops (plus_one: then adds 1). Fails where the chain already holds
 * one of its algorithms with other parameters (see cn_acts_chain). */
int cn_post_ops_act(struct cn_plan *p, int k, dnnl_post_ops_t po, enum pvk_act act, float alpha, float beta,
                    bool plus_one);
/* A primitive attribute (cn_attr) and an empty chain of post-ops for it; on failure neither is
 * left. */
int cn_attr_post_ops_begin(struct cn_plan *p, int k, dnnl_primitive_attr_t *attr, dnnl_post_ops_t *po);
/* Ends what cn_attr_post_ops_begin began, rc being the result of appending the post-ops: sets the
 * chain on attr where rc is 0, destroys the chain, and destroys attr on any failure. Returns 0 or -1. */
int cn_attr_post_ops_end(struct cn_plan *p, int k, dnnl_primitive_attr_t attr, dnnl_post_ops_t po, int rc);
/* cn_attr with act (and plus_one, as cn_post_ops_act) as its only post-ops. */
int cn_attr_act(struct cn_plan *p, int k, enum pvk_act act, float alpha, float beta, bool plus_one,
                dnnl_primitive_attr_t *attr);
/* Whether act `second` may follow act `first` in one chain of post-ops. */
bool cn_acts_chain(enum pvk_act first, float alpha1, float beta1, enum pvk_act second, float alpha2, float beta2);
/* Creates the primitive descriptor of desc under attr (which it destroys). */
int cn_pd(struct cn_plan *p, int k, const void *desc, dnnl_primitive_attr_t attr, dnnl_primitive_desc_t *pd);
/* A primitive of desc from value x into a new fp32 value of dst_md and shape ys (no post-ops, no
 * other arguments), added as step `what`; the new value, or -1. */
int cn_src_dst_prim(struct cn_plan *p, int k, const void *desc, const dnnl_memory_desc_t *dst_md,
                    const struct pvk_shape *ys, int x, const char *what);
/* Whether pd is one of the library's reference implementations. */
bool cn_pd_is_reference(dnnl_primitive_desc_t pd);
/* Appends the primitive of pd (which it destroys) with its arguments and the scratchpad. */
int cn_add_prim(struct cn_plan *p, int k, const char *what, dnnl_primitive_desc_t pd, int n_args,
                const struct cn_arg *args);
/* Appends an own kernel. */
int cn_add_host(struct cn_plan *p, int k, const char *what, cn_host_fn fn, const union cn_host_params *hp, int n_args,
                const struct cn_arg *args);
/* Appends eltwise steps applying act to value v in place. */
int cn_act_in_place(struct cn_plan *p, int k, int v, enum pvk_act act, float alpha, float beta);

/* The host address of value v during a run. */
void *cn_value_ptr(const struct cn_plan *p, int v);

/* How a constant array is viewed when it is repacked (cn_packed_memory's variant). */
enum cn_view_kind { CN_VIEW_AS_IS = 0, CN_VIEW_DECONV_AS_1X1, CN_VIEW_TRANSPOSED };

/* Small helpers of the planners: op k, its output's shape, a tensor's element count (0 for -1). */
const struct pvk_op *cn_op(const struct cn_plan *p, int k);
const struct pvk_shape *cn_out_shape(const struct cn_plan *p, int k);
int64_t cn_numel(const struct cn_plan *p, int32_t t);
/* A new value of shape s in the plan's layout for it (NHWC for 4-D, else row-major). */
int cn_new_output(struct cn_plan *p, int k, const struct pvk_shape *s);
/* A view of value v's bytes (from extra_offset on) as md, logical shape s. */
int cn_view(struct cn_plan *p, int k, int v, const dnnl_memory_desc_t *md, const struct pvk_shape *s,
            size_t extra_offset);
int cn_md_by_strides(struct cn_plan *p, int k, int nd, const int64_t *dims, const int64_t *strides,
                     dnnl_memory_desc_t *md);
int cn_md_by_tag(struct cn_plan *p, int k, int nd, const int64_t *dims, dnnl_format_tag_t tag, dnnl_memory_desc_t *md);
/* Activation steps of op k applied to y (for primitives that took none as a post-op). */
int cn_finish_act(struct cn_plan *p, int k, int y);
/* Makes y the value of op k's first output; returns 0. */
int cn_set_output(struct cn_plan *p, int k, int y);

/* ---- the op planners: one per op type (cpu_net_conv.c, cpu_net_matrix.c, cpu_net_ops.c) -- */

/* Appends the steps of op k (its inputs' values exist); sets the values of its outputs. */
int cn_plan_op(struct cn_plan *p, int k);
/* Marks the fusions of the net (p->fused_into). */
void cn_plan_fusions(struct cn_plan *p);
int cn_plan_conv2d(struct cn_plan *p, int k);
int cn_plan_conv_transpose2d(struct cn_plan *p, int k);
int cn_plan_matmul(struct cn_plan *p, int k);
int cn_plan_layernorm(struct cn_plan *p, int k);
int cn_plan_softmax(struct cn_plan *p, int k);
int cn_plan_attention(struct cn_plan *p, int k);

/* ---- cpu_net_host.c: own kernels ---------------------------------------------------------- */

float cn_act_scalar(enum pvk_act act, float alpha, float beta, float x);
/* args: 0 z (the 1x1 conv output, NHWC [N][H][W][KH][KW][OC]), 1 y (NHWC [N][H KH][W KW][OC]). */
void cn_host_spread(const struct cn_plan *p, const struct cn_step *s);
/* args: 0 x, 1 y (any strided 4-D layouts). */
void cn_host_resize(const struct cn_plan *p, const struct cn_step *s);
void cn_host_pool(const struct cn_plan *p, const struct cn_step *s);
/* args: 0 a, 1 b, 2 y (strided, numpy broadcasting). */
void cn_host_binary(const struct cn_plan *p, const struct cn_step *s);
/* args: 0 x (row-major), 1 index (int32), 2 value. */
void cn_host_argmax(const struct cn_plan *p, const struct cn_step *s);
/* Over rows of x [rows][c]: the first maximum's index, and the maximum or its softmax
 * probability 1 / sum exp(x - max) (summed in double). */
void cn_argmax_rows(const float *x, int64_t rows, int64_t c, int32_t *index, float *value, bool softmax, int threads);

#endif
