/*
 * Sparse probability maps over the last dimension, both exact and sort-based.
 *
 * sparsemax (Martins & Astudillo 2016): the Euclidean projection of z onto the
 * simplex, p = [z − τ]₊. With z sorted descending, the support size is
 * k = max{k : 1 + k·z_(k) > Σ_{j≤k} z_(j)} and τ = (Σ_{j≤k} z_(j) − 1)/k.
 * Jacobian on the support S: diag(s) − s sᵀ/|S| (s the indicator of S), so
 * dx_i = dy_i − mean_{j∈S} dy_j on S and 0 elsewhere.
 *
 * entmax15 (Peters, Niculae & Martins 2019): α-entmax with α = 1.5,
 * p = [z/2 − τ]₊², τ found exactly by their sort-based algorithm: with
 * x = z/2 − max(z/2) sorted descending, for every prefix of length ρ
 *     τ(ρ) = mean_ρ − √max(0, (1 − ρ·(meansq_ρ − mean_ρ²))/ρ),
 * the support size is #{ρ : τ(ρ) ≤ x_(ρ)} and τ = τ(support size).
 * Jacobian (via the gppr formula): with s = √p, J = diag(s) − s sᵀ/Σs.
 *
 * Both produce exact zeros outside the support. Both run in float64 per row;
 * the backward needs only the output y (the support is {y > 0}).
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/i18n.h"
#include "layers/registry.h"
#include "layers/softmax-rows.h"

typedef struct sparse_job {
  const float *x, *y, *dy;
  float *out; /* y in forward, dx in backward */
  int64_t n;
  bool entmax;
  atomic_int out_of_memory;
} sparse_job;

static int descending(const void *a, const void *b) {
  double u = *(const double *)a, v = *(const double *)b;
  return (u < v) - (u > v);
}

static void sparsemax_row(const float *x, float *y, int64_t n, double *sorted) {
  for (int64_t i = 0; i < n; i++) sorted[i] = x[i];
  qsort(sorted, (size_t)n, sizeof *sorted, descending);
  double cumsum = 0.0, tau = sorted[0] - 1.0;
  for (int64_t k = 1; k <= n; k++) {
    cumsum += sorted[k - 1];
    /* The condition holds exactly for a prefix of k; the last k where it holds
     * is the support size. */
    if (1.0 + (double)k * sorted[k - 1] > cumsum) tau = (cumsum - 1.0) / (double)k;
    else break;
  }
  for (int64_t i = 0; i < n; i++) {
    double p = (double)x[i] - tau;
    y[i] = p > 0.0 ? (float)p : 0.0f;
  }
}

/* sorted and taus are scratch rows of n doubles. */
static void entmax15_row(const float *x, float *y, int64_t n, double *sorted, double *taus) {
  double top = -INFINITY;
  for (int64_t i = 0; i < n; i++)
    if (x[i] > top) top = x[i];
  for (int64_t i = 0; i < n; i++) sorted[i] = ((double)x[i] - top) / 2.0;
  qsort(sorted, (size_t)n, sizeof *sorted, descending);
  double sum = 0.0, sum_sq = 0.0;
  int64_t support = 0;
  for (int64_t rho = 1; rho <= n; rho++) {
    double v = sorted[rho - 1];
    sum += v;
    sum_sq += v * v;
    double mean = sum / (double)rho, mean_sq = sum_sq / (double)rho;
    double ss = (double)rho * (mean_sq - mean * mean);
    double delta = (1.0 - ss) / (double)rho;
    taus[rho - 1] = mean - sqrt(delta > 0.0 ? delta : 0.0);
    support += taus[rho - 1] <= v;
  }
  /* ρ = 1 always qualifies (τ(1) = x_(1) − 1), so support >= 1. */
  double tau_star = taus[support - 1];
  for (int64_t i = 0; i < n; i++) {
    double d = ((double)x[i] - top) / 2.0 - tau_star;
    y[i] = d > 0.0 ? (float)(d * d) : 0.0f;
  }
}

static void sparse_forward_range(void *arg, int64_t begin, int64_t end) {
  sparse_job *j = arg;
  double *sorted = malloc((size_t)j->n * 2 * sizeof *sorted);
  if (!sorted) {
    atomic_store(&j->out_of_memory, 1);
    return;
  }
  for (int64_t r = begin; r < end; r++) {
    if (j->entmax) entmax15_row(j->x + r * j->n, j->out + r * j->n, j->n, sorted, sorted + j->n);
    else sparsemax_row(j->x + r * j->n, j->out + r * j->n, j->n, sorted);
  }
  free(sorted);
}

