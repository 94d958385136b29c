/* Manifest reading; see manifest.h. */
#include "manifest.h"

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "results.h"

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* Splits s in place at each occurrence of sep; returns the number of fields written to f. */
static size_t split(char *s, const char *sep, char **f, size_t max)
{
    size_t n = 0, m = strlen(sep);
    while (n < max) {
        f[n++] = s;
        char *p = strstr(s, sep);
        if (!p)
            break;
        *p = 0;
        s = p + m;
    }
    return n;
}

static char *trim(char *s)
{
    while (*s == ' ' || *s == '\t')
        s++;
    size_t n = strlen(s);
    while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
        s[--n] = 0;
    return s;
}

static const char *find_ci(const char *hay, const char *needle)
{
    size_t m = strlen(needle);
    for (; *hay; hay++) {
        size_t k = 0;
        while (k < m && hay[k] && tolower((unsigned char)hay[k]) == tolower((unsigned char)needle[k]))
            k++;
        if (k == m)
            return hay;
    }
    return NULL;
}

void eval_notes_rules(const char *notes, int *fold_case, int *rotated, size_t *strict_first, size_t *strict_last)
{
    *fold_case = find_ci(notes, "case-insensitiv") != NULL;
    *rotated = find_ci(notes, "rotated") != NULL;
    *strict_first = *strict_last = 0;
    for (const char *p = notes; (p = find_ci(p, "lines ")); p++) {
        unsigned long a, b;
        int used = 0;
        if (sscanf(p + 6, "%lu-%lu%n", &a, &b, &used) == 2 && used > 0 && a >= 1 && b >= a &&
            find_ci(p + 6 + used, " strictly") == p + 6 + used) {
            *strict_first = a;
            *strict_last = b;
            return;
        }
    }
}

/* Expected lines from a GT text file: one per non-empty line. */
static int gt_from_file(const char *path, eval_manifest_row *r, char *err, size_t err_size)
{
    size_t len;
    char *text = eval_read_file(path, &len);
    if (!text) {
        snprintf(err, err_size, "%.200s: %s", path, strerror(errno));
        return -1;
    }
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        char *t = trim(line);
        if (!*t)
            continue;
        char **ng = realloc(r->gt, (r->n_gt + 1) * sizeof *ng);
        if (!ng || !(ng[r->n_gt] = dup_n(t, strlen(t)))) {
            if (ng)
                r->gt = ng;
            free(text);
            snprintf(err, err_size, "out of memory");
            return -1;
        }
        r->gt = ng;
        r->n_gt++;
    }
    free(text);
    return 0;
}

