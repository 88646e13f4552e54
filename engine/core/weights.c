/*
 * The weight store: a float32 master and one cached packed copy (+ scales) at
 * the store's dtype; at rest (inference) the packed copy alone, the master
 * recreated from it on demand (the section at the end). The cache is a single slot: switching dtypes rebuilds,
 * which keeps memory at master + one copy; the buffers are kept at exactly the
 * size the byte accounting reports, so what loom_weights_bytes() says is what
 * is allocated.
 */
#include "loom/weights.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype-internal.h"
#include "core/i18n.h"
#include "core/weights-internal.h"
#include "kernels/cpu.h"
#include "loom/pool.h"

struct loom_weights {
  int64_t rows, cols, count;
  float *master; /* NULL at rest (loom_weights_to_inference): the cache is then the only copy */
  char label[128];
  loom_dtype dtype;
  loom_scale_mode mode;
  /* The cache: valid for (dtype, mode, master) as they are now. */
  bool cache_valid;
  uint8_t *packed; /* NULL at float32, whose packed copy is the master itself */
  size_t packed_size;
  float *scales;
  int64_t nscales;
  float *effective; /* dequantized cache, count floats, for the non-float dtypes */
  bool effective_valid;
  /* The master was last changed by loom_weights_touch_finite: its writer
   * checked every value, so morph need not check it again. */
  bool master_finite;
};

static const char default_label[] = "weights";

/* Resizes *p to exactly `size` bytes (freeing at 0); keeps the old buffer on failure. */
static int resize_exact(void **p, size_t *cur, size_t size) {
  if (*cur == size && (*p || size == 0)) return 0;
  if (size == 0) {
    free(*p);
    *p = NULL;
    *cur = 0;
    return 0;
  }
  void *n = realloc(*p, size);
  if (!n) return -1;
  *p = n;
  *cur = size;
  return 0;
}

static void drop_cache(loom_weights *w) {
  free(w->packed);
  free(w->scales);
  free(w->effective);
  w->packed = NULL;
  w->scales = NULL;
  w->effective = NULL;
  w->packed_size = 0;
  w->nscales = 0;
  w->cache_valid = false;
  w->effective_valid = false;
}

LOOM_API loom_weights *loom_weights_new(int64_t rows, int64_t cols, loom_error *err) {
  if (rows < 1 || cols < 1) {
    loom_error_set(err, LOOM_ERR_SHAPE, _("invalid weight shape %lld × %lld"), (long long)rows, (long long)cols);
    return NULL;
  }
  /* The widest packed form (float64, 8 bytes a value) and bit offsets of the
   * narrow ones must fit, not only the master. */
  if (rows > INT64_MAX / cols || rows * cols > INT64_MAX / 64 || (uint64_t)(rows * cols) > SIZE_MAX / 8) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("weights of %lld × %lld values are too large"), (long long)rows,
                   (long long)cols);
    return NULL;
  }
  /* A tensor beyond 2^30 values (4 GiB at float32, twice that with its
   * gradient) is a hostile or mistaken size on any machine this runs on; with
   * overcommit it would not fail here but kill the process when first touched. */
  if (rows * cols > LOOM_WEIGHTS_MAX_VALUES) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("weights of %lld × %lld values exceed the limit of %lld values per tensor"),
                   (long long)rows, (long long)cols, (long long)LOOM_WEIGHTS_MAX_VALUES);
    return NULL;
  }
  loom_weights *w = calloc(1, sizeof *w);
  float *master = calloc((size_t)(rows * cols), sizeof *master);
  if (!w || !master) {
    free(w);
    free(master);
    loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for %lld × %lld weights"), (long long)rows, (long long)cols);
    return NULL;
  }
  w->rows = rows;
  w->cols = cols;
  w->count = rows * cols;
  w->master = master;
  w->dtype = LOOM_DTYPE_FLOAT32;
  w->mode = LOOM_SCALE_PER_ROW;
  memcpy(w->label, default_label, sizeof default_label);
  return w;
}

