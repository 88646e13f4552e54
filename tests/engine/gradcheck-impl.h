/* Internal to gradcheck.c / gradcheck-net.c. */
#pragma once
#include "gradcheck.h"

typedef int (*gradcheck_eval_fn)(void *ctx, double *loss);

void gradcheck_defaults(const gradcheck_options *in, gradcheck_options *out);
double gradcheck_dot(const float *r, const float *y, int64_t n);
/* Checks up to o->max_per_tensor entries of v (n values) against analytic,
 * calling after_change(change_arg) after every write to v. */
int gradcheck_tensor(gradcheck_eval_fn eval, void *ctx, float *v, int64_t n, const float *analytic,
                     void (*after_change)(void *), void *change_arg, const char *name, const gradcheck_options *o,
                     gradcheck_report *rep);
