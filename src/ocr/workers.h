/* A few helper threads that share a loop of independent tasks with the calling thread. Tasks are
 * claimed one at a time from a counter, the caller claiming too, so a helper that wakes late finds
 * the work done instead of holding the loop up: at worst the caller runs every task itself. */
#ifndef PPOCR_OCR_WORKERS_H
#define PPOCR_OCR_WORKERS_H

struct ocr_workers;

/* Starts `helpers` threads (0: none, and *out is NULL, which ocr_workers_run accepts). Returns 0,
 * or -1 when a thread could not be started (none are left running). */
int ocr_workers_create(int helpers, struct ocr_workers **out);
void ocr_workers_destroy(struct ocr_workers *w);

/* The CPUs this process may run on (its affinity mask), at least 1. */
int ocr_workers_cpus(void);

/* Runs task(arg, i) for every i in [0, n) on this thread and the helpers, each i once, and returns
 * when all have finished. One loop at a time per pool (the engine that owns it runs one). */
void ocr_workers_run(struct ocr_workers *w, int n, void (*task)(void *arg, int i), void *arg);

#endif
