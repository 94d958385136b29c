/* CTC greedy decoding of the rec net's output, as PaddleOCR's CTCLabelDecode: per time step the
 * best class; repeats merged, blanks (class 0) dropped, class k read as dictionary entry k - 1. */
#ifndef PPOCR_OCR_CTC_H
#define PPOCR_OCR_CTC_H

#include <stddef.h>
#include <stdint.h>

/* A kept character: the run of steps first..last (inclusive) that its class holds, the
 * probability at `first` (the step the score counts) and its bytes, text[at .. at + len). */
struct ctc_char {
    uint32_t first, last;
    float prob;
    uint32_t at, len;
};

struct ctc_text {
    char *text;             /* UTF-8, NUL-terminated; "" when nothing is kept */
    float score;            /* mean probability of the kept steps (numpy float32 mean); 0 when none is kept */
    size_t steps;           /* T, the steps decoded */
    int input_width;        /* the recogniser's input columns the steps cover: set by the caller */
    size_t n_chars;         /* kept characters, in reading order */
    struct ctc_char *chars; /* NULL when n_chars is 0 */
};

/* From the argmax already taken (on the GPU): class[t] and its probability prob[t] for T steps.
 * dict has n_dict entries (the net has n_dict + 1 classes). A class outside [0, n_dict] is an
 * error. Returns 0 (free out with ctc_text_free), or -1 with a one-line reason. */
int ctc_decode_argmax(const int32_t *cls, const float *prob, size_t T, const char *const *dict, size_t n_dict,
                      struct ctc_text *out, char *err, size_t err_len);

/* From the full rows: probs is T x n_classes; the first largest value of a row wins.
 * n_classes must be n_dict + 1. */
int ctc_decode_probs(const float *probs, size_t T, size_t n_classes, const char *const *dict, size_t n_dict,
                     struct ctc_text *out, char *err, size_t err_len);

/* The mean probability of n kept characters as `score` takes it (numpy's float32 mean): over all
 * of a text's characters it equals its score bit for bit; 0 when n is 0. */
float ctc_mean_prob(const struct ctc_char *chars, size_t n);

void ctc_text_free(struct ctc_text *text);

#endif
