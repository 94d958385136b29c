/* Items processed on several threads, results handed back in input order: the CLI runs one OCR
 * engine per worker so that several images are in flight (decode, detection post-processing and
 * recognition of one overlap the GPU work of another), while output stays byte for byte what a
 * single engine prints. */
#ifndef PPOCR_CLI_WORKERS_H
#define PPOCR_CLI_WORKERS_H

#include <stdatomic.h>

struct cli_workers {
    int n_items, n_workers; /* with `fetch`, n_items bounds the items (INT_MAX for a stream) */
    int window; /* items begun but not yet emitted, at most (bounds memory held by results) */
    void *ctx;
    /* At the start of worker w's thread; non-zero: this worker takes no items (the others do). */
    int (*init)(void *ctx, int worker);
    /* Optional, for items that arrive one by one (requests on stdin): makes item i ready, on the
     * worker's thread, once per item in the order 0, 1, 2..., never two at once. 0: item i is
     * ready; non-zero: there are no more items (i and later are never worked or emitted). */
    int (*fetch)(void *ctx, int item);
    /* Optional, not with `fetch`: readies item i (decodes its image) on one of n_preparers threads
     * of its own, ahead of the workers, so that a worker (an engine) spends its time on work alone.
     * Items are prepared in their order, at most `ahead` of them prepared and not yet taken by a
     * worker; a worker takes the earliest prepared one. Where no such thread can be started, a
     * worker prepares its item itself. */
    void (*prepare)(void *ctx, int item);
    int n_preparers, ahead;
    /* Item i on worker w's thread (after its prepare, where there is one). */
    void (*work)(void *ctx, int worker, int item);
    /* Optional, with prepare and its threads: items[0..n) on worker w's thread, in place of `work`
     * for each: a worker takes the earliest prepared item and, without waiting, those prepared
     * after it, up to take_max (items worked together, such as images sharing an engine's run). */
    void (*work_many)(void *ctx, int worker, const int *items, int n);
    int take_max;
    /* On the calling thread, for items 0, 1, 2... each after its work finished. Non-zero: hand
     * out no further items and emit no more (the items begun are still finished). */
    int (*emit)(void *ctx, int item);
    /* Set (by a signal handler): no further items are begun. */
    const atomic_int *stop;
};

/* Runs until every item is emitted; after a stop, the items already begun (prepared or being
 * prepared included) are finished and emitted; after an emit's non-zero answer, those a worker
 * holds are finished but not emitted, and those only prepared are left as prepare left them (the
 * caller frees what it made). Returns the count of items emitted, or -1 when no worker thread
 * could be started or both fetch and prepare are set. */
int cli_workers_run(const struct cli_workers *job);

#endif
