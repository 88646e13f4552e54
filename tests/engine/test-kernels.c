/*
 * The vector kernel levels against the reference (kernels/cpu.h): for every
 * dtype and every level the machine has, quantize and dequantize must give
 * the same bits as the reference codecs, on every code of the formats of up
 * to 16 bits, on every float32 exponent with random mantissas, on the edge
 * values (NaN, ±inf, ±0, subnormals, the largest finite values, exact ties)
 * and on rows of odd lengths (1, 3, 17, 4095, ...), whose tails and padding
 * bits are where packing goes wrong. Levels the CPU lacks are reported and
 * skipped; the same binary runs them on a machine that has them.
 */
#include <float.h>
#include <glib.h>
#include <math.h>
#include <string.h>

#include "core/dtype-internal.h"
#include "kernels/cpu.h"
#include "kernels/qgemm.h"
#include "loom/loom.h"
#include "test-levels.h"

static const int64_t lengths[] = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 33, 64, 100, 4095};

static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

static uint32_t xorshift(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (uint32_t)(*s >> 32);
}

/* Values that probe a format: edges, every exponent, and ties between the
 * decoded neighbours of random codes (for scaled formats, ties of the code
 * grid at the given scale). */
static float *probe_values(const loom_dtype_traits *t, float scale, int64_t *count, uint64_t *seed) {
  GArray *v = g_array_new(FALSE, FALSE, sizeof(float));
  static const uint32_t edges[] = {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff, 0x807fffff,
                                   0x00800000, 0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x3f800000,
                                   0xbf800000, 0x3f000000, 0x477fe000, 0x477ff000, 0x477fefff, 0x43e00000,
                                   0x43f00000, 0x47600000, 0x47700000, 0x40c00000, 0x40e00000, 0x38800000,
                                   0x33800000, 0x33000000, 0x33000001, 0x387fc000, 0x3b000000, 0x3a800000};
  for (size_t i = 0; i < G_N_ELEMENTS(edges); i++) {
    float f = from_bits(edges[i]);
    g_array_append_val(v, f);
  }
  /* Every exponent and sign, random mantissas, plus mantissas that end in a
   * half-way pattern for every cut position (ties for each format). */
  for (uint32_t e = 0; e < 256; e++)
    for (uint32_t s = 0; s < 2; s++) {
      for (int k = 0; k < 24; k++) {
        uint32_t m = xorshift(seed) & 0x7fffff;
        if (k < 23) m = (m & ~((UINT32_C(1) << (k + 1)) - 1)) | (UINT32_C(1) << k); /* ...1000 */
        float f = from_bits((s << 31) | (e << 23) | m);
        g_array_append_val(v, f);
      }
    }
  if (t->scaled && scale > 0) {
    /* Ties and near-ties of the code grid, inside and beyond the range. */
    const double qmax = t->qmax > (UINT64_C(1) << 40) ? 0x1p40 : (double)t->qmax;
    for (int k = 0; k < 400; k++) {
      double q = floor((double)(xorshift(seed) % 2001) / 1000.0 * (qmax + 2)) - qmax - 1;
      float f = (float)((q + 0.5) * scale);
      g_array_append_val(v, f);
      f = nextafterf(f, INFINITY);
      g_array_append_val(v, f);
      f = (float)(q * scale);
      g_array_append_val(v, f);
    }
    /* Ties of codes below 2^20, which a float32 holds exactly at these
     * scales: the 32-bit formats' quotients are mostly far larger, so the
     * draw above seldom puts their near-tie correction to work. */
    for (int k = 0; k < 400; k++) {
      const double q = (double)(xorshift(seed) % (UINT32_C(1) << 21)) - 0x1p20;
      float f = (float)((q + 0.5) * scale);
      g_array_append_val(v, f);
      f = nextafterf(f, -INFINITY);
      g_array_append_val(v, f);
    }
  } else if (!t->scaled && t->bits <= 8) {
    /* fp8, fp4: every tie between neighbouring codes and the floats on
     * either side of it */
    for (uint32_t c = 0; c + 1 < (UINT32_C(1) << t->bits); c++) {
      const double a = loom_minifloat_decode(t, c), b = loom_minifloat_decode(t, c + 1);
      if (!isfinite(a) || !isfinite(b)) continue;
      const float tie = (float)((a + b) / 2), around[3] = {tie, nextafterf(tie, INFINITY), nextafterf(tie, -INFINITY)};
      for (int k = 0; k < 3; k++) g_array_append_val(v, around[k]);
    }
  } else if (!t->scaled && t->bits <= 16) {
    for (int k = 0; k < 2000; k++) {
      uint32_t c = xorshift(seed) & (uint32_t)loom_code_mask(t->bits);
      const double a = loom_minifloat_decode(t, c), b = loom_minifloat_decode(t, c + 1);
      if (!isfinite(a) || !isfinite(b)) continue;
      float f = (float)((a + b) / 2);
      g_array_append_val(v, f);
    }
  }
  *count = (int64_t)v->len;
  return (float *)g_array_free(v, FALSE);
}

