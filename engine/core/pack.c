/*
 * Bulk packing of whole tensors: the one implementation of the layout in
 * dtype.h (LSB-first codes in little-endian bytes, rows padded with zero bits
 * to whole bytes), used by the weight store, the model files and the tests.
 */
#include <math.h>
#include <stdint.h>

#include "core/dtype-internal.h"
#include "core/i18n.h"
#include "kernels/cpu.h"

/* The scales rows [r0, r1) use (all of them for a whole tensor), so a
 * dequantize split into ranges checks each scale once. */
static int check_scales(const loom_dtype_traits *t, int64_t rows, int64_t r0, int64_t r1, const float *scales,
                        int64_t nscales, loom_error *err) {
  if (!t->scaled) {
    if (nscales != 0)
      return loom_error_set(err, LOOM_ERR_INVALID, _("%s takes no scales, got %lld"), t->name, (long long)nscales);
    return 0;
  }
  if (!scales || (nscales != rows && nscales != 1))
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s needs %lld scales (one per row) or 1, got %lld"), t->name,
                          (long long)rows, (long long)nscales);
  const int64_t first = nscales == 1 ? 0 : r0, last = nscales == 1 ? 1 : r1;
  for (int64_t i = first; i < last; i++)
    if (!(scales[i] >= 0) || isinf(scales[i]))
      return loom_error_set(err, LOOM_ERR_NONFINITE, _("scale %lld is %g; scales must be finite and >= 0"),
                            (long long)i, (double)scales[i]);
  return 0;
}

static int check_shape(const loom_dtype_traits *t, loom_dtype d, int64_t rows, int64_t cols, loom_error *err) {
  if (!t) return loom_error_set(err, LOOM_ERR_INVALID, _("invalid dtype %d"), (int)d);
  if (rows < 0 || cols < 0)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("invalid shape %lld × %lld"), (long long)rows, (long long)cols);
  size_t nbytes;
  return loom_dtype_packed_bytes(d, rows, cols, &nbytes, err);
}

LOOM_API int loom_dtype_quantize(loom_dtype d, const float *src, int64_t rows, int64_t cols, const float *scales,
                                 int64_t nscales, uint8_t *dst, loom_error *err) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  int rc = check_shape(t, d, rows, cols, err);
  if (rc) return rc;
  if ((rc = check_scales(t, rows, 0, rows, scales, nscales, err))) return rc;
  const size_t row_bytes = loom_dtype_row_bytes(d, cols);
  /* Sub-byte codes are ORed into zeroed bytes; zeroing also sets the padding. */
  if (t->bits < 8) memset(dst, 0, row_bytes * (size_t)rows);
  const loom_quantize_row_fn quantize_row = loom_kernels_get()->quantize_row[d];
  for (int64_t r = 0; r < rows; r++) {
    const float *in = src + r * cols;
    uint8_t *out = dst + (size_t)r * row_bytes;
    int64_t bad = 0;
    rc = quantize_row(t, in, cols, t->scaled ? scales[nscales == 1 ? 0 : r] : 1.0f, out, &bad);
    if (rc)
      return loom_error_set(err, LOOM_ERR_NONFINITE, _("%s has no code for NaN (row %lld, column %lld)"), t->name,
                            (long long)r, (long long)bad);
  }
  return 0;
}

/* Values of a row to decode before its output reaches a 64-byte boundary, or
 * 0 where that is not worth a call of its own or the codes before it do not
 * end on a whole byte (a binary row 16 bytes past a boundary). The vector
 * codecs store whole vectors; a 64-byte store across two cache lines costs
 * Intel's cores a split, and an output from malloc (16 bytes past a
 * boundary) split every one: bench-dtype, 4096 × 4096 on a Sapphire Rapids,
 * dequantize at the AVX-512 level, ratio to memcpy (5 runs each) int8
 * 1.04 → 1.28, uint8 0.86 → 1.27, ternary 1.05 → 1.27 with the output
 * aligned. */
static int64_t unaligned_head(const loom_dtype_traits *t, const float *out, int64_t cols) {
  const uintptr_t a = (uintptr_t)out;
  const int64_t h = (int64_t)((64 - (a & 63)) & 63) / (int64_t)sizeof(float);
  if ((a & (sizeof(float) - 1)) || h == 0 || h >= cols || (h * t->bits) % 8) return 0;
  return h;
}

/* Outputs of LOOM_STREAM_MIN_BYTES (cpu.h) and more are written around the
 * caches where the level can (cpu.h, dequantize_row_stream). bench-dtype,
 * 4096 × 4096 float64 on Zen 3: 0.83–0.91 → 0.98–1.04 of memcpy; the
 * formats of at most 32 bits see codec-simd.h's dequantize_via_l1
 * (docs/kernels.md). */

int loom_dtype_dequantize_part(loom_dtype d, const uint8_t *src, int64_t rows, int64_t cols, int64_t r0, int64_t r1,
                               const float *scales, int64_t nscales, float *dst, loom_error *err) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  int rc = check_shape(t, d, rows, cols, err);
  if (rc) return rc;
  if (r0 < 0 || r1 > rows || r0 > r1)
    return loom_error_set(err, LOOM_ERR_SHAPE, _("rows %lld to %lld of a tensor of %lld rows"), (long long)r0,
                          (long long)r1, (long long)rows);
  if ((rc = check_scales(t, rows, r0, r1, scales, nscales, err))) return rc;
  const size_t row_bytes = loom_dtype_row_bytes(d, cols);
  const float *lut = !t->scaled && t->bits <= 8 ? loom_float_lut(t) : NULL;
  const loom_kernels *k = loom_kernels_get();
  const loom_dequantize_row_fn dequantize_row = k->dequantize_row[d];
  const loom_dequantize_row_fn stream_row =
    (size_t)rows * (size_t)cols * sizeof(float) >= LOOM_STREAM_MIN_BYTES ? k->dequantize_row_stream[d] : NULL;
  for (int64_t r = r0; r < r1; r++) {
    const uint8_t *in = src + (size_t)r * row_bytes;
    float *out = dst + r * cols;
    const float scale = t->scaled ? scales[nscales == 1 ? 0 : r] : 1.0f;
    if (stream_row) { /* it aligns its stores itself */
      stream_row(t, in, cols, scale, lut, out);
      continue;
    }
    const int64_t h = unaligned_head(t, out, cols);
    if (h) dequantize_row(t, in, h, scale, lut, out);
    dequantize_row(t, in + h * t->bits / 8, cols - h, scale, lut, out + h);
  }
  if (stream_row) loom_stream_fence();
  return 0;
}

LOOM_API int loom_dtype_dequantize(loom_dtype d, const uint8_t *src, int64_t rows, int64_t cols,
                                   const float *scales, int64_t nscales, float *dst, loom_error *err) {
  return loom_dtype_dequantize_part(d, src, rows, cols, 0, rows, scales, nscales, dst, err);
}
