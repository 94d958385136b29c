#include "cli/workers.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

/* Where an item begun and not yet emitted stands. */
enum slot { SLOT_FREE, SLOT_PREPARING, SLOT_PREPARED, SLOT_WORKING, SLOT_DONE };

struct shared {
    const struct cli_workers *job;
    pthread_mutex_t lock;
    pthread_cond_t changed; /* an item moved on, a thread left, or the window moved */
    /* held across a fetch, so that items are fetched in their order, one at a time */
    pthread_mutex_t fetching;
    unsigned char *slots; /* item i's enum slot at i % (window + 1), free again once emitted */
    int n_items;          /* job->n_items, lowered to the end a fetch found */
    int next, emitted;    /* next: the next item to begin (to prepare, or to work) */
    int ahead;            /* items being prepared or prepared, not yet taken by a worker */
    int workers_alive, preparers_alive;
    bool preparing;       /* preparer threads run: workers take prepared items */
    bool halt;
};

static unsigned char *slot(struct shared *sh, int item)
{
    return &sh->slots[item % (sh->job->window + 1)];
}

struct thread {
    struct shared *sh;
    int index; /* the worker's, or -1 for a preparer */
};

static bool stopping(const struct shared *sh)
{
    return sh->halt || (sh->job->stop && *sh->job->stop);
}

/* Waits for a change, or 100 ms: a stop signal sets a flag but wakes no one. */
static void wait_change(struct shared *sh)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    t.tv_nsec += 100 * 1000 * 1000;
    if (t.tv_nsec >= 1000 * 1000 * 1000) {
        t.tv_sec++;
        t.tv_nsec -= 1000 * 1000 * 1000;
    }
    pthread_cond_timedwait(&sh->changed, &sh->lock, &t);
}

/* Begins the next item under sh->lock (held on entry and on return); -1 when there is none. */
static int begin_item(struct shared *sh)
{
    const struct cli_workers *job = sh->job;
    while (!stopping(sh) && sh->next < sh->n_items && sh->next >= sh->emitted + job->window)
        wait_change(sh);
    if (stopping(sh) || sh->next >= sh->n_items)
        return -1;
    if (!job->fetch)
        return sh->next++;
    pthread_mutex_unlock(&sh->lock);
    pthread_mutex_lock(&sh->fetching);
    pthread_mutex_lock(&sh->lock);
    /* another worker may have fetched, or found the end, meanwhile */
    int item = -1;
    if (!stopping(sh) && sh->next < sh->n_items && sh->next < sh->emitted + job->window) {
        item = sh->next++;
        pthread_mutex_unlock(&sh->lock);
        const int end = job->fetch(job->ctx, item);
        pthread_mutex_lock(&sh->lock);
        if (end) {
            sh->n_items = item;
            pthread_cond_broadcast(&sh->changed);
            item = -1;
        }
    }
    pthread_mutex_unlock(&sh->fetching);
    if (item < 0 && !stopping(sh) && sh->next < sh->n_items)
        return begin_item(sh); /* the window was full: wait for it again */
    return item;
}

/* The earliest prepared item, taken under sh->lock; -1 once none is prepared or will be. After a
 * stop the items begun are still taken; after a halt none is. */
static int take_prepared(struct shared *sh)
{
    for (;;) {
        if (sh->halt)
            return -1;
        for (int i = sh->emitted; i < sh->next; i++)
            if (*slot(sh, i) == SLOT_PREPARED) {
                *slot(sh, i) = SLOT_WORKING;
                sh->ahead--;
                pthread_cond_broadcast(&sh->changed);
                return i;
            }
        /* what is ahead and not prepared is being prepared */
        if (sh->ahead == 0 && (stopping(sh) || sh->next >= sh->n_items || sh->preparers_alive == 0))
            return -1;
        wait_change(sh);
    }
}

/* Further prepared items after the first taken, without waiting, under sh->lock: up to `room`
 * into items; returns the count. */
static int take_more_prepared(struct shared *sh, int *items, int room)
{
    int n = 0;
    for (int i = sh->emitted; i < sh->next && n < room && !sh->halt; i++)
        if (*slot(sh, i) == SLOT_PREPARED) {
            *slot(sh, i) = SLOT_WORKING;
            sh->ahead--;
            items[n++] = i;
        }
    if (n)
        pthread_cond_broadcast(&sh->changed);
    return n;
}

static void *preparer_main(void *arg)
{
    struct shared *sh = ((struct thread *)arg)->sh;
    const struct cli_workers *job = sh->job;
    pthread_mutex_lock(&sh->lock);
    for (;;) {
        while (!stopping(sh) && sh->workers_alive > 0 && sh->next < sh->n_items &&
               (sh->next >= sh->emitted + job->window || sh->ahead >= job->ahead))
            wait_change(sh);
        if (stopping(sh) || sh->workers_alive == 0 || sh->next >= sh->n_items)
            break;
        const int item = sh->next++;
        *slot(sh, item) = SLOT_PREPARING;
        sh->ahead++;
        pthread_mutex_unlock(&sh->lock);
        job->prepare(job->ctx, item);
        pthread_mutex_lock(&sh->lock);
        *slot(sh, item) = SLOT_PREPARED;
        pthread_cond_broadcast(&sh->changed);
    }
    sh->preparers_alive--;
    pthread_cond_broadcast(&sh->changed);
    pthread_mutex_unlock(&sh->lock);
    return NULL;
}

