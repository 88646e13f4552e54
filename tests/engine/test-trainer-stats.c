/* The trainer's per-layer statistics and NaN watchdog after the fusion of
 * their passes (engine/train/trainer-check.c): the blocked float sums of
 * squares against float64 sums (including their float-overflow, underflow
 * and non-finite fallbacks), every norm of a step against a float64
 * reference computed here from the weights before and after, bit-identical
 * statistics at 1 and 3 threads, and the masters put back when an update
 * is not finite. */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "kernels/cpu.h"
#include "train-test-util.h"
#include "train/trainer-internal.h"
#include "test-levels.h"

static double exact_sum_squares(const float *v, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += (double)v[i] * (double)v[i];
  return s;
}

/* The fallback's documented order (trainer-check.c): element i into double
 * lane i % 8, the lanes in order, then the tail. */
static double lane_sum_squares(const float *v, int64_t n) {
  double a[8] = {0}, s = 0.0;
  const int64_t full = n / 8 * 8;
  for (int64_t i = 0; i < full; i++) a[i % 8] += (double)v[i] * (double)v[i];
  for (int j = 0; j < 8; j++) s += a[j];
  for (int64_t i = full; i < n; i++) s += (double)v[i] * (double)v[i];
  return s;
}

static double exact_diff_squares(const float *w, const float *b, int64_t n) {
  double s = 0.0;
  for (int64_t i = 0; i < n; i++) s += ((double)w[i] - (double)b[i]) * ((double)w[i] - (double)b[i]);
  return s;
}

static void assert_rel(double got, double want, double rtol) {
  if (fabs(got - want) > rtol * fabs(want)) g_error("got %.17g, expected %.17g (relative tolerance %g)", got, want, rtol);
}

static void fill_random(float *v, int64_t n, double scale, uint32_t seed) {
  GRand *r = g_rand_new_with_seed(seed);
  for (int64_t i = 0; i < n; i++) v[i] = (float)(scale * g_rand_double_range(r, -1.0, 1.0));
  g_rand_free(r);
}

