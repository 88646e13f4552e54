/*
 * The packed GEMV driver (gemv.h): rows split over the pool in ranges that
 * depend only on the row count; each row is independent, so the thread count
 * never changes a bit.
 */
#include "kernels/gemv.h"

#include <float.h>
#include <math.h>
#include <string.h>

#include "core/dtype-internal.h"
#include "core/i18n.h"
#include "kernels/cpu.h"
#include "kernels/scratch.h"

float loom_gemv_reduce64(float *acc) {
  for (int w = 32; w >= 1; w /= 2)
    for (int k = 0; k < w; k++) acc[k] = acc[k] + acc[k + w];
  return acc[0];
}

typedef struct {
  const loom_kernels *k;
  const loom_dtype_traits *t;
  const uint8_t *packed;
  size_t row_bytes;
  int64_t cols, nscales;
  const float *scales, *x, *lut;
  const float *xf; /* the activations for gemv_acc64 (256 · x for fp8-e4m3, cpu.h); NULL: no fused kernel */
  int nx;          /* activation vectors, cols floats apart; y of vector k at y + k·rows */
  int64_t rows;
  float *y;
} gemv_job;

/* Rows LOOM_GEMV_ROWS at a time against the job's nx activation vectors:
 * the fused kernel may share each activation load between rows, or each
 * row's decode between vectors; every (row, vector) keeps its own order,
 * that of one row against one vector. */
static void gemv_rows(void *arg, int64_t begin, int64_t end) {
  const gemv_job *j = arg;
  const int bits = j->t->bits, nx = j->nx;
  float buf[LOOM_GEMV_BLOCK];
  for (int64_t r0 = begin; r0 < end; r0 += LOOM_GEMV_ROWS) {
    const int nr = (int)(end - r0 < LOOM_GEMV_ROWS ? end - r0 : LOOM_GEMV_ROWS);
    const uint8_t *rows = j->packed + (size_t)r0 * j->row_bytes;
    float scales[LOOM_GEMV_ROWS], acc[LOOM_GEMV_ROWS * LOOM_GEMV_INPUTS][64];
    memset(acc, 0, (size_t)(nr * nx) * sizeof acc[0]); /* only the sums in use: 3 KiB for 4 rows was a cost */
    for (int i = 0; i < nr; i++) scales[i] = j->nscales == 0 ? 1.0f : j->scales[j->nscales == 1 ? 0 : r0 + i];
    int64_t c0 = 0;
    if (j->xf) { /* whole groups of 64 fused, the rest below */
      j->k->gemv_acc64[j->t->id](j->t, rows, j->row_bytes, nr, j->cols / 64, scales, j->xf, j->cols, nx, acc[0]);
      c0 = j->cols / 64 * 64;
    }
    for (int i = 0; i < nr; i++) {
      const uint8_t *row = rows + (size_t)i * j->row_bytes;
      for (int64_t c = c0; c < j->cols; c += LOOM_GEMV_BLOCK) {
        const int64_t len = j->cols - c < LOOM_GEMV_BLOCK ? j->cols - c : LOOM_GEMV_BLOCK;
        j->k->dequantize_row[j->t->id](j->t, row + (size_t)c * (size_t)bits / 8, len, scales[i], j->lut, buf);
        for (int k = 0; k < nx; k++) j->k->dot_acc64(acc[i * nx + k], buf, j->x + k * j->cols + c, len);
      }
      for (int k = 0; k < nx; k++) j->y[k * j->rows + r0 + i] = j->k->gemv_reduce64(acc[i * nx + k]);
    }
  }
}

/* out = 256 · x, exactly, unless a finite |x| exceeds 2^120, where the
 * product could overflow: false then, and the caller decodes a block at a
 * time instead. */
static bool scale_activations(const float *x, int64_t n, float *out) {
  bool ok = true;
  for (int64_t i = 0; i < n; i++) {
    ok &= !(fabsf(x[i]) > 0x1p120f && fabsf(x[i]) <= FLT_MAX);
    out[i] = x[i] * 256.0f;
  }
  return ok;
}

int loom_gemv_packed(loom_pool *pool, loom_dtype d, const uint8_t *packed, int64_t rows, int64_t cols,
                     const float *scales, int64_t nscales, const float *x, float *y, loom_error *err) {
  return loom_gemv_packed_batch(pool, d, packed, rows, cols, scales, nscales, 1, x, y, err);
}

int loom_gemv_packed_batch(loom_pool *pool, loom_dtype d, const uint8_t *packed, int64_t rows, int64_t cols,
                           const float *scales, int64_t nscales, int64_t m, const float *x, float *y,
                           loom_error *err) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  if (!t) return loom_error_set(err, LOOM_ERR_INVALID, _("invalid dtype %d"), (int)d);
  size_t nbytes;
  if (rows < 0 || cols < 0)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("invalid shape %lld × %lld"), (long long)rows, (long long)cols);
  if (m < 0) /* the activations' shape */
    return loom_error_set(err, LOOM_ERR_SHAPE, _("invalid shape %lld × %lld"), (long long)m, (long long)cols);
  int rc = loom_dtype_packed_bytes(d, rows, cols, &nbytes, err);
  if (rc) return rc;
  if (t->scaled ? !scales || (nscales != rows && nscales != 1) : nscales != 0)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s needs %lld scales (one per row) or 1, got %lld"), t->name,
                          (long long)rows, (long long)nscales);
  const float *lut = !t->scaled && t->bits <= 8 ? loom_float_lut(t) : NULL;
  gemv_job job = {
    .k = loom_kernels_get(), .t = t, .packed = packed, .row_bytes = loom_dtype_row_bytes(d, cols),
    .cols = cols, .nscales = t->scaled ? nscales : 0, .scales = scales, .lut = lut, .rows = rows,
  };
  /* About 256 KiB of weights per range: enough work to be worth a thread. */
  const int64_t per_row = (int64_t)job.row_bytes + 1;
  const int64_t grain = per_row >= (INT64_C(1) << 18) ? 1 : (INT64_C(1) << 18) / per_row;
  const bool fused = job.k->gemv_acc64[d] != NULL;
  const bool times256 = fused && d == LOOM_DTYPE_FP8_E4M3 && cols >= 64;
  float *scaled = NULL;
  if (times256) {
    if ((size_t)cols > SIZE_MAX / sizeof(float) / LOOM_GEMV_INPUTS ||
        !(scaled = loom_scratch(LOOM_SCRATCH_GEMV_ACTIVATIONS, (size_t)cols * LOOM_GEMV_INPUTS * sizeof(float))))
      return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for the activations of a %lld-column product"),
                            (long long)cols);
  }
  for (int64_t k = 0; k < m; k += LOOM_GEMV_INPUTS) {
    job.nx = (int)(m - k < LOOM_GEMV_INPUTS ? m - k : LOOM_GEMV_INPUTS);
    job.x = x + k * cols;
    job.y = y + k * rows;
    if (!times256)
      job.xf = fused ? job.x : NULL;
    else /* where 256 · x could overflow, blocks a row at a time */
      job.xf = scale_activations(job.x, (int64_t)job.nx * cols, scaled) ? scaled : NULL;
    loom_pool_for(pool, rows, grain, gemv_rows, &job);
  }
  return 0;
}
