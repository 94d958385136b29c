#include "convert/convert.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convert/fuse.h"
#include "convert/graph.h"
#include "convert/import.h"
#include "convert/lower.h"
#include "convert/onnx.h"
#include "convert/writer.h"

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The whole file in a malloc'ed buffer with `slack` spare bytes after it. */
static int read_file(const char *path, size_t slack, uint8_t **data, size_t *len, char *err, size_t err_len)
{
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return cv_fail(err, err_len, "%s: cannot open: %s", path, strerror(errno));
    long size = -1;
    *data = NULL;
    if (fseek(fp, 0, SEEK_END) == 0 && (size = ftell(fp)) >= 0 && fseek(fp, 0, SEEK_SET) == 0)
        *data = malloc((size_t)size + slack + 1);
    if (!*data || fread(*data, 1, (size_t)size, fp) != (size_t)size) {
        fclose(fp);
        free(*data);
        return cv_fail(err, err_len, "%s: cannot read", path);
    }
    fclose(fp);
    *len = (size_t)size;
    return 0;
}

int pvkc_kind_from_name(const char *path)
{
    const char *b = base_name(path);
    int found = 0, kind = 0;
    static const char *const tags[] = {"det", "cls", "rec"};
    for (int k = 0; k < 3; k++)
        if (strstr(b, tags[k])) {
            kind = PVK_NET_DET + k;
            found++;
        }
    return found == 1 ? kind : 0;
}

int pvkc_read_dict(const char *path, char ***entries, uint32_t *n, char *err, size_t err_len)
{
    *entries = NULL;
    *n = 0;
    uint8_t *data;
    size_t data_len;
    if (read_file(path, 3, &data, &data_len, err, err_len))
        return -1;
    char *text = (char *)data;
    long size = (long)data_len;
    if (memchr(text, 0, data_len)) {
        free(text);
        return cv_fail(err, err_len, "%s: the dictionary contains a NUL byte", path);
    }
    if (size > 0 && text[size - 1] != '\n')
        text[size++] = '\n';
    text[size] = 0;
    uint32_t lines = 0;
    for (long k = 0; k < size; k++)
        lines += text[k] == '\n';
    /* One block: the pointer array, then the text with NULs for newlines, then the space. */
    size_t ptr_bytes = (lines + 1) * sizeof(char *);
    char **list = malloc(ptr_bytes + (size_t)size + 3);
    if (!list) {
        free(text);
        return cv_fail(err, err_len, "out of memory");
    }
    char *body = (char *)list + ptr_bytes;
    memcpy(body, text, (size_t)size + 1);
    free(text);
    uint32_t count = 0;
    char *line = body;
    for (long k = 0; k < size; k++) {
        if (body[k] != '\n')
            continue;
        body[k] = 0;
        if (k > 0 && body[k - 1] == '\r')
            body[k - 1] = 0;
        if (!line[0]) {
            free(list);
            return cv_fail(err, err_len, "%s: line %u is empty", path, count + 1);
        }
        list[count++] = line;
        line = body + k + 1;
    }
    char *space = body + size + 1;
    space[0] = ' ';
    space[1] = 0;
    list[count++] = space;
    *entries = list;
    *n = count;
    return 0;
}

/* The recognizer's class count: N of the last MATMUL's constant weight. */
static int64_t rec_classes(const struct cv_graph *g)
{
    for (int i = g->n_ops - 1; i >= 0; i--)
        if (g->ops[i].op.type == PVK_OP_MATMUL && g->ops[i].w[0] >= 0)
            return g->values[g->ops[i].w[0]].dims[1];
    const struct cv_value *o = &g->values[g->output];
    return o->ndim > 0 ? o->dims[o->ndim - 1] : -1;
}

int pvkc_convert_memory(const uint8_t *onnx, size_t len, const char *name, const struct pvkc_options *opt,
                        uint8_t **out, size_t *out_len, char *err, size_t err_len)
{
    struct onnx_model m;
    struct cv_graph g;
    char **dict = NULL;
    uint32_t n_dict = 0;
    char inner[512];
    int kind = opt && opt->net_kind ? opt->net_kind : pvkc_kind_from_name(name);
    if (kind < PVK_NET_DET || kind > PVK_NET_REC)
        return cv_fail(err, err_len, "%s: cannot tell the net kind from the file name; pass --kind det|cls|rec", name);
    if (kind == PVK_NET_REC && !(opt && opt->dict_path))
        return cv_fail(err, err_len, "%s: a recognizer needs its dictionary (--dict FILE)", name);
    if (kind != PVK_NET_REC && opt && opt->dict_path)
        return cv_fail(err, err_len, "%s: only a recognizer takes a dictionary", name);
    if (onnx_parse(onnx, len, &m, inner, sizeof inner))
        return cv_fail(err, err_len, "%s: %s", name, inner);
    int status = -1;
    memset(&g, 0, sizeof g);
    if (cv_graph_build(&g, &m, base_name(name), err, err_len) || cv_lower(&g, err, err_len) ||
        cv_fuse(&g, err, err_len))
        goto out;
    if (kind == PVK_NET_REC) {
        if (pvkc_read_dict(opt->dict_path, &dict, &n_dict, err, err_len))
            goto out;
        int64_t classes = rec_classes(&g);
        if (classes != (int64_t)n_dict + 1) {
            cv_fail(err, err_len,
                    "%s: the dictionary gives %u classes (blank + %u lines + space) but the recognizer outputs %lld",
                    opt->dict_path, n_dict + 1, n_dict - 1, (long long)classes);
            goto out;
        }
    }
    struct cv_write_info info = {kind, base_name(name), n_dict, (const char *const *)dict};
    if (cv_write(&g, &info, out, out_len, err, err_len))
        goto out;
    /* The file must pass the loader's checks (a dictionary that is not UTF-8 fails here). */
    struct pvk_model check;
    if (pvk_model_load_memory(*out, *out_len, &check, inner, sizeof inner)) {
        cv_fail(err, err_len, "%s: the converted model does not validate: %s", name, inner);
        free(*out);
        *out = NULL;
        goto out;
    }
    pvk_model_free(&check);
    status = 0;
out:
    free(dict);
    cv_graph_free(&g);
    onnx_free(&m);
    return status;
}

int pvkc_convert_file(const char *onnx_path, const char *out_path, const struct pvkc_options *opt, char *err,
                      size_t err_len)
{
    uint8_t *data;
    size_t size;
    if (read_file(onnx_path, 0, &data, &size, err, err_len))
        return -1;
    uint8_t *model = NULL;
    size_t model_len = 0;
    int rc = pvkc_convert_memory(data, size, onnx_path, opt, &model, &model_len, err, err_len);
    free(data);
    if (rc)
        return -1;
    size_t tlen = strlen(out_path) + 16;
    char *tmp = malloc(tlen);
    if (!tmp) {
        free(model);
        return cv_fail(err, err_len, "out of memory");
    }
    snprintf(tmp, tlen, "%s.tmp%ld", out_path, (long)getpid());
    FILE *of = fopen(tmp, "wb");
    int ok = of && fwrite(model, 1, model_len, of) == model_len;
    ok = (of && fclose(of) == 0) && ok;
    if (!ok || rename(tmp, out_path)) {
        cv_fail(err, err_len, "%s: cannot write: %s", out_path, strerror(errno));
        remove(tmp);
        rc = -1;
    }
    free(tmp);
    free(model);
    return rc;
}
