/* Building small ONNX models in memory (the tests' graphs): a ModelProto writer on top of pb.h.
 * Names lists are comma-separated ("x,w,b"); an empty entry is an omitted optional input. */
#ifndef PPOCR_CONVERT_ONNX_BUILD_H
#define PPOCR_CONVERT_ONNX_BUILD_H

#include <stddef.h>
#include <stdint.h>

#include "convert/pb.h"

struct onnx_builder {
    struct pb_writer graph;
    struct pb_writer node; /* the node being built; flushed by the next call */
    int has_node;
    int64_t opset;
};

void ob_init(struct onnx_builder *b, int64_t opset);
/* Graph input/output; a negative dim is written as a dim_param (a run-time size). */
void ob_input(struct onnx_builder *b, const char *name, int ndim, const int64_t *dims);
void ob_output(struct onnx_builder *b, const char *name, int ndim, const int64_t *dims);
/* Initializers: float32 as raw_data, int64 as int64_data. */
void ob_init_f32(struct onnx_builder *b, const char *name, int ndim, const int64_t *dims, const float *data);
void ob_init_i64(struct onnx_builder *b, const char *name, int ndim, const int64_t *dims, const int64_t *data);
/* A scalar float constant as a Constant node. */
void ob_const_scalar(struct onnx_builder *b, const char *name, float v);
void ob_node(struct onnx_builder *b, const char *op, const char *name, const char *inputs, const char *outputs);
void ob_attr_int(struct onnx_builder *b, const char *name, int64_t v);
void ob_attr_float(struct onnx_builder *b, const char *name, float v);
void ob_attr_ints(struct onnx_builder *b, const char *name, int n, const int64_t *v);
void ob_attr_string(struct onnx_builder *b, const char *name, const char *v);
/* The SVTR attention block as paddle2onnx spells it: Reshape(qkv, [0, T, 3, heads, C/heads]) with T
 * read at run time from dim 1 of `tokens` (Shape/Slice/Concat), Transpose(2,0,3,1,4), q/k/v by
 * Slice+Squeeze (or one Split when use_split), q * scale, MatMul(q, k^T), Softmax, MatMul(., v),
 * Transpose(0,2,1,3), Reshape to [0, T, C]. `qkv` is [N, T, 3C]; `out` [N, T, C]. Node and
 * constant names start with `prefix`. */
void ob_svtr_attention(struct onnx_builder *b, const char *prefix, const char *tokens, const char *qkv, const char *out,
                       int64_t channels, int64_t heads, float scale, int use_split);
/* The serialized ModelProto (malloc'ed); frees the builder. Returns 0, -1 out of memory. */
int ob_finish(struct onnx_builder *b, uint8_t **out, size_t *len);

#endif
