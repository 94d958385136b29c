/* CONV2D: folded BatchNorm is already in the weights; bias, activation and the optional residual
 * are fused into the one dispatch. Four kernels, chosen in create() from the attributes:
 *   pointwise (1x1, stride 1, no padding, one group): a GEMM W[OC][IC] x X[IC][HW] per image;
 *   depthwise (group == IC == OC): shaders/conv_dw.glsl, kernel, stride and dilation specialised;
 *   general (full and grouped convolutions): implicit GEMM over (OC/g) x (OH OW) with
 *   K = IC/g KH KW, the im2col matrix gathered on the fly, one batch per (image, group);
 *   direct (on CPU devices, every one-group convolution, pointwise and SE-gated ones included):
 *   shaders/conv_direct.glsl, register tiles of output channels x row outputs over row
 *   segments, weights packed [OC/TM][IC][KH][KW][TM]; a pointwise convolution runs as one row
 *   of H W outputs per plane, its segments loaded as 4-vectors where aligned. On GPUs the same
 *   kernel, with small tiles and split channel sums, takes a general convolution's dispatches
 *   that have enough tiles (det's and rec's 3x3 and 1x3 neck convolutions); the GEMM the rest,
 *   and every dispatch the GEMM runs on cooperative matrices (fp16 nets on devices with them:
 *   rec's 1x3 neck convolutions, in K slices; conv_gemm.c says what they gain). In fp32 nets,
 *   the stride-1 ones among the direct kernel's dispatches with enough workgroups (det's neck at
 *   240 x 240) go to shaders/conv_tile.glsl instead, tiles staged in shared memory, with the
 *   direct kernel's weights.
 * Weights stay in their model layout (OC rows of IC/g KH KW, k-contiguous as the kernels read
 * them; GEMM rows zero-padded to a multiple of 4), in the net's storage precision; the bias
 * stays fp32. An affine the net fused from the following op (w->post_scale, w->post_shift) is
 * applied last, in the same dispatch: its scale and shift follow the bias in the bias buffer. A
 * pointwise convolution can also apply the gate of the SE block before it (w->input_gate): the
 * GEMM scales each input channel's row by gate[image][channel] as it loads it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pipeline.h"
#include "nn/gpu/conv_gemm.h"
#include "nn/gpu/gpu_op.h"
#include "nn/gpu/op_helpers.h"
#include "nn/shape.h"

enum conv_kind { CONV_POINTWISE, CONV_DEPTHWISE, CONV_GENERAL, CONV_DIRECT };

/* Depthwise on CPU devices: 64 invocations, each 16 neighbouring outputs of a row (loads rather
 * than arithmetic bound the kernel there, and a longer row segment shares more taps: on lavapipe
 * 16 gained much over 8, longer segments little more; BENCHMARKS.md). On GPUs each invocation
 * takes a block of rows as well, whose input rows it loads once for every output row they reach:
 * rec's 5 x 5 convolutions at 32 lines ran fastest with 4 rows of 4 outputs, det's fp32 3 x 3
 * ones with 2 x 2 outputs in workgroups of 128 (BENCHMARKS.md). */
#define DW_LX 64u
#define DW_CPU_OUTW 16u
/* Row blocks only where one row per invocation already gives this many invocations: below it
 * the GPU is not full, and longer invocations only add latency (rec's 5 x 5 convolutions for one
 * line, 57,600 invocations, are slower with 4 rows than with one: BENCHMARKS.md). */
#define DW_ROWS_MIN_ITEMS 131072u

static void dw_tile(bool cpu, enum nn_dtype dtype, const struct pvk_conv_params *a, uint32_t *lx, uint32_t *outw,
                    uint32_t *rows)
{
    if (cpu) {
        *lx = DW_LX, *outw = DW_CPU_OUTW, *rows = 1;
        return;
    }
    const bool f32 = dtype == NN_F32;
    *lx = f32 ? 128 : 64;
    *outw = f32 ? 2 : 4;
    *rows = a->sh != 1 || a->kh < 3 ? 1 : a->kh >= 5 ? 4 : 2;
}
/* Direct: 32 invocations, each TM output channels x 8 outputs of a row. On lavapipe, for det's
 * 3x3 neck convolutions (96 -> 24 channels at 240 x 240), 12 x 8 beat 8 x 4, 8 x 8, 12 x 12 and
 * 16 x 8, and all of them beat the implicit GEMM (BENCHMARKS.md). TM is 12 where it divides OC, else
 * 8 (a multiple of 4: the weights load as 4-vectors). Pointwise convolutions, whose row segments
 * hold no taps to share, gain from more output channels instead (rec at 32 lines, up to 24 x 8:
 * BENCHMARKS.md), so there TM is the largest of 24, 16 and 12 that divides OC. Past about 192
 * accumulators lavapipe's compiled kernel falls off a cliff (16 x 16, 12 x 24: BENCHMARKS.md).
 * Where the subgroup variant shares each weight load among the lanes, every convolution takes 24
 * channels where they divide OC: det's 3x3 neck convolutions at 960 x 960 gain from it
 * (BENCHMARKS.md), and 16 did no better than 12 for det's other convolutions. */
#define DIRECT_LX 32u
#define DIRECT_TN 8u

static uint32_t direct_tm(int oc, bool pointwise, bool shared_weights)
{
    if ((pointwise || shared_weights) && oc % 24 == 0)
        return 24u;
    if (pointwise && oc % 16 == 0)
        return 16u;
    return oc % 12 == 0 ? 12u : 8u;
}

