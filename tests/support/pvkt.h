/* PVKT tensor files (format: tools/ref/pvkt.mjs): the onnxruntime outputs and inputs of
 * tests/data/parity, made by tools/ref/make-parity-fixtures.sh. */
#ifndef PPOCR_TEST_PVKT_H
#define PPOCR_TEST_PVKT_H

#include <stdint.h>

#include "nn/shape.h"

struct pvkt_tensor {
    struct pvk_shape shape;
    uint32_t dtype; /* PVK_DTYPE_F32 or PVK_DTYPE_I32 */
    void *data;     /* free() it */
};

/* Reads tests/data/parity/<name>; fails the running cmocka test on any problem. */
void pvkt_read(const char *name, struct pvkt_tensor *t);

#endif
