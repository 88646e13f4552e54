/*
 * Packed GEMV (kernels/gemv.h), one thread, at every dtype and kernel level:
 * GB/s of weight bytes read (packed codes + scales) and the ratio to a read
 * probe that sums a buffer of the same size, measured in the same runs
 * (interleaved, so a busy machine slows both alike). Shapes rows × cols:
 * 4096 × 4096 and 4096 × 14336 (beyond the caches at most dtypes) and
 * 1024 × 1024 (cache-resident: the probe then measures the cache).
 * Then the integer product (kernels/qgemm.h, activations quantized to int8)
 * for the dtypes it serves: the GEMV against the same probe, and the batch-64
 * GEMM against the VNNI peak computed in the same run (bench-qgemm.c).
 * Usage: bench-gemv [--runs R] [--levels best|all] [--cpu-time] [--integer]
 * (--cpu-time: every timing, the probe's too, in thread CPU time, which a
 * shared machine's other work disturbs less; --integer: only the integer
 * products, not the float GEMV of every dtype.)
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-util.h"
#include "kernels/cpu.h"
#include "kernels/gemv.h"
#include "kernels/qgemm.h"
#include "loom/loom.h"

/* bench-qgemm.c */
int bench_qgemv_shape(loom_weights *w, int64_t rows, int64_t cols, const float *x, float *y, const uint8_t *probe,
                      int runs, bool all_levels);
int bench_qgemm_batch(int runs, bool all_levels);

/* The read probe: 32-byte loads XORed into four independent registers (AVX2
 * where the CPU has it), the result kept so the loop cannot be dropped. */
static uint64_t probe_sink;
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
__attribute__((target("avx2"))) static void read_probe_avx2(const uint8_t *buf, size_t nbytes) {
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 128 <= nbytes; i += 128) {
    a0 = _mm256_xor_si256(a0, _mm256_loadu_si256((const __m256i *)(buf + i)));
    a1 = _mm256_xor_si256(a1, _mm256_loadu_si256((const __m256i *)(buf + i + 32)));
    a2 = _mm256_xor_si256(a2, _mm256_loadu_si256((const __m256i *)(buf + i + 64)));
    a3 = _mm256_xor_si256(a3, _mm256_loadu_si256((const __m256i *)(buf + i + 96)));
  }
  a0 = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
  uint64_t v[4];
  memcpy(v, &a0, sizeof v);
  for (; i < nbytes; i++) v[0] ^= buf[i];
  probe_sink ^= v[0] ^ v[1] ^ v[2] ^ v[3];
}
#endif

/* Calls per timed sample: enough that a sample reads at least 16 MiB, so
 * the clock's own cost does not count (reading the thread's CPU time took
 * 3.6 µs a call on the development VM, as long as a whole GEMV of 1024 ×
 * 1024 ternary weights). The probe and the product repeat alike. */
int bench_gemv_reps(size_t bytes);
int bench_gemv_reps(size_t bytes) {
  const size_t want = (size_t)16 << 20;
  return bytes >= want || bytes == 0 ? 1 : (int)((want + bytes - 1) / bytes);
}

void read_probe(const uint8_t *buf, size_t nbytes);
void read_probe(const uint8_t *buf, size_t nbytes) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (loom_cpu_features_get()->avx2) {
    read_probe_avx2(buf, nbytes);
    return;
  }
#endif
  uint64_t acc = 0;
  for (size_t i = 0; i + 8 <= nbytes; i += 8) {
    uint64_t v;
    memcpy(&v, buf + i, 8);
    acc ^= v;
  }
  probe_sink ^= acc;
}

