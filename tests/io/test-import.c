/*
 * Import of plain PyTorch weights (docs/safetensors.md, "Importing a state
 * dict"). The fixtures in tests/io/state-dict/ come from make_state_dict.py:
 * a torch nn.Sequential(Linear(4, 8), ReLU(), Linear(8, 3)), its state dict
 * in F32, F64, F16 and BF16 and under other names with a mapping, an input
 * and torch's outputs. Imported into the matching Loom network, the forward
 * pass must give torch's outputs; bad files and bad mappings must fail with
 * messages naming the tensor and the slot, leaving the network untouched.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "loom/npy.h"
#include "loom/safetensors.h"

#include "../cli/tmp-dir.h"

static char *tmp_dir;

static char *fixture(const char *name) {
  const char *src = g_getenv("LOOM_SOURCE_DIR");
  return g_build_filename(src ? src : ".", "tests", "io", "state-dict", name, NULL);
}

static loom_layer *dense(int64_t in, int64_t out) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  g_assert_nonnull(l);
  g_assert_cmpint(loom_layer_set_int(l, "in_features", in, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_layer_set_int(l, "out_features", out, &err), ==, LOOM_OK);
  return l;
}

/* Dense(4→8) at (0,0,0,0), ReLU at (0,0,1,0), Dense(8→3) at (0,0,2,0). */
static loom_net *mlp(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 3, 1, &err);
  g_assert_nonnull(net);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 0}, dense(4, 8), &err), ==, LOOM_OK);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 1, 0}, loom_layer_new_by_name("relu", &err), &err), ==,
                  LOOM_OK);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 2, 0}, dense(8, 3), &err), ==, LOOM_OK);
  loom_shape in = loom_shape_1d(4);
  g_assert_cmpint(loom_net_set_input_shape(net, &in, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_net_infer_shapes(net, 7, NULL), ==, 0);
  return net;
}

/* Every master of the network, concatenated. */
static GArray *snapshot(loom_net *net) {
  GArray *a = g_array_new(FALSE, FALSE, sizeof(float));
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, i));
    for (int k = 0; k < loom_layer_n_weights(l); k++) {
      loom_weights *w = loom_layer_weights(l, k);
      g_array_append_vals(a, loom_weights_master_const(w), (guint)loom_weights_count(w));
    }
  }
  return a;
}

/* Imports `file` (by the mapping file `map_name`, or the nn.Sequential rule)
 * and checks the forward output against `expected`, within 1e-5 of the
 * output's scale. */
