/*
 * Losses. Values are accumulated in double in sample order, so they are
 * reproducible; gradients are written per element and need no reduction.
 */
#include "loom/loss.h"

#include <math.h>
#include <string.h>

#include "core/i18n.h"
#include "train/loss-internal.h"

static int check_sizes(const char *what, int64_t batch, int64_t width, const void *y, loom_error *err) {
  if (batch < 1 || width < 1)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: batch and width must be at least 1, got %lld and %lld"),
                          what, (long long)batch, (long long)width);
  if (batch > INT64_MAX / width)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: batch × width overflows"), what);
  if (!y) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: missing network output"), what);
  return LOOM_OK;
}

static int check_label(const char *what, int32_t label, int64_t classes, int64_t sample, int64_t head,
                       loom_error *err) {
  if (label < 0 || label >= classes)
    return loom_error_set(err, LOOM_ERR_RANGE, _("%s: sample %lld, head %lld: label %d outside [0, %lld)"), what,
                          (long long)sample, (long long)head, (int)label, (long long)classes);
  return LOOM_OK;
}

LOOM_API int loom_loss_mse(const float *y, const float *target, int64_t batch, int64_t width, double *loss, float *dy,
                           loom_error *err) {
  int rc = check_sizes("mse", batch, width, y, err);
  if (rc) return rc;
  if (!target) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: missing targets"), "mse");
  int64_t n = batch * width;
  double sum = 0.0, inv = 1.0 / (double)n;
  for (int64_t i = 0; i < n; i++) {
    double d = (double)y[i] - (double)target[i];
    sum += d * d;
    if (dy) dy[i] = (float)(2.0 * d * inv);
  }
  *loss = sum * inv;
  return LOOM_OK;
}

/* exp(x), without libm's underflow path where the result is +0 anyway
 * (below about −745.13): a trained classifier's logits lie hundreds apart,
 * and the call for each of them that underflowed (setting errno) cost more
 * than the rest of the loss. */
static inline double exp_or_zero(double x) { return x < -746.0 ? 0.0 : exp(x); }

/*
 * Cross-entropy of one row of logits against (1-ε)·onehot(label) + ε/C.
 * Returns the row's loss; writes softmax - target, times `grad_scale`, to g.
 */
static double ce_row(const float *z, int32_t label, int64_t classes, double eps, double grad_scale, float *g) {
  double zmax = z[0];
  for (int64_t c = 1; c < classes; c++)
    if (z[c] > zmax) zmax = z[c];
  double sumexp = 0.0, sum_z = 0.0;
  for (int64_t c = 0; c < classes; c++) {
    sumexp += exp_or_zero((double)z[c] - zmax);
    sum_z += (double)z[c];
  }
  double logsumexp = zmax + log(sumexp);
  /* -Σ_c q_c log p_c with log p_c = z_c - logsumexp */
  double nll = logsumexp - (double)z[label];
  double smooth = logsumexp - sum_z / (double)classes;
  double loss = (1.0 - eps) * nll + eps * smooth;
  if (g) {
    double off = eps / (double)classes;
    for (int64_t c = 0; c < classes; c++) {
      double p = exp_or_zero((double)z[c] - logsumexp);
      double q = off + (c == label ? 1.0 - eps : 0.0);
      g[c] = (float)((p - q) * grad_scale);
    }
  }
  return loss;
}

static int check_smoothing(const char *what, double eps, loom_error *err) {
  if (!(eps >= 0.0 && eps <= 1.0))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: label_smoothing must be in [0, 1], got %g"), what, eps);
  return LOOM_OK;
}

LOOM_API int loom_loss_cross_entropy(const float *logits, const int32_t *labels, int64_t batch, int64_t classes,
                                     double label_smoothing, double *loss, float *dy, loom_error *err) {
  const char *what = "cross_entropy";
  int rc = check_sizes(what, batch, classes, logits, err);
  if (!rc) rc = check_smoothing(what, label_smoothing, err);
  if (rc) return rc;
  if (!labels) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: missing labels"), what);
  for (int64_t b = 0; b < batch; b++)
    if ((rc = check_label(what, labels[b], classes, b, 0, err))) return rc;
  double sum = 0.0, inv = 1.0 / (double)batch;
  for (int64_t b = 0; b < batch; b++)
    sum += ce_row(logits + b * classes, labels[b], classes, label_smoothing, inv, dy ? dy + b * classes : NULL);
  *loss = sum * inv;
  return LOOM_OK;
}

