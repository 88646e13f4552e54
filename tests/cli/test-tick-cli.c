/* loom tick (systolic runs with a trace) and loom forward on sequences, end to end. */
#include <glib/gstdio.h>
#include <string.h>

#include "cli-harness.h"

static char *tmp_dir;

static char *tmp_path(const char *name) { return g_build_filename(tmp_dir, name, NULL); }

static CliResult run(const char *const *argv) { return cli_run(NULL, NULL, argv); }

/* A file's bytes (a .npy header holds NUL bytes: compare with same_file, search with has_text). */
static GBytes *file_bytes(const char *path) {
  char *data;
  gsize len;
  g_assert_true(g_file_get_contents(path, &data, &len, NULL));
  return g_bytes_new_take(data, len);
}

static gboolean has_text(GBytes *b, const char *needle) {
  gsize len;
  const char *data = g_bytes_get_data(b, &len);
  return g_strstr_len(data + 10, (gssize)(len - 10), needle) != NULL;
}

static char *file_text(const char *path) {
  char *text;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  return text;
}

static void expect_ok(const char *const *argv) {
  CliResult r = run(argv);
  if (r.status != 0) g_error("loom %s failed: %s", argv[0], r.err);
  cli_result_clear(&r);
}

static char *example(const char *name) {
  char *file = g_strdup_printf("%s.json", name), *path = cli_new_example(name, tmp_dir, file);
  g_free(file);
  return path;
}

static void test_tick_trace(void) {
  char *model = example("feedback"), *x = tmp_path("x.npy"), *trace = tmp_path("t.jsonl");
  const float xs[8] = {0.5f, -1, 2, 0.25f, 1, 1, 1, 1};
  cli_write_npy(x, (const int64_t[]){2, 4}, 2, xs);
  char *y1 = tmp_path("y1.npy"), *y3 = tmp_path("y3.npy");
  const char *a[] = {"tick", model, "--input", x, "--ticks", "12", "--trace", trace, "--output", y1, "--threads", "1",
                     NULL};
  expect_ok(a);
  const char *b[] = {"tick", model, "--input", x, "--ticks", "12", "--output", y3, "--threads", "3", NULL};
  expect_ok(b);
  GBytes *t1 = file_bytes(y1), *t3 = file_bytes(y3);
  g_assert_true(g_bytes_equal(t1, t3)); /* any thread count, the same bits */
  g_assert_true(has_text(t1, "'shape': (2, 2)"));
  char *tr = file_text(trace);
  char **lines = g_strsplit(tr, "\n", -1);
  g_assert_cmpint(g_strv_length(lines), ==, 13); /* 12 lines and the empty rest */
  for (int t = 0; t < 12; t++) {
    char *head = g_strdup_printf("{\"tick\":%d,\"slots\":[{\"at\":[0,0,0,0],\"mean\":", t + 1);
    g_assert_true(g_str_has_prefix(lines[t], head));
    g_assert_nonnull(strstr(lines[t], "{\"at\":[0,0,2,0],"));
    g_free(head);
  }
  /* After tick 1 only the tanh slot still holds zeros (the head already shows its bias). */
  g_assert_nonnull(strstr(lines[0], "{\"at\":[0,0,1,0],\"mean\":0,\"norm\":0}"));
  g_strfreev(lines);
  const char *info[] = {"info", model, NULL};
  CliResult ri = run(info);
  g_assert_cmpint(ri.status, ==, 0);
  g_assert_nonnull(strstr(ri.out, "Execution: systolic (tick by tick; feedback links allowed)\n"));
  cli_result_clear(&ri);
  /* The same network refuses feed-forward execution. */
  const char *f[] = {"forward", model, "--input", x, "--output", y3, NULL};
  CliResult r = run(f);
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, "link (0,0,1,0) → (0,0,0,0) points backwards"));
  cli_result_clear(&r);
  const char *bad[] = {"tick", model, "--input", x, "--ticks", "0", NULL};
  r = run(bad);
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "--ticks needs an integer from 1 to"));
  cli_result_clear(&r);
  g_free(tr);
  g_bytes_unref(t1);
  g_bytes_unref(t3);
  g_free(y1);
  g_free(y3);
  g_free(trace);
  g_free(x);
  g_free(model);
}

