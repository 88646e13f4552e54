/* loom new / info / forward end to end, including exit codes and messages. */
#include <glib/gstdio.h>
#include <math.h>
#include <string.h>

#include "../io/tiny-model.h"
#include "cli-harness.h"
#include "tmp-dir.h"

static char *tmp_dir;

static char *tmp_path(const char *name) { return g_build_filename(tmp_dir, name, NULL); }

static CliResult run(const char *const *argv) { return cli_run(NULL, NULL, argv); }

/* Reads a .npy written by loom: returns the header dict and the data. */
static char *read_npy(const char *path, float **data, gsize *n) {
  char *bytes;
  gsize len;
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  g_assert_cmpmem(bytes, 8, "\x93NUMPY\x01\x00", 8);
  gsize hlen = (guint8)bytes[8] | ((gsize)(guint8)bytes[9] << 8);
  char *dict = g_strndup(bytes + 10, hlen);
  *n = (len - 10 - hlen) / 4;
  *data = g_memdup2(bytes + 10 + hlen, len - 10 - hlen);
  g_free(bytes);
  return dict;
}

static void test_new_list(void) {
  const char *argv[] = {"new", "--list", NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  /* the names' column is as wide as the longest name (playground-int4) */
  g_assert_nonnull(strstr(r.out, "xor              XOR\n"));
  g_assert_nonnull(strstr(r.out, "spiral           Two spirals\n"));
  g_assert_nonnull(strstr(r.out, "hop              Hops across the grid\n"));
  g_assert_nonnull(strstr(r.out, "moe              Mixture of experts\n"));
  g_assert_nonnull(strstr(r.out, "cnn              Digits CNN\n"));
  g_assert_nonnull(strstr(r.out, "playground       Playground\n"));
  g_assert_nonnull(strstr(r.out, "playground-int4  Playground at int4\n"));
  g_assert_nonnull(strstr(r.out, "playground-skip  Playground with a skip link\n"));
  g_assert_nonnull(strstr(r.out, "feedback         Feedback loop\n"));
  g_assert_nonnull(strstr(r.out, "transformer      Tiny transformer\n"));
  g_assert_nonnull(strstr(r.out, "multi-agent      Multi-agent choice\n"));
  g_assert_nonnull(strstr(r.out, "multi-modal      Multi-modal views\n"));
  g_assert_cmpstr(r.err, ==, "");
  cli_result_clear(&r);
}

static void test_new_example_and_info(void) {
  char *path = tmp_path("xor.loom.json");
  const char *argv[] = {"new", "--example", "xor", "--out", path, NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  char *wrote = g_strdup_printf("wrote %s\n", path);
  g_assert_cmpstr(r.out, ==, wrote);
  g_free(wrote);
  cli_result_clear(&r);
  char *text;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_assert_true(g_str_has_prefix(text, "{\n  \"format\": \"loom-model\",\n  \"version\": 1,\n"));
  g_free(text);

  const char *info[] = {"info", path, NULL};
  r = run(info);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "Grid: depth 1, rows 1, columns 4, 1 layer per cell (4 slots)\n"));
  g_assert_nonnull(strstr(r.out, "Input shape: [2]\n"));
  g_assert_nonnull(strstr(r.out, "Output shape: [1]\n"));
  g_assert_nonnull(strstr(r.out, "4 layers:\n"));
  g_assert_nonnull(strstr(r.out, "(0,0,0,0)   dense      [2] → [4]  float32  12 parameters, 48 bytes\n"));
  g_assert_nonnull(strstr(r.out, "in_features=2 out_features=4 bias=true\n"));
  g_assert_nonnull(strstr(r.out, "(0,0,1,0)   tanh       [4] → [4]  float32  0 parameters, 0 bytes\n"));
  g_assert_nonnull(strstr(r.out, "0 links:\n"));
  g_assert_nonnull(strstr(r.out, "  parameters: 17\n"));
  g_assert_nonnull(strstr(r.out, "  bytes: 68 at the layers' dtypes, 68 at float32\n"));
  g_assert_nonnull(strstr(r.out, "Problems: none\n"));
  cli_result_clear(&r);
  g_free(path);
}

