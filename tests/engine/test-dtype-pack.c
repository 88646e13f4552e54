/*
 * The packed layout: LSB-first codes in little-endian bytes, rows padded with
 * zero bits to whole bytes. The worked examples of docs/dtypes.md are
 * asserted byte for byte; random rows of lengths that are not multiples of
 * the pack factor round-trip through every path.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "core/dtype-internal.h"
#include "loom/loom.h"

static void test_traits_table(void) {
  static const char *const names[] = {"float64", "float32", "float16", "bfloat16", "fp8-e4m3", "fp8-e5m2", "fp4",
                                      "int64",   "int32",   "int16",   "int8",     "int4",     "int2",     "uint64",
                                      "uint32",  "uint16",  "uint8",   "uint4",    "uint2",    "ternary",  "binary"};
  static const int bits[] = {64, 32, 16, 16, 8, 8, 4, 64, 32, 16, 8, 4, 2, 64, 32, 16, 8, 4, 2, 2, 1};
  G_STATIC_ASSERT(G_N_ELEMENTS(names) == LOOM_DTYPE_COUNT);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    g_assert_nonnull(t);
    g_assert_cmpint(t->id, ==, d);
    g_assert_cmpstr(t->name, ==, names[d]);
    g_assert_cmpstr(loom_dtype_name((loom_dtype)d), ==, names[d]);
    g_assert_cmpint(t->bits, ==, bits[d]);
    g_assert_cmpint(t->scaled, ==, d >= LOOM_DTYPE_INT64);
    g_assert_true(t->encode && t->decode);
    loom_dtype back;
    g_assert_cmpint(loom_dtype_from_name(names[d], &back, NULL), ==, 0);
    g_assert_cmpint(back, ==, d);
    g_assert_cmpuint(loom_dtype_row_bytes((loom_dtype)d, 1000000), ==, (size_t)bits[d] * 125000);
  }
  g_assert_null(loom_dtype_traits_get(LOOM_DTYPE_COUNT));
  g_assert_null(loom_dtype_traits_get((loom_dtype)-1));
  g_assert_null(loom_dtype_name(LOOM_DTYPE_COUNT));
  g_assert_cmpint(loom_dtype_traits_get(LOOM_DTYPE_UINT8)->kind, ==, LOOM_DTYPE_KIND_UNSIGNED);
  g_assert_cmpint(loom_dtype_traits_get(LOOM_DTYPE_TERNARY)->kind, ==, LOOM_DTYPE_KIND_TERNARY);
  g_assert_cmpfloat(loom_dtype_traits_get(LOOM_DTYPE_INT8)->min_value, ==, -127);
  g_assert_cmpfloat(loom_dtype_traits_get(LOOM_DTYPE_UINT4)->max_value, ==, 15);
  g_assert_cmpuint(loom_dtype_traits_get(LOOM_DTYPE_UINT64)->qmax, ==, UINT64_MAX);

  loom_error err;
  loom_dtype d;
  g_assert_cmpint(loom_dtype_from_name("int3", &d, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "unknown dtype 'int3'; valid dtypes: float64, float32, float16, bfloat16, fp8-e4m3, fp8-e5m2, fp4, "
                  "int64, int32, int16, int8, int4, int2, uint64, uint32, uint16, uint8, uint4, uint2, ternary, binary");
  g_assert_cmpint(loom_dtype_from_name("Float32", &d, NULL), ==, LOOM_ERR_INVALID);
}

static void test_row_bytes(void) {
  g_assert_cmpuint(loom_dtype_row_bytes(LOOM_DTYPE_INT4, 5), ==, 3);
  g_assert_cmpuint(loom_dtype_row_bytes(LOOM_DTYPE_BINARY, 9), ==, 2);
  g_assert_cmpuint(loom_dtype_row_bytes(LOOM_DTYPE_TERNARY, 4), ==, 1);
  g_assert_cmpuint(loom_dtype_row_bytes(LOOM_DTYPE_UINT2, 0), ==, 0);
  g_assert_cmpuint(loom_dtype_row_bytes(LOOM_DTYPE_FLOAT64, 3), ==, 24);
  g_assert_cmpuint(loom_dtype_row_bytes(LOOM_DTYPE_INT8, -1), ==, SIZE_MAX);
  g_assert_cmpuint(loom_dtype_row_bytes(LOOM_DTYPE_INT8, INT64_MAX), ==, SIZE_MAX);
  g_assert_cmpuint(loom_dtype_row_bytes(LOOM_DTYPE_COUNT, 4), ==, SIZE_MAX);
  size_t n = 0;
  /* Rows are padded separately: 3 rows of 5 int4 are 9 bytes, not 8. */
  g_assert_cmpint(loom_dtype_packed_bytes(LOOM_DTYPE_INT4, 3, 5, &n, NULL), ==, 0);
  g_assert_cmpuint(n, ==, 9);
  loom_error err;
  g_assert_cmpint(loom_dtype_packed_bytes(LOOM_DTYPE_FLOAT64, INT64_MAX / 64, 1000, &n, &err), ==, LOOM_ERR_NOMEM);
  g_assert_cmpstr(err.message, ==, "144115188075855871 × 1000 values at float64 do not fit in memory");
}

