/* Recognising multi-node spellings of single pvk ops in the converter's graph. */
#ifndef PPOCR_CONVERT_PATTERNS_H
#define PPOCR_CONVERT_PATTERNS_H

#include "convert/graph.h"

/* Finds every attention block, layer norm, GELU, HardSwish and Swish spelled as several live
 * nodes: the op that replaces one goes to pending[n] (freeing what was there), n being the
 * node it is emitted at, and the nodes it covers are marked dead. Returns 0, -1 out of memory. */
int cv_match_patterns(struct cv_graph *g, struct cv_op **pending);

#endif
