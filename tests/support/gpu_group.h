/* A cmocka group fixture for tests that share one GPU context: created before the group's tests,
 * destroyed after them, and the group fails if the validation layer said anything. */
#ifndef PPOCR_TEST_GPU_GROUP_H
#define PPOCR_TEST_GPU_GROUP_H

struct gpu_context;

/* The group's context, valid between the two calls below. */
extern struct gpu_context *test_gpu;

int test_gpu_group_setup(void **state);
int test_gpu_group_teardown(void **state);

#endif
