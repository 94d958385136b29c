/* oneDNN loaded at first use (dnnl_api.h says why): the library of the major version the build's
 * headers name, its functions looked up once. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dnnl_version.h>

#include "nn/cpu/dnnl_api.h"

#define CPU_DNNL_STR2(x) #x
#define CPU_DNNL_STR(x) CPU_DNNL_STR2(x)
#define CPU_DNNL_SONAME "libdnnl.so." CPU_DNNL_STR(DNNL_VERSION_MAJOR)

/* GNU OpenMP's spin count for idle threads where the user chose no wait policy: a few
 * microseconds, long enough that back-to-back primitives still find their threads awake. */
#define CPU_DNNL_SPIN_COUNT "10000"

struct cpu_dnnl_api cpu_dnnl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static char load_error[512]; /* empty after a successful load */

/* OpenMP reads its variables when oneDNN loads it, at the first engine's device; but setenv then
 * would race every other thread's reading of the environment (an input decoded beside the engines'
 * opening: libjpeg's getenv, the environment a PDF's pdftoppm is spawned with). So it is set as
 * the program loads, before main and any thread. */
__attribute__((constructor)) static void choose_spin_count(void)
{
    if (!getenv("OMP_WAIT_POLICY") && !getenv("GOMP_SPINCOUNT"))
        setenv("GOMP_SPINCOUNT", CPU_DNNL_SPIN_COUNT, 0);
}

static void load(void)
{
    void *lib = dlopen(CPU_DNNL_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(load_error, sizeof load_error, "the CPU backend needs oneDNN (%s): %s", CPU_DNNL_SONAME,
                 why ? why : "not found");
        return;
    }
    /* dlsym on the library's handle also finds what its own dependencies (OpenMP) define. */
#define CPU_DNNL_LOOKUP(name)                                                                                          \
    if (!load_error[0] && !(*(void **)(&cpu_dnnl.name) = dlsym(lib, #name)))                                           \
        snprintf(load_error, sizeof load_error, "the CPU backend: %s has no %s", CPU_DNNL_SONAME, #name);
    CPU_DNNL_FUNCTIONS(CPU_DNNL_LOOKUP)
    CPU_OMP_FUNCTIONS(CPU_DNNL_LOOKUP)
#undef CPU_DNNL_LOOKUP
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
    *(void **)(&cpu_dnnl.gomp_parallel) = dlsym(lib, "GOMP_parallel");
#endif
    if (load_error[0]) {
        memset(&cpu_dnnl, 0, sizeof cpu_dnnl);
        dlclose(lib);
    }
}

int cpu_dnnl_load(char *err, size_t err_len)
{
    pthread_once(&load_once, load);
    if (!load_error[0])
        return 0;
    snprintf(err, err_len, "%s", load_error);
    return -1;
}
