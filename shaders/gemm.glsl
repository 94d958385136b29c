// C[z][m][n] = act(A[z][m][k] B[z][k][n] + bias (+ residual)): the one GEMM behind 1x1 and
// general convolutions (B as an implicit im2col of the input), the k == stride transposed
// convolution (C scattered into the upsampled image) and matmul. Accumulation is fp32 whatever
// the storage precision.
//
// Four kernels share the loads and the epilogue:
//   default   shared-memory tiles BM x BN x BK, LX x LY invocations each holding (BM/LY) x (BN/LX)
//             accumulators, rows and columns interleaved so shared reads and global writes are
//             contiguous across a subgroup; GEMM_SLICED: KSLICES such groups per workgroup
//             over interleaved K steps, summed at the end;
//   GEMM_CPU  no shared memory and no barriers (lavapipe runs a barrier as a coroutine switch):
//             each invocation keeps a TM x TN register tile and streams K straight from memory;
//             neighbouring invocations own neighbouring columns so SIMD lanes load contiguously;
//             with VEC4 (4-aligned operands) A rows come 4 k per load and a plain B 4 columns per
//             load, since lavapipe pays per load instruction and lane rather than per byte;
//             GEMM_CPU_SG (gemm_cpu_sg*.comp, devices with subgroup shuffles and TM lanes or
//             more): lavapipe loads inside a loop one lane at a time, uniform address or not, so
//             with a plain B each lane loads one of the TM A rows every lane needs and the others
//             take it by shuffle;
//   GEMM_KSPLIT  few outputs and a long K (a 1x3 convolution over 960 channels of a one-line
//             feature map: 2,400 outputs of 2,880 terms each, one tiled workgroup): BM x BN
//             outputs per workgroup, each summed by LX / (BM BN) invocations over interleaved k
//             and reduced through shared memory, so the work spreads over many workgroups;
//   GEMM_COOPMAT  fp16 cooperative matrices (GL_NV_cooperative_matrix, 16x16x16, fp32
//             accumulators): 2 rows of subgroups over a BM x BN tile, each subgroup a block of
//             fragments; tiles are staged through shared memory in 16-byte groups (the next K
//             step's fetched into registers meanwhile), so global data needs no alignment, and
//             the accumulators go back through shared memory into the common epilogue. B plain
//             or an im2col gather; with LY > 1, LY such groups per workgroup over interleaved K
//             steps, summed in slice order before the epilogue.
//
// A is always k-contiguous (row m at a_off + m a_sm); B is read through b_sk / b_sn (plain) or
// gathered from an NCHW image (im2col). z = z1 zdiv + z2 indexes images and groups, or two
// broadcast batch groups of a matmul.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#ifdef GEMM_CPU_SG
#extension GL_KHR_shader_subgroup_shuffle : require
#endif

#define MODE_PLAIN 0u
#define MODE_IM2COL 1u
#define MODE_DECONV 2u // plain loads; row m = (oc, ky, kx) lands at (i KH + ky, j KW + kx)

#define BIAS_NONE 0u
#define BIAS_ROW 1u
#define BIAS_COL 2u


#ifdef GEMM_SLICED
layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 21) in;
#else
layout(local_size_x_id = 0, local_size_y_id = 1) in;
#endif
layout(constant_id = 0) const uint LX = 16;
layout(constant_id = 1) const uint LY = 16;
// Tiled: BM x BN outputs per workgroup. GEMM_CPU: BM x BN outputs per invocation.
layout(constant_id = 2) const uint BM = 64;
layout(constant_id = 3) const uint BN = 64;
layout(constant_id = 4) const uint BK = 16;
layout(constant_id = 5) const uint MODE = MODE_PLAIN;
layout(constant_id = 6) const uint BIAS = BIAS_NONE;
layout(constant_id = 7) const uint ACT = 0;
layout(constant_id = 8) const float ALPHA = 0.0;
layout(constant_id = 9) const float BETA = 0.0;
layout(constant_id = 10) const uint RESIDUAL = RES_NONE;
layout(constant_id = 11) const uint KH = 1;
layout(constant_id = 12) const uint KW = 1;
layout(constant_id = 13) const uint SH = 1;
layout(constant_id = 14) const uint SW = 1;
layout(constant_id = 15) const uint DH = 1;
layout(constant_id = 16) const uint DW = 1;
// Tiled kernel: A (and B unless im2col) are 4-element aligned, so tiles load as vec4s (the
// caller checks offsets and strides; edges fall back to scalars).
layout(constant_id = 17) const bool VEC4 = false;
// A learnable affine after the activation, y = scale[ch] act(..) + shift[ch] (PP-LCNetV3), fused
// from the following op: scale and shift follow the bias in its buffer, AFFINE_C channels each.
layout(constant_id = 18) const bool POST_AFFINE = false;
layout(constant_id = 19) const uint AFFINE_C = 1;
// Plain B scaled per row: B(k, n) g[z1][k], the channel gate of a squeeze-and-excitation block
// fused from the op before (a 1x1 convolution's input channels are B's rows; z1 is the image).
layout(constant_id = 20) const bool B_GATE = false;
#ifdef GEMM_SLICED
// The tiled kernel with K slices per workgroup (its z size), in its own shader (gemm_sliced*.comp)
// so the plain tiled kernel compiles as it did. Each slice of LX x LY invocations runs the tile
// loop over every KSLICES-th K step with its own tiles; the slices' sums are added up in shared
// memory in slice order before the epilogue. Few tiles with a long K (det's 1x1 convolutions at
// 30 x 30) then keep more of each SM busy instead of one slice waiting on every K step's loads
// in turn.
layout(constant_id = 21) const uint KSLICES = 2;
#else
const uint KSLICES = 1u;
#endif

