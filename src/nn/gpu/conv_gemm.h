/* The GEMM kernel (shaders/gemm.glsl) shared by the 1x1 and general convolutions, the k == stride
 * transposed convolution and matmul: variant selection per device class, its push constants and
 * its dispatch, plus the weight upload every one of those ops does. */
#ifndef PPOCR_NN_GPU_CONV_GEMM_H
#define PPOCR_NN_GPU_CONV_GEMM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu/cmd.h"
#include "gpu/pool.h"
#include "gpu/shader_ids.h"
#include "nn/gpu/gpu_op.h"

enum conv_gemm_mode { CONV_GEMM_PLAIN = 0, CONV_GEMM_IM2COL = 1, CONV_GEMM_DECONV = 2 };
enum conv_gemm_bias { CONV_GEMM_BIAS_NONE = 0, CONV_GEMM_BIAS_ROW = 1, CONV_GEMM_BIAS_COL = 2 };

/* What an op asks of the kernel; everything here is an op attribute, never an activation shape. */
struct conv_gemm_desc {
    enum conv_gemm_mode mode;
    enum conv_gemm_bias bias;
    uint32_t act;
    float act_alpha, act_beta;
    uint32_t residual;               /* enum pvk_residual */
    uint32_t kh, kw, sh, sw, dh, dw; /* im2col window; deconv: kernel == stride */
    uint32_t m_hint;                 /* rows M when the weights fix it (conv OC), 0 if unknown: picks the tile */
    bool allow_coopmat;              /* PLAIN (dispatches with B n-contiguous) or IM2COL */
    /* y = scale[ch] y + shift[ch] last; the bias buffer holds bias, scale, shift, affine_c each
     * (convolutions only: ch is the output channel) */
    bool post_affine;
    uint32_t affine_c;
    /* PLAIN, one batch per image: B(k, n) is scaled by gate[image][k] (binding 5, fp32) */
    bool b_gate;
};

/* Mirrors the push-constant block of gemm.glsl. C(m, n) of batch z = z1 zdiv + z2 lives at
 * c_off + z1 c_z1 + z2 c_z2 + m c_sm + n; A(m, k) at a_off + z1 a_z1 + z2 a_z2 + m a_sm + k;
 * B(k, n) at b_off + z1 b_z1 + z2 b_z2 + k b_sk + n b_sn (PLAIN / DECONV) or gathered from the
 * NCHW image at b_off + z1 b_z1 + z2 b_z2 (IM2COL: channel planes of H x W). */
struct conv_gemm_push {
    uint32_t M, N, K, zdiv;
    uint32_t a_off, a_sm, a_z1, a_z2;
    uint32_t b_off, b_sk, b_sn, b_z1, b_z2;
    uint32_t c_off, c_sm, c_z1, c_z2;
    uint32_t r_off, r_sm, r_z1, r_z2;
    uint32_t bias_z2;
    uint32_t H, W, OW, pad_t, pad_l;
    uint32_t c_vec4; /* set by conv_gemm_record */
};

#define COOPMAT_TILE_COUNT 3 /* cooperative-matrix tiles (conv_gemm.c) */

/* Kernel variants. GPUs: big tiles, quarter-size tiles for GEMMs too small to give every compute
 * unit a big tile, the quarter-size tiles with K slices per workgroup where K is long enough, each
 * also with vec4 tile loads for 4-element aligned operands, and the K-split kernel for GEMMs
 * whose outputs fill too few tiles while K is long. CPU devices: the register-tiled kernel as
 * GEMM_TILED, with vec4 loads as GEMM_TILED_VEC4. */
enum conv_gemm_variant {
    GEMM_TILED,
    GEMM_TILED_VEC4,
    GEMM_SMALL,
    GEMM_SMALL_VEC4,
    GEMM_SLICED,
    GEMM_SLICED_VEC4,
    GEMM_KSPLIT,
    GEMM_VARIANTS
};

struct conv_gemm {
    enum conv_gemm_mode mode;
    /* A net uses one or two variants of each GEMM for the shapes it meets, so each pipeline is
     * built the first time a recording needs it: creating all of them cost most of cold start. */
    struct gpu_context *ctx;
    struct conv_gemm_desc desc;
    enum gpu_shader_id shader, sliced_shader;
    bool f16, cpu_kernel;
    const struct gpu_pipeline *variant[GEMM_VARIANTS];
    uint32_t bm, bn; /* outputs per workgroup along M and N, big tiles */
    uint32_t small_bm, small_bn;
    /* 0: by size; 1: always big; 2: always small; 3: always K-split; 4: always sliced small tiles
     * (PPOCR_VK_GEMM_KERNEL, for tests) */
    int tiles;
    /* Cooperative matrices where the device has fp16 ones: pipelines per tile (conv_gemm.c), and
     * of the K-sliced tile, with and without 16-byte group loads, built on first use;
     * coopmat_tile >= 0 forces a tile where K is not sliced. */
    bool has_coopmat;
    const struct gpu_pipeline *coopmat[COOPMAT_TILE_COUNT][2];
    const struct gpu_pipeline *coopmat_sliced[2];
    bool coopmat_slices_fit; /* the device has the shared memory and invocations they take */
    int coopmat_tile;
};

int conv_gemm_create(const struct nn_gpu_config *cfg, const struct conv_gemm_desc *d, struct conv_gemm *out, char *err,
                     size_t err_len);

/* Whether this dispatch goes to cooperative matrices, as far as the device's driver builds their
 * pipelines. */
bool conv_gemm_coopmat(const struct conv_gemm *g, const struct conv_gemm_push *push);

/* Records one dispatch over z_count batches. bind: A, B, C, bias, residual, gate (unused ones may
 * repeat any read-only buffer). */
int conv_gemm_record(struct conv_gemm *g, struct gpu_cmd *cmd, const struct gpu_binding bind[6],
                     const struct conv_gemm_push *push, uint32_t z_count, const char *label, char *err, size_t err_len);

/* Uploads n floats as the net's storage precision (fp16 when act_dtype is NN_F16), or as fp32
 * when force_f32 (biases). */
int conv_upload(const struct nn_gpu_config *cfg, const float *data, size_t n, bool force_f32, struct gpu_buffer *out,
                char *err, size_t err_len);

/* Row length of packed weights: K rounded up to 4 (zero padded) so vec4 tile loads stay aligned. */
static inline uint32_t conv_gemm_row(uint32_t k)
{
    return (k + 3) & ~3u;
}

/* Bytes per element of an activation dtype. */
static inline size_t conv_dtype_size(enum nn_dtype t)
{
    return t == NN_F16 ? 2 : 4;
}

static inline uint32_t conv_float_bits(float f)
{
    union {
        float f;
        uint32_t u;
    } v = {f};
    return v.u;
}

#endif