LOOM_API void loom_weights_free(loom_weights *w) {
  if (!w) return;
  drop_cache(w);
  free(w->master);
  free(w);
}

LOOM_API loom_weights *loom_weights_clone(const loom_weights *w, loom_error *err) {
  loom_weights *c = loom_weights_new(w->rows, w->cols, err);
  if (!c) return NULL;
  if (w->master) {
    memcpy(c->master, w->master, (size_t)w->count * sizeof *w->master);
  } else { /* at rest: so is the copy (its valid cache is copied below) */
    free(c->master);
    c->master = NULL;
  }
  memcpy(c->label, w->label, sizeof c->label);
  c->dtype = w->dtype;
  c->mode = w->mode;
  /* The cache may hold what a model file gave (its own scales), which a
   * re-morph would not reproduce: copy it. */
  if (w->cache_valid) {
    if (w->packed_size) {
      c->packed = malloc(w->packed_size);
      if (!c->packed) goto nomem;
      memcpy(c->packed, w->packed, w->packed_size);
      c->packed_size = w->packed_size;
    }
    if (w->nscales) {
      c->scales = malloc((size_t)w->nscales * sizeof *c->scales);
      if (!c->scales) goto nomem;
      memcpy(c->scales, w->scales, (size_t)w->nscales * sizeof *c->scales);
      c->nscales = w->nscales;
    }
    c->cache_valid = true;
  }
  return c;
nomem:
  loom_weights_free(c);
  loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), w->label);
  return NULL;
}

LOOM_API int64_t loom_weights_rows(const loom_weights *w) { return w->rows; }
LOOM_API int64_t loom_weights_cols(const loom_weights *w) { return w->cols; }
LOOM_API int64_t loom_weights_count(const loom_weights *w) { return w->count; }
LOOM_API float *loom_weights_master(loom_weights *w) {
  if (!w->master && loom_weights_ensure_master(w, NULL)) return NULL;
  return w->master;
}

LOOM_API const float *loom_weights_master_const(const loom_weights *w) {
  /* Recreating the master does not change any value the store stands for
   * (master := dequantize(cache) is what the cache already means), so a
   * reader holding a const store may trigger it; every store is allocated
   * writable by loom_weights_new. */
  if (!w->master && loom_weights_ensure_master((loom_weights *)w, NULL)) return NULL;
  return w->master;
}

LOOM_API void loom_weights_touch(loom_weights *w) {
  /* At rest nobody can have written a master that does not exist: the cache
   * is still the truth and must not be marked stale (it is the only copy). */
  if (!w->master) return;
  /* Buffers stay allocated: training morphs after every step at the same size. */
  w->cache_valid = false;
  w->effective_valid = false;
  w->master_finite = false;
}

void loom_weights_touch_finite(loom_weights *w) {
  loom_weights_touch(w);
  if (w->master) w->master_finite = true;
}

LOOM_API void loom_weights_set_label(loom_weights *w, const char *label) {
  snprintf(w->label, sizeof w->label, "%s", label && *label ? label : default_label);
}

LOOM_API const char *loom_weights_label(const loom_weights *w) { return w->label; }

LOOM_API int loom_weights_set_dtype(loom_weights *w, loom_dtype d, loom_error *err) {
  if (!loom_dtype_traits_get(d))
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: invalid dtype %d"), w->label, (int)d);
  if (d != w->dtype) {
    int rc = loom_weights_ensure_master(w, err); /* at rest the cache is the only copy */
    if (rc) return rc;
    drop_cache(w); /* a different size: do not keep the old copy around */
    w->dtype = d;
  }
  return 0;
}

LOOM_API loom_dtype loom_weights_dtype(const loom_weights *w) { return w->dtype; }

LOOM_API int loom_weights_set_scale_mode(loom_weights *w, loom_scale_mode m, loom_error *err) {
  if (m != LOOM_SCALE_PER_ROW && m != LOOM_SCALE_PER_TENSOR)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: invalid scale mode %d"), w->label, (int)m);
  if (m != w->mode) {
    if (loom_dtype_traits_get(w->dtype)->scaled) {
      int rc = loom_weights_ensure_master(w, err); /* new scales are computed from the master */
      if (rc) return rc;
    }
    w->mode = m;
    if (loom_dtype_traits_get(w->dtype)->scaled) loom_weights_touch(w);
  }
  return 0;
}

