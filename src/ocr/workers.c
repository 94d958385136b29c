#define _GNU_SOURCE /* sched_getaffinity */
#include "ocr/workers.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define HELPERS_MAX 16

struct ocr_workers {
    pthread_mutex_t lock;
    pthread_cond_t wake;
    pthread_t threads[HELPERS_MAX];
    int n_threads;
    bool stop;
    /* the loop being run, read under lock together with its generation */
    uint32_t generation;
    int n;
    void (*task)(void *arg, int i);
    void *arg;
    /* generation << 32 | next task: a claim succeeds only for the loop it was read with, so a
     * helper still holding a finished loop's task and arg never runs them on a later loop's index */
    _Atomic uint64_t ticket;
    _Atomic int finished;
};

/* Claims and runs tasks of loop `generation` until none are left. */
static void run_tasks(struct ocr_workers *w, uint32_t generation, int n, void (*task)(void *, int), void *arg)
{
    uint64_t t = atomic_load(&w->ticket);
    for (;;) {
        if ((uint32_t)(t >> 32) != generation || (int)(uint32_t)t >= n)
            return;
        if (!atomic_compare_exchange_weak(&w->ticket, &t, t + 1))
            continue; /* t now holds the current ticket */
        task(arg, (int)(uint32_t)t);
        atomic_fetch_add(&w->finished, 1);
        t = atomic_load(&w->ticket);
    }
}

static void *helper_main(void *p)
{
    struct ocr_workers *w = p;
    uint32_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        while (!w->stop && w->generation == seen)
            pthread_cond_wait(&w->wake, &w->lock);
        if (w->stop) {
            pthread_mutex_unlock(&w->lock);
            return NULL;
        }
        seen = w->generation;
        const int n = w->n;
        void (*task)(void *, int) = w->task;
        void *arg = w->arg;
        pthread_mutex_unlock(&w->lock);
        run_tasks(w, seen, n, task, arg);
    }
}

int ocr_workers_cpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}

int ocr_workers_create(int helpers, struct ocr_workers **out)
{
    *out = NULL;
    if (helpers <= 0)
        return 0;
    struct ocr_workers *w = calloc(1, sizeof(*w));
    if (!w)
        return -1;
    pthread_mutex_init(&w->lock, NULL);
    pthread_cond_init(&w->wake, NULL);
    atomic_init(&w->ticket, 0);
    atomic_init(&w->finished, 0);
    for (int k = 0; k < helpers && k < HELPERS_MAX; k++) {
        if (pthread_create(&w->threads[k], NULL, helper_main, w)) {
            ocr_workers_destroy(w);
            return -1;
        }
        w->n_threads++;
    }
    *out = w;
    return 0;
}

void ocr_workers_destroy(struct ocr_workers *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->lock);
    w->stop = true;
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    for (int k = 0; k < w->n_threads; k++)
        pthread_join(w->threads[k], NULL);
    pthread_cond_destroy(&w->wake);
    pthread_mutex_destroy(&w->lock);
    free(w);
}

void ocr_workers_run(struct ocr_workers *w, int n, void (*task)(void *arg, int i), void *arg)
{
    if (n <= 0)
        return;
    if (!w || n == 1) {
        for (int i = 0; i < n; i++)
            task(arg, i);
        return;
    }
    pthread_mutex_lock(&w->lock);
    const uint32_t generation = ++w->generation;
    w->n = n;
    w->task = task;
    w->arg = arg;
    atomic_store(&w->finished, 0);
    atomic_store(&w->ticket, (uint64_t)generation << 32);
    pthread_cond_broadcast(&w->wake);
    pthread_mutex_unlock(&w->lock);
    run_tasks(w, generation, n, task, arg);
    /* every task is claimed; the helpers' last ones are short */
    while (atomic_load(&w->finished) < n)
        sched_yield();
}
