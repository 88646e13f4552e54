/*
 * safetensors model files: JSON ⇄ safetensors bit-exact for every dtype,
 * every example (containers, links) and every layer type; the training
 * section; a second, minimal parser in this file reads what we write; an
 * independent Python writer/reader (tests/io/safetensors_reference.py, the
 * reference library's layout) in both directions; and the basic checks of
 * the header.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "loom/safetensors.h"

#include "io-test-util.h"

static char *tmp_dir;

static loom_net *from_st(const uint8_t *bytes, size_t len, loom_model_extras *x) {
  loom_error err = {0};
  loom_net *net = NULL;
  int rc = loom_model_load_safetensors_data(bytes, len, "t.safetensors", LOOM_MODEL_STRICT, &net, x, &err);
  if (rc) g_error("loading failed: %s", err.message);
  return net;
}

/*
 * A minimal parser of its own (sscanf over the header, no JSON library):
 * every weight of the network must be a tensor holding exactly its packed
 * bytes, and its scales the store's scales.
 */
static void check_independently(loom_net *net, const uint8_t *file, size_t len) {
  g_assert_cmpuint(len, >=, 8);
  uint64_t hlen = 0;
  for (int b = 7; b >= 0; b--) hlen = hlen << 8 | file[b];
  g_assert_cmpuint(hlen % 8, ==, 0);
  g_assert_cmpuint(hlen, <=, len - 8);
  char *header = g_strndup((const char *)file + 8, hlen);
  const uint8_t *data = file + 8 + hlen;
  uint64_t covered = 0;
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    loom_coord c = loom_net_layer_coord(net, i);
    loom_layer *l = loom_net_layer_at(net, c);
    if (!loom_layer_is_built(l)) continue;
    for (int k = 0; k < loom_layer_n_weights(l); k++) {
      loom_weights *w = loom_layer_weights(l, k);
      char path[256];
      loom_layer_weights_path(l, k, path, sizeof path);
      for (int part = 0; part < 2; part++) {
        bool scaled = loom_dtype_traits_get(loom_weights_dtype(w))->scaled;
        if (part == 1 && !scaled) break;
        char *key = g_strdup_printf("\"slot.%d.%d.%d.%d.%s%s\":", c.z, c.y, c.x, c.l, path, part ? ".scales" : "");
        const char *at = strstr(header, key);
        if (!at) g_error("no tensor %s in the header", key);
        char dtype[16];
        long long d0 = 0, d1 = 0;
        unsigned long long b = 0, e = 0;
        int got = part ? sscanf(at + strlen(key), " { \"dtype\" : \"%15[^\"]\" , \"shape\" : [ %lld ] , "
                                                  "\"data_offsets\" : [ %llu , %llu ] }",
                                dtype, &d0, &b, &e)
                       : sscanf(at + strlen(key), " { \"dtype\" : \"%15[^\"]\" , \"shape\" : [ %lld , %lld ] , "
                                                  "\"data_offsets\" : [ %llu , %llu ] }",
                                dtype, &d0, &d1, &b, &e);
        g_assert_cmpint(got, ==, part ? 4 : 5);
        size_t nbytes = 0;
        int64_t nscales = 0;
        const void *want = part ? (const void *)loom_weights_scales(w, &nscales) : loom_weights_packed(w, &nbytes);
        if (part) nbytes = (size_t)nscales * sizeof(float);
        g_assert_cmpuint(e - b, ==, nbytes);
        g_assert_cmpuint(b + nbytes, <=, len - 8 - hlen);
        g_assert_true(memcmp(data + b, want, nbytes) == 0);
        g_assert_cmpstr(dtype, ==, part ? "F32" : loom_safetensors_dtype_for(loom_weights_dtype(w)));
        g_assert_cmpint(d0, ==, part ? nscales : loom_weights_rows(w));
        covered += nbytes;
        g_free(key);
      }
    }
  }
  g_assert_cmpuint(covered, ==, len - 8 - hlen);
  g_free(header);
}

/* JSON → safetensors → network → JSON gives the same text, and safetensors
 * again the same bytes. */