static void test_new_every_example_passes_info(void) {
  const char *names[] = {"xor", "spiral", "hop", "moe", "cnn"};
  for (size_t i = 0; i < G_N_ELEMENTS(names); i++) {
    char *path = tmp_path("ex.loom.json");
    const char *argv[] = {"new", "--example", names[i], "--out", path, NULL};
    CliResult r = run(argv);
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
    const char *info[] = {"info", path, NULL};
    r = run(info);
    if (r.status != 0) g_error("%s: %s%s", names[i], r.out, r.err);
    g_assert_nonnull(strstr(r.out, "Problems: none\n"));
    if (strcmp(names[i], "hop") == 0) {
      g_assert_nonnull(strstr(r.out, "2 links:\n  (0,0,1,0) → (1,0,1,0)  add\n  (0,0,0,0) → (1,1,2,0)  concat\n"));
    }
    if (strcmp(names[i], "moe") == 0) {
      g_assert_nonnull(strstr(r.out, "child 3: dense float32"));
      g_assert_nonnull(strstr(r.out, "combine=route"));
      g_assert_nonnull(strstr(r.out, "gate: sequential float32"));
      g_assert_nonnull(strstr(r.out, "child 1: grid_softmax float32  rows=2 cols=4\n"));
    }
    cli_result_clear(&r);
    g_free(path);
  }
}

static void test_new_grid(void) {
  char *path = tmp_path("grid.loom.json");
  const char *argv[] = {"new", "--grid", "2,3,4,1", "--input-shape", "3,8,8", "--out", path, NULL};
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 0);
  cli_result_clear(&r);
  char *text;
  g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
  g_assert_nonnull(strstr(text, "\"grid\": {\"depth\": 2, \"rows\": 3, \"cols\": 4, \"layers_per_cell\": 1}"));
  g_assert_nonnull(strstr(text, "\"input_shape\": [3, 8, 8]"));
  g_free(text);
  const char *info[] = {"info", path, NULL};
  r = run(info);
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "Grid: depth 2, rows 3, columns 4, 1 layer per cell (24 slots)\n"));
  g_assert_nonnull(strstr(r.out, "0 layers:\n"));
  cli_result_clear(&r);

  /* Without an input shape nothing can be inferred: info says so and fails. */
  const char *argv2[] = {"new", "--grid=1,1,1,1", "--out", path, NULL};
  r = run(argv2);
  g_assert_cmpint(r.status, ==, 0);
  cli_result_clear(&r);
  r = run(info);
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.out, "Problems: the input shape is not set"));
  g_assert_nonnull(strstr(r.out, "Grid: depth 1, rows 1, columns 1, 1 layer per cell (1 slot)\n"));
  cli_result_clear(&r);
  g_free(path);
}

static void expect_usage(const char *const *argv, const char *message) {
  CliResult r = run(argv);
  g_assert_cmpint(r.status, ==, 2);
  if (!strstr(r.err, message)) g_error("expected '%s' in: %s", message, r.err);
  g_assert_nonnull(strstr(r.err, "--help"));
  g_assert_cmpstr(r.out, ==, "");
  cli_result_clear(&r);
}

