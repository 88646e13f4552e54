/*
 * Scaled formats: q = clamp(rne(w / s), lo, qmax) checked against an oracle
 * in 128-bit integer arithmetic, the scale rules, round-trip error, clamping
 * at both ends without wrap, per-row and per-tensor scales, ternary, binary.
 */
#include <float.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "core/dtype-internal.h"
#include "loom/loom.h"

__extension__ typedef unsigned __int128 u128;

static const loom_dtype scaled[] = {
  LOOM_DTYPE_INT64,  LOOM_DTYPE_INT32,  LOOM_DTYPE_INT16, LOOM_DTYPE_INT8,  LOOM_DTYPE_INT4,    LOOM_DTYPE_INT2,
  LOOM_DTYPE_UINT64, LOOM_DTYPE_UINT32, LOOM_DTYPE_UINT16, LOOM_DTYPE_UINT8, LOOM_DTYPE_UINT4, LOOM_DTYPE_UINT2,
  LOOM_DTYPE_TERNARY, LOOM_DTYPE_BINARY,
};

/* |w| / s rounded to nearest even, exactly, by 128-bit division; capped at qmax. */
static uint64_t oracle_mag(float w, float s, uint64_t qmax) {
  int ew, es;
  const double fw = frexp(fabs((double)w), &ew), fs = frexp((double)s, &es);
  const u128 mw = (u128)ldexp(fw, 53), ms = (u128)ldexp(fs, 53); /* exact: floats have 24 bits */
  const int d = ew - es;
  if (d > 70) return qmax;
  if (d < -70) return 0;
  const u128 num = d >= 0 ? mw << d : mw, den = d >= 0 ? ms : ms << -d;
  u128 q = num / den, r = num % den;
  if (2 * r > den || (2 * r == den && (q & 1))) q++;
  return q > qmax ? qmax : (uint64_t)q;
}

