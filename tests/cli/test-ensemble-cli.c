/* loom ensemble end to end: three trained spirals; every figure of the JSON
 * recomputed here from the pair counts, the counts tied to each model's
 * correct count, each accuracy equal to what `loom eval` reports (another
 * code path), the best pair by the documented rule; the table; errors for a
 * missing file, a broken file, models of other sizes and usage. */
#include <glib/gstdio.h>
#include <json-glib/json-glib.h>
#include <math.h>
#include <string.h>

#include "cli-harness.h"
#include "tmp-dir.h"

static char *tmp_dir;

static char *tmp_path(const char *name) { return g_build_filename(tmp_dir, name, NULL); }

static CliResult run(const char *const *argv) { return cli_run(NULL, NULL, argv); }

static void run_ok(const char *const *argv) {
  CliResult r = run(argv);
  if (r.status != 0) g_error("loom %s failed (%d): %s", argv[0], r.status, r.err);
  cli_result_clear(&r);
}

static JsonNode *parse(const char *text, JsonParser **parser) {
  *parser = json_parser_new();
  GError *error = NULL;
  if (!json_parser_load_from_data(*parser, text, -1, &error)) g_error("%s\n%s", error->message, text);
  return json_parser_get_root(*parser);
}

/* Models trained with different seeds, so their success patterns differ. */
static char *trained(const char *start, const char *file, const char *seed) {
  char *path = tmp_path(file);
  const char *argv[] = {"train", start, "--data", "spiral", "--epochs", "4", "--lr", "0.02", "--seed", seed,
                        "--out", path, NULL};
  run_ok(argv);
  return path;
}

static double eval_accuracy(const char *model) {
  const char *argv[] = {"eval", model, "--data", "spiral", "--seed", "4", "--json", NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  JsonParser *p;
  double acc = json_object_get_double_member(json_node_get_object(parse(r.out, &p)), "accuracy");
  g_object_unref(p);
  cli_result_clear(&r);
  return acc;
}

static char *start_model(void) {
  char *path = tmp_path("start.loom");
  const char *argv[] = {"new", "--example", "spiral", "--out", path, "--force", NULL};
  run_ok(argv);
  return path;
}

static void test_figures(void) {
  char *start = start_model();
  char *m[3] = {trained(start, "m1.loom", "1"), trained(start, "m2.loom", "2"), trained(start, "m3.loom", "3")};
  const char *argv[] = {"ensemble", m[0], m[1], m[2], "--data", "spiral", "--seed", "4", "--json", NULL};
  CliResult r = run(argv);
  if (r.status != 0) g_error("loom ensemble failed (%d): %s", r.status, r.err);
  g_assert_cmpstr(r.err, ==, "");
  JsonParser *p;
  JsonObject *o = json_node_get_object(parse(r.out, &p));
  int64_t n = json_object_get_int_member(o, "samples");
  g_assert_cmpint(n, >, 0);
  JsonArray *models = json_object_get_array_member(o, "models");
  g_assert_cmpuint(json_array_get_length(models), ==, 3);
  int64_t correct[3];
  for (guint i = 0; i < 3; i++) {
    JsonObject *mo = json_array_get_object_element(models, i);
    g_assert_cmpstr(json_object_get_string_member(mo, "path"), ==, m[i]);
    correct[i] = json_object_get_int_member(mo, "correct");
    double acc = json_object_get_double_member(mo, "accuracy");
    g_assert_cmpfloat(acc, ==, (double)correct[i] / (double)n);
    g_assert_cmpfloat(acc, ==, eval_accuracy(m[i]));
  }
  JsonArray *pairs = json_object_get_array_member(o, "pairs");
  g_assert_cmpuint(json_array_get_length(pairs), ==, 3);
  int best = -1;
  double best_phi = 0;
  int64_t best_union = -1;
  for (guint k = 0; k < 3; k++) {
    JsonObject *q = json_array_get_object_element(pairs, k);
    int a = (int)json_object_get_int_member(q, "a"), b = (int)json_object_get_int_member(q, "b");
    g_assert_cmpint(a, <, b);
    int64_t both = json_object_get_int_member(q, "both"), oa = json_object_get_int_member(q, "only_a");
    int64_t ob = json_object_get_int_member(q, "only_b"), ne = json_object_get_int_member(q, "neither");
    g_assert_cmpint(both + oa + ob + ne, ==, n);
    g_assert_cmpint(both + oa, ==, correct[a]);
    g_assert_cmpint(both + ob, ==, correct[b]);
    int64_t uni = both + oa + ob;
    g_assert_cmpfloat(json_object_get_double_member(q, "coverage"), ==, (double)uni / (double)n);
    g_assert_cmpfloat(json_object_get_double_member(q, "overlap"), ==, uni ? (double)both / (double)uni : 1.0);
    g_assert_cmpfloat(json_object_get_double_member(q, "agreement"), ==, (double)(both + ne) / (double)n);
    /* phi as the Pearson correlation from means */
    double pa = (double)correct[a] / (double)n, pb = (double)correct[b] / (double)n, pab = (double)both / (double)n;
    double va = pa * (1 - pa), vb = pb * (1 - pb);
    double phi = va > 0 && vb > 0 ? (pab - pa * pb) / sqrt(va * vb) : (oa == 0 && ob == 0 ? 1.0 : 0.0);
    double sim = json_object_get_double_member(q, "similarity");
    g_assert_cmpfloat_with_epsilon(sim, phi, 1e-12);
    if (best < 0 || uni > best_union || (uni == best_union && sim < best_phi)) {
      best = (int)k;
      best_union = uni;
      best_phi = sim;
    }
  }
  JsonObject *bp = json_object_get_object_member(o, "best_pair");
  JsonObject *want = json_array_get_object_element(pairs, (guint)best);
  g_assert_cmpint(json_object_get_int_member(bp, "a"), ==, json_object_get_int_member(want, "a"));
  g_assert_cmpint(json_object_get_int_member(bp, "b"), ==, json_object_get_int_member(want, "b"));
  g_object_unref(p);
  cli_result_clear(&r);

  /* the table */
  const char *table[] = {"ensemble", m[0], m[1], "--data", "spiral", NULL};
  r = run(table);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "Best complementary pair: 0 + 1"));
  g_assert_nonnull(strstr(r.out, "coverage"));
  {
    /* Columns line up: the pair table's counts start where their title does,
     * counted in characters (cli-table.h). */
    const char *head = strstr(r.out, "  pair");
    g_assert_nonnull(head);
    const char *row = strchr(head, '\n') + 1;
    const char *title = strstr(head, "both /"), *counts = strstr(row, " / ");
    g_assert_nonnull(title);
    g_assert_nonnull(counts);
    while (counts > row && counts[-1] != ' ') counts--;
    g_assert_cmpint(g_utf8_pointer_to_offset(head, title), ==, g_utf8_pointer_to_offset(row, counts));
  }
  cli_result_clear(&r);
  for (int i = 0; i < 3; i++) g_free(m[i]);
  g_free(start);
}

