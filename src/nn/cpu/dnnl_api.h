/* oneDNN, loaded when the CPU backend is first used rather than linked: the executor calls the
 * library through cpu_dnnl, filled by cpu_dnnl_load().
 *
 * Why not linked: oneDNN runs its threads on OpenMP, and GNU OpenMP reads its wait policy from
 * the environment once, when it is loaded. Its default spins each idle thread for about 300,000
 * rounds between parallel regions, which costs nothing on an idle machine and makes a run 2.5 to
 * 7 times slower beside any other busy process (two ppocr-vk processes on the same cores, a CI
 * runner's other jobs): the spinning threads take the cores the working ones need. Loaded here,
 * after cpu_dnnl_load() has set a short spin (GOMP_SPINCOUNT) where the user set none, the
 * library keeps its speed in both cases (BENCHMARKS.md). A run on Vulkan then never loads oneDNN,
 * and a binary built with the backend still starts where the library is missing. */
#ifndef PPOCR_NN_CPU_DNNL_API_H
#define PPOCR_NN_CPU_DNNL_API_H

#include <dnnl.h>
#include <omp.h>
#include <stddef.h>

/* Every oneDNN function the executor calls. */
#define CPU_DNNL_FUNCTIONS(X)                                                                                          \
    X(dnnl_binary_desc_init)                                                                                           \
    X(dnnl_concat_primitive_desc_create)                                                                               \
    X(dnnl_convolution_forward_desc_init)                                                                              \
    X(dnnl_dilated_convolution_forward_desc_init)                                                                      \
    X(dnnl_dilated_deconvolution_forward_desc_init)                                                                    \
    X(dnnl_eltwise_forward_desc_init)                                                                                  \
    X(dnnl_engine_create)                                                                                              \
    X(dnnl_engine_destroy)                                                                                             \
    X(dnnl_engine_get_count)                                                                                           \
    X(dnnl_inner_product_forward_desc_init)                                                                            \
    X(dnnl_layer_normalization_forward_desc_init)                                                                      \
    X(dnnl_matmul_desc_init)                                                                                           \
    X(dnnl_memory_create)                                                                                              \
    X(dnnl_memory_desc_equal)                                                                                          \
    X(dnnl_memory_desc_get_size)                                                                                       \
    X(dnnl_memory_desc_init_by_strides)                                                                                \
    X(dnnl_memory_desc_init_by_tag)                                                                                    \
    X(dnnl_memory_desc_permute_axes)                                                                                   \
    X(dnnl_memory_destroy)                                                                                             \
    X(dnnl_memory_get_data_handle)                                                                                     \
    X(dnnl_memory_get_memory_desc)                                                                                     \
    X(dnnl_memory_set_data_handle)                                                                                     \
    X(dnnl_pooling_v2_forward_desc_init)                                                                               \
    X(dnnl_post_ops_append_binary)                                                                                     \
    X(dnnl_post_ops_append_eltwise)                                                                                    \
    X(dnnl_post_ops_append_sum)                                                                                        \
    X(dnnl_post_ops_create)                                                                                            \
    X(dnnl_post_ops_destroy)                                                                                           \
    X(dnnl_post_ops_get_kind)                                                                                          \
    X(dnnl_post_ops_get_params_eltwise)                                                                                \
    X(dnnl_post_ops_len)                                                                                               \
    X(dnnl_primitive_attr_create)                                                                                      \
    X(dnnl_primitive_attr_destroy)                                                                                     \
    X(dnnl_primitive_attr_set_output_scales)                                                                           \
    X(dnnl_primitive_attr_set_post_ops)                                                                                \
    X(dnnl_primitive_attr_set_scratchpad_mode)                                                                         \
    X(dnnl_primitive_create)                                                                                           \
    X(dnnl_primitive_desc_create)                                                                                      \
    X(dnnl_primitive_desc_destroy)                                                                                     \
    X(dnnl_primitive_desc_query)                                                                                       \
    X(dnnl_primitive_desc_query_md)                                                                                    \
    X(dnnl_primitive_destroy)                                                                                          \
    X(dnnl_primitive_execute)                                                                                          \
    X(dnnl_reorder_primitive_desc_create)                                                                              \
    X(dnnl_resampling_forward_desc_init)                                                                               \
    X(dnnl_softmax_v2_forward_desc_init)                                                                               \
    X(dnnl_stream_create)                                                                                              \
    X(dnnl_stream_destroy)                                                                                             \
    X(dnnl_stream_wait)                                                                                                \
    X(dnnl_version)

/* The OpenMP runtime's, from the library oneDNN brings, where oneDNN runs on OpenMP. */
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
#define CPU_OMP_FUNCTIONS(X)                                                                                           \
    X(omp_get_max_threads) X(omp_set_num_threads) X(omp_get_thread_limit) X(omp_get_thread_num) X(omp_get_num_threads)
#else
#define CPU_OMP_FUNCTIONS(X)
#endif

struct cpu_dnnl_api {
#define CPU_DNNL_MEMBER(name) __typeof__(name) *name;
    CPU_DNNL_FUNCTIONS(CPU_DNNL_MEMBER)
    CPU_OMP_FUNCTIONS(CPU_DNNL_MEMBER)
#undef CPU_DNNL_MEMBER
    /* GNU OpenMP's entry to a parallel region (what gcc emits for `omp parallel`; LLVM's OpenMP
     * has it too), where the runtime has it, else NULL: the executor's own kernels share their
     * rows among the threads oneDNN's primitives run on, which spin awake between primitives,
     * rather than among threads of their own that would wait for the cores those spin on. */
    void (*gomp_parallel)(void (*fn)(void *), void *data, unsigned num_threads, unsigned flags);
};

/* Filled by a successful cpu_dnnl_load(); unusable before. */
extern struct cpu_dnnl_api cpu_dnnl;

/* Loads oneDNN once per process (any thread, any number of times); 0, or -1 with the reason in
 * err (the library or one of its functions missing). */
int cpu_dnnl_load(char *err, size_t err_len);

#endif
