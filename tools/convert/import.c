/* Building the converter's graph from a decoded ONNX model: constants, the input, then every
 * node in order, each inferred and folded as soon as its inputs are known. */
#include "convert/import.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convert/infer.h"

/* --- name lookup ------------------------------------------------------------------------------ */

static uint64_t hash_name(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    while (*s)
        h = (h ^ (uint8_t)*s++) * 1099511628211ull;
    return h;
}

struct name_map {
    int *slot; /* value id + 1, 0 empty */
    size_t cap;
};

static int map_find(const struct name_map *m, const struct cv_graph *g, const char *name)
{
    for (size_t i = hash_name(name) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->slot[i])
            return -1;
        if (strcmp(g->values[m->slot[i] - 1].name, name) == 0)
            return m->slot[i] - 1;
    }
}

static void map_put(struct name_map *m, const struct cv_graph *g, int id)
{
    const char *name = g->values[id].name;
    size_t i = hash_name(name) & (m->cap - 1);
    while (m->slot[i] && strcmp(g->values[m->slot[i] - 1].name, name) != 0)
        i = (i + 1) & (m->cap - 1);
    m->slot[i] = id + 1; /* a later definition of the same name shadows the earlier one */
}

/* --- build ------------------------------------------------------------------------------------ */

static int const_from_attr(const struct onnx_node *n, struct onnx_tensor **out)
{
    const struct onnx_attr *a = n->n_attrs ? &n->attrs[0] : NULL;
    if (!a)
        return -1;
    if (a->t) {
        *out = cv_tensor_copy(a->t);
    } else if (!strcmp(a->name, "value_float") || !strcmp(a->name, "value_int")) {
        int is_int = !strcmp(a->name, "value_int");
        *out = cv_tensor_new(is_int, 0, NULL);
        if (*out && is_int)
            (*out)->i[0] = a->i;
        else if (*out)
            (*out)->f[0] = a->f;
    } else if (!strcmp(a->name, "value_floats") || !strcmp(a->name, "value_ints")) {
        int is_int = !strcmp(a->name, "value_ints");
        int64_t d = is_int ? a->n_ints : a->n_floats;
        *out = cv_tensor_new(is_int, 1, &d);
        for (int64_t k = 0; *out && k < d; k++) {
            if (is_int)
                (*out)->i[k] = a->ints[k];
            else
                (*out)->f[k] = a->floats[k];
        }
    } else {
        return -1;
    }
    return *out ? 0 : -2;
}

static int add_initializers(struct cv_graph *g, struct name_map *map, char *err, size_t err_len)
{
    const struct onnx_model *m = g->onnx;
    for (int i = 0; i < m->n_initializers; i++) {
        struct onnx_tensor *t = cv_tensor_copy(&m->initializers[i]);
        int id = t ? cv_add_const(g, t, m->initializers[i].name) : -1;
        if (id < 0)
            return cv_fail(err, err_len, "out of memory");
        map_put(map, g, id);
    }
    return 0;
}

/* The one graph input that is not an initializer; its run-time sizes become symbols. */
static int add_input(struct cv_graph *g, struct name_map *map, char *err, size_t err_len)
{
    const struct onnx_model *m = g->onnx;
    for (int i = 0; i < m->n_inputs; i++) {
        const struct onnx_value_info *vi = &m->inputs[i];
        if (map_find(map, g, vi->name) >= 0)
            continue; /* an initializer listed as an input */
        if (g->input >= 0)
            return cv_fail(err, err_len, "%s: the graph has more than one input", g->file);
        if (vi->ndim < 0)
            return cv_fail(err, err_len, "%s: input '%s' has no shape", g->file, vi->name);
        int64_t dims[CV_MAX_DIMS];
        for (int d = 0; d < vi->ndim; d++)
            dims[d] = vi->dims[d] >= 0 ? vi->dims[d] : cv_fresh_symbol(g);
        int id = cv_add_value(g, vi->name, vi->ndim, dims);
        if (id < 0)
            return cv_fail(err, err_len, "out of memory");
        g->input = id;
        map_put(map, g, id);
    }
    if (g->input < 0)
        return cv_fail(err, err_len, "%s: the graph has no input", g->file);
    return 0;
}

/* A Constant node becomes a constant value and no node. */
static int add_constant(struct cv_graph *g, struct name_map *map, const struct onnx_node *src, char *err,
                        size_t err_len)
{
    struct onnx_tensor *t = NULL;
    int rc = const_from_attr(src, &t);
    int id = rc == 0 ? cv_add_value(g, src->outputs[0], t->ndim, t->dims) : -1;
    if (id < 0) {
        if (t) {
            onnx_tensor_free(t);
            free(t);
        }
        return cv_fail(err, err_len,
                       rc == -1 ? "%s: node '%s' (Constant): unsupported value attribute" : "out of memory", g->file,
                       src->name);
    }
    g->values[id].konst = t;
    g->values[id].is_int = t->i != NULL;
    map_put(map, g, id);
    return 0;
}

