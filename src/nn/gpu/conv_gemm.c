#include "nn/gpu/conv_gemm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/pipeline.h"
#include "gpu/shaders.h"
#include "gpu/transfer.h"
#include "nn/gpu/op_helpers.h"
#include "nn/half.h"

/* Tiled kernel: 16 invocations across N, each with 4 rows x 4 columns, so a workgroup of
 * 4 BM invocations covers BM x 64. BM follows OC when the weights fix it: the det stem and the
 * narrow projections (OC 8-32) would otherwise leave most of a 64-row tile idle. */
#define TILED_BN 64u
#define TILED_BK 16u
#define TILED_LX 16u
/* Fewer big tiles than this leave an H200's 132 SMs (2 tiles each) part idle: use small ones.
 * Not where one row of tiles covers M and either there is a tile per SM already or B is an
 * im2col gather: there the big tile's reuse of each loaded row wins (det's 3x3 convolutions to
 * 24 channels at 60 x 60 and 120 x 120, cls's 1x1 convolutions to 16-48 channels at 32 lines),
 * but small tiles win for det's plain 1x1 to 42 channels at 60 x 60, 57 big tiles
 * (BENCHMARKS.md). */
#define SMALL_TILE_BELOW 264u
#define ONE_TILE_PER_SM 132u
/* CPU kernel: lavapipe turns every buffer load into one scalar load per SIMD lane, so the
 * register tile is as large as pays: 8 x 4 outputs cost 12 loads per k for 32 FMAs (4 x 4: 8 for
 * 16); larger tiles spill. */
#define CPU_LX 32u
#define CPU_TM 8u
#define CPU_TN 4u
/* K-split kernel: 4 x 4 outputs per workgroup of 256, so 16 invocations share each output's K.
 * It takes over when even small tiles leave most of an H200's 132 SMs idle and K is long enough
 * for 16 slices to pay for the reduction: the SVTR neck's 1x3 convolutions (K 1,440 and 2,880
 * over 60 x 40 outputs per line) otherwise run in one workgroup per line. With more tiles the
 * tiled kernel wins (det's 3x3 neck convolution, K 864, at 120 x 120 with 450 small tiles and at
 * 60 x 60 with 113; at 30 x 30, 29 small tiles, the split one wins: BENCHMARKS.md). */
#define KSPLIT_LX 256u
#define KSPLIT_BM 4u
#define KSPLIT_BN 4u
#define KSPLIT_BELOW 64u
#define KSPLIT_MIN_K 512u
/* With a K this long it also takes up to two small tiles per SM: rec's 1x3 convolutions at 32
 * lines (128 small tiles, K 1,440 and 2,880) are faster split than tiled (BENCHMARKS.md). */
#define KSPLIT_LONG_K 1024u
#define KSPLIT_LONG_K_BELOW 264u
/* And where one small tile would run K alone: cls's classifier, 32 x 2 outputs
 * over K 200, was slow in one workgroup (BENCHMARKS.md). */
#define KSPLIT_FEW_TILES 2u
#define KSPLIT_FEW_TILES_MIN_K 128u
/* Sliced small tiles: SLICES groups of small-tile invocations per workgroup, each over every
 * SLICES-th K step, where small tiles are chosen, there are fewer than SLICED_BELOW of them and K
 * is at least SLICED_MIN_K. Two slices beat plain small tiles for det's 1x1 convolutions at
 * 30 x 30 (87-348 small tiles, K 192-384, with or without an SE gate) and at 60 x 60 with 226
 * small tiles; four slices lost to two everywhere, and with 678 small tiles (det's 1x1
 * convolutions at 60 x 60, K 192) two slices lost too: there the SMs are already busy
 * (BENCHMARKS.md). */
#define SLICES 2u
#define SLICED_BELOW 512u
#define SLICED_MIN_K 128u
/* shared memory of the sliced small tiles (fp32 tiles of at most 32 x 32 and the partial sums)
 * within what every Vulkan device has (16 KiB); the workgroup is 8 x 8 x SLICES invocations */
_Static_assert(SLICES *TILED_BK *(32u + 1u + 32u) * 4u + (SLICES - 1u) * 32u * 32u * 4u <= 16384u,
               "sliced small tiles need more shared memory than every device has");
