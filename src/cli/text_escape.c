#include "cli/text_escape.h"

#include <string.h>

size_t cli_utf8_next(const unsigned char *p, const unsigned char *end, uint32_t *c)
{
    unsigned char b = p[0];
    if (b < 0x80) {
        *c = b;
        return 1;
    }
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF; /* range of the second byte */
    if (b >= 0xC2 && b <= 0xDF) {
        n = 2;
        *c = b & 0x1F;
    } else if (b >= 0xE0 && b <= 0xEF) {
        n = 3;
        *c = b & 0x0F;
        if (b == 0xE0)
            lo = 0xA0; /* overlong */
        if (b == 0xED)
            hi = 0x9F; /* surrogates */
    } else if (b >= 0xF0 && b <= 0xF4) {
        n = 4;
        *c = b & 0x07;
        if (b == 0xF0)
            lo = 0x90;
        if (b == 0xF4)
            hi = 0x8F; /* beyond U+10FFFF */
    } else {
        return 0;
    }
    if ((size_t)(end - p) < n || p[1] < lo || p[1] > hi)
        return 0;
    for (size_t k = 1; k < n; k++) {
        if ((p[k] & 0xC0) != 0x80)
            return 0;
        *c = (*c << 6) | (p[k] & 0x3F);
    }
    return n;
}

void cli_put_json_string(struct cli_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
    cli_buf_printf(b, "\"");
    while (p < end) {
        uint32_t c;
        size_t n = cli_utf8_next(p, end, &c);
        if (n == 0) { /* JSON text is UTF-8: a stray byte would make the whole line invalid */
            cli_buf_printf(b, "\xEF\xBF\xBD");
            p++;
            continue;
        }
        switch (c) {
        case '"': cli_buf_printf(b, "\\\""); break;
        case '\\': cli_buf_printf(b, "\\\\"); break;
        case '\n': cli_buf_printf(b, "\\n"); break;
        case '\r': cli_buf_printf(b, "\\r"); break;
        case '\t': cli_buf_printf(b, "\\t"); break;
        default:
            if (c < 0x20)
                cli_buf_printf(b, "\\u%04x", (unsigned)c);
            else
                cli_buf_printf(b, "%.*s", (int)n, (const char *)p);
        }
        p += n;
    }
    cli_buf_printf(b, "\"");
}

void cli_put_line_text(struct cli_buf *b, const char *s)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s), *run = p;
    while (p < end) {
        uint32_t c = 0;
        size_t n = cli_utf8_next(p, end, &c);
        int control = n == 0 || c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F);
        if (!control && c != '\\') {
            p += n;
            continue;
        }
        if (p > run)
            cli_buf_printf(b, "%.*s", (int)(p - run), (const char *)run);
        if (n == 0) {
            n = 1;
            c = 0xFFFD; /* whatever cli_utf8_next left in c: the byte is written as \xHH */
        }
        if (c == '\\')
            cli_buf_printf(b, "\\\\");
        else if (c == '\t')
            cli_buf_printf(b, "\\t");
        else if (c == '\n')
            cli_buf_printf(b, "\\n");
        else if (c == '\r')
            cli_buf_printf(b, "\\r");
        else /* control characters, and a stray byte as itself */
            for (size_t k = 0; k < n; k++)
                cli_buf_printf(b, "\\x%02X", p[k]);
        p += n;
        run = p;
    }
    if (p > run)
        cli_buf_printf(b, "%.*s", (int)(p - run), (const char *)run);
}
