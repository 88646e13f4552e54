/*
 * The integer product driver and its reference kernel (kernels/qgemm.h).
 * The activations are quantized once per call, O(batch · cols), beside the
 * O(batch · rows · cols) product; rows are split over the pool in ranges that
 * depend only on the shape, and each output is an exact integer sum turned
 * into a float by loom_qgemm_finish, so no thread count or level changes a
 * bit.
 */
#include "kernels/qgemm.h"
#include "kernels/scratch.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype-internal.h"
#include "core/i18n.h"
#include "kernels/cpu.h"

const int8_t loom_qgemm_fp4_twice[16] = {LOOM_QGEMM_FP4_TWICE};

bool loom_qgemm_supports(loom_dtype d) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  return t && ((t->scaled && t->bits <= 8) || d == LOOM_DTYPE_FP4);
}

/* The weight's integer value from its code (docs/dtypes.md: two's complement
 * for signed and ternary, the integer for unsigned, 0 = +1 and 1 = −1 for
 * binary; fp4: twice its value, qgemm.h). */
static int32_t code_value(const loom_dtype_traits *t, uint32_t c) {
  const int bits = t->bits;
  const loom_dtype_kind kind = t->kind;
  if (t->id == LOOM_DTYPE_FP4) return loom_qgemm_fp4_twice[c];
  if (kind == LOOM_DTYPE_KIND_BINARY) return 1 - 2 * (int32_t)c;
  if (kind == LOOM_DTYPE_KIND_UNSIGNED) return (int32_t)c;
  return (c >> (bits - 1)) ? (int32_t)c - (1 << bits) : (int32_t)c;
}

/* The reference: one code at a time, in column order, from xq (not the
 * permuted copy, so the vector kernels' layout is checked against it). */
static void qgemm_rows_ref(const loom_qgemm_job *j, int64_t r0, int64_t r1) {
  const int bits = j->t->bits;
  const uint32_t mask = (1u << bits) - 1;
  for (int64_t r = r0; r < r1; r++) {
    const uint8_t *row = j->packed + (size_t)r * j->row_bytes;
    for (int64_t b = 0; b < j->batch; b++) {
      const int8_t *xq = j->xq + b * j->xstride;
      int64_t sum = 0;
      for (int64_t c = 0; c < j->cols; c++) {
        const int64_t bit = c * bits;
        const uint32_t code = ((uint32_t)row[bit / 8] >> (bit % 8)) & mask;
        sum += (int64_t)code_value(j->t, code) * xq[c];
      }
      j->y[b * j->rows + r] = j->bad[b] ? NAN : loom_qgemm_finish(j, b, r, sum);
    }
  }
}

/* xp from xq (qgemm.h), m = 8 / bits fields a byte; a constant m lets the
 * compiler unroll the fields. */
static inline __attribute__((always_inline)) void permute(const int m, const int8_t *q, int8_t *p, int64_t len) {
  for (int64_t c0 = 0; c0 < len; c0 += 64 * m)
    for (int jb = 0; jb < 64; jb++)
      for (int kf = 0; kf < m; kf++) p[c0 + kf * 64 + jb] = q[c0 + jb * m + kf];
}

void loom_qgemm_prepare_ref(int bits, const int8_t *xq, int8_t *xp, int64_t len, int64_t *xsum) {
  int64_t s = 0;
  for (int64_t c0 = 0; c0 < len; c0 += 65536) { /* an int32 sum vectorizes; 65536 · 127 fits */
    int32_t part = 0;
    const int64_t c1 = len - c0 < 65536 ? len : c0 + 65536;
    for (int64_t c = c0; c < c1; c++) part += xq[c];
    s += part;
  }
  *xsum = s;
  switch (bits) {
  case 4: permute(2, xq, xp, len); break;
  case 2: permute(4, xq, xp, len); break;
  case 1: permute(8, xq, xp, len); break;
  default: break; /* int8: xp is xq */
  }
}

void loom_kernels_fill_qgemm_ref(loom_kernels *k) {
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++)
    k->qgemm_rows[d] = loom_qgemm_supports((loom_dtype)d) ? qgemm_rows_ref : NULL;
  k->qgemm_prepare = loom_qgemm_prepare_ref;
}

static void qgemm_range(void *arg, int64_t begin, int64_t end) {
  const loom_qgemm_job *j = arg;
  loom_kernels_get()->qgemm_rows[j->t->id](j, begin, end);
}

