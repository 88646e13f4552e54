/* Layer gradient checks; the network variant is in gradcheck-net.c. */
#include "gradcheck.h"

#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/rng.h"
#include "gradcheck-impl.h"
#include "layers/layer-impl.h"
#include "loom/weights.h"

void gradcheck_fill_uniform(float *v, int64_t n, double lo, double hi, uint64_t seed) {
  loom_rng rng;
  loom_rng_seed(&rng, seed);
  for (int64_t i = 0; i < n; i++) v[i] = (float)loom_rng_uniform_range(&rng, lo, hi);
}

void gradcheck_fill_away_from_zero(float *v, int64_t n, double lo, double hi, double gap, uint64_t seed) {
  loom_rng rng;
  loom_rng_seed(&rng, seed);
  for (int64_t i = 0; i < n; i++) {
    double x;
    do x = loom_rng_uniform_range(&rng, lo, hi);
    while (fabs(x) < gap);
    v[i] = (float)x;
  }
}

void gradcheck_defaults(const gradcheck_options *in, gradcheck_options *out) {
  gradcheck_options d = {0};
  if (in) d = *in;
  if (d.eps <= 0) d.eps = 1e-2;
  if (d.max_per_tensor <= 0) d.max_per_tensor = 256;
  if (d.tolerance <= 0) d.tolerance = 1e-2;
  if (d.atol <= 0) d.atol = GRADCHECK_DEFAULT_ATOL;
  *out = d;
}

double gradcheck_dot(const float *r, const float *y, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += (double)r[i] * (double)y[i];
  return s;
}

/* Evaluates the loss with v[i] set to `value`; *step is the float32 step
 * actually taken (value rounded to float32, minus the saved value). */
static int eval_at(gradcheck_eval_fn eval, void *ctx, float *v, int64_t i, float saved, double delta,
                   void (*after_change)(void *), void *change_arg, double *loss, double *step) {
  float moved = (float)((double)saved + delta);
  v[i] = moved;
  if (after_change) after_change(change_arg);
  int rc = eval(ctx, loss);
  v[i] = saved;
  if (after_change) after_change(change_arg);
  *step = (double)moved - (double)saved;
  return rc;
}

/* Error of one entry, scaled so that it is ≤ rtol exactly when
 * |a − n| ≤ atol + rtol·max(|a|, |n|). */
static double entry_error(double a, double n, const gradcheck_options *o) {
  return fabs(a - n) / (o->atol / o->tolerance + fmax(fabs(a), fabs(n)));
}

/* Central difference (L(v+h) − L(v−h)) / (h₊ + h₋) with the float32 steps
 * actually taken; *l_plus and *l_minus receive the two losses. */
static int central(gradcheck_eval_fn eval, void *ctx, float *v, int64_t i, float saved, double h,
                   void (*after_change)(void *), void *change_arg, double *d, double *l_plus, double *l_minus,
                   double *h_plus, double *h_minus) {
  int rc = eval_at(eval, ctx, v, i, saved, h, after_change, change_arg, l_plus, h_plus);
  if (!rc) rc = eval_at(eval, ctx, v, i, saved, -h, after_change, change_arg, l_minus, h_minus);
  *h_minus = -*h_minus;
  *d = (*l_plus - *l_minus) / (*h_plus + *h_minus);
  return rc;
}

