/* loom bench end to end: the JSON rows of --dtypes all against the dtypes
 * `loom dtype list` prints, float32 as the exact baseline, quantized rows
 * smaller and close to it, deviations that do not depend on the thread
 * count, the readable table, and errors naming the file or the dtype
 * (a systolic network is refused).
 * Timings are only checked for being positive: --runs 1 keeps this quick. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "cli-harness.h"
#include "tmp-dir.h"

static char *tmp_dir;

static char *tmp_path(const char *name) { return g_build_filename(tmp_dir, name, NULL); }

static CliResult run(const char *const *argv) { return cli_run(NULL, NULL, argv); }

static char *example(const char *name, const char *file) { return cli_new_example(name, tmp_dir, file); }

/* `loom bench MODEL --json --runs 1 --dtypes DTYPES [--threads T]`, parsed. */
static JsonObject *bench_json(const char *model, const char *dtypes, const char *threads, JsonParser **parser) {
  const char *argv[] = {"bench", model, "--json", "--runs", "1", "--dtypes", dtypes, threads ? "--threads" : NULL,
                        threads, NULL};
  CliResult r = run(argv);
  if (r.status != 0) g_error("loom bench failed (%d): %s", r.status, r.err);
  g_assert_cmpstr(r.err, ==, "");
  *parser = json_parser_new();
  GError *error = NULL;
  if (!json_parser_load_from_data(*parser, r.out, -1, &error)) g_error("%s\n%s", error->message, r.out);
  cli_result_clear(&r);
  return json_node_get_object(json_parser_get_root(*parser));
}

