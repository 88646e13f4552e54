/*
 * Sequence layers (rnn, lstm, swiglu, attention): finite-difference gradient
 * checks (also of the recurrent initial state), bad shapes, dtypes, the KV
 * cache against the full-sequence forward, carried state against one call,
 * and bit-identical results for 1, 2 and 7 threads.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "layer-test-util.h"
#include "under-tsan.h"
#include "loom/sequence.h"

static void check_layer(const char *what, loom_layer *l, int64_t batch, uint64_t seed) {
  int64_t n = batch * lt_in_numel(l);
  float *x = g_new(float, n);
  gradcheck_fill_uniform(x, n, -1.5, 1.5, seed);
  gradcheck_options o = {.tolerance = 2e-3, .seed = seed};
  gradcheck_report rep;
  lt_assert_gradcheck(what, gradcheck_layer_measure(l, x, batch, &o, &rep), &rep, 2e-3);
  g_free(x);
}

static loom_layer *recurrent(const char *type, int64_t f, int64_t h, bool bias, const char *output) {
  loom_layer *l = lt_new(type);
  lt_set_int(l, "input_size", f);
  lt_set_int(l, "hidden_size", h);
  lt_set_bool(l, "bias", bias);
  lt_set_enum(l, "output", output);
  return l;
}

static void test_recurrent_gradients(void) {
  const struct {
    const char *type, *act, *output;
    bool bias;
    int64_t steps, f, h, batch;
  } cases[] = {
    {"rnn", "tanh", "sequence", true, 5, 3, 4, 2},  {"rnn", "relu", "last", false, 4, 5, 3, 3},
    {"lstm", NULL, "sequence", true, 6, 3, 5, 2},   {"lstm", NULL, "last", true, 7, 2, 3, 1},
    {"lstm", NULL, "sequence", false, 1, 4, 2, 3},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    loom_layer *l = recurrent(cases[i].type, cases[i].f, cases[i].h, cases[i].bias, cases[i].output);
    if (cases[i].act) lt_set_enum(l, "nonlinearity", cases[i].act);
    lt_build(l, 2, (const int64_t[]){cases[i].steps, cases[i].f}, 10 + i);
    lt_randomize(l, 0.6, 20 + i);
    char what[64];
    g_snprintf(what, sizeof what, "%s %s %s case %zu", cases[i].type, cases[i].act ? cases[i].act : "",
               cases[i].output, i);
    check_layer(what, l, cases[i].batch, 30 + i);
    loom_layer_free(l);
  }
}

/* Loss Σ r·y of one forward from the given initial state. */
static double state_loss(loom_layer *l, const float *x, const float *h0, const float *c0, const float *r,
                         int64_t batch, float *y) {
  g_assert_cmpint(loom_layer_set_initial_state(l, h0, c0, batch, NULL), ==, LOOM_OK);
  lt_forward(l, NULL, x, y, batch);
  double s = 0.0;
  for (int64_t i = 0; i < batch * lt_out_numel(l); i++) s += (double)r[i] * y[i];
  return s;
}

