#include "cli/base64.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The 6-bit value of an alphabet character, -1 for whitespace, -2 for anything else. */
static int sextet(unsigned char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    if (c == '+' || c == '-')
        return 62;
    if (c == '/' || c == '_')
        return 63;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
        return -1;
    return -2;
}

int cli_base64_decode(const char *text, size_t len, unsigned char **out, size_t *out_len, char *err, size_t err_len)
{
    *out = NULL;
    *out_len = 0;
    unsigned char *bytes = malloc(len / 4 * 3 + 3);
    if (!bytes) {
        snprintf(err, err_len, "out of memory decoding base64 (%zu characters)", len);
        return -1;
    }
    size_t n = 0, padding = 0, digits = 0;
    uint32_t acc = 0;
    for (size_t i = 0; i < len; i++) {
        const unsigned char c = (unsigned char)text[i];
        if (c == '=') {
            padding++;
            continue;
        }
        const int v = sextet(c);
        if (v == -1)
            continue;
        if (v == -2 || padding) {
            free(bytes);
            snprintf(err, err_len, "base64: %s at character %zu", padding ? "data after the '=' padding" : "not a base64 character", i);
            return -1;
        }
        acc = acc << 6 | (uint32_t)v;
        if (++digits % 4 == 0) {
            bytes[n++] = (unsigned char)(acc >> 16);
            bytes[n++] = (unsigned char)(acc >> 8);
            bytes[n++] = (unsigned char)acc;
            acc = 0;
        }
    }
    const size_t tail = digits % 4; /* 2 digits: one byte more, 3: two more; 1 is no encoding */
    if (tail == 1 || (padding && (digits + padding) % 4 != 0) || padding > 2) {
        free(bytes);
        snprintf(err, err_len, "base64: %zu characters, not the length of any encoding", digits + padding);
        return -1;
    }
    if (tail == 2) {
        bytes[n++] = (unsigned char)(acc >> 4);
    } else if (tail == 3) {
        bytes[n++] = (unsigned char)(acc >> 10);
        bytes[n++] = (unsigned char)(acc >> 2);
    }
    *out = bytes;
    *out_len = n;
    return 0;
}

int cli_data_url_payload(const char *text, size_t len, const char **payload, size_t *payload_len, int *is_base64)
{
    if (len < 5 || strncmp(text, "data:", 5) != 0)
        return 0;
    const char *comma = memchr(text, ',', len < 256 ? len : 256);
    if (!comma)
        return 0;
    *is_base64 = comma - text >= 7 && strncmp(comma - 7, ";base64", 7) == 0;
    *payload = comma + 1;
    *payload_len = len - (size_t)(comma + 1 - text);
    return 1;
}