/* quantize_row_finite_stream on one row, its output at each of the
 * offsets 0, 8 and 24 bytes from a 64-byte boundary (the values before the
 * first boundary go through ordinary stores): `want`'s bytes where the row
 * is finite (want NULL: the reference refused the row), else
 * LOOM_ERR_NONFINITE at the first NaN or infinity. */
static void check_stream_encode(const loom_kernels *fast, const loom_dtype_traits *t, const float *x, int64_t len,
                                float scale, const uint8_t *want, size_t row_bytes) {
  int64_t first_bad = -1;
  for (int64_t i = 0; i < len && first_bad < 0; i++)
    if (!isfinite(x[i])) first_bad = i;
  uint8_t *buf = g_aligned_alloc0(row_bytes + 64, 1, 64);
  static const size_t offsets[] = {0, 8, 24};
  for (size_t o = 0; o < G_N_ELEMENTS(offsets); o++) {
    int64_t bad = -1;
    const int rc = fast->quantize_row_finite_stream[t->id](t, x, len, scale, buf + offsets[o], &bad);
    loom_stream_fence();
    if (first_bad >= 0) {
      g_assert_cmpint(rc, ==, LOOM_ERR_NONFINITE);
      g_assert_cmpint(bad, ==, first_bad);
    } else {
      g_assert_cmpint(rc, ==, 0);
      g_assert_nonnull(want);
      if (memcmp(buf + offsets[o], want, row_bytes) != 0)
        g_error("%s %s, length %lld, offset %zu: the streaming encode differs from the reference", fast->name,
                t->name, (long long)len, offsets[o]);
    }
  }
  g_aligned_free(buf);
}

/* Quantizes `n` values in rows of `len` through both tables; same rc, same
 * bad index, same bytes (padding included). */
static void compare_quantize(const loom_kernels *fast, const loom_kernels *ref, const loom_dtype_traits *t,
                             const float *x, int64_t n, int64_t len, float scale) {
  const size_t row_bytes = loom_dtype_row_bytes(t->id, len);
  uint8_t *a = g_malloc(row_bytes + 1), *b = g_malloc(row_bytes + 1);
  for (int64_t off = 0; off + len <= n; off += len) {
    memset(a, 0, row_bytes + 1);
    memset(b, 0, row_bytes + 1);
    int64_t bad_a = -1, bad_b = -1;
    const int rc_a = fast->quantize_row[t->id](t, x + off, len, scale, a, &bad_a);
    const int rc_b = ref->quantize_row[t->id](t, x + off, len, scale, b, &bad_b);
    g_assert_cmpint(rc_a, ==, rc_b);
    if (fast->quantize_row_finite_stream[t->id]) /* non-temporal stores: the same bytes or the first bad column */
      check_stream_encode(fast, t, x + off, len, scale, rc_b ? NULL : b, row_bytes);
    if (rc_a) {
      g_assert_cmpint(bad_a, ==, bad_b);
      continue;
    }
    if (memcmp(a, b, row_bytes + 1) != 0) {
      for (int64_t i = 0; i < len; i++) {
        const uint64_t ca = loom_pack_get(t->bits, a, i), cb = loom_pack_get(t->bits, b, i);
        if (ca != cb)
          g_error("%s %s, scale %a, length %lld: value %a (column %lld) gives code 0x%llx, reference 0x%llx", fast->name,
                  t->name, (double)scale, (long long)len, (double)x[off + i], (long long)i, (unsigned long long)ca,
                  (unsigned long long)cb);
      }
      g_error("%s %s, length %lld: the codes agree but the padding or the byte after the row differs", fast->name,
              t->name, (long long)len);
    }
  }
  g_free(a);
  g_free(b);
}

