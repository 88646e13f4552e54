/*
 * Hostile model files: each must fail with a message that names the file and
 * the JSON path (or the grid coordinates) of the problem, and return no
 * network. The base document is valid; each case changes one thing.
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "loom/loom.h"
#include "loom/model.h"

#include "tiny-model.h"

#define SRC "h.json"

/* Weight data: the float32 values 1, -2, 3, -4 (a 2 × 2 dense weight). */
static char *f32_base64(const float *v, int n) { return g_base64_encode((const guchar *)v, (gsize)n * sizeof(float)); }

static char *base_doc(void) {
  float w[4] = {1, -2, 3, -4};
  char *data = f32_base64(w, 4);
  char *doc = g_strdup_printf(TINY_MODEL_JSON("%s"), data);
  g_free(data);
  return doc;
}

/* The base document with the first occurrence of `from` replaced by `to`. */
static char *mutate(const char *from, const char *to) {
  char *doc = base_doc();
  char *at = strstr(doc, from);
  if (!at) g_error("'%s' is not in the base document", from);
  GString *s = g_string_new_len(doc, at - doc);
  g_string_append(s, to);
  g_string_append(s, at + strlen(from));
  g_free(doc);
  return g_string_free(s, FALSE);
}

static void expect_error(const char *text, size_t len, unsigned flags, loom_status code, const char *message) {
  loom_net *net = (loom_net *)1;
  loom_error err = {0};
  int rc = loom_model_load_data(text, len, SRC, flags, &net, &err);
  if (rc != (int)code || strcmp(err.message, message) != 0)
    g_error("expected %s \"%s\"\n     got %s \"%s\"", loom_status_name(code), message, loom_status_name(rc),
            err.message);
  g_assert_null(net);
}

static void expect_mutation(const char *from, const char *to, loom_status code, const char *message) {
  char *doc = mutate(from, to);
  expect_error(doc, strlen(doc), LOOM_MODEL_STRICT, code, message);
  g_free(doc);
}

static void test_base_is_valid(void) {
  char *doc = base_doc();
  loom_net *net = NULL;
  loom_error err = {0};
  int rc = loom_model_load_data(doc, strlen(doc), SRC, LOOM_MODEL_STRICT, &net, &err);
  if (rc) g_error("%s", err.message);
  float x[2] = {1, 1}, y[2];
  loom_ctx ctx = {0};
  g_assert_cmpint(loom_net_forward(net, &ctx, x, 1, y, &err), ==, 0);
  /* dense: [1·1 − 2·1, 3·1 − 4·1] = [−1, −1]; add-link: tanh(−1 + −1) twice. */
  g_assert_cmpfloat(y[0], ==, tanhf(-2.0f));
  g_assert_cmpfloat(y[1], ==, tanhf(-2.0f));
  loom_net_free(net);
  g_free(doc);
}

static void test_truncated_and_not_json(void) {
  char *doc = base_doc();
  loom_net *net = (loom_net *)1;
  loom_error err = {0};
  for (size_t cut = 1; cut < strlen(doc); cut += 37) {
    g_assert_cmpint(loom_model_load_data(doc, cut, SRC, LOOM_MODEL_STRICT, &net, &err), ==, LOOM_ERR_FORMAT);
    g_assert_null(net);
    g_assert_true(g_str_has_prefix(err.message, SRC ":"));
  }
  g_assert_cmpint(loom_model_load_data(doc, strlen(doc) / 2, SRC, 0, &net, &err), ==, LOOM_ERR_FORMAT);
  g_assert_nonnull(strstr(err.message, "is the file truncated?"));
  g_free(doc);
  expect_error("", 0, 0, LOOM_ERR_FORMAT, SRC ": the file is empty");
  expect_error("[1, 2]", 6, 0, LOOM_ERR_FORMAT, SRC ": $: expected an object, found an array");
  expect_error("{\"a\": \"\xc3\x28\"}", 10, 0, LOOM_ERR_FORMAT, SRC ": not valid UTF-8 text (byte 7)");
  /* The length is checked before the text is touched. */
  expect_error("{}", LOOM_MODEL_MAX_FILE_BYTES + 1, 0, LOOM_ERR_NOMEM,
               SRC ": 2147483649 bytes is more than the limit of 2147483648 bytes");
}

