/* Lowering the converter's graph from ONNX nodes to pvk ops. */
#ifndef PPOCR_CONVERT_LOWER_H
#define PPOCR_CONVERT_LOWER_H

#include <stddef.h>

#include "convert/graph.h"

/* ONNX nodes -> pvk ops, including the multi-node patterns (attention, layer norm, HardSwish,
 * Swish, GELU). */
int cv_lower(struct cv_graph *g, char *err, size_t err_len);

#endif