layout(std430, binding = 0) readonly buffer BufA { SFLOAT a[]; };
layout(std430, binding = 1) readonly buffer BufB { SFLOAT b[]; };
layout(std430, binding = 2) writeonly buffer BufC { SFLOAT c[]; };
layout(std430, binding = 3) readonly buffer BufBias { float bias[]; };
layout(std430, binding = 4) readonly buffer BufR { SFLOAT r[]; };
layout(std430, binding = 5) readonly buffer BufGate { float gate[]; }; // [images][K], with B_GATE
// The same A and B bindings seen as 4-vectors, for VEC4.
layout(std430, binding = 0) readonly buffer BufA4 { SFLOAT4 a4[]; };
layout(std430, binding = 1) readonly buffer BufB4 { SFLOAT4 b4[]; };
layout(std430, binding = 2) writeonly buffer BufC4 { SFLOAT4 c4[]; };
layout(std430, binding = 4) readonly buffer BufR4 { SFLOAT4 r4[]; };

layout(push_constant) uniform Push {
    uint M, N, K, zdiv;
    uint a_off, a_sm, a_z1, a_z2;
    uint b_off, b_sk, b_sn, b_z1, b_z2;
    uint c_off, c_sm, c_z1, c_z2;
    uint r_off, r_sm, r_z1, r_z2;
    uint bias_z2;
    uint H, W, OW, pad_t, pad_l; // im2col: input H W, output width; deconv: input H W, output width
    uint c_vec4; // C (and the residual) rows and batches start on multiples of 4 elements
} p;

// The gate of B's row k for image z1 (rows past K, which load zeros, read the last one).
float b_gate(uint z1, uint k)
{
    return B_GATE ? gate[z1 * p.K + min(k, p.K - 1u)] : 1.0;
}

void store_c(uint z1, uint z2, uint m, uint n, float v)
{
    if (MODE == MODE_DECONV) {
        uint oc = m / (KH * KW), tap = m % (KH * KW);
        uint i = n / p.W, j = n - i * p.W;
        if (BIAS == BIAS_ROW)
            v += bias[oc];
        v = apply_act(v, ACT, ALPHA, BETA);
        if (POST_AFFINE)
            v = fma(v, bias[AFFINE_C + oc], bias[2 * AFFINE_C + oc]);
        uint oy = i * KH + tap / KW, ox = j * KW + tap % KW;
        c[p.c_off + z1 * p.c_z1 + oc * p.c_sm + oy * p.OW + ox] = TO_S(v);
        return;
    }
    const uint ch = z2 * p.bias_z2 + m; // output channel of a convolution
    if (BIAS == BIAS_ROW)
        v += bias[ch];
    else if (BIAS == BIAS_COL)
        v += bias[n];
    float res = 0.0;
    if (RESIDUAL != RES_NONE)
        res = float(r[p.r_off + z1 * p.r_z1 + z2 * p.r_z2 + m * p.r_sm + n]);
    v = residual_act(v, res, RESIDUAL, ACT, ALPHA, BETA);
    if (POST_AFFINE)
        v = fma(v, bias[AFFINE_C + ch], bias[2 * AFFINE_C + ch]);
    c[p.c_off + z1 * p.c_z1 + z2 * p.c_z2 + m * p.c_sm + n] = TO_S(v);
}

// store_c's arithmetic for columns n .. n + 3 of a GEMM that is not a deconvolution, given their
// residual (zeros without one).
vec4 finish4(uint z2, uint m, uint n, vec4 v, vec4 res)
{
    const uint ch = z2 * p.bias_z2 + m;
    if (BIAS == BIAS_ROW)
        v += vec4(bias[ch]);
    else if (BIAS == BIAS_COL)
        v += vec4(bias[n], bias[n + 1], bias[n + 2], bias[n + 3]);
    v = residual_act(v, res, RESIDUAL, ACT, ALPHA, BETA);
    if (POST_AFFINE)
        v = fma(v, vec4(bias[AFFINE_C + ch]), vec4(bias[2 * AFFINE_C + ch]));
    return v;
}

// store_c for columns n .. n + 3 of a plain GEMM, where p.c_vec4 is set and n is a multiple of 4
// below N - 3: one 4-vector load of the residual and one store.
void store_c4(uint z1, uint z2, uint m, uint n, vec4 v)
{
    vec4 res = vec4(0.0);
    if (RESIDUAL != RES_NONE)
        res = vec4(r4[(p.r_off + z1 * p.r_z1 + z2 * p.r_z2 + m * p.r_sm + n) / 4]);
    c4[(p.c_off + z1 * p.c_z1 + z2 * p.c_z2 + m * p.c_sm + n) / 4] = TO_S4(finish4(z2, m, n, v, res));
}

// Input coordinates of output pixel n's window corner (im2col); a pixel past N gets a corner
// far outside so every tap reads as padding.
void pixel_origin(uint n, out int iy0, out int ix0)
{
    if (n >= p.N) {
        iy0 = -0x100000;
        ix0 = -0x100000;
        return;
    }
    uint oy = n / p.OW, ox = n - oy * p.OW;
    iy0 = int(oy * SH) - int(p.pad_t);
    ix0 = int(ox * SW) - int(p.pad_l);
}

// One tap of the implicit im2col matrix: row k = (ic, ky, kx) of the window at (iy0, ix0).
float im2col_load(uint b_base, uint k, int iy0, int ix0)
{
    if (k >= p.K)
        return 0.0;
    uint ic = k / (KH * KW), tap = k % (KH * KW);
    int iy = iy0 + int((tap / KW) * DH), ix = ix0 + int((tap % KW) * DW);
    if (uint(iy) >= p.H || uint(ix) >= p.W) // negative wraps to a huge unsigned
        return 0.0;
    return float(b[b_base + (ic * p.H + uint(iy)) * p.W + uint(ix)]);
}

