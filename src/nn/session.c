/* nn/session.h: each call forwarded to the backend of the device, session or plan it is given. */
#include "nn/session.h"

#include "nn/backend.h"

int nn_session_create(struct nn_device *dev, const struct nn_session_options *opt, struct nn_session **out, char *err,
                      size_t err_len)
{
    *out = NULL;
    return dev->backend->session_create(dev, opt, out, err, err_len);
}

void nn_session_destroy(struct nn_session *s)
{
    if (s)
        s->backend->session_destroy(s);
}

struct nn_plan *nn_session_plan(struct nn_session *s, enum nn_net_id net, const int64_t shape[4], char *err,
                                size_t err_len)
{
    return s->backend->session_plan(s, net, shape, err, err_len);
}

void nn_session_pin(struct nn_session *s, struct nn_plan *plan, bool pinned)
{
    s->backend->session_pin(s, plan, pinned);
}

void nn_session_plan_ahead(struct nn_session *s, const struct nn_plan_request *requests, int n)
{
    s->backend->session_plan_ahead(s, requests, n);
}

uint64_t nn_session_plan_bytes(struct nn_session *s, enum nn_net_id net, const int64_t shape[4])
{
    return s->backend->session_plan_bytes(s, net, shape);
}

uint64_t nn_plan_bytes(const struct nn_plan *plan)
{
    return plan->backend->plan_bytes(plan);
}

uint64_t nn_plan_align(const struct nn_plan *plan)
{
    return plan->backend->plan_align(plan);
}

uint64_t nn_plans_bytes(struct nn_plan *const *plans, int n)
{
    uint64_t need = 0;
    for (int k = 0; k < n && k < NN_RUN_MAX_PLANS; k++) {
        const uint64_t align = nn_plan_align(plans[k]);
        need = (need + align - 1) / align * align + nn_plan_bytes(plans[k]);
    }
    return need;
}

const struct pvk_shape *nn_plan_input_shape(const struct nn_plan *plan)
{
    return plan->backend->plan_input_shape(plan);
}

const struct pvk_shape *nn_plan_output_shape(const struct nn_plan *plan)
{
    return plan->backend->plan_output_shape(plan);
}

uint64_t nn_session_memory_limit(const struct nn_session *s)
{
    return s->backend->session_memory_limit(s);
}

uint64_t nn_session_memory_held(const struct nn_session *s)
{
    return s->backend->session_memory_held(s);
}

int nn_session_run(struct nn_session *s, const struct nn_run *run, char *err, size_t err_len)
{
    return s->backend->session_run(s, run, err, err_len);
}

double nn_session_gpu_ms(const struct nn_session *s)
{
    return s->backend->session_gpu_ms(s);
}

const float *nn_session_output(struct nn_session *s, int k, float **owned, char *err, size_t err_len)
{
    *owned = NULL;
    return s->backend->session_output(s, k, owned, err, err_len);
}

int nn_session_read_output(struct nn_session *s, int k, float *dst, char *err, size_t err_len)
{
    return s->backend->session_read_output(s, k, dst, err, err_len);
}

int nn_session_argmax(const struct nn_session *s, int k, const int32_t **index, const float **value)
{
    return s->backend->session_argmax(s, k, index, value);
}
