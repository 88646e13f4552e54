/*
 * Ensembles (docs/dna.md "Ensembles"): how well N classifiers complement
 * each other on one data set. Each model's success pattern is a 0/1 vector
 * over the samples (1 where it answers right); every figure is a count over
 * those vectors, so they are exact and independent of threads:
 *  - accuracy of model i: |C_i| / n, C_i the samples model i gets right;
 *  - coverage of a pair: |C_i ∪ C_j| / n, the accuracy of an oracle that
 *    picks whichever of the two is right;
 *  - overlap of a pair: the Jaccard index |C_i ∩ C_j| / |C_i ∪ C_j| of the
 *    correct sets (1 when both sets are empty: they are equal);
 *  - similarity of a pair: the phi coefficient (Pearson correlation) of the
 *    two 0/1 vectors, in [-1, 1]: 1 when they succeed and fail on the same
 *    samples, 0 when unrelated, negative when one tends to be right where the
 *    other is wrong. A constant vector (always or never right) has no
 *    correlation: phi is then 1 if the two vectors are equal, else 0;
 *  - agreement of a pair: the fraction of samples where both are right or
 *    both are wrong;
 *  - the best complementary pair: the highest coverage; ties go to the lower
 *    similarity (errors less alike), then to the lower (i, j).
 */
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "dataset.h"
#include "error.h"
#include "export.h"
#include "net.h"
#include "pool.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct loom_ensemble loom_ensemble;

typedef struct loom_ensemble_pair {
  int a, b;                 /* model indices, a < b */
  int64_t both;             /* samples both get right: |C_a ∩ C_b| */
  int64_t only_a, only_b;   /* right in one of them only */
  int64_t neither;          /* wrong in both */
  double coverage, overlap, similarity, agreement;
} loom_ensemble_pair;

/*
 * Whether `net` answers each sample of `ds` right, written to correct[0..n)
 * as 0/1. `ds` needs class labels; the rule follows the loss
 * loom_train_pick_loss picks (the one `loom eval` counts accuracy with):
 * argmax equals the label for one head of logits or probabilities; for one
 * output and two classes, output above 0 (logits) or 0.5 (a sigmoid) means
 * class 1; with several heads a sample is right when every active head is
 * (a sample without an active head has nothing to get wrong and counts as
 * right). The network must take ds's input size; errors name both sizes.
 */
LOOM_API int loom_ensemble_correct(loom_net *net, loom_pool *pool, const loom_dataset *ds, uint8_t *correct,
                                   loom_error *err);

/* The figures of n_models (>= 1) success patterns of n_samples (>= 1) each;
 * correct[m][s] nonzero = model m right on sample s. Copies what it needs. */
LOOM_API loom_ensemble *loom_ensemble_from_patterns(int n_models, int64_t n_samples, const uint8_t *const *correct,
                                                     loom_error *err);
/* Runs every network on `ds` (loom_ensemble_correct) and takes the figures.
 * The networks must agree in input and output size; an error names the
 * first model (by index, from 0) that differs from model 0. */
LOOM_API loom_ensemble *loom_ensemble_evaluate(loom_net *const *nets, int n_models, loom_pool *pool,
                                               const loom_dataset *ds, loom_error *err);
LOOM_API void loom_ensemble_free(loom_ensemble *e);

LOOM_API int loom_ensemble_n_models(const loom_ensemble *e);
LOOM_API int64_t loom_ensemble_n_samples(const loom_ensemble *e);
/* Samples model m gets right; -1 if m is out of range. */
LOOM_API int64_t loom_ensemble_correct_count(const loom_ensemble *e, int m);
LOOM_API double loom_ensemble_accuracy(const loom_ensemble *e, int m); /* NAN if out of range */
/* Model m's success pattern (n_samples bytes of 0/1); NULL if out of range. */
LOOM_API const uint8_t *loom_ensemble_pattern(const loom_ensemble *e, int m);
/* The pair of models a and b (either order; a != b); a zeroed pair with
 * a = b = -1 when out of range. */
LOOM_API loom_ensemble_pair loom_ensemble_pair_of(const loom_ensemble *e, int a, int b);
/* The best complementary pair (see above); a = b = -1 with fewer than two models. */
LOOM_API loom_ensemble_pair loom_ensemble_best_pair(const loom_ensemble *e);

#ifdef __cplusplus
}
#endif
