/* The HTTP server in a build without libmicrohttpd (CMakeLists.txt, PPOCR_HTTP). */
#include "cli/exit_status.h"
#include "cli/http.h"
#include "cli/messages.h"

int cli_http_serve(const struct cli_args *args)
{
    (void)args;
    cli_error("--http: this build has no HTTP server (libmicrohttpd-dev was not found when it was built)");
    return EXIT_USAGE;
}