/* The gradient of the given initial state (h0, c0) by central differences. */
static void test_initial_state_gradient(void) {
  const int64_t batch = 2, steps = 4, f = 3, h = 4;
  for (int lstm = 0; lstm < 2; lstm++) {
    loom_layer *l = recurrent(lstm ? "lstm" : "rnn", f, h, true, "sequence");
    lt_build(l, 2, (const int64_t[]){steps, f}, 5);
    lt_randomize(l, 0.7, 6);
    int64_t nx = batch * steps * f, ny = batch * steps * h, ns = batch * h;
    float *x = g_new(float, nx), *y = g_new(float, ny), *r = g_new(float, ny), *s0 = g_new(float, 2 * ns);
    gradcheck_fill_uniform(x, nx, -1, 1, 7);
    gradcheck_fill_uniform(r, ny, -1, 1, 8);
    gradcheck_fill_uniform(s0, 2 * ns, -0.8, 0.8, 9);
    float *h0 = s0, *c0 = lstm ? s0 + ns : NULL;
    state_loss(l, x, h0, c0, r, batch, y);
    lt_backward(l, NULL, x, y, r, NULL, batch);
    const float *dh0, *dc0;
    int64_t gb;
    g_assert_cmpint(loom_layer_initial_state_grad(l, &dh0, &dc0, &gb, NULL), ==, LOOM_OK);
    g_assert_cmpint(gb, ==, batch);
    float *analytic = g_new(float, 2 * ns);
    memcpy(analytic, dh0, (size_t)ns * sizeof(float));
    if (lstm) memcpy(analytic + ns, dc0, (size_t)ns * sizeof(float));
    for (int64_t i = 0; i < (lstm ? 2 : 1) * ns; i++) {
      const float eps = 1e-2f, v = s0[i];
      s0[i] = v + eps;
      double up = state_loss(l, x, h0, c0, r, batch, y);
      s0[i] = v - eps;
      double down = state_loss(l, x, h0, c0, r, batch, y);
      s0[i] = v;
      double numeric = (up - down) / (2.0 * eps);
      if (!(fabs(numeric - analytic[i]) <= 2e-5 + 2e-3 * fabs(numeric)))
        g_error("%s initial state %lld: analytic %.9g, numeric %.9g", lstm ? "lstm" : "rnn", (long long)i,
                (double)analytic[i], numeric);
    }
    /* A state for another batch size is refused, naming both sizes. */
    loom_error err = {0};
    g_assert_cmpint(loom_layer_set_initial_state(l, h0, c0, 1, &err), ==, LOOM_OK);
    g_assert_cmpint(layer_forward(l, NULL, x, y, batch, &err), ==, LOOM_ERR_SHAPE);
    g_assert_nonnull(strstr(err.message, "given for a batch of 1 but the input has 2 samples"));
    g_free(analytic);
    g_free(x);
    g_free(y);
    g_free(r);
    g_free(s0);
    loom_layer_free(l);
  }
}

static void test_swiglu_gradients(void) {
  const struct {
    const char *act;
    bool bias;
    int rank;
    int64_t dims[2], hidden;
  } cases[] = {{"silu", false, 2, {3, 5}, 7}, {"silu", true, 1, {4}, 6}, {"relu2", true, 2, {2, 3}, 5}};
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    loom_layer *l = lt_new("swiglu");
    lt_set_int(l, "d_model", cases[i].dims[cases[i].rank - 1]);
    lt_set_int(l, "hidden", cases[i].hidden);
    lt_set_bool(l, "bias", cases[i].bias);
    lt_set_enum(l, "activation", cases[i].act);
    lt_build(l, cases[i].rank, cases[i].dims, 40 + i);
    lt_randomize(l, 0.8, 50 + i);
    char what[64];
    g_snprintf(what, sizeof what, "swiglu %s case %zu", cases[i].act, i);
    check_layer(what, l, 2, 60 + i);
    loom_layer_free(l);
  }
}

typedef struct att_cfg {
  int64_t d, heads, kv, head_dim, steps;
  bool causal, bias, qk_norm;
  const char *rope;
  int64_t cache;
} att_cfg;

static loom_layer *attention(const att_cfg *c, uint64_t seed) {
  loom_layer *l = lt_new("attention");
  lt_set_int(l, "d_model", c->d);
  lt_set_int(l, "heads", c->heads);
  lt_set_int(l, "kv_heads", c->kv);
  lt_set_int(l, "head_dim", c->head_dim);
  lt_set_bool(l, "causal", c->causal);
  lt_set_bool(l, "bias", c->bias);
  lt_set_bool(l, "qk_norm", c->qk_norm);
  lt_set_enum(l, "rope", c->rope);
  lt_set_float(l, "rope_base", 100.0);
  lt_set_int(l, "cache_capacity", c->cache);
  lt_build(l, 2, (const int64_t[]){c->steps, c->d}, seed);
  lt_randomize(l, 0.7, seed + 100);
  return l;
}