/* The names in the first column of `loom dtype list`, in its order. */
static GPtrArray *listed_dtypes(void) {
  const char *argv[] = {"dtype", "list", NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  GPtrArray *names = g_ptr_array_new_with_free_func(g_free);
  gchar **lines = g_strsplit(r.out, "\n", -1);
  for (int i = 1; lines[i]; i++) /* line 0 is the header */
    if (lines[i][0]) g_ptr_array_add(names, g_strndup(lines[i], strcspn(lines[i], " ")));
  g_strfreev(lines);
  cli_result_clear(&r);
  g_assert_cmpuint(names->len, >=, 20);
  return names;
}

static JsonObject *row_of(JsonArray *rows, const char *dtype) {
  for (guint i = 0; i < json_array_get_length(rows); i++) {
    JsonObject *o = json_array_get_object_element(rows, i);
    if (strcmp(json_object_get_string_member(o, "dtype"), dtype) == 0) return o;
  }
  g_error("no row for %s", dtype);
}

static void test_all_dtypes(void) {
  char *model = example("cnn", "cnn.loom");
  JsonParser *p;
  JsonObject *o = bench_json(model, "all", NULL, &p);
  g_assert_cmpstr(json_object_get_string_member(o, "model"), ==, model);
  g_assert_cmpint(json_object_get_int_member(o, "batch"), ==, 32);
  g_assert_cmpint(json_object_get_int_member(o, "runs"), ==, 1);
  g_assert_cmpint(json_object_get_int_member(o, "threads"), ==, 1);
  int64_t f32_bytes = json_object_get_int_member(o, "weights_float32_bytes");
  g_assert_cmpint(f32_bytes, >, 0);
  JsonArray *rows = json_object_get_array_member(o, "dtypes");
  GPtrArray *names = listed_dtypes();
  g_assert_cmpuint(json_array_get_length(rows), ==, names->len);
  /* float32 first (the baseline), then the others in the table's order, each once. */
  g_assert_cmpstr(json_object_get_string_member(json_array_get_object_element(rows, 0), "dtype"), ==, "float32");
  guint k = 1;
  for (guint i = 0; i < names->len; i++) {
    if (strcmp(names->pdata[i], "float32") == 0) continue;
    g_assert_cmpstr(json_object_get_string_member(json_array_get_object_element(rows, k++), "dtype"), ==,
                    names->pdata[i]);
  }
  for (guint i = 0; i < json_array_get_length(rows); i++) {
    JsonObject *r = json_array_get_object_element(rows, i);
    g_assert_cmpfloat(json_object_get_double_member(r, "forward_s"), >, 0);
    g_assert_cmpfloat(json_object_get_double_member(r, "train_step_s"), >, 0);
    g_assert_cmpfloat(json_object_get_double_member(r, "forward_ratio"), >, 0);
    int64_t bytes = json_object_get_int_member(r, "weight_bytes");
    g_assert_cmpfloat_with_epsilon(json_object_get_double_member(r, "weight_bytes_ratio"), (double)bytes / f32_bytes,
                                   1e-12);
    g_assert_true(json_object_has_member(r, "max_abs_deviation"));
    g_assert_true(json_object_has_member(r, "relative_rms_deviation"));
    g_assert_true(json_object_has_member(r, "rest_relative_rms_deviation"));
    g_assert_cmpfloat(json_object_get_double_member(r, "rest_forward_s"), >, 0);
    /* At rest only the packed codes and scales stay: less than the plain
     * forward keeps (float32 master, packed copy, gradients), which is no
     * more than a training step keeps. */
    int64_t rest = json_object_get_int_member(r, "resident_bytes_at_rest");
    int64_t fwd = json_object_get_int_member(r, "resident_bytes_forward");
    g_assert_cmpint(rest, >=, bytes);
    g_assert_cmpint(rest, <, fwd);
    g_assert_cmpint(fwd, <=, json_object_get_int_member(r, "resident_bytes_training"));
  }
  JsonObject *f32 = row_of(rows, "float32");
  g_assert_cmpint(json_object_get_int_member(f32, "bits"), ==, 32);
  g_assert_cmpfloat(json_object_get_double_member(f32, "max_abs_deviation"), ==, 0);
  g_assert_cmpfloat(json_object_get_double_member(f32, "relative_rms_deviation"), ==, 0);
  g_assert_cmpfloat(json_object_get_double_member(f32, "forward_ratio"), ==, 1);
  g_assert_cmpfloat(json_object_get_double_member(f32, "train_step_ratio"), ==, 1);
  g_assert_cmpint(json_object_get_int_member(f32, "weight_bytes"), ==, f32_bytes);
  /* float32 rests as its own master: the same product, the same bits. */
  g_assert_cmpfloat(json_object_get_double_member(f32, "rest_relative_rms_deviation"), ==, 0);
  /* float64 holds every float32 weight exactly: the same output. */
  g_assert_cmpfloat(json_object_get_double_member(row_of(rows, "float64"), "max_abs_deviation"), ==, 0);
  /* Fewer bits: fewer bytes, and an output that moves away from float32 but
   * stays near it (int8 within 1 %, binary within the same order of magnitude). */
  int64_t b16 = json_object_get_int_member(row_of(rows, "float16"), "weight_bytes");
  int64_t b8 = json_object_get_int_member(row_of(rows, "int8"), "weight_bytes");
  int64_t b4 = json_object_get_int_member(row_of(rows, "int4"), "weight_bytes");
  int64_t b1 = json_object_get_int_member(row_of(rows, "binary"), "weight_bytes");
  g_assert_cmpint(b16, <, f32_bytes);
  g_assert_cmpint(b8, <, b16);
  g_assert_cmpint(b4, <, b8);
  g_assert_cmpint(b1, <, b4);
  JsonObject *i8 = row_of(rows, "int8");
  g_assert_cmpfloat(json_object_get_double_member(i8, "max_abs_deviation"), >, 0);
  g_assert_cmpfloat(json_object_get_double_member(i8, "relative_rms_deviation"), <, 0.01);
  /* At rest int8 also quantizes the activations (docs/dtypes.md's bound). */
  g_assert_cmpfloat(json_object_get_double_member(i8, "rest_relative_rms_deviation"), >, 0);
  g_assert_cmpfloat(json_object_get_double_member(i8, "rest_relative_rms_deviation"), <, 0.01);
  g_assert_cmpint(json_object_get_int_member(i8, "resident_bytes_at_rest"), <,
                  json_object_get_int_member(f32, "resident_bytes_at_rest") / 2);
  double rms4 = json_object_get_double_member(row_of(rows, "int4"), "relative_rms_deviation");
  g_assert_cmpfloat(rms4, >, json_object_get_double_member(i8, "relative_rms_deviation"));
  g_assert_cmpfloat(json_object_get_double_member(row_of(rows, "binary"), "relative_rms_deviation"), <, 1.0);
  g_ptr_array_free(names, TRUE);
  g_object_unref(p);
  g_free(model);
}

/* The input is drawn from a fixed seed and the engine's results do not
 * depend on the thread count: the deviations repeat exactly. */
static void test_deterministic(void) {
  char *model = example("spiral", "spiral.loom");
  JsonParser *p1, *p2;
  JsonArray *a = json_object_get_array_member(bench_json(model, "int4,fp8-e4m3,int4", NULL, &p1), "dtypes");
  JsonArray *b = json_object_get_array_member(bench_json(model, "int4,fp8-e4m3", "2", &p2), "dtypes");
  g_assert_cmpuint(json_array_get_length(a), ==, 3); /* float32 added, int4 once */
  g_assert_cmpuint(json_array_get_length(b), ==, 3);
  for (guint i = 0; i < 3; i++) {
    JsonObject *x = json_array_get_object_element(a, i), *y = json_array_get_object_element(b, i);
    g_assert_cmpstr(json_object_get_string_member(x, "dtype"), ==, json_object_get_string_member(y, "dtype"));
    g_assert_cmpfloat(json_object_get_double_member(x, "max_abs_deviation"), ==,
                      json_object_get_double_member(y, "max_abs_deviation"));
    g_assert_cmpfloat(json_object_get_double_member(x, "relative_rms_deviation"), ==,
                      json_object_get_double_member(y, "relative_rms_deviation"));
  }
  g_assert_cmpstr(json_object_get_string_member(json_array_get_object_element(a, 1), "dtype"), ==, "int4");
  g_assert_cmpstr(json_object_get_string_member(json_array_get_object_element(a, 2), "dtype"), ==, "fp8-e4m3");
  g_object_unref(p1);
  g_object_unref(p2);
  g_free(model);
}

static void test_table(void) {
  char *model = example("spiral", "table.loom");
  const char *argv[] = {"bench", model, "--runs", "1", "--batch", "3", "--dtypes", "binary,int8", NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.err, ==, "");
  gchar **lines = g_strsplit(r.out, "\n", -1);
  g_assert_cmpuint(g_strv_length(lines), ==, 6); /* title, header, 3 rows, "" after the last newline */
  g_assert_true(g_str_has_prefix(lines[0], model));
  g_assert_nonnull(strstr(lines[0], "batch 3"));
  g_assert_true(g_str_has_prefix(lines[1], "dtype"));
  const char *order[] = {"float32 ", "binary ", "int8 "};
  for (int i = 0; i < 3; i++) {
    g_assert_true(g_str_has_prefix(lines[2 + i], order[i]));
    gchar **cols = g_strsplit_set(lines[2 + i], " ", -1);
    GPtrArray *words = g_ptr_array_new();
    for (int c = 0; cols[c]; c++)
      if (cols[c][0]) g_ptr_array_add(words, cols[c]);
    g_assert_cmpuint(words->len, ==, 16);
    /* Columns of fixed width: the header (padded by characters) is as long as each row. */
    g_assert_cmpint(g_utf8_strlen(lines[1], -1), ==, g_utf8_strlen(lines[2 + i], -1));
    if (i == 0) { /* the baseline: ratios 1, no deviation, at rest neither */
      g_assert_cmpstr(words->pdata[3], ==, "1.00");
      g_assert_cmpstr(words->pdata[9], ==, "1.000");
      g_assert_cmpstr(words->pdata[13], ==, "0");
      g_assert_cmpstr(words->pdata[14], ==, "0");
      g_assert_cmpstr(words->pdata[15], ==, "0");
    } else {
      g_assert_cmpstr(words->pdata[13], !=, "0");
      g_assert_cmpstr(words->pdata[15], !=, "0");
    }
    g_ptr_array_free(words, TRUE);
    g_strfreev(cols);
  }
  g_strfreev(lines);
  cli_result_clear(&r);
  g_free(model);
}

static void test_errors(void) {
  char *model = example("xor", "xor.loom");
  char *missing = tmp_path("missing.loom");
  const char *a1[] = {"bench", missing, NULL};
  CliResult r = run(a1);
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, missing));
  cli_result_clear(&r);
  const char *a2[] = {"bench", model, "--dtypes", "int8,int9", NULL};
  r = run(a2);
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "'int9'"));
  cli_result_clear(&r);
  const char *a3[] = {"bench", model, "--runs", "0", NULL};
  r = run(a3);
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "--runs"));
  cli_result_clear(&r);
  const char *a4[] = {"bench", model, "--batch", "x", NULL};
  r = run(a4);
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "--batch"));
  cli_result_clear(&r);
  const char *a5[] = {"bench", NULL};
  r = run(a5);
  g_assert_cmpint(r.status, ==, 2);
  cli_result_clear(&r);
  char *systolic = example("feedback", "feedback.loom"); /* no feed-forward pass to time */
  const char *a6[] = {"bench", systolic, "--runs", "1", NULL};
  r = run(a6);
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, systolic));
  g_assert_nonnull(strstr(r.err, "systolic"));
  g_assert_cmpstr(r.out, ==, "");
  cli_result_clear(&r);
  g_free(systolic);
  g_free(missing);
  g_free(model);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-bench-cli-XXXXXX", NULL);
  g_test_add_func("/bench-cli/all-dtypes", test_all_dtypes);
  g_test_add_func("/bench-cli/deterministic", test_deterministic);
  g_test_add_func("/bench-cli/table", test_table);
  g_test_add_func("/bench-cli/errors", test_errors);
  int status = g_test_run();
  tmp_dir_remove(tmp_dir);
  g_free(tmp_dir);
  return status;
}
