/* Models for the tests: a converted net from the models folder, or a hand-built one (wiring an op
 * and turning tensors, ops and constant contents into a loaded pvk_model the way a converted .pvk
 * file would be, models/FORMAT.md). */
#ifndef PPOCR_TEST_MODEL_H
#define PPOCR_TEST_MODEL_H

#include "model/format.h"
#include "model/model.h"

#include <stdbool.h>

/* Loads <models folder>/<file>.pvk for a test of the CPU executor; false (the test skips, saying
 * why) when the build has no CPU executor or the model is missing; a failed load fails the test. */
bool test_load_cpu_model(const char *file, struct pvk_model *m);

/* Sets the op's n_in inputs (the rest -1), its one output and no weights. */
void test_op_wire(struct pvk_op *o, int n_in, const int *in, int out);

/* Lays the net out as models/FORMAT.md says, checksums it and loads it with
 * pvk_model_load_memory; data[i] holds t[i].nbytes bytes for each constant t[i] (t[i].offset is
 * written). source names the net in the header and in the failure message; a failed load fails
 * the test. */
void test_model_load(struct pvk_tensor *t, int n_t, const struct pvk_op *ops, int n_ops, const void *const *data,
                     int input, int output, const char *source, struct pvk_model *out);

#endif