static void test_deep_nesting(void) {
  GString *deep = g_string_new("{\"format\": ");
  for (int i = 0; i < 100000; i++) g_string_append_c(deep, '[');
  expect_error(deep->str, deep->len, 0, LOOM_ERR_FORMAT, SRC ":1:75: arrays and objects nest deeper than 64 levels");
  g_string_free(deep, TRUE);

  /* Containers inside containers, 17 deep: within the JSON limit, beyond the layer limit. */
  GString *layer = g_string_new("{\"type\": \"relu\", \"dtype\": \"float32\", \"params\": {}}");
  for (int i = 0; i < 17; i++) {
    char *wrapped = g_strdup_printf("{\"type\": \"sequential\", \"dtype\": \"float32\", \"params\": {}, "
                                    "\"children\": [%s]}",
                                    layer->str);
    g_string_assign(layer, wrapped);
    g_free(wrapped);
  }
  char *slot = g_strdup_printf("{\"at\": [0, 0, 1, 0], \"enabled\": true, \"layer\": %s}", layer->str);
  char *doc = mutate("\"slots\": [\n", "\"slots\": [\n");
  char *at = strstr(doc, "\"slots\": [\n") + strlen("\"slots\": [\n");
  GString *s = g_string_new_len(doc, at - doc);
  g_string_append_printf(s, "%s,\n%s", slot, at);
  GString *path = g_string_new(SRC ": $.slots[0].layer");
  for (int i = 0; i < 17; i++) g_string_append(path, ".children[0]");
  g_string_append(path, ": containers nest deeper than 16 levels");
  expect_error(s->str, s->len, LOOM_MODEL_STRICT, LOOM_ERR_RANGE, path->str);
  g_string_free(path, TRUE);
  g_string_free(s, TRUE);
  g_string_free(layer, TRUE);
  g_free(slot);
  g_free(doc);
}

static void test_wrong_types_and_header(void) {
  expect_mutation("\"version\": 1", "\"version\": \"1\"", LOOM_ERR_FORMAT,
                  SRC ": $.version: expected an integer in -9223372036854775808..9223372036854775807, found a string");
  expect_mutation("\"version\": 1", "\"version\": 2", LOOM_ERR_UNSUPPORTED,
                  SRC ": $.version: format version 2 is newer than this loom reads (up to 1)");
  expect_mutation("\"version\": 1", "\"version\": 0", LOOM_ERR_FORMAT, SRC ": $.version: format version 0 does not exist");
  expect_mutation("\"format\": \"loom-model\"", "\"format\": \"onnx\"", LOOM_ERR_FORMAT,
                  SRC ": $.format: expected “loom-model”, found “onnx”");
  expect_mutation("\"format\": \"loom-model\", ", "", LOOM_ERR_FORMAT, SRC ": $.format: required member is missing");
  expect_mutation("\"grid\": {", "\"grid\": [], \"x\": {", LOOM_ERR_FORMAT,
                  SRC ": $.x: unknown member (expected one of: format, version, grid, input_shape, execution, slots, links, "
                  "training)");
  expect_mutation("\"enabled\": true", "\"enabled\": 1", LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].enabled: expected true or false, found an integer");
  expect_mutation("\"rows\": 1,", "\"rows\": 1.5,", LOOM_ERR_FORMAT,
                  SRC ": $.grid.rows: expected an integer in 1..65536, found a number with a fraction or exponent");
  /* Lenient reading ignores the extra member "s" but still checks the type of "slots". */
  char *doc = mutate("\"slots\": [", "\"slots\": {\"a\": 1}, \"s\": [");
  expect_error(doc, strlen(doc), 0, LOOM_ERR_FORMAT, SRC ": $.slots: expected an array, found an object");
  g_free(doc);
  expect_mutation("\"in_features\": 2", "\"in_features\": null", LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].layer.params.in_features: expected an integer in 1..16777216, found null");
  expect_mutation("\"bias\": false", "\"bias\": \"no\"", LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].layer.params.bias: expected true or false, found a string");
  expect_mutation("\"merge\": \"add\"", "\"merge\": \"mul\"", LOOM_ERR_INVALID,
                  SRC ": $.links[0].merge: unknown merge “mul” (expected replace, add or concat)");
  expect_mutation("\"at\": [0, 0, 0, 0]", "\"at\": [0, 0, 0]", LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].at: expected 4 coordinates [z, y, x, l], found 3 values");
  expect_mutation("\"at\": [0, 0, 0, 0]", "\"at\": [0, 0, -1, 0]", LOOM_ERR_RANGE,
                  SRC ": $.slots[0].at[2]: expected an integer in 0..2147483647, found -1");
}