/* A random float32 whose unbiased exponent lies in [emin, emax] (subnormals below -126). */
static float random_float(GRand *rng, int emin, int emax) {
  const int lo = CLAMP(emin + 127, 0, 254), hi = CLAMP(emax + 127, 0, 254);
  uint32_t u = (g_rand_int(rng) & 0x807fffffu) | ((uint32_t)g_rand_int_range(rng, lo, hi + 1) << 23);
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static void test_rne_div_exact(void) {
  GRand *rng = g_rand_new_with_seed(3);
  const uint64_t qmaxes[] = {UINT64_MAX, (uint64_t)INT64_MAX, UINT32_MAX, INT32_MAX, 65535, 127, 1};
  for (int i = 0; i < 200000; i++) {
    const float s = fabsf(random_float(rng, -140, 100));
    if (s == 0) continue;
    /* Quotients from far below 1/2 to far beyond 2^64. */
    int es;
    frexpf(s, &es);
    const float w = random_float(rng, CLAMP(es - 30, -149, 120), CLAMP(es + 70, -126, 127));
    for (size_t k = 0; k < G_N_ELEMENTS(qmaxes); k++) {
      bool neg;
      const uint64_t got = loom_rne_div_exact(w, s, qmaxes[k], true, &neg);
      g_assert_cmpuint(got, ==, oracle_mag(w, s, qmaxes[k]));
      g_assert_cmpint(neg, ==, w < 0);
      if (w < 0) g_assert_cmpuint(loom_rne_div_exact(w, s, qmaxes[k], false, &neg), ==, 0);
    }
  }
  /* Exact ties (2k+1)/2 round to the even neighbour. */
  for (int k = 0; k < 100000; k++) {
    const float s = ldexpf(1.0f, g_rand_int_range(rng, -60, 40));
    const uint32_t odd = 2 * (uint32_t)g_rand_int_range(rng, 0, 1 << 22) + 1;
    const float w = ldexpf((float)odd, 0) * s / 2;
    bool neg;
    const uint64_t want = ((odd / 2) & 1) ? odd / 2 + 1 : odd / 2;
    g_assert_cmpuint(loom_rne_div_exact(w, s, UINT64_MAX, true, &neg), ==, want);
    g_assert_cmpuint(loom_rne_div_fast(w, s, 65535, true, &neg), ==, MIN(want, 65535));
  }
  g_rand_free(rng);
}

/* The double path is exact below 2^28: it must agree with the exact one. */
static void test_rne_div_fast_agrees(void) {
  GRand *rng = g_rand_new_with_seed(5);
  const uint64_t qmaxes[] = {1, 3, 7, 15, 127, 255, 32767, 65535, (UINT64_C(1) << 28) - 1};
  for (int i = 0; i < 300000; i++) {
    const float s = fabsf(random_float(rng, -140, 100));
    if (s == 0) continue;
    int es;
    frexpf(s, &es);
    const float w = random_float(rng, CLAMP(es - 4, -149, 120), CLAMP(es + 30, -126, 127));
    const uint64_t qmax = qmaxes[i % G_N_ELEMENTS(qmaxes)];
    bool n1, n2;
    g_assert_cmpuint(loom_rne_div_fast(w, s, qmax, true, &n1), ==, loom_rne_div_exact(w, s, qmax, true, &n2));
    g_assert_cmpuint(loom_rne_div_fast(w, s, qmax, false, &n1), ==, loom_rne_div_exact(w, s, qmax, false, &n2));
  }
  g_rand_free(rng);
}

static uint64_t code(loom_dtype d, float w, float s) {
  uint64_t c = 0;
  loom_error err = {0};
  if (loom_dtype_encode(d, w, s, &c, &err)) g_error("%s", err.message);
  return c;
}

static void test_clamp_no_wrap(void) {
  /* Signed: symmetric, both ends, never the -2^(n-1) code, never wrapped. */
  g_assert_cmphex(code(LOOM_DTYPE_INT8, 1000, 1), ==, 0x7f);
  g_assert_cmphex(code(LOOM_DTYPE_INT8, -1000, 1), ==, 0x81);
  g_assert_cmphex(code(LOOM_DTYPE_INT8, 200, 1), ==, 0x7f); /* wrapping would give 0xc8 */
  g_assert_cmphex(code(LOOM_DTYPE_INT8, 127.5f, 1), ==, 0x7f);
  g_assert_cmphex(code(LOOM_DTYPE_INT8, -128, 1), ==, 0x81);
  g_assert_cmphex(code(LOOM_DTYPE_INT8, 2.5f, 1), ==, 0x02);
  g_assert_cmphex(code(LOOM_DTYPE_INT8, 3.5f, 1), ==, 0x04);
  g_assert_cmphex(code(LOOM_DTYPE_INT8, -2.5f, 1), ==, 0xfe);
  g_assert_cmphex(code(LOOM_DTYPE_INT8, INFINITY, 1), ==, 0x7f);
  g_assert_cmphex(code(LOOM_DTYPE_INT4, 3.75f, 0.5f), ==, 0x7);
  g_assert_cmphex(code(LOOM_DTYPE_INT4, -4, 0.5f), ==, 0x9);
  g_assert_cmphex(code(LOOM_DTYPE_INT4, -1, 1), ==, 0xf);
  g_assert_cmphex(code(LOOM_DTYPE_INT2, -0.6f, 1), ==, 0x3);
  g_assert_cmphex(code(LOOM_DTYPE_INT2, 5, 1), ==, 0x1);
  g_assert_cmphex(code(LOOM_DTYPE_INT16, -40000, 1), ==, 0x8001);
  g_assert_cmphex(code(LOOM_DTYPE_INT32, 3e9f, 1), ==, 0x7fffffff);
  g_assert_cmphex(code(LOOM_DTYPE_INT32, -3e9f, 1), ==, 0x80000001);
  g_assert_cmphex(code(LOOM_DTYPE_INT64, 1e30f, 1), ==, 0x7fffffffffffffff);
  g_assert_cmphex(code(LOOM_DTYPE_INT64, -1e30f, 1), ==, 0x8000000000000001);
  g_assert_cmphex(code(LOOM_DTYPE_INT64, 0x1p62f, 1), ==, 0x4000000000000000);
  g_assert_cmphex(code(LOOM_DTYPE_INT64, -0x1p62f, 0.25f), ==, 0x8000000000000001);
  g_assert_cmphex(code(LOOM_DTYPE_INT64, 0x1.000002p40f, 0x1p-20f), ==, 0x1000002000000000);
  /* Unsigned: negatives clamp to 0 (not folded by abs), top clamps to qmax. */
  g_assert_cmphex(code(LOOM_DTYPE_UINT8, -5, 1), ==, 0);
  g_assert_cmphex(code(LOOM_DTYPE_UINT8, -0.4f, 1), ==, 0);
  g_assert_cmphex(code(LOOM_DTYPE_UINT8, 255.4f, 1), ==, 0xff);
  g_assert_cmphex(code(LOOM_DTYPE_UINT8, 300, 1), ==, 0xff);
  g_assert_cmphex(code(LOOM_DTYPE_UINT8, 128.5f, 1), ==, 0x80);
  g_assert_cmphex(code(LOOM_DTYPE_UINT4, 20, 1), ==, 0xf);
  g_assert_cmphex(code(LOOM_DTYPE_UINT2, 2.5f, 1), ==, 0x2);
  g_assert_cmphex(code(LOOM_DTYPE_UINT2, -INFINITY, 1), ==, 0);
  g_assert_cmphex(code(LOOM_DTYPE_UINT32, 5e9f, 1), ==, 0xffffffff);
  g_assert_cmphex(code(LOOM_DTYPE_UINT64, 1e30f, 1), ==, 0xffffffffffffffff);
  g_assert_cmphex(code(LOOM_DTYPE_UINT64, 0x1p63f, 1), ==, 0x8000000000000000);
  /* Ternary, binary. */
  g_assert_cmphex(code(LOOM_DTYPE_TERNARY, 0.5f, 1), ==, 0);
  g_assert_cmphex(code(LOOM_DTYPE_TERNARY, 0.51f, 1), ==, 1);
  g_assert_cmphex(code(LOOM_DTYPE_TERNARY, -7, 1), ==, 3);
  g_assert_cmphex(code(LOOM_DTYPE_BINARY, 0, 1), ==, 0);
  g_assert_cmphex(code(LOOM_DTYPE_BINARY, -0.0f, 1), ==, 0);
  g_assert_cmphex(code(LOOM_DTYPE_BINARY, -1e-30f, 1), ==, 1);
  g_assert_cmpfloat(loom_dtype_decode(LOOM_DTYPE_BINARY, 1, 0.25f), ==, -0.25);
  g_assert_cmpfloat(loom_dtype_decode(LOOM_DTYPE_BINARY, 0, 0.25f), ==, 0.25);
  g_assert_cmpfloat(loom_dtype_decode(LOOM_DTYPE_INT4, 0x9, 0.5f), ==, -3.5);
  g_assert_cmpfloat(loom_dtype_decode(LOOM_DTYPE_UINT64, UINT64_MAX, 1), ==, 0x1p64);
  /* NaN has no code; a bad scale is refused. */
  loom_error err;
  uint64_t c;
  g_assert_cmpint(loom_dtype_encode(LOOM_DTYPE_INT8, NAN, 1, &c, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "int8 has no code for NaN");
  g_assert_cmpint(loom_dtype_encode(LOOM_DTYPE_BINARY, NAN, 1, &c, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpint(loom_dtype_encode(LOOM_DTYPE_INT8, 1, -1, &c, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "scale -1 is not a finite value >= 0");
  g_assert_cmpint(loom_dtype_encode(LOOM_DTYPE_INT8, 1, INFINITY, &c, &err), ==, LOOM_ERR_INVALID);
}

/* The scale rules, computed here independently. */
static float expected_scale(const loom_dtype_traits *t, const float *v, int64_t n) {
  double stat = 0;
  for (int64_t i = 0; i < n; i++) {
    if (t->kind == LOOM_DTYPE_KIND_SIGNED) stat = MAX(stat, fabs(v[i]));
    else if (t->kind == LOOM_DTYPE_KIND_UNSIGNED) stat = MAX(stat, v[i]);
    else stat += fabs(v[i]);
  }
  if (t->kind == LOOM_DTYPE_KIND_SIGNED || t->kind == LOOM_DTYPE_KIND_UNSIGNED) return (float)(stat / (double)t->qmax);
  return (float)(stat / (double)n);
}

static void check_tensor(const loom_dtype_traits *t, const float *w, int64_t rows, int64_t cols, bool per_tensor) {
  const int64_t nscales = per_tensor ? 1 : rows;
  g_assert_cmpint(loom_dtype_scale_count(t->id, rows, per_tensor ? LOOM_SCALE_PER_TENSOR : LOOM_SCALE_PER_ROW), ==,
                  nscales);
  float *scales = g_new(float, nscales);
  for (int64_t r = 0; r < nscales; r++) {
    const float *v = per_tensor ? w : w + r * cols;
    const int64_t n = per_tensor ? rows * cols : cols;
    scales[r] = loom_dtype_compute_scale(t->id, v, n);
    g_assert_cmpfloat(scales[r], ==, expected_scale(t, v, n));
    g_assert_cmpfloat(scales[r], >, 0);
  }
  size_t nbytes;
  g_assert_cmpint(loom_dtype_packed_bytes(t->id, rows, cols, &nbytes, NULL), ==, 0);
  g_assert_cmpuint(nbytes, ==, (size_t)rows * (((size_t)cols * (size_t)t->bits + 7) / 8));
  uint8_t *packed = g_malloc(nbytes);
  float *back = g_new(float, rows * cols);
  g_assert_cmpint(loom_dtype_quantize(t->id, w, rows, cols, scales, nscales, packed, NULL), ==, 0);
  g_assert_cmpint(loom_dtype_dequantize(t->id, packed, rows, cols, scales, nscales, back, NULL), ==, 0);
  const size_t row_bytes = loom_dtype_row_bytes(t->id, cols);
  for (int64_t r = 0; r < rows; r++) {
    const float s = scales[per_tensor ? 0 : r];
    for (int64_t c = 0; c < cols; c++) {
      const float x = w[r * cols + c];
      const uint64_t got = loom_dtype_code_get(t->id, packed + r * row_bytes, c);
      /* The expected code, from the rule. */
      uint64_t want;
      if (t->kind == LOOM_DTYPE_KIND_BINARY) {
        want = x < 0;
      } else if (t->kind == LOOM_DTYPE_KIND_UNSIGNED) {
        want = x < 0 ? 0 : oracle_mag(x, s, t->qmax);
      } else {
        const uint64_t mag = oracle_mag(x, s, t->qmax);
        want = (x < 0 ? UINT64_C(0) - mag : mag) & loom_code_mask(t->bits);
      }
      g_assert_cmphex(got, ==, want);
      const float deq = back[r * cols + c];
      g_assert_cmpfloat(deq, ==, (float)t->decode(got, s));
      /* Inside the range the error is at most s/2 (plus the rounding of the
       * float32 result itself, which matters only for the 32/64-bit codes). */
      if (t->kind == LOOM_DTYPE_KIND_SIGNED || (t->kind == LOOM_DTYPE_KIND_UNSIGNED && x >= 0))
        g_assert_cmpfloat(fabs((double)deq - x), <=, s / 2.0 + fabs((double)deq) * 0x1p-24);
      if (t->kind == LOOM_DTYPE_KIND_UNSIGNED && x < 0) g_assert_cmpfloat(deq, ==, 0);
    }
  }
  g_free(packed);
  g_free(back);
  g_free(scales);
}

static void test_scaled_tensors(void) {
  GRand *rng = g_rand_new_with_seed(17);
  const int64_t rows = 5, cols = 37;
  float *w = g_new(float, rows * cols);
  for (size_t k = 0; k < G_N_ELEMENTS(scaled); k++) {
    const loom_dtype_traits *t = loom_dtype_traits_get(scaled[k]);
    g_test_message("%s", t->name);
    for (int rep = 0; rep < 20; rep++) {
      /* Rows of very different magnitudes: per-row scales must differ. */
      for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < cols; c++)
          w[r * cols + c] = (float)(g_rand_double_range(rng, -1, 1) * pow(10, (double)r - 2));
      check_tensor(t, w, rows, cols, false);
      check_tensor(t, w, rows, cols, true);
    }
  }
  g_free(w);
  g_rand_free(rng);
}

static void test_ternary_binary_rules(void) {
  const float row[] = {0.5f, -0.2f, 0.05f, -1.0f, 0.0f};
  const float s = loom_dtype_compute_scale(LOOM_DTYPE_TERNARY, row, 5);
  g_assert_cmpfloat(s, ==, (float)(1.75 / 5));
  uint8_t packed[2];
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_TERNARY, row, 1, 5, &s, 1, packed, NULL), ==, 0);
  /* codes 1, -1, 0, -1 (clamped), 0 -> 01 11 00 11 | 00 */
  g_assert_cmphex(packed[0], ==, 0xcd);
  g_assert_cmphex(packed[1], ==, 0x00);
  const float brow[] = {0.5f, -0.2f, 0.0f, -0.0f, 3.0f};
  const float bs = loom_dtype_compute_scale(LOOM_DTYPE_BINARY, brow, 5);
  g_assert_cmpfloat(bs, ==, (float)(3.7 / 5));
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_BINARY, brow, 1, 5, &bs, 1, packed, NULL), ==, 0);
  g_assert_cmphex(packed[0], ==, 0x02); /* only -0.2 is negative; 0 and -0 are +1 */
  float back[5];
  g_assert_cmpint(loom_dtype_dequantize(LOOM_DTYPE_BINARY, packed, 1, 5, &bs, 1, back, NULL), ==, 0);
  g_assert_cmpfloat(back[0], ==, bs);
  g_assert_cmpfloat(back[1], ==, -bs);
  g_assert_cmpfloat(back[3], ==, bs);
}