static void sparse_backward_range(void *arg, int64_t begin, int64_t end) {
  const sparse_job *j = arg;
  for (int64_t r = begin; r < end; r++) {
    const float *y = j->y + r * j->n, *dy = j->dy + r * j->n;
    float *dx = j->out + r * j->n;
    /* w is the Jacobian's s: the support indicator (sparsemax) or √y (entmax). */
    double sw = 0.0, swdy = 0.0;
    for (int64_t i = 0; i < j->n; i++) {
      double w = y[i] > 0.0f ? (j->entmax ? sqrt((double)y[i]) : 1.0) : 0.0;
      sw += w;
      swdy += w * dy[i];
    }
    double q = swdy / sw;
    for (int64_t i = 0; i < j->n; i++) {
      double w = y[i] > 0.0f ? (j->entmax ? sqrt((double)y[i]) : 1.0) : 0.0;
      dx[i] = (float)(w * ((double)dy[i] - q));
    }
  }
}

static int sparse_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  int rc = rows_check_shape(l, in, err);
  if (rc) return rc;
  l->out_shape = *in;
  return LOOM_OK;
}

static int sparse_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                          loom_error *err) {
  sparse_job j = {.x = x, .out = y, .n = rows_last_dim(&l->in_shape), .entmax = l->type == &loom_layer_entmax15};
  int64_t rows = rows_per_sample(&l->in_shape);
  /* A NaN would make the sort's order undefined. */
  int rc = rows_check_finite(l, x, batch, rows, j.n, NULL, 0, err);
  if (rc) return rc;
  atomic_init(&j.out_of_memory, 0);
  rows_parallel(ctx, batch * rows, rows_grain(j.n), sparse_forward_range, &j);
  if (atomic_load(&j.out_of_memory)) {
    char where[128];
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for a row of %lld entries"),
                          layer_where(l, where, sizeof where), (long long)j.n);
  }
  return LOOM_OK;
}

static int sparse_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                           float *dx, int64_t batch, loom_error *err) {
  if (!dx) return LOOM_OK;
  sparse_job j = {.y = y, .dy = dy, .out = dx, .n = rows_last_dim(&l->in_shape),
                  .entmax = l->type == &loom_layer_entmax15};
  rows_parallel(ctx, batch * rows_per_sample(&l->in_shape), rows_grain(j.n), sparse_backward_range, &j);
  return LOOM_OK;
}

static int64_t sparse_flops(const loom_layer *l) {
  /* Sorting (n·log2 n comparisons) plus about 4 (sparsemax) or 10 (entmax15)
   * operations per entry for the prefix sums, threshold and output. */
  int64_t n = rows_last_dim(&l->in_shape), rows = rows_per_sample(&l->in_shape);
  int64_t log2n = 0;
  while (((int64_t)1 << log2n) < n) log2n++;
  int64_t per_entry = l->type == &loom_layer_entmax15 ? 10 : 4;
  return rows * n * (log2n + per_entry);
}

static char *sparse_describe(const loom_layer *l, char *buf, size_t size) {
  /* TRANSLATORS: layer summary, e.g. "sparsemax over 10": the layer type name, then the row length. */
  if (l->built) snprintf(buf, size, _("%s over %lld"), l->type->name, (long long)rows_last_dim(&l->in_shape));
  else snprintf(buf, size, "%s", l->type->name);
  return buf;
}

const loom_layer_type loom_layer_sparsemax = {
  .id = 96,
  .name = "sparsemax",
  .label = N_("Sparsemax"),
  .group = N_("Softmax"),
  .description = N_("Projects each row onto the probability simplex; small logits get exactly zero probability."),
  .flags = LOOM_LAYER_OUTPUTS_PROBABILITIES,
  .build = sparse_build,
  .forward = sparse_forward,
  .backward = sparse_backward,
  .flops = sparse_flops,
  .describe = sparse_describe,
};

const loom_layer_type loom_layer_entmax15 = {
  .id = 97,
  .name = "entmax15",
  .label = N_("1.5-entmax"),
  .group = N_("Softmax"),
  .description = N_("α-entmax with α = 1.5: between softmax and sparsemax, smooth yet with exact zeros."),
  .flags = LOOM_LAYER_OUTPUTS_PROBABILITIES,
  .build = sparse_build,
  .forward = sparse_forward,
  .backward = sparse_backward,
  .flops = sparse_flops,
  .describe = sparse_describe,
};
