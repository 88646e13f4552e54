/*
 * float16 and bfloat16 against PyTorch: tests/parity/make_dtype_vectors.py
 * (Debian's python3-torch) wrote the codes torch gives for 1485 float32
 * inputs chosen at limits, ties and random; the encoder must agree on every
 * one, and decoding torch's code must give torch's value back.
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "loom/loom.h"

static void test_torch_vectors(void) {
  const char *src = g_getenv("LOOM_SOURCE_DIR");
  g_assert_nonnull(src);
  char *path = g_build_filename(src, "tests", "parity", "vectors", "dtype", "float16_bfloat16.txt", NULL);
  char *text = NULL;
  GError *error = NULL;
  g_assert_true(g_file_get_contents(path, &text, NULL, &error));
  g_assert_no_error(error);
  char **lines = g_strsplit(text, "\n", -1);
  int n = 0, nans = 0;
  for (int i = 0; lines[i]; i++) {
    if (lines[i][0] == '#' || lines[i][0] == '\0') continue;
    unsigned x_bits, h_bits, b_bits;
    g_assert_cmpint(sscanf(lines[i], "%x %x %x", &x_bits, &h_bits, &b_bits), ==, 3);
    float x;
    uint32_t u = x_bits;
    memcpy(&x, &u, sizeof x);
    uint64_t h, b;
    g_assert_cmpint(loom_dtype_encode(LOOM_DTYPE_FLOAT16, x, 1.0f, &h, NULL), ==, 0);
    g_assert_cmpint(loom_dtype_encode(LOOM_DTYPE_BFLOAT16, x, 1.0f, &b, NULL), ==, 0);
    if (isnan(x)) {
      /* torch writes 0xffff for a bfloat16 NaN; only NaN-ness is specified. */
      g_assert_true(isnan(loom_dtype_decode(LOOM_DTYPE_FLOAT16, h, 1.0f)));
      g_assert_true(isnan(loom_dtype_decode(LOOM_DTYPE_FLOAT16, h_bits, 1.0f)));
      g_assert_true(isnan(loom_dtype_decode(LOOM_DTYPE_BFLOAT16, b, 1.0f)));
      g_assert_true(isnan(loom_dtype_decode(LOOM_DTYPE_BFLOAT16, b_bits, 1.0f)));
      nans++;
    } else {
      if (h != h_bits || b != b_bits)
        g_error("line %d: input 0x%08x: float16 0x%04x (torch 0x%04x), bfloat16 0x%04x (torch 0x%04x)", i + 1,
                x_bits, (unsigned)h, h_bits, (unsigned)b, b_bits);
    }
    n++;
  }
  g_assert_cmpint(n, ==, 1485);
  g_assert_cmpint(nans, ==, 1);
  g_strfreev(lines);
  g_free(text);
  g_free(path);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/dtype/vectors/torch-float16-bfloat16", test_torch_vectors);
  return g_test_run();
}
