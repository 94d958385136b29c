/* Ordered CER and row pairs; see order.h for the rules. */
#include "order.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* The normalised lines joined into one string (*out: free() it); returns its length, or
 * (size_t)-1 when out of memory. */
static size_t join_page(const char *const *lines, size_t n, int fold_case, int unspaced, uint32_t **out)
{
    size_t cap = 1;
    for (size_t i = 0; i < n; i++)
        cap += 3 * strlen(lines[i]) + 1; /* text_normalize's growth */
    uint32_t *buf = malloc(cap * sizeof *buf);
    if (!buf)
        return (size_t)-1;
    text_norm tn = {unspaced, fold_case};
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t *cp;
        size_t m = text_normalized_utf8(lines[i], &tn, &cp);
        if (m == (size_t)-1) {
            free(buf);
            return (size_t)-1;
        }
        if (m) {
            if (k && !unspaced)
                buf[k++] = ' ';
            memcpy(buf + k, cp, m * sizeof *buf);
            k += m;
        }
        free(cp);
    }
    *out = buf;
    return k;
}

int eval_score_ordered(const char *const *gt, size_t n_gt, const char *const *out, size_t n_out, int fold_case,
                       int remove_spaces, size_t *gt_chars, size_t *edits)
{
    int unspaced = remove_spaces;
    for (size_t i = 0; i < n_gt && !unspaced; i++) {
        uint32_t *raw;
        size_t n = text_utf8_decode(gt[i], strlen(gt[i]), &raw);
        if (n == (size_t)-1)
            return -1;
        unspaced = text_has_cjk(raw, n);
        free(raw);
    }
    uint32_t *g, *o;
    size_t ng = join_page(gt, n_gt, fold_case, unspaced, &g);
    if (ng == (size_t)-1)
        return -1;
    size_t no = join_page(out, n_out, fold_case, unspaced, &o);
    if (no == (size_t)-1) {
        free(g);
        return -1;
    }
    *gt_chars = ng;
    *edits = text_levenshtein(g, ng, o, no);
    free(g);
    free(o);
    return 0;
}

/* ------------------------------------------------------------------------ row pairs */

/* How a segment of n code points may be found: with up to `edits` edits, or substitutions only
 * (subs_only: a short segment found with a character missing or added would match pieces of
 * other words, "TEA" the "TA" of "TOTAL"). A single character, which any line holds somewhere,
 * says nothing about where its row went: ignored. */
typedef struct {
    int ignored, subs_only;
    size_t edits;
} seg_rule;

static seg_rule rule_for(size_t n)
{
    if (n < 2)
        return (seg_rule){1, 0, 0};
    if (n < 4)
        return (seg_rule){0, 1, 1};
    return (seg_rule){0, 0, n / 4};
}

/* Given the positions of `line` where a segment may start (reach[p], p = 0..n), marks in next[e]
 * the positions after which the following segment may start: those at or after the end of some
 * occurrence of seg within the rule's edits. Free gaps before, between and after segments, so
 * this is an approximate in-order substring search (a semi-global edit distance). */
static void advance(const uint32_t *seg, size_t m, const uint32_t *line, size_t n, seg_rule rule,
                    const unsigned char *reach, unsigned char *next, size_t *prev, size_t *cur)
{
    const size_t inf = SIZE_MAX / 2, gap = rule.subs_only ? inf : 1;
    for (size_t e = 0; e <= n; e++)
        prev[e] = reach[e] ? 0 : inf; /* no segment text matched yet */
    for (size_t j = 1; j <= m; j++) {
        cur[0] = prev[0] + gap;
        for (size_t e = 1; e <= n; e++) {
            size_t best = prev[e - 1] + (seg[j - 1] != line[e - 1]);
            if (prev[e] + gap < best)
                best = prev[e] + gap; /* a segment character missing */
            if (cur[e - 1] + gap < best)
                best = cur[e - 1] + gap; /* an extra character inside it */
            cur[e] = best > inf ? inf : best;
        }
        size_t *t = prev;
        prev = cur;
        cur = t;
    }
    int found = 0;
    for (size_t e = 0; e <= n; e++) {
        if (prev[e] <= rule.edits)
            found = 1;
        next[e] = (unsigned char)found;
    }
}

