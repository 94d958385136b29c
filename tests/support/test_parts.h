/* One cmocka program run as several ctest entries, so that a long program does not hold one core
 * of a 2-core machine while the other is idle (tests/CMakeLists.txt, ppocr_test_parts). The
 * program gives each of its tests a part number, 1..N; `PROGRAM --part K/N` runs the tests of part
 * K, and fails when N is not the program's own count of parts (so that a part added in one place
 * and not the other cannot silently go unrun). Without arguments every test runs. */
#ifndef PPOCR_TEST_PARTS_H
#define PPOCR_TEST_PARTS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* parts[i]: the part of tests[i] (1..N, every part used). */
int test_run_parts(const char *group, const struct CMUnitTest *tests, const unsigned char *parts, size_t count,
                   int argc, char **argv, CMFixtureFunction setup, CMFixtureFunction teardown);

#define TEST_RUN_PARTS(group, tests, parts, argc, argv, setup, teardown)                                               \
    test_run_parts(group, tests, parts, sizeof(tests) / sizeof(tests[0]), argc, argv, setup, teardown)

#endif
