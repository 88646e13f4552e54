/*
 * Model file round trips: every built-in example and a network holding every
 * registered layer type, at several dtypes: save → load → the same JSON text
 * and bit-identical forward outputs. Also the size of low-precision files
 * and that atomic saving leaves nothing behind.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "loom/model.h"

#include "io-test-util.h"

static char *tmp_dir;

static const loom_dtype test_dtypes[] = {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_FLOAT16, LOOM_DTYPE_INT8,
                                         LOOM_DTYPE_INT4,    LOOM_DTYPE_TERNARY, LOOM_DTYPE_BINARY};

/* Inputs valid for every layer type, embeddings included: small integers. */
static float *make_input(const loom_net *net, int64_t batch) {
  loom_shape in = loom_net_input_shape(net);
  int64_t n = batch * loom_shape_numel(&in);
  float *x = g_new(float, n);
  for (int64_t i = 0; i < n; i++) x[i] = (float)((i * 7 + 3) % 5);
  return x;
}

static float *run(loom_net *net, const float *x, int64_t batch) {
  loom_error err = {0};
  loom_shape out = loom_net_output_shape(net);
  float *y = g_new0(float, batch * loom_shape_numel(&out));
  loom_ctx ctx = {0};
  if (loom_net_execution(net) == LOOM_EXEC_SYSTOLIC) { /* feedback links: a few ticks with the input held */
    loom_systolic *s = loom_systolic_new(net, batch, &err);
    if (!s || loom_systolic_set_input(s, x, &err)) g_error("systolic runner: %s", err.message);
    for (int64_t t = 0; t < 2 * loom_net_n_layers(net); t++)
      if (loom_systolic_tick(s, &ctx, &err)) g_error("tick failed: %s", err.message);
    memcpy(y, loom_systolic_output(s, NULL), (size_t)(batch * loom_shape_numel(&out)) * sizeof(float));
    loom_systolic_free(s);
    return y;
  }
  int rc = loom_net_forward(net, &ctx, x, batch, y, &err);
  if (rc) g_error("forward failed: %s", err.message);
  return y;
}

/* save → load → save: identical text; and identical outputs before and after. */
static void check_round_trip(loom_net *net, const char *what) {
  loom_error err = {0};
  loom_diag *diags = NULL;
  int n_diags = loom_net_infer_shapes(net, 1, &diags);
  if (n_diags) g_error("%s: %s", what, diags[0].message);
  free(diags);
  size_t len1, len2;
  char *text1 = loom_model_to_json(net, &len1, &err);
  g_assert_nonnull(text1);
  g_assert_cmpuint(strlen(text1), ==, len1);

  loom_net *back = (loom_net *)1;
  int rc = loom_model_load_data(text1, len1, what, LOOM_MODEL_STRICT, &back, &err);
  if (rc) g_error("%s: %s", what, err.message);
  char *text2 = loom_model_to_json(back, &len2, &err);
  g_assert_nonnull(text2);
  if (strcmp(text1, text2) != 0) g_error("%s: the text changed on a round trip:\n%s\n----\n%s", what, text1, text2);

  const int64_t batch = 3;
  float *x = make_input(net, batch);
  float *y1 = run(net, x, batch);
  float *y2 = run(back, x, batch);
  loom_shape out = loom_net_output_shape(net);
  loom_shape out2 = loom_net_output_shape(back);
  g_assert_true(loom_shape_equal(&out, &out2));
  g_assert_cmpmem(y1, (size_t)(batch * loom_shape_numel(&out)) * sizeof(float), y2,
                  (size_t)(batch * loom_shape_numel(&out)) * sizeof(float));
  for (int64_t i = 0; i < batch * loom_shape_numel(&out); i++) g_assert_true(isfinite(y1[i]));
  g_assert_cmpint(loom_net_param_count(back), ==, loom_net_param_count(net));
  g_assert_cmpuint(loom_net_bytes(back), ==, loom_net_bytes(net));
  g_free(x);
  g_free(y1);
  g_free(y2);
  free(text1);
  free(text2);
  loom_net_free(back);
}

