/* loom dna end to end: a model against itself, against a copy with a layer
 * moved (by editing the file), against its int8 version (a hand-written
 * file), against a model of other sizes, a layer moved between two training
 * runs, the readable table, and usage errors. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "cli-harness.h"
#include "tmp-dir.h"

static char *tmp_dir;

static char *tmp_path(const char *name) { return g_build_filename(tmp_dir, name, NULL); }

static CliResult run(const char *const *argv) { return cli_run(NULL, NULL, argv); }

static char *example(const char *name, const char *file) { return cli_new_example(name, tmp_dir, file); }

/* Copies `from` to a new file with one occurrence of `old` replaced. */
static char *edited_copy(const char *from, const char *file, const char *old, const char *new_text) {
  char *text;
  g_assert_true(g_file_get_contents(from, &text, NULL, NULL));
  char *at = strstr(text, old);
  g_assert_nonnull(at);
  g_assert_null(strstr(at + 1, old)); /* the edit must be unambiguous */
  GString *s = g_string_new_len(text, at - text);
  g_string_append(s, new_text);
  g_string_append(s, at + strlen(old));
  char *path = tmp_path(file);
  g_assert_true(g_file_set_contents(path, s->str, (gssize)s->len, NULL));
  g_string_free(s, TRUE);
  g_free(text);
  return path;
}

/* Runs `loom dna A B [extra] --json`, checks success and parses the output. */
static JsonObject *dna_json(const char *a, const char *b, const char *extra, JsonParser **parser) {
  const char *argv[] = {"dna", a, b, "--json", extra, NULL};
  CliResult r = run(argv);
  if (r.status != 0) g_error("loom dna failed (%d): %s", r.status, r.err);
  g_assert_cmpstr(r.err, ==, "");
  *parser = json_parser_new();
  GError *error = NULL;
  if (!json_parser_load_from_data(*parser, r.out, -1, &error)) g_error("%s\n%s", error->message, r.out);
  cli_result_clear(&r);
  return json_node_get_object(json_parser_get_root(*parser));
}

static void assert_coord(JsonArray *c, int z, int y, int x, int l) {
  g_assert_cmpint(json_array_get_length(c), ==, 4);
  g_assert_cmpint(json_array_get_int_element(c, 0), ==, z);
  g_assert_cmpint(json_array_get_int_element(c, 1), ==, y);
  g_assert_cmpint(json_array_get_int_element(c, 2), ==, x);
  g_assert_cmpint(json_array_get_int_element(c, 3), ==, l);
}

static void test_self(void) {
  char *a = example("spiral", "self.loom");
  JsonParser *p;
  JsonObject *o = dna_json(a, a, NULL, &p);
  g_assert_cmpfloat(json_object_get_double_member(o, "similarity"), ==, 1.0);
  g_assert_cmpfloat(json_object_get_double_member(o, "threshold"), ==, 0.8);
  JsonArray *slots = json_object_get_array_member(o, "a");
  guint n = json_array_get_length(slots);
  g_assert_cmpuint(n, ==, 5);
  JsonObject *first = json_array_get_object_element(slots, 0);
  assert_coord(json_object_get_array_member(first, "at"), 0, 0, 0, 0);
  g_assert_cmpstr(json_object_get_string_member(first, "type"), ==, "dense");
  g_assert_cmpstr(json_object_get_string_member(first, "dtype"), ==, "float32");
  g_assert_cmpuint(json_array_get_length(json_object_get_array_member(o, "b")), ==, n);
  JsonArray *m = json_object_get_array_member(o, "matrix");
  g_assert_cmpuint(json_array_get_length(m), ==, n);
  for (guint i = 0; i < n; i++) {
    JsonArray *row = json_array_get_array_element(m, i);
    g_assert_cmpuint(json_array_get_length(row), ==, n);
    g_assert_cmpfloat(json_array_get_double_element(row, i), ==, 1.0);
  }
  JsonArray *shared = json_object_get_array_member(o, "shared");
  g_assert_cmpuint(json_array_get_length(shared), ==, n);
  for (guint k = 0; k < n; k++)
    g_assert_cmpfloat(json_object_get_double_member(json_array_get_object_element(shared, k), "score"), ==, 1.0);
  g_assert_cmpuint(json_array_get_length(json_object_get_array_member(o, "shifts")), ==, 0);
  g_object_unref(p);
  g_free(a);
}

