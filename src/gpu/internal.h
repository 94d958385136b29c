/* What the files of the GPU layer share with each other and with nobody else. */
#ifndef PPOCR_GPU_INTERNAL_H
#define PPOCR_GPU_INTERNAL_H

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/shader_ids.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct gpu_pool;
struct gpu_pipeline;

struct gpu_context {
    struct gpu_options opt; /* resolved: environment already applied */
    VkInstance instance;
    VkDebugUtilsMessengerEXT messenger;
    VkPhysicalDevice physical;
    VkDevice device;
    VkQueue queue;
    uint32_t queue_family;
    struct gpu_caps caps;
    bool lost; /* VK_ERROR_DEVICE_LOST seen: every later call fails fast */
    uint64_t timeout_ns, spin_ns;
    PFN_vkCmdPushDescriptorSetKHR push_descriptor_set; /* NULL when not used */

    struct gpu_pool *pools[2]; /* indexed by enum gpu_memory */

    VkPipelineCache pipeline_cache;
    char cache_path[1024];     /* "" when the disk cache is off */
    uint64_t cache_loaded_sum; /* checksum of the data read at creation, 0 if none */
    size_t cache_loaded_size;
    struct gpu_pipeline **pipelines;
    unsigned pipeline_count, pipeline_capacity;

    /* one-off copies for gpu_upload / gpu_download through staging memory */
    VkCommandPool transfer_pool;
    VkCommandBuffer transfer_cmd;
    VkFence transfer_fence;

    /* Several engines on several threads may share a context: the queue, the pipeline table and
     * the staging copies each have a lock (the pools have their own). Taken in this order only:
     * transfer_lock, then queue_lock. */
    pthread_mutex_t queue_lock, pipeline_lock, transfer_lock;
};

struct gpu_pipeline {
    enum gpu_shader_id shader_id;
    char shader[64]; /* its name, for messages and profiles */
    uint32_t spec[32];
    unsigned spec_count, buffer_count, push_bytes;
    uint32_t subgroup_size;
    uint32_t texel_mask;   /* gpu_pipeline_desc.texel_mask */
    bool push_descriptors; /* the set layout is a push-descriptor layout */
    VkDescriptorSetLayout set_layout;
    VkPipelineLayout layout;
    VkPipeline pipeline;
};

/* validation.c */
bool gpu_validation_layer_present(void);
/* Extends an instance create-info chain with sync validation and a messenger that counts. */
void gpu_validation_instance_chain(VkInstanceCreateInfo *ci, VkValidationFeaturesEXT *features,
                                   VkDebugUtilsMessengerCreateInfoEXT *messenger);
int gpu_validation_messenger_create(VkInstance instance, VkDebugUtilsMessengerEXT *out);
void gpu_validation_messenger_destroy(VkInstance instance, VkDebugUtilsMessengerEXT messenger);

/* pool.c */
int gpu_pools_create(struct gpu_context *ctx);
void gpu_pools_destroy(struct gpu_context *ctx);

/* pipeline.c, pipeline_cache.c */
int gpu_pipeline_cache_open(struct gpu_context *ctx);
void gpu_pipeline_cache_close(struct gpu_context *ctx);
void gpu_pipelines_destroy(struct gpu_context *ctx);

/* transfer.c */
void gpu_transfer_destroy(struct gpu_context *ctx);

/* Turns a failed result into a status, marking the context lost on VK_ERROR_DEVICE_LOST. */
int gpu_ctx_fail_vk(struct gpu_context *ctx, VkResult r, const char *doing);
/* Submits one command buffer to the compute queue, signalling `fence` (reset here). */
int gpu_ctx_submit(struct gpu_context *ctx, VkCommandBuffer cb, VkFence fence, const char *what);
/* Waits on `fence` within the context's timeout. */
int gpu_ctx_wait(struct gpu_context *ctx, VkFence fence, const char *what);

#endif