/* 1 when seg occurs in line, in order after a start allowed by reach, as its rule allows; the
 * positions after which the next segment may start are left in reach. */
static int place(const uint32_t *seg, size_t m, const uint32_t *line, size_t n, unsigned char **reach,
                 unsigned char **next, size_t *prev, size_t *cur)
{
    advance(seg, m, line, n, rule_for(m), *reach, *next, prev, cur);
    unsigned char *t = *reach;
    *reach = *next;
    *next = t;
    return (*reach)[n];
}

int eval_row_kept(const char *const *seg, size_t n_seg, const char *const *out, size_t n_out, int fold_case,
                  size_t *line)
{
    if (line)
        *line = SIZE_MAX;
    text_norm tn = {1, fold_case};
    uint32_t **s = calloc(n_seg ? n_seg : 1, sizeof *s), **l = calloc(n_out ? n_out : 1, sizeof *l);
    size_t *sn = calloc(n_seg ? n_seg : 1, sizeof *sn), *ln = calloc(n_out ? n_out : 1, sizeof *ln);
    unsigned char *found = calloc(n_seg ? n_seg : 1, 1), *reach = NULL, *next = NULL;
    size_t *prev = NULL, *cur = NULL, longest = 0;
    int rc = -1;
    if (!s || !l || !sn || !ln || !found)
        goto done;
    for (size_t i = 0; i < n_seg; i++) {
        sn[i] = text_normalized_utf8(seg[i], &tn, &s[i]);
        if (sn[i] == (size_t)-1) {
            sn[i] = 0;
            s[i] = NULL;
            goto done;
        }
    }
    for (size_t j = 0; j < n_out; j++) {
        ln[j] = text_normalized_utf8(out[j], &tn, &l[j]);
        if (ln[j] == (size_t)-1) {
            ln[j] = 0;
            l[j] = NULL;
            goto done;
        }
        if (ln[j] > longest)
            longest = ln[j];
    }
    reach = malloc(longest + 1);
    next = malloc(longest + 1);
    prev = malloc((longest + 1) * sizeof *prev);
    cur = malloc((longest + 1) * sizeof *cur);
    if (!reach || !next || !prev || !cur)
        goto done;

    /* The segments the output holds somewhere: one it never read is no fault of the order. */
    size_t n_found = 0;
    for (size_t i = 0; i < n_seg; i++) {
        for (size_t j = 0; j < n_out && !rule_for(sn[i]).ignored && !found[i]; j++) {
            memset(reach, 1, ln[j] + 1);
            found[i] = (unsigned char)place(s[i], sn[i], l[j], ln[j], &reach, &next, prev, cur);
        }
        n_found += found[i];
    }
    rc = 0;
    if (n_found < 2)
        goto done; /* too little of the row read to be a row */
    for (size_t j = 0; j < n_out && !rc; j++) {
        memset(reach, 1, ln[j] + 1);
        int ok = 1;
        for (size_t i = 0; i < n_seg && ok; i++) {
            if (found[i])
                ok = place(s[i], sn[i], l[j], ln[j], &reach, &next, prev, cur);
        }
        if (ok) {
            rc = 1;
            if (line)
                *line = j;
        }
    }
done:
    if (s)
        for (size_t i = 0; i < n_seg; i++)
            free(s[i]);
    if (l)
        for (size_t j = 0; j < n_out; j++)
            free(l[j]);
    free(s);
    free(l);
    free(sn);
    free(ln);
    free(found);
    free(reach);
    free(next);
    free(prev);
    free(cur);
    return rc;
}
