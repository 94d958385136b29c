/* The command's exit statuses (README, "Exit status"). */
#ifndef PPOCR_CLI_EXIT_STATUS_H
#define PPOCR_CLI_EXIT_STATUS_H

enum cli_exit_status {
    EXIT_ALL_OK = 0,
    EXIT_SOME_FAILED = 1, /* some inputs failed; the rest were processed */
    EXIT_USAGE = 2,       /* a usage error, or an output folder that cannot be made */
    EXIT_NO_DEVICE_OR_MODELS = 3,
};

#endif