static void test_huge_sizes(void) {
  expect_mutation("\"input_shape\": [2]", "\"input_shape\": [4294967296]", LOOM_ERR_RANGE,
                  SRC ": $.input_shape[0]: expected an integer in 1..2147483648, found 4294967296");
  expect_mutation("\"input_shape\": [2]", "\"input_shape\": [65536, 65536]", LOOM_ERR_NOMEM,
                  SRC ": $.input_shape: the shape holds more than 2147483648 values per sample");
  expect_mutation("\"input_shape\": [2]", "\"input_shape\": [1, 1, 1, 1, 2]", LOOM_ERR_SHAPE,
                  SRC ": $.input_shape: expected 0 to 4 sizes, found 5");
  expect_mutation("\"depth\": 1", "\"depth\": 100000", LOOM_ERR_RANGE,
                  SRC ": $.grid.depth: expected an integer in 1..65536, found 100000");
  expect_mutation("\"version\": 1", "\"version\": 99999999999999999999999", LOOM_ERR_FORMAT,
                  SRC ":1:37: the integer 99999999999999999999999 does not fit in 64 bits");
  /* json-glib alone would accept these; a model file must be plain JSON. */
  expect_mutation("\"rows\": 1", "\"rows\": 0x1", LOOM_ERR_FORMAT, SRC ":2:32: expected ',' or '}'");
  expect_mutation("\"cols\": 3", "\"cols\": 3, \"cols\": 1", LOOM_ERR_FORMAT, SRC ":2:45: duplicate member “cols”");
  /* Sizes that overflow are refused before anything is allocated. */
  expect_mutation("\"rows\": 2, \"cols\": 2", "\"rows\": 4611686018427387904, \"cols\": 4611686018427387904",
                  LOOM_ERR_NOMEM,
                  SRC ": $.slots[0].layer.weights[0].rows: 4611686018427387904 × 4611686018427387904 values at "
                      "float32 do not fit in memory");
  expect_mutation("\"rows\": 2, \"cols\": 2", "\"rows\": 1000000, \"cols\": 1000000", LOOM_ERR_SHAPE,
                  SRC ": $.slots[0].layer.weights[0].data: expected 5333333333336 base64 characters for 1000000 × "
                      "1000000 float32 values (4000000000000 bytes), found 24");
  expect_mutation("\"out_features\": 2", "\"out_features\": 16777217", LOOM_ERR_RANGE,
                  SRC ": $.slots[0].layer.params.out_features: expected an integer in 1..16777216, found 16777217");
}

static void test_bad_base64(void) {
  char *doc = base_doc();
  const char *data = strstr(doc, "\"data\": \"") + strlen("\"data\": \"");
  char *base = doc;
  char good[25];
  memcpy(good, data, 24);
  good[24] = '\0';
  g_free(base);
  char bad[25];
  memcpy(bad, good, 25);
  bad[4] = '*';
  expect_mutation(good, bad, LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].layer.weights[0].data: invalid base64 character '*' at offset 4");
  char shorter[21];
  memcpy(shorter, good, 20);
  shorter[20] = '\0';
  char *from = g_strdup_printf("\"%s\"", good), *to = g_strdup_printf("\"%s\"", shorter);
  expect_mutation(from, to, LOOM_ERR_SHAPE,
                  SRC ": $.slots[0].layer.weights[0].data: expected 24 base64 characters for 2 × 2 float32 values "
                      "(16 bytes), found 20");
  g_free(from);
  g_free(to);
  doc = mutate("\"data\": \"", "\"data\": 5, \"x\": \"");
  expect_error(doc, strlen(doc), 0, LOOM_ERR_FORMAT,
               SRC ": $.slots[0].layer.weights[0].data: expected a string, found an integer");
  g_free(doc);
}

