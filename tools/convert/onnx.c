#include "convert/onnx.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/pb.h"

static int fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return -1;
}

/* Growable array of raw 64-bit values, the collector for repeated scalar fields. */
struct u64s {
    uint64_t *v;
    size_t n, cap;
};

static int u64s_add(void *ctx, uint64_t x)
{
    struct u64s *a = ctx;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 16;
        uint64_t *p = realloc(a->v, cap * sizeof *p);
        if (!p)
            return -1;
        a->v = p;
        a->cap = cap;
    }
    a->v[a->n++] = x;
    return 0;
}

/* Grows *arr (of elements of `size` bytes) by one zeroed element; returns it or NULL. */
static void *push(void *arr_ptr, int *n, size_t size)
{
    void **arr = arr_ptr;
    char *p = realloc(*arr, (size_t)(*n + 1) * size);
    if (!p)
        return NULL;
    *arr = p;
    memset(p + (size_t)*n * size, 0, size);
    return p + (size_t)(*n)++ * size;
}

static char *dup_bytes(const struct pb_reader *b)
{
    size_t n = (size_t)(b->end - b->p);
    char *s = malloc(n + 1);
    if (s) {
        if (n)
            memcpy(s, b->p, n);
        s[n] = 0;
    }
    return s;
}

static float f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static double f64_from_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, 8);
    return d;
}

static double f16_to_double(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m | 0x400, e - 25);
    return (h & 0x8000) ? -v : v;
}

int onnx_elem_is_float(int32_t t)
{
    return t == ONNX_FLOAT || t == ONNX_DOUBLE || t == ONNX_FLOAT16;
}

static int elem_size(int32_t t)
{
    switch (t) {
    case ONNX_UINT8:
    case ONNX_INT8:
    case ONNX_BOOL: return 1;
    case ONNX_UINT16:
    case ONNX_INT16:
    case ONNX_FLOAT16: return 2;
    case ONNX_FLOAT:
    case ONNX_INT32:
    case ONNX_UINT32: return 4;
    case ONNX_INT64:
    case ONNX_DOUBLE:
    case ONNX_UINT64: return 8;
    default: return 0;
    }
}

/* Value of element k of raw little-endian data of type t. */
static void raw_elem(const uint8_t *p, int32_t t, double *f, int64_t *i)
{
    uint64_t u = 0;
    int n = elem_size(t);
    for (int b = n - 1; b >= 0; b--)
        u = u << 8 | p[b];
    switch (t) {
    case ONNX_FLOAT: *f = f32_from_bits((uint32_t)u); break;
    case ONNX_DOUBLE: *f = f64_from_bits(u); break;
    case ONNX_FLOAT16: *f = f16_to_double((uint16_t)u); break;
    case ONNX_INT8: *i = (int8_t)u; break;
    case ONNX_INT16: *i = (int16_t)u; break;
    case ONNX_INT32: *i = (int32_t)u; break;
    case ONNX_INT64: *i = (int64_t)u; break;
    default: *i = (int64_t)u; break; /* unsigned types and bool */
    }
}

void onnx_tensor_free(struct onnx_tensor *t)
{
    if (!t)
        return;
    free(t->name);
    free(t->f);
    free(t->i);
    memset(t, 0, sizeof *t);
}

