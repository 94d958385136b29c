#include "ocr/dict.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ocr_dict_parse(const char *data, size_t size, struct ocr_dict *dict, char *err, size_t err_len)
{
    memset(dict, 0, sizeof(*dict));
    if (memchr(data, '\0', size)) {
        snprintf(err, err_len, "dictionary: contains a NUL byte, not a text file");
        return -1;
    }
    size_t n_lines = 0;
    for (size_t i = 0; i < size; i++)
        n_lines += data[i] == '\n';
    if (size > 0 && data[size - 1] != '\n')
        n_lines++; /* last line without newline */

    /* storage: every line plus its terminator, and the space entry */
    dict->storage_ = malloc(size + 1 + 2);
    dict->entries = malloc((n_lines + 1) * sizeof(*dict->entries));
    if (!dict->storage_ || !dict->entries) {
        ocr_dict_free(dict);
        snprintf(err, err_len, "dictionary: out of memory");
        return -1;
    }
    char *dst = dict->storage_;
    size_t pos = 0;
    for (size_t k = 0; k < n_lines; k++) {
        const char *nl = memchr(data + pos, '\n', size - pos);
        size_t end = nl ? (size_t)(nl - data) : size, len = end - pos;
        if (len > 0 && data[pos + len - 1] == '\r')
            len--;
        memcpy(dst, data + pos, len);
        dst[len] = '\0';
        dict->entries[k] = dst;
        dst += len + 1;
        pos = end + 1;
    }
    memcpy(dst, " ", 2);
    dict->entries[n_lines] = dst;
    dict->n_entries = n_lines + 1;
    return 0;
}

int ocr_dict_load(const char *path, struct ocr_dict *dict, char *err, size_t err_len)
{
    memset(dict, 0, sizeof(*dict));
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_len, "dictionary %s: %s", path, strerror(errno));
        return -1;
    }
    char *data = NULL;
    size_t size = 0, cap = 0;
    for (;;) {
        if (size == cap) {
            cap = cap ? cap * 2 : 65536;
            char *d = realloc(data, cap);
            if (!d) {
                free(data);
                fclose(f);
                snprintf(err, err_len, "dictionary %s: out of memory", path);
                return -1;
            }
            data = d;
        }
        size_t got = fread(data + size, 1, cap - size, f);
        size += got;
        if (got == 0)
            break;
    }
    int read_error = ferror(f);
    fclose(f);
    if (read_error) {
        free(data);
        snprintf(err, err_len, "dictionary %s: read error", path);
        return -1;
    }
    char inner[256];
    int rc = ocr_dict_parse(data, size, dict, inner, sizeof(inner));
    free(data);
    if (rc)
        snprintf(err, err_len, "%s (%s)", inner, path);
    return rc;
}

int ocr_dict_check_classes(const struct ocr_dict *dict, size_t n_classes, char *err, size_t err_len)
{
    if (n_classes == dict->n_entries + 1)
        return 0;
    snprintf(err, err_len,
             "dictionary has %zu entries (with the space), so the rec net should have %zu classes "
             "(blank + entries), but it has %zu: wrong dictionary for this model?",
             dict->n_entries, dict->n_entries + 1, n_classes);
    return -1;
}

void ocr_dict_free(struct ocr_dict *dict)
{
    free(dict->entries);
    free(dict->storage_);
    memset(dict, 0, sizeof(*dict));
}
