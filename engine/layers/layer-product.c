/*
 * Weighted layers computing with a weight store at rest (issue 13, item 3;
 * docs/kernels.md, "Layers at rest"): no float32 copy of the weights may be
 * left resident, so a layer either multiplies by the packed codes directly
 * (layer_weight_product: every X·Wᵀ of dense, swiglu, attention, rnn, lstm) or takes
 * a dequantized copy for the length of one call (layer_weight_values_for_call:
 * conv, kmeans) or dequantizes only the rows it reads (embedding,
 * layer_weight_row). Outside rest the stores' own values serve, as before.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "core/i18n.h"
#include "kernels/gemv.h"
#include "kernels/matmul.h"
#include "kernels/qgemm.h"
#include "layers/layer-impl.h"

bool layer_weight_at_rest(const loom_layer *l, int index) {
  return !loom_weights_master_resident(l->weights[index]);
}

/* At rest the codes are the only copy and never stale (weights.c keeps them
 * valid); a store breaking that must fail here, not read NULL. */
static const uint8_t *codes_at_rest(const loom_weights *w, loom_error *err) {
  const uint8_t *packed = loom_weights_packed(w, NULL);
  if (!packed) loom_error_set(err, LOOM_ERR_INVALID, _("%s: at rest but without packed codes"), loom_weights_label(w));
  return packed;
}

/* Rows [r0, r0 + n) of a store at rest, dequantized into dst. */
static int dequantize_rows(const loom_weights *w, const uint8_t *packed, int64_t r0, int64_t n, float *dst,
                           loom_error *err) {
  int64_t nscales, cols = loom_weights_cols(w);
  const float *scales = loom_weights_scales(w, &nscales);
  const loom_dtype d = loom_weights_dtype(w);
  const bool per_row = nscales > 1; /* else one scale for the tensor, or none */
  return loom_dtype_dequantize(d, packed + (size_t)r0 * loom_dtype_row_bytes(d, cols), n, cols,
                               per_row ? scales + r0 : scales, per_row ? n : nscales, dst, err);
}

/* For the float formats and a batch: loom_sgemm on REST_BLOCK_FLOATS of W
 * dequantized at a time (the GEMV decodes the codes again for every row of
 * the batch: 5× slower than the plain forward at batch 64). 1 MiB: with
 * 256 KiB (64 rows of 1024) the products of the blocks of a 1024 → 1024
 * layer at batch 64 took 1.69 ms against 1.42 for the whole, with 1 MiB
 * 1.47 (Zen 3, docs/kernels.md, *Layers at rest*). */
#define REST_MIN_BATCH 4
#define REST_BLOCK_FLOATS 262144 /* 1 MiB of dequantized rows, at least one row */

static int product_in_blocks(const loom_weights *w, const uint8_t *packed, loom_pool *pool, const float *x,
                             int64_t m, float *y, loom_error *err) {
  const int64_t n_out = loom_weights_rows(w), n_in = loom_weights_cols(w);
  const int64_t block = n_in < REST_BLOCK_FLOATS ? REST_BLOCK_FLOATS / n_in : 1;
  float *wb = malloc((size_t)(block < n_out ? block : n_out) * (size_t)n_in * sizeof *wb);
  if (!wb) return loom_error_set(err, LOOM_ERR_NOMEM, _("out of memory for a block of dequantized weights"));
  int rc = LOOM_OK;
  for (int64_t r0 = 0; r0 < n_out && !rc; r0 += block) {
    const int64_t nb = n_out - r0 < block ? n_out - r0 : block;
    rc = dequantize_rows(w, packed, r0, nb, wb, err);
    if (!rc) loom_sgemm(pool, false, true, m, nb, n_in, x, n_in, wb, n_in, false, y + r0, n_out);
  }
  free(wb);
  return rc;
}

/* The rows of a store at rest for loom_sgemm_decoded_b. The dtype, scales
 * and sizes were checked when the store was packed, so a decode cannot fail
 * but for a store that broke them: `failed` says so, and the caller then
 * takes the blocks below, which report it. */