/* Cooperative-matrix kernel. It needs a few fragments of K to pay for its shared-memory staging
 * and epilogue: the tiled kernel was faster at K 32 (cls's expansions to 200 channels) and K 64
 * (rec's 64-channel convolutions), the cooperative one from K 120 (rec's attention matmuls):
 * BENCHMARKS.md. */
#define COOPMAT_MIN_K 96u
#define COOPMAT_BK 32u
/* Its tiles, smallest first: BM x BN outputs for LX invocations (LX / 32 subgroups as 2 rows;
 * each subgroup owns BM / 2 x BN / (LX / 64) outputs). A dispatch takes the largest tile that
 * still gives every SM of an H200 a workgroup, else the smallest; M of 32 always the smallest.
 * With each tile forced in turn, the largest won for rec's 1x1 convolutions and its classifier at
 * 32 lines, the smallest at one line and for rec's attention projections at 32 lines (30 big
 * tiles, 120 middle ones); a 64 x 128 tile for 4 subgroups lost to these everywhere
 * (BENCHMARKS.md). */
static const struct coopmat_tile {
    uint32_t bm, bn, lx;
} COOPMAT_TILES[COOPMAT_TILE_COUNT] = {{32, 64, 128}, {64, 64, 128}, {128, 128, 256}};
#define COOPMAT_MIN_GROUPS 132u
/* An im2col B (general convolutions) with a K this long takes COOPMAT_SLICES K slices of a
 * 32 x 32 tile per workgroup, whatever the dispatch (the slices' sums are added in an order fixed
 * by their count, so a line reads the same whichever lines share its dispatch). The SVTR neck's
 * 1x3 convolutions (K 1,440 and 2,880, 60 output channels) otherwise wait on 45-90 K steps in
 * turn. For the 2,880 one, 8 slices of 32 x 32 beat the direct kernel and 4 slices of 32 x 64 at
 * 32 lines; for one line the K-split kernel is faster alone, but in the 28-line document's
 * lockstep group, where every plan's dispatch shares the GPU, the K-split and direct kernels'
 * scalar sums saturate it and the slices win by far (BENCHMARKS.md). Eight slices of 32 x 32
 * keep within 48 KiB of shared memory (40 KiB of tiles, 4.5 KiB of epilogue staging). */
static const struct coopmat_tile COOPMAT_SLICED_TILE = {32, 32, 64};
#define COOPMAT_SLICES 8u
#define COOPMAT_SLICED_MIN_K 1024u

/* Shared memory of the cooperative-matrix kernel (gemm.glsl's Tiles and Cs) for a tile in
 * `slices` K slices: the larger of the slices' staged tiles and the sums of all but the first,
 * plus the epilogue's staging. */
static uint32_t coopmat_shared_bytes(const struct coopmat_tile *t, uint32_t slices)
{
    const uint32_t warps = t->lx / 32u, wn = t->bn / (t->lx / 64u);
    const uint32_t staged = slices * (t->bm * (COOPMAT_BK / 8u + 1u) + COOPMAT_BK * (t->bn / 8u + 1u)) * 16u;
    const uint32_t sums = (slices - 1u) * t->bm * t->bn * 4u;
    return (staged > sums ? staged : sums) + warps * 16u * (wn + 4u) * 4u;
}

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

static int build(struct gpu_context *ctx, const struct conv_gemm_desc *d, enum gpu_shader_id shader, uint32_t lx,
                 uint32_t ly, uint32_t slices, uint32_t bm, uint32_t bn, uint32_t bk, bool vec4, uint32_t subgroup,
                 const struct gpu_pipeline **out)
{
    uint32_t spec[22] = {lx,
                         ly,
                         bm,
                         bn,
                         bk,
                         d->mode,
                         d->bias,
                         d->act,
                         conv_float_bits(d->act_alpha),
                         conv_float_bits(d->act_beta),
                         d->residual,
                         d->kh,
                         d->kw,
                         d->sh,
                         d->sw,
                         d->dh,
                         d->dw,
                         vec4,
                         d->post_affine,
                         d->post_affine ? d->affine_c : 1,
                         d->b_gate,
                         slices};
    struct gpu_pipeline_desc pd = {.shader = shader,
                                   .spec = spec,
                                   .spec_count = 22,
                                   .buffer_count = 6,
                                   .push_bytes = sizeof(struct conv_gemm_push),
                                   .subgroup_size = subgroup};
    return gpu_pipeline_get(ctx, &pd, out);
}