LOOM_API loom_scale_mode loom_weights_scale_mode(const loom_weights *w) { return w->mode; }

/* True if any value is NaN or ±inf: it runs on every morph, i.e. after every
 * training step, so it is a vector kernel (kernels/cpu.h). */
static bool any_nonfinite(const float *values, int64_t n) { return loom_kernels_get()->any_nonfinite(values, n); }

/* Checks values [begin, begin + n) of a tensor shaped like w. */
static int report_nonfinite(const loom_weights *w, const float *values, int64_t begin, int64_t n, loom_error *err) {
  if (!any_nonfinite(values + begin, n)) return 0;
  for (int64_t i = begin; i < begin + n; i++) {
    if (isfinite(values[i])) continue;
    const char *what = isnan(values[i]) ? "NaN" : values[i] > 0 ? "+inf" : "-inf";
    return loom_error_set(err, LOOM_ERR_NONFINITE, _("%s: weight at row %lld, column %lld is %s"), w->label,
                          (long long)(i / w->cols), (long long)(i % w->cols), what);
  }
  return 0;
}

/* The row-wise morph of rows [r0, r1): each row checked, scaled and
 * quantized while it is in cache; rows in order, the first bad one
 * reported (NULL err: only the status). The scan of a row for its scale
 * rides on the encode of the row before where the level can, within the
 * range: its first row is scanned alone. */
static int morph_rows(loom_weights *w, int64_t nscales, int64_t r0, int64_t r1, loom_error *err) {
  const size_t row_bytes = loom_dtype_row_bytes(w->dtype, w->cols);
  const loom_dtype_traits *t = loom_dtype_traits_get(w->dtype);
  const loom_kernels *k = loom_kernels_get();
  /* an output beyond the caches written around them where the level can
   * (cpu.h, quantize_row_finite_stream; fenced below, once a range) */
  const loom_quantize_row_fn streaming =
    nscales || w->packed_size < LOOM_STREAM_MIN_BYTES ? NULL : k->quantize_row_finite_stream[w->dtype];
  const loom_quantize_row_fn checked = nscales ? NULL : streaming ? streaming : k->quantize_row_finite[w->dtype];
  const loom_quantize_scan_fn scan_streaming =
    nscales && w->packed_size >= LOOM_STREAM_MIN_BYTES ? k->quantize_row_scan_stream[w->dtype] : NULL;
  const loom_quantize_scan_fn scanning =
    scan_streaming ? scan_streaming : nscales ? k->quantize_row_scan[w->dtype] : NULL;
  if (scanning) {
    if (loom_scaled_row_scale(t, w->master + r0 * w->cols, w->cols, &w->scales[r0]))
      return report_nonfinite(w, w->master, r0 * w->cols, w->cols, err);
    int rc = 0;
    for (int64_t r = r0; r < r1; r++) {
      const float *row = w->master + r * w->cols;
      const bool last = r + 1 == r1;
      bool next_bad = false;
      double stat = 0;
      int64_t bad = 0;
      if (scanning(t, row, w->cols, w->scales[r], w->packed + (size_t)r * row_bytes, &bad,
                   last ? NULL : row + w->cols, &next_bad, &stat)) {
        /* not reached (row r was scanned finite): the generic path's error */
        loom_error_set(err, LOOM_ERR_NONFINITE, _("%s has no code for NaN (row %lld, column %lld)"), t->name,
                       (long long)r, (long long)bad);
        loom_error_prefix(err, "%s", w->label);
        rc = LOOM_ERR_NONFINITE;
        break;
      }
      if (last) break;
      if (next_bad) {
        rc = report_nonfinite(w, w->master, (r + 1) * w->cols, w->cols, err);
        break;
      }
      w->scales[r + 1] = loom_scaled_scale_of_stat(t, stat, w->cols);
    }
    if (scan_streaming) loom_stream_fence(); /* once a range, as below */
    return rc;
  }
  for (int64_t r = r0; r < r1; r++) {
    const float *row = w->master + r * w->cols;
    int rc;
    if (checked) { /* checked and encoded in one pass */
      int64_t bad = 0;
      const int bad_row = checked(t, row, w->cols, 1.0f, w->packed + (size_t)r * row_bytes, &bad);
      if (streaming && (bad_row || r + 1 == r1)) loom_stream_fence();
      if (bad_row) return report_nonfinite(w, w->master, r * w->cols, w->cols, err);
      continue;
    }
    /* Scaled dtypes check the row while computing its scale: one pass
     * less; the others need no check of a master the trainer found finite. */
    if (nscales ? loom_scaled_row_scale(t, row, w->cols, &w->scales[r])
                : !w->master_finite && any_nonfinite(row, w->cols))
      if ((rc = report_nonfinite(w, w->master, r * w->cols, w->cols, err))) return rc;
    rc = loom_dtype_quantize(w->dtype, row, 1, w->cols, nscales ? w->scales + r : NULL, nscales ? 1 : 0,
                             w->packed + (size_t)r * row_bytes, err);
    if (rc) {
      loom_error_prefix(err, "%s", w->label);
      return rc;
    }
  }
  return 0;
}

