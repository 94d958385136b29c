/* fit_most (ocr/fit.h), the rule by which the engine cuts work to what the device takes at once,
 * checked with small limits against needs shaped as the engine's are: bytes growing with the
 * count in steps (plans placed at an alignment after the plans before them), needs that cannot be
 * planned past some count, and limits on either side of every step. The answer must be the
 * largest count that fits, found in few calls that never leave [1, most]. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>

#include "ocr/fit.h"
#include "support/test_env.h"

/* A need of `base` bytes rounded up to `align`, then `per` bytes a unit rounded up to `step`
 * (an arena's alignment); counts above `plannable` cannot be planned at all. */
struct model {
    uint64_t base, align, per, step;
    int plannable;
    int most; /* the range fit_most was given, to check its calls against */
    int calls;
};

static uint64_t round_up(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

static uint64_t model_bytes(const struct model *m, int count)
{
    if (count > m->plannable)
        return UINT64_MAX;
    return round_up(m->base, m->align) + round_up((uint64_t)count * m->per, m->step);
}

static uint64_t model_need(void *ctx, int count)
{
    struct model *m = ctx;
    m->calls++;
    assert_true(count >= 1 && count <= m->most);
    return model_bytes(m, count);
}

/* The answer by trying every count. */
static int brute_force(const struct model *m, int most, uint64_t limit)
{
    int best = 0;
    for (int n = 1; n <= most; n++)
        if (model_bytes(m, n) <= limit)
            best = n;
    return best;
}

static int log2_ceil(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

static void check(struct model m, int most, uint64_t limit)
{
    m.most = most;
    m.calls = 0;
    int got = fit_most(most, limit, model_need, &m);
    int want = brute_force(&m, most, limit);
    if (got != want)
        fail_msg("most %d limit %llu (base %llu per %llu step %llu): %d fits, fit_most said %d", most,
                 (unsigned long long)limit, (unsigned long long)m.base, (unsigned long long)m.per,
                 (unsigned long long)m.step, want, got);
    assert_true(m.calls <= log2_ceil(most) + 1);
}

/* Everything fits: one call, the whole count. */
static void test_all_fits(void **state)
{
    (void)state;
    struct model m = {.base = 100, .align = 64, .per = 10, .step = 16, .plannable = 1 << 30, .most = 6};
    assert_int_equal(fit_most(6, 1000, model_need, &m), 6);
    assert_int_equal(m.calls, 1);
}

/* A batch of six lines of which four fit, and a line that does not fit at all. */
static void test_fewer_rows(void **state)
{
    (void)state;
    struct model m = {.base = 0, .align = 1, .per = 100, .step = 1, .plannable = 1 << 30, .most = 6};
    assert_int_equal(fit_most(6, 450, model_need, &m), 4);
    m.calls = 0;
    assert_int_equal(fit_most(6, 99, model_need, &m), 0);
    assert_int_equal(fit_most(0, 1000, model_need, &m), 0);
    assert_int_equal(fit_most(-3, 1000, model_need, &m), 0);
}

/* The classifier's plan placed first: what is left for the batch after its aligned end. */
static void test_after_other_plans(void **state)
{
    (void)state;
    struct model m = {.base = 1000, .align = 256, .per = 300, .step = 64, .plannable = 1 << 30};
    /* 1024 + round_up(n 300, 64): n = 3 -> 1024 + 960 = 1984 fits 2000, n = 4 -> 1024 + 1216 does not */
    check(m, 6, 2000);
    m.most = 6;
    m.calls = 0;
    assert_int_equal(fit_most(6, 2000, model_need, &m), 3);
    /* the base alone is over the limit: nothing fits */
    check(m, 6, 1023);
}

/* Widths in steps: counts past what can be planned read as too large. */
static void test_unplannable(void **state)
{
    (void)state;
    struct model m = {.base = 0, .align = 1, .per = 6144, .step = 32, .plannable = 40};
    check(m, 1000, UINT64_MAX - 1); /* only the plannable counts fit, however large the limit */
    m.most = 1000;
    m.calls = 0;
    assert_int_equal(fit_most(1000, UINT64_MAX - 1, model_need, &m), 40);
}

/* Limits just below, at and above every step of many shapes, and random ones. */
static void test_against_brute_force(void **state)
{
    (void)state;
    for (int round = 0; round < 2000; round++) {
        struct model m = {.base = test_rand_u32() % 5000,
                          .align = 1u << (test_rand_u32() % 9),
                          .per = 1 + test_rand_u32() % 4000,
                          .step = 1u << (test_rand_u32() % 8),
                          .plannable = test_rand_u32() % 4 ? 1 << 30 : 1 + (int)(test_rand_u32() % 64)};
        int most = 1 + (int)(test_rand_u32() % 100);
        int at = 1 + (int)(test_rand_u32() % (unsigned)most);
        uint64_t edge = model_bytes(&m, at);
        if (edge == UINT64_MAX)
            edge = model_bytes(&m, 1) == UINT64_MAX ? 1000 : model_bytes(&m, 1);
        check(m, most, edge - 1);
        check(m, most, edge);
        check(m, most, edge + 1);
        check(m, most, test_rand_u32() % 500000);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_fits),
        cmocka_unit_test(test_fewer_rows),
        cmocka_unit_test(test_after_other_plans),
        cmocka_unit_test(test_unplannable),
        cmocka_unit_test(test_against_brute_force),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