/* Whether every row and batch of A, and of a plain n-contiguous B (an im2col B when b_gathered),
 * starts on a multiple of `elems` elements, and both bindings on 16 bytes: what the kernels' vector
 * tile loads need. */
static bool operands_aligned(const struct conv_gemm_push *q, const struct gpu_binding bind[6], uint32_t elems,
                             bool b_gathered)
{
    bool a = (q->a_off | q->a_sm | q->a_z1 | q->a_z2) % elems == 0;
    bool b = b_gathered || (q->b_sn == 1 && (q->b_off | q->b_sk | q->b_z1 | q->b_z2) % elems == 0);
    return a && b && bind[0].offset % 16 == 0 && bind[1].offset % 16 == 0;
}

/* The cooperative-matrix pipeline of one tile in one K slice, or of COOPMAT_SLICED_TILE in
 * COOPMAT_SLICES (sliced), with 16-byte group loads (vec8) or without, built on first use; NULL
 * with the driver's reason in err. */
static const struct gpu_pipeline *coopmat_variant(struct conv_gemm *g, unsigned tile, bool vec8, bool sliced, char *err,
                                                  size_t err_len)
{
    const struct gpu_pipeline **p = sliced ? &g->coopmat_sliced[vec8] : &g->coopmat[tile][vec8];
    if (*p)
        return *p;
    const struct coopmat_tile *t = sliced ? &COOPMAT_SLICED_TILE : &COOPMAT_TILES[tile];
    const uint32_t subgroup = gpu_context_caps(g->ctx)->subgroup_size_control ? 32 : 0;
    if (build(g->ctx, &g->desc, GPU_SHADER_gemm_coopmat_f16, t->lx, sliced ? COOPMAT_SLICES : 1, 1, t->bm, t->bn,
              COOPMAT_BK, vec8, subgroup, p) != GPU_OK) {
        snprintf(err, err_len, "gemm pipeline gemm_coopmat_f16 %ux%u%s: %s", t->bm, t->bn, sliced ? " in K slices" : "",
                 gpu_last_error());
        return NULL;
    }
    return *p;
}

/* The pipeline of variant v, built on first use; NULL with the driver's reason in err. */
static const struct gpu_pipeline *variant(struct conv_gemm *g, enum conv_gemm_variant v, char *err, size_t err_len)
{
    if (g->variant[v])
        return g->variant[v];
    const bool vec4 = v == GEMM_TILED_VEC4 || v == GEMM_SMALL_VEC4 || v == GEMM_SLICED_VEC4;
    enum gpu_shader_id shader = g->shader;
    uint32_t lx, ly, slices = 1, bm, bn;
    if (g->cpu_kernel) {
        lx = CPU_LX, ly = 1, bm = CPU_TM, bn = CPU_TN;
    } else if (v == GEMM_TILED || v == GEMM_TILED_VEC4) {
        lx = TILED_LX, ly = g->bm / 4, bm = g->bm, bn = g->bn;
    } else if (v == GEMM_SMALL || v == GEMM_SMALL_VEC4) {
        lx = TILED_LX / 2, ly = g->small_bm / 4, bm = g->small_bm, bn = g->small_bn;
    } else if (v == GEMM_SLICED || v == GEMM_SLICED_VEC4) {
        shader = g->sliced_shader;
        lx = TILED_LX / 2, ly = g->small_bm / 4, slices = SLICES, bm = g->small_bm, bn = g->small_bn;
    } else {
        shader = g->f16 ? GPU_SHADER_gemm_ksplit_f16 : GPU_SHADER_gemm_ksplit;
        lx = KSPLIT_LX, ly = 1, bm = KSPLIT_BM, bn = KSPLIT_BN;
    }
    if (build(g->ctx, &g->desc, shader, lx, ly, slices, bm, bn, TILED_BK, vec4, 0, &g->variant[v]) != GPU_OK) {
        snprintf(err, err_len, "gemm pipeline %s: %s", gpu_shader_name(shader), gpu_last_error());
        return NULL;
    }
    return g->variant[v];
}

