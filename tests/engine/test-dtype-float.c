/*
 * Exhaustive tests of the small floating formats: every code of float16,
 * bfloat16, fp8-e4m3, fp8-e5m2 and fp4 is decoded and re-encoded, every tie
 * between neighbouring codes is checked to round to the even code, and the
 * encoder is compared with a brute-force nearest-value search.
 */
#include <float.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "core/dtype-internal.h"
#include "loom/loom.h"

static const loom_dtype small_floats[] = {LOOM_DTYPE_FLOAT16, LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_FP8_E4M3,
                                          LOOM_DTYPE_FP8_E5M2, LOOM_DTYPE_FP4};

static float bits_to_float(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t enc(const loom_dtype_traits *t, float x) {
  uint64_t code = 0;
  g_assert_cmpint(t->encode(x, 1.0f, &code), ==, 0);
  return (uint32_t)code;
}

static uint32_t sign_bit(const loom_dtype_traits *t) { return UINT32_C(1) << (t->bits - 1); }

/* Which codes are NaN, from the standards, independently of the decoder. */
static bool is_nan_code(loom_dtype d, uint32_t c) {
  switch (d) {
  case LOOM_DTYPE_FLOAT16: return (c & 0x7c00) == 0x7c00 && (c & 0x3ff);
  case LOOM_DTYPE_BFLOAT16: return (c & 0x7f80) == 0x7f80 && (c & 0x7f);
  case LOOM_DTYPE_FP8_E4M3: return (c & 0x7f) == 0x7f;
  case LOOM_DTYPE_FP8_E5M2: return (c & 0x7c) == 0x7c && (c & 0x3);
  default: return false;
  }
}

static void test_decode_encode_identity(void) {
  const int expected_nans[] = {2046, 254, 2, 6, 0};
  for (size_t k = 0; k < G_N_ELEMENTS(small_floats); k++) {
    const loom_dtype d = small_floats[k];
    const loom_dtype_traits *t = loom_dtype_traits_get(d);
    const uint32_t n = UINT32_C(1) << t->bits;
    int nans = 0;
    for (uint32_t c = 0; c < n; c++) {
      const double v = t->decode(c, 1.0f);
      g_assert_cmpint(isnan(v), ==, is_nan_code(d, c));
      if (isnan(v)) {
        nans++;
        continue;
      }
      /* Every value is a float32: decode -> (float) loses nothing. */
      g_assert_cmpfloat((double)(float)v, ==, v);
      g_assert_cmpint(signbit(v) != 0, ==, (c & sign_bit(t)) != 0);
      /* The non-saturating encoder is the exact inverse, infinities included. */
      g_assert_cmphex(loom_minifloat_encode(t, (float)v, false), ==, c);
      /* The weight conversion is too, except that fp8 saturates ±inf to ±max. */
      const uint32_t want = isinf(v) && t->saturates ? (c & sign_bit(t)) | loom_minifloat_max_code(t) : c;
      g_assert_cmphex(enc(t, (float)v), ==, want);
    }
    g_assert_cmpint(nans, ==, expected_nans[k]);
  }
}

/* Codes c and c + 1 (positive, finite) are neighbours; their midpoint is a
 * float32 and must go to the code with the even mantissa, i.e. the even code.
 * One float32 ulp either side goes to the nearer code. */
static void test_ties_to_even(void) {
  for (size_t k = 0; k < G_N_ELEMENTS(small_floats); k++) {
    const loom_dtype_traits *t = loom_dtype_traits_get(small_floats[k]);
    const uint32_t max = loom_minifloat_max_code(t);
    int ties = 0;
    for (uint32_t c = 0; c < max; c++) {
      const double a = t->decode(c, 1.0f), b = t->decode(c + 1, 1.0f);
      const float mid = (float)((a + b) / 2);
      g_assert_cmpfloat((double)mid, ==, (a + b) / 2); /* exact */
      const uint32_t even = (c & 1) ? c + 1 : c;
      for (int s = 0; s < 2; s++) {
        const uint32_t sb = s ? sign_bit(t) : 0;
        const float m = s ? -mid : mid;
        g_assert_cmphex(enc(t, m), ==, even | sb);
        g_assert_cmphex(enc(t, nextafterf(m, s ? -INFINITY : INFINITY)), ==, (c + 1) | sb);
        g_assert_cmphex(enc(t, nextafterf(m, 0.0f)), ==, c | sb);
      }
      ties++;
    }
    g_assert_cmpint(ties, ==, (int)max);
  }
}

typedef struct {
  loom_dtype d;
  float max, over_tie; /* largest finite; max + half an ulp (rounds away from max) */
  float min_sub;       /* smallest subnormal */
  uint32_t max_code, inf_or_sat, nan_code;
} boundary;

static void test_boundaries(void) {
  const boundary cases[] = {
    {LOOM_DTYPE_FLOAT16, 65504.0f, 65520.0f, 0x1p-24f, 0x7bff, 0x7c00, 0x7e00},
    {LOOM_DTYPE_BFLOAT16, 0x1.fep127f, 0x1.ffp127f, 0x1p-133f, 0x7f7f, 0x7f80, 0x7fc0},
    {LOOM_DTYPE_FP8_E4M3, 448.0f, 464.0f, 0x1p-9f, 0x7e, 0x7e, 0x7f},
    {LOOM_DTYPE_FP8_E5M2, 57344.0f, 61440.0f, 0x1p-16f, 0x7b, 0x7b, 0x7e},
    {LOOM_DTYPE_FP4, 6.0f, 7.0f, 0.5f, 0x7, 0x7, 0},
  };
  for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
    const boundary *b = &cases[k];
    const loom_dtype_traits *t = loom_dtype_traits_get(b->d);
    const uint32_t sb = sign_bit(t);
    g_test_message("%s", t->name);
    g_assert_cmpfloat(t->max_value, ==, b->max);
    g_assert_cmpfloat(t->min_value, ==, -b->max);
    g_assert_cmpfloat(t->decode(b->max_code, 1.0f), ==, b->max);
    g_assert_cmphex(loom_minifloat_max_code(t), ==, b->max_code);
    g_assert_cmphex(enc(t, b->max), ==, b->max_code);
    g_assert_cmphex(enc(t, -b->max), ==, b->max_code | sb);
    /* Just below max + half ulp rounds to max; at it (a tie whose even
     * neighbour is beyond max) and above it overflows: ±inf or ±max. */
    g_assert_cmphex(enc(t, nextafterf(b->over_tie, 0.0f)), ==, b->max_code);
    g_assert_cmphex(enc(t, b->over_tie), ==, b->inf_or_sat);
    g_assert_cmphex(enc(t, -b->over_tie), ==, b->inf_or_sat | sb);
    g_assert_cmphex(enc(t, FLT_MAX), ==, b->inf_or_sat);
    g_assert_cmphex(enc(t, INFINITY), ==, t->has_inf && !t->saturates ? b->inf_or_sat : b->max_code);
    g_assert_cmphex(enc(t, -INFINITY), ==, (t->has_inf && !t->saturates ? b->inf_or_sat : b->max_code) | sb);
    /* Smallest subnormal; half of it is a tie with zero (even): zero. */
    g_assert_cmpfloat(t->decode(1, 1.0f), ==, b->min_sub);
    g_assert_cmphex(enc(t, b->min_sub), ==, 1);
    g_assert_cmphex(enc(t, b->min_sub / 2), ==, 0);
    g_assert_cmphex(enc(t, -b->min_sub / 2), ==, sb);
    g_assert_cmphex(enc(t, nextafterf(b->min_sub / 2, 1.0f)), ==, 1);
    g_assert_cmphex(enc(t, b->min_sub / 4), ==, 0);
    g_assert_cmphex(enc(t, FLT_TRUE_MIN), ==, 0);
    /* Signed zeros. */
    g_assert_cmphex(enc(t, 0.0f), ==, 0);
    g_assert_cmphex(enc(t, -0.0f), ==, sb);
    g_assert_true(signbit(t->decode(sb, 1.0f)) && t->decode(sb, 1.0f) == 0.0);
    /* NaN: the canonical quiet NaN with the sign kept; fp4 has none. */
    uint64_t code = 12345;
    if (b->nan_code) {
      g_assert_cmphex(enc(t, NAN), ==, b->nan_code);
      g_assert_cmphex(enc(t, -NAN), ==, b->nan_code | sb);
      g_assert_cmphex(enc(t, bits_to_float(0x7f800001)), ==, b->nan_code);
      g_assert_true(isnan(t->decode(b->nan_code, 1.0f)));
    } else {
      g_assert_cmpint(t->encode(NAN, 1.0f, &code), ==, LOOM_ERR_NONFINITE);
      g_assert_cmpuint(code, ==, 12345);
    }
  }
  /* The fp4 value set, exactly. */
  const float fp4[] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  const loom_dtype_traits *t4 = loom_dtype_traits_get(LOOM_DTYPE_FP4);
  for (uint32_t c = 0; c < 16; c++)
    g_assert_cmpfloat(t4->decode(c, 1.0f), ==, (c & 8) ? -fp4[c & 7] : fp4[c & 7]);
  /* E4M3FN: S.1111.110 = 448 is finite, only S.1111.111 is NaN. */
  g_assert_cmpfloat(loom_dtype_decode(LOOM_DTYPE_FP8_E4M3, 0xfe, 1.0f), ==, -448.0);
  g_assert_cmpfloat(loom_dtype_decode(LOOM_DTYPE_FP8_E4M3, 0x78, 1.0f), ==, 256.0);
  g_assert_true(isinf(loom_dtype_decode(LOOM_DTYPE_FP8_E5M2, 0x7c, 1.0f)));
}

