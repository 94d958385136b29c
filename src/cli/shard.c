#include "cli/shard.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A whole number from the environment; 1 when the variable is not set, -1 when it is not a
 * number. */
static int env_number(cli_env_fn env, const char *name, long *out)
{
    const char *s = env(name);
    if (!s)
        return 1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || v < 0 || v > 100000000)
        return -1;
    *out = v;
    return 0;
}

static int bad_variable(const char *name, cli_env_fn env, char *err, size_t err_len)
{
    snprintf(err, err_len, "--shard auto: %s is '%.64s', not a whole number", name, env(name));
    return -1;
}

/* Slurm array job: the task's place among the array's indices, min to max by step. Returns 1 when
 * this is no array job. */
static int from_slurm(cli_env_fn env, int given_n, int *k, int *n, char *err, size_t err_len)
{
    long id, min = 0, max = 0, count = 0, step = 1;
    int rc = env_number(env, "SLURM_ARRAY_TASK_ID", &id);
    if (rc > 0)
        return 1;
    if (rc < 0)
        return bad_variable("SLURM_ARRAY_TASK_ID", env, err, err_len);
    const char *names[] = {"SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_COUNT",
                           "SLURM_ARRAY_TASK_STEP"};
    long *values[] = {&min, &max, &count, &step};
    int set[4];
    for (int i = 0; i < 4; i++) {
        const int r = env_number(env, names[i], values[i]);
        if (r < 0)
            return bad_variable(names[i], env, err, err_len);
        set[i] = r == 0;
    }
    if (step < 1)
        step = 1;
    long total = given_n ? given_n : set[2] ? count : set[1] ? (max - min) / step + 1 : 0;
    if (total < 1) {
        snprintf(err, err_len, "--shard auto: SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_COUNT nor "
                               "SLURM_ARRAY_TASK_MAX: give the count (--shard auto/N)");
        return -1;
    }
    if (id < min || (id - min) % step) {
        snprintf(err, err_len, "--shard auto: SLURM_ARRAY_TASK_ID %ld is not one of the array's indices (from %ld by %ld)",
                 id, min, step);
        return -1;
    }
    *k = (int)((id - min) / step + 1);
    *n = (int)total;
    return 0;
}

int cli_shard_parse(const char *spec, cli_env_fn env, int *k, int *n, char *err, size_t err_len)
{
    if (strncmp(spec, "auto", 4) == 0 && (spec[4] == '\0' || spec[4] == '/')) {
        long given = 0;
        if (spec[4] == '/') {
            char *end;
            given = strtol(spec + 5, &end, 10);
            if (end == spec + 5 || *end || given < 1 || given > CLI_SHARD_MAX) {
                snprintf(err, err_len, "--shard: '%s' is not auto/N with 1 <= N <= %d", spec, CLI_SHARD_MAX);
                return -1;
            }
        }
        int rc = from_slurm(env, (int)given, k, n, err, err_len);
        if (rc <= 0) {
            if (rc == 0 && *k > *n) {
                snprintf(err, err_len, "--shard auto: Slurm's task %d of an array of %d", *k, *n);
                return -1;
            }
            return rc;
        }
        /* indices from 0 (Kubernetes) or from 1 (GNU parallel), the count given */
        static const struct {
            const char *name;
            int base;
        } counted[] = {{"JOB_COMPLETION_INDEX", 0}, {"PARALLEL_SEQ", 1}};
        for (size_t i = 0; i < sizeof counted / sizeof counted[0]; i++) {
            long index;
            rc = env_number(env, counted[i].name, &index);
            if (rc > 0)
                continue;
            if (rc < 0)
                return bad_variable(counted[i].name, env, err, err_len);
            if (!given) {
                snprintf(err, err_len, "--shard auto: %s is set, but not how many tasks there are: --shard auto/N",
                         counted[i].name);
                return -1;
            }
            *k = (int)(index - counted[i].base + 1);
            *n = (int)given;
            if (*k < 1 || *k > *n) {
                snprintf(err, err_len, "--shard auto: %s %ld is outside %d tasks", counted[i].name, index, *n);
                return -1;
            }
            return 0;
        }
        snprintf(err, err_len, "--shard auto: no scheduler's task index in the environment (SLURM_ARRAY_TASK_ID, "
                               "JOB_COMPLETION_INDEX, PARALLEL_SEQ)");
        return -1;
    }
    char *end;
    long a = strtol(spec, &end, 10);
    if (end == spec || *end != '/') {
        snprintf(err, err_len, "--shard: '%s' is not K/N or auto", spec);
        return -1;
    }
    const char *rest = end + 1;
    long b = strtol(rest, &end, 10);
    if (end == rest || *end || b < 1 || b > CLI_SHARD_MAX || a < 1 || a > b) {
        snprintf(err, err_len, "--shard: '%s' needs 1 <= K <= N", spec);
        return -1;
    }
    *k = (int)a;
    *n = (int)b;
    return 0;
}
