/* A small JSON reader (RFC 8259): parses text into a tree of values, for the command's requests
 * (--serve, HTTP) and golden files (--check) and for the evaluator. Strings are decoded to UTF-8
 * (\uXXXX escapes included, surrogate pairs joined); numbers are doubles. Input may be hostile:
 * nesting is bounded, every error is a position and a reason. No writer, no streaming. */
#ifndef PPOCR_CLI_JSON_H
#define PPOCR_CLI_JSON_H

#include <stddef.h>

typedef enum { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json_value json_value;
struct json_value {
    json_type type;
    int boolean;       /* JSON_BOOL */
    double number;     /* JSON_NUMBER */
    char *string;      /* JSON_STRING: UTF-8, NUL-terminated (string_len excludes the NUL; */
    size_t string_len; /*   a \u0000 escape makes string_len the only reliable length) */
    json_value *items; /* JSON_ARRAY elements or JSON_OBJECT member values, n_items of them */
    char **keys;       /* JSON_OBJECT member names (UTF-8), parallel to items */
    size_t n_items;
};

/* Parses one value starting at text[*pos] (leading whitespace skipped). On success returns 0
 * and leaves *pos after the value and any whitespace that follows it, so that successive calls
 * read JSON Lines. On error returns -1, writes "line L, column C: why" into err and leaves *out
 * empty (JSON_NULL). */
int json_parse_value(const char *text, size_t len, size_t *pos, json_value *out, char *err, size_t err_size);

/* Parses text that must hold exactly one value. */
int json_parse(const char *text, size_t len, json_value *out, char *err, size_t err_size);

void json_free(json_value *v);

/* Member `key` of an object, or NULL (also when v is not an object). */
const json_value *json_get(const json_value *v, const char *key);

/* The number in v, or `fallback` when v is NULL or not a number. */
double json_number_or(const json_value *v, double fallback);

#endif
