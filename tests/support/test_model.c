#include "support/test_model.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nn/cpu/cpu_net.h"
#include "support/test_env.h"

bool test_load_cpu_model(const char *file, struct pvk_model *m)
{
    char path[1024], err[256];
    struct stat st;
    if (cpu_net_available(err, sizeof err)) {
        print_message("skipped: %s\n", err);
        return false;
    }
    snprintf(path, sizeof path, "%s/%s.pvk", test_models_dir(), file);
    if (stat(path, &st) != 0) {
        print_message("skipped: %s is missing (run tools/fetch-models.sh, or set PPOCR_MODELS)\n", path);
        return false;
    }
    if (pvk_model_load(path, m, err, sizeof err)) {
        print_error("%s: %s\n", path, err);
        fail();
    }
    return true;
}

void test_op_wire(struct pvk_op *o, int n_in, const int *in, int out)
{
    o->n_inputs = (uint32_t)n_in;
    for (int i = 0; i < PVK_MAX_INPUTS; i++)
        o->inputs[i] = i < n_in ? in[i] : -1;
    o->n_outputs = 1;
    o->outputs[0] = out;
    o->outputs[1] = -1;
    for (int i = 0; i < PVK_MAX_WEIGHTS; i++)
        o->weights[i] = -1;
}

static uint64_t align64(uint64_t x)
{
    return (x + PVK_FILE_ALIGN - 1) / PVK_FILE_ALIGN * PVK_FILE_ALIGN;
}

void test_model_load(struct pvk_tensor *t, int n_t, const struct pvk_op *ops, int n_ops, const void *const *data,
                     int input, int output, const char *source, struct pvk_model *out)
{
    struct pvk_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, PVK_FILE_MAGIC, 8);
    h.version = PVK_FILE_VERSION;
    h.header_size = sizeof h;
    h.endian_tag = PVK_FILE_ENDIAN_TAG;
    h.net_kind = PVK_NET_CLS;
    h.tensor_size = sizeof(struct pvk_tensor);
    h.op_size = sizeof(struct pvk_op);
    h.n_tensors = (uint32_t)n_t;
    h.n_ops = (uint32_t)n_ops;
    h.input = input;
    h.output = output;
    h.tensors_offset = align64(sizeof h);
    h.ops_offset = align64(h.tensors_offset + sizeof(struct pvk_tensor) * (uint64_t)n_t);
    h.data_offset = align64(h.ops_offset + sizeof(struct pvk_op) * (uint64_t)n_ops);
    h.dict_offset = h.data_offset;
    uint64_t at = h.data_offset;
    for (int i = 0; i < n_t; i++)
        if (t[i].kind == PVK_TENSOR_CONSTANT) {
            t[i].offset = at;
            at = align64(at + t[i].nbytes);
        }
    h.data_bytes = at - h.data_offset;
    h.file_size = at;
    snprintf(h.source, sizeof h.source, "%s", source);
    uint8_t *buf = calloc(1, (size_t)at);
    assert_non_null(buf);
    memcpy(buf + h.tensors_offset, t, sizeof(struct pvk_tensor) * (size_t)n_t);
    memcpy(buf + h.ops_offset, ops, sizeof(struct pvk_op) * (size_t)n_ops);
    for (int i = 0; i < n_t; i++)
        if (t[i].kind == PVK_TENSOR_CONSTANT)
            memcpy(buf + t[i].offset, data[i], (size_t)t[i].nbytes);
    memcpy(buf, &h, sizeof h);
    h.checksum = pvk_file_checksum(buf, (uint64_t)at);
    memcpy(buf, &h, sizeof h);
    char err[256];
    int rc = pvk_model_load_memory(buf, (size_t)at, out, err, sizeof err);
    free(buf);
    if (rc) {
        print_error("%s: %s\n", source, err);
        fail();
    }
}
