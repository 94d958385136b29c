/* The Vulkan instance, the chosen device with its compute queues, and what that device can do.
 * Everything else in the GPU layer (pool, pipelines, command buffers) hangs off a context.
 *
 * The pieces of a context, each using only those before it (taking them as parameters):
 *   options (the environment) -> device -> queue -> pool -> pipeline_cache -> pipeline
 *   -> pipeline_variants -> transfer -> context (the owner) -> cmd, selftest.
 *
 * Threads: one context may serve several engines on several threads at once. Its caps and
 * settings are fixed at creation. Every call that takes a context may run on several threads at
 * once (gpu_buffer_alloc/free, gpu_pool_*, gpu_pipeline_*, gpu_upload/download, gpu_cmd_create),
 * and so may gpu_cmd_* on different command buffers. What they share is locked: each pool has a
 * lock, and so do the pipeline table, the staging copies and each queue. Only the staging lock is
 * ever held while another is taken, and then only a queue's: staging, then queue. A gpu_cmd,
 * and a buffer's contents, are used by one thread at a time (the caller sees to it).
 * gpu_context_create may run on any thread; gpu_context_destroy runs once no other thread uses
 * the context. */
#ifndef PPOCR_GPU_CONTEXT_H
#define PPOCR_GPU_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <vulkan/vulkan.h>

struct gpu_context;

/* A blocking fence wait can wake well after the GPU finished (polling shortened the sample
 * page's end-to-end time: BENCHMARKS.md); a CPU device needs the cores for itself. */
#define GPU_DEFAULT_SPIN_US 3000

struct gpu_options {
    int device_index;             /* -1: the best device; N: vkEnumeratePhysicalDevices' N-th */
    bool gpus_only;               /* device_index -1: never a CPU driver such as lavapipe */
    int validate;                 /* -1: PPOCR_VK_VALIDATE=1 decides; 0 off; 1 on */
    bool force_fp32;              /* also PPOCR_VK_FORCE_FP32=1: report no fp16 to callers */
    bool no_push_descriptors;     /* also PPOCR_VK_NO_PUSH_DESCRIPTORS=1: use descriptor pools */
    bool no_mapped_device_memory; /* also PPOCR_VK_NO_MAPPED_DEVICE=1: never map device memory,
                                   * so the staging path of discrete GPUs runs everywhere */
    uint64_t pool_cap;            /* bytes each pool may hand out; 0: PPOCR_VK_POOL_CAP or none */
    uint64_t max_buffer_range;    /* act as if maxStorageBufferRange were at most this, so that work
                                * cut to fit a small device is cut (and tested) on any device;
                                * 0: PPOCR_VK_MAX_BUFFER_RANGE or the device's own */
    const char *cache_dir;        /* pipeline cache folder; NULL: PPOCR_CACHE_DIR, XDG, ~/.cache;
                              * "": no disk cache */
    uint32_t timeout_ms;          /* longest fence wait before GPU_ERR_TIMEOUT; 0: PPOCR_VK_TIMEOUT_MS,
                              * else 120 s on a GPU and 30 min on a CPU device */
    int spin_us;                  /* poll a fence this long before a blocking wait; -1: PPOCR_VK_SPIN_US,
                              * else GPU_DEFAULT_SPIN_US on a GPU and none on a CPU device */
    int prebuild;                 /* build the pipeline variants the last run used ahead, on threads of
                                   * their own: -1: PPOCR_VK_PREBUILD, else on a GPU and not on a CPU
                                   * device (which compiles each, cache or not); 0 off; 1 on */
    unsigned queues;              /* compute queues to make, at most the family's and GPU_MAX_QUEUES,
                                   * handed out in turn to gpu_context_take_queue's callers (so that
                                   * their work need not wait behind one another's barriers);
                                   * 0: PPOCR_VK_QUEUES, else 1 (on the H200 every count above 1
                                   * ran folders slower and started slower: BENCHMARKS.md) */
};

#define GPU_MAX_QUEUES 16u

enum gpu_device_kind {
    GPU_DEVICE_OTHER,
    GPU_DEVICE_DISCRETE,
    GPU_DEVICE_INTEGRATED,
    GPU_DEVICE_VIRTUAL,
    GPU_DEVICE_CPU
};

/* One fp16 shape a cooperative-matrix extension offers: C[MxN] += A[MxK] * B[KxN]. */
struct gpu_coopmat_shape {
    uint32_t m, n, k;
    bool fp32_accumulate;
};

/* Read once at context creation. The *_fp16 / *_int8 flags are already false when fp16 was
 * forced off, so callers choose precision from these alone. */