#if defined(GEMM_COOPMAT)
// gemm_coopmat_f16.comp enables GL_NV_cooperative_matrix, GL_KHR_memory_scope_semantics,
// GL_KHR_shader_subgroup_basic, GL_EXT_control_flow_attributes and fp16 arithmetic types before
// including this file. Every loop but K's is unrolled: the fragment and register arrays must stay
// in registers, and their bounds are specialization constants the compiler sees only late.
//
// Tile BM x BN x BK (spec constants 2-4) for LX invocations (spec constant 0): LX / 32 subgroups
// as 2 rows by LX / 64 columns, each owning FM x FN fragments of 16 x 16. Operands move in groups
// of 8 halves (16 bytes): one load from global memory into registers, the slice's next K step's
// fetched while the current one multiplies, and one store into shared memory. With VEC4 (rows and
// batches of A and B start on multiples of 8 elements) whole groups load as uvec4s; groups across
// an edge, and every group without VEC4, load element by element, as does an im2col B.
//
// K slices: the workgroup is LY (spec constant 1) such slices of LX invocations. Slice s stages
// and multiplies K steps s, s + LY, s + 2 LY, ... with its own shared tiles, so a long K (the
// SVTR neck's 1x3 convolutions over 960 channels: 2,880 terms, 90 steps) keeps LY times as many
// subgroups busy on one tile instead of one slice waiting on every step's loads in turn. The
// other slices then leave their sums in shared memory and slice 0 adds them in slice order, so
// the result depends on LY but not on the tile or the dispatch.
const uint SLICES = LY;
const uint CM_WARPS = LX / 32u;   // subgroups per slice
const uint CM_WARPS_N = LX / 64u;
const uint FM = BM / 32u;
const uint FN = BN / (CM_WARPS_N * 16u);
const uint WN = FN * 16u; // columns per subgroup
// Shared rows padded by one group, so the 16 rows of a fragment start on different banks.
const uint AS_ROW = BK / 8u + 1u; // groups per A row (k)
const uint BS_ROW = BN / 8u + 1u; // groups per B row (n)
const uint A_GROUPS = BM * BK / 8u / LX;
const uint B_GROUPS = BK * BN / 8u / LX;
const uint CS_ROW = WN + 4u;      // floats per row of a subgroup's staging of one fragment row
// Each slice's A tile, then each slice's B tile; after the K loop the same memory holds the sums
// of slices 1 .. LY - 1 (16 x 16 floats per fragment, 4 floats per uvec4). conv_gemm.c's
// coopmat_shared_bytes restates this layout, to check a device's limit before building.
const uint AS_SLICE = BM * AS_ROW, BS_SLICE = BK * BS_ROW;
const uint STAGED = SLICES * (AS_SLICE + BS_SLICE);
const uint FRAG = 64u;            // uvec4s per fragment of sums
const uint SUMS = (SLICES - 1u) * CM_WARPS * FM * FN * FRAG;

shared uvec4 Tiles[STAGED > SUMS ? STAGED : SUMS];
shared float Cs[CM_WARPS * 16u * CS_ROW];

layout(std430, binding = 0) readonly buffer BufA8 { uvec4 a8[]; };
layout(std430, binding = 1) readonly buffer BufB8 { uvec4 b8[]; };
layout(std430, binding = 2) writeonly buffer BufC2 { uint c2[]; }; // C as pairs of halves

// store_c4 where C is not 4-aligned (rec's 6,625-class projection: rows of an odd length), for
// any GEMM but a deconvolution and n below N - 3: the 4 values stored as two pairs of halves
// where the first sits on an even element, else as one half, a pair and one half. The same
// values as store_c's.
void store_c4_pairs(uint z1, uint z2, uint m, uint n, vec4 v)
{
    vec4 res = vec4(0.0);
    if (RESIDUAL != RES_NONE) {
        const uint ri = p.r_off + z1 * p.r_z1 + z2 * p.r_z2 + m * p.r_sm + n;
        res = vec4(r[ri], r[ri + 1u], r[ri + 2u], r[ri + 3u]);
    }
    const f16vec4 h = f16vec4(finish4(z2, m, n, v, res));
    const uint e = p.c_off + z1 * p.c_z1 + z2 * p.c_z2 + m * p.c_sm + n;
    if ((e & 1u) == 0u) {
        c2[e / 2u] = packFloat2x16(h.xy);
        c2[e / 2u + 1u] = packFloat2x16(h.zw);
    } else {
        c[e] = h.x;
        c2[(e + 1u) / 2u] = packFloat2x16(h.yz);
        c[e + 3u] = h.w;
    }
}

uint a_base, b_base, z1_img;
// im2col: the window corners of the 8 columns this invocation loads (the same at every K step,
// since LX is a multiple of BN / 8)
int col_iy0[8], col_ix0[8];

uvec4 pack8(float16_t h[8])
{
    return uvec4(packFloat2x16(f16vec2(h[0], h[1])), packFloat2x16(f16vec2(h[2], h[3])),
                 packFloat2x16(f16vec2(h[4], h[5])), packFloat2x16(f16vec2(h[6], h[7])));
}

// A(m, k .. k + 7); zeros past the edges.
uvec4 load_a8(uint m, uint k)
{
    const uint i = a_base + m * p.a_sm + k;
    if (VEC4 && m < p.M && k + 8u <= p.K)
        return a8[i / 8u];
    float16_t h[8];
    [[unroll]] for (uint c = 0; c < 8u; c++)
        h[c] = m < p.M && k + c < p.K ? a[i + c] : float16_t(0.0);
    return pack8(h);
}