int main(int argc, char **argv) {
  int runs = 7;
  bool all_levels = false, cpu_time = false, integer_only = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--runs") == 0 && i + 1 < argc)
      runs = (int)g_ascii_strtoll(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--levels") == 0 && i + 1 < argc)
      all_levels = strcmp(argv[++i], "all") == 0;
    else if (strcmp(argv[i], "--cpu-time") == 0)
      cpu_time = true;
    else if (strcmp(argv[i], "--integer") == 0)
      integer_only = true;
    else {
      fprintf(stderr, "usage: bench-gemv [--runs R (1..50)] [--levels best|all] [--cpu-time] [--integer]\n");
      return 2;
    }
  }
  if (runs < 1 || runs > 50) runs = 7;
  bench_use_thread_cpu_time(cpu_time);
  static const int64_t shapes[][2] = {{4096, 4096}, {4096, 14336}, {1024, 1024}};
  const loom_kernel_level best = loom_kernels_best_level();
  double *tg = malloc((size_t)runs * sizeof *tg), *tp = malloc((size_t)runs * sizeof *tp);
  printf("packed GEMV, 1 thread, median of %d runs; GB/s of weight bytes (codes + scales);\n"
         "ratio = GEMV speed / read-probe speed over a buffer of the same size, timed in the same runs;\n"
         "times are %s\n",
         runs, cpu_time ? "the thread's CPU time (--cpu-time)" : "wall-clock");
  for (size_t s = 0; s < G_N_ELEMENTS(shapes); s++) {
    const int64_t rows = shapes[s][0], cols = shapes[s][1];
    loom_error err;
    loom_weights *w = loom_weights_new(rows, cols, &err);
    float *x = malloc((size_t)cols * sizeof *x), *y = malloc((size_t)rows * sizeof *y);
    uint8_t *probe = malloc((size_t)rows * (size_t)cols * 8 + 64);
    if (!w || !x || !y || !probe || !tg || !tp) {
      fprintf(stderr, "bench-gemv: out of memory\n");
      return 1;
    }
    float *m = loom_weights_master(w);
    uint64_t r = 88172645463325252u;
    for (int64_t i = 0; i < rows * cols; i++) {
      r ^= r << 13;
      r ^= r >> 7;
      r ^= r << 17;
      m[i] = (float)((double)(r >> 11) * 0x1p-52 - 1.0);
    }
    for (int64_t i = 0; i < cols; i++) x[i] = (float)((i % 17) - 8) / 8.0f;
    memset(probe, 1, (size_t)rows * (size_t)cols * 8 + 64);
    loom_weights_touch(w);
    printf("\n%lld x %lld\n", (long long)rows, (long long)cols);
    if (!integer_only) {
      printf("%-9s %9s %11s", "dtype", "MB", "probe GB/s");
      for (int l = all_levels ? 0 : (int)best; l <= (int)best; l++)
        printf(" %8s:%-6s %6s", "GB/s", loom_kernel_level_name(l), "ratio");
      printf("\n");
    }
    for (int d = 0; d < LOOM_DTYPE_COUNT && !integer_only; d++) {
      if (loom_weights_set_dtype(w, (loom_dtype)d, &err) || loom_weights_morph(w, &err)) {
        fprintf(stderr, "bench-gemv: %s\n", err.message);
        return 1;
      }
      size_t nbytes;
      int64_t ns;
      const uint8_t *p = loom_weights_packed(w, &nbytes);
      const float *sc = loom_weights_scales(w, &ns);
      const size_t bytes = nbytes + (size_t)ns * sizeof(float);
      printf("%-9s %9.1f", loom_dtype_name((loom_dtype)d), (double)bytes / 1e6);
      double probe_gbs = 0;
      for (int l = all_levels ? 0 : (int)best; l <= (int)best; l++) {
        loom_kernels_force((loom_kernel_level)l);
        loom_gemv_packed(NULL, (loom_dtype)d, p, rows, cols, sc, ns, x, y, NULL); /* warm */
        const int reps = bench_gemv_reps(bytes);
        for (int k = 0; k < runs; k++) {
          double t0 = bench_now_s();
          for (int i = 0; i < reps; i++) read_probe(probe, bytes);
          tp[k] = (bench_now_s() - t0) / reps;
          t0 = bench_now_s();
          for (int i = 0; i < reps; i++)
            if (loom_gemv_packed(NULL, (loom_dtype)d, p, rows, cols, sc, ns, x, y, &err)) {
              fprintf(stderr, "bench-gemv: %s\n", err.message);
              return 1;
            }
          tg[k] = (bench_now_s() - t0) / reps;
        }
        const double g = (double)bytes / bench_median(tg, runs) / 1e9;
        const double pr = (double)bytes / bench_median(tp, runs) / 1e9;
        if (l == (int)best || probe_gbs == 0) probe_gbs = pr;
        if (l == (all_levels ? 0 : (int)best)) printf(" %11.1f", pr);
        printf(" %15.2f %6.3f", g, g / pr);
      }
      printf("\n");
      fflush(stdout);
    }
    if (bench_qgemv_shape(w, rows, cols, x, y, probe, runs, all_levels)) return 1;
    loom_weights_free(w);
    free(x);
    free(y);
    free(probe);
  }
  if (bench_qgemm_batch(runs, all_levels)) return 1;
  printf("(probe sink %llu)\n", (unsigned long long)(probe_sink & 1));
  free(tg);
  free(tp);
  return 0;
}