static void test_unknown_type_and_fields(void) {
  expect_mutation("\"type\": \"dense\"", "\"type\": \"dense9\"", LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].layer.type: unknown layer type “dense9”");
  expect_mutation("\"dtype\": \"float32\"", "\"dtype\": \"float31\"", LOOM_ERR_INVALID,
                  SRC ": $.slots[0].layer.dtype: unknown dtype 'float31'; valid dtypes: float64, float32, float16, "
                      "bfloat16, fp8-e4m3, fp8-e5m2, fp4, int64, int32, int16, int8, int4, int2, uint64, uint32, "
                      "uint16, uint8, uint4, uint2, ternary, binary");
  /* An unknown member is an error in strict mode only... */
  char *doc = mutate("\"type\": \"dense\"", "\"colour\": \"red\", \"type\": \"dense\"");
  expect_error(doc, strlen(doc), LOOM_MODEL_STRICT, LOOM_ERR_FORMAT,
               SRC ": $.slots[0].layer.colour: unknown member (expected one of: type, dtype, params, children, gate, "
                   "in_shape, weights)");
  loom_net *net = NULL;
  loom_error err = {0};
  g_assert_cmpint(loom_model_load_data(doc, strlen(doc), SRC, 0, &net, &err), ==, LOOM_OK);
  g_assert_nonnull(net);
  loom_net_free(net);
  g_free(doc);
  /* ...but an unknown hyperparameter always is: it would change the computation. */
  doc = mutate("\"bias\": false", "\"bias\": false, \"dropout\": 0.5");
  expect_error(doc, strlen(doc), 0, LOOM_ERR_FORMAT,
               SRC ": $.slots[0].layer.params.dropout: unknown member (expected one of: in_features, out_features, "
                   "bias)");
  g_free(doc);
  expect_mutation(", \"bias\": false", "", LOOM_ERR_FORMAT, SRC ": $.slots[0].layer.params.bias: required member is missing");
  expect_mutation("\"params\": {\"in", "\"children\": [], \"params\": {\"in", LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].layer.children: a dense layer is not a container");
  expect_error("{}", 2, LOOM_MODEL_STRICT | 0x100, LOOM_ERR_INVALID, SRC ": unknown load flags 0x101");
}

static void test_grid_problems(void) {
  expect_mutation("\"at\": [0, 0, 2, 0]", "\"at\": [0, 0, 3, 0]", LOOM_ERR_RANGE,
                  SRC ": $.slots[1].at: (0,0,3,0) is outside the grid of 1×1×3 cells with 1 layers per cell");
  expect_mutation("\"at\": [0, 0, 2, 0]", "\"at\": [0, 0, 0, 0]", LOOM_ERR_FORMAT,
                  SRC ": $.slots[1].at: slot (0,0,0,0) is already taken by $.slots[0]");
  expect_mutation("\"dst\": [0, 0, 2, 0]", "\"dst\": [0, 0, 1, 0]", LOOM_ERR_FORMAT,
                  SRC ": $.links[0].dst: slot (0,0,1,0) holds no layer");
  expect_mutation("\"src\": [0, 0, 0, 0]", "\"src\": [1, 0, 0, 0]", LOOM_ERR_RANGE,
                  SRC ": $.links[0].src: (1,0,0,0) is outside the grid of 1×1×3 cells with 1 layers per cell");
}

