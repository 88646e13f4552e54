/*
 * bench-gemv's integer part (kernels/qgemm.h): the GEMV of every dtype the
 * integer product serves against the read probe, and a batch-64 GEMM against
 * the peak of the best kernel level computed in the same run:
 *
 *   peak = vpdpbusd zmm per second × 64 multiply-adds each (VNNI), or
 *          (vpmaddubsw + vpmaddwd + vpaddd) ymm per second × 32 (AVX2),
 *
 * the rate measured on 16 independent register-only vpdpbusd chains (the
 * most the core sustains), the best of short trials interleaved with the
 * runs; it is also printed per cycle of the clock measured by a chain of
 * dependent integer adds (one cycle each). This machine (AMD family 26,
 * Zen 5) sustains two 512-bit vpdpbusd a cycle there; Zen 4 would show one.
 * The chains reuse two source registers, so the figure is the execution
 * units' bound, not what a kernel that must load its operands can reach.
 *
 * Beside each integer GEMV, a *decode bound*: the fewest instructions any
 * GEMV with the VNNI kernel's decode executes per 64 bytes of codes (load,
 * XOR, and per field of the byte one AND and one vpdpbusd), run over the
 * same weight bytes with no activation loads, no reductions, no prefetch and
 * independent accumulators, timed in the same runs as the probe. A kernel of
 * that decode cannot be faster, so its ratio to the probe bounds the GEMV's.
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
int bench_gemv_reps(size_t bytes);
int bench_qgemv_shape(loom_weights *w, int64_t rows, int64_t cols, const float *x, float *y, const uint8_t *probe,
                      int runs, bool all_levels);
int bench_qgemm_batch(int runs, bool all_levels);

static uint64_t bound_sink;
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define BOUND_TARGET __attribute__((target("avx512f,avx512bw,avx512vnni")))
BOUND_TARGET static inline __attribute__((always_inline)) void bound_dp(__m512i *acc, __m512i u, __m512i x) {
  __asm__("vpdpbusd %2, %1, %0" : "+v"(*acc) : "v"(u), "v"(x));
}

/* fp4: its fields shifted down and looked up (qgemm-vnni-gemv.c) */
BOUND_TARGET static inline __attribute__((always_inline)) void bound_bits(const int bits, const bool fp4,
                                                                          const uint8_t *p, size_t n) {
  const int m = 8 / bits, nu = 16 / m > 8 ? 8 : 16 / m; /* independent blocks a step, ≤ 16 accumulators */
  __m512i acc[8][8];
#pragma GCC unroll 8
  for (int u = 0; u < nu; u++)
#pragma GCC unroll 8
    for (int k = 0; k < m; k++) acc[u][k] = _mm512_setzero_si512();
  const __m512i x = _mm512_set1_epi8(3), flip = _mm512_set1_epi8(0x55);
  for (size_t i = 0; i + (size_t)nu * 64 <= n; i += (size_t)nu * 64)
#pragma GCC unroll 8
    for (int u = 0; u < nu; u++) {
      const __m512i w = _mm512_xor_si512(_mm512_loadu_si512(p + i + (size_t)u * 64), flip);
#pragma GCC unroll 8
      for (int k = 0; k < m; k++) {
        if (fp4) {
          const __m512i table = _mm512_broadcast_i32x4(_mm_setr_epi8(LOOM_QGEMM_FP4_TWICE));
          const __m512i field = _mm512_and_si512(k ? _mm512_srli_epi16(w, 4) : w, _mm512_set1_epi8(0x0f));
          bound_dp(&acc[u][k], _mm512_shuffle_epi8(table, field), x);
          continue;
        }
        bound_dp(&acc[u][k], bits == 8 ? w : _mm512_and_si512(w, _mm512_set1_epi8((char)(((1 << bits) - 1) << (k * bits)))), x);
      }
    }
  __m512i t = _mm512_setzero_si512();
#pragma GCC unroll 8
  for (int u = 0; u < nu; u++)
#pragma GCC unroll 8
    for (int k = 0; k < m; k++) t = _mm512_add_epi32(t, acc[u][k]);
  bound_sink += (uint64_t)_mm512_reduce_add_epi32(t);
}

BOUND_TARGET static void decode_bound(int bits, bool fp4, const uint8_t *p, size_t n) {
  if (fp4) {
    bound_bits(4, true, p, n);
    return;
  }
  switch (bits) {
  case 1: bound_bits(1, false, p, n); break;
  case 2: bound_bits(2, false, p, n); break;
  case 4: bound_bits(4, false, p, n); break;
  default: bound_bits(8, false, p, n); break;
  }
}
#endif

static int first_level(bool all_levels) { return all_levels ? 0 : (int)loom_kernels_best_level(); }

