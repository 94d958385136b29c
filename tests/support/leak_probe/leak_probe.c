/* A process that leaks on purpose, for the check that a leak of ours fails a CLI test
 * (tests/support/sanitizer_reports_test.sh). Like the command it opens and closes a GPU
 * context first, so that the Vulkan driver's and layer's own leftovers, which tests/lsan.supp
 * suppresses, are there too; then it loses one block in a function of ours, which no
 * suppression may cover. */
#include <stdio.h>
#include <stdlib.h>

#include "gpu/context.h"
#include "gpu/error.h"

static void *volatile kept;

static __attribute__((noinline)) void leak_probe_lose_block(void)
{
    kept = malloc(4242);
    kept = NULL;
}

int main(void)
{
    struct gpu_context *ctx;
    if (gpu_context_create(NULL, &ctx) != GPU_OK) {
        fprintf(stderr, "leak_probe: no GPU context: %s\n", gpu_last_error());
        return 2;
    }
    gpu_context_destroy(ctx);
    leak_probe_lose_block();
    return 0;
}
