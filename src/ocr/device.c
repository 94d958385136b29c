/* Device listing and the GPU self-check, for the command's --list-devices and --self-check. */
#include <stdio.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/selftest.h"
#include "ocr/engine.h"

int ocr_list_devices(FILE *out, char *err, size_t err_len)
{
    int n = gpu_list_devices(out);
    if (n < 0) {
        snprintf(err, err_len, "%s", gpu_last_error());
        return -1;
    }
    if (n == 0) {
        snprintf(err, err_len, "no Vulkan device found (install a GPU driver, or mesa-vulkan-drivers for lavapipe)");
        return -1;
    }
    return n;
}

int ocr_self_check(const struct ocr_options *opt, FILE *out, char *err, size_t err_len)
{
    struct gpu_options gopt;
    gpu_options_default(&gopt);
    gopt.device_index = opt->device_index;
    gopt.force_fp32 = opt->force_fp32;
    struct gpu_context *ctx = NULL;
    if (gpu_context_create(&gopt, &ctx)) {
        snprintf(err, err_len, "%s", gpu_last_error());
        return -1;
    }
    const struct gpu_caps *c = gpu_context_caps(ctx);
    fprintf(out, "device: %s (%s), driver %s %s\n", c->device_name, gpu_device_kind_name(c->kind), c->driver_name,
            c->driver_info);
    fprintf(out, "precision: %s; subgroup %u; shared memory %u KiB; cooperative matrix %s\n",
            gpu_prefers_fp16(ctx) ? "fp16" : "fp32", c->subgroup_size, c->max_shared_memory / 1024,
            c->coopmat_khr ? "KHR" : c->coopmat_nv ? "NV" : "none");
    int rc = 0;
    if (gpu_selftest(ctx)) {
        snprintf(err, err_len, "%s", gpu_last_error());
        rc = -1;
    } else {
        fprintf(out, "self-check: ok\n");
    }
    gpu_context_destroy(ctx);
    return rc;
}