int bench_qgemv_shape(loom_weights *w, int64_t rows, int64_t cols, const float *x, float *y, const uint8_t *probe,
                      int runs, bool all_levels) {
  const loom_kernel_level best = loom_kernels_best_level();
  double *tg = malloc((size_t)runs * sizeof *tg), *tp = malloc((size_t)runs * sizeof *tp);
  double *tb = malloc((size_t)runs * sizeof *tb);
  if (!tg || !tp || !tb) return 1;
  const bool vnni = loom_cpu_features_get()->avx512vnni;
  printf("integer GEMV (activations quantized to int8, exact integer sums)\n%-9s %9s %11s", "dtype", "MB",
         "probe GB/s");
  for (int l = first_level(all_levels); l <= (int)best; l++)
    printf(" %8s:%-6s %6s", "GB/s", loom_kernel_level_name(l), "ratio");
  if (vnni) printf(" %11s %6s", "bound GB/s", "ratio");
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
      const int reps = bench_gemv_reps(bytes);
      for (int k = 0; k < runs; k++) {
        double t0 = bench_now_s();
        for (int i = 0; i < reps; i++) read_probe(probe, bytes);
        tp[k] = (bench_now_s() - t0) / reps;
        t0 = bench_now_s();
        for (int i = 0; i < reps; i++)
          if (loom_qgemm_packed(NULL, (loom_dtype)d, p, rows, cols, sc, ns, 1, x, y, &err)) {
            fprintf(stderr, "bench-gemv: %s\n", err.message);
            return 1;
          }
        tg[k] = (bench_now_s() - t0) / reps;
      }
      const double g = (double)bytes / bench_median(tg, runs) / 1e9;
      const double pr = (double)bytes / bench_median(tp, runs) / 1e9;
      if (l == first_level(all_levels)) printf(" %11.1f", pr);
      printf(" %15.2f %6.3f", g, g / pr);
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (vnni) { /* the decode bound against the probe, timed alternately */
      const int reps = bench_gemv_reps(bytes), bits = loom_dtype_traits_get((loom_dtype)d)->bits;
      for (int k = 0; k < runs; k++) {
        double t0 = bench_now_s();
        for (int i = 0; i < reps; i++) read_probe(probe, bytes);
        tp[k] = (bench_now_s() - t0) / reps;
        t0 = bench_now_s();
        for (int i = 0; i < reps; i++) decode_bound(bits, d == LOOM_DTYPE_FP4, p, nbytes);
        tb[k] = (bench_now_s() - t0) / reps;
      }
      const double gb = (double)bytes / bench_median(tb, runs) / 1e9;
      const double pr = (double)bytes / bench_median(tp, runs) / 1e9;
      printf(" %11.1f %6.3f", gb, gb / pr);
    }
#endif
    printf("\n");
    fflush(stdout);
  }
  loom_kernels_force(best);
  free(tg);
  free(tp);
  free(tb);
  return 0;
}

/* n × 8 dependent adds take n × 8 cycles. The addend is a register: Intel's
 * Golden Cove cores (Sapphire Rapids) fold chains of adds of an immediate in
 * the renamer, and such a chain "ran" at 21.8 GHz there (this one, and one of
 * imul, measure 4.1 GHz on the same machine). */
static double clock_hz(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  const uint64_t n = 1000000;
  double best = 0;
  for (int trial = 0; trial < 20; trial++) { /* the best of short trials, as for the peak */
    uint64_t v = 0, i = n, one = 1;
    const double t0 = bench_now_s();
    __asm__ volatile("1:\n\t"
                     "add %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\t"
                     "add %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\tadd %2, %0\n\t"
                     "dec %1\n\tjnz 1b"
                     : "+r"(v), "+r"(i)
                     : "r"(one));
    const double hz = (double)n * 8 / (bench_now_s() - t0);
    best = hz > best ? hz : best;
  }
  return best;
#else
  return 0;
#endif
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
/* vpdpbusd zmm per second over 16 independent chains, the best of several
 * short trials (the most the core sustains when nothing else runs on it).
 * In-place asm: through the intrinsic GCC adds register copies. */
__attribute__((target("avx512f,avx512vnni"))) static double vnni_per_s(void) {
  const int64_t n = 200000;
  double best = 0;
  for (int trial = 0; trial < 20; trial++) {
    __m512i a0 = _mm512_set1_epi32(trial), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    __m512i a8 = a0, a9 = a0, a10 = a0, a11 = a0, a12 = a0, a13 = a0, a14 = a0, a15 = a0;
    const __m512i u = _mm512_set1_epi8(1), s = _mm512_set1_epi8(-1);
    const double t0 = bench_now_s();
    for (int64_t i = 0; i < n; i++)
    {
#define DP8 "vpdpbusd %8, %9, %0\n\tvpdpbusd %8, %9, %1\n\tvpdpbusd %8, %9, %2\n\tvpdpbusd %8, %9, %3\n\t" \
            "vpdpbusd %8, %9, %4\n\tvpdpbusd %8, %9, %5\n\tvpdpbusd %8, %9, %6\n\tvpdpbusd %8, %9, %7"
      __asm__ volatile(DP8 : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5), "+v"(a6), "+v"(a7)
                       : "v"(s), "v"(u));
      __asm__ volatile(DP8 : "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11), "+v"(a12), "+v"(a13), "+v"(a14), "+v"(a15)
                       : "v"(s), "v"(u));
#undef DP8
    }
    const double rate = (double)n * 16 / (bench_now_s() - t0);
    best = rate > best ? rate : best;
  }
  return best;
}

