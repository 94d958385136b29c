/* The progress bar on stderr (a terminal only): images done of all, the time left at the pace so
 * far, and the file whose result comes next. */
#ifndef PPOCR_CLI_PROGRESS_H
#define PPOCR_CLI_PROGRESS_H

struct cli_progress {
    int total;
    double start_s; /* when the first image began */
};

void cli_progress_start(struct cli_progress *p, int total);
/* done of total finished; `next`: the file in progress whose result comes next (NULL when done). */
void cli_progress_show(const struct cli_progress *p, int done, const char *next);

#endif