bool loom_qgemm_takes_panel(const loom_kernels *k, int bits, int64_t cols, int64_t batch) {
  if (!k->qgemm_tiles) return false;
  if (k->qgemm_tiles == LOOM_QGEMM_TILES_AMX) /* binary's shortest rows: the short-row product, as fast */
    return batch >= (cols <= LOOM_QGEMM_AMX_SHORT_COLS ? LOOM_QGEMM_AMX_SHORT_MIN_BATCH : LOOM_QGEMM_AMX_MIN_BATCH) &&
           !(bits == 1 && cols <= LOOM_QGEMM_AMX_SHORT_COLS / 2);
  if (bits == 8) return batch >= LOOM_QGEMM_PANEL_MIN_BATCH;
  if (bits == 4)
    return batch >= (cols <= LOOM_QGEMM_PANEL4_SHORT_COLS ? LOOM_QGEMM_PANEL_MIN_BATCH : LOOM_QGEMM_PANEL4_LONG_MIN_BATCH);
  return false;
}

bool loom_qgemm_takes_short(const loom_kernels *k, int bits, int64_t cols, int64_t batch) {
  if (!k->qgemm_short || cols > LOOM_QGEMM_SHORT_MAX_COLS || batch < 1) return false;
  if (loom_qgemm_takes_panel(k, bits, cols, batch)) return false; /* the level's panel GEMM or AMX tiles */
  if (k->level >= LOOM_KERNELS_AVX512) {
    /* An Intel Xeon with VNNI (docs/qgemm.md): its panel GEMM wins for
     * 8-bit codes from a batch of 16 and beyond 64 columns, and for 4-bit
     * codes from a batch of 16 at any width (0.5-0.85 of the short-row
     * product's time up to 256 columns); the row kernels for the others
     * beyond 128 columns below a batch of 16, beyond 200-256 above (binary
     * 256-512). */
    if (bits == 8 && k->qgemm_tiles) return cols <= 64 && batch >= 2;
    if (batch == 1) return bits == 1 && cols <= 64;
    if (cols <= 128) return true;
    if (bits == 1) return cols <= (batch >= 32 ? 512 : batch >= 16 ? 384 : 256);
    return batch >= 16 && cols <= (batch >= 32 ? 256 : 200);
  }
  /* Zen 3: from a batch of 32 at any width; at 16 the row kernels of the
   * 2-bit formats beyond 512 columns (1.1 times faster) and of 8-bit codes
   * beyond 1024 (as fast) are kept. */
  if (batch >= 32) return true;
  if (batch >= 16) return cols <= (bits == 2 ? 512 : bits == 8 ? 1024 : LOOM_QGEMM_SHORT_MAX_COLS);
  if (batch >= 8) return cols <= (bits == 2 ? 384 : 512);
  if (batch >= 2) return cols <= (bits == 8 ? 256 : bits == 1 ? 256 : bits == 4 ? 192 : 128);
  return bits == 1 && cols <= 128;
}

/* The short-row product's items: tile t of SHORT_TILE_ROWS weight rows ×
 * chunk c of SHORT_CHUNK activation rows is item t · chunks + c, so a tile
 * with few rows and a large batch still splits over the pool. */
enum { SHORT_TILE_ROWS = 16, SHORT_CHUNK = 64 };

static void qgemm_short_range(void *arg, int64_t begin, int64_t end) {
  const loom_qgemm_job *j = arg;
  const int64_t chunks = (j->batch + SHORT_CHUNK - 1) / SHORT_CHUNK;
  const loom_qgemm_short_fn fn = loom_kernels_get()->qgemm_short;
  for (int64_t i = begin; i < end; i++) {
    const int64_t r0 = i / chunks * SHORT_TILE_ROWS, b0 = i % chunks * SHORT_CHUNK;
    fn(j, r0, j->rows - r0 < SHORT_TILE_ROWS ? j->rows : r0 + SHORT_TILE_ROWS, b0,
       j->batch - b0 < SHORT_CHUNK ? j->batch : b0 + SHORT_CHUNK);
  }
}

/* Row b of x to int8 codes with the int8 weight rule (the kernel table's
 * codec, so the same bits at every level); false when it is not finite.
 * One pass finds both (the morph's row scan: loom_dtype_compute_scale's
 * max |x|), a second encodes. */
