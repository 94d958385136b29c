// Direct convolution, one group: each invocation computes TM output channels x TN neighbouring
// outputs of one row, reading each input row segment once per (input channel, kernel row) into
// registers and reusing it for every kernel column and output channel. The weights, packed
// [OC/TM][IC][KH][KW][TM], are the same for every invocation of a workgroup (one load,
// broadcast), and each invocation loads a segment of SPAN inputs for TM * TN * KW multiply-adds,
// where an implicit GEMM gathers every im2col element separately with its index arithmetic.
//   CPU devices (lavapipe, KS = 1): SIMD lanes pay per load instruction and lane, and there is no
//   shared memory and no barrier (lavapipe runs one as a coroutine switch).
//   DIRECT_SUBGROUP (conv_direct_sg*.comp, CPU devices with subgroup shuffles): lavapipe (Mesa
//   22.3) loads a buffer inside a loop one lane at a time, each lane's value passing through the
//   stack, at a cost per lane whether the address is uniform or not (BENCHMARKS.md). So each weight
//   4-vector is loaded by one lane and reaches the others by shuffle (one load per subgroup, not
//   per lane; in fp32 with TM a multiple of 8, two 4-vectors per 8-float load, and only by the
//   lanes that hold some), an 8-input row segment loads as one 8-float vector where it is
//   aligned, and an aligned group of 8 outputs stores as one.
//   GPUs (KS > 1): KS invocations share each output tile, each summing every KS-th input channel,
//   and add up through shared memory; so a convolution with few outputs and long sums (det's 3x3
//   neck convolutions to 24 channels, rec's 1x3 ones over 480 and 960 channels of one-row maps)
//   still spreads over every SM.
// Kernel size, stride, dilation and the tiles are specialization constants; bias, activation, the
// residual add and a learnable affine (PP-LCNetV3) are fused as in the other convolution kernels.
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"
#ifdef DIRECT_SUBGROUP
#extension GL_KHR_shader_subgroup_shuffle : require
#extension GL_EXT_control_flow_attributes : require
#ifndef STORAGE_F16
#include "float8.glsl"
#define SEG_VEC8
#endif
// Unrolled on request: with a load under a condition inside, lavapipe left the multiply loops
// rolled and rec's 1x1 convolution 480 -> 480 ran far slower (BENCHMARKS.md).
#define UNROLL [[unroll]]
#else
#define UNROLL
#endif

layout(local_size_x_id = 0, local_size_y_id = 17) in;
layout(constant_id = 0) const uint LX = 32;
layout(constant_id = 1) const uint KH = 3;
layout(constant_id = 2) const uint KW = 3;
layout(constant_id = 3) const uint SH = 1;
layout(constant_id = 4) const uint SW = 1;
layout(constant_id = 5) const uint DH = 1;
layout(constant_id = 6) const uint DW = 1;
layout(constant_id = 7) const uint TM = 8; // output channels per invocation
layout(constant_id = 8) const uint TN = 4; // neighbouring outputs of a row per invocation
layout(constant_id = 9) const uint ACT = 0;
layout(constant_id = 10) const float ALPHA = 0.0;
layout(constant_id = 11) const float BETA = 0.0;
layout(constant_id = 12) const uint RESIDUAL = RES_NONE;
layout(constant_id = 13) const bool HAS_BIAS = false;
// scale[OC] and shift[OC] follow the bias (OC entries, zero when the conv has none) in its buffer
layout(constant_id = 14) const bool POST_AFFINE = false;
// Row segments load as 4-vectors: SPAN a multiple of 4, and every segment start (rows, x_off,
// image and channel strides, pad_l, TN * SW) a multiple of 4 elements; the host checks. A
// pointwise convolution is passed as one row of H W outputs per plane, so it qualifies.
layout(constant_id = 15) const bool SEG_VEC4 = false;
// x scaled per (image, input channel) by gate[img][ic] as it loads: the channel gate of a
// squeeze-and-excitation block fused from the op before.
layout(constant_id = 16) const bool X_GATE = false;
layout(constant_id = 17) const uint KS = 1; // invocations summing one tile, over interleaved input channels
// x runs over (image, output row, group of TN outputs) flattened, so narrow maps fill workgroups;
// otherwise over (output row, group) with the image on z, which keeps each lane's input address
// a linear function of its index: lavapipe turns those loads into vector loads, and gathers
// otherwise (rec's 1x1 convolutions at 32 lines were slower with images on x: BENCHMARKS.md).
layout(constant_id = 18) const bool IMAGES_ON_X = false;

