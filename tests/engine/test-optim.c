/*
 * Optimizers and clipping against torch.optim: a tiny MLP (3 → 4 tanh → 2,
 * MSE on 6 fixed samples) written out here, trained 20 steps by every
 * optimizer under every schedule (tests/parity/gen_train.py), must end
 * within 1e-5 of torch's weights.
 */
#include <glib.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/cpu.h"
#include "loom/loom.h"
#include "parity.h"
#include "train/optim-internal.h"
#include "test-levels.h"

#define STEPS 20
#define N_SAMPLES 6
#define N_IN 3
#define N_HIDDEN 4
#define N_OUT 2

static const char *const optimizers[] = {
  "sgd",       "sgd_momentum", "sgd_nesterov",  "sgd_momentum_clip", "adam",    "adam_amsgrad_wd",
  "adam_clip", "adamw",        "adamw_amsgrad", "rmsprop",           "rmsprop_centered_momentum",
  "sgd_maximize",
};
static const char *const schedules[] = {"constant", "step", "exponential", "cosine", "warmup_cosine", "warmup_step"};

static loom_schedule schedule_from_config(const char *name) {
  char key[96];
  g_snprintf(key, sizeof key, "sched_%s_config", name);
  loom_npy c = parity_load("train", key);
  g_assert_cmpint(loom_npy_numel(&c), ==, 9);
  loom_schedule s = parity_schedule(c.data, parity_decimal(c.data[1]));
  loom_npy_clear(&c);
  loom_error err = {0};
  if (loom_schedule_validate(&s, &err)) g_error("%s: %s", name, err.message);
  return s;
}

typedef struct opt_case {
  loom_optim_config cfg;
  double lr;
  double max_norm;
} opt_case;

static opt_case optim_from_config(const char *name) {
  char key[96];
  g_snprintf(key, sizeof key, "optcfg_%s", name);
  loom_npy c = parity_load("train", key);
  g_assert_cmpint(loom_npy_numel(&c), ==, 14);
  const float *v = c.data;
  opt_case oc = {
    .cfg = {.kind = (loom_optim_kind)v[0], .momentum = parity_decimal(v[2]), .dampening = parity_decimal(v[3]),
            .nesterov = v[4] != 0.0f, .weight_decay = parity_decimal(v[5]), .beta1 = parity_decimal(v[6]),
            .beta2 = parity_decimal(v[7]), .eps = parity_decimal(v[8]), .amsgrad = v[9] != 0.0f,
            .alpha = parity_decimal(v[10]), .centered = v[11] != 0.0f, .maximize = v[12] != 0.0f},
    .lr = parity_decimal(v[1]),
    .max_norm = parity_decimal(v[13]),
  };
  loom_npy_clear(&c);
  return oc;
}

typedef struct mlp {
  float w1[N_HIDDEN * N_IN], b1[N_HIDDEN], w2[N_OUT * N_HIDDEN], b2[N_OUT];
  float gw1[N_HIDDEN * N_IN], gb1[N_HIDDEN], gw2[N_OUT * N_HIDDEN], gb2[N_OUT];
} mlp;

static void load_into(float *dst, const char *name, int64_t n) {
  loom_npy a = parity_load("train", name);
  g_assert_cmpint(loom_npy_numel(&a), ==, n);
  memcpy(dst, a.data, (size_t)n * sizeof(float));
  loom_npy_clear(&a);
}

