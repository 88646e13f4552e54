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

/* The loss sum_i r[i] * y[i] of one forward pass of `model` on x, for
 * gradcheck_tensor. `what` prefixes the test message of a failed pass. */
typedef int (*gradcheck_forward_fn)(void *model, const loom_ctx *ctx, const float *x, int64_t batch, float *y,
                                    loom_error *err);
typedef struct {
  gradcheck_forward_fn forward;
  void *model;
  const char *what;
  const loom_ctx *ctx;
  const float *x;
  float *y;
  const float *r;
  int64_t batch, n_out; /* n_out: outputs per sample */
} gradcheck_eval;
int gradcheck_eval_loss(void *arg, double *loss);

/* after_change for weight tensors: arg is the loom_weights. */
void gradcheck_touch_weights(void *w);

/* One measurement's options (defaults applied), context and buffers. */
typedef struct {
  gradcheck_options o;
  loom_ctx default_ctx;
  const loom_ctx *ctx; /* o.ctx, or default_ctx: single-threaded, training */
  int64_t n_in, n_out; /* over the whole batch */
  float *x, *y, *r, *dx;
} gradcheck_run;

/* Applies the defaults to opts, clears *out and picks the context. */
void gradcheck_run_begin(gradcheck_run *run, const gradcheck_options *opts, gradcheck_report *out);
/* Allocates the buffers: x copied from `x`, r uniform in [-1, 1], dx zeroed. */
void gradcheck_run_alloc(gradcheck_run *run, const float *x, int64_t n_in, int64_t n_out);
void gradcheck_run_free(gradcheck_run *run);
