/* Recursive-descent JSON reader; see json.h. */
#include "cli/json.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deeper nesting than any OCR result needs; the limit keeps hostile input off the C stack. */
#define JSON_MAX_DEPTH 64

typedef struct {
    const char *s;
    size_t len, pos;
    char *err;
    size_t err_size;
} parser;

static int fail(parser *p, const char *fmt, ...)
{
    if (!p->err || !p->err_size)
        return -1;
    size_t line = 1, col = 1;
    for (size_t i = 0; i < p->pos && i < p->len; i++) {
        if (p->s[i] == '\n') {
            line++;
            col = 1;
        } else
            col++;
    }
    int n = snprintf(p->err, p->err_size, "line %zu, column %zu: ", line, col);
    if (n < 0 || (size_t)n >= p->err_size)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->err + n, p->err_size - (size_t)n, fmt, ap);
    va_end(ap);
    return -1;
}

static void skip_ws(parser *p)
{
    while (p->pos < p->len) {
        char c = p->s[p->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
            break;
        p->pos++;
    }
}

/* Growable byte buffer for decoded strings. */
typedef struct {
    char *b;
    size_t n, cap;
} sbuf;

static int sbuf_put(sbuf *sb, const char *bytes, size_t n)
{
    if (sb->n + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap * 2 : 32;
        while (cap < sb->n + n + 1)
            cap *= 2;
        char *nb = realloc(sb->b, cap);
        if (!nb)
            return -1;
        sb->b = nb;
        sb->cap = cap;
    }
    memcpy(sb->b + sb->n, bytes, n);
    sb->n += n;
    sb->b[sb->n] = 0;
    return 0;
}

static int sbuf_put_cp(sbuf *sb, uint32_t cp)
{
    char u[4];
    size_t n;
    if (cp < 0x80) {
        u[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        u[0] = (char)(0xC0 | (cp >> 6));
        u[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        u[0] = (char)(0xE0 | (cp >> 12));
        u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        u[0] = (char)(0xF0 | (cp >> 18));
        u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        u[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return sbuf_put(sb, u, n);
}

static int read_hex4(parser *p, uint32_t *out)
{
    if (p->pos + 4 > p->len)
        return fail(p, "truncated \\u escape");
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p->s[p->pos + (size_t)i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (uint32_t)(c - 'A' + 10);
        else
            return fail(p, "bad hex digit in \\u escape");
    }
    p->pos += 4;
    *out = v;
    return 0;
}

/* p->pos is on the opening quote. */
static int parse_string(parser *p, char **out, size_t *out_len)
{
    sbuf sb = {0};
    p->pos++;
    if (sbuf_put(&sb, "", 0))
        return fail(p, "out of memory");
    for (;;) {
        if (p->pos >= p->len) {
            free(sb.b);
            return fail(p, "unterminated string");
        }
        unsigned char c = (unsigned char)p->s[p->pos];
        if (c == '"') {
            p->pos++;
            break;
        }
        if (c < 0x20) {
            free(sb.b);
            return fail(p, "control character in string");
        }
        if (c != '\\') {
            /* Copy a run of plain bytes at once; UTF-8 passes through untouched. */
            size_t start = p->pos;
            while (p->pos < p->len && p->s[p->pos] != '"' && p->s[p->pos] != '\\' &&
                   (unsigned char)p->s[p->pos] >= 0x20)
                p->pos++;
            if (sbuf_put(&sb, p->s + start, p->pos - start)) {
                free(sb.b);
                return fail(p, "out of memory");
            }
            continue;
        }
        p->pos++;
        if (p->pos >= p->len) {
            free(sb.b);
            return fail(p, "unterminated escape");
        }
        char e = p->s[p->pos++];
        const char *simple = NULL;
        switch (e) {
        case '"': simple = "\""; break;
        case '\\': simple = "\\"; break;
        case '/': simple = "/"; break;
        case 'b': simple = "\b"; break;
        case 'f': simple = "\f"; break;
        case 'n': simple = "\n"; break;
        case 'r': simple = "\r"; break;
        case 't': simple = "\t"; break;
        case 'u': break;
        default:
            free(sb.b);
            p->pos--;
            return fail(p, "bad escape \\%c", e);
        }
        int rc;
        if (simple) {
            rc = sbuf_put(&sb, simple, 1);
        } else {
            uint32_t cp;
            if (read_hex4(p, &cp)) {
                free(sb.b);
                return -1;
            }
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                /* A high surrogate must be followed by an escaped low one: together one code point. */
                uint32_t lo;
                if (p->pos + 2 > p->len || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
                    free(sb.b);
                    return fail(p, "high surrogate without a low surrogate");
                }
                p->pos += 2;
                if (read_hex4(p, &lo)) {
                    free(sb.b);
                    return -1;
                }
                if (lo < 0xDC00 || lo > 0xDFFF) {
                    free(sb.b);
                    return fail(p, "bad low surrogate");
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(sb.b);
                return fail(p, "lone low surrogate");
            }
            rc = sbuf_put_cp(&sb, cp);
        }
        if (rc) {
            free(sb.b);
            return fail(p, "out of memory");
        }
    }
    *out = sb.b;
    *out_len = sb.n;
    return 0;
}

static int parse_number(parser *p, double *out)
{
    /* Check the JSON grammar first (strtod alone accepts hex, inf, leading '+' ...). */
    size_t i = p->pos;
    if (i < p->len && p->s[i] == '-')
        i++;
    if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
        return fail(p, "bad number");
    if (p->s[i] == '0')
        i++;
    else
        while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
            i++;
    if (i < p->len && p->s[i] == '.') {
        i++;
        if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
            return fail(p, "bad fraction");
        while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
            i++;
    }
    if (i < p->len && (p->s[i] == 'e' || p->s[i] == 'E')) {
        i++;
        if (i < p->len && (p->s[i] == '+' || p->s[i] == '-'))
            i++;
        if (i >= p->len || p->s[i] < '0' || p->s[i] > '9')
            return fail(p, "bad exponent");
        while (i < p->len && p->s[i] >= '0' && p->s[i] <= '9')
            i++;
    }
    /* strtod needs a NUL-terminated copy: the input buffer need not be terminated. */
    char tmp[64];
    size_t n = i - p->pos;
    if (n >= sizeof tmp)
        return fail(p, "number too long");
    memcpy(tmp, p->s + p->pos, n);
    tmp[n] = 0;
    errno = 0;
    *out = strtod(tmp, NULL);
    p->pos = i;
    return 0;
}

static int parse_value(parser *p, json_value *out, int depth);

static int append_item(json_value *v, json_value *item, char *key)
{
    if ((v->n_items & (v->n_items - 1)) == 0) { /* grow at powers of two */
        size_t cap = v->n_items ? v->n_items * 2 : 4;
        json_value *ni = realloc(v->items, cap * sizeof *ni);
        if (!ni)
            return -1;
        v->items = ni;
        if (v->type == JSON_OBJECT) {
            char **nk = realloc(v->keys, cap * sizeof *nk);
            if (!nk)
                return -1;
            v->keys = nk;
        }
    }
    v->items[v->n_items] = *item;
    if (v->type == JSON_OBJECT)
        v->keys[v->n_items] = key;
    v->n_items++;
    return 0;
}

static int parse_container(parser *p, json_value *out, int depth)
{
    int is_obj = p->s[p->pos] == '{';
    char close = is_obj ? '}' : ']';
    out->type = is_obj ? JSON_OBJECT : JSON_ARRAY;
    p->pos++;
    skip_ws(p);
    if (p->pos < p->len && p->s[p->pos] == close) {
        p->pos++;
        return 0;
    }
    for (;;) {
        char *key = NULL;
        if (is_obj) {
            size_t klen;
            if (p->pos >= p->len || p->s[p->pos] != '"')
                return fail(p, "expected a member name");
            if (parse_string(p, &key, &klen))
                return -1;
            skip_ws(p);
            if (p->pos >= p->len || p->s[p->pos] != ':') {
                free(key);
                return fail(p, "expected ':'");
            }
            p->pos++;
        }
        json_value item;
        if (parse_value(p, &item, depth + 1)) {
            free(key);
            return -1;
        }
        if (append_item(out, &item, key)) {
            json_free(&item);
            free(key);
            return fail(p, "out of memory");
        }
        skip_ws(p);
        if (p->pos >= p->len)
            return fail(p, "unterminated %s", is_obj ? "object" : "array");
        char c = p->s[p->pos++];
        if (c == close)
            return 0;
        if (c != ',') {
            p->pos--;
            return fail(p, "expected ',' or '%c'", close);
        }
        skip_ws(p);
    }
}

static int literal(parser *p, const char *word)
{
    size_t n = strlen(word);
    if (p->pos + n > p->len || memcmp(p->s + p->pos, word, n) != 0)
        return fail(p, "unexpected token");
    p->pos += n;
    return 0;
}

static int parse_value(parser *p, json_value *out, int depth)
{
    memset(out, 0, sizeof *out);
    if (depth > JSON_MAX_DEPTH)
        return fail(p, "nesting deeper than %d", JSON_MAX_DEPTH);
    skip_ws(p);
    if (p->pos >= p->len)
        return fail(p, "unexpected end of input");
    char c = p->s[p->pos];
    int rc;
    switch (c) {
    case '{':
    case '[':
        rc = parse_container(p, out, depth);
        if (rc) {
            json_free(out);
            memset(out, 0, sizeof *out);
        }
        return rc;
    case '"':
        out->type = JSON_STRING;
        rc = parse_string(p, &out->string, &out->string_len);
        if (rc)
            out->type = JSON_NULL;
        return rc;
    case 't':
        out->type = JSON_BOOL;
        out->boolean = 1;
        return literal(p, "true");
    case 'f': out->type = JSON_BOOL; return literal(p, "false");
    case 'n': return literal(p, "null");
    default:
        if (c != '-' && (c < '0' || c > '9'))
            return fail(p, "unexpected character '%c'", c);
        out->type = JSON_NUMBER;
        return parse_number(p, &out->number);
    }
}

int json_parse_value(const char *text, size_t len, size_t *pos, json_value *out, char *err, size_t err_size)
{
    parser p = {text, len, *pos, err, err_size};
    if (parse_value(&p, out, 0)) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    skip_ws(&p);
    *pos = p.pos;
    return 0;
}

int json_parse(const char *text, size_t len, json_value *out, char *err, size_t err_size)
{
    size_t pos = 0;
    if (json_parse_value(text, len, &pos, out, err, err_size))
        return -1;
    if (pos != len) {
        parser p = {text, len, pos, err, err_size};
        json_free(out);
        return fail(&p, "trailing characters after the value");
    }
    return 0;
}

void json_free(json_value *v)
{
    if (!v)
        return;
    for (size_t i = 0; i < v->n_items; i++) {
        json_free(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
    memset(v, 0, sizeof *v);
}

const json_value *json_get(const json_value *v, const char *key)
{
    if (!v || v->type != JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->n_items; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

double json_number_or(const json_value *v, double fallback)
{
    return v && v->type == JSON_NUMBER ? v->number : fallback;
}