/* Direct on GPUs: 8 output channels x 2 outputs of a row per invocation, and KS (up to 16)
 * invocations sharing each tile over interleaved input channels, each summing at least
 * DIRECT_GPU_MIN_IC of them; workgroups of 256. It takes one-group convolutions with at least
 * DIRECT_GPU_MIN_K terms per output that are not pointwise, in dispatches of DIRECT_GPU_MIN_TILES
 * tiles or more. It beat the implicit GEMM on det's 3x3 neck convolutions (96 -> 24 channels) from
 * 240 x 240 down to 30 x 30 (1,350 tiles) and on rec's 1x3 ones over 480 and 960 channels at 32
 * lines, but lost on those for one line (160 tiles). Larger tiles (12 x 4 outputs per invocation)
 * lost, and fewer invocations per tile (KS 8) lost everywhere (BENCHMARKS.md). */
#define DIRECT_GPU_TM 8u
#define DIRECT_GPU_TN 2u
#define DIRECT_GPU_WG 256u
#define DIRECT_SPLITS 5
#define DIRECT_GPU_MIN_IC 8u
#define DIRECT_GPU_MIN_K 512u
#define DIRECT_GPU_MIN_TILES 1024u

/* Tiles through shared memory (shaders/conv_tile.glsl) for fp32 nets' stride-1 convolutions that
 * the direct kernel would take, where a dispatch has TILE_MIN_GROUPS workgroups or more: TILE_R
 * outputs of a row x 8 channels per invocation, TILE_TX x TILE_TH invocations per block of 8
 * channels, up to TILE_NB blocks per workgroup, TILE_ICC input channels per chunk. For det's 3x3
 * neck convolutions (96 -> 24 channels) at 240 x 240 (240 workgroups) these tiles beat the direct
 * kernel, and 8 outputs per invocation, 16 channels per chunk or 4 rows per tile did worse; at
 * 120 x 120 (60 workgroups) the direct kernel won, so smaller maps keep it (BENCHMARKS.md). */
#define TILE_R 4u
#define TILE_TX 8u
#define TILE_TH 8u
#define TILE_NB 3u
#define TILE_ICC 8u
#define TILE_MIN_GROUPS 200u
_Static_assert(DIRECT_GPU_TM == 8u, "shaders/conv_tile.glsl reads the weights in blocks of 8 channels");

/* Shared memory the tile kernel declares (shaders/conv_tile.glsl: its input window and the
 * chunk's weights, in 4-vectors): a 5 x 5 kernel over 3 blocks takes 33,024 bytes, past the
 * 32 KiB some devices have. */
static uint32_t tile_shared_bytes(uint32_t kh, uint32_t kw, uint32_t blocks)
{
    const uint32_t win_w4 = (TILE_TX * TILE_R + kw - 1u + 3u) / 4u;
    return 16u * (TILE_ICC * (TILE_TH + kh - 1u) * win_w4 + TILE_ICC * kh * kw * blocks * 2u);
}

struct conv2d_state {
    struct nn_gpu_config cfg;
    enum conv_kind kind;
    int oc, icg, group;
    struct gpu_buffer weight, bias;
    bool has_bias, post_affine, input_gate;
    struct conv_gemm gemm;                /* pointwise, general */
    const struct gpu_pipeline *dw;        /* depthwise (one row per invocation), direct */
    const struct gpu_pipeline *dw_rows_p; /* depthwise, dw_rows rows per invocation, built on first use */
    uint32_t dw_spec[15];                 /* depthwise: the specialization, for dw_rows_p */
    uint32_t dw_outw, dw_rows, dw_lx;
    bool dw_texel;                          /* depthwise: x read as texels (dw_texel) */
    const struct gpu_pipeline *dw_plain;    /* ... and for inputs past the texel limit, built on first use */
    const struct gpu_pipeline *direct_vec4; /* direct, pointwise: row segments as 4-vectors */
    /* Direct with GPU tiles: always (kind CONV_DIRECT, the tests' "gpudirect"), or beside the GEMM
     * of a general convolution (kind CONV_GENERAL) for dispatches with enough tiles. */
    bool direct_gpu;
    bool direct_sg;                  /* direct, CPU tiles: the subgroup variant (direct_subgroup) */
    struct gpu_buffer direct_weight; /* beside the GEMM: the weights packed for the direct kernel */
    const struct gpu_pipeline *direct_split[DIRECT_SPLITS]; /* by log2 of KS, built on first use */
    uint32_t direct_spec[19]; /* direct: the specialization, for the variants built on first use */
    bool direct_flat;         /* direct, pointwise: each plane as one row */
    uint32_t direct_tm;       /* direct: output channels per invocation */
    /* Shared-memory tiles (fp32, stride 1), with the direct kernel's weights, built on first use */
    bool tile_ok;
    uint32_t tile_spec[13];
    const struct gpu_pipeline *tile;
};

struct direct_push {
    uint32_t IC, H, W, OC, OH, OW;
    uint32_t pad_t, pad_l;
    uint32_t x_off, x_img;
    uint32_t y_off, y_img;
    uint32_t r_off, r_img;
    uint32_t OWG, items;
};

struct dw_push {
    uint32_t C, H, W, OH, OW;
    uint32_t pad_t, pad_l;
    uint32_t x_off, x_img;
    uint32_t y_off, y_img;
    uint32_t r_off, r_img;
    uint32_t OWG, OHB, items;
};

static void conv2d_destroy(void *state)
{
    struct conv2d_state *s = state;
    if (!s)
        return;
    gpu_buffer_free(&s->weight);
    gpu_buffer_free(&s->direct_weight);
    gpu_buffer_free(&s->bias);
    free(s);
}

