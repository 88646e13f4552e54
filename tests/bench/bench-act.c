/*
 * The element-wise activations at the reference level (libm in double per
 * element) and at the vector levels (kernels/act.h), forward and backward
 * over 1 Mi elements on one thread: milliseconds, the speed-up over the
 * reference measured in the same run, and the share of lanes the vector
 * path handed back to the reference.
 *
 *   bench-act [--runs R] [--cpu-time]
 *   bench-act --exhaustive    every float32 input (2^32, with dy = 1 and
 *                             with random gradients) at every level against
 *                             the reference's bits; prints the mismatches
 *                             (none expected) and takes minutes
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench-util.h"
#include "kernels/cpu.h"
#include "layers/layer-impl.h"
#include "loom/layer.h"

enum { N = 1 << 20 };

static loom_layer *make(const char *type) {
  loom_error err = {0};
  loom_layer *l = loom_layer_new_by_name(type, &err);
  const int64_t one[] = {1};
  loom_shape s = loom_shape_make(1, one);
  if (!l || loom_layer_build(l, &s, 1, &err)) {
    fprintf(stderr, "bench-act: %s: %s\n", type, err.message);
    exit(1);
  }
  return l;
}

static void run(loom_layer *l, const float *x, const float *dy, float *y, float *dx, int64_t n, bool backward) {
  loom_error err = {0};
  loom_ctx ctx = {.training = true};
  if (!backward ? layer_forward(l, &ctx, x, y, n, &err) : layer_backward(l, &ctx, x, y, dy, dx, n, &err)) {
    fprintf(stderr, "bench-act: %s\n", err.message);
    exit(1);
  }
}

static uint32_t xorshift(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (uint32_t)(*s >> 32);
}

static const char *const types[] = {"sigmoid", "silu", "tanh", "elu"};
static const loom_act_fn fns[] = {LOOM_ACT_SIGMOID, LOOM_ACT_SILU, LOOM_ACT_TANH, LOOM_ACT_ELU};

static int exhaustive(void) {
  float *x = g_new(float, N), *dy = g_new(float, N), *y0 = g_new(float, N), *y1 = g_new(float, N),
        *d0 = g_new(float, N), *d1 = g_new(float, N);
  int64_t total_bad = 0;
  for (size_t t = 0; t < G_N_ELEMENTS(types); t++) {
    loom_layer *l = make(types[t]);
    int64_t bad[LOOM_KERNELS_LEVEL_COUNT] = {0};
    uint64_t seed = 99;
    for (uint64_t u0 = 0; u0 < (UINT64_C(1) << 32); u0 += N) {
      for (int i = 0; i < N; i++) {
        uint32_t u = (uint32_t)(u0 + (uint64_t)i);
        memcpy(&x[i], &u, 4);
        dy[i] = (u0 / N) % 2 ? 1.0f : ((float)(xorshift(&seed) >> 8) / 16777216.0f - 0.5f) * 4.0f;
      }
      loom_kernels_force(LOOM_KERNELS_REF);
      run(l, x, dy, y0, NULL, N, false);
      run(l, x, dy, y0, d0, N, true);
      for (int lv = LOOM_KERNELS_AVX2; lv < LOOM_KERNELS_LEVEL_COUNT; lv++) {
        if (!loom_kernels_force((loom_kernel_level)lv)) continue;
        run(l, x, dy, y1, NULL, N, false);
        run(l, x, dy, y1, d1, N, true);
        for (int i = 0; i < N; i++) {
          bool fw = memcmp(&y0[i], &y1[i], 4) && !(isnan(y0[i]) && isnan(y1[i]));
          bool bw = memcmp(&d0[i], &d1[i], 4) && !(isnan(d0[i]) && isnan(d1[i]));
          if ((fw || bw) && bad[lv]++ < 5)
            printf("  %s %s: x %a dy %a: %a %a, reference %a %a\n", types[t],
                   loom_kernel_level_name((loom_kernel_level)lv), (double)x[i], (double)dy[i], (double)y1[i],
                   (double)d1[i], (double)y0[i], (double)d0[i]);
        }
      }
    }
    for (int lv = LOOM_KERNELS_AVX2; lv < LOOM_KERNELS_LEVEL_COUNT; lv++)
      if (loom_kernels_for((loom_kernel_level)lv)) {
        printf("%-8s %-7s every float32 input: %lld mismatches\n", types[t],
               loom_kernel_level_name((loom_kernel_level)lv), (long long)bad[lv]);
        total_bad += bad[lv];
      }
    fflush(stdout);
    loom_layer_free(l);
  }
  g_free(x), g_free(dy), g_free(y0), g_free(y1), g_free(d0), g_free(d1);
  return total_bad ? 1 : 0;
}

int main(int argc, char **argv) {
  if (bench_take_flag(&argc, argv, "--exhaustive")) return exhaustive();
  bool cpu = bench_take_flag(&argc, argv, "--cpu-time");
  int threads, runs;
  if (!bench_parse_args(argc, argv, 99, &threads, &runs)) return 2;
  bench_use_thread_cpu_time(cpu);
  float *x = g_new(float, N), *dy = g_new(float, N), *y = g_new(float, N), *dx = g_new(float, N);
  uint64_t seed = 7;
  /* pre-activations of a trained layer: mostly within a few units of 0 */
  for (int i = 0; i < N; i++) {
    double u1 = ((double)xorshift(&seed) + 1.0) / 4294967297.0, u2 = (double)xorshift(&seed) / 4294967296.0;
    x[i] = (float)(2.0 * sqrt(-2.0 * log(u1)) * cos(2.0 * G_PI * u2));
    dy[i] = (float)((double)xorshift(&seed) / 4294967296.0 - 0.5);
  }
  printf("1 Mi elements, x ~ N(0, 2²), one thread, median of %d runs (ms); speed-up over the reference\n", runs);
  printf("%-8s %-9s %9s", "layer", "pass", "ref");
  for (int lv = LOOM_KERNELS_AVX2; lv < LOOM_KERNELS_LEVEL_COUNT; lv++)
    if (loom_kernels_for((loom_kernel_level)lv)) printf(" %9s %7s", loom_kernel_level_name((loom_kernel_level)lv), "×");
  printf(" %9s\n", "redone");
  const loom_kernel_level was = loom_kernels_get()->level;
  for (size_t t = 0; t < G_N_ELEMENTS(types); t++) {
    loom_layer *l = make(types[t]);
    for (int backward = 0; backward < 2; backward++) {
      printf("%-8s %-9s", types[t], backward ? "backward" : "forward");
      double ref_ms = 0;
      for (int lv = LOOM_KERNELS_REF; lv < LOOM_KERNELS_LEVEL_COUNT; lv++) {
        if (!loom_kernels_force((loom_kernel_level)lv)) continue;
        double ms[99];
        for (int r = 0; r < runs; r++) {
          double t0 = bench_now_s();
          run(l, x, dy, y, dx, N, backward);
          ms[r] = (bench_now_s() - t0) * 1e3;
        }
        double med = bench_median(ms, runs);
        if (lv == LOOM_KERNELS_REF) {
          ref_ms = med;
          printf(" %9.3f", med);
        } else {
          printf(" %9.3f %7.1f", med, ref_ms / med);
        }
      }
      /* lanes handed back, counted at the best level */
      const loom_kernels *k = loom_kernels_for(loom_kernels_best_level());
      int64_t redone = 0;
      if (k && k->act) {
        uint64_t redo[LOOM_ACT_BLOCK / 64];
        for (int64_t b = 0; b < N; b += LOOM_ACT_BLOCK)
          redone += k->act(fns[t], 1.0, x + b, backward ? dy + b : NULL, dx, LOOM_ACT_BLOCK, redo);
      }
      printf(" %8.4f%%\n", 100.0 * (double)redone / N);
    }
    loom_layer_free(l);
  }
  loom_kernels_force(was);
  g_free(x), g_free(dy), g_free(y), g_free(dx);
  return 0;
}