typedef struct {
  loom_sgemm_b_rows base;
  const loom_weights *w;
  const uint8_t *packed;
  atomic_bool failed;
} rest_rows;

static void rest_rows_decode(const loom_sgemm_b_rows *rows, int64_t r0, int64_t n, float *dst) {
  rest_rows *r = (rest_rows *)(void *)rows;
  if (dequantize_rows(r->w, r->packed, r0, n, dst, NULL)) atomic_store(&r->failed, true);
}

/*
 * At rest the product reads the packed codes: the integer kernel for the
 * dtypes it serves (activations quantized to int8 on the fly, within
 * docs/dtypes.md's tolerance); for the others the float GEMV once per input
 * row for a few rows, or, for a batch, dequantized blocks of rows. All give
 * the same bits for any thread count; none keeps a float32 copy of W.
 * float32 rests as its master and takes loom_sgemm as always.
 */
int layer_weight_product(loom_layer *l, int index, loom_pool *pool, const float *x, int64_t m, float *y,
                         loom_error *err) {
  loom_weights *w = l->weights[index];
  const int64_t n_out = loom_weights_rows(w), n_in = loom_weights_cols(w);
  if (!layer_weight_at_rest(l, index)) {
    const float *v = layer_weight_values_on(l, index, pool, err);
    if (!v) return err ? err->code : LOOM_ERR_INVALID;
    loom_sgemm(pool, false, true, m, n_out, n_in, x, n_in, v, n_in, false, y, n_out);
    return LOOM_OK;
  }
  const uint8_t *packed = codes_at_rest(w, err);
  if (!packed) return LOOM_ERR_INVALID;
  const loom_dtype d = loom_weights_dtype(w);
  int64_t nscales;
  const float *scales = loom_weights_scales(w, &nscales);
  int rc;
  if (loom_qgemm_supports(d))
    rc = loom_qgemm_packed(pool, d, packed, n_out, n_in, scales, nscales, m, x, y, err);
  else if (m >= REST_MIN_BATCH) {
    /* Blocks of rows decoded inside the product where A's panels and a
     * block fit its buffer (the same bits; at batch 16, 1024 → 1024
     * float16: docs/kernels.md, *Layers at rest*), else blocks of 1 MiB. */
    rest_rows rr = {.base = {rest_rows_decode}, .w = w, .packed = packed};
    atomic_init(&rr.failed, false);
    if (loom_sgemm_decoded_b(pool, m, n_out, n_in, x, n_in, &rr.base, y, n_out) && !atomic_load(&rr.failed))
      rc = LOOM_OK;
    else
      rc = product_in_blocks(w, packed, pool, x, m, y, err);
  }
  else
    rc = loom_gemv_packed_batch(pool, d, packed, n_out, n_in, scales, nscales, m, x, y, err);
  if (rc) loom_error_prefix(err, "%s", loom_weights_label(w));
  return rc;
}

const float *layer_weight_values_for_call(loom_layer *l, int index, float **owned, loom_error *err) {
  *owned = NULL;
  if (!layer_weight_at_rest(l, index)) return layer_weight_values(l, index, err);
  loom_weights *w = l->weights[index];
  const int64_t count = loom_weights_count(w);
  float *v = malloc((size_t)count * sizeof *v);
  if (!v) {
    loom_error_set(err, LOOM_ERR_NOMEM, _("%s: out of memory for %lld dequantized values"), loom_weights_label(w),
                   (long long)count);
    return NULL;
  }
  if (loom_weights_values_into(w, v, err)) {
    free(v);
    return NULL;
  }
  *owned = v;
  return v;
}

int layer_weight_row(const loom_layer *l, int index, int64_t row, float *dst, loom_error *err) {
  const loom_weights *w = l->weights[index];
  const uint8_t *packed = codes_at_rest(w, err);
  if (!packed) return LOOM_ERR_INVALID;
  int rc = dequantize_rows(w, packed, row, 1, dst, err);
  if (rc) loom_error_prefix(err, "%s", loom_weights_label(w));
  return rc;
}
