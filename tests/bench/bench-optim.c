/*
 * bench-optim: the update of one tensor (262,144 parameters) by Adam
 * (torch's defaults, lr 1e-3), SGD (momentum 0.9, lr 1e-2) and RMSprop
 * (torch's defaults, lr 1e-3), each in four states, beside torch.optim on
 * the same states in the same run (tests/bench/torch_optim.py through
 * /usr/bin/python3):
 *
 *   ordinary  gradients of about 1e-3, the state far from the subnormals
 *   stuck     every gradient 0 and the state on subnormal fixed points of
 *             its decays (Adam's moments 4 and 400 times 2^-149, SGD's
 *             momentum 4 times, RMSprop's square average 40 times), where
 *             weights whose gradient stays 0 end up (docs/training.md,
 *             *Subnormals*)
 *   stuck 20% one parameter in five so, the rest ordinary
 *   tiny 20%  one gradient in five about 1e-20, whose square is subnormal
 *
 * Each figure is the median over R runs (default 7) of the time a step takes,
 * a run repeating steps for at least 0.1 s; "vs ordinary" is that state's
 * time over the ordinary state's, torch/loom the torch time over loom's
 * (above 1: loom is faster). One thread.
 *
 * Usage: bench-optim [--runs R] [--cpu-time]
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench-util.h"
#include "loom/loom.h"
#include "train/optim-internal.h"

#define N_PARAMS 262144
#define RUN_SECONDS 0.1
#define MAX_RUNS 64
#define N_STATES 4
#define N_OPTIMS 3

static const char *const state_names[N_STATES] = {"ordinary", "stuck", "stuck 20%", "tiny 20%"};

/* The gradient of parameter i in `state` (the same draw every step: a fixed
 * xorshift per index keeps the data the same from run to run). */
static float gradient(int state, int64_t i, uint32_t *x) {
  *x ^= *x << 13;
  *x ^= *x >> 17;
  *x ^= *x << 5;
  const float u = (float)(*x >> 8) * 0x1p-24f - 0.5f; /* [-0.5, 0.5) */
  const bool special = state == 1 || (state >= 2 && i % 5 == 0);
  if (!special) return 2e-3f * u;
  return state == 3 ? 2e-20f * u : 0.0f;
}

static const char *const optim_names[N_OPTIMS] = {"adam", "sgd", "rmsprop"};
static const loom_optim_kind optim_kinds[N_OPTIMS] = {LOOM_OPTIM_ADAM, LOOM_OPTIM_SGD, LOOM_OPTIM_RMSPROP};
static const double optim_lr[N_OPTIMS] = {1e-3, 1e-2, 1e-3};

typedef struct {
  double loom[N_OPTIMS][N_STATES], torch[N_OPTIMS][N_STATES];
} results;

static bool parse_torch(const char *line, void *data) {
  results *r = data;
  int o, state;
  double s;
  if (sscanf(line, "optim %d state %d %lf", &o, &state, &s) != 3 || o < 0 || o >= N_OPTIMS || state < 0 ||
      state >= N_STATES)
    return false;
  r->torch[o][state] = s;
  return true;
}

static double time_state(int o, int state, int runs) {
  loom_error err = {0};
  const int64_t n = N_PARAMS;
  const double LR = optim_lr[o];
  loom_optim_config cfg = loom_optim_defaults(optim_kinds[o]);
  if (optim_kinds[o] == LOOM_OPTIM_SGD) cfg.momentum = 0.9;
  loom_optim *opt = loom_optim_new(&cfg, 1, &n, &err);
  float *p = malloc(n * sizeof *p), *g = malloc(n * sizeof *g);
  if (!opt || !p || !g) {
    fprintf(stderr, "bench-optim: %s\n", opt ? "out of memory" : err.message);
    exit(1);
  }
  uint32_t x = 2463534242u;
  for (int64_t i = 0; i < n; i++) {
    p[i] = 0.1f * gradient(0, i, &x);
    g[i] = gradient(0, i, &x);
  }
  float *const params[1] = {p};
  const float *const grads[1] = {g};
  if (loom_optim_step(opt, params, grads, LR, &err)) { /* moments of an ordinary first step */
    fprintf(stderr, "bench-optim: %s\n", err.message);
    exit(1);
  }
  optim_tensor_state st;
  optim_tensor_get(opt, 0, &st);
  for (int64_t i = 0; i < n; i++) {
    g[i] = gradient(state, i, &x);
    if (state == 1 || (state == 2 && i % 5 == 0)) {
      if (optim_kinds[o] == LOOM_OPTIM_RMSPROP) {
        st.buf[1][i] = 40 * 0x1p-149f;
      } else {
        st.buf[0][i] = 4 * 0x1p-149f;
        if (st.buf[1]) st.buf[1][i] = 400 * 0x1p-149f;
      }
    }
  }
  double t[MAX_RUNS];
  for (int r = 0; r < runs; r++) {
    int steps = 0;
    const double t0 = bench_now_s();
    double t1;
    do {
      if (loom_optim_step(opt, params, grads, LR, &err)) {
        fprintf(stderr, "bench-optim: %s\n", err.message);
        exit(1);
      }
      steps++;
    } while ((t1 = bench_now_s()) - t0 < RUN_SECONDS);
    t[r] = (t1 - t0) / steps;
  }
  loom_optim_free(opt);
  free(p);
  free(g);
  return bench_median(t, runs);
}

int main(int argc, char **argv) {
  const bool cpu_time = bench_take_flag(&argc, argv, "--cpu-time");
  int threads, runs;
  if (!bench_parse_args(argc, argv, MAX_RUNS, &threads, &runs)) return 2;
  bench_use_thread_cpu_time(cpu_time);
  static results res;
  for (int o = 0; o < N_OPTIMS; o++)
    for (int s = 0; s < N_STATES; s++) res.loom[o][s] = time_state(o, s, runs);
  bench_torch torch;
  bench_run_torch(&torch, "torch_optim.py", 1, runs, parse_torch, &res);
  printf("optimizer step on %d parameters, one thread, median of %d runs, %s; torch %s\n\n", N_PARAMS, runs,
         cpu_time ? "thread CPU time" : "wall clock", torch.available ? torch.version : torch.note);
  printf("%-8s %-10s %10s %11s %10s %11s %10s\n", "optim", "state", "loom ms", "vs ordinary", "torch ms",
         "vs ordinary", "torch/loom");
  for (int o = 0; o < N_OPTIMS; o++)
    for (int s = 0; s < N_STATES; s++) {
      const double l = res.loom[o][s], t = res.torch[o][s];
      printf("%-8s %-10s %10.3f %11.2f", optim_names[o], state_names[s], 1e3 * l, l / res.loom[o][0]);
      if (torch.available && t > 0)
        printf(" %10.3f %11.2f %10.2f\n", 1e3 * t, t / res.torch[o][0], t / l);
      else
        printf(" %10s\n", "-");
    }
  return 0;
}
