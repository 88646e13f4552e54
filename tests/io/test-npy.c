/* .npy read/write: round trips, byte-exact headers (as NumPy writes them), and
 * hostile files that must fail with a message naming the file. */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdint.h>
#include <string.h>

#include "loom/loom.h"

static char *tmp_dir;

static char *tmp_path(const char *name) { return g_build_filename(tmp_dir, name, NULL); }

/* A version-1 file: magic, header padded like NumPy's, raw data. */
static char *write_npy(const char *name, const char *dict, const void *data, size_t n) {
  GByteArray *b = g_byte_array_new();
  g_byte_array_append(b, (const guint8 *)"\x93NUMPY\x01\x00", 8);
  size_t dlen = strlen(dict);
  size_t pad = (64 - (10 + dlen + 1) % 64) % 64;
  size_t hlen = dlen + pad + 1;
  guint8 hl[2] = {(guint8)(hlen & 0xff), (guint8)(hlen >> 8)};
  g_byte_array_append(b, hl, 2);
  g_byte_array_append(b, (const guint8 *)dict, (guint)dlen);
  for (size_t i = 0; i < pad; i++) g_byte_array_append(b, (const guint8 *)" ", 1);
  g_byte_array_append(b, (const guint8 *)"\n", 1);
  if (n) g_byte_array_append(b, data, (guint)n);
  char *path = tmp_path(name);
  g_assert_true(g_file_set_contents(path, (const char *)b->data, (gssize)b->len, NULL));
  g_byte_array_unref(b);
  return path;
}

static void test_round_trip_shapes(void) {
  const int64_t shapes[][3] = {{2, 3, 0}, {5, 0, 0}, {0, 0, 0}, {4, 0, 3}};
  const int ndims[] = {2, 1, 0, 3};
  for (int k = 0; k < 4; k++) {
    loom_npy a = {.ndim = ndims[k]};
    memcpy(a.shape, shapes[k], sizeof shapes[k]);
    int64_t n = loom_npy_numel(&a);
    a.data = g_malloc((size_t)(n ? n : 1) * sizeof(float));
    for (int64_t i = 0; i < n; i++) a.data[i] = (float)i * 0.25f - 1.0f;
    char *path = tmp_path("rt.npy");
    loom_error err = {0};
    g_assert_cmpint(loom_npy_write(path, &a, &err), ==, LOOM_OK);
    loom_npy b;
    g_assert_cmpint(loom_npy_read(path, &b, &err), ==, LOOM_OK);
    g_assert_cmpint(b.ndim, ==, a.ndim);
    for (int i = 0; i < a.ndim; i++) g_assert_cmpint(b.shape[i], ==, a.shape[i]);
    g_assert_cmpint(loom_npy_numel(&b), ==, n);
    if (n) g_assert_cmpmem(b.data, (size_t)n * 4, a.data, (size_t)n * 4);
    loom_npy_clear(&b);
    g_assert_null(b.data);
    g_assert_cmpint(b.ndim, ==, 0);
    g_free(a.data);
    g_unlink(path);
    g_free(path);
  }
}

/* The exact bytes NumPy 1.24 writes for np.arange(6, dtype='<f4').reshape(2, 3). */
static void test_header_matches_numpy(void) {
  float v[6] = {0, 1, 2, 3, 4, 5};
  loom_npy a = {.ndim = 2, .shape = {2, 3}, .data = v};
  char *path = tmp_path("h.npy");
  loom_error err = {0};
  g_assert_cmpint(loom_npy_write(path, &a, &err), ==, LOOM_OK);
  char *bytes;
  gsize len;
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  g_assert_cmpuint(len, ==, 152);
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  g_assert_cmpmem(bytes, 10, "\x93NUMPY\x01\x00v\x00", 10);
  g_assert_cmpmem(bytes + 10, strlen(dict), dict, strlen(dict));
  for (size_t i = 10 + strlen(dict); i < 127; i++) g_assert_cmpint(bytes[i], ==, ' ');
  g_assert_cmpint(bytes[127], ==, '\n');
  g_assert_cmpmem(bytes + 128, 24, v, 24);
  g_free(bytes);
  g_unlink(path);
  g_free(path);
}

