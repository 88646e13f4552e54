/*
 * PyTorch parity of the sequence layers, forward and backward, against the
 * committed vectors of tests/parity/gen_sequence.py: nn.RNN, nn.LSTM (with a
 * given initial state and its gradient), attention written out (GQA, RoPE
 * half-split and interleaved, causal and key-padding masks, Q/K RMSNorm,
 * biases) and SwiGLU written out, on several shapes including odd ones.
 */
#include <glib.h>
#include <string.h>

#include "layer-test-util.h"
#include "loom/sequence.h"

static loom_npy load(const char *c, const char *what) {
  char name[128];
  g_snprintf(name, sizeof name, "%s_%s", c, what);
  return parity_load("sequence", name);
}

/* Loads every weight of the layer from CASE_<name>. */
static void load_weights(loom_layer *l, const char *c) {
  for (int i = 0; i < loom_layer_n_weights(l); i++) {
    loom_npy w = load(c, loom_layer_weights_name(l, i));
    lt_set_master(l, i, w.data, loom_npy_numel(&w));
    loom_npy_clear(&w);
  }
}

static void compare(const char *c, const char *what, const float *got) {
  loom_npy ref = load(c, what);
  char label[160];
  g_snprintf(label, sizeof label, "%s %s", c, what);
  parity_assert_matches(label, got, ref.data, loom_npy_numel(&ref));
  loom_npy_clear(&ref);
}

/* Forward, backward with the reference dy, and every comparison. */
static void run_case(loom_layer *l, const char *c, int64_t batch) {
  loom_npy x = load(c, "x"), dy = load(c, "dy");
  int64_t ny = loom_npy_numel(&dy);
  g_assert_cmpint(ny, ==, batch * lt_out_numel(l));
  float *y = g_new(float, ny), *dx = g_new(float, loom_npy_numel(&x));
  loom_pool *pool = lt_pool(3);
  lt_forward(l, pool, x.data, y, batch);
  compare(c, "y", y);
  lt_backward(l, pool, x.data, y, dy.data, dx, batch);
  compare(c, "dx", dx);
  for (int i = 0; i < loom_layer_n_weights(l); i++) {
    char name[96];
    g_snprintf(name, sizeof name, "d%s", loom_layer_weights_name(l, i));
    loom_npy ref = load(c, name);
    int64_t n = loom_npy_numel(&ref);
    bool zero = parity_max_abs(ref.data, n) < 1e-12;
    loom_npy_clear(&ref);
    if (zero && strcmp(name, "dk_proj.bias") == 0) {
      /* Exactly zero without RoPE and Q/K norm: a key bias adds the same q·b
       * to every score of a row, which the softmax ignores; the reference
       * holds float64 noise there, ours rounding noise. */
      g_assert_cmpfloat(parity_max_abs(loom_layer_grad(l, i), n), <, 1e-6);
      continue;
    }
    compare(c, name, loom_layer_grad(l, i));
  }
  loom_pool_free(pool);
  g_free(y);
  g_free(dx);
  loom_npy_clear(&x);
  loom_npy_clear(&dy);
}

