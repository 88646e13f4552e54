/* Hostile JSON model files: truncation, nesting, non-finite weights, grids
 * and shapes that overflow, networks whose activations need gigabytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hostile-cases.h"
#include "loom/loom.h"

#define ADD(name, data, len, expect) hostile_add(cases, HOSTILE_JSON, name, data, len, expect)

static void add_text(GPtrArray *cases, const char *name, const char *text, const char *expect) {
  ADD(name, text, strlen(text), expect);
}

/* The model text with `from` replaced by `to` (first occurrence). */
static void add_replaced(GPtrArray *cases, const char *base, const char *name, const char *from, const char *to,
                         const char *expect) {
  const char *at = strstr(base, from);
  if (!at) g_error("“%s” is not in the model", from);
  char *text = g_strdup_printf("%.*s%s%s", (int)(at - base), base, to, at + strlen(from));
  add_text(cases, name, text, expect);
  g_free(text);
}

static char *nested(int depth) {
  GString *s = g_string_new("{\"format\": ");
  for (int i = 0; i < depth; i++) g_string_append_c(s, '[');
  for (int i = 0; i < depth; i++) g_string_append_c(s, ']');
  g_string_append_c(s, '}');
  return g_string_free(s, FALSE);
}

static const char *grid_doc =
  "{\"format\": \"loom-model\", \"version\": 1, \"grid\": {\"depth\": %s, \"rows\": %s, \"cols\": %s, "
  "\"layers_per_cell\": %s}, \"input_shape\": [2], \"slots\": [], \"links\": []}";