static int parse_tensor(struct pb_reader r, struct onnx_tensor *t, char *err, size_t err_len)
{
    struct pb_field f;
    struct u64s dims = {0}, fdata = {0}, idata = {0}, i64data = {0}, ddata = {0}, u64data = {0};
    struct pb_reader raw = {0};
    int have_raw = 0, rc, status = -1;
    t->elem_type = 0;
    while ((rc = pb_next(&r, &f, err, err_len)) == 1) {
        switch (f.number) {
        case 1:
            if (pb_repeated(&f, 0, u64s_add, &dims, err, err_len))
                goto out;
            break;
        case 2: t->elem_type = (int32_t)f.value; break;
        case 4:
            if (pb_repeated(&f, 4, u64s_add, &fdata, err, err_len))
                goto out;
            break;
        case 5:
            if (pb_repeated(&f, 0, u64s_add, &idata, err, err_len))
                goto out;
            break;
        case 7:
            if (pb_repeated(&f, 0, u64s_add, &i64data, err, err_len))
                goto out;
            break;
        case 8:
            if (f.wire != PB_LEN) {
                fail(err, err_len, "TensorProto.name is not a string");
                goto out;
            }
            free(t->name);
            if (!(t->name = dup_bytes(&f.bytes))) {
                fail(err, err_len, "out of memory");
                goto out;
            }
            break;
        case 9:
            if (f.wire != PB_LEN) {
                fail(err, err_len, "TensorProto.raw_data is not bytes");
                goto out;
            }
            raw = f.bytes;
            have_raw = 1;
            break;
        case 10:
            if (pb_repeated(&f, 8, u64s_add, &ddata, err, err_len))
                goto out;
            break;
        case 11:
            if (pb_repeated(&f, 0, u64s_add, &u64data, err, err_len))
                goto out;
            break;
        case 13:
            fail(err, err_len, "tensor '%s' uses external data, which is not supported", t->name ? t->name : "");
            goto out;
        default: break;
        }
    }
    if (rc < 0)
        goto out;
    const char *name = t->name ? t->name : "";
    if (dims.n > ONNX_MAX_DIMS) {
        fail(err, err_len, "tensor '%s' has %zu dims (max %d)", name, dims.n, ONNX_MAX_DIMS);
        goto out;
    }
    t->ndim = (int)dims.n;
    t->numel = 1;
    for (size_t k = 0; k < dims.n; k++) {
        int64_t d = (int64_t)dims.v[k];
        if (d < 0 || d > ((int64_t)1 << 31) || t->numel * d > ((int64_t)1 << 31)) {
            fail(err, err_len, "tensor '%s' has an invalid or too large shape", name);
            goto out;
        }
        t->dims[k] = d;
        t->numel *= d;
    }
    int is_float = onnx_elem_is_float(t->elem_type);
    if (!elem_size(t->elem_type)) {
        fail(err, err_len, "tensor '%s' has unsupported element type %d", name, t->elem_type);
        goto out;
    }
    size_t n = (size_t)t->numel;
    t->f = is_float ? calloc(n ? n : 1, sizeof(double)) : NULL;
    t->i = is_float ? NULL : calloc(n ? n : 1, sizeof(int64_t));
    if (!t->f && !t->i) {
        fail(err, err_len, "out of memory");
        goto out;
    }
    if (have_raw) {
        size_t es = (size_t)elem_size(t->elem_type);
        if ((size_t)(raw.end - raw.p) != n * es) {
            fail(err, err_len, "tensor '%s': raw_data has %zu bytes, shape needs %zu", name, (size_t)(raw.end - raw.p),
                 n * es);
            goto out;
        }
        for (size_t k = 0; k < n; k++) {
            double dv = 0;
            int64_t iv = 0;
            raw_elem(raw.p + k * es, t->elem_type, &dv, &iv);
            if (is_float)
                t->f[k] = dv;
            else
                t->i[k] = iv;
        }
    } else {
        const struct u64s *src;
        switch (t->elem_type) {
        case ONNX_FLOAT: src = &fdata; break;
        case ONNX_DOUBLE: src = &ddata; break;
        case ONNX_INT64: src = &i64data; break;
        case ONNX_UINT32:
        case ONNX_UINT64: src = &u64data; break;
        default: src = &idata; break; /* int32_data carries the small types, fp16 bits and bool */
        }
        if (src->n != n) {
            fail(err, err_len, "tensor '%s' has %zu values, shape needs %zu", name, src->n, n);
            goto out;
        }
        for (size_t k = 0; k < n; k++) {
            uint64_t u = src->v[k];
            switch (t->elem_type) {
            case ONNX_FLOAT: t->f[k] = f32_from_bits((uint32_t)u); break;
            case ONNX_DOUBLE: t->f[k] = f64_from_bits(u); break;
            case ONNX_FLOAT16: t->f[k] = f16_to_double((uint16_t)u); break;
            case ONNX_INT32:
            case ONNX_INT16:
            case ONNX_INT8: t->i[k] = (int32_t)(uint32_t)u; break;
            default: t->i[k] = (int64_t)u; break;
            }
        }
    }
    status = 0;
out:
    free(dims.v);
    free(fdata.v);
    free(idata.v);
    free(i64data.v);
    free(ddata.v);
    free(u64data.v);
    if (status)
        onnx_tensor_free(t);
    return status;
}