/* The kernel PPOCR_VK_GEMM_KERNEL (the tests' switch, cfg->force) forces, or NULL. */
static const char *forced_kernel(const struct nn_gpu_config *cfg)
{
    return cfg->force.gemm_kernel[0] ? cfg->force.gemm_kernel : NULL;
}

/* Whether PPOCR_VK_GEMM_KERNEL (the tests' switch) asks for the direct kernel with CPU tiles:
 * "direct" (its subgroup variant where the device has one) or "direct1" (never that variant). */
static bool force_direct_cpu(const char *force)
{
    return !strcmp(force, "direct") || !strcmp(force, "direct1");
}

/* The direct kernel serves CPU devices; PPOCR_VK_GEMM_KERNEL (the tests' switch) picks it
 * anywhere with "direct" or "direct1" (a CPU device's kernels: with the GEMM's register tiles)
 * and leaves it out with any other kernel. */
static bool use_direct(const struct nn_gpu_config *cfg)
{
    const char *force = forced_kernel(cfg);
    if (force)
        return force_direct_cpu(force);
    return gpu_context_caps(cfg->ctx)->is_cpu;
}

/* Whether the direct kernel's CPU tiles take its subgroup variant (shaders/conv_direct.glsl,
 * DIRECT_SUBGROUP): shuffles over a whole workgroup, and 64-bit integers for fp32's 8-float
 * loads. */
static bool direct_subgroup(const struct nn_gpu_config *cfg)
{
    const char *force = forced_kernel(cfg);
    if (force && !strcmp(force, "direct1"))
        return false;
    const struct gpu_caps *c = gpu_context_caps(cfg->ctx);
    return gpu_shuffles_fill_workgroup(c, DIRECT_LX) && (cfg->act_dtype == NN_F16 || c->shader_int64);
}

/* The depthwise kernel's tile: CPU devices' (long rows, one row per invocation) or GPUs'; the
 * tests' PPOCR_VK_GEMM_KERNEL picks the CPU tile with "cpu", "cpu1", "direct" and "direct1" on
 * any device. */
static bool dw_cpu_tiles(const struct nn_gpu_config *cfg)
{
    const char *force = forced_kernel(cfg);
    if (force)
        return !strcmp(force, "cpu") || !strcmp(force, "cpu1") || force_direct_cpu(force);
    return gpu_context_caps(cfg->ctx)->is_cpu;
}

/* Whether the depthwise kernel's CPU tiles read x as texels and store 8-float groups
 * (conv_dw_texel.comp, fp32, 64-bit integers);
 * PPOCR_VK_GEMM_KERNEL's "cpu1" and "direct1" (the tests' CPU kernels without their lavapipe
 * variants) keep the storage buffer. */
static bool dw_texel(const struct nn_gpu_config *cfg, bool cpu_tiles)
{
    const char *force = forced_kernel(cfg);
    if (force && (!strcmp(force, "cpu1") || !strcmp(force, "direct1")))
        return false;
    return cpu_tiles && cfg->act_dtype == NN_F32 && gpu_context_caps(cfg->ctx)->shader_int64 && DW_CPU_OUTW % 8u == 0;
}

/* The direct kernel specialised with spec into *slot, unless already there; NULL with the
 * driver's reason after `what` in err. */
static const struct gpu_pipeline *direct_build(struct conv2d_state *s, const uint32_t spec[19],
                                               const struct gpu_pipeline **slot, const char *what, char *err,
                                               size_t err_len)
{
    if (*slot)
        return *slot;
    const bool f16 = s->cfg.act_dtype == NN_F16;
    const enum gpu_shader_id shader = s->direct_sg ? (f16 ? GPU_SHADER_conv_direct_sg_f16 : GPU_SHADER_conv_direct_sg)
                                      : f16        ? GPU_SHADER_conv_direct_f16
                                                   : GPU_SHADER_conv_direct;
    struct gpu_pipeline_desc pd = {
        .shader = shader, .spec = spec, .spec_count = 19, .buffer_count = 6, .push_bytes = sizeof(struct direct_push)};
    if (gpu_pipeline_get(s->cfg.ctx, &pd, slot) != GPU_OK) {
        snprintf(err, err_len, "%s: %s", what, gpu_last_error());
        return NULL;
    }
    return *slot;
}

/* The direct kernel with GPU tiles and 2^split invocations per tile, built on first use. */
static const struct gpu_pipeline *direct_split(struct conv2d_state *s, unsigned split, char *err, size_t err_len)
{
    if (s->direct_split[split])
        return s->direct_split[split];
    uint32_t spec[19];
    memcpy(spec, s->direct_spec, sizeof spec);
    spec[17] = 1u << split;
    spec[0] = DIRECT_GPU_WG >> split;
    char what[64];
    snprintf(what, sizeof what, "conv2d: direct kernel, split %u", 1u << split);
    return direct_build(s, spec, &s->direct_split[split], what, err, err_len);
}

/* The direct kernel with row segments loaded one element at a time, built on first use. */
static const struct gpu_pipeline *direct_plain(struct conv2d_state *s, char *err, size_t err_len)
{
    return direct_build(s, s->direct_spec, &s->dw, "conv2d: direct kernel", err, err_len);
}

/* Whether PPOCR_VK_GEMM_KERNEL=gpudirect (the tests) asks for the direct kernel with GPU tiles
 * for every one-group convolution and dispatch, pointwise ones included; "gputile" does too, and
 * takes the shared-memory tiles for every dispatch they can run. */
static bool force_direct_gpu(const struct nn_gpu_config *cfg)
{
    const char *force = forced_kernel(cfg);
    return force && (!strcmp(force, "gpudirect") || !strcmp(force, "gputile"));
}