static void test_sum_squares(void) {
  const int64_t sizes[] = {0, 1, 15, 16, 17, 1000, 1023, 1024, 1025, 5003};
  float *v = g_new(float, 5003 + 1), *b = g_new(float, 5003 + 1), *moved = g_new(float, 5003 + 1);
  for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++) {
    int64_t n = sizes[k];
    fill_random(v, n, 3.0, 7 + (uint32_t)k);
    fill_random(b, n, 3.0, 70 + (uint32_t)k);
    double s = train_sum_squares(v, n);
    assert_rel(s, exact_sum_squares(v, n), 1e-6);
    /* the lanes follow the index, not the address: the same values one float
     * further on give the same bits */
    memcpy(moved + 1, v, (size_t)n * sizeof *v);
    double s_moved = train_sum_squares(moved + 1, n);
    g_assert_true(memcmp(&s, &s_moved, sizeof s) == 0);
    double ww = -1, dd = -1;
    train_sum_squares_diff(v, b, n, &ww, &dd);
    g_assert_true(memcmp(&ww, &s, sizeof s) == 0);
    assert_rel(dd, exact_diff_squares(v, b, n), 1e-6);
  }
  g_assert_cmpfloat(train_sum_squares(v, 0), ==, 0.0);
  double ww, dd;

  /* squares beyond FLT_MAX and below the float range: the block is summed in
   * double lanes, so one block (n <= 1024) equals that order's sum exactly
   * and the plain double sum to rounding */
  fill_random(v, 1000, 1e20, 3);
  g_assert_cmpfloat(train_sum_squares(v, 1000), ==, lane_sum_squares(v, 1000));
  assert_rel(train_sum_squares(v, 1000), exact_sum_squares(v, 1000), 1e-14);
  fill_random(v, 1000, 1e-25, 4);
  double tiny = train_sum_squares(v, 1000);
  g_assert_cmpfloat(tiny, >, 0.0);
  g_assert_cmpfloat(tiny, ==, lane_sum_squares(v, 1000));
  assert_rel(tiny, exact_sum_squares(v, 1000), 1e-14);
  /* a trained network's gradients: every value tiny, so every block falls
   * back, squares and differences alike */
  fill_random(v, 5003, 1e-20, 5);
  fill_random(b, 5003, 1e-20, 6);
  assert_rel(train_sum_squares(v, 5003), exact_sum_squares(v, 5003), 1e-14);
  train_sum_squares_diff(v, b, 5003, &ww, &dd);
  assert_rel(dd, exact_diff_squares(v, b, 5003), 1e-14);
  float big_w[3] = {3e38f, 1.0f, -2e38f}, big_b[3] = {-3e38f, 1.0f, 2e38f};
  train_sum_squares_diff(big_w, big_b, 3, &ww, &dd);
  g_assert_cmpfloat(dd, ==, exact_diff_squares(big_w, big_b, 3));
  g_assert_true(isfinite(dd) && dd > 3e77);

  /* a single NaN or infinity anywhere makes the sum non-finite */
  const int64_t at[] = {0, 15, 16, 777, 1024, 5002};
  const float bad[] = {NAN, INFINITY, -INFINITY};
  for (size_t i = 0; i < G_N_ELEMENTS(at); i++)
    for (size_t j = 0; j < G_N_ELEMENTS(bad); j++) {
      fill_random(v, 5003, 1.0, 9);
      memcpy(b, v, 5003 * sizeof *v);
      v[at[i]] = bad[j];
      double s = train_sum_squares(v, 5003);
      g_assert_false(isfinite(s));
      g_assert_cmpint(isnan(s), ==, isnan(bad[j]));
      train_sum_squares_diff(v, b, 5003, &ww, &dd);
      g_assert_false(isfinite(ww));
      g_assert_false(isfinite(dd));
      g_assert_cmpint(trainer_first_nonfinite(v, 5003), ==, at[i]);
    }
  g_free(v);
  g_free(b);
  g_free(moved);
}

/* The sums' float lanes at every kernel level the machine has
 * and of the double fallback (trainer-lanes.c) give the plain loops' bits:
 * lengths around the lane count and the block, values from 1e-30 to 1e30 of
 * both signs (blocks all tiny, blocks overflowing float) with zeros,
 * negative zeros, infinities and NaNs among them, for the squares, the
 * squared differences and the moments (sum, squares, min, max). */
static void test_lanes_levels(void) {
  static const int64_t sizes[] = {16, 17, 31, 32, 100, 1023, 1024, 1025, 5003};
  float *v = g_new(float, 5003), *b = g_new(float, 5003);
  GRand *r = g_rand_new_with_seed(17);
  const loom_kernel_level start = loom_kernels_get()->level;
  int compared = 0;
  for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++)
    for (int variant = 0; variant < 4; variant++) {
      const int64_t n = sizes[k];
      for (int64_t i = 0; i < n; i++) {
        /* variant 3: a trained network's tiny values, every block in the
         * double fallback; variant 2 overflows float squares */
        double mag = variant == 3 ? pow(10.0, g_rand_double_range(r, -24.0, -18.0))
                                  : pow(10.0, g_rand_double_range(r, -30.0, variant == 2 ? 30.0 : 3.0));
        v[i] = (float)(g_rand_boolean(r) ? mag : -mag);
        b[i] = (float)g_rand_double_range(r, -2.0, 2.0) * (variant == 3 ? 1e-20f : 1.0f);
        if (i % 11 == 3) v[i] = i % 2 ? 0.0f : -0.0f;
      }
      if (variant == 1 && n > 40) {
        /* the extremes before a NaN in their lanes: a NaN must not wipe a
         * lane's minimum or maximum out */
        v[21] = -1e35f;
        v[37] = NAN;
        v[22] = 1e35f;
        v[38] = NAN;
      }
      if (variant == 2 && n > 20) {
        v[n - 2] = -INFINITY;
        v[7] = INFINITY;
      }
      double want[6] = {0}, got[6];
      train_moments want_m = {0}, got_m;
      for (int l = 0; l <= TEST_LAST_LEVEL; l++) {
        if (!loom_kernels_force((loom_kernel_level)l)) continue;
        double *out = l == 0 ? want : got;
        train_moments *m = l == 0 ? &want_m : &got_m;
        out[0] = train_sum_squares(v, n);
        train_sum_squares_diff(v, b, n, &out[1], &out[2]);
        train_moments_of(v, n, m);
        out[3] = m->sum;
        out[4] = m->sum_sq;
        out[5] = 0.0;
        if (l == 0) continue;
        for (int q = 0; q < 5; q++)
          if (memcmp(&want[q], &got[q], sizeof got[q]) != 0 && !(isnan(want[q]) && isnan(got[q])))
            g_error("level %s, n %lld, variant %d, sum %d: %a against the plain loop's %a",
                    loom_kernel_level_name((loom_kernel_level)l), (long long)n, variant, q, got[q], want[q]);
        g_assert_true(memcmp(&want_m.min, &got_m.min, sizeof got_m.min) == 0 || (isnan(want_m.min) && isnan(got_m.min)));
        g_assert_true(memcmp(&want_m.max, &got_m.max, sizeof got_m.max) == 0 || (isnan(want_m.max) && isnan(got_m.max)));
        compared++;
      }
    }
  g_assert_true(loom_kernels_force(start));
  g_rand_free(r);
  g_free(v);
  g_free(b);
  if (!compared) g_test_skip("no vector level on this machine");
}