/* Dequantizes `ncodes` codes (as packed bytes) in rows of `len`. */
static void compare_dequantize(const loom_kernels *fast, const loom_kernels *ref, const loom_dtype_traits *t,
                               const uint8_t *codes, int64_t ncodes, int64_t len, float scale) {
  const size_t row_bytes = loom_dtype_row_bytes(t->id, len);
  float lut[256];
  if (!t->scaled && t->bits <= 8) loom_float_build_lut(t, lut);
  uint8_t *row = g_malloc0(row_bytes);
  float *a = g_malloc((size_t)(len + 1) * sizeof *a), *b = g_malloc((size_t)(len + 1) * sizeof *b);
  float *s = g_aligned_alloc((size_t)len + 17, sizeof *s, 64);
  for (int64_t off = 0; off + len <= ncodes; off += len) {
    memset(row, 0, row_bytes);
    for (int64_t i = 0; i < len; i++) loom_pack_put(t->bits, row, i, loom_pack_get(t->bits, codes, off + i));
    a[len] = b[len] = 42.0f; /* nothing is written past the row */
    fast->dequantize_row[t->id](t, row, len, scale, lut, a);
    ref->dequantize_row[t->id](t, row, len, scale, lut, b);
    /* the same bits through non-temporal stores, dst anywhere in a line
     * (the values before its first boundary go through ordinary stores:
     * a binary row 16 bytes past one starts that boundary mid-byte); one
     * place a row, the rows taking the places in turn */
    static const int64_t starts[] = {0, 1, 4, 12, 15};
    if (fast->dequantize_row_stream[t->id]) {
      const size_t k = (size_t)(off / len) % G_N_ELEMENTS(starts);
      float *d = s + starts[k];
      if (starts[k]) d[-1] = -42.0f;
      d[len] = 42.0f;
      fast->dequantize_row_stream[t->id](t, row, len, scale, lut, d);
      loom_stream_fence();
      if (memcmp(d, b, (size_t)(len + 1) * sizeof *s) != 0 || (starts[k] && d[-1] != -42.0f))
        g_error("%s %s, scale %a, length %lld, output %lld floats past a 64-byte boundary: the streaming decode "
                "differs from the reference",
                fast->name, t->name, (double)scale, (long long)len, (long long)starts[k]);
    }
    if (memcmp(a, b, (size_t)(len + 1) * sizeof *a) != 0) {
      for (int64_t i = 0; i <= len; i++) {
        uint32_t ua, ub;
        memcpy(&ua, &a[i], 4);
        memcpy(&ub, &b[i], 4);
        if (ua != ub)
          g_error("%s %s, scale %a, length %lld: code 0x%llx (column %lld) decodes to 0x%08x, reference 0x%08x",
                  fast->name, t->name, (double)scale, (long long)len,
                  i < len ? (unsigned long long)loom_pack_get(t->bits, row, i) : 0ull, (long long)i, ua, ub);
      }
    }
  }
  g_free(row);
  g_free(a);
  g_free(b);
  g_aligned_free(s);
}

static const float scales[] = {1.0f,       0.0f,          0.5f,          0x1p-20f, 3.0e-3f, 7.0f, 0x1p-149f,
                               1.0e30f,    0x1p-125f,     0x1.fffffep-126f, 0x1.234568p-120f};

static void check_level(const loom_kernels *fast) {
  const loom_kernels *ref = loom_kernels_for(LOOM_KERNELS_REF);
  uint64_t seed = 0x9e3779b97f4a7c15u;
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    for (size_t si = 0; si < (t->scaled ? G_N_ELEMENTS(scales) : 1); si++) {
      const float scale = scales[si];
      int64_t n;
      float *x = probe_values(t, scale, &n, &seed);
      /* Shuffled, so every kind of value meets every lane and the tail. */
      for (int64_t i = n - 1; i > 0; i--) {
        const int64_t j = xorshift(&seed) % (uint64_t)(i + 1);
        const float tmp = x[i];
        x[i] = x[j];
        x[j] = tmp;
      }
      for (size_t li = 0; li < G_N_ELEMENTS(lengths); li++) compare_quantize(fast, ref, t, x, n, lengths[li], scale);
      /* A NaN at a random place of rows without one elsewhere: dtypes
       * without a NaN code must stop at the same column. */
      for (int64_t i = 0; i < n; i++)
        if (isnan(x[i])) x[i] = 1.0f;
      for (int k = 0; k < 20; k++) {
        const int64_t len = lengths[k % G_N_ELEMENTS(lengths)];
        if (len > n) continue;
        const int64_t at = xorshift(&seed) % (uint64_t)len;
        const float saved = x[at];
        x[at] = from_bits(0x7fc00000u | (xorshift(&seed) & 0x803fffffu));
        compare_quantize(fast, ref, t, x, len, len, scale);
        x[at] = saved;
      }
      g_free(x);

      /* Every code for formats up to 16 bits, random codes beyond. */
      const int64_t ncodes = t->bits <= 16 ? (INT64_C(1) << t->bits) : 70000;
      const size_t nbytes = loom_dtype_row_bytes(t->id, ncodes);
      uint8_t *codes = g_malloc0(nbytes);
      for (int64_t i = 0; i < ncodes; i++)
        loom_pack_put(t->bits, codes, i,
                      t->bits <= 16 ? (uint64_t)i
                                    : (((uint64_t)xorshift(&seed) << 32) | xorshift(&seed)) & loom_code_mask(t->bits));
      for (size_t li = 0; li < G_N_ELEMENTS(lengths); li++)
        compare_dequantize(fast, ref, t, codes, ncodes, lengths[li], scale);
      compare_dequantize(fast, ref, t, codes, ncodes, ncodes, scale);
      g_free(codes);
    }
  }
}

