/*
 * `loom import` end to end: the nn.Sequential and the mapped fixtures of
 * tests/io/state-dict/ (make_state_dict.py) into a model file, then
 * `loom forward` on the result against torch's outputs; a failing import
 * leaves no output file behind; usage errors exit 2.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "../cli/cli-harness.h"
#include "../cli/tmp-dir.h"

static char *tmp_dir;

/* dense 4→8, relu, dense 8→3, as torch's nn.Sequential in the fixtures. */
static const char mlp_json[] =
  "{\"format\": \"loom-model\", \"version\": 1,\n"
  " \"grid\": {\"depth\": 1, \"rows\": 1, \"cols\": 3, \"layers_per_cell\": 1},\n"
  " \"input_shape\": [4],\n"
  " \"slots\": [\n"
  "  {\"at\": [0, 0, 0, 0], \"enabled\": true, \"layer\": {\"type\": \"dense\", \"dtype\": \"float32\",\n"
  "   \"params\": {\"in_features\": 4, \"out_features\": 8, \"bias\": true}}},\n"
  "  {\"at\": [0, 0, 1, 0], \"enabled\": true, \"layer\": {\"type\": \"relu\", \"dtype\": \"float32\", \"params\": {}}},\n"
  "  {\"at\": [0, 0, 2, 0], \"enabled\": true, \"layer\": {\"type\": \"dense\", \"dtype\": \"float32\",\n"
  "   \"params\": {\"in_features\": 8, \"out_features\": 3, \"bias\": true}}}],\n"
  " \"links\": []}\n";

static char *fixture(const char *name) {
  const char *src = g_getenv("LOOM_SOURCE_DIR");
  return g_build_filename(src ? src : ".", "tests", "io", "state-dict", name, NULL);
}

static char *tmp(const char *name) { return g_build_filename(tmp_dir, name, NULL); }

/* The float32 values of a little-endian <f4 .npy file (numpy's version 1 header). */
static float *npy_values(const char *path, gsize *n) {
  char *bytes;
  gsize len;
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  g_assert_cmpuint(len, >=, 10);
  g_assert_cmpmem(bytes, 6, "\x93NUMPY", 6);
  gsize data = 10 + ((guint8)bytes[8] | (guint8)bytes[9] << 8);
  g_assert_nonnull(g_strstr_len(bytes + 10, (gssize)(data - 10), "<f4")); /* after the NUL of the version */
  *n = (len - data) / 4;
  float *v = g_new(float, *n);
  memcpy(v, bytes + data, *n * 4);
  g_free(bytes);
  return v;
}

/* loom forward on `model` gives torch's outputs within 1e-5 of their scale. */
static void check_forward(const char *model) {
  char *x = fixture("input.npy"), *want = fixture("expected-f32.npy"), *y = tmp("y.npy");
  CliResult r = cli_run(NULL, NULL, (const char *const[]){"forward", model, "--input", x, "--output", y, NULL});
  if (r.status) g_error("loom forward: %s", r.err);
  gsize n, m;
  float *got = npy_values(y, &n), *exp = npy_values(want, &m);
  g_assert_cmpuint(n, ==, m);
  g_assert_cmpuint(n, ==, 15);
  double scale = 0, worst = 0;
  for (gsize i = 0; i < n; i++) scale = fmax(scale, fabs(exp[i]));
  for (gsize i = 0; i < n; i++) worst = fmax(worst, fabs(got[i] - exp[i]) / scale);
  g_test_message("%s: largest difference from torch %.3g of the output's scale", model, worst);
  g_assert_cmpfloat(worst, <=, 1e-5);
  g_free(got);
  g_free(exp);
  cli_result_clear(&r);
  g_unlink(y);
  g_free(x);
  g_free(want);
  g_free(y);
}

static char *write_model(void) {
  char *p = tmp("mlp.json");
  g_assert_true(g_file_set_contents(p, mlp_json, -1, NULL));
  return p;
}

static void test_sequential(void) {
  char *model = write_model(), *w = fixture("mlp-f32.safetensors"), *out = tmp("imported.json");
  CliResult r = cli_run(NULL, NULL, (const char *const[]){"import", model, "--weights", w, "--out", out, NULL});
  if (r.status) g_error("loom import: %s", r.err);
  g_assert_nonnull(strstr(r.out, "wrote"));
  check_forward(out);
  cli_result_clear(&r);
  g_free(model);
  g_free(w);
  g_free(out);
}

static void test_mapped(void) {
  char *model = write_model(), *w = fixture("mlp-named.safetensors"), *map = fixture("mlp-named.map.json"),
       *out = tmp("imported.safetensors");
  CliResult r = cli_run(NULL, NULL,
                        (const char *const[]){"import", model, "--weights", w, "--map", map, "--out", out, NULL});
  if (r.status) g_error("loom import: %s", r.err);
  check_forward(out);
  cli_result_clear(&r);
  g_free(model);
  g_free(w);
  g_free(map);
  g_free(out);
}

static void test_failures(void) {
  char *model = write_model(), *w = fixture("mlp-named.safetensors"), *out = tmp("never.json");
  /* named tensors without a mapping */
  CliResult r = cli_run(NULL, NULL, (const char *const[]){"import", model, "--weights", w, "--out", out, NULL});
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, "tensor “fc1.weight” is not named like an entry of an nn.Sequential state dict"));
  g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS));
  cli_result_clear(&r);
  /* a mapping that is not JSON */
  char *bad = tmp("bad-map.json");
  g_assert_true(g_file_set_contents(bad, "{\"fc1.weight\": ", -1, NULL));
  r = cli_run(NULL, NULL, (const char *const[]){"import", model, "--weights", w, "--map", bad, "--out", out, NULL});
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, "bad-map.json"));
  g_assert_false(g_file_test(out, G_FILE_TEST_EXISTS));
  cli_result_clear(&r);
  /* usage */
  r = cli_run(NULL, NULL, (const char *const[]){"import", model, "--out", out, NULL});
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "--weights"));
  cli_result_clear(&r);
  r = cli_run(NULL, NULL, (const char *const[]){"import", model, "--weights", w, NULL});
  g_assert_cmpint(r.status, ==, 2);
  cli_result_clear(&r);
  g_unlink(bad);
  g_free(bad);
  g_free(model);
  g_free(w);
  g_free(out);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-import-cli-XXXXXX", NULL);
  g_test_add_func("/import-cli/sequential", test_sequential);
  g_test_add_func("/import-cli/mapped", test_mapped);
  g_test_add_func("/import-cli/failures", test_failures);
  int rc = g_test_run();
  tmp_dir_remove(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
