/*
 * Losses and accuracy counts for training (DESIGN.md §4, docs/training.md).
 *
 * Every loss takes the network output `y` for a mini-batch (batch-major,
 * float32), returns the loss value (double) and, if `dy` is not NULL, WRITES
 * dLoss/dy (same layout as y). The reduction is PyTorch's default `mean`:
 *  - mse: mean over all batch × width elements (torch.nn.MSELoss);
 *  - cross-entropy and BCE: mean over the samples / elements
 *    (torch.nn.CrossEntropyLoss, torch.nn.BCEWithLogitsLoss);
 *  - multi-head CE: mean over the active (unmasked) heads of all samples,
 *    i.e. CrossEntropyLoss on the logits viewed as (batch·heads) × classes
 *    with masked heads ignored (ignore_index).
 * Sums run in a fixed order in double precision, so the results do not depend
 * on threads. Class targets are int32 indices in [0, classes).
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Mean squared error: mean((y - target)²); dy = 2(y - target)/(batch·width). */
LOOM_API int loom_loss_mse(const float *y, const float *target, int64_t batch, int64_t width, double *loss,
                           float *dy, loom_error *err);

/*
 * Cross-entropy on logits (batch × classes) with integer class targets and
 * label smoothing ε in [0, 1] (torch semantics): the target distribution is
 * (1-ε)·onehot + ε/classes. dy = (softmax(y) - target distribution)/batch.
 */
LOOM_API int loom_loss_cross_entropy(const float *logits, const int32_t *labels, int64_t batch, int64_t classes,
                                     double label_smoothing, double *loss, float *dy, loom_error *err);

/*
 * Binary cross-entropy on logits, numerically stable:
 * max(y,0) - y·t + log(1 + exp(-|y|)), mean over batch × width; targets
 * in [0, 1]. dy = (sigmoid(y) - t)/(batch·width).
 */
LOOM_API int loom_loss_bce_logits(const float *logits, const float *target, int64_t batch, int64_t width,
                                  double *loss, float *dy, loom_error *err);

/*
 * Multi-head cross-entropy over a grid softmax: each sample's output is
 * heads × classes logits (row h is head h's logits), labels are
 * batch × heads. `mask` (batch × heads, nonzero = active; NULL = all active)
 * drops heads. Loss = mean over active heads of the per-head cross-entropy
 * (with label smoothing as above); masked heads get zero gradient. A batch
 * with no active head has loss 0 and zero gradient.
 */
LOOM_API int loom_loss_multi_head_ce(const float *logits, const int32_t *labels, const uint8_t *mask, int64_t batch,
                                     int64_t heads, int64_t classes, double label_smoothing, double *loss, float *dy,
                                     loom_error *err);

/*
 * Multi-head negative log-likelihood for networks that output probabilities
 * (a grid softmax: each sample's output is heads × classes, each row a
 * distribution). The same layout, mask and reduction as multi-head CE, but
 * on probabilities: per active head −Σ_c t_c·log p_c with t the label's
 * one-hot smoothed as above (ε = 0: −log p_label), averaged over the active
 * heads; torch.nn.NLLLoss(log p) on (batch·heads) × classes with
 * ignore_index. A probability below LOOM_NLL_MIN_PROB counts as that value
 * (a finite loss for a zero) and passes no gradient;
 * dy_c = −t_c / (p_c · active) elsewhere.
 */
#define LOOM_NLL_MIN_PROB 1e-12
LOOM_API int loom_loss_multi_head_nll(const float *probs, const int32_t *labels, const uint8_t *mask, int64_t batch,
                                      int64_t heads, int64_t classes, double label_smoothing, double *loss,
                                      float *dy, loom_error *err);

/* ---- a loss chosen at run time (trainer, CLI, GUI) ---------------------- */

typedef enum loom_loss_kind {
  LOOM_LOSS_MSE = 0,
  LOOM_LOSS_CROSS_ENTROPY = 1,
  LOOM_LOSS_BCE_LOGITS = 2,
  LOOM_LOSS_MULTI_HEAD_CE = 3,
  LOOM_LOSS_MULTI_HEAD_NLL = 4, /* probabilities in, e.g. after a grid softmax */
} loom_loss_kind;

typedef struct loom_loss_spec {
  loom_loss_kind kind;
  double label_smoothing; /* cross-entropy, multi-head CE */
  int64_t heads;          /* multi-head CE and NLL: rows of the grid softmax (>= 1) */
} loom_loss_spec;

LOOM_API const char *loom_loss_name(loom_loss_kind kind); /* "mse", "cross_entropy", "bce_logits", "multi_head_ce", "multi_head_nll" */
LOOM_API int loom_loss_from_name(const char *name, loom_loss_kind *out, loom_error *err);
/* True when the loss wants class indices (labels), false for float targets. */
LOOM_API bool loom_loss_uses_labels(loom_loss_kind kind);

/*
 * Evaluates `spec` on a batch whose outputs have `width` floats per sample.
 * Class losses read `labels` (batch × 1, or batch × heads for multi-head;
 * classes = width / heads), the others read `targets` (batch × width).
 * `mask` is used by multi-head CE only.
 */
LOOM_API int loom_loss_eval(const loom_loss_spec *spec, const float *y, int64_t batch, int64_t width,
                            const int32_t *labels, const float *targets, const uint8_t *mask, double *loss, float *dy,
                            loom_error *err);

/* ---- accuracy counts (sum them over batches, divide at the end) ---------- */

/* Samples whose argmax (first maximum on ties) equals the label. */
LOOM_API int64_t loom_count_correct_argmax(const float *logits, const int32_t *labels, int64_t batch,
                                           int64_t classes);

/* Elements where (y > threshold) equals (target >= 0.5); for logits use
 * threshold 0 (probability 0.5). */
LOOM_API int64_t loom_count_correct_binary(const float *y, const float *target, int64_t n, double threshold);

typedef struct loom_head_counts {
  int64_t correct;          /* active heads whose argmax equals the label */
  int64_t active;           /* active heads */
  int64_t samples_all_correct; /* samples whose every active head is right */
  int64_t samples;          /* samples with at least one active head */
} loom_head_counts;

/* Multi-head accuracy. Everything is ADDED to (zero it before the first
 * batch), so counts accumulate over batches: `counts`, and per_head_correct /
 * per_head_active (heads entries each, may be NULL). */
LOOM_API void loom_count_correct_heads(const float *logits, const int32_t *labels, const uint8_t *mask,
                                       int64_t batch, int64_t heads, int64_t classes, loom_head_counts *counts,
                                       int64_t *per_head_correct, int64_t *per_head_active);

#ifdef __cplusplus
}
#endif
