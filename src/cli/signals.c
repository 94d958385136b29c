#include "cli/signals.h"
#include "cli/pdf.h"
#include "cli/write.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

/* Read by the worker threads too, so an atomic rather than a volatile sig_atomic_t: a handler may
 * store to a lock-free one. */
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the stop flag is set from a signal handler");
atomic_int cli_stop_requested;
static int stderr_is_terminal;

static void say(const char *s)
{
    (void)!write(STDERR_FILENO, s, strlen(s));
}

static void on_stop_signal(int sig)
{
    if (atomic_exchange(&cli_stop_requested, 1) == 0) {
        /* on lavapipe one large page takes minutes: say why nothing seems to happen */
        if (stderr_is_terminal)
            say("\nppocr-vk: stopping after the images in progress; a second Ctrl-C stops at once\n");
        return;
    }
    say("ppocr-vk: stopped at once by a second signal; the images in progress are not written\n");
    cli_write_abandon();
    cli_pdf_abandon();
    /* ended by the signal itself, as a shell expects of Ctrl-C (status 128 + sig) */
    struct sigaction dfl;
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigset_t unblock;
    sigemptyset(&unblock);
    sigaddset(&unblock, sig);
    sigprocmask(SIG_UNBLOCK, &unblock, NULL);
    raise(sig);
    _exit(128 + sig);
}

void cli_signals_install(void)
{
    stderr_is_terminal = isatty(STDERR_FILENO);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    /* the other stop signal waits until this handler is done: two at once are still two */
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    /* no SA_RESTART: a blocking call returns EINTR, so that the loop around it sees the stop at
     * once (stream.c's reads also poll in slices, for a signal taken by another thread); every
     * write retries EINTR itself (cli_write_all) */
    sa.sa_flags = 0;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}