static void expect_error(const char *const *argv, int status, const char *a, const char *b) {
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, status);
  g_assert_cmpstr(r.out, ==, "");
  if (a && !strstr(r.err, a)) g_error("'%s' not in: %s", a, r.err);
  if (b && !strstr(r.err, b)) g_error("'%s' not in: %s", b, r.err);
  cli_result_clear(&r);
}

static void test_errors(void) {
  char *start = start_model();
  char *missing = tmp_path("missing.loom");
  const char *no_file[] = {"ensemble", start, missing, "--data", "spiral", NULL};
  expect_error(no_file, 1, missing, NULL);
  char *broken = tmp_path("broken.loom");
  g_assert_true(g_file_set_contents(broken, "{\"format\": ", -1, NULL));
  const char *bad_file[] = {"ensemble", broken, start, "--data", "spiral", NULL};
  expect_error(bad_file, 1, broken, "truncated");
  char *xor = tmp_path("xor.loom");
  const char *mk[] = {"new", "--example", "xor", "--out", xor, "--force", NULL};
  run_ok(mk);
  const char *sizes[] = {"ensemble", start, xor, "--data", "spiral", NULL};
  expect_error(sizes, 1, xor, "must agree");
  const char *one[] = {"ensemble", start, "--data", "spiral", NULL};
  expect_error(one, 2, "at least two models", NULL);
  const char *no_data[] = {"ensemble", start, start, NULL};
  expect_error(no_data, 2, "--data", NULL);
  const char *bad_data[] = {"ensemble", start, start, "--data", "nosuch", NULL};
  expect_error(bad_data, 1, "nosuch", NULL);
  g_free(xor);
  g_free(broken);
  g_free(missing);
  g_free(start);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-ensemble-cli-XXXXXX", NULL);
  g_test_add_func("/ensemble-cli/figures", test_figures);
  g_test_add_func("/ensemble-cli/errors", test_errors);
  int status = g_test_run();
  tmp_dir_remove(tmp_dir);
  g_free(tmp_dir);
  return status;
}
