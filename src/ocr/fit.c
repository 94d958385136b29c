#include "ocr/fit.h"

int fit_most(int most, uint64_t limit, fit_need_fn need, void *ctx)
{
    if (most < 1)
        return 0;
    if (need(ctx, most) <= limit)
        return most;
    /* need(lo) fits (lo 0: nothing tried yet), need(hi) does not */
    int lo = 0, hi = most;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (need(ctx, mid) <= limit)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}