/* Rows a range of the pool's morph or dequantize takes at least: about
 * 64 KiB of the master, so a small store stays one range. */
static int64_t rows_grain(const loom_weights *w) {
  const int64_t g = ((int64_t)64 << 10) / ((int64_t)sizeof(float) * w->cols);
  return g < 1 ? 1 : g;
}

typedef struct {
  loom_weights *w;
  int64_t nscales;
  int failed; /* set by any range that failed (atomically) */
} morph_job;

static void morph_range(void *arg, int64_t r0, int64_t r1) {
  morph_job *j = arg;
  if (morph_rows(j->w, j->nscales, r0, r1, NULL)) __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
}

static int morph_on(loom_weights *w, loom_pool *pool, loom_error *err) {
  if (w->cache_valid) return 0;
  /* One pass over the master where possible: each row is checked, scaled and
   * quantized while it is in cache (morph runs after every training step). A
   * per-tensor scale needs the whole tensor first, float32 only the check. */
  const int64_t nscales = loom_dtype_scale_count(w->dtype, w->rows, w->mode);
  const bool rowwise = w->dtype != LOOM_DTYPE_FLOAT32 && nscales != 1;
  int rc = rowwise || w->master_finite ? 0 : report_nonfinite(w, w->master, 0, w->count, err);
  if (rc) return rc;
  w->effective_valid = false;
  if (w->dtype == LOOM_DTYPE_FLOAT32) {
    drop_cache(w);
    w->cache_valid = true;
    return 0;
  }
  size_t nbytes;
  if ((rc = loom_dtype_packed_bytes(w->dtype, w->rows, w->cols, &nbytes, err))) return rc;
  size_t scale_size = (size_t)nscales * sizeof(float);
  size_t cur_scale_size = (size_t)w->nscales * sizeof(float);
  if (resize_exact((void **)&w->packed, &w->packed_size, nbytes) ||
      resize_exact((void **)&w->scales, &cur_scale_size, scale_size))
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for the %s copy"), w->label,
                          loom_dtype_name(w->dtype));
  w->nscales = nscales;
  if (!rowwise) {
    w->scales[0] = loom_dtype_compute_scale(w->dtype, w->master, w->count);
    rc = loom_dtype_quantize(w->dtype, w->master, w->rows, w->cols, w->scales, nscales, w->packed, err);
    if (rc) loom_error_prefix(err, "%s", w->label);
  } else if (pool && loom_pool_size(pool) > 1 && w->rows > rows_grain(w)) {
    /* Rows are independent, so ranges on the pool give the same bytes. A
     * row found bad anywhere is rare: the serial pass then finds the first
     * one in order and reports it as it always has. */
    morph_job j = {w, nscales, 0};
    loom_pool_for(pool, w->rows, rows_grain(w), morph_range, &j);
    if (j.failed) rc = morph_rows(w, nscales, 0, w->rows, err);
  } else {
    /* A row found non-finite stops the morph with the cache still invalid,
     * reported at its first bad column: the same error as a whole-tensor
     * check first, rows being checked in order. */
    rc = morph_rows(w, nscales, 0, w->rows, err);
  }
  if (rc) return rc;
  w->cache_valid = true;
  return 0;
}

