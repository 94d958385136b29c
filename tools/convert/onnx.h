/* The subset of ONNX's protobuf messages that PP-OCR models use, decoded into plain structs.
 * Tensor data is widened on decoding: floating types to double, integer types to int64, so
 * the converter folds constants in float64 and shape arithmetic exactly. */
#ifndef PPOCR_CONVERT_ONNX_H
#define PPOCR_CONVERT_ONNX_H

#include <stddef.h>
#include <stdint.h>

#define ONNX_MAX_DIMS 8

enum onnx_elem {
    ONNX_FLOAT = 1,
    ONNX_UINT8 = 2,
    ONNX_INT8 = 3,
    ONNX_UINT16 = 4,
    ONNX_INT16 = 5,
    ONNX_INT32 = 6,
    ONNX_INT64 = 7,
    ONNX_STRING = 8,
    ONNX_BOOL = 9,
    ONNX_FLOAT16 = 10,
    ONNX_DOUBLE = 11,
    ONNX_UINT32 = 12,
    ONNX_UINT64 = 13
};

enum onnx_attr_type {
    ONNX_ATTR_FLOAT = 1,
    ONNX_ATTR_INT = 2,
    ONNX_ATTR_STRING = 3,
    ONNX_ATTR_TENSOR = 4,
    ONNX_ATTR_GRAPH = 5,
    ONNX_ATTR_FLOATS = 6,
    ONNX_ATTR_INTS = 7,
    ONNX_ATTR_STRINGS = 8
};

struct onnx_tensor {
    char *name;
    int32_t elem_type; /* enum onnx_elem */
    int ndim;
    int64_t dims[ONNX_MAX_DIMS];
    int64_t numel;
    double *f;  /* floating element types: numel values (never NULL) */
    int64_t *i; /* integer and bool element types: numel values (never NULL) */
};

struct onnx_attr {
    char *name;
    int type; /* enum onnx_attr_type */
    double f;
    int64_t i;
    char *s;
    struct onnx_tensor *t;
    int n_floats, n_ints;
    double *floats;
    int64_t *ints;
};

struct onnx_node {
    char *name, *op_type, *domain;
    int n_inputs, n_outputs, n_attrs;
    char **inputs, **outputs; /* "" for an omitted optional input */
    struct onnx_attr *attrs;
};

/* A graph input or output: element type and shape; -1 for a symbolic (dim_param) or
 * missing dimension, ndim -1 when no shape is given. */
struct onnx_value_info {
    char *name;
    int32_t elem_type;
    int ndim;
    int64_t dims[ONNX_MAX_DIMS];
};

struct onnx_model {
    int64_t ir_version, opset;
    char *producer;
    int n_nodes, n_initializers, n_inputs, n_outputs;
    struct onnx_node *nodes;
    struct onnx_tensor *initializers;
    struct onnx_value_info *inputs, *outputs;
};

/* Decodes a ModelProto. Returns 0, or -1 with a one-line reason (m is then empty). */
int onnx_parse(const uint8_t *data, size_t len, struct onnx_model *m, char *err, size_t err_len);
void onnx_free(struct onnx_model *m);
void onnx_tensor_free(struct onnx_tensor *t);
int onnx_elem_is_float(int32_t elem_type);

const struct onnx_attr *onnx_attr_find(const struct onnx_node *n, const char *name);
int64_t onnx_attr_int(const struct onnx_node *n, const char *name, int64_t def);
double onnx_attr_float(const struct onnx_node *n, const char *name, double def);
const char *onnx_attr_string(const struct onnx_node *n, const char *name, const char *def);

#endif
