/* A converted PP-OCR net (.pvk file, see models/FORMAT.md), read whole into memory.
 * The op list is in execution order; tensor ids index `tensors`. */
#ifndef PPOCR_MODEL_MODEL_H
#define PPOCR_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/ops.h"

enum pvk_dtype { PVK_DTYPE_F32 = 1, PVK_DTYPE_F16 = 2, PVK_DTYPE_I32 = 3 };
enum pvk_layout { PVK_LAYOUT_ROW_MAJOR = 0 };
enum pvk_tensor_kind { PVK_TENSOR_CONSTANT = 0, PVK_TENSOR_ACTIVATION = 1 };

struct pvk_tensor {
    char name[PVK_NAME_LEN];
    uint32_t kind;   /* enum pvk_tensor_kind */
    uint32_t dtype;  /* enum pvk_dtype */
    uint32_t layout; /* enum pvk_layout */
    uint32_t ndim;
    int64_t shape[PVK_MAX_DIMS]; /* activations: -1 for a dimension known only at run time */
    uint64_t offset;             /* constants: byte offset of the data in the file (64-aligned) */
    uint64_t nbytes;             /* constants: data size; activations: 0 */
};

enum pvk_net_kind { PVK_NET_DET = 1, PVK_NET_CLS = 2, PVK_NET_REC = 3 };

struct pvk_model {
    uint32_t net_kind; /* enum pvk_net_kind */
    uint32_t n_tensors, n_ops;
    const struct pvk_tensor *tensors;
    const struct pvk_op *ops;
    int32_t input;  /* tensor id of the net input, NCHW float */
    int32_t output; /* tensor id of the net output */
    /* Recognition only: the dictionary, one UTF-8 entry per class after the blank (class 0);
     * the last entry is the space. n_classes = 1 + n_dict. NULL elsewhere. */
    uint32_t n_dict;
    const char *const *dict;
    const char *source; /* the ONNX file it was converted from (base name) */
    void *impl_;        /* the file's bytes and owned storage */
};

/* The largest model file read (PP-OCR's largest nets are about 100 MB). */
#define PVK_MODEL_MAX_FILE_BYTES (1ll << 30)

/* Reads and validates `path` (magic, version, checksum, every offset and id in range).
 * Returns 0, or -1 with a one-line reason in err. */
int pvk_model_load(const char *path, struct pvk_model *model, char *err, size_t err_len);
/* The same from bytes in memory (copied; the caller may free `data` at once), e.g. for fuzzing. */
int pvk_model_load_memory(const void *data, size_t size, struct pvk_model *model, char *err, size_t err_len);
void pvk_model_free(struct pvk_model *model);

/* Pointer to a constant's data inside the file's bytes (NULL for activations). */
const void *pvk_tensor_data(const struct pvk_model *model, int32_t tensor_id);
/* Product of the dims; meaningless while a dim is -1 (a run-time size). */
int64_t pvk_tensor_numel(const struct pvk_tensor *t);

#endif