static void check_round_trip(loom_net *net, const char *what) {
  loom_error err = {0};
  size_t jlen1, jlen2, slen1, slen2;
  char *json1 = loom_model_to_json(net, &jlen1, &err);
  g_assert_nonnull(json1);
  uint8_t *st1 = loom_model_to_safetensors(net, NULL, &slen1, &err);
  if (!st1) g_error("%s: %s", what, err.message);
  check_independently(net, st1, slen1);
  loom_net *back = from_st(st1, slen1, NULL);
  char *json2 = loom_model_to_json(back, &jlen2, &err);
  if (strcmp(json1, json2) != 0) g_error("%s: the JSON differs after a safetensors round trip", what);
  uint8_t *st2 = loom_model_to_safetensors(back, NULL, &slen2, &err);
  g_assert_cmpuint(slen1, ==, slen2);
  g_assert_true(memcmp(st1, st2, slen1) == 0);
  free(json1);
  free(json2);
  free(st1);
  free(st2);
  loom_net_free(back);
}

static void test_examples_every_dtype(void) {
  for (int e = 0; e < loom_example_count(); e++) {
    for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
      loom_error err = {0};
      loom_net *net = NULL;
      g_assert_cmpint(loom_example_build(loom_example_name(e), &net, &err), ==, LOOM_OK);
      set_all_dtypes(net, (loom_dtype)d);
      char what[96];
      g_snprintf(what, sizeof what, "%s@%s", loom_example_name(e), loom_dtype_name((loom_dtype)d));
      check_round_trip(net, what);
      loom_net_free(net);
    }
  }
}

static void test_every_layer_type(void) {
  static const loom_dtype dtypes[] = {LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_UINT4, LOOM_DTYPE_INT64};
  for (int t = 0; t < loom_layer_type_count(); t++) {
    for (size_t d = 0; d < G_N_ELEMENTS(dtypes); d++) {
      loom_error err = {0};
      loom_shape in;
      loom_layer *l = build_any(loom_layer_type_at(t), &in, false);
      if (!l) break;
      loom_net *net = loom_net_new(1, 1, 2, 1, &err);
      g_assert_cmpint(loom_net_set_input_shape(net, &in, &err), ==, 0);
      g_assert_cmpint(loom_layer_set_dtype(l, dtypes[d], &err), ==, 0);
      g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 1, 0}, l, &err), ==, 0);
      loom_diag *diags = NULL;
      g_assert_cmpint(loom_net_infer_shapes(net, 1, &diags), ==, 0);
      free(diags);
      char what[96];
      g_snprintf(what, sizeof what, "%s@%s", loom_layer_type_name(loom_layer_type_at(t)), loom_dtype_name(dtypes[d]));
      check_round_trip(net, what);
      loom_net_free(net);
    }
  }
}