int gradcheck_tensor(gradcheck_eval_fn eval, void *ctx, float *v, int64_t n, const float *analytic,
                     void (*after_change)(void *), void *change_arg, const char *name, const gradcheck_options *o,
                     gradcheck_report *rep) {
  int64_t count = n < o->max_per_tensor ? n : o->max_per_tensor;
  for (int64_t c = 0; c < count; c++) {
    int64_t i = count == 1 ? 0 : (int64_t)((double)c * (double)(n - 1) / (double)(count - 1));
    float saved = v[i];
    double h = o->eps, a = analytic[i];
    double d1, lp1, lm1, hp1, hm1;
    int rc;
    if ((rc = central(eval, ctx, v, i, saved, h, after_change, change_arg, &d1, &lp1, &lm1, &hp1, &hm1))) return rc;
    double numeric = d1;
    double e = entry_error(a, numeric, o);
    rep->n_checked++;
    if (e > o->tolerance) {
      /* Half the step: Richardson's (4·D(h/2) − D(h))/3 removes the O(h²)
       * truncation error of a curved function. (Not used first: it carries
       * about three times the rounding noise of D(h).) */
      double d2, lp2, lm2, hp2, hm2;
      if ((rc = central(eval, ctx, v, i, saved, h / 2, after_change, change_arg, &d2, &lp2, &lm2, &hp2, &hm2)))
        return rc;
      numeric = (4.0 * d2 - d1) / 3.0;
      e = entry_error(a, numeric, o);
      if (e > o->tolerance) {
        /* A smooth function with a wrong gradient gives the same estimate
         * at every step and one-sided differences that halve with the step.
         * A kink inside the steps makes the estimate depend on the step by
         * about as much as it misses; a kink at v[i] keeps the one-sided
         * differences apart however small the step. Only those are skipped. */
        double d4, lp4, lm4, hp4, hm4, l0, step0;
        if ((rc = central(eval, ctx, v, i, saved, h / 4, after_change, change_arg, &d4, &lp4, &lm4, &hp4, &hm4)))
          return rc;
        if ((rc = eval_at(eval, ctx, v, i, saved, 0.0, after_change, change_arg, &l0, &step0))) return rc;
        double finer = (4.0 * d4 - d2) / 3.0;
        bool step_dependent = fabs(finer - numeric) > 0.5 * fabs(numeric - a);
        double one_sided = (lp1 - l0) / hp1 - (l0 - lm1) / hm1;
        double one_sided_half = (lp2 - l0) / hp2 - (l0 - lm2) / hm2;
        bool at_kink = fabs(one_sided) > 2.0 * (o->atol + o->tolerance * fabs(a)) &&
                       fabs(one_sided_half) > 0.75 * fabs(one_sided);
        if (step_dependent || at_kink) {
          rep->n_skipped++;
          continue;
        }
      }
    }
    if (e > rep->worst || rep->tensor[0] == '\0') {
      rep->worst = e;
      snprintf(rep->tensor, sizeof rep->tensor, "%s", name);
      rep->index = i;
      rep->analytic = a;
      rep->numeric = numeric;
    }
  }
  return 0;
}

bool gradcheck_judge(const gradcheck_report *rep, double tolerance, const char *what) {
  if (rep->worst > tolerance) {
    g_test_fail_printf("gradcheck %s: error %.3g > %.3g at %s[%lld]: analytic %.9g, numeric %.9g", what,
                       rep->worst, tolerance, rep->tensor, (long long)rep->index, rep->analytic, rep->numeric);
    return false;
  }
  if (rep->n_skipped * 20 > rep->n_checked) {
    g_test_fail_printf("gradcheck %s: %lld of %lld entries sat on kinks; choose inputs away from them", what,
                       (long long)rep->n_skipped, (long long)rep->n_checked);
    return false;
  }
  if (rep->n_checked == 0) {
    g_test_fail_printf("gradcheck %s: nothing was checked", what);
    return false;
  }
  return true;
}

/* ---- shared by the layer and network checks ----------------------------- */

int gradcheck_eval_loss(void *arg, double *loss) {
  gradcheck_eval *e = arg;
  loom_error err = {0};
  int rc = e->forward(e->model, e->ctx, e->x, e->batch, e->y, &err);
  if (rc) {
    g_test_message("%s: %s", e->what, err.message);
    return rc;
  }
  *loss = gradcheck_dot(e->r, e->y, e->batch * e->n_out);
  return 0;
}

void gradcheck_touch_weights(void *w) { loom_weights_touch(w); }

void gradcheck_run_begin(gradcheck_run *run, const gradcheck_options *opts, gradcheck_report *out) {
  gradcheck_defaults(opts, &run->o);
  memset(out, 0, sizeof *out);
  run->default_ctx = (loom_ctx){.pool = NULL, .training = true};
  run->ctx = run->o.ctx ? run->o.ctx : &run->default_ctx;
  run->n_in = run->n_out = 0;
  run->x = run->y = run->r = run->dx = NULL;
}

