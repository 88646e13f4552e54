/*
 * Target propagation: the rule that turns a layer's output target into a
 * target for its input (docs/trainer.md, "Target rule"). One rule serves
 * every layer type — dense, convolutions, activations, normalisations,
 * softmaxes, containers: the least-squares step along Jᵀ·gap,
 * x_t = x + α·d with d = Jᵀ·gap (the layer's own backward with dy = gap) and,
 * per sample, α = ⟨J·d, gap⟩ / ‖J·d‖² clamped to [0, max_step], where J·d is
 * the secant f(x + d) − f(x) (exact for linear layers). Exact inverses of
 * tanh/sigmoid were tried first: they divide by f'(x) and so push saturated
 * units hardest, and small networks stopped learning (docs/trainer.md).
 */
#include <math.h>
#include <string.h>

#include "core/i18n.h"
#include "layers/layer-impl.h"
#include "train/trainer-internal.h"

static double clampd(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

int tween_input_delta(loom_layer *l, const loom_ctx *ctx, const float *x, const float *a, const float *gap,
                      const float *d, float *dx, float *probe, int64_t batch, double max_step, loom_error *err) {
  loom_shape in_shape = loom_layer_in_shape(l), out_shape = loom_layer_out_shape(l);
  int64_t in = loom_shape_numel(&in_shape), out = loom_shape_numel(&out_shape);
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