/* The morph's fused scan: the same finiteness verdict and, when finite,
 * the same statistic bits as the reference's separate scans, every kind. */
static void check_scale_scan(const loom_kernels *fast, const loom_kernels *ref, const float *v, int n) {
  static const loom_dtype_kind kinds[] = {LOOM_DTYPE_KIND_SIGNED, LOOM_DTYPE_KIND_UNSIGNED, LOOM_DTYPE_KIND_TERNARY,
                                          LOOM_DTYPE_KIND_BINARY};
  for (size_t k = 0; k < G_N_ELEMENTS(kinds); k++) {
    double sa = -1, sr = -1;
    const bool ba = fast->scale_scan(v, n, kinds[k], &sa), br = ref->scale_scan(v, n, kinds[k], &sr);
    g_assert_cmpint(ba, ==, br);
    g_assert_cmpint(br, ==, ref->any_nonfinite(v, n));
    if (!br) g_assert_cmpmem(&sa, 8, &sr, 8);
  }
  /* The same from quantize_row_scan, v being the row after the one encoded
   * (every dtype that has it, a scale of the fast path and one below it),
   * and that row's codes as the reference's. */
  float src[200];
  for (int i = 0; i < n; i++) src[i] = sinf((float)i * 0.37f) * (float)(1 + i % 7);
  static const float scan_scales[] = {0.01f, 0x1p-127f};
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    if (!fast->quantize_row_scan[d]) continue;
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    double sr = -1;
    const bool br = ref->scale_scan(v, n, t->kind, &sr);
    for (size_t si = 0; si < G_N_ELEMENTS(scan_scales); si++) {
      uint8_t codes[200 * 8] = {0}, want[200 * 8] = {0}; /* the last byte's unused bits: 0 */
      int64_t bad = -1;
      bool nb = !br;
      double st = -1;
      g_assert_cmpint(fast->quantize_row_scan[d](t, src, n, scan_scales[si], codes, &bad, v, &nb, &st), ==, 0);
      g_assert_cmpint(ref->quantize_row[d](t, src, n, scan_scales[si], want, &bad), ==, 0);
      const size_t nbytes = loom_dtype_row_bytes((loom_dtype)d, n);
      g_assert_cmpmem(codes, nbytes, want, nbytes);
      g_assert_cmpint(nb, ==, br);
      if (!br) g_assert_cmpmem(&st, 8, &sr, 8);
      /* The streaming variant, its output at several places in a line
       * (the values before the first boundary stored apart, the scan at an
       * index of its own): the same bytes, nothing written around them. */
      static const size_t places[] = {0, 8, 16, 40, 56};
      for (size_t pl = 0; fast->quantize_row_scan_stream[d] && pl < G_N_ELEMENTS(places); pl++) {
        _Alignas(64) uint8_t out[200 * 8 + 128];
        memset(out, 0xa5, sizeof out);
        uint8_t *at = out + 64 + places[pl];
        nb = !br;
        st = -1;
        g_assert_cmpint(fast->quantize_row_scan_stream[d](t, src, n, scan_scales[si], at, &bad, v, &nb, &st), ==, 0);
        loom_stream_fence();
        if (memcmp(at, want, nbytes) != 0)
          g_error("%s %s, %d values %zu bytes past a line, scale %a: the streaming encode differs from the reference",
                  fast->name, t->name, n, places[pl], (double)scan_scales[si]);
        g_assert_cmphex(at[-1], ==, 0xa5);
        g_assert_cmphex(at[nbytes], ==, 0xa5);
        g_assert_cmpint(nb, ==, br);
        if (!br) g_assert_cmpmem(&st, 8, &sr, 8);
      }
    }
  }
}

