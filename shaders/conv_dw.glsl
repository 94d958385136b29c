// Depthwise convolution (group == C == OC): each invocation computes OUTH x OUTW neighbouring
// outputs of one plane, reading each input row segment once into registers and reusing it for
// every kernel column and every output row it reaches (stride 1 shares (KW - 1) of each output's
// taps with its neighbour, and (KH - 1) rows with the row below). The invocations of a dispatch
// run over (image, channel, row block, column group) flattened, so that a workgroup spans several
// small planes instead of leaving most of its invocations idle past one. Kernel size,
// stride and dilation are specialization constants so the tap loops unroll; bias, activation and
// the residual add are fused. Taps and the row segment are held as MFLOAT and the epilogue
// computes in it (fp16 in the f16a twin, halving their registers); the sum over taps stays fp32.
// X_TEXEL (conv_dw_texel.comp, fp32, CPU devices): x is bound as RGBA32F texels. lavapipe (Mesa
// 22.3) loads a storage buffer one SIMD lane at a time, each value passing through the stack, but
// fetches a texel for all lanes at once; so each row segment is read as the 4-vectors that cover
// it, and rec's depthwise convolutions run faster (BENCHMARKS.md). Its stores go one lane and component
// at a time, so an aligned group of 8 outputs (and its residual) goes as one 8-float store (load).
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#include "activation.glsl"


layout(local_size_x_id = 0) in;
layout(constant_id = 0) const uint LX = 64;
layout(constant_id = 1) const uint KH = 3;
layout(constant_id = 2) const uint KW = 3;
layout(constant_id = 3) const uint SH = 1;
layout(constant_id = 4) const uint SW = 1;
layout(constant_id = 5) const uint DH = 1;
layout(constant_id = 6) const uint DW = 1;
layout(constant_id = 7) const uint OUTW = 4;
layout(constant_id = 8) const uint ACT = 0;
layout(constant_id = 9) const float ALPHA = 0.0;
layout(constant_id = 10) const float BETA = 0.0;
layout(constant_id = 11) const uint RESIDUAL = RES_NONE;
layout(constant_id = 12) const bool HAS_BIAS = false;
// A learnable affine after the activation (PP-LCNetV3), fused from the following op: scale[C]
// and shift[C] follow the bias (C entries, zero when the conv has none) in its buffer.
layout(constant_id = 13) const bool POST_AFFINE = false;
layout(constant_id = 14) const uint OUTH = 1;

#ifdef X_TEXEL
#include "float8.glsl"
layout(binding = 0) uniform samplerBuffer x4t;
layout(std430, binding = 2) writeonly buffer BufY8 { u64vec4 y8[]; }; // 8 floats, 2 per component
layout(std430, binding = 4) readonly buffer BufR8 { u64vec4 r8[]; };
#else
layout(std430, binding = 0) readonly buffer BufX { SFLOAT x[]; };
#endif
layout(std430, binding = 1) readonly buffer BufW { SFLOAT w[]; }; // [C][KH][KW]
layout(std430, binding = 2) writeonly buffer BufY { SFLOAT y[]; };
layout(std430, binding = 3) readonly buffer BufBias { float bias[]; };
layout(std430, binding = 4) readonly buffer BufR { SFLOAT r[]; };

layout(push_constant) uniform Push {
    uint C, H, W, OH, OW;
    uint pad_t, pad_l;
    uint x_off, x_img;   // image stride of x in elements
    uint y_off, y_img;   // image stride of y (dst_channels OH OW)
    uint r_off, r_img;
    uint OWG;            // groups of OUTW outputs per row
    uint OHB;            // blocks of OUTH rows per plane
    uint items;          // invocations with work: images x C x OHB x OWG
} p;

const uint SPAN = (OUTW - 1) * SW + (KW - 1) * DW + 1;  // input columns OUTW outputs touch
const uint RSPAN = (OUTH - 1) * SH + (KH - 1) * DH + 1; // input rows OUTH outputs touch

