/* CTC greedy decoding: merging repeats, dropping blanks, the dictionary mapping and the score,
 * as PaddleOCR's CTCLabelDecode (and the reference's runRec) compute them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "ocr/ctc.h"
#include "support/test_env.h"

/* classes: 0 blank, 1 "a", 2 "b", 3 "中" (3 bytes), 4 " " (the space is always last) */
static const char *const dict[] = {"a", "b", "\xe4\xb8\xad", " "};
enum { N_DICT = 4 };

static struct ctc_text decode(const int32_t *cls, const float *prob, size_t T)
{
    struct ctc_text out;
    char err[256];
    if (ctc_decode_argmax(cls, prob, T, dict, N_DICT, &out, err, sizeof(err)))
        fail_msg("ctc: %s", err);
    return out;
}

static void test_repeats_merge_and_blanks_drop(void **state)
{
    (void)state;
    const int32_t cls[] = {0, 1, 1, 0, 2, 2, 2, 0, 0, 1};
    const float prob[] = {0.9f, 0.5f, 0.99f, 0.8f, 0.7f, 0.1f, 0.1f, 0.9f, 0.9f, 0.6f};
    struct ctc_text t = decode(cls, prob, 10);
    assert_string_equal(t.text, "aba");
    /* the probability of the first step of each kept run: (0.5 + 0.7 + 0.6) / 3 in float */
    float want = ((0.5f + 0.7f) + 0.6f) / 3.0f;
    assert_true(t.score == want);
    ctc_text_free(&t);
}

static void test_blank_between_repeats_keeps_both(void **state)
{
    (void)state;
    const int32_t cls[] = {1, 0, 1, 1};
    const float prob[] = {0.5f, 0.9f, 0.25f, 0.9f};
    struct ctc_text t = decode(cls, prob, 4);
    assert_string_equal(t.text, "aa");
    assert_true(t.score == 0.375f);
    ctc_text_free(&t);
}

static void test_space_and_utf8_entries(void **state)
{
    (void)state;
    const int32_t cls[] = {3, 4, 4, 1, 4};
    const float prob[] = {1, 1, 1, 1, 1};
    struct ctc_text t = decode(cls, prob, 5);
    assert_string_equal(t.text, "\xe4\xb8\xad a ");
    assert_true(t.score == 1.0f);
    ctc_text_free(&t);
}

static void test_all_blank_is_empty_with_score_zero(void **state)
{
    (void)state;
    const int32_t cls[] = {0, 0, 0};
    const float prob[] = {0.99f, 0.98f, 0.97f};
    struct ctc_text t = decode(cls, prob, 3);
    assert_string_equal(t.text, "");
    assert_true(t.score == 0.0f);
    ctc_text_free(&t);
    t = decode(cls, prob, 0);
    assert_string_equal(t.text, "");
    ctc_text_free(&t);
}

static void test_out_of_range_class_is_an_error(void **state)
{
    (void)state;
    struct ctc_text t;
    char err[256] = "";
    const int32_t too_big[] = {1, N_DICT + 1};
    const float prob[] = {0.5f, 0.5f};
    assert_int_equal(ctc_decode_argmax(too_big, prob, 2, dict, N_DICT, &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "class 5 at step 1"));
    assert_null(t.text);
    const int32_t negative[] = {-1};
    assert_int_equal(ctc_decode_argmax(negative, prob, 1, dict, N_DICT, &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "class -1"));
}

static void test_score_is_numpy_float32_mean(void **state)
{
    (void)state;
    /* 300 kept steps (alternating classes): numpy sums float32 pairwise in blocks of 8 lanes;
     * the decoder must agree with that summation, not with a running sum */
    enum { T = 300 };
    int32_t cls[T];
    float prob[T];
    for (int t = 0; t < T; t++) {
        cls[t] = 1 + (t & 1);
        prob[t] = test_rand_uniform(0.5f, 1.0f);
    }
    struct ctc_text t = decode(cls, prob, T);
    assert_int_equal(strlen(t.text), T);
    /* numpy splits 300 into 144 + 156 (halves cut to multiples of 8), then 72 + 72 and 72 + 84:
     * blocks of at most 128, each summed in 8 lanes */
    float blocks[4];
    const int starts[4] = {0, 72, 144, 216}, lens[4] = {72, 72, 72, 84};
    for (int b = 0; b < 4; b++) {
        float r[8];
        const float *a = prob + starts[b];
        int n = lens[b], i;
        for (int k = 0; k < 8; k++)
            r[k] = a[k];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int k = 0; k < 8; k++)
                r[k] += a[i + k];
        float res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++)
            res += a[i];
        blocks[b] = res;
    }
    float want = ((blocks[0] + blocks[1]) + (blocks[2] + blocks[3])) / (float)T;
    assert_true(t.score == want);
    ctc_text_free(&t);
}