static void check_scans(const loom_kernels *fast) {
  const loom_kernels *ref = loom_kernels_for(LOOM_KERNELS_REF);
  uint64_t seed = 12345;
  float v[200];
  for (int trial = 0; trial < 400; trial++) {
    const int n = 1 + (int)(xorshift(&seed) % 200);
    for (int i = 0; i < n; i++) v[i] = from_bits(xorshift(&seed) & 0xbfffffffu); /* finite, both signs */
    if (trial % 3 == 1) v[xorshift(&seed) % (uint32_t)n] = from_bits(0x7f800000u | (xorshift(&seed) & 0x807fffffu));
    g_assert_cmpint(fast->any_nonfinite(v, n), ==, ref->any_nonfinite(v, n));
    /* NaN and infinities too: both maxima skip NaN (they compare with >). */
    const float am = fast->abs_max(v, n), ar = ref->abs_max(v, n);
    const float pm = fast->pos_max(v, n), pr = ref->pos_max(v, n);
    g_assert_cmpmem(&am, 4, &ar, 4);
    g_assert_cmpmem(&pm, 4, &pr, 4);
    double sa = fast->abs_sum(v, n), sr = ref->abs_sum(v, n);
    g_assert_cmpmem(&sa, 8, &sr, 8);
    check_scale_scan(fast, ref, v, n);
    /* Weights-like rows, where the vector sum is proven exact, and the same
     * with one tiny or subnormal value, where it is not. */
    for (int i = 0; i < n; i++) v[i] = (float)((double)xorshift(&seed) / 4294967296.0 * 2 - 1);
    if (trial % 4 == 1) v[xorshift(&seed) % (uint32_t)n] = 0x1.234p-40f;
    if (trial % 4 == 2) v[xorshift(&seed) % (uint32_t)n] = from_bits(xorshift(&seed) & 0x807fffffu);
    if (trial % 8 == 3) v[xorshift(&seed) % (uint32_t)n] = 0.0f;
    sa = fast->abs_sum(v, n);
    sr = ref->abs_sum(v, n);
    g_assert_cmpmem(&sa, 8, &sr, 8);
    check_scale_scan(fast, ref, v, n);
    if (trial % 5 == 4) { /* a non-finite value anywhere, also in the tail */
      v[xorshift(&seed) % (uint32_t)n] = from_bits((xorshift(&seed) & 0x80000000u) | 0x7f800000u |
                                                   (trial % 10 == 4 ? 0 : xorshift(&seed) & 0x7fffffu));
      check_scale_scan(fast, ref, v, n);
    }
    if (trial % 7 == 5) { /* all negative: max(0, max w) is +0 */
      for (int i = 0; i < n; i++) v[i] = -fabsf(v[i]);
      check_scale_scan(fast, ref, v, n);
    }
  }
  /* Long rows near the bound: 4095 values of 1 and one of 2^-k. */
  float *row = g_new(float, 4096);
  for (int k = 20; k < 60; k++) {
    for (int i = 0; i < 4096; i++) row[i] = 1.0f + (float)(i % 3) * 0x1p-23f;
    row[k * 97 % 4096] = ldexpf(1.0f, -k);
    for (int len = 4090; len <= 4096; len++) {
      const double sa = fast->abs_sum(row, len), sr = ref->abs_sum(row, len);
      g_assert_cmpmem(&sa, 8, &sr, 8);
    }
  }
  g_free(row);
}

/*
 * Rows as a morph sees them: the scale from the row itself (max |w| / qmax,
 * the mean for ternary and binary), or a few ulps off it, so the quotients
 * reach the top of the code range, where the 32- and 64-bit formats' codes
 * go beyond a float's and a double's mantissa. Values at the row's largest
 * magnitude, beside it, and around the quotient where the AVX-512 64-bit
 * encoder hands a lane to the reference's integer division (qmax + 1 − 2^14).
 */
/*
 * The 32-bit formats' quotient x · (1/s) in double is off by up to
 * |x/s| · 2^-52, so for quotients near 2^31 its rounding can land on the
 * wrong side of a half-integer that x / s is within about 2^-21 of. Such
 * inputs are rare (one in about 2 · 10^7 random draws found these, by an
 * exact fma comparison): the correction must settle each of them, in every
 * lane position. The AVX2 level's 64-bit encoder (codec-scaled64-avx2.c)
 * computes the low 32 bits of its codes the same way, so they go through it
 * too.
 */
static void check_wide_near_ties(const loom_kernels *fast) {
  const loom_kernels *ref = loom_kernels_for(LOOM_KERNELS_REF);
  static const struct {
    float scale, x;
  } cases[] = {
    {0x1.df0976p+10f, 0x1.19815cp+41f}, {0x1.2cf5ecp+14f, 0x1.86d53p+44f}, {0x1.e6840cp+17f, 0x1.9ab262p+48f},
    {0x1.b5d9acp+3f, 0x1.667fp+34f},    {0x1.efad98p-12f, 0x1.acd58ep+19f}, {0x1.46825cp-6f, 0x1.61a736p+24f},
  };
  static const loom_dtype wide[] = {LOOM_DTYPE_INT32, LOOM_DTYPE_UINT32, LOOM_DTYPE_INT64, LOOM_DTYPE_UINT64};
  float x[17];
  for (size_t d = 0; d < G_N_ELEMENTS(wide); d++)
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++)
      for (int at = 0; at < 17; at++) {
        for (int i = 0; i < 17; i++) x[i] = i == at ? cases[c].x : (float)i * cases[c].scale;
        compare_quantize(fast, ref, loom_dtype_traits_get(wide[d]), x, 17, 17, cases[c].scale);
        if (loom_dtype_traits_get(wide[d])->kind == LOOM_DTYPE_KIND_SIGNED) {
          x[at] = -cases[c].x;
          compare_quantize(fast, ref, loom_dtype_traits_get(wide[d]), x, 17, 17, cases[c].scale);
        }
      }
}