// B(k, n .. n + 7), gated, or gathered from the image; zeros past the edges.
uvec4 load_b8(uint k, uint n)
{
    float16_t h[8];
    if (MODE == MODE_IM2COL) {
        const uint ic = k / (KH * KW), tap = k % (KH * KW);
        const int dy = int((tap / KW) * DH), dx = int((tap % KW) * DW);
        const uint plane = b_base + ic * p.H * p.W;
        [[unroll]] for (uint c = 0; c < 8u; c++) {
            const int iy = col_iy0[c] + dy, ix = col_ix0[c] + dx;
            // negative coordinates wrap to huge unsigned ones
            h[c] = k < p.K && uint(iy) < p.H && uint(ix) < p.W ? b[plane + uint(iy) * p.W + uint(ix)]
                                                              : float16_t(0.0);
        }
        return pack8(h);
    }
    const uint i = b_base + k * p.b_sk + n * p.b_sn;
    uvec4 v;
    if (VEC4 && k < p.K && n + 8u <= p.N) {
        v = b8[i / 8u];
    } else {
        [[unroll]] for (uint c = 0; c < 8u; c++)
            h[c] = k < p.K && n + c < p.N ? b[i + c * p.b_sn] : float16_t(0.0);
        v = pack8(h);
    }
    if (B_GATE) {
        const float g = b_gate(z1_img, k);
        [[unroll]] for (uint c = 0; c < 4u; c++)
            v[c] = packFloat2x16(f16vec2(vec2(unpackFloat2x16(v[c])) * g));
    }
    return v;
}

void main()
{
    // Loads go by invocation (tid within slice ls), multiplies by subgroup (warp within slice sl).
    const uint ls = gl_LocalInvocationIndex / LX, tid = gl_LocalInvocationIndex % LX;
    const uint sl = gl_SubgroupID / CM_WARPS, warp = gl_SubgroupID % CM_WARPS, lane = gl_SubgroupInvocationID;
    const uint wm = warp / CM_WARPS_N, wn = warp % CM_WARPS_N;
    const uint m0 = gl_WorkGroupID.y * BM, n0 = gl_WorkGroupID.x * BN;
    const uint z1 = gl_WorkGroupID.z / p.zdiv, z2 = gl_WorkGroupID.z % p.zdiv;
    z1_img = z1;
    a_base = p.a_off + z1 * p.a_z1 + z2 * p.a_z2;
    b_base = p.b_off + z1 * p.b_z1 + z2 * p.b_z2;
    if (MODE == MODE_IM2COL)
        [[unroll]] for (uint c = 0; c < 8u; c++)
            pixel_origin(n0 + 8u * (tid % (BN / 8u)) + c, col_iy0[c], col_ix0[c]);

    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[FM][FN];
    [[unroll]] for (uint i = 0; i < FM; i++)
        [[unroll]] for (uint j = 0; j < FN; j++)
            acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);

    // Group g of a tile: A row g / (BK / 8), k group g % (BK / 8); B row g / (BN / 8), n group
    // g % (BN / 8), so consecutive invocations read consecutive 16 bytes. Every slice runs the
    // same number of rounds (the barriers need it); steps past K load zeros.
    const uint a_at = ls * AS_SLICE, b_at = SLICES * AS_SLICE + ls * BS_SLICE;
    const uint a_mul = sl * AS_SLICE, b_mul = SLICES * AS_SLICE + sl * BS_SLICE;
    const uint rounds = ((p.K + BK - 1u) / BK + SLICES - 1u) / SLICES;
    uvec4 a_next[A_GROUPS], b_next[B_GROUPS];
    [[unroll]] for (uint l = 0; l < A_GROUPS; l++) {
        const uint g = tid + l * LX;
        a_next[l] = load_a8(m0 + g / (BK / 8u), ls * BK + 8u * (g % (BK / 8u)));
    }
    [[unroll]] for (uint l = 0; l < B_GROUPS; l++) {
        const uint g = tid + l * LX;
        b_next[l] = load_b8(ls * BK + g / (BN / 8u), n0 + 8u * (g % (BN / 8u)));
    }
    for (uint t = 0; t < rounds; t++) {
        barrier(); // every subgroup is done with the previous tiles
        [[unroll]] for (uint l = 0; l < A_GROUPS; l++) {
            const uint g = tid + l * LX;
            Tiles[a_at + (g / (BK / 8u)) * AS_ROW + g % (BK / 8u)] = a_next[l];
        }
        [[unroll]] for (uint l = 0; l < B_GROUPS; l++) {
            const uint g = tid + l * LX;
            Tiles[b_at + (g / (BN / 8u)) * BS_ROW + g % (BN / 8u)] = b_next[l];
        }
        barrier();
        if (t + 1u < rounds) {
            const uint k1 = ((t + 1u) * SLICES + ls) * BK;
            [[unroll]] for (uint l = 0; l < A_GROUPS; l++) {
                const uint g = tid + l * LX;
                a_next[l] = load_a8(m0 + g / (BK / 8u), k1 + 8u * (g % (BK / 8u)));
            }
            [[unroll]] for (uint l = 0; l < B_GROUPS; l++) {
                const uint g = tid + l * LX;
                b_next[l] = load_b8(k1 + g / (BN / 8u), n0 + 8u * (g % (BN / 8u)));
            }
        }
        [[unroll]] for (uint kk = 0; kk < BK; kk += 16u) {
            fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fa[FM];
            [[unroll]] for (uint i = 0; i < FM; i++)
                coopMatLoadNV(fa[i], Tiles, a_mul + (wm * FM * 16u + i * 16u) * AS_ROW + kk / 8u, AS_ROW, false);
            [[unroll]] for (uint j = 0; j < FN; j++) {
                fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> fb;
                coopMatLoadNV(fb, Tiles, b_mul + kk * BS_ROW + (wn * WN + j * 16u) / 8u, BS_ROW, false);
                [[unroll]] for (uint i = 0; i < FM; i++)
                    acc[i][j] = coopMatMulAddNV(fa[i], fb, acc[i][j]);
            }
        }
    }

    if (SLICES > 1u) {
        barrier(); // the tiles' memory takes the sums
        if (sl != 0u)
            [[unroll]] for (uint i = 0; i < FM; i++)
                [[unroll]] for (uint j = 0; j < FN; j++)
                    coopMatStoreNV(acc[i][j], Tiles, (((sl - 1u) * CM_WARPS + warp) * FM * FN + i * FN + j) * FRAG,
                                   4u, false);
        barrier();
        if (sl != 0u)
            return;
        for (uint s = 1u; s < SLICES; s++)
            [[unroll]] for (uint i = 0; i < FM; i++)
                [[unroll]] for (uint j = 0; j < FN; j++) {
                    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> part;
                    coopMatLoadNV(part, Tiles, (((s - 1u) * CM_WARPS + warp) * FM * FN + i * FN + j) * FRAG, 4u,
                                  false);
                    acc[i][j] = acc[i][j] + part;
                }
    }

    // Each subgroup stages one row of its fragments at a time (16 x WN floats) and stores it
    // through the common epilogue, each lane 4 neighbouring columns: one 4-vector store where C
    // is 4-aligned (one half per lane and store before, slower for rec at 32 lines:
    // BENCHMARKS.md).
    const uint cs = warp * 16u * CS_ROW;
    [[unroll]] for (uint i = 0; i < FM; i++) {
        [[unroll]] for (uint j = 0; j < FN; j++)
            coopMatStoreNV(acc[i][j], Cs, cs + j * 16u, CS_ROW, false);
        subgroupMemoryBarrierShared();
        subgroupBarrier();
        const uint mr = m0 + wm * FM * 16u + i * 16u, nc = n0 + wn * WN;
        for (uint e = 4u * lane; e < 16u * WN; e += 128u) {
            const uint r = e / WN, col = e % WN, m = mr + r, n = nc + col;
            if (m >= p.M)
                continue;
            const uint at = cs + r * CS_ROW + col;
            const vec4 v = vec4(Cs[at], Cs[at + 1u], Cs[at + 2u], Cs[at + 3u]);
            if (p.c_vec4 != 0u && n + 4u <= p.N) {
                store_c4(z1, z2, m, n, v);
            } else if (MODE != MODE_DECONV && n + 4u <= p.N) {
                store_c4_pairs(z1, z2, m, n, v);
            } else {
                [[unroll]] for (uint c = 0; c < 4u; c++)
                    if (n + c < p.N)
                        store_c(z1, z2, m, n + c, v[c]);
            }
        }
        subgroupMemoryBarrierShared();
        subgroupBarrier();
    }
}

