/* SIGINT and SIGTERM: the first asks the run to stop after the images in progress (a flag the
 * loops read); a second ends the process at once, by that signal, after removing the temporary
 * files of -o and --draw in flight (cli/write.h) and the PDF pages being rendered (cli/pdf.h). */
#ifndef PPOCR_CLI_SIGNALS_H
#define PPOCR_CLI_SIGNALS_H

#include <stdatomic.h>

/* Installs the handlers; SIGPIPE is ignored, so that a closed stdout is a write error reported. */
void cli_signals_install(void);
/* Set by the first stop signal. */
extern atomic_int cli_stop_requested;

#endif
