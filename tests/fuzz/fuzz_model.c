/* Fuzz target: model validation (pvk_model_load_memory), then shape inference over the op list
 * with a small input when the model loads. A whole-file checksum guards every .pvk, so a mutated
 * file would almost never get past it: the harness rewrites the header's version, file size and checksum
 * to match the bytes, which sends the fuzzer into the section, tensor, op and dictionary checks. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/format.h"
#include "model/model.h"
#include "nn/shape.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fix_size_and_checksum(uint8_t *p, size_t size)
{
    struct pvk_file_header h;
    if (size < sizeof h)
        return;
    memcpy(&h, p, sizeof h);
    h.file_size = size;
    h.version = PVK_FILE_VERSION; /* so that seeds and crashers written by older converters still reach the checks */
    memcpy(p, &h, sizeof h);
    h.checksum = pvk_file_checksum(p, size);
    memcpy(p, &h, sizeof h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fix_size_and_checksum(copy, size);
    struct pvk_model m;
    char err[256];
    int rc = pvk_model_load_memory(copy, size, &m, err, sizeof err);
    free(copy); /* the loader keeps its own copy */
    if (rc)
        return 0;
    /* Each net's real input height (the rec and cls nets need 48); small widths. */
    int64_t in[4] = {1, 3, m.net_kind == PVK_NET_DET ? 32 : 48, m.net_kind == PVK_NET_DET ? 32 : 64};
    struct pvk_shape *shapes = calloc(m.n_tensors, sizeof *shapes);
    if (shapes)
        pvk_infer_shapes(&m, in, shapes, err, sizeof err);
    free(shapes);
    pvk_model_free(&m);
    return 0;
}
