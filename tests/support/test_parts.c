#include "support/test_parts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int test_run_parts(const char *group, const struct CMUnitTest *tests, const unsigned char *parts, size_t count,
                   int argc, char **argv, CMFixtureFunction setup, CMFixtureFunction teardown)
{
    unsigned own = 0;
    for (size_t i = 0; i < count; i++)
        own = parts[i] > own ? parts[i] : own;
    if (argc < 2)
        return _cmocka_run_group_tests(group, tests, count, setup, teardown);
    unsigned part = 0, of = 0;
    char tail;
    if (argc != 3 || strcmp(argv[1], "--part") || sscanf(argv[2], "%u/%u%c", &part, &of, &tail) != 2 || part < 1 ||
        part > of) {
        fprintf(stderr, "usage: %s [--part K/N]\n", argv[0]);
        return 2;
    }
    if (of != own) {
        fprintf(stderr, "%s: --part %u/%u, but this program has %u parts (update tests/CMakeLists.txt)\n", argv[0],
                part, of, own);
        return 2;
    }
    struct CMUnitTest *chosen = malloc(count * sizeof *chosen);
    if (!chosen)
        return 2;
    size_t n = 0;
    for (size_t i = 0; i < count; i++)
        if (parts[i] == part)
            chosen[n++] = tests[i];
    char name[128];
    snprintf(name, sizeof name, "%s part %u/%u", group, part, of);
    int failed = n ? _cmocka_run_group_tests(name, chosen, n, setup, teardown) : 1;
    if (!n)
        fprintf(stderr, "%s: part %u has no tests\n", argv[0], part);
    free(chosen);
    return failed;
}