/* Per-tensor scales, a disabled slot and the training section survive. */
static void test_state_and_training(void) {
  loom_error err = {0};
  loom_net *net = NULL;
  g_assert_cmpint(loom_example_build("xor", &net, &err), ==, LOOM_OK);
  set_all_dtypes(net, LOOM_DTYPE_INT8);
  loom_layer *first = loom_net_layer_at(net, loom_net_layer_coord(net, 0));
  g_assert_cmpint(loom_weights_set_scale_mode(loom_layer_weights(first, 0), LOOM_SCALE_PER_TENSOR, &err), ==, 0);
  g_assert_cmpint(loom_net_set_enabled(net, loom_net_layer_coord(net, 1), false, &err), ==, 0);
  uint8_t blob[37];
  for (size_t i = 0; i < sizeof blob; i++) blob[i] = (uint8_t)(i * 29 + 3);
  loom_model_extras x = {.train_state = blob, .train_state_len = sizeof blob, .train_steps = 1234};
  size_t jlen, slen;
  char *json1 = loom_model_to_json_ex(net, &x, &jlen, &err);
  uint8_t *st = loom_model_to_safetensors(net, &x, &slen, &err);
  g_assert_nonnull(st);
  loom_model_extras y = {0};
  loom_net *back = from_st(st, slen, &y);
  g_assert_cmpint(y.train_steps, ==, 1234);
  g_assert_cmpuint(y.train_state_len, ==, sizeof blob);
  g_assert_true(memcmp(y.train_state, blob, sizeof blob) == 0);
  char *json2 = loom_model_to_json_ex(back, &y, &jlen, &err);
  g_assert_cmpstr(json1, ==, json2);
  loom_model_extras_clear(&y);

  /* Through files: loom_model_load finds a safetensors file by its content. */
  char *path = g_build_filename(tmp_dir, "xor.st", NULL);
  g_assert_cmpint(loom_model_save_safetensors(net, NULL, path, &err), ==, 0);
  g_assert_true(loom_model_file_is_safetensors(path));
  loom_net *again = NULL;
  g_assert_cmpint(loom_model_load(path, LOOM_MODEL_STRICT, &again, &err), ==, 0);
  char *json3 = loom_model_to_json(again, &jlen, &err);
  char *json4 = loom_model_to_json(net, &jlen, &err);
  g_assert_cmpstr(json3, ==, json4);
  g_unlink(path);
  g_free(path);
  /* Saving under a .safetensors name writes that format (a document opened
   * from such a file must reopen after saving). */
  path = g_build_filename(tmp_dir, "saved.safetensors", NULL);
  g_assert_cmpint(loom_model_save(net, path, &err), ==, 0);
  char *saved;
  gsize saved_len;
  g_assert_true(g_file_get_contents(path, &saved, &saved_len, NULL));
  size_t direct_len;
  uint8_t *direct = loom_model_to_safetensors(net, NULL, &direct_len, &err);
  g_assert_cmpuint(saved_len, ==, direct_len);
  g_assert_true(memcmp(saved, direct, direct_len) == 0);
  g_free(saved);
  free(direct);
  g_unlink(path);
  g_free(path);
  free(json1);
  free(json2);
  free(json3);
  free(json4);
  free(st);
  loom_net_free(net);
  loom_net_free(back);
  loom_net_free(again);
}

/* An int4 network's file is at most 1/7 of its float32 file plus headers. */
static void test_int4_size(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 1, 1, &err);
  g_assert_cmpint(loom_net_set_input_shape(net, &(loom_shape){.rank = 1, .d = {512}}, &err), ==, 0);
  loom_layer *d = loom_layer_new_by_name("dense", &err);
  loom_layer_set_int(d, "in_features", 512, &err);
  loom_layer_set_int(d, "out_features", 512, &err);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 0}, d, &err), ==, 0);
  loom_diag *diags = NULL;
  loom_net_infer_shapes(net, 1, &diags);
  free(diags);
  size_t f32, i4;
  free(loom_model_to_safetensors(net, NULL, &f32, &err));
  set_all_dtypes(net, LOOM_DTYPE_INT4);
  free(loom_model_to_safetensors(net, NULL, &i4, &err));
  g_test_message("float32 %zu bytes, int4 %zu bytes", f32, i4);
  g_assert_cmpuint(i4, <=, f32 / 7 + 4096);
  loom_net_free(net);
}

static bool python_available(void) { return g_file_test("/usr/bin/python3", G_FILE_TEST_IS_EXECUTABLE); }

static void run_reference(const char *mode, const char *a, const char *b) {
  const char *src = g_getenv("LOOM_SOURCE_DIR");
  g_assert_nonnull(src);
  char *script = g_build_filename(src, "tests", "io", "safetensors_reference.py", NULL);
  const char *argv[] = {"/usr/bin/python3", script, mode, a, b, NULL};
  int status = 0;
  char *out = NULL, *errs = NULL;
  GError *gerr = NULL;
  g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_DEFAULT, NULL, NULL, &out, &errs, &status, &gerr));
  if (!g_spawn_check_wait_status(status, NULL)) g_error("safetensors_reference.py %s: %s%s", mode, out, errs);
  g_free(out);
  g_free(errs);
  g_free(script);
}

/* The independent Python reader accepts what we write, and we read what the
 * Python writer (reference library layout: sorted by element size, then
 * name) writes, for a network mixing dtypes, containers and links. */