static void test_examples_round_trip(void) {
  g_assert_cmpint(loom_example_count(), ==, 12);
  const char *expected[] = {"xor",        "spiral",          "hop",      "moe",      "cnn",
                            "playground", "playground-int4", "playground-skip", "feedback", "transformer",
                            "multi-agent", "multi-modal"};
  for (int i = 0; i < loom_example_count(); i++) {
    g_assert_cmpstr(loom_example_name(i), ==, expected[i]);
    g_assert_true(strlen(loom_example_title(i)) > 0);
    g_assert_true(strlen(loom_example_description(i)) > 20);
    for (size_t d = 0; d < G_N_ELEMENTS(test_dtypes); d++) {
      loom_net *net = NULL;
      loom_error err = {0};
      g_assert_cmpint(loom_example_build(loom_example_name(i), &net, &err), ==, LOOM_OK);
      loom_diag *diags = NULL;
      g_assert_cmpint(loom_net_infer_shapes(net, 0, &diags), ==, 0);
      free(diags);
      set_all_dtypes(net, test_dtypes[d]);
      char what[64];
      g_snprintf(what, sizeof what, "%s@%s", loom_example_name(i), loom_dtype_name(test_dtypes[d]));
      check_round_trip(net, what);
      loom_net_free(net);
    }
  }
  loom_net *net = (loom_net *)1;
  loom_error err = {0};
  g_assert_cmpint(loom_example_build("nope", &net, &err), ==, LOOM_ERR_INVALID);
  g_assert_null(net);
  g_assert_cmpstr(err.message, ==, "unknown example “nope” (expected one of: xor, spiral, hop, moe, cnn, playground, "
                  "playground-int4, playground-skip, feedback, transformer, multi-agent, multi-modal)");
}

/* The examples are fixed: the same seed gives the same network every time. */
static void test_examples_deterministic(void) {
  for (int i = 0; i < loom_example_count(); i++) {
    loom_net *a, *b;
    loom_error err = {0};
    g_assert_cmpint(loom_example_build(loom_example_name(i), &a, &err), ==, 0);
    g_assert_cmpint(loom_example_build(loom_example_name(i), &b, &err), ==, 0);
    char *ta = loom_model_to_json(a, NULL, &err), *tb = loom_model_to_json(b, NULL, &err);
    g_assert_cmpstr(ta, ==, tb);
    free(ta);
    free(tb);
    loom_net_free(a);
    loom_net_free(b);
  }
}

static void test_every_layer_type_round_trip(void) {
  int n_types = loom_layer_type_count();
  g_assert_cmpint(n_types, >, 20);
  for (int t = 0; t < n_types; t++) {
    const loom_layer_type *type = loom_layer_type_at(t);
    loom_shape in;
    loom_layer *probe = build_any(type, &in, true);
    loom_layer_free(probe);
    for (size_t d = 0; d < G_N_ELEMENTS(test_dtypes); d++) {
      loom_error err = {0};
      loom_net *net = loom_net_new(1, 1, 2, 1, &err);
      g_assert_nonnull(net);
      g_assert_cmpint(loom_net_set_input_shape(net, &in, &err), ==, 0);
      loom_layer *l = build_any(type, &in, true);
      g_assert_cmpint(loom_layer_set_dtype(l, test_dtypes[d], &err), ==, 0);
      g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 1, 0}, l, &err), ==, 0);
      char what[96];
      g_snprintf(what, sizeof what, "%s@%s", loom_layer_type_name(type), loom_dtype_name(test_dtypes[d]));
      check_round_trip(net, what);
      loom_net_free(net);
    }
  }
}

/* Disabled slots, replace links, per-tensor scales and hyperparameter floats
 * that need all 17 digits survive too. */