/* docs/dtypes.md, "Packing": the worked examples. */
static void test_worked_examples(void) {
  const float row[] = {1, -2, 7, -7, 3};
  const float one = 1.0f;
  uint8_t p[8];
  memset(p, 0xAA, sizeof p);
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_INT4, row, 1, 5, &one, 1, p, NULL), ==, 0);
  /* codes 0x1 0xE 0x7 0x9 0x3: byte 0 = 0xE1, byte 1 = 0x97, byte 2 = 0x03 (padding 0) */
  g_assert_cmphex(p[0], ==, 0xE1);
  g_assert_cmphex(p[1], ==, 0x97);
  g_assert_cmphex(p[2], ==, 0x03);
  g_assert_cmphex(p[3], ==, 0xAA); /* nothing written beyond the row */

  const float b[] = {1, -1, -1, 1, 1, 1, -1, 1, -1, -1};
  memset(p, 0xAA, sizeof p);
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_BINARY, b, 1, 10, &one, 1, p, NULL), ==, 0);
  /* bits (code 1 = -1): 0 1 1 0 0 0 1 0 | 1 1 -> 0x46, 0x03 */
  g_assert_cmphex(p[0], ==, 0x46);
  g_assert_cmphex(p[1], ==, 0x03);

  const float u[] = {0, 1, 2, 3, 3};
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_UINT2, u, 1, 5, &one, 1, p, NULL), ==, 0);
  g_assert_cmphex(p[0], ==, 0xE4); /* 11 10 01 00 */
  g_assert_cmphex(p[1], ==, 0x03);

  /* Multi-byte codes are little-endian: int16 -2 is FE FF; float16 1.0 is 00 3C. */
  const float i16[] = {-2, 258};
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_INT16, i16, 1, 2, &one, 1, p, NULL), ==, 0);
  g_assert_cmpmem(p, 4, "\xFE\xFF\x02\x01", 4);
  const float h[] = {1.0f};
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_FLOAT16, h, 1, 1, NULL, 0, p, NULL), ==, 0);
  g_assert_cmpmem(p, 2, "\x00\x3C", 2);

  /* Two rows of 3 fp4 values: each row starts on a byte of its own. */
  const float f4[] = {0.5f, 1, 6, -0.5f, -1, -6};
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_FP4, f4, 2, 3, NULL, 0, p, NULL), ==, 0);
  g_assert_cmpmem(p, 4, "\x21\x07\xA9\x0F", 4);
}

static void test_random_rows(void) {
  GRand *rng = g_rand_new_with_seed(23);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    const int per_byte = t->bits < 8 ? 8 / t->bits : 1;
    for (int rep = 0; rep < 50; rep++) {
      int64_t n;
      do n = g_rand_int_range(rng, 1, 200);
      while (per_byte > 1 && n % per_byte == 0);
      const size_t row_bytes = loom_dtype_row_bytes((loom_dtype)d, n);
      g_assert_cmpuint(row_bytes, ==, ((size_t)n * (size_t)t->bits + 7) / 8);
      uint64_t *codes = g_new(uint64_t, n);
      uint8_t *row = g_malloc0(row_bytes + 1);
      row[row_bytes] = 0x5A; /* guard */
      for (int64_t i = 0; i < n; i++) {
        codes[i] = (((uint64_t)g_rand_int(rng) << 32) | g_rand_int(rng)) & loom_code_mask(t->bits);
        loom_dtype_code_set((loom_dtype)d, row, i, codes[i]);
      }
      for (int64_t i = 0; i < n; i++) g_assert_cmphex(loom_dtype_code_get((loom_dtype)d, row, i), ==, codes[i]);
      /* Padding bits are zero, the guard untouched. */
      const int used = (int)(((uint64_t)n * (uint64_t)t->bits) % 8);
      if (used) g_assert_cmphex(row[row_bytes - 1] >> used, ==, 0);
      g_assert_cmphex(row[row_bytes], ==, 0x5A);
      /* Overwriting one code leaves its neighbours alone. */
      const int64_t k = g_rand_int_range(rng, 0, (gint32)n);
      const uint64_t other = ~codes[k] & loom_code_mask(t->bits);
      loom_dtype_code_set((loom_dtype)d, row, k, other);
      for (int64_t i = 0; i < n; i++)
        g_assert_cmphex(loom_dtype_code_get((loom_dtype)d, row, i), ==, i == k ? other : codes[i]);
      g_free(codes);
      g_free(row);
    }
  }
  g_rand_free(rng);
}

