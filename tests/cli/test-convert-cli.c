/* loom convert and loom info on safetensors files, end to end. */
#include <glib/gstdio.h>
#include <string.h>

#include "cli-harness.h"

static char *tmp_dir;

static char *tmp_path(const char *name) { return g_build_filename(tmp_dir, name, NULL); }

static CliResult run(const char *const *argv) { return cli_run(NULL, NULL, argv); }

static void expect_ok(const char *const *argv) {
  CliResult r = run(argv);
  if (r.status != 0) g_error("loom %s: status %d: %s", argv[0], r.status, r.err);
  cli_result_clear(&r);
}

static char *slurp(const char *path, gsize *len) {
  char *bytes = NULL;
  g_assert_true(g_file_get_contents(path, &bytes, len, NULL));
  return bytes;
}

/* JSON → safetensors at int4 → JSON equals JSON → JSON at int4, byte for byte. */
static void test_round_trip(void) {
  char *json = tmp_path("xor.loom.json"), *st = tmp_path("xor.safetensors"), *back = tmp_path("back.loom.json"),
       *direct = tmp_path("direct.loom.json");
  expect_ok((const char *[]){"new", "--example", "xor", "--out", json, NULL});
  CliResult r = run((const char *[]){"convert", json, "--to", "safetensors", "--dtype", "int4", "--out", st, NULL});
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.out, "wrote "));
  g_assert_nonnull(strstr(r.out, "xor.safetensors ("));
  cli_result_clear(&r);
  expect_ok((const char *[]){"convert", st, "--to", "json", "--out", back, NULL});
  expect_ok((const char *[]){"convert", json, "--to", "json", "--dtype", "int4", "--out", direct, NULL});
  gsize la, lb;
  char *a = slurp(back, &la), *b = slurp(direct, &lb);
  g_assert_cmpuint(la, ==, lb);
  g_assert_true(memcmp(a, b, la) == 0);
  g_assert_nonnull(strstr(a, "\"dtype\": \"int4\""));
  g_free(a);
  g_free(b);

  r = run((const char *[]){"info", st, NULL});
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "Grid: depth 1, rows 1, columns 4"));
  g_assert_nonnull(strstr(r.out, "int4"));
  cli_result_clear(&r);
  for (char **p = (char *[]){json, st, back, direct, NULL}; *p; p++) {
    g_unlink(*p);
    g_free(*p);
  }
}

/* A safetensors file without a network: info lists its tensors. */
static void test_info_plain(void) {
  static const char header[] = "{\"__metadata__\":{\"format\":\"pt\"},"
                               "\"fc1.weight\":{\"dtype\":\"BF16\",\"shape\":[2,3],\"data_offsets\":[0,12]}}";
  size_t hlen = sizeof header - 1;
  GByteArray *b = g_byte_array_new();
  guint8 n[8] = {(guint8)hlen};
  g_byte_array_append(b, n, 8);
  g_byte_array_append(b, (const guint8 *)header, (guint)hlen);
  guint8 zeros[12] = {0};
  g_byte_array_append(b, zeros, 12);
  char *path = tmp_path("plain.safetensors");
  g_assert_true(g_file_set_contents(path, (const char *)b->data, (gssize)b->len, NULL));
  g_byte_array_unref(b);
  CliResult r = run((const char *[]){"info", path, NULL});
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "no Loom network"));
  g_assert_nonnull(strstr(r.out, "fc1.weight  BF16 [2, 3]  12 bytes"));
  cli_result_clear(&r);
  char *out = tmp_path("plain.loom.json");
  r = run((const char *[]){"convert", path, "--to", "json", "--out", out, NULL});
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, "the file holds 1 tensors but no Loom network"));
  g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS));
  cli_result_clear(&r);
  g_unlink(path);
  g_free(path);
  g_free(out);
}

/* Usage errors exit 2; a damaged input exits 1 and leaves OUT as it was. */
static void test_errors(void) {
  char *json = tmp_path("e.loom.json"), *st = tmp_path("e.safetensors"), *out = tmp_path("keep.loom.json");
  expect_ok((const char *[]){"new", "--example", "xor", "--out", json, NULL});
  CliResult r = run((const char *[]){"convert", json, "--out", out, NULL});
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "--to"));
  cli_result_clear(&r);
  r = run((const char *[]){"convert", json, "--to", "json", "--out", "x.safetensors", NULL});
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "names a safetensors file"));
  cli_result_clear(&r);
  r = run((const char *[]){"convert", json, "--to", "onnx2", "--out", out, NULL});
  g_assert_cmpint(r.status, ==, 2);
  cli_result_clear(&r);
  r = run((const char *[]){"convert", json, "--to", "json", "--dtype", "int3", "--out", out, NULL});
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "int3"));
  cli_result_clear(&r);

  expect_ok((const char *[]){"convert", json, "--to", "safetensors", "--out", st, NULL});
  gsize len;
  char *bytes = slurp(st, &len);
  g_assert_true(g_file_set_contents(st, bytes, (gssize)(len - 3), NULL)); /* truncated */
  g_free(bytes);
  g_assert_true(g_file_set_contents(out, "keep", 4, NULL));
  r = run((const char *[]){"convert", st, "--to", "json", "--out", out, NULL});
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, "e.safetensors"));
  cli_result_clear(&r);
  bytes = slurp(out, &len);
  g_assert_cmpstr(bytes, ==, "keep");
  g_free(bytes);
  for (char **p = (char *[]){json, st, out, NULL}; *p; p++) {
    g_unlink(*p);
    g_free(*p);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-convert-XXXXXX", NULL);
  g_test_add_func("/cli/convert/round-trip", test_round_trip);
  g_test_add_func("/cli/convert/info-plain", test_info_plain);
  g_test_add_func("/cli/convert/errors", test_errors);
  int rc = g_test_run();
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