LOOM_API int loom_weights_morph(loom_weights *w, loom_error *err) { return morph_on(w, NULL, err); }

int loom_weights_morph_on(loom_weights *w, loom_pool *pool, loom_error *err) { return morph_on(w, pool, err); }

typedef struct {
  const loom_weights *w;
  float *dst;
  int failed;
} dequantize_job;

static void dequantize_range(void *arg, int64_t r0, int64_t r1) {
  dequantize_job *j = arg;
  const loom_weights *w = j->w;
  if (loom_dtype_dequantize_part(w->dtype, w->packed, w->rows, w->cols, r0, r1, w->scales, w->nscales, j->dst, NULL))
    __atomic_store_n(&j->failed, 1, __ATOMIC_RELAXED);
}

/* The packed codes dequantized into dst (count floats), on the pool's
 * threads when there is more than a range; an error naming the store. */
static int dequantize_codes(const loom_weights *w, loom_pool *pool, float *dst, loom_error *err) {
  int rc = 0;
  if (pool && loom_pool_size(pool) > 1 && w->rows > rows_grain(w)) {
    dequantize_job j = {w, dst, 0};
    loom_pool_for(pool, w->rows, rows_grain(w), dequantize_range, &j);
    if (j.failed) /* not reached (a morph made the codes and scales): the error, in full */
      rc = loom_dtype_dequantize(w->dtype, w->packed, w->rows, w->cols, w->scales, w->nscales, dst, err);
  } else {
    rc = loom_dtype_dequantize(w->dtype, w->packed, w->rows, w->cols, w->scales, w->nscales, dst, err);
  }
  if (rc) loom_error_prefix(err, "%s", w->label);
  return rc;
}

const float *loom_weights_effective_on(loom_weights *w, loom_pool *pool, loom_error *err) {
  if (morph_on(w, pool, err)) return NULL;
  /* float32 -> float64 -> float32 is exact: both compute with the master. */
  if (w->dtype == LOOM_DTYPE_FLOAT32 || (w->dtype == LOOM_DTYPE_FLOAT64 && w->master)) return w->master;
  if (!w->effective_valid) {
    if (!w->effective && !(w->effective = malloc((size_t)w->count * sizeof *w->effective))) {
      loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), w->label);
      return NULL;
    }
    if (dequantize_codes(w, pool, w->effective, err)) return NULL;
    w->effective_valid = true;
  }
  return w->effective;
}

LOOM_API const float *loom_weights_effective(loom_weights *w, loom_error *err) {
  return loom_weights_effective_on(w, NULL, err);
}

LOOM_API int loom_weights_values_into(loom_weights *w, float *dst, loom_error *err) {
  if (w->master || w->effective_valid) {
    const float *v = loom_weights_effective(w, err);
    if (!v) return err ? err->code : LOOM_ERR_INVALID;
    memcpy(dst, v, (size_t)w->count * sizeof *dst);
    return 0;
  }
  if (!w->cache_valid)
    return loom_error_set(err, LOOM_ERR_INVALID, _("%s: at rest but without packed codes"), w->label);
  return dequantize_codes(w, NULL, dst, err);
}

LOOM_API const uint8_t *loom_weights_packed(const loom_weights *w, size_t *nbytes) {
  if (!w->cache_valid) {
    if (nbytes) *nbytes = 0;
    return NULL;
  }
  if (w->dtype == LOOM_DTYPE_FLOAT32) {
    if (nbytes) *nbytes = (size_t)w->count * sizeof(float);
    return (const uint8_t *)w->master;
  }
  if (nbytes) *nbytes = w->packed_size;
  return w->packed;
}

