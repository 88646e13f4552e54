/*
 * Normalisation: layernorm (PyTorch's LayerNorm) and rmsnorm (x / sqrt(mean(x²)
 * + eps) · w). Both normalise each row of D values, where a row is the last
 * dimension of the sample ("last", LayerNorm(normalized_shape=last dim)) or
 * the whole sample ("all", normalized_shape = the sample shape). The affine
 * weight (and layernorm's bias) hold one value per row entry and stay float32
 * at every layer dtype. Statistics are summed in float64 in a fixed order.
 * docs/layers.md has the formulas.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "layers/registry.h"

enum { P_OVER, P_EPS, P_AFFINE };
enum { W_WEIGHT, W_BIAS };
enum { OVER_LAST, OVER_ALL };

/* Columns of the weight gradient summed together by one range. */
#define COL_BLOCK 256

static const char *const over_choices[] = {"last", "all", NULL};

static const loom_param_spec layernorm_params[] = {
  {"over", N_("Normalize over"), N_("The last dimension of each sample, or the whole sample"), LOOM_PARAM_ENUM, 0, 1,
   OVER_LAST, over_choices, 0},
  {"eps", N_("Epsilon"), N_("Added to the variance before the square root, for stability"), LOOM_PARAM_FLOAT, 1e-12,
   1.0, 1e-5, NULL, 0},
  {"elementwise_affine", N_("Affine"), N_("Learn a scale and an offset per normalized value"), LOOM_PARAM_BOOL, 0, 1,
   1, NULL, 0},
};

static const loom_param_spec rmsnorm_params[] = {
  {"over", N_("Normalize over"), N_("The last dimension of each sample, or the whole sample"), LOOM_PARAM_ENUM, 0, 1,
   OVER_LAST, over_choices, 0},
  {"eps", N_("Epsilon"), N_("Added to the mean square before the square root, for stability"), LOOM_PARAM_FLOAT,
   1e-12, 1.0, 1e-6, NULL, 0},
  {"elementwise_affine", N_("Affine"), N_("Learn a scale per normalized value"), LOOM_PARAM_BOOL, 0, 1, 1, NULL, 0},
};

static bool is_layernorm(const loom_layer *l) { return l->type == &loom_layer_layernorm; }

/* Values per normalised row. */
static int64_t row_length(const loom_layer *l, const loom_shape *in) {
  return layer_int(l, P_OVER) == OVER_ALL ? loom_shape_numel(in) : in->d[in->rank - 1];
}

static int norm_build(loom_layer *l, const loom_shape *in, uint64_t seed, loom_error *err) {
  char where[128], shape[96];
  if (in->rank < 1 || loom_shape_numel(in) < 1)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: needs an input with at least one value; got %s"),
                          layer_where(l, where, sizeof where), loom_shape_format(in, shape, sizeof shape));
  int64_t d = row_length(l, in);
  l->out_shape = *in;
  if (!layer_int(l, P_AFFINE)) {
    layer_weights_truncate(l, 0);
    return LOOM_OK;
  }
  int rc = layer_weights_ensure(l, W_WEIGHT, "weight", 1, d, false, LAYER_INIT_ONE, d, seed, err);
  if (rc) return rc;
  if (is_layernorm(l)) return layer_weights_ensure(l, W_BIAS, "bias", 1, d, false, LAYER_INIT_ZERO, d, seed, err);
  layer_weights_truncate(l, 1);
  return LOOM_OK;
}

typedef struct norm_job {
  bool layernorm;
  int64_t d, rows;
  double eps;
  const float *x, *dy, *w, *b;
  float *y, *dx, *dw, *db;
  double *stats; /* per row: mean (0 for rmsnorm) and the reciprocal root */
} norm_job;

/* Mean and 1/sqrt(var + eps) (layernorm) or 0 and 1/sqrt(mean(x²) + eps). */
static void row_stats(const norm_job *j, const float *x, double *mean, double *rstd) {
  double m = 0.0, v = 0.0;
  if (j->layernorm) {
    for (int64_t i = 0; i < j->d; i++) m += x[i];
    m /= (double)j->d;
  }
  for (int64_t i = 0; i < j->d; i++) {
    double c = x[i] - m;
    v += c * c;
  }
  *mean = m;
  *rstd = 1.0 / sqrt(v / (double)j->d + j->eps);
}