static void check_forward(const char *file, const char *map_name, const char *expected) {
  loom_error err = {0};
  loom_net *net = mlp();
  char *path = fixture(file), *xp = fixture("input.npy"), *yp = fixture(expected);
  loom_import_map *map = NULL;
  if (map_name) {
    char *mp = fixture(map_name);
    if (loom_import_map_load(mp, &map, &err)) g_error("%s", err.message);
    g_assert_cmpint(loom_import_map_n_entries(map), ==, 4);
    g_free(mp);
  }
  if (loom_import_state_dict(net, path, map, 0, &err)) g_error("%s", err.message);
  loom_npy x, y;
  g_assert_cmpint(loom_npy_read(xp, &x, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_npy_read(yp, &y, &err), ==, LOOM_OK);
  g_assert_cmpint(x.ndim, ==, 2);
  g_assert_cmpint(x.shape[1], ==, 4);
  g_assert_cmpint(loom_npy_numel(&y), ==, x.shape[0] * 3);
  float *out = g_new0(float, loom_npy_numel(&y));
  loom_ctx ctx = {0};
  if (loom_net_forward(net, &ctx, x.data, x.shape[0], out, &err)) g_error("%s", err.message);
  double scale = 0, worst = 0;
  for (int64_t i = 0; i < loom_npy_numel(&y); i++) scale = fmax(scale, fabs(y.data[i]));
  g_assert_cmpfloat(scale, >, 0.1); /* a real output, not zeros */
  for (int64_t i = 0; i < loom_npy_numel(&y); i++) worst = fmax(worst, fabs(out[i] - y.data[i]) / scale);
  g_test_message("%s: largest difference from torch %.3g of the output's scale", file, worst);
  g_assert_cmpfloat(worst, <=, 1e-5);
  g_free(out);
  loom_npy_clear(&x);
  loom_npy_clear(&y);
  loom_import_map_free(map);
  g_free(path);
  g_free(xp);
  g_free(yp);
  loom_net_free(net);
}

static void test_sequential_f32(void) { check_forward("mlp-f32.safetensors", NULL, "expected-f32.npy"); }
static void test_sequential_f64(void) { check_forward("mlp-f64.safetensors", NULL, "expected-f64.npy"); }
static void test_sequential_f16(void) { check_forward("mlp-f16.safetensors", NULL, "expected-f16.npy"); }
static void test_sequential_bf16(void) { check_forward("mlp-bf16.safetensors", NULL, "expected-bf16.npy"); }
static void test_mapped(void) { check_forward("mlp-named.safetensors", "mlp-named.map.json", "expected-f32.npy"); }

/* ---- crafted files ------------------------------------------------------ */

typedef struct {
  const char *name, *dtype;
  int rank;
  int64_t shape[4];
  float fill; /* every value (F32); I32 tensors hold zeros */
} spec;

static size_t spec_bytes(const spec *s) {
  int64_t n = 1;
  for (int k = 0; k < s->rank; k++) n *= s->shape[k];
  return (size_t)n * 4;
}

/* A safetensors file holding `n` tensors, written per the format. */
static char *write_file(const char *base, const spec *specs, int n) {
  GString *h = g_string_new("{");
  size_t off = 0;
  for (int i = 0; i < n; i++) {
    g_string_append_printf(h, "%s\"%s\":{\"dtype\":\"%s\",\"shape\":[", i ? "," : "", specs[i].name, specs[i].dtype);
    for (int k = 0; k < specs[i].rank; k++) g_string_append_printf(h, "%s%lld", k ? "," : "", (long long)specs[i].shape[k]);
    g_string_append_printf(h, "],\"data_offsets\":[%zu,%zu]}", off, off + spec_bytes(&specs[i]));
    off += spec_bytes(&specs[i]);
  }
  g_string_append(h, "}");
  while (h->len % 8) g_string_append_c(h, ' ');
  GByteArray *b = g_byte_array_new();
  for (int k = 0; k < 8; k++) g_byte_array_append(b, (guint8[]){(guint8)((uint64_t)h->len >> (8 * k))}, 1);
  g_byte_array_append(b, (const guint8 *)h->str, (guint)h->len);
  for (int i = 0; i < n; i++)
    for (size_t j = 0; j < spec_bytes(&specs[i]) / 4; j++) {
      float v = strcmp(specs[i].dtype, "F32") ? 0.0f : specs[i].fill;
      g_byte_array_append(b, (const guint8 *)&v, 4); /* little-endian machine, as the CI */
    }
  char *path = g_build_filename(tmp_dir, base, NULL);
  g_assert_true(g_file_set_contents(path, (const char *)b->data, b->len, NULL));
  g_byte_array_free(b, TRUE);
  g_string_free(h, TRUE);
  return path;
}

#define GOOD_W0 {"0.weight", "F32", 2, {8, 4}, 0.5f}
#define GOOD_B0 {"0.bias", "F32", 1, {8}, 0.25f}
#define GOOD_W2 {"2.weight", "F32", 2, {3, 8}, -0.5f}
#define GOOD_B2 {"2.bias", "F32", 1, {3}, 1.0f}

/* Imports and expects failure with `code` and every one of the `want`
 * fragments in the message; the network's masters must be unchanged. */
static void expect_fail(const spec *specs, int n, const loom_import_map *map, unsigned flags, int code,
                        const char *const *want) {
  loom_error err = {0};
  loom_net *net = mlp();
  GArray *before = snapshot(net);
  char *path = write_file("bad.safetensors", specs, n);
  int rc = loom_import_state_dict(net, path, map, flags, &err);
  g_test_message("%s", err.message);
  g_assert_cmpint(rc, ==, code);
  for (int i = 0; want[i]; i++)
    if (!strstr(err.message, want[i])) g_error("message “%s” lacks “%s”", err.message, want[i]);
  GArray *after = snapshot(net);
  g_assert_cmpuint(after->len, ==, before->len);
  g_assert_cmpmem(after->data, after->len * sizeof(float), before->data, before->len * sizeof(float));
  g_array_free(before, TRUE);
  g_array_free(after, TRUE);
  g_free(path);
  loom_net_free(net);
}

static void test_missing_tensor(void) {
  const spec s[] = {GOOD_W0, GOOD_B0, GOOD_W2};
  expect_fail(s, 3, NULL, 0, LOOM_ERR_FORMAT,
              (const char *const[]){"no tensor “2.bias”", "weight “bias”", "(0,0,2,0)", NULL});
}

static void test_wrong_shape(void) {
  const spec s[] = {{"0.weight", "F32", 2, {4, 8}, 0.5f}, GOOD_B0, GOOD_W2, GOOD_B2};
  expect_fail(s, 4, NULL, 0, LOOM_ERR_SHAPE,
              (const char *const[]){"tensor “0.weight” has shape [4, 8]", "dense layer at (0,0,0,0)",
                                    "has shape [8, 4]", NULL});
  const spec v[] = {GOOD_W0, GOOD_B0, GOOD_W2, {"2.bias", "F32", 1, {4}, 1.0f}};
  expect_fail(v, 4, NULL, 0, LOOM_ERR_SHAPE,
              (const char *const[]){"tensor “2.bias” has shape [4]", "(0,0,2,0)", "has shape [3]", NULL});
}

static void test_wrong_dtype(void) {
  const spec s[] = {GOOD_W0, {"0.bias", "I32", 1, {8}, 0}, GOOD_W2, GOOD_B2};
  expect_fail(s, 4, NULL, 0, LOOM_ERR_UNSUPPORTED, (const char *const[]){"tensor “0.bias” holds I32 values", NULL});
}

static void test_nonfinite(void) {
  const spec s[] = {GOOD_W0, GOOD_B0, GOOD_W2, {"2.bias", "F32", 1, {3}, NAN}};
  expect_fail(s, 4, NULL, 0, LOOM_ERR_NONFINITE, (const char *const[]){"tensor “2.bias” holds NaN at element 0", NULL});
}

static void test_unmapped(void) {
  const spec s[] = {GOOD_W0, GOOD_B0, GOOD_W2, GOOD_B2, {"2.running_mean", "F32", 1, {3}, 0}};
  /* "2.running_mean" is no weight of the dense layer, so the rule leaves it unmapped. */
  expect_fail(s, 5, NULL, 0, LOOM_ERR_FORMAT, (const char *const[]){"tensor “2.running_mean” is mapped to no weight",
                                                                     NULL});
  /* ... which the flag allows; the good tensors then arrive. */
  loom_error err = {0};
  loom_net *net = mlp();
  char *path = write_file("extra.safetensors", s, 5);
  g_assert_cmpint(loom_import_state_dict(net, path, NULL, LOOM_IMPORT_IGNORE_UNMAPPED, &err), ==, LOOM_OK);
  loom_layer *l = loom_net_layer_at(net, (loom_coord){0, 0, 2, 0});
  const float *b = loom_weights_master_const(loom_layer_weights(l, 1));
  g_assert_cmpfloat(b[0], ==, 1.0f);
  g_assert_cmpfloat(b[2], ==, 1.0f);
  g_free(path);
  loom_net_free(net);
}

static void test_not_sequential(void) {
  const spec s[] = {{"fc1.weight", "F32", 2, {8, 4}, 0.5f}};
  expect_fail(s, 1, NULL, 0, LOOM_ERR_FORMAT,
              (const char *const[]){"tensor “fc1.weight” is not named like", "give a mapping", NULL});
  const spec t[] = {GOOD_W0, GOOD_B0, GOOD_W2, GOOD_B2, {"4.weight", "F32", 2, {3, 3}, 0}};
  expect_fail(t, 5, NULL, 0, LOOM_ERR_SHAPE, (const char *const[]){"weights of 3 layers", "has 2 layers", NULL});
}

static loom_import_map *parse_map(const char *text, int want_rc, const char *want) {
  loom_error err = {0};
  loom_import_map *m = NULL;
  int rc = loom_import_map_parse(text, strlen(text), "map.json", &m, &err);
  if (rc) g_test_message("%s", err.message);
  g_assert_cmpint(rc, ==, want_rc);
  if (want && !strstr(err.message, want)) g_error("message “%s” lacks “%s”", err.message, want);
  if (rc) g_assert_null(m);
  return m;
}

static void test_bad_map(void) {
  parse_map("{\"0.weight\": {\"at\": [0,0,0,0], \"weight\": \"weight\"", LOOM_ERR_FORMAT, "map.json:1:50: unexpected end of the text");
  parse_map("{\"0.weight\": {\"at\": [0,0,0,0] \"weight\": \"weight\"}}", LOOM_ERR_FORMAT, "map.json:1:31: expected ',' or '}'");
  parse_map("[]", LOOM_ERR_FORMAT, "map.json");
  parse_map("{}", LOOM_ERR_FORMAT, "maps no tensor");
  parse_map("{\"0.weight\": {\"at\": [0,0,0], \"weight\": \"weight\"}}", LOOM_ERR_FORMAT, "not 3 values");
  parse_map("{\"0.weight\": {\"at\": [0,0,-1,0], \"weight\": \"weight\"}}", LOOM_ERR_RANGE, "$[\"0.weight\"].at[2]");
  parse_map("{\"0.weight\": {\"at\": [0,0,0,0]}}", LOOM_ERR_FORMAT, "0.weight");
  parse_map("{\"0.weight\": {\"at\": [0,0,0,0], \"weight\": \"weight\", \"slot\": 1}}", LOOM_ERR_FORMAT, "slot");
  parse_map("{\"0.weight\": {\"at\": [0,0,0,0], \"weight\": \"\"}}", LOOM_ERR_FORMAT, "weight name is empty");

  const spec s[] = {GOOD_W0, GOOD_B0, GOOD_W2, GOOD_B2};
  loom_import_map *m = parse_map("{\"0.weight\": {\"at\": [0,0,1,0], \"weight\": \"weight\"}}", LOOM_OK, NULL);
  expect_fail(s, 4, m, LOOM_IMPORT_IGNORE_UNMAPPED, LOOM_ERR_FORMAT,
              (const char *const[]){"tensor “0.weight” is mapped to the weight “weight” of the relu layer at (0,0,1,0)",
                                    "its weights: -", NULL});
  loom_import_map_free(m);
  m = parse_map("{\"0.weight\": {\"at\": [0,0,5,0], \"weight\": \"weight\"}}", LOOM_OK, NULL);
  expect_fail(s, 4, m, LOOM_IMPORT_IGNORE_UNMAPPED, LOOM_ERR_RANGE,
              (const char *const[]){"tensor “0.weight” is mapped to (0,0,5,0), where the network has no layer", NULL});
  loom_import_map_free(m);
  m = parse_map("{\"0.weight\": {\"at\": [0,0,0,0], \"weight\": \"kernel\"}}", LOOM_OK, NULL);
  expect_fail(s, 4, m, LOOM_IMPORT_IGNORE_UNMAPPED, LOOM_ERR_FORMAT,
              (const char *const[]){"“kernel”", "(its weights: weight, bias)", NULL});
  loom_import_map_free(m);
  m = parse_map("{\"0.weight\": {\"at\": [0,0,0,0], \"weight\": \"weight\"},"
                " \"2.weight\": {\"at\": [0,0,0,0], \"weight\": \"weight\"}}",
                LOOM_OK, NULL);
  expect_fail(s, 4, m, LOOM_IMPORT_IGNORE_UNMAPPED, LOOM_ERR_SHAPE, (const char *const[]){"2.weight", NULL});
  loom_import_map_free(m);
  const spec twice[] = {GOOD_W0, {"x", "F32", 2, {8, 4}, 2.0f}};
  m = parse_map("{\"0.weight\": {\"at\": [0,0,0,0], \"weight\": \"weight\"},"
                " \"x\": {\"at\": [0,0,0,0], \"weight\": \"weight\"}}",
                LOOM_OK, NULL);
  expect_fail(twice, 2, m, 0, LOOM_ERR_FORMAT,
              (const char *const[]){"tensors “0.weight” and “x” are both mapped to the weight “weight” of the layer at "
                                    "(0,0,0,0)",
                                    NULL});
  loom_import_map_free(m);
  /* A bad file never reaches the mapping: the reader's own errors. */
  char *path = g_build_filename(tmp_dir, "short.safetensors", NULL);
  g_assert_true(g_file_set_contents(path, "\x08\0\0", 3, NULL));
  loom_error err = {0};
  loom_net *net = mlp();
  g_assert_cmpint(loom_import_state_dict(net, path, NULL, 0, &err), !=, LOOM_OK);
  g_assert_nonnull(strstr(err.message, "short.safetensors"));
  g_free(path);
  loom_net_free(net);
}

/* A mapped layer at another dtype gets the imported values morphed. */
static void test_morphs_to_dtype(void) {
  const spec s[] = {GOOD_W0, GOOD_B0, GOOD_W2, GOOD_B2};
  loom_error err = {0};
  loom_net *net = mlp();
  loom_layer *l = loom_net_layer_at(net, (loom_coord){0, 0, 0, 0});
  g_assert_cmpint(loom_layer_set_dtype(l, LOOM_DTYPE_INT8, &err), ==, LOOM_OK);
  char *path = write_file("good.safetensors", s, 4);
  g_assert_cmpint(loom_import_state_dict(net, path, NULL, 0, &err), ==, LOOM_OK);
  loom_weights *w = loom_layer_weights(l, 0);
  g_assert_cmpint(loom_weights_dtype(w), ==, LOOM_DTYPE_INT8);
  g_assert_nonnull(loom_weights_packed(w, NULL)); /* morphed, not stale */
  const float *eff = loom_weights_effective(w, &err);
  g_assert_nonnull(eff);
  g_assert_cmpfloat_with_epsilon(eff[0], 0.5f, 1e-6);
  g_free(path);
  loom_net_free(net);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-import-XXXXXX", NULL);
  g_test_add_func("/import/sequential-f32", test_sequential_f32);
  g_test_add_func("/import/sequential-f64", test_sequential_f64);
  g_test_add_func("/import/sequential-f16", test_sequential_f16);
  g_test_add_func("/import/sequential-bf16", test_sequential_bf16);
  g_test_add_func("/import/mapped", test_mapped);
  g_test_add_func("/import/missing-tensor", test_missing_tensor);
  g_test_add_func("/import/wrong-shape", test_wrong_shape);
  g_test_add_func("/import/wrong-dtype", test_wrong_dtype);
  g_test_add_func("/import/nonfinite", test_nonfinite);
  g_test_add_func("/import/unmapped", test_unmapped);
  g_test_add_func("/import/not-sequential", test_not_sequential);
  g_test_add_func("/import/bad-map", test_bad_map);
  g_test_add_func("/import/morphs-to-dtype", test_morphs_to_dtype);
  int rc = g_test_run();
  tmp_dir_remove(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