/* Long vectors' sums shared out over a pool (train_sum_squares_on): the
 * serial sums' bits with 2 and 3 threads, on lengths at and past the size
 * where the pool takes over, blocks that fall back to double (tiny values)
 * among ordinary ones, and a NaN in a late block. */
static void test_sum_squares_pooled(void) {
  const int64_t sizes[] = {64 * 1024 - 1, 64 * 1024, 100003, 300000};
  const int threads[] = {2, 3};
  float *v = g_new(float, 300000), *b = g_new(float, 300000);
  for (size_t t = 0; t < G_N_ELEMENTS(threads); t++) {
    loom_pool *pool = loom_pool_new(threads[t], NULL);
    g_assert_nonnull(pool);
    for (size_t k = 0; k < G_N_ELEMENTS(sizes); k++)
      for (int variant = 0; variant < 3; variant++) {
        int64_t n = sizes[k];
        fill_random(v, n, 2.0, 11 + (uint32_t)k);
        fill_random(b, n, 2.0, 110 + (uint32_t)k);
        if (variant >= 1) /* every third block tiny: the double fallback */
          for (int64_t i = 0; i < n; i++)
            if (i / 1024 % 3 == 1) v[i] *= 1e-22f, b[i] = v[i] * 0.5f;
        if (variant == 2) v[n - 700] = NAN;
        double s = train_sum_squares(v, n), sp = train_sum_squares_on(pool, v, n);
        g_assert_true(memcmp(&s, &sp, sizeof s) == 0);
        double ww, dd, wwp, ddp;
        train_sum_squares_diff(v, b, n, &ww, &dd);
        train_sum_squares_diff_on(pool, v, b, n, &wwp, &ddp);
        g_assert_true(memcmp(&ww, &wwp, sizeof ww) == 0);
        g_assert_true(memcmp(&dd, &ddp, sizeof dd) == 0);
        g_assert_cmpint(isnan(sp), ==, variant == 2);
      }
    loom_pool_free(pool);
  }
  g_free(v);
  g_free(b);
}

/* 40 → 50 (tanh) → 3: the first weight has 2,000 values (two blocks and a
 * tail), the last 150 (lanes and a tail). */
#define N_SAMPLES 24
#define N_IN 40
#define N_HIDDEN 50
#define N_OUT 3

typedef struct tensor_copy {
  loom_weights *w;
  float *grad;
  int64_t n;
  float *before;
} tensor_copy;

