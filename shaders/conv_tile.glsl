// Convolution of stride 1 through shared memory, one group, for GPUs: a workgroup computes a tile
// of TH rows x TW outputs for NB blocks of 8 output channels. For each chunk of ICC input channels
// it stages the tile's input window (TH + KH - 1 rows of TW + KW - 1, zero outside the image) and
// the chunk's weights in shared memory; an invocation then computes 8 channels x R neighbouring
// outputs of one row, reading each input row segment once as 4-vectors and reusing it for every
// kernel column and channel. The next chunk is loaded into registers while the current one is
// multiplied, and stored to shared memory after it. The direct kernel (conv_direct.glsl) loads
// its segments and weights from global memory for 8 channels x 2 outputs; here each load feeds
// 2.5 times as many multiply-adds (det's 3x3 neck convolutions at 240 x 240 are bound by loads
// there). The weights are the direct kernel's, packed [OC/8][IC][KH][KW][8]; the push constants
// are its too. Bias, activation, the residual add and a learnable affine are fused as there.
#extension GL_GOOGLE_include_directive : require
// the accumulators and the row segment stay in registers only if every loop indexing them is
// unrolled (their sizes are specialization constants)
#extension GL_EXT_control_flow_attributes : require
#include "storage.glsl"
#include "activation.glsl"

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;
layout(constant_id = 0) const uint TX = 8;  // invocations along a row: TW = TX R
layout(constant_id = 1) const uint TH = 8;  // rows per tile, one invocation row each
layout(constant_id = 2) const uint NB = 3;  // blocks of 8 output channels, one invocation layer each
layout(constant_id = 3) const uint KH = 3;
layout(constant_id = 4) const uint KW = 3;
layout(constant_id = 5) const uint R = 4;   // outputs of a row per invocation, a multiple of 4
layout(constant_id = 6) const uint ICC = 8; // input channels per shared-memory chunk
layout(constant_id = 7) const uint ACT = 0;
layout(constant_id = 8) const float ALPHA = 0.0;
layout(constant_id = 9) const float BETA = 0.0;
layout(constant_id = 10) const uint RESIDUAL = RES_NONE;
layout(constant_id = 11) const bool HAS_BIAS = false;
// scale[OC] and shift[OC] follow the bias (OC entries, zero when the conv has none) in its buffer
layout(constant_id = 12) const bool POST_AFFINE = false;

layout(std430, binding = 0) readonly buffer BufX { SFLOAT x[]; };
layout(std430, binding = 1) readonly buffer BufW { SFLOAT4 w4[]; };
layout(std430, binding = 2) writeonly buffer BufY { SFLOAT y[]; };
layout(std430, binding = 3) readonly buffer BufBias { float bias[]; };
layout(std430, binding = 4) readonly buffer BufR { SFLOAT r[]; };

// conv_direct.glsl's push constants; OWG and items are not read here
layout(push_constant) uniform Push {
    uint IC, H, W, OC, OH, OW;
    uint pad_t, pad_l;
    uint x_off, x_img;
    uint y_off, y_img;
    uint r_off, r_img;
    uint OWG, items;
} p;

const uint TW = TX * R;
const uint WIN_H = TH + KH - 1u;
// a window row in 4-vectors: an invocation's segment of R + KW - 1 inputs starts on a multiple
// of 4 (its first output, tx R), so it loads as SEG4 aligned 4-vectors without bank conflicts
const uint WIN_W4 = (TW + KW - 1u + 3u) / 4u;
const uint SEG4 = (R + KW - 1u + 3u) / 4u;
const uint THREADS = TX * TH * NB;

shared vec4 win[ICC * WIN_H * WIN_W4];
shared vec4 wts[ICC * KH * KW * NB * 2u]; // [ic][ky][kx][block][2 x vec4]

const uint WIN_ELEMS = ICC * WIN_H * WIN_W4 * 4u;
const uint WIN_PER = (WIN_ELEMS + THREADS - 1u) / THREADS;
const uint WTS_ELEMS = ICC * KH * KW * NB * 2u;
const uint WTS_PER = (WTS_ELEMS + THREADS - 1u) / THREADS;

// set once in main
uint tid, img, block0, n_blocks;
int iy0, ix0;
// one chunk's share of the window and the weights, from global memory to shared in two steps
float win_regs[WIN_PER];
vec4 wts_regs[WTS_PER];

// The input window of channels ic0 .. ic0 + ICC - 1 (zeros outside the image and past IC) and
// the chunk's weights of the workgroup's blocks (zeros past IC and the last block) into registers.
void fetch(uint ic0)
{
    [[unroll]] for (uint k = 0; k < WIN_PER; k++) {
        const uint e = tid + k * THREADS;
        const uint col = e % (WIN_W4 * 4u), rest = e / (WIN_W4 * 4u);
        const uint row = rest % WIN_H, ic = ic0 + rest / WIN_H;
        const int iy = iy0 + int(row), ix = ix0 + int(col);
        float v = 0.0;
        if (e < WIN_ELEMS && ic < p.IC && uint(iy) < p.H && uint(ix) < p.W)
            v = float(x[p.x_off + img * p.x_img + (ic * p.H + uint(iy)) * p.W + uint(ix)]);
        win_regs[k] = v;
    }
    [[unroll]] for (uint k = 0; k < WTS_PER; k++) {
        const uint e = tid + k * THREADS;
        const uint half_ = e % 2u, b = (e / 2u) % NB, tap = (e / (2u * NB)) % (KH * KW);
        const uint ic = ic0 + e / (2u * NB * KH * KW);
        vec4 v = vec4(0.0);
        if (e < WTS_ELEMS && ic < p.IC && block0 + b < n_blocks)
            v = vec4(w4[(((block0 + b) * p.IC + ic) * KH * KW + tap) * 2u + half_]);
        wts_regs[k] = v;
    }
}

