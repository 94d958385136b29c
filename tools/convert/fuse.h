/* Peephole fusion and folding on the converter's lowered op list. */
#ifndef PPOCR_CONVERT_FUSE_H
#define PPOCR_CONVERT_FUSE_H

#include <stddef.h>
#include <stdint.h>

#include "convert/graph.h"

int cv_fuse(struct cv_graph *g, char *err, size_t err_len);

/* Folds y = scale[c] * x + shift[c] (per output channel) into a conv's weights and bias, in
 * float64. `transposed` selects ConvTranspose's W[IC][OC/g] layout. bias may be NULL (taken
 * as 0); `bias_out` receives OC values. */
void cv_fold_affine_into_conv(double *w, const double *bias, double *bias_out, int64_t oc, int64_t ic_per_group,
                              int64_t groups, int64_t ksize, int transposed, const double *scale, const double *shift);
/* BatchNormalization as per-channel scale and shift, in float64. */
void cv_bn_to_affine(const double *gamma, const double *beta, const double *mean, const double *var, double eps,
                     int64_t c, double *scale, double *shift);

#endif