static int collect(loom_net *net, int64_t layer, tensor_copy *out) {
  loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, layer));
  int n = loom_layer_n_weights(l);
  for (int t = 0; t < n; t++) {
    out[t].w = loom_layer_weights(l, t);
    out[t].grad = loom_layer_grad(l, t);
    out[t].n = loom_weights_count(out[t].w);
    out[t].before = g_memdup2(loom_weights_master(out[t].w), (gsize)out[t].n * sizeof(float));
  }
  return n;
}

static void check_step_norms(loom_train_config cfg, const char *what) {
  loom_error err = {0};
  int64_t hidden[1] = {N_HIDDEN};
  loom_net *net = tt_mlp(N_IN, hidden, 1, "tanh", N_OUT, NULL, 5);
  loom_dataset *ds = loom_gen_clusters(N_SAMPLES, N_OUT, N_IN, 0.3, 2, &err);
  g_assert_nonnull(ds);
  cfg.batch_size = N_SAMPLES;
  cfg.shuffle = false;
  cfg.epochs = 1;
  loom_trainer *tr = loom_trainer_new(net, ds, NULL, &cfg, NULL, &err);
  g_assert_nonnull(tr);

  /* the output and the loss gradient of the batch, as the step will see them */
  float y[N_SAMPLES * N_OUT], dy[N_SAMPLES * N_OUT];
  double loss = 0;
  loom_ctx ctx = {.training = true, .seed = cfg.seed};
  g_assert_cmpint(loom_net_forward(net, &ctx, ds->inputs, N_SAMPLES, y, &err), ==, 0);
  g_assert_cmpint(loom_loss_eval(&cfg.loss, y, N_SAMPLES, N_OUT, ds->labels, NULL, NULL, &loss, dy, &err), ==, 0);

  tensor_copy t0[4], t2[4];
  int n0 = collect(net, 0, t0), n2 = collect(net, 2, t2);
  g_assert_cmpint(n0, ==, 2);
  g_assert_cmpint(n2, ==, 2);
  loom_step_stats st;
  g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, 0);
  g_test_message("%s: loss %.6f, grad norm %.6g, update norms %.6g %.6g", what, st.loss, st.grad_norm,
                 st.layers[0].update_norm, st.layers[2].update_norm);
  assert_rel(st.loss, loss, 1e-12);
  assert_rel(st.layers[2].act_rms, sqrt(exact_sum_squares(y, N_SAMPLES * N_OUT) / (N_SAMPLES * N_OUT)), 1e-6);
  if (cfg.method == LOOM_TRAIN_BACKPROP || cfg.tween.chain_rule)
    assert_rel(st.layers[2].out_grad_norm, sqrt(exact_sum_squares(dy, N_SAMPLES * N_OUT)), 1e-6);

  double total_grad = 0.0;
  for (int k = 0; k < 3; k += 2) {
    tensor_copy *tc = k == 0 ? t0 : t2;
    double w = 0, u = 0, g = 0;
    for (int t = 0; t < 2; t++) {
      const float *m = loom_weights_master(tc[t].w);
      w += exact_sum_squares(m, tc[t].n);
      u += exact_diff_squares(m, tc[t].before, tc[t].n);
      g += exact_sum_squares(tc[t].grad, tc[t].n); /* the gradient the update used */
      g_free(tc[t].before);
    }
    const loom_layer_stats *s = &st.layers[k];
    g_assert_true(s->weighted);
    g_assert_cmpfloat(u, >, 0.0);
    assert_rel(s->weight_norm, sqrt(w), 1e-6);
    assert_rel(s->update_norm, sqrt(u), 1e-6);
    assert_rel(s->grad_norm, sqrt(g), 1e-6);
    assert_rel(s->update_ratio, sqrt(u) / sqrt(w), 2e-6);
    total_grad += s->grad_norm * s->grad_norm;
  }
  g_assert_false(st.layers[1].weighted);
  g_assert_cmpfloat(st.layers[1].weight_norm, ==, 0.0);
  g_assert_cmpfloat(st.layers[1].update_norm, ==, 0.0);
  if (cfg.method == LOOM_TRAIN_BACKPROP && cfg.clip_norm > 0) {
    /* st.grad_norm is before clipping, the layers' after */
    g_assert_cmpfloat(st.grad_norm, >, 2 * cfg.clip_norm);
    assert_rel(sqrt(total_grad), cfg.clip_norm, 1e-4);
  } else if (cfg.method == LOOM_TRAIN_BACKPROP) {
    assert_rel(st.grad_norm, sqrt(total_grad), 1e-12);
  }
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
}