static void test_attention_gradients(void) {
  const att_cfg cases[] = {
    {8, 4, 2, 0, 5, true, true, true, "half", 0},
    {6, 3, 1, 4, 4, false, false, false, "interleaved", 0},
    {5, 1, 1, 3, 3, true, false, true, "none", 0},
    {8, 2, 2, 4, 1, false, true, false, "half", 0},
  };
  for (size_t i = 0; i < G_N_ELEMENTS(cases); i++) {
    loom_layer *l = attention(&cases[i], 70 + i);
    char what[64];
    g_snprintf(what, sizeof what, "attention case %zu", i);
    check_layer(what, l, 2, 80 + i);
    loom_layer_free(l);
  }
  /* With a key padding mask (sample 0 hides key 1, sample 1 hides keys 0 and 3). */
  att_cfg c = {6, 3, 1, 0, 4, false, true, false, "half", 0};
  loom_layer *l = attention(&c, 90);
  const uint8_t mask[] = {0, 1, 0, 0, 1, 0, 0, 1};
  g_assert_cmpint(loom_layer_set_key_padding_mask(l, mask, 2, 4, NULL), ==, LOOM_OK);
  check_layer("attention with key padding", l, 2, 91);
  /* A masked key has no influence on any output. */
  float x[2 * 4 * 6], y1[2 * 4 * 6], y2[2 * 4 * 6];
  gradcheck_fill_uniform(x, 48, -1, 1, 92);
  lt_forward(l, NULL, x, y1, 2);
  for (int j = 0; j < 6; j++) x[1 * 6 + j] += 0.5f; /* sample 0, step 1: its own query row changes, nothing else */
  lt_forward(l, NULL, x, y2, 2);
  for (int t = 0; t < 4; t++)
    for (int j = 0; j < 6 && t != 1; j++) g_assert_cmpfloat(y1[t * 6 + j], ==, y2[t * 6 + j]);
  loom_error err = {0};
  g_assert_cmpint(loom_layer_set_key_padding_mask(l, mask, 2, 3, NULL), ==, LOOM_OK);
  g_assert_cmpint(layer_forward(l, NULL, x, y1, 2, &err), ==, LOOM_ERR_SHAPE);
  g_assert_cmpstr(err.message, ==,
                  "layer attention: the key padding mask is for 2 × 3 keys but this call has 2 × 4");
  loom_layer_free(l);
}

static void test_bad_shapes(void) {
  loom_layer *l = recurrent("lstm", 5, 3, true, "sequence");
  lt_build_fails(l, 2, (const int64_t[]){7, 4}, LOOM_ERR_SHAPE,
                 "layer lstm: expects a sequence [steps × 5] (or one step [5]) but the input is [7×4]");
  loom_layer_free(l);
  l = lt_new("attention");
  lt_set_int(l, "d_model", 8);
  lt_set_int(l, "heads", 4);
  lt_set_int(l, "kv_heads", 3);
  lt_build_fails(l, 2, (const int64_t[]){3, 8}, LOOM_ERR_INVALID, "layer attention: kv_heads is 3; it must divide heads (4)");
  lt_set_int(l, "kv_heads", 2);
  lt_build_fails(l, 2, (const int64_t[]){3, 7}, LOOM_ERR_SHAPE,
                 "layer attention: expects a sequence [steps × 8] but the input is [3×7]");
  lt_set_int(l, "head_dim", 3);
  lt_set_enum(l, "rope", "half");
  lt_build_fails(l, 2, (const int64_t[]){3, 8}, LOOM_ERR_INVALID,
                 "layer attention: rotary embedding needs an even head_dim, got 3");
  loom_layer_free(l);
  l = lt_new("swiglu");
  lt_set_int(l, "d_model", 4);
  lt_build_fails(l, 2, (const int64_t[]){3, 5}, LOOM_ERR_SHAPE,
                 "layer swiglu: d_model is 4 but the input [3×5] ends in 5 features");
  loom_layer_free(l);
}