static void test_new_errors(void) {
  expect_usage((const char *[]){"new", NULL}, "loom new: give either --grid D,R,C,L or --example NAME");
  expect_usage((const char *[]){"new", "--grid", "1,2", "--out", "x", NULL},
               "loom new: --grid needs four positive integers D,R,C,L (depth, rows, columns, layers per cell), not '1,2'");
  expect_usage((const char *[]){"new", "--grid", "1,0,1,1", "--out", "x", NULL}, "not '1,0,1,1'");
  expect_usage((const char *[]){"new", "--grid", "1,1,1,1", "--example", "xor", "--out", "x", NULL},
               "give either --grid D,R,C,L or --example NAME");
  expect_usage((const char *[]){"new", "--list", "--force", NULL}, "loom new: --list takes no other options");
  expect_usage((const char *[]){"new", "--example", "lstm", "--out", "x", NULL},
               "loom new: unknown example 'lstm' (expected one of: xor, spiral, hop, moe, cnn, playground, "
               "playground-int4, playground-skip, feedback, transformer, multi-agent, multi-modal)");
  expect_usage((const char *[]){"new", "--grid", "1,1,1,1", "--input-shape", "3,x", "--out", "x", NULL},
               "--input-shape needs 1 to 4 positive integers separated by commas, not '3,x'");
  expect_usage((const char *[]){"new", "--out", NULL}, "option '--out' needs a value");
  expect_usage((const char *[]){"new", "--bogus", NULL}, "unexpected argument '--bogus'");

  char *bad = g_build_filename(tmp_dir, "no-such-dir", "m.loom.json", NULL);
  CliResult r = run((const char *[]){"new", "--example", "xor", "--out", bad, NULL});
  g_assert_cmpint(r.status, ==, 1);
  char *want = g_strdup_printf("loom new: %s: cannot create a temporary file", bad);
  g_assert_true(g_str_has_prefix(r.err, want));
  cli_result_clear(&r);
  g_free(want);
  g_free(bad);
}

static const char *known_model = TINY_MODEL_JSON("AACAPwAAAMAAAEBAAACAwA==");

static void test_forward_values_and_threads(void) {
  char *model = tmp_path("known.loom.json");
  g_assert_true(g_file_set_contents(model, known_model, -1, NULL));
  char *x = tmp_path("x.npy"), *y1 = tmp_path("y1.npy"), *y2 = tmp_path("y2.npy");
  /* W = [[1, -2], [3, -4]]; the add link doubles W·x before tanh. */
  float xs[6] = {1, 1, 0.5f, 0, -0.25f, 0.125f};
  cli_write_npy(x, (int64_t[]){3, 2}, 2, xs);
  CliResult r = run((const char *[]){"forward", model, "--input", x, "--output", y1, "--threads", "1", NULL});
  if (r.status) g_error("%s", r.err);
  cli_result_clear(&r);
  r = run((const char *[]){"forward", model, "--input=" , NULL});
  g_assert_cmpint(r.status, ==, 2);
  cli_result_clear(&r);
  char *in_opt = g_strdup_printf("--input=%s", x);
  r = run((const char *[]){"forward", "--threads=2", in_opt, "--output", y2, model, NULL});
  g_assert_cmpint(r.status, ==, 0);
  cli_result_clear(&r);
  float *d1, *d2;
  gsize n1, n2;
  char *h1 = read_npy(y1, &d1, &n1), *h2 = read_npy(y2, &d2, &n2);
  g_assert_nonnull(strstr(h1, "'shape': (3, 2)"));
  g_assert_cmpstr(h1, ==, h2);
  g_assert_cmpuint(n1, ==, 6);
  g_assert_cmpmem(d1, n1 * 4, d2, n2 * 4);
  /* tanh(2·(x0 − 2·x1)), tanh(2·(3·x0 − 4·x1)) for the three samples. */
  const double expect[6] = {-0.9640275800758169, -0.9640275800758169, 0.7615941559557649,
                          0.9950547536867305,  -0.7615941559557649, -0.9866142981514303};
  for (int k = 0; k < 6; k++) g_assert_cmpfloat_with_epsilon(d1[k], expect[k], 1e-6);
  g_free(d1);
  g_free(d2);
  g_free(h1);
  g_free(h2);

  /* More samples than one part of the CPU forward (256, cli/cmd-forward.c):
   * every sample's output lands at its own place. */
  enum { MANY = 600 };
  float *many = g_new(float, 2 * MANY);
  for (int i = 0; i < 2 * MANY; i++) many[i] = (float)((i * 37) % 101 - 50) / 64.0f;
  cli_write_npy(x, (int64_t[]){MANY, 2}, 2, many);
  r = run((const char *[]){"forward", model, "--input", x, "--output", y1, NULL});
  g_assert_cmpint(r.status, ==, 0);
  cli_result_clear(&r);
  h1 = read_npy(y1, &d1, &n1);
  g_assert_cmpuint(n1, ==, 2 * MANY);
  for (int s = 0; s < MANY; s++) {
    const double x0 = many[2 * s], x1 = many[2 * s + 1];
    g_assert_cmpfloat_with_epsilon(d1[2 * s], tanh(2 * (x0 - 2 * x1)), 1e-6);
    g_assert_cmpfloat_with_epsilon(d1[2 * s + 1], tanh(2 * (3 * x0 - 4 * x1)), 1e-6);
  }
  g_free(d1);
  g_free(h1);
  g_free(many);

  /* One sample of exactly the input shape gives the output shape alone. */
  cli_write_npy(x, (int64_t[]){2}, 1, xs + 2);
  r = run((const char *[]){"forward", model, "--input", x, "--output", y1, NULL});
  g_assert_cmpint(r.status, ==, 0);
  cli_result_clear(&r);
  h1 = read_npy(y1, &d1, &n1);
  g_assert_nonnull(strstr(h1, "'shape': (2,)"));
  g_assert_cmpfloat_with_epsilon(d1[0], 0.7615941559557649, 1e-6);
  g_assert_cmpfloat_with_epsilon(d1[1], 0.9950547536867305, 1e-6);
  g_free(d1);
  g_free(h1);

  /* An input that fits neither way names the file and both shapes. */
  cli_write_npy(x, (int64_t[]){2, 3}, 2, xs);
  r = run((const char *[]){"forward", model, "--input", x, "--output", y1, NULL});
  g_assert_cmpint(r.status, ==, 1);
  char *want = g_strdup_printf("loom forward: %s: array of shape [2×3] does not fit the model's input shape [2] "
                               "(expected [2] for one sample or batch × [2])\n",
                               x);
  g_assert_cmpstr(r.err, ==, want);
  g_free(want);
  cli_result_clear(&r);
  g_free(in_opt);
  g_free(model);
  g_free(x);
  g_free(y1);
  g_free(y2);
}

