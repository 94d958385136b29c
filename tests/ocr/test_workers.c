/* The helper threads behind DB post-processing's boxes: every task of a loop runs exactly once,
 * the loop returns only after its last task has finished (also one that a helper is still
 * running), and loops follow each other back to back without a task of one running in another;
 * and the count of CPUs the helpers are sized by. */
#define _GNU_SOURCE /* sched_setaffinity */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "ocr/workers.h"

enum { MAX_TASKS = 64 };

struct loop {
    atomic_int runs[MAX_TASKS];
    int slow_task; /* sleeps before counting, -1: none */
    int loop_id;
    atomic_int foreign; /* tasks that saw another loop's id */
    const int *current_id;
};

static void count_task(void *arg, int i)
{
    struct loop *l = arg;
    if (i == l->slow_task) {
        struct timespec pause = {0, 2 * 1000 * 1000};
        nanosleep(&pause, NULL);
    }
    if (*l->current_id != l->loop_id)
        atomic_fetch_add(&l->foreign, 1);
    atomic_fetch_add(&l->runs[i], 1);
}

static void run_loops(struct ocr_workers *w, int loops)
{
    int current = -1;
    uint32_t seed = 7;
    for (int k = 0; k < loops; k++) {
        seed = seed * 1664525u + 1013904223u;
        const int n = (int)(seed >> 8) % (MAX_TASKS + 1);
        struct loop l;
        memset(&l, 0, sizeof(l));
        l.slow_task = k % 50 == 0 && n > 0 ? n - 1 : -1;
        l.loop_id = k;
        l.current_id = &current;
        current = k;
        ocr_workers_run(w, n, count_task, &l);
        current = -1; /* a task of this loop running after the return would see it */
        for (int i = 0; i < MAX_TASKS; i++)
            if (atomic_load(&l.runs[i]) != (i < n ? 1 : 0))
                fail_msg("loop %d (%d tasks): task %d ran %d times", k, n, i, atomic_load(&l.runs[i]));
        assert_int_equal(atomic_load(&l.foreign), 0);
    }
}

static void test_helpers(void **state)
{
    (void)state;
    struct ocr_workers *w;
    assert_int_equal(ocr_workers_create(3, &w), 0);
    assert_non_null(w);
    run_loops(w, 3000);
    ocr_workers_destroy(w);
}

static void test_no_helpers(void **state)
{
    (void)state;
    struct ocr_workers *w;
    assert_int_equal(ocr_workers_create(0, &w), 0);
    assert_null(w);
    run_loops(w, 200); /* the caller alone */
    ocr_workers_destroy(w);
}

static void test_idle_pool_stops(void **state)
{
    (void)state;
    struct ocr_workers *w;
    assert_int_equal(ocr_workers_create(2, &w), 0);
    ocr_workers_destroy(w); /* helpers that never ran a loop are joined */
}

/* The engine sizes its helpers by the CPUs the process may use, not the machine's. */
static void test_cpus_follow_the_affinity(void **state)
{
    (void)state;
    cpu_set_t all, one;
    assert_int_equal(sched_getaffinity(0, sizeof(all), &all), 0);
    assert_int_equal(ocr_workers_cpus(), CPU_COUNT(&all));
    int first = 0;
    while (!CPU_ISSET(first, &all))
        first++;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
    const int cpus = ocr_workers_cpus();
    assert_int_equal(sched_setaffinity(0, sizeof(all), &all), 0);
    assert_int_equal(cpus, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_helpers),
        cmocka_unit_test(test_no_helpers),
        cmocka_unit_test(test_idle_pool_stops),
        cmocka_unit_test(test_cpus_follow_the_affinity),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