static void test_converts_other_types(void) {
  loom_error err = {0};
  loom_npy a;
  double d[3] = {0.5, -2.0, 1e10};
  char *p = write_npy("f8.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }", d, sizeof d);
  g_assert_cmpint(loom_npy_read(p, &a, &err), ==, LOOM_OK);
  g_assert_cmpfloat(a.data[0], ==, 0.5f);
  g_assert_cmpfloat(a.data[1], ==, -2.0f);
  g_assert_cmpfloat(a.data[2], ==, 1e10f);
  loom_npy_clear(&a);
  g_free(p);
  int32_t i4[2] = {-7, 123456};
  p = write_npy("i4.npy", "{'descr': '<i4', 'fortran_order': False, 'shape': (1, 2), }", i4, sizeof i4);
  g_assert_cmpint(loom_npy_read(p, &a, &err), ==, LOOM_OK);
  g_assert_cmpint(a.ndim, ==, 2);
  g_assert_cmpfloat(a.data[0], ==, -7.0f);
  g_assert_cmpfloat(a.data[1], ==, 123456.0f);
  loom_npy_clear(&a);
  g_free(p);
  int64_t i8[1] = {-(INT64_C(1) << 40)};
  p = write_npy("i8.npy", "{'descr': '<i8', 'fortran_order': False, 'shape': (1,), }", i8, sizeof i8);
  g_assert_cmpint(loom_npy_read(p, &a, &err), ==, LOOM_OK);
  g_assert_cmpfloat(a.data[0], ==, -1099511627776.0f);
  loom_npy_clear(&a);
  g_free(p);
}

static void expect_read_error(const char *path, loom_status code, const char *message) {
  loom_error err = {0};
  loom_npy a;
  a.data = (float *)1;
  g_assert_cmpint(loom_npy_read(path, &a, &err), ==, code);
  g_assert_null(a.data);
  g_assert_cmpint(a.ndim, ==, 0);
  char *want = g_strdup_printf("%s: %s", path, message);
  g_assert_cmpstr(err.message, ==, want);
  g_free(want);
}

static void test_hostile_headers(void) {
  float four[4] = {1, 2, 3, 4};
  struct {
    const char *dict;
    size_t data;
    loom_status code;
    const char *message;
  } cases[] = {
    {"{'descr': '>f4', 'fortran_order': False, 'shape': (4,), }", 16, LOOM_ERR_FORMAT,
     "array type '>f4' is not supported (expected little-endian float32, float64, int32 or int64)"},
    {"{'descr': '<f2', 'fortran_order': False, 'shape': (4,), }", 16, LOOM_ERR_FORMAT,
     "array type '<f2' is not supported (expected little-endian float32, float64, int32 or int64)"},
    {"{'descr': '|O', 'fortran_order': False, 'shape': (4,), }", 16, LOOM_ERR_FORMAT,
     "array type '|O' is not supported (expected little-endian float32, float64, int32 or int64)"},
    {"{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16, LOOM_ERR_FORMAT,
     "Fortran-order arrays are not supported; save in C order"},
    {"{'descr': '<f4', 'fortran_order': False, }", 16, LOOM_ERR_FORMAT,
     ".npy header lacks descr, fortran_order or shape"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': 4, }", 16, LOOM_ERR_FORMAT, "malformed shape in .npy header"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (-4,), }", 16, LOOM_ERR_FORMAT,
     "malformed shape in .npy header"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (4", 16, LOOM_ERR_FORMAT, "malformed shape in .npy header"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,4), }", 16, LOOM_ERR_FORMAT,
     "more than 8 dimensions"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", 16, LOOM_ERR_NOMEM,
     "array shape overflows"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 1024), }", 16, LOOM_ERR_FORMAT,
     "the shape needs 4398046511104 values but the file holds 16 bytes of data"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", 16, LOOM_ERR_FORMAT,
     "the shape needs 5 values but the file holds 16 bytes of data"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 16, LOOM_ERR_FORMAT,
     "the shape needs 3 values but the file holds 16 bytes of data"},
    {"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }", 15, LOOM_ERR_FORMAT,
     "the shape needs 4 values but the file holds 15 bytes of data"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    char *p = write_npy("bad.npy", cases[i].dict, four, cases[i].data);
    expect_read_error(p, cases[i].code, cases[i].message);
    g_free(p);
  }
}