/* Any other node: inputs looked up by name, outputs added, then inferred and folded; a node
 * whose outputs all fold is dead from the start. */
static int add_node(struct cv_graph *g, struct name_map *map, const struct onnx_node *src, char *err, size_t err_len)
{
    struct cv_node *nd = &g->nodes[g->n_nodes];
    nd->n_in = src->n_inputs;
    nd->n_out = src->n_outputs;
    nd->in = malloc(sizeof(int) * (size_t)(nd->n_in + 1));
    nd->out = malloc(sizeof(int) * (size_t)(nd->n_out + 1));
    if (!nd->in || !nd->out)
        return cv_fail(err, err_len, "out of memory");
    g->n_nodes++;
    for (int k = 0; k < nd->n_in; k++) {
        if (!src->inputs[k][0]) {
            nd->in[k] = -1;
            continue;
        }
        nd->in[k] = map_find(map, g, src->inputs[k]);
        if (nd->in[k] < 0)
            return cv_fail(err, err_len, "%s: node '%s' (%s): input '%s' is not produced by an earlier node", g->file,
                           src->name, src->op_type, src->inputs[k]);
    }
    for (int k = 0; k < nd->n_out; k++) {
        int id;
        struct cv_value *v = cv_new_value(g, src->outputs[k], &id);
        if (!v)
            return cv_fail(err, err_len, "out of memory");
        v->producer = g->n_nodes - 1;
        nd->out[k] = id;
        map_put(map, g, id);
    }
    if (cv_infer_node(g, g->n_nodes - 1, err, err_len))
        return -1;
    int folded = 1;
    for (int k = 0; k < nd->n_out; k++) {
        struct cv_value *v = &g->values[nd->out[k]];
        if (!v->konst && !v->part_val)
            folded = 0;
    }
    nd->dead = folded;
    return 0;
}

static int add_nodes(struct cv_graph *g, struct name_map *map, char *err, size_t err_len)
{
    const struct onnx_model *m = g->onnx;
    for (int i = 0; i < m->n_nodes; i++) {
        const struct onnx_node *src = &m->nodes[i];
        struct cv_node *nd = &g->nodes[g->n_nodes];
        nd->src = src;
        nd->op = src->op_type;
        if (src->domain && src->domain[0] && strcmp(src->domain, "ai.onnx"))
            return cv_fail(err, err_len, "%s: node '%s' (%s): operator domain '%s' is not supported", g->file,
                           src->name, src->op_type, src->domain);
        if (src->n_outputs < 1)
            return cv_fail(err, err_len, "%s: node '%s' (%s) has no output", g->file, src->name, src->op_type);
        if (!strcmp(src->op_type, "Constant") ? add_constant(g, map, src, err, err_len)
                                              : add_node(g, map, src, err, err_len))
            return -1;
    }
    return 0;
}

static int find_output(struct cv_graph *g, const struct name_map *map, char *err, size_t err_len)
{
    const struct onnx_model *m = g->onnx;
    if (m->n_outputs != 1)
        return cv_fail(err, err_len, "%s: the graph has %d outputs, expected 1", g->file, m->n_outputs);
    g->output = map_find(map, g, m->outputs[0].name);
    if (g->output < 0 || g->values[g->output].konst)
        return cv_fail(err, err_len, "%s: output '%s' is not computed from the input", g->file, m->outputs[0].name);
    return 0;
}

int cv_graph_build(struct cv_graph *g, const struct onnx_model *m, const char *file, char *err, size_t err_len)
{
    memset(g, 0, sizeof *g);
    g->file = file;
    g->onnx = m;
    g->opset = m->opset ? m->opset : 11;
    g->next_symbol = -2;
    g->input = g->output = -1;
    struct name_map map = {0};
    size_t cap = 1024;
    while (cap < (size_t)(m->n_initializers + m->n_nodes * 4 + m->n_inputs) * 2)
        cap *= 2;
    map.cap = cap;
    map.slot = calloc(cap, sizeof *map.slot);
    g->nodes = calloc((size_t)m->n_nodes + 1, sizeof *g->nodes);
    int status = -1;
    if (!map.slot || !g->nodes)
        cv_fail(err, err_len, "out of memory");
    else if (!add_initializers(g, &map, err, err_len) && !add_input(g, &map, err, err_len) &&
             !add_nodes(g, &map, err, err_len) && !find_output(g, &map, err, err_len))
        status = 0;
    free(map.slot);
    return status;
}