static void test_weight_problems(void) {
  float nan_w[4] = {1, NAN, 3, 4};
  char *nan_data = f32_base64(nan_w, 4);
  float w[4] = {1, -2, 3, -4};
  char *data = f32_base64(w, 4);
  expect_mutation(data, nan_data, LOOM_ERR_NONFINITE,
                  SRC ": $.slots[0].layer.weights[0]: layer dense weight: weight at row 0, column 1 is NaN");
  float six[6] = {1, 2, 3, 4, 5, 6};
  char *six_data = f32_base64(six, 6);
  char *from = g_strdup_printf("\"rows\": 2, \"cols\": 2, \"dtype\": \"float32\", \"scale_mode\": \"per_row\", "
                               "\"data\": \"%s\"",
                               data);
  char *to = g_strdup_printf("\"rows\": 3, \"cols\": 2, \"dtype\": \"float32\", \"scale_mode\": \"per_row\", "
                             "\"data\": \"%s\"",
                             six_data);
  expect_mutation(from, to, LOOM_ERR_SHAPE,
                  SRC ": $.slots[0].layer.weights[0].rows: the layer builds “weight” as 2 × 2 for its input shape, "
                      "the file has 3 × 2");
  g_free(to);
  to = g_strdup_printf("\"rows\": 2, \"cols\": 2, \"dtype\": \"float32\", \"scale_mode\": \"per_row\", \"data\": "
                       "\"%s\", \"scales\": \"AAAAAA==\"",
                       data);
  expect_mutation(from, to, LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].layer.weights[0].scales: float32 has no scales; remove this member");
  g_free(to);
  /* int8 codes: rows of 2 bytes; 0x80 (-128) is not a code of the symmetric format. */
  to = g_strdup_printf("\"rows\": 2, \"cols\": 2, \"dtype\": \"int8\", \"scale_mode\": \"per_row\", \"data\": "
                       "\"AX+AAQ==\", \"scales\": \"AACAPwAAAEA=\"");
  expect_mutation(from, to, LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].layer.weights[0]: layer dense weight: invalid int8 code 0x80 at row 1, column 0");
  g_free(to);
  to = g_strdup_printf("\"rows\": 2, \"cols\": 2, \"dtype\": \"int8\", \"scale_mode\": \"per_row\", \"data\": "
                       "\"AX8BAQ==\"");
  expect_mutation(from, to, LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].layer.weights[0].scales: required member is missing (int8 needs scales)");
  g_free(to);
  /* Negative scale. */
  to = g_strdup_printf("\"rows\": 2, \"cols\": 2, \"dtype\": \"int8\", \"scale_mode\": \"per_row\", \"data\": "
                       "\"AX8BAQ==\", \"scales\": \"AACAvwAAAEA=\"");
  expect_mutation(from, to, LOOM_ERR_NONFINITE,
                  SRC ": $.slots[0].layer.weights[0]: layer dense weight: scale 0 is -1; scales must be finite and >= 0");
  g_free(to);
  expect_mutation("\"name\": \"weight\"", "\"name\": \"kernel\"", LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].layer.weights[0].name: the layer's weight 0 is “weight”, the file names “kernel”");
  expect_mutation("\"bias\": false", "\"bias\": true", LOOM_ERR_SHAPE,
                  SRC ": $.slots[0].layer.weights: the layer has 2 weight tensors for its input shape, the file gives 1");
  expect_mutation("\"in_shape\": [2],\n", "", LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].layer.in_shape: required member is missing (in_shape and weights come together)");
  expect_mutation("\"scale_mode\": \"per_row\"", "\"scale_mode\": \"per_column\"", LOOM_ERR_FORMAT,
                  SRC ": $.slots[0].layer.weights[0].scale_mode: unknown scale mode “per_column” (expected per_row or "
                      "per_tensor)");
  g_free(from);
  g_free(nan_data);
  g_free(six_data);
  g_free(data);
}

static void test_shape_conflicts(void) {
  /* in_features disagrees with the recorded input: building fails at the layer. */
  expect_mutation("\"in_features\": 2", "\"in_features\": 3", LOOM_ERR_SHAPE,
                  SRC ": $.slots[0].layer: layer dense: in_features is 3 but the input [2] has 2 values (and its "
                      "last dimension is not 3 either)");
  /* The network feeds the tanh [2], the file says it was saved for [3]. */
  expect_mutation("\"params\": {}, \"in_shape\": [2]", "\"params\": {}, \"in_shape\": [3]", LOOM_ERR_SHAPE,
                  SRC ": $.slots[1].layer.in_shape: the layer at (0,0,2,0) was saved for input [3], but the network "
                      "feeds it [2]");
}

static void test_missing_file_names_it(void) {
  loom_net *net = (loom_net *)1;
  loom_error err = {0};
  g_assert_cmpint(loom_model_load("/nonexistent/dir/m.loom.json", LOOM_MODEL_STRICT, &net, &err), ==, LOOM_ERR_IO);
  g_assert_null(net);
  g_assert_true(g_str_has_prefix(err.message, "/nonexistent/dir/m.loom.json: "));
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/io/model-hostile/base-is-valid", test_base_is_valid);
  g_test_add_func("/io/model-hostile/truncated-and-not-json", test_truncated_and_not_json);
  g_test_add_func("/io/model-hostile/deep-nesting", test_deep_nesting);
  g_test_add_func("/io/model-hostile/wrong-types-and-header", test_wrong_types_and_header);
  g_test_add_func("/io/model-hostile/huge-sizes", test_huge_sizes);
  g_test_add_func("/io/model-hostile/bad-base64", test_bad_base64);
  g_test_add_func("/io/model-hostile/unknown-type-and-fields", test_unknown_type_and_fields);
  g_test_add_func("/io/model-hostile/grid-problems", test_grid_problems);
  g_test_add_func("/io/model-hostile/weight-problems", test_weight_problems);
  g_test_add_func("/io/model-hostile/shape-conflicts", test_shape_conflicts);
  g_test_add_func("/io/model-hostile/missing-file", test_missing_file_names_it);
  return g_test_run();
}