#elif defined(GEMM_KSPLIT)

const uint OUTS = BM * BN;       // outputs per workgroup
const uint KS = LX * LY / OUTS;  // invocations per output, each over every KS-th k
shared float part[LX * LY];

void main()
{
    const uint tid = gl_LocalInvocationIndex;
    const uint ks = tid % KS, o = tid / KS; // a subgroup's lanes read neighbouring k of A's rows
    const uint z1 = gl_WorkGroupID.z / p.zdiv, z2 = gl_WorkGroupID.z % p.zdiv;
    const uint m = gl_WorkGroupID.y * BM + o / BN, n = gl_WorkGroupID.x * BN + o % BN;
    // rows and columns past the edge read a valid neighbour and are never stored
    const uint a_row = p.a_off + z1 * p.a_z1 + z2 * p.a_z2 + min(m, p.M - 1u) * p.a_sm;
    const uint b_base = p.b_off + z1 * p.b_z1 + z2 * p.b_z2, nn = min(n, p.N - 1u);
    int iy0 = 0, ix0 = 0;
    if (MODE == MODE_IM2COL)
        pixel_origin(nn, iy0, ix0);
    float acc = 0.0;
    for (uint k = ks; k < p.K; k += KS) {
        float bv = MODE == MODE_IM2COL ? im2col_load(b_base, k, iy0, ix0)
                                       : float(b[b_base + k * p.b_sk + nn * p.b_sn]) * b_gate(z1, k);
        acc = fma(float(a[a_row + k]), bv, acc);
    }
    part[tid] = acc;
    barrier();
    for (uint s = KS / 2u; s > 0u; s >>= 1) {
        if (ks < s)
            part[tid] += part[tid + s];
        barrier();
    }
    if (ks == 0u && m < p.M && n < p.N)
        store_c(z1, z2, m, n, part[tid]);
}

#elif !defined(GEMM_CPU)

const uint WG = LX * LY;
const uint TM = BM / LY;
const uint TN = BN / LX;
const uint A_STRIDE = BM + 1; // padding: the transposed stores hit distinct banks
const uint A_LOADS = BM * BK / WG;
const uint B_LOADS = BK * BN / WG;

// Tiles and the prefetch registers hold MFLOAT: fp16 in the f16a twin, which halves the shared
// memory and registers a tile costs; products are still summed in fp32.
const uint AS_SIZE = BK * A_STRIDE;
const uint BS_SIZE = BK * BN;
shared MFLOAT As[KSLICES * AS_SIZE];
shared MFLOAT Bs[KSLICES * BS_SIZE];
#ifdef GEMM_SLICED
// Slices 1.. park their sums here for slice 0.
shared float red[(KSLICES - 1u) * BM * BN];
#endif

const uint A4_LOADS = BM * BK / 4 / WG;
const uint B4_LOADS = BK * BN / 4 / WG;
const bool B_VEC4 = VEC4 && MODE != MODE_IM2COL;

