/* The on-disk layout of a .pvk model file (see models/FORMAT.md). Shared by the converter,
 * which writes it, and model.c, which maps and validates it. Little-endian only. */
#ifndef PPOCR_MODEL_FORMAT_H
#define PPOCR_MODEL_FORMAT_H

#include <stdint.h>

#include "model/model.h"

#define PVK_FILE_MAGIC "PVKMODEL"
#define PVK_FILE_VERSION 1u
#define PVK_FILE_ENDIAN_TAG 0x01020304u
#define PVK_FILE_ALIGN 64u

struct pvk_file_header {
    char magic[8];        /* "PVKMODEL" */
    uint32_t version;     /* PVK_FILE_VERSION */
    uint32_t header_size; /* sizeof(struct pvk_file_header) */
    uint64_t file_size;   /* total bytes */
    uint64_t checksum;    /* FNV-1a 64 of the whole file, this field read as zero */
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

uint64_t pvk_fnv1a64(uint64_t h, const void *data, uint64_t len);
#define PVK_FNV1A64_INIT 0xcbf29ce484222325ull

#endif
