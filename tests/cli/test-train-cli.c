/* loom train / loom eval end to end: epoch lines, JSON lines, the saved
 * model, and clear errors for malformed CSV files and mismatched sizes. */
#include <glib/gstdio.h>
#include <string.h>

#include "cli-harness.h"

static char *tmp_dir;

static char *tmp_path(const char *name) { return g_build_filename(tmp_dir, name, NULL); }

static CliResult run(const char *const *argv) { return cli_run(NULL, NULL, argv); }

static char *example(const char *name) {
  char *path = tmp_path(name);
  const char *argv[] = {"new", "--example", name, "--out", path, NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  cli_result_clear(&r);
  return path;
}

static void test_train_json_and_eval(void) {
  char *model = example("spiral"), *out = tmp_path("trained.loom");
  const char *argv[] = {"train", model, "--data", "spiral", "--epochs", "3", "--batch", "16", "--optimizer", "adam",
                        "--lr", "0.02", "--seed", "3", "--threads", "2", "--out", out, "--json", NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.err, ==, "");
  char **lines = g_strsplit(r.out, "\n", -1);
  g_assert_cmpint(g_strv_length(lines), ==, 5); /* 3 epochs, the final line, "" */
  for (int i = 0; i < 3; i++) {
    char prefix[32];
    g_snprintf(prefix, sizeof prefix, "{\"epoch\": %d, \"loss\": ", i + 1);
    g_assert_true(g_str_has_prefix(lines[i], prefix));
    g_assert_nonnull(strstr(lines[i], "\"test_accuracy\": "));
    g_assert_nonnull(strstr(lines[i], "\"samples_per_second\": "));
  }
  g_assert_true(g_str_has_prefix(lines[3], "{\"final_test_accuracy\": "));
  /* The final accuracy equals what eval finds on the same split of the saved model. */
  const char *acc = strstr(lines[2], "\"test_accuracy\": ") + strlen("\"test_accuracy\": ");
  char *epoch_acc = g_strndup(acc, strcspn(acc, ","));
  const char *eargv[] = {"eval", out, "--data", "spiral", "--seed", "3", "--json", NULL};
  CliResult e = run(eargv);
  g_assert_cmpint(e.status, ==, 0);
  char *expect = g_strdup_printf("{\"samples\": 80, \"loss\": ");
  g_assert_true(g_str_has_prefix(e.out, expect));
  char *tail = g_strdup_printf("\"accuracy\": %s}\n", epoch_acc);
  g_assert_true(g_str_has_suffix(e.out, tail));
  /* Same seed, one thread: the same curve. */
  const char *argv1[] = {"train", model, "--data", "spiral", "--epochs", "3", "--batch", "16", "--optimizer", "adam",
                         "--lr", "0.02", "--seed", "3", "--threads", "1", "--json", NULL};
  CliResult r1 = run(argv1);
  g_assert_cmpint(r1.status, ==, 0);
  char **lines1 = g_strsplit(r1.out, "\n", -1);
  for (int i = 0; i < 4; i++) {
    /* compare everything before samples_per_second (a timing) */
    const char *cut = strstr(lines[i], "\"samples_per_second\"");
    size_t n = cut ? (size_t)(cut - lines[i]) : strlen(lines[i]);
    g_assert_cmpint(strncmp(lines[i], lines1[i], n), ==, 0);
  }
  g_strfreev(lines1);
  g_strfreev(lines);
  g_free(expect);
  g_free(tail);
  g_free(epoch_acc);
  cli_result_clear(&r);
  cli_result_clear(&r1);
  cli_result_clear(&e);
  g_remove(out);
  g_remove(model);
  g_free(out);
  g_free(model);
}

static void test_train_text_tween(void) {
  char *model = example("xor");
  const char *argv[] = {"train", model, "--data", "xor", "--epochs", "2", "--method", "tween", "--lr", "0.5", NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.out, "epoch 1: loss "));
  g_assert_nonnull(strstr(r.out, "\nepoch 2: loss "));
  g_assert_nonnull(strstr(r.out, "\nfinal test accuracy: "));
  cli_result_clear(&r);
  g_remove(model);
  g_free(model);
}

static void test_bad_csv(void) {
  char *model = example("spiral"), *csv = tmp_path("bad.csv");
  g_assert_true(g_file_set_contents(csv, "a,b,label\n1,2,0\n3,x,1\n", -1, NULL));
  const char *argv[] = {"train", model, "--data", csv, NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 1);
  char *expect = g_strdup_printf("loom train: %s:3: column 2 ('b'): 'x' is not a finite number\n", csv);
  g_assert_cmpstr(r.err, ==, expect);
  g_free(expect);
  cli_result_clear(&r);
  g_assert_true(g_file_set_contents(csv, "a,b,c,label\n1,2,3,0\n3,4,5,1\n1,1,1,0\n2,2,2,1\n0,0,0,1\n", -1, NULL));
  r = run(argv);
  g_assert_cmpint(r.status, ==, 1);
  g_assert_true(g_str_has_prefix(r.err, "loom train: "));
  g_assert_nonnull(strstr(r.err, "the model takes inputs of shape [2] (2 values) but the data's samples have shape [3] (3 values)"));
  cli_result_clear(&r);
  g_remove(csv);
  g_remove(model);
  g_free(csv);
  g_free(model);
}

static void test_mismatch_and_usage(void) {
  char *model = example("cnn");
  const char *argv[] = {"train", model, "--data", "xor", NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 1);
  char *expect = g_strdup_printf("loom train: %s with xor: the model gives 10 outputs per sample but the data has 2 "
                                 "classes (expected 2 outputs, or 1 for two classes)\n", model);
  g_assert_cmpstr(r.err, ==, expect);
  g_free(expect);
  cli_result_clear(&r);
  const char *bad_data[] = {"train", model, "--data", "moons", NULL};
  r = run(bad_data);
  g_assert_cmpint(r.status, ==, 1);
  g_assert_cmpstr(r.err, ==, "loom train: unknown data set “moons” (expected spiral, xor, circles, clusters, sine, "
                             "copy, digits or a .csv file)\n");
  cli_result_clear(&r);
  const char *bad_epochs[] = {"train", model, "--data", "digits", "--epochs", "0", NULL};
  r = run(bad_epochs);
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "--epochs needs an integer from 1 to 1000000, not '0'"));
  cli_result_clear(&r);
  const char *no_data[] = {"eval", model, NULL};
  r = run(no_data);
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "missing --data NAME|FILE.csv"));
  cli_result_clear(&r);
  g_remove(model);
  g_free(model);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-train-cli-XXXXXX", NULL);
  g_test_add_func("/cli/train/json-and-eval", test_train_json_and_eval);
  g_test_add_func("/cli/train/text-tween", test_train_text_tween);
  g_test_add_func("/cli/train/bad-csv", test_bad_csv);
  g_test_add_func("/cli/train/mismatch-and-usage", test_mismatch_and_usage);
  int rc = g_test_run();
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