static int parse_attr(struct pb_reader r, struct onnx_attr *a, char *err, size_t err_len)
{
    struct pb_field f;
    struct u64s floats = {0}, ints = {0};
    int rc, status = -1;
    while ((rc = pb_next(&r, &f, err, err_len)) == 1) {
        switch (f.number) {
        case 1:
            if (f.wire != PB_LEN) {
                fail(err, err_len, "AttributeProto.name is not a string");
                goto out;
            }
            free(a->name);
            if (!(a->name = dup_bytes(&f.bytes)))
                goto oom;
            break;
        case 2:
            if (f.wire != PB_FIXED32) {
                fail(err, err_len, "AttributeProto.f is not fixed32");
                goto out;
            }
            a->f = f32_from_bits((uint32_t)f.value);
            break;
        case 3:
            if (f.wire != PB_VARINT) {
                fail(err, err_len, "AttributeProto.i is not a varint");
                goto out;
            }
            a->i = (int64_t)f.value;
            break;
        case 4:
            if (f.wire != PB_LEN) {
                fail(err, err_len, "AttributeProto.s is not bytes");
                goto out;
            }
            free(a->s);
            if (!(a->s = dup_bytes(&f.bytes)))
                goto oom;
            break;
        case 5:
            if (f.wire != PB_LEN) {
                fail(err, err_len, "AttributeProto.t is not a message");
                goto out;
            }
            if (a->t) {
                onnx_tensor_free(a->t);
                free(a->t);
            }
            if (!(a->t = calloc(1, sizeof *a->t)))
                goto oom;
            if (parse_tensor(f.bytes, a->t, err, err_len))
                goto out;
            break;
        case 7:
            if (pb_repeated(&f, 4, u64s_add, &floats, err, err_len))
                goto out;
            break;
        case 8:
            if (pb_repeated(&f, 0, u64s_add, &ints, err, err_len))
                goto out;
            break;
        case 20:
            if (f.wire != PB_VARINT) {
                fail(err, err_len, "AttributeProto.type is not a varint");
                goto out;
            }
            a->type = (int)f.value;
            break;
        default: break; /* graphs, strings, sparse tensors: not used by PP-OCR */
        }
    }
    if (rc < 0)
        goto out;
    if (floats.n > 1u << 20 || ints.n > 1u << 20) {
        fail(err, err_len, "attribute list too long");
        goto out;
    }
    a->n_floats = (int)floats.n;
    a->n_ints = (int)ints.n;
    if (!(a->floats = calloc(floats.n + 1, sizeof(double))) || !(a->ints = calloc(ints.n + 1, sizeof(int64_t))))
        goto oom;
    for (size_t k = 0; k < floats.n; k++)
        a->floats[k] = f32_from_bits((uint32_t)floats.v[k]);
    for (size_t k = 0; k < ints.n; k++)
        a->ints[k] = (int64_t)ints.v[k];
    if (!a->name) {
        fail(err, err_len, "attribute without a name");
        goto out;
    }
    status = 0;
    goto out;
oom:
    fail(err, err_len, "out of memory");
out:
    free(floats.v);
    free(ints.v);
    return status;
}

static void free_attr(struct onnx_attr *a)
{
    free(a->name);
    free(a->s);
    if (a->t) {
        onnx_tensor_free(a->t);
        free(a->t);
    }
    free(a->floats);
    free(a->ints);
}

static int push_string(char ***arr, int *n, const struct pb_field *f)
{
    char **slot = push(arr, n, sizeof(char *));
    if (!slot)
        return -1;
    return (*slot = dup_bytes(&f->bytes)) ? 0 : -1;
}

static int parse_node(struct pb_reader r, struct onnx_node *nd, char *err, size_t err_len)
{
    struct pb_field f;
    int rc;
    while ((rc = pb_next(&r, &f, err, err_len)) == 1) {
        if (f.number >= 1 && f.number <= 7 && f.number != 5 && f.number != 6 && f.wire != PB_LEN)
            return fail(err, err_len, "NodeProto field %u is not a string", f.number);
        switch (f.number) {
        case 1:
            if (push_string(&nd->inputs, &nd->n_inputs, &f))
                goto oom;
            break;
        case 2:
            if (push_string(&nd->outputs, &nd->n_outputs, &f))
                goto oom;
            break;
        case 3:
            free(nd->name);
            if (!(nd->name = dup_bytes(&f.bytes)))
                goto oom;
            break;
        case 4:
            free(nd->op_type);
            if (!(nd->op_type = dup_bytes(&f.bytes)))
                goto oom;
            break;
        case 7:
            free(nd->domain);
            if (!(nd->domain = dup_bytes(&f.bytes)))
                goto oom;
            break;
        case 5: {
            if (f.wire != PB_LEN)
                return fail(err, err_len, "NodeProto.attribute is not a message");
            struct onnx_attr *a = push(&nd->attrs, &nd->n_attrs, sizeof *a);
            if (!a)
                goto oom;
            if (parse_attr(f.bytes, a, err, err_len))
                return -1;
            break;
        }
        default: break;
        }
    }
    if (rc < 0)
        return -1;
    if (!nd->op_type)
        return fail(err, err_len, "node '%s' has no op_type", nd->name ? nd->name : "");
    if (!nd->name && !(nd->name = strdup(nd->n_outputs ? nd->outputs[0] : nd->op_type)))
        goto oom;
    return 0;
oom:
    return fail(err, err_len, "out of memory");
}