static void test_moved(void) {
  char *a = example("spiral", "moved-a.loom");
  /* The spiral's grid is 1×2×3: (0,1,2,0) is free and still last in line. */
  char *b = edited_copy(a, "moved-b.loom", "\"at\": [0, 1, 1, 0]", "\"at\": [0, 1, 2, 0]");
  JsonParser *p;
  JsonObject *o = dna_json(a, b, NULL, &p);
  JsonArray *shifts = json_object_get_array_member(o, "shifts");
  g_assert_cmpuint(json_array_get_length(shifts), ==, 1);
  JsonObject *s = json_array_get_object_element(shifts, 0);
  assert_coord(json_object_get_array_member(s, "from"), 0, 1, 1, 0);
  assert_coord(json_object_get_array_member(s, "to"), 0, 1, 2, 0);
  g_assert_cmpfloat(json_object_get_double_member(s, "score"), ==, 1.0);
  g_assert_cmpfloat(json_object_get_double_member(o, "similarity"), ==, 1.0);
  g_assert_cmpuint(json_array_get_length(json_object_get_array_member(o, "shared")), ==, 4);
  g_object_unref(p);

  /* The readable table says the same. */
  const char *argv[] = {"dna", a, b, NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "Overall similarity: 1.0000\n"));
  g_assert_nonnull(strstr(r.out, "Logic shifts (threshold 0.80):\n  (0,1,1,0) → (0,1,2,0)  score 1.0000 (0.0000 at its own place)\n"));
  g_assert_nonnull(strstr(r.out, "  (0,1,1,0)   dense        float32    empty      (0,1,2,0)   1.0000\n"));
  g_assert_nonnull(strstr(r.out, "Similarity matrix (rows: layers of A, columns: layers of B):\n"));
  cli_result_clear(&r);
  g_free(a);
  g_free(b);
}

static char *b64_floats(const float *v, int n) { return g_base64_encode((const guchar *)v, (gsize)n * sizeof(float)); }

/* One dense 2→3 layer; the weight at `dtype` as `data` (+ `scales`), the
 * bias float32 (it is never quantized). */
static char *dense_model(const char *file, const char *dtype, const char *data, const char *scales) {
  static const float bias[3] = {0.1f, -0.2f, 0.05f};
  char *b = b64_floats(bias, 3);
  char *scale_field = scales ? g_strdup_printf(", \"scales\": \"%s\"", scales) : g_strdup("");
  char *json = g_strdup_printf(
    "{\"format\": \"loom-model\", \"version\": 1,\n"
    " \"grid\": {\"depth\": 1, \"rows\": 1, \"cols\": 1, \"layers_per_cell\": 1}, \"input_shape\": [2],\n"
    " \"slots\": [{\"at\": [0, 0, 0, 0], \"enabled\": true, \"layer\": {\"type\": \"dense\", \"dtype\": \"%s\",\n"
    "  \"params\": {\"in_features\": 2, \"out_features\": 3, \"bias\": true}, \"in_shape\": [2],\n"
    "  \"weights\": [{\"name\": \"weight\", \"rows\": 3, \"cols\": 2, \"dtype\": \"%s\", \"scale_mode\": \"per_row\",\n"
    "                \"data\": \"%s\"%s},\n"
    "               {\"name\": \"bias\", \"rows\": 1, \"cols\": 3, \"dtype\": \"float32\", \"scale_mode\": \"per_row\",\n"
    "                \"data\": \"%s\"}]}}],\n \"links\": []}\n",
    dtype, dtype, data, scale_field, b);
  char *path = tmp_path(file);
  g_assert_true(g_file_set_contents(path, json, -1, NULL));
  g_free(json);
  g_free(scale_field);
  g_free(b);
  return path;
}

static void test_int8(void) {
  static const float w[6] = {0.5f, -0.25f, 0.3f, 0.7f, -0.6f, 0.1f};
  char *data = b64_floats(w, 6);
  char *a = dense_model("f32.loom", "float32", data, NULL);
  /* Per-row symmetric int8: scale = max|w| / 127, codes round(w / scale). */
  float scales[3] = {0.5f / 127, 0.7f / 127, 0.6f / 127};
  gint8 codes[6];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 2; c++) {
      float q = w[r * 2 + c] / scales[r]; /* no ties here: plain rounding is round-to-even */
      codes[r * 2 + c] = (gint8)(q >= 0 ? q + 0.5f : q - 0.5f);
    }
  char *cdata = g_base64_encode((const guchar *)codes, sizeof codes), *sdata = b64_floats(scales, 3);
  char *b = dense_model("i8.loom", "int8", cdata, sdata);
  JsonParser *p;
  JsonObject *o = dna_json(a, b, NULL, &p);
  double s = json_object_get_double_member(o, "similarity");
  g_assert_cmpfloat(s, >, 0.99);
  g_assert_cmpfloat(s, <, 1.0);
  JsonObject *slot = json_array_get_object_element(json_object_get_array_member(o, "b"), 0);
  g_assert_cmpstr(json_object_get_string_member(slot, "dtype"), ==, "int8");
  g_assert_cmpint(json_object_get_int_member(slot, "values"), ==, 9);
  g_assert_cmpuint(json_array_get_length(json_object_get_array_member(o, "shifts")), ==, 0);
  g_object_unref(p);
  g_free(data);
  g_free(cdata);
  g_free(sdata);
  g_free(a);
  g_free(b);
}