static void test_degenerate_scales(void) {
  /* A zero row: scale 0, every code 0, dequantized 0. */
  const float zeros[4] = {0, -0.0f, 0, 0};
  for (size_t k = 0; k < G_N_ELEMENTS(scaled); k++) {
    const loom_dtype d = scaled[k];
    const float s = loom_dtype_compute_scale(d, zeros, 4);
    g_assert_cmpfloat(s, ==, 0);
    uint8_t packed[32] = {0};
    float back[4];
    g_assert_cmpint(loom_dtype_quantize(d, zeros, 1, 4, &s, 1, packed, NULL), ==, 0);
    g_assert_cmpint(loom_dtype_dequantize(d, packed, 1, 4, &s, 1, back, NULL), ==, 0);
    for (int i = 0; i < 4; i++) g_assert_cmpfloat(back[i], ==, 0);
  }
  /* Unsigned, all negative: scale 0, all 0. */
  const float neg[3] = {-1, -2, -3};
  g_assert_cmpfloat(loom_dtype_compute_scale(LOOM_DTYPE_UINT8, neg, 3), ==, 0);
  /* A scale that would underflow is raised to the smallest float32. */
  const float tiny[2] = {FLT_TRUE_MIN, 0};
  const float s = loom_dtype_compute_scale(LOOM_DTYPE_INT8, tiny, 2);
  g_assert_cmpfloat(s, ==, FLT_TRUE_MIN);
  g_assert_cmphex(code(LOOM_DTYPE_INT8, FLT_TRUE_MIN, s), ==, 1);
  g_assert_cmpfloat(loom_dtype_compute_scale(LOOM_DTYPE_TERNARY, tiny, 2), ==, FLT_TRUE_MIN);
  /* Unscaled dtypes have scale 1. */
  g_assert_cmpfloat(loom_dtype_compute_scale(LOOM_DTYPE_FLOAT16, neg, 3), ==, 1);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/dtype/int/rne-div-exact", test_rne_div_exact);
  g_test_add_func("/dtype/int/rne-div-fast-agrees", test_rne_div_fast_agrees);
  g_test_add_func("/dtype/int/clamp-no-wrap", test_clamp_no_wrap);
  g_test_add_func("/dtype/int/scaled-tensors", test_scaled_tensors);
  g_test_add_func("/dtype/int/ternary-binary", test_ternary_binary_rules);
  g_test_add_func("/dtype/int/degenerate-scales", test_degenerate_scales);
  return g_test_run();
}
