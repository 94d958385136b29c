/* The converter's graph: values, ONNX nodes and the lowered op list, and the helpers that add
 * to it and query it. */
#include "convert/graph.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cv_fail(char *err, size_t err_len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, err_len, fmt, ap);
    va_end(ap);
    return -1;
}

int64_t cv_fresh_symbol(struct cv_graph *g)
{
    return g->next_symbol--;
}

struct cv_value *cv_new_value(struct cv_graph *g, const char *name, int *id)
{
    if (g->n_values == g->cap_values) {
        int cap = g->cap_values ? g->cap_values * 2 : 256;
        struct cv_value *p = realloc(g->values, (size_t)cap * sizeof *p);
        if (!p)
            return NULL;
        g->values = p;
        g->cap_values = cap;
    }
    struct cv_value *v = &g->values[g->n_values];
    memset(v, 0, sizeof *v);
    v->name = name;
    v->ndim = -1;
    v->producer = -1;
    *id = g->n_values++;
    return v;
}

int cv_add_value(struct cv_graph *g, const char *name, int ndim, const int64_t *dims)
{
    int id;
    char *copy = strdup(name);
    struct cv_value *v = copy ? cv_new_value(g, copy, &id) : NULL;
    if (!v) {
        free(copy);
        return -1;
    }
    v->owned_name = copy;
    v->ndim = ndim;
    for (int k = 0; k < ndim; k++)
        v->dims[k] = dims[k];
    return id;
}

int cv_add_const(struct cv_graph *g, struct onnx_tensor *t, const char *name)
{
    int id = cv_add_value(g, name, t->ndim, t->dims);
    if (id < 0)
        return -1;
    g->values[id].konst = t;
    g->values[id].is_int = t->i != NULL;
    return id;
}

int cv_new_const(struct cv_graph *g, const char *base, const char *suffix, int ndim, const int64_t *dims)
{
    struct onnx_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return -1;
    t->elem_type = ONNX_FLOAT;
    t->ndim = ndim;
    t->numel = 1;
    for (int k = 0; k < ndim; k++) {
        t->dims[k] = dims[k];
        t->numel *= dims[k];
    }
    t->f = calloc((size_t)(t->numel ? t->numel : 1), sizeof(double));
    char name[PVK_NAME_LEN * 2];
    snprintf(name, sizeof name, "%s%s", base, suffix);
    int id = t->f ? cv_add_const(g, t, name) : -1;
    if (id < 0) {
        free(t->f);
        free(t);
    }
    return id;
}

struct onnx_tensor *cv_tensor_new(int is_int, int ndim, const int64_t *dims)
{
    struct onnx_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->elem_type = is_int ? ONNX_INT64 : ONNX_FLOAT;
    t->ndim = ndim;
    t->numel = 1;
    for (int k = 0; k < ndim; k++) {
        t->dims[k] = dims[k];
        t->numel *= dims[k];
    }
    size_t n = (size_t)(t->numel > 0 ? t->numel : 1);
    if (is_int)
        t->i = calloc(n, sizeof(int64_t));
    else
        t->f = calloc(n, sizeof(double));
    if (!t->i && !t->f) {
        free(t);
        return NULL;
    }
    return t;
}

struct onnx_tensor *cv_tensor_copy(const struct onnx_tensor *s)
{
    struct onnx_tensor *t = cv_tensor_new(s->i != NULL, s->ndim, s->dims);
    if (!t)
        return NULL;
    t->elem_type = s->elem_type;
    size_t n = (size_t)(s->numel > 0 ? s->numel : 1);
    if (s->i)
        memcpy(t->i, s->i, n * sizeof(int64_t));
    else
        memcpy(t->f, s->f, n * sizeof(double));
    return t;
}

struct cv_op *cv_add_op(struct cv_graph *g, enum pvk_op_type type, const char *name)
{
    if (g->n_ops == g->cap_ops) {
        int cap = g->cap_ops ? g->cap_ops * 2 : 128;
        struct cv_op *p = realloc(g->ops, (size_t)cap * sizeof *p);
        if (!p)
            return NULL;
        g->ops = p;
        g->cap_ops = cap;
    }
    struct cv_op *op = &g->ops[g->n_ops++];
    memset(op, 0, sizeof *op);
    op->op.type = (uint32_t)type;
    snprintf(op->op.name, sizeof op->op.name, "%s", name);
    for (int k = 0; k < PVK_MAX_INPUTS; k++)
        op->in[k] = -1;
    for (int k = 0; k < 2; k++)
        op->out[k] = -1;
    for (int k = 0; k < PVK_MAX_WEIGHTS; k++)
        op->w[k] = -1;
    return op;
}

int cv_channel_const(struct cv_graph *g, int v, int64_t C, double fill, const char *base, const char *suffix)
{
    int id = cv_new_const(g, base, suffix, 1, &C);
    if (id < 0)
        return -1;
    double *dst = g->values[id].konst->f;
    const struct onnx_tensor *t = v >= 0 ? g->values[v].konst : NULL;
    for (int64_t k = 0; k < C; k++)
        dst[k] = !t ? fill : t->numel == 1 ? (t->f ? t->f[0] : (double)t->i[0]) : (t->f ? t->f[k] : (double)t->i[k]);
    return id;
}

int cv_node_uses(const struct cv_graph *g, int v, int *first)
{
    int n = 0;
    *first = -1;
    for (int i = 0; i < g->n_nodes; i++) {
        const struct cv_node *nd = &g->nodes[i];
        if (nd->dead)
            continue;
        for (int k = 0; k < nd->n_in; k++)
            if (nd->in[k] == v) {
                if (*first < 0)
                    *first = i;
                n++;
            }
    }
    return n + (v == g->output);
}

int cv_op_uses(const struct cv_graph *g, int v, int *first)
{
    int n = 0;
    *first = -1;
    for (int i = 0; i < g->n_ops; i++) {
        const struct cv_op *op = &g->ops[i];
        if (op->dead)
            continue;
        for (int k = 0; k < op->n_in; k++)
            if (op->in[k] == v) {
                if (*first < 0)
                    *first = i;
                n++;
            }
    }
    return n + (v == g->output);
}

int cv_op_producer(const struct cv_graph *g, int v)
{
    for (int i = 0; i < g->n_ops; i++)
        if (!g->ops[i].dead && (g->ops[i].out[0] == v || g->ops[i].out[1] == v))
            return i;
    return -1;
}

int cv_const_scalar(const struct cv_graph *g, int v, double *out)
{
    if (v < 0 || !g->values[v].konst || g->values[v].konst->numel != 1)
        return 0;
    const struct onnx_tensor *t = g->values[v].konst;
    *out = t->f ? t->f[0] : (double)t->i[0];
    return 1;
}

void cv_graph_free(struct cv_graph *g)
{
    for (int i = 0; i < g->n_values; i++) {
        struct cv_value *v = &g->values[i];
        if (v->konst) {
            onnx_tensor_free(v->konst);
            free(v->konst);
        }
        free(v->owned_name);
        free(v->part_val);
        free(v->part_sym);
    }
    for (int i = 0; i < g->n_nodes; i++) {
        free(g->nodes[i].in);
        free(g->nodes[i].out);
    }
    free(g->values);
    free(g->nodes);
    free(g->ops);
    memset(g, 0, sizeof *g);
}