LOOM_API int loom_loss_bce_logits(const float *logits, const float *target, int64_t batch, int64_t width,
                                  double *loss, float *dy, loom_error *err) {
  const char *what = "bce_logits";
  int rc = check_sizes(what, batch, width, logits, err);
  if (rc) return rc;
  if (!target) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: missing targets"), what);
  int64_t n = batch * width;
  for (int64_t i = 0; i < n; i++)
    if (!(target[i] >= 0.0f && target[i] <= 1.0f))
      return loom_error_set(err, LOOM_ERR_RANGE, _("%s: sample %lld, element %lld: target %g outside [0, 1]"), what,
                            (long long)(i / width), (long long)(i % width), (double)target[i]);
  double sum = 0.0, inv = 1.0 / (double)n;
  for (int64_t i = 0; i < n; i++) {
    double x = logits[i], t = target[i];
    /* log(1 + e^-|x|) never overflows; log1p keeps precision for large |x|. */
    sum += fmax(x, 0.0) - x * t + log1p(exp(-fabs(x)));
    if (dy) {
      double s = x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
      dy[i] = (float)((s - t) * inv);
    }
  }
  *loss = sum * inv;
  return LOOM_OK;
}

typedef double (*head_row_fn)(const float *row, int32_t label, int64_t classes, double eps, double grad_scale,
                               float *g);

/* The mean over the active heads of @row_fn (cross-entropy of logits or
 * NLL of probabilities): the same checks, mask and scaling for both. */
static int multi_head(const char *what, head_row_fn row_fn, const float *x, const int32_t *labels,
                      const uint8_t *mask, int64_t batch, int64_t heads, int64_t classes, double label_smoothing,
                      double *loss, float *dy, loom_error *err) {
  int rc = check_sizes(what, batch, heads, x, err);
  if (!rc) rc = check_sizes(what, batch, classes, x, err);
  if (!rc && heads > INT64_MAX / classes / batch)
    rc = loom_error_set(err, LOOM_ERR_NOMEM, _("%s: batch × heads × classes overflows"), what);
  if (!rc) rc = check_smoothing(what, label_smoothing, err);
  if (rc) return rc;
  if (!labels) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: missing labels"), what);
  int64_t active = 0;
  for (int64_t i = 0; i < batch * heads; i++) {
    if (mask && !mask[i]) continue;
    if ((rc = check_label(what, labels[i], classes, i / heads, i % heads, err))) return rc;
    active++;
  }
  if (dy) memset(dy, 0, (size_t)(batch * heads * classes) * sizeof *dy);
  if (active == 0) {
    *loss = 0.0;
    return LOOM_OK;
  }
  double sum = 0.0, inv = 1.0 / (double)active;
  for (int64_t i = 0; i < batch * heads; i++) {
    if (mask && !mask[i]) continue;
    sum += row_fn(x + i * classes, labels[i], classes, label_smoothing, inv, dy ? dy + i * classes : NULL);
  }
  *loss = sum * inv;
  return LOOM_OK;
}

LOOM_API int loom_loss_multi_head_ce(const float *logits, const int32_t *labels, const uint8_t *mask, int64_t batch,
                                     int64_t heads, int64_t classes, double label_smoothing, double *loss, float *dy,
                                     loom_error *err) {
  return multi_head("multi_head_ce", ce_row, logits, labels, mask, batch, heads, classes, label_smoothing, loss, dy,
                    err);
}

/* One head's −Σ t·log p over its probabilities p (t: the smoothed one-hot of
 * the label), with p clamped below at LOOM_NLL_MIN_PROB so a zero probability
 * gives a large finite loss rather than infinity; where the clamp holds the
 * gradient is 0 (the clamp's derivative). */
static double nll_row(const float *p, int32_t label, int64_t classes, double eps, double grad_scale, float *g) {
  double sum = 0.0;
  for (int64_t c = 0; c < classes; c++) {
    double t = (c == label ? 1.0 - eps : 0.0) + eps / (double)classes;
    if (t == 0.0) continue;
    double q = p[c] > LOOM_NLL_MIN_PROB ? (double)p[c] : LOOM_NLL_MIN_PROB;
    sum -= t * log(q);
    if (g && p[c] > LOOM_NLL_MIN_PROB) g[c] = (float)(-t / q * grad_scale);
  }
  return sum;
}

LOOM_API int loom_loss_multi_head_nll(const float *probs, const int32_t *labels, const uint8_t *mask, int64_t batch,
                                      int64_t heads, int64_t classes, double label_smoothing, double *loss, float *dy,
                                      loom_error *err) {
  return multi_head("multi_head_nll", nll_row, probs, labels, mask, batch, heads, classes, label_smoothing, loss, dy,
                    err);
}

int loss_check_head_labels(const loom_loss_spec *spec, const int32_t *labels, const uint8_t *mask, int64_t batch,
                           int64_t width, int64_t *active, loom_error *err) {
  const char *what = loom_loss_name(spec->kind);
  int64_t heads = spec->heads;
  if (heads < 1 || width % heads != 0)
    /* TRANSLATORS: the first %s is the loss name, multi_head_ce or multi_head_nll. */
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: %lld outputs per sample do not split into %lld heads"), what,
                          (long long)width, (long long)heads);
  if (!labels) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: missing labels"), what);
  *active = 0;
  for (int64_t i = 0; i < batch * heads; i++) {
    if (mask && !mask[i]) continue;
    int rc = check_label(what, labels[i], width / heads, i / heads, i % heads, err);
    if (rc) return rc;
    (*active)++;
  }
  return LOOM_OK;
}

