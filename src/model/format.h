/* The on-disk layout of a .pvk model file (see models/FORMAT.md). Shared by the converter,
 * which writes it, and model.c, which maps and validates it. Little-endian only. */
#ifndef PPOCR_MODEL_FORMAT_H
#define PPOCR_MODEL_FORMAT_H

#include <stdint.h>

#include "model/model.h"

#define PVK_FILE_MAGIC "PVKMODEL"
#define PVK_FILE_VERSION 2u
#define PVK_FILE_ENDIAN_TAG 0x01020304u
#define PVK_FILE_ALIGN 64u

struct pvk_file_header {
    char magic[8];        /* "PVKMODEL" */
    uint32_t version;     /* PVK_FILE_VERSION */
    uint32_t header_size; /* sizeof(struct pvk_file_header) */
    uint64_t file_size;   /* total bytes */
    uint64_t checksum;    /* pvk_file_checksum of the whole file, this field read as zero */
    uint32_t endian_tag;  /* PVK_FILE_ENDIAN_TAG as written by the host */
    uint32_t net_kind;    /* enum pvk_net_kind */
    uint32_t tensor_size; /* sizeof(struct pvk_tensor) */
    uint32_t op_size;     /* sizeof(struct pvk_op) */
    uint32_t n_tensors, n_ops;
    int32_t input, output; /* tensor ids */
    uint32_t n_dict;       /* dictionary entries (rec only) */
    uint32_t reserved;
    uint64_t tensors_offset; /* struct pvk_tensor[n_tensors] */
    uint64_t ops_offset;     /* struct pvk_op[n_ops] */
    uint64_t dict_offset;    /* n_dict NUL-terminated UTF-8 strings, back to back */
    uint64_t dict_bytes;
    uint64_t data_offset; /* constant data; each tensor 64-byte aligned inside */
    uint64_t data_bytes;
    char source[PVK_NAME_LEN]; /* base name of the ONNX file, NUL-terminated */
};

/* The checksum of a whole file of `size` bytes (at least a header), its checksum field read as
 * zero: FNV-1a 64 in four lanes over 64-bit words (models/FORMAT.md), about six times faster than
 * byte by byte, which was most of the models' loading time. */
uint64_t pvk_file_checksum(const void *file, uint64_t size);

#endif
