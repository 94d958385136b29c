#include "cli/progress.h"
#include "cli/output.h"
#include "cli/text_escape.h"
#include "cli/write.h"

#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void cli_progress_start(struct cli_progress *p, int total)
{
    p->total = total;
    p->start_s = now_s();
}

static void put_duration(struct cli_buf *b, double s)
{
    long t = (long)(s + 0.5);
    if (t >= 3600)
        cli_buf_printf(b, "%ldh%02ldm", t / 3600, t / 60 % 60);
    else if (t >= 60)
        cli_buf_printf(b, "%ldm%02lds", t / 60, t % 60);
    else
        cli_buf_printf(b, "%lds", t);
}

void cli_progress_show(const struct cli_progress *p, int done, const char *next)
{
    int width = 30, filled = p->total ? done * width / p->total : width;
    double elapsed = now_s() - p->start_s;
    struct cli_buf b = {0};
    cli_buf_printf(&b, "\r[%.*s%*s] %d/%d ", filled, "##############################", width - filled, "", done,
                   p->total);
    if (!next) {
        cli_buf_printf(&b, "in ");
        put_duration(&b, elapsed);
    } else if (done) {
        cli_buf_printf(&b, "ETA ");
        put_duration(&b, elapsed / done * (p->total - done));
    } else {
        cli_buf_printf(&b, "ETA ?");
    }
    if (next) {
        struct cli_buf name = {0};
        cli_put_line_text(&name, next);
        struct winsize ws;
        size_t columns = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col ? ws.ws_col : 80;
        size_t used = b.len - 1, room = columns > used + 2 ? columns - used - 2 : 0;
        /* the end of a long name, the file's own, on one line: cut where a character begins */
        const char *shown = name.data ? name.data : "";
        size_t len = name.len;
        if (len > room && room > 3) {
            shown += len - (room - 3);
            while (((unsigned char)*shown & 0xC0) == 0x80)
                shown++;
            cli_buf_printf(&b, " ...%s", shown);
        } else if (len <= room) {
            cli_buf_printf(&b, " %s", shown);
        }
        cli_buf_free(&name);
    }
    cli_buf_printf(&b, "\033[K%s", next ? "" : "\n"); /* the rest of a longer line before it cleared */
    if (!b.failed)
        (void)cli_write_all(STDERR_FILENO, b.data, b.len);
    cli_buf_free(&b);
}
