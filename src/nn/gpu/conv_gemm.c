#include "nn/gpu/conv_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pipeline.h"
#include "gpu/transfer.h"
#include "nn/gpu/half.h"

/* Tiled kernel: 16 invocations across N, each with 4 rows x 4 columns, so a workgroup of
 * 4 BM invocations covers BM x 64. BM follows OC when the weights fix it: the det stem and the
 * narrow projections (OC 8-32) would otherwise leave most of a 64-row tile idle. */
#define TILED_BN 64u
#define TILED_BK 16u
#define TILED_LX 16u
/* CPU kernel: lavapipe turns every buffer load into one scalar load per SIMD lane, so the
 * register tile is as large as pays: 8 x 4 outputs cost 12 loads per k for 32 FMAs (4 x 4: 8 for
 * 16); larger tiles spill. */
#define CPU_LX 32u
#define CPU_TM 8u
#define CPU_TN 4u
/* Cooperative-matrix kernel: 2 x 2 subgroups of 32, each 32 x 32 outputs (2 x 2 fragments). */
#define COOPMAT_BM 64u
#define COOPMAT_BN 64u

static bool has_coopmat_16x16x16(const struct gpu_caps *caps)
{
    if (!caps->coopmat_nv || !caps->shader_fp16 || !caps->storage_16bit || caps->subgroup_size != 32)
        return false;
    for (uint32_t i = 0; i < caps->coopmat_shape_count; i++) {
        const struct gpu_coopmat_shape *s = &caps->coopmat_shapes[i];
        if (s->m == 16 && s->n == 16 && s->k == 16 && s->fp32_accumulate)
            return true;
    }
    return false;
}

int conv_gemm_create(const struct nn_gpu_config *cfg, const struct conv_gemm_desc *d, struct conv_gemm *out,
                     char *err, size_t err_len)
{
    const struct gpu_caps *caps = gpu_context_caps(cfg->ctx);
    const bool f16 = cfg->act_dtype == NN_F16;
    *out = (struct conv_gemm){0};
    uint32_t lx, ly, bm, bn, bk = TILED_BK;
    /* PPOCR_VK_GEMM_KERNEL=tiled|cpu overrides the device class (and leaves cooperative matrices
     * out), so that the tests run every kernel on any device. */
    const char *force = getenv("PPOCR_VK_GEMM_KERNEL");
    if (force && !*force)
        force = NULL;
    bool cpu_kernel = force && !strcmp(force, "tiled") ? false : force && !strcmp(force, "cpu") ? true : caps->is_cpu;
    if (cpu_kernel) {
        out->shader = f16 ? "gemm_cpu_f16" : "gemm_cpu";
        lx = CPU_LX;
        ly = 1;
        bm = CPU_TM;
        bn = CPU_TN;
        out->bm = bm;
        out->bn = lx * bn;
    } else {
        out->shader = f16 ? "gemm_f16" : "gemm";
        bm = d->m_hint && d->m_hint <= 16 ? 16 : d->m_hint && d->m_hint <= 32 ? 32 : 64;
        bn = TILED_BN;
        lx = TILED_LX;
        ly = bm / 4;
        out->bm = bm;
        out->bn = bn;
    }
    uint32_t spec[17] = {lx, ly, bm, bn, bk, d->mode, d->bias, d->act, conv_float_bits(d->act_alpha),
                         conv_float_bits(d->act_beta), d->residual, d->kh, d->kw, d->sh, d->sw, d->dh, d->dw};
    struct gpu_pipeline_desc pd = {.shader = out->shader, .spec = spec, .spec_count = 17, .buffer_count = 5,
                                   .push_bytes = sizeof(struct conv_gemm_push)};
    if (gpu_pipeline_get(cfg->ctx, &pd, &out->pipeline) != GPU_OK) {
        snprintf(err, err_len, "gemm pipeline %s: %s", out->shader, gpu_last_error());
        return -1;
    }
    if (!force && f16 && d->allow_coopmat && d->mode == CONV_GEMM_PLAIN && has_coopmat_16x16x16(caps)) {
        uint32_t cspec[17] = {128, 1, COOPMAT_BM, COOPMAT_BN, 16, d->mode, d->bias, d->act,
                              conv_float_bits(d->act_alpha), conv_float_bits(d->act_beta), d->residual,
                              1, 1, 1, 1, 1, 1};
        struct gpu_pipeline_desc cd = {.shader = "gemm_coopmat_f16", .spec = cspec, .spec_count = 17,
                                       .buffer_count = 5, .push_bytes = sizeof(struct conv_gemm_push),
                                       .subgroup_size = caps->subgroup_size_control ? 32 : 0};
        /* A driver that lists the extension but cannot build the kernel keeps the tiled one. */
        if (gpu_pipeline_get(cfg->ctx, &cd, &out->coopmat) != GPU_OK) {
            fprintf(stderr, "ppocr-vk: cooperative-matrix GEMM unavailable, using the tiled kernel: %s\n",
                    gpu_last_error());
            out->coopmat = NULL;
        } else {
            out->coopmat_bm = COOPMAT_BM;
            out->coopmat_bn = COOPMAT_BN;
        }
    }
    return 0;
}

int conv_gemm_record(const struct conv_gemm *g, struct gpu_cmd *cmd, const struct gpu_binding bind[5],
                     const struct conv_gemm_push *push, uint32_t z_count, const char *label, char *err,
                     size_t err_len)
{
    if (push->M == 0 || push->N == 0 || push->K == 0 || z_count == 0) {
        snprintf(err, err_len, "%s: empty GEMM (M %u, N %u, K %u, batches %u)", label, push->M, push->N,
                 push->K, z_count);
        return -1;
    }
    /* The cooperative-matrix kernel pays off once a tile is mostly full. */
    bool coop = g->coopmat && push->b_sn == 1 && push->M >= 32 && push->K >= 16;
    const struct gpu_pipeline *p = coop ? g->coopmat : g->pipeline;
    uint32_t bm = coop ? g->coopmat_bm : g->bm, bn = coop ? g->coopmat_bn : g->bn;
    struct gpu_dispatch d = {.pipeline = p, .buffers = bind, .push = push,
                             .groups = {(push->N + bn - 1) / bn, (push->M + bm - 1) / bm, z_count},
                             .label = label};
    if (gpu_cmd_dispatch(cmd, &d) != GPU_OK) {
        snprintf(err, err_len, "%s: %s", label, gpu_last_error());
        return -1;
    }
    return 0;
}

int conv_upload(const struct nn_gpu_config *cfg, const float *data, size_t n, bool force_f32,
                struct gpu_buffer *out, char *err, size_t err_len)
{
    const bool f16 = cfg->act_dtype == NN_F16 && !force_f32;
    size_t bytes = n * (f16 ? 2 : 4);
    if (gpu_buffer_alloc(cfg->ctx, GPU_MEMORY_DEVICE, bytes, out) != GPU_OK) {
        snprintf(err, err_len, "weights (%zu bytes): %s", bytes, gpu_last_error());
        return -1;
    }
    const void *src = data;
    uint16_t *halves = NULL;
    if (f16) {
        halves = malloc(n * sizeof *halves);
        if (!halves) {
            gpu_buffer_free(out);
            snprintf(err, err_len, "weights: out of host memory");
            return -1;
        }
        nn_floats_to_halves(data, halves, n);
        src = halves;
    }
    int rc = gpu_upload(cfg->ctx, out, 0, src, bytes);
    free(halves);
    if (rc != GPU_OK) {
        gpu_buffer_free(out);
        snprintf(err, err_len, "weights upload: %s", gpu_last_error());
        return -1;
    }
    return 0;
}