static void forward_range(void *arg, int64_t begin, int64_t end) {
  const norm_job *j = arg;
  for (int64_t r = begin; r < end; r++) {
    const float *x = j->x + r * j->d;
    float *y = j->y + r * j->d;
    double mean, rstd;
    row_stats(j, x, &mean, &rstd);
    for (int64_t i = 0; i < j->d; i++) {
      double v = (x[i] - mean) * rstd;
      if (j->w) v *= j->w[i];
      if (j->b) v += j->b[i];
      y[i] = (float)v;
    }
  }
}

/* Per row: the statistics (kept for the weight gradient) and dx.
 * With g = dy·w and x̂ = (x − mean)·rstd:
 *   layernorm dx = rstd·(g − mean(g) − x̂·mean(g·x̂))
 *   rmsnorm   dx = rstd·(g − x̂·mean(g·x̂)) */
static void backward_rows_range(void *arg, int64_t begin, int64_t end) {
  const norm_job *j = arg;
  for (int64_t r = begin; r < end; r++) {
    const float *x = j->x + r * j->d, *dy = j->dy + r * j->d;
    double mean, rstd;
    row_stats(j, x, &mean, &rstd);
    j->stats[2 * r] = mean;
    j->stats[2 * r + 1] = rstd;
    if (!j->dx) continue;
    double sum_g = 0.0, sum_gx = 0.0;
    for (int64_t i = 0; i < j->d; i++) {
      double g = j->w ? (double)dy[i] * j->w[i] : (double)dy[i];
      sum_g += g;
      sum_gx += g * (x[i] - mean) * rstd;
    }
    double mean_g = j->layernorm ? sum_g / (double)j->d : 0.0, mean_gx = sum_gx / (double)j->d;
    float *dx = j->dx + r * j->d;
    for (int64_t i = 0; i < j->d; i++) {
      double g = j->w ? (double)dy[i] * j->w[i] : (double)dy[i];
      double xhat = (x[i] - mean) * rstd;
      dx[i] = (float)(rstd * (g - mean_g - xhat * mean_gx));
    }
  }
}

/* Column blocks of dw += Σ_rows dy·x̂ and db += Σ_rows dy, rows in ascending order. */
static void param_grad_range(void *arg, int64_t begin, int64_t end) {
  const norm_job *j = arg;
  for (int64_t blk = begin; blk < end; blk++) {
    int64_t c0 = blk * COL_BLOCK, c1 = c0 + COL_BLOCK < j->d ? c0 + COL_BLOCK : j->d;
    double acc_w[COL_BLOCK] = {0}, acc_b[COL_BLOCK] = {0};
    for (int64_t r = 0; r < j->rows; r++) {
      const float *x = j->x + r * j->d, *dy = j->dy + r * j->d;
      double mean = j->stats[2 * r], rstd = j->stats[2 * r + 1];
      for (int64_t c = c0; c < c1; c++) {
        acc_w[c - c0] += dy[c] * ((x[c] - mean) * rstd);
        acc_b[c - c0] += dy[c];
      }
    }
    for (int64_t c = c0; c < c1; c++) {
      j->dw[c] += (float)acc_w[c - c0];
      if (j->db) j->db[c] += (float)acc_b[c - c0];
    }
  }
}

static int norm_job_init(loom_layer *l, norm_job *j, int64_t batch, loom_error *err) {
  j->layernorm = is_layernorm(l);
  j->d = row_length(l, &l->in_shape);
  j->rows = batch * (loom_shape_numel(&l->in_shape) / j->d);
  j->eps = layer_float(l, P_EPS);
  if (l->n_weights > W_WEIGHT && !(j->w = layer_weight_values(l, W_WEIGHT, err)))
    return err ? err->code : LOOM_ERR_INVALID;
  if (l->n_weights > W_BIAS && !(j->b = layer_weight_values(l, W_BIAS, err)))
    return err ? err->code : LOOM_ERR_INVALID;
  return LOOM_OK;
}

/* Enough rows per range to amortise the hand-off, independent of the pool. */
static int64_t row_grain(int64_t d) { return 1 + 8192 / d; }

