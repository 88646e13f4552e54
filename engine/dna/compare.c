/*
 * Comparing two snapshots: the similarity matrix, the shared coordinates,
 * the overall index and the logic shifts (docs/dna.md).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "dna/dna-internal.h"

struct loom_dna_result {
  double threshold, similarity;
  int64_t n_a, n_b, n_shared, n_shifts;
  loom_dna_slot *slots_a, *slots_b;
  double *matrix;
  loom_dna_pair *shared;
  loom_dna_shift *shifts;
};

/* Columns of B are visited in blocks of about this many bytes of signature,
 * so a block stays in cache while every row of A streams past it. */
#define DNA_BLOCK_BYTES ((size_t)1 << 20)

static void fill_matrix(const loom_dna_snapshot *a, const loom_dna_snapshot *b, double *m) {
  int64_t j0 = 0;
  while (j0 < b->n) {
    int64_t j1 = j0;
    size_t bytes = 0;
    do bytes += (size_t)b->sigs[j1++].info.values * sizeof(float);
    while (j1 < b->n && bytes < DNA_BLOCK_BYTES);
    for (int64_t i = 0; i < a->n; i++)
      for (int64_t j = j0; j < j1; j++) m[i * b->n + j] = dna_similarity(&a->sigs[i], &b->sigs[j]);
    j0 = j1;
  }
}


/* Both snapshots list slots in flat order, and flat order is the
 * lexicographic order of (z, y, x, l) whatever the grid's size, so one merge
 * pass pairs the shared coordinates even when the grids differ. */
static int coord_cmp(loom_coord p, loom_coord q) {
  int d[4] = {p.z - q.z, p.y - q.y, p.x - q.x, p.l - q.l};
  for (int k = 0; k < 4; k++)
    if (d[k]) return d[k] < 0 ? -1 : 1;
  return 0;
}

/* own[i]: the slot of B at A's slot i's coordinate, or -1. */
static int64_t pair_shared(const loom_dna_snapshot *a, const loom_dna_snapshot *b, int64_t *own) {
  int64_t n = 0, j = 0;
  for (int64_t i = 0; i < a->n; i++) {
    own[i] = -1;
    while (j < b->n && coord_cmp(b->sigs[j].info.at, a->sigs[i].info.at) < 0) j++;
    if (j < b->n && loom_coord_equal(b->sigs[j].info.at, a->sigs[i].info.at)) {
      own[i] = j;
      n++;
    }
  }
  return n;
}

/* A shift needs a best match that is unique (strictly above every other
 * slot of B: identical candidates give no evidence where the logic went),
 * above the threshold, strictly better than the own coordinate's score, and
 * somewhere else. */
static bool find_shift(const loom_dna_result *r, int64_t i, int64_t own, loom_dna_shift *out) {
  const double *row = r->matrix + i * r->n_b;
  int64_t best = -1;
  bool unique = false;
  for (int64_t j = 0; j < r->n_b; j++) {
    if (best < 0 || row[j] > row[best]) {
      best = j;
      unique = true;
    } else if (row[j] == row[best]) {
      unique = false;
    }
  }
  if (best < 0 || !unique || best == own || !(row[best] > r->threshold)) return false;
  double own_score = own >= 0 ? row[own] : 0;
  if (!(row[best] > own_score)) return false;
  *out = (loom_dna_shift){r->slots_a[i].at, r->slots_b[best].at, i, best, row[best], own_score};
  return true;
}

/* Mean best match of every slot of A in B and of every slot of B in A:
 * 1 for identical networks, position-blind (moves show up as shifts). */
static double overall(const loom_dna_result *r) {
  if (r->n_a + r->n_b == 0) return 1;
  double sum = 0;
  for (int64_t i = 0; i < r->n_a; i++) {
    double best = 0;
    for (int64_t j = 0; j < r->n_b; j++) best = fmax(best, r->matrix[i * r->n_b + j]);
    sum += best;
  }
  for (int64_t j = 0; j < r->n_b; j++) {
    double best = 0;
    for (int64_t i = 0; i < r->n_a; i++) best = fmax(best, r->matrix[i * r->n_b + j]);
    sum += best;
  }
  return sum / (double)(r->n_a + r->n_b);
}

LOOM_API void loom_dna_result_free(loom_dna_result *r) {
  if (!r) return;
  free(r->slots_a);
  free(r->slots_b);
  free(r->matrix);
  free(r->shared);
  free(r->shifts);
  free(r);
}

static loom_dna_result *nomem(loom_dna_result *r, int64_t *own, loom_error *err) {
  loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory comparing %lld × %lld layers"), (long long)r->n_a,
                 (long long)r->n_b);
  free(own);
  loom_dna_result_free(r);
  return NULL;
}