struct gpu_caps {
    char device_name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
    char driver_name[VK_MAX_DRIVER_NAME_SIZE];
    char driver_info[VK_MAX_DRIVER_INFO_SIZE];
    enum gpu_device_kind kind;
    bool is_cpu;
    uint32_t api_version, driver_version, vendor_id, device_id;
    uint8_t device_uuid[VK_UUID_SIZE];
    uint8_t pipeline_cache_uuid[VK_UUID_SIZE];

    bool storage_16bit; /* storageBuffer16BitAccess, enabled */
    bool storage_8bit;  /* storageBuffer8BitAccess, enabled */
    bool shader_fp16;   /* shaderFloat16, enabled */
    bool shader_int8;   /* shaderInt8, enabled */
    bool shader_int64;

    uint32_t subgroup_size;
    VkSubgroupFeatureFlags subgroup_ops; /* supported in compute */
    bool subgroup_size_control;          /* enabled; min/max below are then meaningful */
    uint32_t min_subgroup_size, max_subgroup_size;
    bool push_descriptors; /* enabled and used by recorded dispatches */

    uint32_t max_shared_memory;
    uint32_t max_workgroup_size[3];
    uint32_t max_workgroup_invocations;
    uint32_t max_workgroup_count[3];
    uint32_t max_push_constants;
    uint64_t max_storage_buffer_range;
    uint64_t min_storage_buffer_offset_alignment;
    uint32_t max_texel_buffer_elements;
    uint64_t min_texel_buffer_offset_alignment;
    uint64_t non_coherent_atom_size;

    bool timestamps;        /* the compute queue can write timestamps */
    float timestamp_period; /* nanoseconds per tick */
    uint32_t timestamp_valid_bits;
    uint32_t queue_count; /* compute queues made (gpu_options.queues, as the family allows) */

    bool coopmat_khr, coopmat_nv; /* extension present */
    uint32_t coopmat_shape_count; /* fp16 shapes of the NV or KHR extension, subgroup scope */
    struct gpu_coopmat_shape coopmat_shapes[16];

    VkPhysicalDeviceMemoryProperties memory;
    uint64_t device_local_bytes; /* largest device-local heap */
    bool unified_memory;         /* a DEVICE_LOCAL|HOST_VISIBLE|HOST_COHERENT type covers it */
};

/* Fills defaults: the best device, and every other field left for the environment (read by
 * gpu_context_create) or the device to decide. */
void gpu_options_default(struct gpu_options *opt);

/* Creates a context (opt may be NULL for defaults). On failure *out is NULL and
 * gpu_last_error() says why in one line. */
int gpu_context_create(const struct gpu_options *opt, struct gpu_context **out);

/* Waits for the device, frees everything, writes the pipeline cache if it changed. NULL is ok. */
void gpu_context_destroy(struct gpu_context *ctx);

const struct gpu_caps *gpu_context_caps(const struct gpu_context *ctx);

/* The next of the context's compute queues, in turn (any thread), for gpu_cmd_create_on: a
 * caller whose command buffers depend on one another in submission order keeps to one. */
unsigned gpu_context_take_queue(struct gpu_context *ctx);

/* Whether callers should run nets in fp16: the device has 16-bit storage and fp16 arithmetic,
 * is not a CPU (lavapipe emulates fp16 slower than fp32) and fp16 was not forced off. */
bool gpu_prefers_fp16(const struct gpu_context *ctx);

/* Whether a kernel of `workgroup` invocations can shuffle between subgroup lanes with every lane
 * present: shuffles in compute shaders, and one subgroup size, which divides the workgroup. */
bool gpu_shuffles_fill_workgroup(const struct gpu_caps *caps, uint32_t workgroup);

/* Raw handles, for code in this layer and for tests. */
VkDevice gpu_context_device(const struct gpu_context *ctx);
VkPhysicalDevice gpu_context_physical_device(const struct gpu_context *ctx);

/* Prints every Vulkan device, one line each (any thread; it makes its own instance), for `ppocr-vk --list-devices`:
 * "<index>: <name> (<type>) driver <name> <info/version>, <MiB> MiB device-local".
 * Returns the device count, or a negative status with gpu_last_error(). */
int gpu_list_devices(FILE *out);
/* The kind of each Vulkan device, in gpu_list_devices' order, into out[0..max). Returns the count
 * (which may pass max), or a GPU_ERR status. */
int gpu_device_kinds(enum gpu_device_kind *out, int max);

/* "discrete" / "integrated" / "virtual" / "cpu" / "other". */
const char *gpu_device_kind_name(enum gpu_device_kind kind);

#endif