/* A feed-forward model run for as many ticks as it has layers gives its forward output. */
static void test_tick_equals_forward(void) {
  char *model = example("xor"), *x = tmp_path("xx.npy"), *yt = tmp_path("yt.npy"), *yf = tmp_path("yf.npy");
  const float xs[6] = {0, 1, 1, 1, -0.5f, 0.25f};
  cli_write_npy(x, (const int64_t[]){3, 2}, 2, xs);
  const char *a[] = {"tick", model, "--input", x, "--ticks", "4", "--output", yt, NULL};
  expect_ok(a);
  const char *b[] = {"forward", model, "--input", x, "--output", yf, NULL};
  expect_ok(b);
  GBytes *t = file_bytes(yt), *f = file_bytes(yf);
  g_assert_true(g_bytes_equal(t, f));
  g_bytes_unref(t);
  g_bytes_unref(f);
  g_free(model);
  g_free(x);
  g_free(yt);
  g_free(yf);
}

/* loom forward carries batch × steps × features through an lstm. */
static void test_forward_sequence(void) {
  char *model = tmp_path("lstm.json"), *x = tmp_path("seq.npy"), *y = tmp_path("seq-y.npy");
  const char *json =
    "{\"format\": \"loom-model\", \"version\": 1,\n"
    " \"grid\": {\"depth\": 1, \"rows\": 1, \"cols\": 2, \"layers_per_cell\": 1},\n"
    " \"input_shape\": [5, 3],\n"
    " \"slots\": [\n"
    "  {\"at\": [0, 0, 0, 0], \"enabled\": true, \"layer\": {\"type\": \"lstm\", \"dtype\": \"float32\", \"params\": "
    "{\"input_size\": 3, \"hidden_size\": 4, \"bias\": true, \"output\": \"sequence\", \"carry_state\": false}}},\n"
    "  {\"at\": [0, 0, 1, 0], \"enabled\": true, \"layer\": {\"type\": \"dense\", \"dtype\": \"float32\", \"params\": "
    "{\"in_features\": 4, \"out_features\": 2, \"bias\": true}}}],\n"
    " \"links\": []}\n";
  g_assert_true(g_file_set_contents(model, json, -1, NULL));
  float xs[3 * 5 * 3];
  for (int i = 0; i < 45; i++) xs[i] = (float)((i * 7) % 11) / 5.0f - 1.0f;
  cli_write_npy(x, (const int64_t[]){3, 5, 3}, 3, xs);
  const char *a[] = {"forward", model, "--input", x, "--output", y, NULL};
  expect_ok(a);
  GBytes *t = file_bytes(y);
  g_assert_true(has_text(t, "'shape': (3, 5, 2)"));
  g_bytes_unref(t);
  /* A sequence of the wrong width names both shapes. */
  cli_write_npy(x, (const int64_t[]){2, 5, 4}, 3, xs);
  CliResult r = run(a);
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, "array of shape [2×5×4] does not fit the model's input shape [5×3]"));
  cli_result_clear(&r);
  g_free(model);
  g_free(x);
  g_free(y);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  tmp_dir = g_dir_make_tmp("loom-tick-XXXXXX", NULL);
  g_test_add_func("/tick-cli/trace", test_tick_trace);
  g_test_add_func("/tick-cli/equals-forward", test_tick_equals_forward);
  g_test_add_func("/tick-cli/forward-sequence", test_forward_sequence);
  int rc = g_test_run();
  char *rm[] = {"rm", "-rf", tmp_dir, NULL};
  g_spawn_sync(NULL, rm, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, NULL, NULL);
  g_free(tmp_dir);
  return rc;
}