/* Decoding token by token through the KV cache equals the whole sequence at once. */
static void test_kv_cache(void) {
  const att_cfg cases[] = {
    {8, 4, 2, 0, 6, true, true, true, "half", 6},
    {6, 3, 3, 2, 5, true, false, false, "interleaved", 9},
  };
  for (size_t c = 0; c < G_N_ELEMENTS(cases); c++) {
    const int64_t batch = 2, steps = cases[c].steps, d = cases[c].d;
    loom_layer *full = attention(&cases[c], 200 + c);
    loom_error err = {0};
    loom_layer *step = loom_layer_clone(full, &err);
    g_assert_nonnull(step);
    lt_build(step, 2, (const int64_t[]){1, d}, 1);
    float *x = g_new(float, batch * steps * d), *y = g_new(float, batch * steps * d), *yt = g_new(float, batch * d),
          *xt = g_new(float, batch * d);
    gradcheck_fill_uniform(x, batch * steps * d, -1, 1, 210 + c);
    lt_forward(full, NULL, x, y, batch);
    g_assert_cmpint(loom_layer_cached_steps(full), ==, steps);
    for (int pass = 0; pass < 2; pass++) { /* the second pass after a reset */
      for (int64_t t = 0; t < steps; t++) {
        for (int64_t b = 0; b < batch; b++) memcpy(xt + b * d, x + (b * steps + t) * d, (size_t)d * sizeof(float));
        lt_forward(step, NULL, xt, yt, batch);
        g_assert_cmpint(loom_layer_cached_steps(step), ==, t + 1);
        for (int64_t b = 0; b < batch; b++)
          parity_assert_close("kv cache step", yt + b * d, y + (b * steps + t) * d, d, 1e-5, 1e-6);
      }
      loom_layer_reset_state(step);
      g_assert_cmpint(loom_layer_cached_steps(step), ==, 0);
    }
    /* Past the capacity is an error, and nothing is written. */
    for (int64_t t = 0; t < cases[c].cache; t++) lt_forward(step, NULL, xt, yt, batch);
    g_assert_cmpint(layer_forward(step, NULL, xt, yt, batch, &err), ==, LOOM_ERR_RANGE);
    char want[200];
    g_snprintf(want, sizeof want,
               "layer attention: the KV cache holds %lld of %lld steps; 1 more do not fit (reset it or raise "
               "cache_capacity)",
               (long long)cases[c].cache, (long long)cases[c].cache);
    g_assert_cmpstr(err.message, ==, want);
    g_assert_cmpint(loom_layer_cached_steps(step), ==, cases[c].cache);
    loom_layer_reset_state(step);
    lt_forward(step, NULL, xt, yt, batch);
    g_assert_cmpint(layer_forward(step, NULL, xt, yt, 1, &err), ==, LOOM_ERR_SHAPE);
    g_assert_nonnull(strstr(err.message, "holds steps of a batch of 2, not 1"));
    g_free(x);
    g_free(y);
    g_free(xt);
    g_free(yt);
    loom_layer_free(full);
    loom_layer_free(step);
  }
}

/* carry_state: a sequence fed one step per call equals the sequence in one call. */
static void test_carry_state(void) {
  const int64_t batch = 3, steps = 5, f = 4, h = 6;
  for (int lstm = 0; lstm < 2; lstm++) {
    loom_layer *full = recurrent(lstm ? "lstm" : "rnn", f, h, true, "sequence");
    lt_build(full, 2, (const int64_t[]){steps, f}, 300);
    lt_randomize(full, 0.6, 301);
    loom_error err = {0};
    loom_layer *step = loom_layer_clone(full, &err);
    lt_set_bool(step, "carry_state", true);
    lt_build(step, 1, (const int64_t[]){f}, 1);
    float x[3 * 5 * 4], y[3 * 5 * 6], xt[3 * 4], yt[3 * 6];
    gradcheck_fill_uniform(x, batch * steps * f, -1, 1, 302);
    lt_forward(full, NULL, x, y, batch);
    for (int pass = 0; pass < 2; pass++) {
      for (int64_t t = 0; t < steps; t++) {
        for (int64_t b = 0; b < batch; b++) memcpy(xt + b * f, x + (b * steps + t) * f, sizeof(float) * f);
        lt_forward(step, NULL, xt, yt, batch);
        for (int64_t b = 0; b < batch; b++)
          g_assert_cmpmem(yt + b * h, sizeof(float) * h, y + (b * steps + t) * h, sizeof(float) * h);
      }
      loom_layer_reset_state(step);
    }
    loom_layer_free(full);
    loom_layer_free(step);
  }
}