static bool quantize_activations(const loom_kernels *k, const loom_dtype_traits *i8, const float *x, int64_t cols,
                                 int8_t *xq, float *sx) {
  *sx = 0;
  if (loom_scaled_row_scale(i8, x, cols, sx)) {
    *sx = 0;
    return false;
  }
  if (*sx == 0) return true; /* all zeros: xq stays zero */
  int64_t bad;
  return k->quantize_row[LOOM_DTYPE_INT8](i8, x, cols, *sx, (uint8_t *)xq, &bad) == 0;
}

/* The activations of rows [b0, b1): int8 codes, scales, NaN flags and sums,
 * and xp where the row kernels read it. Rows are independent, so ranges of
 * them go to the pool: for a small layer at a large batch this is as much
 * work as the product (32 × 32 int4 at batch 512: about 20 of 32 µs). */
typedef struct {
  const loom_kernels *k;
  const loom_dtype_traits *t;
  const float *x;
  int64_t cols, xstride;
  int8_t *xq, *xp;
  float *sx;
  uint8_t *bad;
  int64_t *xsum;
  bool permute;
} prepare_job;

static void prepare_range(void *arg, int64_t b0, int64_t b1) {
  const prepare_job *p = arg;
  const loom_kernels *k = p->k;
  if (k->qgemm_quantize) {
    k->qgemm_quantize(p->x + b0 * p->cols, b1 - b0, p->cols, p->xq + b0 * p->xstride, p->xstride, p->sx + b0,
                      p->bad + b0, p->xsum + b0);
  } else {
    const loom_dtype_traits *i8 = loom_dtype_traits_get(LOOM_DTYPE_INT8);
    for (int64_t b = b0; b < b1; b++) {
      int8_t *q = p->xq + b * p->xstride;
      memset(q, 0, (size_t)p->xstride);
      p->bad[b] = !quantize_activations(k, i8, p->x + b * p->cols, p->cols, q, &p->sx[b]);
      if (p->bad[b]) memset(q, 0, (size_t)p->cols);
      k->qgemm_prepare(8, q, q, p->xstride, &p->xsum[b]); /* Σ xq alone */
    }
  }
  /* qgemm_prepare makes Σ xq again, the same */
  if (p->permute)
    for (int64_t b = b0; b < b1; b++)
      k->qgemm_prepare(p->t->bits, p->xq + b * p->xstride, p->xp + b * p->xstride, p->xstride, &p->xsum[b]);
}

