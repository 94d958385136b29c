#include "convert/onnx_build.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/onnx.h"

static void flush_node(struct onnx_builder *b)
{
    if (b->has_node)
        pb_put_message_field(&b->graph, 1, &b->node);
    b->has_node = 0;
}

void ob_init(struct onnx_builder *b, int64_t opset)
{
    memset(b, 0, sizeof *b);
    b->opset = opset;
    pb_put_string_field(&b->graph, 2, "test");
}

static void value_info(struct onnx_builder *b, int field, const char *name, int ndim, const int64_t *dims)
{
    struct pb_writer shape = {0}, tensor = {0}, type = {0}, vi = {0};
    for (int d = 0; d < ndim; d++) {
        struct pb_writer dim = {0};
        if (dims[d] >= 0)
            pb_put_varint_field(&dim, 1, (uint64_t)dims[d]);
        else
            pb_put_string_field(&dim, 2, d == 0 ? "N" : "dyn");
        pb_put_message_field(&shape, 1, &dim);
    }
    pb_put_varint_field(&tensor, 1, ONNX_FLOAT);
    pb_put_message_field(&tensor, 2, &shape);
    pb_put_message_field(&type, 1, &tensor);
    pb_put_string_field(&vi, 1, name);
    pb_put_message_field(&vi, 2, &type);
    flush_node(b);
    pb_put_message_field(&b->graph, (uint32_t)field, &vi);
}

void ob_input(struct onnx_builder *b, const char *name, int ndim, const int64_t *dims)
{
    value_info(b, 11, name, ndim, dims);
}

void ob_output(struct onnx_builder *b, const char *name, int ndim, const int64_t *dims)
{
    value_info(b, 12, name, ndim, dims);
}

static void tensor_header(struct pb_writer *t, const char *name, int elem, int ndim, const int64_t *dims)
{
    for (int d = 0; d < ndim; d++)
        pb_put_varint_field(t, 1, (uint64_t)dims[d]);
    pb_put_varint_field(t, 2, (uint64_t)elem);
    pb_put_string_field(t, 8, name);
}

static int64_t count(int ndim, const int64_t *dims)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        n *= dims[d];
    return n;
}

void ob_init_f32(struct onnx_builder *b, const char *name, int ndim, const int64_t *dims, const float *data)
{
    struct pb_writer t = {0};
    tensor_header(&t, name, ONNX_FLOAT, ndim, dims);
    int64_t n = count(ndim, dims);
    uint8_t *raw = malloc((size_t)n * 4 + 1);
    if (!raw) {
        b->graph.failed = 1;
        pb_writer_free(&t);
        return;
    }
    for (int64_t k = 0; k < n; k++) {
        uint32_t u;
        memcpy(&u, &data[k], 4);
        for (int i = 0; i < 4; i++)
            raw[k * 4 + i] = (uint8_t)(u >> (8 * i));
    }
    pb_put_bytes_field(&t, 9, raw, (size_t)n * 4);
    free(raw);
    flush_node(b);
    pb_put_message_field(&b->graph, 5, &t);
}

void ob_init_i64(struct onnx_builder *b, const char *name, int ndim, const int64_t *dims, const int64_t *data)
{
    struct pb_writer t = {0}, packed = {0};
    tensor_header(&t, name, ONNX_INT64, ndim, dims);
    for (int64_t k = 0; k < count(ndim, dims); k++) {
        uint64_t v = (uint64_t)data[k];
        uint8_t buf[10];
        int n = 0;
        do {
            buf[n] = (uint8_t)(v & 0x7f);
            v >>= 7;
            if (v)
                buf[n] |= 0x80;
            n++;
        } while (v);
        pb_put_raw(&packed, buf, (size_t)n);
    }
    pb_put_message_field(&t, 7, &packed);
    flush_node(b);
    pb_put_message_field(&b->graph, 5, &t);
}