/* At a quantized dtype the forward equals float32 math on the dequantized weights. */
static void test_dtypes(void) {
  const char *dtypes[] = {"int8", "bfloat16", "fp8-e4m3", "int4"};
  for (size_t k = 0; k < G_N_ELEMENTS(dtypes); k++) {
    loom_dtype dt;
    loom_error err = {0};
    g_assert_cmpint(loom_dtype_from_name(dtypes[k], &dt, &err), ==, LOOM_OK);
    att_cfg c = {8, 4, 2, 0, 4, true, true, false, "half", 0};
    loom_layer *layers[3] = {recurrent("lstm", 4, 5, true, "sequence"), lt_new("swiglu"), attention(&c, 400)};
    lt_build(layers[0], 2, (const int64_t[]){4, 4}, 401);
    lt_set_int(layers[1], "d_model", 8);
    lt_set_int(layers[1], "hidden", 12);
    lt_build(layers[1], 2, (const int64_t[]){4, 8}, 402);
    for (int i = 0; i < 3; i++) {
      loom_layer *q = layers[i];
      g_assert_cmpint(loom_layer_set_dtype(q, dt, &err), ==, LOOM_OK);
      loom_layer *ref = loom_layer_clone(q, &err);
      g_assert_cmpint(loom_layer_set_dtype(ref, LOOM_DTYPE_FLOAT32, &err), ==, LOOM_OK);
      for (int w = 0; w < loom_layer_n_weights(q); w++) {
        const float *eff = loom_weights_effective(loom_layer_weights(q, w), &err);
        lt_set_master(ref, w, eff, loom_weights_count(loom_layer_weights(q, w)));
      }
      loom_shape in = loom_layer_in_shape(q);
      lt_build(q, in.rank, in.d, 1);
      lt_build(ref, in.rank, in.d, 1);
      int64_t nx = 2 * lt_in_numel(q), ny = 2 * lt_out_numel(q);
      float *x = g_new(float, nx), *y = g_new(float, ny), *yr = g_new(float, ny);
      gradcheck_fill_uniform(x, nx, -1, 1, 403);
      lt_forward(q, NULL, x, y, 2);
      lt_forward(ref, NULL, x, yr, 2);
      g_assert_cmpmem(y, ny * sizeof(float), yr, ny * sizeof(float));
      g_free(x);
      g_free(y);
      g_free(yr);
      loom_layer_free(ref);
      loom_layer_free(q);
    }
  }
}

/* Forward and backward are bit-identical for 1, 2 and 7 threads. */
static void test_threads(void) {
  att_cfg c = {32, 8, 2, 0, 24, true, true, true, "half", 0};
  loom_layer *layers[3] = {recurrent("lstm", 16, 40, true, "sequence"), lt_new("swiglu"), attention(&c, 500)};
  lt_build(layers[0], 2, (const int64_t[]){24, 16}, 501);
  lt_set_int(layers[1], "d_model", 32);
  lt_set_int(layers[1], "hidden", 80);
  lt_build(layers[1], 2, (const int64_t[]){24, 32}, 502);
  for (int i = 0; i < 3; i++) {
    loom_layer *l = layers[i];
    int64_t nx = 3 * lt_in_numel(l), ny = 3 * lt_out_numel(l);
    float *x = g_new(float, nx), *dy = g_new(float, ny), *y[3], *dx[3], *gw[3];
    gradcheck_fill_uniform(x, nx, -1, 1, 503);
    gradcheck_fill_uniform(dy, ny, -1, 1, 504);
    const int threads[3] = {1, 2, 7};
    for (int r = 0; r < 3; r++) {
      loom_pool *pool = lt_pool(threads[r]);
      y[r] = g_new(float, ny);
      dx[r] = g_new(float, nx);
      lt_forward(l, pool, x, y[r], 3);
      lt_backward(l, pool, x, y[r], dy, dx[r], 3);
      int64_t nw = loom_weights_count(loom_layer_weights(l, 0));
      gw[r] = g_memdup2(loom_layer_grad(l, 0), (gsize)nw * sizeof(float));
      loom_pool_free(pool);
      if (r == 0) continue;
      g_assert_cmpmem(y[r], ny * sizeof(float), y[0], ny * sizeof(float));
      g_assert_cmpmem(dx[r], nx * sizeof(float), dx[0], nx * sizeof(float));
      g_assert_cmpmem(gw[r], nw * sizeof(float), gw[0], nw * sizeof(float));
    }
    for (int r = 0; r < 3; r++) {
      g_free(y[r]);
      g_free(dx[r]);
      g_free(gw[r]);
    }
    g_free(x);
    g_free(dy);
    loom_layer_free(l);
  }
}

