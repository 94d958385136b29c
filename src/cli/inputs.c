#include "cli/inputs.h"
#include "cli/pdf.h"
#include "cli/stream.h"
#include "ppocr.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

static int push_item(struct cli_item_list *list, const char *path, const char *name, const char *error)
{
    if (list->n == list->cap) {
        int cap = list->cap ? list->cap * 2 : 64;
        struct cli_item *grown = realloc(list->items, (size_t)cap * sizeof(*grown));
        if (!grown)
            return -1;
        list->items = grown;
        list->cap = cap;
    }
    struct cli_item *it = &list->items[list->n];
    it->path = dup_str(path);
    it->name = dup_str(name);
    it->error = error ? dup_str(error) : NULL;
    it->page = 0;
    if (!it->path || !it->name || (error && !it->error)) {
        free(it->path);
        free(it->name);
        free(it->error);
        return -1;
    }
    list->n++;
    return 0;
}

/* A file: a PDF (by its signature) becomes one item per page, anything else one image. Returns
 * the number of items added or -1. */
static int push_file(struct cli_item_list *list, const char *path, const char *name)
{
    if (!cli_pdf_is_pdf(path))
        return push_item(list, path, name, NULL) ? -1 : 1;
    char err[512];
    int pages;
    if (cli_pdf_page_count(path, &pages, err, sizeof(err)))
        return push_item(list, path, name, err) ? -1 : 1;
    size_t len = strlen(name) + 16;
    char *page_name = malloc(len);
    if (!page_name)
        return -1;
    for (int p = 1; p <= pages; p++) {
        snprintf(page_name, len, "%s-p%d", name, p);
        if (push_item(list, path, page_name, NULL)) {
            free(page_name);
            return -1;
        }
        list->items[list->n - 1].page = p;
    }
    free(page_name);
    return pages;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash && slash[1] ? slash + 1 : path;
}

/* dir + "/" + name, with no doubled slash when dir ends in some ("scans/" gives "scans/x.png");
 * "" + name is name. NULL when memory runs out. */
static char *join_path(const char *dir, const char *name)
{
    size_t dir_len = strlen(dir);
    while (dir_len > 1 && dir[dir_len - 1] == '/')
        dir_len--;
    int slash = dir_len > 0 && dir[dir_len - 1] != '/';
    size_t len = dir_len + (size_t)slash + strlen(name) + 1;
    char *path = malloc(len);
    if (path)
        snprintf(path, len, "%.*s%s%s", (int)dir_len, dir, slash ? "/" : "", name);
    return path;
}

/* What a file that is neither a folder nor a regular file is, for messages. */
static const char *special_kind(mode_t mode)
{
    return S_ISFIFO(mode)   ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "a special file";
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int is_document_name(const char *name)
{
    return ppocr_image_has_known_extension(name) || cli_pdf_is_pdf_name(name);
}

/* The visible entries of d, sorted by name. Returns the count, or -1 when memory runs out. */
static long read_names(DIR *d, char ***out)
{
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue; /* ".", "..", and hidden entries */
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **grown = realloc(names, cap * sizeof(*grown));
            if (!grown)
                goto oom;
            names = grown;
        }
        if (!(names[n] = dup_str(e->d_name)))
            goto oom;
        n++;
    }
    if (n)
        qsort(names, n, sizeof(*names), compare_names);
    *out = names;
    return (long)n;
oom:
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return -1;
}

/* An entry the walk passes over: an item of its own, reported in its place. */
static int push_skipped(struct cli_item_list *list, const char *path, const char *relpath, const char *reason)
{
    char msg[600];
    snprintf(msg, sizeof(msg), "skipped (%s)", reason);
    return push_item(list, path, relpath, msg) ? -1 : 1;
}

static int scan_dir(const char *dir, const char *rel, struct cli_item_list *list, int depth);

/* One entry `name` of the open folder d: an image or PDF is added, a folder walked; what cannot
 * be read is reported. Returns the number of items added or -1. */