static void test_state_round_trip(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 2, 2, 2, &err);
  g_assert_nonnull(net);
  g_assert_cmpint(loom_net_set_input_shape(net, &(loom_shape){.rank = 1, .d = {5}}, &err), ==, 0);
  loom_layer *a = loom_layer_new_by_name("dense", &err);
  loom_layer_set_int(a, "in_features", 5, &err);
  loom_layer_set_int(a, "out_features", 5, &err);
  loom_layer *b = loom_layer_new_by_name("leaky-relu", &err);
  g_assert_nonnull(b);
  const loom_param_spec *slope = loom_layer_type_param(loom_layer_get_type(b), 0);
  g_assert_cmpint(loom_layer_set_float(b, slope->name, 0.1 + 1e-17 * 3, &err), ==, 0);
  loom_layer *c = loom_layer_new_by_name("dense", &err);
  loom_layer_set_int(c, "in_features", 5, &err);
  loom_layer_set_int(c, "out_features", 3, &err);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 1}, a, &err), ==, 0);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 1, 0}, b, &err), ==, 0);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 1, 1, 1}, c, &err), ==, 0);
  g_assert_cmpint(loom_net_set_enabled(net, (loom_coord){0, 0, 1, 0}, false, &err), ==, 0);
  loom_link k = {{0, 0, 0, 1}, {0, 1, 1, 1}, LOOM_MERGE_REPLACE};
  g_assert_cmpint(loom_net_add_link(net, &k, &err), ==, 0);
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(net, 3, &diags), ==, 0);
  free(diags);
  g_assert_cmpint(loom_layer_set_dtype(a, LOOM_DTYPE_INT8, &err), ==, 0);
  g_assert_cmpint(loom_weights_set_scale_mode(loom_layer_weights(a, 0), LOOM_SCALE_PER_TENSOR, &err), ==, 0);
  check_round_trip(net, "state");

  char *text = loom_model_to_json(net, NULL, &err);
  g_assert_nonnull(strstr(text, "\"enabled\": false"));
  g_assert_nonnull(strstr(text, "\"merge\": \"replace\""));
  g_assert_nonnull(strstr(text, "\"scale_mode\": \"per_tensor\""));
  loom_net *back;
  g_assert_cmpint(loom_model_load_data(text, strlen(text), "state", LOOM_MODEL_STRICT, &back, &err), ==, 0);
  loom_layer *b2 = loom_net_layer_at(back, (loom_coord){0, 0, 1, 0});
  g_assert_true(loom_layer_get_value(b2, 0).f == 0.1 + 1e-17 * 3);
  g_assert_false(loom_net_is_enabled(back, (loom_coord){0, 0, 1, 0}));
  g_assert_cmpint(loom_weights_scale_mode(loom_layer_weights(loom_net_layer_at(back, (loom_coord){0, 0, 0, 1}), 0)),
                  ==, LOOM_SCALE_PER_TENSOR);
  free(text);
  loom_net_free(back);
  loom_net_free(net);
}

static size_t file_size(const char *path) {
  GStatBuf st;
  g_assert_cmpint(g_stat(path, &st), ==, 0);
  return (size_t)st.st_size;
}

static int count_dir_entries(const char *dir) {
  GDir *d = g_dir_open(dir, 0, NULL);
  int n = 0;
  while (g_dir_read_name(d)) n++;
  g_dir_close(d);
  return n;
}

