/* The backends of nn/device.h and nn/session.h, as one table of calls each (in the manner of
 * ggml's backend interface): the front functions (src/nn/device.c, src/nn/session.c) forward
 * every call to the backend of the device, session or plan it is given, which each of those
 * names in its first member. A backend's structs embed the base struct below first.
 *
 * Each backend's table is generated from the one list of calls, and so are the prototypes of its
 * implementations: a backend without one of the calls does not link, and each implementation is
 * checked against the call's signature (the static check that every entry is set). */
#ifndef PPOCR_NN_BACKEND_H
#define PPOCR_NN_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nn/bench.h"
#include "nn/device.h"
#include "nn/session.h"

struct nn_backend;

/* The first member of every backend's device, session, plan and recorder. */
struct nn_device {
    const struct nn_backend *backend;
};
struct nn_session {
    const struct nn_backend *backend;
};
struct nn_plan {
    const struct nn_backend *backend;
};
struct nn_recorder {
    const struct nn_backend *backend;
};

/* X(prefix, return type, call, parameters): the calls of nn/device.h, nn/session.h and nn/bench.h,
 * named as they are there without "nn_". nn_plans_bytes is not one: it is defined by nn_plan_bytes and
 * nn_plan_align on any backend. */
#define NN_BACKEND_CALLS(X, P)                                                                                         \
    X(P, int, device_open, (const struct nn_device_options *opt, struct nn_device **out, char *err, size_t err_len))   \
    X(P, void, device_close, (struct nn_device * dev))                                                                 \
    X(P, void, device_info, (const struct nn_device *dev, struct nn_device_info *out))                                 \
    X(P, void, device_memory, (const struct nn_device *dev, struct nn_device_memory *out))                             \
    X(P, int, list_devices, (FILE * out, char *err, size_t err_len))                                                   \
    X(P, int, device_classes, (enum nn_device_class * out, int max, char *err, size_t err_len))                        \
    X(P, int, self_check, (const struct nn_device_options *opt, FILE *out, char *err, size_t err_len))                 \
    X(P, int, bench_ops,                                                                                               \
      (const struct nn_device_options *opt, const char *dir, bool fp16_math, int runs, FILE *out, char *err,           \
       size_t err_len))                                                                                                \
    X(P, int, session_create,                                                                                          \
      (struct nn_device * dev, const struct nn_session_options *opt, struct nn_session **out, char *err,               \
       size_t err_len))                                                                                                \
    X(P, void, session_destroy, (struct nn_session * s))                                                               \
    X(P, struct nn_plan *, session_plan,                                                                               \
      (struct nn_session * s, enum nn_net_id net, const int64_t shape[4], char *err, size_t err_len))                  \
    X(P, void, session_pin, (struct nn_session * s, struct nn_plan * plan, bool pinned))                               \
    X(P, void, session_plan_ahead, (struct nn_session * s, const struct nn_plan_request *requests, int n))             \
    X(P, uint64_t, session_plan_bytes, (struct nn_session * s, enum nn_net_id net, const int64_t shape[4]))            \
    X(P, uint64_t, plan_bytes, (const struct nn_plan *plan))                                                           \
    X(P, uint64_t, plan_align, (const struct nn_plan *plan))                                                           \
    X(P, const struct pvk_shape *, plan_input_shape, (const struct nn_plan *plan))                                     \
    X(P, const struct pvk_shape *, plan_output_shape, (const struct nn_plan *plan))                                    \
    X(P, uint64_t, session_memory_limit, (const struct nn_session *s))                                                 \
    X(P, uint64_t, session_memory_held, (const struct nn_session *s))                                                  \
    X(P, int, session_run, (struct nn_session * s, const struct nn_run *run, char *err, size_t err_len))               \
    X(P, double, session_gpu_ms, (const struct nn_session *s))                                                         \
    X(P, const float *, session_output, (struct nn_session * s, int k, float **owned, char *err, size_t err_len))      \
    X(P, int, session_read_output, (struct nn_session * s, int k, float *dst, char *err, size_t err_len))              \
    X(P, int, session_argmax, (const struct nn_session *s, int k, const int32_t **index, const float **value))

#define NN_BACKEND_MEMBER(P, ret, call, params) ret(*call) params;
#define NN_BACKEND_PROTOTYPE(P, ret, call, params) ret P##call params;
#define NN_BACKEND_ENTRY(P, ret, call, params) .call = P##call,

struct nn_backend {
    enum nn_backend_kind kind;
    NN_BACKEND_CALLS(NN_BACKEND_MEMBER, _)
};

/* A backend's table: `const struct nn_backend nn_backend_x = NN_BACKEND_TABLE(KIND, nn_x_);`. */
#define NN_BACKEND_TABLE(kind_, P)                                                                                     \
    {                                                                                                                  \
        .kind = kind_, NN_BACKEND_CALLS(NN_BACKEND_ENTRY, P)                                                           \
    }

/* The backend whose device opt chooses (NN_BACKEND_AUTO: the device is opened to see which, and
 * closed), and opt with that backend named in `chosen`. Returns 0, or -1 with a one-line reason. */
int nn_backend_choose(const struct nn_device_options *opt, const struct nn_backend **out,
                      struct nn_device_options *chosen, char *err, size_t err_len);

/* Vulkan: src/nn/gpu (device.c, session.c, bench_ops.c). */
NN_BACKEND_CALLS(NN_BACKEND_PROTOTYPE, nn_vulkan_)
extern const struct nn_backend nn_backend_vulkan;
/* CPU on oneDNN: src/nn/cpu (device_cpu.c, session_cpu.c, bench_ops_cpu.c). */
NN_BACKEND_CALLS(NN_BACKEND_PROTOTYPE, nn_cpu_)
extern const struct nn_backend nn_backend_cpu;

#endif