static void test_hostile_framing(void) {
  char *p = tmp_path("frame.npy");
  g_assert_true(g_file_set_contents(p, "PK\x03\x04 not numpy", 14, NULL));
  expect_read_error(p, LOOM_ERR_FORMAT, "not a .npy file (bad magic)");
  g_assert_true(g_file_set_contents(p, "\x93NUMPY", 6, NULL));
  expect_read_error(p, LOOM_ERR_FORMAT, "not a .npy file (bad magic)");
  g_assert_true(g_file_set_contents(p, "\x93NUMPY\x04\x00\x10\x00{}", 12, NULL));
  expect_read_error(p, LOOM_ERR_FORMAT, "unsupported .npy version 4");
  /* The header claims more bytes than the file has. */
  g_assert_true(g_file_set_contents(p, "\x93NUMPY\x01\x00\xff\x7f{'descr'", 17, NULL));
  expect_read_error(p, LOOM_ERR_FORMAT, "truncated .npy header");
  g_assert_true(g_file_set_contents(p, "\x93NUMPY\x02\x00\x10\x00", 10, NULL));
  expect_read_error(p, LOOM_ERR_FORMAT, "truncated .npy header");
  g_assert_true(g_file_set_contents(p, "\x93NUMPY\x02\x00\xff\xff\xff\xff{}", 14, NULL));
  expect_read_error(p, LOOM_ERR_FORMAT, "truncated .npy header");
  g_unlink(p);
  g_free(p);

  loom_error err = {0};
  loom_npy a;
  char *missing = tmp_path("missing.npy");
  g_assert_cmpint(loom_npy_read(missing, &a, &err), ==, LOOM_ERR_IO);
  g_assert_true(g_str_has_prefix(err.message, missing));
  g_free(missing);
}

static void test_version2_header(void) {
  const char *dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  GByteArray *b = g_byte_array_new();
  g_byte_array_append(b, (const guint8 *)"\x93NUMPY\x02\x00", 8);
  size_t dlen = strlen(dict);
  size_t pad = (64 - (12 + dlen + 1) % 64) % 64;
  uint32_t hlen = (uint32_t)(dlen + pad + 1);
  guint8 hl[4] = {(guint8)hlen, (guint8)(hlen >> 8), 0, 0};
  g_byte_array_append(b, hl, 4);
  g_byte_array_append(b, (const guint8 *)dict, (guint)dlen);
  for (size_t i = 0; i < pad; i++) g_byte_array_append(b, (const guint8 *)" ", 1);
  g_byte_array_append(b, (const guint8 *)"\n", 1);
  float v[2] = {3.5f, -0.0f};
  g_byte_array_append(b, (const guint8 *)v, sizeof v);
  char *p = tmp_path("v2.npy");
  g_assert_true(g_file_set_contents(p, (const char *)b->data, (gssize)b->len, NULL));
  loom_npy a;
  loom_error err = {0};
  g_assert_cmpint(loom_npy_read(p, &a, &err), ==, LOOM_OK);
  g_assert_cmpint(a.ndim, ==, 1);
  g_assert_cmpint(a.shape[0], ==, 2);
  g_assert_cmpmem(a.data, 8, v, 8);
  loom_npy_clear(&a);
  g_byte_array_unref(b);
  g_unlink(p);
  g_free(p);
}

static void test_write_rejects_bad_arrays(void) {
  loom_error err = {0};
  char *p = tmp_path("w.npy");
  loom_npy a = {.ndim = 9};
  g_assert_cmpint(loom_npy_write(p, &a, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(strstr(err.message, ": "), ==, ": 9 dimensions is out of range");
  loom_npy neg = {.ndim = 2, .shape = {3, -1}};
  g_assert_cmpint(loom_npy_write(p, &neg, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(strstr(err.message, ": "), ==, ": dimension 1 of the array (-1) is out of range");
  loom_npy huge = {.ndim = 2, .shape = {INT64_C(1) << 40, INT64_C(1) << 40}};
  g_assert_cmpint(loom_npy_write(p, &huge, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(strstr(err.message, ": "), ==, ": dimension 1 of the array (1099511627776) is out of range");
  loom_npy nodata = {.ndim = 1, .shape = {3}};
  g_assert_cmpint(loom_npy_write(p, &nodata, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(strstr(err.message, ": "), ==, ": the array has no data");
  g_assert_false(g_file_test(p, G_FILE_TEST_EXISTS));
  g_free(p);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  GError *gerr = NULL;
  tmp_dir = g_dir_make_tmp("loom-npy-XXXXXX", &gerr);
  g_assert_no_error(gerr);
  g_test_add_func("/io/npy/round-trip-shapes", test_round_trip_shapes);
  g_test_add_func("/io/npy/header-matches-numpy", test_header_matches_numpy);
  g_test_add_func("/io/npy/converts-other-types", test_converts_other_types);
  g_test_add_func("/io/npy/hostile-headers", test_hostile_headers);
  g_test_add_func("/io/npy/hostile-framing", test_hostile_framing);
  g_test_add_func("/io/npy/version2-header", test_version2_header);
  g_test_add_func("/io/npy/write-rejects-bad-arrays", test_write_rejects_bad_arrays);
  int rc = g_test_run();
  /* Remove what the tests left (each test cleans its own names). */
  GDir *d = g_dir_open(tmp_dir, 0, NULL);
  const char *name;
  while (d && (name = g_dir_read_name(d))) {
    char *p = tmp_path(name);
    g_unlink(p);
    g_free(p);
  }
  if (d) g_dir_close(d);
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
