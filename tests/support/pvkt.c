#include "support/pvkt.h"

#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model/model.h"
#include "support/test_env.h"

void pvkt_read(const char *name, struct pvkt_tensor *t)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/data/parity/%s", test_data_dir(), name);
    FILE *f = fopen(path, "rb");
    if (!f) {
        print_error("%s: %s (regenerate with tools/ref/make-parity-fixtures.sh)\n", path, strerror(errno));
        fail();
    }
    char magic[4];
    uint32_t head[2];
    int ok = fread(magic, 1, 4, f) == 4 && memcmp(magic, "PVKT", 4) == 0 && fread(head, 4, 2, f) == 2 && head[1] >= 1 &&
             head[1] <= PVK_MAX_DIMS && (head[0] == PVK_DTYPE_F32 || head[0] == PVK_DTYPE_I32);
    memset(t, 0, sizeof *t);
    if (ok) {
        t->dtype = head[0];
        t->shape.ndim = (int32_t)head[1];
        ok = fread(t->shape.d, 8, (size_t)t->shape.ndim, f) == (size_t)t->shape.ndim;
    }
    size_t n = ok ? (size_t)pvk_shape_numel(&t->shape) : 0;
    if (ok && (t->data = malloc(n * 4 + 1)) != NULL)
        ok = fread(t->data, 4, n, f) == n && fgetc(f) == EOF;
    fclose(f);
    if (!ok || !t->data) {
        free(t->data);
        print_error("%s: not a valid PVKT tensor file\n", path);
        fail();
    }
}
