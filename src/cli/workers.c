#include "cli/workers.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

struct shared {
    const struct cli_workers *job;
    pthread_mutex_t lock;
    pthread_cond_t changed; /* an item finished, a worker left, or the window moved */
    /* held across a fetch, so that items are fetched in their order, one at a time */
    pthread_mutex_t fetching;
    bool *done; /* item i's slot: i % (window + 1), cleared when it is emitted */
    int n_items; /* job->n_items, lowered to the end a fetch found */
    int next, emitted, alive;
    bool halt;
};

static bool *done_slot(struct shared *sh, int item)
{
    return &sh->done[item % (sh->job->window + 1)];
}

struct worker {
    struct shared *sh;
    int index;
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

/* Takes the next item under sh->lock (held on entry and on return); -1 when there is none. */
static int take_item(struct shared *sh)
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
        return take_item(sh); /* the window was full: wait for it again */
    return item;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    struct shared *sh = w->sh;
    const struct cli_workers *job = sh->job;
    int usable = !job->init || job->init(job->ctx, w->index) == 0;
    pthread_mutex_lock(&sh->lock);
    while (usable) {
        const int item = take_item(sh);
        if (item < 0)
            break;
        pthread_mutex_unlock(&sh->lock);
        job->work(job->ctx, w->index, item);
        pthread_mutex_lock(&sh->lock);
        *done_slot(sh, item) = true;
        pthread_cond_broadcast(&sh->changed);
    }
    sh->alive--;
    pthread_cond_broadcast(&sh->changed);
    pthread_mutex_unlock(&sh->lock);
    return NULL;
}

int cli_workers_run(const struct cli_workers *job)
{
    struct shared sh = {.job = job, .n_items = job->n_items};
    sh.done = calloc((size_t)job->window + 1, sizeof(bool));
    pthread_t *threads = calloc((size_t)job->n_workers, sizeof(*threads));
    struct worker *ws = calloc((size_t)job->n_workers, sizeof(*ws));
    if (!sh.done || !threads || !ws) {
        free(sh.done);
        free(threads);
        free(ws);
        return -1;
    }
    pthread_mutex_init(&sh.lock, NULL);
    pthread_mutex_init(&sh.fetching, NULL);
    pthread_cond_init(&sh.changed, NULL);
    int started = 0;
    pthread_mutex_lock(&sh.lock);
    for (int w = 0; w < job->n_workers; w++) {
        ws[w] = (struct worker){&sh, w};
        if (pthread_create(&threads[w], NULL, worker_main, &ws[w]) == 0) {
            started++;
            sh.alive++;
        } else {
            ws[w].index = -1;
        }
    }
    while (started && sh.emitted < sh.n_items) {
        if (*done_slot(&sh, sh.emitted)) {
            *done_slot(&sh, sh.emitted) = false;
            pthread_mutex_unlock(&sh.lock);
            int halt = job->emit(job->ctx, sh.emitted);
            pthread_mutex_lock(&sh.lock);
            sh.emitted++;
            if (halt)
                break; /* nothing more can be written: the items still running are dropped */
            pthread_cond_broadcast(&sh.changed);
            continue;
        }
        /* the next item was never begun and never will be */
        if (sh.next <= sh.emitted && (stopping(&sh) || sh.alive == 0))
            break;
        wait_change(&sh);
    }
    sh.halt = true;
    pthread_cond_broadcast(&sh.changed);
    pthread_mutex_unlock(&sh.lock);
    for (int w = 0; w < job->n_workers; w++)
        if (ws[w].index >= 0)
            pthread_join(threads[w], NULL);
    int emitted = sh.emitted;
    pthread_cond_destroy(&sh.changed);
    pthread_mutex_destroy(&sh.fetching);
    pthread_mutex_destroy(&sh.lock);
    free(sh.done);
    free(threads);
    free(ws);
    return started ? emitted : -1;
}
