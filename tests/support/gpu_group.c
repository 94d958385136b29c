#include "support/gpu_group.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "gpu/context.h"
#include "gpu/error.h"
#include "gpu/validation.h"

struct gpu_context *test_gpu;

int test_gpu_group_setup(void **state)
{
    (void)state;
    struct gpu_options opt;
    gpu_options_default(&opt);
    if (gpu_context_create(&opt, &test_gpu)) {
        fprintf(stderr, "no GPU context: %s\n", gpu_last_error());
        return -1;
    }
    return 0;
}

int test_gpu_group_teardown(void **state)
{
    (void)state;
    gpu_context_destroy(test_gpu);
    test_gpu = NULL;
    assert_int_equal(gpu_validation_message_count(), 0);
    return 0;
}