/* A file of more samples than one part of the CPU forward (256,
 * cli/cmd-forward.c), on the digits CNN (64 inputs, 10 outputs a sample):
 * the last 44 samples run alone give the bits of the same samples in the
 * whole file, at float32 and at rest. */
static void test_forward_in_parts(void) {
  char *model = tmp_path("cnn.loom"), *x = tmp_path("x300.npy"), *x44 = tmp_path("x44.npy");
  char *y = tmp_path("y300.npy"), *y44 = tmp_path("y44.npy");
  CliResult r = run((const char *[]){"new", "--example", "cnn", "--out", model, "--force", NULL});
  if (r.status) g_error("%s", r.err);
  cli_result_clear(&r);
  enum { N = 300, TAIL = 44, IN = 64, OUT = 10 };
  float *xs = g_new(float, N * IN);
  for (int i = 0; i < N * IN; i++) xs[i] = (float)((i * 7919) % 255) / 255.0f;
  cli_write_npy(x, (int64_t[]){N, 1, 8, 8}, 4, xs);
  cli_write_npy(x44, (int64_t[]){TAIL, 1, 8, 8}, 4, xs + (N - TAIL) * IN);
  for (int rest = 0; rest < 2; rest++) {
    const char *inference = rest ? "--inference" : "--threads=1";
    r = run((const char *[]){"forward", model, "--input", x, "--output", y, inference, NULL});
    if (r.status) g_error("%s", r.err);
    cli_result_clear(&r);
    r = run((const char *[]){"forward", model, "--input", x44, "--output", y44, inference, NULL});
    if (r.status) g_error("%s", r.err);
    cli_result_clear(&r);
    float *d, *d44;
    gsize n, n44;
    char *h = read_npy(y, &d, &n), *h44 = read_npy(y44, &d44, &n44);
    g_assert_cmpuint(n, ==, N * OUT);
    g_assert_cmpuint(n44, ==, TAIL * OUT);
    g_assert_cmpmem(d + (N - TAIL) * OUT, TAIL * OUT * sizeof *d, d44, n44 * sizeof *d44);
    g_free(d);
    g_free(d44);
    g_free(h);
    g_free(h44);
  }
  g_free(xs);
  g_free(model);
  g_free(x);
  g_free(x44);
  g_free(y);
  g_free(y44);
}