static int scan_entry(DIR *d, const char *path, const char *relpath, const char *name, struct cli_item_list *list,
                      int depth)
{
    char msg[512];
    struct stat st, lst;
    /* looked at from the folder, so that a path too long to open is still told apart */
    if (fstatat(dirfd(d), name, &st, 0) != 0) {
        if (!is_document_name(name))
            return 0;
        /* an image name that cannot be looked at (a dangling link): reported, not skipped */
        snprintf(msg, sizeof(msg), "%s", errno == ENOENT ? "no such file (a dangling link?)" : strerror(errno));
        return push_item(list, path, relpath, msg) ? -1 : 1;
    }
    char too_long[64] = "";
    if (strlen(path) > CLI_PATH_MAX_BYTES)
        snprintf(too_long, sizeof(too_long), "path longer than %d bytes", CLI_PATH_MAX_BYTES);
    if (S_ISDIR(st.st_mode)) {
        /* not followed: a link may lead back up the tree, or to images read already */
        if (fstatat(dirfd(d), name, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode))
            return push_skipped(list, path, relpath, "a link to a folder: give the folder itself to read it");
        if (*too_long)
            return push_skipped(list, path, relpath, too_long);
        if (depth + 1 > CLI_WALK_MAX_DEPTH) {
            snprintf(msg, sizeof(msg), "more than %d folder levels deep", CLI_WALK_MAX_DEPTH);
            return push_skipped(list, path, relpath, msg);
        }
        return scan_dir(path, relpath, list, depth + 1);
    }
    if (!is_document_name(name))
        return 0;
    if (!S_ISREG(st.st_mode)) {
        snprintf(msg, sizeof(msg), "%s, not a regular file", special_kind(st.st_mode));
        return push_skipped(list, path, relpath, msg);
    }
    if (*too_long)
        return push_skipped(list, path, relpath, too_long);
    return push_file(list, path, relpath);
}

/* Appends the images under dir (recursively, sorted by name at each level). `rel` is the path
 * relative to the input directory, "" at the top. Returns the number of items added or -1. */
static int scan_dir(const char *dir, const char *rel, struct cli_item_list *list, int depth)
{
    DIR *d = opendir(dir);
    if (!d) {
        /* an unreadable folder is a failed input, not one skipped in silence */
        char msg[512];
        snprintf(msg, sizeof(msg), "cannot open directory: %s", strerror(errno));
        return push_item(list, dir, *rel ? rel : base_name(dir), msg) ? -1 : 1;
    }
    char **names = NULL;
    long n = read_names(d, &names);
    int added = n < 0 ? -1 : 0;
    for (long i = 0; i < n && added >= 0; i++) {
        char *path = join_path(dir, names[i]), *relpath = join_path(rel, names[i]);
        int sub = path && relpath ? scan_entry(d, path, relpath, names[i], list, depth) : -1;
        added = sub < 0 ? -1 : added + sub;
        free(path);
        free(relpath);
    }
    closedir(d);
    for (long i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return added;
}

static int expand_one(const char *input, struct cli_item_list *list, int from_list, const atomic_int *stop);

/* Reads an @list's bytes from fd, at most CLI_LIST_MAX_BYTES (as cli_read_stream: stoppable, so a
 * pipe whose writer never closes, or a FIFO nobody opens, holds the run only until SIGINT), and
 * refuses binary data. Returns 0 with *text (NUL-terminated, free it), 1 when stopped, -1 with a
 * reason in msg. */
static int read_list_text(int fd, const atomic_int *stop, char **text, size_t *len, char *msg, size_t msg_len)
{
    char *buf;
    size_t n;
    *text = NULL;
    *len = 0;
    int rc = cli_read_stream(fd, "list", CLI_LIST_MAX_BYTES, stop, &buf, &n, msg, msg_len);
    if (rc)
        return rc;
    const char *nul = memchr(buf, 0, n);
    if (nul) {
        snprintf(msg, msg_len, "not a list of paths: binary data (a NUL byte at offset %zu)", (size_t)(nul - buf));
        free(buf);
        return -1;
    }
    char *terminated = realloc(buf, n + 1);
    if (!terminated) {
        free(buf);
        snprintf(msg, msg_len, "out of memory reading the list");
        return -1;
    }
    terminated[n] = 0;
    *text = terminated;
    *len = n;
    return 0;
}

/* Opens an @list: stdin for "@-", else a regular file or a pipe (a FIFO, /dev/stdin, the
 * /dev/fd/N of a shell's <(...)); a device would be read for ever. Opened without waiting, so that
 * a FIFO with no writer yet is waited for by read_list_text, stoppably. Returns the fd or -1. */
static int open_list(const char *path, char *msg, size_t msg_len)
{
    if (strcmp(path, "-") == 0)
        return STDIN_FILENO;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(msg, msg_len, "cannot open list: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(msg, msg_len, "cannot read list: %s", strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        snprintf(msg, msg_len, "cannot read list: %s, not a regular file or a pipe",
                 S_ISDIR(st.st_mode) ? "a folder" : special_kind(st.st_mode));
        close(fd);
        return -1;
    }
    if (S_ISREG(st.st_mode) && st.st_size > CLI_LIST_MAX_BYTES) {
        snprintf(msg, msg_len, "list too large (%lld bytes, the limit is %d)", (long long)st.st_size,
                 CLI_LIST_MAX_BYTES);
        close(fd);
        return -1;
    }
    return fd;
}