/* Loss and gradients of mean((W2·tanh(W1·x + b1) + b2 - y)²). */
static double mlp_loss_and_grad(mlp *m, const float *x, const float *y) {
  float out[N_SAMPLES * N_OUT], dout[N_SAMPLES * N_OUT], hidden[N_SAMPLES * N_HIDDEN];
  for (int s = 0; s < N_SAMPLES; s++) {
    for (int j = 0; j < N_HIDDEN; j++) {
      double a = m->b1[j];
      for (int k = 0; k < N_IN; k++) a += (double)m->w1[j * N_IN + k] * x[s * N_IN + k];
      hidden[s * N_HIDDEN + j] = (float)tanh(a);
    }
    for (int o = 0; o < N_OUT; o++) {
      double a = m->b2[o];
      for (int j = 0; j < N_HIDDEN; j++) a += (double)m->w2[o * N_HIDDEN + j] * hidden[s * N_HIDDEN + j];
      out[s * N_OUT + o] = (float)a;
    }
  }
  double loss;
  loom_error err = {0};
  if (loom_loss_mse(out, y, N_SAMPLES, N_OUT, &loss, dout, &err)) g_error("%s", err.message);
  double gw1[N_HIDDEN * N_IN] = {0}, gb1[N_HIDDEN] = {0}, gw2[N_OUT * N_HIDDEN] = {0}, gb2[N_OUT] = {0};
  for (int s = 0; s < N_SAMPLES; s++) {
    for (int j = 0; j < N_HIDDEN; j++) {
      double h = hidden[s * N_HIDDEN + j], dh = 0.0;
      for (int o = 0; o < N_OUT; o++) {
        double d = dout[s * N_OUT + o];
        gw2[o * N_HIDDEN + j] += d * h;
        dh += d * m->w2[o * N_HIDDEN + j];
      }
      double da = dh * (1.0 - h * h);
      gb1[j] += da;
      for (int k = 0; k < N_IN; k++) gw1[j * N_IN + k] += da * x[s * N_IN + k];
    }
    for (int o = 0; o < N_OUT; o++) gb2[o] += dout[s * N_OUT + o];
  }
  for (int i = 0; i < N_HIDDEN * N_IN; i++) m->gw1[i] = (float)gw1[i];
  for (int i = 0; i < N_HIDDEN; i++) m->gb1[i] = (float)gb1[i];
  for (int i = 0; i < N_OUT * N_HIDDEN; i++) m->gw2[i] = (float)gw2[i];
  for (int i = 0; i < N_OUT; i++) m->gb2[i] = (float)gb2[i];
  return loss;
}

static void run_case(const char *opt_name, const char *sched_name, const float *x, const float *y) {
  opt_case oc = optim_from_config(opt_name);
  loom_schedule sched = schedule_from_config(sched_name);
  /* The schedule files were made at base 0.1; the optimizer brings its own lr. */
  sched.base_lr = oc.lr;
  mlp m;
  load_into(m.w1, "opt_w1", N_HIDDEN * N_IN);
  load_into(m.b1, "opt_b1", N_HIDDEN);
  load_into(m.w2, "opt_w2", N_OUT * N_HIDDEN);
  load_into(m.b2, "opt_b2", N_OUT);
  float *params[4] = {m.w1, m.b1, m.w2, m.b2};
  float *grads[4] = {m.gw1, m.gb1, m.gw2, m.gb2};
  const int64_t sizes[4] = {N_HIDDEN * N_IN, N_HIDDEN, N_OUT * N_HIDDEN, N_OUT};
  loom_error err = {0};
  loom_optim *opt = loom_optim_new(&oc.cfg, 4, sizes, &err);
  if (!opt) g_error("%s: %s", opt_name, err.message);
  float losses[STEPS];
  for (int step = 0; step < STEPS; step++) {
    losses[step] = (float)mlp_loss_and_grad(&m, x, y);
    if (oc.max_norm > 0.0) {
      double norm;
      g_assert_cmpint(loom_clip_grad_norm(grads, sizes, 4, oc.max_norm, 2.0, false, &norm, &err), ==, LOOM_OK);
    }
    if (loom_optim_step(opt, params, (const float *const *)grads, loom_schedule_lr(&sched, step), &err))
      g_error("%s: %s", opt_name, err.message);
  }
  g_assert_cmpint(loom_optim_tensor_steps(opt, 3), ==, STEPS);
  loom_optim_free(opt);

  char key[128], what[160];
  g_snprintf(key, sizeof key, "%s__%s_losses", opt_name, sched_name);
  loom_npy ref_losses = parity_load("train", key);
  g_snprintf(what, sizeof what, "%s with %s: losses", opt_name, sched_name);
  parity_assert_matches(what, losses, ref_losses.data, STEPS);
  g_snprintf(key, sizeof key, "%s__%s_params", opt_name, sched_name);
  loom_npy ref = parity_load("train", key);
  float flat[N_HIDDEN * N_IN + N_HIDDEN + N_OUT * N_HIDDEN + N_OUT];
  int64_t at = 0;
  for (int i = 0; i < 4; i++) {
    memcpy(flat + at, params[i], (size_t)sizes[i] * sizeof(float));
    at += sizes[i];
  }
  g_assert_cmpint(loom_npy_numel(&ref), ==, at);
  g_snprintf(what, sizeof what, "%s with %s: weights after %d steps", opt_name, sched_name, STEPS);
  parity_assert_matches(what, flat, ref.data, at);
  loom_npy_clear(&ref_losses);
  loom_npy_clear(&ref);
}