static void test_python_reference(void) {
  if (!python_available()) {
    g_test_skip("/usr/bin/python3 is not installed");
    return;
  }
  loom_error err = {0};
  loom_net *net = NULL;
  g_assert_cmpint(loom_example_build("moe", &net, &err), ==, LOOM_OK);
  for (int64_t i = 0; i < loom_net_n_layers(net); i++) {
    static const loom_dtype mix[] = {LOOM_DTYPE_FP8_E4M3, LOOM_DTYPE_INT4, LOOM_DTYPE_TERNARY, LOOM_DTYPE_UINT16,
                                     LOOM_DTYPE_BFLOAT16, LOOM_DTYPE_BINARY, LOOM_DTYPE_FLOAT64};
    loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, i));
    g_assert_cmpint(loom_layer_set_dtype(l, mix[i % G_N_ELEMENTS(mix)], &err), ==, 0);
  }
  char *json = g_build_filename(tmp_dir, "mix.loom.json", NULL);
  char *ours = g_build_filename(tmp_dir, "ours.safetensors", NULL);
  char *theirs = g_build_filename(tmp_dir, "theirs.safetensors", NULL);
  g_assert_cmpint(loom_model_save(net, json, &err), ==, 0);
  g_assert_cmpint(loom_model_save_safetensors(net, NULL, ours, &err), ==, 0);
  run_reference("check", ours, json);
  run_reference("write", json, theirs);
  loom_net *back = NULL;
  if (loom_model_load(theirs, LOOM_MODEL_STRICT, &back, &err)) g_error("%s", err.message);
  size_t len;
  char *a = loom_model_to_json(net, &len, &err), *b = loom_model_to_json(back, &len, &err);
  g_assert_cmpstr(a, ==, b);
  free(a);
  free(b);
  g_unlink(json);
  g_unlink(ours);
  g_unlink(theirs);
  g_free(json);
  g_free(ours);
  g_free(theirs);
  loom_net_free(net);
  loom_net_free(back);
}

/* A file from elsewhere (no Loom network) opens for listing, not as a network. */
static void test_foreign_file(void) {
  static const char header[] = "{\"b\":{\"dtype\":\"F16\",\"shape\":[2],\"data_offsets\":[4,8]},"
                               "\"a\":{\"dtype\":\"I32\",\"shape\":[],\"data_offsets\":[0,4]}}";
  size_t hlen = sizeof header - 1, len = 8 + hlen + 8;
  uint8_t *f = g_malloc0(len);
  for (int b = 0; b < 8; b++) f[b] = (uint8_t)((uint64_t)hlen >> (8 * b));
  memcpy(f + 8, header, hlen);
  f[8 + hlen] = 7;
  loom_error err = {0};
  loom_safetensors *st = NULL;
  g_assert_cmpint(loom_safetensors_open_data(f, len, "f.safetensors", &st, &err), ==, 0);
  g_assert_cmpint(loom_safetensors_n_tensors(st), ==, 2);
  g_assert_cmpstr(loom_safetensors_tensor(st, 0)->name, ==, "a"); /* by offset */
  g_assert_cmpint(loom_safetensors_tensor(st, 0)->rank, ==, 0);
  g_assert_cmpint(loom_safetensors_data(st, loom_safetensors_find(st, "a"))[0], ==, 7);
  g_assert_null(loom_safetensors_metadata(st, "loom_model"));
  loom_safetensors_close(st);
  loom_net *net = NULL;
  g_assert_cmpint(loom_model_load_safetensors_data(f, len, "f.safetensors", 0, &net, NULL, &err), !=, 0);
  g_assert_null(net);
  g_assert_nonnull(strstr(err.message, "f.safetensors: the file holds 2 tensors but no Loom network"));
  g_free(f);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-st-XXXXXX", NULL);
  g_test_add_func("/safetensors/examples-every-dtype", test_examples_every_dtype);
  g_test_add_func("/safetensors/every-layer-type", test_every_layer_type);
  g_test_add_func("/safetensors/state-and-training", test_state_and_training);
  g_test_add_func("/safetensors/int4-size", test_int4_size);
  g_test_add_func("/safetensors/python-reference", test_python_reference);
  g_test_add_func("/safetensors/foreign-file", test_foreign_file);
  int rc = g_test_run();
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