layout(std430, binding = 0) readonly buffer BufX { SFLOAT x[]; };
layout(std430, binding = 0) readonly buffer BufX4 { SFLOAT4 x4[]; };
#ifdef SEG_VEC8
layout(std430, binding = 0) readonly buffer BufX8 { u64vec4 x8[]; }; // 8 floats, 2 per component
#endif
layout(std430, binding = 1) readonly buffer BufW { SFLOAT4 w4[]; }; // TM a multiple of 4
#ifdef SEG_VEC8
layout(std430, binding = 1) readonly buffer BufW8 { u64vec4 w8[]; }; // TM a multiple of 8
#endif
layout(std430, binding = 2) writeonly buffer BufY { SFLOAT y[]; };
#ifdef SEG_VEC8
layout(std430, binding = 2) writeonly buffer BufY8 { u64vec4 y8[]; }; // 8 floats, 2 per component
layout(std430, binding = 4) readonly buffer BufR8 { u64vec4 r8[]; };
#endif
layout(std430, binding = 3) readonly buffer BufBias { float bias[]; };
layout(std430, binding = 4) readonly buffer BufR { SFLOAT r[]; };
layout(std430, binding = 5) readonly buffer BufGate { float gate[]; }; // [images][IC], with X_GATE

layout(push_constant) uniform Push {
    uint IC, H, W, OC, OH, OW;
    uint pad_t, pad_l;
    uint x_off, x_img;   // image stride of x in elements
    uint y_off, y_img;   // image stride of y (dst_channels OH OW)
    uint r_off, r_img;
    uint OWG;            // groups of TN outputs per row
    uint items;          // OH x OWG, times the images with IMAGES_ON_X
} p;

const uint SPAN = (TN - 1) * SW + (KW - 1) * DW + 1; // input columns TN outputs touch
const uint SEG_LEN = (SPAN + 3u) / 4u * 4u;          // SPAN rounded up for whole 4-vector loads
// the upper half's tiles in each halving step of the sum over y, one TM x TN tile per (y, x),
// element-major so that neighbouring invocations write neighbouring words
shared float partial[(KS / 2u) * TM * TN * LX + 1u];

