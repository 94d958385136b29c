#include "cli/pdf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define PACKAGE_HINT "(Debian package poppler-utils)"
#define SCRATCH_LEN 1024 /* a temporary folder's path; its files' paths fit in PATH_MAX */

int cli_pdf_is_pdf(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    char head[5];
    ssize_t n;
    do
        n = read(fd, head, sizeof(head));
    while (n < 0 && errno == EINTR);
    close(fd);
    return n == (ssize_t)sizeof(head) && memcmp(head, "%PDF-", sizeof(head)) == 0;
}

int cli_pdf_is_pdf_name(const char *name)
{
    const char *dot = strrchr(name, '.');
    return dot && dot != name && strcasecmp(dot + 1, "pdf") == 0;
}

/* Whether `name` is an executable in a folder of $PATH, as posix_spawnp will look for it. Checked
 * before a document is listed, so that a missing poppler-utils is one clear line per document. */
static int on_path(const char *name)
{
    const char *path = getenv("PATH");
    if (!path)
        path = "/bin:/usr/bin"; /* glibc's default for the exec*p family */
    for (const char *p = path;;) {
        const char *colon = strchr(p, ':');
        size_t len = colon ? (size_t)(colon - p) : strlen(p);
        char full[PATH_MAX];
        /* an empty entry is the current folder */
        if (snprintf(full, sizeof(full), "%.*s%s%s", (int)len, len ? p : ".", "/", name) < (int)sizeof(full)) {
            struct stat st;
            if (stat(full, &st) == 0 && S_ISREG(st.st_mode) && access(full, X_OK) == 0)
                return 1;
        }
        if (!colon)
            return 0;
        p = colon + 1;
    }
}

static int need_tools(char *err, size_t err_len)
{
    static const char *const tools[] = {"pdftoppm", "pdfinfo"};
    for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
        if (!on_path(tools[i])) {
            snprintf(err, err_len, "reading PDF needs %s " PACKAGE_HINT, tools[i]);
            return -1;
        }
    }
    return 0;
}

/* The scratch folders in use and the tool each runs, for a handler that ends the process
 * (cli_pdf_abandon): a slot is free, live, or claimed by the handler, which alone takes a live one
 * from its thread; the folder's path is copied in, so the handler reads no freed memory. */
enum { SLOT_FREE, SLOT_FILLING, SLOT_LIVE, SLOT_CLAIMED };
enum { SCRATCH_SLOTS = 72 }; /* the listing thread and one page per engine (-j at most 64) */
static struct {
    atomic_int state;
    atomic_int child; /* the tool's pid (its own process group), 0 when none runs */
    char dir[SCRATCH_LEN];
} scratch_slots[SCRATCH_SLOTS];

/* The files a tool run leaves in its folder, all of them: the handler cannot list a folder. */
static const char *const scratch_files[] = {"out", "err", "page.ppm"};

static int scratch_slot(const char *dir)
{
    for (int i = 0; i < SCRATCH_SLOTS; i++)
        if (atomic_load(&scratch_slots[i].state) == SLOT_LIVE && !strcmp(scratch_slots[i].dir, dir))
            return i;
    return -1;
}

/* A private folder for one tool run's files, removed with everything in it by scratch_remove. */
static int scratch_make(char *dir, size_t len, char *err, size_t err_len)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = "/tmp";
    if (snprintf(dir, len, "%s/ppocr-vk-pdf.XXXXXX", tmp) >= (int)len || !mkdtemp(dir)) {
        snprintf(err, err_len, "cannot create a temporary folder in %s: %s", tmp, strerror(errno));
        return -1;
    }
    for (int i = 0; i < SCRATCH_SLOTS; i++) { /* none free (cannot happen): not listed, still removed */
        int free_state = SLOT_FREE;
        if (atomic_compare_exchange_strong(&scratch_slots[i].state, &free_state, SLOT_FILLING)) {
            snprintf(scratch_slots[i].dir, sizeof(scratch_slots[i].dir), "%s", dir);
            atomic_store(&scratch_slots[i].child, 0);
            atomic_store(&scratch_slots[i].state, SLOT_LIVE);
            break;
        }
    }
    return 0;
}

void cli_pdf_abandon(void)
{
    for (int i = 0; i < SCRATCH_SLOTS; i++) {
        int live = SLOT_LIVE;
        if (!atomic_compare_exchange_strong(&scratch_slots[i].state, &live, SLOT_CLAIMED))
            continue;
        pid_t child = atomic_load(&scratch_slots[i].child);
        if (child > 0) { /* gone before its files are, so that it makes no new one */
            kill(-child, SIGKILL);
            waitpid(child, NULL, 0);
        }
        char path[PATH_MAX];
        for (size_t k = 0; k < sizeof(scratch_files) / sizeof(scratch_files[0]); k++) {
            /* snprintf is not async-signal-safe: the path is put together by hand */
            size_t n = strlen(scratch_slots[i].dir), m = strlen(scratch_files[k]);
            if (n + 1 + m >= sizeof(path))
                continue;
            memcpy(path, scratch_slots[i].dir, n);
            path[n] = '/';
            memcpy(path + n + 1, scratch_files[k], m + 1);
            unlink(path);
        }
        rmdir(scratch_slots[i].dir);
    }
}

