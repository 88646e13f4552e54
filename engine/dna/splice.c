/*
 * The DNA-guided splice of two parents (loom/evolve.h, docs/dna.md
 * "Evolution"). A crossover by coordinates would mix unrelated layers as
 * soon as one parent has moved its logic; pairing layers by their DNA is the
 * volumetric counterpart of NEAT's innovation numbers.
 */
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "core/rng.h"
#include "dna/evolve-internal.h"
#include "loom/dna.h"

/* Exchangeable: the same type and the same tensors of the same shapes, so
 * B's weights drop into A's slot without changing a shape. */
static bool exchangeable(const loom_layer *a, const loom_layer *b) {
  if (loom_layer_get_type(a) != loom_layer_get_type(b)) return false;
  int n = loom_layer_n_weights(a);
  if (n == 0 || n != loom_layer_n_weights(b)) return false;
  for (int k = 0; k < n; k++) {
    loom_weights *wa = loom_layer_weights((loom_layer *)a, k), *wb = loom_layer_weights((loom_layer *)b, k);
    if (loom_weights_rows(wa) != loom_weights_rows(wb) || loom_weights_cols(wa) != loom_weights_cols(wb)) return false;
  }
  return true;
}

static int take_weights(loom_layer *dst, loom_layer *src, loom_error *err) {
  for (int k = 0; k < loom_layer_n_weights(dst); k++) {
    loom_weights *wd = loom_layer_weights(dst, k), *ws = loom_layer_weights(src, k);
    memcpy(loom_weights_master(wd), loom_weights_master_const(ws), (size_t)loom_weights_count(ws) * sizeof(float));
    loom_weights_touch(wd);
  }
  return loom_layer_set_dtype(dst, loom_layer_get_dtype(src), err);
}

LOOM_API loom_net *loom_splice(const loom_net *a, const loom_net *b, uint64_t seed, double threshold,
                               int64_t *taken, loom_error *err) {
  if (taken) *taken = 0;
  if (!a || !b) {
    loom_error_set(err, LOOM_ERR_INVALID, _("a splice needs two parent networks"));
    return NULL;
  }
  if (!(threshold >= 0 && threshold <= 1)) {
    loom_error_set(err, LOOM_ERR_INVALID, _("the splice threshold must lie between 0 and 1, got %g"), threshold);
    return NULL;
  }
  int64_t out = evolve_out_numel(a);
  if (out < 1 || evolve_out_numel(b) < 1) {
    loom_error_set(err, LOOM_ERR_INVALID, _("both parents must pass shape inference before a splice"));
    return NULL;
  }
  loom_dna_result *dna = loom_dna_compare_nets(a, b, threshold, err);
  if (!dna) return NULL;
  loom_net *child = loom_net_clone(a, err);
  int64_t na = loom_dna_result_n_a(dna), nb = loom_dna_result_n_b(dna);
  bool *used = child ? calloc((size_t)(nb ? nb : 1), sizeof *used) : NULL;
  if (child && !used) loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory splicing %lld layers"), (long long)nb);
  loom_rng rng;
  loom_rng_seed(&rng, loom_rng_derive(seed, 0x5011ceu));
  int64_t count = 0;
  /* Snapshots list the occupied slots in flat order: row i of the matrix is
   * the i-th layer of A, column j the j-th layer of B. */
  for (int64_t i = 0; used && i < na; i++) {
    loom_layer *la = loom_net_layer_at(child, loom_dna_result_slot_a(dna, i).at);
    int64_t best = -1;
    for (int64_t j = 0; j < nb; j++) {
      if (used[j]) continue;
      loom_layer *lb = loom_net_layer_at(b, loom_dna_result_slot_b(dna, j).at);
      if (!exchangeable(la, lb)) continue;
      if (best < 0 || loom_dna_result_at(dna, i, j) > loom_dna_result_at(dna, i, best)) best = j;
    }
    if (best < 0 || !(loom_dna_result_at(dna, i, best) >= threshold)) continue;
    used[best] = true;
    /* One coin per pair, drawn whatever it shows, so the pairs after it
     * see the same stream. */
    if (loom_rng_below(&rng, 2) == 0) continue;
    if (take_weights(la, loom_net_layer_at(b, loom_dna_result_slot_b(dna, best).at), err)) {
      loom_net_free(child);
      child = NULL;
      break;
    }
    count++;
  }
  free(used);
  loom_dna_result_free(dna);
  /* Shapes did not change, but the weights did: inference re-checks the
   * network (and rebuilds what the dtype change unbuilt). */
  if (child && evolve_check(child, out, seed, err)) {
    loom_net_free(child);
    return NULL;
  }
  if (child && taken) *taken = count;
  return child;
}