/* Brute force: the nearest finite value by search over the sorted values,
 * ties to the even code, overflow as the format says. */
static uint32_t oracle(const loom_dtype_traits *t, const double *vals, uint32_t max, float x) {
  const uint32_t sb = signbit(x) ? sign_bit(t) : 0;
  const double a = fabs((double)x);
  if (a == INFINITY) return sb | (t->saturates || !t->has_inf ? max : max + 1);
  uint32_t lo = 0, hi = max; /* vals[0..max] increasing */
  if (a >= vals[max]) {
    const double ulp = vals[max] - vals[max - 1];
    if (a < vals[max] + ulp / 2 || (a == vals[max] + ulp / 2 && !(max & 1))) return sb | max;
    return sb | (t->saturates || !t->has_inf ? max : max + 1);
  }
  while (hi - lo > 1) {
    uint32_t mid = (lo + hi) / 2;
    if (vals[mid] <= a) lo = mid;
    else hi = mid;
  }
  const double dl = a - vals[lo], dh = vals[hi] - a;
  if (dl < dh) return sb | lo;
  if (dh < dl) return sb | hi;
  return sb | ((lo & 1) ? hi : lo);
}

static void test_against_oracle(void) {
  GRand *rng = g_rand_new_with_seed(7);
  for (size_t k = 0; k < G_N_ELEMENTS(small_floats); k++) {
    const loom_dtype_traits *t = loom_dtype_traits_get(small_floats[k]);
    const uint32_t max = loom_minifloat_max_code(t);
    double *vals = g_new(double, max + 1);
    for (uint32_t c = 0; c <= max; c++) vals[c] = t->decode(c, 1.0f);
    for (int i = 0; i < 100000; i++) {
      /* Exponents around the format's range, and anywhere. */
      uint32_t u = g_rand_int(rng);
      if (i % 2) {
        int center = 127 - t->exp_bias + (int)g_rand_int_range(rng, -t->man_bits - 3, (1 << t->exp_bits) + 2);
        u = (u & 0x807fffffu) | ((uint32_t)CLAMP(center, 0, 254) << 23);
      }
      const float x = bits_to_float(u);
      if (isnan(x)) continue;
      g_assert_cmphex(enc(t, x), ==, oracle(t, vals, max, x));
    }
    g_free(vals);
  }
  g_rand_free(rng);
}

