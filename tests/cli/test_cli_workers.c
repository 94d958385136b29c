/* The -j worker pool (src/cli/workers.c) without a GPU: every item worked once and emitted in
 * input order whatever order the workers finish in, a window on how far work runs ahead of the
 * output, a stop that lets begun items finish and be emitted, an emit's halt, workers whose
 * start fails, items prepared ahead on threads of their own, and prepared items taken several at
 * a time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/workers.h"

#define MAX_ITEMS 200

struct trace {
    pthread_mutex_t lock;
    int worked[MAX_ITEMS];  /* times work() ran for each item */
    int emitted[MAX_ITEMS]; /* order of emit() calls */
    int n_emitted;
    int begun_max;       /* highest item begun */
    int ahead_max;       /* most items begun beyond the last emitted */
    int halt_at;         /* emit returns non-zero for this item (-1: never) */
    int stop_at;         /* work sets the stop flag at this item (-1: never) */
    int failing_workers; /* init fails for workers >= this */
    int fetched[MAX_ITEMS]; /* order of fetch() calls; fetch ends the stream at fetch_end */
    int n_fetched, fetch_end, fetching_now, fetch_overlap;
    int prepared[MAX_ITEMS];   /* times prepare() ran for each item */
    int prepare_order[MAX_ITEMS], n_prepared;
    int unprepared_work;       /* work() ran on an item not prepared */
    int waiting, waiting_max;  /* prepared and not yet taken by work() */
    int groups, grouped_max;   /* work_many() calls, the most items one took */
    int group_bad;             /* a group too large or empty, or an item twice in it */
    atomic_int stop;
};

static void nap(int item)
{
    /* uneven durations, so workers finish out of order */
    struct timespec t = {0, (long)((item * 7919) % 5) * 200000L};
    nanosleep(&t, NULL);
}

static void trace_prepare(void *ctx, int item)
{
    struct trace *t = ctx;
    nap(item + 1);
    pthread_mutex_lock(&t->lock);
    t->prepared[item]++;
    t->prepare_order[t->n_prepared++] = item;
    if (++t->waiting > t->waiting_max)
        t->waiting_max = t->waiting;
    pthread_mutex_unlock(&t->lock);
}

static int trace_init(void *ctx, int worker)
{
    struct trace *t = ctx;
    return worker >= t->failing_workers ? -1 : 0;
}

static void trace_work(void *ctx, int worker, int item)
{
    (void)worker;
    struct trace *t = ctx;
    pthread_mutex_lock(&t->lock);
    t->worked[item]++;
    if (t->n_prepared) {
        t->unprepared_work |= t->prepared[item] != 1;
        t->waiting--;
    }
    if (item > t->begun_max)
        t->begun_max = item;
    if (item - t->n_emitted > t->ahead_max)
        t->ahead_max = item - t->n_emitted;
    if (item == t->stop_at)
        t->stop = 1;
    pthread_mutex_unlock(&t->lock);
    nap(item);
}

/* Items that arrive one at a time, like request lines; a few of them slowly. */
static int trace_fetch(void *ctx, int item)
{
    struct trace *t = ctx;
    pthread_mutex_lock(&t->lock);
    t->fetch_overlap |= t->fetching_now++ > 0;
    t->fetched[t->n_fetched++] = item;
    pthread_mutex_unlock(&t->lock);
    if (item % 7 == 3)
        nap(3);
    pthread_mutex_lock(&t->lock);
    t->fetching_now--;
    pthread_mutex_unlock(&t->lock);
    return item >= t->fetch_end;
}

static int trace_emit(void *ctx, int item)
{
    struct trace *t = ctx;
    pthread_mutex_lock(&t->lock);
    t->emitted[t->n_emitted++] = item;
    pthread_mutex_unlock(&t->lock);
    return item == t->halt_at;
}

static struct cli_workers job_for(struct trace *t, int n_items, int n_workers, int window)
{
    memset(t, 0, sizeof *t);
    pthread_mutex_init(&t->lock, NULL);
    t->halt_at = t->stop_at = -1;
    t->begun_max = -1;
    t->failing_workers = n_workers;
    return (struct cli_workers){.n_items = n_items,
                                .n_workers = n_workers,
                                .window = window,
                                .ctx = t,
                                .init = trace_init,
                                .work = trace_work,
                                .emit = trace_emit,
                                .stop = &t->stop};
}

static void assert_in_order(const struct trace *t, int n)
{
    assert_int_equal(t->n_emitted, n);
    for (int i = 0; i < n; i++)
        assert_int_equal(t->emitted[i], i);
}

static void test_all_in_order(void **state)
{
    (void)state;
    struct trace t;
    struct cli_workers job = job_for(&t, 150, 4, 8);
    assert_int_equal(cli_workers_run(&job), 150);
    assert_in_order(&t, 150);
    for (int i = 0; i < 150; i++)
        assert_int_equal(t.worked[i], 1);
    /* an item is begun only while fewer than `window` are begun and not yet emitted */
    assert_true(t.ahead_max < 8);
}