static int expand_list_file(const char *spec, struct cli_item_list *list, const atomic_int *stop)
{
    char msg[512];
    int fd = open_list(spec + 1, msg, sizeof(msg));
    if (fd < 0)
        return push_item(list, spec, spec, msg);
    char *text;
    size_t len;
    int rc = read_list_text(fd, stop, &text, &len, msg, sizeof(msg));
    if (fd != STDIN_FILENO)
        close(fd);
    if (rc == 1)
        return 0; /* stopped: the caller sees *stop */
    if (rc < 0)
        return push_item(list, spec, spec, msg);
    /* every line checked before any is expanded: a list is used whole or refused */
    size_t line_no = 1;
    for (char *line = text; line < text + len; line_no++) {
        char *end = memchr(line, '\n', (size_t)(text + len - line));
        size_t line_len = end ? (size_t)(end - line) : (size_t)(text + len - line);
        if (line_len > CLI_PATH_MAX_BYTES + 1 ||
            (line_len == CLI_PATH_MAX_BYTES + 1 && line[CLI_PATH_MAX_BYTES] != '\r')) {
            snprintf(msg, sizeof(msg), "line %zu is longer than the longest path (%d bytes)", line_no,
                     CLI_PATH_MAX_BYTES);
            free(text);
            return push_item(list, spec, spec, msg);
        }
        line += line_len + 1;
    }
    rc = 0;
    for (char *line = text; rc == 0 && line < text + len;) {
        char *end = memchr(line, '\n', (size_t)(text + len - line));
        char *next = end ? end + 1 : text + len;
        if (end)
            *end = 0;
        size_t line_len = strlen(line);
        while (line_len > 0 && line[line_len - 1] == '\r')
            line[--line_len] = 0;
        if (line_len > 0)
            rc = expand_one(line, list, 1, stop);
        line = next;
    }
    free(text);
    return rc;
}

static int expand_one(const char *input, struct cli_item_list *list, int from_list, const atomic_int *stop)
{
    if (strcmp(input, "-") == 0)
        return push_item(list, "-", "stdin", NULL);
    if (input[0] == '@' && !from_list)
        return expand_list_file(input, list, stop);

    struct stat st;
    char msg[512];
    if (stat(input, &st) != 0) {
        snprintf(msg, sizeof(msg), "%s", errno == ENOENT ? "no such file or directory" : strerror(errno));
        return push_item(list, input, base_name(input), msg);
    }
    if (S_ISDIR(st.st_mode)) {
        int added = scan_dir(input, "", list, 0);
        if (added < 0)
            return -1;
        if (added == 0)
            return push_item(list, input, base_name(input), "directory holds no images");
        return 0;
    }
    if (!S_ISREG(st.st_mode)) {
        /* never opened: a FIFO would wait for a writer, a device would be read for ever */
        snprintf(msg, sizeof(msg), "not a regular file (%s; image bytes from a pipe go on stdin, as -)",
                 special_kind(st.st_mode));
        return push_item(list, input, base_name(input), msg);
    }
    return push_file(list, input, base_name(input)) < 0 ? -1 : 0;
}

int cli_expand_inputs(char *const *inputs, int n_inputs, const atomic_int *stop, struct cli_item_list *list)
{
    memset(list, 0, sizeof(*list));
    for (int i = 0; i < n_inputs && !*stop; i++) {
        if (expand_one(inputs[i], list, 0, stop)) {
            fprintf(stderr, "ppocr-vk: out of memory while listing inputs\n");
            return -1;
        }
    }
    return 0;
}

void cli_keep_shard(struct cli_item_list *list, int k, int n)
{
    long long total = list->n;
    int begin = (int)(total * (k - 1) / n), end = (int)(total * k / n);
    for (int i = 0; i < list->n; i++) {
        if (i >= begin && i < end)
            continue;
        free(list->items[i].path);
        free(list->items[i].name);
        free(list->items[i].error);
    }
    memmove(list->items, list->items + begin, (size_t)(end - begin) * sizeof(*list->items));
    list->n = end - begin;
}

void cli_free_items(struct cli_item_list *list)
{
    for (int i = 0; i < list->n; i++) {
        free(list->items[i].path);
        free(list->items[i].name);
        free(list->items[i].error);
    }
    free(list->items);
    memset(list, 0, sizeof(*list));
}
