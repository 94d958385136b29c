/* Writing a lowered graph as a .pvk model file (layout in model/format.h, models/FORMAT.md). */
#ifndef PPOCR_CONVERT_WRITER_H
#define PPOCR_CONVERT_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "convert/graph.h"

struct cv_write_info {
    int net_kind;       /* enum pvk_net_kind */
    const char *source; /* base name of the ONNX file */
    uint32_t n_dict;    /* rec: dictionary entries after the blank, the space last */
    const char *const *dict;
};

/* The whole file in a malloc'ed buffer. Returns 0 or -1 with err set. */
int cv_write(const struct cv_graph *g, const struct cv_write_info *info, uint8_t **out, size_t *out_len, char *err,
             size_t err_len);

#endif
