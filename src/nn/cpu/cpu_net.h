/* The nets on the CPU through oneDNN (libdnnl, fp32): the executor the CPU backend of the net
 * session (nn/session.h) sits on. A net is made once from a model (its weights repacked lazily
 * into the layouts the library's kernels ask for, shared by its plans); a plan is the net for one
 * input shape, with every primitive created once, its fusions made and its intermediate memory
 * laid out (buffers reused after their last reader); a run reads an fp32 NCHW input and leaves
 * the net's output, fp32 (or int32 for an ARGMAX index), in the plan's workspace.
 *
 * Inside a plan 4-D activations are NHWC (oneDNN's kernels run NHWC as fast as their own blocked
 * layouts on these nets, and NHWC has no padded channels: BENCHMARKS.md), other ranks row-major.
 * The input is read as NCHW and the output is given back row-major (NCHW).
 *
 * Threads: a net and its plans belong to one thread at a time, except that several threads may
 * plan the same net at once (cpu_net_plan; the net's widened and repacked weights are made under
 * its lock) while none of its plans runs. Runs use `threads` OpenMP threads
 * (0: OpenMP's default, all cores or OMP_NUM_THREADS), set for the calling thread during the
 * call and put back after it. Where the library was not found at configure time every call fails
 * with a one-line reason (cpu_net_available). */
#ifndef PPOCR_NN_CPU_CPU_NET_H
#define PPOCR_NN_CPU_CPU_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"
#include "nn/shape.h"

struct cpu_net;
struct cpu_plan;

struct cpu_net_options {
    int threads; /* 0: all cores (OpenMP's default, which honours OMP_NUM_THREADS) */
};

struct cpu_plan_options {
    /* The plan ends before the net's final softmax over the last axis (when it has one), for
     * outputs reduced by cpu_plan_argmax, which then gives the maximum's probability. */
    bool leave_final_softmax;
    /* Every intermediate keeps bytes of its own, so that cpu_plan_read_tensor can read any of
     * them after a run (tests comparing layer by layer). */
    bool keep_all;
};

/* 0 when this build has the CPU executor and the processor runs it; -1 with the reason. */
int cpu_net_available(char *err, size_t err_len);

/* The threads a run with cpu_net_options.threads = `threads` uses (0: OpenMP's default), at most
 * OMP_THREAD_LIMIT. */
int cpu_net_threads(int threads);
/* Prints the library, its runtime and the threads, runs one small convolution through oneDNN and
 * compares it with plain C. Returns 0, or -1 with a one-line reason. */
int cpu_net_self_check(int threads, FILE *out, char *err, size_t err_len);

/* The net of `model` (which must outlive it). Returns 0, or -1 with a one-line reason. */
int cpu_net_create(const struct pvk_model *model, const struct cpu_net_options *opt, struct cpu_net **out, char *err,
                   size_t err_len);
void cpu_net_destroy(struct cpu_net *net);

/* The net planned for input shape (N, C, H, W); opt may be NULL. Returns 0, or -1 with a
 * one-line reason naming the op. Plans must be destroyed before their net. */
int cpu_net_plan(struct cpu_net *net, const int64_t input_nchw[4], const struct cpu_plan_options *opt,
                 struct cpu_plan **out, char *err, size_t err_len);
void cpu_plan_destroy(struct cpu_plan *plan);

const struct pvk_shape *cpu_plan_input_shape(const struct cpu_plan *plan);
const struct pvk_shape *cpu_plan_output_shape(const struct cpu_plan *plan);
enum pvk_dtype cpu_plan_output_dtype(const struct cpu_plan *plan);
/* The workspace a run needs: the intermediates (laid out by liveness) and the library's
 * scratchpad, and its alignment. */
size_t cpu_plan_workspace_bytes(const struct cpu_plan *plan);
#define CPU_PLAN_WORKSPACE_ALIGN 64
/* The bytes all of the plan's intermediates would take without reuse (for tests and tables). */
size_t cpu_plan_unshared_bytes(const struct cpu_plan *plan);

/* Runs the plan on `input` (fp32 NCHW of the plan's input shape, read only). workspace: NULL for
 * the plan's own (allocated on the first run and kept), or cpu_plan_workspace_bytes at
 * CPU_PLAN_WORKSPACE_ALIGN, which plans run one after another may share (it is bound again on
 * every run). Returns 0, or -1 with a one-line reason. */
int cpu_plan_run(struct cpu_plan *plan, const float *input, void *workspace, char *err, size_t err_len);
/* The same, timing each step into step_ms[cpu_plan_step_count] (wall ms; for --bench-ops). */
int cpu_plan_run_timed(struct cpu_plan *plan, const float *input, void *workspace, double *step_ms, char *err,
                       size_t err_len);
int cpu_plan_step_count(const struct cpu_plan *plan);
/* The last run's output (row-major, cpu_plan_output_shape/dtype), inside the workspace: valid
 * until the workspace is used again. */
const void *cpu_plan_output(const struct cpu_plan *plan);
/* Index and value of the maximum over the last axis of the last run's fp32 output, one per row
 * (numel / last dim); the value is the softmax probability of the maximum where the plan left
 * the final softmax out, else the maximum itself. Returns 0, or -1 with a reason (int32 output). */
int cpu_plan_argmax(const struct cpu_plan *plan, int32_t *index, float *value, char *err, size_t err_len);

/* Model tensor t as the last run left it, row-major into dst (numel of its shape, 4-byte
 * elements), from a keep_all plan (or the input and output of any plan). Returns 0, or -1 with a
 * reason (a tensor the plan does not hold: fused into the op after it, or not computed). */
int cpu_plan_read_tensor(const struct cpu_plan *plan, int32_t t, void *dst, char *err, size_t err_len);

/* One line per step: the op it comes from, what it does, the library's implementation
 * ("jit:avx512_core", "ref:any", "own C"...), its output's shape and, given step_ms (from
 * cpu_plan_run_timed; may be NULL), its time. For tests and --bench-ops. */
void cpu_plan_describe(const struct cpu_plan *plan, const double *step_ms, FILE *out);
/* Steps whose implementation is one of the library's reference kernels (slow: a missed
 * fast path). */
int cpu_plan_reference_steps(const struct cpu_plan *plan);

#endif