void hostile_model_cases(GPtrArray *cases) {
  loom_error err = {0};
  loom_net *net = NULL;
  if (loom_example_build("xor", &net, &err)) g_error("%s", err.message);
  loom_layer_set_dtype(loom_net_layer_at(net, (loom_coord){0, 0, 0, 0}), LOOM_DTYPE_INT4, &err);
  size_t len;
  char *base = loom_model_to_json(net, &len, &err);
  loom_net_free(net);

  for (size_t cut = 1; cut < len - 1; cut += cut < 8 ? 1 : 61) {
    char name[48];
    snprintf(name, sizeof name, "json-truncated-at-%zu", cut);
    ADD(name, base, cut, "h.json:");
  }
  ADD("json-truncated-last-brace", base, len - 2, "h.json:");
  int depths[] = {65, 200, 10000, 1000000};
  for (size_t i = 0; i < G_N_ELEMENTS(depths); i++) {
    char *text = nested(depths[i]), name[48];
    snprintf(name, sizeof name, "json-nesting-%d", depths[i]);
    add_text(cases, name, text, "nest");
    g_free(text);
  }
  add_text(cases, "json-not-object", "[1, 2, 3]", "$: expected an object, found an array");
  add_text(cases, "json-number", "42", "$: expected an object");
  add_text(cases, "json-bad-utf8", "{\"format\": \"\xc3\x28\"}", "not valid UTF-8");
  add_text(cases, "json-nul-byte", "{\"format\": \"a\0b\"}", "h.json");
  add_replaced(cases, base, "json-wrong-format", "\"loom-model\"", "\"onnx\"", "expected “loom-model”, found “onnx”");
  add_replaced(cases, base, "json-version-0", "\"version\": 1", "\"version\": 0", "format version 0 does not exist");
  add_replaced(cases, base, "json-version-new", "\"version\": 1", "\"version\": 99",
               "format version 99 is newer than this loom reads");
  add_replaced(cases, base, "json-version-string", "\"version\": 1", "\"version\": \"1\"", "$.version: expected an integer");

  static const char *const bad_dims[] = {"0", "-1", "65537", "4294967297", "1e30", "1.5", "\"4\"", "null"};
  static const char *const dim_names[] = {"depth", "rows", "cols", "layers_per_cell"};
  for (size_t i = 0; i < G_N_ELEMENTS(bad_dims); i++) {
    for (int d = 0; d < 4; d++) {
      const char *v[4] = {"1", "1", "1", "1"};
      v[d] = bad_dims[i];
      char *text = g_strdup_printf(grid_doc, v[0], v[1], v[2], v[3]);
      char name[64], expect[64];
      snprintf(name, sizeof name, "json-grid-%s-%s", dim_names[d], bad_dims[i]);
      snprintf(expect, sizeof expect, "$.grid.%s: expected an integer in 1..65536", dim_names[d]);
      add_text(cases, name, text, expect);
      g_free(text);
    }
  }
  char *all_max = g_strdup_printf(grid_doc, "65536", "65536", "65536", "65536");
  add_text(cases, "json-grid-product-overflow", all_max, "h.json: $.grid");
  g_free(all_max);
  add_replaced(cases, base, "json-input-overflow", "\"input_shape\": [2]", "\"input_shape\": [65536, 65536, 65536]",
               "the shape holds more than 2147483648 values per sample");
  add_replaced(cases, base, "json-input-zero", "\"input_shape\": [2]", "\"input_shape\": [0]",
               "$.input_shape[0]: expected an integer in 1..2147483648");
  add_replaced(cases, base, "json-input-rank-5", "\"input_shape\": [2]", "\"input_shape\": [1, 1, 1, 1, 2]",
               "expected 0 to 4 sizes, found 5");

  /* a small file whose activations need gigabytes */
  static const char *const act_shapes[] = {"[1024, 1024, 1024]", "[2147483648]", "[46340, 46340]", "[1024, 1024, 1025]"};
  for (size_t i = 0; i < G_N_ELEMENTS(act_shapes); i++) {
    char *text = g_strdup_printf(
      "{\"format\": \"loom-model\", \"version\": 1, \"grid\": {\"depth\": 1, \"rows\": 1, \"cols\": 3, "
      "\"layers_per_cell\": 1}, \"input_shape\": %s, \"slots\": [{\"at\": [0, 0, 0, 0], \"enabled\": true, "
      "\"layer\": {\"type\": \"relu\", \"dtype\": \"float32\", \"params\": {}}}, {\"at\": [0, 0, 2, 0], "
      "\"enabled\": true, \"layer\": {\"type\": \"tanh\", \"dtype\": \"float32\", \"params\": {}}}], \"links\": []}",
      act_shapes[i]);
    char name[64];
    snprintf(name, sizeof name, "json-activations-%zu", i);
    add_text(cases, name, text, "bytes of activations per sample, more than the limit");
    g_free(text);
  }

  /* non-finite and out-of-range weights: the second dense's float32 weight */
  float values[][4] = {{NAN, 0, 0, 0}, {0, INFINITY, 0, 0}, {0, 0, -INFINITY, 0}, {0, 0, 0, -NAN}};
  const char *what[] = {"NaN", "inf", "inf", "NaN"};
  const char *from = strstr(base, "\"cols\": 4,\n            \"dtype\": \"float32\"");
  g_assert_nonnull(from);
  const char *data = strstr(from, "\"data\": \"") + 9;
  for (size_t i = 0; i < G_N_ELEMENTS(values); i++) {
    char *b64 = g_base64_encode((const guchar *)values[i], sizeof values[i]);
    char *text = g_strdup_printf("%.*s%s%s", (int)(data - base), base, b64, strchr(data, '"'));
    char name[48];
    snprintf(name, sizeof name, "json-nonfinite-weight-%zu", i);
    add_text(cases, name, text, what[i]);
    g_free(text);
    g_free(b64);
  }
  add_replaced(cases, base, "json-rows-mismatch", "\"rows\": 4", "\"rows\": 5",
               "expected 28 base64 characters for 5 float32 scales, found 24");
  add_replaced(cases, base, "json-rows-huge", "\"rows\": 4", "\"rows\": 4611686018427387904", "h.json: $.slots[0]");
  add_replaced(cases, base, "json-bad-base64", "\"data\": \"", "\"data\": \"*", "h.json: $.slots[0].layer.weights[0]");
  add_replaced(cases, base, "json-unknown-type", "\"type\": \"tanh\"", "\"type\": \"tanhh\"", "unknown layer type “tanhh”");
  add_replaced(cases, base, "json-unknown-dtype", "\"dtype\": \"int4\"", "\"dtype\": \"int3\"", "int3");
  add_replaced(cases, base, "json-slot-outside", "\"at\": [0, 0, 3, 0]", "\"at\": [0, 0, 4, 0]", "is outside the grid");
  add_replaced(cases, base, "json-slot-negative", "\"at\": [0, 0, 3, 0]", "\"at\": [0, 0, -1, 0]",
               "expected an integer in 0..2147483647");
  add_replaced(cases, base, "json-slot-twice", "\"at\": [0, 0, 3, 0]", "\"at\": [0, 0, 0, 0]", "is already taken");
  add_replaced(cases, base, "json-scales-missing", "\"scales\": \"", "\"scalez\": \"", "scalez: unknown member");
  free(base);
}
