/* loom train / loom eval end to end: epoch lines, JSON lines, the saved
 * model, and clear errors for malformed CSV files and mismatched sizes. */
#include <glib/gstdio.h>
#include <stdbool.h>
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

/* The systolic feedback example trains headless with the ticks it opens with
 * (8, in the settings the model carries); `loom eval` of the trained model
 * runs those ticks unless --ticks says otherwise. */
static void test_systolic_feedback(void) {
  char *model = example("feedback"), *out = tmp_path("feedback-trained.loom.json");
  const char *argv[] = {"train", model, "--epochs", "4", "--out", out, "--json", NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.err, ==, "");
  g_assert_nonnull(strstr(r.out, "{\"epoch\": 4, \"loss\": "));
  char *json = NULL;
  g_assert_true(g_file_get_contents(out, &json, NULL, NULL));
  g_assert_nonnull(strstr(json, "\"ticks\": 8"));
  const char *as_trained[] = {"eval", out, "--data", "clusters", "--json", NULL};
  const char *eight[] = {"eval", out, "--data", "clusters", "--ticks", "8", "--json", NULL};
  const char *three[] = {"eval", out, "--data", "clusters", "--ticks", "3", "--json", NULL};
  CliResult a = run(as_trained), b = run(eight), c = run(three);
  g_assert_cmpint(a.status, ==, 0);
  g_assert_cmpstr(a.out, ==, b.out);
  g_assert_cmpstr(a.out, !=, c.out); /* the loop needs more ticks than slots to act */
  /* --ticks sets the setting: 3 ticks (one per slot) train another curve */
  const char *three_ticks[] = {"train", model, "--epochs", "4", "--ticks", "3", "--json", NULL};
  CliResult t3 = run(three_ticks);
  g_assert_cmpint(t3.status, ==, 0);
  g_assert_cmpstr(t3.out, !=, r.out);
  const char *zero_ticks[] = {"train", model, "--ticks", "0", NULL};
  CliResult t0 = run(zero_ticks);
  g_assert_cmpint(t0.status, ==, 2);
  g_assert_nonnull(strstr(t0.err, "--ticks needs an integer from 1 to 100000, not '0'"));
  cli_result_clear(&t3);
  cli_result_clear(&t0);
  const char *bad[] = {"eval", out, "--data", "clusters", "--ticks", "0", NULL};
  CliResult d = run(bad);
  g_assert_cmpint(d.status, ==, 2);
  g_assert_nonnull(strstr(d.err, "--ticks needs an integer from 1 to 100000, not '0'"));
  cli_result_clear(&r);
  cli_result_clear(&a);
  cli_result_clear(&b);
  cli_result_clear(&c);
  cli_result_clear(&d);
  g_free(json);
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
                             "copy, parity, text, digits or a .csv file)\n");
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

/* The JSON lines of `loom train` with base + extra arguments, the timings cut out. */
static char *curve_of(const char *const *base, size_t n_base, const char *const *extra) {
  GPtrArray *args = g_ptr_array_new();
  for (size_t i = 0; i < n_base; i++) g_ptr_array_add(args, (gpointer)base[i]);
  for (int i = 0; extra[i]; i++) g_ptr_array_add(args, (gpointer)extra[i]);
  g_ptr_array_add(args, NULL);
  CliResult r = run((const char *const *)args->pdata);
  if (r.status != 0) g_error("train failed: %s", r.err);
  GString *kept = g_string_new(NULL);
  char **lines = g_strsplit(r.out, "\n", -1);
  for (int i = 0; lines[i]; i++) {
    const char *cut = strstr(lines[i], ", \"samples_per_second\"");
    g_string_append_len(kept, lines[i], cut ? cut - lines[i] : (gssize)strlen(lines[i]));
    g_string_append_c(kept, '\n');
  }
  g_strfreev(lines);
  g_ptr_array_free(args, TRUE);
  cli_result_clear(&r);
  return g_string_free(kept, FALSE);
}

/* A 2-epoch spiral run (320 training samples, batch 16: 40 updates). */
static char *curve(const char *model, const char *const *extra) {
  const char *base[] = {"train", model, "--data", "spiral", "--epochs", "2", "--batch", "16", "--lr", "0.05",
                        "--seed", "5", "--json"};
  return curve_of(base, G_N_ELEMENTS(base), extra);
}

