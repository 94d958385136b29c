/* The op types of a converted net, one row each: everything that exists once per op type
 * (the enum, the names, the loader's checks, each backend's table) is generated from PVK_OPS,
 * so that a new op is one row here plus one function per table, and a table that misses it
 * does not build.
 *
 * X(ID, value, name, max_inputs, max_outputs):
 *   ID          PVK_OP_<ID> and the name written in dumps and error messages ("CONV2D")
 *   value       the number model files store: never renumber a row
 *   name        the lower-case stem of each backend's per-op function (conv2d -> shape_conv2d,
 *               nn_gpu_conv2d_impl...)
 *   max_inputs  activation inputs the op may read (the loader refuses more; a reader may rely on it)
 *   max_outputs outputs the op may write */
#ifndef PPOCR_MODEL_OP_TABLE_H
#define PPOCR_MODEL_OP_TABLE_H

#define PVK_OPS(X)                                                                                                     \
    /* in: x [, residual]; w: W[OC][IC/g][KH][KW], bias[OC] (-1 if none) */                                            \
    X(CONV2D, 1, conv2d, 2, 1)                                                                                         \
    /* in: x; w: W[IC][OC/g][KH][KW], bias[OC] */                                                                      \
    X(CONV_TRANSPOSE2D, 2, conv_transpose2d, 1, 1)                                                                     \
    /* in: x; attr.pool */                                                                                             \
    X(POOL2D, 3, pool2d, 1, 1)                                                                                         \
    /* in: x; attr.resize; 4-D NCHW, scales on H and W */                                                              \
    X(RESIZE, 4, resize, 1, 1)                                                                                         \
    /* in: x0..xn-1; attr.axis.axis */                                                                                 \
    X(CONCAT, 5, concat, PVK_MAX_INPUTS, 1)                                                                            \
    /* in: a, b (b may be a constant: w[0] instead of in[1]); numpy broadcasting */                                    \
    X(BINARY, 6, binary, 2, 1)                                                                                         \
    /* in: x; only `act` is applied (e.g. a stand-alone Sigmoid) */                                                    \
    X(UNARY, 7, unary, 1, 1)                                                                                           \
    /* in: x; w: scale[C], shift[C] on axis 1 (stand-alone folded BatchNorm) */                                        \
    X(AFFINE, 8, affine, 1, 1)                                                                                         \
    /* in: x; w: W1[Cr][C], b1[Cr], W2[C][Cr], b2[C]; y = x * hardsigmoid(W2 relu(W1 mean_hw(x) + b1) + b2) [+ x] */   \
    X(SE, 9, se, 1, 1)                                                                                                 \
    /* in: a [.., M, K] [, b [.., K, N]]; w: B[K][N] const, bias[N] */                                                 \
    X(MATMUL, 10, matmul, 2, 1)                                                                                        \
    /* in: x; normalises the last axis; w: gamma[C], beta[C]; attr.norm */                                             \
    X(LAYERNORM, 11, layernorm, 1, 1)                                                                                  \
    /* in: x; attr.axis.axis */                                                                                        \
    X(SOFTMAX, 12, softmax, 1, 1)                                                                                      \
    /* in: qkv [N, T, 3*C] (q, k, v packed as ONNX's qkv Linear emits them); out [N, T, C];                        \
       per head: softmax(q k^T * scale) v */   \
    X(ATTENTION, 13, attention, 1, 1)                                                                                  \
    /* in: x; attr.transpose */                                                                                        \
    X(TRANSPOSE, 14, transpose, 1, 1)                                                                                  \
    /* in: x; attr.reshape (0 = copy that input dim, -1 = inferred) */                                                 \
    X(RESHAPE, 15, reshape, 1, 1)                                                                                      \
    /* in: x; attr.slice */                                                                                            \
    X(SLICE, 16, slice, 1, 1)                                                                                          \
    /* in: x [.., C]; out0: index (int32) [..], out1: max value [..] (attr.argmax) */                                  \
    X(ARGMAX, 17, argmax, 1, 2)

#define PVK_OP_ENUM_ROW_(id, value, name, max_in, max_out) PVK_OP_##id = value,
enum pvk_op_type { PVK_OPS(PVK_OP_ENUM_ROW_) PVK_OP_COUNT };
#undef PVK_OP_ENUM_ROW_

/* Values are dense from 1 (the loader and the tables index by them): as many rows as values,
 * and no two rows with one value (ops.c switches over all of them). */
#define PVK_OP_ONE_ROW_(id, value, name, max_in, max_out) +1
_Static_assert(PVK_OP_COUNT == 1 PVK_OPS(PVK_OP_ONE_ROW_), "op type values must run 1, 2, .. in row order");
#undef PVK_OP_ONE_ROW_

#endif