LOOM_API const float *loom_weights_scales(const loom_weights *w, int64_t *nscales) {
  bool have = w->cache_valid && w->nscales > 0;
  if (nscales) *nscales = have ? w->nscales : 0;
  return have ? w->scales : NULL;
}

LOOM_API size_t loom_weights_bytes_at(const loom_weights *w, loom_dtype d) {
  size_t nbytes;
  if (loom_dtype_packed_bytes(d, w->rows, w->cols, &nbytes, NULL)) return 0;
  return nbytes + (size_t)loom_dtype_scale_count(d, w->rows, w->mode) * sizeof(float);
}

LOOM_API size_t loom_weights_bytes(const loom_weights *w) { return loom_weights_bytes_at(w, w->dtype); }

size_t loom_weights_allocated_cache_bytes(const loom_weights *w) {
  if (!w->cache_valid) return 0;
  if (w->dtype == LOOM_DTYPE_FLOAT32) return (size_t)w->count * sizeof(float); /* the master is the copy */
  return w->packed_size + (size_t)w->nscales * sizeof(float);
}

/* Padding bits (after the last code of a row) must be zero, codes in range. */
static int check_codes(const loom_weights *w, const loom_dtype_traits *t, const uint8_t *p, size_t row_bytes,
                       loom_error *err) {
  const uint64_t used_bits = (uint64_t)w->cols * (uint64_t)t->bits;
  const int pad = (int)(row_bytes * 8 - used_bits);
  for (int64_t r = 0; r < w->rows; r++) {
    const uint8_t *row = p + (size_t)r * row_bytes;
    if (pad && (row[row_bytes - 1] >> (8 - pad)))
      return loom_error_set(err, LOOM_ERR_FORMAT, _("%s: padding bits of row %lld are not zero"), w->label,
                            (long long)r);
    if (!t->scaled) continue;
    for (int64_t c = 0; c < w->cols; c++) {
      uint64_t code = loom_pack_get(t->bits, row, c);
      if (!loom_scaled_code_valid(t, code))
        return loom_error_set(err, LOOM_ERR_FORMAT, _("%s: invalid %s code 0x%llx at row %lld, column %lld"),
                              w->label, t->name, (unsigned long long)code, (long long)r, (long long)c);
    }
  }
  return 0;
}

LOOM_API int loom_weights_load_packed(loom_weights *w, loom_dtype d, const void *packed, size_t nbytes,
                                      const float *scales, int64_t nscales, loom_error *err) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  if (!t) return loom_error_set(err, LOOM_ERR_INVALID, _("%s: invalid dtype %d"), w->label, (int)d);
  size_t expected;
  int rc = loom_dtype_packed_bytes(d, w->rows, w->cols, &expected, err);
  if (rc) return rc;
  if (nbytes != expected)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: %s data of %zu bytes, expected %zu for %lld × %lld values"),
                          w->label, t->name, nbytes, expected, (long long)w->rows, (long long)w->cols);
  if (!t->scaled && nscales != 0)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: %s takes no scales, got %lld"), w->label, t->name,
                          (long long)nscales);
  if (t->scaled && ((nscales != w->rows && nscales != 1) || !scales))
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s: %s takes %lld scales (one per row) or 1, got %lld"), w->label,
                          t->name, (long long)w->rows, (long long)nscales);
  for (int64_t i = 0; i < nscales; i++)
    if (!(scales[i] >= 0) || isinf(scales[i]))
      return loom_error_set(err, LOOM_ERR_NONFINITE, _("%s: scale %lld is %g; scales must be finite and >= 0"),
                            w->label, (long long)i, (double)scales[i]);
  if ((rc = check_codes(w, t, packed, loom_dtype_row_bytes(d, w->cols), err))) return rc;

  /* Build everything new first, so that a failure leaves the store as it was. */
  float *master = malloc((size_t)w->count * sizeof *master);
  uint8_t *copy = d == LOOM_DTYPE_FLOAT32 ? NULL : malloc(nbytes);
  float *sc = nscales ? malloc((size_t)nscales * sizeof *sc) : NULL;
  if (!master || (d != LOOM_DTYPE_FLOAT32 && !copy) || (nscales && !sc)) {
    rc = loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory"), w->label);
    goto fail;
  }
  if ((rc = loom_dtype_dequantize(d, packed, w->rows, w->cols, scales, nscales, master, err))) goto fail;
  if ((rc = report_nonfinite(w, master, 0, w->count, err))) goto fail;
  if (copy) memcpy(copy, packed, nbytes);
  if (sc) memcpy(sc, scales, (size_t)nscales * sizeof *sc);

  drop_cache(w);
  free(w->master);
  w->master = master;
  w->master_finite = false;
  w->packed = copy;
  w->packed_size = copy ? nbytes : 0;
  w->scales = sc;
  w->nscales = nscales;
  w->dtype = d;
  if (t->scaled && w->rows > 1) w->mode = nscales == 1 ? LOOM_SCALE_PER_TENSOR : LOOM_SCALE_PER_ROW;
  w->cache_valid = true;
  return 0;