/* Whether the CPU kernel takes its subgroup variant (shaders/gemm.glsl, GEMM_CPU_SG): shuffles
 * over a whole workgroup, in subgroups of CPU_TM lanes or more (one lane per A row). */
static bool cpu_subgroup(const struct gpu_caps *c)
{
    return gpu_shuffles_fill_workgroup(c, CPU_LX) && c->subgroup_size >= CPU_TM;
}

int conv_gemm_create(const struct nn_gpu_config *cfg, const struct conv_gemm_desc *d, struct conv_gemm *out, char *err,
                     size_t err_len)
{
    const struct gpu_caps *caps = gpu_context_caps(cfg->ctx);
    const bool f16 = cfg->act_dtype == NN_F16;
    *out = (struct conv_gemm){0};
    out->ctx = cfg->ctx;
    out->desc = *d;
    out->f16 = f16;
    /* PPOCR_VK_GEMM_KERNEL=tiled|small|ksplit|cpu (cfg->force) overrides the device class and the tile choice
     * (and leaves cooperative matrices out), so that the tests run every kernel on any device;
     * "cpu1" is "cpu" without its subgroup variant, "direct" and "direct1" are "cpu" and "cpu1"
     * with direct convolutions (op_conv2d.c). coopmat32x64|coopmat64x64|
     * coopmat128x128 keep cooperative matrices where the device has them, with that tile for
     * every dispatch (tests and per-op benchmarks). */
    const char *force = cfg->force.gemm_kernel[0] ? cfg->force.gemm_kernel : NULL;
    out->cpu_kernel = caps->is_cpu;
    out->coopmat_tile = -1;
    for (unsigned t = 0; force && t < COOPMAT_TILE_COUNT; t++) {
        char name[32];
        snprintf(name, sizeof name, "coopmat%ux%u", COOPMAT_TILES[t].bm, COOPMAT_TILES[t].bn);
        if (!strcmp(force, name)) {
            out->coopmat_tile = (int)t;
            force = NULL;
        }
    }
    if (force) {
        out->cpu_kernel =
            !strcmp(force, "cpu") || !strcmp(force, "cpu1") || !strcmp(force, "direct") || !strcmp(force, "direct1");
        out->tiles = !strcmp(force, "tiled")    ? 1
                     : !strcmp(force, "small")  ? 2
                     : !strcmp(force, "ksplit") ? 3
                     : !strcmp(force, "sliced") ? 4
                                                : 0;
    }
    out->mode = d->mode;
    if (out->cpu_kernel) {
        const bool sg = cpu_subgroup(caps) && !(force && (!strcmp(force, "cpu1") || !strcmp(force, "direct1")));
        out->shader = sg    ? (f16 ? GPU_SHADER_gemm_cpu_sg_f16 : GPU_SHADER_gemm_cpu_sg)
                      : f16 ? GPU_SHADER_gemm_cpu_f16
                            : GPU_SHADER_gemm_cpu;
        out->bm = CPU_TM;
        out->bn = CPU_LX * CPU_TN;
    } else {
        out->shader = nnh_precision_shader(cfg, NNH_SHADERS_F16A(gemm));
        out->bm = d->m_hint && d->m_hint <= 16 ? 16 : d->m_hint && d->m_hint <= 32 ? 32 : 64;
        out->bn = TILED_BN;
        out->small_bm = out->bm < 32 ? out->bm : 32;
        out->small_bn = TILED_BN / 2;
        out->sliced_shader = nnh_precision_shader(cfg, NNH_SHADERS_F16A(gemm_sliced));
    }
    /* one variant now, so that a device that cannot build the kernel fails at net creation: on
     * CPU devices the 4-vector one, which their aligned operands take (lavapipe compiles every
     * pipeline at each start, its pipeline cache staying empty), elsewhere the plain one */
    if (!variant(out, out->cpu_kernel ? GEMM_TILED_VEC4 : GEMM_TILED, err, err_len))
        return -1;
    if (!force && f16 && d->allow_coopmat && d->mode != CONV_GEMM_DECONV && has_coopmat_16x16x16(caps)) {
        /* The kernel indexes subgroups as 32 invocations, which has_coopmat_16x16x16 checked. Its
         * pipelines are built when a recording first needs one (coopmat_pick). */
        out->has_coopmat = true;
        /* a device without room for the K slices runs a long K in one (no NVIDIA one so far) */
        const struct coopmat_tile *t = &COOPMAT_SLICED_TILE;
        out->coopmat_slices_fit = coopmat_shared_bytes(t, COOPMAT_SLICES) <= caps->max_shared_memory &&
                                  t->lx * COOPMAT_SLICES <= caps->max_workgroup_invocations &&
                                  COOPMAT_SLICES <= caps->max_workgroup_size[1];
    }
    return 0;
}