static void test_float32_float64(void) {
  GRand *rng = g_rand_new_with_seed(11);
  const loom_dtype_traits *f32 = loom_dtype_traits_get(LOOM_DTYPE_FLOAT32);
  const loom_dtype_traits *f64 = loom_dtype_traits_get(LOOM_DTYPE_FLOAT64);
  for (int i = 0; i < 100000; i++) {
    const uint32_t u = g_rand_int(rng);
    const float x = bits_to_float(u);
    uint64_t c32, c64;
    g_assert_cmpint(f32->encode(x, 1.0f, &c32), ==, 0);
    g_assert_cmpint(f64->encode(x, 1.0f, &c64), ==, 0);
    g_assert_cmphex(c32, ==, u);
    const float back32 = (float)f32->decode(c32, 1.0f), back64 = (float)f64->decode(c64, 1.0f);
    /* Through double a signalling NaN comes back quiet: only NaN-ness holds. */
    if (isnan(x)) {
      g_assert_true(isnan(back32) && isnan(back64));
      continue;
    }
    g_assert_cmpmem(&back32, 4, &u, 4);
    g_assert_cmpmem(&back64, 4, &u, 4);
    double dx = x;
    g_assert_cmpmem(&c64, 8, &dx, 8);
  }
  g_rand_free(rng);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/dtype/float/decode-encode-identity", test_decode_encode_identity);
  g_test_add_func("/dtype/float/ties-to-even", test_ties_to_even);
  g_test_add_func("/dtype/float/boundaries", test_boundaries);
  g_test_add_func("/dtype/float/oracle", test_against_oracle);
  g_test_add_func("/dtype/float/float32-float64", test_float32_float64);
  return g_test_run();
}
