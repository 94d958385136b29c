#include "ocr/ctc.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* numpy's float32 pairwise summation (8 accumulators, blocks of 128), so that the score equals
 * np.mean(conf_list) of a float32 list bit for bit. The values lie `stride` bytes apart. */
static float value_at(const unsigned char *a, size_t i, size_t stride)
{
    float v;
    memcpy(&v, a + i * stride, sizeof(v));
    return v;
}

static float pairwise_sum(const unsigned char *a, size_t n, size_t stride)
{
    if (n < 8) {
        float res = 0;
        for (size_t i = 0; i < n; i++)
            res += value_at(a, i, stride);
        return res;
    }
    if (n <= 128) {
        float r[8];
        size_t i;
        for (int k = 0; k < 8; k++)
            r[k] = value_at(a, k, stride);
        for (i = 8; i < n - (n % 8); i += 8)
            for (int k = 0; k < 8; k++)
                r[k] += value_at(a, i + k, stride);
        float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += value_at(a, i, stride);
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return pairwise_sum(a, n2, stride) + pairwise_sum(a + n2 * stride, n - n2, stride);
}

float ctc_mean_prob(const struct ctc_char *chars, size_t n)
{
    if (!n)
        return 0.f;
    return pairwise_sum((const unsigned char *)chars + offsetof(struct ctc_char, prob), n, sizeof(*chars)) / (float)n;
}

int ctc_decode_argmax(const int32_t *cls, const float *prob, size_t T, const char *const *dict, size_t n_dict,
                      struct ctc_text *out, char *err, size_t err_len)
{
    *out = (struct ctc_text){0};
    size_t text_len = 0, kept = 0;
    for (size_t t = 0; t < T; t++) {
        if (cls[t] < 0 || (size_t)cls[t] > n_dict) {
            snprintf(err, err_len, "ctc: class %d at step %zu is outside 0..%zu (dictionary of %zu entries)",
                     (int)cls[t], t, n_dict, n_dict);
            return -1;
        }
        if (cls[t] != 0 && (t == 0 || cls[t] != cls[t - 1])) {
            text_len += strlen(dict[cls[t] - 1]);
            kept++;
        }
    }
    if (T > UINT32_MAX || text_len > UINT32_MAX) {
        snprintf(err, err_len, "ctc: %zu steps (%zu bytes of text) are too many", T, text_len);
        return -1;
    }
    out->text = malloc(text_len + 1);
    out->chars = kept ? malloc(kept * sizeof(*out->chars)) : NULL;
    float *conf = malloc((kept ? kept : 1) * sizeof(*conf));
    if (!out->text || !conf || (kept && !out->chars)) {
        free(conf);
        ctc_text_free(out);
        snprintf(err, err_len, "ctc: out of memory");
        return -1;
    }
    char *dst = out->text;
    size_t k = 0;
    for (size_t t = 0; t < T; t++) {
        if (cls[t] != 0 && (t == 0 || cls[t] != cls[t - 1])) {
            size_t len = strlen(dict[cls[t] - 1]), last = t;
            while (last + 1 < T && cls[last + 1] == cls[t])
                last++;
            out->chars[k] =
                (struct ctc_char){(uint32_t)t, (uint32_t)last, prob[t], (uint32_t)(dst - out->text), (uint32_t)len};
            memcpy(dst, dict[cls[t] - 1], len);
            dst += len;
            conf[k++] = prob[t];
        }
    }
    *dst = '\0';
    out->n_chars = kept;
    out->steps = T;
    out->score = kept ? pairwise_sum((const unsigned char *)conf, kept, sizeof(*conf)) / (float)kept : 0.f;
    free(conf);
    return 0;
}

int ctc_decode_probs(const float *probs, size_t T, size_t n_classes, const char *const *dict, size_t n_dict,
                     struct ctc_text *out, char *err, size_t err_len)
{
    *out = (struct ctc_text){0};
    if (n_classes != n_dict + 1) {
        snprintf(err, err_len, "ctc: the net has %zu classes but the dictionary %zu entries (+ blank = %zu)", n_classes,
                 n_dict, n_dict + 1);
        return -1;
    }
    int32_t *cls = malloc((T ? T : 1) * sizeof(*cls));
    float *best = malloc((T ? T : 1) * sizeof(*best));
    if (!cls || !best) {
        free(cls);
        free(best);
        snprintf(err, err_len, "ctc: out of memory");
        return -1;
    }
    for (size_t t = 0; t < T; t++) {
        const float *row = probs + t * n_classes;
        size_t arg = 0;
        for (size_t c = 1; c < n_classes; c++)
            if (row[c] > row[arg])
                arg = c;
        cls[t] = (int32_t)arg;
        best[t] = row[arg];
    }
    int rc = ctc_decode_argmax(cls, best, T, dict, n_dict, out, err, err_len);
    free(cls);
    free(best);
    return rc;
}

void ctc_text_free(struct ctc_text *text)
{
    free(text->text);
    free(text->chars);
    *text = (struct ctc_text){0};
}
