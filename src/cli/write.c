#include "cli/write.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cli_write_all(int fd, const char *data, size_t len)
{
    while (len) {
        ssize_t n = write(fd, data, len);
        if (n < 0 && errno == EINTR)
            continue; /* the handlers install no SA_RESTART (signals.c): a stop signal lands here */
        if (n < 0)
            return -1;
        data += n;
        len -= (size_t)n;
    }
    return 0;
}

int cli_make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/", dir) >= (int)sizeof(path)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = path + 1; *p; p++) {
        if (*p != '/' || p[-1] == '/')
            continue;
        *p = 0;
        struct stat st;
        int rc = mkdir(path, 0777), e = errno;
        /* an existing name must be a folder (stat before the '/' is put back) */
        int not_folder = rc != 0 && e == EEXIST && stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
        *p = '/';
        if (rc != 0 && (e != EEXIST || not_folder)) {
            errno = not_folder ? ENOTDIR : e;
            return -1;
        }
    }
    return 0;
}

/* The temporary files being written, for a handler that ends the process: each slot is free,
 * being filled, live (its path may exist), or claimed by the handler, which alone moves a slot
 * out of live without its writer. Paths are copied in, so the handler reads no freed memory. */
enum { SLOT_FREE, SLOT_FILLING, SLOT_LIVE, SLOT_CLAIMED };
enum { TEMP_SLOTS = 128 }; /* a -o writer and one --draw per engine (-j at most 64) */
static struct {
    atomic_int state;
    char path[PATH_MAX];
} temp_slots[TEMP_SLOTS];
static atomic_int opening;    /* writers between taking a slot and their open() returning */
static atomic_int abandoning; /* set once by cli_write_abandon: no new temporary file */
static atomic_ulong temp_sequence;

static void release_slot(int slot)
{
    int live = SLOT_LIVE;
    atomic_compare_exchange_strong(&temp_slots[slot].state, &live, SLOT_FREE); /* claimed: left so */
}

/* Creates the temporary file `path`, listed first. Returns its fd (slot in *slot), or -1. */
static int open_listed(const char *path, int *slot)
{
    atomic_fetch_add(&opening, 1);
    int fd = -1, s = -1;
    if (atomic_load(&abandoning)) {
        errno = EINTR;
        goto done;
    }
    if (strlen(path) >= sizeof(temp_slots[0].path)) { /* listed cut short, a handler would remove another name */
        errno = ENAMETOOLONG;
        goto done;
    }
    for (int i = 0; i < TEMP_SLOTS && s < 0; i++) {
        int free_state = SLOT_FREE;
        if (atomic_compare_exchange_strong(&temp_slots[i].state, &free_state, SLOT_FILLING))
            s = i;
    }
    if (s < 0) {
        errno = EMFILE;
        goto done;
    }
    snprintf(temp_slots[s].path, sizeof(temp_slots[s].path), "%s", path);
    atomic_store(&temp_slots[s].state, SLOT_LIVE);
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0) {
        int e = errno;
        release_slot(s);
        errno = e;
        s = -1;
    }
done:
    atomic_fetch_sub(&opening, 1);
    *slot = s;
    return fd;
}

void cli_write_abandon(void)
{
    atomic_store(&abandoning, 1);
    /* a writer inside open_listed has listed its path or will create nothing: wait for those
     * that run on, at most a second, as this handler may have interrupted one of them */
    for (int waited = 0; atomic_load(&opening) > 0 && waited < 1000; waited++)
        nanosleep(&(struct timespec){.tv_nsec = 1000 * 1000}, NULL);
    for (int i = 0; i < TEMP_SLOTS; i++) {
        int live = SLOT_LIVE;
        if (atomic_compare_exchange_strong(&temp_slots[i].state, &live, SLOT_CLAIMED))
            unlink(temp_slots[i].path);
    }
}

/* "DIR/" without the slashes DIR ends with (except a root "/"), so that names read "out/x". */
static size_t dir_length(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    return n;
}

char *cli_output_path(const char *dir, const char *name, const char *ext)
{
    size_t dlen = dir_length(dir), n = dlen + strlen(name) + strlen(ext) + 3;
    char *path = malloc(n);
    if (path)
        snprintf(path, n, "%.*s%s%s.%s", (int)dlen, dir, dlen && dir[dlen - 1] == '/' ? "" : "/", name, ext);
    return path;
}

int cli_write_file_atomic(const char *dir, const char *name, const char *ext, const char *data, size_t len, char *err,
                          size_t err_len)
{
    char *final_path = cli_output_path(dir, name, ext);
    size_t n = final_path ? strlen(final_path) + 1 : 0;
    char *tmp_path = malloc(n + 64);
    int rc = -1, slot = -1, fd = -1;
    if (!final_path || !tmp_path) {
        snprintf(err, err_len, "out of memory");
        goto done;
    }
    /* in the final file's folder (a rename never crosses file systems), and short whatever the
     * name's length: NAME_MAX bounds the final name alone */
    const char *slash = strrchr(final_path, '/');
    int folder = (int)(slash - final_path);
    snprintf(tmp_path, n + 64, "%.*s/" CLI_WRITE_TEMP_PREFIX "%ld-%lu.tmp", folder, final_path, (long)getpid(),
             (unsigned long)atomic_fetch_add(&temp_sequence, 1));
    char *parent = strndup(final_path, (size_t)folder);
    if (!parent || cli_make_dirs(parent)) {
        snprintf(err, err_len, "cannot create the folder for %s: %s", final_path,
                 parent ? strerror(errno) : "out of memory");
        free(parent);
        goto done;
    }
    free(parent);
    fd = open_listed(tmp_path, &slot);
    if (fd < 0) {
        snprintf(err, err_len, "cannot write %s: %s", final_path,
                 atomic_load(&abandoning) ? "the run is stopping" : strerror(errno));
        goto done;
    }
    if (cli_write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", final_path, strerror(errno));
        close(fd);
        unlink(tmp_path);
        goto done;
    }
    if (close(fd) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", final_path, strerror(errno));
        unlink(tmp_path);
        goto done;
    }
    if (rename(tmp_path, final_path) != 0) {
        snprintf(err, err_len, "cannot write %s: %s", final_path, strerror(errno));
        unlink(tmp_path);
        goto done;
    }
    rc = 0;
done:
    if (slot >= 0)
        release_slot(slot);
    free(final_path);
    free(tmp_path);
    return rc;
}