static void test_sizes(void) {
  /* xor (2→8→1) against the spiral (2→16→16→2): every dense pair differs. */
  char *a = example("xor", "xor.loom"), *b = example("spiral", "sizes-spiral.loom");
  JsonParser *p;
  JsonObject *o = dna_json(a, b, "--threshold=0.5", &p);
  g_assert_cmpfloat(json_object_get_double_member(o, "threshold"), ==, 0.5);
  JsonArray *m = json_object_get_array_member(o, "matrix");
  g_assert_cmpfloat(json_array_get_double_element(json_array_get_array_element(m, 0), 0), >, 0);
  double s = json_object_get_double_member(o, "similarity");
  g_assert_cmpfloat(s, >, 0);
  g_assert_cmpfloat(s, <, 1);
  g_object_unref(p);
  g_free(a);
  g_free(b);
}

static void train(const char *in, const char *out) {
  const char *argv[] = {"train", in, "--data", "spiral", "--epochs", "3", "--batch", "16", "--lr", "0.01",
                        "--seed", "3", "--out", out, NULL};
  CliResult r = run(argv);
  if (r.status != 0) g_error("loom train failed: %s", r.err);
  cli_result_clear(&r);
}

static void test_migration(void) {
  char *a = example("spiral", "mig.loom"), *t1 = tmp_path("mig-t1.loom"), *t2 = tmp_path("mig-t2.loom");
  train(a, t1);
  char *moved = edited_copy(t1, "mig-moved.loom", "\"at\": [0, 1, 1, 0]", "\"at\": [0, 1, 2, 0]");
  train(moved, t2);
  JsonParser *p;
  JsonObject *o = dna_json(t1, t2, NULL, &p);
  JsonArray *shifts = json_object_get_array_member(o, "shifts");
  g_assert_cmpuint(json_array_get_length(shifts), ==, 1);
  JsonObject *s = json_array_get_object_element(shifts, 0);
  assert_coord(json_object_get_array_member(s, "from"), 0, 1, 1, 0);
  assert_coord(json_object_get_array_member(s, "to"), 0, 1, 2, 0);
  double score = json_object_get_double_member(s, "score");
  g_test_message("moved layer after 3 more epochs: %.6f", score);
  g_assert_cmpfloat(score, >, 0.8);
  g_assert_cmpfloat(score, <, 1);
  g_object_unref(p);
  g_free(a);
  g_free(t1);
  g_free(t2);
  g_free(moved);
}

static void test_errors(void) {
  char *a = example("xor", "err.loom"), *missing = tmp_path("missing.loom");
  struct {
    const char *args[5];
    int status;
    const char *message;
  } cases[] = {
    {{"dna", a, NULL}, 2, "two models are needed"},
    {{"dna", a, a, a, NULL}, 2, "unexpected argument"},
    {{"dna", a, a, "--threshold", NULL}, 2, "option '--threshold' needs a value"},
    {{"dna", a, a, "--threshold=1.5", NULL}, 2, "--threshold needs a number from 0 to 1, not '1.5'"},
    {{"dna", a, a, "--threshold=x", NULL}, 2, "--threshold needs a number from 0 to 1, not 'x'"},
    {{"dna", a, a, "--frobnicate", NULL}, 2, "unknown option '--frobnicate'"},
    {{"dna", a, missing, NULL}, 1, "missing.loom"},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    CliResult r = run(cases[i].args);
    g_assert_cmpint(r.status, ==, cases[i].status);
    g_assert_true(g_str_has_prefix(r.err, "loom dna: "));
    if (!strstr(r.err, cases[i].message)) g_error("case %zu: '%s' not in '%s'", i, cases[i].message, r.err);
    g_assert_cmpstr(r.out, ==, "");
    cli_result_clear(&r);
  }
  g_free(a);
  g_free(missing);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-dna-cli-XXXXXX", NULL);
  g_test_add_func("/dna-cli/self", test_self);
  g_test_add_func("/dna-cli/moved", test_moved);
  g_test_add_func("/dna-cli/int8", test_int8);
  g_test_add_func("/dna-cli/sizes", test_sizes);
  g_test_add_func("/dna-cli/migration", test_migration);
  g_test_add_func("/dna-cli/errors", test_errors);
  int status = g_test_run();
  tmp_dir_remove(tmp_dir);
  g_free(tmp_dir);
  return status;
}
