/* Shape inference and constant folding on the converter's graph. */
#ifndef PPOCR_CONVERT_INFER_H
#define PPOCR_CONVERT_INFER_H

#include <stddef.h>
#include <stdint.h>

#include "convert/graph.h"

/* Shape inference and constant folding of one node: sets its outputs' shapes and, when every
 * input is constant (or a partly run-time shape), their values. */
int cv_infer_node(struct cv_graph *g, int node, char *err, size_t err_len);

/* Split node: the static size of each output; returns the axis or -1 if not static. */
int cv_split_sizes(const struct cv_graph *g, const struct cv_node *nd, int64_t *sizes);

#endif