void ob_const_scalar(struct onnx_builder *b, const char *name, float v)
{
    struct pb_writer t = {0};
    tensor_header(&t, name, ONNX_FLOAT, 0, NULL);
    uint32_t u;
    memcpy(&u, &v, 4);
    pb_put_fixed32_field(&t, 4, u);
    ob_node(b, "Constant", name, "", name);
    struct pb_writer a = {0};
    pb_put_string_field(&a, 1, "value");
    pb_put_message_field(&a, 5, &t);
    pb_put_varint_field(&a, 20, 4);
    pb_put_message_field(&b->node, 5, &a);
}

static void put_names(struct pb_writer *w, uint32_t field, const char *list)
{
    while (*list) {
        const char *end = strchr(list, ',');
        size_t n = end ? (size_t)(end - list) : strlen(list);
        pb_put_bytes_field(w, field, list, n);
        list += n + (end != NULL);
        if (end && !*list)
            pb_put_bytes_field(w, field, "", 0);
    }
}

void ob_node(struct onnx_builder *b, const char *op, const char *name, const char *inputs, const char *outputs)
{
    flush_node(b);
    memset(&b->node, 0, sizeof b->node);
    b->has_node = 1;
    put_names(&b->node, 1, inputs);
    put_names(&b->node, 2, outputs);
    pb_put_string_field(&b->node, 3, name);
    pb_put_string_field(&b->node, 4, op);
}

static void put_attr(struct onnx_builder *b, struct pb_writer *a, const char *name, int type)
{
    struct pb_writer full = {0};
    pb_put_string_field(&full, 1, name);
    pb_put_raw(&full, a->data, a->len);
    pb_put_varint_field(&full, 20, (uint64_t)type);
    pb_writer_free(a);
    pb_put_message_field(&b->node, 5, &full);
}

void ob_attr_int(struct onnx_builder *b, const char *name, int64_t v)
{
    struct pb_writer a = {0};
    pb_put_varint_field(&a, 3, (uint64_t)v);
    put_attr(b, &a, name, ONNX_ATTR_INT);
}

void ob_attr_float(struct onnx_builder *b, const char *name, float v)
{
    struct pb_writer a = {0};
    uint32_t u;
    memcpy(&u, &v, 4);
    pb_put_fixed32_field(&a, 2, u);
    put_attr(b, &a, name, ONNX_ATTR_FLOAT);
}

void ob_attr_ints(struct onnx_builder *b, const char *name, int n, const int64_t *v)
{
    struct pb_writer a = {0};
    for (int k = 0; k < n; k++) /* unpacked, as some exporters write them */
        pb_put_varint_field(&a, 8, (uint64_t)v[k]);
    put_attr(b, &a, name, ONNX_ATTR_INTS);
}

void ob_attr_string(struct onnx_builder *b, const char *name, const char *v)
{
    struct pb_writer a = {0};
    pb_put_string_field(&a, 4, v);
    put_attr(b, &a, name, ONNX_ATTR_STRING);
}

#define JOIN_SIZE 512

/* Comma-separated list of `count` names into buf (JOIN_SIZE bytes), cut short if too long. */
static void join(char *buf, int count, ...)
{
    va_list ap;
    size_t len = 0;
    va_start(ap, count);
    for (int k = 0; k < count; k++) {
        const char *s = va_arg(ap, const char *);
        size_t n = strlen(s);
        if (len + n + 2 > JOIN_SIZE)
            break;
        if (k)
            buf[len++] = ',';
        memcpy(buf + len, s, n);
        len += n;
    }
    va_end(ap);
    buf[len] = 0;
}