/* --inference: float32 rests as its master (the same bits as the plain
 * forward); at int4 the dense layer multiplies the codes with int8
 * activations, within docs/dtypes.md's bound and with the same bits for any
 * thread count. loom info reports the resident bytes either way. */
static void test_forward_and_info_inference(void) {
  char *model = tmp_path("inf.loom.json"), *m4 = tmp_path("inf4.loom.json");
  g_assert_true(g_file_set_contents(model, known_model, -1, NULL));
  CliResult r = run((const char *[]){"convert", model, "--to", "json", "--dtype", "int4", "--out", m4, NULL});
  if (r.status) g_error("%s", r.err);
  cli_result_clear(&r);
  char *x = tmp_path("inf-x.npy"), *y0 = tmp_path("inf-y0.npy"), *y1 = tmp_path("inf-y1.npy"),
       *y2 = tmp_path("inf-y2.npy");
  float xs[6] = {1, 1, 0.5f, 0, -0.25f, 0.125f};
  cli_write_npy(x, (int64_t[]){3, 2}, 2, xs);
  float *d0, *d1, *d2;
  gsize n0, n1, n2;
  for (int k = 0; k < 2; k++) {
    const char *m = k ? m4 : model;
    r = run((const char *[]){"forward", m, "--input", x, "--output", y0, NULL});
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
    r = run((const char *[]){"forward", m, "--inference", "--input", x, "--output", y1, "--threads", "1", NULL});
    if (r.status) g_error("%s", r.err);
    cli_result_clear(&r);
    r = run((const char *[]){"forward", m, "--input", x, "--output", y2, "--threads", "2", "--inference", NULL});
    g_assert_cmpint(r.status, ==, 0);
    cli_result_clear(&r);
    g_free(read_npy(y0, &d0, &n0));
    g_free(read_npy(y1, &d1, &n1));
    g_free(read_npy(y2, &d2, &n2));
    g_assert_cmpuint(n0, ==, 6);
    g_assert_cmpmem(d1, n1 * 4, d2, n2 * 4);
    if (!k) g_assert_cmpmem(d0, n0 * 4, d1, n1 * 4);
    /* -0.25, 0.125 is off the int8 grid: the integer path shows in the last sample. */
    if (k) g_assert_true(memcmp(d0 + 4, d1 + 4, 2 * sizeof *d0) != 0);
    /* int4, per row: W = [[8/7, -2], [20/7, -4]]; the add link doubles W·x
     * (tanh does not widen a difference), the activation term of the bound
     * is s_x · Σ|W[r]| / 2 with s_x = max|x| / 127. */
    const double abs_w[2] = {8.0 / 7 + 2, 20.0 / 7 + 4};
    for (int i = 0; k && i < 6; i++) {
      double sx = MAX(ABS(xs[i / 2 * 2]), ABS(xs[i / 2 * 2 + 1])) / 127.0;
      g_assert_cmpfloat(ABS(d1[i] - d0[i]), <=, sx * abs_w[i % 2] + 1e-6);
    }
    g_free(d0);
    g_free(d1);
    g_free(d2);
  }

  r = run((const char *[]){"info", m4, NULL});
  g_assert_cmpint(r.status, ==, 0);
  /* master 16 + codes 2 + scales 8 + gradient 16; at rest codes + scales;
   * training adds the dequantized copy. */
  g_assert_nonnull(
    strstr(r.out, "  resident bytes: 42 now (as loaded); 10 at rest for inference, 58 while training\n"));
  cli_result_clear(&r);
  r = run((const char *[]){"info", "--inference", m4, NULL});
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "  resident bytes: 10 now (at rest); 10 at rest for inference, 58 while training\n"));
  cli_result_clear(&r);
  r = run((const char *[]){"info", model, "--inference", NULL});
  g_assert_nonnull(strstr(r.out, "  resident bytes: 16 now (at rest); 16 at rest for inference, 32 while training\n"));
  cli_result_clear(&r);

  r = run((const char *[]){"forward", m4, "--inference", "--device", "vulkan", "--input", x, "--output", y1, NULL});
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(
    strstr(r.err, "loom forward: --inference runs on the CPU; it cannot be combined with --device vulkan"));
  cli_result_clear(&r);
  g_free(model);
  g_free(m4);
  g_free(x);
  g_free(y0);
  g_free(y1);
  g_free(y2);
}