static void free_node(struct onnx_node *nd)
{
    for (int k = 0; k < nd->n_inputs; k++)
        free(nd->inputs[k]);
    for (int k = 0; k < nd->n_outputs; k++)
        free(nd->outputs[k]);
    for (int k = 0; k < nd->n_attrs; k++)
        free_attr(&nd->attrs[k]);
    free(nd->inputs);
    free(nd->outputs);
    free(nd->attrs);
    free(nd->name);
    free(nd->op_type);
    free(nd->domain);
}

/* ValueInfoProto -> TypeProto.tensor_type -> (elem_type, TensorShapeProto -> dims). */
static int parse_value_info(struct pb_reader r, struct onnx_value_info *v, char *err, size_t err_len)
{
    struct pb_field f, g, h, d, e;
    int rc;
    v->ndim = -1;
    while ((rc = pb_next(&r, &f, err, err_len)) == 1) {
        if (f.wire != PB_LEN)
            continue;
        if (f.number == 1) {
            free(v->name);
            if (!(v->name = dup_bytes(&f.bytes)))
                return fail(err, err_len, "out of memory");
        } else if (f.number == 2) {
            struct pb_reader type = f.bytes;
            while ((rc = pb_next(&type, &g, err, err_len)) == 1) {
                if (g.number != 1 || g.wire != PB_LEN)
                    continue;
                struct pb_reader tt = g.bytes;
                while ((rc = pb_next(&tt, &h, err, err_len)) == 1) {
                    if (h.number == 1 && h.wire == PB_VARINT)
                        v->elem_type = (int32_t)h.value;
                    if (h.number != 2 || h.wire != PB_LEN)
                        continue;
                    struct pb_reader shape = h.bytes;
                    v->ndim = 0;
                    while ((rc = pb_next(&shape, &d, err, err_len)) == 1) {
                        if (d.number != 1 || d.wire != PB_LEN)
                            continue;
                        if (v->ndim == ONNX_MAX_DIMS)
                            return fail(err, err_len, "value '%s' has more than %d dims", v->name ? v->name : "",
                                        ONNX_MAX_DIMS);
                        int64_t dim = -1;
                        struct pb_reader dr = d.bytes;
                        while ((rc = pb_next(&dr, &e, err, err_len)) == 1)
                            if (e.number == 1 && e.wire == PB_VARINT && (int64_t)e.value > 0)
                                dim = (int64_t)e.value;
                        if (rc < 0)
                            return -1;
                        v->dims[v->ndim++] = dim;
                    }
                    if (rc < 0)
                        return -1;
                }
                if (rc < 0)
                    return -1;
            }
            if (rc < 0)
                return -1;
        }
    }
    if (rc < 0)
        return -1;
    if (!v->name)
        return fail(err, err_len, "graph input/output without a name");
    return 0;
}

static int parse_graph(struct pb_reader r, struct onnx_model *m, char *err, size_t err_len)
{
    struct pb_field f;
    int rc;
    while ((rc = pb_next(&r, &f, err, err_len)) == 1) {
        if (f.number != 1 && f.number != 5 && f.number != 11 && f.number != 12)
            continue;
        if (f.wire != PB_LEN)
            return fail(err, err_len, "GraphProto field %u is not a message", f.number);
        switch (f.number) {
        case 1: {
            struct onnx_node *nd = push(&m->nodes, &m->n_nodes, sizeof *nd);
            if (!nd)
                return fail(err, err_len, "out of memory");
            if (parse_node(f.bytes, nd, err, err_len))
                return -1;
            break;
        }
        case 5: {
            struct onnx_tensor *t = push(&m->initializers, &m->n_initializers, sizeof *t);
            if (!t)
                return fail(err, err_len, "out of memory");
            if (parse_tensor(f.bytes, t, err, err_len))
                return -1;
            if (!t->name)
                return fail(err, err_len, "initializer without a name");
            break;
        }
        case 11:
        case 12: {
            struct onnx_value_info *v = f.number == 11 ? push(&m->inputs, &m->n_inputs, sizeof *v)
                                                       : push(&m->outputs, &m->n_outputs, sizeof *v);
            if (!v)
                return fail(err, err_len, "out of memory");
            if (parse_value_info(f.bytes, v, err, err_len))
                return -1;
            break;
        }
        }
    }
    return rc < 0 ? -1 : 0;
}

