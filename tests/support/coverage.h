/* Per-kernel feature coverage for the op tests: instead of running every case through every kernel
 * in every precision (on lavapipe each distinct pipeline costs a second or two of LLVM at its first
 * dispatch), a test offers its cases' features, picks for each kernel a few runs that meet every
 * feature the cases hold (coverage_pick), records what each run met (coverage_ran), and fails
 * when some kernel missed a feature (coverage_check). Features are bits of a uint64_t, named by
 * the test. */
#ifndef PPOCR_TEST_COVERAGE_H
#define PPOCR_TEST_COVERAGE_H

#include <stddef.h>
#include <stdint.h>

#define COVERAGE_MAX_KERNELS 16

struct coverage {
    const char *const *feature_names; /* [64], NULL where unused */
    const char *const *kernel_names;
    int kernels;
    uint64_t held[COVERAGE_MAX_KERNELS];    /* union of the features of the cases each kernel takes */
    uint64_t applies[COVERAGE_MAX_KERNELS]; /* the features each kernel can meet (precisions it runs) */
    uint64_t met[COVERAGE_MAX_KERNELS];
};

void coverage_init(struct coverage *c, const char *const *feature_names, const char *const *kernel_names, int kernels);
/* The features a kernel can meet at all (a kernel without fp16 leaves out the fp16 features). */
void coverage_applies(struct coverage *c, int kernel, uint64_t features);
/* A case the kernel takes, with its features. */
void coverage_offer(struct coverage *c, int kernel, uint64_t features);
void coverage_ran(struct coverage *c, int kernel, uint64_t features);
/* Greedy cover: indices (into picked, returned count) of candidates whose features together meet
 * `want`; at each step the candidate meeting most features still unmet, the cheapest of those.
 * Features no candidate has are left unmet (coverage_check reports them). */
size_t coverage_pick(const uint64_t *features, const double *cost, size_t n, uint64_t want, size_t *picked);
/* Prints each kernel's missed features (held and applying, not met); returns their count. */
int coverage_check(const struct coverage *c, const char *what);

#endif