static void test_forward_and_info_errors(void) {
  expect_usage((const char *[]){"forward", NULL}, "loom forward: missing MODEL");
  expect_usage((const char *[]){"forward", "m", "--output", "y", NULL}, "loom forward: missing --input X.npy");
  expect_usage((const char *[]){"forward", "m", "--input", "x", NULL}, "loom forward: missing --output Y.npy");
  expect_usage((const char *[]){"forward", "m", "--input", "x", "--output", "y", "--threads", "0", NULL},
               "loom forward: --threads needs an integer from 1 to 1024, not '0'");
  expect_usage((const char *[]){"forward", "m", "n", NULL}, "unexpected argument 'n'");
  expect_usage((const char *[]){"info", NULL}, "loom info: missing MODEL");
  expect_usage((const char *[]){"info", "a", "b", NULL}, "loom info: unexpected argument 'b'");
  expect_usage((const char *[]){"info", "--verbose", NULL}, "loom info: unknown option '--verbose'");

  char *missing = tmp_path("missing.loom.json");
  CliResult r = run((const char *[]){"info", missing, NULL});
  g_assert_cmpint(r.status, ==, 1);
  char *want = g_strdup_printf("loom info: %s: cannot open: No such file or directory\n", missing);
  g_assert_cmpstr(r.err, ==, want);
  g_free(want);
  cli_result_clear(&r);

  /* A hostile file: the error names the JSON path. */
  char *bad = tmp_path("bad.loom.json");
  char *text = g_strdup(known_model);
  memcpy(strstr(text, "\"tanh\""), "\"tanq\"", 6);
  g_assert_true(g_file_set_contents(bad, text, -1, NULL));
  r = run((const char *[]){"info", bad, NULL});
  g_assert_cmpint(r.status, ==, 1);
  want = g_strdup_printf("loom info: %s: $.slots[1].layer.type: unknown layer type “tanq”\n", bad);
  g_assert_cmpstr(r.err, ==, want);
  g_free(want);
  cli_result_clear(&r);
  char *x = tmp_path("x2.npy"), *y = tmp_path("never-written.npy");
  cli_write_npy(x, (int64_t[]){2}, 1, (float[]){1, 2});
  r = run((const char *[]){"forward", bad, "--input", x, "--output", y, NULL});
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, "$.slots[1].layer.type: unknown layer type “tanq”"));
  g_assert_false(g_file_test(y, G_FILE_TEST_EXISTS));
  cli_result_clear(&r);
  g_free(text);

  /* A file that loads but whose network has a shape problem: info lists it, exit 1. */
  const char *problem =
    "{\"format\": \"loom-model\", \"version\": 1,\n"
    " \"grid\": {\"depth\": 1, \"rows\": 1, \"cols\": 1, \"layers_per_cell\": 1},\n"
    " \"input_shape\": [3],\n"
    " \"slots\": [{\"at\": [0, 0, 0, 0], \"enabled\": true, \"layer\": {\"type\": \"dense\", \"dtype\": "
    "\"float32\", \"params\": {\"in_features\": 2, \"out_features\": 2, \"bias\": true}}}],\n"
    " \"links\": []}\n";
  g_assert_true(g_file_set_contents(bad, problem, -1, NULL));
  r = run((const char *[]){"info", bad, NULL});
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.out, "1 problem:\n  (0,0,0,0): "));
  g_assert_nonnull(strstr(r.out, "in_features is 2 but the input [3] has 3 values"));
  cli_result_clear(&r);
  r = run((const char *[]){"forward", bad, "--input", x, "--output", y, NULL});
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, "the network cannot run: (0,0,0,0): "));
  cli_result_clear(&r);
  g_free(x);
  g_free(y);
  g_free(bad);
  g_free(missing);
}