int loom_qgemm_packed(loom_pool *pool, loom_dtype d, const uint8_t *packed, int64_t rows, int64_t cols,
                      const float *scales, int64_t nscales, int64_t batch, const float *x, float *y, loom_error *err) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  if (!t) return loom_error_set(err, LOOM_ERR_INVALID, _("invalid dtype %d"), (int)d);
  if (!loom_qgemm_supports(d))
    return loom_error_set(err, LOOM_ERR_UNSUPPORTED, _("%s has no integer product kernel"), t->name);
  if (rows < 0 || cols < 0 || batch < 0)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("invalid shape %lld × %lld"), (long long)rows, (long long)cols);
  size_t nbytes;
  int rc = loom_dtype_packed_bytes(d, rows, cols, &nbytes, err);
  if (rc) return rc;
  static const float fp4_scale = 0.5f; /* q = 2 · value (qgemm.h) */
  if (!t->scaled) {
    if (nscales != 0)
      return loom_error_set(err, LOOM_ERR_SHAPE, _("%s takes no scales, got %lld"), t->name, (long long)nscales);
    scales = &fp4_scale;
    nscales = 1;
  } else if (!scales || (nscales != rows && nscales != 1))
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s needs %lld scales (one per row) or 1, got %lld"), t->name,
                          (long long)rows, (long long)nscales);
  if (rows == 0 || batch == 0) return 0;
  const loom_kernels *k = loom_kernels_get();
  /* The short-row product reads xq alone in groups of 4 columns; the row
   * kernels read whole 64-byte blocks of codes and x a block at a time. */
  const bool short_rows = loom_qgemm_takes_short(k, t->bits, cols, batch);
  const int64_t per_block = short_rows ? 64 : 512 / t->bits;
  const int64_t xstride = (cols + per_block - 1) / per_block * per_block;
  if (xstride > 0 && batch + LOOM_QGEMM_AMX_TILE_ROWS > INT64_MAX / 4 / xstride)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for %lld activation values"), (long long)batch);
  const int m = 8 / t->bits;
  /* xsum, sx, bad, xq, (for m > 1) xp and (for the panel GEMM) xt, each
   * 64-byte aligned */
  const size_t xbytes = ((size_t)(batch * xstride) + 63) / 64 * 64;
  const size_t o_sx = ((size_t)batch * sizeof(int64_t) + 63) / 64 * 64;
  const size_t o_bad = o_sx + ((size_t)batch * sizeof(float) + 63) / 64 * 64;
  const bool permuted = m > 1 && !short_rows;
  const bool tiles = !short_rows && loom_qgemm_takes_panel(k, t->bits, cols, batch);
  /* xt beside xp: the panel GEMM reads xt, the row kernels (where its
   * buffer cannot be had) xp */
  const size_t o_xq = o_bad + ((size_t)batch + 63) / 64 * 64, o_xp = o_xq + xbytes;
  const size_t o_xt = o_xp + (permuted ? xbytes : 0);
  const int64_t tile_rows = k->qgemm_tiles == LOOM_QGEMM_TILES_AMX ? LOOM_QGEMM_AMX_TILE_ROWS : 1;
  const size_t xtbytes = ((size_t)((batch + tile_rows - 1) / tile_rows * tile_rows * xstride) + 63) / 64 * 64;
  unsigned char *buf = loom_scratch(LOOM_SCRATCH_QGEMM_ACTIVATIONS, o_xt + (tiles ? xtbytes : 0));
  if (!buf)
    return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for %lld activation values"),
                          (long long)(batch * cols));
  int64_t *xsum = (int64_t *)(void *)buf;
  float *sx = (float *)(void *)(buf + o_sx);
  uint8_t *bad = buf + o_bad;
  int8_t *xq = (int8_t *)(buf + o_xq), *xp = permuted ? (int8_t *)(buf + o_xp) : xq;
  /* xp where the row kernels read it (the short-row product reads xq alone);
   * ranges of about 8192 activation values */
  prepare_job prep = {.k = k, .t = t, .x = x, .cols = cols, .xstride = xstride, .xq = xq, .xp = xp, .sx = sx,
                      .bad = bad, .xsum = xsum, .permute = permuted};
  loom_pool_for(pool, batch, cols > 0 ? (8192 + cols - 1) / cols : batch, prepare_range, &prep);
  int8_t *xt = tiles ? (int8_t *)(buf + o_xt) : NULL;
  if (xt) k->qgemm_make_tiles(xq, xt, batch, xstride); /* every level with tiles has its builder (cpu.h) */
  loom_qgemm_job job = {
    .t = t, .packed = packed, .row_bytes = loom_dtype_row_bytes(d, cols), .rows = rows, .cols = cols,
    .batch = batch, .scales = scales, .nscales = nscales, .xq = xq, .xp = xp, .xt = xt, .xstride = xstride,
    .sx = sx, .xsum = xsum, .bad = bad, .y = y,
  };
  if (short_rows) { /* items of about 2^18 products a range */
    const int64_t items = (rows + SHORT_TILE_ROWS - 1) / SHORT_TILE_ROWS * ((batch + SHORT_CHUNK - 1) / SHORT_CHUNK);
    const int64_t per_item = SHORT_TILE_ROWS * SHORT_CHUNK * ((cols + 3) / 4 * 4);
    loom_pool_for(pool, items, ((INT64_C(1) << 18) + per_item - 1) / per_item, qgemm_short_range, &job);
    return 0;
  }
  /* About 256 KiB of weights per range at batch 1, and as many code bytes
   * times activation rows (up to 64) at a batch, in whole groups of 4 rows
   * (the vector kernels' row block; the VNNI panel GEMM's, tiles, is
   * LOOM_QGEMM_PANEL_ROWS, as it repeats the last row of a short panel).
   * (By weights alone, a 2-bit 1024 × 1024 layer at batch 16 was one
   * range: no second thread.) */
  const int64_t per_row = ((int64_t)job.row_bytes + 1) * (batch < 64 ? batch : 64);
  int64_t grain = per_row >= (INT64_C(1) << 18) ? 1 : (INT64_C(1) << 18) / per_row;
  const int64_t block = tiles ? LOOM_QGEMM_PANEL_ROWS : 4;
  grain = (grain + block - 1) / block * block;
  loom_pool_for(pool, rows, grain, qgemm_range, &job);
  return 0;
}