static void assert_same(const char *model, const char *const *a, const char *const *b, bool same) {
  char *ca = curve(model, a), *cb = curve(model, b);
  if (same) g_assert_cmpstr(ca, ==, cb);
  else g_assert_cmpstr(ca, !=, cb);
  g_free(ca);
  g_free(cb);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static void test_schedule_and_optimizer_options(void) {
  char *model = example("spiral");
  /* Keys set exactly the fields the defaults would: one cosine cycle over the 40 updates. */
  assert_same(model, ARGS("--schedule", "cosine"), ARGS("--schedule", "cosine_restarts:t0=40,tmult=1,eta_min=0"), true);
  assert_same(model, ARGS("--schedule", "cosine"), ARGS("--schedule", "cosine:t0=10,tmult=2,eta_min=0.001"), false);
  assert_same(model, ARGS("--schedule", "step"), ARGS("--schedule", "step:size=13,gamma=0.1"), true);
  assert_same(model, ARGS("--schedule", "step"), ARGS("--schedule", "step:size=10,gamma=0.5"), false);
  assert_same(model, ARGS("--schedule", "exp:gamma=1"), ARGS("--schedule", "constant"), true);
  assert_same(model, ARGS("--schedule", "exp:gamma=0.95"), ARGS("--schedule", "exponential"), false);
  /* Warmup composes with any schedule; zero updates of warmup is none. */
  assert_same(model, ARGS("--warmup", "0"), ARGS("--schedule", "constant"), true);
  assert_same(model, ARGS("--warmup", "10:start=1"), ARGS("--schedule", "constant"), true);
  assert_same(model, ARGS("--warmup", "10:start=0.1", "--schedule", "step:size=10"), ARGS("--schedule", "step:size=10"),
              false);
  /* Optimizer knobs: torch's defaults change nothing, other values do. */
  assert_same(model, ARGS("--betas", "0.9,0.999", "--weight-decay", "0"), ARGS("--optimizer", "adam"), true);
  assert_same(model, ARGS("--betas", "0.5,0.9"), ARGS("--optimizer", "adam"), false);
  assert_same(model, ARGS("--optimizer", "sgd", "--momentum", "0"), ARGS("--optimizer", "sgd"), true);
  assert_same(model, ARGS("--optimizer", "sgd", "--momentum", "0.9", "--nesterov"), ARGS("--optimizer", "sgd"), false);
  assert_same(model, ARGS("--optimizer", "adamw", "--weight-decay", "0.5"), ARGS("--optimizer", "adamw"), false);
  g_remove(model);
  g_free(model);
}

static void expect_train_usage(const char *model, const char *const *extra, const char *message) {
  GPtrArray *args = g_ptr_array_new();
  const char *base[] = {"train", model, "--data", "spiral"};
  for (size_t i = 0; i < G_N_ELEMENTS(base); i++) g_ptr_array_add(args, (gpointer)base[i]);
  for (int i = 0; extra[i]; i++) g_ptr_array_add(args, (gpointer)extra[i]);
  g_ptr_array_add(args, NULL);
  CliResult r = run((const char *const *)args->pdata);
  if (r.status != 2) g_error("expected exit status 2 and '%s', got %d: %s", message, r.status, r.err);
  char *want = g_strdup_printf("loom train: %s\nTry 'loom train --help'.\n", message);
  g_assert_cmpstr(r.err, ==, want);
  g_assert_cmpstr(r.out, ==, "");
  g_free(want);
  cli_result_clear(&r);
  g_ptr_array_free(args, TRUE);
}

static void test_schedule_and_optimizer_errors(void) {
  char *model = example("spiral");
  expect_train_usage(model, ARGS("--schedule", "linear"),
                     "--schedule: unknown schedule 'linear' (expected constant, step, exponential (exp) or "
                     "cosine_restarts (cosine))");
  expect_train_usage(model, ARGS("--schedule", "step:gama=0.5"),
                     "--schedule: unknown key 'gama' for step (expected size, gamma)");
  expect_train_usage(model, ARGS("--schedule", "exp:size=3"),
                     "--schedule: unknown key 'size' for exponential (expected gamma)");
  expect_train_usage(model, ARGS("--schedule", "cosine:t0=0"),
                     "--schedule: t0 needs an integer from 1 to 1000000000000, not '0'");
  expect_train_usage(model, ARGS("--schedule", "cosine:tmult=1.5"),
                     "--schedule: tmult needs an integer from 1 to 1000000000000, not '1.5'");
  expect_train_usage(model, ARGS("--schedule", "cosine:eta_min=-1"),
                     "--schedule: eta_min needs a number >= 0, not '-1'");
  expect_train_usage(model, ARGS("--schedule", "step:gamma=0"), "--schedule: gamma needs a number > 0, not '0'");
  expect_train_usage(model, ARGS("--schedule", "step:gamma=0.5,gamma=0.2"), "--schedule: 'gamma' is given twice");
  expect_train_usage(model, ARGS("--schedule", "step:size"), "--schedule: expected key=value, not 'size'");
  expect_train_usage(model, ARGS("--schedule", "step:"), "--schedule: expected key=value, not ''");
  expect_train_usage(model, ARGS("--schedule", "constant:gamma=1"), "--schedule: constant takes no options, not 'gamma=1'");
  expect_train_usage(model, ARGS("--warmup", "-3"), "--warmup needs a number of updates from 0 to 1000000000000, not '-3'");
  expect_train_usage(model, ARGS("--warmup", "5:begin=0.1"), "--warmup: unknown option 'begin=0.1' (expected start=F)");
  expect_train_usage(model, ARGS("--warmup", "5:start=0"), "--warmup: start needs a number in (0, 1], not '0'");
  expect_train_usage(model, ARGS("--momentum", "0.9"), "--momentum applies to sgd and rmsprop, not adam");
  expect_train_usage(model, ARGS("--optimizer", "sgd", "--momentum", "x"), "--momentum needs a number >= 0, not 'x'");
  expect_train_usage(model, ARGS("--optimizer", "rmsprop", "--nesterov"), "--nesterov applies to sgd, not rmsprop");
  expect_train_usage(model, ARGS("--optimizer", "sgd", "--nesterov"),
                     "sgd: nesterov needs momentum > 0 and dampening 0 (momentum 0, dampening 0)");
  expect_train_usage(model, ARGS("--optimizer", "sgd", "--betas", "0.9,0.99"), "--betas applies to adam and adamw, not sgd");
  expect_train_usage(model, ARGS("--betas", "0.9"), "--betas needs two numbers B1,B2, not '0.9'");
  expect_train_usage(model, ARGS("--betas", "0.9,1"), "adam: beta2 is 1, expected a value in [0, 1)");
  expect_train_usage(model, ARGS("--weight-decay", "-0.1"), "--weight-decay needs a number >= 0, not '-0.1'");
  expect_train_usage(model, ARGS("--warmup"), "option '--warmup' needs a value");
  g_remove(model);
  g_free(model);
}

/* Regression has no accuracy: "n/a" in text, null in JSON, never "nan%". */
static void test_regression_accuracy(void) {
  char *model = example("xor"), *out = tmp_path("sine.loom");
  const char *argv[] = {"train", model, "--data", "sine", "--regression", "--epochs", "1", "--out", out, NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, ", train accuracy n/a, test accuracy n/a, "));
  g_assert_nonnull(strstr(r.out, "\nfinal test accuracy: n/a\n"));
  g_assert_null(strstr(r.out, "nan"));
  cli_result_clear(&r);
  const char *jargv[] = {"train", model, "--data", "sine", "--regression", "--epochs", "1", "--json", NULL};
  r = run(jargv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "\"train_accuracy\": null, \"test_accuracy\": null, "));
  g_assert_true(g_str_has_suffix(r.out, "{\"final_test_accuracy\": null}\n"));
  cli_result_clear(&r);
  const char *eargv[] = {"eval", out, "--data", "sine", "--regression", NULL};
  r = run(eargv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.out, "80 test samples: loss "));
  g_assert_true(g_str_has_suffix(r.out, ", accuracy n/a\n"));
  cli_result_clear(&r);
  const char *ejargv[] = {"eval", out, "--data", "sine", "--regression", "--json", NULL};
  r = run(ejargv);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_suffix(r.out, ", \"accuracy\": null}\n"));
  cli_result_clear(&r);
  g_remove(out);
  g_remove(model);
  g_free(out);
  g_free(model);
}

