/* --shard's K/N and "auto" from a scheduler's environment, on tables of variables: Slurm arrays
 * (from 0, from 1, with a step, with only the count, with the count given), Kubernetes indexed
 * Jobs and GNU parallel with the count given, which scheduler wins when several are set, and
 * every refusal (no index, no count, an index outside the count, a variable that is no number). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "cli/shard.h"

static const char *const *table; /* NAME, VALUE, ..., NULL */

static const char *table_env(const char *name)
{
    for (const char *const *p = table; p && *p; p += 2)
        if (!strcmp(p[0], name))
            return p[1];
    return NULL;
}

static void expect(const char *spec, const char *const *env, int k, int n)
{
    table = env;
    int got_k = 0, got_n = 0;
    char err[512] = "";
    if (cli_shard_parse(spec, table_env, &got_k, &got_n, err, sizeof(err)))
        fail_msg("%s: refused: %s", spec, err);
    assert_int_equal(got_k, k);
    assert_int_equal(got_n, n);
}

static void expect_refused(const char *spec, const char *const *env, const char *part)
{
    table = env;
    int k, n;
    char err[512] = "";
    assert_int_equal(cli_shard_parse(spec, table_env, &k, &n, err, sizeof(err)), -1);
    if (!strstr(err, part))
        fail_msg("%s: \"%s\" lacks \"%s\"", spec, err, part);
}

static void test_given(void **state)
{
    (void)state;
    expect("1/1", NULL, 1, 1);
    expect("3/8", NULL, 3, 8);
    expect_refused("0/8", NULL, "1 <= K <= N");
    expect_refused("9/8", NULL, "1 <= K <= N");
    expect_refused("3", NULL, "not K/N or auto");
    expect_refused("3/x", NULL, "1 <= K <= N");
    expect_refused("autox", NULL, "not K/N or auto");
}

static void test_slurm(void **state)
{
    (void)state;
    const char *from0[] = {"SLURM_ARRAY_TASK_ID", "2", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_MAX", "3", NULL};
    expect("auto", from0, 3, 4);
    const char *from1[] = {"SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_MAX", "4", NULL};
    expect("auto", from1, 1, 4);
    /* --array=10-40:10: indices 10, 20, 30, 40 */
    const char *step[] = {"SLURM_ARRAY_TASK_ID",   "30", "SLURM_ARRAY_TASK_MIN",  "10", "SLURM_ARRAY_TASK_MAX",
                          "40",                    "SLURM_ARRAY_TASK_STEP", "10", NULL};
    expect("auto", step, 3, 4);
    const char *off_step[] = {"SLURM_ARRAY_TASK_ID",   "25", "SLURM_ARRAY_TASK_MIN",  "10", "SLURM_ARRAY_TASK_MAX",
                              "40",                    "SLURM_ARRAY_TASK_STEP", "10", NULL};
    expect_refused("auto", off_step, "not one of the array's indices");
    const char *count[] = {"SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_MIN", "1", "SLURM_ARRAY_TASK_COUNT", "6", NULL};
    expect("auto", count, 4, 6);
    /* the count given wins over the array's own */
    expect("auto/8", from0, 3, 8);
    const char *no_count[] = {"SLURM_ARRAY_TASK_ID", "2", NULL};
    expect_refused("auto", no_count, "give the count");
    expect("auto/5", no_count, 3, 5);
    const char *outside[] = {"SLURM_ARRAY_TASK_ID", "7", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_COUNT", "4", NULL};
    expect_refused("auto", outside, "task 8 of an array of 4");
    const char *bad[] = {"SLURM_ARRAY_TASK_ID", "two", NULL};
    expect_refused("auto", bad, "SLURM_ARRAY_TASK_ID is 'two'");
    const char *bad_max[] = {"SLURM_ARRAY_TASK_ID", "1", "SLURM_ARRAY_TASK_MAX", "-", NULL};
    expect_refused("auto", bad_max, "SLURM_ARRAY_TASK_MAX is '-'");
}

static void test_counted(void **state)
{
    (void)state;
    const char *k8s[] = {"JOB_COMPLETION_INDEX", "0", NULL};
    expect("auto/3", k8s, 1, 3);
    const char *k8s_last[] = {"JOB_COMPLETION_INDEX", "2", NULL};
    expect("auto/3", k8s_last, 3, 3);
    expect_refused("auto/2", k8s_last, "JOB_COMPLETION_INDEX 2 is outside 2 tasks");
    expect_refused("auto", k8s, "not how many tasks there are");
    const char *par[] = {"PARALLEL_SEQ", "4", NULL};
    expect("auto/4", par, 4, 4);
    expect_refused("auto/3", par, "PARALLEL_SEQ 4 is outside 3 tasks");
    const char *par0[] = {"PARALLEL_SEQ", "0", NULL};
    expect_refused("auto/3", par0, "outside");
    /* a Slurm array wins over the others; Kubernetes over GNU parallel */
    const char *both[] = {"PARALLEL_SEQ", "1", "JOB_COMPLETION_INDEX", "1", "SLURM_ARRAY_TASK_ID", "3",
                          "SLURM_ARRAY_TASK_MIN", "0", NULL};
    expect("auto/4", both, 4, 4);
    const char *two[] = {"PARALLEL_SEQ", "1", "JOB_COMPLETION_INDEX", "1", NULL};
    expect("auto/4", two, 2, 4);
    expect_refused("auto", NULL, "no scheduler's task index");
    expect_refused("auto/0", NULL, "not auto/N");
    expect_refused("auto/x", NULL, "not auto/N");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_given),
        cmocka_unit_test(test_slurm),
        cmocka_unit_test(test_counted),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