static void scratch_remove(const char *dir)
{
    int slot = scratch_slot(dir);
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char path[PATH_MAX];
            if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
                unlink(path);
        }
        closedir(d);
    }
    rmdir(dir);
    if (slot >= 0) {
        int live = SLOT_LIVE;
        atomic_compare_exchange_strong(&scratch_slots[slot].state, &live, SLOT_FREE); /* claimed: left so */
    }
}

/* Runs argv (argv[0] found on $PATH) with no shell, stdin from /dev/null, stdout into DIR/out and
 * stderr into DIR/err. The child gets its own process group: a Ctrl-C meant for ppocr-vk lets the
 * page in progress finish, as an image's does. Returns the exit status, 128 + the signal that
 * ended it, or -1 with errno (ENOENT: not installed). */
static int run_tool(char *const argv[], const char *dir)
{
    char out[PATH_MAX], errf[PATH_MAX];
    snprintf(out, sizeof(out), "%s/out", dir);
    snprintf(errf, sizeof(errf), "%s/err", dir);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    if (posix_spawn_file_actions_init(&fa))
        return -1;
    if (posix_spawnattr_init(&at)) {
        posix_spawn_file_actions_destroy(&fa);
        return -1;
    }
    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE); /* ignored here (main.c), which the child would inherit */
    int rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    rc = rc ? rc : posix_spawn_file_actions_addopen(&fa, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    rc = rc ? rc : posix_spawn_file_actions_addopen(&fa, 2, errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    rc = rc ? rc : posix_spawnattr_setpgroup(&at, 0);
    rc = rc ? rc : posix_spawnattr_setsigdefault(&at, &defaults);
    rc = rc ? rc : posix_spawnattr_setsigmask(&at, &none);
    rc =
        rc ? rc : posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    pid_t pid = 0;
    int slot = scratch_slot(dir);
    rc = rc ? rc : posix_spawnp(&pid, argv[0], &fa, &at, argv, environ);
    if (!rc && slot >= 0)
        atomic_store(&scratch_slots[slot].child, pid);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc) {
        errno = rc;
        return -1;
    }
    int status, waited;
    while ((waited = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ; /* a stop signal interrupts the wait, not the child */
    if (slot >= 0)
        atomic_store(&scratch_slots[slot].child, 0);
    if (waited < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Reads DIR/NAME into buf (NUL-terminated, cut at its size). Returns the length or -1. */
static long read_small(const char *dir, const char *name, char *buf, size_t size)
{
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = 0;
    return (long)n;
}

/* Poppler's complaint as one printable line: its first line that says "Error" (later ones are
 * consequences, such as "Wrong page range given" after a damaged page tree), else its first line. */
static void poppler_reason(const char *dir, char *line, size_t len)
{
    char buf[8192];
    snprintf(line, len, "no reason given");
    if (read_small(dir, "err", buf, sizeof(buf)) <= 0)
        return;
    const char *pick = NULL;
    for (char *s = buf; s && *s;) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = 0;
        if (*s && !pick)
            pick = s;
        if (strstr(s, "Error")) {
            pick = s;
            break;
        }
        s = nl ? nl + 1 : NULL;
    }
    if (!pick)
        return;
    if (strstr(pick, "Incorrect password")) {
        snprintf(line, len, "it is encrypted and needs a password");
        return;
    }
    snprintf(line, len, "%.200s", pick);
    for (char *c = line; *c; c++)
        if ((unsigned char)*c < 0x20 || *c == 0x7f)
            *c = '?';
}

/* The document as a tool argument: a relative name that begins with '-' is not read as an option. */
static int file_argument(const char *path, char *arg, size_t len)
{
    return snprintf(arg, len, "%s%s", path[0] == '-' ? "./" : "", path) < (int)len ? 0 : -1;
}

static const char *tool_failure(int status, const char *tool, char *buf, size_t len)
{
    if (status < 0 && errno == ENOENT)
        snprintf(buf, len, "reading PDF needs %s " PACKAGE_HINT, tool);
    else if (status < 0)
        snprintf(buf, len, "cannot run %s: %s", tool, strerror(errno));
    else
        return NULL;
    return buf;
}

int cli_pdf_page_count(const char *path, int *pages, char *err, size_t err_len)
{
    char dir[SCRATCH_LEN], arg[PATH_MAX], reason[256], buf[65536];
    *pages = 0;
    if (need_tools(err, err_len))
        return -1;
    if (file_argument(path, arg, sizeof(arg))) {
        snprintf(err, err_len, "file name too long");
        return -1;
    }
    if (scratch_make(dir, sizeof(dir), err, err_len))
        return -1;
    char *argv[] = {"pdfinfo", arg, NULL};
    int status = run_tool(argv, dir), rc = -1;
    if (tool_failure(status, "pdfinfo", err, err_len)) {
        /* err is set */
    } else if (status) {
        poppler_reason(dir, reason, sizeof(reason));
        snprintf(err, err_len, "cannot read the PDF: %s", reason);
    } else if (read_small(dir, "out", buf, sizeof(buf)) < 0) {
        snprintf(err, err_len, "cannot read pdfinfo's answer: %s", strerror(errno));
    } else {
        const char *line = strstr(buf, "\nPages:");
        long n = line ? strtol(line + 7, NULL, 10) : 0;
        if (n < 1 || n > INT_MAX / 2)
            snprintf(err, err_len, "the PDF has no pages that can be read");
        else {
            *pages = (int)n;
            rc = 0;
        }
    }
    scratch_remove(dir);
    return rc;
}

/* The resolution that keeps the page within the image loader's limits (pdftoppm rounds each side
 * up to whole pixels). The page size is in points. */
static double fitting_dpi(double w_pt, double h_pt, double dpi)
{
    if (!(w_pt > 0 && h_pt > 0))
        return dpi;
    for (int tries = 0; tries < 1000; tries++) {
        double w = ceil(w_pt * dpi / 72), h = ceil(h_pt * dpi / 72);
        if (w <= PPOCR_IMAGE_MAX_SIDE && h <= PPOCR_IMAGE_MAX_SIDE && w * h <= (double)PPOCR_IMAGE_MAX_PIXELS)
            break;
        dpi *= 0.99;
    }
    return dpi;
}

int cli_pdf_load_page(const char *path, int page, double dpi, const char *label, struct ppocr_image *img, char *err,
                      size_t err_len)
{
    char dir[SCRATCH_LEN], arg[PATH_MAX], root[PATH_MAX], reason[256], buf[65536];
    char page_s[16], dpi_s[32], problem[512];
    memset(img, 0, sizeof(*img));
    if (file_argument(path, arg, sizeof(arg))) {
        snprintf(err, err_len, "%s: file name too long", label);
        return -1;
    }
    if (scratch_make(dir, sizeof(dir), problem, sizeof(problem))) {
        snprintf(err, err_len, "%s: %s", label, problem);
        return -1;
    }
    snprintf(page_s, sizeof(page_s), "%d", page);
    snprintf(root, sizeof(root), "%s/page", dir);
    int rc = -1;

    /* the page's own size first, for a resolution that fits the loader's limits */
    char *info[] = {"pdfinfo", "-f", page_s, "-l", page_s, arg, NULL};
    int status = run_tool(info, dir);
    if (tool_failure(status, "pdfinfo", problem, sizeof(problem))) {
        snprintf(err, err_len, "%s: %s", label, problem);
        goto done;
    }
    if (status) {
        poppler_reason(dir, reason, sizeof(reason));
        snprintf(err, err_len, "%s: cannot read the PDF: %s", label, reason);
        goto done;
    }
    double w_pt = 0, h_pt = 0;
    if (read_small(dir, "out", buf, sizeof(buf)) > 0) {
        char key[64];
        snprintf(key, sizeof(key), "\nPage %*d size:", 4, page);
        const char *line = strstr(buf, key);
        if (!line || sscanf(line + strlen(key), "%lf x %lf", &w_pt, &h_pt) != 2)
            w_pt = h_pt = 0;
    }
    /* A hair under the resolution asked for: pdftoppm resamples, and so blurs, an image whose
     * edges fall exactly on the pixel grid, as a scan's do at its own resolution; a millionth
     * less keeps them inside and gives back the scan's own pixels. */
    snprintf(dpi_s, sizeof(dpi_s), "%.6f", fitting_dpi(w_pt, h_pt, dpi) * (1 - 1e-6));

    /* -singlefile: the output is ROOT.ppm, not ROOT-N.ppm with N padded to the page count's width;
     * PPM: no compression to undo, and the loader reads it as it is */
    char *render[] = {"pdftoppm", "-cropbox", "-r", dpi_s, "-f", page_s, "-l", page_s, "-singlefile", arg, root, NULL};
    status = run_tool(render, dir);
    if (tool_failure(status, "pdftoppm", problem, sizeof(problem))) {
        snprintf(err, err_len, "%s: %s", label, problem);
        goto done;
    }
    char ppm[PATH_MAX + 8];
    snprintf(ppm, sizeof(ppm), "%s.ppm", root);
    int fd = status ? -1 : open(ppm, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        poppler_reason(dir, reason, sizeof(reason));
        snprintf(err, err_len, "%s: cannot rasterise the page: %s", label, reason);
        goto done;
    }
    rc = ppocr_image_load_fd(fd, label, PPOCR_ALPHA_IGNORE, img, err, err_len) == PPOCR_OK ? 0 : -1;
    close(fd);
done:
    scratch_remove(dir);
    return rc;
}
