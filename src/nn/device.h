/* The device the nets run on, as the OCR pipeline sees it: opened once per process (or per
 * --device), shared by the net sessions of sibling engines, and described for the user. A
 * backend implements these calls (nn/backend.h): Vulkan (src/nn/gpu/device.c: a Vulkan context)
 * or the CPU (src/nn/cpu/device_cpu.c: oneDNN's threads).
 *
 * Threads: open, close, list and self-check run on one thread; info and memory may be called
 * from any thread while sessions run on the device. */
#ifndef PPOCR_NN_DEVICE_H
#define PPOCR_NN_DEVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct nn_device;

enum nn_backend_kind {
    NN_BACKEND_VULKAN, /* a Vulkan device: a GPU, or lavapipe (Mesa's CPU driver) */
    NN_BACKEND_CPU,    /* the nets on the CPU through oneDNN, fp32 (src/nn/cpu) */
    /* Only in nn_device_options, never a device's: the best Vulkan GPU, else the CPU backend where
     * it is built, else a Vulkan CPU driver (lavapipe). */
    NN_BACKEND_AUTO,
};

struct nn_device_options {
    enum nn_backend_kind backend;
    int index;       /* Vulkan: -1 for the best device; AUTO: an index means Vulkan */
    bool gpus_only;  /* Vulkan, index -1: never a CPU driver (lavapipe) */
    bool force_fp32; /* never use fp16 storage or arithmetic (the CPU backend is fp32 anyway) */
    int threads;     /* CPU: the threads a run uses; 0: all cores, or OMP_NUM_THREADS where it is set */
};

enum nn_device_class { NN_DEVICE_CPU, NN_DEVICE_DISCRETE_GPU, NN_DEVICE_OTHER_GPU };

struct nn_device_info {
    char description[320]; /* "<name> (<kind>), <fp16 (det fp32)|fp32>[, N queues]"; "CPU (oneDNN, N threads), fp32" */
    enum nn_device_class device_class;
    uint64_t max_buffer_bytes; /* the largest tensor or image the device binds at once */
};

/* Returns 0, or -1 with a one-line reason. */
int nn_device_open(const struct nn_device_options *opt, struct nn_device **out, char *err, size_t err_len);
void nn_device_close(struct nn_device *dev);
void nn_device_info(const struct nn_device *dev, struct nn_device_info *out);
/* The backend that runs dev: the client's own work around the nets follows it. */
enum nn_backend_kind nn_device_backend(const struct nn_device *dev);

/* Device memory the process holds on it, from the buffer pools: now and at the most so far. On
 * the CPU backend device_* are the sessions' workspaces (the nets' memory, in host memory), host_*
 * stay 0 (nothing is staged). */
struct nn_device_memory {
    uint64_t device_in_use, device_peak; /* device-local */
    uint64_t host_in_use, host_peak;     /* host-visible (staging, readbacks) */
};
void nn_device_memory(const struct nn_device *dev, struct nn_device_memory *out);

/* The class of each of the backend's devices, in the order of nn_device_options.index, into
 * out[0..max). Returns the count (which may pass max), or -1 with a one-line reason. */
int nn_device_classes(enum nn_backend_kind backend, enum nn_device_class *out, int max, char *err, size_t err_len);
/* Prints every Vulkan device with its index (what nn_device_options.index takes), then the CPU
 * backend as "cpu: ..." where it is built. Returns the count, or -1 with a one-line reason (also
 * when there is none). */
int nn_list_devices(FILE *out, char *err, size_t err_len);
/* Opens the device opt chooses (of opt->backend), prints it and its capabilities, runs a small
 * computation on it and compares with plain C. Returns 0, or -1 with a one-line reason. */
int nn_self_check(const struct nn_device_options *opt, FILE *out, char *err, size_t err_len);

#endif