/*
 * Exact ties of the 64-bit formats. Their codes go through x · (1/s) in
 * double, which for quotients below 2^23 (where ties exist) usually rounds
 * back onto the tie itself, so that rne already picks the even code and the
 * encoders' tie rule goes unused. These scales (odd mantissas near 2^11 and
 * 2^10, whose inverses round far from 1/s) and quotients (just below a power
 * of two) are ones where it does not: the product lands on the odd side,
 * above the tie (the first two) or below it (the others), found by a search
 * over x = (k + 1/2) · s with double arithmetic. Each in every lane
 * position, and negated for int64.
 */
static void check_wide64_ties(const loom_kernels *fast) {
  const loom_kernels *ref = loom_kernels_for(LOOM_KERNELS_REF);
  static const struct {
    int mantissa, k;
  } cases[] = {{1019, 8191}, {2045, 4061}, {2029, 4094}, {2031, 4090}, {2039, 4074}};
  static const loom_dtype wide[] = {LOOM_DTYPE_INT64, LOOM_DTYPE_UINT64};
  float x[17];
  for (size_t d = 0; d < G_N_ELEMENTS(wide); d++)
    for (size_t c = 0; c < G_N_ELEMENTS(cases); c++)
      for (int e = -40; e <= 20; e += 30) {
        const float scale = ldexpf((float)cases[c].mantissa, e);
        const float tie = (float)(((double)cases[c].k + 0.5) * (double)scale); /* exact: 24 bits */
        g_assert_cmpfloat((double)tie / (double)scale, ==, (double)cases[c].k + 0.5);
        for (int at = 0; at < 17; at++) {
          for (int i = 0; i < 17; i++) x[i] = i == at ? tie : (float)i * scale;
          compare_quantize(fast, ref, loom_dtype_traits_get(wide[d]), x, 17, 17, scale);
          if (wide[d] == LOOM_DTYPE_INT64) {
            x[at] = -tie;
            compare_quantize(fast, ref, loom_dtype_traits_get(wide[d]), x, 17, 17, scale);
          }
        }
      }
}

static void check_morph_scales(const loom_kernels *fast) {
  const loom_kernels *ref = loom_kernels_for(LOOM_KERNELS_REF);
  uint64_t seed = 0x2545f4914f6cdd1du;
  enum { N = 4096 };
  float *x = g_new(float, N);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    if (!t->scaled) continue;
    for (int trial = 0; trial < 24; trial++) {
      /* magnitudes spread over 2^-k .. 1, both signs, some exact zeros */
      const int spread = 1 + trial % 40;
      for (int i = 0; i < N; i++) {
        const float m = (float)((double)xorshift(&seed) / 4294967296.0);
        const int e = -(int)(xorshift(&seed) % (uint32_t)spread);
        x[i] = xorshift(&seed) % 17 == 0 ? 0.0f : ldexpf(m, e) * (xorshift(&seed) & 1 ? -1.0f : 1.0f);
      }
      float scale = loom_dtype_compute_scale((loom_dtype)d, x, N);
      if (trial % 3 == 1) scale = nextafterf(scale, INFINITY);
      if (trial % 3 == 2) scale = nextafterf(nextafterf(scale, 0.0f), 0.0f);
      /* around the hand-over quotient and the top of the range */
      const double qtop = (double)t->qmax + 1.0;
      for (int k = 0; k < 64; k++) {
        const double q = k < 32 ? qtop - 0x1p14 + (double)(k - 16) * 0x1p11 : qtop - (double)(k - 32) * 0x1p8;
        float v = (float)(q * (double)scale);
        for (int step = (int)(xorshift(&seed) % 5); step > 0; step--) v = nextafterf(v, k % 2 ? INFINITY : 0.0f);
        x[xorshift(&seed) % N] = k % 4 == 3 ? -v : v;
      }
      for (size_t li = 0; li < G_N_ELEMENTS(lengths); li++) compare_quantize(fast, ref, t, x, N, lengths[li], scale);
      compare_quantize(fast, ref, t, x, N, N, scale);
      /* Exact ties of the code grid (they exist for quotients below 2^23),
       * at a scale of 3, 5 or 7 · 2^-k, whose inverse is not exact: the
       * quotient from x · (1/s) then misses the tie, and the correction must
       * find it and pick the even code. */
      const int odd_m = 3 + 2 * (trial % 3);
      const float tie_scale = ldexpf((float)odd_m, -(int)(xorshift(&seed) % 100));
      /* (2q + 1) · m must fit a float's 24 bits; the largest such q are the
       * ones whose quotient x · (1/s) rounds away from the tie */
      const double qfit = floor((0x1p24 / odd_m - 1) / 2);
      const double qtie = (double)t->qmax < qfit ? (double)t->qmax : qfit;
      for (int i = 0; i < N; i++) {
        const double q = floor(qtie * (0.5 + (double)xorshift(&seed) / 4294967296.0 / 2));
        x[i] = (float)((q + 0.5) * (double)tie_scale) * (i % 2 ? -1.0f : 1.0f);
      }
      compare_quantize(fast, ref, t, x, N, N, tie_scale);
      compare_quantize(fast, ref, t, x, N, 17, tie_scale);
    }
  }
  g_free(x);
}