static void *worker_main(void *arg)
{
    struct thread *w = arg;
    struct shared *sh = w->sh;
    const struct cli_workers *job = sh->job;
    int usable = !job->init || job->init(job->ctx, w->index) == 0;
    const int take_max = job->work_many && job->take_max > 1 ? job->take_max : 1;
    int *items = malloc((size_t)take_max * sizeof(*items));
    usable = usable && items;
    pthread_mutex_lock(&sh->lock);
    while (usable) {
        const int item = sh->preparing ? take_prepared(sh) : begin_item(sh);
        if (item < 0)
            break;
        *slot(sh, item) = SLOT_WORKING;
        items[0] = item;
        const int n = 1 + (sh->preparing && take_max > 1 ? take_more_prepared(sh, items + 1, take_max - 1) : 0);
        pthread_mutex_unlock(&sh->lock);
        if (job->prepare && !sh->preparing)
            job->prepare(job->ctx, item);
        if (take_max > 1)
            job->work_many(job->ctx, w->index, items, n);
        else
            job->work(job->ctx, w->index, item);
        pthread_mutex_lock(&sh->lock);
        for (int k = 0; k < n; k++)
            *slot(sh, items[k]) = SLOT_DONE;
        pthread_cond_broadcast(&sh->changed);
    }
    sh->workers_alive--;
    pthread_cond_broadcast(&sh->changed);
    pthread_mutex_unlock(&sh->lock);
    free(items);
    return NULL;
}

int cli_workers_run(const struct cli_workers *job)
{
    if (job->fetch && job->prepare)
        return -1;
    const int n_preparers = job->prepare && job->ahead > 0 ? job->n_preparers : 0;
    const int n_threads = job->n_workers + n_preparers;
    struct shared sh = {.job = job, .n_items = job->n_items};
    sh.slots = calloc((size_t)job->window + 1, 1);
    pthread_t *threads = calloc((size_t)n_threads, sizeof(*threads));
    struct thread *ts = calloc((size_t)n_threads, sizeof(*ts));
    bool *joinable = calloc((size_t)n_threads, sizeof(bool));
    if (!sh.slots || !threads || !ts || !joinable) {
        free(sh.slots);
        free(threads);
        free(ts);
        free(joinable);
        return -1;
    }
    pthread_mutex_init(&sh.lock, NULL);
    pthread_mutex_init(&sh.fetching, NULL);
    pthread_cond_init(&sh.changed, NULL);
    /* every thread waits for the lock until all are counted */
    pthread_mutex_lock(&sh.lock);
    for (int t = 0; t < n_threads; t++) {
        const bool is_worker = t < job->n_workers;
        ts[t] = (struct thread){&sh, is_worker ? t : -1};
        joinable[t] = pthread_create(&threads[t], NULL, is_worker ? worker_main : preparer_main, &ts[t]) == 0;
        if (joinable[t] && is_worker)
            sh.workers_alive++;
        else if (joinable[t])
            sh.preparers_alive++;
    }
    const bool started = sh.workers_alive > 0;
    sh.preparing = sh.preparers_alive > 0;
    while (started && sh.emitted < sh.n_items) {
        if (*slot(&sh, sh.emitted) == SLOT_DONE) {
            *slot(&sh, sh.emitted) = SLOT_FREE;
            pthread_mutex_unlock(&sh.lock);
            int halt = job->emit(job->ctx, sh.emitted);
            pthread_mutex_lock(&sh.lock);
            sh.emitted++;
            if (halt)
                break; /* nothing more can be written: the items still running are dropped */
            pthread_cond_broadcast(&sh.changed);
            continue;
        }
        /* the next item was never begun and never will be, or no worker is left to work it */
        if ((sh.next <= sh.emitted && stopping(&sh)) || sh.workers_alive == 0)
            break;
        wait_change(&sh);
    }
    sh.halt = true;
    pthread_cond_broadcast(&sh.changed);
    pthread_mutex_unlock(&sh.lock);
    for (int t = 0; t < n_threads; t++)
        if (joinable[t])
            pthread_join(threads[t], NULL);
    int emitted = sh.emitted;
    pthread_cond_destroy(&sh.changed);
    pthread_mutex_destroy(&sh.fetching);
    pthread_mutex_destroy(&sh.lock);
    free(sh.slots);
    free(threads);
    free(ts);
    free(joinable);
    return started ? emitted : -1;
}
