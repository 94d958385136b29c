#include "cli/inputs.h"
#include "cli/pdf.h"
#include "ppocr.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Appends the images under dir (recursively, sorted by name at each level). `rel` is the path
 * relative to the input directory, "" at the top. Returns the number of images added or -1. */
static int scan_dir(const char *dir, const char *rel, struct cli_item_list *list, int depth)
{
    if (depth > 64)
        return 0; /* a deeper tree is almost surely a link cycle */
    DIR *d = opendir(dir);
    if (!d) {
        /* an unreadable folder is a failed input, not one skipped in silence */
        char msg[512];
        snprintf(msg, sizeof(msg), "cannot open directory: %s", strerror(errno));
        return push_item(list, dir, *rel ? rel : base_name(dir), msg) ? -1 : 1;
    }
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
                break;
            names = grown;
        }
        if (!(names[n] = dup_str(e->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof(*names), compare_names);

    int added = 0;
    for (size_t i = 0; i < n && added >= 0; i++) {
        size_t plen = strlen(dir) + strlen(names[i]) + 2, rlen = strlen(rel) + strlen(names[i]) + 2;
        char *path = malloc(plen), *relpath = malloc(rlen);
        if (!path || !relpath) {
            free(path);
            free(relpath);
            added = -1;
            break;
        }
        snprintf(path, plen, "%s/%s", dir, names[i]);
        snprintf(relpath, rlen, "%s%s%s", rel, *rel ? "/" : "", names[i]);
        struct stat st;
        if (stat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                struct stat lst;
                int is_link = lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode);
                if (!is_link) {
                    int sub = scan_dir(path, relpath, list, depth + 1);
                    added = sub < 0 ? -1 : added + sub;
                }
            } else if (S_ISREG(st.st_mode) &&
                       (ppocr_image_has_known_extension(names[i]) || cli_pdf_is_pdf_name(names[i]))) {
                int sub = push_file(list, path, relpath);
                added = sub < 0 ? -1 : added + sub;
            }
        } else if (ppocr_image_has_known_extension(names[i]) || cli_pdf_is_pdf_name(names[i])) {
            /* an image name that cannot be looked at (a dangling link): reported, not skipped */
            char msg[512];
            snprintf(msg, sizeof(msg), "%s", errno == ENOENT ? "no such file (a dangling link?)" : strerror(errno));
            added = push_item(list, path, relpath, msg) ? -1 : added + 1;
        }
        free(path);
        free(relpath);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return added;
}

static int expand_one(const char *input, struct cli_item_list *list, int from_list, const atomic_int *stop);

static int expand_list_file(const char *spec, struct cli_item_list *list, const atomic_int *stop)
{
    const char *path = spec + 1;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f) {
        char msg[512];
        snprintf(msg, sizeof(msg), "cannot open list: %s", strerror(errno));
        return push_item(list, spec, spec, msg);
    }
    char *line = NULL;
    size_t cap = 0;
    int rc = 0;
    while (rc == 0 && !*stop) {
        ssize_t len = getline(&line, &cap, f);
        int e = errno;
        /* the signal handlers leave reads interruptible (no SA_RESTART): a stop ends getline with
         * an error, or with the part of a line read so far, which is no path */
        if (*stop)
            break;
        if (len < 0) {
            /* getline ends on a read error as on the end of the list: an unread rest is a failure */
            if (ferror(f)) {
                char msg[512];
                snprintf(msg, sizeof(msg), "cannot read list: %s", strerror(e));
                rc = push_item(list, spec, spec, msg);
            }
            break;
        }
        while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
            line[--len] = 0;
        if (len > 0)
            rc = expand_one(line, list, 1, stop);
    }
    free(line);
    if (f != stdin)
        fclose(f);
    return rc;
}

static int expand_one(const char *input, struct cli_item_list *list, int from_list, const atomic_int *stop)
{
    if (strcmp(input, "-") == 0)
        return push_item(list, "-", "stdin", NULL);
    if (input[0] == '@' && !from_list)
        return expand_list_file(input, list, stop);

    struct stat st;
    if (stat(input, &st) != 0) {
        char msg[512];
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
    if (!S_ISREG(st.st_mode)) /* a pipe (<(...)) is not sniffed: its bytes would be gone */
        return push_item(list, input, base_name(input), NULL);
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