/* The run a settings file describes equals the run the same flags describe,
 * epoch line for epoch line: a file written by the library (--save-config)
 * and one written by hand. */
static void test_config_equals_flags(void) {
  char *model = example("spiral"), *saved = tmp_path("saved.json"), *hand = tmp_path("hand.json");
  const char *const flags[] = {"--optimizer", "sgd", "--momentum", "0.9", "--schedule", "cosine:t0=15",
                               "--warmup", "4:start=0.5", NULL};
  char *by_flags = curve(model, flags);
  g_assert_nonnull(strstr(by_flags, "{\"epoch\": 2, "));
  const char *const save[] = {"--optimizer", "sgd", "--momentum", "0.9", "--schedule", "cosine:t0=15",
                              "--warmup", "4:start=0.5", "--save-config", saved, NULL};
  char *saving = curve(model, save);
  g_assert_cmpstr(saving, ==, by_flags);
  const char *base[] = {"train", model, "--json"};
  char *by_saved = curve_of(base, G_N_ELEMENTS(base), (const char *const[]){"--config", saved, NULL});
  g_assert_cmpstr(by_saved, ==, by_flags);
  g_assert_true(g_file_set_contents(
    hand,
    "{\"format\": \"loom-train-settings\", \"version\": 1,\n"
    " \"data\": {\"source\": \"spiral\", \"seed\": 5},\n"
    " \"optimizer\": {\"name\": \"sgd\", \"lr\": 0.05, \"momentum\": 0.9},\n"
    " \"schedule\": {\"kind\": \"cosine_restarts\", \"t0\": 15, \"warmup\": 4, \"warmup_start\": 0.5},\n"
    " \"batch\": 16, \"epochs\": 2, \"seed\": 5}\n",
    -1, NULL));
  char *by_hand = curve_of(base, G_N_ELEMENTS(base), (const char *const[]){"--config", hand, NULL});
  g_assert_cmpstr(by_hand, ==, by_flags);
  /* a flag beside --config replaces one field */
  char *one = curve_of(base, G_N_ELEMENTS(base), (const char *const[]){"--config", hand, "--epochs", "1", NULL});
  g_assert_true(g_str_has_prefix(one, "{\"epoch\": 1, "));
  g_assert_null(strstr(one, "{\"epoch\": 2, "));
  g_assert_cmpint(strncmp(one, by_flags, strcspn(one, "\n")), ==, 0);
  g_free(one);
  g_free(by_hand);
  g_free(by_saved);
  g_free(saving);
  g_free(by_flags);
  g_remove(hand);
  g_remove(saved);
  g_remove(model);
  g_free(hand);
  g_free(saved);
  g_free(model);
}