/* ---- by kind ------------------------------------------------------------- */

static const char *const loss_names[] = {"mse", "cross_entropy", "bce_logits", "multi_head_ce", "multi_head_nll"};
#define N_LOSSES ((int)(sizeof loss_names / sizeof loss_names[0]))

LOOM_API const char *loom_loss_name(loom_loss_kind kind) {
  return (int)kind >= 0 && (int)kind < N_LOSSES ? loss_names[kind] : "unknown";
}

LOOM_API int loom_loss_from_name(const char *name, loom_loss_kind *out, loom_error *err) {
  for (int i = 0; name && i < N_LOSSES; i++)
    if (strcmp(name, loss_names[i]) == 0) {
      *out = (loom_loss_kind)i;
      return LOOM_OK;
    }
  return loom_error_set(err, LOOM_ERR_INVALID,
                        _("unknown loss '%s' (expected mse, cross_entropy, bce_logits, multi_head_ce or multi_head_nll)"),
                        name ? name : "(null)");
}

LOOM_API bool loom_loss_uses_labels(loom_loss_kind kind) {
  return kind == LOOM_LOSS_CROSS_ENTROPY || kind == LOOM_LOSS_MULTI_HEAD_CE || kind == LOOM_LOSS_MULTI_HEAD_NLL;
}

LOOM_API int loom_loss_eval(const loom_loss_spec *spec, const float *y, int64_t batch, int64_t width,
                            const int32_t *labels, const float *targets, const uint8_t *mask, double *loss, float *dy,
                            loom_error *err) {
  switch (spec->kind) {
  case LOOM_LOSS_MSE: return loom_loss_mse(y, targets, batch, width, loss, dy, err);
  case LOOM_LOSS_CROSS_ENTROPY:
    return loom_loss_cross_entropy(y, labels, batch, width, spec->label_smoothing, loss, dy, err);
  case LOOM_LOSS_BCE_LOGITS: return loom_loss_bce_logits(y, targets, batch, width, loss, dy, err);
  case LOOM_LOSS_MULTI_HEAD_CE:
  case LOOM_LOSS_MULTI_HEAD_NLL:
    if (spec->heads < 1 || width % spec->heads != 0)
      /* TRANSLATORS: the first %s is the loss name, multi_head_ce or multi_head_nll. */
      return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: %lld outputs per sample do not split into %lld heads"),
                            loom_loss_name(spec->kind), (long long)width, (long long)spec->heads);
    if (spec->kind == LOOM_LOSS_MULTI_HEAD_NLL)
      return loom_loss_multi_head_nll(y, labels, mask, batch, spec->heads, width / spec->heads,
                                      spec->label_smoothing, loss, dy, err);
    return loom_loss_multi_head_ce(y, labels, mask, batch, spec->heads, width / spec->heads, spec->label_smoothing,
                                   loss, dy, err);
  }
  return loom_error_set(err, LOOM_ERR_INVALID, _("unknown loss kind %d"), (int)spec->kind);
}

/* ---- accuracy ------------------------------------------------------------ */

static int64_t argmax(const float *z, int64_t n) {
  int64_t best = 0;
  for (int64_t i = 1; i < n; i++)
    if (z[i] > z[best]) best = i;
  return best;
}

LOOM_API int64_t loom_count_correct_argmax(const float *logits, const int32_t *labels, int64_t batch,
                                           int64_t classes) {
  int64_t correct = 0;
  for (int64_t b = 0; b < batch; b++) correct += argmax(logits + b * classes, classes) == labels[b];
  return correct;
}

LOOM_API int64_t loom_count_correct_binary(const float *y, const float *target, int64_t n, double threshold) {
  int64_t correct = 0;
  for (int64_t i = 0; i < n; i++) correct += ((double)y[i] > threshold) == (target[i] >= 0.5f);
  return correct;
}

LOOM_API void loom_count_correct_heads(const float *logits, const int32_t *labels, const uint8_t *mask,
                                       int64_t batch, int64_t heads, int64_t classes, loom_head_counts *counts,
                                       int64_t *per_head_correct, int64_t *per_head_active) {
  for (int64_t b = 0; b < batch; b++) {
    int64_t active = 0, right = 0;
    for (int64_t h = 0; h < heads; h++) {
      int64_t i = b * heads + h;
      if (mask && !mask[i]) continue;
      bool ok = argmax(logits + i * classes, classes) == labels[i];
      active++;
      right += ok;
      if (per_head_active) per_head_active[h]++;
      if (per_head_correct) per_head_correct[h] += ok;
    }
    counts->correct += right;
    counts->active += active;
    if (active) {
      counts->samples++;
      counts->samples_all_correct += right == active;
    }
  }
}
