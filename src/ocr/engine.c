/* The OCR engine's creation: the models and their checks, the device (opened while the models are
 * read), the net session and the pipeline's own GPU kernels; and the rest of its interface. */
#include "ppocr.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ocr/engine_internal.h"
#include "ocr/models_path.h"
#include "ocr/net_io.h"
#include "ocr/workers.h"

double ocr_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int ocr_fail(char *err, size_t err_len, const char *fmt, const char *detail)
{
    snprintf(err, err_len, fmt, detail);
    return -1;
}

int ocr_helper_count(void)
{
    const int cpus = ocr_workers_cpus();
    return cpus - 1 < HELPERS ? cpus - 1 : HELPERS;
}

/* ---- models --------------------------------------------------------------------------------- */

static const char *const model_files[NN_NET_COUNT] = {
    [NN_NET_DET] = "det.pvk", [NN_NET_CLS] = "cls.pvk", [NN_NET_REC] = "rec.pvk"};

static int load_model(struct ppocr_engine *e, enum nn_net_id net, const char *dir, char *err, size_t err_len)
{
    char path[4096 + 64], why[512];
    snprintf(path, sizeof(path), "%s/%s", dir, model_files[net]);
    if (pvk_model_load(path, &e->own_models[net], why, sizeof(why)))
        return ocr_fail(err, err_len, "%s", why);
    return 0;
}

/* Classes the recogniser outputs, from its output shape at the standard input size. */
static int rec_classes(const struct pvk_model *m, int64_t *classes, char *err, size_t err_len)
{
    struct pvk_shape *shapes = calloc(m->n_tensors + 1, sizeof(*shapes));
    if (!shapes)
        return ocr_fail(err, err_len, "%s", "out of memory");
    const int64_t in[4] = {1, 3, REC_HEIGHT, REC_MIN_WIDTH};
    int rc = pvk_infer_shapes(m, in, shapes, err, err_len);
    if (rc == 0) {
        const struct pvk_shape *o = &shapes[m->output];
        *classes = o->ndim ? o->d[o->ndim - 1] : 0;
    }
    free(shapes);
    return rc;
}

/* The models of opt (det, rec and, with use_cls, cls) from dir, checked against each other. */
static int load_models(struct ppocr_engine *e, const struct ppocr_options *opt, const char *dir, char *err,
                       size_t err_len)
{
    e->models = e->own_models;
    if (load_model(e, NN_NET_DET, dir, err, err_len) || load_model(e, NN_NET_REC, dir, err, err_len) ||
        (opt->use_cls && load_model(e, NN_NET_CLS, dir, err, err_len)))
        return -1;
    const struct pvk_model *det = &e->models[NN_NET_DET], *cls = &e->models[NN_NET_CLS], *rec = &e->models[NN_NET_REC];
    if (det->net_kind != PVK_NET_DET || rec->net_kind != PVK_NET_REC || (opt->use_cls && cls->net_kind != PVK_NET_CLS))
        return ocr_fail(err, err_len, "%s: det.pvk, cls.pvk and rec.pvk are not a detector, classifier and recogniser",
                        dir);
    int64_t classes = 0;
    if (rec_classes(rec, &classes, err, err_len))
        return -1;
    if (!rec->dict || classes != (int64_t)rec->n_dict + 1) {
        snprintf(err, err_len, "rec.pvk: the recogniser has %lld classes but its dictionary %u entries (+1 blank)",
                 (long long)classes, rec->n_dict);
        return -1;
    }
    return 0;
}

/* ---- engine life ---------------------------------------------------------------------------- */

/* The models are read on a thread of their own while the device comes up on the caller's: a
 * thread that made Vulkan calls and exits can wait in the driver for the pipelines being built
 * meanwhile. */
struct models_job {
    struct ppocr_engine *e;
    const struct ppocr_options *opt;
    const char *dir;
    int rc;
    pthread_t thread;
    bool thread_started;
    char err[1024];
};

static void *models_job_run(void *arg)
{
    struct models_job *j = arg;
    j->rc = load_models(j->e, j->opt, j->dir, j->err, sizeof(j->err));
    return NULL;
}

static enum ppocr_status engine_create(const struct ppocr_options *opt, const struct ppocr_engine *first,
                                       struct ppocr_engine **out, char *err, size_t err_len)
{
    *out = NULL;
    enum ppocr_status status = PPOCR_ERR_FAILED;
    struct ppocr_engine *e = calloc(1, sizeof(*e));
    if (!e) {
        ocr_fail(err, err_len, "%s", "out of memory");
        return status;
    }
    e->opt = *opt;
    struct nn_device *shared = first ? first->dev : NULL;
    double t0 = ocr_now_ms();

    char dir[4096];
    if (!first && ocr_find_models_dir(opt->models_dir, dir, sizeof(dir))) {
        snprintf(err, err_len, "no models in %s (run tools/fetch-models.sh, or give --models DIR)", dir);
        status = PPOCR_ERR_MODELS;
        goto fail;
    }
    struct models_job mj = {.e = e, .opt = opt, .dir = dir};
    if (first)
        e->models = first->models;
    else
        mj.thread_started = pthread_create(&mj.thread, NULL, models_job_run, &mj) == 0;
    char device_err[512] = "";
    if (shared) {
        e->dev = shared;
        e->shares_dev = true;
    } else {
        const struct nn_device_options dopt = ocr_device_options(opt);
        nn_device_open(&dopt, &e->dev, device_err, sizeof(device_err)); /* closed with the engine */
    }
    double t1 = ocr_now_ms();
    if (mj.thread_started)
        pthread_join(mj.thread, NULL);
    else if (!first)
        models_job_run(&mj);
    if (mj.rc) {
        snprintf(err, err_len, "%s", mj.err);
        status = PPOCR_ERR_MODELS;
        goto fail;
    }
    if (!e->dev) {
        snprintf(err, err_len, "%s", device_err);
        status = PPOCR_ERR_NO_DEVICE;
        goto fail;
    }
    double t2 = ocr_now_ms();
    nn_device_info(e->dev, &e->device);

