/*
 * Morph (float32 master -> packed + scales) and dequantize (packed -> float32)
 * of a 4096 × 4096 weight matrix at every dtype, in MB/s of float32 data,
 * beside the memcpy speed of the same amount measured in the same run.
 * Medians of several runs. Usage: bench-dtype [SIZE [RUNS]]
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-util.h"
#include "loom/loom.h"

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  const int64_t size = argc > 1 ? g_ascii_strtoll(argv[1], NULL, 10) : 4096;
  const int runs = argc > 2 ? (int)g_ascii_strtoll(argv[2], NULL, 10) : 5;
  if (size < 1 || size > 65536 || runs < 1 || runs > 100) {
    fprintf(stderr, "usage: bench-dtype [SIZE (1..65536) [RUNS (1..100)]]\n");
    return 2;
  }
  const int64_t n = size * size;
  const double mb = (double)n * sizeof(float) / 1e6;
  loom_error err;
  loom_weights *w = loom_weights_new(size, size, &err);
  float *out = malloc((size_t)n * sizeof *out);
  double *t = malloc((size_t)runs * sizeof *t);
  if (!w || !out || !t) {
    fprintf(stderr, "bench-dtype: %s\n", w ? "out of memory" : err.message);
    return 1;
  }
  /* Uniform in [-1, 1) from a fixed xorshift: the same data every run. */
  float *m = loom_weights_master(w);
  uint64_t x = 88172645463325252u;
  for (int64_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    m[i] = (float)((double)(x >> 11) * 0x1p-52 - 1.0);
  }
  loom_weights_touch(w);

  /* The baseline: copying the same number of bytes. */
  memcpy(out, m, (size_t)n * sizeof *out); /* fault the pages in */
  for (int r = 0; r < runs; r++) {
    double t0 = bench_now_s();
    memcpy(out, m, (size_t)n * sizeof *out);
    t[r] = bench_now_s() - t0;
  }
  const double memcpy_mbs = mb / median(t, runs);
  printf("dtype morph and dequantize, %lld x %lld float32 (%.0f MB), median of %d runs\n", (long long)size,
         (long long)size, mb, runs);
  printf("memcpy: %.0f MB/s\n\n", memcpy_mbs);
  printf("%-9s %12s %9s %12s %9s\n", "dtype", "morph MB/s", "/memcpy", "dequant MB/s", "/memcpy");

  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    if (loom_weights_set_dtype(w, (loom_dtype)d, &err) || loom_weights_morph(w, &err)) {
      fprintf(stderr, "bench-dtype: %s\n", err.message);
      return 1;
    }
    for (int r = 0; r < runs; r++) {
      loom_weights_touch(w);
      double t0 = bench_now_s();
      if (loom_weights_morph(w, &err)) {
        fprintf(stderr, "bench-dtype: %s\n", err.message);
        return 1;
      }
      t[r] = bench_now_s() - t0;
    }
    const double morph_mbs = mb / median(t, runs);
    size_t nbytes;
    int64_t ns;
    const uint8_t *p = loom_weights_packed(w, &nbytes);
    const float *sc = loom_weights_scales(w, &ns);
    for (int r = 0; r < runs; r++) {
      double t0 = bench_now_s();
      if (loom_dtype_dequantize((loom_dtype)d, p, size, size, sc, ns, out, &err)) {
        fprintf(stderr, "bench-dtype: %s\n", err.message);
        return 1;
      }
      t[r] = bench_now_s() - t0;
    }
    const double deq_mbs = mb / median(t, runs);
    printf("%-9s %12.0f %9.3f %12.0f %9.3f\n", loom_dtype_name((loom_dtype)d), morph_mbs, morph_mbs / memcpy_mbs,
           deq_mbs, deq_mbs / memcpy_mbs);
    fflush(stdout);
  }
  loom_weights_free(w);
  free(out);
  free(t);
  return 0;
}