static int gt_from_cell(char *cell, eval_manifest_row *r, char *err, size_t err_size)
{
    size_t max = 1;
    for (const char *p = cell; (p = strstr(p, " | ")); p += 3)
        max++;
    char **f = malloc(max * sizeof *f);
    r->gt = calloc(max, sizeof *r->gt);
    if (!f || !r->gt) {
        free(f);
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    size_t n = split(cell, " | ", f, max);
    for (size_t i = 0; i < n; i++) {
        char *t = trim(f[i]);
        if (!(r->gt[r->n_gt] = dup_n(t, strlen(t)))) {
            free(f);
            snprintf(err, err_size, "out of memory");
            return -1;
        }
        r->n_gt++;
    }
    free(f);
    return 0;
}

typedef struct {
    unsigned long row, seg;
    char *text;
} seg_entry;

static int cmp_seg(const void *pa, const void *pb)
{
    const seg_entry *a = pa, *b = pb;
    if (a->row != b->row)
        return a->row < b->row ? -1 : 1;
    return a->seg < b->seg ? -1 : a->seg > b->seg;
}

/* The rows of two or more segments from the side file `path` (see manifest.h). A missing file
 * is no error: has_rows stays 0. */
static int rows_from_file(const char *path, eval_manifest_row *r, char *err, size_t err_size)
{
    struct stat st;
    if (stat(path, &st) || !S_ISREG(st.st_mode))
        return 0;
    size_t len;
    char *text = eval_read_file(path, &len);
    if (!text) {
        snprintf(err, err_size, "%.200s: %s", path, strerror(errno));
        return -1;
    }
    r->has_rows = 1;
    seg_entry *e = NULL;
    size_t n = 0, lineno = 0;
    int rc = -1, c_row = -1, c_seg = -1, c_text = -1;
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        lineno++;
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[--l] = 0;
        if (!l)
            continue;
        char *f[32];
        size_t nf = split(line, "\t", f, 32);
        if (c_row < 0) {
            for (size_t i = 0; i < nf; i++) {
                if (!strcmp(f[i], "row"))
                    c_row = (int)i;
                else if (!strcmp(f[i], "segment"))
                    c_seg = (int)i;
                else if (!strcmp(f[i], "text"))
                    c_text = (int)i;
            }
            if (c_row < 0 || c_seg < 0 || c_text < 0) {
                snprintf(err, err_size, "%.200s: header lacks the columns \"row\", \"segment\" and \"text\"", path);
                goto done;
            }
            continue;
        }
        char *end1, *end2;
        if ((size_t)c_row >= nf || (size_t)c_seg >= nf || (size_t)c_text >= nf)
            goto bad;
        unsigned long row = strtoul(f[c_row], &end1, 10), seg = strtoul(f[c_seg], &end2, 10);
        if (end1 == f[c_row] || *end1 || end2 == f[c_seg] || *end2)
            goto bad;
        seg_entry *ne = realloc(e, (n + 1) * sizeof *ne);
        if (!ne) {
            snprintf(err, err_size, "out of memory");
            goto done;
        }
        e = ne;
        e[n] = (seg_entry){row, seg, dup_n(f[c_text], strlen(f[c_text]))};
        if (!e[n++].text) {
            snprintf(err, err_size, "out of memory");
            goto done;
        }
        continue;
    bad:
        snprintf(err, err_size, "%.200s:%zu: not a row (row, segment, text)", path, lineno);
        goto done;
    }
    if (n)
        qsort(e, n, sizeof *e, cmp_seg);
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a + 1; b < n && e[b].row == e[a].row; b++) {
        }
        if (b - a < 2)
            continue;
        eval_gt_row *nr = realloc(r->rows, (r->n_rows + 1) * sizeof *nr);
        if (!nr) {
            snprintf(err, err_size, "out of memory");
            goto done;
        }
        r->rows = nr;
        eval_gt_row *gr = &r->rows[r->n_rows];
        gr->index = e[a].row;
        gr->n_seg = 0;
        gr->seg = malloc((b - a) * sizeof *gr->seg);
        if (!gr->seg) {
            snprintf(err, err_size, "out of memory");
            goto done;
        }
        r->n_rows++;
        for (size_t k = a; k < b; k++) {
            gr->seg[gr->n_seg++] = e[k].text; /* the row owns it now */
            e[k].text = NULL;
        }
    }
    rc = 0;
done:
    for (size_t k = 0; k < n; k++)
        free(e[k].text);
    free(e);
    free(text);
    return rc;
}