static void test_step_norms(void) {
  loom_train_config cfg = loom_train_config_default();
  cfg.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
  cfg.schedule = loom_schedule_constant(0.1);
  check_step_norms(cfg, "sgd");
  cfg = loom_train_config_default();
  cfg.clip_norm = 0.01;
  check_step_norms(cfg, "adam, clipped");
  cfg = loom_train_config_default();
  cfg.method = LOOM_TRAIN_TWEEN;
  cfg.schedule = loom_schedule_constant(0.1);
  cfg.tween.threshold = -1.0; /* every layer updates */
  check_step_norms(cfg, "tween");
  cfg.tween.chain_rule = true;
  check_step_norms(cfg, "tween, chain rule");
}

#define THREAD_STEPS 12

static void record_stats(int threads, loom_train_method method, double *out) {
  loom_error err = {0};
  int64_t hidden[2] = {48, 24};
  const loom_dtype dtypes[2] = {LOOM_DTYPE_INT8, LOOM_DTYPE_FLOAT32}; /* quant_error too */
  loom_net *net = tt_mlp(N_IN, hidden, 2, "relu", N_OUT, dtypes, 8);
  loom_dataset *ds = loom_gen_clusters(96, N_OUT, N_IN, 0.3, 3, &err);
  loom_train_config cfg = loom_train_config_default();
  cfg.method = method;
  cfg.batch_size = 16;
  cfg.seed = 4;
  cfg.schedule = loom_schedule_constant(method == LOOM_TRAIN_TWEEN ? 0.05 : 1e-2);
  loom_pool *pool = threads > 1 ? loom_pool_new(threads, &err) : NULL;
  loom_trainer *tr = loom_trainer_new(net, ds, NULL, &cfg, pool, &err);
  g_assert_nonnull(tr);
  for (int i = 0; i < THREAD_STEPS; i++) {
    loom_step_stats st;
    g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, 0);
    g_assert_cmpint(st.n_layers, ==, 5);
    *out++ = st.grad_norm;
    for (int k = 0; k < st.n_layers; k++) {
      const loom_layer_stats *s = &st.layers[k];
      const double v[] = {s->act_rms,     s->grad_norm, s->out_grad_norm, s->weight_norm, s->update_norm,
                          s->update_ratio, s->gap_rms,   s->budget,        s->act_mean,    s->act_std,
                          s->act_min,      s->act_max,   s->dead_fraction, s->quant_error};
      memcpy(out, v, sizeof v);
      out += G_N_ELEMENTS(v);
    }
  }
  loom_trainer_free(tr);
  loom_pool_free(pool);
  loom_dataset_free(ds);
  loom_net_free(net);
}

static void test_stats_thread_independent(void) {
  size_t n = THREAD_STEPS * (1 + 5 * 14);
  double *one = g_new0(double, n), *three = g_new0(double, n);
  for (int m = 0; m < 2; m++) {
    loom_train_method method = m ? LOOM_TRAIN_TWEEN : LOOM_TRAIN_BACKPROP;
    record_stats(1, method, one);
    record_stats(3, method, three);
    g_assert_true(memcmp(one, three, n * sizeof *one) == 0);
    g_assert_cmpfloat(one[1 + 4], >, 0.0); /* layer 0's update norm at step 1 */
  }
  g_free(one);
  g_free(three);
}

/* The activation statistics, dead units and quantization error of a step
 * against float64 references computed here from the activations and the
 * weights, and the timing fields. */
