#include "cli/output_names.h"
#include "cli/write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_prepare_output_dir(const char *option, const char *dir, char *err, size_t err_len)
{
    struct stat st;
    if (cli_make_dirs(dir) != 0) {
        snprintf(err, err_len, "%s %s: cannot create the folder: %s", option, dir, strerror(errno));
        return -1;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, err_len, "%s %s: not a folder", option, dir);
        return -1;
    }
    /* a read-only file system or a folder of another user; a full disk is still one error per
     * image, as space may come back during the run */
    if (access(dir, W_OK | X_OK) != 0) {
        snprintf(err, err_len, "%s %s: cannot write into the folder: %s", option, dir, strerror(errno));
        return -1;
    }
    return 0;
}

static const struct cli_item *sort_items;

static int by_name_then_order(const void *a, const void *b)
{
    int i = *(const int *)a, j = *(const int *)b;
    int c = strcmp(sort_items[i].name, sort_items[j].name);
    return c ? c : (i > j) - (i < j);
}

int cli_refuse_shared_names(struct cli_item_list *list)
{
    int *order = malloc(((size_t)list->n + 1) * sizeof(*order)), n = 0;
    if (!order)
        return -1;
    for (int i = 0; i < list->n; i++)
        if (!list->items[i].error) /* a failed input writes nothing */
            order[n++] = i;
    sort_items = list->items;
    qsort(order, (size_t)n, sizeof(*order), by_name_then_order);
    int rc = 0;
    for (int k = 0; k < n && rc == 0;) {
        /* a run of equal names: its first is the earliest input, which keeps the name */
        const struct cli_item *first = &list->items[order[k]];
        int end = k + 1;
        for (; end < n && rc == 0 && strcmp(list->items[order[end]].name, first->name) == 0; end++) {
            struct cli_item *later = &list->items[order[end]];
            char msg[1024];
            snprintf(msg, sizeof(msg),
                     "same output name '%s' as %s, given before: skipped, so as not to overwrite its result",
                     later->name, first->path);
            if (!(later->error = strdup(msg)))
                rc = -1;
        }
        k = end;
    }
    free(order);
    return rc;
}
