/* The engines a run works with: the first made from the command's options, the others its
 * siblings on the same device, one per image in flight (-j). */
#ifndef PPOCR_CLI_ENGINES_H
#define PPOCR_CLI_ENGINES_H

#include "cli/args.h"
#include "ppocr.h"

/* Makes the first engine. On the CPU backend, -j engines share the cores rather than each taking
 * all of them (a Vulkan device has no use for threads). Returns 0, or the command's exit status
 * (3: no device or unusable models, 1: anything else) after printing why. */
int cli_engine_first(const struct cli_args *args, struct ppocr_engine **out);
/* Engines to run: --jobs, or by default one per CPU core on a discrete GPU (2 to 16), two on
 * another GPU, so that images' CPU stages (decoding, DB post-processing) overlap other images'
 * GPU work. On a discrete GPU's 16-core host, both a folder of pages and a folder of varied
 * images (large scans among them, whose decoding holds an engine a long while) ran fastest with
 * eight to sixteen engines (BENCHMARKS.md). One on a CPU device, whose driver already uses every
 * core. Each engine adds its own activation memory, which an integrated GPU shares with the host. */
int cli_engine_jobs(const struct cli_args *args, const struct ppocr_engine *first);
/* Makes engines[worker] a sibling of engines[0] unless it exists: for a worker's thread. Returns 0,
 * or -1 after printing why (that worker then takes no work; the others do). */
int cli_engine_sibling(struct ppocr_engine **engines, int worker);

#endif