static void test_parity_all(void) {
  float x[N_SAMPLES * N_IN], y[N_SAMPLES * N_OUT];
  load_into(x, "opt_x", N_SAMPLES * N_IN);
  load_into(y, "opt_y", N_SAMPLES * N_OUT);
  for (size_t o = 0; o < G_N_ELEMENTS(optimizers); o++)
    for (size_t s = 0; s < G_N_ELEMENTS(schedules); s++) run_case(optimizers[o], schedules[s], x, y);
}

/* ---- clipping ------------------------------------------------------------------ */

static void check_clip(const char *name) {
  char key[96];
  loom_npy g[3], out[3];
  float *grads[3];
  int64_t sizes[3];
  for (int i = 0; i < 3; i++) {
    g_snprintf(key, sizeof key, "clip_%s_g%d", name, i);
    g[i] = parity_load("train", key);
    g_snprintf(key, sizeof key, "clip_%s_out%d", name, i);
    out[i] = parity_load("train", key);
    grads[i] = g[i].data;
    sizes[i] = loom_npy_numel(&g[i]);
  }
  g_snprintf(key, sizeof key, "clip_%s_config", name);
  loom_npy cfg = parity_load("train", key);
  g_snprintf(key, sizeof key, "clip_%s_norm", name);
  loom_npy norm_ref = parity_load("train", key);
  double max_norm = parity_decimal(cfg.data[0]),
         norm_type = cfg.data[1] == 0.0f ? INFINITY : parity_decimal(cfg.data[1]);
  double total;
  loom_error err = {0};
  g_assert_cmpint(loom_clip_grad_norm(grads, sizes, 3, max_norm, norm_type, true, &total, &err), ==, LOOM_OK);
  float total_f = (float)total;
  parity_assert_matches(name, &total_f, norm_ref.data, 1);
  for (int i = 0; i < 3; i++) {
    parity_assert_matches(name, grads[i], out[i].data, sizes[i]);
    loom_npy_clear(&g[i]);
    loom_npy_clear(&out[i]);
  }
  loom_npy_clear(&cfg);
  loom_npy_clear(&norm_ref);
}

static void test_clip_parity(void) {
  check_clip("l2_clips");
  check_clip("l2_no_clip");
  check_clip("inf");
  check_clip("l1");
  check_clip("l3");
}

