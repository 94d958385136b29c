#include "support/coverage.h"

#include <stdio.h>
#include <string.h>

void coverage_init(struct coverage *c, const char *const *feature_names, const char *const *kernel_names, int kernels)
{
    memset(c, 0, sizeof *c);
    c->feature_names = feature_names;
    c->kernel_names = kernel_names;
    c->kernels = kernels < COVERAGE_MAX_KERNELS ? kernels : COVERAGE_MAX_KERNELS;
    for (int k = 0; k < c->kernels; k++)
        c->applies[k] = ~(uint64_t)0;
}

void coverage_applies(struct coverage *c, int kernel, uint64_t features)
{
    if (kernel >= 0 && kernel < c->kernels)
        c->applies[kernel] = features;
}

void coverage_offer(struct coverage *c, int kernel, uint64_t features)
{
    if (kernel >= 0 && kernel < c->kernels)
        c->held[kernel] |= features;
}

void coverage_ran(struct coverage *c, int kernel, uint64_t features)
{
    if (kernel >= 0 && kernel < c->kernels)
        c->met[kernel] |= features;
}

static int popcount64(uint64_t x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}

size_t coverage_pick(const uint64_t *features, const double *cost, size_t n, uint64_t want, size_t *picked)
{
    size_t count = 0;
    uint64_t unmet = want;
    while (unmet) {
        size_t best = n;
        int best_gain = 0;
        for (size_t i = 0; i < n; i++) {
            int gain = popcount64(features[i] & unmet);
            if (gain > best_gain || (gain && gain == best_gain && cost[i] < cost[best])) {
                best = i;
                best_gain = gain;
            }
        }
        if (best == n)
            break;
        picked[count++] = best;
        unmet &= ~features[best];
    }
    return count;
}

int coverage_check(const struct coverage *c, const char *what)
{
    int misses = 0;
    for (int k = 0; k < c->kernels; k++) {
        uint64_t missed = c->held[k] & c->applies[k] & ~c->met[k];
        for (int f = 0; f < 64; f++)
            if (missed >> f & 1) {
                fprintf(stderr, "%s: kernel \"%s\" never met %s\n", what, c->kernel_names[k],
                        c->feature_names[f] ? c->feature_names[f] : "(unnamed feature)");
                misses++;
            }
    }
    return misses;
}