/* A model from `loom new --example` carries its settings: train needs no
 * --data, and the trained model keeps them. */
static void test_model_settings(void) {
  char *model = example("xor"), *out = tmp_path("xor-trained.loom");
  const char *base[] = {"train", model, "--json", "--epochs", "3"};
  char *own = curve_of(base, G_N_ELEMENTS(base), (const char *const[]){"--out", out, NULL});
  char *flags = curve_of(base, G_N_ELEMENTS(base),
                         (const char *const[]){"--data", "xor", "--lr", "0.05", "--batch", "16", NULL});
  g_assert_cmpstr(own, ==, flags);
  const char *again[] = {"train", out, "--epochs", "1", NULL};
  CliResult r = run(again);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_true(g_str_has_prefix(r.out, "epoch 1: loss "));
  cli_result_clear(&r);
  g_free(own);
  g_free(flags);
  g_remove(out);
  g_remove(model);
  g_free(out);
  g_free(model);
}

static void test_config_errors(void) {
  char *model = example("spiral"), *cfg = tmp_path("bad.json"), *grid = tmp_path("grid.loom");
  g_assert_true(g_file_set_contents(
    cfg, "{\"format\": \"loom-train-settings\", \"version\": 1, \"optimizer\": {\"lrr\": 1}}", -1, NULL));
  CliResult r = run((const char *const[]){"train", model, "--config", cfg, NULL});
  g_assert_cmpint(r.status, ==, 1);
  char *want = g_strdup_printf("loom train: %s: $.optimizer.lrr: unknown member (expected one of: name, lr, "
                               "weight_decay, momentum, dampening, nesterov, beta1, beta2, eps, amsgrad, alpha, "
                               "centered, maximize)\n", cfg);
  g_assert_cmpstr(r.err, ==, want);
  g_free(want);
  cli_result_clear(&r);
  r = run((const char *const[]){"new", "--grid", "1,1,2,1", "--input-shape", "2", "--out", grid, NULL});
  g_assert_cmpint(r.status, ==, 0);
  cli_result_clear(&r);
  r = run((const char *const[]){"train", grid, NULL});
  g_assert_cmpint(r.status, ==, 2);
  g_assert_true(g_str_has_prefix(r.err, "loom train: missing --data NAME|FILE.csv (or --config FILE)\n"));
  cli_result_clear(&r);
  g_remove(grid);
  g_remove(cfg);
  g_remove(model);
  g_free(grid);
  g_free(cfg);
  g_free(model);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-train-cli-XXXXXX", NULL);
  g_test_add_func("/cli/train/json-and-eval", test_train_json_and_eval);
  g_test_add_func("/cli/train/text-tween", test_train_text_tween);
  g_test_add_func("/cli/train/systolic-feedback", test_systolic_feedback);
  g_test_add_func("/cli/train/bad-csv", test_bad_csv);
  g_test_add_func("/cli/train/mismatch-and-usage", test_mismatch_and_usage);
  g_test_add_func("/cli/train/schedule-and-optimizer", test_schedule_and_optimizer_options);
  g_test_add_func("/cli/train/schedule-and-optimizer-errors", test_schedule_and_optimizer_errors);
  g_test_add_func("/cli/train/regression-accuracy", test_regression_accuracy);
  g_test_add_func("/cli/train/config-equals-flags", test_config_equals_flags);
  g_test_add_func("/cli/train/model-settings", test_model_settings);
  g_test_add_func("/cli/train/config-errors", test_config_errors);
  int rc = g_test_run();
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
