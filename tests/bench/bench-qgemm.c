/*
 * bench-gemv's integer part (kernels/qgemm.h): the GEMV of every dtype the
 * integer product serves against the read probe, and a batch-64 GEMM against
 * the VNNI peak computed in the same run:
 *
 *   peak = clock × 64 multiply-adds per vpdpbusd zmm × vpdpbusd per cycle,
 *
 * the clock from a chain of dependent integer adds (one cycle each), the
 * instructions per cycle from 12 independent vpdpbusd chains (register-only,
 * the most the core sustains: Zen 4 executes one 512-bit vpdpbusd per cycle
 * on two 256-bit halves). Both are measured, interleaved with the runs.
 */
#include <glib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-util.h"
#include "kernels/cpu.h"
#include "kernels/matmul.h"
#include "kernels/qgemm.h"
#include "loom/loom.h"

void read_probe(const uint8_t *buf, size_t nbytes);
int bench_qgemv_shape(loom_weights *w, int64_t rows, int64_t cols, const float *x, float *y, const uint8_t *probe,
                      int runs, bool all_levels);
int bench_qgemm_batch(int runs, bool all_levels);

static int first_level(bool all_levels) { return all_levels ? 0 : (int)loom_kernels_best_level(); }

int bench_qgemv_shape(loom_weights *w, int64_t rows, int64_t cols, const float *x, float *y, const uint8_t *probe,
                      int runs, bool all_levels) {
  const loom_kernel_level best = loom_kernels_best_level();
  double *tg = malloc((size_t)runs * sizeof *tg), *tp = malloc((size_t)runs * sizeof *tp);
  if (!tg || !tp) return 1;
  printf("integer GEMV (activations quantized to int8, exact integer sums)\n%-9s %9s %11s", "dtype", "MB",
         "probe GB/s");
  for (int l = first_level(all_levels); l <= (int)best; l++)
    printf(" %8s:%-6s %6s", "GB/s", loom_kernel_level_name(l), "ratio");
  printf("\n");
  loom_error err;
  for (int d = 0; d < LOOM_DTYPE_COUNT; d++) {
    if (!loom_qgemm_supports((loom_dtype)d)) continue;
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
    for (int l = first_level(all_levels); l <= (int)best; l++) {
      loom_kernels_force((loom_kernel_level)l);
      loom_qgemm_packed(NULL, (loom_dtype)d, p, rows, cols, sc, ns, 1, x, y, NULL); /* warm */
      for (int k = 0; k < runs; k++) {
        double t0 = bench_now_s();
        read_probe(probe, bytes);
        tp[k] = bench_now_s() - t0;
        t0 = bench_now_s();
        if (loom_qgemm_packed(NULL, (loom_dtype)d, p, rows, cols, sc, ns, 1, x, y, &err)) {
          fprintf(stderr, "bench-gemv: %s\n", err.message);
          return 1;
        }
        tg[k] = bench_now_s() - t0;
      }
      const double g = (double)bytes / bench_median(tg, runs) / 1e9;
      const double pr = (double)bytes / bench_median(tp, runs) / 1e9;
      if (l == first_level(all_levels)) printf(" %11.1f", pr);
      printf(" %15.2f %6.3f", g, g / pr);
    }
    printf("\n");
    fflush(stdout);
  }
  loom_kernels_force(best);
  free(tg);
  free(tp);
  return 0;
}

