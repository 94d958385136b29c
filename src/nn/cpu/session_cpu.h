/* The CPU side of nn/device.h and nn/session.h, for the client's own work in a run's callbacks
 * (the twin of nn/gpu/session_gpu.h): on the CPU backend a callback does its work when it is
 * called, record_inputs before the nets run and record_outputs after, on the calling thread, and
 * reaches the plans' inputs and outputs in host memory here.
 *
 * Threads: as nn/session.h; the pointers belong to the session's thread. */
#ifndef PPOCR_NN_CPU_SESSION_CPU_H
#define PPOCR_NN_CPU_SESSION_CPU_H

#include "nn/device.h"
#include "nn/session.h"

/* The threads the device's runs use (0 for a device of another backend). */
int nn_cpu_device_threads(const struct nn_device *dev);
/* The plan's input, fp32 NCHW of nn_plan_input_shape, for record_inputs to fill: valid from the
 * run's start until the session's next run. NULL for a plan of another backend, or outside a run. */
float *nn_cpu_plan_input_data(const struct nn_plan *plan);
/* The plan's output, fp32 row-major of nn_plan_output_shape, once the plan has run (in
 * record_outputs, and after the run until the session's next one). NULL for a plan of another
 * backend, one that has not run, an output that is not fp32, or one the run reduced by
 * NN_OUTPUT_ARGMAX (only its argmax is kept: the plans after it reuse its workspace). */
const float *nn_cpu_plan_output_data(const struct nn_plan *plan);

#endif
