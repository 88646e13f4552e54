/*
 * Loading and saving a network of 16 dense 1024 → 1024 layers (about 1.7·10^7
 * weights) as JSON and as safetensors, at float32 and int4. The baseline,
 * measured in the same run, is the JSON file at each dtype; safetensors
 * avoids base64 and reads the mapped file in place. Each load follows the
 * save of the same file, so it reads from the page cache. Median of several
 * runs.
 * Usage: bench-model-io [--runs R]
 */
#include <glib.h>
#include <glib/gstdio.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench-util.h"
#include "loom/loom.h"
#include "loom/safetensors.h"

#define LAYERS 16
#define WIDTH 1024

static loom_net *make_net(loom_dtype d) {
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, LAYERS, 1, &err);
  loom_shape in = loom_shape_1d(WIDTH);
  if (!net || loom_net_set_input_shape(net, &in, &err)) goto fail;
  for (int i = 0; i < LAYERS; i++) {
    loom_layer *l = loom_layer_new_by_name("dense", &err);
    if (!l || loom_layer_set_int(l, "in_features", WIDTH, &err) || loom_layer_set_int(l, "out_features", WIDTH, &err) ||
        loom_layer_set_dtype(l, d, &err) || loom_net_place(net, (loom_coord){0, 0, i, 0}, l, &err))
      goto fail;
  }
  loom_diag *diags = NULL;
  if (loom_net_infer_shapes(net, 7, &diags)) {
    fprintf(stderr, "bench-model-io: %s\n", diags[0].message);
    exit(1);
  }
  return net;
fail:
  fprintf(stderr, "bench-model-io: %s\n", err.message);
  exit(1);
}

typedef struct {
  double save_s, load_s;
  long long bytes;
} timing;

static timing measure(loom_net *net, const char *path, int runs) {
  double save[32], load[32];
  loom_error err = {0};
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now_s();
    if (loom_model_save(net, path, &err)) { /* the name picks the format */
      fprintf(stderr, "bench-model-io: %s\n", err.message);
      exit(1);
    }
    double t1 = bench_now_s();
    loom_net *back = NULL;
    if (loom_model_load(path, LOOM_MODEL_STRICT, &back, &err)) {
      fprintf(stderr, "bench-model-io: %s\n", err.message);
      exit(1);
    }
    double t2 = bench_now_s();
    loom_net_free(back);
    save[r] = t1 - t0;
    load[r] = t2 - t1;
  }
  GStatBuf st;
  g_stat(path, &st);
  return (timing){bench_median(save, runs), bench_median(load, runs), (long long)st.st_size};
}

int main(int argc, char **argv) {
  int threads, runs;
  if (!bench_parse_args(argc, argv, 32, &threads, &runs)) return 2;
  char *dir = g_dir_make_tmp("loom-bench-io-XXXXXX", NULL);
  char *json = g_build_filename(dir, "m.loom.json", NULL), *st = g_build_filename(dir, "m.safetensors", NULL);
  printf("%d dense %d→%d layers, median of %d runs (save includes fsync)\n", LAYERS, WIDTH, WIDTH, runs);
  printf("%-8s %-12s %12s %10s %10s %12s %12s\n", "dtype", "format", "bytes", "save ms", "load ms", "save vs json",
         "load vs json");
  loom_dtype dtypes[] = {LOOM_DTYPE_FLOAT32, LOOM_DTYPE_INT4};
  for (size_t i = 0; i < G_N_ELEMENTS(dtypes); i++) {
    loom_net *net = make_net(dtypes[i]);
    timing j = measure(net, json, runs), s = measure(net, st, runs);
    const char *name = loom_dtype_name(dtypes[i]);
    printf("%-8s %-12s %12lld %10.1f %10.1f %12s %12s\n", name, "json", j.bytes, j.save_s * 1e3, j.load_s * 1e3,
           "1.00", "1.00");
    printf("%-8s %-12s %12lld %10.1f %10.1f %11.2fx %11.2fx\n", name, "safetensors", s.bytes, s.save_s * 1e3,
           s.load_s * 1e3, j.save_s / s.save_s, j.load_s / s.load_s);
    loom_net_free(net);
  }
  g_unlink(json);
  g_unlink(st);
  g_rmdir(dir);
  g_free(json);
  g_free(st);
  g_free(dir);
  return 0;
}