static bool force_tile(const struct nn_gpu_config *cfg)
{
    const char *force = forced_kernel(cfg);
    return force && !strcmp(force, "gputile");
}

/* The shared-memory tile kernel, built on first use. */
static const struct gpu_pipeline *tile_pipeline(struct conv2d_state *s, char *err, size_t err_len)
{
    if (s->tile)
        return s->tile;
    struct gpu_pipeline_desc pd = {.shader = GPU_SHADER_conv_tile,
                                   .spec = s->tile_spec,
                                   .spec_count = 13,
                                   .buffer_count = 5,
                                   .push_bytes = sizeof(struct direct_push)};
    if (gpu_pipeline_get(s->cfg.ctx, &pd, &s->tile) != GPU_OK) {
        snprintf(err, err_len, "conv2d: shared-memory tile kernel: %s", gpu_last_error());
        return NULL;
    }
    return s->tile;
}

/* Whether a one-group convolution keeps the direct kernel with GPU tiles beside its GEMM (any
 * forced kernel leaves it out). */
static bool direct_gpu_beside_gemm(const struct nn_gpu_config *cfg, bool pointwise, uint32_t k)
{
    if (forced_kernel(cfg) || gpu_context_caps(cfg->ctx)->is_cpu)
        return false;
    return !pointwise && k >= DIRECT_GPU_MIN_K;
}

/* Weights packed [OC/TM][IC][KH][KW][TM] for the direct kernel, output channels past OC zero. */
static int upload_direct_weights(const struct nn_gpu_config *cfg, const float *w, size_t oc, size_t k, size_t tm,
                                 struct gpu_buffer *out, char *err, size_t err_len)
{
    const size_t blocks = (oc + tm - 1) / tm;
    float *packed = calloc(blocks * k * tm, sizeof *packed);
    if (!packed) {
        snprintf(err, err_len, "out of memory");
        return -1;
    }
    for (size_t o = 0; o < oc; o++)
        for (size_t j = 0; j < k; j++)
            packed[((o / tm) * k + j) * tm + o % tm] = w[o * k + j];
    int rc = conv_upload(cfg, packed, blocks * k * tm, false, out, err, err_len);
    free(packed);
    return rc;
}

/* The depthwise kernel with `rows` rows per invocation, x as texels or not, into *slot unless
 * already there; NULL with the driver's reason in err. */
static const struct gpu_pipeline *dw_pipeline(struct conv2d_state *s, uint32_t rows, bool texel,
                                              const struct gpu_pipeline **slot, char *err, size_t err_len)
{
    if (*slot)
        return *slot;
    const enum gpu_shader_id shader =
        texel ? GPU_SHADER_conv_dw_texel : nnh_precision_shader(&s->cfg, NNH_SHADERS_F16A(conv_dw));
    uint32_t spec[15];
    memcpy(spec, s->dw_spec, sizeof spec);
    spec[14] = rows;
    struct gpu_pipeline_desc pd = {.shader = shader,
                                   .spec = spec,
                                   .spec_count = 15,
                                   .buffer_count = 5,
                                   .push_bytes = sizeof(struct dw_push),
                                   .texel_mask = texel ? 1u : 0u};
    if (gpu_pipeline_get(s->cfg.ctx, &pd, slot) != GPU_OK) {
        snprintf(err, err_len, "conv2d: depthwise kernel, %u rows: %s", rows, gpu_last_error());
        return NULL;
    }
    return *slot;
}

