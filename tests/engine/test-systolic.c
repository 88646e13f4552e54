/*
 * Systolic execution: a signal crosses N layers in exactly N ticks; a
 * feed-forward network run systolically with a held input reaches its
 * feed-forward output; the feedback example converges as documented and is
 * refused by feed-forward execution; ticks and BPTT are bit-identical for 1,
 * 2 and 7 threads; BPTT matches finite differences; trace statistics.
 */
#include <glib.h>
#include <math.h>
#include <string.h>

#include "gradcheck.h"
#include "layers/layer-impl.h"
#include "loom/model.h"
#include "loom/net.h"
#include "loom/pool.h"
#include "loom/systolic.h"

static loom_net *example(const char *name) {
  loom_net *net = NULL;
  loom_error err = {0};
  if (loom_example_build(name, &net, &err)) g_error("%s: %s", name, err.message);
  return net;
}

static loom_systolic *runner(loom_net *net, int64_t batch, const float *x) {
  loom_error err = {0};
  loom_systolic *s = loom_systolic_new(net, batch, &err);
  if (!s) g_error("systolic: %s", err.message);
  g_assert_cmpint(loom_systolic_set_input(s, x, &err), ==, LOOM_OK);
  return s;
}

static void tick(loom_systolic *s, const loom_ctx *ctx) {
  loom_error err = {0};
  if (loom_systolic_tick(s, ctx, &err)) g_error("tick: %s", err.message);
}

/* A chain of N dense layers: the input reaches the output after exactly N ticks. */
static void test_chain_latency(void) {
  const int n = 5;
  loom_error err = {0};
  loom_net *net = loom_net_new(1, 1, n, 1, &err);
  g_assert_cmpint(loom_net_set_input_shape(net, &(loom_shape){.rank = 1, .d = {3}}, &err), ==, LOOM_OK);
  for (int i = 0; i < n; i++) {
    loom_layer *l = loom_layer_new_by_name("dense", &err);
    loom_layer_set_int(l, "in_features", 3, &err);
    loom_layer_set_int(l, "out_features", 3, &err);
    g_assert_cmpint(loom_net_place(net, (loom_coord){0, 0, i, 0}, l, &err), ==, LOOM_OK);
  }
  const float x1[2 * 3] = {1, -2, 0.5f, 0.3f, 0.1f, -1}, x2[2 * 3] = {-1, 2, 1.5f, 0, 0.7f, 1};
  loom_systolic *a = runner(net, 2, x1), *b = runner(net, 2, x2);
  for (int t = 1; t <= n + 2; t++) {
    tick(a, NULL);
    tick(b, NULL);
    int64_t numel;
    const float *ya = loom_systolic_output(a, &numel), *yb = loom_systolic_output(b, &numel);
    bool same = memcmp(ya, yb, (size_t)(2 * numel) * sizeof(float)) == 0;
    if (t < n) g_assert_true(same); /* only the biases have arrived so far */
    else g_assert_false(same);
    /* Slot i has seen the input from tick i + 1 on. */
    for (int i = 0; i < n; i++) {
      const float *sa = loom_systolic_output_at(a, (loom_coord){0, 0, i, 0}, &numel);
      const float *sb = loom_systolic_output_at(b, (loom_coord){0, 0, i, 0}, &numel);
      g_assert_cmpint(memcmp(sa, sb, (size_t)(2 * numel) * sizeof(float)) != 0, ==, t >= i + 1);
    }
  }
  g_assert_cmpint(loom_systolic_ticks(a), ==, n + 2);
  /* After enough ticks it equals the feed-forward output bit for bit. */
  float y[2 * 3];
  g_assert_cmpint(loom_net_forward(net, NULL, x1, 2, y, &err), ==, LOOM_OK);
  g_assert_cmpmem(loom_systolic_output(a, NULL), sizeof y, y, sizeof y);
  loom_systolic_free(a);
  loom_systolic_free(b);
  loom_net_free(net);
}

