/* UTF-8, normalisation and edit distance; see text.h. */
#include "text.h"

#include <stdlib.h>
#include <string.h>

#define REPLACEMENT 0xFFFDu

size_t text_utf8_decode(const char *s, size_t n, uint32_t **out)
{
    uint32_t *cp = malloc((n ? n : 1) * sizeof *cp); /* never more code points than bytes */
    if (!cp)
        return (size_t)-1;
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, k = 0;
    while (i < n) {
        unsigned c = u[i];
        size_t len;
        uint32_t v, min;
        if (c < 0x80) {
            cp[k++] = c;
            i++;
            continue;
        }
        if (c >= 0xC2 && c <= 0xDF) {
            len = 2;
            v = c & 0x1F;
            min = 0x80;
        } else if (c >= 0xE0 && c <= 0xEF) {
            len = 3;
            v = c & 0x0F;
            min = 0x800;
        } else if (c >= 0xF0 && c <= 0xF4) {
            len = 4;
            v = c & 0x07;
            min = 0x10000;
        } else {
            cp[k++] = REPLACEMENT;
            i++;
            continue;
        }
        size_t j = 1;
        for (; j < len && i + j < n && (u[i + j] & 0xC0) == 0x80; j++)
            v = (v << 6) | (u[i + j] & 0x3F);
        if (j < len || v < min || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
            cp[k++] = REPLACEMENT; /* resynchronise on the next byte */
            i++;
            continue;
        }
        cp[k++] = v;
        i += len;
    }
    *out = cp;
    return k;
}

size_t text_levenshtein(const uint32_t *a, size_t na, const uint32_t *b, size_t nb)
{
    if (na == 0)
        return nb;
    if (nb == 0)
        return na;
    /* One row of the DP table over the shorter string. */
    if (nb > na) {
        const uint32_t *t = a;
        a = b;
        b = t;
        size_t tn = na;
        na = nb;
        nb = tn;
    }
    size_t *row = malloc((nb + 1) * sizeof *row);
    if (!row)
        abort(); /* a few kilobytes at most for OCR lines; no sensible recovery */
    for (size_t j = 0; j <= nb; j++)
        row[j] = j;
    for (size_t i = 1; i <= na; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= nb; j++) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    size_t d = row[nb];
    free(row);
    return d;
}

static int is_cjk(uint32_t c)
{
    return (c >= 0x2E80 && c <= 0x2FDF) || /* CJK radicals */
           (c >= 0x3000 && c <= 0x30FF) || /* CJK punctuation, hiragana, katakana */
           (c >= 0x3400 && c <= 0x4DBF) || /* extension A */
           (c >= 0x4E00 && c <= 0x9FFF) || /* unified ideographs */
           (c >= 0xAC00 && c <= 0xD7AF) || /* Hangul syllables */
           (c >= 0xF900 && c <= 0xFAFF) || /* compatibility ideographs */
           (c >= 0xFF00 && c <= 0xFFEF) || /* half/full-width forms */
           (c >= 0x20000 && c <= 0x3FFFF); /* supplementary ideographic planes */
}

int text_has_cjk(const uint32_t *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (is_cjk(s[i]))
            return 1;
    return 0;
}

static int is_space(uint32_t c)
{
    return c == ' ' || (c >= 0x09 && c <= 0x0D) || c == 0xA0 || c == 0x3000 || (c >= 0x2000 && c <= 0x200B) ||
           c == 0x202F || c == 0x205F;
}

size_t text_normalize(const uint32_t *in, size_t n, const text_norm *opt, uint32_t *out)
{
    size_t k = 0;
    int pending_space = 0; /* collapse mode: a space is written only before the next character */
    for (size_t i = 0; i < n; i++) {
        uint32_t c = in[i];
        if (c >= 0xFF01 && c <= 0xFF5E)
            c -= 0xFEE0; /* full-width ASCII -> ASCII */
        if (c >= 0x2190 && c <= 0x21FF)
            continue; /* arrows */
        if (is_space(c)) {
            if (!opt->remove_spaces && k > 0)
                pending_space = 1;
            continue;
        }
        if (pending_space) {
            out[k++] = ' ';
            pending_space = 0;
        }
        if (opt->fold_case && ((c >= 'A' && c <= 'Z') || (c >= 0xC0 && c <= 0xDE && c != 0xD7)))
            c += 0x20;
        if (c >= 0xFB00 && c <= 0xFB06) {
            static const char lig[7][4] = {"ff", "fi", "fl", "ffi", "ffl", "st", "st"};
            for (const char *l = lig[c - 0xFB00]; *l; l++)
                out[k++] = (uint32_t)*l;
            continue;
        }
        if (c == 0x2103) { /* ℃ -> °C; "°℃" (as PP-OCR often reads it) -> °C too */
            if (k == 0 || out[k - 1] != 0xB0)
                out[k++] = 0xB0;
            c = opt->fold_case ? 'c' : 'C';
        }
        out[k++] = c;
    }
    return k;
}

size_t text_normalized_utf8(const char *s, const text_norm *opt, uint32_t **out)
{
    uint32_t *raw;
    size_t n = text_utf8_decode(s, strlen(s), &raw);
    if (n == (size_t)-1)
        return n;
    uint32_t *norm = malloc((3 * n + 1) * sizeof *norm);
    if (!norm) {
        free(raw);
        return (size_t)-1;
    }
    size_t k = text_normalize(raw, n, opt, norm);
    free(raw);
    *out = norm;
    return k;
}