static int conv2d_create(const struct nn_gpu_config *cfg, const struct pvk_op *op, const struct nn_gpu_weights *w,
                         void **state, char *err, size_t err_len)
{
    *state = NULL;
    struct pvk_conv_params cp;
    pvk_conv_params_from_op(op, &cp);
    const struct pvk_conv_params *a = &cp;
    if (a->kh < 1 || a->kw < 1 || a->sh < 1 || a->sw < 1 || a->dh < 1 || a->dw < 1 || a->group < 1 || a->pad_t < 0 ||
        a->pad_l < 0 || a->pad_b < 0 || a->pad_r < 0 || (uint32_t)a->residual > PVK_RESIDUAL_BEFORE_ACT ||
        op->act >= PVK_ACT_COUNT) {
        snprintf(err, err_len, "conv2d %s: unsupported attributes", op->name);
        return -1;
    }
    const struct pvk_shape *ws = &w->shape[0];
    if (!w->data[0] || ws->ndim != 4 || ws->d[2] != a->kh || ws->d[3] != a->kw || ws->d[0] % a->group) {
        snprintf(err, err_len, "conv2d %s: weight must be [OC][IC/g][%d][%d] with OC a multiple of %d", op->name, a->kh,
                 a->kw, a->group);
        return -1;
    }
    if (w->data[1] && (w->shape[1].ndim != 1 || w->shape[1].d[0] != ws->d[0])) {
        snprintf(err, err_len, "conv2d %s: bias must be [OC]", op->name);
        return -1;
    }
    if (!w->post_scale != !w->post_shift) {
        snprintf(err, err_len, "conv2d %s: a fused affine needs both scale and shift", op->name);
        return -1;
    }
    if (w->input_gate && (a->kh != 1 || a->kw != 1 || a->sh != 1 || a->sw != 1 || a->group != 1 || a->pad_t ||
                          a->pad_l || a->pad_b || a->pad_r)) {
        snprintf(err, err_len, "conv2d %s: only a pointwise convolution takes an input gate", op->name);
        return -1;
    }
    struct conv2d_state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, err_len, "conv2d %s: out of memory", op->name);
        return -1;
    }
    s->cfg = *cfg;
    s->oc = (int)ws->d[0];
    s->icg = (int)ws->d[1];
    s->group = a->group;
    const int ic = s->icg * s->group;
    const bool no_pad = !a->pad_t && !a->pad_l && !a->pad_b && !a->pad_r;
    const bool pointwise = s->group == 1 && a->kh == 1 && a->kw == 1 && a->sh == 1 && a->sw == 1 && no_pad;
    const bool forced_direct_gpu = s->group == 1 && force_direct_gpu(cfg);
    if (pointwise && !use_direct(cfg) && !forced_direct_gpu)
        s->kind = CONV_POINTWISE;
    else if (s->icg == 1 && s->group == ic && s->oc == ic)
        s->kind = CONV_DEPTHWISE;
    else if (s->group == 1 && (use_direct(cfg) || forced_direct_gpu))
        s->kind = CONV_DIRECT;
    else
        s->kind = CONV_GENERAL;
    s->direct_gpu = s->kind == CONV_DIRECT ? forced_direct_gpu
                                           : s->kind == CONV_GENERAL && s->group == 1 &&
                                                 direct_gpu_beside_gemm(cfg, pointwise, (size_t)ic * a->kh * a->kw);

    const size_t k = (size_t)s->icg * a->kh * a->kw;
    if (s->kind == CONV_DEPTHWISE) {
        if (conv_upload(cfg, w->data[0], (size_t)s->oc * k, false, &s->weight, err, err_len))
            goto fail;
    } else if (s->kind == CONV_DIRECT) {
        s->direct_sg = !s->direct_gpu && direct_subgroup(cfg);
        s->direct_tm = s->direct_gpu ? DIRECT_GPU_TM : direct_tm(s->oc, pointwise, s->direct_sg);
        if (upload_direct_weights(cfg, w->data[0], (size_t)s->oc, k, s->direct_tm, &s->weight, err, err_len))
            goto fail;
    } else {
        /* GEMM rows padded to a multiple of 4 with zeros, for aligned vec4 loads */
        const size_t row = conv_gemm_row((uint32_t)k);
        float *packed = calloc((size_t)s->oc * row, sizeof *packed);
        if (!packed) {
            snprintf(err, err_len, "conv2d %s: out of memory", op->name);
            goto fail;
        }
        for (size_t o = 0; o < (size_t)s->oc; o++)
            memcpy(packed + o * row, w->data[0] + o * k, k * sizeof *packed);
        int rc = conv_upload(cfg, packed, (size_t)s->oc * row, false, &s->weight, err, err_len);
        free(packed);
        if (rc)
            goto fail;
        if (s->direct_gpu) {
            s->direct_tm = DIRECT_GPU_TM;
            if (upload_direct_weights(cfg, w->data[0], (size_t)s->oc, k, s->direct_tm, &s->direct_weight, err, err_len))
                goto fail;
        }
    }
    s->has_bias = w->data[1] != NULL;
    s->post_affine = w->post_scale != NULL;
    s->input_gate = w->input_gate;
    if (s->post_affine) {
        /* bias (zeros when the model has none), scale, shift */
        float *packed = calloc(3 * (size_t)s->oc, sizeof *packed);
        if (!packed) {
            snprintf(err, err_len, "conv2d %s: out of memory", op->name);
            goto fail;
        }
        if (s->has_bias)
            memcpy(packed, w->data[1], (size_t)s->oc * sizeof *packed);
        memcpy(packed + s->oc, w->post_scale, (size_t)s->oc * sizeof *packed);
        memcpy(packed + 2 * s->oc, w->post_shift, (size_t)s->oc * sizeof *packed);
        int rc = conv_upload(cfg, packed, 3 * (size_t)s->oc, true, &s->bias, err, err_len);
        free(packed);
        if (rc)
            goto fail;
        s->has_bias = true;
    } else if (s->has_bias && conv_upload(cfg, w->data[1], (size_t)s->oc, true, &s->bias, err, err_len)) {
        goto fail;
    }

    if (s->kind == CONV_DEPTHWISE) {
        const bool cpu_tiles = dw_cpu_tiles(cfg);
        dw_tile(cpu_tiles, cfg->act_dtype, a, &s->dw_lx, &s->dw_outw, &s->dw_rows);
        s->dw_texel = dw_texel(cfg, cpu_tiles);
        uint32_t spec[15] = {s->dw_lx,
                             (uint32_t)a->kh,
                             (uint32_t)a->kw,
                             (uint32_t)a->sh,
                             (uint32_t)a->sw,
                             (uint32_t)a->dh,
                             (uint32_t)a->dw,
                             s->dw_outw,
                             op->act,
                             conv_float_bits(op->act_alpha),
                             conv_float_bits(op->act_beta),
                             (uint32_t)a->residual,
                             s->has_bias,
                             s->post_affine,
                             1};
        memcpy(s->dw_spec, spec, sizeof spec);
        if (!dw_pipeline(s, 1, s->dw_texel, &s->dw, err, err_len))
            goto fail;
    }
    if (s->kind == CONV_DIRECT || s->direct_gpu) {
        s->direct_flat = pointwise;
        uint32_t spec[19] = {DIRECT_LX,
                             (uint32_t)a->kh,
                             (uint32_t)a->kw,
                             (uint32_t)a->sh,
                             (uint32_t)a->sw,
                             (uint32_t)a->dh,
                             (uint32_t)a->dw,
                             s->direct_tm,
                             s->direct_gpu ? DIRECT_GPU_TN : DIRECT_TN,
                             op->act,
                             conv_float_bits(op->act_alpha),
                             conv_float_bits(op->act_beta),
                             (uint32_t)a->residual,
                             s->has_bias,
                             s->post_affine,
                             false,
                             s->input_gate,
                             1,
                             s->direct_gpu};
        memcpy(s->direct_spec, spec, sizeof spec);
        /* the tiles read the weights as packed for GPU tiles, in blocks of DIRECT_GPU_TM (8) channels */
        const uint32_t blocks = ((uint32_t)s->oc + 7u) / 8u, nb = blocks < TILE_NB ? blocks : TILE_NB;
        s->tile_ok =
            s->direct_gpu && cfg->act_dtype == NN_F32 && a->sh == 1 && a->sw == 1 && a->dh == 1 && a->dw == 1 &&
            !s->input_gate &&
            tile_shared_bytes((uint32_t)a->kh, (uint32_t)a->kw, nb) <= gpu_context_caps(cfg->ctx)->max_shared_memory;
        const uint32_t tile_spec[13] = {TILE_TX,
                                        TILE_TH,
                                        nb,
                                        (uint32_t)a->kh,
                                        (uint32_t)a->kw,
                                        TILE_R,
                                        TILE_ICC,
                                        op->act,
                                        conv_float_bits(op->act_alpha),
                                        conv_float_bits(op->act_beta),
                                        (uint32_t)a->residual,
                                        s->has_bias,
                                        s->post_affine};
        memcpy(s->tile_spec, tile_spec, sizeof tile_spec);
        /* One variant now, so that a device that cannot build the kernel fails here: without a
         * split on GPU tiles; for a pointwise convolution the one with 4-vector segments, which
         * most of its dispatches take, the other built on first use (on lavapipe each variant's
         * compilation costs start-up time (BENCHMARKS.md), and the sample left 14 of them unused);
         * else the plain one. */
        if (s->direct_gpu) {
            if (!direct_split(s, 0, err, err_len))
                goto fail;
        } else {
            spec[15] = pointwise;
            char what[96];
            snprintf(what, sizeof what, "conv2d %s", op->name);
            if (!direct_build(s, spec, pointwise ? &s->direct_vec4 : &s->dw, what, err, err_len))
                goto fail;
        }
    }
    if (s->kind == CONV_POINTWISE || s->kind == CONV_GENERAL) {
        struct conv_gemm_desc d = {
            .mode = s->kind == CONV_POINTWISE ? CONV_GEMM_PLAIN : CONV_GEMM_IM2COL,
            .bias = s->has_bias ? CONV_GEMM_BIAS_ROW : CONV_GEMM_BIAS_NONE,
            .act = op->act,
            .act_alpha = op->act_alpha,
            .act_beta = op->act_beta,
            .residual = (uint32_t)a->residual,
            .kh = (uint32_t)a->kh,
            .kw = (uint32_t)a->kw,
            .sh = (uint32_t)a->sh,
            .sw = (uint32_t)a->sw,
            .dh = (uint32_t)a->dh,
            .dw = (uint32_t)a->dw,
            .m_hint = (uint32_t)(s->oc / s->group),
            .allow_coopmat = true,
            .post_affine = s->post_affine,
            .affine_c = (uint32_t)s->oc,
            .b_gate = s->input_gate,
        };
        if (conv_gemm_create(cfg, &d, &s->gemm, err, err_len))
            goto fail;
    }
    *state = s;
    return 0;