static void test_more_workers_than_items(void **state)
{
    (void)state;
    struct trace t;
    struct cli_workers job = job_for(&t, 3, 8, 32);
    assert_int_equal(cli_workers_run(&job), 3);
    assert_in_order(&t, 3);
    job = job_for(&t, 0, 2, 8);
    assert_int_equal(cli_workers_run(&job), 0);
    assert_int_equal(t.n_emitted, 0);
}

static void test_stop_finishes_begun_items(void **state)
{
    (void)state;
    struct trace t;
    struct cli_workers job = job_for(&t, 150, 4, 8);
    t.stop_at = 20;
    int emitted = cli_workers_run(&job);
    /* every item begun before the stop was seen is finished and emitted, in order, and nothing
     * after that prefix was begun */
    assert_true(emitted > 20 && emitted < 150);
    assert_int_equal(emitted, t.begun_max + 1);
    assert_in_order(&t, emitted);
    for (int i = 0; i < 150; i++)
        assert_int_equal(t.worked[i], i < emitted ? 1 : 0);
}

static void test_halt_stops_emitting(void **state)
{
    (void)state;
    struct trace t;
    struct cli_workers job = job_for(&t, 150, 4, 8);
    t.halt_at = 10;
    assert_int_equal(cli_workers_run(&job), 11);
    assert_in_order(&t, 11);
    /* work ran at most a window past the halt */
    assert_true(t.begun_max < 11 + 8);
}

static void test_failed_workers_leave_the_rest(void **state)
{
    (void)state;
    struct trace t;
    struct cli_workers job = job_for(&t, 60, 4, 8);
    t.failing_workers = 1; /* only worker 0 starts */
    assert_int_equal(cli_workers_run(&job), 60);
    assert_in_order(&t, 60);
    job = job_for(&t, 10, 3, 8);
    t.failing_workers = 0; /* none starts: nothing is begun, and the run still ends */
    assert_int_equal(cli_workers_run(&job), 0);
}

static void test_fetched_stream(void **state)
{
    (void)state;
    struct trace t;
    for (int workers = 1; workers <= 4; workers += 3) {
        struct cli_workers job = job_for(&t, 1 << 30, workers, 6);
        job.fetch = trace_fetch;
        t.fetch_end = 90;
        assert_int_equal(cli_workers_run(&job), 90);
        assert_in_order(&t, 90);
        /* fetched in order, one at a time, and the end asked for once */
        assert_int_equal(t.n_fetched, 91);
        for (int i = 0; i <= 90; i++)
            assert_int_equal(t.fetched[i], i);
        assert_false(t.fetch_overlap);
        for (int i = 0; i < 90; i++)
            assert_int_equal(t.worked[i], 1);
        assert_int_equal(t.worked[90], 0);
        assert_true(t.ahead_max < 6);
    }
    /* a stream that ends at once, and a stop in the middle of one */
    struct cli_workers job = job_for(&t, 1 << 30, 3, 6);
    job.fetch = trace_fetch;
    t.fetch_end = 0;
    assert_int_equal(cli_workers_run(&job), 0);
    job = job_for(&t, 1 << 30, 3, 6);
    job.fetch = trace_fetch;
    t.fetch_end = 150;
    t.stop_at = 20;
    const int emitted = cli_workers_run(&job);
    assert_true(emitted > 20 && emitted < 150);
    assert_in_order(&t, emitted);
}

static struct cli_workers prepared_job(struct trace *t, int n_items, int n_workers, int window, int preparers,
                                       int ahead)
{
    struct cli_workers job = job_for(t, n_items, n_workers, window);
    job.prepare = trace_prepare;
    job.n_preparers = preparers;
    job.ahead = ahead;
    return job;
}

static void test_prepared_ahead(void **state)
{
    (void)state;
    struct trace t;
    /* items, workers, window, preparers, ahead */
    const int shapes[][5] = {{150, 4, 24, 3, 3}, {150, 1, 6, 5, 5}, {150, 3, 16, 1, 1}, {2, 4, 24, 8, 8},
                             {150, 1, 40, 6, 2}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        const int n = shapes[k][0], workers = shapes[k][1], ahead = shapes[k][4];
        struct cli_workers job = prepared_job(&t, n, workers, shapes[k][2], shapes[k][3], ahead);
        assert_int_equal(cli_workers_run(&job), n);
        assert_in_order(&t, n);
        assert_false(t.unprepared_work);
        /* every item prepared once, in their order of beginning, and worked once */
        assert_int_equal(t.n_prepared, n);
        for (int i = 0; i < n; i++) {
            assert_int_equal(t.prepared[i], 1);
            assert_int_equal(t.worked[i], 1);
        }
        /* items prepared and not yet worked: `ahead`, and those a worker has taken but not begun */
        assert_true(t.waiting_max <= ahead + workers);
        assert_true(t.ahead_max < shapes[k][2]);
    }
}