fail:
  free(master);
  free(copy);
  free(sc);
  return rc;
}

/* ---- inference: the packed copy alone (docs/dtypes.md, "At rest") -------- */

/* float32 is its own packed form. float64 rests as its 8-byte codes like any
 * other dtype (twice the master: the layers read the packed copy at rest, and
 * a forward would otherwise rebuild it from the master beside it). */
static bool rests_as_master(loom_dtype d) { return d == LOOM_DTYPE_FLOAT32; }

LOOM_API int loom_weights_to_inference(loom_weights *w, loom_error *err) {
  /* Already at rest, the master gone, morph has nothing to do (the cache is
   * valid); a dequantized copy some layer made since is freed all the same. */
  int rc = w->master ? loom_weights_morph(w, err) : 0; /* validates the master (finite), builds the codes */
  if (rc) return rc;
  free(w->effective);
  w->effective = NULL;
  w->effective_valid = false;
  if (!w->master) return 0;
  if (rests_as_master(w->dtype)) return 0;
  free(w->master);
  w->master = NULL;
  return 0;
}

LOOM_API int loom_weights_ensure_master(loom_weights *w, loom_error *err) {
  if (w->master) return 0;
  float *master = malloc((size_t)w->count * sizeof *master);
  if (!master)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory recreating the float32 master of %lld values"),
                          w->label, (long long)w->count);
  /* Exact by construction: the values the store computed with at rest are
   * these dequantized codes, and the cache stays valid for them (as after
   * loom_weights_load_packed), so nothing is re-quantized. */
  int rc = dequantize_codes(w, NULL, master, err);
  if (rc) {
    free(master);
    return rc;
  }
  w->master = master;
  return 0;
}

LOOM_API bool loom_weights_master_resident(const loom_weights *w) { return w->master != NULL; }

LOOM_API size_t loom_weights_resident_bytes(const loom_weights *w) {
  size_t n = w->master ? (size_t)w->count * sizeof(float) : 0;
  if (w->effective) n += (size_t)w->count * sizeof(float); /* kept allocated while stale, so counted */
  return n + w->packed_size + (size_t)w->nscales * sizeof(float);
}

LOOM_API size_t loom_weights_inference_bytes(const loom_weights *w) {
  return loom_weights_bytes(w); /* at float32 the packed form is the master */
}

LOOM_API size_t loom_weights_training_bytes(const loom_weights *w) {
  const size_t values = (size_t)w->count * sizeof(float);
  if (w->dtype == LOOM_DTYPE_FLOAT32) return values;
  if (w->dtype == LOOM_DTYPE_FLOAT64) return values + loom_weights_bytes(w); /* computes with the master */
  return values + loom_weights_bytes(w) + values;                           /* + the dequantized copy */
}