/* The cooperative-matrix pipeline for this dispatch, its tile's outputs in *bm x *bn. A driver that
 * lists the extension but cannot build the kernel keeps the tiled one: NULL, and cooperative
 * matrices are off for this GEMM from then on. */
static const struct gpu_pipeline *coopmat_pick(struct conv_gemm *g, struct gpu_cmd *cmd,
                                               const struct gpu_binding bind[6], const struct conv_gemm_push *push,
                                               uint32_t z_count, uint32_t *bm, uint32_t *bn)
{
    /* dispatches recorded side by side (plans in lockstep) share the GPU: counted together */
    const uint64_t side = gpu_cmd_side_by_side(cmd);
    const bool sliced = g->mode == CONV_GEMM_IM2COL && push->K >= COOPMAT_SLICED_MIN_K && g->coopmat_slices_fit;
    unsigned tile = 0;
    for (unsigned t = COOPMAT_TILE_COUNT - 1; t > 0 && !tile && !sliced && push->M > COOPMAT_TILES[0].bm; t--) {
        const struct coopmat_tile *c = &COOPMAT_TILES[t];
        if ((uint64_t)((push->N + c->bn - 1) / c->bn) * ((push->M + c->bm - 1) / c->bm) * z_count * side >=
            COOPMAT_MIN_GROUPS)
            tile = t;
    }
    if (g->coopmat_tile >= 0 && !sliced)
        tile = (unsigned)g->coopmat_tile;
    /* 16-byte group loads: rows and batches of A and B on multiples of 8 halves */
    char why[256];
    const bool vec8 = operands_aligned(push, bind, 8, g->mode == CONV_GEMM_IM2COL);
    const struct gpu_pipeline *p = coopmat_variant(g, tile, vec8, sliced, why, sizeof why);
    if (!p) {
        fprintf(stderr, "ppocr-vk: cooperative-matrix GEMM unavailable, using the tiled kernel: %s\n", why);
        g->has_coopmat = false;
        return NULL;
    }
    *bm = sliced ? COOPMAT_SLICED_TILE.bm : COOPMAT_TILES[tile].bm;
    *bn = sliced ? COOPMAT_SLICED_TILE.bn : COOPMAT_TILES[tile].bn;
    return p;
}

bool conv_gemm_coopmat(const struct conv_gemm *g, const struct conv_gemm_push *push)
{
    return g->has_coopmat && push->M >= 32 && push->K >= COOPMAT_MIN_K &&
           (g->mode == CONV_GEMM_IM2COL || push->b_sn == 1);
}

