/*
 * The similarity of two slot signatures, in [0, 1] (formulas in docs/dna.md):
 * exact cosine when both layers have the same tensors of the same shapes,
 * the fixed-length profile otherwise, type and size for presence markers.
 */
#include <math.h>

#include "dna/dna-internal.h"

static double clamp01(double v) { return v < 0 ? 0 : v > 1 ? 1 : v; }

/* The cosine clamped to [0, 1]: anti-correlated weights count as unlike. Two
 * zero vectors agree (1); a zero vector against another agrees with nothing.
 * aa and bb come from dna_dot on each vector alone, so a vector compared
 * with an identical copy gives dot == aa == bb and exactly 1. */
static double cosine(double dot, double aa, double bb) {
  if (aa == 0 || bb == 0) return aa == 0 && bb == 0 ? 1 : 0;
  return clamp01(dot / sqrt(aa * bb));
}

static double ratio(int64_t a, int64_t b) {
  if (a == b) return 1;
  if (a <= 0 || b <= 0) return 0;
  return a < b ? (double)a / (double)b : (double)b / (double)a;
}

bool dna_same_layout(const dna_sig *a, const dna_sig *b) {
  if (a->info.n_tensors != b->info.n_tensors) return false;
  for (int k = 0; k < a->info.n_tensors; k++)
    if (a->tensors[k].rows != b->tensors[k].rows || a->tensors[k].cols != b->tensors[k].cols) return false;
  return true;
}

/* How alike two differently shaped layers are in size: the geometric mean of
 * the min/max ratios of the first tensor's rows and columns and of the total
 * number of weights, halved for layers of different types. */
static double shape_factor(const dna_sig *a, const dna_sig *b) {
  double r = ratio(a->tensors[0].rows, b->tensors[0].rows) * ratio(a->tensors[0].cols, b->tensors[0].cols) *
             ratio(a->info.values, b->info.values);
  double f = cbrt(r);
  return a->info.type == b->info.type ? f : 0.5 * f;
}

/* Half distribution (sorted quantiles), half layout (the resampled map):
 * unrelated layers of the same family share a distribution but not a map,
 * so they stay near 0.5·shape_factor, below the default shift threshold. */
static double profile_similarity(const dna_sig *a, const dna_sig *b) {
  double q = cosine(dna_dot(a->quant, b->quant, LOOM_DNA_QUANTILES), a->quant_self, b->quant_self);
  double m = cosine(dna_dot(a->map, b->map, DNA_MAP_CELLS), a->map_self, b->map_self);
  return shape_factor(a, b) * (0.5 * q + 0.5 * m);
}

double dna_similarity(const dna_sig *a, const dna_sig *b) {
  if (a->info.values == 0 || b->info.values == 0) {
    if (a->info.values != 0 || b->info.values != 0) return 0; /* weights against a marker */
    return a->info.type == b->info.type ? ratio(a->out_numel, b->out_numel) : 0;
  }
  if (dna_same_layout(a, b) && a->vec && b->vec) {
    if (a->zero || b->zero) return a->zero && b->zero ? 1 : 0;
    return cosine(dna_dot(a->vec, b->vec, a->info.values), a->vec_self, b->vec_self);
  }
  return profile_similarity(a, b);
}