/* Seconds for n × 8 dependent adds: n × 8 cycles. */
static double clock_hz(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  const uint64_t n = 50000000;
  uint64_t v = 0, i = n;
  const double t0 = bench_now_s();
  __asm__ volatile("1:\n\t"
                   "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                   "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                   "dec %1\n\tjnz 1b"
                   : "+r"(v), "+r"(i));
  return (double)n * 8 / (bench_now_s() - t0);
#else
  return 0;
#endif
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* vpdpbusd zmm per second over 12 independent chains (the latency is 4 or 5
 * cycles, so 12 hide it at up to 2 per cycle). */
__attribute__((target("avx512f,avx512vnni"))) static double vnni_per_s(void) {
  const int64_t n = 4000000;
  __m512i a[12];
  const __m512i u = _mm512_set1_epi8(1), s = _mm512_set1_epi8(-1);
  for (int k = 0; k < 12; k++) a[k] = _mm512_set1_epi32(k);
  const double t0 = bench_now_s();
  for (int64_t i = 0; i < n; i++) {
#pragma GCC unroll 12
    for (int k = 0; k < 12; k++) a[k] = _mm512_dpbusd_epi32(a[k], u, s);
    __asm__ volatile("" : "+v"(a[0]), "+v"(a[1]), "+v"(a[2]), "+v"(a[3]), "+v"(a[4]), "+v"(a[5]), "+v"(a[6]),
                     "+v"(a[7]), "+v"(a[8]), "+v"(a[9]), "+v"(a[10]), "+v"(a[11]));
  }
  const double t = bench_now_s() - t0;
  int32_t sink[16];
  __m512i sum = a[0];
  for (int k = 1; k < 12; k++) sum = _mm512_add_epi32(sum, a[k]);
  _mm512_storeu_si512(sink, sum);
  if (sink[0] == 42) printf(" ");
  return (double)n * 12 / t;
}
#endif

int bench_qgemm_batch(int runs, bool all_levels) {
  enum { BATCH = 64 };
  const int64_t rows = 4096, cols = 4096;
  const loom_kernel_level best = loom_kernels_best_level();
  const bool vnni = loom_cpu_features_get()->avx512vnni;
  double *t = malloc((size_t)runs * sizeof *t), *tf = malloc((size_t)runs * sizeof *tf);
  double *hz = malloc((size_t)runs * sizeof *hz), *ipc = malloc((size_t)runs * sizeof *ipc);
  float *x = malloc((size_t)(BATCH * cols) * sizeof *x), *y = malloc((size_t)(BATCH * rows) * sizeof *y);
  float *deq = malloc((size_t)(rows * cols) * sizeof *deq);
  loom_error err;
  loom_weights *w = loom_weights_new(rows, cols, &err);
  if (!t || !tf || !hz || !ipc || !x || !y || !deq || !w) return 1;
  float *m = loom_weights_master(w);
  uint64_t r = 88172645463325252u;
  for (int64_t i = 0; i < rows * cols; i++) {
    r ^= r << 13;
    r ^= r >> 7;
    r ^= r << 17;
    m[i] = (float)((double)(r >> 11) * 0x1p-52 - 1.0);
  }
  loom_weights_touch(w);
  for (int64_t i = 0; i < BATCH * cols; i++) x[i] = (float)((i * 7 % 23) - 11) / 11.0f;
  for (int k = 0; k < runs; k++) {
    hz[k] = clock_hz();
#if defined(__x86_64__) && defined(__GNUC__)
    ipc[k] = vnni ? vnni_per_s() / hz[k] : 0;
#else
    ipc[k] = 0;
#endif
  }
  const double clock = bench_median(hz, runs), per_cycle = bench_median(ipc, runs);
  const double peak = clock * 64 * per_cycle;
  printf("\ninteger GEMM, batch %d, %lld x %lld, 1 thread, median of %d runs\n", BATCH, (long long)rows,
         (long long)cols, runs);
  if (vnni)
    printf("VNNI peak = %.2f GHz (dependent adds) x 64 multiply-adds x %.2f vpdpbusd zmm/cycle (measured) = "
           "%.1f GMAC/s\n",
           clock / 1e9, per_cycle, peak / 1e9);
  else
    printf("no AVX-512 VNNI on this CPU: no peak to compare with\n");
  printf("%-9s %8s %12s %10s %14s\n", "dtype", "level", "GMAC/s", "×peak", "×f32 sgemm");
  static const loom_dtype dts[] = {LOOM_DTYPE_INT8, LOOM_DTYPE_INT4, LOOM_DTYPE_TERNARY};
  for (size_t di = 0; di < G_N_ELEMENTS(dts); di++) {
    const loom_dtype d = dts[di];
    if (loom_weights_set_dtype(w, d, &err) || loom_weights_morph(w, &err)) {
      fprintf(stderr, "bench-gemv: %s\n", err.message);
      return 1;
    }
    size_t nbytes;
    int64_t ns;
    const uint8_t *p = loom_weights_packed(w, &nbytes);
    const float *sc = loom_weights_scales(w, &ns);
    if (loom_dtype_dequantize(d, p, rows, cols, sc, ns, deq, &err)) return 1;
    for (int l = all_levels ? 0 : (int)best; l <= (int)best; l++) {
      loom_kernels_force((loom_kernel_level)l);
      const int lruns = l == LOOM_KERNELS_REF ? 1 : runs; /* the scalar reference is slow */
      for (int k = 0; k < lruns; k++) {
        double t0 = bench_now_s();
        if (loom_qgemm_packed(NULL, d, p, rows, cols, sc, ns, BATCH, x, y, &err)) {
          fprintf(stderr, "bench-gemv: %s\n", err.message);
          return 1;
        }
        t[k] = bench_now_s() - t0;
        t0 = bench_now_s();
        loom_sgemm(NULL, false, true, BATCH, rows, cols, x, cols, deq, cols, false, y, rows);
        tf[k] = bench_now_s() - t0;
      }
      const double macs = (double)BATCH * (double)rows * (double)cols;
      const double g = macs / bench_median(t, lruns);
      const double gf = macs / bench_median(tf, lruns);
      printf("%-9s %8s %12.1f %10.3f %14.2f\n", loom_dtype_name(d), loom_kernel_level_name(l), g / 1e9,
             vnni ? g / peak : 0.0, g / gf);
      fflush(stdout);
    }
  }
  printf("(×f32 sgemm: against loom_sgemm of the dequantized float32 weights, same shape, same runs)\n");
  loom_kernels_force(best);
  loom_weights_free(w);
  free(t), free(tf), free(hz), free(ipc), free(x), free(y), free(deq);
  return 0;
}