/* Each kept character: the steps its class holds, the probability its score counts, its bytes. */
static void test_kept_characters_and_their_steps(void **state)
{
    (void)state;
    const int32_t cls[] = {0, 1, 1, 0, 3, 3, 3, 4, 2, 0, 2};
    const float prob[] = {0.9f, 0.5f, 0.99f, 0.8f, 0.7f, 0.1f, 0.1f, 0.6f, 0.4f, 0.9f, 0.3f};
    struct ctc_text t = decode(cls, prob, 11);
    assert_string_equal(t.text, "a\xe4\xb8\xad bb");
    assert_int_equal(t.steps, 11);
    assert_int_equal(t.n_chars, 5);
    const struct ctc_char want[5] = {
        {1, 2, 0.5f, 0, 1}, {4, 6, 0.7f, 1, 3}, {7, 7, 0.6f, 4, 1}, {8, 8, 0.4f, 5, 1}, {10, 10, 0.3f, 6, 1},
    };
    for (int k = 0; k < 5; k++) {
        assert_int_equal(t.chars[k].first, want[k].first);
        assert_int_equal(t.chars[k].last, want[k].last);
        assert_true(t.chars[k].prob == want[k].prob);
        assert_int_equal(t.chars[k].at, want[k].at);
        assert_int_equal(t.chars[k].len, want[k].len);
    }
    ctc_text_free(&t);
    assert_null(t.chars);
    const int32_t none[] = {0, 0};
    t = decode(none, prob, 2);
    assert_int_equal(t.n_chars, 0);
    assert_null(t.chars);
    ctc_text_free(&t);
}

/* The mean over all kept characters is the score, bit for bit, at every length (numpy's pairwise
 * blocks start at 8 and 128); over a part it is that part's float32 mean. */
static void test_mean_prob_of_characters(void **state)
{
    (void)state;
    enum { T = 700 };
    int32_t cls[T];
    float prob[T];
    for (size_t n = 1; n <= T; n = n < 20 ? n + 1 : n * 3 / 2) {
        for (size_t t = 0; t < n; t++) {
            cls[t] = (int32_t)(test_rand_u32() % (N_DICT + 1));
            prob[t] = test_rand_uniform(0.3f, 1.0f);
        }
        struct ctc_text t = decode(cls, prob, n);
        assert_true(ctc_mean_prob(t.chars, t.n_chars) == t.score);
        if (t.n_chars >= 3) {
            float want = ((0.0f + t.chars[1].prob) + t.chars[2].prob) / 2.0f;
            assert_true(ctc_mean_prob(t.chars + 1, 2) == want);
        }
        ctc_text_free(&t);
    }
    assert_true(ctc_mean_prob(NULL, 0) == 0.0f);
}

static void test_decode_from_probability_rows(void **state)
{
    (void)state;
    enum { T = 4, C = N_DICT + 1 };
    const float probs[T * C] = {
        0.1f, 0.6f, 0.1f, 0.1f, 0.1f, /* a */
        0.2f, 0.2f, 0.2f, 0.2f, 0.2f, /* tie: the first (blank) wins */
        0.0f, 0.0f, 0.3f, 0.3f, 0.4f, /* space */
        0.0f, 0.0f, 0.0f, 0.9f, 0.1f, /* 中 */
    };
    struct ctc_text t;
    char err[256];
    assert_int_equal(ctc_decode_probs(probs, T, C, dict, N_DICT, &t, err, sizeof(err)), 0);
    assert_string_equal(t.text, "a \xe4\xb8\xad");
    assert_true(t.score == ((0.6f + 0.4f) + 0.9f) / 3.0f);
    ctc_text_free(&t);
    assert_int_equal(ctc_decode_probs(probs, T, C - 1, dict, N_DICT, &t, err, sizeof(err)), -1);
    assert_non_null(strstr(err, "4 classes"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeats_merge_and_blanks_drop),
        cmocka_unit_test(test_blank_between_repeats_keeps_both),
        cmocka_unit_test(test_space_and_utf8_entries),
        cmocka_unit_test(test_all_blank_is_empty_with_score_zero),
        cmocka_unit_test(test_out_of_range_class_is_an_error),
        cmocka_unit_test(test_score_is_numpy_float32_mean),
        cmocka_unit_test(test_kept_characters_and_their_steps),
        cmocka_unit_test(test_mean_prob_of_characters),
        cmocka_unit_test(test_decode_from_probability_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