LOOM_API loom_dna_result *loom_dna_compare(const loom_dna_snapshot *a, const loom_dna_snapshot *b,
                                           double threshold, loom_error *err) {
  if (!a || !b) {
    loom_error_set(err, LOOM_ERR_INVALID, _("two DNA snapshots are needed for a comparison"));
    return NULL;
  }
  if (!(threshold >= 0 && threshold <= 1)) {
    loom_error_set(err, LOOM_ERR_INVALID, _("the shift threshold must lie between 0 and 1, got %g"), threshold);
    return NULL;
  }
  /* Snapshots hold at most 2^24 slots each (the grid's bound), but the
   * matrix is their product: check it before allocating. */
  if (b->n > 0 && a->n > (int64_t)(SIZE_MAX / sizeof(double)) / b->n) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("a %lld × %lld similarity matrix is too large"), (long long)a->n,
                   (long long)b->n);
    return NULL;
  }
  loom_dna_result *r = calloc(1, sizeof *r);
  if (!r) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory comparing %lld × %lld layers"), (long long)a->n,
                   (long long)b->n);
    return NULL;
  }
  r->threshold = threshold;
  r->n_a = a->n;
  r->n_b = b->n;
  size_t na = (size_t)a->n, nb = (size_t)b->n;
  int64_t *own = malloc((na ? na : 1) * sizeof *own);
  r->slots_a = malloc((na ? na : 1) * sizeof *r->slots_a);
  r->slots_b = malloc((nb ? nb : 1) * sizeof *r->slots_b);
  r->matrix = malloc((na * nb > 0 ? na * nb : 1) * sizeof *r->matrix);
  r->shifts = malloc((na ? na : 1) * sizeof *r->shifts);
  if (!own || !r->slots_a || !r->slots_b || !r->matrix || !r->shifts) return nomem(r, own, err);
  for (size_t i = 0; i < na; i++) r->slots_a[i] = a->sigs[i].info;
  for (size_t j = 0; j < nb; j++) r->slots_b[j] = b->sigs[j].info;

  fill_matrix(a, b, r->matrix);
  r->n_shared = pair_shared(a, b, own);
  r->shared = malloc((size_t)(r->n_shared ? r->n_shared : 1) * sizeof *r->shared);
  if (!r->shared) return nomem(r, own, err);
  int64_t k = 0;
  for (int64_t i = 0; i < r->n_a; i++) {
    if (own[i] >= 0)
      r->shared[k++] = (loom_dna_pair){r->slots_a[i].at, i, own[i], r->matrix[i * r->n_b + own[i]]};
    if (find_shift(r, i, own[i], &r->shifts[r->n_shifts])) r->n_shifts++;
  }
  r->similarity = overall(r);
  free(own);
  return r;
}

LOOM_API loom_dna_result *loom_dna_compare_nets(const loom_net *a, const loom_net *b, double threshold,
                                                loom_error *err) {
  loom_dna_snapshot *sa = loom_dna_snapshot_new(a, 0, err);
  loom_dna_snapshot *sb = sa ? loom_dna_snapshot_new(b, 0, err) : NULL;
  loom_dna_result *r = sb ? loom_dna_compare(sa, sb, threshold, err) : NULL;
  loom_dna_snapshot_free(sa);
  loom_dna_snapshot_free(sb);
  return r;
}

/* ---- accessors --------------------------------------------------------- */

LOOM_API double loom_dna_result_threshold(const loom_dna_result *r) { return r ? r->threshold : NAN; }
LOOM_API double loom_dna_result_similarity(const loom_dna_result *r) { return r ? r->similarity : NAN; }
LOOM_API int64_t loom_dna_result_n_a(const loom_dna_result *r) { return r ? r->n_a : 0; }
LOOM_API int64_t loom_dna_result_n_b(const loom_dna_result *r) { return r ? r->n_b : 0; }
LOOM_API const double *loom_dna_result_matrix(const loom_dna_result *r) { return r ? r->matrix : NULL; }
LOOM_API int64_t loom_dna_result_n_shared(const loom_dna_result *r) { return r ? r->n_shared : 0; }
LOOM_API int64_t loom_dna_result_n_shifts(const loom_dna_result *r) { return r ? r->n_shifts : 0; }

LOOM_API loom_dna_slot loom_dna_result_slot_a(const loom_dna_result *r, int64_t i) {
  return r && i >= 0 && i < r->n_a ? r->slots_a[i] : (loom_dna_slot){0};
}

LOOM_API loom_dna_slot loom_dna_result_slot_b(const loom_dna_result *r, int64_t j) {
  return r && j >= 0 && j < r->n_b ? r->slots_b[j] : (loom_dna_slot){0};
}

LOOM_API double loom_dna_result_at(const loom_dna_result *r, int64_t i, int64_t j) {
  if (!r || i < 0 || i >= r->n_a || j < 0 || j >= r->n_b) return NAN;
  return r->matrix[i * r->n_b + j];
}

LOOM_API loom_dna_pair loom_dna_result_shared(const loom_dna_result *r, int64_t k) {
  return r && k >= 0 && k < r->n_shared ? r->shared[k] : (loom_dna_pair){0};
}

LOOM_API loom_dna_shift loom_dna_result_shift(const loom_dna_result *r, int64_t k) {
  return r && k >= 0 && k < r->n_shifts ? r->shifts[k] : (loom_dna_shift){0};
}