/* The examples without feedback reach their feed-forward outputs (links included). */
static void test_feed_forward_equivalence(void) {
  const char *names[] = {"xor", "hop", "moe", "cnn"};
  for (size_t e = 0; e < G_N_ELEMENTS(names); e++) {
    loom_net *net = example(names[e]);
    loom_shape in = loom_net_input_shape(net), out = loom_net_output_shape(net);
    int64_t nx = 3 * loom_shape_numel(&in), ny = 3 * loom_shape_numel(&out);
    float *x = g_new(float, nx), *y = g_new(float, ny);
    gradcheck_fill_uniform(x, nx, -1, 1, 11 + e);
    loom_error err = {0};
    g_assert_cmpint(loom_net_forward(net, NULL, x, 3, y, &err), ==, LOOM_OK);
    loom_systolic *s = runner(net, 3, x);
    int64_t depth = loom_net_n_layers(net); /* no path is longer than the spine */
    for (int64_t t = 0; t < depth; t++) tick(s, NULL);
    g_assert_cmpmem(loom_systolic_output(s, NULL), ny * sizeof(float), y, ny * sizeof(float));
    tick(s, NULL); /* and stays there */
    g_assert_cmpmem(loom_systolic_output(s, NULL), ny * sizeof(float), y, ny * sizeof(float));
    loom_systolic_free(s);
    g_free(x);
    g_free(y);
    loom_net_free(net);
  }
}

static double max_diff(const float *a, const float *b, int64_t n) {
  double m = 0.0;
  for (int64_t i = 0; i < n; i++) m = fmax(m, fabs((double)a[i] - (double)b[i]));
  return m;
}