void gradcheck_run_alloc(gradcheck_run *run, const float *x, int64_t n_in, int64_t n_out) {
  run->n_in = n_in;
  run->n_out = n_out;
  run->x = g_new(float, n_in);
  run->y = g_new(float, n_out);
  run->r = g_new(float, n_out);
  run->dx = g_new0(float, n_in);
  memcpy(run->x, x, (size_t)n_in * sizeof *run->x);
  gradcheck_fill_uniform(run->r, n_out, -1.0, 1.0, run->o.seed ^ 0x5eedULL);
}

void gradcheck_run_free(gradcheck_run *run) {
  g_free(run->x);
  g_free(run->y);
  g_free(run->r);
  g_free(run->dx);
}

/* ---- layers ------------------------------------------------------------ */

static int forward_layer(void *layer, const loom_ctx *ctx, const float *x, int64_t batch, float *y, loom_error *err) {
  return layer_forward(layer, ctx, x, y, batch, err);
}

int gradcheck_layer_measure(loom_layer *layer, const float *x, int64_t batch, const gradcheck_options *opts,
                            gradcheck_report *out) {
  gradcheck_run run;
  gradcheck_run_begin(&run, opts, out);
  const gradcheck_options *o = &run.o;
  loom_shape in = loom_layer_in_shape(layer), outs = loom_layer_out_shape(layer);
  int64_t n_in = batch * loom_shape_numel(&in), n_out = batch * loom_shape_numel(&outs);
  g_assert_cmpint(n_in, >, 0);
  g_assert_cmpint(n_out, >, 0);
  gradcheck_run_alloc(&run, x, n_in, n_out);

  gradcheck_eval e = {.forward = forward_layer,
                      .model = layer,
                      .what = "gradcheck forward",
                      .ctx = run.ctx,
                      .x = run.x,
                      .y = run.y,
                      .r = run.r,
                      .batch = batch,
                      .n_out = n_out / batch};
  loom_error err = {0};
  int nw = loom_layer_n_weights(layer);
  float **analytic = g_new0(float *, nw > 0 ? nw : 1);
  double l0;
  int rc = gradcheck_eval_loss(&e, &l0);
  if (!rc) {
    layer_zero_grad(layer);
    rc = layer_backward(layer, run.ctx, run.x, run.y, run.r, o->skip_dx ? NULL : run.dx, batch, &err);
    if (rc) g_test_message("gradcheck backward: %s", err.message);
  }
  for (int w = 0; w < nw && !rc; w++) {
    int64_t n = loom_weights_count(loom_layer_weights(layer, w));
    analytic[w] = g_memdup2(loom_layer_grad(layer, w), (gsize)n * sizeof(float));
  }
  if (!rc && !o->skip_dx)
    rc = gradcheck_tensor(gradcheck_eval_loss, &e, run.x, n_in, run.dx, NULL, NULL, "x", o, out);
  for (int w = 0; w < nw && !rc; w++) {
    loom_weights *wt = loom_layer_weights(layer, w);
    char path[160];
    loom_layer_weights_path(layer, w, path, sizeof path);
    rc = gradcheck_tensor(gradcheck_eval_loss, &e, loom_weights_master(wt), loom_weights_count(wt), analytic[w],
                          gradcheck_touch_weights, wt, path, o, out);
  }
  for (int w = 0; w < nw; w++) g_free(analytic[w]);
  g_free(analytic);
  gradcheck_run_free(&run);
  return rc;
}

double gradcheck_layer(loom_layer *layer, const float *x, int64_t batch, double tolerance) {
  gradcheck_options o = {.tolerance = tolerance};
  gradcheck_report rep;
  char what[256];
  loom_layer_describe(layer, what, sizeof what);
  int rc = gradcheck_layer_measure(layer, x, batch, &o, &rep);
  if (rc) {
    g_test_fail_printf("gradcheck %s: the layer failed to run (status %s)", what, loom_status_name(rc));
    return INFINITY;
  }
  gradcheck_judge(&rep, tolerance, what);
  return rep.worst;
}