    /* From here on a failure means the device cannot run the nets (out of memory, a pipeline
     * the driver rejects): nothing could be processed, as with no device at all. */
    status = PPOCR_ERR_NO_DEVICE;
    struct nn_session_options so = {.fp16_math = opt->fp16_math, .profile = opt->profile};
    for (int n = 0; n < NN_NET_COUNT; n++) {
        so.names[n] = model_files[n];
        so.models[n] = n == NN_NET_CLS && !opt->use_cls ? NULL : &e->models[n];
    }
    so.leave_final_softmax[NN_NET_REC] = true; /* the argmax gives the maximum's probability */
    if (nn_session_create(e->dev, &so, &e->nets, err, err_len))
        goto fail;
    double t3 = ocr_now_ms();
    if (ocr_net_io_create(e->dev, opt->det_db_thresh, &e->io, err, err_len))
        goto fail;
    const int helpers = shared || e->device.device_class == NN_DEVICE_CPU ? 0 : ocr_helper_count();
    if (ocr_workers_create(helpers, &e->helpers)) {
        ocr_fail(err, err_len, "%s", "cannot start helper threads");
        status = PPOCR_ERR_FAILED;
        goto fail;
    }
    e->startup = (struct ppocr_engine_startup){.models_ms = t2 - t1, .device_ms = t1 - t0, .nets_ms = t3 - t2,
                                               .other_ms = ocr_now_ms() - t3};
    *out = e;
    return PPOCR_OK;
fail:
    ppocr_engine_destroy(e);
    return status;
}

void ppocr_engine_destroy(struct ppocr_engine *e)
{
    if (!e)
        return;
    ocr_workers_destroy(e->helpers);
    ocr_net_io_destroy(e->io);
    nn_session_destroy(e->nets);
    for (int n = 0; n < NN_NET_COUNT; n++)
        if (e->own_models[n].impl_)
            pvk_model_free(&e->own_models[n]);
    if (!e->shares_dev)
        nn_device_close(e->dev);
    free(e);
}

enum ppocr_status ppocr_engine_create(const struct ppocr_options *opt, struct ppocr_engine **out, char *err,
                                      size_t err_len)
{
    return engine_create(opt, NULL, out, err, err_len);
}

enum ppocr_status ppocr_engine_create_sibling(const struct ppocr_engine *first, struct ppocr_engine **out, char *err,
                                              size_t err_len)
{
    return engine_create(&first->opt, first, out, err, err_len);
}

const char *ppocr_status_name(enum ppocr_status status)
{
    static const char *const names[] = {
        [PPOCR_OK] = "ok",
        [PPOCR_ERR_NOT_FOUND] = "not found",
        [PPOCR_ERR_PERMISSION] = "permission denied",
        [PPOCR_ERR_IS_DIRECTORY] = "a directory",
        [PPOCR_ERR_IO] = "read error",
        [PPOCR_ERR_EMPTY] = "empty",
        [PPOCR_ERR_UNKNOWN_FORMAT] = "unknown format",
        [PPOCR_ERR_UNSUPPORTED] = "unsupported",
        [PPOCR_ERR_TRUNCATED] = "truncated",
        [PPOCR_ERR_CORRUPT] = "corrupt",
        [PPOCR_ERR_TOO_LARGE] = "too large",
        [PPOCR_ERR_NO_MEMORY] = "out of memory",
        [PPOCR_ERR_NO_DEVICE] = "no usable device",
        [PPOCR_ERR_MODELS] = "unusable models",
        [PPOCR_ERR_FAILED] = "failed",
    };
    _Static_assert(sizeof(names) / sizeof(names[0]) == PPOCR_ERR_FAILED + 1, "a status without a name");
    return (unsigned)status < sizeof(names) / sizeof(names[0]) ? names[status] : "unknown status";
}

void ppocr_engine_memory(const struct ppocr_engine *e, struct ppocr_engine_memory *out)
{
    struct nn_device_memory m;
    nn_device_memory(e->dev, &m);
    out->device_in_use = m.device_in_use;
    out->device_peak = m.device_peak;
    out->host_in_use = m.host_in_use;
    out->host_peak = m.host_peak;
}

void ppocr_engine_startup(const struct ppocr_engine *e, struct ppocr_engine_startup *out)
{
    *out = e->startup;
}

enum ppocr_device_class ppocr_engine_device_class(const struct ppocr_engine *e)
{
    switch (e->device.device_class) {
    case NN_DEVICE_CPU: return PPOCR_DEVICE_CPU;
    case NN_DEVICE_DISCRETE_GPU: return PPOCR_DEVICE_DISCRETE_GPU;
    default: return PPOCR_DEVICE_OTHER_GPU;
    }
}

const char *ppocr_engine_device(const struct ppocr_engine *e)
{
    return e->device.description;
}