/* The feedback example: refused feed-forward, converges systolically as docs/network.md says. */
static void test_feedback_example(void) {
  loom_net *net = example("feedback");
  loom_error err = {0};
  float x[2 * 4] = {0.5f, -1, 2, 0.25f, -0.7f, 0.1f, 0.9f, -2}, y[2 * 2];
  g_assert_cmpint(loom_net_forward(net, NULL, x, 2, y, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "link (0,0,1,0) → (0,0,0,0) points backwards (the source comes after the destination); feedback "
                  "links need systolic execution");
  g_assert_cmpint(loom_net_set_execution(net, LOOM_EXEC_FEED_FORWARD, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==,
                  "link (0,0,1,0) → (0,0,0,0) points backwards (the source comes after the destination); feedback "
                  "links need systolic execution");
  /* The fixed point, from many ticks; then A's error halves at least every two ticks. */
  loom_systolic *s = runner(net, 2, x);
  for (int t = 0; t < 200; t++) tick(s, NULL);
  float a_star[8];
  memcpy(a_star, loom_systolic_output_at(s, (loom_coord){0, 0, 0, 0}, NULL), sizeof a_star);
  float head_star[4];
  memcpy(head_star, loom_systolic_output(s, NULL), sizeof head_star);
  loom_systolic_reset(s);
  g_assert_cmpint(loom_systolic_ticks(s), ==, 0);
  double errs[40];
  for (int t = 0; t < 40; t++) {
    tick(s, NULL);
    errs[t] = max_diff(loom_systolic_output_at(s, (loom_coord){0, 0, 0, 0}, NULL), a_star, 8);
  }
  g_assert_cmpfloat(errs[0], >, 1e-3); /* it does move */
  for (int t = 0; t + 2 < 40; t++) g_assert_cmpfloat(errs[t + 2], <=, 0.5 * errs[t] + 1e-6);
  g_assert_cmpfloat(errs[39], <, 1e-5);
  g_assert_cmpfloat(max_diff(loom_systolic_output(s, NULL), head_star, 4), <, 1e-5);
  loom_systolic_free(s);
  loom_net_free(net);
}

/* Ticks and BPTT are bit-identical for 1, 2 and 7 threads. */
static void test_threads(void) {
  const char *names[] = {"feedback", "hop"};
  for (size_t e = 0; e < G_N_ELEMENTS(names); e++) {
    float *outs[3], *grads[3];
    const int threads[3] = {1, 2, 7};
    for (int r = 0; r < 3; r++) {
      loom_net *net = example(names[e]);
      loom_shape in = loom_net_input_shape(net), out = loom_net_output_shape(net);
      int64_t nx = 4 * loom_shape_numel(&in), ny = 4 * loom_shape_numel(&out);
      float *x = g_new(float, nx), *dy = g_new(float, ny);
      gradcheck_fill_uniform(x, nx, -1, 1, 5);
      gradcheck_fill_uniform(dy, ny, -1, 1, 6);
      loom_error err = {0};
      loom_pool *pool = loom_pool_new(threads[r], &err);
      loom_ctx ctx = {.pool = pool, .training = true};
      loom_systolic *s = runner(net, 4, x);
      g_assert_cmpint(loom_systolic_set_recording(s, true, &err), ==, LOOM_OK);
      const float *dys[8];
      for (int t = 0; t < 8; t++) {
        tick(s, &ctx);
        dys[t] = t % 3 == 2 ? dy : NULL;
      }
      outs[r] = g_memdup2(loom_systolic_output(s, NULL), (gsize)ny * sizeof(float));
      loom_net_zero_grad(net);
      g_assert_cmpint(loom_systolic_backward(s, &ctx, dys, 8, NULL, &err), ==, LOOM_OK);
      loom_layer *first = loom_net_layer_at(net, (loom_coord){0, 0, 0, 0});
      grads[r] = g_memdup2(loom_layer_grad(first, 0), 16 * sizeof(float));
      if (r > 0) {
        g_assert_cmpmem(outs[r], ny * sizeof(float), outs[0], ny * sizeof(float));
        g_assert_cmpmem(grads[r], 16 * sizeof(float), grads[0], 16 * sizeof(float));
      }
      loom_systolic_free(s);
      loom_pool_free(pool);
      g_free(x);
      g_free(dy);
      loom_net_free(net);
    }
    for (int r = 0; r < 3; r++) {
      g_free(outs[r]);
      g_free(grads[r]);
    }
  }
}

#define BPTT_TICKS 7

/* Σ_t r_t·y_t over BPTT_TICKS ticks from a reset runner. */
static double unrolled_loss(loom_systolic *s, const float *r, int64_t ny) {
  loom_systolic_reset(s);
  double loss = 0.0;
  for (int t = 0; t < BPTT_TICKS; t++) {
    tick(s, NULL);
    const float *y = loom_systolic_output(s, NULL);
    for (int64_t i = 0; i < ny; i++) loss += (double)r[t * ny + i] * y[i];
  }
  return loss;
}

/* BPTT through the feedback loop against central differences, weights and input. */
static void test_bptt_gradients(void) {
  loom_net *net = example("feedback");
  const int64_t batch = 2, nx = batch * 4, ny = batch * 2;
  float x[8], r[BPTT_TICKS * 4];
  gradcheck_fill_uniform(x, nx, -1, 1, 21);
  gradcheck_fill_uniform(r, BPTT_TICKS * ny, -1, 1, 22);
  loom_systolic *s = runner(net, batch, x);
  loom_error err = {0};
  g_assert_cmpint(loom_systolic_set_recording(s, true, &err), ==, LOOM_OK);
  unrolled_loss(s, r, ny);
  const float *dys[BPTT_TICKS];
  for (int t = 0; t < BPTT_TICKS; t++) dys[t] = r + t * ny;
  loom_net_zero_grad(net);
  float dx[8];
  g_assert_cmpint(loom_systolic_backward(s, NULL, dys, BPTT_TICKS, dx, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_systolic_set_recording(s, false, &err), ==, LOOM_OK);
  int checked = 0;
  for (int64_t li = 0; li < loom_net_n_layers(net); li++) {
    loom_layer *l = loom_net_layer_at(net, loom_net_layer_coord(net, li));
    for (int w = 0; w < loom_layer_n_weights(l); w++) {
      loom_weights *wt = loom_layer_weights(l, w);
      float *m = loom_weights_master(wt);
      const float *g = loom_layer_grad(l, w);
      for (int64_t i = 0; i < loom_weights_count(wt); i++) {
        const float eps = 1e-2f, v = m[i];
        m[i] = v + eps;
        loom_weights_touch(wt);
        double up = unrolled_loss(s, r, ny);
        m[i] = v - eps;
        loom_weights_touch(wt);
        double down = unrolled_loss(s, r, ny);
        m[i] = v;
        loom_weights_touch(wt);
        double numeric = (up - down) / (2.0 * eps);
        if (!(fabs(numeric - g[i]) <= 2e-5 + 2e-3 * fabs(numeric)))
          g_error("BPTT slot %lld weight %d[%lld]: analytic %.9g, numeric %.9g", (long long)li, w, (long long)i,
                  (double)g[i], numeric);
        checked++;
      }
    }
  }
  for (int64_t i = 0; i < nx; i++) {
    const float eps = 1e-2f, v = x[i];
    x[i] = v + eps;
    loom_systolic_set_input(s, x, NULL);
    double up = unrolled_loss(s, r, ny);
    x[i] = v - eps;
    loom_systolic_set_input(s, x, NULL);
    double down = unrolled_loss(s, r, ny);
    x[i] = v;
    loom_systolic_set_input(s, x, NULL);
    double numeric = (up - down) / (2.0 * eps);
    if (!(fabs(numeric - dx[i]) <= 2e-5 + 2e-3 * fabs(numeric)))
      g_error("BPTT input %lld: analytic %.9g, numeric %.9g", (long long)i, (double)dx[i], numeric);
  }
  g_assert_cmpint(checked, ==, 16 + 4 + 8 + 2);
  /* Backward needs as many gradients as recorded ticks. */
  g_assert_cmpint(loom_systolic_backward(s, NULL, dys, BPTT_TICKS, NULL, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "backward got output gradients for 7 ticks but 0 ticks were recorded");
  loom_systolic_free(s);
  loom_net_free(net);
}

static void test_trace_and_changes(void) {
  loom_net *net = example("feedback");
  float x[4] = {1, 2, -3, 0.5f};
  loom_systolic *s = runner(net, 1, x);
  for (int t = 0; t < 3; t++) tick(s, NULL);
  loom_slot_trace tr[3];
  g_assert_cmpint(loom_systolic_n_slots(s), ==, 3);
  loom_systolic_trace(s, tr);
  for (int k = 0; k < 3; k++) {
    int64_t numel;
    const float *v = loom_systolic_output_at(s, tr[k].at, &numel);
    double sum = 0, sq = 0;
    for (int64_t i = 0; i < numel; i++) {
      sum += v[i];
      sq += (double)v[i] * v[i];
    }
    g_assert_cmpfloat(fabs(tr[k].mean - sum / (double)numel), <, 1e-12);
    g_assert_cmpfloat(fabs(tr[k].norm - sqrt(sq)), <, 1e-12);
  }
  g_assert_true(tr[2].at.x == 2);
  /* A changed network needs a new runner. */
  loom_error err = {0};
  g_assert_cmpint(loom_layer_set_int(loom_net_layer_at(net, (loom_coord){0, 0, 2, 0}), "out_features", 3, &err), ==, 0);
  g_assert_cmpint(loom_systolic_tick(s, NULL, &err), ==, LOOM_ERR_INVALID);
  g_assert_cmpstr(err.message, ==, "the network changed since its systolic runner was made; make a new one");
  loom_systolic_free(s);
  loom_net_free(net);
}

/* The model file: "execution" makes feedback links loadable; without it they are refused by coordinates. */
static void test_model_file(void) {
  loom_net *net = example("feedback");
  loom_error err = {0};
  size_t len;
  char *text = loom_model_to_json(net, &len, &err);
  g_assert_nonnull(strstr(text, "\"execution\": \"systolic\""));
  loom_net *back = NULL;
  g_assert_cmpint(loom_model_load_data(text, len, "fb.json", LOOM_MODEL_STRICT, &back, &err), ==, LOOM_OK);
  g_assert_cmpint(loom_net_execution(back), ==, LOOM_EXEC_SYSTOLIC);
  g_assert_cmpint(loom_net_n_links(back), ==, 1);
  loom_net_free(back);
  char *at = strstr(text, "\"execution\": \"systolic\",\n");
  g_assert_nonnull(at);
  GString *without = g_string_new_len(text, at - text);
  g_string_append(without, at + strlen("\"execution\": \"systolic\",\n"));
  back = NULL;
  g_assert_cmpint(loom_model_load_data(without->str, without->len, "fb.json", LOOM_MODEL_STRICT, &back, &err), !=,
                  LOOM_OK);
  g_assert_null(back);
  g_assert_nonnull(strstr(err.message, "link (0,0,1,0) → (0,0,0,0) points backwards"));
  GString *bogus = g_string_new_len(text, at - text);
  g_string_append(bogus, "\"execution\": \"sideways\",\n");
  g_string_append(bogus, at + strlen("\"execution\": \"systolic\",\n"));
  g_assert_cmpint(loom_model_load_data(bogus->str, bogus->len, "fb.json", LOOM_MODEL_STRICT, &back, &err), !=,
                  LOOM_OK);
  g_assert_nonnull(strstr(err.message, "unknown execution “sideways” (expected feed-forward or systolic)"));
  g_assert_nonnull(strstr(err.message, "execution"));
  g_string_free(without, TRUE);
  g_string_free(bogus, TRUE);
  free(text);
  loom_net_free(net);
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/systolic/chain-latency", test_chain_latency);
  g_test_add_func("/systolic/feed-forward-equivalence", test_feed_forward_equivalence);
  g_test_add_func("/systolic/feedback-example", test_feedback_example);
  g_test_add_func("/systolic/threads", test_threads);
  g_test_add_func("/systolic/bptt-gradients", test_bptt_gradients);
  g_test_add_func("/systolic/trace-and-changes", test_trace_and_changes);
  g_test_add_func("/systolic/model-file", test_model_file);
  return g_test_run();
}