// What fetch loaded, into shared memory.
void stash()
{
    [[unroll]] for (uint k = 0; k < WIN_PER; k++) {
        const uint e = tid + k * THREADS;
        if (e < WIN_ELEMS)
            win[e / 4u][e % 4u] = win_regs[k];
    }
    [[unroll]] for (uint k = 0; k < WTS_PER; k++) {
        const uint e = tid + k * THREADS;
        if (e < WTS_ELEMS)
            wts[e] = wts_regs[k];
    }
}

void main()
{
    const uint tx = gl_LocalInvocationID.x, ty = gl_LocalInvocationID.y, tb = gl_LocalInvocationID.z;
    tid = (tb * TH + ty) * TX + tx;
    n_blocks = (p.OC + 7u) / 8u;
    const uint groups_per_image = (n_blocks + NB - 1u) / NB;
    img = gl_WorkGroupID.z / groups_per_image;
    block0 = (gl_WorkGroupID.z - img * groups_per_image) * NB;
    const uint block = block0 + tb;
    const int oy0 = int(gl_WorkGroupID.y * TH), ox0 = int(gl_WorkGroupID.x * TW);
    iy0 = oy0 - int(p.pad_t);
    ix0 = ox0 - int(p.pad_l);

    float acc[8][R];
    [[unroll]] for (uint c = 0; c < 8u; c++)
        [[unroll]] for (uint o = 0; o < R; o++)
            acc[c][o] = 0.0;

    fetch(0u);
    for (uint ic0 = 0; ic0 < p.IC; ic0 += ICC) {
        stash();
        barrier();
        // the next chunk's loads are in flight while this one is multiplied
        if (ic0 + ICC < p.IC)
            fetch(ic0 + ICC);
        for (uint ci = 0; ci < ICC; ci++) {
            for (uint ky = 0; ky < KH; ky++) {
                float seg[SEG4 * 4u];
                const uint wrow = (ci * WIN_H + ty + ky) * WIN_W4 + tx * (R / 4u);
                [[unroll]] for (uint s = 0; s < SEG4; s++) {
                    const vec4 v = win[wrow + s];
                    seg[4u * s] = v.x, seg[4u * s + 1u] = v.y, seg[4u * s + 2u] = v.z, seg[4u * s + 3u] = v.w;
                }
                [[unroll]] for (uint kx = 0; kx < KW; kx++) {
                    const uint wi = (((ci * KH + ky) * KW + kx) * NB + tb) * 2u;
                    const vec4 wa = wts[wi], wb = wts[wi + 1u];
                    [[unroll]] for (uint o = 0; o < R; o++) {
                        const float xv = seg[o + kx];
                        acc[0][o] = fma(xv, wa.x, acc[0][o]);
                        acc[1][o] = fma(xv, wa.y, acc[1][o]);
                        acc[2][o] = fma(xv, wa.z, acc[2][o]);
                        acc[3][o] = fma(xv, wa.w, acc[3][o]);
                        acc[4][o] = fma(xv, wb.x, acc[4][o]);
                        acc[5][o] = fma(xv, wb.y, acc[5][o]);
                        acc[6][o] = fma(xv, wb.z, acc[6][o]);
                        acc[7][o] = fma(xv, wb.w, acc[7][o]);
                    }
                }
            }
        }
        barrier();
    }

    const uint oy = uint(oy0) + ty;
    if (block >= n_blocks || oy >= p.OH)
        return;
    [[unroll]] for (uint c = 0; c < 8u; c++) {
        const uint oc = block * 8u + c;
        if (oc >= p.OC)
            break;
        const float b0 = HAS_BIAS || POST_AFFINE ? bias[oc] : 0.0;
        const uint yrow = p.y_off + img * p.y_img + (oc * p.OH + oy) * p.OW;
        const uint rrow = p.r_off + img * p.r_img + (oc * p.OH + oy) * p.OW;
        [[unroll]] for (uint o = 0; o < R; o++) {
            const uint ox = uint(ox0) + tx * R + o;
            if (ox >= p.OW)
                break;
            float v = acc[c][o] + b0;
            const float res = RESIDUAL != RES_NONE ? float(r[rrow + ox]) : 0.0;
            v = residual_act(v, res, RESIDUAL, ACT, ALPHA, BETA);
            if (POST_AFFINE)
                v = fma(v, bias[p.OC + oc], bias[2u * p.OC + oc]);
            y[yrow + ox] = TO_S(v);
        }
    }
}
