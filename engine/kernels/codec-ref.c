/*
 * The reference kernel table: the plain C codecs of core/ (the truth every
 * vector path is tested against) behind the uniform row signatures of cpu.h.
 */
#include <math.h>

#include "core/dtype-internal.h"
#include "kernels/cpu.h"
#include "kernels/gemv.h"

static int quantize_float_row(const loom_dtype_traits *t, const float *src, int64_t n, float scale, uint8_t *dst,
                              int64_t *bad) {
  return loom_float_quantize_row(t, src, n, dst, bad);
}

static void dequantize_float_row(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                 const float *lut, float *dst) {
  loom_float_dequantize_row(t, src, n, lut, dst);
}

static void dequantize_scaled_row(const loom_dtype_traits *t, const uint8_t *src, int64_t n, float scale,
                                  const float *lut, float *dst) {
  loom_scaled_dequantize_row(t, src, n, scale, dst);
}

static bool any_nonfinite_ref(const float *values, int64_t n) {
  uint32_t bad = 0;
  for (int64_t i = 0; i < n; i++) {
    uint32_t u;
    memcpy(&u, &values[i], sizeof u);
    bad |= (uint32_t)((u & 0x7f800000u) == 0x7f800000u);
  }
  return bad != 0;
}

static float abs_max_ref(const float *v, int64_t n) {
  float m = 0;
  for (int64_t i = 0; i < n; i++) m = fabsf(v[i]) > m ? fabsf(v[i]) : m;
  return m;
}

static float pos_max_ref(const float *v, int64_t n) {
  float m = 0;
  for (int64_t i = 0; i < n; i++) m = v[i] > m ? v[i] : m;
  return m;
}

static double abs_sum_ref(const float *v, int64_t n) {
  double sum = 0;
  for (int64_t i = 0; i < n; i++) sum += fabs((double)v[i]);
  return sum;
}

static bool scale_scan_ref(const float *v, int64_t n, loom_dtype_kind kind, double *stat) {
  if (any_nonfinite_ref(v, n)) return true;
  *stat = kind == LOOM_DTYPE_KIND_SIGNED     ? (double)abs_max_ref(v, n)
          : kind == LOOM_DTYPE_KIND_UNSIGNED ? (double)pos_max_ref(v, n)
                                             : abs_sum_ref(v, n);
  return false;
}

/* fmaf, not w·x + acc: the vector levels fuse, and every level must give
 * the same bits. */
static void dot_acc64_ref(float *acc, const float *w, const float *x, int64_t n) {
  int64_t j = 0;
  for (; j < n; j++) acc[j % 64] = fmaf(w[j], x[j], acc[j % 64]);
  for (; j % 64; j++) acc[j % 64] = fmaf(0.0f, 0.0f, acc[j % 64]);
}

void loom_kernels_fill_ref(loom_kernels *k) {
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const bool scaled = loom_dtype_traits_get((loom_dtype)d)->scaled;
    k->quantize_row[d] = scaled ? loom_scaled_quantize_row : quantize_float_row;
    k->dequantize_row[d] = scaled ? dequantize_scaled_row : dequantize_float_row;
  }
  k->any_nonfinite = any_nonfinite_ref;
  k->abs_max = abs_max_ref;
  k->pos_max = pos_max_ref;
  k->dot_acc64 = dot_acc64_ref;
  k->gemv_reduce64 = loom_gemv_reduce64;
  k->abs_sum = abs_sum_ref;
  k->scale_scan = scale_scan_ref;
  loom_kernels_fill_qgemm_ref(k);
}