static void test_prepared_stop_and_halt(void **state)
{
    (void)state;
    struct trace t;
    /* a stop: what was prepared before it is worked and emitted, nothing after it is begun */
    struct cli_workers job = prepared_job(&t, 150, 4, 24, 4, 4);
    t.stop_at = 20;
    int emitted = cli_workers_run(&job);
    assert_true(emitted > 20 && emitted < 150);
    assert_in_order(&t, emitted);
    assert_int_equal(t.n_prepared, emitted);
    for (int i = 0; i < 150; i++)
        assert_int_equal(t.worked[i], i < emitted ? 1 : 0);
    /* a halt: at most the window was begun, and nothing is worked twice */
    job = prepared_job(&t, 150, 4, 24, 4, 4);
    t.halt_at = 10;
    assert_int_equal(cli_workers_run(&job), 11);
    assert_in_order(&t, 11);
    assert_true(t.n_prepared < 11 + 24);
    for (int i = 0; i < 150; i++)
        assert_true(t.worked[i] <= t.prepared[i]);
}

static void trace_work_many(void *ctx, int worker, const int *items, int n)
{
    struct trace *t = ctx;
    pthread_mutex_lock(&t->lock);
    t->groups++;
    t->grouped_max = n > t->grouped_max ? n : t->grouped_max;
    t->group_bad |= n < 1;
    for (int a = 0; a < n; a++)
        for (int b = a + 1; b < n; b++)
            t->group_bad |= items[a] == items[b];
    pthread_mutex_unlock(&t->lock);
    for (int k = 0; k < n; k++)
        trace_work(ctx, worker, items[k]);
}

static void test_prepared_taken_together(void **state)
{
    (void)state;
    struct trace t;
    /* items, workers, window, preparers, ahead, take_max */
    const int shapes[][6] = {{150, 2, 40, 6, 12, 5}, {150, 4, 24, 4, 8, 8}, {60, 1, 30, 8, 16, 3}, {3, 4, 24, 8, 8, 8}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; k++) {
        const int n = shapes[k][0], take_max = shapes[k][5];
        struct cli_workers job = prepared_job(&t, n, shapes[k][1], shapes[k][2], shapes[k][3], shapes[k][4]);
        job.work_many = trace_work_many;
        job.take_max = take_max;
        assert_int_equal(cli_workers_run(&job), n);
        assert_in_order(&t, n);
        assert_false(t.unprepared_work);
        assert_false(t.group_bad);
        for (int i = 0; i < n; i++)
            assert_int_equal(t.worked[i], 1);
        assert_true(t.grouped_max <= take_max);
        /* preparers ahead of a slow worker: it took several at once at least once */
        if (n > 50)
            assert_true(t.groups < n);
    }
    /* a stop: the items begun, grouped or not, are worked and emitted */
    struct cli_workers job = prepared_job(&t, 150, 3, 24, 4, 8);
    job.work_many = trace_work_many;
    job.take_max = 4;
    t.stop_at = 20;
    int emitted = cli_workers_run(&job);
    assert_true(emitted > 20 && emitted < 150);
    assert_in_order(&t, emitted);
    for (int i = 0; i < 150; i++)
        assert_int_equal(t.worked[i], i < emitted ? 1 : 0);
}

static void test_prepared_without_workers(void **state)
{
    (void)state;
    struct trace t;
    /* only worker 0 starts: it works everything the preparers make */
    struct cli_workers job = prepared_job(&t, 60, 4, 24, 3, 3);
    t.failing_workers = 1;
    assert_int_equal(cli_workers_run(&job), 60);
    assert_in_order(&t, 60);
    assert_false(t.unprepared_work);
    /* none starts: the preparers stop too, and the run ends */
    job = prepared_job(&t, 60, 3, 24, 3, 3);
    t.failing_workers = 0;
    assert_int_equal(cli_workers_run(&job), 0);
    assert_true(t.n_prepared <= 3 + 3);
    /* no preparer asked for: each worker prepares its own items */
    job = prepared_job(&t, 40, 3, 8, 0, 0);
    assert_int_equal(cli_workers_run(&job), 40);
    assert_in_order(&t, 40);
    assert_false(t.unprepared_work);
    /* prepare beside fetch is refused */
    job = prepared_job(&t, 40, 3, 8, 2, 2);
    job.fetch = trace_fetch;
    assert_int_equal(cli_workers_run(&job), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_all_in_order),
        cmocka_unit_test(test_more_workers_than_items),
        cmocka_unit_test(test_stop_finishes_begun_items),
        cmocka_unit_test(test_halt_stops_emitting),
        cmocka_unit_test(test_failed_workers_leave_the_rest),
        cmocka_unit_test(test_fetched_stream),
        cmocka_unit_test(test_prepared_ahead),
        cmocka_unit_test(test_prepared_stop_and_halt),
        cmocka_unit_test(test_prepared_without_workers),
        cmocka_unit_test(test_prepared_taken_together),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