static void test_layer_stats_reference(void) {
  loom_error err = {0};
  int64_t hidden[2] = {24, 12};
  const loom_dtype dtypes[2] = {LOOM_DTYPE_INT4, LOOM_DTYPE_FLOAT32};
  loom_net *net = tt_mlp(N_IN, hidden, 2, "relu", N_OUT, dtypes, 5);
  /* units 0..2 of the second dense layer get zero weights and bias: their
   * output, and the ReLU's after them, is exactly 0 for every sample */
  loom_layer *d2 = loom_net_layer_at(net, (loom_coord){0, 0, 2, 0});
  float *w = loom_weights_master(loom_layer_weights(d2, 0)), *bias = loom_weights_master(loom_layer_weights(d2, 1));
  int64_t cols = loom_weights_cols(loom_layer_weights(d2, 0));
  g_assert_cmpint(loom_weights_rows(loom_layer_weights(d2, 0)), ==, 12);
  memset(w, 0, (size_t)(3 * cols) * sizeof *w);
  memset(bias, 0, 3 * sizeof *bias);
  loom_weights_touch(loom_layer_weights(d2, 0));
  loom_weights_touch(loom_layer_weights(d2, 1));
  loom_dataset *ds = loom_gen_clusters(64, N_OUT, N_IN, 0.3, 3, &err);
  loom_train_config cfg = loom_train_config_default();
  cfg.batch_size = 16;
  cfg.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
  cfg.schedule = loom_schedule_constant(1e-9); /* the zero rows stay (nearly) zero: dead after the step too */
  loom_trainer *tr = loom_trainer_new(net, ds, NULL, &cfg, NULL, &err);
  g_assert_nonnull(tr);
  double seconds = 0.0;
  int64_t samples = 0;
  for (int step = 0; step < 3; step++) {
    loom_step_stats st;
    g_assert_cmpint(loom_trainer_step(tr, &st, &err), ==, 0);
    g_assert_cmpfloat(st.seconds, >, 0.0);
    seconds += st.seconds;
    samples += st.batch_size;
    assert_rel(st.samples_per_second, (double)samples / seconds, 1e-12);
    for (int k = 0; k < st.n_layers; k++) {
      const loom_layer_stats *s = &st.layers[k];
      int64_t batch = 0;
      const float *a = loom_net_activation(net, s->at, &batch);
      loom_shape out = loom_layer_out_shape(loom_net_layer_at(net, s->at));
      int64_t per = loom_shape_numel(&out), n = batch * per, dead = 0;
      g_assert_cmpint(batch, ==, 16);
      double sum = 0.0, sq = 0.0, lo = INFINITY, hi = -INFINITY;
      for (int64_t i = 0; i < n; i++) {
        sum += a[i];
        sq += (double)a[i] * a[i];
        lo = fmin(lo, a[i]);
        hi = fmax(hi, a[i]);
      }
      for (int64_t j = 0; j < per; j++) {
        bool zero = true;
        for (int64_t b = 0; b < batch && zero; b++) zero = a[b * per + j] == 0.0f;
        dead += zero;
      }
      double mean = sum / (double)n, sd = sqrt(fmax(0.0, sq / (double)n - mean * mean));
      g_assert_cmpfloat(fabs(s->act_mean - mean), <=, 1e-6 * sqrt(sq / (double)n));
      g_assert_cmpfloat(fabs(s->act_std - sd), <=, 1e-5 * sqrt(sq / (double)n));
      g_assert_cmpfloat(s->act_min, ==, lo);
      g_assert_cmpfloat(s->act_max, ==, hi);
      g_assert_cmpfloat(s->dead_fraction, ==, (double)dead / (double)per);
      if (k == 2 || k == 3) g_assert_cmpfloat(s->dead_fraction, >=, 3.0 / 12.0); /* the zeroed units */
      /* quant_error: mean |master − effective| over the layer's tensors */
      loom_layer *l = loom_net_layer_at(net, s->at);
      g_assert_cmpint(s->has_weights_stats, ==, loom_layer_n_weights(l) > 0);
      double qsum = 0.0;
      int64_t qn = 0;
      for (int t = 0; t < loom_layer_n_weights(l); t++) {
        loom_weights *lw = loom_layer_weights(l, t);
        const float *m = loom_weights_master_const(lw), *e = loom_weights_effective(lw, &err);
        for (int64_t i = 0; i < loom_weights_count(lw); i++) qsum += fabs((double)m[i] - (double)e[i]);
        qn += loom_weights_count(lw);
      }
      double q = qn ? qsum / (double)qn : 0.0;
      assert_rel(s->quant_error, q, 1e-12);
      if (k == 0) g_assert_cmpfloat(s->quant_error, >, 1e-4); /* int4 */
      if (k == 2 || k == 4) g_assert_cmpfloat(s->quant_error, ==, 0.0); /* float32 */
    }
  }
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
}