/* Bulk quantize/dequantize of tensors with odd row lengths agree with the
 * per-value reference conversion. */
static void test_bulk_matches_reference(void) {
  GRand *rng = g_rand_new_with_seed(29);
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    const loom_dtype_traits *t = loom_dtype_traits_get((loom_dtype)d);
    const int64_t rows = 3, cols = g_rand_int_range(rng, 1, 60) * 2 + 1;
    float *w = g_new(float, rows * cols), *back = g_new(float, rows * cols);
    for (int64_t i = 0; i < rows * cols; i++) w[i] = (float)g_rand_double_range(rng, -8, 8);
    float scales[3] = {0.05f, 0.5f, 1.0f / 3};
    size_t nbytes;
    g_assert_cmpint(loom_dtype_packed_bytes((loom_dtype)d, rows, cols, &nbytes, NULL), ==, 0);
    uint8_t *p = g_malloc(nbytes);
    const int64_t ns = t->scaled ? rows : 0;
    g_assert_cmpint(loom_dtype_quantize((loom_dtype)d, w, rows, cols, t->scaled ? scales : NULL, ns, p, NULL), ==, 0);
    g_assert_cmpint(loom_dtype_dequantize((loom_dtype)d, p, rows, cols, t->scaled ? scales : NULL, ns, back, NULL), ==,
                    0);
    const size_t rb = loom_dtype_row_bytes((loom_dtype)d, cols);
    for (int64_t r = 0; r < rows; r++)
      for (int64_t c = 0; c < cols; c++) {
        const float s = t->scaled ? scales[r] : 1.0f;
        uint64_t want;
        g_assert_cmpint(t->encode(w[r * cols + c], s, &want), ==, 0);
        const uint64_t got = loom_dtype_code_get((loom_dtype)d, p + (size_t)r * rb, c);
        g_assert_cmphex(got, ==, want);
        g_assert_cmpfloat(back[r * cols + c], ==, (float)t->decode(want, s));
      }
    g_free(p);
    g_free(w);
    g_free(back);
  }
  g_rand_free(rng);
}

static void test_bulk_errors(void) {
  loom_error err;
  const float w[3] = {1, NAN, 2};
  const float s = 1;
  uint8_t p[16];
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_FP4, w, 1, 3, NULL, 0, p, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "fp4 has no code for NaN (row 0, column 1)");
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_INT8, w, 1, 3, &s, 1, p, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "int8 has no code for NaN (row 0, column 1)");
  /* NaN is a value of fp8-e4m3: 0x7F. */
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_FP8_E4M3, w, 1, 3, NULL, 0, p, &err), ==, 0);
  g_assert_cmphex(p[1], ==, 0x7F);
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_INT8, w, 3, 1, &s, 2, p, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==, "int8 needs 3 scales (one per row) or 1, got 2");
  g_assert_cmpint(loom_dtype_quantize(LOOM_DTYPE_FLOAT16, w, 1, 3, &s, 1, p, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "float16 takes no scales, got 1");
  const float bad = -1;
  float out[3];
  g_assert_cmpint(loom_dtype_dequantize(LOOM_DTYPE_INT8, p, 1, 3, &bad, 1, out, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "scale 0 is -1; scales must be finite and >= 0");
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/dtype/traits/table", test_traits_table);
  g_test_add_func("/dtype/pack/row-bytes", test_row_bytes);
  g_test_add_func("/dtype/pack/worked-examples", test_worked_examples);
  g_test_add_func("/dtype/pack/random-rows", test_random_rows);
  g_test_add_func("/dtype/pack/bulk-matches-reference", test_bulk_matches_reference);
  g_test_add_func("/dtype/pack/errors", test_bulk_errors);
  return g_test_run();
}
