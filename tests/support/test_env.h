/* Shared by the tests: a per-run random seed (printed, overridable with PPOCR_TEST_SEED),
 * random data, error measures, paths to test data and a private temporary folder. */
#ifndef PPOCR_TEST_ENV_H
#define PPOCR_TEST_ENV_H

#include <stddef.h>
#include <stdint.h>

/* The seed of this run: PPOCR_TEST_SEED if set, else time-based; printed once to stderr. */
uint64_t test_seed(void);
/* Deterministic generator seeded from test_seed(). */
uint32_t test_rand_u32(void);
float test_rand_uniform(float lo, float hi);
void test_fill_uniform(float *x, size_t n, float lo, float hi);
/* Fills with quiet NaN so that an element a kernel never writes fails the comparison. */
void test_fill_nan(float *x, size_t n);

/* ||a - b|| / max(||b||, tiny); NaN anywhere gives +inf. */
double test_rel_l2(const float *a, const float *b, size_t n);
double test_max_abs(const float *a, const float *b, size_t n);

/* Directory of tests/ in the source tree, and the build tree. */
const char *test_data_dir(void);
const char *test_binary_dir(void);
/* The models folder (PPOCR_MODELS or <source>/models). */
const char *test_models_dir(void);

/* A private folder under /tmp for this program's files (tag names it), made by test_tmpdir_make
 * and removed with all it holds by test_tmpdir_remove; both return 0 or -1 (cmocka group setup
 * and teardown). test_tmp_path gives "<folder>/name" in a buffer the next call reuses. */
int test_tmpdir_make(const char *tag);
int test_tmpdir_remove(void);
const char *test_tmpdir(void);
const char *test_tmp_path(const char *name);

#endif