static void test_levels(void) {
  int tested = 0;
  for (int l = LOOM_KERNELS_AVX2; l <= TEST_LAST_LEVEL; l++) {
    const loom_kernels *k = loom_kernels_for((loom_kernel_level)l);
    if (!k) {
      g_test_message("kernel level %s: not available on this machine, not tested", loom_kernel_level_name(l));
      continue;
    }
    g_assert_cmpint(k->level, ==, l);
    check_level(k);
    check_scans(k);
    check_morph_scales(k);
    check_wide_near_ties(k);
    check_wide64_ties(k);
    tested++;
  }
  if (!tested) g_test_skip("no vector kernel level on this machine");
}

/* Every level whose integer GEMM reads activation tiles builds them
 * itself (qgemm.c calls qgemm_make_tiles unchecked). */
static void test_tile_builders(void) {
  for (int l = 0; l <= (int)loom_kernels_best_level(); l++) {
    const loom_kernels *k = loom_kernels_for((loom_kernel_level)l);
    g_assert_true((k->qgemm_tiles != LOOM_QGEMM_TILES_NONE) == (k->qgemm_make_tiles != NULL));
  }
}

/* The AMX level's table is the AVX-512 one but for the integer GEMM and
 * its activation tiles (what lets the other kernels' tests stop at
 * AVX-512: test-levels.h). */
static void test_amx_table(void) {
  const loom_kernels *amx = loom_kernels_for(LOOM_KERNELS_AMX), *avx512 = loom_kernels_for(LOOM_KERNELS_AVX512);
  if (!amx) {
    g_test_skip("no AMX tiles on this machine");
    return;
  }
  g_assert_nonnull(avx512);
  g_assert_true(amx->qgemm_tiles == LOOM_QGEMM_TILES_AMX && avx512->qgemm_tiles == LOOM_QGEMM_TILES_VNNI);
  loom_kernels same = *amx;
  same.level = avx512->level;
  same.name = avx512->name;
  same.qgemm_tiles = avx512->qgemm_tiles;
  g_assert_true(amx->qgemm_make_tiles && avx512->qgemm_make_tiles && amx->qgemm_make_tiles != avx512->qgemm_make_tiles);
  same.qgemm_make_tiles = avx512->qgemm_make_tiles;
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    g_assert_true((amx->qgemm_rows[d] != avx512->qgemm_rows[d]) == loom_qgemm_supports((loom_dtype)d));
    same.qgemm_rows[d] = avx512->qgemm_rows[d];
  }
  g_assert_cmpmem(&same, sizeof same, avx512, sizeof *avx512);
}

/* Values in [-2, 2) from a fixed xorshift, and the per-row scales of dtype
 * d for them (returns how many the dtype keeps: 0 for unscaled ones). */
static void fill_weights(float *w, int64_t n, uint64_t seed) {
  for (int64_t i = 0; i < n; i++) w[i] = (float)((double)xorshift(&seed) / 4294967296.0 * 4 - 2);
}

static int64_t row_scales(loom_dtype d, const float *w, int64_t rows, int64_t cols, float *sc) {
  for (int64_t r = 0; r < rows; r++) sc[r] = loom_dtype_compute_scale(d, w + r * cols, cols);
  return loom_dtype_scale_count(d, rows, LOOM_SCALE_PER_ROW);
}

/* The chosen table follows LOOM_KERNELS (meson runs this test once per
 * level); forcing switches it and refuses what the machine lacks. */
