/* Building the converter's graph from a decoded ONNX model. */
#ifndef PPOCR_CONVERT_IMPORT_H
#define PPOCR_CONVERT_IMPORT_H

#include <stddef.h>

#include "convert/graph.h"
#include "convert/onnx.h"

/* Builds the graph from a decoded ONNX model (which must outlive it), infers shapes and folds
 * every constant sub-graph, including shape arithmetic. Returns 0 or -1 with err set. */
int cv_graph_build(struct cv_graph *g, const struct onnx_model *m, const char *file, char *err, size_t err_len);

#endif
