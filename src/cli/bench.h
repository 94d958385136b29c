/* The command's --bench and --bench-ops tables. */
#ifndef PPOCR_CLI_BENCH_H
#define PPOCR_CLI_BENCH_H

#include <stdio.h>

#include "cli/args.h"

/* Runs the benchmark args->action names and prints its table to out. Returns an exit status. */
int cli_bench(const struct cli_args *args, FILE *out);

#endif