static void test_dispatch(void) {
  const loom_kernel_level best = loom_kernels_best_level();
  loom_kernel_level want = best, parsed;
  if (loom_kernel_level_parse(g_getenv("LOOM_KERNELS"), &parsed) && parsed < best) want = parsed;
  g_assert_cmpint(loom_kernels_get()->level, ==, want);
  g_assert_cmpstr(loom_kernels_get()->name, ==, loom_kernel_level_name(want));
  g_assert_nonnull(loom_kernels_for(LOOM_KERNELS_REF));
  g_assert_null(loom_kernels_for(LOOM_KERNELS_LEVEL_COUNT));
  g_assert_false(loom_kernel_level_parse("avx3", &parsed));
  g_assert_false(loom_kernel_level_parse(NULL, &parsed));
  const loom_cpu_features *f = loom_cpu_features_get();
  if (best >= LOOM_KERNELS_AVX512) g_assert_true(f->avx512f && f->avx512bw && f->avx512vl && f->avx512dq);
  if (best >= LOOM_KERNELS_AVX2) g_assert_true(f->avx2 && f->fma && f->f16c);
  if (best >= LOOM_KERNELS_AMX) g_assert_true(f->amx_int8 && f->avx512vnni);
  g_test_message("best kernel level: %s (vnni %d, bf16 %d, amx %d)", loom_kernel_level_name(best), f->avx512vnni,
                 f->avx512bf16, f->amx_int8);
  for (int l = 0; l < LOOM_KERNELS_LEVEL_COUNT; l++) {
    const bool ok = loom_kernels_force((loom_kernel_level)l);
    g_assert_cmpint(ok, ==, l <= (int)best);
    g_assert_cmpint(loom_kernels_get()->level, ==, ok ? l : (int)best);
  }
  /* A whole tensor through the public API is the same at every level. */
  enum { R = 5, C = 37 };
  float w[R * C], back[LOOM_KERNELS_LEVEL_COUNT][R * C];
  uint8_t packed[LOOM_KERNELS_LEVEL_COUNT][R * C * 8];
  fill_weights(w, R * C, 7);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    float sc[R];
    const int64_t ns = row_scales((loom_dtype)d, w, R, C, sc);
    size_t nbytes;
    g_assert_cmpint(loom_dtype_packed_bytes((loom_dtype)d, R, C, &nbytes, NULL), ==, 0);
    for (int l = 0; l <= (int)best; l++) {
      g_assert_true(loom_kernels_force((loom_kernel_level)l));
      g_assert_cmpint(loom_dtype_quantize((loom_dtype)d, w, R, C, sc, ns, packed[l], NULL), ==, 0);
      g_assert_cmpint(loom_dtype_dequantize((loom_dtype)d, packed[l], R, C, sc, ns, back[l], NULL), ==, 0);
      g_assert_cmpmem(packed[l], nbytes, packed[0], nbytes);
      g_assert_cmpmem(back[l], sizeof back[l], back[0], sizeof back[0]);
    }
  }
  g_assert_true(loom_kernels_force(want));
}

/* loom_dtype_dequantize writes each row from its first 64-byte boundary on,
 * decoding the values before it in a call of their own: the same values
 * at every offset of the output, at every level. */
static void test_dequantize_alignment(void) {
  enum { R = 3, C = 200, OFFSETS = 17 };
  const loom_kernel_level best = loom_kernels_best_level();
  const loom_kernel_level was = loom_kernels_get()->level;
  float *w = g_new(float, R * C), *want = g_new(float, R * C);
  float *buf = g_aligned_alloc(R * C + OFFSETS, sizeof(float), 64);
  uint8_t *packed = g_new(uint8_t, R * C * 8);
  fill_weights(w, R * C, 11);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    float sc[R];
    const int64_t ns = row_scales((loom_dtype)d, w, R, C, sc);
    g_assert_true(loom_kernels_force(LOOM_KERNELS_REF));
    g_assert_cmpint(loom_dtype_quantize((loom_dtype)d, w, R, C, sc, ns, packed, NULL), ==, 0);
    /* The reference, one row at a time into an aligned buffer: no head. */
    const size_t row_bytes = loom_dtype_row_bytes((loom_dtype)d, C);
    for (int r = 0; r < R; r++) {
      g_assert_cmpint(loom_dtype_dequantize((loom_dtype)d, packed + r * row_bytes, 1, C, ns ? sc + (ns == 1 ? 0 : r) : NULL,
                                            ns ? 1 : 0, buf, NULL), ==, 0);
      memcpy(want + r * C, buf, sizeof(float) * C);
    }
    for (int l = 0; l <= (int)best; l++) {
      g_assert_true(loom_kernels_force((loom_kernel_level)l));
      for (int off = 0; off < OFFSETS; off++) {
        g_assert_cmpint(loom_dtype_dequantize((loom_dtype)d, packed, R, C, sc, ns, buf + off, NULL), ==, 0);
        if (memcmp(buf + off, want, sizeof(float) * R * C) != 0)
          g_error("%s at level %s, output %d floats past a 64-byte boundary: not the reference's values",
                  loom_dtype_name((loom_dtype)d), loom_kernel_level_name((loom_kernel_level)l), off);
      }
    }
  }
  g_assert_true(loom_kernels_force(was));
  g_free(w), g_free(want), g_aligned_free(buf), g_free(packed);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/kernels/dequantize-alignment", test_dequantize_alignment);
  g_test_add_func("/kernels/dispatch", test_dispatch);
  g_test_add_func("/kernels/amx-table", test_amx_table);
  g_test_add_func("/kernels/tile-builders", test_tile_builders);
  g_test_add_func("/kernels/codecs-match-reference", test_levels);
  return g_test_run();
}
