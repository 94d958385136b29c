/* Serialises a lowered graph into the .pvk layout of model/format.h: activations numbered
 * densely in order of appearance, then the constants, converted to float32. */
#include "convert/writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/format.h"

static uint64_t align_up(uint64_t x)
{
    return (x + PVK_FILE_ALIGN - 1) / PVK_FILE_ALIGN * PVK_FILE_ALIGN;
}

static void set_name(char *dst, const char *src)
{
    size_t n = strlen(src);
    /* keep the end of long names: it is the distinguishing part (".scale", ".fold", ...) */
    snprintf(dst, PVK_NAME_LEN, "%s", n >= PVK_NAME_LEN ? src + n - (PVK_NAME_LEN - 1) : src);
}

int cv_write(const struct cv_graph *g, const struct cv_write_info *info, uint8_t **out, size_t *out_len, char *err,
             size_t err_len)
{
    int *ids = malloc((size_t)g->n_values * sizeof *ids), *order = malloc((size_t)g->n_values * sizeof *order);
    uint8_t *buf = NULL;
    int status = -1, n = 0;
    if (!ids || !order) {
        cv_fail(err, err_len, "out of memory");
        goto out;
    }
    for (int v = 0; v < g->n_values; v++)
        ids[v] = -1;
    /* Activations in order of first appearance, each produced before it is read. */
    ids[g->input] = n;
    order[n++] = g->input;
    for (int i = 0; i < g->n_ops; i++) {
        const struct cv_op *op = &g->ops[i];
        for (int k = 0; k < op->n_in; k++)
            if (op->in[k] < 0 || ids[op->in[k]] < 0) {
                cv_fail(err, err_len, "%s: op '%s' reads '%s' before anything computes it", g->file, op->op.name,
                        op->in[k] >= 0 ? g->values[op->in[k]].name : "?");
                goto out;
            }
        for (int k = 0; k < op->n_out; k++) {
            if (ids[op->out[k]] >= 0) {
                cv_fail(err, err_len, "%s: op '%s' writes '%s' twice", g->file, op->op.name,
                        g->values[op->out[k]].name);
                goto out;
            }
            ids[op->out[k]] = n;
            order[n++] = op->out[k];
        }
    }
    if (ids[g->output] < 0) {
        cv_fail(err, err_len, "%s: nothing computes the output", g->file);
        goto out;
    }
    int n_act = n;
    for (int i = 0; i < g->n_ops; i++)
        for (int k = 0; k < PVK_MAX_WEIGHTS; k++) {
            int w = g->ops[i].w[k];
            if (w >= 0 && ids[w] < 0) {
                ids[w] = n;
                order[n++] = w;
            }
        }
    uint64_t dict_bytes = 0;
    for (uint32_t k = 0; k < info->n_dict; k++)
        dict_bytes += strlen(info->dict[k]) + 1;
    struct pvk_file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, PVK_FILE_MAGIC, 8);
    h.version = PVK_FILE_VERSION;
    h.header_size = sizeof h;
    h.endian_tag = PVK_FILE_ENDIAN_TAG;
    h.net_kind = (uint32_t)info->net_kind;
    h.tensor_size = sizeof(struct pvk_tensor);
    h.op_size = sizeof(struct pvk_op);
    h.n_tensors = (uint32_t)n;
    h.n_ops = (uint32_t)g->n_ops;
    h.input = ids[g->input];
    h.output = ids[g->output];
    h.n_dict = info->n_dict;
    set_name(h.source, info->source);
    h.tensors_offset = align_up(sizeof h);
    h.ops_offset = align_up(h.tensors_offset + (uint64_t)n * sizeof(struct pvk_tensor));
    h.dict_offset = align_up(h.ops_offset + (uint64_t)g->n_ops * sizeof(struct pvk_op));
    h.dict_bytes = dict_bytes;
    h.data_offset = align_up(h.dict_offset + dict_bytes);
    uint64_t pos = h.data_offset;
    for (int t = n_act; t < n; t++)
        pos = align_up(pos + (uint64_t)g->values[order[t]].konst->numel * 4);
    h.data_bytes = pos - h.data_offset;
    h.file_size = pos;
    if (!(buf = calloc(1, (size_t)h.file_size))) {
        cv_fail(err, err_len, "out of memory");
        goto out;
    }
    struct pvk_tensor *tensors = (struct pvk_tensor *)(buf + h.tensors_offset);
    pos = h.data_offset;
    for (int t = 0; t < n; t++) {
        const struct cv_value *v = &g->values[order[t]];
        struct pvk_tensor *pt = &tensors[t];
        set_name(pt->name, v->name);
        pt->dtype = PVK_DTYPE_F32;
        pt->layout = PVK_LAYOUT_ROW_MAJOR;
        if (v->ndim > PVK_MAX_DIMS) {
            cv_fail(err, err_len, "%s: tensor '%s' has %d dims (max %d)", g->file, v->name, v->ndim, PVK_MAX_DIMS);
            goto out;
        }
        pt->ndim = (uint32_t)v->ndim;
        for (int d = 0; d < v->ndim; d++)
            pt->shape[d] = v->dims[d] >= 0 ? v->dims[d] : -1;
        if (t < n_act) {
            pt->kind = PVK_TENSOR_ACTIVATION;
            continue;
        }
        pt->kind = PVK_TENSOR_CONSTANT;
        pt->offset = pos;
        pt->nbytes = (uint64_t)v->konst->numel * 4;
        float *dst = (float *)(buf + pos);
        for (int64_t k = 0; k < v->konst->numel; k++)
            dst[k] = v->konst->f ? (float)v->konst->f[k] : (float)v->konst->i[k];
        pos = align_up(pos + pt->nbytes);
    }
    struct pvk_op *ops = (struct pvk_op *)(buf + h.ops_offset);
    for (int i = 0; i < g->n_ops; i++) {
        const struct cv_op *op = &g->ops[i];
        struct pvk_op *po = &ops[i];
        *po = op->op;
        po->n_inputs = (uint32_t)op->n_in;
        po->n_outputs = (uint32_t)op->n_out;
        for (int k = 0; k < PVK_MAX_INPUTS; k++)
            po->inputs[k] = k < op->n_in ? ids[op->in[k]] : -1;
        for (int k = 0; k < 2; k++)
            po->outputs[k] = k < op->n_out ? ids[op->out[k]] : -1;
        for (int k = 0; k < PVK_MAX_WEIGHTS; k++)
            po->weights[k] = op->w[k] >= 0 ? ids[op->w[k]] : -1;
    }
    char *d = (char *)buf + h.dict_offset;
    for (uint32_t k = 0; k < info->n_dict; k++) {
        size_t len = strlen(info->dict[k]) + 1;
        memcpy(d, info->dict[k], len);
        d += len;
    }
    memcpy(buf, &h, sizeof h);
    uint64_t sum = pvk_file_checksum(buf, h.file_size);
    memcpy(buf + offsetof(struct pvk_file_header, checksum), &sum, sizeof sum);
    *out = buf;
    *out_len = (size_t)h.file_size;
    buf = NULL;
    status = 0;
out:
    free(buf);
    free(ids);
    free(order);
    return status;
}
