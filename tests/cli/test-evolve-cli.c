/* loom evolve end to end: the same seed on 1 and 2 threads prints the same
 * generations and writes byte-identical gen-NNN files; each line's DNA
 * equals what `loom dna` says of the files; a generation without
 * improvement has similarity 1 and no shifts; the table; usage and file
 * errors. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <string.h>

#include "cli-harness.h"

static char *tmp_dir;

static char *tmp_path(const char *name) { return g_build_filename(tmp_dir, name, NULL); }

static CliResult run(const char *const *argv) { return cli_run(NULL, NULL, argv); }

#define GENERATIONS 3

static char *start_model(void) {
  char *path = tmp_path("start.loom");
  const char *argv[] = {"new", "--example", "spiral", "--out", path, "--force", NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  cli_result_clear(&r);
  return path;
}

static char *evolve(const char *model, const char *threads, const char *out_dir) {
  const char *argv[] = {"evolve", model, "--data", "spiral", "--generations", "3", "--population", "3",
                        "--steps", "4", "--lr", "0.02", "--seed", "5", "--threads", threads,
                        "--out", out_dir, "--json", NULL};
  CliResult r = run(argv);
  if (r.status != 0) g_error("loom evolve failed (%d): %s", r.status, r.err);
  g_assert_cmpstr(r.err, ==, "");
  char *out = g_strdup(r.out);
  cli_result_clear(&r);
  return out;
}

static char *file_text(const char *path, gsize *len) {
  char *text;
  g_assert_true(g_file_get_contents(path, &text, len, NULL));
  return text;
}

static double dna_similarity(const char *a, const char *b) {
  const char *argv[] = {"dna", a, b, "--json", NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  JsonParser *p = json_parser_new();
  g_assert_true(json_parser_load_from_data(p, r.out, -1, NULL));
  double s = json_object_get_double_member(json_node_get_object(json_parser_get_root(p)), "similarity");
  g_object_unref(p);
  cli_result_clear(&r);
  return s;
}

static void test_deterministic(void) {
  char *start = start_model();
  char *d1 = tmp_path("one"), *d2 = tmp_path("two");
  char *out1 = evolve(start, "1", d1), *out2 = evolve(start, "2", d2);
  /* the lines differ only in the directory of "file" */
  char **l1 = g_strsplit(out1, "\n", -1), **l2 = g_strsplit(out2, "\n", -1);
  g_assert_cmpuint(g_strv_length(l1), ==, GENERATIONS + 1); /* a newline ends the last */
  g_assert_cmpuint(g_strv_length(l2), ==, GENERATIONS + 1);
  char *prev = g_strdup(start);
  for (int g = 0; g < GENERATIONS; g++) {
    char **parts = g_strsplit(l2[g], d2, -1);
    char *as_one = g_strjoinv(d1, parts);
    g_strfreev(parts);
    g_assert_cmpstr(l1[g], ==, as_one);
    g_free(as_one);

    JsonParser *p = json_parser_new();
    g_assert_true(json_parser_load_from_data(p, l1[g], -1, NULL));
    JsonObject *o = json_node_get_object(json_parser_get_root(p));
    g_assert_cmpint(json_object_get_int_member(o, "generation"), ==, g + 1);
    g_assert_cmpint(json_object_get_int_member(o, "children"), ==, 3);
    char name[32];
    snprintf(name, sizeof name, "gen-%03d.loom.json", g + 1);
    char *f1 = g_build_filename(d1, name, NULL), *f2 = g_build_filename(d2, name, NULL);
    g_assert_cmpstr(json_object_get_string_member(o, "file"), ==, f1);
    gsize n1, n2;
    char *t1 = file_text(f1, &n1), *t2 = file_text(f2, &n2);
    g_assert_cmpmem(t1, n1, t2, n2); /* bit-identical weights across thread counts */
    double sim = json_object_get_double_member(o, "similarity");
    g_assert_cmpfloat(sim, >=, 0.0);
    g_assert_cmpfloat(sim, <=, 1.0);
    JsonArray *shifts = json_object_get_array_member(o, "shifts");
    JsonObject *child = json_object_get_object_member(o, "best_child");
    g_assert_nonnull(child);
    if (!json_object_get_boolean_member(o, "improved")) {
      /* the parent stays: the same network, so DNA 1 and no shifts */
      g_assert_cmpfloat(sim, ==, 1.0);
      g_assert_cmpuint(json_array_get_length(shifts), ==, 0);
    } else {
      g_assert_cmpfloat(json_object_get_double_member(o, "loss"), ==, json_object_get_double_member(child, "loss"));
      g_assert_cmpfloat(json_object_get_double_member(o, "accuracy"), ==,
                        json_object_get_double_member(child, "accuracy"));
      g_assert_cmpuint(json_array_get_length(json_object_get_array_member(child, "mutations")), >=, 1);
    }
    /* the printed DNA is that of this generation's parent against the one before */
    g_assert_cmpfloat_with_epsilon(dna_similarity(f1, prev), sim, 1e-12);
    g_free(prev);
    prev = f1;
    g_free(f2);
    g_free(t1);
    g_free(t2);
    g_object_unref(p);
  }
  g_free(prev);
  g_strfreev(l1);
  g_strfreev(l2);
  g_free(out1);
  g_free(out2);

  /* the table */
  const char *table[] = {"evolve", start, "--data", "spiral", "--generations", "2", "--population", "2",
                         "--steps", "2", "--seed", "5", NULL};
  CliResult r = run(table);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "generation 2:"));
  g_assert_nonnull(strstr(r.out, "DNA against the parent: similarity"));
  cli_result_clear(&r);
  g_free(d1);
  g_free(d2);
  g_free(start);
}

static void expect_error(const char *const *argv, int status, const char *a) {
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, status);
  if (!strstr(r.err, a)) g_error("'%s' not in: %s", a, r.err);
  cli_result_clear(&r);
}

static void test_errors(void) {
  char *start = start_model();
  const char *no_data[] = {"evolve", start, NULL};
  expect_error(no_data, 2, "--data");
  const char *zero[] = {"evolve", start, "--data", "spiral", "--population", "0", NULL};
  expect_error(zero, 2, "--population");
  const char *bad_lr[] = {"evolve", start, "--data", "spiral", "--lr", "-1", NULL};
  expect_error(bad_lr, 2, "--lr");
  char *missing = tmp_path("missing.loom");
  const char *no_file[] = {"evolve", missing, "--data", "spiral", NULL};
  expect_error(no_file, 1, missing);
  const char *wrong_data[] = {"evolve", start, "--data", "sine", NULL};
  CliResult r = run(wrong_data);
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, start));
  cli_result_clear(&r);
  g_free(missing);
  g_free(start);
}

static void remove_tree(const char *path) {
  GDir *dir = g_dir_open(path, 0, NULL);
  for (const char *name; dir && (name = g_dir_read_name(dir));) {
    char *p = g_build_filename(path, name, NULL);
    if (g_file_test(p, G_FILE_TEST_IS_DIR)) remove_tree(p);
    else g_unlink(p);
    g_free(p);
  }
  if (dir) g_dir_close(dir);
  g_rmdir(path);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-evolve-cli-XXXXXX", NULL);
  g_test_add_func("/evolve-cli/deterministic", test_deterministic);
  g_test_add_func("/evolve-cli/errors", test_errors);
  int status = g_test_run();
  remove_tree(tmp_dir);
  g_free(tmp_dir);
  return status;
}
