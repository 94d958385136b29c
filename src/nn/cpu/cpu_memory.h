/* Memory for the CPU backend's large buffers: the workspace the plans run in and the packed
 * weights. A block of 2 MiB or more is placed on 2 MiB boundaries and asked for transparent huge
 * pages (the kernel's "madvise" mode, Debian's default), so that the first image's 170 MB of
 * buffers take a few hundred page faults rather than tens of thousands. */
#ifndef PPOCR_NN_CPU_MEMORY_H
#define PPOCR_NN_CPU_MEMORY_H

#include <stdlib.h>
#include <sys/mman.h>

#define CPU_HUGE_PAGE ((size_t)2 << 20)

/* `align` (a power of two, at most CPU_HUGE_PAGE) aligned, `bytes` rounded up to it; free with
 * free(). NULL when memory runs out. */
static inline void *cpu_alloc_large(size_t align, size_t bytes)
{
    if (bytes < CPU_HUGE_PAGE) {
        const size_t rounded = (bytes + align - 1) / align * align;
        return aligned_alloc(align, rounded ? rounded : align);
    }
    const size_t rounded = (bytes + CPU_HUGE_PAGE - 1) / CPU_HUGE_PAGE * CPU_HUGE_PAGE;
    void *p = aligned_alloc(CPU_HUGE_PAGE, rounded);
#ifdef MADV_HUGEPAGE
    if (p)
        (void)madvise(p, rounded, MADV_HUGEPAGE); /* a hint: without huge pages it is memory all the same */
#endif
    return p;
}

#endif