/* tdpbusd per second into 4 independent C tiles from 4 tile registers
 * that stay loaded (16 rows of 64 bytes each: 16 · 16 · 64 multiply-adds an
 * instruction), the best of short trials: the AMX units' bound. */
typedef struct {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} bench_tile_config;

/* (a constant: GCC 12 may drop stores to a stack copy as dead, not seeing
 * ldtilecfg read them; qgemm-amx.c says so too) */
static const _Alignas(64) bench_tile_config bench_tiles = {
  .palette = 1,
  .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
  .rows = {16, 16, 16, 16, 16, 16, 16, 16},
};

__attribute__((target("amx-tile,amx-int8"))) static double amx_per_s(void) {
  static int8_t src[4][1024] __attribute__((aligned(64)));
  _tile_loadconfig(&bench_tiles);
  for (int i = 0; i < 4; i++) memset(src[i], i + 1, sizeof src[i]);
  _tile_loadd(4, src[0], 64);
  _tile_loadd(5, src[1], 64);
  _tile_loadd(6, src[2], 64);
  _tile_loadd(7, src[3], 64);
  const int64_t n = 50000;
  double best = 0;
  for (int trial = 0; trial < 20; trial++) {
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    const double t0 = bench_now_s();
    for (int64_t i = 0; i < n; i++) {
      _tile_dpbusd(0, 4, 6);
      _tile_dpbusd(1, 4, 7);
      _tile_dpbusd(2, 5, 6);
      _tile_dpbusd(3, 5, 7);
    }
    const double rate = (double)n * 4 / (bench_now_s() - t0);
    best = rate > best ? rate : best;
  }
  _tile_release();
  return best;
}

/* Without VNNI (the AVX2 level), the exact int8 multiply-add of 32 byte
 * pairs is a vpmaddubsw (pairs of u8 · s8 into 16 bits), a vpmaddwd (pairs
 * of those into 32 bits) and a vpaddd; triples per second over 6 independent
 * chains, the best of short trials. The multiplies read loop-invariant
 * registers and only the adds form chains, so this is the multiply units'
 * bound (Zen 3: two 256-bit integer multiply pipes, one triple a cycle). */
__attribute__((target("avx2"))) static double avx2_triples_per_s(void) {
  const int64_t n = 200000;
  double best = 0;
  for (int trial = 0; trial < 20; trial++) {
    __m256i a0 = _mm256_set1_epi32(trial), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
    __m256i t0, t1, t2, t3, t4, t5;
    const __m256i u = _mm256_set1_epi8(1), s = _mm256_set1_epi8(-1), ones = _mm256_set1_epi16(1);
    const double start = bench_now_s();
    for (int64_t i = 0; i < n; i++) {
#define MUL(T, A) "vpmaddubsw %[s], %[u], %[" #T "]\n\tvpmaddwd %[ones], %[" #T "], %[" #T "]\n\t" \
                  "vpaddd %[" #T "], %[" #A "], %[" #A "]\n\t"
      __asm__ volatile(MUL(t0, a0) MUL(t1, a1) MUL(t2, a2) MUL(t3, a3) MUL(t4, a4) MUL(t5, a5)
                       : [a0] "+x"(a0), [a1] "+x"(a1), [a2] "+x"(a2), [a3] "+x"(a3), [a4] "+x"(a4), [a5] "+x"(a5),
                         [t0] "=&x"(t0), [t1] "=&x"(t1), [t2] "=&x"(t2), [t3] "=&x"(t3), [t4] "=&x"(t4),
                         [t5] "=&x"(t5)
                       : [s] "x"(s), [u] "x"(u), [ones] "x"(ones));
#undef MUL
    }
    const double rate = (double)n * 6 / (bench_now_s() - start);
    best = rate > best ? rate : best;
  }
  return best;
}
#endif