int conv_gemm_record(struct conv_gemm *g, struct gpu_cmd *cmd, const struct gpu_binding bind[6],
                     const struct conv_gemm_push *push, uint32_t z_count, const char *label, char *err, size_t err_len)
{
    if (push->M == 0 || push->N == 0 || push->K == 0 || z_count == 0) {
        snprintf(err, err_len, "%s: empty GEMM (M %u, N %u, K %u, batches %u)", label, push->M, push->N, push->K,
                 z_count);
        return -1;
    }
    /* Cooperative matrices pay off once tiles are mostly full and K spans a few fragments (at
     * K = 16 the shared-memory epilogue costs more than the multiply saves). */
    const struct gpu_pipeline *p = NULL;
    enum conv_gemm_variant v = GEMM_TILED;
    uint32_t bm = g->bm, bn = g->bn;
    uint64_t big_groups = (uint64_t)((push->N + bn - 1) / bn) * ((push->M + bm - 1) / bm) * z_count;
    uint64_t small_groups = g->cpu_kernel ? big_groups
                                          : (uint64_t)((push->N + g->small_bn - 1) / g->small_bn) *
                                                ((push->M + g->small_bm - 1) / g->small_bm) * z_count;
    /* an im2col B goes to cooperative matrices before the K-split kernel: their K slices take
     * its long K instead */
    const bool coopmat = conv_gemm_coopmat(g, push), im2col_coopmat = coopmat && g->mode == CONV_GEMM_IM2COL;
    if (im2col_coopmat && (p = coopmat_pick(g, cmd, bind, push, z_count, &bm, &bn))) {
        /* cooperative matrices: p, bm and bn set */
    } else if (!g->cpu_kernel &&
               (g->tiles == 3 ||
                (g->tiles == 0 && ((small_groups < KSPLIT_BELOW && push->K >= KSPLIT_MIN_K) ||
                                   (small_groups < KSPLIT_LONG_K_BELOW && push->K >= KSPLIT_LONG_K) ||
                                   (small_groups < KSPLIT_FEW_TILES && push->K >= KSPLIT_FEW_TILES_MIN_K))))) {
        v = GEMM_KSPLIT;
        bm = KSPLIT_BM;
        bn = KSPLIT_BN;
    } else if (coopmat && !im2col_coopmat && (p = coopmat_pick(g, cmd, bind, push, z_count, &bm, &bn))) {
        /* cooperative matrices: p, bm and bn set */
    } else {
        /* vec4 tile loads need every row and batch of A (and of a plain B) to start on a multiple
         * of 4 elements; the bound buffers themselves are 16-byte aligned. The CPU kernel also
         * reads B rows up to N rounded up to 4: with a 4-aligned row stride that is N itself for
         * activations, and a constant B is stored padded. */
        bool vec4 = operands_aligned(push, bind, 4, g->mode == CONV_GEMM_IM2COL);
        bool one_row = push->M <= bm && (g->mode == CONV_GEMM_IM2COL || big_groups >= ONE_TILE_PER_SM);
        /* by the plan's own shape alone (not the plans in lockstep beside it): the slices sum in
         * another order, and a line must read the same whichever lines share its submission */
        bool sliced = small_groups < SLICED_BELOW && push->K >= SLICED_MIN_K;
        if (!g->cpu_kernel &&
            (g->tiles == 4 || (g->tiles == 0 && big_groups < SMALL_TILE_BELOW && !one_row && sliced))) {
            v = vec4 ? GEMM_SLICED_VEC4 : GEMM_SLICED;
            bm = g->small_bm;
            bn = g->small_bn;
        } else if (!g->cpu_kernel && (g->tiles == 2 || (g->tiles == 0 && big_groups < SMALL_TILE_BELOW && !one_row))) {
            v = vec4 ? GEMM_SMALL_VEC4 : GEMM_SMALL;
            bm = g->small_bm;
            bn = g->small_bn;
        } else {
            v = vec4 ? GEMM_TILED_VEC4 : GEMM_TILED;
        }
    }
    if (!p && !(p = variant(g, v, err, err_len)))
        return -1;
    /* C rows, batches and bindings (and the residual's) 4-aligned: the CPU kernel's vec4 variant
     * and the cooperative-matrix epilogue store 4-vectors */
    struct conv_gemm_push q = *push;
    q.c_vec4 = (q.c_off | q.c_sm | q.c_z1 | q.c_z2 | q.r_off | q.r_sm | q.r_z1 | q.r_z2) % 4 == 0 &&
               bind[2].offset % 16 == 0 && bind[4].offset % 16 == 0;
    struct gpu_dispatch d = {.pipeline = p,
                             .buffers = bind,
                             .push = &q,
                             .groups = {(push->N + bn - 1) / bn, (push->M + bm - 1) / bm, z_count},
                             .label = label};
    if (gpu_cmd_dispatch(cmd, &d) != GPU_OK) {
        snprintf(err, err_len, "%s: %s", label, gpu_last_error());
        return -1;
    }
    return 0;
}

int conv_upload(const struct nn_gpu_config *cfg, const float *data, size_t n, bool force_f32, struct gpu_buffer *out,
                char *err, size_t err_len)
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
