#include "cli/golden.h"
#include "cli/json.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where line numbers are counted up to, so that counting stays linear over the whole file. */
struct line_counter {
    const char *text;
    size_t pos;
    int line;
};

static int line_at(struct line_counter *lc, size_t pos)
{
    for (; lc->pos < pos; lc->pos++)
        lc->line += lc->text[lc->pos] == '\n';
    return lc->line;
}

static int entry_error(char *err, size_t err_len, const char *name, int line, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static int entry_error(char *err, size_t err_len, const char *name, int line, const char *fmt, ...)
{
    int n = snprintf(err, err_len, "%s: line %d: ", name, line);
    if (n >= 0 && (size_t)n < err_len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + n, err_len - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* A whole number in [lo, hi], or -1 when v is no such number. */
static int whole_number(const json_value *v, int lo, int hi, int *out)
{
    if (!v || v->type != JSON_NUMBER || !(v->number >= lo && v->number <= hi) || v->number != floor(v->number))
        return -1;
    *out = (int)v->number;
    return 0;
}

/* A coordinate or a score: finite, and far inside what any image holds. */
static int finite_number(const json_value *v, double *out)
{
    if (!v || v->type != JSON_NUMBER || !(fabs(v->number) <= 1e9))
        return -1;
    *out = v->number;
    return 0;
}

static int read_box(const json_value *v, double box[4][2])
{
    if (!v || v->type != JSON_ARRAY || v->n_items != 4)
        return -1;
    for (int k = 0; k < 4; k++) {
        const json_value *corner = &v->items[k];
        if (corner->type != JSON_ARRAY || corner->n_items != 2 || finite_number(&corner->items[0], &box[k][0]) ||
            finite_number(&corner->items[1], &box[k][1]))
            return -1;
    }
    return 0;
}

static char *copy_bytes(const char *s, size_t len)
{
    char *c = malloc(len + 1);
    if (c) {
        memcpy(c, s, len);
        c[len] = 0;
    }
    return c;
}

static void free_page(struct cli_golden_page *p)
{
    for (int i = 0; i < p->n_lines; i++)
        free(p->lines[i].text);
    free(p->lines);
    free(p->file);
    memset(p, 0, sizeof(*p));
}

/* One entry from its parsed object. Returns 0, or -1 with the reason in err. */
static int read_page(const json_value *v, const char *name, int line, struct cli_golden_page *p, char *err,
                     size_t err_len)
{
    memset(p, 0, sizeof(*p));
    p->source_line = line;
    p->width = p->height = -1;
    if (v->type != JSON_OBJECT)
        return entry_error(err, err_len, name, line,
                           "not an object (a golden holds one `--format json` object per line)");
    const json_value *file = json_get(v, "file"), *page = json_get(v, "page"), *lines = json_get(v, "lines");
    if (!file || file->type != JSON_STRING)
        return entry_error(err, err_len, name, line, "no \"file\" string");
    if (page && whole_number(page, 1, INT_MAX, &p->page))
        return entry_error(err, err_len, name, line, "\"page\" is not a page number");
    const char *const size_keys[2] = {"width", "height"};
    int *const size[2] = {&p->width, &p->height};
    for (int k = 0; k < 2; k++) {
        const json_value *s = json_get(v, size_keys[k]);
        if (s && whole_number(s, 0, INT_MAX, size[k]))
            return entry_error(err, err_len, name, line, "\"%s\" is not a whole number", size_keys[k]);
    }
    if (!lines || lines->type != JSON_ARRAY)
        return entry_error(err, err_len, name, line, "no \"lines\" array");
    if (lines->n_items > INT_MAX)
        return entry_error(err, err_len, name, line, "too many lines");
    p->file = copy_bytes(file->string, file->string_len);
    p->lines = calloc(lines->n_items ? lines->n_items : 1, sizeof(*p->lines));
    if (!p->file || !p->lines) {
        free_page(p);
        return entry_error(err, err_len, name, line, "out of memory");
    }
    for (size_t i = 0; i < lines->n_items; i++) {
        const json_value *l = &lines->items[i];
        struct cli_golden_line *gl = &p->lines[i];
        const json_value *text = json_get(l, "text");
        const char *why = l->type != JSON_OBJECT                            ? "is not an object"
                          : !text || text->type != JSON_STRING              ? "has no \"text\" string"
                          : finite_number(json_get(l, "score"), &gl->score) ? "has no \"score\" number"
                          : read_box(json_get(l, "box"), gl->box)           ? "has no \"box\" of four [x,y] corners"
                                                                            : NULL;
        if (why) {
            free_page(p);
            return entry_error(err, err_len, name, line, "\"lines\" item %zu %s", i + 1, why);
        }
        gl->text = copy_bytes(text->string, text->string_len);
        gl->text_len = text->string_len;
        p->n_lines++;
        if (!gl->text) {
            free_page(p);
            return entry_error(err, err_len, name, line, "out of memory");
        }
    }
    return 0;
}

static int compare_pages(const void *a, const void *b)
{
    const struct cli_golden_page *x = a, *y = b;
    int c = strcmp(x->file, y->file);
    if (c)
        return c;
    if (x->page != y->page)
        return x->page < y->page ? -1 : 1;
    return x->source_line < y->source_line ? -1 : x->source_line > y->source_line;
}

int cli_golden_parse(const char *text, size_t len, const char *name, struct cli_golden *g, char *err, size_t err_len)
{
    memset(g, 0, sizeof(*g));
    struct line_counter lc = {.text = text, .pos = 0, .line = 1};
    int cap = 0;
    size_t pos = 0;
    for (;;) {
        while (pos < len && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r'))
            pos++;
        if (pos >= len)
            break;
        const int line = line_at(&lc, pos);
        json_value v;
        char why[512];
        if (json_parse_value(text, len, &pos, &v, why, sizeof(why))) {
            snprintf(err, err_len, "%s: %s", name, why); /* why names the line and column */
            goto fail;
        }
        if (g->n == cap) {
            int grown_cap = cap > INT_MAX / 2 ? -1 : cap ? 2 * cap : 64;
            struct cli_golden_page *grown =
                grown_cap > 0 ? realloc(g->pages, (size_t)grown_cap * sizeof(*grown)) : NULL;
            if (!grown) {
                json_free(&v);
                entry_error(err, err_len, name, line, "out of memory");
                goto fail;
            }
            g->pages = grown;
            cap = grown_cap;
        }
        int rc = read_page(&v, name, line, &g->pages[g->n], err, err_len);
        json_free(&v);
        if (rc)
            goto fail;
        g->n++;
    }
    if (g->n)
        qsort(g->pages, (size_t)g->n, sizeof(*g->pages), compare_pages);
    for (int i = 1; i < g->n; i++) {
        const struct cli_golden_page *a = &g->pages[i - 1], *b = &g->pages[i];
        if (!strcmp(a->file, b->file) && a->page == b->page) {
            /* which result would be compared with which is then anyone's guess */
            entry_error(err, err_len, name, b->source_line, "a second entry for the same %s (the first at line %d)",
                        b->page ? "page" : "image", a->source_line);
            goto fail;
        }
    }
    return 0;
fail:
    cli_golden_free(g);
    return -1;
}

int cli_golden_load(const char *path, struct cli_golden *g, char *err, size_t err_len)
{
    memset(g, 0, sizeof(*g));
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, err_len, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *text = NULL;
    size_t len = 0, cap = 0;
    int failed_errno = 0;
    for (;;) {
        if (cap - len < 65536) {
            size_t grown_cap = cap ? 2 * cap : 1 << 20;
            char *grown = grown_cap <= (size_t)CLI_GOLDEN_MAX_BYTES + 1 ? realloc(text, grown_cap) : NULL;
            if (!grown) {
                failed_errno = grown_cap <= (size_t)CLI_GOLDEN_MAX_BYTES + 1 ? ENOMEM : EFBIG;
                break;
            }
            text = grown;
            cap = grown_cap;
        }
        size_t got = fread(text + len, 1, cap - len, f);
        len += got;
        if (got == 0) {
            if (ferror(f))
                failed_errno = errno ? errno : EIO;
            break;
        }
    }
    fclose(f);
    if (failed_errno) {
        if (failed_errno == EFBIG)
            snprintf(err, err_len, "%s: larger than %lld bytes", path, (long long)CLI_GOLDEN_MAX_BYTES);
        else
            snprintf(err, err_len, "%s: %s", path, strerror(failed_errno));
        free(text);
        return -1;
    }
    int rc = cli_golden_parse(text ? text : "", len, path, g, err, err_len);
    free(text);
    return rc;
}

void cli_golden_free(struct cli_golden *g)
{
    for (int i = 0; i < g->n; i++)
        free_page(&g->pages[i]);
    free(g->pages);
    memset(g, 0, sizeof(*g));
}

/* a ends with b, which begins a path component of a */
static int ends_with_path(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    return lb && la > lb && (b[0] == '/' || a[la - lb - 1] == '/') && !strcmp(a + la - lb, b);
}

int cli_golden_find(const struct cli_golden *g, const char *file, int page)
{
    int lo = 0, hi = g->n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        const struct cli_golden_page *p = &g->pages[mid];
        int c = strcmp(p->file, file);
        if (c < 0 || (c == 0 && p->page < page))
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < g->n && !strcmp(g->pages[lo].file, file) && g->pages[lo].page == page)
        return lo;
    int found = -1;
    for (int i = 0; i < g->n; i++) {
        const struct cli_golden_page *p = &g->pages[i];
        if (p->page != page || !(ends_with_path(p->file, file) || ends_with_path(file, p->file)))
            continue;
        if (found >= 0)
            return -2;
        found = i;
    }
    return found;
}