int bench_qgemm_batch(int runs, bool all_levels) {
  enum { BATCH = 64 };
  const int64_t rows = 4096, cols = 4096;
  const loom_kernel_level best = loom_kernels_best_level();
  const bool vnni = loom_cpu_features_get()->avx512vnni, avx2 = loom_cpu_features_get()->avx2;
  const bool has_peak = vnni || avx2;
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
  /* The peak is a maximum (what the core does when it has itself to
   * itself), so its parts are the best of every trial of every run. */
  double clock = 0, rate = 0;
  for (int k = 0; k < runs; k++) {
    hz[k] = clock_hz();
#if defined(__x86_64__) && defined(__GNUC__)
    ipc[k] = vnni ? vnni_per_s() : avx2 ? avx2_triples_per_s() : 0;
#else
    ipc[k] = 0;
#endif
    clock = hz[k] > clock ? hz[k] : clock;
    rate = ipc[k] > rate ? ipc[k] : rate;
  }
  const double peak = rate * (vnni ? 64 : 32);
  /* With AMX (the best level then), its own peak beside VNNI's: the
   * ratios of each level are to its own. */
  const bool amx = best == LOOM_KERNELS_AMX;
  double amx_rate = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  for (int k = 0; amx && k < runs; k++) {
    const double a = amx_per_s();
    amx_rate = a > amx_rate ? a : amx_rate;
  }
#endif
  const double amx_peak = amx_rate * 16 * 16 * 64;
  printf("\ninteger GEMM, batch %d, %lld x %lld, 1 thread, %d runs: median and best\n", BATCH, (long long)rows,
         (long long)cols, runs);
  if (vnni)
    printf("VNNI peak = %.2f G vpdpbusd zmm/s (16 independent chains) x 64 multiply-adds = %.1f GMAC/s\n"
           "          = %.2f per cycle at %.2f GHz (a chain of dependent adds)\n",
           rate / 1e9, peak / 1e9, rate / clock, clock / 1e9);
  else if (avx2)
    printf("AVX2 peak (no AVX-512 VNNI on this CPU) = %.2f G (vpmaddubsw + vpmaddwd + vpaddd) ymm/s\n"
           "          (6 independent chains) x 32 multiply-adds = %.1f GMAC/s\n"
           "          = %.2f per cycle at %.2f GHz (a chain of dependent adds)\n",
           rate / 1e9, peak / 1e9, rate / clock, clock / 1e9);
  else
    printf("neither AVX-512 VNNI nor AVX2 on this CPU: no peak to compare with\n");
  if (amx)
    printf("AMX peak  = %.3f G tdpbusd/s (4 independent C tiles) x 16384 multiply-adds = %.1f GMAC/s\n"
           "          = %.1f x the VNNI peak; the amx rows' ×peak is against it, their ×VNNI against VNNI's\n",
           amx_rate / 1e9, amx_peak / 1e9, amx_peak / peak);
  printf("%-9s %8s %12s %10s %12s %10s %14s%s\n", "dtype", "level", "GMAC/s", "×peak", "best GMAC/s", "×peak",
         "×f32 sgemm", amx ? "      ×VNNI" : "");
  static const loom_dtype dts[] = {LOOM_DTYPE_INT8, LOOM_DTYPE_INT4, LOOM_DTYPE_FP4, LOOM_DTYPE_TERNARY};
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
    /* (with AMX, the VNNI level too: what the tiles gain) */
    for (int l = all_levels ? 0 : amx ? LOOM_KERNELS_AVX512 : (int)best; l <= (int)best; l++) {
      loom_kernels_force((loom_kernel_level)l);
      const double lpeak = l == LOOM_KERNELS_AMX ? amx_peak : peak;
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
      const double g = macs / bench_median(t, lruns), gbest = macs / t[0]; /* sorted by the median */
      const double gf = macs / bench_median(tf, lruns);
      printf("%-9s %8s %12.1f %10.3f %12.1f %10.3f %14.2f", loom_dtype_name(d), loom_kernel_level_name(l), g / 1e9,
             has_peak ? g / lpeak : 0.0, gbest / 1e9, has_peak ? gbest / lpeak : 0.0, g / gf);
      if (amx) printf(" %10.3f", g / peak);
      printf("\n");
      fflush(stdout);
    }
  }
  if (avx2 && !vnni)
    printf("(×peak: the bound of 8-bit codes; codes of 4 bits or fewer are summed 8 to 128 products at a time\n"
           " in 16 bits before vpmaddwd widens them (qgemm-short.c), about half the multiplies, so they can pass it)\n");
  printf("(×f32 sgemm: against loom_sgemm of the dequantized float32 weights, same shape, same runs)\n"
         "(bound sink %llu)\n", (unsigned long long)(bound_sink & 1));
  loom_kernels_force(best);
  loom_weights_free(w);
  free(t), free(tf), free(hz), free(ipc), free(x), free(y), free(deq);
  return 0;
}