void ob_svtr_attention(struct onnx_builder *b, const char *prefix, const char *tokens, const char *qkv, const char *out,
                       int64_t channels, int64_t heads, float scale, int use_split)
{
    char n[40][96], list[4][JOIN_SIZE];
#define NAME(i, s) (snprintf(n[i], sizeof n[i], "%s%s", prefix, s), n[i])
    const int64_t one[] = {1}, consts[] = {0, 1, 2, 3, heads, channels / heads, channels};
    const char *const cnames[] = {"c0", "c1", "c2", "c3", "heads", "hd", "ch"};
    for (int k = 0; k < 7; k++)
        ob_init_i64(b, NAME(k, cnames[k]), 1, one, &consts[k]);
    ob_const_scalar(b, NAME(7, "scale"), scale);
    ob_node(b, "Shape", NAME(8, "shape"), tokens, NAME(9, "sh"));
    join(list[0], 4, n[9], n[1], n[2], n[0]);
    ob_node(b, "Slice", NAME(10, "tdim"), list[0], NAME(11, "t"));
    join(list[0], 5, n[0], n[11], n[3], n[4], n[5]);
    ob_node(b, "Concat", NAME(12, "target"), list[0], NAME(13, "target_v"));
    ob_attr_int(b, "axis", 0);
    join(list[0], 2, qkv, n[13]);
    ob_node(b, "Reshape", NAME(14, "r"), list[0], NAME(15, "r5"));
    const int64_t perm[] = {2, 0, 3, 1, 4}, permk[] = {0, 1, 3, 2}, permo[] = {0, 2, 1, 3}, axis0[] = {0},
                  ones[] = {1, 1, 1};
    ob_node(b, "Transpose", NAME(16, "tr"), n[15], NAME(17, "t5"));
    ob_attr_ints(b, "perm", 5, perm);
    const char *part[3] = {NAME(18, "q5"), NAME(19, "k5"), NAME(20, "v5")};
    if (use_split) {
        join(list[0], 3, part[0], part[1], part[2]);
        ob_node(b, "Split", NAME(21, "split"), n[17], list[0]);
        ob_attr_int(b, "axis", 0);
        ob_attr_ints(b, "split", 3, ones);
    } else {
        for (int k = 0; k < 3; k++) {
            char node[96];
            join(list[1 + k], 4, n[17], n[k], n[k + 1], n[0]);
            snprintf(node, sizeof node, "%sslice%d", prefix, k);
            ob_node(b, "Slice", node, list[1 + k], part[k]);
        }
    }
    const char *sq[3] = {NAME(22, "q"), NAME(23, "k"), NAME(24, "v")};
    for (int k = 0; k < 3; k++) {
        char node[96];
        snprintf(node, sizeof node, "%ssqueeze%d", prefix, k);
        ob_node(b, "Squeeze", node, part[k], sq[k]);
        ob_attr_ints(b, "axes", 1, axis0);
    }
    join(list[0], 2, sq[0], n[7]);
    ob_node(b, "Mul", NAME(25, "q_scale"), list[0], NAME(26, "qs"));
    ob_node(b, "Transpose", NAME(27, "k_t"), sq[1], NAME(28, "kT"));
    ob_attr_ints(b, "perm", 4, permk);
    join(list[0], 2, n[26], n[28]);
    ob_node(b, "MatMul", NAME(29, "qk"), list[0], NAME(30, "att"));
    ob_node(b, "Softmax", NAME(31, "softmax"), n[30], NAME(32, "p"));
    ob_attr_int(b, "axis", 3);
    join(list[0], 2, n[32], sq[2]);
    ob_node(b, "MatMul", NAME(33, "pv"), list[0], NAME(34, "o"));
    ob_node(b, "Transpose", NAME(35, "o_t"), n[34], NAME(36, "oT"));
    ob_attr_ints(b, "perm", 4, permo);
    join(list[0], 3, n[0], n[11], n[6]);
    ob_node(b, "Concat", NAME(37, "target2"), list[0], NAME(38, "target2_v"));
    ob_attr_int(b, "axis", 0);
    join(list[0], 2, n[36], n[38]);
    ob_node(b, "Reshape", NAME(39, "ro"), list[0], out);
#undef NAME
}

int ob_finish(struct onnx_builder *b, uint8_t **out, size_t *len)
{
    struct pb_writer model = {0}, opset = {0};
    flush_node(b);
    pb_put_varint_field(&model, 1, 8);
    pb_put_string_field(&model, 2, "ppocr-vk tests");
    pb_put_message_field(&model, 7, &b->graph);
    pb_put_varint_field(&opset, 2, (uint64_t)b->opset);
    pb_put_message_field(&model, 8, &opset);
    if (model.failed) {
        pb_writer_free(&model);
        return -1;
    }
    *out = model.data;
    *len = model.len;
    return 0;
}
