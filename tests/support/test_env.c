#include "support/test_env.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t seed_value;
static int seed_ready;
static uint64_t rng_state;

uint64_t test_seed(void)
{
    if (!seed_ready) {
        const char *env = getenv("PPOCR_TEST_SEED");
        if (env && *env) {
            seed_value = strtoull(env, NULL, 0);
        } else {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            seed_value = (uint64_t)ts.tv_sec * 1000003u ^ (uint64_t)ts.tv_nsec;
        }
        rng_state = seed_value ? seed_value : 0x9e3779b97f4a7c15ull;
        seed_ready = 1;
        fprintf(stderr, "test seed: PPOCR_TEST_SEED=%llu\n", (unsigned long long)seed_value);
    }
    return seed_value;
}

uint32_t test_rand_u32(void)
{
    test_seed();
    /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

float test_rand_uniform(float lo, float hi)
{
    return lo + (hi - lo) * (float)(test_rand_u32() >> 8) * (1.0f / 16777216.0f);
}

void test_fill_uniform(float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = test_rand_uniform(lo, hi);
}

void test_fill_nan(float *x, size_t n)
{
    for (size_t i = 0; i < n; i++)
        x[i] = NAN;
}

double test_rel_l2(const float *a, const float *b, size_t n)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i]) || isinf(a[i]))
            return INFINITY;
        double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * (double)b[i];
    }
    return sqrt(num) / (den > 1e-30 ? sqrt(den) : 1e-15);
}

double test_max_abs(const float *a, const float *b, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(a[i]) || isnan(b[i]))
            return INFINITY;
        double d = fabs((double)a[i] - (double)b[i]);
        if (d > m)
            m = d;
    }
    return m;
}

const char *test_data_dir(void)
{
    return PPOCR_TEST_DATA_DIR;
}
const char *test_binary_dir(void)
{
    return PPOCR_BINARY_DIR;
}

const char *test_models_dir(void)
{
    const char *env = getenv("PPOCR_MODELS");
    return env && *env ? env : PPOCR_SOURCE_DIR "/models";
}

static char tmpdir[256];

int test_tmpdir_make(const char *tag)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/ppocr_test_%s_XXXXXX", tag);
    return mkdtemp(tmpdir) ? 0 : -1;
}

int test_tmpdir_remove(void)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

const char *test_tmpdir(void)
{
    return tmpdir;
}

const char *test_tmp_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}
