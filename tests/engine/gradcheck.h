/*
 * Finite-difference gradient checks for layers and networks (test support).
 *
 * The scalar checked is L = Σ r ⊙ y for a fixed random r (uniform in [-1, 1),
 * from opts->seed) over the whole batch output y. One forward + backward with
 * dy = r gives the analytic dL/dx and dL/dθ for every trainable tensor
 * (children's and the gate's included); each is compared with the central
 * difference D(h) = (L(v+h) − L(v−h)) / (2h), with L summed in double and the
 * float32 steps actually taken.
 *
 * Criterion for one entry (analytic a, numeric n), mixed absolute/relative:
 *
 *     |a − n| ≤ atol + rtol·max(|a|, |n|)
 *
 * with rtol = opts->tolerance and atol = opts->atol (default
 * GRADCHECK_DEFAULT_ATOL). The reported error of an entry is
 * |a − n| / (atol/rtol + max(|a|, |n|)), which is ≤ rtol exactly when the
 * criterion holds, so `worst` compares directly with the tolerance.
 *
 * Why these numbers: each float32 output carries a rounding error of about
 * 2⁻²⁴ of its size, different on the two sides of a step, so D(h) carries
 * noise of roughly 1e-7·√k / h for k outputs of order 1 that move. With
 * h = 1e-3 that is 1e-5…1e-4, as large as the small gradients to be checked;
 * the default h = 1e-2 brings it to a few 1e-6, under atol = 1e-5 (measured
 * over every gradient test of the suite). The O(h²) truncation error of the
 * larger step on curved functions is removed by the refinement below.
 *
 * Refinement: when D(h) misses, the entry is measured again with h/2, and
 * Richardson's (4·D(h/2) − D(h))/3 (error O(h⁴)) is judged instead. It is not
 * used first because it carries about three times the rounding noise.
 *
 * Kinks (relu at 0, max ties, sparsemax's support edge): if the entry still
 * fails, it is counted in n_skipped instead of failing only when the function
 * visibly is not smooth there: the estimate from h/2 and h/4 differs from the
 * one from h and h/2 by at least half the miss (a kink inside the steps), or
 * the one-sided differences are far apart and do not halve with the step (a
 * kink at v itself). A smooth function with a wrong gradient gives the same
 * estimate at every step and one-sided differences that halve, so it fails.
 * gradcheck_layer() and gradcheck_net() fail if more than 5% of the entries
 * are skipped.
 *
 * Usage in a test:   gradcheck_layer(layer, x, batch, 1e-2);
 * It fails the running test (g_test_fail_printf) naming the tensor, index,
 * analytic and numeric values, and returns the worst error.
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "loom/context.h"
#include "loom/layer.h"
#include "loom/net.h"

/* Absolute term of the criterion for float32 layers at the default step. */
#define GRADCHECK_DEFAULT_ATOL 1e-5

typedef struct gradcheck_options {
  double eps;             /* step; 0 = 1e-3 */
  int64_t max_per_tensor; /* entries checked per tensor, spread evenly incl. first and last; 0 = 256 */
  uint64_t seed;          /* for r; 0 is a valid seed */
  double tolerance;       /* rtol of the criterion above; 0 = 1e-2 */
  double atol;            /* atol of the criterion above; 0 = GRADCHECK_DEFAULT_ATOL */
  bool skip_dx;           /* do not check the input gradient */
  const loom_ctx *ctx;    /* NULL = single-threaded, training */
} gradcheck_options;

typedef struct gradcheck_report {
  double worst;       /* worst error over the entries checked */
  char tensor[160];   /* where: "x", "weight", "children[1].bias", "(0,0,1,0) weight" */
  int64_t index;      /* element of that tensor */
  double analytic, numeric;
  int64_t n_checked, n_skipped;
} gradcheck_report;

/* Measures without failing the test; returns 0 or the first engine error. */
int gradcheck_layer_measure(loom_layer *layer, const float *x, int64_t batch, const gradcheck_options *opts,
                            gradcheck_report *out);
/* Fails the running test (returning false) when a measured report is over
 * tolerance, has more than 5% kinks, or checked nothing; `what` names the case. */
bool gradcheck_judge(const gradcheck_report *rep, double tolerance, const char *what);
/* Checks a built layer; fails the test when worst > tolerance. */
double gradcheck_layer(loom_layer *layer, const float *x, int64_t batch, double tolerance);

/* The same through loom_net_forward / loom_net_backward over every layer of the
 * net (tensors named by coordinates). The net must infer cleanly. */
int gradcheck_net_measure(loom_net *net, const float *x, int64_t batch, const gradcheck_options *opts,
                          gradcheck_report *out);
double gradcheck_net(loom_net *net, const float *x, int64_t batch, double tolerance);

/* Fills v with n values uniform in [lo, hi) from seed (deterministic). */
void gradcheck_fill_uniform(float *v, int64_t n, double lo, double hi, uint64_t seed);
/* As above but keeps every value at least `gap` away from 0 (inputs to relu-like layers). */
void gradcheck_fill_away_from_zero(float *v, int64_t n, double lo, double hi, double gap, uint64_t seed);
