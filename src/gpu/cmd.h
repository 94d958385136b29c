/* Command buffers recorded once and submitted any number of times: the nets record one per net
 * and input shape, then replay it for every image. Everything a recording refers to (descriptor
 * sets, timestamp queries) belongs to it, so replay needs nothing but gpu_cmd_run. Buffers it
 * binds must outlive it or its next gpu_cmd_begin.
 *
 * Threads: a gpu_cmd is used by one thread at a time (its command pool, descriptor pools and
 * fence are its own); different ones may record, submit and wait on several threads at once,
 * submission taking the queue's lock. */
#ifndef PPOCR_GPU_CMD_H
#define PPOCR_GPU_CMD_H

#include <stdbool.h>
#include <stdint.h>

#include <vulkan/vulkan.h>

#include "gpu/pool.h"

struct gpu_context;
struct gpu_pipeline;
struct gpu_cmd;

/* One buffer binding (storage, or texel where the pipeline says): a range of a pool buffer. */
struct gpu_binding {
    VkBuffer buffer;
    VkDeviceSize offset, range;
};

static inline struct gpu_binding gpu_bind(const struct gpu_buffer *b)
{
    return (struct gpu_binding){b->buffer, b->offset, b->size};
}

/* `size` bytes from `offset` within b; offset a multiple of minStorageBufferOffsetAlignment. */
static inline struct gpu_binding gpu_bind_range(const struct gpu_buffer *b, VkDeviceSize offset, VkDeviceSize size)
{
    return (struct gpu_binding){b->buffer, b->offset + offset, size};
}

struct gpu_dispatch {
    const struct gpu_pipeline *pipeline;
    const struct gpu_binding *buffers; /* the pipeline's buffer_count, binding 0 first */
    const void *push;                  /* the pipeline's push_bytes; copied at record time */
    uint32_t groups[3];                /* workgroups in x, y, z; 0 counts as 1 */
    const char *label;                 /* name in timings; NULL: the shader's */
};

/* Pipeline stages a barrier orders: what wrote before -> what reads or writes after. */
enum gpu_stage { GPU_STAGE_COMPUTE, GPU_STAGE_TRANSFER, GPU_STAGE_HOST };

struct gpu_timing {
    char label[64];
    double us; /* GPU time from the end of the previous timed command to the end of this one */
};

/* A command buffer that can time up to `max_timings` dispatches (0: none; ignored when the
 * queue has no timestamps). */
int gpu_cmd_create(struct gpu_context *ctx, unsigned max_timings, struct gpu_cmd **out);
/* The same, submitting to the context's compute queue `queue` (gpu_context_take_queue; taken
 * modulo their count). gpu_cmd_create's is queue 0. */
int gpu_cmd_create_on(struct gpu_context *ctx, unsigned queue, unsigned max_timings, struct gpu_cmd **out);
void gpu_cmd_destroy(struct gpu_cmd *cmd);

/* Whether every dispatch gets a timestamp (the default). Each waits for the work before it to
 * finish, which serialises dispatches that would otherwise overlap; a stage's or a net's own time
 * is measured with dispatches untimed and a gpu_cmd_mark after it. */
void gpu_cmd_time_dispatches(struct gpu_cmd *cmd, bool on);

/* How many dispatches the caller is recording side by side, with no barrier between them (plans
 * recorded in lockstep): a kernel may size its tiles for the GPU they share. 1 unless set. */
void gpu_cmd_set_side_by_side(struct gpu_cmd *cmd, unsigned n);
unsigned gpu_cmd_side_by_side(const struct gpu_cmd *cmd);

/* A timing of everything recorded since the previous timestamp (or the recording's start). */
void gpu_cmd_mark(struct gpu_cmd *cmd, const char *label);

/* Starts a recording, dropping the previous one. Waits first if a submission is in flight. */
int gpu_cmd_begin(struct gpu_cmd *cmd);

/* Binds the pipeline, its buffers and push constants, and dispatches. */
int gpu_cmd_dispatch(struct gpu_cmd *cmd, const struct gpu_dispatch *d);

/* Makes writes of `from` visible to `to`. Compute->compute between dependent dispatches;
 * compute->host at the end of a recording whose results the host reads from mapped memory. */
void gpu_cmd_barrier(struct gpu_cmd *cmd, enum gpu_stage from, enum gpu_stage to);

int gpu_cmd_copy(struct gpu_cmd *cmd, const struct gpu_buffer *src, VkDeviceSize src_offset,
                 const struct gpu_buffer *dst, VkDeviceSize dst_offset, VkDeviceSize bytes);

/* Sets `bytes` (multiple of 4) of dst from `offset` to the 32-bit `value`; a transfer. */
int gpu_cmd_fill(struct gpu_cmd *cmd, const struct gpu_buffer *dst, VkDeviceSize offset, VkDeviceSize bytes,
                 uint32_t value);

/* Ends the recording; returns the first error any recording call met. */
int gpu_cmd_end(struct gpu_cmd *cmd);

/* Submits the recording; gpu_cmd_wait blocks until it finished, within the context's timeout,
 * and then reads the timings. gpu_cmd_run does both. */
int gpu_cmd_submit(struct gpu_cmd *cmd);
int gpu_cmd_wait(struct gpu_cmd *cmd);
int gpu_cmd_run(struct gpu_cmd *cmd);

/* Timed dispatches recorded so far: lets a caller attribute timings[first .. next) to the
 * dispatches it recorded in between. */
unsigned gpu_cmd_timed_count(const struct gpu_cmd *cmd);
/* The timed dispatches of the last finished submission, in recording order. */
void gpu_cmd_timings(const struct gpu_cmd *cmd, const struct gpu_timing **out, unsigned *count);

#endif