void main()
{
    const uint gid = IMAGES_ON_X ? (gl_WorkGroupID.z * gl_NumWorkGroups.x + gl_WorkGroupID.x) * LX + gl_LocalInvocationID.x
                                 : gl_GlobalInvocationID.x;
    // Past the end: without a K-split, leave (lavapipe then skips whole idle SIMD groups of a
    // narrow map's workgroup); with one, or with DIRECT_SUBGROUP (the other lanes shuffle from the
    // weights this one loads), compute the last tile again and store nothing, so that the
    // barriers and shuffles see every invocation.
#ifndef DIRECT_SUBGROUP
    if (KS == 1u && gid >= p.items)
        return;
#endif
    const bool in_range = gid < p.items;
    const uint item = min(gid, p.items - 1u);
    const uint rowg = item / p.OWG, img = IMAGES_ON_X ? rowg / p.OH : gl_WorkGroupID.z;
    const uint oy = rowg - (IMAGES_ON_X ? img * p.OH : 0u), ox0 = (item - rowg * p.OWG) * TN;
    const uint ocb = gl_WorkGroupID.y, ks = gl_LocalInvocationID.y;

    float acc[TM][TN];
    for (uint t = 0; t < TM; t++)
        for (uint o = 0; o < TN; o++)
            acc[t][o] = 0.0;

    const int ix0 = int(ox0 * SW) - int(p.pad_l);
    const int iy0 = int(oy * SH) - int(p.pad_t);
    for (uint ic = ks; ic < p.IC; ic += KS) {
        const uint plane = p.x_off + img * p.x_img + ic * p.H * p.W;
        const uint wbase = (ocb * p.IC + ic) * KH * KW * TM;
        const float g = X_GATE ? gate[img * p.IC + ic] : 1.0;
        for (uint ky = 0; ky < KH; ky++) {
            const int iy = iy0 + int(ky * DH);
#ifdef DIRECT_SUBGROUP
            // a row past the edge loads zeros rather than diverge: lanes must not skip the shuffles
            const bool row_ok = uint(iy) < p.H;
#else
            if (uint(iy) >= p.H)
                continue;
            const bool row_ok = true;
#endif
            const uint row = plane + uint(iy) * p.W;
            float seg[SEG_LEN];
#ifdef SEG_VEC8
            if (SEG_VEC4 && SEG_LEN == 8u && row_ok && ix0 >= 0 && uint(ix0) + 7u < p.W &&
                ((row + uint(ix0)) & 7u) == 0u) {
                const u64vec4 v = x8[(row + uint(ix0)) / 8u];
                for (uint s = 0; s < 8u; s++)
                    seg[s] = float8_at(v, s);
            } else
#endif
            if (SEG_VEC4) {
                for (uint s = 0; s < SPAN; s += 4) {
                    int ix = ix0 + int(s);
                    if (row_ok && ix >= 0 && uint(ix) + 3u < p.W) {
                        vec4 v = vec4(x4[(row + uint(ix)) / 4u]);
                        seg[s] = v.x, seg[s + 1] = v.y, seg[s + 2] = v.z, seg[s + 3] = v.w;
                    } else {
                        for (uint c = 0; c < 4; c++)
                            seg[s + c] = row_ok && uint(ix + int(c)) < p.W ? float(x[row + uint(ix) + c]) : 0.0;
                    }
                }
            } else {
                for (uint s = 0; s < SPAN; s++) {
                    int ix = ix0 + int(s);
                    seg[s] = row_ok && uint(ix) < p.W ? float(x[row + uint(ix)]) : 0.0;
                }
            }
            if (X_GATE)
                for (uint s = 0; s < SPAN; s++)
                    seg[s] *= g;
#ifdef DIRECT_SUBGROUP
            // this kernel row's KW TM / 4 weight 4-vectors, a subgroup's worth at a time
            const uint wrow = (wbase + ky * KW * TM) / 4, wcount = KW * TM / 4;
            vec4 wlane = vec4(0.0);
#ifdef SEG_VEC8
            // TM a multiple of 8: the row's weights as 8-float units, each loaded by one lane
            const uint wrow8 = (wbase + ky * KW * TM) / 8, wcount8 = KW * TM / 8;
            vec4 wlo = vec4(0.0), whi = vec4(0.0);
#endif
#endif
            UNROLL for (uint kx = 0; kx < KW; kx++) {
                UNROLL for (uint t4 = 0; t4 < TM / 4; t4++) {
#ifdef DIRECT_SUBGROUP
                    const uint v = kx * (TM / 4) + t4;
                    vec4 wv;
#ifdef SEG_VEC8
                    if (TM % 8u == 0u) {
                        const uint u = v / 2u;
                        if (v % 2u == 0u && u % gl_SubgroupSize == 0u && u + gl_SubgroupInvocationID < wcount8) {
                            const u64vec4 q = w8[wrow8 + u + gl_SubgroupInvocationID];
                            wlo = vec4(float8_at(q, 0u), float8_at(q, 1u), float8_at(q, 2u), float8_at(q, 3u));
                            whi = vec4(float8_at(q, 4u), float8_at(q, 5u), float8_at(q, 6u), float8_at(q, 7u));
                        }
                        wv = subgroupShuffle(v % 2u == 0u ? wlo : whi, u % gl_SubgroupSize);
                    } else
#endif
                    {
                        if (v % gl_SubgroupSize == 0u)
                            wlane = vec4(w4[wrow + min(v + gl_SubgroupInvocationID, wcount - 1u)]);
                        wv = subgroupShuffle(wlane, v % gl_SubgroupSize);
                    }
#else
                    const vec4 wv = vec4(w4[(wbase + (ky * KW + kx) * TM) / 4 + t4]);
#endif
                    for (uint c = 0; c < 4; c++)
                        for (uint o = 0; o < TN; o++)
                            acc[4 * t4 + c][o] = fma(seg[o * SW + kx * DW], wv[c], acc[4 * t4 + c][o]);
                }
            }
        }
    }

    if (KS > 1u) {
        const uint lx = gl_LocalInvocationID.x;
        for (uint half_ks = KS / 2u; half_ks > 0u; half_ks /= 2u) {
            if (ks >= half_ks && ks < 2u * half_ks)
                for (uint t = 0; t < TM; t++)
                    for (uint o = 0; o < TN; o++)
                        partial[(((ks - half_ks) * TM + t) * TN + o) * LX + lx] = acc[t][o];
            barrier();
            if (ks < half_ks)
                for (uint t = 0; t < TM; t++)
                    for (uint o = 0; o < TN; o++)
                        acc[t][o] += partial[((ks * TM + t) * TN + o) * LX + lx];
            barrier();
        }
        if (ks > 0u)
            return;
    }
    if (!in_range)
        return;

    for (uint t = 0; t < TM; t++) {
        const uint oc = ocb * TM + t;
        if (oc >= p.OC)
            break;
        const float b0 = HAS_BIAS || POST_AFFINE ? bias[oc] : 0.0;
        const uint yrow = p.y_off + img * p.y_img + (oc * p.OH + oy) * p.OW;
        const uint rrow = p.r_off + img * p.r_img + (oc * p.OH + oy) * p.OW;
#ifdef SEG_VEC8
        // a whole aligned group of 8 outputs (and its residual) as one 8-float store (load):
        // lavapipe stores one lane and component at a time, so this halves the stores' cost,
        // which is most of the kernel's where few input channels feed each output
        if (TN == 8u && ox0 + 8u <= p.OW && ((yrow + ox0) & 7u) == 0u &&
            (RESIDUAL == RES_NONE || ((rrow + ox0) & 7u) == 0u)) {
            const u64vec4 res8 = RESIDUAL != RES_NONE ? r8[(rrow + ox0) / 8u] : u64vec4(0);
            float out8[8];
            for (uint o = 0; o < 8u; o++) {
                out8[o] = residual_act(acc[t][o] + b0, float8_at(res8, o), RESIDUAL, ACT, ALPHA, BETA);
                if (POST_AFFINE)
                    out8[o] = fma(out8[o], bias[p.OC + oc], bias[2 * p.OC + oc]);
            }
            y8[(yrow + ox0) / 8u] = float8_pack(out8);
            continue;
        }
#endif
        for (uint o = 0; o < TN; o++) {
            const uint ox = ox0 + o;
            if (ox >= p.OW)
                break;
            float v = acc[t][o] + b0;
            float res = RESIDUAL != RES_NONE ? float(r[rrow + ox]) : 0.0;
            v = residual_act(v, res, RESIDUAL, ACT, ALPHA, BETA);
            if (POST_AFFINE)
                v = fma(v, bias[p.OC + oc], bias[2 * p.OC + oc]);
            y[yrow + ox] = TO_S(v);
        }
    }
}