// The next K tile, fetched into registers while the current one is multiplied, so global
// latency overlaps arithmetic instead of stalling every iteration.
MFLOAT a_next[A_LOADS];
MFLOAT b_next[B_LOADS];
MFLOAT4 a_next4[A4_LOADS];
MFLOAT4 b_next4[B4_LOADS];
uint m0, n0, z1_img, a_base, b_base, a_kk, a_mm, b_kk, b_nn, a4_kq, a4_mm, b4_nq, b4_kk;
bool b_n_fast;
int iy0, ix0;

// Four k of row m of A from k (a multiple of 4); zeros past the edges.
MFLOAT4 load_a4(uint m, uint k)
{
    uint i = a_base + m * p.a_sm + k;
    if (m < p.M && k + 3 < p.K)
        return MFLOAT4(a4[i / 4]);
    MFLOAT4 v = MFLOAT4(0.0);
    for (uint c = 0; c < 4; c++)
        if (m < p.M && k + c < p.K)
            v[c] = MFLOAT(a[i + c]);
    return v;
}

// Four n of row k of B from n (a multiple of 4); zeros past the edges.
MFLOAT4 load_b4(uint k, uint n)
{
    uint i = b_base + k * p.b_sk + n;
    if (k < p.K && n + 3 < p.N)
        return MFLOAT4(vec4(b4[i / 4]) * b_gate(z1_img, k));
    vec4 v = vec4(0.0);
    for (uint c = 0; c < 4; c++)
        if (k < p.K && n + c < p.N)
            v[c] = float(b[i + c]);
    return MFLOAT4(v * b_gate(z1_img, k));
}

void fetch_tile(uint k0)
{
    if (VEC4) {
        for (uint l = 0; l < A4_LOADS; l++)
            a_next4[l] = load_a4(m0 + a4_mm + l * (WG / (BK / 4)), k0 + 4 * a4_kq);
    }
    if (B_VEC4) {
        for (uint l = 0; l < B4_LOADS; l++)
            b_next4[l] = load_b4(k0 + b4_kk + l * (WG / (BN / 4)), n0 + 4 * b4_nq);
        if (VEC4)
            return;
    }
    for (uint l = 0; l < A_LOADS && !VEC4; l++) {
        uint m = m0 + a_mm + l * (WG / BK), k = k0 + a_kk;
        a_next[l] = m < p.M && k < p.K ? MFLOAT(a[a_base + m * p.a_sm + k]) : MFLOAT(0.0);
    }
    for (uint l = 0; l < B_LOADS && !B_VEC4; l++) {
        uint kk = b_n_fast ? b_kk + l * (WG / BN) : b_kk;
        uint nn = b_n_fast ? b_nn : b_nn + l * (WG / BK);
        uint k = k0 + kk, n = n0 + nn;
        if (MODE == MODE_IM2COL)
            b_next[l] = MFLOAT(im2col_load(b_base, k, iy0, ix0));
        else
            b_next[l] = MFLOAT(k < p.K && n < p.N ? float(b[b_base + k * p.b_sk + n * p.b_sn]) * b_gate(z1_img, k) : 0.0);
    }
}

void main()
{
    const uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
#ifdef GEMM_SLICED
    const uint slice = gl_LocalInvocationID.z;
#else
    const uint slice = 0u;
#endif
    const uint tid = ly * LX + lx;
    const uint as0 = slice * AS_SIZE, bs0 = slice * BS_SIZE;
    m0 = gl_WorkGroupID.y * BM;
    n0 = gl_WorkGroupID.x * BN;
    const uint z1 = gl_WorkGroupID.z / p.zdiv, z2 = gl_WorkGroupID.z % p.zdiv;
    z1_img = z1;
    a_base = p.a_off + z1 * p.a_z1 + z2 * p.a_z2;
    b_base = p.b_off + z1 * p.b_z1 + z2 * p.b_z2;

    float acc[TM][TN];
    for (uint i = 0; i < TM; i++)
        for (uint j = 0; j < TN; j++)
            acc[i][j] = 0.0;

    // A tile: BK consecutive invocations read one row's BK consecutive k.
    a_kk = tid % BK;
    a_mm = tid / BK;
    // B tile: consecutive invocations along n when n is contiguous (and always for im2col).
    b_n_fast = MODE == MODE_IM2COL || p.b_sn == 1;
    b_nn = b_n_fast ? tid % BN : tid / BK;
    b_kk = b_n_fast ? tid / BN : tid % BK;
    a4_kq = tid % (BK / 4);
    a4_mm = tid / (BK / 4);
    b4_nq = tid % (BN / 4);
    b4_kk = tid / (BN / 4);
    iy0 = 0;
    ix0 = 0;
    if (MODE == MODE_IM2COL)
        pixel_origin(n0 + b_nn, iy0, ix0);

    // Every slice runs the same number of steps (the barriers need it), to K rounded up to a
    // whole step of all slices; K steps past the end load zeros.
    const uint step = KSLICES * BK;
#ifdef GEMM_SLICED
    const uint k_end = (p.K + step - 1u) / step * step;
#else
    const uint k_end = p.K;
#endif
    fetch_tile(slice * BK);
    for (uint k0 = slice * BK; k0 < k_end; k0 += step) {
        if (VEC4) {
            for (uint l = 0; l < A4_LOADS; l++)
                for (uint c = 0; c < 4; c++)
                    As[as0 + (4 * a4_kq + c) * A_STRIDE + a4_mm + l * (WG / (BK / 4))] = a_next4[l][c];
        } else {
            for (uint l = 0; l < A_LOADS; l++)
                As[as0 + a_kk * A_STRIDE + a_mm + l * (WG / BK)] = a_next[l];
        }
        if (B_VEC4) {
            for (uint l = 0; l < B4_LOADS; l++)
                for (uint c = 0; c < 4; c++)
                    Bs[bs0 + (b4_kk + l * (WG / (BN / 4))) * BN + 4 * b4_nq + c] = b_next4[l][c];
        } else {
            for (uint l = 0; l < B_LOADS; l++) {
                uint kk = b_n_fast ? b_kk + l * (WG / BN) : b_kk;
                uint nn = b_n_fast ? b_nn : b_nn + l * (WG / BK);
                Bs[bs0 + kk * BN + nn] = b_next[l];
            }
        }
        barrier();
        if (k0 + step < k_end)
            fetch_tile(k0 + step); // zeros for a slice whose next step is past K
        for (uint kk = 0; kk < BK; kk++) {
            float av[TM], bv[TN];
            for (uint i = 0; i < TM; i++)
                av[i] = float(As[as0 + kk * A_STRIDE + ly + i * LY]);
            for (uint j = 0; j < TN; j++)
                bv[j] = float(Bs[bs0 + kk * BN + lx + j * LX]);
            for (uint i = 0; i < TM; i++)
                for (uint j = 0; j < TN; j++)
                    acc[i][j] = fma(av[i], bv[j], acc[i][j]);
        }
        barrier();
    }
#ifdef GEMM_SLICED
    // each output's partial sums added in slice order, so the result does not depend on
    // scheduling
    if (slice > 0u)
        for (uint i = 0; i < TM; i++)
            for (uint j = 0; j < TN; j++)
                red[((slice - 1u) * TM * TN + i * TN + j) * WG + tid] = acc[i][j];
    barrier();
    if (slice > 0u)
        return;
    for (uint s = 1u; s < KSLICES; s++)
        for (uint i = 0; i < TM; i++)
            for (uint j = 0; j < TN; j++)
                acc[i][j] += red[((s - 1u) * TM * TN + i * TN + j) * WG + tid];
#endif

    for (uint i = 0; i < TM; i++) {
        uint m = m0 + ly + i * LY;
        if (m >= p.M)
            break;
        for (uint j = 0; j < TN; j++) {
            uint n = n0 + lx + j * LX;
            if (n < p.N)
                store_c(z1, z2, m, n, acc[i][j]);
        }
    }
}

