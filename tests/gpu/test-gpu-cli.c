/*
 * loom info --devices, loom forward --device and loom train --device end to
 * end: the playground and moe examples give the same outputs on vulkan as
 * on the CPU (within the network tolerance of docs/gpu.md), the spiral example
 * trains to the same per-epoch losses (docs/gpu.md "Training on the
 * device"), and a network or configuration the device cannot run is refused
 * with the slot or field named, exit status 1. Skips without a Vulkan device.
 */
#include <glib/gstdio.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cli/cli-harness.h"

static char *tmp_dir;

static CliResult run(const char *const *argv) { return cli_run(NULL, NULL, argv); }

static float *read_npy_data(const char *path, gsize *n) {
  char *bytes;
  gsize len;
  g_assert_true(g_file_get_contents(path, &bytes, &len, NULL));
  gsize hlen = (guint8)bytes[8] | ((gsize)(guint8)bytes[9] << 8);
  *n = (len - 10 - hlen) / 4;
  float *data = g_memdup2(bytes + 10 + hlen, len - 10 - hlen);
  g_free(bytes);
  return data;
}

static char *make_example(const char *name) {
  char *file = g_strdup_printf("%s.loom.json", name);
  char *path = g_build_filename(tmp_dir, file, NULL);
  CliResult r = run((const char *[]){"new", "--example", name, "--out", path, NULL});
  if (r.status) g_error("%s", r.err);
  cli_result_clear(&r);
  g_free(file);
  return path;
}

static void test_devices(void) {
  CliResult r = run((const char *[]){"info", "--devices", NULL});
  g_assert_cmpint(r.status, ==, 0);
  g_assert_nonnull(strstr(r.out, "vulkan:0  "));
  cli_result_clear(&r);
  r = run((const char *[]){"info", "--devices", "model", NULL});
  g_assert_cmpint(r.status, ==, 2);
  cli_result_clear(&r);
}

static void test_forward_parity(void) {
  char *model = make_example("playground");
  char *x = g_build_filename(tmp_dir, "x.npy", NULL), *yc = g_build_filename(tmp_dir, "yc.npy", NULL),
       *yg = g_build_filename(tmp_dir, "yg.npy", NULL);
  float xs[2 * 9];
  for (int i = 0; i < 18; i++) xs[i] = (float)(0.37 * i - 3.1);
  cli_write_npy(x, (const int64_t[]){9, 2}, 2, xs);
  CliResult r = run((const char *[]){"forward", model, "--input", x, "--output", yc, "--device", "cpu", NULL});
  if (r.status) g_error("%s", r.err);
  cli_result_clear(&r);
  r = run((const char *[]){"forward", model, "--input", x, "--output", yg, "--device", "vulkan:0", NULL});
  if (r.status) g_error("%s", r.err);
  cli_result_clear(&r);
  gsize nc, ng;
  float *c = read_npy_data(yc, &nc), *g = read_npy_data(yg, &ng);
  g_assert_cmpuint(nc, ==, 9);
  g_assert_cmpuint(ng, ==, nc);
  double scale = 0;
  for (gsize i = 0; i < nc; i++) scale = fmax(scale, fabs(c[i]));
  for (gsize i = 0; i < nc; i++) g_assert_cmpfloat(fabs(c[i] - g[i]), <=, 2e-5 * fabs(c[i]) + 2e-6 * scale);
  g_free(c);
  g_free(g);

  /* A mixture of experts (a route container and its gate) runs there too. */
  char *moe = make_example("moe");
  float tokens[2 * 4] = {0.5f, -1, 2, 0.25f, -0.75f, 1.5f, 0, -2};
  cli_write_npy(x, (const int64_t[]){2, 4}, 2, tokens);
  r = run((const char *[]){"forward", moe, "--input", x, "--output", yc, "--device", "cpu", NULL});
  if (r.status) g_error("%s", r.err);
  cli_result_clear(&r);
  r = run((const char *[]){"forward", moe, "--input", x, "--output", yg, "--device", "vulkan", NULL});
  if (r.status) g_error("%s", r.err);
  cli_result_clear(&r);
  c = read_npy_data(yc, &nc);
  g = read_npy_data(yg, &ng);
  g_assert_cmpuint(nc, ==, 6);
  g_assert_cmpuint(ng, ==, nc);
  scale = 0;
  for (gsize i = 0; i < nc; i++) scale = fmax(scale, fabs(c[i]));
  for (gsize i = 0; i < nc; i++) g_assert_cmpfloat(fabs(c[i] - g[i]), <=, 2e-5 * fabs(c[i]) + 2e-6 * scale);
  g_free(c);
  g_free(g);
  g_free(moe);

  /* A layer the device cannot run: refused, naming the layer and slot. */
  char *cnn = make_example("multi-modal");
  float img[64] = {0};
  cli_write_npy(x, (const int64_t[]){1, 8, 8}, 3, img);
  r = run((const char *[]){"forward", cnn, "--input", x, "--output", yg, "--device", "vulkan", NULL});
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, "lstm"));
  g_assert_nonnull(strstr(r.err, "(0,0,0,0)"));
  cli_result_clear(&r);
  r = run((const char *[]){"forward", cnn, "--input", x, "--output", yg, "--device", "gpu", NULL});
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "unknown device 'gpu'"));
  cli_result_clear(&r);
  g_free(cnn);
  g_free(model);
  g_free(x);
  g_free(yc);
  g_free(yg);
}

