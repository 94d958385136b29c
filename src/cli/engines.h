/* The engines a run works with: one made per device the command chose (--device N, a list such as
 * 0,2, or all), and siblings of them on the same devices, one per image in flight (-j). Worker w
 * runs on device w mod the device count, so the devices take turns at the engines, and the pool
 * hands each image to whichever engine is free first: a slower device takes fewer. */
#ifndef PPOCR_CLI_ENGINES_H
#define PPOCR_CLI_ENGINES_H

#include "cli/args.h"
#include "ppocr.h"

struct cli_engines {
    int n_devices;
    int jobs;                      /* engines: [0, n_devices) the devices' first, then siblings */
    struct ppocr_engine **engines; /* jobs of them, NULL until made */
};

/* Makes each chosen device's first engine (side by side, one thread each), then sizes the pool:
 * `jobs` engines, or by default cli_engines_default_jobs, at most max_jobs (1 or more). On the CPU
 * backend, -j engines share the cores rather than each taking all of them. Returns 0, or the
 * command's exit status (2: a device list that cannot run together, 3: no device or unusable
 * models, 1: anything else) after printing why. */
int cli_engines_open(const struct cli_args *args, int max_jobs, struct cli_engines *out);
/* Threads that decode images ahead of the engines, so that an engine waits on its GPU rather than
 * on a decoder: `asked` (--decode-threads) where it is 0 or more; by default one per core, at most
 * 16, where the engines are GPUs, and 0 on a CPU device, whose nets take every core. 0 for a
 * single engine, which decodes its own images. Each holds at most one decoded image not yet
 * taken. */
int cli_engines_decode_threads(const struct cli_engines *e, int asked);
/* Makes engines[worker] (a sibling of its device's first engine) unless it exists: for a worker's
 * thread. Returns 0, or -1 after printing why (that worker then takes no work; the others do). */
int cli_engines_sibling(struct cli_engines *e, int worker);
/* Destroys the siblings, then the first engines, whose devices they share. */
void cli_engines_close(struct cli_engines *e);

#endif
