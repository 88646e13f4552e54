/*
 * Target propagation: the rule that turns a layer's output target into a
 * target for its input (docs/training.md "Target rules"). Element-wise
 * activations with an inverse use the nearest preimage of the target; every
 * other layer (weighted, containers, normalisations, softmaxes, ...) takes
 * the least-squares step along Jᵀ·gap: x_t = x + α·d with d = Jᵀ·gap and, per
 * sample, α = ⟨J·d, gap⟩ / ‖J·d‖² clamped to [0, max_step], where J·d is the
 * secant f(x + d) − f(x) (exact for linear layers).
 */
#include <math.h>
#include <string.h>

#include "core/i18n.h"
#include "train/trainer-internal.h"

#define TWEEN_SIGMOID_MARGIN 0.005 /* targets kept inside (m, 1 − m): |logit| <= 5.3 */
#define TWEEN_TANH_LIMIT 0.995     /* |atanh| <= 3 */

typedef enum { RULE_GENERIC, RULE_RELU, RULE_RELU2, RULE_LEAKY, RULE_ELU, RULE_SIGMOID, RULE_TANH, RULE_SOFTPLUS } rule_kind;

static rule_kind rule_of(const loom_layer *l, double *p0, double *p1) {
  const char *name = loom_layer_type_name(loom_layer_get_type(l));
  *p0 = *p1 = 0.0;
  if (strcmp(name, "relu") == 0) return RULE_RELU;
  if (strcmp(name, "relu2") == 0) return RULE_RELU2;
  if (strcmp(name, "sigmoid") == 0) return RULE_SIGMOID;
  if (strcmp(name, "tanh") == 0) return RULE_TANH;
  if (strcmp(name, "leaky_relu") == 0) {
    *p0 = loom_layer_get_float(l, "negative_slope");
    return *p0 > 0 ? RULE_LEAKY : *p0 == 0 ? RULE_RELU : RULE_GENERIC;
  }
  if (strcmp(name, "elu") == 0) {
    *p0 = loom_layer_get_float(l, "alpha");
    return *p0 > 0 ? RULE_ELU : RULE_RELU;
  }
  if (strcmp(name, "softplus") == 0) {
    *p0 = loom_layer_get_float(l, "beta");
    *p1 = loom_layer_get_float(l, "threshold");
    return RULE_SOFTPLUS;
  }
  return RULE_GENERIC;
}

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The input value nearest to x whose image is the target t (clamped into the range). */
static double preimage(rule_kind k, double p0, double p1, double x, double t) {
  switch (k) {
  case RULE_RELU: return t > 0 ? t : (x < 0 ? x : 0.0);
  case RULE_RELU2: return t > 0 ? sqrt(t) : (x < 0 ? x : 0.0);
  case RULE_LEAKY: return t > 0 ? t : t / p0;
  case RULE_ELU: return t > 0 ? t : log1p(clampd(t / p0, -1.0 + 1e-3, 0.0));
  case RULE_SIGMOID: {
    double c = clampd(t, TWEEN_SIGMOID_MARGIN, 1.0 - TWEEN_SIGMOID_MARGIN);
    return log(c / (1.0 - c));
  }
  case RULE_TANH: return atanh(clampd(t, -TWEEN_TANH_LIMIT, TWEEN_TANH_LIMIT));
  case RULE_SOFTPLUS:
    if (p0 * t > p1) return t;
    return log(expm1(p0 * (t > 1e-6 ? t : 1e-6))) / p0;
  case RULE_GENERIC: break;
  }
  return x;
}

int tween_input_delta(loom_layer *l, const loom_ctx *ctx, const float *x, const float *a, const float *gap,
                      const float *d, float *dx, float *probe, int64_t batch, double max_step, loom_error *err) {
  int64_t in = loom_shape_numel(&l->in_shape), out = loom_shape_numel(&l->out_shape);
  double p0, p1;
  rule_kind k = rule_of(l, &p0, &p1);
  if (k != RULE_GENERIC && in == out) {
    for (int64_t i = 0; i < batch * in; i++)
      dx[i] = (float)(preimage(k, p0, p1, x[i], (double)a[i] + (double)gap[i]) - (double)x[i]);
    return LOOM_OK;
  }
  if (!d) {
    memset(dx, 0, (size_t)(batch * in) * sizeof *dx);
    return LOOM_OK;
  }
  for (int64_t i = 0; i < batch * in; i++) dx[i] = x[i] + d[i];
  loom_ctx probe_ctx = *ctx;
  probe_ctx.training = false;
  int rc = layer_forward(l, &probe_ctx, dx, probe, batch, err);
  if (rc) return rc;
  for (int64_t b = 0; b < batch; b++) {
    double num = 0.0, den = 0.0;
    for (int64_t j = 0; j < out; j++) {
      double jd = (double)probe[b * out + j] - (double)a[b * out + j];
      num += jd * (double)gap[b * out + j];
      den += jd * jd;
    }
    double alpha = den > 0 && isfinite(num / den) ? clampd(num / den, 0.0, max_step) : 0.0;
    for (int64_t j = 0; j < in; j++) dx[b * in + j] = (float)(alpha * (double)d[b * in + j]);
  }
  return LOOM_OK;
}