int onnx_parse(const uint8_t *data, size_t len, struct onnx_model *m, char *err, size_t err_len)
{
    memset(m, 0, sizeof *m);
    struct pb_reader r = {data, data + len};
    struct pb_field f;
    int rc, have_graph = 0;
    while ((rc = pb_next(&r, &f, err, err_len)) == 1) {
        if (f.number == 1 && f.wire == PB_VARINT) {
            m->ir_version = (int64_t)f.value;
        } else if (f.number == 2 && f.wire == PB_LEN) {
            free(m->producer);
            if (!(m->producer = dup_bytes(&f.bytes))) {
                rc = fail(err, err_len, "out of memory");
                break;
            }
        } else if (f.number == 7 && f.wire == PB_LEN) {
            if (have_graph) {
                rc = fail(err, err_len, "ModelProto has two graphs");
                break;
            }
            have_graph = 1;
            if ((rc = parse_graph(f.bytes, m, err, err_len)) < 0)
                break;
        } else if (f.number == 8 && f.wire == PB_LEN) {
            /* OperatorSetIdProto: the default domain's version is the opset we follow. */
            struct pb_reader o = f.bytes;
            struct pb_field g;
            int64_t version = 0, default_domain = 1;
            while ((rc = pb_next(&o, &g, err, err_len)) == 1) {
                if (g.number == 1 && g.wire == PB_LEN && g.bytes.end > g.bytes.p)
                    default_domain = 0;
                if (g.number == 2 && g.wire == PB_VARINT)
                    version = (int64_t)g.value;
            }
            if (rc < 0)
                break;
            if (default_domain)
                m->opset = version;
        } else if (f.number == 7 || f.number == 8 || (f.number == 1 && f.wire != PB_VARINT)) {
            rc = fail(err, err_len, "ModelProto field %u has the wrong wire type", f.number);
            break;
        }
    }
    if (rc == 0 && !have_graph)
        rc = fail(err, err_len, "not an ONNX model: no graph");
    if (rc == 0 && m->n_nodes == 0)
        rc = fail(err, err_len, "ONNX graph has no nodes");
    if (rc < 0) {
        onnx_free(m);
        return -1;
    }
    return 0;
}

void onnx_free(struct onnx_model *m)
{
    for (int k = 0; k < m->n_nodes; k++)
        free_node(&m->nodes[k]);
    for (int k = 0; k < m->n_initializers; k++)
        onnx_tensor_free(&m->initializers[k]);
    for (int k = 0; k < m->n_inputs; k++)
        free(m->inputs[k].name);
    for (int k = 0; k < m->n_outputs; k++)
        free(m->outputs[k].name);
    free(m->nodes);
    free(m->initializers);
    free(m->inputs);
    free(m->outputs);
    free(m->producer);
    memset(m, 0, sizeof *m);
}

const struct onnx_attr *onnx_attr_find(const struct onnx_node *n, const char *name)
{
    for (int k = 0; k < n->n_attrs; k++)
        if (strcmp(n->attrs[k].name, name) == 0)
            return &n->attrs[k];
    return NULL;
}

int64_t onnx_attr_int(const struct onnx_node *n, const char *name, int64_t def)
{
    const struct onnx_attr *a = onnx_attr_find(n, name);
    return a ? a->i : def;
}

double onnx_attr_float(const struct onnx_node *n, const char *name, double def)
{
    const struct onnx_attr *a = onnx_attr_find(n, name);
    return a ? a->f : def;
}

const char *onnx_attr_string(const struct onnx_node *n, const char *name, const char *def)
{
    const struct onnx_attr *a = onnx_attr_find(n, name);
    return a && a->s ? a->s : def;
}
