/* Text as Unicode code points: UTF-8 decoding, the corpus normalisation rules and Levenshtein
 * distance. Character error rates are counted in code points so that one CJK character is one
 * error, as one Latin letter is. */
#ifndef PPOCR_EVAL_TEXT_H
#define PPOCR_EVAL_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* Decodes n bytes of UTF-8 into a new array of code points (*out, free() it; never NULL on
 * success). Malformed sequences (bad lead/continuation bytes, overlong forms, surrogates, values
 * above U+10FFFF) decode as U+FFFD, one per bad byte, so that garbage still counts as errors.
 * Returns the number of code points, or (size_t)-1 when out of memory. */
size_t text_utf8_decode(const char *s, size_t n, uint32_t **out);

/* Levenshtein distance (unit insert/delete/substitute) between two code point strings. */
size_t text_levenshtein(const uint32_t *a, size_t na, const uint32_t *b, size_t nb);

/* True when s holds a CJK character (Han, kana, Hangul, CJK punctuation, full-width forms):
 * such lines are compared with all whitespace removed (corpus README). */
int text_has_cjk(const uint32_t *s, size_t n);

typedef struct {
    int remove_spaces; /* drop all whitespace; else runs collapse to one space and ends are trimmed */
    int fold_case;     /* fold ASCII and Latin-1 capitals to lower case */
} text_norm;

/* The corpus README's normalisation, applied to ground truth and OCR output alike:
 *   - full-width ASCII forms U+FF01..U+FF5E fold to ASCII (，->, ：->: ...), U+3000 to a space;
 *   - U+2103 ℃ becomes °C, and so does °℃ (a common reading of it);
 *   - the Latin ligatures U+FB00..U+FB06 (ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ) become their letters, as NFKC has
 *     them: PDF text layers (the DocBank pages) keep them, a recogniser reads letters;
 *   - arrows U+2190..U+21FF are dropped (the lab table's 58.9↓: "allow it to be dropped");
 *   - whitespace and case as `opt` says.
 * Writes to out (capacity 3*n: ℃ grows to two code points, ﬃ to three; out must not alias in)
 * and returns the new length. */
size_t text_normalize(const uint32_t *in, size_t n, const text_norm *opt, uint32_t *out);

/* Decodes and normalises a UTF-8 string in one step (*out: free() it). (size_t)-1 on OOM. */
size_t text_normalized_utf8(const char *s, const text_norm *opt, uint32_t **out);

#endif
