/*
 * Morph (float32 master -> packed + scales) and dequantize (packed -> float32)
 * of a 4096 × 4096 weight matrix at every dtype, in MB/s of float32 data,
 * beside the memcpy speed of the same amount measured in the same run, for
 * every kernel level the machine has (ref, avx2, avx512: kernels/cpu.h).
 * Medians of several runs. Then, in microseconds, the morph as the trainer
 * runs it after each update (loom_weights_touch_finite: a master known
 * finite), best of the runs: a minimum is steadier than a ratio to an
 * in-cache memcpy, which moves by a factor of 2 or more between runs on a
 * shared machine. Usage: bench-dtype [--cpu-time] [SIZE [RUNS]]
 * --cpu-time times everything, memcpy included, in the thread's CPU time,
 * which a shared machine's other work disturbs less (its contention for
 * memory still counts).
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench-util.h"
#include "core/weights-internal.h"
#include "kernels/cpu.h"
#include "loom/loom.h"

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
  const bool cpu_time = argc > 1 && strcmp(argv[1], "--cpu-time") == 0;
  if (cpu_time) {
    argc--;
    argv++;
  }
  const int64_t size = argc > 1 ? g_ascii_strtoll(argv[1], NULL, 10) : 4096;
  const int runs = argc > 2 ? (int)g_ascii_strtoll(argv[2], NULL, 10) : 5;
  if (size < 1 || size > 65536 || runs < 1 || runs > 100) {
    fprintf(stderr, "usage: bench-dtype [--cpu-time] [SIZE (1..65536) [RUNS (1..100)]]\n");
    return 2;
  }
  bench_use_thread_cpu_time(cpu_time);
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
  printf("dtype morph and dequantize, %lld x %lld float32 (%.0f MB), median of %d runs, %s\n", (long long)size,
         (long long)size, mb, runs, cpu_time ? "thread CPU time" : "wall clock");
  printf("memcpy before: %.0f MB/s; ratios are speed / memcpy speed, memcpy timed in the same runs\n"
         "(goals: morph >= 0.5, dequantize >= 1)\n\n",
         memcpy_mbs);
  double ratio[LOOM_KERNELS_LEVEL_COUNT][LOOM_DTYPE_COUNT][2] = {{{0}}};
  double copy_mbs[LOOM_KERNELS_LEVEL_COUNT][LOOM_DTYPE_COUNT] = {{0}};
  double remorph_us[LOOM_KERNELS_LEVEL_COUNT][LOOM_DTYPE_COUNT] = {{0}};
  double *tc = malloc((size_t)runs * sizeof *tc), *td = malloc((size_t)runs * sizeof *td);
  if (!tc || !td) return 1;
  /* (the AMX level's codecs are the AVX-512 level's: its table differs in
   * the integer GEMM only) */
  const loom_kernel_level best =
    loom_kernels_best_level() > LOOM_KERNELS_AVX512 ? LOOM_KERNELS_AVX512 : loom_kernels_best_level();
  for (int level = 0; level <= (int)best; level++) {
    if (!loom_kernels_force((loom_kernel_level)level)) continue;
    for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
      if (loom_weights_set_dtype(w, (loom_dtype)d, &err) || loom_weights_morph(w, &err)) {
        fprintf(stderr, "bench-dtype: %s\n", err.message);
        return 1;
      }
      size_t nbytes;
      int64_t ns;
      const uint8_t *p = loom_weights_packed(w, &nbytes);
      const float *sc = loom_weights_scales(w, &ns);
      /* memcpy, morph and dequantize interleaved run by run: the machine is
       * shared, and a baseline measured at another moment would mislead. */
      for (int r = 0; r < runs; r++) {
        double t0 = bench_now_s();
        memcpy(out, m, (size_t)n * sizeof *out);
        tc[r] = bench_now_s() - t0;
        loom_weights_touch(w);
        t0 = bench_now_s();
        if (loom_weights_morph(w, &err)) {
          fprintf(stderr, "bench-dtype: %s\n", err.message);
          return 1;
        }
        t[r] = bench_now_s() - t0;
        p = loom_weights_packed(w, &nbytes);
        sc = loom_weights_scales(w, &ns);
        t0 = bench_now_s();
        if (loom_dtype_dequantize((loom_dtype)d, p, size, size, sc, ns, out, &err)) {
          fprintf(stderr, "bench-dtype: %s\n", err.message);
          return 1;
        }
        td[r] = bench_now_s() - t0;
        loom_weights_touch_finite(w);
        t0 = bench_now_s();
        if (loom_weights_morph(w, &err)) {
          fprintf(stderr, "bench-dtype: %s\n", err.message);
          return 1;
        }
        const double us = (bench_now_s() - t0) * 1e6;
        if (r == 0 || us < remorph_us[level][d]) remorph_us[level][d] = us;
      }
      const double copy_s = median(tc, runs);
      ratio[level][d][0] = copy_s / median(t, runs);
      ratio[level][d][1] = copy_s / median(td, runs);
      copy_mbs[level][d] = mb / copy_s;
    }
  }
  printf("%-9s", "dtype");
  for (int level = 0; level <= (int)best; level++) printf(" %7s:%-6s", "morph", loom_kernel_level_name(level));
  for (int level = 0; level <= (int)best; level++) printf(" %7s:%-6s", "deq", loom_kernel_level_name(level));
  printf("\n");
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    printf("%-9s", loom_dtype_name((loom_dtype)d));
    double lo = 1e300, hi = 0;
    for (int k = 0; k < 2; k++)
      for (int level = 0; level <= (int)best; level++) printf(" %14.3f", ratio[level][d][k]);
    for (int level = 0; level <= (int)best; level++) {
      lo = copy_mbs[level][d] < lo ? copy_mbs[level][d] : lo;
      hi = copy_mbs[level][d] > hi ? copy_mbs[level][d] : hi;
    }
    printf("   memcpy %.0f-%.0f MB/s\n", lo, hi);
  }
  printf("\nthe trainer's re-morph (loom_weights_touch_finite, then loom_weights_morph), microseconds, best of %d\n",
         runs);
  printf("%-9s", "dtype");
  for (int level = 0; level <= (int)best; level++) printf(" %14s", loom_kernel_level_name(level));
  printf("\n");
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    printf("%-9s", loom_dtype_name((loom_dtype)d));
    for (int level = 0; level <= (int)best; level++) printf(" %14.1f", remorph_us[level][d]);
    printf("\n");
  }
  free(tc);
  free(td);
  loom_weights_free(w);
  free(out);
  free(t);
  return 0;
}