/* The "loss" of every --json epoch line. */
static int epoch_losses(const char *out, double *loss, int max) {
  int n = 0;
  for (const char *p = strstr(out, "\"loss\": "); p && n < max; p = strstr(p + 1, "\"loss\": "))
    loss[n++] = g_ascii_strtod(p + 8, NULL);
  return n;
}

static void test_train(void) {
  char *model = make_example("spiral");
  double cpu[8], dev[8];
  CliResult r = run((const char *[]){"train", model, "--epochs", "3", "--json", "--device", "cpu", NULL});
  if (r.status) g_error("%s", r.err);
  int nc = epoch_losses(r.out, cpu, 8);
  cli_result_clear(&r);
  r = run((const char *[]){"train", model, "--epochs", "3", "--json", "--device", "vulkan", NULL});
  if (r.status) g_error("%s", r.err);
  int ng = epoch_losses(r.out, dev, 8);
  g_assert_nonnull(strstr(r.out, "final_test_accuracy"));
  cli_result_clear(&r);
  g_assert_cmpint(nc, ==, 3);
  g_assert_cmpint(ng, ==, nc);
  for (int i = 0; i < nc; i++) {
    g_test_message("epoch %d: loss %.9g on the CPU, %.9g on the device", i + 1, cpu[i], dev[i]);
    g_assert_cmpfloat(fabs(cpu[i] - dev[i]), <=, 1e-5 * fabs(cpu[i]));
  }
  /* What the device cannot train is refused, naming the field or the slot. */
  r = run((const char *[]){"train", model, "--epochs", "1", "--method", "tween", "--device", "vulkan", NULL});
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, "method:"));
  cli_result_clear(&r);
  char *cnn = make_example("multi-modal");
  r = run((const char *[]){"train", cnn, "--epochs", "1", "--device", "vulkan", NULL});
  g_assert_cmpint(r.status, ==, 1);
  g_assert_nonnull(strstr(r.err, "lstm"));
  g_assert_nonnull(strstr(r.err, "(0,0,0,0)"));
  cli_result_clear(&r);
  r = run((const char *[]){"train", model, "--device", "tpu", NULL});
  g_assert_cmpint(r.status, ==, 2);
  g_assert_nonnull(strstr(r.err, "unknown device 'tpu'"));
  cli_result_clear(&r);
  g_free(cnn);
  g_free(model);
}

int main(int argc, char **argv) {
  gboolean tap = FALSE;
  for (int i = 1; i < argc; i++)
    if (strcmp(argv[i], "--tap") == 0) tap = TRUE;
  g_test_init(&argc, &argv, NULL);
  CliResult probe = run((const char *[]){"info", "--devices", NULL});
  if (probe.status != 0 || strstr(probe.out, "vulkan:0") == NULL) {
    if (tap) {
      printf("1..0 # SKIP no Vulkan device\n");
      return 0;
    }
    fprintf(stderr, "SKIP: no Vulkan device\n");
    return 77;
  }
  cli_result_clear(&probe);
  tmp_dir = g_dir_make_tmp("loom-gpu-cli-XXXXXX", NULL);
  g_test_add_func("/gpu/cli/devices", test_devices);
  g_test_add_func("/gpu/cli/forward", test_forward_parity);
  g_test_add_func("/gpu/cli/train", test_train);
  int rc = g_test_run();
  static const char *const made[] = {"playground.loom.json", "moe.loom.json", "multi-modal.loom.json",
                                     "spiral.loom.json",     "x.npy",         "yc.npy",
                                     "yg.npy"};
  for (size_t i = 0; i < G_N_ELEMENTS(made); i++) {
    char *path = g_build_filename(tmp_dir, made[i], NULL);
    g_unlink(path);
    g_free(path);
  }
  g_rmdir(tmp_dir);
  g_free(tmp_dir);
  return rc;
}