int eval_load_manifest(const char *path, eval_manifest *m, char *err, size_t err_size)
{
    memset(m, 0, sizeof *m);
    size_t len;
    char *text = eval_read_file(path, &len);
    if (!text) {
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return -1;
    }
    const char *slash = strrchr(path, '/');
    m->dir = slash ? dup_n(path, (size_t)(slash - path)) : dup_n(".", 1);
    int rc = -1, col_file = -1, col_gt = -1, col_notes = -1;
    size_t lineno = 0;
    char *line = text, *next;
    for (; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        lineno++;
        size_t n = strlen(line);
        if (n && line[n - 1] == '\r')
            line[--n] = 0;
        if (!n)
            continue;
        char *f[32];
        size_t nf = split(line, "\t", f, 32);
        if (col_file < 0) { /* header */
            for (size_t i = 0; i < nf; i++) {
                if (!strcmp(f[i], "file"))
                    col_file = (int)i;
                else if (!strcmp(f[i], "ground_truth"))
                    col_gt = (int)i;
                else if (!strcmp(f[i], "notes"))
                    col_notes = (int)i;
            }
            if (col_file < 0 || col_gt < 0) {
                snprintf(err, err_size, "%s: header lacks the columns \"file\" and \"ground_truth\"", path);
                goto done;
            }
            continue;
        }
        if ((size_t)col_file >= nf || (size_t)col_gt >= nf) {
            snprintf(err, err_size, "%s:%zu: too few columns", path, lineno);
            goto done;
        }
        eval_manifest_row *nr = realloc(m->rows, (m->n + 1) * sizeof *nr);
        if (!nr) {
            snprintf(err, err_size, "out of memory");
            goto done;
        }
        m->rows = nr;
        eval_manifest_row *r = &m->rows[m->n++];
        memset(r, 0, sizeof *r);
        r->file = dup_n(f[col_file], strlen(f[col_file]));
        if (!r->file) {
            snprintf(err, err_size, "out of memory");
            goto done;
        }
        const char *notes = col_notes >= 0 && (size_t)col_notes < nf ? f[col_notes] : "";
        size_t first, last;
        eval_notes_rules(notes, &r->fold_case, &r->rotated, &first, &last);

        /* A cell without " | " that names an existing file is a GT file. */
        char *cell = trim(f[col_gt]);
        char gt_path[4096];
        struct stat st;
        snprintf(gt_path, sizeof gt_path, "%s/%s", m->dir, cell);
        int is_file = !strstr(cell, " | ") && *cell && stat(gt_path, &st) == 0 && S_ISREG(st.st_mode);
        char msg[300];
        if (is_file ? gt_from_file(gt_path, r, msg, sizeof msg) : gt_from_cell(cell, r, msg, sizeof msg)) {
            snprintf(err, err_size, "%s:%zu: %s", path, lineno, msg);
            goto done;
        }
        /* the row side file: the image's name with ".rows.tsv" for its extension */
        const char *base = strrchr(r->file, '/'), *dot = strrchr(r->file, '.');
        size_t stem = dot && dot > (base ? base + 1 : r->file) ? (size_t)(dot - r->file) : strlen(r->file);
        snprintf(gt_path, sizeof gt_path, "%s/%.*s.rows.tsv", m->dir, (int)stem, r->file);
        if (rows_from_file(gt_path, r, msg, sizeof msg)) {
            snprintf(err, err_size, "%s:%zu: %s", path, lineno, msg);
            goto done;
        }
        r->group = calloc(r->n_gt ? r->n_gt : 1, sizeof *r->group);
        if (!r->group) {
            snprintf(err, err_size, "out of memory");
            goto done;
        }
        if (first)
            for (size_t i = 0; i < r->n_gt; i++)
                r->group[i] = i + 1 < first || i + 1 > last;
    }
    if (col_file < 0) {
        snprintf(err, err_size, "%s: empty manifest", path);
        goto done;
    }
    rc = 0;
done:
    free(text);
    if (rc)
        eval_manifest_free(m);
    return rc;
}

static void row_free(eval_manifest_row *r)
{
    for (size_t k = 0; k < r->n_gt; k++)
        free(r->gt[k]);
    free(r->gt);
    free(r->group);
    for (size_t k = 0; k < r->n_rows; k++) {
        for (size_t j = 0; j < r->rows[k].n_seg; j++)
            free(r->rows[k].seg[j]);
        free(r->rows[k].seg);
    }
    free(r->rows);
    free(r->file);
}

size_t eval_manifest_select(eval_manifest *m, const char *const *globs, size_t n_globs)
{
    size_t kept = 0;
    for (size_t i = 0; i < m->n; i++) {
        int match = 0;
        for (size_t g = 0; g < n_globs && !match; g++)
            match = fnmatch(globs[g], m->rows[i].file, 0) == 0;
        if (match)
            m->rows[kept++] = m->rows[i];
        else
            row_free(&m->rows[i]);
    }
    m->n = kept;
    return kept;
}

void eval_manifest_free(eval_manifest *m)
{
    for (size_t i = 0; i < m->n; i++)
        row_free(&m->rows[i]);
    free(m->rows);
    free(m->dir);
    memset(m, 0, sizeof *m);
}