fail:
    conv2d_destroy(s);
    return -1;
}

static bool dense_nchw(const struct nn_gpu_tensor *t)
{
    return t->shape.ndim == 4 && (t->dst_channels == 0 || t->dst_channels == t->shape.d[1]);
}

static int conv2d_record(void *state, const struct pvk_op *op, struct gpu_cmd *cmd, const struct nn_gpu_tensor *in,
                         int n_in, const struct nn_gpu_tensor *out, int n_out, char *err, size_t err_len)
{
    struct conv2d_state *s = state;
    struct pvk_conv_params cp;
    pvk_conv_params_from_op(op, &cp);
    const struct pvk_conv_params *a = &cp;
    const bool has_res = a->residual != PVK_RESIDUAL_NONE;
    const int want_in = 1 + has_res + s->input_gate;
    if (n_in != want_in || n_out < 1) {
        snprintf(err, err_len, "conv2d %s: needs %d input(s) and one output", op->name, want_in);
        return -1;
    }
    const struct nn_gpu_tensor *x = &in[0], *y = &out[0], *r = has_res ? &in[1] : NULL;
    const struct nn_gpu_tensor *gate = s->input_gate ? &in[n_in - 1] : NULL;
    const enum nn_dtype dt = s->cfg.act_dtype;
    const int64_t n = x->shape.d[0], ic = x->shape.d[1], h = x->shape.d[2], wd = x->shape.d[3];
    int oh = 0, ow = 0;
    if (x->shape.ndim != 4 || h < 1 || wd < 1 || h > INT32_MAX || wd > INT32_MAX ||
        pvk_conv2d_out_hw((int)h, (int)wd, a, &oh, &ow) || !dense_nchw(x) || ic != (int64_t)s->icg * s->group ||
        y->shape.ndim != 4 || y->shape.d[0] != n || y->shape.d[1] != s->oc || y->shape.d[2] != oh ||
        y->shape.d[3] != ow || oh < 1 || ow < 1) {
        snprintf(err, err_len, "conv2d %s: shapes do not match the weights and attributes", op->name);
        return -1;
    }
    if (x->dtype != dt || y->dtype != dt || (r && r->dtype != dt)) {
        snprintf(err, err_len, "conv2d %s: tensors must be in the net's storage precision", op->name);
        return -1;
    }
    if (r && (!dense_nchw(r) || r->shape.d[0] != n || r->shape.d[1] != s->oc || r->shape.d[2] != oh ||
              r->shape.d[3] != ow)) {
        snprintf(err, err_len, "conv2d %s: residual must be a dense [N][OC][OH][OW]", op->name);
        return -1;
    }
    if (gate && (gate->dtype != NN_F32 || gate->elem_offset || gate->shape.ndim != 2 || gate->shape.d[0] != n ||
                 gate->shape.d[1] != ic)) {
        snprintf(err, err_len, "conv2d %s: the input gate must be fp32 [N][IC] from element 0", op->name);
        return -1;
    }
    const int64_t dc = y->dst_channels ? y->dst_channels : s->oc;
    if (dc < s->oc) {
        snprintf(err, err_len, "conv2d %s: dst_channels %lld below OC %d", op->name, (long long)dc, s->oc);
        return -1;
    }
    const uint32_t hw = (uint32_t)(h * wd), ohw = (uint32_t)(oh * ow);
    struct gpu_binding bind[6] = {
        gpu_bind(&s->weight),
        gpu_bind(x->buf),
        gpu_bind(y->buf),
        gpu_bind(s->has_bias ? &s->bias : &s->weight),
        gpu_bind(r ? r->buf : &s->weight),
        gpu_bind(gate ? gate->buf : &s->weight),
    };
    const char *label = op->name[0] ? op->name : "conv2d";

    if (s->kind == CONV_DEPTHWISE) {
        bind[0] = gpu_bind(x->buf);
        bind[1] = gpu_bind(&s->weight);
        struct dw_push p = {
            .C = (uint32_t)ic,
            .H = (uint32_t)h,
            .W = (uint32_t)wd,
            .OH = (uint32_t)oh,
            .OW = (uint32_t)ow,
            .pad_t = (uint32_t)a->pad_t,
            .pad_l = (uint32_t)a->pad_l,
            .x_off = x->elem_offset,
            .x_img = (uint32_t)ic * hw,
            .y_off = y->elem_offset,
            .y_img = (uint32_t)dc * ohw,
            .r_off = r ? r->elem_offset : 0,
            .r_img = (uint32_t)s->oc * ohw,
        };
        p.OWG = ((uint32_t)ow + s->dw_outw - 1) / s->dw_outw;
        uint64_t items = (uint64_t)n * ic * (uint32_t)oh * p.OWG;
        const struct gpu_pipeline *pipe = s->dw;
        uint32_t rows = 1;
        if (s->dw_rows > 1 && items >= DW_ROWS_MIN_ITEMS) {
            if (!(pipe = dw_pipeline(s, s->dw_rows, s->dw_texel, &s->dw_rows_p, err, err_len)))
                return -1;
            rows = s->dw_rows;
        }
        if (s->dw_texel && (x->buf->size + 15) / 16 > gpu_context_caps(s->cfg.ctx)->max_texel_buffer_elements &&
            !(pipe = dw_pipeline(s, rows, false, &s->dw_plain, err, err_len)))
            return -1;
        p.OHB = ((uint32_t)oh + rows - 1) / rows;
        items = (uint64_t)n * ic * p.OHB * p.OWG;
        if (items > UINT32_MAX / 2) {
            snprintf(err, err_len, "conv2d %s: %lld x %lld planes of %d x %d are too many", op->name, (long long)n,
                     (long long)ic, oh, ow);
            return -1;
        }
        p.items = (uint32_t)items;
        struct gpu_dispatch d = {.pipeline = pipe, .buffers = bind, .push = &p, .label = label};
        nnh_grid_1d(items, s->dw_lx, d.groups);
        if (gpu_cmd_dispatch(cmd, &d) != GPU_OK) {
            snprintf(err, err_len, "conv2d %s: %s", op->name, gpu_last_error());
            return -1;
        }
        return 0;
    }

    const bool has_direct = s->kind == CONV_DIRECT || s->direct_gpu;
    /* the push constants of the direct kernel and of the shared-memory tiles */
    const struct direct_push dense = {
        .IC = (uint32_t)ic,
        .H = (uint32_t)h,
        .W = (uint32_t)wd,
        .OC = (uint32_t)s->oc,
        .OH = (uint32_t)oh,
        .OW = (uint32_t)ow,
        .pad_t = (uint32_t)a->pad_t,
        .pad_l = (uint32_t)a->pad_l,
        .x_off = x->elem_offset,
        .x_img = (uint32_t)ic * hw,
        .y_off = y->elem_offset,
        .y_img = (uint32_t)dc * ohw,
        .r_off = r ? r->elem_offset : 0,
        .r_img = (uint32_t)s->oc * ohw,
    };
    if (s->tile_ok) {
        const uint32_t tw = s->tile_spec[0] * s->tile_spec[5], th = s->tile_spec[1], nb = s->tile_spec[2];
        const uint32_t per_image = (((uint32_t)s->oc + 7u) / 8u + nb - 1u) / nb;
        const uint64_t gx = ((uint32_t)ow + tw - 1) / tw, gy = ((uint32_t)oh + th - 1) / th,
                       gz = (uint64_t)n * per_image;
        if (gz <= UINT16_MAX && (force_tile(&s->cfg) || gx * gy * gz >= TILE_MIN_GROUPS)) {
            bind[0] = gpu_bind(x->buf);
            bind[1] = gpu_bind(s->kind == CONV_DIRECT ? &s->weight : &s->direct_weight);
            const struct gpu_pipeline *pipe = tile_pipeline(s, err, err_len);
            if (!pipe)
                return -1;
            struct gpu_dispatch d = {.pipeline = pipe,
                                     .buffers = bind,
                                     .push = &dense,
                                     .label = label,
                                     .groups = {(uint32_t)gx, (uint32_t)gy, (uint32_t)gz}};
            if (gpu_cmd_dispatch(cmd, &d) != GPU_OK) {
                snprintf(err, err_len, "conv2d %s: %s", op->name, gpu_last_error());
                return -1;
            }
            return 0;
        }
    }
    const uint32_t ocb = has_direct ? ((uint32_t)s->oc + s->direct_tm - 1) / s->direct_tm : 0;
    const uint32_t direct_tn = has_direct ? s->direct_spec[8] : 1;
    const uint64_t direct_tiles = (uint64_t)n * (s->direct_flat ? 1 : (uint32_t)oh) *
                                  (((s->direct_flat ? ohw : (uint32_t)ow) + direct_tn - 1) / direct_tn) * ocb;
    const uint32_t ocg = (uint32_t)(s->oc / s->group), icg = (uint32_t)s->icg;
    const uint32_t k = icg * (uint32_t)(a->kh * a->kw);
    const struct conv_gemm_push gemm_push = {
        .M = ocg,
        .N = ohw,
        .K = k,
        .zdiv = (uint32_t)s->group,
        .a_off = 0,
        .a_sm = conv_gemm_row(k),
        .a_z1 = 0,
        .a_z2 = ocg * conv_gemm_row(k),
        .b_off = x->elem_offset,
        .b_sk = hw,
        .b_sn = 1,
        .b_z1 = (uint32_t)ic * hw,
        .b_z2 = icg * hw,
        .c_off = y->elem_offset,
        .c_sm = ohw,
        .c_z1 = (uint32_t)dc * ohw,
        .c_z2 = ocg * ohw,
        .r_off = r ? r->elem_offset : 0,
        .r_sm = ohw,
        .r_z1 = (uint32_t)s->oc * ohw,
        .r_z2 = ocg * ohw,
        .bias_z2 = ocg,
        .H = (uint32_t)h,
        .W = (uint32_t)wd,
        .OW = (uint32_t)ow,
        .pad_t = (uint32_t)a->pad_t,
        .pad_l = (uint32_t)a->pad_l,
    };
    const uint32_t gemm_batches = (uint32_t)(n * s->group);
    /* cooperative matrices, where the GEMM takes them, before the direct kernel's GPU tiles */
    const bool gemm_first = s->kind == CONV_GENERAL && conv_gemm_coopmat(&s->gemm, &gemm_push);
    if (s->kind == CONV_DIRECT || (s->direct_gpu && !gemm_first && direct_tiles >= DIRECT_GPU_MIN_TILES)) {
        bind[0] = gpu_bind(x->buf);
        bind[1] = gpu_bind(s->kind == CONV_DIRECT ? &s->weight : &s->direct_weight);
        struct direct_push p = dense;
        if (s->direct_flat) { /* a pointwise convolution as one row of H W per plane */
            p.H = p.OH = 1;
            p.W = hw;
            p.OW = ohw;
        }
        const uint32_t roh = p.OH, row = p.OW;
        p.OWG = (row + direct_tn - 1) / direct_tn;
        /* GPU tiles take the images on x as well (shaders/conv_direct.glsl says why not always) */
        const uint64_t items = (uint64_t)(s->direct_gpu ? n : 1) * roh * p.OWG;
        if (items > UINT32_MAX / 2) {
            snprintf(err, err_len, "conv2d %s: %lld images of %u x %u outputs are too many", op->name, (long long)n,
                     roh, row);
            return -1;
        }
        p.items = (uint32_t)items;
        const struct gpu_pipeline *pipe = s->dw;
        uint32_t lx = DIRECT_LX;
        if (s->direct_gpu) {
            /* the channel sums split as far as each part keeps DIRECT_GPU_MIN_IC channels */
            unsigned split = 0;
            while (split + 1 < DIRECT_SPLITS && (uint64_t)ic >> (split + 1) >= DIRECT_GPU_MIN_IC)
                split++;
            if (!(pipe = direct_split(s, split, err, err_len)))
                return -1;
            lx = DIRECT_GPU_WG >> split;
        } else if (s->direct_vec4 && x->elem_offset % 4 == 0 && hw % 4 == 0) {
            /* every segment starts on a multiple of 4 elements: at x_off plus multiples of the plane */
            pipe = s->direct_vec4;
        } else if (!(pipe = direct_plain(s, err, err_len))) {
            return -1;
        }
        struct gpu_dispatch d = {.pipeline = pipe, .buffers = bind, .push = &p, .label = label};
        uint32_t grid[3];
        nnh_grid_1d(items, lx, grid);
        d.groups[0] = grid[0], d.groups[1] = ocb, d.groups[2] = s->direct_gpu ? grid[1] : (uint32_t)n;
        if (!s->direct_gpu && grid[1] > 1) {
            snprintf(err, err_len, "conv2d %s: %u x %u outputs per image are too many", op->name, roh, row);
            return -1;
        }
        if (gpu_cmd_dispatch(cmd, &d) != GPU_OK) {
            snprintf(err, err_len, "conv2d %s: %s", op->name, gpu_last_error());
            return -1;
        }
        return 0;
    }

    return conv_gemm_record(&s->gemm, cmd, bind, &gemm_push, gemm_batches, label, err, err_len) ? -1 : 0;
}

const struct nn_gpu_op_impl nn_gpu_conv2d_impl = {
    .create = conv2d_create, .record = conv2d_record, .destroy = conv2d_destroy};