static int norm_forward(loom_layer *l, const loom_ctx *ctx, const float *x, float *y, int64_t batch,
                        loom_error *err) {
  norm_job j = {.x = x, .y = y};
  int rc = norm_job_init(l, &j, batch, err);
  if (rc) return rc;
  loom_pool_for(ctx ? ctx->pool : NULL, j.rows, row_grain(j.d), forward_range, &j);
  return LOOM_OK;
}

static int norm_backward(loom_layer *l, const loom_ctx *ctx, const float *x, const float *y, const float *dy,
                         float *dx, int64_t batch, loom_error *err) {
  loom_pool *pool = ctx ? ctx->pool : NULL;
  norm_job j = {.x = x, .dy = dy, .dx = dx};
  int rc = norm_job_init(l, &j, batch, err);
  if (rc || j.rows == 0) return rc;
  size_t bytes;
  if (__builtin_mul_overflow((size_t)j.rows, 2 * sizeof(double), &bytes) || !(j.stats = malloc(bytes))) {
    char where[128];
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for the statistics of %lld rows"),
                          layer_where(l, where, sizeof where), (long long)j.rows);
  }
  loom_pool_for(pool, j.rows, row_grain(j.d), backward_rows_range, &j);
  if (j.w) {
    j.dw = l->grad[W_WEIGHT];
    j.db = l->n_weights > W_BIAS ? l->grad[W_BIAS] : NULL;
    loom_pool_for(pool, (j.d + COL_BLOCK - 1) / COL_BLOCK, 1, param_grad_range, &j);
  }
  free(j.stats);
  return LOOM_OK;
}

/* Per sample: layernorm ≈ mean, centre, square, sum, scale (5/value) and the
 * affine pair (2/value); rmsnorm ≈ square, sum, scale (3/value) and the scale. */
static int64_t norm_flops(const loom_layer *l) {
  int64_t n = l->built ? loom_shape_numel(&l->in_shape) : 0;
  int64_t per = is_layernorm(l) ? 5 : 3;
  if (layer_int(l, P_AFFINE)) per += is_layernorm(l) ? 2 : 1;
  return n * per;
}

static char *norm_describe(const loom_layer *l, char *buf, size_t size) {
  char shape[96] = "";
  if (l->built) snprintf(shape, sizeof shape, " %lld", (long long)row_length(l, &l->in_shape));
  /* TRANSLATORS: appended to a layer summary such as "layernorm over last 64, eps 1e-05" when
     the layer has a learned scale and offset (the parameter "Affine"). */
  const char *affine = layer_int(l, P_AFFINE) ? _(", affine") : "";
  /* TRANSLATORS: layer summary, e.g. "layernorm over last 64, eps 1e-05, affine": the layer type
     name, the "over" option's stable name ("last" or "all") directly followed by the row length
     when known (" 64"), epsilon, then the optional ", affine". */
  snprintf(buf, size, _("%s over %s%s, eps %g%s"), l->type->name, over_choices[layer_int(l, P_OVER)], shape,
           layer_float(l, P_EPS), affine);
  return buf;
}

const loom_layer_type loom_layer_layernorm = {
  .id = 60,
  .name = "layernorm",
  .label = N_("Layer normalization"),
  .group = N_("Normalization"),
  .description = N_("Shifts and scales each row to zero mean and unit variance, then applies a learned scale and "
                    "offset."),
  .flags = LOOM_LAYER_WEIGHTED,
  .params = layernorm_params,
  .n_params = (int)(sizeof layernorm_params / sizeof layernorm_params[0]),
  .build = norm_build,
  .forward = norm_forward,
  .backward = norm_backward,
  .flops = norm_flops,
  .describe = norm_describe,
};

const loom_layer_type loom_layer_rmsnorm = {
  .id = 61,
  .name = "rmsnorm",
  .label = N_("RMS normalization"),
  .group = N_("Normalization"),
  .description = N_("Divides each row by its root mean square, then applies a learned scale."),
  .flags = LOOM_LAYER_WEIGHTED,
  .params = rmsnorm_params,
  .n_params = (int)(sizeof rmsnorm_params / sizeof rmsnorm_params[0]),
  .build = norm_build,
  .forward = norm_forward,
  .backward = norm_backward,
  .flops = norm_flops,
  .describe = norm_describe,
};