static void test_clip_nonfinite(void) {
  float a[3] = {1.0f, NAN, 2.0f}, b[2] = {3.0f, 4.0f};
  float *grads[3] = {a, NULL, b};
  int64_t sizes[3] = {3, 7, 2};
  double total;
  loom_error err = {0};
  g_assert_cmpint(loom_clip_grad_norm(grads, sizes, 3, 1.0, 2.0, true, &total, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_cmpstr(err.message, ==, "clip_grad_norm: the total norm of order 2 of the gradients is non-finite (nan)");
  g_assert_cmpfloat(b[0], ==, 3.0f); /* untouched on error */
  a[1] = 0.0f;
  /* NULL gradients are skipped: norm of {1,0,2,3,4} = sqrt(30). */
  g_assert_cmpint(loom_clip_grad_norm(grads, sizes, 3, 100.0, 2.0, true, &total, &err), ==, LOOM_OK);
  g_assert_cmpfloat_with_epsilon(total, sqrt(30.0), 1e-12);
  g_assert_cmpfloat(b[1], ==, 4.0f);
  g_assert_cmpint(loom_clip_grad_norm(grads, sizes, 3, 1.0, -1.0, true, &total, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "clip_grad_norm: norm_type is -1, expected > 0 or infinity");
}

/* ---- configuration and state ------------------------------------------------------ */

static void test_validation(void) {
  loom_error err = {0};
  loom_optim_config c = loom_optim_defaults(LOOM_OPTIM_SGD);
  c.nesterov = true;
  g_assert_cmpint(loom_optim_config_validate(&c, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "sgd: nesterov needs momentum > 0 and dampening 0 (momentum 0, dampening 0)");
  c = loom_optim_defaults(LOOM_OPTIM_ADAM);
  c.beta2 = 1.0;
  g_assert_cmpint(loom_optim_config_validate(&c, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "adam: beta2 is 1, expected a value in [0, 1)");
  c = loom_optim_defaults(LOOM_OPTIM_RMSPROP);
  c.weight_decay = -0.1;
  g_assert_cmpint(loom_optim_config_validate(&c, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "rmsprop: weight_decay is -0.1, expected a finite value >= 0");
  c = loom_optim_defaults(LOOM_OPTIM_ADAMW);
  g_assert_cmpfloat(c.weight_decay, ==, 0.01);
  g_assert_cmpfloat(c.eps, ==, 1e-8);
  int64_t bad_sizes[2] = {3, 0};
  g_assert_null(loom_optim_new(&c, 2, bad_sizes, &err));
  g_assert_cmpstr(err.message, ==, "adamw: tensor 1 has size 0, expected at least 1");
  loom_optim_kind k;
  g_assert_cmpint(loom_optim_from_name("lion", &k, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "unknown optimizer 'lion' (expected sgd, adam, adamw or rmsprop)");
  for (int i = 0; i < 4; i++) {
    g_assert_cmpint(loom_optim_from_name(loom_optim_name((loom_optim_kind)i), &k, NULL), ==, LOOM_OK);
    g_assert_cmpint(k, ==, i);
  }
}

static void test_skip_and_reset(void) {
  loom_optim_config c = loom_optim_defaults(LOOM_OPTIM_SGD);
  c.momentum = 0.5;
  int64_t sizes[2] = {2, 1};
  loom_error err = {0};
  loom_optim *opt = loom_optim_new(&c, 2, sizes, &err);
  g_assert_nonnull(opt);
  float p0[2] = {1.0f, 2.0f}, p1[1] = {5.0f}, g0[2] = {1.0f, -1.0f};
  float *params[2] = {p0, p1};
  const float *grads[2] = {g0, NULL};
  g_assert_cmpint(loom_optim_step(opt, params, grads, 0.5, &err), ==, LOOM_OK);
  /* First step: buffer = gradient. */
  g_assert_cmpfloat(p0[0], ==, 0.5f);
  g_assert_cmpfloat(p0[1], ==, 2.5f);
  g_assert_cmpfloat(p1[0], ==, 5.0f);
  g_assert_cmpint(loom_optim_tensor_steps(opt, 0), ==, 1);
  g_assert_cmpint(loom_optim_tensor_steps(opt, 1), ==, 0);
  /* Second: buffer = 0.5·1 + 1 = 1.5. */
  g_assert_cmpint(loom_optim_step(opt, params, grads, 0.5, &err), ==, LOOM_OK);
  g_assert_cmpfloat(p0[0], ==, -0.25f);
  loom_optim_reset(opt);
  g_assert_cmpint(loom_optim_tensor_steps(opt, 0), ==, 0);
  g_assert_cmpint(loom_optim_step(opt, params, grads, 0.5, &err), ==, LOOM_OK);
  g_assert_cmpfloat(p0[0], ==, -0.75f);
  g_assert_cmpint(loom_optim_step(opt, params, grads, -1.0, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "sgd: lr is -1, expected a finite value >= 0");
  loom_optim_free(opt);
}


/* Equal bits, or both NaN (a NaN's payload may depend on operand order). */
static void assert_same_bits(const char *what, const float *a, const float *b, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
    uint32_t x, y;
    memcpy(&x, &a[i], sizeof x);
    memcpy(&y, &b[i], sizeof y);
    if (x != y && !(isnan(a[i]) && isnan(b[i])))
      g_error("%s[%lld]: %a against the reference's %a", what, (long long)i, (double)a[i], (double)b[i]);
  }
}

/* The vector Adam/AdamW updates (optim-adam.c) give the plain loop's bits
 * at every level this machine has: every combination of the options, lengths
 * around the vector widths, three steps, values from 1e-30 to 1e4 with zeros,
 * negative zeros, an infinity and a NaN among the gradients. */
static void test_adam_levels(void) {
  static const int64_t lengths[] = {1, 7, 8, 9, 15, 16, 17, 31, 33, 64, 1003};
  GRand *r = g_rand_new_with_seed(13);
  int checked = 0;
  for (int level = LOOM_KERNELS_AVX2; level <= TEST_LAST_LEVEL; level++) {
    if (!loom_kernels_for((loom_kernel_level)level)) continue;
    for (int opts = 0; opts < 16; opts++)
      for (size_t li = 0; li < G_N_ELEMENTS(lengths); li++) {
        int64_t n = lengths[li];
        bool amsgrad = opts & 8;
        float *v[2][4]; /* [ref, level][p, m1, m2, vmax] */
        float *g = g_new(float, n);
        for (int k = 0; k < 2; k++)
          for (int b = 0; b < 4; b++) v[k][b] = g_new0(float, n);
        for (int64_t i = 0; i < n; i++) v[0][0][i] = v[1][0][i] = (float)g_rand_double_range(r, -2.0, 2.0);
        for (int step = 1; step <= 3; step++) {
          for (int64_t i = 0; i < n; i++) {
            double mag = pow(10.0, g_rand_double_range(r, -30.0, 4.0));
            g[i] = (float)(g_rand_boolean(r) ? mag : -mag);
            if (i % 13 == 5) g[i] = i % 2 ? 0.0f : -0.0f;
          }
          if (n > 20) {
            g[11] = INFINITY;
            g[19] = NAN;
          }
          optim_adam_coef k = {.b1 = 0.9f, .b2 = 0.999f, .one_b1 = (float)(1.0 - 0.9), .one_b2 = (float)(1.0 - 0.999),
                               .eps = 1e-8f, .wd = opts & 2 ? 0.01f : 0.0f, .decay = (float)(1.0 - 1e-3 * 0.01),
                               .step_size = (float)(1e-3 / (1.0 - pow(0.9, step))),
                               .bias2_sqrt = (float)sqrt(1.0 - pow(0.999, step)), .decoupled = opts & 4,
                               .maximize = opts & 1};
          for (int kk = 0; kk < 2; kk++)
            optim_adam_update(&k, kk ? (loom_kernel_level)level : LOOM_KERNELS_REF, n, v[kk][0], g, v[kk][1],
                              v[kk][2], amsgrad ? v[kk][3] : NULL);
          static const char *const names[] = {"param", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
          for (int b = 0; b < 4; b++) assert_same_bits(names[b], v[1][b], v[0][b], n);
          checked++;
        }
        for (int k = 0; k < 2; k++)
          for (int b = 0; b < 4; b++) g_free(v[k][b]);
        g_free(g);
      }
  }
  g_rand_free(r);
  if (!checked) g_test_skip("no vector level on this machine");
}

/* A float from its bits. */
static float from_bits(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

/* One of the magnitudes where a float32 multiply, divide or root could meet
 * a subnormal (optim-adam.c): subnormals from the smallest on (among them
 * the fixed points of beta1 = 0.9 and beta2 = 0.999 and their neighbours,
 * k = 1…6 and 495…505 times 2^-149), normals just above 2^-126, the band
 * where (1 − beta2) · g² turns subnormal (|g| near 2^-64), 1e-30, zeros of
 * both signs, and ordinary values, signs mixed. */
static float risky_value(GRand *r) {
  const int pick = g_rand_int_range(r, 0, 9);
  uint32_t bits;
  switch (pick) {
  case 0: bits = (uint32_t)g_rand_int_range(r, 1, 7); break;
  case 1: bits = (uint32_t)g_rand_int_range(r, 495, 506); break;
  case 2: bits = (uint32_t)g_rand_int_range(r, 1, 0x800000); break; /* any subnormal */
  case 3: bits = 0x800000u + (uint32_t)g_rand_int_range(r, 0, 0x4000000); break; /* 2^-126 to 2^-118 */
  case 4: bits = (uint32_t)(127 - g_rand_int_range(r, 56, 76)) << 23 | (uint32_t)g_rand_int_range(r, 0, 0x800000);
    break; /* 2^-75 to 2^-56 */
  case 5: return g_rand_boolean(r) ? 1e-30f : -1e-30f;
  case 6: return g_rand_boolean(r) ? 0.0f : -0.0f;
  default: return (float)g_rand_double_range(r, -2.0, 2.0);
  }
  if (g_rand_boolean(r)) bits |= 0x80000000u;
  return from_bits(bits);
}

/* The kinds of block of test_adam_subnormal_levels. */
static bool stuck_like(int kind, int64_t i) { return kind == 3 || (kind == 4 && i % 2); }
static bool risky(int kind, int64_t i, GRand *r) {
  return kind == 0 || (kind == 2 && g_rand_int_range(r, 0, 4) == 0) || (kind == 4 && !(i % 2) && g_rand_boolean(r));
}

/* Subnormals at every level (optim-adam.c sends the vectors that would meet
 * one through double, and sets apart weights whose gradient is 0 and whose
 * exp_avg sits on a fixed point): the plain loop's bits for gradients,
 * moments and weights drawn from risky_value, lanes of a vector mixing them
 * with ordinary ones or all of one kind, over five steps; every option
 * combination (amsgrad's running maximum among them), and coefficient sets
 * that turn the skipping off (eps = 0, a step size too large for the fixed
 * points) or widen it (beta1 = 1). */
static void test_adam_subnormal_levels(void) {
  typedef struct {
    float b1, b2, eps, lr;
  } coefs;
  static const coefs sets[] = {
    {0.9f, 0.999f, 1e-8f, 1e-3f}, {0.9f, 0.999f, 0.0f, 1e-3f}, {0.9f, 0.999f, 1e-8f, 0.2f},
    {1.0f, 0.999f, 1e-8f, 1e-3f}, {0.5f, 0.9f, 1e-30f, 1e-2f},
  };
  const int64_t n = 16 * 64 + 11;
  GRand *r = g_rand_new_with_seed(31);
  int checked = 0;
  for (int level = LOOM_KERNELS_AVX2; level <= TEST_LAST_LEVEL; level++) {
    if (!loom_kernels_for((loom_kernel_level)level)) continue;
    for (size_t cs = 0; cs < G_N_ELEMENTS(sets); cs++)
      for (int opts = 0; opts < 16; opts++) {
        float *v[2][4], *g = g_new(float, n); /* [ref, level][p, m1, m2, vmax] */
        for (int k = 0; k < 2; k++)
          for (int b = 0; b < 4; b++) v[k][b] = g_new(float, n);
        /* blocks of 16: all risky, all ordinary, one in four risky, all
         * stuck-like (moments on or near the fixed points, of either
         * sign, zeros included), half stuck-like */
        for (int64_t i = 0; i < n; i++) {
          const int kind = (int)(i / 16 % 5);
          for (int b = 0; b < 4; b++) {
            float x;
            if (stuck_like(kind, i) && b == 1) {
              /* mostly on a fixed point of beta1 = 0.9 (k ≤ 4), now and then just past one */
              const bool past = g_rand_int_range(r, 0, 128) == 0;
              const int k = past ? g_rand_int_range(r, 5, 7) : g_rand_int_range(r, 0, 5);
              x = from_bits((uint32_t)k | (g_rand_boolean(r) ? 0x80000000u : 0));
            } else if (stuck_like(kind, i) && b == 2) {
              /* anything but −0 and NaN leaves such a lane stuck: subnormals on and off the fixed
               * points of 0.999 (k ≤ 500), normals, +inf, and now and then −0 or a NaN */
              const int pick = g_rand_int_range(r, 0, 64);
              x = pick == 0   ? -0.0f
                  : pick == 1 ? NAN
                  : pick == 2 ? INFINITY
                  : pick < 20 ? (float)g_rand_double_range(r, 0.0, 1e-3)
                  : pick < 40 ? from_bits((uint32_t)g_rand_int_range(r, 0, 0x800000))
                              : from_bits((uint32_t)g_rand_int_range(r, 490, 506));
              v[0][b][i] = v[1][b][i] = x;
              continue; /* not through fabsf */
            } else if (stuck_like(kind, i)) { /* the weight: now and then −0 or a risky value */
              const int pick = g_rand_int_range(r, 0, 32);
              x = pick == 0 ? -0.0f : pick == 1 ? risky_value(r) : (float)g_rand_double_range(r, -1.0, 1.0);
            } else {
              x = risky(kind, i, r) ? risky_value(r) : (float)g_rand_double_range(r, -1.0, 1.0);
            }
            if (b >= 2) x = fabsf(x); /* exp_avg_sq, max_exp_avg_sq ≥ 0 */
            v[0][b][i] = v[1][b][i] = x;
          }
        }
        const coefs *c = &sets[cs];
        for (int step = 1; step <= 5; step++) {
          for (int64_t i = 0; i < n; i++) {
            const int kind = (int)(i / 16 % 5);
            if (stuck_like(kind, i)) { /* ±0 (the weights left alone), now and then not */
              g[i] = g_rand_int_range(r, 0, 256) ? (g_rand_boolean(r) ? 0.0f : -0.0f) : risky_value(r);
              if (g_rand_int_range(r, 0, 32) == 0) v[0][0][i] = v[1][0][i] = -0.0f; /* −0 + +0 is +0 */
            }
            else
              g[i] = risky(kind, i, r) ? risky_value(r) : (float)g_rand_double_range(r, -1, 1);
          }
          const double bias1 = 1.0 - pow(c->b1, step), bias2 = 1.0 - pow(c->b2, step);
          optim_adam_coef k = {.b1 = c->b1, .b2 = c->b2, .one_b1 = (float)(1.0 - c->b1),
                               .one_b2 = (float)(1.0 - c->b2), .eps = c->eps, .wd = opts & 2 ? 0.01f : 0.0f,
                               .decay = (float)(1.0 - c->lr * 0.01),
                               .step_size = (float)(c->lr / (bias1 > 0 ? bias1 : 1.0)),
                               .bias2_sqrt = (float)sqrt(bias2), .decoupled = opts & 4, .maximize = opts & 1};
          for (int kk = 0; kk < 2; kk++)
            optim_adam_update(&k, kk ? (loom_kernel_level)level : LOOM_KERNELS_REF, n, v[kk][0], g, v[kk][1],
                              v[kk][2], opts & 8 ? v[kk][3] : NULL);
          static const char *const names[] = {"param", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"};
          for (int b = 0; b < 4; b++) assert_same_bits(names[b], v[1][b], v[0][b], n);
          checked++;
        }
        for (int k = 0; k < 2; k++)
          for (int b = 0; b < 4; b++) g_free(v[k][b]);
        g_free(g);
      }
  }
  g_rand_free(r);
  if (!checked) g_test_skip("no vector level on this machine");
}

/* SGD and RMSprop at every level (optim-sgd.c): the plain loop's bits for
 * every option combination (momentum, dampening, Nesterov, weight decay,
 * maximize; centered, momentum, weight decay, maximize), lengths around the
 * vector widths, and values that are ordinary, or drawn from risky_value in
 * blocks of 16 (subnormal momenta and averages on and off the fixed points
 * of the decays, tiny gradients whose squares are subnormal, zeros of
 * either sign), over five steps, the first of them starting SGD's buffer. */
static void test_sgd_rmsprop_levels(void) {
  static const int64_t lengths[] = {1, 7, 8, 9, 17, 16 * 40 + 5};
  GRand *r = g_rand_new_with_seed(37);
  int checked = 0;
  for (int level = LOOM_KERNELS_AVX2; level <= TEST_LAST_LEVEL; level++) {
    if (!loom_kernels_for((loom_kernel_level)level)) continue;
    for (int rms = 0; rms < 2; rms++)
      for (int opts = 0; opts < 16; opts++)
        for (size_t li = 0; li < G_N_ELEMENTS(lengths); li++) {
          const int64_t n = lengths[li];
          float *v[2][4], *g = g_new(float, n); /* [ref, level][p, buf1, buf2, buf3] */
          for (int k = 0; k < 2; k++)
            for (int b = 0; b < 4; b++) v[k][b] = g_new(float, n);
          for (int64_t i = 0; i < n; i++)
            for (int b = 0; b < 4; b++) {
              float x = i / 16 % 2 ? risky_value(r) : (float)g_rand_double_range(r, -1.0, 1.0);
              if (b == 2) x = fabsf(x); /* square_avg ≥ 0 */
              v[0][b][i] = v[1][b][i] = x;
            }
          for (int step = 1; step <= 5; step++) {
            for (int64_t i = 0; i < n; i++) {
              const bool risky = i / 16 % 2;
              g[i] = risky ? (g_rand_boolean(r) ? 0.0f : risky_value(r)) : (float)g_rand_double_range(r, -1, 1);
            }
            const float wd = opts & 2 ? 0.01f : 0.0f, lr = 0.01f;
            for (int kk = 0; kk < 2; kk++) {
              const loom_kernel_level lv = kk ? (loom_kernel_level)level : LOOM_KERNELS_REF;
              if (rms) {
                const optim_rmsprop_coef c = {.a = 0.99f, .one_a = (float)(1.0 - 0.99), .eps = opts & 8 ? 0.0f : 1e-8f,
                                              .wd = wd, .mom = opts & 4 ? 0.9f : 0.0f, .neg_lr = -lr,
                                              .maximize = opts & 1, .centered = opts & 8};
                optim_rmsprop_update(&c, lv, n, v[kk][0], g, v[kk][1], v[kk][2], v[kk][3]);
              } else {
                const optim_sgd_coef c = {.wd = wd, .mom = opts & 4 ? 0.9f : 0.0f,
                                          .damp1 = opts & 8 ? 0.5f : 1.0f, .neg_lr = -lr, .maximize = opts & 1,
                                          .nesterov = (opts & 12) == 4, .first = step == 1};
                optim_sgd_update(&c, lv, n, v[kk][0], g, v[kk][1]);
              }
            }
            static const char *const names[] = {"param", "momentum_buffer", "square_avg", "grad_avg"};
            for (int b = 0; b < 4; b++) assert_same_bits(names[b], v[1][b], v[0][b], n);
            checked++;
          }
          for (int k = 0; k < 2; k++)
            for (int b = 0; b < 4; b++) g_free(v[k][b]);
          g_free(g);
        }
  }
  g_rand_free(r);
  if (!checked) g_test_skip("no vector level on this machine");
}

/* With a pool (loom_optim_set_pool) a tensor is updated in pieces on its
 * threads: the same bits as the calling thread alone, for every optimizer
 * and option, a tensor of several pieces with a partial last one, a small
 * tensor and a skipped one, over three steps (SGD's buffer starts from the
 * first gradient). */
static void test_pooled(void) {
  static const int64_t sizes[3] = {3 * 16384 + 37, 5, 20000};
  static const int threads[] = {2, 3};
  loom_optim_config cfgs[9] = {loom_optim_defaults(LOOM_OPTIM_SGD), loom_optim_defaults(LOOM_OPTIM_SGD),
                               loom_optim_defaults(LOOM_OPTIM_SGD), loom_optim_defaults(LOOM_OPTIM_ADAM),
                               loom_optim_defaults(LOOM_OPTIM_ADAM), loom_optim_defaults(LOOM_OPTIM_ADAMW),
                               loom_optim_defaults(LOOM_OPTIM_RMSPROP), loom_optim_defaults(LOOM_OPTIM_RMSPROP),
                               loom_optim_defaults(LOOM_OPTIM_ADAM)};
  cfgs[1].momentum = 0.9;
  cfgs[1].weight_decay = 0.01;
  cfgs[2].momentum = 0.9;
  cfgs[2].nesterov = true;
  cfgs[2].maximize = true;
  cfgs[4].amsgrad = true;
  cfgs[4].weight_decay = 0.1;
  cfgs[6].momentum = 0.5;
  cfgs[6].centered = true;
  cfgs[8].maximize = true;
  GRand *r = g_rand_new_with_seed(29);
  for (size_t t = 0; t < G_N_ELEMENTS(threads); t++) {
    loom_pool *pool = loom_pool_new(threads[t], NULL);
    g_assert_nonnull(pool);
    for (size_t c = 0; c < G_N_ELEMENTS(cfgs); c++) {
      loom_error err = {0};
      loom_optim *opt[2] = {loom_optim_new(&cfgs[c], 3, sizes, &err), loom_optim_new(&cfgs[c], 3, sizes, &err)};
      g_assert_nonnull(opt[0]);
      g_assert_nonnull(opt[1]);
      loom_optim_set_pool(opt[1], pool);
      float *p[2][3], *g[3];
      for (int i = 0; i < 3; i++) {
        g[i] = g_new(float, sizes[i]);
        p[0][i] = g_new(float, sizes[i]);
        p[1][i] = g_new(float, sizes[i]);
        for (int64_t e = 0; e < sizes[i]; e++) p[0][i][e] = p[1][i][e] = (float)g_rand_double_range(r, -1.0, 1.0);
      }
      for (int step = 0; step < 3; step++) {
        for (int i = 0; i < 3; i++)
          for (int64_t e = 0; e < sizes[i]; e++) g[i][e] = (float)g_rand_double_range(r, -3.0, 3.0);
        const float *grads[3] = {g[0], step == 1 ? NULL : g[1], g[2]};
        for (int k = 0; k < 2; k++) g_assert_cmpint(loom_optim_step(opt[k], p[k], grads, 1e-2, &err), ==, LOOM_OK);
        for (int i = 0; i < 3; i++) {
          assert_same_bits("pooled parameters", p[1][i], p[0][i], sizes[i]);
          g_assert_cmpint(loom_optim_tensor_steps(opt[1], i), ==, loom_optim_tensor_steps(opt[0], i));
        }
      }
      for (int i = 0; i < 3; i++) {
        g_free(g[i]);
        g_free(p[0][i]);
        g_free(p[1][i]);
      }
      loom_optim_free(opt[0]);
      loom_optim_free(opt[1]);
    }
    loom_pool_free(pool);
  }
  g_rand_free(r);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/train/optim/parity-mlp-20-steps", test_parity_all);
  g_test_add_func("/train/optim/clip-parity", test_clip_parity);
  g_test_add_func("/train/optim/clip-nonfinite", test_clip_nonfinite);
  g_test_add_func("/train/optim/validation", test_validation);
  g_test_add_func("/train/optim/skip-and-reset", test_skip_and_reset);
  g_test_add_func("/train/optim/adam-levels", test_adam_levels);
  g_test_add_func("/train/optim/adam-subnormal-levels", test_adam_subnormal_levels);
  g_test_add_func("/train/optim/sgd-rmsprop-levels", test_sgd_rmsprop_levels);
  g_test_add_func("/train/optim/pooled", test_pooled);
  return g_test_run();
}
