#include "layers/softmax-rows.h"

#include <math.h>
#include <stdio.h>

#include "core/i18n.h"

void softmax_row_forward(const float *x, float *y, int64_t n, double scale, const float *keep) {
  /* The largest kept logit is subtracted so exp never overflows; with scale > 0
   * the largest of scale·x is scale times the largest x. */
  double top = -INFINITY;
  for (int64_t i = 0; i < n; i++)
    if (!keep || keep[i] != 0.0f)
      if (x[i] > top) top = x[i];
  double sum = 0.0;
  for (int64_t i = 0; i < n; i++) {
    if (keep && keep[i] == 0.0f) continue;
    sum += exp(scale * ((double)x[i] - top));
  }
  double inv = 1.0 / sum;
  for (int64_t i = 0; i < n; i++)
    y[i] = (keep && keep[i] == 0.0f) ? 0.0f : (float)(exp(scale * ((double)x[i] - top)) * inv);
}

void softmax_row_f64(const float *x, double *p, int64_t n, double scale) {
  double top = -INFINITY;
  for (int64_t i = 0; i < n; i++)
    if (x[i] > top) top = x[i];
  double sum = 0.0;
  for (int64_t i = 0; i < n; i++) {
    p[i] = exp(scale * ((double)x[i] - top));
    sum += p[i];
  }
  double inv = 1.0 / sum;
  for (int64_t i = 0; i < n; i++) p[i] *= inv;
}

void softmax_row_backward(const float *y, const float *dy, float *dx, int64_t n, double scale) {
  double dot = 0.0;
  for (int64_t i = 0; i < n; i++) dot += (double)y[i] * dy[i];
  for (int64_t i = 0; i < n; i++) dx[i] = (float)(scale * y[i] * ((double)dy[i] - dot));
}

int64_t rows_last_dim(const loom_shape *s) { return s->rank > 0 ? s->d[s->rank - 1] : 0; }

int64_t rows_per_sample(const loom_shape *s) {
  int64_t n = rows_last_dim(s);
  return n > 0 ? loom_shape_numel(s) / n : 0;
}

int64_t rows_grain(int64_t n) {
  int64_t g = 16384 / (n > 0 ? n : 1);
  return g > 0 ? g : 1;
}

int rows_check_shape(const loom_layer *l, const loom_shape *in, loom_error *err) {
  char where[128], shape[96];
  bool ok = in->rank >= 1 && in->rank <= LOOM_MAX_DIMS;
  for (int i = 0; ok && i < in->rank; i++) ok = in->d[i] >= 1;
  if (!ok)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: input shape %s: expected at least one dimension, all of size 1 or more"),
                          layer_where(l, where, sizeof where), loom_shape_format(in, shape, sizeof shape));
  return LOOM_OK;
}

int rows_check_finite(const loom_layer *l, const float *x, int64_t batch, int64_t rows, int64_t n,
                      const float *keep, int64_t keep_len, loom_error *err) {
  for (int64_t b = 0; b < batch; b++)
    for (int64_t r = 0; r < rows; r++) {
      const float *row = x + (b * rows + r) * n;
      const float *k = keep ? keep + (keep_len == n ? 0 : r * n) : NULL;
      for (int64_t i = 0; i < n; i++) {
        if (k && k[i] == 0.0f) continue;
        if (!isfinite(row[i])) {
          char where[128];
          return loom_error_set(err, LOOM_ERR_NONFINITE,
                                _("%s: input sample %lld, row %lld, entry %lld is %g; expected a finite value"),
                                layer_where(l, where, sizeof where), (long long)b, (long long)r, (long long)i,
                                (double)row[i]);
        }
      }
    }
  return LOOM_OK;
}

const char *rows_format_number(double v, char *buf, size_t size) {
  snprintf(buf, size, "%g", v);
  return buf;
}

void rows_parallel(const loom_ctx *ctx, int64_t n, int64_t grain, loom_range_fn fn, void *arg) {
  loom_pool_for(ctx ? ctx->pool : NULL, n, grain, fn, arg);
}