void main()
{
    const uint gid = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * LX + gl_LocalInvocationID.x;
    if (gid >= p.items)
        return;
    const uint rowblock = gid / p.OWG, plane_id = rowblock / p.OHB;
    const uint ox0 = (gid - rowblock * p.OWG) * OUTW, oy0 = (rowblock - plane_id * p.OHB) * OUTH;
    const uint img = plane_id / p.C, ch = plane_id - img * p.C;

    MFLOAT wk[KH * KW];
    for (uint t = 0; t < KH * KW; t++)
        wk[t] = MFLOAT(w[ch * KH * KW + t]);
    float acc[OUTH][OUTW];
    const float b0 = HAS_BIAS || POST_AFFINE ? bias[ch] : 0.0;
    for (uint j = 0; j < OUTH; j++)
        for (uint o = 0; o < OUTW; o++)
            acc[j][o] = b0;

    const uint plane = p.x_off + img * p.x_img + ch * p.H * p.W;
    const int ix0 = int(ox0 * SW) - int(p.pad_l);
    const int iy0 = int(oy0 * SH) - int(p.pad_t);
#ifdef X_TEXEL
    const int last_texel = textureSize(x4t) - 1;
    const uint NQ = (SPAN + 6u) / 4u; // texels covering SPAN elements that start anywhere in one
#endif
    for (uint t = 0; t < RSPAN; t++) {
        const int iy = iy0 + int(t);
        if (uint(iy) >= p.H)
            continue;
        const uint row = plane + uint(iy) * p.W;
        MFLOAT seg[SPAN];
#ifdef X_TEXEL
        // The texels holding elements row + ix0 ... row + ix0 + SPAN - 1 (the first plane's left
        // edge may start before the buffer: clamped texels feed only columns outside the row),
        // then each element at the segment's offset into the first texel.
        const int first = int(row) + ix0;
        const int q0 = first >> 2; // rounds down
        const uint lead = uint(first - 4 * q0);
        float cover[NQ * 4u];
        for (uint q = 0; q < NQ; q++) {
            const vec4 v = texelFetch(x4t, clamp(q0 + int(q), 0, last_texel));
            cover[4u * q] = v.x, cover[4u * q + 1u] = v.y, cover[4u * q + 2u] = v.z, cover[4u * q + 3u] = v.w;
        }
        for (uint s = 0; s < SPAN; s++) {
            const int ix = ix0 + int(s);
            const float e = lead == 0u ? cover[s] : lead == 1u ? cover[s + 1u] : lead == 2u ? cover[s + 2u] : cover[s + 3u];
            seg[s] = uint(ix) < p.W ? MFLOAT(e) : MFLOAT(0.0);
        }
#else
        for (uint s = 0; s < SPAN; s++) {
            int ix = ix0 + int(s);
            seg[s] = uint(ix) < p.W ? MFLOAT(x[row + uint(ix)]) : MFLOAT(0.0);
        }
#endif
        // output row j takes this input row as tap row ky when t = j SH + ky DH (all constants)
        for (uint j = 0; j < OUTH; j++) {
            if (t < j * SH || (t - j * SH) % DH != 0u || (t - j * SH) / DH >= KH)
                continue;
            const uint ky = (t - j * SH) / DH;
            for (uint kx = 0; kx < KW; kx++)
                for (uint o = 0; o < OUTW; o++)
                    acc[j][o] = fma(float(seg[o * SW + kx * DW]), float(wk[ky * KW + kx]), acc[j][o]);
        }
    }

    for (uint j = 0; j < OUTH; j++) {
        const uint oy = oy0 + j;
        if (oy >= p.OH)
            break;
        const uint yrow = p.y_off + img * p.y_img + (ch * p.OH + oy) * p.OW;
        const uint rrow = p.r_off + img * p.r_img + (ch * p.OH + oy) * p.OW;
#ifdef X_TEXEL
        bool stored[OUTW / 8u];
        for (uint g = 0; g < OUTW / 8u; g++) {
            const uint ox = ox0 + 8u * g;
            stored[g] = ox + 8u <= p.OW && ((yrow + ox) & 7u) == 0u &&
                        (RESIDUAL == RES_NONE || ((rrow + ox) & 7u) == 0u);
            if (!stored[g])
                continue;
            const u64vec4 res8 = RESIDUAL != RES_NONE ? r8[(rrow + ox) / 8u] : u64vec4(0);
            float out8[8];
            for (uint o = 0; o < 8u; o++) {
                out8[o] = residual_act(acc[j][8u * g + o], float8_at(res8, o), RESIDUAL, ACT, ALPHA, BETA);
                if (POST_AFFINE)
                    out8[o] = fma(out8[o], bias[p.C + ch], bias[2 * p.C + ch]);
            }
            y8[(yrow + ox) / 8u] = float8_pack(out8);
        }
#endif
        for (uint o = 0; o < OUTW; o++) {
            uint ox = ox0 + o;
            if (ox >= p.OW)
                break;
#ifdef X_TEXEL
            if (stored[o / 8u])
                continue;
#endif
            MFLOAT v = MFLOAT(acc[j][o]);
            MFLOAT res = RESIDUAL != RES_NONE ? MFLOAT(r[rrow + ox]) : MFLOAT(0.0);
            v = residual_act(v, res, RESIDUAL, ACT, ALPHA, BETA);
            if (POST_AFFINE)
                v = fma(v, MFLOAT(bias[p.C + ch]), MFLOAT(bias[2 * p.C + ch]));
            y[yrow + ox] = TO_S(v);
        }
    }
}