static void test_recurrent(void) {
  const char *cases[] = {"rnn_tanh", "rnn_relu", "lstm_state", "lstm_odd", "lstm_one_step"};
  for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
    const char *c = cases[k];
    loom_npy p = load(c, "params");
    int kind = (int)p.data[0];
    int64_t b = (int64_t)p.data[1], t = (int64_t)p.data[2], f = (int64_t)p.data[3], h = (int64_t)p.data[4];
    bool bias = p.data[5] != 0.0f, given = p.data[6] != 0.0f;
    loom_layer *l = lt_new(kind == 2 ? "lstm" : "rnn");
    if (kind < 2) lt_set_enum(l, "nonlinearity", kind == 0 ? "tanh" : "relu");
    lt_set_int(l, "input_size", f);
    lt_set_int(l, "hidden_size", h);
    lt_set_bool(l, "bias", bias);
    lt_build(l, 2, (const int64_t[]){t, f}, 1);
    load_weights(l, c);
    loom_npy h0 = {0}, c0 = {0};
    if (given) {
      h0 = load(c, "h0");
      if (kind == 2) c0 = load(c, "c0");
      g_assert_cmpint(loom_layer_set_initial_state(l, h0.data, c0.data, b, NULL), ==, LOOM_OK);
    }
    run_case(l, c, b);
    if (given) {
      const float *dh0, *dc0;
      int64_t gb;
      g_assert_cmpint(loom_layer_initial_state_grad(l, &dh0, &dc0, &gb, NULL), ==, LOOM_OK);
      compare(c, "dh0", dh0);
      if (kind == 2) compare(c, "dc0", dc0);
    }
    loom_npy_clear(&h0);
    loom_npy_clear(&c0);
    loom_npy_clear(&p);
    loom_layer_free(l);
  }
}

static void test_attention(void) {
  const char *cases[] = {"att_gqa_rope", "att_interleaved", "att_plain", "att_mask"};
  const char *ropes[] = {"none", "half", "interleaved"};
  for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
    const char *c = cases[k];
    loom_npy p = load(c, "params");
    const float *v = p.data;
    int64_t b = (int64_t)v[1], t = (int64_t)v[2], d = (int64_t)v[3];
    loom_layer *l = lt_new("attention");
    lt_set_int(l, "d_model", d);
    lt_set_int(l, "heads", (int64_t)v[4]);
    lt_set_int(l, "kv_heads", (int64_t)v[5]);
    lt_set_int(l, "head_dim", (int64_t)v[6]);
    lt_set_bool(l, "causal", v[7] != 0.0f);
    lt_set_bool(l, "bias", v[8] != 0.0f);
    lt_set_enum(l, "rope", ropes[(int)v[9]]);
    lt_set_float(l, "rope_base", v[10]);
    lt_set_bool(l, "qk_norm", v[11] != 0.0f);
    lt_set_float(l, "qk_norm_eps", v[12]);
    lt_build(l, 2, (const int64_t[]){t, d}, 1);
    load_weights(l, c);
    if (v[13] != 0.0f) {
      loom_npy m = load(c, "mask");
      uint8_t *mask = g_new(uint8_t, b * t);
      for (int64_t i = 0; i < b * t; i++) mask[i] = m.data[i] != 0.0f;
      g_assert_cmpint(loom_layer_set_key_padding_mask(l, mask, b, t, NULL), ==, LOOM_OK);
      g_free(mask);
      loom_npy_clear(&m);
    }
    run_case(l, c, b);
    loom_npy_clear(&p);
    loom_layer_free(l);
  }
}

static void test_swiglu(void) {
  const char *cases[] = {"swiglu_silu", "swiglu_bias", "swiglu_relu2"};
  for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
    const char *c = cases[k];
    loom_npy p = load(c, "params");
    const float *v = p.data;
    loom_layer *l = lt_new("swiglu");
    lt_set_int(l, "d_model", (int64_t)v[3]);
    lt_set_int(l, "hidden", (int64_t)v[4]);
    lt_set_bool(l, "bias", v[5] != 0.0f);
    lt_set_enum(l, "activation", v[6] != 0.0f ? "relu2" : "silu");
    lt_build(l, 2, (const int64_t[]){(int64_t)v[2], (int64_t)v[3]}, 1);
    load_weights(l, c);
    run_case(l, c, (int64_t)v[1]);
    loom_npy_clear(&p);
    loom_layer_free(l);
  }
}

int main(int argc, char **argv) {
  g_test_init(&argc, &argv, NULL);
  g_test_add_func("/sequence-parity/recurrent", test_recurrent);
  g_test_add_func("/sequence-parity/attention", test_attention);
  g_test_add_func("/sequence-parity/swiglu", test_swiglu);
  return g_test_run();
}
