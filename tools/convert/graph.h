/* The converter's working graph: ONNX nodes over numbered values, with inferred shapes and
 * folded constants, and the pvk op list it is lowered to. Building it (import.h), inference
 * (infer.h), pattern matching (patterns.h), lowering (lower.h) and fusion (fuse.h) work on it;
 * it knows none of them.
 *
 * Dimensions: >= 0 is a static size; a negative number is a symbol, a size known only at run
 * time. Two dims with the same symbol are equal; -1 is never used as a symbol so that the
 * reshape resolution can tell them apart from ONNX's "-1". */
#ifndef PPOCR_CONVERT_GRAPH_H
#define PPOCR_CONVERT_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "convert/onnx.h"
#include "model/ops.h"

#define CV_MAX_DIMS ONNX_MAX_DIMS

struct cv_value {
    const char *name; /* points into the ONNX model or into `owned_name` */
    char *owned_name;
    int ndim; /* -1 while unknown */
    int64_t dims[CV_MAX_DIMS];
    int is_int;                /* integer element type (shape arithmetic) */
    struct onnx_tensor *konst; /* constant data (owned), or NULL */
    /* A 1-D integer value some of whose elements are run-time sizes (e.g. Shape of a tensor
     * with a dynamic width): part_sym[k] is the symbol of element k or 0 if part_val[k] holds it. */
    int64_t *part_val, *part_sym;
    int producer; /* node index, -1 for graph inputs and constants */
};

struct cv_node {
    const struct onnx_node *src;
    const char *op; /* src->op_type */
    int n_in, n_out;
    int *in, *out; /* value ids, -1 for an omitted optional input */
    int dead;
};

/* One op of the lowered net; tensor references are value ids until the writer renumbers them. */
struct cv_op {
    struct pvk_op op; /* type, act, attr and name; the id arrays are filled by the writer */
    int n_in, n_out;
    int in[PVK_MAX_INPUTS], out[2], w[PVK_MAX_WEIGHTS]; /* value ids, -1 unused */
    int dead;
};

struct cv_graph {
    const char *file; /* for error messages */
    const struct onnx_model *onnx;
    int64_t opset;
    int n_values, cap_values;
    struct cv_value *values;
    int n_nodes;
    struct cv_node *nodes;
    int input, output; /* value ids */
    int n_ops, cap_ops;
    struct cv_op *ops;
    int64_t next_symbol; /* decreasing from -2 */
};

void cv_graph_free(struct cv_graph *g);

/* Adds a constant value (takes ownership of t) and returns its id, or -1 out of memory. */
int cv_add_const(struct cv_graph *g, struct onnx_tensor *t, const char *name);
/* Adds a value of unknown shape named by `name`, which must outlive the graph (a name in the
 * ONNX model); returns it with its id in *id, or NULL out of memory. */
struct cv_value *cv_new_value(struct cv_graph *g, const char *name, int *id);
/* Adds an activation value with the given shape; returns its id or -1. */
int cv_add_value(struct cv_graph *g, const char *name, int ndim, const int64_t *dims);
/* A new float constant of the given shape filled with zeros (name derived from `base`). */
int cv_new_const(struct cv_graph *g, const char *base, const char *suffix, int ndim, const int64_t *dims);
int64_t cv_fresh_symbol(struct cv_graph *g);
/* A new float constant of C values copied from constant v (a scalar is broadcast), or all
 * `fill` when v is -1 or not a constant; returns its id or -1 out of memory. */
int cv_channel_const(struct cv_graph *g, int v, int64_t C, double fill, const char *base, const char *suffix);

/* Appends an op; returns a pointer (valid until the next append) or NULL out of memory. */
struct cv_op *cv_add_op(struct cv_graph *g, enum pvk_op_type type, const char *name);

/* Consumers of value v among live nodes (ONNX level); `first` receives the first one. */
int cv_node_uses(const struct cv_graph *g, int v, int *first);
/* Consumers among live ops (pvk level), the graph output counting as one. */
int cv_op_uses(const struct cv_graph *g, int v, int *first);
int cv_op_producer(const struct cv_graph *g, int v);
/* Whether v is a constant of one element; its value goes to *out. */
int cv_const_scalar(const struct cv_graph *g, int v, double *out);

int cv_fail(char *err, size_t err_len, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* New zero-filled constant tensors (float64 or int64 data) and copies; NULL out of memory. */
struct onnx_tensor *cv_tensor_new(int is_int, int ndim, const int64_t *dims);
struct onnx_tensor *cv_tensor_copy(const struct onnx_tensor *s);

#endif
