/* The CPU executor's self-check and thread count: one small convolution through oneDNN against
 * plain C, and the library's version, runtime and instruction set for the user. */
#include <math.h>
#include <stdio.h>

#include "nn/cpu/cpu_net.h"
#include "nn/cpu/cpu_net_internal.h"

int cpu_net_threads(int threads)
{
#if DNNL_CPU_RUNTIME == DNNL_RUNTIME_OMP
    char err[256];
    if (cpu_dnnl_load(err, sizeof err)) /* the net's creation then says why */
        return threads > 0 ? threads : 1;
    int n = threads > 0 ? threads : cpu_dnnl.omp_get_max_threads();
    /* OMP_THREAD_LIMIT (which OCRmyPDF sets for its OCR engines) caps a parallel region's team
     * but not omp_get_max_threads(): oneDNN splits its work for the latter, and the threads that
     * never start leave their share unwritten. */
    const int limit = cpu_dnnl.omp_get_thread_limit();
    if (limit > 0 && n > limit)
        n = limit;
    return n;
#else
    return threads > 0 ? threads : 1;
#endif
}

enum { CHECK_C = 3, CHECK_OC = 4, CHECK_H = 7, CHECK_W = 6, CHECK_K = 3 };

/* The convolution (3x3, padding 1, bias) with ReLU in plain C, NCHW. */
static void conv_reference(const float *x, const float *w, const float *b, float *y)
{
    for (int o = 0; o < CHECK_OC; o++)
        for (int i = 0; i < CHECK_H; i++)
            for (int j = 0; j < CHECK_W; j++) {
                double acc = b[o];
                for (int c = 0; c < CHECK_C; c++)
                    for (int u = 0; u < CHECK_K; u++)
                        for (int v = 0; v < CHECK_K; v++) {
                            const int yy = i + u - 1, xx = j + v - 1;
                            if (yy >= 0 && yy < CHECK_H && xx >= 0 && xx < CHECK_W)
                                acc += (double)x[(c * CHECK_H + yy) * CHECK_W + xx] *
                                       w[((o * CHECK_C + c) * CHECK_K + u) * CHECK_K + v];
                        }
                y[(o * CHECK_H + i) * CHECK_W + j] = acc > 0 ? (float)acc : 0.0f;
            }
}

static dnnl_status_t conv_onednn(dnnl_engine_t eng, dnnl_stream_t stream, float *x, float *w, float *b, float *y)
{
    dnnl_memory_desc_t src, wei, bias, dst;
    const dnnl_dims_t xd = {1, CHECK_C, CHECK_H, CHECK_W}, wd = {CHECK_OC, CHECK_C, CHECK_K, CHECK_K}, bd = {CHECK_OC},
                      yd = {1, CHECK_OC, CHECK_H, CHECK_W};
    const dnnl_dims_t strides = {1, 1}, pad = {1, 1};
    dnnl_status_t st = cpu_dnnl.dnnl_memory_desc_init_by_tag(&src, 4, xd, dnnl_f32, dnnl_nchw);
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_memory_desc_init_by_tag(&wei, 4, wd, dnnl_f32, dnnl_oihw);
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_memory_desc_init_by_tag(&bias, 1, bd, dnnl_f32, dnnl_a);
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_memory_desc_init_by_tag(&dst, 4, yd, dnnl_f32, dnnl_nchw);
    dnnl_convolution_desc_t d;
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_convolution_forward_desc_init(&d, dnnl_forward_inference, dnnl_convolution_direct, &src,
                                                         &wei, &bias, &dst, strides, pad, pad);
    dnnl_post_ops_t ops = NULL;
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t prim = NULL;
    dnnl_memory_t mem[4] = {NULL, NULL, NULL, NULL};
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_post_ops_create(&ops);
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_post_ops_append_eltwise(ops, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_primitive_attr_create(&attr);
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_primitive_attr_set_post_ops(attr, ops);
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_primitive_desc_create(&pd, &d, attr, eng, NULL);
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_primitive_create(&prim, pd);
    const dnnl_memory_desc_t *mds[4] = {&src, &wei, &bias, &dst};
    float *data[4] = {x, w, b, y};
    for (int i = 0; i < 4 && st == dnnl_success; i++)
        st = cpu_dnnl.dnnl_memory_create(&mem[i], mds[i], eng, data[i]);
    if (st == dnnl_success) {
        dnnl_exec_arg_t args[4] = {
            {DNNL_ARG_SRC, mem[0]}, {DNNL_ARG_WEIGHTS, mem[1]}, {DNNL_ARG_BIAS, mem[2]}, {DNNL_ARG_DST, mem[3]}};
        st = cpu_dnnl.dnnl_primitive_execute(prim, stream, 4, args);
    }
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_stream_wait(stream);
    for (int i = 0; i < 4; i++)
        cpu_dnnl.dnnl_memory_destroy(mem[i]);
    cpu_dnnl.dnnl_primitive_destroy(prim);
    cpu_dnnl.dnnl_primitive_desc_destroy(pd);
    cpu_dnnl.dnnl_primitive_attr_destroy(attr);
    cpu_dnnl.dnnl_post_ops_destroy(ops);
    return st;
}

int cpu_net_self_check(int threads, FILE *out, char *err, size_t err_len)
{
    if (cpu_net_available(err, err_len))
        return -1;
    const dnnl_version_t *v = cpu_dnnl.dnnl_version();
    fprintf(out, "device: CPU (oneDNN %d.%d.%d, %s), %d threads, fp32\n", v->major, v->minor, v->patch,
            v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : "its own threads", cpu_net_threads(threads));
    float x[CHECK_C * CHECK_H * CHECK_W], w[CHECK_OC * CHECK_C * CHECK_K * CHECK_K], b[CHECK_OC];
    float y[CHECK_OC * CHECK_H * CHECK_W], want[CHECK_OC * CHECK_H * CHECK_W];
    /* a fixed pattern with both signs, so that ReLU cuts some outputs */
    for (int i = 0; i < (int)(sizeof x / sizeof *x); i++)
        x[i] = (float)((i * 37) % 19 - 9) / 8.0f;
    for (int i = 0; i < (int)(sizeof w / sizeof *w); i++)
        w[i] = (float)((i * 11) % 13 - 6) / 16.0f;
    for (int i = 0; i < CHECK_OC; i++)
        b[i] = (float)(i - 2) / 4.0f;
    conv_reference(x, w, b, want);
    dnnl_engine_t eng = NULL;
    dnnl_stream_t stream = NULL;
    dnnl_status_t st = cpu_dnnl.dnnl_engine_create(&eng, dnnl_cpu, 0);
    if (st == dnnl_success)
        st = cpu_dnnl.dnnl_stream_create(&stream, eng, dnnl_stream_default_flags);
    if (st == dnnl_success)
        st = conv_onednn(eng, stream, x, w, b, y);
    cpu_dnnl.dnnl_stream_destroy(stream);
    cpu_dnnl.dnnl_engine_destroy(eng);
    if (st != dnnl_success) {
        snprintf(err, err_len, "self-check: oneDNN's convolution failed (status %d)", (int)st);
        return -1;
    }
    for (int i = 0; i < (int)(sizeof y / sizeof *y); i++)
        if (!(fabsf(y[i] - want[i]) <= 1e-4f * (1.0f + fabsf(want[i])))) {
            snprintf(err, err_len, "self-check: oneDNN's convolution gives %g at %d where plain C gives %g", y[i], i,
                     want[i]);
            return -1;
        }
    fprintf(out, "self-check: ok\n");
    return 0;
}