/* An update that makes a master infinite is reported and not kept. */
static void test_nonfinite_update_restored(void) {
  loom_error err = {0};
  int64_t hidden[1] = {3};
  loom_net *net = tt_mlp(2, hidden, 1, "tanh", 1, NULL, 1);
  loom_dataset *ds = loom_gen_xor(8, 0.0, 1, &err);
  g_assert_nonnull(ds);
  loom_train_config cfg = loom_train_config_default();
  cfg.loss.kind = LOOM_LOSS_BCE_LOGITS;
  cfg.optim = loom_optim_defaults(LOOM_OPTIM_SGD);
  cfg.schedule = loom_schedule_constant(1e300);
  cfg.shuffle = false;
  cfg.batch_size = 8;
  loom_trainer *tr = loom_trainer_new(net, ds, NULL, &cfg, NULL, &err);
  g_assert_nonnull(tr);
  tensor_copy t0[2], t2[2];
  collect(net, 0, t0);
  collect(net, 2, t2);
  g_assert_cmpint(loom_trainer_step(tr, NULL, &err), ==, LOOM_ERR_NONFINITE);
  g_assert_true(g_str_has_prefix(err.message, "training stopped at step 1 (epoch 1, batch 1): NaN or infinity first "
                                              "appeared in the updated ‘weight’ of layer dense at (0,0,0,0) (element "));
  for (int t = 0; t < 2; t++) {
    g_assert_true(memcmp(loom_weights_master(t0[t].w), t0[t].before, (size_t)t0[t].n * sizeof(float)) == 0);
    g_assert_true(memcmp(loom_weights_master(t2[t].w), t2[t].before, (size_t)t2[t].n * sizeof(float)) == 0);
    g_free(t0[t].before);
    g_free(t2[t].before);
  }
  g_assert_true(loom_trainer_finished(tr));
  g_assert_cmpint(loom_trainer_steps(tr), ==, 0);
  /* the network still runs on the weights it had */
  float y[8];
  loom_ctx ctx = {.training = false};
  g_assert_cmpint(loom_net_forward(net, &ctx, ds->inputs, 8, y, &err), ==, 0);
  for (int i = 0; i < 8; i++) g_assert_true(isfinite(y[i]));
  loom_trainer_free(tr);
  loom_dataset_free(ds);
  loom_net_free(net);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  /* These tests compare thread counts on small networks: the pool even for
   * steps a trainer would otherwise run on its calling thread. */
  train_set_serial_step_flops(0);
  g_test_add_func("/train/stats/sum-squares", test_sum_squares);
  g_test_add_func("/train/stats/sum-squares-pooled", test_sum_squares_pooled);
  g_test_add_func("/train/stats/lanes-levels", test_lanes_levels);
  g_test_add_func("/train/stats/step-norms", test_step_norms);
  g_test_add_func("/train/stats/thread-independent", test_stats_thread_independent);
  g_test_add_func("/train/stats/layer-reference", test_layer_stats_reference);
  g_test_add_func("/train/stats/nonfinite-update-restored", test_nonfinite_update_restored);
  return g_test_run();
}
