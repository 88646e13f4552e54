/*
 * Bulk packing of whole tensors: the one implementation of the layout in
 * dtype.h (LSB-first codes in little-endian bytes, rows padded with zero bits
 * to whole bytes), used by the weight store, the model files and the tests.
 */
#include <math.h>

#include "core/dtype-internal.h"
#include "core/i18n.h"
#include "kernels/cpu.h"

static int check_scales(const loom_dtype_traits *t, int64_t rows, const float *scales, int64_t nscales,
                        loom_error *err) {
  if (!t->scaled) {
    if (nscales != 0)
      return loom_error_set(err, LOOM_ERR_INVALID, _("%s takes no scales, got %lld"), t->name, (long long)nscales);
    return 0;
  }
  if (!scales || (nscales != rows && nscales != 1))
    return loom_error_set(err, LOOM_ERR_SHAPE, _("%s needs %lld scales (one per row) or 1, got %lld"), t->name,
                          (long long)rows, (long long)nscales);
  for (int64_t i = 0; i < nscales; i++)
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
  if ((rc = check_scales(t, rows, scales, nscales, err))) return rc;
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

LOOM_API int loom_dtype_dequantize(loom_dtype d, const uint8_t *src, int64_t rows, int64_t cols,
                                   const float *scales, int64_t nscales, float *dst, loom_error *err) {
  const loom_dtype_traits *t = loom_dtype_traits_get(d);
  int rc = check_shape(t, d, rows, cols, err);
  if (rc) return rc;
  if ((rc = check_scales(t, rows, scales, nscales, err))) return rc;
  const size_t row_bytes = loom_dtype_row_bytes(d, cols);
  float lut[256];
  if (!t->scaled && t->bits <= 8) loom_float_build_lut(t, lut);
  const loom_dequantize_row_fn dequantize_row = loom_kernels_get()->dequantize_row[d];
  for (int64_t r = 0; r < rows; r++) {
    const uint8_t *in = src + (size_t)r * row_bytes;
    float *out = dst + r * cols;
    dequantize_row(t, in, cols, t->scaled ? scales[nscales == 1 ? 0 : r] : 1.0f, lut, out);
  }
  return 0;
}