/* A sample's result does not depend on the batch around it: each row of a
 * batch of 3 equals that row run alone, forward and input gradient, bit for
 * bit (lstm and rnn at the benchmark's shape, 256→256 over 128 steps, and
 * attention), on 1 and 2 threads. */
static void test_batch_rows(void) {
  att_cfg c = {32, 8, 2, 0, 24, true, true, true, "half", 0};
  loom_layer *layers[3] = {recurrent("lstm", 256, 256, true, "sequence"), recurrent("rnn", 256, 256, true, "last"),
                           attention(&c, 510)};
  lt_build(layers[0], 2, (const int64_t[]){128, 256}, 511);
  lt_build(layers[1], 2, (const int64_t[]){128, 256}, 512);
  for (int i = 0; i < 3; i++) {
    loom_layer *l = layers[i];
    int64_t in = lt_in_numel(l), out = lt_out_numel(l);
    float *x = g_new(float, 3 * in), *dy = g_new(float, 3 * out), *y = g_new(float, 3 * out),
          *dx = g_new(float, 3 * in), *y1 = g_new(float, out), *dx1 = g_new(float, in);
    gradcheck_fill_uniform(x, 3 * in, -1, 1, 513);
    gradcheck_fill_uniform(dy, 3 * out, -1, 1, 514);
    for (int t = 1 + UNDER_TSAN; t <= 2; t++) { /* one thread: no race to find */
      loom_pool *pool = lt_pool(t);
      lt_forward(l, pool, x, y, 3);
      lt_backward(l, pool, x, y, dy, dx, 3);
      for (int b = 0; b < 3; b++) {
        lt_forward(l, pool, x + b * in, y1, 1);
        lt_backward(l, pool, x + b * in, y1, dy + b * out, dx1, 1);
        g_test_message("layer %d, %d threads, row %d", i, t, b);
        g_assert_cmpmem(y1, out * sizeof(float), y + b * out, out * sizeof(float));
        g_assert_cmpmem(dx1, in * sizeof(float), dx + b * in, in * sizeof(float));
      }
      loom_pool_free(pool);
    }
    g_free(x), g_free(dy), g_free(y), g_free(dx), g_free(y1), g_free(dx1);
    loom_layer_free(l);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sequence-layers/recurrent-gradients", test_recurrent_gradients);
  g_test_add_func("/sequence-layers/initial-state-gradient", test_initial_state_gradient);
  g_test_add_func("/sequence-layers/swiglu-gradients", test_swiglu_gradients);
  g_test_add_func("/sequence-layers/attention-gradients", test_attention_gradients);
  g_test_add_func("/sequence-layers/bad-shapes", test_bad_shapes);
  g_test_add_func("/sequence-layers/kv-cache", test_kv_cache);
  g_test_add_func("/sequence-layers/carry-state", test_carry_state);
  g_test_add_func("/sequence-layers/dtypes", test_dtypes);
  g_test_add_func("/sequence-layers/threads", test_threads);
  g_test_add_func("/sequence-layers/batch-rows", test_batch_rows);
  return g_test_run();
}