#else // GEMM_CPU

const uint TM = BM;
const uint TN = BN;

// VEC4 with plain B (4-aligned rows; the caller guarantees rows are readable up to N rounded up
// to 4): each invocation owns 4 neighbouring columns, so a k row of B is one 4-vector load and
// one load of A brings 4 k. lavapipe pays per load instruction and per lane, so this quarters
// the loads of the scalar kernel.
void main_vec4()
{
    const uint lx = gl_LocalInvocationID.x;
    const uint m0 = gl_WorkGroupID.y * TM;
    const uint nb = (gl_WorkGroupID.x * LX + lx) * 4;
    const uint z1 = gl_WorkGroupID.z / p.zdiv, z2 = gl_WorkGroupID.z % p.zdiv;
    const uint a_base = p.a_off + z1 * p.a_z1 + z2 * p.a_z2;
    const uint b_base = p.b_off + z1 * p.b_z1 + z2 * p.b_z2;
    const uint n4 = (p.N + 3) & ~3u;
    const uint nl = min(nb, n4 - 4); // invocations past the edge load the last group, store nothing

    vec4 acc[TM];
    uint a_row[TM];
    for (uint i = 0; i < TM; i++) {
        acc[i] = vec4(0.0);
        a_row[i] = a_base + min(m0 + i, p.M - 1) * p.a_sm;
    }
#ifdef GEMM_CPU_SG
    // the A row this lane loads for the subgroup (lanes past TM repeat the last)
    const uint a_row_lane = a_base + min(m0 + min(gl_SubgroupInvocationID, TM - 1u), p.M - 1) * p.a_sm;
#endif
    uint k = 0;
    for (; k + 4 <= p.K; k += 4) {
        vec4 bv[4];
        for (uint q = 0; q < 4; q++)
            bv[q] = vec4(b4[(b_base + (k + q) * p.b_sk + nl) / 4]) * b_gate(z1, k + q);
#ifdef GEMM_CPU_SG
        const vec4 a_lane = vec4(a4[(a_row_lane + k) / 4]);
#endif
        for (uint i = 0; i < TM; i++) {
#ifdef GEMM_CPU_SG
            vec4 av = subgroupShuffle(a_lane, i);
#else
            vec4 av = vec4(a4[(a_row[i] + k) / 4]);
#endif
            acc[i] = fma(vec4(av.x), bv[0], acc[i]);
            acc[i] = fma(vec4(av.y), bv[1], acc[i]);
            acc[i] = fma(vec4(av.z), bv[2], acc[i]);
            acc[i] = fma(vec4(av.w), bv[3], acc[i]);
        }
    }
    for (; k < p.K; k++) {
        vec4 bv = vec4(b4[(b_base + k * p.b_sk + nl) / 4]) * b_gate(z1, k);
        for (uint i = 0; i < TM; i++)
            acc[i] = fma(vec4(float(a[a_row[i] + k])), bv, acc[i]);
    }
    // Whole workgroups inside N with aligned C store 4-vectors (the condition is uniform, so
    // no lane runs both paths).
    if (MODE == MODE_PLAIN && p.c_vec4 != 0u && (gl_WorkGroupID.x + 1) * LX * 4 <= p.N) {
        for (uint i = 0; i < TM; i++) {
            uint m = m0 + i;
            if (m >= p.M)
                break;
            store_c4(z1, z2, m, nb, acc[i]);
        }
        return;
    }
    for (uint i = 0; i < TM; i++) {
        uint m = m0 + i;
        if (m >= p.M)
            break;
        for (uint c = 0; c < 4; c++)
            if (nb + c < p.N)
                store_c(z1, z2, m, nb + c, acc[i][c]);
    }
}

