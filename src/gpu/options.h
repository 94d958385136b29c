/* The options a context runs with: what the caller asked for in gpu_options, with the
 * environment filling in what it left open. This is the one place of the GPU layer that reads
 * the environment, once per context (and once per gpu_list_devices). */
#ifndef PPOCR_GPU_OPTIONS_H
#define PPOCR_GPU_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "gpu/context.h"

struct gpu_settings {
    int device_index;             /* -1: the best device */
    bool gpus_only;               /* gpu_options.gpus_only */
    bool validate;                /* gpu_options.validate, else PPOCR_VK_VALIDATE */
    bool force_fp32;              /* or PPOCR_VK_FORCE_FP32 */
    bool no_push_descriptors;     /* or PPOCR_VK_NO_PUSH_DESCRIPTORS */
    bool no_mapped_device_memory; /* or PPOCR_VK_NO_MAPPED_DEVICE */
    uint64_t pool_cap;            /* else PPOCR_VK_POOL_CAP; 0: no cap */
    uint64_t max_buffer_range;    /* else PPOCR_VK_MAX_BUFFER_RANGE; 0: the device's own */
    char cache_dir[900];          /* else PPOCR_CACHE_DIR, $XDG_CACHE_HOME/ppocr-vk or
                                    * $HOME/.cache/ppocr-vk; "": no disk cache */
    uint32_t timeout_ms;          /* else PPOCR_VK_TIMEOUT_MS; 0: the device kind's default */
    int spin_us;                  /* else PPOCR_VK_SPIN_US; -1: the device kind's default */
    int prebuild;                 /* else PPOCR_VK_PREBUILD; -1: the device kind's default */
    unsigned queues;              /* else PPOCR_VK_QUEUES, else 1; at most GPU_MAX_QUEUES */
};

/* `opt` may be NULL: gpu_options_default's. Safe on several threads at once as long as nobody
 * changes the environment meanwhile (getenv). */
void gpu_settings_from_env(const struct gpu_options *opt, struct gpu_settings *out);

#endif
