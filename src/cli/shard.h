/* --shard: which contiguous slice of the inputs this process takes. "K/N" as given, or "auto"
 * ("auto/N" with the count given) from the task index a scheduler puts in the environment:
 * Slurm array jobs (SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_MIN, _MAX or _COUNT, and _STEP),
 * Kubernetes indexed Jobs (JOB_COMPLETION_INDEX, from 0) and GNU parallel (PARALLEL_SEQ, from 1). */
#ifndef PPOCR_CLI_SHARD_H
#define PPOCR_CLI_SHARD_H

#include <stddef.h>

#define CLI_SHARD_MAX 1000000

/* Reads the variable `name` from the environment the caller gives (getenv, or a table in tests). */
typedef const char *(*cli_env_fn)(const char *name);

/* Parses spec into the 1-based k of n. Returns 0, or -1 with a one-line reason in err (bad syntax,
 * no scheduler's index in the environment, an index outside the count). */
int cli_shard_parse(const char *spec, cli_env_fn env, int *k, int *n, char *err, size_t err_len);

#endif