static void test_int4_file_is_small_and_save_atomic(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, 1, 1, &err);
  g_assert_cmpint(loom_net_set_input_shape(net, &(loom_shape){.rank = 1, .d = {512}}, &err), ==, 0);
  loom_layer *l = loom_layer_new_by_name("dense", &err);
  loom_layer_set_int(l, "in_features", 512, &err);
  loom_layer_set_int(l, "out_features", 256, &err);
  g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, 0, 0}, l, &err), ==, 0);
  loom_diag *diags = NULL;
  g_assert_cmpint(loom_net_infer_shapes(net, 9, &diags), ==, 0);
  free(diags);

  char *dir = g_build_filename(tmp_dir, "atomic", NULL);
  g_assert_cmpint(g_mkdir(dir, 0700), ==, 0);
  char *p32 = g_build_filename(dir, "f32.loom.json", NULL);
  char *p4 = g_build_filename(dir, "i4.loom.json", NULL);
  g_assert_cmpint(loom_model_save(net, p32, &err), ==, 0);
  g_assert_cmpint(loom_layer_set_dtype(l, LOOM_DTYPE_INT4, &err), ==, 0);
  g_assert_cmpint(loom_model_save(net, p4, &err), ==, 0);
  /* Saving again replaces the file in place. */
  g_assert_cmpint(loom_model_save(net, p4, &err), ==, 0);
  g_assert_cmpint(count_dir_entries(dir), ==, 2);
  size_t s32 = file_size(p32), s4 = file_size(p4);
  g_test_message("dense 512→256: float32 file %zu bytes, int4 file %zu bytes (%.2f×)", s32, s4, (double)s32 / s4);
  g_assert_cmpuint(s4 * 6, <=, s32);
  g_assert_cmpuint(s32, >, 512 * 256 * 4 * 4 / 3);

  loom_net *back;
  g_assert_cmpint(loom_model_load(p4, LOOM_MODEL_STRICT, &back, &err), ==, 0);
  g_assert_cmpint(loom_layer_get_dtype(loom_net_layer_at(back, (loom_coord){0, 0, 0, 0})), ==, LOOM_DTYPE_INT4);
  loom_net_free(back);

  /* A failed save (the target is a directory) leaves no temporary file. */
  char *sub = g_build_filename(dir, "sub", NULL);
  g_assert_cmpint(g_mkdir(sub, 0700), ==, 0);
  g_assert_cmpint(loom_model_save(net, sub, &err), ==, LOOM_ERR_IO);
  g_assert_true(g_str_has_prefix(err.message, sub));
  g_assert_cmpint(count_dir_entries(dir), ==, 3);
  g_rmdir(sub);
  g_unlink(p32);
  g_unlink(p4);
  g_rmdir(dir);
  g_free(sub);
  g_free(p32);
  g_free(p4);
  g_free(dir);
  loom_net_free(net);
}

/* A network without an input shape or layers saves and loads as it is. */
static void test_empty_net(void) {
  loom_error err = {0};
  loom_net *net = loom_net_new(2, 3, 4, 5, &err);
  size_t len;
  char *text = loom_model_to_json(net, &len, &err);
  g_assert_cmpstr(text, ==,
                  "{\n  \"format\": \"loom-model\",\n  \"version\": 1,\n"
                  "  \"grid\": {\"depth\": 2, \"rows\": 3, \"cols\": 4, \"layers_per_cell\": 5},\n"
                  "  \"input_shape\": [],\n  \"slots\": [],\n  \"links\": []\n}\n");
  loom_net *back;
  g_assert_cmpint(loom_model_load_data(text, len, "empty", LOOM_MODEL_STRICT, &back, &err), ==, 0);
  g_assert_cmpint(loom_net_depth(back), ==, 2);
  g_assert_cmpint(loom_net_rows(back), ==, 3);
  g_assert_cmpint(loom_net_cols(back), ==, 4);
  g_assert_cmpint(loom_net_layers_per_cell(back), ==, 5);
  g_assert_cmpint(loom_net_input_shape(back).rank, ==, 0);
  free(text);
  loom_net_free(back);
  loom_net_free(net);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  GError *gerr = NULL;
  tmp_dir = g_dir_make_tmp("loom-model-XXXXXX", &gerr);
  g_assert_no_error(gerr);
  g_test_add_func("/io/model/examples-round-trip", test_examples_round_trip);
  g_test_add_func("/io/model/examples-deterministic", test_examples_deterministic);
  g_test_add_func("/io/model/every-layer-type-round-trip", test_every_layer_type_round_trip);
  g_test_add_func("/io/model/state-round-trip", test_state_round_trip);
  g_test_add_func("/io/model/int4-small-and-atomic", test_int4_file_is_small_and_save_atomic);
  g_test_add_func("/io/model/empty-net", test_empty_net);
  int rc = g_test_run();
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