/* Without --out: NAME.loom.json or network.loom.json in the current
 * directory, never replacing an existing one unless --force. */
static void test_new_default_out(void) {
  char *dir = g_build_filename(tmp_dir, "cwd", NULL);
  g_assert_cmpint(g_mkdir(dir, 0700), ==, 0);
  char *here = g_get_current_dir();
  g_assert_cmpint(g_chdir(dir), ==, 0);
  CliResult r = run((const char *[]){"new", "--example", "moe", NULL});
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.out, ==, "wrote moe.loom.json\n");
  cli_result_clear(&r);
  g_assert_true(g_file_test("moe.loom.json", G_FILE_TEST_IS_REGULAR));
  g_assert_true(g_file_set_contents("moe.loom.json", "keep me", -1, NULL));
  r = run((const char *[]){"new", "--example", "moe", NULL});
  g_assert_cmpint(r.status, ==, 1);
  g_assert_cmpstr(r.out, ==, "");
  g_assert_cmpstr(r.err, ==,
                  "loom new: moe.loom.json already exists; give --force to replace it or --out to choose another file\n");
  cli_result_clear(&r);
  char *text;
  g_assert_true(g_file_get_contents("moe.loom.json", &text, NULL, NULL));
  g_assert_cmpstr(text, ==, "keep me");
  g_free(text);
  r = run((const char *[]){"new", "--example", "moe", "--force", NULL});
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.out, ==, "wrote moe.loom.json\n");
  cli_result_clear(&r);
  g_assert_true(g_file_get_contents("moe.loom.json", &text, NULL, NULL));
  g_assert_true(g_str_has_prefix(text, "{\n  \"format\": \"loom-model\""));
  g_free(text);
  r = run((const char *[]){"new", "--grid", "1,1,2,1", "--input-shape", "3", NULL});
  g_assert_cmpint(r.status, ==, 0);
  g_assert_cmpstr(r.out, ==, "wrote network.loom.json\n");
  cli_result_clear(&r);
  r = run((const char *[]){"new", "--grid", "1,1,2,1", NULL});
  g_assert_cmpint(r.status, ==, 1);
  g_assert_true(g_str_has_prefix(r.err, "loom new: network.loom.json already exists"));
  cli_result_clear(&r);
  r = run((const char *[]){"info", "network.loom.json", NULL});
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "Grid: depth 1, rows 1, columns 2, 1 layer per cell (2 slots)\n"));
  g_assert_nonnull(strstr(r.out, "Input shape: [3]\n"));
  cli_result_clear(&r);
  g_remove("moe.loom.json");
  g_remove("network.loom.json");
  g_assert_cmpint(g_chdir(here), ==, 0);
  g_rmdir(dir);
  g_free(here);
  g_free(dir);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  GError *gerr = NULL;
  tmp_dir = g_dir_make_tmp("loom-cli-model-XXXXXX", &gerr);
  g_assert_no_error(gerr);
  g_test_add_func("/cli/model/new-list", test_new_list);
  g_test_add_func("/cli/model/new-example-and-info", test_new_example_and_info);
  g_test_add_func("/cli/model/every-example-passes-info", test_new_every_example_passes_info);
  g_test_add_func("/cli/model/new-grid", test_new_grid);
  g_test_add_func("/cli/model/new-default-out", test_new_default_out);
  g_test_add_func("/cli/model/new-errors", test_new_errors);
  g_test_add_func("/cli/model/forward-values-and-threads", test_forward_values_and_threads);
  g_test_add_func("/cli/model/forward-in-parts", test_forward_in_parts);
  g_test_add_func("/cli/model/forward-and-info-errors", test_forward_and_info_errors);
  g_test_add_func("/cli/model/forward-and-info-inference", test_forward_and_info_inference);
  int rc = g_test_run();
  tmp_dir_remove(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
