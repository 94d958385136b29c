/* ONNX -> .pvk conversion, the library behind ppocr-convert. */
#ifndef PPOCR_CONVERT_CONVERT_H
#define PPOCR_CONVERT_CONVERT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

struct pvkc_options {
    int net_kind;          /* enum pvk_net_kind; 0: from the file name (det/cls/rec in it) */
    const char *dict_path; /* rec: the dictionary, one entry per line (required for rec) */
};

/* Converts ONNX bytes; `name` is the source file name used for the net kind and in messages.
 * On success *out is a malloc'ed model file. Returns 0 or -1 with a one-line reason. */
int pvkc_convert_memory(const uint8_t *onnx, size_t len, const char *name, const struct pvkc_options *opt,
                        uint8_t **out, size_t *out_len, char *err, size_t err_len);
/* Converts a file and writes the model atomically (temporary file, then rename). */
int pvkc_convert_file(const char *onnx_path, const char *out_path, const struct pvkc_options *opt, char *err,
                      size_t err_len);

/* Net kind from a file name ("det", "cls" or "rec" in the base name), 0 if none. */
int pvkc_kind_from_name(const char *path);

/* Reads a dictionary file: one entry per line (CR/LF stripped), then a space is appended as the
 * last class. *entries is one malloc'ed block (free it with free()). */
int pvkc_read_dict(const char *path, char ***entries, uint32_t *n, char *err, size_t err_len);

/* Prints the op list (index, type, act, inputs -> outputs, attrs, weight shapes) and the op
 * counts per type. */
void pvkc_dump(const struct pvk_model *m, FILE *out);

#endif
