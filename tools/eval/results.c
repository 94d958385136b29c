/* Loading OCR results (JSON Lines or a golden folder); see results.h. */
#include "results.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

char *eval_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        char *nb = realloc(buf, cap * 2);
        if (!nb) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = nb;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (!buf) {
        errno = ENOMEM;
        return NULL;
    }
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    buf[n] = 0;
    if (len)
        *len = n;
    return buf;
}

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int line_from_json(const json_value *v, eval_line *line, char *err, size_t err_size)
{
    const json_value *text = json_get(v, "text"), *box = json_get(v, "box");
    if (!text || text->type != JSON_STRING) {
        snprintf(err, err_size, "a line has no \"text\" string");
        return -1;
    }
    if (!box || box->type != JSON_ARRAY || box->n_items != 4) {
        snprintf(err, err_size, "line \"%s\": \"box\" is not 4 points", text->string);
        return -1;
    }
    for (int k = 0; k < 4; k++) {
        const json_value *pt = &box->items[k];
        if (pt->type != JSON_ARRAY || pt->n_items != 2 || pt->items[0].type != JSON_NUMBER ||
            pt->items[1].type != JSON_NUMBER) {
            snprintf(err, err_size, "line \"%s\": box point %d is not [x, y]", text->string, k);
            return -1;
        }
        line->box[k][0] = pt->items[0].number;
        line->box[k][1] = pt->items[1].number;
    }
    line->score = json_number_or(json_get(v, "score"), -1.0);
    line->text = dup_str(text->string);
    if (!line->text) {
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    return 0;
}

int eval_page_from_json(const json_value *v, const char *fallback_file, eval_page *page, char *err, size_t err_size)
{
    memset(page, 0, sizeof *page);
    page->width = page->height = -1;
    const json_value *lines = v;
    const char *file = fallback_file;
    if (v->type == JSON_OBJECT) {
        const json_value *f = json_get(v, "file");
        lines = json_get(v, "lines");
        if (f && f->type == JSON_STRING)
            file = f->string;
        page->width = (int)json_number_or(json_get(v, "width"), -1);
        page->height = (int)json_number_or(json_get(v, "height"), -1);
    }
    if (!lines || lines->type != JSON_ARRAY) {
        snprintf(err, err_size, "not a page: no \"lines\" array");
        return -1;
    }
    if (!file) {
        snprintf(err, err_size, "page without a \"file\"");
        return -1;
    }
    page->file = dup_str(file);
    page->lines = calloc(lines->n_items ? lines->n_items : 1, sizeof *page->lines);
    if (!page->file || !page->lines) {
        eval_page_free(page);
        snprintf(err, err_size, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < lines->n_items; i++) {
        if (line_from_json(&lines->items[i], &page->lines[i], err, err_size)) {
            eval_page_free(page);
            return -1;
        }
        page->n_lines++;
    }
    return 0;
}

void eval_page_free(eval_page *page)
{
    for (size_t i = 0; i < page->n_lines; i++)
        free(page->lines[i].text);
    free(page->lines);
    free(page->file);
    memset(page, 0, sizeof *page);
}

static int push_page(eval_pageset *set, eval_page *page)
{
    eval_page *np = realloc(set->pages, (set->n + 1) * sizeof *np);
    if (!np)
        return -1;
    set->pages = np;
    set->pages[set->n++] = *page;
    return 0;
}

static int load_jsonl(const char *path, eval_pageset *set, char *err, size_t err_size)
{
    size_t len;
    char *text = eval_read_file(path, &len);
    if (!text) {
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t pos = 0;
    char jerr[200];
    /* Skip leading whitespace so that an empty file is zero pages, not an error. */
    while (pos < len && (text[pos] == ' ' || text[pos] == '\n' || text[pos] == '\r' || text[pos] == '\t'))
        pos++;
    while (pos < len) {
        json_value v;
        if (json_parse_value(text, len, &pos, &v, jerr, sizeof jerr)) {
            snprintf(err, err_size, "%s: %s", path, jerr);
            free(text);
            return -1;
        }
        eval_page page;
        int rc = eval_page_from_json(&v, NULL, &page, jerr, sizeof jerr);
        json_free(&v);
        if (rc || push_page(set, &page)) {
            if (!rc)
                eval_page_free(&page);
            snprintf(err, err_size, "%s, page %zu: %s", path, set->n + 1, rc ? jerr : "out of memory");
            free(text);
            return -1;
        }
    }
    free(text);
    return 0;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

int eval_page_from_text(char *text, const char *file, eval_page *page)
{
    memset(page, 0, sizeof *page);
    page->width = page->height = -1;
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == '\n';
    page->file = dup_str(file);
    page->lines = calloc(cap, sizeof *page->lines);
    if (!page->file || !page->lines) {
        eval_page_free(page);
        return -1;
    }
    for (char *line = text, *next; line && *line; line = next) {
        next = strchr(line, '\n');
        if (next)
            *next++ = 0;
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\r' || line[n - 1] == '\f'))
            line[--n] = 0;
        while (*line == '\f')
            line++, n--;
        if (strspn(line, " \t") == n)
            continue;
        eval_line *l = &page->lines[page->n_lines];
        l->score = -1.0;
        if (!(l->text = dup_str(line))) {
            eval_page_free(page);
            return -1;
        }
        page->n_lines++;
    }
    return 0;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* rel: path below the root folder ("" at the root). */
static int load_dir(const char *root, const char *rel, eval_pageset *set, char *err, size_t err_size)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s%s%s", root, *rel ? "/" : "", rel);
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, err_size, "%s: %s", dir, strerror(errno));
        return -1;
    }
    /* Sorted, so that the order of pages (and of any report) does not depend on the file system. */
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char **nn = realloc(names, (n + 1) * sizeof *nn);
        if (!nn || !(nn[n] = dup_str(e->d_name))) {
            closedir(d);
            snprintf(err, err_size, "out of memory");
            if (nn)
                names = nn;
            for (size_t i = 0; i < n; i++)
                free(names[i]);
            free(names);
            return -1;
        }
        names = nn;
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_names);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i++) {
        char sub[4096], full[8200];
        if ((size_t)snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", names[i]) >= sizeof sub)
            continue;
        snprintf(full, sizeof full, "%s/%s", root, sub);
        struct stat st;
        if (stat(full, &st))
            continue;
        if (S_ISDIR(st.st_mode)) {
            rc = load_dir(root, sub, set, err, err_size);
            continue;
        }
        int is_text = ends_with(names[i], ".txt");
        if (!S_ISREG(st.st_mode) || !(is_text || ends_with(names[i], ".json")))
            continue;
        size_t len;
        char *text = eval_read_file(full, &len);
        if (!text) {
            snprintf(err, err_size, "%s: %s", full, strerror(errno));
            rc = -1;
            break;
        }
        if (is_text) {
            sub[strlen(sub) - 4] = 0; /* "<rel>.txt" names the image <rel> */
            eval_page page;
            int bad = eval_page_from_text(text, sub, &page) || push_page(set, &page);
            free(text);
            if (bad) {
                if (page.file)
                    eval_page_free(&page);
                snprintf(err, err_size, "out of memory");
                rc = -1;
            }
            continue;
        }
        json_value v;
        char jerr[200];
        if (json_parse(text, len, &v, jerr, sizeof jerr)) {
            snprintf(err, err_size, "%s: %s", full, jerr);
            free(text);
            rc = -1;
            break;
        }
        free(text);
        int is_page = v.type == JSON_ARRAY || (v.type == JSON_OBJECT && json_get(&v, "lines"));
        if (is_page) {
            sub[strlen(sub) - 5] = 0; /* "<rel>.json" names the image <rel> */
            eval_page page;
            if (eval_page_from_json(&v, sub, &page, jerr, sizeof jerr)) {
                snprintf(err, err_size, "%s: %s", full, jerr);
                rc = -1;
            } else if (push_page(set, &page)) {
                eval_page_free(&page);
                snprintf(err, err_size, "out of memory");
                rc = -1;
            }
        }
        json_free(&v);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int eval_load_results(const char *path, eval_pageset *set, char *err, size_t err_size)
{
    memset(set, 0, sizeof *set);
    struct stat st;
    if (stat(path, &st)) {
        snprintf(err, err_size, "%s: %s", path, strerror(errno));
        return -1;
    }
    int rc = S_ISDIR(st.st_mode) ? load_dir(path, "", set, err, err_size) : load_jsonl(path, set, err, err_size);
    if (rc)
        eval_pageset_free(set);
    return rc;
}

void eval_pageset_free(eval_pageset *set)
{
    for (size_t i = 0; i < set->n; i++)
        eval_page_free(&set->pages[i]);
    free(set->pages);
    memset(set, 0, sizeof *set);
}

/* a and b name the same file: equal, or the longer ends with "/" + the shorter. Compares the
 * first na / nb bytes only (to ignore extensions). */
static int same_file(const char *a, size_t na, const char *b, size_t nb)
{
    if (na < nb) {
        const char *t = a;
        a = b;
        b = t;
        size_t tn = na;
        na = nb;
        nb = tn;
    }
    if (nb == 0)
        return 0;
    if (memcmp(a + na - nb, b, nb) != 0)
        return 0;
    return na == nb || a[na - nb - 1] == '/';
}

static size_t stem_len(const char *s)
{
    const char *slash = strrchr(s, '/'), *dot = strrchr(s, '.');
    if (dot && (!slash || dot > slash) && dot != (slash ? slash + 1 : s))
        return (size_t)(dot - s);
    return strlen(s);
}

const eval_page *eval_find_page(const eval_pageset *set, const char *file)
{
    for (int pass = 0; pass < 2; pass++) {
        const eval_page *found = NULL;
        size_t hits = 0;
        size_t nf = pass ? stem_len(file) : strlen(file);
        for (size_t i = 0; i < set->n; i++) {
            const char *pf = set->pages[i].file;
            size_t np = pass ? stem_len(pf) : strlen(pf);
            if (same_file(pf, np, file, nf)) {
                found = &set->pages[i];
                hits++;
            }
        }
        if (hits == 1)
            return found;
        if (hits > 1)
            return NULL;
    }
    return NULL;
}