// VEC4 with im2col B: A rows are the conv weights, zero-padded to a multiple of 4, so one load
// brings 4 taps and the K tail needs no special case (its taps gather zeros).
void main_im2col_vec4()
{
    const uint lx = gl_LocalInvocationID.x;
    const uint m0 = gl_WorkGroupID.y * TM;
    const uint nb = gl_WorkGroupID.x * LX * TN + lx;
    const uint z1 = gl_WorkGroupID.z / p.zdiv, z2 = gl_WorkGroupID.z % p.zdiv;
    const uint a_base = p.a_off + z1 * p.a_z1 + z2 * p.a_z2;
    const uint b_base = p.b_off + z1 * p.b_z1 + z2 * p.b_z2;

    float acc[TM][TN];
    uint a_row[TM];
    for (uint i = 0; i < TM; i++) {
        a_row[i] = a_base + min(m0 + i, p.M - 1) * p.a_sm;
        for (uint j = 0; j < TN; j++)
            acc[i][j] = 0.0;
    }
    int iy0[TN], ix0[TN];
    for (uint j = 0; j < TN; j++)
        pixel_origin(nb + j * LX, iy0[j], ix0[j]);
    for (uint k = 0; k < p.K; k += 4) {
        float bv[4][TN];
        for (uint q = 0; q < 4; q++) {
            uint kq = k + q;
            uint ic = kq / (KH * KW), tap = kq % (KH * KW);
            uint plane = b_base + ic * p.H * p.W;
            int dy = int((tap / KW) * DH), dx = int((tap % KW) * DW);
            for (uint j = 0; j < TN; j++) {
                int iy = iy0[j] + dy, ix = ix0[j] + dx;
                bool inside = kq < p.K && uint(iy) < p.H && uint(ix) < p.W;
                bv[q][j] = inside ? float(b[plane + uint(iy) * p.W + uint(ix)]) : 0.0;
            }
        }
        for (uint i = 0; i < TM; i++) {
            vec4 av = vec4(a4[(a_row[i] + k) / 4]);
            for (uint q = 0; q < 4; q++)
                for (uint j = 0; j < TN; j++)
                    acc[i][j] = fma(av[q], bv[q][j], acc[i][j]);
        }
    }
    for (uint i = 0; i < TM; i++) {
        uint m = m0 + i;
        if (m >= p.M)
            break;
        for (uint j = 0; j < TN; j++) {
            uint n = nb + j * LX;
            if (n < p.N)
                store_c(z1, z2, m, n, acc[i][j]);
        }
    }
}

void main()
{
    if (VEC4 && MODE == MODE_IM2COL) {
        main_im2col_vec4();
        return;
    }
    if (VEC4) {
        main_vec4();
        return;
    }
    const uint lx = gl_LocalInvocationID.x;
    const uint m0 = gl_WorkGroupID.y * TM;
    const uint nb = gl_WorkGroupID.x * LX * TN + lx;
    const uint z1 = gl_WorkGroupID.z / p.zdiv, z2 = gl_WorkGroupID.z % p.zdiv;
    const uint a_base = p.a_off + z1 * p.a_z1 + z2 * p.a_z2;
    const uint b_base = p.b_off + z1 * p.b_z1 + z2 * p.b_z2;

    float acc[TM][TN];
    for (uint i = 0; i < TM; i++)
        for (uint j = 0; j < TN; j++)
            acc[i][j] = 0.0;
    // Rows and columns past the edge load a valid neighbour and are never stored.
    uint a_row[TM];
    for (uint i = 0; i < TM; i++)
        a_row[i] = a_base + min(m0 + i, p.M - 1) * p.a_sm;

    if (MODE == MODE_IM2COL) {
        int iy0[TN], ix0[TN];
        for (uint j = 0; j < TN; j++)
            pixel_origin(nb + j * LX, iy0[j], ix0[j]);
        const uint ICG = p.K / (KH * KW);
        uint k = 0;
        for (uint ic = 0; ic < ICG; ic++) {
            uint plane = b_base + ic * p.H * p.W;
            for (uint ky = 0; ky < KH; ky++) {
                for (uint kx = 0; kx < KW; kx++, k++) {
                    float bv[TN];
                    for (uint j = 0; j < TN; j++) {
                        int iy = iy0[j] + int(ky * DH), ix = ix0[j] + int(kx * DW);
                        bool inside = uint(iy) < p.H && uint(ix) < p.W;
                        bv[j] = inside ? float(b[plane + uint(iy) * p.W + uint(ix)]) : 0.0;
                    }
                    for (uint i = 0; i < TM; i++) {
                        float av = float(a[a_row[i] + k]);
                        for (uint j = 0; j < TN; j++)
                            acc[i][j] = fma(av, bv[j], acc[i][j]);
                    }
                }
            }
        }
    } else {
        uint b_col[TN];
        for (uint j = 0; j < TN; j++)
            b_col[j] = b_base + min(nb + j * LX, p.N - 1) * p.b_sn;
        for (uint k = 0; k < p.K; k++) {
            float bv[TN];
            for (uint j = 0; j < TN; j++)
                bv[j] = float(b[b_col[j] + k * p.b_sk]) * b_gate(z1, k);
            for (uint i = 0; i < TM; i++) {
                float av = float(a[a_row[i] + k]);
                for (uint j = 0; j < TN; j++)
                    acc[i][j] = fma(av, bv[j], acc[i][j]);
            }
        }
    }

    for (uint i = 0; i < TM; i++) {
        uint m = m0 + i;
        if (m >= p.M)
            break;
        for (uint j = 0; j < TN; j++) {
            uint n = nb + j * LX;
            if (n < p.N)
                store_c(z1, z2, m, n, acc[i][j]);
        }
    }
}

#endif
